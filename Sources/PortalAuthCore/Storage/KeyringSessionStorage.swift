import CSecret

/// Sessions in the desktop keyring through libsecret (the Secret Service API that GNOME
/// Keyring, KeePassXC and KWallet serve): one item per environment, in the default
/// collection (the login keyring), holding the JSON of docs/protocol.md §9.
///
/// It never prompts: a locked keyring is reported, not unlocked, so a background restore
/// cannot pop a dialog. Its blocking calls run on a queue of their own
/// (`BlockingSessionStorage`), never on the caller's thread or the HTTP thread.
public final class KeyringSessionStorage: SessionStorage {
    /// The storage every client uses unless told otherwise.
    public static let shared = KeyringSessionStorage()

    /// Shown in the item's label beside the environment, so a user browsing the keyring
    /// (Seahorse, `secret-tool`) knows what the item is.
    public let appName: String

    private let store: BlockingSessionStorage

    public init(appName: String = KeyringSessionStorage.processName) {
        self.appName = appName
        store = BlockingSessionStorage(
            label: "portal-auth.keyring",
            get: { environmentId in try Keyring.withService { try Keyring.lookup($0, environmentId) } },
            set: { value, environmentId in
                let label = "\(appName): Portal session (\(environmentId))"
                try Keyring.withService { try Keyring.store($0, value, environmentId: environmentId, label: label) }
            },
            delete: { environmentId in try Keyring.withService { try Keyring.delete($0, environmentId) } })
    }

    public func get(environmentId: String) async throws -> String? {
        try await store.get(environmentId: environmentId)
    }

    public func set(_ value: String, environmentId: String) async throws {
        try await store.set(value, environmentId: environmentId)
    }

    public func delete(environmentId: String) async throws {
        try await store.delete(environmentId: environmentId)
    }

    /// The running program's name.
    public static var processName: String {
        let name = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
        return name.isBlank ? "portal-auth" : name
    }
}

/// The libsecret calls, blocking; only ever run on the storage's queue.
private enum Keyring {
    static func lookup(_ service: UnsafeMutablePointer<SecretService>, _ environmentId: String) throws(KeyringFault) -> String? {
        let items = try search(service, environmentId, loadSecrets: true)
        defer { pa_free_items(items) }

        // Duplicates can only come from other tools; the newest write wins.
        var newest: (modified: guint64, text: String)?
        var node = items
        while let current = node {
            node = current.pointee.next
            guard let item = current.pointee.data?.assumingMemoryBound(to: SecretItem.self) else { continue }
            guard secret_item_get_locked(item) == 0 else { throw .locked }
            guard let value = secret_item_get_secret(item) else { continue }
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            var length = 0
            guard let bytes = secret_value_get(value, &length) else { continue }
            // Bytes that are not UTF-8 cannot be ours: returned as "" (undecodable), the
            // library deletes the item, rather than repairing a token into something else.
            let text = String(validating: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self) ?? ""
            let modified = secret_item_get_modified(item)
            if newest == nil || modified >= newest?.modified ?? 0 { newest = (modified, text) }
        }
        return newest?.text
    }

    static func store(_ service: UnsafeMutablePointer<SecretService>, _ text: String, environmentId: String, label: String) throws(KeyringFault) {
        try requireUnlockedDefaultCollection(service)
        let attributes = pa_environment_attributes(environmentId)
        defer { g_hash_table_unref(attributes) }
        let value = secret_value_new(text, -1, "text/plain")
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var error: UnsafeMutablePointer<GError>?
        let stored = secret_service_store_sync(service, pa_session_schema(), attributes, SECRET_COLLECTION_DEFAULT,
                                               label, value, nil, &error)
        if stored == 0 { throw fault(error, .write) }
    }

    static func delete(_ service: UnsafeMutablePointer<SecretService>, _ environmentId: String) throws(KeyringFault) {
        let items = try search(service, environmentId, loadSecrets: false)
        defer { pa_free_items(items) }
        var node = items
        while let current = node {
            node = current.pointee.next
            guard let item = current.pointee.data?.assumingMemoryBound(to: SecretItem.self) else { continue }
            guard secret_item_get_locked(item) == 0 else { throw .locked }
            var error: UnsafeMutablePointer<GError>?
            if secret_item_delete_sync(item, nil, &error) == 0 { throw fault(error, .delete) }
        }
    }

    // MARK: - Helpers

    /// Runs `body` with the shared Secret Service connection. libsecret's connection keeps
    /// addressing the daemon it first met; after a keyring restart the first call fails as
    /// "no service", so that case is tried once more on a fresh connection.
    /// Only `KeyringFault`s are thrown inside; they leave as the `SessionStorageError` they
    /// stand for.
    static func withService<T>(_ body: (UnsafeMutablePointer<SecretService>) throws -> T) throws -> T {
        do {
            do {
                return try withConnection(body)
            } catch KeyringFault.serviceUnknown {
                return try withConnection(body)
            }
        } catch let fault as KeyringFault {
            throw fault.storageError
        }
    }

    private static func withConnection<T>(_ body: (UnsafeMutablePointer<SecretService>) throws -> T) throws -> T {
        let service = try connect()
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        return try body(service)
    }

    private static func connect() throws(KeyringFault) -> UnsafeMutablePointer<SecretService> {
        if let missing = pa_secret_load_error() { throw .libsecretMissing(String(cString: missing)) }
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error) else {
            throw fault(error, .reach)
        }
        return service
    }

    private static func search(_ service: UnsafeMutablePointer<SecretService>, _ environmentId: String,
                               loadSecrets: Bool) throws(KeyringFault) -> UnsafeMutablePointer<GList>? {
        let attributes = pa_environment_attributes(environmentId)
        defer { g_hash_table_unref(attributes) }
        // SECRET_SEARCH_ALL without SECRET_SEARCH_UNLOCK: locked items are found, not unlocked.
        var flags = SECRET_SEARCH_ALL.rawValue
        if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
        var error: UnsafeMutablePointer<GError>?
        let items = secret_service_search_sync(service, pa_session_schema(), attributes,
                                               SecretSearchFlags(rawValue: flags), nil, &error)
        if let error { throw fault(error, .read) }
        return items
    }

    private static func requireUnlockedDefaultCollection(_ service: UnsafeMutablePointer<SecretService>) throws(KeyringFault) {
        var error: UnsafeMutablePointer<GError>?
        let collection = secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, nil, &error)
        if let error { throw fault(error, .write) }
        // Creating a default collection goes through a Secret Service prompt (a dialog the
        // write would wait on): the user is told to create one instead.
        guard let collection else { throw .noDefaultCollection }
        defer { g_object_unref(UnsafeMutableRawPointer(collection)) }
        if secret_collection_get_locked(collection) != 0 { throw .locked }
    }

    /// The fault a GError stands for, from its kind only: D-Bus error texts are not shown.
    /// The shared connection is dropped, so the next call reaches a restarted service.
    private static func fault(_ error: UnsafeMutablePointer<GError>?, _ action: KeyringFault.Action) -> KeyringFault {
        defer {
            if let error { g_error_free(error) }
            secret_service_disconnect()
        }
        var remoteName = ""
        if let error, let name = g_dbus_error_get_remote_error(error) {
            remoteName = String(cString: name)
            g_free(name)
        }
        switch remoteName {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .serviceUnknown
        case "org.freedesktop.Secret.Error.IsLocked":
            return .locked
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return .timeout
        case "":
            if let error, error.pointee.domain == g_io_error_quark(), error.pointee.code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
                return .timeout
            }
            if getenv("DBUS_SESSION_BUS_ADDRESS") == nil { return .noSessionBus }
            return action == .reach ? .busUnreachable : .failed(action, remoteName: nil)
        default:
            return .failed(action, remoteName: remoteName)
        }
    }
}

/// What went wrong with the keyring, as libsecret and D-Bus tell it: the retry and the
/// reason an app sees are decided on these kinds, the message follows from them.
private enum KeyringFault: Error, Equatable {
    enum Action: String {
        case reach, read, write, delete
    }

    case libsecretMissing(String)
    /// Nothing owns the Secret Service's bus name.
    case serviceUnknown
    case locked
    case noDefaultCollection
    case timeout
    /// DBUS_SESSION_BUS_ADDRESS is unset.
    case noSessionBus
    /// The session bus is set but could not be connected to.
    case busUnreachable
    /// Another failure of `action`; the D-Bus error's name when the service sent one.
    case failed(Action, remoteName: String?)

    var storageError: SessionStorageError {
        switch self {
        case .libsecretMissing(let loaderMessage):
            return SessionStorageError(reason: .libsecretMissing, message: "\(loaderMessage); install libsecret (Debian: libsecret-1-0) to keep sessions in the keyring.")
        case .serviceUnknown:
            return SessionStorageError(reason: .noSecretService, message: "No Secret Service is running on the session bus; install and start gnome-keyring (or KeePassXC with its Secret Service integration) and try again.")
        case .locked:
            return SessionStorageError(reason: .keyringLocked, message: "The login keyring is locked; unlock it (for example with Seahorse, or by logging in to the desktop) and try again.")
        case .noDefaultCollection:
            return SessionStorageError(reason: .noSecretService, message: "The keyring has no default collection; create a login keyring (for example with Seahorse) and try again.")
        case .timeout:
            return SessionStorageError(reason: .dbusFailure, message: "The Secret Service did not answer in time; check that the keyring daemon is running and try again.")
        case .noSessionBus:
            return SessionStorageError(reason: .noSessionBus, message: "No D-Bus session bus was found (DBUS_SESSION_BUS_ADDRESS is unset); run the app inside a desktop session with a Secret Service.")
        case .busUnreachable:
            return SessionStorageError(reason: .noSessionBus, message: "The D-Bus session bus could not be reached; check that the desktop session (and its Secret Service) is running and try again.")
        case .failed(let action, let remoteName):
            let name = remoteName.map { " (\($0))" } ?? ""
            return SessionStorageError(reason: .dbusFailure, message: "The keyring could not \(action.rawValue) the session\(name); the stored session was left untouched.")
        }
    }
}
