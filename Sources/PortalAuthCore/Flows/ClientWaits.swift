/// The waits of one client that `endWaits` ends: a sign-in's loopback listener, listening
/// for forwarded redirects. Each wait registers how to end it while it runs. Once the
/// client's waits have been ended, no new one may begin: a host that lets its client go
/// (`portal_auth_free`) must get its ports and sockets back at once, and a sign-in that was
/// still fetching or sending when that happened must not bind one afterwards.
final class ClientWaits: Sendable {
    /// A registered wait, to unregister when it ends.
    struct Registration: Sendable {
        fileprivate let id: UInt64
    }

    private struct State {
        var ended = false
        var waits: [UInt64: @Sendable () -> Void] = [:]
        var nextId: UInt64 = 0
    }

    private let state = Locked(State())

    /// Registers `end`, which `endAll` calls once unless the wait unregisters first; nil when
    /// the client's waits have been ended already (the caller then ends its wait itself).
    func register(_ end: @escaping @Sendable () -> Void) -> Registration? {
        state.withLock { state in
            guard !state.ended else { return nil }
            state.nextId += 1
            state.waits[state.nextId] = end
            return Registration(id: state.nextId)
        }
    }

    func unregister(_ registration: Registration) {
        _ = state.withLock { $0.waits.removeValue(forKey: registration.id) }
    }

    /// What a step that must not begin once the waits have ended throws instead.
    struct Ended: Error {}

    /// Whether `endAll` has been called.
    var haveEnded: Bool { state.withLock { $0.ended } }

    /// Why a wait that stopped did: the client's end (`endAll`), or else its caller's cancel.
    var stoppedReason: SignInClosedReason { haveEnded ? .clientClosed : .cancelled }

    /// Runs `step`, a request a sign-in makes before its wait (the authorize URL, the magic
    /// link's email), so that `endAll` stops it: a request not yet on the wire is never sent;
    /// one that is runs to its end, and the sign-in takes no step after it. The step runs in a
    /// task of its own, on the executor of the call, which `endAll` (or the caller's
    /// cancellation) cancels.
    /// - Throws: `PortalAuthSignInError.closed` when the waits were ended, or the caller
    ///   cancelled, before or during the step; else what `step` throws.
    func step<T: Sendable>(_ step: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task(executorPreference: HTTPEngine.currentExecutor) { try await step() }
        guard let registration = register({ task.cancel() }) else {
            task.cancel()
            throw PortalAuthSignInError.closed(reason: .clientClosed)
        }
        defer { unregister(registration) }
        let outcome = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
        if task.isCancelled { throw PortalAuthSignInError.closed(reason: stoppedReason) }
        return try outcome.get()
    }

    /// Ends every registered wait, and every one registered from now on. Returns once each
    /// `end` has returned.
    func endAll() {
        let ends = state.withLock { state -> [@Sendable () -> Void] in
            state.ended = true
            defer { state.waits.removeAll() }
            return Array(state.waits.values)
        }
        ends.forEach { $0() }
    }
}

extension PortalAuth {
    /// Ends this client's waits at once, each as `PortalAuthSignInError.closed` with nothing
    /// exchanged: a browser or magic-link sign-in waiting for its redirect, or still fetching
    /// its authorize URL or sending its email, and listening for forwarded redirects. Returns
    /// once their ports and sockets are released, so another client may listen on them at
    /// once. From then on no email is sent that was not on the wire already, and no browser
    /// opener is called but one whose call had begun (checked just before the call); a
    /// sign-in whose request is on the wire ends as `closed` when it returns, without a
    /// further step. Exchanges already under way complete. Every wait this
    /// client starts from then on ends at once as `closed`: call it when letting the client
    /// go (the C ABI's `portal_auth_free` does).
    public func endWaits() {
        waits.endAll()
    }
}
