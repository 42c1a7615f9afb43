/// Where persisted sessions live: one opaque entry per `authEnvironmentId`.
///
/// Implementations store and return the raw text unchanged; the library encodes and
/// decodes it (docs/protocol.md §9), serialises calls per environment, and applies the fault
/// taxonomy: an error thrown here is a transient failure and nothing is deleted for it.
public protocol SessionStorage: Sendable {
    /// The stored entry, or `nil` when there is none.
    func get(environmentId: String) async throws -> String?
    /// Stores `value`, replacing any entry.
    func set(_ value: String, environmentId: String) async throws
    /// Removes the entry; removing a missing entry is not an error.
    func delete(environmentId: String) async throws
}

/// A store of the library's own that can tell, before a grant is spent, whether it could
/// keep the session (docs/protocol.md's storage rules are unchanged for a host's store,
/// which is never asked).
protocol StorageReadiness: SessionStorage {
    /// Returns when a session could be stored now.
    /// - Throws: `SessionStorageError`, as a write would.
    func checkCanStore(environmentId: String) async throws
}

/// A failure a storage backend reports: which failure it was, and a message for the user
/// (what to do about it). The message must not carry the stored value.
public struct SessionStorageError: Error, Sendable {
    public let reason: StorageFailureReason
    public let message: String

    /// - Parameter reason: `.hostStorageFailed` for an application's own store.
    public init(reason: StorageFailureReason = .hostStorageFailed, message: String) {
        self.reason = reason
        self.message = message
    }
}

/// Sessions kept in this process only, forgotten at exit.
public final class MemorySessionStorage: SessionStorage {
    /// The process-wide store: clients of one environment share a session through it.
    public static let shared = MemorySessionStorage()

    private let entries = Locked<[String: String]>([:])

    public init() {}

    public func get(environmentId: String) async throws -> String? {
        entries.withLock { $0[environmentId] }
    }

    public func set(_ value: String, environmentId: String) async throws {
        entries.withLock { $0[environmentId] = value }
    }

    public func delete(environmentId: String) async throws {
        _ = entries.withLock { $0.removeValue(forKey: environmentId) }
    }
}
