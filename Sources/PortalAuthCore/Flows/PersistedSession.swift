/// The persisted session outside a sign-in (docs/protocol.md §3): restored, or cleared.
extension PortalAuth {
    /// Rebuilds the persisted session; reads the store only, no network. The session shares
    /// its state with every other session of its token in the process.
    /// - Returns: `nil` when nothing usable is stored (an undecodable entry is deleted), or
    ///   when the stored token was invalidated in this process and its delete had failed:
    ///   that delete is then retried, and the user stays signed out.
    /// - Throws: `sessionStorageFailure` when the store cannot be read this time, or an
    ///   undecodable entry (or an invalidated token's) cannot be deleted.
    public func restoreSession() async throws -> PortalSession? {
        guard let stored = try await vault.load() else { return nil }
        let session = PortalSession(token: stored.clientSessionToken, endUserId: stored.endUserId, vault: vault)
        if session.isInvalidated {
            try await session.invalidate()
            return nil
        }
        PortalAuthLog.emit(.info, "Session of endUserId \(stored.endUserId) restored.")
        return session
    }

    /// Deletes the persisted session and forgets the replay memo and any pending write.
    /// Waits for an in-flight exchange to finish persisting first. No server-side revoke exists.
    public func clearPersistedSession() async throws {
        try await grants.withLock {
            // Forget first: a pending write must never resurrect what the user cleared.
            grants.current = GrantLock.State()
            try await vault.delete()
            PortalAuthLog.emit(.info, "Persisted session cleared.")
        }
    }
}
