/// A client's one-call sign-in settings (the browser opener, the ephemeral flag), its
/// one-at-a-time guard, shared by the browser and magic-link sign-ins, and the magic-link
/// wait under way, which a redirect the host handles may complete.
final class BrowserSignInState: Sendable {
    private struct State {
        var opener: BrowserOpener?
        var ephemeral = false
        var inProgress = false
        var magicLinkWait: MagicLinkWait?
    }

    private let state = Locked(State())

    var opener: BrowserOpener? {
        get { state.withLock { $0.opener } }
        set { state.withLock { $0.opener = newValue } }
    }

    var ephemeral: Bool {
        get { state.withLock { $0.ephemeral } }
        set { state.withLock { $0.ephemeral = newValue } }
    }

    /// The magic-link sign-in waiting for its redirect, if one is.
    var magicLinkWait: MagicLinkWait? {
        get { state.withLock { $0.magicLinkWait } }
        set { state.withLock { $0.magicLinkWait = newValue } }
    }

    /// Takes the guard; false when a sign-in already holds it.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.inProgress else { return false }
            state.inProgress = true
            return true
        }
    }

    /// Releases the guard; the magic-link wait, if any, is over too.
    func end() {
        state.withLock { state in
            state.inProgress = false
            state.magicLinkWait = nil
        }
    }
}

/// One browser sign-in, made by `PortalAuth.makeBrowserSignIn(with:)` with the settings of that
/// moment; `run` it once.
public struct BrowserSignIn: Sendable {
    fileprivate let auth: PortalAuth
    fileprivate let method: AuthMethod
    /// Nil: the default opener (`SystemBrowser`).
    fileprivate let opener: BrowserOpener?
    fileprivate let ephemeral: Bool

    /// Opens the browser, waits up to `timeout` and completes the sign-in, as
    /// `PortalAuth.signInWithGoogle` does.
    public func run(timeout: Duration) async throws -> AuthResult {
        try await auth.signInWithBrowser(self, timeout: timeout)
    }
}

/// The one-call browser sign-in (docs/desktop.md "Browser sign-in"): the system browser opens
/// the provider, the provider sends it back to a one-shot listener on the loopback redirect
/// URL, and the callback URL completes the sign-in as `handleRedirect` would.
extension PortalAuth {
    /// How long a browser sign-in waits for the browser to come back by default.
    public static let defaultSignInTimeout: Duration = .seconds(300)

    /// Passed to the browser opener as `ephemeral`: a host that can open a private window
    /// may do so. False by default.
    public var prefersEphemeralWebBrowserSession: Bool {
        get { browserSignIn.ephemeral }
        set { browserSignIn.ephemeral = newValue }
    }

    /// Installs the opener browser sign-ins use from now on; `nil` restores the default
    /// (`$BROWSER`, else `xdg-open`).
    public func setBrowserOpener(_ opener: BrowserOpener?) {
        browserSignIn.opener = opener
    }

    /// Signs in with Google in the user's browser: opens a fresh authorize URL, waits for the
    /// browser to come back to the loopback redirect URL, and completes the sign-in.
    ///
    /// - Parameter timeout: how long to wait for the browser; positive.
    /// - Returns: the session (already persisted), or the TOTP step.
    /// The wait ends only on a callback that `CallbackAdmission` accepts (the redirect's own
    /// Host, a top-level navigation, a grant or an `error`); other requests are refused and
    /// the wait goes on.
    ///
    /// - Throws: `PortalAuthSignInError.signInInProgress` while another browser sign-in of
    ///   this client runs (no request made); `.unavailable` with its reason for a redirect
    ///   URL that is not an `http` loopback URL with an explicit port (no request made), a
    ///   port in use or a listener that cannot start (no request made), no browser found
    ///   (`loginWithGoogle` still gives the URL to show) or an opener that failed;
    ///   `PortalAuthError.malformedResponse` for an authorize URL that is not an absolute
    ///   `https` URL (no browser started); `.closed` when the timeout elapses or the task is
    ///   cancelled before the browser comes back (nothing exchanged); `.callbackIncomplete`
    ///   when the callback carries nothing usable; otherwise what `handleRedirect` throws
    ///   (`authenticationFailed` for a provider's error, transport errors,
    ///   `sessionStorageFailure`), and the errors of `loginWithGoogle`.
    public func signInWithGoogle(timeout: Duration = PortalAuth.defaultSignInTimeout) async throws -> AuthResult {
        try await makeBrowserSignIn(with: .google).run(timeout: timeout)
    }

    /// Signs in with Apple in the user's browser; as `signInWithGoogle`.
    public func signInWithApple(timeout: Duration = PortalAuth.defaultSignInTimeout) async throws -> AuthResult {
        try await makeBrowserSignIn(with: .apple).run(timeout: timeout)
    }

    /// A browser sign-in with `method` (`.google` or `.apple`) whose opener and ephemeral
    /// flag are those installed now, when the host's call is made, not when its task starts:
    /// a host that installs another opener meanwhile may let go of this one once the sign-in
    /// has called back (the C layer makes one in the call's synchronous part).
    public func makeBrowserSignIn(with method: AuthMethod) -> BrowserSignIn {
        BrowserSignIn(auth: self, method: method, opener: browserSignIn.opener, ephemeral: browserSignIn.ephemeral)
    }

    fileprivate func signInWithBrowser(_ call: BrowserSignIn, timeout: Duration) async throws -> AuthResult {
        let (method, ephemeral) = (call.method, call.ephemeral)
        let opener = call.opener ?? { try SystemBrowser.current.open($0, ephemeral: $1) }
        let flow = "Browser sign-in"
        try beginSignIn(flow, timeout: timeout)
        var holdsGuard = true
        defer { if holdsGuard { browserSignIn.end() } }
        // Nothing is spent that cannot be kept: the store is asked before a port is taken or
        // the browser opens.
        try await waits.step { [vault] in try await vault.checkCanStore() }
        let listener = try bindListener(flow, answer: .atOnce)
        var listening = Listening(listener: listener, registration: try register(listener))
        defer { waits.unregister(listening.registration) }

        let authorizeUrl = try await waits.step { [self] in try await self.authorizeUrl(for: method).authorizeUrl }
        guard AuthorizeURLRule.accepts(authorizeUrl, apiIsLoopback: api.base.isLoopback) else {
            PortalAuthLog.emit(.warning, "Browser sign-in: the server's \(method.rawValue) authorize URL is not an absolute https URL; no browser was opened.")
            throw PortalAuthError.malformedResponse(path: Endpoint.fullPath(Endpoint.oauthUrls), missing: nil)
        }

        // Listening before the browser opens: an opener that loads the page itself, before it
        // returns, is answered too.
        let deadline = ContinuousClock.now.advanced(by: timeout)
        try startListening(listener, flow, timeout: timeout)
        PortalAuthLog.emit(.info, "Browser sign-in: listening on \(listener.endpoint); opening the browser.")
        do {
            try await OpenerThread.run(opener, url: authorizeUrl, ephemeral: ephemeral, unlessEnded: waits)
        } catch is ClientWaits.Ended {
            listener.stop()
            _ = await listener.outcome()
            throw PortalAuthSignInError.closed(reason: .clientClosed)
        } catch {
            listener.stop()
            _ = await listener.outcome()
            // The default opener has said why; a host's opener failed in its own way.
            if !(error is SystemBrowser.NoBrowser) { PortalAuthLog.emit(.warning, "Browser sign-in: the browser opener failed.") }
            throw Self.unavailable(openerFailure: error, url: authorizeUrl)
        }

        // The opener has returned: the browser's page now waits for the sign-in's outcome,
        // and says it, or to reload after a failure that left the grant unspent.
        listener.holdCallbacks()
        PortalAuthLog.emit(.debug, "Browser sign-in: the browser is open; a callback on \(listener.endpoint) now waits for the outcome.")

        while true {
            let outcome = await listening.listener.outcome()
            switch outcome {
            case .callback(let url):
                PortalAuthLog.emit(.info, "Browser sign-in: the browser came back.")
                guard let completed = await exchangeOrListenAgain(url, flow, &listening, until: deadline,
                                                                      again: CallbackPage.reloadToTryAgain) else { continue }
                return try finishSignIn(flow, completed, listening, releasing: &holdsGuard)
            case .timedOut, .stopped:
                throw endedWaiting(flow, for: "the browser", outcome)
            }
        }
    }

    /// The `unavailable` error for a failed opener: no browser (the default opener's account
    /// of the last browser it tried, or the application opener's own word), carrying `url`
    /// for the app to show; or the application opener's `BrowserOpenerError` text. Another
    /// error's text is not repeated: it might quote the authorize URL.
    static func unavailable(openerFailure error: any Error, url: String) -> PortalAuthSignInError {
        switch error {
        case let noBrowser as SystemBrowser.NoBrowser:
            return .unavailable(reason: .noBrowser, detail: noBrowser.detail, authorizeUrl: url)
        case let failure as BrowserOpenerError:
            let detail = failure.message.truncated(to: 200).escapingControlCharacters()
            return failure.noBrowser
                ? .unavailable(reason: .noBrowser, detail: detail, authorizeUrl: url)
                : .unavailable(reason: .openerFailed, detail: detail)
        default:
            return .unavailable(reason: .openerFailed, detail: nil)
        }
    }
}
