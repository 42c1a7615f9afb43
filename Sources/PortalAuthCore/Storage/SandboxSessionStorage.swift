import CDesktop
import CSecret
#if canImport(Glibc)
import Glibc
#endif

/// Sessions inside a Flatpak sandbox, where no Secret Service is reachable (Flathub refuses
/// apps that ask for one: it holds every app's secrets). libsecret keeps the app's items in a
/// file of the app's own data folder (`$XDG_DATA_HOME/keyrings/default.keyring`, in
/// `~/.var/app/<app id>`), encrypted with a key that the Secret portal
/// (`org.freedesktop.portal.Secret`) hands this app alone; the host's keyring keeps that key.
/// Chosen by `PortalAuth` in place of the keyring store when the process is sandboxed.
///
/// - One item per environment, of the session schema with the application attribute, as the
///   keyring store writes (there is no migration: the file is the app's alone).
/// - libsecret reads the file once per process; each call here drops what it read first,
///   so a write of another process of the app is seen, and a lock file (the file store's,
///   in `$XDG_STATE_HOME/portal-auth`) makes each vault operation atomic across them.
/// - Every call is bounded: the portal may wait on a dialog of the host's keyring (an
///   unlock), shown as `prompts` allow.
/// - Before a grant is spent, the portal must hand over the key and the file be read.
final class SandboxSessionStorage: SessionStorage, StorageReadiness, EntryLocking {
    let applicationId: String
    private let prompts: KeyringPrompts
    private let owner: KeyringOwner
    /// The file store's default folder, where the lock file is; nil when it has none (a
    /// relative home), and nothing is locked.
    private let lockFolder: StoreFolder?
    /// The lock file that stands for the whole keyring file: the file store's lock of the
    /// entry `lockName`.
    private let lockFile: String
    /// One for the process: libsecret's backend, which each call drops, is the process's.
    private static let thread = StoreThread(name: "portal-auth-box")
    /// Where the lock is waited for: never the thread that the holder's own calls need.
    private let lockThread = StoreThread(name: "portal-auth-file")

    /// How long a call waits on the portal when no dialog is allowed: D-Bus's own default.
    static let unattendedBound: Int64 = 25_000
    /// The name of the file store's lock entry that stands for the whole keyring file.
    private static let lockName = "sandbox-keyring"

    /// - Parameter applicationId: a reverse-DNS name (the sandbox's `FLATPAK_ID`), or empty.
    init(applicationId: String, prompts: KeyringPrompts) {
        self.applicationId = applicationId
        self.prompts = prompts
        owner = KeyringOwner(applicationId: applicationId,
                             labelName: applicationId.isEmpty ? KeyringSessionStorage.processName : applicationId)
        lockFolder = (try? FileSessionStorage.folder(nil)).map { StoreFolder(path: $0, role: .sessions) }
        lockFile = FileSessionStorage.lockFileName(
            FileSessionStorage.fileName(applicationId: applicationId.isEmpty ? nil : applicationId, environmentId: Self.lockName))
    }

    func get(environmentId: String) async throws -> String? {
        try await perform { [self] cancellable throws(SessionStorageError) in
            let attributes = pa_session_attributes(environmentId, applicationId)
            defer { g_hash_table_unref(attributes) }
            var value: OpaquePointer?
            var error: UnsafeMutablePointer<GError>?
            try check(pa_portal_store_lookup(attributes, &value, bound, cancellable, &error), error, .read)
            guard let value else { return nil }
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            var length = 0
            guard let bytes = secret_value_get(value, &length) else { return nil }
            return StoredSession.entry(utf8: UnsafeRawBufferPointer(start: bytes, count: length))
        }
    }

    func set(_ text: String, environmentId: String) async throws {
        _ = try await perform { [self] cancellable throws(SessionStorageError) -> String? in
            let attributes = pa_session_attributes(environmentId, applicationId)
            defer { g_hash_table_unref(attributes) }
            let value = secret_value_new(text, -1, "text/plain")
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            var error: UnsafeMutablePointer<GError>?
            let status = pa_portal_store_write(attributes, owner.label(environmentId), value, bound, cancellable, &error)
            try check(status, error, .write)
            return nil
        }
    }

    func delete(environmentId: String) async throws {
        _ = try await perform { [self] cancellable throws(SessionStorageError) -> String? in
            let attributes = pa_session_attributes(environmentId, applicationId)
            defer { g_hash_table_unref(attributes) }
            var error: UnsafeMutablePointer<GError>?
            try check(pa_portal_store_clear(attributes, bound, cancellable, &error), error, .delete)
            return nil
        }
    }

    /// The key handed over, the file read and the lock's folder usable: what a write needs
    /// but the write itself.
    func checkCanStore(environmentId: String) async throws {
        _ = try await get(environmentId: environmentId)
        guard let lockFolder else { return }
        try await lockThread.run { try lockFolder.checkWritable() }
    }

    func withEntryLock<T: Sendable>(environmentId: String, _ body: () async throws -> T) async throws -> T {
        guard let lockFolder else { return try await body() }
        // One lock for the whole file: libsecret refuses a write to a file that changed since
        // it read it, whichever environment's item changed.
        let lock = try await lockThread.run { [lockFile] in
            try lockFolder.lock(lockFile, waitingAtMost: FileSessionStorage.lockPatience)
        }
        defer { _ = close(lock) }
        return try await body()
    }

    private var bound: Int64 {
        max(Self.unattendedBound, prompts.timeoutMilliseconds)
    }

    /// Runs `work` on the store's thread, with the portal asked first; the calling task's
    /// cancel ends its wait.
    private func perform(_ work: @escaping @Sendable (UnsafeMutablePointer<GCancellable>?) throws(SessionStorageError) -> String?) async throws -> String? {
        if let loadError = pa_secret_load_error() {
            throw SandboxFault.libsecretMissing(String(cString: loadError)).storageError
        }
        return try await Self.thread.run(cancellable: true) { cancellable throws -> String? in
            switch pa_portal_secret_check() {
            case PA_PORTAL_DONE: break
            case PA_PORTAL_NO_BUS: throw SandboxFault.noSessionBus.storageError
            default: throw SandboxFault.noSecretPortal.storageError
            }
            return try work(cancellable)
        }
    }

    private func check(_ status: pa_portal_status, _ error: UnsafeMutablePointer<GError>?,
                       _ action: KeyringFault.Action) throws(SessionStorageError) {
        defer { if let error { g_error_free(error) } }
        switch status {
        case PA_PORTAL_DONE: return
        case PA_PORTAL_NO_BUS: throw SandboxFault.noSessionBus.storageError
        case PA_PORTAL_NO_SECRET_PORTAL: throw SandboxFault.noSecretPortal.storageError
        case PA_PORTAL_TIMED_OUT: throw SandboxFault.timedOut.storageError
        case PA_PORTAL_CANCELLED: throw SandboxFault.cancelled.storageError
        default:
            // libsecret falls back to the Secret Service when its own check of the portal
            // fails; in a sandbox none is reachable.
            if let name = KeyringFault.remoteName(of: error),
               name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                throw SandboxFault.noSecretPortal.storageError
            }
            // libsecret's file backend gets no cancellable: G_IO_ERROR_CANCELLED is the portal's
            // "cancelled by the user", and its plain G_IO_ERROR_FAILED "user interaction
            // failed" (the host's keyring locked, and no unlock dialog answered); any other
            // code is the file's (GIO's error for a write that failed).
            let code = error.flatMap { $0.pointee.domain == g_io_error_quark() ? $0.pointee.code : nil }
            switch code {
            case Int32(G_IO_ERROR_CANCELLED.rawValue): throw SandboxFault.keyRefused(action).storageError
            case Int32(G_IO_ERROR_FAILED.rawValue): throw SandboxFault.keyringLocked(action).storageError
            default: throw SandboxFault.fileFailed(action, code: error.map { Int($0.pointee.code) }).storageError
            }
        }
    }
}

/// What went wrong in the sandbox's store, and what the user can do about it there.
enum SandboxFault {
    case libsecretMissing(String)
    case noSessionBus
    case noSecretPortal
    case timedOut
    case cancelled
    case keyRefused(KeyringFault.Action)
    case keyringLocked(KeyringFault.Action)
    /// libsecret could not read or write the file; GIO's error code when it gave one.
    case fileFailed(KeyringFault.Action, code: Int?)

    var storageError: SessionStorageError {
        switch self {
        case .libsecretMissing(let loaderMessage):
            SessionStorageError(reason: .libsecretMissing, message: "\(loaderMessage); the app's Flatpak runtime must include libsecret to keep sessions.")
        case .noSessionBus:
            SessionStorageError(reason: .noSessionBus, message: "This Flatpak sandbox has no D-Bus session bus, through which the Secret portal keeps the session; run the app in a desktop session, with Flatpak's session bus access.")
        case .noSecretPortal:
            SessionStorageError(reason: .noSecretService, message: "The Secret portal is not available to this Flatpak sandbox; install xdg-desktop-portal and a Secret backend for it on the host (GNOME: gnome-keyring; KDE: kwallet) and try again.")
        case .timedOut:
            SessionStorageError(reason: .keyringLocked, message: "The Secret portal did not hand this app its key in time: the host's keyring may be locked, waiting for its unlock dialog; unlock it and try again.")
        case .cancelled:
            SessionStorageError(reason: .keyringPromptDismissed, message: "The wait for the Secret portal was cancelled.")
        case .keyRefused(let action):
            SessionStorageError(reason: .keyringPromptDismissed, message: "The request for this app's key was dismissed in the Secret portal's dialog, so the session could not be \(action.pastParticiple); the stored session was left untouched; try again and allow it.")
        case .keyringLocked(let action):
            SessionStorageError(reason: .keyringLocked, message: "The Secret portal did not hand this app its key, so the session could not be \(action.pastParticiple): the desktop's keyring is locked; unlock it (for example by logging in to the desktop) and try again. The stored session was left untouched.")
        case .fileFailed(let action, let code):
            SessionStorageError(reason: .dbusFailure, message: "The app's keyring file could not be \(action == .read ? "read" : "written")\(code.map { " (GIO error \($0))" } ?? ""), so the session could not be \(action.pastParticiple); the stored session was left untouched; try again.")
        }
    }
}

extension KeyringFault.Action {
    fileprivate var pastParticiple: String {
        switch self {
        case .reach, .read: "read"
        case .write: "stored"
        case .delete: "removed"
        }
    }
}
