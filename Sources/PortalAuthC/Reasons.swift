import CPortalAuth
import PortalAuthCore

/// The C numbering of the core's reasons (PORTAL_AUTH_REASON_*): each reason's stable number
/// and its user message. With the header's names (reasonNames, below), the one table every
/// binding reads names and user messages from (portal_auth_reason_name,
/// portal_auth_reason_user_message).
struct CReason {
    let number: portal_auth_reason
    let userMessage: String

    private init(_ number: Int, _ userMessage: String) {
        self.number = portal_auth_reason(number)
        self.userMessage = userMessage
    }

    static func of(_ reason: StorageFailureReason) -> CReason {
        let message = reason.userMessage
        switch reason {
        case .keyringLocked: return CReason(PORTAL_AUTH_REASON_KEYRING_LOCKED, message)
        case .noSecretService: return CReason(PORTAL_AUTH_REASON_NO_SECRET_SERVICE, message)
        case .noSessionBus: return CReason(PORTAL_AUTH_REASON_NO_SESSION_BUS, message)
        case .dbusFailure: return CReason(PORTAL_AUTH_REASON_DBUS_FAILURE, message)
        case .libsecretMissing: return CReason(PORTAL_AUTH_REASON_LIBSECRET_MISSING, message)
        case .hostStorageFailed: return CReason(PORTAL_AUTH_REASON_HOST_STORAGE_FAILED, message)
        case .entryNotCleared: return CReason(PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED, message)
        case .keyringNeedsConfirmation: return CReason(PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION, message)
        case .keyringPromptDismissed: return CReason(PORTAL_AUTH_REASON_KEYRING_PROMPT_DISMISSED, message)
        case .keyringEncryptionFailed: return CReason(PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED, message)
        case .fileStoreUnsafe: return CReason(PORTAL_AUTH_REASON_FILE_STORE_UNSAFE, message)
        case .fileStoreFailed: return CReason(PORTAL_AUTH_REASON_FILE_STORE_FAILED, message)
        }
    }

    static func of(_ reason: SignInUnavailableReason) -> CReason {
        let message = reason.userMessage
        switch reason {
        case .redirectNotLoopback: return CReason(PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK, message)
        case .portInUse: return CReason(PORTAL_AUTH_REASON_PORT_IN_USE, message)
        case .listenerFailed: return CReason(PORTAL_AUTH_REASON_LISTENER_FAILED, message)
        case .noBrowser: return CReason(PORTAL_AUTH_REASON_NO_BROWSER, message)
        case .openerFailed: return CReason(PORTAL_AUTH_REASON_OPENER_FAILED, message)
        case .noRuntimeDirectory: return CReason(PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY, message)
        case .runtimeDirectoryUnsafe: return CReason(PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE, message)
        case .channelInUse: return CReason(PORTAL_AUTH_REASON_CHANNEL_IN_USE, message)
        case .channelFailed: return CReason(PORTAL_AUTH_REASON_CHANNEL_FAILED, message)
        case .redirectAddressUnavailable: return CReason(PORTAL_AUTH_REASON_REDIRECT_ADDRESS_UNAVAILABLE, message)
        }
    }

    static func of(_ reason: SignInClosedReason) -> CReason {
        let message = reason.userMessage
        switch reason {
        case .cancelled: return CReason(PORTAL_AUTH_REASON_SIGN_IN_CANCELLED, message)
        case .timedOut: return CReason(PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT, message)
        case .clientClosed: return CReason(PORTAL_AUTH_REASON_CLIENT_CLOSED, message)
        }
    }

    static func of(_ reason: UnauthorizedReason) -> CReason {
        let message = reason.userMessage
        switch reason {
        case .linkUsed: return CReason(PORTAL_AUTH_REASON_LINK_USED, message)
        case .totpCodeRejected: return CReason(PORTAL_AUTH_REASON_TOTP_CODE_REJECTED, message)
        case .totpStepExpired: return CReason(PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED, message)
        case .outcomeUnknown: return CReason(PORTAL_AUTH_REASON_OUTCOME_UNKNOWN, message)
        case .totpStepUsed: return CReason(PORTAL_AUTH_REASON_TOTP_STEP_USED, message)
        }
    }

    static func of(_ reason: NetworkFailure) -> CReason {
        let message = reason.userMessage
        switch reason {
        case .certificateUntrusted: return CReason(PORTAL_AUTH_REASON_CERTIFICATE_UNTRUSTED, message)
        case .certificateExpired: return CReason(PORTAL_AUTH_REASON_CERTIFICATE_EXPIRED, message)
        case .certificateNotYetValid: return CReason(PORTAL_AUTH_REASON_CERTIFICATE_NOT_YET_VALID, message)
        case .certificateWrongHost: return CReason(PORTAL_AUTH_REASON_CERTIFICATE_WRONG_HOST, message)
        case .caFileUnusable: return CReason(PORTAL_AUTH_REASON_CA_FILE_UNUSABLE, message)
        case .tlsFailed: return CReason(PORTAL_AUTH_REASON_TLS_FAILED, message)
        case .proxyAuthRequired: return CReason(PORTAL_AUTH_REASON_PROXY_AUTH_REQUIRED, message)
        case .proxyRefused: return CReason(PORTAL_AUTH_REASON_PROXY_REFUSED, message)
        case .proxyUnreachable: return CReason(PORTAL_AUTH_REASON_PROXY_UNREACHABLE, message)
        case .nameNotResolved: return CReason(PORTAL_AUTH_REASON_NAME_NOT_RESOLVED, message)
        case .connectionRefused: return CReason(PORTAL_AUTH_REASON_CONNECTION_REFUSED, message)
        case .connectionReset: return CReason(PORTAL_AUTH_REASON_CONNECTION_RESET, message)
        case .connectTimeout: return CReason(PORTAL_AUTH_REASON_CONNECT_TIMED_OUT, message)
        case .requestTimeout: return CReason(PORTAL_AUTH_REASON_REQUEST_TIMED_OUT, message)
        case .responseTooLarge: return CReason(PORTAL_AUTH_REASON_RESPONSE_TOO_LARGE, message)
        case .libcurlMissing: return CReason(PORTAL_AUTH_REASON_LIBCURL_MISSING, message)
        case .connection: return CReason(PORTAL_AUTH_REASON_NETWORK_FAILED, message)
        }
    }

    /// Every reason but NONE.
    static let all: [CReason] = StorageFailureReason.allCases.map(of) + SignInUnavailableReason.allCases.map(of)
        + SignInClosedReason.allCases.map(of) + UnauthorizedReason.allCases.map(of) + NetworkFailure.allCases.map(of)
}

/// Every reason but NONE, by its name in the header after the prefix.
private let reasonNames: [(Int, String)] = [
    // BEGIN reason names generated by scripts/generate-tables.py: do not edit
    (PORTAL_AUTH_REASON_KEYRING_LOCKED, "KEYRING_LOCKED"),
    (PORTAL_AUTH_REASON_NO_SECRET_SERVICE, "NO_SECRET_SERVICE"),
    (PORTAL_AUTH_REASON_NO_SESSION_BUS, "NO_SESSION_BUS"),
    (PORTAL_AUTH_REASON_DBUS_FAILURE, "DBUS_FAILURE"),
    (PORTAL_AUTH_REASON_LIBSECRET_MISSING, "LIBSECRET_MISSING"),
    (PORTAL_AUTH_REASON_HOST_STORAGE_FAILED, "HOST_STORAGE_FAILED"),
    (PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED, "ENTRY_NOT_CLEARED"),
    (PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION, "KEYRING_NEEDS_CONFIRMATION"),
    (PORTAL_AUTH_REASON_KEYRING_PROMPT_DISMISSED, "KEYRING_PROMPT_DISMISSED"),
    (PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED, "KEYRING_ENCRYPTION_FAILED"),
    (PORTAL_AUTH_REASON_FILE_STORE_UNSAFE, "FILE_STORE_UNSAFE"),
    (PORTAL_AUTH_REASON_FILE_STORE_FAILED, "FILE_STORE_FAILED"),
    (PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK, "REDIRECT_NOT_LOOPBACK"),
    (PORTAL_AUTH_REASON_PORT_IN_USE, "PORT_IN_USE"),
    (PORTAL_AUTH_REASON_LISTENER_FAILED, "LISTENER_FAILED"),
    (PORTAL_AUTH_REASON_NO_BROWSER, "NO_BROWSER"),
    (PORTAL_AUTH_REASON_OPENER_FAILED, "OPENER_FAILED"),
    (PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY, "NO_RUNTIME_DIRECTORY"),
    (PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE, "RUNTIME_DIRECTORY_UNSAFE"),
    (PORTAL_AUTH_REASON_CHANNEL_IN_USE, "CHANNEL_IN_USE"),
    (PORTAL_AUTH_REASON_CHANNEL_FAILED, "CHANNEL_FAILED"),
    (PORTAL_AUTH_REASON_REDIRECT_ADDRESS_UNAVAILABLE, "REDIRECT_ADDRESS_UNAVAILABLE"),
    (PORTAL_AUTH_REASON_SIGN_IN_CANCELLED, "SIGN_IN_CANCELLED"),
    (PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT, "SIGN_IN_TIMED_OUT"),
    (PORTAL_AUTH_REASON_CLIENT_CLOSED, "CLIENT_CLOSED"),
    (PORTAL_AUTH_REASON_LINK_USED, "LINK_USED"),
    (PORTAL_AUTH_REASON_TOTP_CODE_REJECTED, "TOTP_CODE_REJECTED"),
    (PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED, "TOTP_STEP_EXPIRED"),
    (PORTAL_AUTH_REASON_OUTCOME_UNKNOWN, "OUTCOME_UNKNOWN"),
    (PORTAL_AUTH_REASON_TOTP_STEP_USED, "TOTP_STEP_USED"),
    (PORTAL_AUTH_REASON_CERTIFICATE_UNTRUSTED, "CERTIFICATE_UNTRUSTED"),
    (PORTAL_AUTH_REASON_CERTIFICATE_EXPIRED, "CERTIFICATE_EXPIRED"),
    (PORTAL_AUTH_REASON_CERTIFICATE_NOT_YET_VALID, "CERTIFICATE_NOT_YET_VALID"),
    (PORTAL_AUTH_REASON_CERTIFICATE_WRONG_HOST, "CERTIFICATE_WRONG_HOST"),
    (PORTAL_AUTH_REASON_CA_FILE_UNUSABLE, "CA_FILE_UNUSABLE"),
    (PORTAL_AUTH_REASON_TLS_FAILED, "TLS_FAILED"),
    (PORTAL_AUTH_REASON_PROXY_AUTH_REQUIRED, "PROXY_AUTH_REQUIRED"),
    (PORTAL_AUTH_REASON_PROXY_REFUSED, "PROXY_REFUSED"),
    (PORTAL_AUTH_REASON_PROXY_UNREACHABLE, "PROXY_UNREACHABLE"),
    (PORTAL_AUTH_REASON_NAME_NOT_RESOLVED, "NAME_NOT_RESOLVED"),
    (PORTAL_AUTH_REASON_CONNECTION_REFUSED, "CONNECTION_REFUSED"),
    (PORTAL_AUTH_REASON_CONNECTION_RESET, "CONNECTION_RESET"),
    (PORTAL_AUTH_REASON_CONNECT_TIMED_OUT, "CONNECT_TIMED_OUT"),
    (PORTAL_AUTH_REASON_REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT"),
    (PORTAL_AUTH_REASON_RESPONSE_TOO_LARGE, "RESPONSE_TOO_LARGE"),
    (PORTAL_AUTH_REASON_LIBCURL_MISSING, "LIBCURL_MISSING"),
    (PORTAL_AUTH_REASON_NETWORK_FAILED, "NETWORK_FAILED"),
    // END reason names generated
]

// Built once, when first read, and never changed: safe to share. The strings live as long
// as the process, as the header promises. A reason the core does not give has no entry.
nonisolated(unsafe) private let reasonTexts: [portal_auth_reason: (name: UnsafePointer<CChar>, userMessage: UnsafePointer<CChar>)] = {
    let userMessages = Dictionary(uniqueKeysWithValues: CReason.all.map { ($0.number, $0.userMessage) })
    return Dictionary(uniqueKeysWithValues: reasonNames.compactMap { number, name in
        userMessages[portal_auth_reason(number)].map { (portal_auth_reason(number), (staticCString(name), staticCString($0))) }
    })
}()

/// See portal_auth_reason_name in include/portal_auth.h.
@c(portal_auth_reason_name)
public func portalAuthReasonName(_ reason: portal_auth_reason) -> UnsafePointer<CChar>? {
    reasonTexts[reason]?.name
}

/// See portal_auth_reason_user_message in include/portal_auth.h.
@c(portal_auth_reason_user_message)
public func portalAuthReasonUserMessage(_ reason: portal_auth_reason) -> UnsafePointer<CChar>? {
    reasonTexts[reason]?.userMessage
}
