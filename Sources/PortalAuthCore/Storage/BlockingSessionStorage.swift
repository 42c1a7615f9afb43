/// A `SessionStorage` over operations that block (a host's callbacks): they run on a
/// `StoreThread`, as the library's own stores' do.
public final class BlockingSessionStorage: SessionStorage {
    public typealias Get = @Sendable (_ environmentId: String) throws -> String?
    public typealias Set = @Sendable (_ value: String, _ environmentId: String) throws -> Void
    public typealias Delete = @Sendable (_ environmentId: String) throws -> Void

    private let getValue: Get
    private let setValue: Set
    private let deleteValue: Delete
    private let thread: StoreThread

    /// - Parameter threadName: names the thread, for ps and debuggers (at most 15 bytes).
    public init(threadName: String, get: @escaping Get, set: @escaping Set, delete: @escaping Delete) {
        getValue = get
        setValue = set
        deleteValue = delete
        thread = StoreThread(name: threadName)
    }

    public func get(environmentId: String) async throws -> String? {
        try await thread.run { [getValue] in try getValue(environmentId) }
    }

    public func set(_ value: String, environmentId: String) async throws {
        try await thread.run { [setValue] in try setValue(value, environmentId) }
    }

    public func delete(environmentId: String) async throws {
        try await thread.run { [deleteValue] in try deleteValue(environmentId) }
    }
}
