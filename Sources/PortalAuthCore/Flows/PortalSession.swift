/// A signed-in user: the Client Session Token and the `endUserId` (docs/protocol.md §6).
///
/// Printing a session shows only the `endUserId`, which is never secret and is what to
/// log and to key per-user state on.
public final class PortalSession: Sendable {
    public let endUserId: String
    /// Shared with every other session of this environment and token in the process.
    private let credential: SessionCredential
    private let vault: SessionVault

    init(token: String, endUserId: String, vault: SessionVault) {
        credential = SessionCredential.of(environmentId: vault.environmentId, token: token)
        self.endUserId = endUserId
        self.vault = vault
    }

    /// The Client Session Token, until this session, or another of the same environment
    /// and token in the process, is invalidated.
    public func getToken() throws(PortalCredentialError) -> String {
        guard credential.isActive else { throw .sessionInvalidated }
        return credential.token
    }

    public var isInvalidated: Bool { !credential.isActive }

    /// Forgets the token at once, in every session of this environment and token in the
    /// process, then deletes the persisted copy only if it is still this session's (or
    /// cannot be decoded): a newer sign-in's entry is spared. Single-flight: concurrent
    /// calls, on this session or one sharing its token, make one compare-and-delete and all
    /// get its outcome; once one has succeeded, a later call does no storage I/O. If the
    /// store fails, the session stays invalidated and a later call retries the delete.
    public func invalidate() async throws {
        let (vault, token, endUserId) = (vault, credential.token, endUserId)
        let ran = try await credential.invalidate { try await vault.deleteIfCurrent(token: token) }
        if ran { PortalAuthLog.emit(.info, "Session of endUserId \(endUserId) invalidated.") }
    }

    var stored: StoredSession {
        StoredSession(clientSessionToken: credential.token, endUserId: endUserId)
    }
}

extension PortalSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "PortalSession(endUserId: \(endUserId))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["endUserId": endUserId]) }
}
