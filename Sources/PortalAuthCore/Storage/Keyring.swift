import CDesktop
import CSecret

/// The keyring store's rules (docs/desktop.md "Keyring"), over the Secret Service's methods;
/// blocking, only ever run on a storage's thread, or in the helper.
///
/// - Locked means locked: a read or a delete that finds nothing asks the default collection
///   whether it is locked (KeePassXC hides a locked database's items), and a locked store is
///   `keyringLocked`, never "no session" nor a delete that leaves the item.
/// - What opens without a dialog is opened: a locked item or collection is `Unlock`ed; a
///   prompt that unlock (or a write, or a delete) returns is the store's `KeyringPrompts`'
///   to show or dismiss.
/// - Steady state, one round trip each where libsecret's own API needs one: a restore is
///   `SearchItems` and `GetSecrets`, a persist `CreateItem` (the default collection's path is
///   read once per connection). What a provider needs beyond that (a search before the write,
///   a read back, items opened apart) is asked of its quirks (`KeyringProvider`).
enum Keyring {
    typealias Owner = KeyringOwner

    /// `operation` on this process's keyring: here, or, in a forked child whose GLib is its
    /// parent's, through the helper (`KeyringHelper`). The stored text for `get`, else nil.
    /// - Throws: `SessionStorageError`.
    static func perform(_ operation: KeyringHelper.Operation, _ owner: Owner, _ environmentId: String,
                        value: String? = nil, prompts: KeyringPrompts, cancellable: UnsafeMutablePointer<GCancellable>? = nil) throws -> String? {
        if helperNeeded.value {
            return try KeyringHelper.perform(operation, owner, environmentId, value: value, prompts: prompts)
        }
        return try performHere(operation, owner, environmentId, value: value, prompts: prompts, cancellable: cancellable)
    }

    /// Decided by a process's first keyring call.
    private static let helperNeeded = PerProcess { ProcessFork.inheritsGIO }

    /// `operation` through libsecret in this process.
    static func performHere(_ operation: KeyringHelper.Operation, _ owner: Owner, _ environmentId: String,
                            value: String?, prompts: KeyringPrompts, cancellable: UnsafeMutablePointer<GCancellable>? = nil) throws -> String? {
        let prompting = pa_secret_prompting(timeout_ms: prompts.timeoutMilliseconds, unattended_ms: 0, cancellable: cancellable,
                                            showing: { PortalAuthLog.emit(.debug, "Keyring: the provider's dialog is shown; waiting up to \($0) ms for the user.") })
        return try withConnection(prompting) { connection throws(KeyringFault) in
            let store = KeyringStore(connection: connection, owner: owner, environmentId: environmentId)
            switch operation {
            case .get: return try store.lookup()
            case .set: try store.store(value ?? "")
            case .delete: try store.delete()
            case .check: try store.checkCanStore()
            }
            return nil
        }
    }

    /// Runs `body` on the process's Secret Service connection. libsecret's connection keeps
    /// addressing the daemon it first met; after a keyring restart the first call fails as
    /// "no service" (or a provider restarted between calls knows not its transfer session), so
    /// that case is tried once more on a fresh connection. A failure drops the connection, and
    /// what was known of it, here and only here; a fault leaves as the `SessionStorageError`
    /// it stands for, its message naming the provider.
    private static func withConnection<T>(_ prompting: pa_secret_prompting,
                                          _ body: (SecretServiceConnection) throws(KeyringFault) -> T) throws(SessionStorageError) -> T {
        var retried = false
        while true {
            var provider: KeyringProvider?
            do throws(KeyringFault) {
                let connection = try SecretServiceConnection.open(prompting: prompting)
                defer { connection.close() }
                do throws(KeyringFault) {
                    try connection.negotiateTransferSession()
                    return try body(connection)
                } catch {
                    provider = KeyringProvider.of(connection)
                    throw error
                }
            } catch {
                guard !error.keepsConnection else { throw error.storageError(provider) }
                secret_service_disconnect()
                SecretServiceFacts.forget()
                guard KeyringProvider.isStaleConnection(error) && !retried else { throw error.storageError(provider) }
                // A new connection, with a new transfer session.
                PortalAuthLog.emit(.debug, "Keyring: trying again on a new connection (\(error)).")
                retried = true
            }
        }
    }
}

/// One environment's items of one owner, on one connection.
private struct KeyringStore {
    let connection: SecretServiceConnection
    let owner: KeyringOwner
    let environmentId: String

    /// The owners (application id, a line feed, environment id) whose marker was written or
    /// found on this connection's provider, and those whose items of before the application
    /// attribute were removed there: a persist need do neither again.
    private var marked: Locked<Set<String>> { connection.facts.markedOwners }
    private var migrated: Locked<Set<String>> { connection.facts.migratedOwners }

    private var key: String { owner.applicationId + "\n" + environmentId }

    /// Which of the environment's items a search is for.
    private enum Kind {
        /// The owner's own (its application attribute).
        case own
        /// The ones of before the attribute: any with the environment, filtered after.
        case earlier
        /// The owner's marker: it has written an item of its own (see the storage's type).
        case ownItemMarker
    }

    private func attributes(_ kind: Kind) -> OpaquePointer {
        switch kind {
        case .own: pa_session_attributes(environmentId, owner.applicationId)
        case .earlier: pa_session_attributes(environmentId, nil)
        case .ownItemMarker: pa_marker_attributes(environmentId, owner.applicationId)
        }
    }

    func lookup() throws(KeyringFault) -> String? {
        guard let collection = try connection.defaultCollection() else { return nil }
        try requireUnlockedBeforeSearch(collection, .read)
        if let text = try text(.own, collection) { return text }
        // Nothing found: a hidden, locked collection is not "no session".
        try requireUnlocked(collection, .read)
        // Migration has ended for an owner that has had an item of its own.
        guard try !hasOwnItemMarker(collection) else { return nil }
        return try text(.earlier, collection)
    }

    /// The newest text of the items of `kind`, unlocked first; nil when there is none.
    private func text(_ kind: Kind, _ collection: String) throws(KeyringFault) -> String? {
        try searchingAgain { () throws(KeyringFault) -> String? in
            let items = try openItems(kind, collection, .read)
            return items.isEmpty ? nil : try connection.newestText(items)
        }
    }

    /// `body`'s result, `body` run again when an item its search found was deleted (by
    /// another process) before it was used: one may have replaced it. Items that keep
    /// vanishing are none (nil).
    private func searchingAgain<T>(_ body: () throws(KeyringFault) -> T?) throws(KeyringFault) -> T? {
        for _ in 1...3 {
            do {
                return try body()
            } catch .vanished {
                PortalAuthLog.emit(.debug, "Keyring: an item of the session was deleted during the call; searching again.")
            }
        }
        return nil
    }

    /// The items of `kind`, each unlocked (without a dialog, or with one the prompts allow);
    /// those deleted meanwhile left out. `own` are items known to be the owner's, which an
    /// `.earlier` search need not ask about.
    private func openItems(_ kind: Kind, _ collection: String, _ action: KeyringFault.Action,
                           own: Set<String> = []) throws(KeyringFault) -> [String] {
        try searchingAgain { () throws(KeyringFault) -> [String] in
            let found = try connection.search(attributes(kind), in: collection, action)
            if !found.locked.isEmpty {
                // KWallet and KeePassXC open items this way without a dialog, when they can.
                try connection.unlock(found.locked, items: true, unshown: try connection.unshownFault(collection, action), action)
            }
            var items = found.unlocked + found.locked
            if case .earlier = kind {
                var kept: [String] = []
                for item in items where !own.contains(item) {
                    do throws(KeyringFault) {
                        if try !connection.hasApplication(item, action) { kept.append(item) }
                    } catch .vanished {
                        continue  // deleted since the search
                    }
                }
                items = kept
            }
            return items
        } ?? []
    }

    /// Before a search, on a provider whose search of a locked collection hides its items or
    /// waits on a dialog: the collection opened, or `locked`.
    private func requireUnlockedBeforeSearch(_ collection: String, _ action: KeyringFault.Action) throws(KeyringFault) {
        guard !connection.quirks.searchShowsLockedItems else { return }
        try requireUnlocked(collection, action)
    }

    /// The collection opened (without a dialog, or with one the prompts allow), or `locked`:
    /// an unlock dialog that was refused or not answered leaves it locked.
    private func requireUnlocked(_ collection: String, _ action: KeyringFault.Action) throws(KeyringFault) {
        guard try connection.isLocked(collection: collection, action) else { return }
        do {
            try connection.unlock([collection], unshown: .locked, action)
        } catch .promptRefused, .promptTimedOut {
            throw .locked
        }
    }

    private func hasOwnItemMarker(_ collection: String) throws(KeyringFault) -> Bool {
        guard !owner.applicationId.isEmpty else { return false }
        if marked.withLock({ $0.contains(key) }) { return true }
        let found = try connection.search(attributes(.ownItemMarker), in: collection, .read)
        guard !(found.unlocked + found.locked).isEmpty else { return false }
        marked.withLock { _ = $0.insert(key) }
        return true
    }

    /// Leaves the marker of a named owner before its first item, once per process (one
    /// already there is not written again).
    private func markOwnItem(_ collection: String) throws(KeyringFault) {
        guard !owner.applicationId.isEmpty, try !hasOwnItemMarker(collection) else { return }
        try connection.createItem(in: collection, label: owner.markerLabel(environmentId), attributes(.ownItemMarker), text: "1")
        marked.withLock { _ = $0.insert(key) }
    }

    func store(_ text: String) throws(KeyringFault) {
        // Creating a default collection goes through a dialog: the user is told to create one.
        guard let collection = try connection.defaultCollection() else { throw .noDefaultCollection }
        try requireUnlockedBeforeSearch(collection, .write)
        try markOwnItem(collection)
        let created: String?
        if connection.quirks.replacesByNewItem {
            // The new item first, then the old ones: there is never a moment without one.
            let old = try openItems(.own, collection, .write)
            created = try connection.createItem(in: collection, label: owner.label(environmentId), attributes(.own), text: text, replace: false)
            // The session is stored: an old item that stays (its delete refused) is older,
            // and a restore takes the newest.
            for item in old where (try? connection.delete(item)) == nil {
                PortalAuthLog.emit(.warning, "Keyring: an older item of the session could not be deleted; the new one is stored and is read first.")
            }
        } else {
            created = try connection.createItem(in: collection, label: owner.label(environmentId), attributes(.own), text: text)
        }
        if connection.quirks.storesUndecodedSecrets {
            // Read back: a value stored through a transfer session the provider got wrong
            // would be garbage, and lose the session at the next restore.
            guard try self.text(.own, collection) == text else { throw .transferSessionBroken }
        }
        // Migrated: an item of before the attribute goes, once per process (the one just
        // written is known to be the owner's). Should that fail, the new item is found first
        // all the same, and a delete removes both.
        guard !migrated.withLock({ $0.contains(key) }) else { return }
        if (try? deleteItems(.earlier, collection, own: Set(created.map { [$0] } ?? []))) != nil {
            migrated.withLock { _ = $0.insert(key) }
        }
    }

    func delete() throws(KeyringFault) {
        guard let collection = try connection.defaultCollection() else { return }
        try requireUnlockedBeforeSearch(collection, .delete)
        let own = try openItems(.own, collection, .delete)
        // Before its own item goes, the marker that it had one: an app whose item a version
        // before the marker wrote has none yet.
        if !own.isEmpty { try markOwnItem(collection) }
        for item in own { try connection.delete(item) }
        let earlier = try deleteItems(.earlier, collection)
        // Nothing found: a hidden, locked collection still holds the item.
        if own.isEmpty && earlier == 0 { try requireUnlocked(collection, .delete) }
    }

    /// Deletes the items of `kind` (but `own`): how many there were.
    @discardableResult
    private func deleteItems(_ kind: Kind, _ collection: String, own: Set<String> = []) throws(KeyringFault) -> Int {
        let items = try openItems(kind, collection, .delete, own: own)
        for item in items { try connection.delete(item) }
        return items.count
    }

    /// Whether a session could be stored now, asked before a grant is spent: the provider,
    /// the default collection, its lock and the owner's item opened (a dialog only as the
    /// prompts allow), and for a named owner its marker written (a write a provider would
    /// confirm in a dialog shows here).
    func checkCanStore() throws(KeyringFault) {
        guard let collection = try connection.defaultCollection() else { throw .noDefaultCollection }
        try requireUnlocked(collection, .write)
        // Where an item opens with its collection, an open collection is enough.
        if !connection.quirks.itemsLockWithCollection { _ = try openItems(.own, collection, .write) }
        try markOwnItem(collection)
    }
}
