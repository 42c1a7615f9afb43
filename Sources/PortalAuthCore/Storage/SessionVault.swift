/// One environment's persisted session over a `SessionStorage`: encoding, the fault
/// taxonomy (docs/protocol.md §3, §6), and serialisation per environment across every
/// client of the process, which makes compare-and-delete atomic there.
struct SessionVault: Sendable {
    let storage: any SessionStorage
    let environmentId: String

    /// The stored session; `nil` when nothing is stored or the entry was undecodable (it
    /// is deleted then).
    /// - Throws: `sessionStorageFailure` when the store cannot be read, or when an
    ///   undecodable entry cannot be deleted (`entryNotCleared`): a failed self-heal is
    ///   never reported as signed out.
    func load() async throws -> StoredSession? {
        try await serialised {
            guard let raw = try await read() else { return nil }
            if let session = StoredSession.decode(raw) { return session }
            try await clearUndecodable()
            return nil
        }
    }

    /// Runs in a task of its own: a storage backend that honours cancellation must not
    /// drop a session whose grant is already spent because its caller stopped waiting.
    /// The task stays on the thread where the exchange that waits for it runs.
    func save(_ session: StoredSession) async throws {
        try await Task(executorPreference: HTTPEngine.currentExecutor) { [self] in
            try await serialised {
                try await guarded("write", { try await storage.set(session.encoded(), environmentId: environmentId) })
            }
        }.value
    }

    /// Returns when the store can take a session now; asked before a grant or a `userJwt`
    /// is spent. Only a store of the library's own is asked: a host's is called exactly as
    /// the protocol's storage rules say.
    /// - Throws: `sessionStorageFailure`, as the write would.
    func checkCanStore() async throws {
        guard let storage = storage as? any StorageReadiness else { return }
        try await guarded("write", { try await storage.checkCanStore(environmentId: environmentId) })
    }

    func delete() async throws {
        try await serialised {
            try await guarded("delete", { try await storage.delete(environmentId: environmentId) })
        }
    }

    /// Deletes the entry only if it still holds `token`, or cannot be decoded (it belongs to
    /// nobody); an entry of a newer sign-in is spared, and so is one that cannot be read
    /// (never deleted blind).
    func deleteIfCurrent(token: String) async throws {
        try await serialised {
            guard let raw = try await read() else { return }
            guard let stored = StoredSession.decode(raw) else { return try await clearUndecodable() }
            guard stored.clientSessionToken.hasSameBytes(as: token) else { return }
            try await guarded("delete", { try await storage.delete(environmentId: environmentId) })
        }
    }

    private func read() async throws -> String? {
        try await guarded("read", { try await storage.get(environmentId: environmentId) })
    }

    /// Deletes an entry that cannot be decoded, with one warning line that never shows its
    /// content. Call while serialised.
    /// - Throws: `sessionStorageFailure(.entryNotCleared)` when the delete fails; the entry
    ///   is still there.
    private func clearUndecodable() async throws {
        do {
            try await guarded("delete", { try await storage.delete(environmentId: environmentId) })
        } catch PortalAuthError.sessionStorageFailure(_, let message) {
            throw PortalAuthError.sessionStorageFailure(
                reason: .entryNotCleared,
                message: "The stored session cannot be decoded and could not be cleared, so it is still stored: \(message)")
        }
        PortalAuthLog.emit(.warning, "An undecodable stored session of environment \(environmentId) was cleared.")
    }

    /// Runs under the environment's process-wide lock, and under its entry's lock across
    /// processes for a store that has one (`EntryLocking`). Not cancellable: a write whose
    /// request already went out must land even if its caller stopped waiting.
    private func serialised<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await EnvironmentLocks.lock(for: environmentId).withLock(cancellable: false) {
            // A store other processes share holds its entry's lock too.
            guard let storage = storage as? any EntryLocking else { return try await body() }
            do {
                return try await storage.withEntryLock(environmentId: environmentId) {
                    do { return try await body() } catch { throw UnderEntryLock(error: error) }
                }
            } catch let failure as UnderEntryLock {
                throw failure.error   // the body's, mapped there already
            } catch {
                return try await guarded("lock", { throw error })
            }
        }
    }

    /// A failure of the work done under a store's entry lock, told apart from the lock's own.
    private struct UnderEntryLock: Error {
        let error: any Error
    }

    /// Maps any backend failure to `sessionStorageFailure`. A backend's own reason and
    /// message are kept; the cancellation of a cancelled task stays one; other errors are the
    /// application's store failing, and are not described, as they might quote the stored
    /// value.
    @discardableResult
    private func guarded<T>(_ action: String, _ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as SessionStorageError {
            throw PortalAuthError.sessionStorageFailure(reason: error.reason, message: error.message)
        } catch let cancelled as CancellationError where Task.isCancelled {
            // The caller cancelled a call the store was waiting in (a keyring dialog).
            throw cancelled
        } catch {
            throw PortalAuthError.sessionStorageFailure(
                reason: .hostStorageFailed,
                message: "The session store could not \(action) the session; the stored session was left as it was.")
        }
    }
}

/// One lock per environment id for the whole process (a forked child's are its own).
private enum EnvironmentLocks {
    private static var locks: Locked<[String: AsyncLock]> { registry.value }
    private static let registry = PerProcess { Locked<[String: AsyncLock]>([:]) }

    static func lock(for environmentId: String) -> AsyncLock {
        locks.withLock { locks in
            if let lock = locks[environmentId] { return lock }
            let lock = AsyncLock()
            locks[environmentId] = lock
            return lock
        }
    }
}
