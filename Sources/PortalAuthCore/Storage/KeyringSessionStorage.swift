import CSecret
#if canImport(Glibc)
import Glibc
#endif

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
/// `io.portalhq.auth.OwnItemMarker`), and from then on never adopts an item without the attribute
/// again, even once its own item is gone (a sign-out): any such item is another program's,
/// or planted. (The store that names none shares its item with every such program anyway,
/// so it keeps migrating.)
///
/// What opens without a dialog is opened (`Keyring`); a dialog is shown only as `prompts`
/// allow, so by default a background restore never pops one. Its blocking calls run on a
/// `StoreThread`.
///
/// Across processes: the vault holds a lock file of the application and environment around
/// each of its operations (`EntryLocking`), so that a compare-and-delete in one process never
/// removes the session another process has just persisted. The lock files are in the
/// runtime folder (`$XDG_RUNTIME_DIR/portal-auth`; in a Flatpak sandbox the app's own part of
/// it), or, without one, in the file store's default folder of the user's home
/// (`~/.local/state/portal-auth`), never in a folder others share, such as `/tmp`, where
/// another user could take the name first. A dialog's wait inside an operation is bounded
/// (`KeyringPrompts`), and so is the wait for another process's lock
/// (`KeyringPrompts.patienceMilliseconds`).
public final class KeyringSessionStorage: SessionStorage, StorageReadiness, EntryLocking {
    /// The storage every client uses unless told otherwise: no application id, no prompts.
    public static let shared = KeyringSessionStorage(checkedApplicationId: "", prompts: .never)

    /// A reverse-DNS name (`com.example.App`); empty for `shared`.
    public let applicationId: String
    public let prompts: KeyringPrompts

    private let owner: KeyringOwner
    private let thread = StoreThread(name: "portal-auth-key")
    /// Where the lock files are, chosen when the store is made.
    let lockFolder = KeyringSessionStorage.lockFolderPath

    /// - Parameter applicationId: the application's reverse-DNS name, as its desktop file's
    ///   (`com.example.App`): at least two elements separated by `.`, each of ASCII letters,
    ///   digits, `_` and `-` and not starting with a digit, 255 bytes at most.
    /// - Throws: `PortalAuthError.invalidArgument(name: "applicationId")` for anything else.
    ///   - prompts: whether the provider's dialogs are shown (and waited for, bounded).
    public convenience init(applicationId: String, prompts: KeyringPrompts = .never) throws(PortalAuthError) {
        self.init(checkedApplicationId: try ApplicationId.checked(applicationId), prompts: prompts)
    }

    /// The store of no application id (as `shared`), with `prompts`.
    public static func unnamed(prompts: KeyringPrompts) -> KeyringSessionStorage {
        prompts == .never ? shared : KeyringSessionStorage(checkedApplicationId: "", prompts: prompts)
    }

    private init(checkedApplicationId applicationId: String, prompts: KeyringPrompts) {
        self.applicationId = applicationId
        self.prompts = prompts
        owner = KeyringOwner(applicationId: applicationId, labelName: applicationId.isEmpty ? Self.processName : applicationId)
    }

    public func get(environmentId: String) async throws -> String? {
        try await perform(.get, environmentId)
    }

    public func set(_ value: String, environmentId: String) async throws {
        _ = try await perform(.set, environmentId, value: value)
    }

    public func delete(environmentId: String) async throws {
        _ = try await perform(.delete, environmentId)
    }

    func checkCanStore(environmentId: String) async throws {
        _ = try await perform(.check, environmentId)
    }

    func withEntryLock<T: Sendable>(environmentId: String, _ body: () async throws -> T) async throws -> T {
        let name = Self.lockName(applicationId: applicationId, environmentId: environmentId)
        let lock = try await thread.run { [lockFolder, prompts] in
            try StoreFolder(path: lockFolder, role: .keyringLocks).lock(name, waitingAtMost: prompts.patienceMilliseconds)
        }
        defer { _ = close(lock) }
        return try await body()
    }

    /// `$XDG_RUNTIME_DIR/portal-auth` (`RuntimeFolder`), the redirect channels' folder; else
    /// the file store's default folder.
    static var lockFolderPath: String {
        guard let runtime = RuntimeFolder.path, runtime.hasPrefix("/") else { return FileSessionStorage.defaultDirectory }
        return runtime + "/" + RedirectChannel.folderName
    }

    /// One lock file per application and environment (a hash: their names can be longer
    /// than a file's may be), so that unrelated apps never wait for each other.
    static func lockName(applicationId: String, environmentId: String) -> String {
        "keyring-" + RedirectChannel.name(applicationId: applicationId, environmentId: environmentId) + ".lock"
    }

    /// Runs `operation` on the storage's thread. A dialog's wait ends when the calling task
    /// is cancelled.
    private func perform(_ operation: KeyringHelper.Operation, _ environmentId: String, value: String? = nil) async throws -> String? {
        // A dialog's wait is the one a cancel ends (`keyringPromptDismissed`); with none
        // allowed, nothing waits on one.
        try await thread.run(cancellable: prompts != .never && pa_secret_load_error() == nil,
                             endsWait: { $0.reason == .keyringPromptDismissed }) { [owner, prompts] cancellable in
            try Keyring.perform(operation, owner, environmentId, value: value, prompts: prompts, cancellable: cancellable)
        }
    }

    /// The running program's name, which labels the items of `shared`.
    public static var processName: String {
        let name = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
        return name.isBlank ? "portal-auth" : name
    }
}

/// Whether the keyring provider's dialogs (an unlock, KeePassXC's access confirmation) are
/// shown. No call waits on a dialog without a bound.
public enum KeyringPrompts: Sendable, Equatable {
    /// A call that would show one fails at once (`keyringNeedsConfirmation`, or
    /// `keyringLocked` for an unlock), its prompt dismissed.
    case never
    /// The dialog shows, and the call waits for the user's answer up to `timeout` (a day at
    /// most; zero or less is `never`), or until its task is cancelled.
    case allowed(timeout: Duration)

    /// As `pa_secret_prompting` has it: zero for never (a timeout of zero or less is never),
    /// at most a day.
    var timeoutMilliseconds: Int64 {
        guard case .allowed(let timeout) = self, timeout > .zero else { return 0 }
        let day: Int64 = 86_400_000
        let (seconds, attoseconds) = timeout.components
        guard seconds < day / 1000 else { return day }
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// The longest one keyring operation may take: D-Bus's own timeouts for its calls, and
    /// more, beside the longest wait on a dialog. Another process's lock is waited for as long,
    /// and the keyring helper's answer.
    var patienceMilliseconds: Int64 {
        60_000 + timeoutMilliseconds
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
