import Synchronization

/// One environment's persisted session over a `SessionStorage`: encoding, the fault
/// taxonomy (docs/protocol.md §3, §6), and serialisation per environment across every
/// client of the process, which makes compare-and-delete atomic there.
struct SessionVault: Sendable {
    let storage: any SessionStorage
    let environmentId: String

    /// The stored session; `nil` when nothing is stored or the entry was undecodable (it
    /// is deleted then).
    func load() async throws -> StoredSession? {
        try await serialised {
            guard let raw = try await guarded("read", { try await storage.get(environmentId: environmentId) }) else {
                return nil
            }
            if let session = StoredSession.decode(raw) { return session }
            // Undecodable: no session either way; a failed delete is retried on the next read.
            do {
                try await guarded("delete", { try await storage.delete(environmentId: environmentId) })
                PortalAuthLog.emit(.warning, "The stored session for environment \(environmentId) could not be decoded; it was deleted.")
            } catch {
                PortalAuthLog.emit(.warning, "The stored session for environment \(environmentId) could not be decoded, nor deleted.")
            }
            return nil
        }
    }

    /// Runs in a task of its own: a storage backend that honours cancellation must not
    /// drop a session whose grant is already spent because its caller stopped waiting.
    /// The task stays on the library's thread, where the exchange that waits for it runs.
    func save(_ session: StoredSession) async throws {
        try await Task(executorPreference: HTTPEngine.shared.executor) { [self] in
            try await serialised {
                try await guarded("write", { try await storage.set(session.encoded(), environmentId: environmentId) })
            }
        }.value
    }

    func delete() async throws {
        try await serialised {
            try await guarded("delete", { try await storage.delete(environmentId: environmentId) })
        }
    }

    /// Deletes the entry only if it still holds `token`; an entry of a newer sign-in is
    /// spared, and so is one that cannot be read (never deleted blind).
    func deleteIfCurrent(token: String) async throws {
        try await serialised {
            let raw = try await guarded("read", { try await storage.get(environmentId: environmentId) })
            guard let raw, let stored = StoredSession.decode(raw), stored.clientSessionToken.hasSameBytes(as: token) else { return }
            try await guarded("delete", { try await storage.delete(environmentId: environmentId) })
        }
    }

    /// Runs under the environment's process-wide lock. Not cancellable: a write whose
    /// request already went out must land even if its caller stopped waiting.
    private func serialised<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await EnvironmentLocks.lock(for: environmentId).withLock(cancellable: false, body)
    }

    /// Maps any backend failure to `sessionStorageFailure`. A backend's own message is
    /// kept; other errors are not described, as they might quote the stored value.
    @discardableResult
    private func guarded<T>(_ action: String, _ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as SessionStorageError {
            throw PortalAuthError.sessionStorageFailure(message: error.message)
        } catch {
            throw PortalAuthError.sessionStorageFailure(
                message: "The session store could not \(action) the session; the stored session was left as it was.")
        }
    }
}

/// One lock per environment id for the whole process.
private enum EnvironmentLocks {
    private static let locks = Mutex<[String: AsyncLock]>([:])

    static func lock(for environmentId: String) -> AsyncLock {
        locks.withLock { locks in
            if let lock = locks[environmentId] { return lock }
            let lock = AsyncLock()
            locks[environmentId] = lock
            return lock
        }
    }
}
