/// The client's own errors (docs/protocol.md §10). No case ever carries a token, a grant, a
/// `userJwt`, a TOTP link or secret, or a stored value.
public enum PortalAuthError: Error, Equatable, Sendable {
    /// A required argument (`authEnvironmentId`, `redirectUrl`, `apiHost`, `email`) was
    /// blank or unusable; `accepted`, when given, says what it must be.
    case invalidArgument(name: String, accepted: String? = nil)
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
    /// The session store could not be read, written or deleted this time; `reason` says
    /// which failure it was, `message` what to do about it.
    case sessionStorageFailure(reason: StorageFailureReason, message: String)
    /// Gas sponsorship was requested but is not available (the server's text, cut to 200).
    case accountAbstractionUnavailable(message: String)
    /// The magic-link send limit for this address was hit (429); `retryAfter` is the delay
    /// the server asked for, in seconds (its `Retry-After`), or nil. Nothing is resent.
    case rateLimited(retryAfter: Int? = nil)
    /// A TOTP QR code could not be made from the link, or not at the scale asked for:
    /// `acceptedScale`, given for a scale out of range, says the range this code takes.
    case totpQrUnavailable(acceptedScale: String? = nil)
}

extension PortalAuthError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidArgument(let name, let accepted):
            return accepted.map { "Invalid argument: \(name) must be \($0)." } ?? "Invalid argument: \(name) is blank or unusable."
        case .magicLinkNotConfigured:
            return "sendMagicLink needs a MagicLinkConfig (fromEmail and templateId)."
        case .authMethodUnavailable(let method):
            return "The sign-in method \(method.rawValue) is not available for this environment."
        case .authenticationFailed(let error):
            return "Authentication failed: \(error.escapingControlCharacters())"
        case .malformedResponse(let path, let missing):
            if let missing { return "Malformed response from \(path): missing \(missing)." }
            return "Malformed response from \(path)."
        case .invalidGrantResponse:
            return "The grant exchange returned neither a session nor a two-factor step."
        case .invalidUserJwt(let detail):
            return "Invalid userJwt: \(detail)"
        case .sessionStorageFailure(_, let message):
            return "Session storage failure: \(message)"
        case .accountAbstractionUnavailable(let message):
            return "Account abstraction unavailable: \(message.escapingControlCharacters())"
        case .rateLimited(let retryAfter):
            let when = retryAfter.map { "in \($0) s" } ?? "later"
            return "Too many magic links were sent to this address; try again \(when)."
        case .totpQrUnavailable(let acceptedScale):
            return acceptedScale.map { "A QR code cannot be made at this scale: scale must be \($0)." }
                ?? "A QR code cannot be made from this TOTP link."
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
    /// `userJwt`, or a remembered session that has since been invalidated. `reason` says
    /// which, where the call knows (the grant exchanges and `verifyTotp`), else nil.
    case unauthorized(reason: UnauthorizedReason?)
    /// Any other non-2xx status, with the server's reason: a bounded excerpt of the body
    /// (see `PortalAPI.excerpt`), `nil` when the body was empty and always for the grant
    /// exchanges and the TOTP check, whose requests carry a secret the body might echo. The
    /// excerpt is kept out of `description`. `retryAfter` is the server's `Retry-After`, in
    /// seconds, or nil; nothing is retried.
    case httpStatus(status: Int, bodyExcerpt: String?, retryAfter: Int? = nil)
    /// No usable response arrived.
    case network(NetworkFailure, message: String)

    /// The HTTP status, or `nil` when no response arrived.
    public var status: Int? {
        switch self {
        case .unauthorized: return 401
        case .httpStatus(let status, _, _): return status
        case .network: return nil
        }
    }
}

/// Why no usable response arrived (docs/network.md "Failures with no answer"), decided on libcurl's result
/// codes, never on its text. The cases are stable; the C ABI numbers them
/// (PORTAL_AUTH_REASON_*).
public enum NetworkFailure: String, Sendable, CaseIterable {
    /// The server's certificate chain leads to no trusted authority: a company's own CA
    /// that is not installed, or a device intercepting the connection.
    case certificateUntrusted
    /// The server's certificate (or one in its chain) has expired, by this machine's clock.
    case certificateExpired
    /// The server's certificate is not valid yet, by this machine's clock.
    case certificateNotYetValid
    /// The server's certificate was issued for another name.
    case certificateWrongHost
    /// The certificate authority file named by `caFile` or the environment could not be read.
    case caFileUnusable
    /// The TLS handshake failed otherwise (no protocol or cipher in common, a broken peer).
    case tlsFailed
    /// The proxy asked for credentials (HTTP 407): none were given, or they were refused.
    case proxyAuthRequired
    /// The proxy refused to connect to the server, or could not reach it.
    case proxyRefused
    /// The proxy itself could not be reached: its name did not resolve, or it refused.
    case proxyUnreachable
    /// The server's name did not resolve.
    case nameNotResolved
    /// The server (or no one) refused the connection, or no route leads to it.
    case connectionRefused
    /// The connection was reset or closed before the whole answer came.
    case connectionReset
    /// The connection (name lookup, TCP, TLS, the proxy's tunnel) took longer than the
    /// connect timeout.
    case connectTimeout
    /// The request took longer than the overall timeout once connected.
    case requestTimeout
    /// The body exceeded the 1 MiB cap.
    case responseTooLarge
    /// libcurl could not be loaded.
    case libcurlMissing
    /// Anything else: no descriptor or thread, out of memory, a libcurl that cannot honour a
    /// protection the library requires.
    case connection

    /// Whether the request may have reached the server, which may have acted on it: its
    /// answer was lost on the way back, or came too large to read.
    public var mayHaveReachedServer: Bool {
        switch self {
        case .connectionReset, .requestTimeout, .responseTooLarge: true
        default: false
        }
    }
}

extension PortalRequestsError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unauthorized(let reason):
            let why = switch reason {
            case nil: ""
            case .linkUsed: ": the redirect's grant was refused (used, expired or not Portal's); request a new link"
            case .totpCodeRejected: ": the TOTP code was not accepted, and the step had not expired"
            case .totpStepExpired: ": the TOTP step had expired by the server's clock; sign in again"
            case .outcomeUnknown: ": the last attempt's answer was lost, and it may have completed; sign in again"
            case .totpStepUsed: ": this TOTP step was already used to sign in; sign in again"
            }
            return "Unauthorized (HTTP 401)\(why)."
        case .httpStatus(let status, _, let retryAfter):
            return "The server answered HTTP \(status)\(retryAfter.map { "; it asks to wait \($0) s before trying again" } ?? "")."
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

/// Errors of the one-call browser sign-in; `code` is the web SDK's popup code.
public enum PortalAuthSignInError: Error, Equatable, Sendable {
    /// The wait ended (`reason`: cancelled, timed out, or the client's waits ended) before a
    /// redirect arrived; nothing was exchanged. Listening for forwarded redirects ends so too.
    /// `detail`, for a timeout, says what the listener refused meanwhile (another user's
    /// connections: a browser whose proxy carries loopback addresses).
    case closed(reason: SignInClosedReason, detail: String? = nil)
    /// No one-call sign-in (or no redirect channel) is possible here: `reason` says why;
    /// `detail`, when there is one, names the address, the program, the folder or the
    /// opener's own text (never a URL's query). `authorizeUrl`, for `.noBrowser` from a
    /// browser sign-in, is the URL no browser could open, for the app to show its user; it
    /// is kept out of `description`.
    case unavailable(reason: SignInUnavailableReason, detail: String?, authorizeUrl: String? = nil)
    /// The client already has a browser or magic-link sign-in under way.
    case signInInProgress
    /// The callback carried nothing usable.
    case callbackIncomplete

    /// `POPUP_CLOSED`, `POPUP_UNAVAILABLE`, `SIGN_IN_ALREADY_IN_PROGRESS` or `CALLBACK_INCOMPLETE`.
    public var code: String {
        switch self {
        case .closed: return "POPUP_CLOSED"
        case .unavailable: return "POPUP_UNAVAILABLE"
        case .signInInProgress: return "SIGN_IN_ALREADY_IN_PROGRESS"
        case .callbackIncomplete: return "CALLBACK_INCOMPLETE"
        }
    }
}

extension PortalAuthSignInError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .closed(let reason, let detail):
            let how = switch reason {
            case .cancelled: "The sign-in was cancelled"
            case .timedOut: "The sign-in timed out"
            case .clientClosed: "The client was closed"
            }
            return "\(how) before the redirect came; nothing was exchanged\(detail.map { " (\($0))" } ?? "")."
        case .unavailable(let reason, let detail, _):
            let cause: String
            switch reason {
            case .redirectNotLoopback:
                cause = "it needs an http loopback redirect URL with an explicit port, such as http://127.0.0.1:8765/callback"
            case .portInUse:
                cause = "another program listens on the redirect URL's port"
            case .listenerFailed:
                cause = "the loopback listener could not start"
            case .noBrowser:
                cause = "no browser could be started; set $BROWSER or install xdg-utils (xdg-open)"
            case .openerFailed:
                cause = "the application's browser opener failed"
            case .noRuntimeDirectory:
                cause = "$XDG_RUNTIME_DIR is unset or is not a folder; the desktop session sets it"
            case .runtimeDirectoryUnsafe:
                cause = "the user's runtime folder is not theirs alone (mode 0700), so others could reach the channel"
            case .channelInUse:
                cause = "another instance of the application already listens for this environment's redirects"
            case .channelFailed:
                cause = "the channel to the running instance failed"
            case .redirectAddressUnavailable:
                cause = "the redirect URL's address cannot be served on this machine (a [::1] redirect needs IPv6; use 127.0.0.1)"
            }
            let subject = reason.isChannel ? "Redirect forwarding" : "Browser sign-in"
            return "\(subject) is not possible: \(cause)\(detail.map { " (\($0))" } ?? "")."
        case .signInInProgress:
            return "A sign-in is already under way for this client."
        case .callbackIncomplete:
            return "The browser came back without a usable sign-in result."
        }
    }
}
