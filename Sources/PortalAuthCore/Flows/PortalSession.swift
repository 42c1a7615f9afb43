import Synchronization

/// A signed-in user: the Client Session Token and the `endUserId` (docs/protocol.md §6).
///
/// Printing a session shows only the `endUserId`, which is never secret and is what to
/// log and to key per-user state on.
public final class PortalSession: Sendable {
    public let endUserId: String
    private let token: String
    private let vault: SessionVault
    private let state = Mutex(State.active)

    private enum State {
        case active
        /// `storeSettled` once the persisted copy is known deleted or spared.
        case invalidated(storeSettled: Bool)
    }

    init(token: String, endUserId: String, vault: SessionVault) {
        self.token = token
        self.endUserId = endUserId
        self.vault = vault
    }

    /// The Client Session Token, until the session is invalidated.
    public func getToken() throws(PortalCredentialError) -> String {
        guard case .active = state.withLock({ $0 }) else { throw .sessionInvalidated }
        return token
    }

    public var isInvalidated: Bool {
        if case .active = state.withLock({ $0 }) { return false }
        return true
    }

    /// Forgets the token at once, then deletes the persisted copy only if it is still this
    /// session's: a newer sign-in's entry is spared. If the store cannot be reached the
    /// session stays invalidated and a later call retries the delete.
    public func invalidate() async throws {
        let settled = state.withLock { state -> Bool in
            if case .invalidated(storeSettled: true) = state { return true }
            state = .invalidated(storeSettled: false)
            return false
        }
        if settled { return }
        try await vault.deleteIfCurrent(token: token)
        state.withLock { $0 = .invalidated(storeSettled: true) }
        PortalAuthLog.emit(.info, "Session of endUserId \(endUserId) invalidated.")
    }

    var stored: StoredSession {
        StoredSession(clientSessionToken: token, endUserId: endUserId)
    }
}

extension PortalSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "PortalSession(endUserId: \(endUserId))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["endUserId": endUserId]) }
}
