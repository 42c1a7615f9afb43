import CPortalAuth
import PortalAuthCore

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// Listens for the redirects the application's next instances forward
/// (portal_auth_forward_redirect), on the channel of this user, the options'
/// application_id and environment, and handles each as portal_auth_handle_redirect would.
/// The channel listens once this returns.
/// `done` is called once per forwarded redirect with its outcome (`last` PORTAL_AUTH_FALSE:
/// a result, both NULL for a URL that is not a sign-in redirect, or an error), and a last
/// time with `last` PORTAL_AUTH_TRUE and an error: SIGN_IN_CLOSED when listening ended
/// (portal_auth_call_cancel, portal_auth_free) or SIGN_IN_UNAVAILABLE when it could not
/// listen (portal_auth_error_reason: NO_RUNTIME_DIRECTORY, RUNTIME_DIRECTORY_UNSAFE,
/// CHANNEL_IN_USE, CHANNEL_FAILED). Every call goes through the client's completion model,
/// one at a time, in order; none follows the last. Returns PORTAL_AUTH_E_INVALID_ARGUMENT,
/// and never calls back, for a NULL client or callback.
@c(portal_auth_listen_for_redirects)
public func portalAuthListenForRedirects(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_redirect_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done, let box = ClientHandle.object(client) else { return refused(out_call) }
    let (dispatcher, lender) = box.lendingRoute()
    let user = HostPointer(raw: user_data)
    // Listening before this returns: a redirect forwarded from now on is taken.
    let listening = Result { () throws(PortalAuthSignInError) in try box.auth.listenForRedirects() }
    return startTask(dispatcher: dispatcher, out_call, work: { () async throws -> Void in
        try await listening.get().run { outcome in
            dispatcher.run { deliver(outcome, last: false, lentBy: lender, done, user) }
        }
    }, complete: { outcome in
        deliver(outcome.map { nil }, last: true, lentBy: lender, done, user)
    })
}

private func deliver(
    _ outcome: Result<AuthResult?, any Error>, last: Bool, lentBy lender: SessionLender,
    _ done: portal_auth_redirect_fn, _ user: HostPointer
) {
    let flag = last ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE
    switch outcome {
    case .success(let result?):
        withResultHandle(result, lentBy: lender) { done(user.raw, $0, nil, flag) }
    case .success(nil):
        done(user.raw, nil, nil, flag)
    case .failure(let error):
        withErrorHandle(error) { done(user.raw, nil, $0, flag) }
    }
}

/// Hands a redirect URL this process received (as the URL handler the desktop started) to
/// the application's running instance: the one listening with portal_auth_listen_for_redirects
/// for the same user, application_id and environment as `options`, which are read as
/// portal_auth_new reads them. No request to Portal, no keyring. `done` is called once, on a
/// library thread (there is no client, so no completion model applies), with
/// PORTAL_AUTH_FORWARD_TAKEN, _NO_INSTANCE (handle the URL here) or _REFUSED (not a redirect
/// of this client: nothing was handed over), or with an error and 0: the options'
/// (INVALID_ARGUMENT), or SIGN_IN_UNAVAILABLE with the channel's reason. Returns
/// PORTAL_AUTH_E_INVALID_ARGUMENT, and never calls back, for NULL options, url or callback,
/// or a URL that is not UTF-8.
@c(portal_auth_forward_redirect)
public func portalAuthForwardRedirect(
    _ options: UnsafePointer<portal_auth_options>?,
    _ url: UnsafePointer<CChar>?,
    _ done: portal_auth_forward_fn?,
    _ user_data: UnsafeMutableRawPointer?
) -> portal_auth_code {
    guard let options, let done, let url = try? CText.read(url) else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    let user = HostPointer(raw: user_data)
    let client = Result { try ClientOptions(options).makeClient() }
    return startTask(dispatcher: .direct, nil, work: { () async throws -> RedirectForwarding in
        try await client.get().forwardRedirect(url)
    }, complete: { outcome in
        switch outcome {
        case .success(let forwarding):
            done(user.raw, cForwarding(forwarding), nil)
        case .failure(let error):
            withErrorHandle(error) { done(user.raw, portal_auth_forward_result(rawValue: 0), $0) }
        }
    })
}

private func cForwarding(_ forwarding: RedirectForwarding) -> portal_auth_forward_result {
    switch forwarding {
    case .taken: return PORTAL_AUTH_FORWARD_TAKEN
    case .noInstance: return PORTAL_AUTH_FORWARD_NO_INSTANCE
    case .refused: return PORTAL_AUTH_FORWARD_REFUSED
    }
}
