import Synchronization

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

    private let state = Mutex(State())

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
    /// exchanged: a browser or magic-link sign-in waiting for its redirect, and listening for
    /// forwarded redirects. Returns once their ports and sockets are released, so another
    /// client may listen on them at once. Exchanges already under way complete. From then on
    /// every wait this client starts ends at once as `closed`: call it when letting the client
    /// go (the C ABI's `portal_auth_free` does).
    public func endWaits() {
        waits.endAll()
    }
}
