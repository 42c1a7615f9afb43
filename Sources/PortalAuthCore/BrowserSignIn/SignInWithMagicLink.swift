/// The one-call magic-link sign-in (docs/desktop.md "Magic-link sign-in"): the link is sent
/// with the loopback redirect URL, the user opens the email in a browser on this machine,
/// and the browser brings the redirect to a listener there; the sign-in completes as
/// `handleRedirect` would, and the browser's tab then says so.
extension PortalAuth {
    /// How long a magic-link sign-in waits for the redirect by default: the user has to
    /// find the email and open it.
    public static let defaultMagicLinkTimeout: Duration = .seconds(900)

    /// Signs in by magic link with no URL to paste: emails the link, waits on the loopback
    /// redirect URL (`http://127.0.0.1:<port>/<path>`, allow-listed) for the browser to
    /// bring the redirect, completes the sign-in as `handleRedirect` would, and answers the
    /// browser with a page that says the sign-in is done (or what is left: the TOTP code,
    /// or trying again). While it waits, `handleRedirect` with the link (a user who opened
    /// the email on another device and pasted it, or the app's next instance forwarding it)
    /// completes it too: the listener stops and this call returns that outcome.
    ///
    /// In order: the one-at-a-time guard shared with `signInWithGoogle` and
    /// `signInWithApple`; `sendMagicLink`'s checks; the listener bound; the email sent; the
    /// wait. The grant lock is not held while waiting.
    ///
    /// - Parameter timeout: how long to wait for the redirect; positive.
    /// - Returns: the session (already persisted), or the TOTP step.
    /// - Throws: `PortalAuthSignInError.signInInProgress` while another sign-in of this
    ///   client runs; `magicLinkNotConfigured`, `invalidArgument(name: "email")`; `.unavailable`
    ///   for a redirect URL that is not an `http` loopback URL with an explicit port or a
    ///   port in use (no email sent) or a listener that cannot start; the errors of
    ///   `sendMagicLink`; `.closed` when the timeout elapses, the task is cancelled or the
    ///   client's waits are ended (`endWaits`) before the redirect comes (nothing exchanged);
    ///   otherwise what `handleRedirect` throws.
    public func signInWithMagicLink(_ email: String, timeout: Duration = PortalAuth.defaultMagicLinkTimeout) async throws -> AuthResult {
        let flow = "Magic-link sign-in"
        try beginSignIn(flow, timeout: timeout)
        var holdsGuard = true
        defer { if holdsGuard { browserSignIn.end() } }
        let request = try magicLinkRequest(to: email)
        // Nothing is spent that cannot be kept: the store is asked before a port is taken or
        // the email goes.
        try await waits.step { [vault] in try await vault.checkCanStore() }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let listener = try bindListener(flow, answer: .whenComplete)
        var listening = Listening(listener: listener, registration: try register(listener))
        defer { waits.unregister(listening.registration) }
        // Before the email goes: its link may come back through handleRedirect as soon as it
        // is sent, before this call has heard that it was.
        var wait = MagicLinkWait(listener)
        browserSignIn.magicLinkWait = wait

        try await waits.step { [api] in try await api.sendMagicLink(request) }
        PortalAuthLog.emit(.info, "Magic link sent.")

        try startListening(listener, flow, timeout: timeout)
        PortalAuthLog.emit(.info, "\(flow): listening on \(listener.endpoint) for the email's link.")
        while true {
            let outcome = await listening.listener.outcome()
            guard wait.takeForListener() else {
                browserSignIn.end()
                holdsGuard = false
                return try await redirectHandled(flow, wait: wait, listener: listening.listener)
            }
            switch outcome {
            case .callback(let url):
                PortalAuthLog.emit(.info, "\(flow): the browser brought the redirect.")
                // A new listener's wait is the one a redirect the application handles takes.
                guard let completed = await exchangeOrListenAgain(url, flow, &listening, until: deadline,
                                                                      again: CallbackPage.openTheLinkAgain,
                                                                      prepare: { [browserSignIn] listener in
                    wait = MagicLinkWait(listener)
                    browserSignIn.magicLinkWait = wait
                }) else { continue }
                return try finishSignIn(flow, completed, listening, releasing: &holdsGuard)
            case .timedOut, .stopped:
                throw endedWaiting(flow, for: "the email's link", outcome)
            }
        }
    }

    /// The end of a magic-link sign-in whose wait a redirect the application handled took
    /// (and stopped the listener): that redirect's outcome, once its exchange has ended.
    private func redirectHandled(_ flow: String, wait: MagicLinkWait, listener: LoopbackListener) async throws -> AuthResult {
        guard let handled = await wait.redirectOutcome() else {
            PortalAuthLog.emit(.info, "\(flow): cancelled while the redirect handled by the application completes.")
            listener.answer(CallbackPage.notCompleted)
            throw PortalAuthSignInError.closed(reason: waits.stoppedReason)
        }
        listener.answer(CallbackPage.completed(handled.map(Optional.some)))
        return try handled.get()
    }
}
