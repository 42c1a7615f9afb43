import CSecret
#if canImport(Glibc)
import Glibc
#endif

/// What went wrong with the keyring, as libsecret, D-Bus and the provider tell it: the retry
/// and the reason an app sees are decided on these kinds, the message follows from them and
/// from the provider, so that it says what to do there.
enum KeyringFault: Error, Equatable {
    enum Action: String {
        case reach, read, write, delete
    }

    case libsecretMissing(String)
    /// Nothing owns the Secret Service's bus name.
    case serviceUnknown
    /// The provider does not know the connection's transfer session: it was restarted, or
    /// replaced by another, since the connection was made.
    case sessionGone
    case locked
    case noDefaultCollection
    case timeout
    /// DBUS_SESSION_BUS_ADDRESS is unset.
    case noSessionBus
    /// The session bus is set but could not be connected to.
    case busUnreachable
    /// The provider could not agree on the transfer encryption libsecret asks for.
    case encryptionFailed
    /// The provider agreed on a transfer session but encrypts or decrypts with another key
    /// than libsecret's: its secrets do not decode, and kwalletd5 then refuses writes with
    /// QtDBus's InvalidObjectPath (both seen here, about one session in 200).
    case transferSessionBroken
    /// The provider wants the user to confirm `Action` in a dialog, and prompts are not
    /// allowed (or nobody answered in time).
    case needsConfirmation(Action)
    /// The user dismissed the provider's dialog.
    case promptRefused
    /// Nobody answered the provider's dialog within the timeout.
    case promptTimedOut
    /// The wait for the provider's dialog was cancelled.
    case promptCancelled
    /// The item a call was made on is gone: another process (of this app or another) deleted
    /// it during the call. A read then finds no session, a delete has nothing left to do.
    case vanished
    /// Another failure of `action`; the D-Bus error's name when the service sent one.
    case failed(Action, remoteName: String?)

    /// The fault a GError stands for, from its kind only: D-Bus error texts are not shown.
    /// Frees the error; the connection is `Keyring.withConnection`'s to drop.
    init(_ error: UnsafeMutablePointer<GError>?, _ action: Action) {
        defer {
            if let error { g_error_free(error) }
        }
        switch Self.remoteName(of: error) ?? "" {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            self = .serviceUnknown
        case "org.freedesktop.Secret.Error.NoSession":
            self = .sessionGone
        case "org.freedesktop.Secret.Error.IsLocked":
            self = .locked
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            self = .timeout
        case "":
            if let error, error.pointee.domain == g_io_error_quark(), error.pointee.code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
                self = .timeout
            } else if getenv("DBUS_SESSION_BUS_ADDRESS") == nil {
                self = .noSessionBus
            } else {
                self = action == .reach ? .busUnreachable : .failed(action, remoteName: nil)
            }
        case let remoteName:
            self = .failed(action, remoteName: remoteName)
        }
    }

    /// The fault of a call on an item: `vanished` when the error says the item's object path
    /// is no longer there (by its D-Bus name: gnome-keyring answers any method of an object
    /// that is gone with UnknownMethod, QtDBus with UnknownObject, the Secret Service's
    /// specification names NoSuchObject), which leaves the connection as it is; else as `init`.
    static func ofItemCall(_ error: UnsafeMutablePointer<GError>?, _ action: Action) -> KeyringFault {
        guard let name = remoteName(of: error), vanishedItemErrors.contains(name) else { return KeyringFault(error, action) }
        g_error_free(error)
        return .vanished
    }

    private static let vanishedItemErrors: Set = ["org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownObject",
                                                  "org.freedesktop.Secret.Error.NoSuchObject"]

    /// The D-Bus error name a GError carries from the remote end, if any.
    static func remoteName(of error: UnsafeMutablePointer<GError>?) -> String? {
        guard let error, let name = g_dbus_error_get_remote_error(error) else { return nil }
        defer { g_free(name) }
        return String(cString: name)
    }

    /// Whether the connection is an answer's, not a failure's: the provider answered (a
    /// dialog's outcome, an item gone, a locked or missing collection). Any other fault drops the connection
    /// and what was known of it, so that the next call reaches a restarted service.
    var keepsConnection: Bool {
        switch self {
        case .locked, .needsConfirmation, .promptRefused, .promptTimedOut, .promptCancelled, .vanished, .noDefaultCollection: true
        default: false
        }
    }

    /// The error an app sees, its message for the user of `provider` (nil: unknown).
    func storageError(_ provider: KeyringProvider?) -> SessionStorageError {
        let quirks = KeyringProvider.quirks(provider)
        let keyring = quirks.name
        switch self {
        case .libsecretMissing(let loaderMessage):
            return SessionStorageError(reason: .libsecretMissing, message: "\(loaderMessage); install libsecret (Debian: libsecret-1-0) to keep sessions in the keyring.")
        case .sessionGone:
            return SessionStorageError(reason: .dbusFailure, message: "The Secret Service (\(keyring)) restarted during the call; try again.")
        case .transferSessionBroken:
            return SessionStorageError(reason: .dbusFailure, message: "The Secret Service (\(keyring)) sent secrets that do not decode; the stored session was left untouched; try again.")
        case .serviceUnknown:
            return SessionStorageError(reason: .noSecretService, message: "No Secret Service is running on the session bus; install and start gnome-keyring (or KeePassXC with its Secret Service integration, or KWallet with its Secret Service API) and try again.")
        case .locked:
            return SessionStorageError(reason: .keyringLocked, message: quirks.lockedMessage)
        case .noDefaultCollection:
            return SessionStorageError(reason: .noSecretService, message: quirks.noDefaultCollectionMessage)
        case .timeout:
            return SessionStorageError(reason: .dbusFailure, message: "The Secret Service (\(keyring)) did not answer in time; check that it is running and try again.")
        case .noSessionBus:
            return SessionStorageError(reason: .noSessionBus, message: "No D-Bus session bus was found (DBUS_SESSION_BUS_ADDRESS is unset); run the app inside a desktop session with a Secret Service.")
        case .busUnreachable:
            return SessionStorageError(reason: .noSessionBus, message: "The D-Bus session bus could not be reached; check that the desktop session (and its Secret Service) is running and try again.")
        case .encryptionFailed:
            return SessionStorageError(reason: .keyringEncryptionFailed, message: "The Secret Service (\(keyring)) could not set up the encrypted transfer of secrets; \(quirks.encryptionFix) and try again.")
        case .needsConfirmation(let action):
            return SessionStorageError(reason: .keyringNeedsConfirmation, message: "\(keyring.capitalisedFirst) asks the user to confirm that this app may \(action.verb) its session, and the app does not show keyring prompts; let it show them, or \(quirks.confirmationFix), and try again.")
        case .promptRefused:
            return SessionStorageError(reason: .keyringPromptDismissed, message: "The request of \(keyring) was dismissed in its dialog; try again and allow it.")
        case .promptTimedOut:
            return SessionStorageError(reason: .keyringNeedsConfirmation, message: "The dialog of \(keyring) was not answered in time; try again and answer it.")
        case .promptCancelled:
            return SessionStorageError(reason: .keyringPromptDismissed, message: "The wait for the dialog of \(keyring) was cancelled.")
        case .vanished:
            return SessionStorageError(reason: .dbusFailure, message: "The session's item in \(keyring) kept changing during the call; try again.")
        case .failed(let action, let remoteName):
            let name = remoteName.map { " (\($0))" } ?? ""
            return SessionStorageError(reason: .dbusFailure, message: "The keyring could not \(action.rawValue) the session\(name); the stored session was left untouched.")
        }
    }
}

extension KeyringFault.Action {
    var verb: String {
        switch self {
        case .reach, .read: "read"
        case .write: "store"
        case .delete: "remove"
        }
    }
}

private extension String {
    var capitalisedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}
