/// A `SessionStorage` over operations that block (libsecret's calls, a host's callbacks):
/// they run one at a time on a thread of their own (`SerialThread`), never on the caller's
/// thread or the HTTP thread; a forked child's on a thread of the child's.
public final class BlockingSessionStorage: SessionStorage {
    public typealias Get = @Sendable (_ environmentId: String) throws -> String?
    public typealias Set = @Sendable (_ value: String, _ environmentId: String) throws -> Void
    public typealias Delete = @Sendable (_ environmentId: String) throws -> Void

    private let getValue: Get
    private let setValue: Set
    private let deleteValue: Delete
    private let thread: PerProcess<SerialThread>

    /// - Parameter threadName: names the thread, for ps and debuggers (at most 15 bytes).
    public init(threadName: String, get: @escaping Get, set: @escaping Set, delete: @escaping Delete) {
        getValue = get
        setValue = set
        deleteValue = delete
        thread = PerProcess { SerialThread(name: threadName) }
    }

    public func get(environmentId: String) async throws -> String? {
        try await thread.value.perform { [getValue] in try getValue(environmentId) }
    }

    public func set(_ value: String, environmentId: String) async throws {
        try await thread.value.perform { [setValue] in try setValue(value, environmentId) }
    }

    public func delete(environmentId: String) async throws {
        try await thread.value.perform { [deleteValue] in try deleteValue(environmentId) }
    }
}
