/// Which request ends a browser sign-in's wait, and what each request is answered
/// (docs/desktop.md "Browser sign-in", RFC 8252 §7.3 and §8.3). The listener asks it about
/// every complete request head; it holds no state, so another flow waiting on a loopback
/// redirect can use the same rules.
///
/// In this order: a malformed head is 400; the Host rule (`HostRule`); a path other than the
/// redirect's is 404 and a method other than GET 405; the Fetch Metadata rule
/// (`FetchMetadataRule`); then the content. Only a callback that carries a grant or an
/// `error` ends the wait: a stray or hostile request to the redirect path with neither must
/// not end the user's sign-in, so it is answered 400 and the wait goes on.
struct CallbackAdmission: Sendable {
    let redirect: LoopbackRedirect
    /// The configured redirect URL, which requests are matched against (docs/protocol.md §4).
    let redirectUrl: String

    /// What the listener does with one request.
    enum Verdict: Equatable {
        /// Answer it with this page and end the wait with the full callback URL.
        case complete(callbackUrl: String, page: String)
        /// Answer it so, and keep waiting.
        case refuse(ListenerResponse)
    }

    /// The verdict on `head`; nil for a head that did not parse.
    func verdict(on head: RequestHead?) -> Verdict {
        guard let head else { return .refuse(.malformed) }
        if let refusal = HostRule.refusal(of: head, for: redirect) { return .refuse(refusal) }
        let url = redirect.origin + head.target
        guard RedirectURL.matches(url, configured: redirectUrl) else { return .refuse(.notFound) }
        guard head.method == "GET" else { return .refuse(.methodNotAllowed) }
        if let refusal = FetchMetadataRule.refusal(of: head) { return .refuse(refusal) }
        switch PortalAuth.redirectContent(of: url, configured: redirectUrl) {
        case .failed(let error):
            return .complete(callbackUrl: url, page: CallbackPage.failed(error))
        case .grant:
            return .complete(callbackUrl: url, page: CallbackPage.received)
        case .notASignIn:
            return .refuse(.refusal("400 Bad Request", title: "No sign-in response",
                                    message: "This request carries no sign-in response. The application is still waiting: finish signing in in the window it opened.",
                                    reason: "no sign-in response"))
        }
    }
}
