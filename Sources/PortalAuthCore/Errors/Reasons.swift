/// Why the session store failed, so an app can tell its user what to do. The cases are
/// stable; the C ABI numbers them (PORTAL_AUTH_REASON_*).
public enum StorageFailureReason: Sendable, CaseIterable {
    /// The keyring is locked: ask the user to unlock it.
    case keyringLocked
    /// No usable Secret Service: none runs on the session bus, or it has no default (login)
    /// collection. Ask the user to install, start or set up a keyring.
    case noSecretService
    /// No D-Bus session bus could be reached: the app runs outside a desktop session.
    case noSessionBus
    /// D-Bus or the Secret Service failed, or did not answer in time: try again.
    case dbusFailure
    /// libsecret is not installed.
    case libsecretMissing
    /// The application's own store failed (a host storage callback, a custom `SessionStorage`).
    case hostStorageFailed
    /// An entry that cannot be decoded could not be cleared: it is still stored, and the
    /// user is not signed out.
    case entryNotCleared
    /// The keyring asks the user to confirm the access in a dialog (KeePassXC's access
    /// confirmation), and the client does not show keyring prompts, or nobody answered in
    /// time: let the app show them, or turn the confirmation off in the keyring.
    case keyringNeedsConfirmation
    /// The user dismissed the keyring's dialog (a call cancelled while it waits is cancelled).
    case keyringPromptDismissed
    /// The keyring could not agree on the encrypted transfer of secrets (KWallet without its
    /// encryption plugins): fix the keyring's installation.
    case keyringEncryptionFailed
    /// The file store's folder (or file) is not the user's alone: a symlink, another user's,
    /// or open to others. Fix its owner and mode (0700), or choose another folder.
    case fileStoreUnsafe
    /// The file store could not read, write or remove its file (a full disk, a read-only
    /// folder): the message names the system's error.
    case fileStoreFailed
}

/// Why a one-call sign-in (browser or magic link), or the redirect channel between an app's
/// instances, is not possible here. The cases are stable; the C ABI numbers them
/// (PORTAL_AUTH_REASON_*).
public enum SignInUnavailableReason: Sendable, CaseIterable {
    /// The redirect URL is not an `http` loopback URL with an explicit port.
    case redirectNotLoopback
    /// Another program listens on the redirect URL's port.
    case portInUse
    /// The loopback listener could not start (no socket or thread, the address refused).
    case listenerFailed
    /// The default opener found no browser to start (`$BROWSER`, `xdg-open`).
    case noBrowser
    /// The application's browser opener failed.
    case openerFailed
    /// The redirect channel: `$XDG_RUNTIME_DIR` is unset, missing or not a folder.
    case noRuntimeDirectory
    /// The redirect channel: `$XDG_RUNTIME_DIR`, or the channel's folder in it, is not the
    /// user's own with mode 0700 (others could reach the channel), or the process at the
    /// other end is another user's.
    case runtimeDirectoryUnsafe
    /// The redirect channel: another instance of the application already listens for the
    /// redirects of this environment.
    case channelInUse
    /// The redirect channel could not be made, or the running instance did not answer.
    case channelFailed
    /// The redirect URL's loopback address does not exist on this machine (a `[::1]` redirect
    /// with IPv6 turned off): no browser could come back to it. Trying again cannot help.
    case redirectAddressUnavailable

    /// Whether the reason is the redirect channel's, rather than a sign-in's.
    var isChannel: Bool {
        switch self {
        case .noRuntimeDirectory, .runtimeDirectoryUnsafe, .channelInUse, .channelFailed: return true
        case .redirectNotLoopback, .portInUse, .listenerFailed, .noBrowser, .openerFailed, .redirectAddressUnavailable:
            return false
        }
    }
}

/// Why a sign-in's wait ended before its redirect came (`PortalAuthSignInError.closed`);
/// nothing was exchanged. The cases are stable; the C ABI numbers them
/// (PORTAL_AUTH_REASON_*).
public enum SignInClosedReason: Sendable, CaseIterable {
    /// The caller cancelled the call (or its task): start again when the user asks.
    case cancelled
    /// The sign-in's timeout passed before the browser or the email's link came back: the
    /// user may start again.
    case timedOut
    /// The client was closed (or its waits ended) during the sign-in.
    case clientClosed
}

/// Which 401 a sign-in's exchange was (`PortalRequestsError.unauthorized`), so that an app
/// knows whether its user retypes or starts over. The cases are stable; the C ABI numbers
/// them (PORTAL_AUTH_REASON_*).
public enum UnauthorizedReason: Sendable, CaseIterable {
    /// A redirect's grant was refused (`handleRedirect`, the one-call sign-ins): the link was
    /// already used, has expired, or is not Portal's. Request a new link.
    case linkUsed
    /// The TOTP code was not accepted, the step had not expired by the server's clock, and this
    /// client had not used it: retype the code and verify again with the same step. (A step
    /// another process used is refused the same way: the server does not say which.)
    case totpCodeRejected
    /// The TOTP step's `userJwt` had expired by the server's clock (ten minutes after the
    /// sign-in that returned it): start the sign-in again.
    case totpStepExpired
    /// The last attempt with the same grant or TOTP step lost its answer (a reset, a
    /// timeout) and may have completed on the server, which now refuses it as spent: the
    /// user did nothing wrong. Start the sign-in again.
    case outcomeUnknown
    /// This client has already signed in with the TOTP step (its code was accepted), which the
    /// server now refuses as spent: start the sign-in again.
    case totpStepUsed
}

/// The error an application's `BrowserOpener` throws to say why it failed. Its message is
/// carried into the sign-in's `unavailable` error (control characters escaped, cut to 200
/// characters), so it must carry no secret and not the authorize URL. The text of any other
/// error an opener throws is not repeated: it might quote the URL.
public struct BrowserOpenerError: Error, Equatable, Sendable {
    public let message: String
    /// The opener found no browser to open (a terminal over SSH, no desktop): the sign-in
    /// fails at once with `.noBrowser`, carrying the URL for the app to show, rather than
    /// `.openerFailed`.
    public let noBrowser: Bool

    public init(message: String, noBrowser: Bool = false) {
        self.message = message
        self.noBrowser = noBrowser
    }
}
