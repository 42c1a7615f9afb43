import CPortalAuth
import PortalAuthCore

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// Signs in with Google in the user's browser (docs/desktop.md "Browser sign-in"): opens a fresh
/// authorize URL through the client's opener, waits for the browser to come back to the
/// loopback redirect URL (`http://127.0.0.1:<port>/<path>`, `[::1]` or `localhost`), and
/// completes the sign-in as portal_auth_handle_redirect would. `timeout_ms` bounds the wait
/// (zero or less: 300,000 ms). The callback gets a result (AUTHENTICATED or TOTP_REQUIRED),
/// or an error: SIGN_IN_IN_PROGRESS while another browser sign-in of this client runs,
/// SIGN_IN_UNAVAILABLE for an unusable redirect URL, a port in use, no browser found (the
/// URL of portal_auth_login_with_google can then be shown to the user) or a failed opener
/// (portal_auth_error_reason tells which), MALFORMED_RESPONSE for an authorize URL that is
/// not an absolute https URL (no browser is started), SIGN_IN_CLOSED on timeout or
/// portal_auth_call_cancel before the browser came back (nothing exchanged),
/// SIGN_IN_CALLBACK_INCOMPLETE, or what handle_redirect reports. The wait ends only on a
/// callback to the redirect URL's own host, as a top-level navigation, that carries a grant
/// or an error; any other request to the listener is refused and the wait goes on.
/// Returns PORTAL_AUTH_E_INVALID_ARGUMENT, and never calls back, for a NULL client or
/// callback.
@c(portal_auth_sign_in_with_google)
public func portalAuthSignInWithGoogle(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ timeout_ms: Int32,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    signIn(client, timeout_ms, default: PortalAuth.defaultSignInTimeout, done, user_data, out_call) {
        try await $0.signInWithGoogle(timeout: $1)
    }
}

/// Signs in by magic link with no URL to paste (docs/desktop.md "Magic-link sign-in"): emails
/// the link with the loopback redirect URL, waits for the browser the user opens it in to
/// bring the redirect to the listener there, completes the sign-in as
/// portal_auth_handle_redirect would, and answers the browser with a page saying it is done.
/// Meanwhile portal_auth_handle_redirect with the link (pasted, or forwarded) completes it
/// too. `email` is borrowed; `timeout_ms` of zero or less: 900,000 ms. Shares the
/// one-at-a-time guard of the browser sign-ins. Returns PORTAL_AUTH_E_INVALID_ARGUMENT,
/// and never calls back, for a NULL client or callback or an email that is not UTF-8.
@c(portal_auth_sign_in_with_magic_link)
public func portalAuthSignInWithMagicLink(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ email: UnsafePointer<CChar>?,
    _ timeout_ms: Int32,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let address = try? CText.read(email) ?? "" else { return refused(out_call) }
    return signIn(client, timeout_ms, default: PortalAuth.defaultMagicLinkTimeout, done, user_data, out_call) {
        try await $0.signInWithMagicLink(address, timeout: $1)
    }
}

/// Signs in with Apple in the user's browser; as portal_auth_sign_in_with_google.
@c(portal_auth_sign_in_with_apple)
public func portalAuthSignInWithApple(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ timeout_ms: Int32,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    signIn(client, timeout_ms, default: PortalAuth.defaultSignInTimeout, done, user_data, out_call) {
        try await $0.signInWithApple(timeout: $1)
    }
}

private func signIn(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ timeoutMs: Int32,
    default fallback: Duration,
    _ done: portal_auth_result_fn?,
    _ userData: UnsafeMutableRawPointer?,
    _ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?,
    _ work: @escaping @Sendable (PortalAuth, Duration) async throws -> AuthResult
) -> portal_auth_code {
    guard let done else { return refused(outCall) }
    let timeout = timeout(milliseconds: timeoutMs, default: fallback)
    let user = HostPointer(raw: userData)
    return startLendingCall(client, outCall, work: { auth -> AuthResult? in try await work(auth, timeout) }) {
        deliver($0, lentBy: $1, done, user)
    }
}

/// The host's opener and its user_data, passed back untouched.
private struct HostOpener: @unchecked Sendable {
    let open: portal_auth_opener_fn
    let data: HostPointer
}

/// Installs the opener browser sign-ins of this client use from now on (see
/// portal_auth_opener_fn); NULL restores the default (`$BROWSER`, else `xdg-open`).
/// Returns PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL client.
@c(portal_auth_set_browser_opener)
public func portalAuthSetBrowserOpener(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ opener: portal_auth_opener_fn?,
    _ user_data: UnsafeMutableRawPointer?
) -> portal_auth_code {
    guard let auth = ClientHandle.object(client)?.auth else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    guard let opener else {
        auth.setBrowserOpener(nil)
        return portal_auth_code(PORTAL_AUTH_OK)
    }
    let host = HostOpener(open: opener, data: HostPointer(raw: user_data))
    auth.setBrowserOpener { url, ephemeral in
        let status = url.withCString { host.open(host.data.raw, $0, ephemeral ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE) }
        // The opener's own account of its failure: the value it returned.
        guard status == 0 else {
            throw BrowserOpenerError(message: "it returned \(status)", noBrowser: status == PORTAL_AUTH_REASON_NO_BROWSER)
        }
    }
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// Sets the flag passed to the opener as `ephemeral`: PORTAL_AUTH_TRUE asks for a private
/// window, PORTAL_AUTH_FALSE (the default) does not. Returns PORTAL_AUTH_E_INVALID_ARGUMENT
/// for a NULL client or another value.
@c(portal_auth_set_prefers_ephemeral_web_browser_session)
public func portalAuthSetPrefersEphemeralWebBrowserSession(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ prefers: portal_auth_bool
) -> portal_auth_code {
    guard let auth = ClientHandle.object(client)?.auth, prefers == PORTAL_AUTH_TRUE || prefers == PORTAL_AUTH_FALSE
    else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    auth.prefersEphemeralWebBrowserSession = prefers == PORTAL_AUTH_TRUE
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// PORTAL_AUTH_TRUE or PORTAL_AUTH_FALSE; PORTAL_AUTH_FALSE for NULL.
@c(portal_auth_prefers_ephemeral_web_browser_session)
public func portalAuthPrefersEphemeralWebBrowserSession(_ client: UnsafePointer<portal_auth>?) -> portal_auth_bool {
    ClientHandle.object(client)?.auth.prefersEphemeralWebBrowserSession == true ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE
}
