/// The client's own errors (docs/protocol.md §10). No case ever carries a token, a grant, a
/// `userJwt`, a TOTP link or secret, or a stored value.
public enum PortalAuthError: Error, Equatable, Sendable {
    /// A required argument (`authEnvironmentId`, `redirectUrl`, `apiHost`, `email`) was
    /// blank or unusable.
    case invalidArgument(name: String)
    /// `sendMagicLink` on a client built without a `MagicLinkConfig`.
    case magicLinkNotConfigured
    /// The provider's authorize URL was absent or blank.
    case authMethodUnavailable(AuthMethod)
    /// The redirect carried an `error` parameter (its decoded value, cut to 100 characters).
    case authenticationFailed(error: String)
    /// A success response lacked its envelope or the documented field.
    case malformedResponse(path: String, missing: String?)
    /// A grant exchange returned neither a session token nor a `userJwt`.
    case invalidGrantResponse
    /// The `userJwt` given to `verifyTotp` could not be read; `detail` is fixed text.
    case invalidUserJwt(detail: String)
    /// The session store could not be read, written or deleted this time.
    case sessionStorageFailure(message: String)
    /// Gas sponsorship was requested but is not available (the server's text, cut to 200).
    case accountAbstractionUnavailable(message: String)
    /// The magic-link send limit for this address was hit (429).
    case rateLimited
    /// A TOTP QR code could not be made from the link.
    case totpQrUnavailable
}

extension PortalAuthError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidArgument(let name):
            return "Invalid argument: \(name) is blank or unusable."
        case .magicLinkNotConfigured:
            return "sendMagicLink needs a MagicLinkConfig (fromEmail and templateId)."
        case .authMethodUnavailable(let method):
            return "The sign-in method \(method.rawValue) is not available for this environment."
        case .authenticationFailed(let error):
            return "Authentication failed: \(error)"
        case .malformedResponse(let path, let missing):
            if let missing { return "Malformed response from \(path): missing \(missing)." }
            return "Malformed response from \(path)."
        case .invalidGrantResponse:
            return "The grant exchange returned neither a session nor a two-factor step."
        case .invalidUserJwt(let detail):
            return "Invalid userJwt: \(detail)"
        case .sessionStorageFailure(let message):
            return "Session storage failure: \(message)"
        case .accountAbstractionUnavailable(let message):
            return "Account abstraction unavailable: \(message)"
        case .rateLimited:
            return "Too many magic links were sent to this address; try again later."
        case .totpQrUnavailable:
            return "A QR code cannot be made from this TOTP link."
        }
    }
}

/// A system C library a feature needs could not be loaded. libcurl, libsecret, libqrencode
/// and libpng are opened on first use, so a machine missing one still loads the library and
/// fails only the calls that need it. (HTTP reports it as a network failure and the keyring
/// as a session storage failure; the QR code throws this.) The message names the library
/// and says why, in the dynamic loader's words.
public struct SystemLibraryUnavailable: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public var description: String { message }

    /// Throws when `loadError`, a loader's answer (`pa_<library>_load_error()`), is not NULL.
    static func check(_ loadError: UnsafePointer<CChar>?) throws(SystemLibraryUnavailable) {
        if let loadError { throw SystemLibraryUnavailable(message: String(cString: loadError)) }
    }
}

/// Errors of the transport, passed through unchanged by every call.
public enum PortalRequestsError: Error, Equatable, Sendable {
    /// The server answered 401: a spent grant, a wrong TOTP code, an expired or spent
    /// `userJwt`, or a remembered session that has since been invalidated.
    case unauthorized
    /// Any other non-2xx status, with a bounded excerpt of the body for diagnostics (empty
    /// for the grant exchanges and the TOTP check, whose bodies may echo credentials). The
    /// excerpt is kept out of `description`.
    case httpStatus(status: Int, bodyExcerpt: String)
    /// No usable response arrived.
    case network(NetworkFailure, message: String)

    /// The HTTP status, or `nil` when no response arrived.
    public var status: Int? {
        switch self {
        case .unauthorized: return 401
        case .httpStatus(let status, _): return status
        case .network: return nil
        }
    }
}

/// Why no usable response arrived.
public enum NetworkFailure: String, Sendable {
    /// DNS, connection refused or reset, TLS, proxy: the exchange could not complete.
    case connection
    /// The connect or overall timeout elapsed.
    case timeout
    /// The body exceeded the 1 MiB cap.
    case responseTooLarge
}

extension PortalRequestsError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unauthorized:
            return "Unauthorized (HTTP 401)."
        case .httpStatus(let status, _):
            return "The server answered HTTP \(status)."
        case .network(let failure, let message):
            return "Network failure (\(failure.rawValue)): \(message)"
        }
    }
}

/// Errors of a session's credentials.
public enum PortalCredentialError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `getToken()` on a session that has been invalidated.
    case sessionInvalidated

    public var description: String { "The session has been invalidated; sign in again." }
}

/// Errors of the one-call browser sign-in; the raw values are the web SDK's popup codes.
public enum PortalAuthSignInError: String, Error, Sendable, CaseIterable {
    /// The wait ended (timeout or cancellation) before a callback arrived; nothing was exchanged.
    case closed = "POPUP_CLOSED"
    /// No browser sign-in is possible here (redirect URL, port, opener).
    case unavailable = "POPUP_UNAVAILABLE"
    /// The client already has a browser sign-in under way.
    case signInInProgress = "SIGN_IN_ALREADY_IN_PROGRESS"
    /// The callback carried nothing usable.
    case callbackIncomplete = "CALLBACK_INCOMPLETE"
}

extension PortalAuthSignInError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .closed:
            return "The browser sign-in ended before the browser came back (timeout or cancellation); nothing was exchanged."
        case .unavailable:
            return "Browser sign-in is not possible: it needs an http loopback redirect URL with an explicit port that is free, and a browser to open."
        case .signInInProgress:
            return "A browser sign-in is already under way for this client."
        case .callbackIncomplete:
            return "The browser came back without a usable sign-in result."
        }
    }
}
