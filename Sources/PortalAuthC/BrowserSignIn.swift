import CPortalAuth
import PortalAuthCore

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// See portal_auth_sign_in_with_google in include/portal_auth.h.
@c(portal_auth_sign_in_with_google)
public func portalAuthSignInWithGoogle(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ timeout_ms: Int32,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    signInWithBrowser(.google, client, timeout_ms, done, user_data, out_call)
}

/// See portal_auth_sign_in_with_magic_link in include/portal_auth.h.
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

/// See portal_auth_sign_in_with_apple in include/portal_auth.h.
@c(portal_auth_sign_in_with_apple)
public func portalAuthSignInWithApple(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ timeout_ms: Int32,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    signInWithBrowser(.apple, client, timeout_ms, done, user_data, out_call)
}

/// A browser sign-in with `provider`. The opener is read now, in the call: the host may free
/// an opener it replaces once this sign-in has called back (include/portal_auth.h,
/// portal_auth_set_browser_opener).
private func signInWithBrowser(
    _ provider: AuthMethod,
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ timeoutMs: Int32,
    _ done: portal_auth_result_fn?,
    _ userData: UnsafeMutableRawPointer?,
    _ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let call = ClientHandle.object(client)?.auth.makeBrowserSignIn(with: provider) else { return refused(outCall) }
    return signIn(client, timeoutMs, default: PortalAuth.defaultSignInTimeout, done, userData, outCall) {
        try await call.run(timeout: $1)
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

/// See portal_auth_set_browser_opener in include/portal_auth.h.
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

/// See portal_auth_set_prefers_ephemeral_web_browser_session in include/portal_auth.h.
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

/// See portal_auth_prefers_ephemeral_web_browser_session in include/portal_auth.h.
@c(portal_auth_prefers_ephemeral_web_browser_session)
public func portalAuthPrefersEphemeralWebBrowserSession(_ client: UnsafePointer<portal_auth>?) -> portal_auth_bool {
    ClientHandle.object(client)?.auth.prefersEphemeralWebBrowserSession == true ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE
}
