import CPortalAuth
import Dispatch
import PortalAuthCore
#if canImport(Glibc)
import Glibc
#endif

/// Storage through the host's callbacks. They run on a serial queue of the library's, so a
/// slow host store never blocks the HTTP thread or the caller's.
final class HostSessionStorage: SessionStorage, @unchecked Sendable {
    /// The host's function pointers and user_data, passed back untouched.
    private struct Callbacks: @unchecked Sendable {
        let table: portal_auth_storage_callbacks
    }

    private let host: Callbacks
    private let queue = DispatchQueue(label: "portal-auth.host-storage")

    /// Copies the callbacks the caller declared (within its `size`).
    init(_ callbacks: UnsafePointer<portal_auth_storage_callbacks>?) throws {
        guard let callbacks else { throw PortalAuthError.invalidArgument(name: "host_storage") }
        let declared = callbacks.pointee.size
        guard declared >= MemoryLayout<portal_auth_storage_callbacks>.size,
              callbacks.pointee.get != nil, callbacks.pointee.set != nil, callbacks.pointee.remove != nil
        else { throw PortalAuthError.invalidArgument(name: "host_storage") }
        host = Callbacks(table: callbacks.pointee)
    }

    private static let failure = SessionStorageError(
        message: "The application's session store reported a failure; the stored session was left untouched.")

    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
        }
    }

    func get(environmentId: String) async throws -> String? {
        let host = self.host
        return try await run {
            var value: UnsafeMutablePointer<CChar>?
            let status = environmentId.withCString { host.table.get?(host.table.user_data, $0, &value) ?? -1 }
            defer { free(value) }
            guard status == 0 else { throw Self.failure }
            // Not UTF-8: returned as "" (undecodable), so the library deletes it.
            return value.map { String(validatingCString: $0) ?? "" }
        }
    }

    func set(_ value: String, environmentId: String) async throws {
        let host = self.host
        try await run {
            let status = environmentId.withCString { id in
                value.withCString { host.table.set?(host.table.user_data, id, $0) ?? -1 }
            }
            guard status == 0 else { throw Self.failure }
        }
    }

    func delete(environmentId: String) async throws {
        let host = self.host
        try await run {
            let status = environmentId.withCString { host.table.remove?(host.table.user_data, $0) ?? -1 }
            guard status == 0 else { throw Self.failure }
        }
    }
}
