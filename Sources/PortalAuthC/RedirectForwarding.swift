import CPortalAuth
import PortalAuthCore

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// See portal_auth_listen_for_redirects in include/portal_auth.h.
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

/// See portal_auth_forward_redirect in include/portal_auth.h.
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
