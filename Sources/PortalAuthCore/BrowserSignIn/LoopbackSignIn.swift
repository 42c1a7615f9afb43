/// The steps the two one-call sign-ins over the loopback redirect URL share, the browser's
/// (`signInWithGoogle`, `signInWithApple`) and the magic link's (`signInWithMagicLink`), in
/// the order both take them: the guard, the listener bound, the wait registered with the
/// client (so that `endWaits` ends it), the listener started. `flow` names the sign-in in
/// log lines.
extension PortalAuth {
    /// Takes the one-at-a-time guard, which the caller releases (`browserSignIn.end()`).
    /// - Throws: `invalidArgument(name: "timeout")` for a timeout that is not positive, then
    ///   `signInInProgress` while another sign-in of this client runs.
    func beginSignIn(_ flow: String, timeout: Duration) throws {
        guard timeout > .zero else { throw PortalAuthError.invalidArgument(name: "timeout") }
        guard browserSignIn.begin() else {
            PortalAuthLog.emit(.warning, "\(flow): another sign-in is under way for this client.")
            throw PortalAuthSignInError.signInInProgress
        }
    }

    /// The listener on the loopback redirect URL, bound (not started yet).
    /// - Throws: `unavailable` with `redirectNotLoopback`, `portInUse`,
    ///   `redirectAddressUnavailable` or `listenerFailed`.
    func bindListener(_ flow: String, answer: LoopbackListener.Answer) throws -> LoopbackListener {
        guard let loopback = LoopbackRedirect(redirectUrl) else {
            PortalAuthLog.emit(.warning, "\(flow) needs a redirect URL of the form http://127.0.0.1:<port>/<path> (or [::1] or localhost).")
            throw PortalAuthSignInError.unavailable(reason: .redirectNotLoopback, detail: nil)
        }
        do {
            return try LoopbackListener(CallbackAdmission(redirect: loopback, redirectUrl: redirectUrl), flow: flow, answer: answer)
        } catch {
            PortalAuthLog.emit(.warning, "\(flow): \(error.message).")
            let reason: SignInUnavailableReason = switch error.kind {
            case .portInUse: .portInUse
            case .noIPv6: .redirectAddressUnavailable
            case .system: .listenerFailed
            }
            throw PortalAuthSignInError.unavailable(reason: reason, detail: error.message)
        }
    }

    /// Registers the listener with the client's waits; unregister it when the sign-in ends.
    /// - Throws: `closed` when the client's waits have been ended (the listener is closed).
    func register(_ listener: LoopbackListener) throws -> ClientWaits.Registration {
        guard let registration = waits.register({ listener.close() }) else {
            listener.close()
            throw PortalAuthSignInError.closed(reason: .clientClosed)
        }
        return registration
    }

    /// - Throws: `unavailable(listenerFailed)` when the listener's thread cannot start.
    func startListening(_ listener: LoopbackListener, _ flow: String, timeout: Duration) throws {
        do {
            try listener.start(timeout: timeout)
        } catch {
            PortalAuthLog.emit(.error, "\(flow): \(error.message).")
            throw PortalAuthSignInError.unavailable(reason: .listenerFailed, detail: error.message)
        }
    }
}
