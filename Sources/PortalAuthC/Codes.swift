import CPortalAuth

/// The codes of portal_auth_code as the header names them after its prefix, each with a
/// sentence for a developer when only the code is at hand (a call refused before it made an
/// error, a binding's own failure): portal_auth_code_name and portal_auth_code_message, as
/// curl_easy_strerror and sqlite3_errstr are for theirs. Built once, when first read, and
/// never changed: safe to share.
nonisolated(unsafe) private let codeTexts: [portal_auth_code: (name: UnsafePointer<CChar>, message: UnsafePointer<CChar>)] = {
    let table: [(Int, String, String)] = [
        (PORTAL_AUTH_OK, "OK", "Success."),
        (PORTAL_AUTH_E_INVALID_ARGUMENT, "INVALID_ARGUMENT", "An argument or option is unusable."),
        (PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED, "MAGIC_LINK_NOT_CONFIGURED", "The client has no magic-link options."),
        (PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE, "AUTH_METHOD_UNAVAILABLE", "The environment has not enabled this sign-in method."),
        (PORTAL_AUTH_E_AUTHENTICATION_FAILED, "AUTHENTICATION_FAILED", "The redirect carried an error instead of a grant."),
        (PORTAL_AUTH_E_MALFORMED_RESPONSE, "MALFORMED_RESPONSE", "Portal's response is not what the protocol says."),
        (PORTAL_AUTH_E_INVALID_GRANT_RESPONSE, "INVALID_GRANT_RESPONSE", "The grant's exchange gave neither a session nor a TOTP step."),
        (PORTAL_AUTH_E_INVALID_USER_JWT, "INVALID_USER_JWT", "The TOTP step's userJwt cannot be read."),
        (PORTAL_AUTH_E_SESSION_STORAGE_FAILURE, "SESSION_STORAGE_FAILURE", "The session could not be read, kept or removed."),
        (PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE, "ACCOUNT_ABSTRACTION_UNAVAILABLE",
         "The environment cannot make an account-abstracted wallet."),
        (PORTAL_AUTH_E_RATE_LIMITED, "RATE_LIMITED", "Portal sends no more emails for now."),
        (PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, "TOTP_QR_UNAVAILABLE", "The link cannot be made into a QR code."),
        (PORTAL_AUTH_E_UNAUTHORIZED, "UNAUTHORIZED", "Portal refused the request (HTTP 401)."),
        (PORTAL_AUTH_E_HTTP_STATUS, "HTTP_STATUS", "Portal answered with an unexpected HTTP status."),
        (PORTAL_AUTH_E_NETWORK, "NETWORK", "No response came from Portal."),
        (PORTAL_AUTH_E_SESSION_INVALIDATED, "SESSION_INVALIDATED", "The session was invalidated."),
        (PORTAL_AUTH_E_CANCELLED, "CANCELLED", "The call was cancelled."),
        (PORTAL_AUTH_E_SIGN_IN_CLOSED, "SIGN_IN_CLOSED", "The sign-in ended before the redirect came."),
        (PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE, "SIGN_IN_UNAVAILABLE", "The sign-in cannot start here."),
        (PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS, "SIGN_IN_IN_PROGRESS", "Another sign-in of this client is running."),
        (PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE, "SIGN_IN_CALLBACK_INCOMPLETE", "The redirect carried neither a grant nor an error."),
        (PORTAL_AUTH_E_INTERNAL, "INTERNAL", "The library failed inside."),
    ]
    // The strings live as long as the process, as the header promises.
    return Dictionary(uniqueKeysWithValues: table.map { (portal_auth_code($0.0), (staticCString($0.1), staticCString($0.2))) })
}()

/// See portal_auth_code_name in include/portal_auth.h.
@c(portal_auth_code_name)
public func portalAuthCodeName(_ code: portal_auth_code) -> UnsafePointer<CChar>? {
    codeTexts[code]?.name
}

/// See portal_auth_code_message in include/portal_auth.h.
@c(portal_auth_code_message)
public func portalAuthCodeMessage(_ code: portal_auth_code) -> UnsafePointer<CChar>? {
    codeTexts[code]?.message
}
