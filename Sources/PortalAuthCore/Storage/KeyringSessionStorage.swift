import CSecret

/// Sessions in the desktop keyring through libsecret (the Secret Service API that GNOME
/// Keyring, KeePassXC and KWallet serve): one item per application and environment, in the
/// default collection (the login keyring), holding the JSON of docs/protocol.md §9. Only the
/// default collection is searched: an item planted in another one (`session`, a collection
/// of another program's) is never taken for the user's session.
///
/// The application id keeps apps apart: two apps of one environment that each name
/// themselves never share, or sign each other out of, one session, while the instances of
/// one app share theirs. It is an attribute of the item beside the environment id, and
/// names the item's label. The store without one (`shared`) writes the attribute empty: its
/// item is shared by every program of the environment that names no application. (The
/// attribute is never left out of a write: the Secret Service replaces an item whose
/// attributes include those of the one written, so an item without it would replace every
/// app's item of its environment.)
///
/// Migration: items written before the attribute existed have none. A store that has never
/// written an item of its own still finds the environment's such item (its app wrote it
/// before it named itself, or before the attribute existed). Its next write stores its own
/// item and removes that one; a delete removes both. An application that names itself
/// leaves a marker before its first write (an item of a schema of its own,
/// `pa_own_item_marker_schema`), and from then on never adopts an item without the attribute
/// again, even once its own item is gone (a sign-out): any such item is another program's,
/// or planted. (The store that names none shares its item with every such program anyway,
/// so it keeps migrating.)
///
/// It never prompts: a locked keyring is reported, not unlocked, so a background restore
/// cannot pop a dialog. Its blocking calls run on a queue of their own
/// (`BlockingSessionStorage`), never on the caller's thread or the HTTP thread.
public final class KeyringSessionStorage: SessionStorage {
    /// The storage every client uses unless told otherwise: no application id.
    public static let shared = KeyringSessionStorage(checkedApplicationId: "")

    /// A reverse-DNS name (`com.example.App`); empty for `shared`.
    public let applicationId: String

    private let store: BlockingSessionStorage

    /// - Parameter applicationId: the application's reverse-DNS name, as its desktop file's
    ///   (`com.example.App`): at least two elements separated by `.`, each of ASCII letters,
    ///   digits, `_` and `-` and not starting with a digit, 255 bytes at most.
    /// - Throws: `PortalAuthError.invalidArgument(name: "applicationId")` for anything else.
    public convenience init(applicationId: String) throws(PortalAuthError) {
        guard Self.isReverseDNS(applicationId) else { throw .invalidArgument(name: "applicationId") }
        self.init(checkedApplicationId: applicationId)
    }

    private init(checkedApplicationId applicationId: String) {
        self.applicationId = applicationId
        let owner = KeyringOwner(applicationId: applicationId, labelName: applicationId.isEmpty ? Self.processName : applicationId)
        store = BlockingSessionStorage(
            threadName: "portal-auth-key",
            get: { environmentId in try Keyring.perform(.get, owner, environmentId) },
            set: { value, environmentId in _ = try Keyring.perform(.set, owner, environmentId, value: value) },
            delete: { environmentId in _ = try Keyring.perform(.delete, owner, environmentId) })
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

    /// The running program's name, which labels the items of `shared`.
    public static var processName: String {
        let name = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
        return name.isBlank ? "portal-auth" : name
    }

    /// A reverse-DNS name as D-Bus and desktop files have them.
    static func isReverseDNS(_ name: String) -> Bool {
        let elements = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return name.utf8.count <= 255 && elements.count >= 2 && elements.allSatisfy { element in
            guard let first = element.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return element.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
        }
    }
}

/// Whose items a keyring store reads and writes.
struct KeyringOwner: Sendable {
    /// The items' application attribute; empty for the store that names none.
    let applicationId: String
    /// Who the label names.
    let labelName: String

    func label(_ environmentId: String) -> String { "\(labelName): Portal session (\(environmentId))" }
    func markerLabel(_ environmentId: String) -> String { "\(labelName): keeps its own Portal session (\(environmentId))" }
}

/// The libsecret calls, blocking; only ever run on a storage's thread, or in the helper.
enum Keyring {
    typealias Owner = KeyringOwner

    /// `operation` on this process's keyring: here, or, in a forked child whose GLib is its
    /// parent's, through the helper (`KeyringHelper`). The stored text for `get`, else nil.
    /// - Throws: `SessionStorageError`.
    static func perform(_ operation: KeyringHelper.Operation, _ owner: Owner, _ environmentId: String,
                        value: String? = nil) throws -> String? {
        if helperNeeded.value { return try KeyringHelper.perform(operation, owner, environmentId, value: value) }
        return try performHere(operation, owner, environmentId, value: value)
    }

    /// Decided by a process's first keyring call.
    private static let helperNeeded = PerProcess { ProcessFork.inheritsGIO }

    /// `operation` through libsecret in this process.
    static func performHere(_ operation: KeyringHelper.Operation, _ owner: Owner, _ environmentId: String,
                            value: String?) throws -> String? {
        try withService { service in
            switch operation {
            case .get:
                return try lookup(service, owner, environmentId)
            case .set:
                try store(service, value ?? "", owner, environmentId)
                return nil
            case .delete:
                try delete(service, owner, environmentId)
                return nil
            }
        }
    }

    /// Which of the environment's items a call is about.
    private enum Kind {
        /// The owner's own (its application attribute).
        case own(applicationId: String)
        /// The ones of before the attribute (none at all).
        case earlier
        /// The owner's marker: it has written an item of its own (see the storage's type).
        case ownItemMarker(applicationId: String)
    }

    /// The owners (application id, a line feed, environment id) whose marker this process has
    /// written or found: a persist need not write it again.
    private static var markedOwners: Locked<Set<String>> { marked.value }
    private static let marked = PerProcess { Locked(Set<String>()) }

    fileprivate static func lookup(_ service: UnsafeMutablePointer<SecretService>, _ owner: Owner, _ environmentId: String) throws(KeyringFault) -> String? {
        if let text = try text(service, .own(applicationId: owner.applicationId), environmentId) { return text }
        // Migration has ended for an owner that has had an item of its own.
        guard try !hasOwnItemMarker(service, owner, environmentId) else { return nil }
        return try text(service, .earlier, environmentId)
    }

    /// The text of the newest item of `kind`; nil when there is none, or none has one.
    private static func text(_ service: UnsafeMutablePointer<SecretService>, _ kind: Kind,
                             _ environmentId: String) throws(KeyringFault) -> String? {
        let found = try items(service, kind, environmentId, .read)
        defer { pa_free_items(found) }
        guard found != nil else { return nil }
        for item in secretItems(found) where secret_item_get_locked(item) != 0 { throw .locked }
        var error: UnsafeMutablePointer<GError>?
        if secret_item_load_secrets_sync(found, nil, &error) == 0 { throw fault(error, .read) }
        return newestText(found)
    }

    private static func markerKey(_ owner: Owner, _ environmentId: String) -> String {
        owner.applicationId + "\n" + environmentId
    }

    private static func hasOwnItemMarker(_ service: UnsafeMutablePointer<SecretService>, _ owner: Owner,
                                         _ environmentId: String) throws(KeyringFault) -> Bool {
        guard !owner.applicationId.isEmpty else { return false }
        let key = markerKey(owner, environmentId)
        if markedOwners.withLock({ $0.contains(key) }) { return true }
        let found = try items(service, .ownItemMarker(applicationId: owner.applicationId), environmentId, .read)
        defer { pa_free_items(found) }
        guard found != nil else { return false }
        markedOwners.withLock { _ = $0.insert(key) }
        return true
    }

    /// Leaves the marker of a named owner before its first item, once per process.
    private static func markOwnItem(_ service: UnsafeMutablePointer<SecretService>, _ owner: Owner,
                                    _ environmentId: String) throws(KeyringFault) {
        guard !owner.applicationId.isEmpty else { return }
        let key = markerKey(owner, environmentId)
        if markedOwners.withLock({ $0.contains(key) }) { return }
        let attributes = pa_marker_attributes(environmentId, owner.applicationId)
        defer { g_hash_table_unref(attributes) }
        let value = secret_value_new("1", -1, "text/plain")
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var error: UnsafeMutablePointer<GError>?
        let stored = secret_service_store_sync(service, pa_own_item_marker_schema(), attributes, SECRET_COLLECTION_DEFAULT,
                                               owner.markerLabel(environmentId), value, nil, &error)
        if stored == 0 { throw fault(error, .write) }
        markedOwners.withLock { _ = $0.insert(key) }
    }

    fileprivate static func store(_ service: UnsafeMutablePointer<SecretService>, _ text: String, _ owner: Owner, _ environmentId: String) throws(KeyringFault) {
        try requireUnlockedDefaultCollection(service)
        try markOwnItem(service, owner, environmentId)
        let attributes = pa_session_attributes(environmentId, owner.applicationId)
        defer { g_hash_table_unref(attributes) }
        let value = secret_value_new(text, -1, "text/plain")
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var error: UnsafeMutablePointer<GError>?
        let stored = secret_service_store_sync(service, pa_session_schema(), attributes, SECRET_COLLECTION_DEFAULT,
                                               owner.label(environmentId), value, nil, &error)
        if stored == 0 { throw fault(error, .write) }
        // Migrated: an item of before the attribute goes. Should that fail, the new item is
        // found first all the same, and a delete removes both.
        try? deleteItems(service, .earlier, environmentId)
    }

    fileprivate static func delete(_ service: UnsafeMutablePointer<SecretService>, _ owner: Owner, _ environmentId: String) throws(KeyringFault) {
        let own = try items(service, .own(applicationId: owner.applicationId), environmentId, .delete)
        defer { pa_free_items(own) }
        // Before its own item goes, the marker that it had one: an app whose item a version
        // before the marker wrote has none yet.
        if own != nil { try markOwnItem(service, owner, environmentId) }
        try delete(own)
        try deleteItems(service, .earlier, environmentId)
    }

    private static func deleteItems(_ service: UnsafeMutablePointer<SecretService>, _ kind: Kind,
                                    _ environmentId: String) throws(KeyringFault) {
        let found = try items(service, kind, environmentId, .delete)
        defer { pa_free_items(found) }
        try delete(found)
    }

    private static func delete(_ found: UnsafeMutablePointer<GList>?) throws(KeyringFault) {
        for item in secretItems(found) {
            guard secret_item_get_locked(item) == 0 else { throw .locked }
            var error: UnsafeMutablePointer<GError>?
            if secret_item_delete_sync(item, nil, &error) == 0 { throw fault(error, .delete) }
        }
    }

    /// The environment's items of `kind` in the default collection, their secrets not loaded
    /// (the search finds other applications' items, and other collections'). None when there
    /// is no default collection: nothing of the library's is stored then.
    private static func items(_ service: UnsafeMutablePointer<SecretService>, _ kind: Kind, _ environmentId: String,
                              _ action: KeyringFault.Action) throws(KeyringFault) -> UnsafeMutablePointer<GList>? {
        guard let collection = try defaultCollection(service, action) else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(collection)) }
        let (schema, attributes, earlier) = switch kind {
        case .own(let id): (pa_session_schema(), pa_session_attributes(environmentId, id), false)
        case .earlier: (pa_session_schema(), pa_session_attributes(environmentId, nil), true)
        case .ownItemMarker(let id): (pa_own_item_marker_schema(), pa_marker_attributes(environmentId, id), false)
        }
        defer { g_hash_table_unref(attributes) }
        // SECRET_SEARCH_ALL without SECRET_SEARCH_UNLOCK: locked items are found, not unlocked.
        // (The service's search: libsecret 0.20's collection search leaks each reply.)
        var error: UnsafeMutablePointer<GError>?
        let all = secret_service_search_sync(service, schema, attributes, SECRET_SEARCH_ALL, nil, &error)
        if let error { throw fault(error, action) }
        defer { pa_free_items(all) }
        return pa_items_in_collection(all, collection, earlier ? 1 : 0)
    }

    /// The items of a list libsecret returned (which keeps them alive).
    private static func secretItems(_ list: UnsafeMutablePointer<GList>?) -> [UnsafeMutablePointer<SecretItem>] {
        var items: [UnsafeMutablePointer<SecretItem>] = []
        var node = list
        while let current = node {
            node = current.pointee.next
            if let item = current.pointee.data?.assumingMemoryBound(to: SecretItem.self) { items.append(item) }
        }
        return items
    }

    /// The text of the newest item in `items` (duplicates can only come from other tools),
    /// whose secrets are loaded; nil when none has one.
    private static func newestText(_ items: UnsafeMutablePointer<GList>?) -> String? {
        var newest: (modified: guint64, text: String)?
        for item in secretItems(items) {
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

    /// The default collection (the one the library writes to), or nil when there is none.
    private static func defaultCollection(_ service: UnsafeMutablePointer<SecretService>,
                                          _ action: KeyringFault.Action) throws(KeyringFault) -> UnsafeMutablePointer<SecretCollection>? {
        var error: UnsafeMutablePointer<GError>?
        let collection = secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, nil, &error)
        if let error { throw fault(error, action) }
        return collection
    }

    private static func requireUnlockedDefaultCollection(_ service: UnsafeMutablePointer<SecretService>) throws(KeyringFault) {
        // Creating a default collection goes through a Secret Service prompt (a dialog the
        // write would wait on): the user is told to create one instead.
        guard let collection = try defaultCollection(service, .write) else { throw .noDefaultCollection }
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
