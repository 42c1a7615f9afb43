import CDesktop
import CSecret
#if canImport(Glibc)
import Glibc
#endif

/// The Secret Service as the keyring store calls it: one method, one round trip
/// (`CDesktop/secret_service.c`), on libsecret's connection with its negotiated
/// transfer encryption, and a prompt handled as the store's `KeyringPrompts` say. Blocking:
/// only ever used on a storage's thread, or in the keyring helper.
struct SecretServiceConnection {
    let service: UnsafeMutablePointer<SecretService>
    /// What a call that returns a prompt does with it.
    let prompting: pa_secret_prompting
    /// The process's facts of this connection (provider, default collection).
    let facts: SecretServiceFacts

    /// Connects (libsecret keeps one connection per process); the transfer encryption is
    /// negotiated apart (`negotiateTransferSession`).
    static func open(prompting: pa_secret_prompting) throws(KeyringFault) -> SecretServiceConnection {
        if let missing = pa_secret_load_error() { throw .libsecretMissing(String(cString: missing)) }
        var error: UnsafeMutablePointer<GError>?
        guard var service = secret_service_get_sync(SECRET_SERVICE_NONE, nil, &error) else {
            throw KeyringFault(error, .reach)
        }
        // A provider restarted (or replaced) since the last call knows neither the transfer
        // session nor its prompts' sender: asked of the bus each time (not a Secret Service
        // call), and the connection made anew when it changed.
        let owner = pa_bus_name_owner(service, "org.freedesktop.secrets").map { name in
            defer { g_free(name) }
            return String(cString: name)
        }
        let known = SecretServiceFacts.current.owner
        if known != owner {
            if known != nil {
                g_object_unref(UnsafeMutableRawPointer(service))
                secret_service_disconnect()
                guard let fresh = secret_service_get_sync(SECRET_SERVICE_NONE, nil, &error) else { throw KeyringFault(error, .reach) }
                service = fresh
            }
            SecretServiceFacts.forget(owner: owner)
        }
        return SecretServiceConnection(service: service, prompting: prompting, facts: SecretServiceFacts.current)
    }

    /// Agrees on the transfer encryption (once per connection), apart from connecting, so
    /// that a provider that cannot encrypt is told from one that is gone.
    func negotiateTransferSession() throws(KeyringFault) {
        // Each try is a new key pair: kwalletd5 refuses some of libsecret's keys with
        // InvalidArgs (seen here: about one session in 200), so a refusal is tried again.
        for tries in 1...Self.sessionTries {
            var error: UnsafeMutablePointer<GError>?
            guard secret_service_ensure_session_sync(service, nil, &error) == 0 else { return }
            if tries < Self.sessionTries, KeyringFault.remoteName(of: error) == "org.freedesktop.DBus.Error.InvalidArgs" {
                g_error_free(error)
                PortalAuthLog.emit(.debug, "Keyring: the provider refused the transfer session's key; trying a new one.")
                continue
            }
            let fault = KeyringFault(error, .reach)
            switch fault {
            case .failed(_, let remoteName) where remoteName != "org.freedesktop.DBus.Error.AccessDenied": throw .encryptionFailed
            default: throw fault
            }
        }
    }

    /// Three refusals in a row are a provider that cannot agree on the encryption.
    private static let sessionTries = 3

    func close() {
        g_object_unref(UnsafeMutableRawPointer(service))
    }

    /// The object path of the default collection, or nil when there is none. A path is read
    /// once per connection (a provider's default changes only by the user's hand); none is
    /// asked again each time, so that one the user creates is found at once.
    func defaultCollection() throws(KeyringFault) -> String? {
        if let known = facts.defaultCollection.withLock({ $0 }) { return known }
        var path: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<GError>?
        if pa_secret_read_alias(service, "default", &path, &error) != PA_SECRET_DONE { throw KeyringFault(error, .reach) }
        defer { g_free(path) }
        let found = path.map { String(cString: $0) }
        if let found { facts.defaultCollection.withLock { $0 = found } }
        return found
    }

    /// The items that carry every attribute of `attributes` (consumed), in `collection`.
    func search(_ attributes: OpaquePointer, in collection: String, _ action: KeyringFault.Action) throws(KeyringFault) -> (unlocked: [String], locked: [String]) {
        defer { g_hash_table_unref(attributes) }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        var error: UnsafeMutablePointer<GError>?
        if pa_secret_search(service, attributes, &unlocked, &locked, &error) != PA_SECRET_DONE { throw KeyringFault(error, action) }
        defer {
            g_strfreev(unlocked)
            g_strfreev(locked)
        }
        // The search covers every collection: only the default one's items are the store's.
        let prefix = collection + "/"
        let inCollection = { (paths: [String]) in paths.filter { $0.hasPrefix(prefix) } }
        return (inCollection(Self.strings(unlocked)), inCollection(Self.strings(locked)))
    }

    func isLocked(collection: String, _ action: KeyringFault.Action) throws(KeyringFault) -> Bool {
        var locked: Int32 = 1
        var error: UnsafeMutablePointer<GError>?
        if pa_secret_is_locked(service, collection, 1, &locked, &error) != PA_SECRET_DONE { throw KeyringFault(error, action) }
        return locked != 0
    }

    /// Whether the item carries an application attribute (items of before it do not).
    /// - Throws: `vanished` when the item is gone.
    func hasApplication(_ item: String, _ action: KeyringFault.Action) throws(KeyringFault) -> Bool {
        var has: Int32 = 0
        var error: UnsafeMutablePointer<GError>?
        if pa_secret_has_attribute(service, item, PA_APPLICATION_ATTRIBUTE, &has, &error) != PA_SECRET_DONE {
            throw .ofItemCall(error, action)
        }
        return has != 0
    }

    /// Unlocks `paths` (items when `items`, else a collection); a prompt as `prompting` says.
    /// `unshown` is the fault of a prompt that was not shown, asked only then.
    /// - Throws: `vanished` when an item is gone.
    func unlock(_ paths: [String], items: Bool = false, unshown: @autoclosure () throws(KeyringFault) -> KeyringFault,
                _ action: KeyringFault.Action) throws(KeyringFault) {
        var error: UnsafeMutablePointer<GError>?
        let prompting = prompting(unattended: quirks.prompts.unlockOfOpenWallet && paths.allSatisfy(isInOpenWallet))
        let status = Self.withPaths(paths) { pa_secret_unlock(service, $0, [prompting], &error) }
        try check(status, error, unshown: try unshown(), action, onItems: items)
    }

    /// The newest text of `items` (duplicates can only come from other tools). Bytes that are
    /// not UTF-8 cannot be ours: returned as "" (undecodable), the library deletes the item,
    /// rather than repairing a token into something else.
    /// - Throws: `vanished` when every item is gone (a provider leaves an item that is gone
    ///   out of its answer, or fails the call).
    func newestText(_ items: [String]) throws(KeyringFault) -> String {
        var table: OpaquePointer?
        var undecodable: Int32 = 0
        var error: UnsafeMutablePointer<GError>?
        let status = Self.withPaths(items) { pa_secret_get_secrets(service, $0, &table, &undecodable, &error) }
        if status != PA_SECRET_DONE { throw .ofItemCall(error, .read) }
        defer { g_hash_table_unref(table) }
        var newest: (modified: UInt64, text: String)?
        for item in items {
            guard let value = g_hash_table_lookup(table, item) else { continue }
            var length = 0
            guard let bytes = secret_value_get(OpaquePointer(value), &length) else { continue }
            let text = StoredSession.entry(utf8: UnsafeRawBufferPointer(start: bytes, count: length))
            // Only duplicates cost a read of their times; one gone since is left out.
            let modified: UInt64
            do throws(KeyringFault) {
                modified = items.count == 1 ? 0 : try self.modified(item)
            } catch .vanished {
                continue
            }
            if newest == nil || modified >= newest?.modified ?? 0 { newest = (modified, text) }
        }
        if let newest { return newest.text }
        // Values that did not decode are a transfer session the provider got wrong
        // (kwalletd5 does, about one in 200): a new one is tried.
        if undecodable > 0 { throw .transferSessionBroken }
        // Items were found and none gave its secret: gone since, or not "no session".
        for item in items where try !isGone(item) { throw .failed(.read, remoteName: nil) }
        throw .vanished
    }

    private func modified(_ item: String) throws(KeyringFault) -> UInt64 {
        var modified: UInt64 = 0
        var error: UnsafeMutablePointer<GError>?
        if pa_secret_modified(service, item, &modified, &error) != PA_SECRET_DONE { throw .ofItemCall(error, .read) }
        return modified
    }

    /// Whether the item is gone, as its `Locked` property's answer says.
    private func isGone(_ item: String) throws(KeyringFault) -> Bool {
        var locked: Int32 = 1
        var error: UnsafeMutablePointer<GError>?
        guard pa_secret_is_locked(service, item, 0, &locked, &error) != PA_SECRET_DONE else { return false }
        switch KeyringFault.ofItemCall(error, .read) {
        case .vanished: return true
        case let fault: throw fault
        }
    }

    /// Stores `text` in `collection` under `attributes` (consumed); with `replace`, in place
    /// of the item of the same attributes, else beside it. The item's path, when the provider
    /// names it in its reply (not through a prompt).
    @discardableResult
    func createItem(in collection: String, label: String, _ attributes: OpaquePointer, text: String,
                    replace: Bool = true) throws(KeyringFault) -> String? {
        defer { g_hash_table_unref(attributes) }
        let value = secret_value_new(text, -1, "text/plain")
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var item: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<GError>?
        let status = pa_secret_create_item(service, collection, label, attributes, value, replace ? 1 : 0,
                                           [prompting(unattended: quirks.prompts.writeAndDelete)], &item, &error)
        defer { g_free(item) }
        // A failed question of the lock is taken as locked.
        try check(status, error, unshown: (try? unshownFault(collection, .write)) ?? .locked, .write)
        return item.map { String(cString: $0) }
    }

    /// Deletes the item; one already gone (another process deleted it) is done.
    func delete(_ item: String) throws(KeyringFault) {
        var error: UnsafeMutablePointer<GError>?
        let status = pa_secret_delete_item(service, item, [prompting(unattended: quirks.prompts.writeAndDelete)], &error)
        do throws(KeyringFault) {
            try check(status, error, unshown: .needsConfirmation(.delete), .delete, onItems: true)
        } catch .vanished {
            PortalAuthLog.emit(.debug, "Keyring: an item of the session was already deleted.")
        }
    }

    /// The provider's quirks (`KeyringProvider`), the provider asked once per connection.
    var quirks: KeyringProvider.Quirks { KeyringProvider.quirks(KeyringProvider.of(self)) }

    /// The unique name that owns `name` on the bus now, or nil.
    func owner(of name: String) -> String? {
        pa_bus_name_owner(service, name).map { owner in
            defer { g_free(owner) }
            return String(cString: owner)
        }
    }

    /// Whether the KWallet wallet `path` (a collection's, or an item's in it) lives in is open,
    /// as KWallet says.
    private func isInOpenWallet(_ path: String) -> Bool {
        let prefix = "/org/freedesktop/secrets/collection/"
        guard path.hasPrefix(prefix), let wallet = path.dropFirst(prefix.count).split(separator: "/").first else { return false }
        var open: Int32 = 0
        return pa_kwallet_is_open(service, String(wallet), &open) != 0 && open != 0
    }

    private func prompting(unattended: Bool) -> pa_secret_prompting {
        var prompting = self.prompting
        prompting.unattended_ms = unattended ? KeyringProvider.unattendedPromptMilliseconds : 0
        return prompting
    }

    /// Why a prompt not shown was wanted, asked only once one was: the collection is
    /// locked, or the provider asks the user to confirm `action`.
    func unshownFault(_ collection: String, _ action: KeyringFault.Action) throws(KeyringFault) -> KeyringFault {
        try isLocked(collection: collection, action) ? .locked : .needsConfirmation(action)
    }

    /// The fault of a call's status; a failed call `onItems` may be `vanished`.
    private func check(_ status: pa_secret_status, _ error: UnsafeMutablePointer<GError>?,
                       unshown: @autoclosure () throws(KeyringFault) -> KeyringFault,
                       _ action: KeyringFault.Action, onItems: Bool = false) throws(KeyringFault) {
        switch status {
        case PA_SECRET_DONE: return
        case PA_SECRET_PROMPT_DISMISSED: throw try unshown()
        case PA_SECRET_PROMPT_REFUSED: throw .promptRefused
        case PA_SECRET_PROMPT_TIMED_OUT: throw .promptTimedOut
        case PA_SECRET_PROMPT_CANCELLED: throw .promptCancelled
        default: throw onItems ? .ofItemCall(error, action) : KeyringFault(error, action)
        }
    }

    private static func strings(_ array: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String] {
        var strings: [String] = []
        var index = 0
        while let array, let string = array[index] {
            strings.append(String(cString: string))
            index += 1
        }
        return strings
    }

    /// `body` with `paths` as a NULL-terminated C array.
    private static func withPaths<T>(_ paths: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = paths.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let array = copies.map { UnsafePointer($0) } + [nil]
        return array.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// What a process knows of its Secret Service connection; forgotten with the connection
/// (`Keyring.withConnection` drops both on a failure).
final class SecretServiceFacts: Sendable {
    /// The provider's unique bus name these facts are of; nil until known.
    let owner: String?
    let defaultCollection = Locked<String?>(nil)
    /// nil until asked; then the provider, or `.some(nil)` when the bus could not tell.
    let provider = Locked<KeyringProvider??>(nil)
    let markedOwners = Locked(Set<String>())
    let migratedOwners = Locked(Set<String>())

    init(owner: String?) {
        self.owner = owner
    }

    static var current: SecretServiceFacts { facts.value.withLock { $0 } }
    private static let facts = PerProcess { Locked(SecretServiceFacts(owner: nil)) }

    /// A new connection will be made: what was known of the old one goes.
    static func forget(owner: String? = nil) {
        facts.value.withLock { $0 = SecretServiceFacts(owner: owner) }
    }
}
