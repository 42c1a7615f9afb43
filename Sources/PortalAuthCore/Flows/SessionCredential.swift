/// What every `PortalSession` of one environment and one token in the process shares
/// (docs/protocol.md §6), whichever call handed it out: whether the token may still be used,
/// and the one invalidation under way. Invalidating one session invalidates them all.
final class SessionCredential: Sendable {
    let token: String
    private let key: Key
    private let phase = Locked(Phase.active)

    private enum Phase {
        case active
        /// The compare-and-delete every concurrent `invalidate()` waits for.
        case invalidating(Task<Void, any Error>)
        /// `settled` once a compare-and-delete has succeeded; until then the next
        /// `invalidate()` retries it.
        case invalidated(settled: Bool)
    }

    private struct Key: Hashable {
        let environmentId: String
        let token: String
    }

    private init(_ key: Key) {
        self.key = key
        token = key.token
    }

    var isActive: Bool {
        if case .active = phase.withLock({ $0 }) { return true }
        return false
    }

    /// Single-flight: the first call forgets the token and starts `compareAndDelete`, and
    /// every call until it ends gets its outcome. After a success nothing is done again;
    /// after a failure the next call retries.
    /// - Returns: true when this call's compare-and-delete ran (and succeeded), false when it
    ///   awaited another's or nothing was left to do.
    @discardableResult
    func invalidate(_ compareAndDelete: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        let (task, started) = phase.withLock { phase -> (Task<Void, any Error>?, Bool) in
            switch phase {
            case .invalidated(settled: true):
                return (nil, false)
            case .invalidating(let task):
                return (task, false)
            case .active, .invalidated(settled: false):
                // Started under the lock, so no second caller can start another; on the
                // thread of the call that starts it.
                let task = Task(executorPreference: HTTPEngine.currentExecutor) { [self] in
                    do {
                        try await compareAndDelete()
                    } catch {
                        self.phase.withLock { $0 = .invalidated(settled: false) }
                        throw error
                    }
                    self.phase.withLock { $0 = .invalidated(settled: true) }
                }
                phase = .invalidating(task)
                return (task, true)
            }
        }
        try await task?.value
        return started
    }

    // MARK: - The process's registry

    private struct Entry: Sendable {
        weak var credential: SessionCredential?
    }

    /// A forked child's is its own.
    private static var live: Locked<[Key: Entry]> { registry.value }
    private static let registry = PerProcess { Locked<[Key: Entry]>([:]) }

    /// The credential of `token` in `environmentId`: the live one, else a new one.
    static func of(environmentId: String, token: String) -> SessionCredential {
        let key = Key(environmentId: environmentId, token: token)
        return live.withLock { live in
            if let credential = live[key]?.credential { return credential }
            let credential = SessionCredential(key)
            live[key] = Entry(credential: credential)
            return credential
        }
    }

    deinit {
        // A credential made for the key since this one's last session went stays listed.
        let key = key
        Self.live.withLock { live in
            if live[key]?.credential == nil { live[key] = nil }
        }
    }
}
