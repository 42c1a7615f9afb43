import CDesktop

/// Which program serves the Secret Service, and every "because gnome-keyring, KeePassXC or
/// KWallet does X" of the keyring store, as data (`Quirks`): the store's rules (`Keyring`)
/// and the connection (`SecretServiceConnection`) ask these, and branch on no provider
/// themselves. docs/storage.md "Providers" says what a user of each must set up.
enum KeyringProvider: Equatable, Sendable {
    case gnomeKeyring, keePassXC, kWallet
    /// Another program, by its name.
    case other(String)

    /// What a provider does that the store must allow for.
    struct Quirks: Sendable {
        /// How its messages name it.
        let name: String
        /// Whether a search can be trusted to list a locked collection's items as locked, and
        /// never waits on a user.
        let searchShowsLockedItems: Bool
        /// Whether an item is locked exactly when its collection is: then a collection that is
        /// open needs no item opened.
        let itemsLockWithCollection: Bool
        /// Whether an item is replaced by a write of its own, not by `CreateItem`'s replace:
        /// the old items are searched for, and deleted once the new one is stored.
        let replacesByNewItem: Bool
        /// Whether a write is read back: the provider gets some transfer sessions wrong.
        let storesUndecodedSecrets: Bool
        /// Which calls' prompts need nobody (`PromptPolicy`).
        let prompts: PromptPolicy
        /// The D-Bus errors of a write that mean a broken transfer session: a new connection
        /// is tried once.
        let staleSessionWriteErrors: Set<String>
        /// What to do when the collection is locked.
        let lockedMessage: String
        /// What to do when there is no default collection.
        let noDefaultCollectionMessage: String
        /// What to do when the transfer encryption fails ("…, and try again").
        let encryptionFix: String
        /// Where a confirmation the app cannot show is turned off or given.
        let confirmationFix: String
    }

    /// Which prompts a provider returns that end without anybody: they are let through, with
    /// `unattendedPromptMilliseconds` as their bound, where a prompt is not allowed. Any
    /// other prompt not allowed is dismissed unshown (gnome-keyring's are all dialogs).
    struct PromptPolicy: Sendable {
        /// KWallet's unlock of a wallet that is open (asked of KWallet first: a closed one's
        /// prompt would ask for its password).
        let unlockOfOpenWallet: Bool
        /// KeePassXC's prompt on every write and delete.
        let writeAndDelete: Bool
    }

    /// How long a prompt that needs nobody may take: it ends when the provider has done the
    /// work, so its bound is D-Bus's own for a call; it only ends one that shows a dialog
    /// after all (KeePassXC's confirmation of a delete).
    static let unattendedPromptMilliseconds: Int64 = 25_000

    var quirks: Quirks {
        switch self {
        case .gnomeKeyring: Self.gnomeKeyringQuirks
        case .keePassXC: Self.keePassXCQuirks
        case .kWallet: Self.kWalletQuirks
        case .other(let program): Self.otherQuirks(name: program.escapingControlCharacters().truncated(to: 40))
        }
    }

    /// The quirks of `provider`; of an unknown one (the bus could not tell) when nil.
    static func quirks(_ provider: KeyringProvider?) -> Quirks {
        provider?.quirks ?? unknownQuirks
    }

    /// gnome-keyring's search lists a locked collection's items as locked, without a dialog;
    /// its `CreateItem` replaces the item of the same attributes; an item is open exactly
    /// when its collection is.
    private static let gnomeKeyringQuirks = Quirks(
        name: "GNOME Keyring", searchShowsLockedItems: true, itemsLockWithCollection: true, replacesByNewItem: false,
        storesUndecodedSecrets: false, prompts: PromptPolicy(unlockOfOpenWallet: false, writeAndDelete: false),
        staleSessionWriteErrors: [], lockedMessage: loginKeyringLocked, noDefaultCollectionMessage: noLoginKeyring,
        encryptionFix: updateOrRestart, confirmationFix: "confirm it in GNOME Keyring")

    /// KeePassXC hides a locked database's items, and with its default `UnlockBeforeSearch`
    /// answers a search only once its unlock dialog does. Its "confirm access" locks items
    /// apart. KeePassXC 2.7.4 completes the prompt of a replace, for a client that has not
    /// touched the item since KeePassXC started, on another prompt's path, never its own
    /// (seen on the bus here), so a replace cannot be told done: a new item is written
    /// instead. Its prompt of a write or a delete needs nobody.
    private static let keePassXCQuirks = Quirks(
        name: "KeePassXC", searchShowsLockedItems: false, itemsLockWithCollection: false, replacesByNewItem: true,
        storesUndecodedSecrets: false, prompts: PromptPolicy(unlockOfOpenWallet: false, writeAndDelete: true),
        staleSessionWriteErrors: [],
        lockedMessage: "The KeePassXC database that keeps the session is locked; unlock it in KeePassXC and try again.",
        noDefaultCollectionMessage: "KeePassXC offers no database to the Secret Service; in KeePassXC's settings enable the Secret Service integration, expose a group of an open database, and try again.",
        encryptionFix: updateOrRestart, confirmationFix: "turn off the confirmation in KeePassXC's Secret Service settings")

    /// kwalletd5 gets about one transfer session in 200 wrong: its secrets do not decode, its
    /// writes fail with QtDBus's InvalidObjectPath, or could store what it decrypted wrongly
    /// (so a write is read back). Its unlock of an open wallet is a prompt that needs nobody.
    private static let kWalletQuirks = Quirks(
        name: "KWallet", searchShowsLockedItems: false, itemsLockWithCollection: false, replacesByNewItem: false,
        storesUndecodedSecrets: true, prompts: PromptPolicy(unlockOfOpenWallet: true, writeAndDelete: false),
        staleSessionWriteErrors: ["org.qtproject.QtDBus.Error.InvalidObjectPath"],
        lockedMessage: "The KDE wallet is closed; open it (for example by logging in to Plasma, or with KWalletManager) and try again.",
        noDefaultCollectionMessage: "KWallet offers no default wallet to the Secret Service; create one (KWalletManager) and try again.",
        encryptionFix: "install its encryption plugins (Debian: libqca-qt5-2-plugins), restart it", confirmationFix: "confirm it in KWallet")

    /// Another program is trusted with nothing: its items are searched for only in an open
    /// collection, and opened apart.
    private static func otherQuirks(name: String) -> Quirks {
        Quirks(name: name, searchShowsLockedItems: false, itemsLockWithCollection: false, replacesByNewItem: false,
               storesUndecodedSecrets: false, prompts: PromptPolicy(unlockOfOpenWallet: false, writeAndDelete: false),
               staleSessionWriteErrors: [], lockedMessage: "The keyring (\(name)) is locked; unlock it and try again.",
               noDefaultCollectionMessage: "The keyring (\(name)) has no default collection; create one and try again.",
               encryptionFix: updateOrRestart, confirmationFix: "confirm it in \(name)")
    }

    /// A provider the bus could not name: as another program, its messages gnome-keyring's
    /// (the most common).
    private static let unknownQuirks = Quirks(
        name: "the keyring", searchShowsLockedItems: false, itemsLockWithCollection: false, replacesByNewItem: false,
        storesUndecodedSecrets: false, prompts: PromptPolicy(unlockOfOpenWallet: false, writeAndDelete: false),
        staleSessionWriteErrors: [], lockedMessage: loginKeyringLocked, noDefaultCollectionMessage: noLoginKeyring,
        encryptionFix: updateOrRestart, confirmationFix: "confirm it in the keyring")

    private static let loginKeyringLocked = "The login keyring is locked; unlock it (for example with Seahorse, or by logging in to the desktop) and try again."
    private static let noLoginKeyring = "The keyring has no default collection; create a login keyring (for example with Seahorse) and try again."
    private static let updateOrRestart = "update or restart it"

    /// Whether a fresh connection (a new transfer session) may succeed where this one failed:
    /// tried once. A write's error is matched against every provider's list: the provider may
    /// not be known when the call fails.
    static func isStaleConnection(_ fault: KeyringFault) -> Bool {
        switch fault {
        case .serviceUnknown, .sessionGone, .transferSessionBroken: true
        case .failed(.write, let remoteName?): [gnomeKeyringQuirks, keePassXCQuirks, kWalletQuirks].contains { $0.staleSessionWriteErrors.contains(remoteName) }
        default: false
        }
    }

    // MARK: Telling the provider

    /// The owner of the Secret Service's bus name, once per connection: by its process's
    /// name, else (another pid namespace, no `/proc`) by the other names the known providers
    /// own on the bus; nil when neither tells.
    static func of(_ connection: SecretServiceConnection) -> KeyringProvider? {
        if let known = connection.facts.provider.withLock({ $0 }) { return known }
        let provider = byProcess(connection) ?? byBusName(connection)
        connection.facts.provider.withLock { $0 = .some(provider) }
        return provider
    }

    private static func byProcess(_ connection: SecretServiceConnection) -> KeyringProvider? {
        let pid = pa_secret_provider_pid(connection.service)
        guard pid != 0, let name = processName(pid) else { return nil }
        return switch name {
        case "gnome-keyring-d", "gnome-keyring-daemon": .gnomeKeyring
        case "keepassxc": .keePassXC
        case "kwalletd5", "kwalletd6", "ksecretd": .kWallet
        default: .other(name)
        }
    }

    /// The names each provider owns beside the Secret Service's.
    private static let busNames: [(String, KeyringProvider)] = [
        ("org.gnome.keyring", .gnomeKeyring), ("org.keepassxc.KeePassXC.MainWindow", .keePassXC),
        ("org.kde.kwalletd5", .kWallet), ("org.kde.kwalletd6", .kWallet),
    ]

    private static func byBusName(_ connection: SecretServiceConnection) -> KeyringProvider? {
        guard let owner = connection.owner(of: "org.freedesktop.secrets") else { return nil }
        return busNames.first { connection.owner(of: $0.0) == owner }?.1
    }

    private static func processName(_ pid: UInt32) -> String? {
        ProcText.firstLine("/proc/\(pid)/comm", limit: 64)
    }
}
