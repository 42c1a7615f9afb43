/// A magic-link sign-in waiting for its redirect, which comes one of two ways: the browser
/// brings it to the sign-in's loopback listener, or the host hands it to `handleRedirect`
/// (pasted by a user who opened the email on another device, or forwarded by the app's next
/// instance). The first to come takes the wait, once. A redirect the host handles stops the
/// listener and hands its outcome to the sign-in, so the grant is exchanged once and the
/// sign-in completes once, with that same outcome.
final class MagicLinkWait: Sendable {
    private enum Phase {
        case waiting
        /// The listener's wait ended first: redirects handled from now on are the host's own.
        case listenerTook
        /// A redirect took it: its outcome, once the exchange has ended.
        case redirectTook(Result<AuthResult, any Error>?)
    }

    private struct State {
        var phase = Phase.waiting
        var waiter: CheckedContinuation<Result<AuthResult, any Error>?, Never>?
    }

    private let listener: LoopbackListener
    private let state = Locked(State())

    init(_ listener: LoopbackListener) {
        self.listener = listener
    }

    /// For `handleRedirect` with a magic-link grant: takes the wait unless it was taken
    /// already, and stops the listener. True when the caller must `deliver` its outcome.
    func takeForRedirect() -> Bool {
        let took = state.withLock { state -> Bool in
            guard case .waiting = state.phase else { return false }
            state.phase = .redirectTook(nil)
            return true
        }
        if took { listener.stop() }
        return took
    }

    /// For the sign-in, once its listener's wait has ended: true when the wait is its own;
    /// false when a redirect took it (then `redirectOutcome` gives the outcome).
    func takeForListener() -> Bool {
        state.withLock { state in
            guard case .waiting = state.phase else { return false }
            state.phase = .listenerTook
            return true
        }
    }

    /// The outcome of the exchange of the redirect that took the wait.
    func deliver(_ outcome: Result<AuthResult, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<AuthResult, any Error>?, Never>? in
            state.phase = .redirectTook(outcome)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    /// The outcome `deliver` gave, once it has; nil when the awaiting task is cancelled first.
    func redirectOutcome() async -> Result<AuthResult, any Error>? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<AuthResult, any Error>?, Never>) in
                let ready = state.withLock { state -> Result<AuthResult, any Error>?? in
                    if case .redirectTook(let outcome?) = state.phase { return .some(outcome) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Result<AuthResult, any Error>?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
