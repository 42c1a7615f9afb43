/// The steps the two one-call sign-ins over the loopback redirect URL share, the browser's
/// (`signInWithGoogle`, `signInWithApple`) and the magic link's (`signInWithMagicLink`), in
/// the order both take them: the guard, the listener bound, the wait registered with the
/// client (so that `endWaits` ends it), the listener started; then the redirect exchanged,
/// or waited for again. `flow` names the sign-in in log lines.
extension PortalAuth {
    /// A one-call sign-in's listener and its registration with the client's waits.
    struct Listening {
        var listener: LoopbackListener
        var registration: ClientWaits.Registration
    }

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

    /// Completes the redirect a callback brought, as `handleRedirect` does, with the store
    /// already asked (`checkCanStore`, once per sign-in, at its start). When that fails
    /// in a way that left the grant unspent (`leftGrantUnspent`) while the browser waits for
    /// its answer, with time left before `deadline`, the sign-in waits on instead: a new
    /// listener, bound to the same port before the exchange (the last one has just closed its
    /// sockets, and no one else may take the port while the grant is unspent), `prepare` sees
    /// it, and it listens before the browser is told `again`. Then the result is nil, and
    /// `listening` the new listener's. When the new listener cannot wait, the exchange's own
    /// failure stands.
    func exchangeOrListenAgain(_ url: String, _ flow: String, _ listening: inout Listening, until deadline: ContinuousClock.Instant,
                               again: String, prepare: (LoopbackListener) -> Void = { _ in }) async -> Result<AuthResult?, any Error>? {
        let standby = listening.listener.holdsCallback ? try? bindListener(flow, answer: .whenComplete) : nil
        let completed: Result<AuthResult?, any Error>
        do {
            completed = .success(try await handleRedirect(url, storeAsked: true))
        } catch {
            completed = .failure(error)
        }
        guard let standby else { return completed }
        guard case .failure(let error) = completed, Self.leftGrantUnspent(error), ContinuousClock.now < deadline,
              let registration = try? register(standby)
        else {
            standby.close()
            return completed
        }
        prepare(standby)
        do {
            try startListening(standby, flow, timeout: ContinuousClock.now.duration(to: deadline))
        } catch {
            waits.unregister(registration)
            return completed
        }
        PortalAuthLog.emit(.warning, "\(flow): the exchange failed and left the grant unspent; waiting for the redirect again.")
        waits.unregister(listening.registration)
        let answered = listening.listener
        listening = Listening(listener: standby, registration: registration)
        answered.answer(again)
        return nil
    }

    /// The end of a sign-in whose callback was exchanged: the guard released (the next
    /// sign-in may start at once), the browser told the outcome, and the outcome.
    /// - Throws: the exchange's error, or `callbackIncomplete` for a redirect that carried
    ///   nothing usable (`CallbackAdmission` lets through only a grant or an error, which the
    ///   exchange completes or throws, so this is not expected).
    func finishSignIn(_ flow: String, _ completed: Result<AuthResult?, any Error>, _ listening: Listening,
                      releasing holdsGuard: inout Bool) throws -> AuthResult {
        browserSignIn.end()
        holdsGuard = false
        listening.listener.answer(CallbackPage.completed(completed))
        guard let result = try completed.get() else {
            PortalAuthLog.emit(.warning, "\(flow): the redirect carried no usable result.")
            throw PortalAuthSignInError.callbackIncomplete
        }
        return result
    }

    /// The error of a wait for `what` that ended with no callback (`outcome`): its timeout,
    /// with what the listener refused meanwhile, or a stop.
    func endedWaiting(_ flow: String, for what: String, _ outcome: ListenerOutcome) -> PortalAuthSignInError {
        if case .timedOut(let refused) = outcome {
            PortalAuthLog.emit(.info, "\(flow): timed out waiting for \(what).")
            return .closed(reason: .timedOut, detail: refused?.description)
        }
        PortalAuthLog.emit(.info, "\(flow): cancelled while waiting for \(what).")
        return .closed(reason: waits.stoppedReason)
    }

    /// Whether a failed exchange left the grant unspent, so that the redirect can come again:
    /// the server failed before any session (5xx), or the request never reached it.
    static func leftGrantUnspent(_ error: any Error) -> Bool {
        switch error {
        case PortalRequestsError.httpStatus(let status, _, _): (500..<600).contains(status)
        case PortalRequestsError.network(let failure, _):
            [.connectionRefused, .connectTimeout, .nameNotResolved].contains(failure)
        default: false
        }
    }
}
