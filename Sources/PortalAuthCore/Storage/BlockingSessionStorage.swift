import Dispatch

/// A `SessionStorage` over operations that block (libsecret's calls, a host's callbacks):
/// they run one at a time on a serial queue of their own, never on the caller's thread or
/// the HTTP thread.
public final class BlockingSessionStorage: SessionStorage {
    public typealias Get = @Sendable (_ environmentId: String) throws -> String?
    public typealias Set = @Sendable (_ value: String, _ environmentId: String) throws -> Void
    public typealias Delete = @Sendable (_ environmentId: String) throws -> Void

    private let getValue: Get
    private let setValue: Set
    private let deleteValue: Delete
    private let queue: DispatchQueue

    /// - Parameter label: names the queue, for debuggers.
    public init(label: String, get: @escaping Get, set: @escaping Set, delete: @escaping Delete) {
        getValue = get
        setValue = set
        deleteValue = delete
        queue = DispatchQueue(label: label)
    }

    public func get(environmentId: String) async throws -> String? {
        try await perform { [getValue] in try getValue(environmentId) }
    }

    public func set(_ value: String, environmentId: String) async throws {
        try await perform { [setValue] in try setValue(value, environmentId) }
    }

    public func delete(environmentId: String) async throws {
        try await perform { [deleteValue] in try deleteValue(environmentId) }
    }

    private func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
        }
    }
}
