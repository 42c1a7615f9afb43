/// One sentence per reason that an app can show its user as it is (docs/errors.md): plain
/// words, what happened and what to do, never a detail of the developer's message (an
/// address, a program, a status). An app that translates keys its own texts by the reason.
extension StorageFailureReason {
    public var userMessage: String {
        switch self {
        case .keyringLocked: "Your keyring is locked. Unlock it, then try again."
        case .noSecretService: "No keyring is available. Install or start one (such as GNOME Keyring or KeePassXC), then try again."
        case .noSessionBus: "This program runs outside a desktop session, so it cannot reach your keyring."
        case .dbusFailure: "Your keyring did not answer. Try again."
        case .libsecretMissing: "The keyring library (libsecret) is not installed. Install it, then try again."
        case .hostStorageFailed: "The application could not keep your sign-in. Try again."
        case .entryNotCleared: "A damaged saved sign-in could not be removed from your keyring."
        case .keyringNeedsConfirmation: "Your keyring asks you to allow access. Allow it, then try again."
        case .keyringPromptDismissed: "Access to your keyring was declined."
        case .keyringEncryptionFailed: "Your keyring could not set up an encrypted connection. Its installation needs fixing."
        case .fileStoreUnsafe: "The folder that keeps your sign-in is open to other users. Make it yours alone, then try again."
        case .fileStoreFailed: "Your sign-in could not be saved to disk. Check the free space, then try again."
        }
    }
}

extension SignInUnavailableReason {
    public var userMessage: String {
        switch self {
        case .redirectNotLoopback: "This application is not set up for signing in with a browser."
        case .portInUse: "Another program is using the port sign-in needs. Close it, then try again."
        case .listenerFailed: "Signing in with a browser could not start. Try again."
        case .noBrowser: "No web browser could be opened here. Open the sign-in link in a browser yourself."
        case .openerFailed: "The web browser could not be opened. Try again."
        case .noRuntimeDirectory: "This program runs outside a desktop session, so sign-in links cannot reach it."
        case .runtimeDirectoryUnsafe: "Your session's private folder is open to others, so sign-in links cannot be passed on safely."
        case .channelInUse: "The application is already running and waiting for sign-in links."
        case .channelFailed: "The sign-in link could not be passed to the running application. Try again."
        case .redirectAddressUnavailable: "This computer cannot receive the sign-in at the address the application uses. The application needs another setup."
        }
    }
}

extension SignInClosedReason {
    public var userMessage: String {
        switch self {
        case .cancelled: "Sign-in was cancelled."
        case .timedOut: "Sign-in took too long. Start again."
        case .clientClosed: "Sign-in stopped because the application closed."
        }
    }
}

extension UnauthorizedReason {
    public var userMessage: String {
        switch self {
        case .linkUsed: "This sign-in link was already used or has expired. Request a new one."
        case .totpCodeRejected: "That code is not correct. Check your authenticator app and type the current code."
        case .totpStepExpired: "The time to enter your code ran out. Sign in again."
        case .outcomeUnknown: "Your last attempt may have gone through, but its answer was lost. Sign in again."
        case .totpStepUsed: "This sign-in was already completed with a code. Sign in again."
        }
    }
}

extension NetworkFailure {
    public var userMessage: String {
        switch self {
        case .certificateUntrusted:
            "The server's security certificate is not trusted on this computer. If your organisation uses its own certificates, ask your administrator to install them."
        case .certificateExpired: "The server's security certificate has expired, or your computer's clock is wrong. Check the date and time."
        case .certificateNotYetValid: "The server's security certificate is not valid yet, or your computer's clock is wrong. Check the date and time."
        case .certificateWrongHost: "The server's security certificate belongs to another site. Check your network settings."
        case .caFileUnusable: "The certificate file set for this application could not be read. Check its settings."
        case .tlsFailed: "A secure connection to the server could not be set up. Try again later."
        case .proxyAuthRequired: "Your network's proxy asks for a user name and password. Check your proxy settings."
        case .proxyRefused: "Your network's proxy refused to connect to the server. Check your proxy settings."
        case .proxyUnreachable: "Your network's proxy could not be reached. Check your proxy settings."
        case .nameNotResolved: "The server's name could not be found. Check your internet connection."
        case .connectionRefused: "The server could not be reached. Check your internet connection."
        case .connectionReset: "The connection to the server was interrupted. Try again."
        case .connectTimeout: "The server took too long to respond. Check your internet connection, then try again."
        case .requestTimeout: "The server took too long to answer. Try again."
        case .responseTooLarge: "The server sent an answer that was too large. Try again later."
        case .libcurlMissing: "A library this application needs (libcurl) is not installed. Install it, then try again."
        case .connection: "The server could not be reached. Try again."
        }
    }
}
