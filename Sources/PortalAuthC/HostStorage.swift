import CPortalAuth
import PortalAuthCore
#if canImport(Glibc)
import Glibc
#endif

/// Storage through the host's callbacks (portal_auth_storage_callbacks), run by a
/// `BlockingSessionStorage` on a queue of the library's.
enum HostStorage {
    /// The host's function pointers and user_data, passed back untouched. The closures of
    /// the storage share it; when the last is gone, the host's optional `release` hears so.
    private final class Callbacks: @unchecked Sendable {
        let table: portal_auth_storage_callbacks
        init(_ table: portal_auth_storage_callbacks) { self.table = table }
        deinit { table.release?(table.user_data) }
    }

    private static let failure = SessionStorageError(
        reason: .hostStorageFailed,
        message: "The application's session store reported a failure; the stored session was left untouched.")

    /// A storage over a copy of the callbacks the caller declared (within its `size`).
    static func make(_ callbacks: UnsafePointer<portal_auth_storage_callbacks>?) throws -> BlockingSessionStorage {
        guard let callbacks, callbacks.pointee.size >= MemoryLayout<portal_auth_storage_callbacks>.size else {
            throw PortalAuthError.invalidArgument(name: "host_storage")
        }
        // From here on `release` is owed: a failure below, or in the client's own checks,
        // drops the last reference before portal_auth_new returns.
        let host = Callbacks(callbacks.pointee)
        guard host.table.get != nil, host.table.set != nil, host.table.remove != nil else {
            throw PortalAuthError.invalidArgument(name: "host_storage")
        }
        return BlockingSessionStorage(
            threadName: "portal-auth-hst",
            get: { environmentId in
                var value: UnsafeMutablePointer<CChar>?
                let status = environmentId.withCString { host.table.get?(host.table.user_data, $0, &value) ?? -1 }
                defer { SecretMemory.freeString(value) }
                guard status == 0 else { throw failure }
                return value.map { StoredSession.entry(utf8: UnsafeRawBufferPointer(start: $0, count: strlen($0))) }
            },
            set: { value, environmentId in
                let status = environmentId.withCString { id in
                    value.withCString { host.table.set?(host.table.user_data, id, $0) ?? -1 }
                }
                guard status == 0 else { throw failure }
            },
            delete: { environmentId in
                let status = environmentId.withCString { host.table.remove?(host.table.user_data, $0) ?? -1 }
                guard status == 0 else { throw failure }
            })
    }
}
