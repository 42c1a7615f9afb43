import CPortalAuth
import PortalAuthCore

/// What a portal_auth_error handle holds: a stable code, a message, and the case's fields.
/// Built from the core's errors, whose texts never carry a secret.
final class ErrorBox {
    let code: portal_auth_code
    let message: OwnedCString
    private(set) var name: OwnedCString?
    private(set) var path: OwnedCString?
    private(set) var missing: OwnedCString?
    private(set) var detail: OwnedCString?
    private(set) var method: OwnedCString?
    private(set) var httpStatus: Int32 = 0
    private(set) var body: OwnedCString?
    private(set) var url: OwnedCString?
    private(set) var reason = portal_auth_reason(PORTAL_AUTH_REASON_NONE)
    private(set) var retryAfter: Int64 = -1

    init(_ error: any Error) {
        var code = portal_auth_code(PORTAL_AUTH_E_INTERNAL)
        var described: Any = error
        switch error {
        case let error as PortalAuthError:
            switch error {
            case .invalidArgument(let name, let accepted):
                code = portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT)
                // Named, in the message too, as the caller wrote it.
                described = PortalAuthError.invalidArgument(name: Self.cName(name), accepted: accepted)
                self.name = OwnedCString(Self.cName(name))
            case .magicLinkNotConfigured:
                code = portal_auth_code(PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED)
            case .authMethodUnavailable(let method):
                code = portal_auth_code(PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE)
                self.method = OwnedCString(method.rawValue)
            case .authenticationFailed(let detail):
                code = portal_auth_code(PORTAL_AUTH_E_AUTHENTICATION_FAILED)
                self.detail = OwnedCString(detail)
            case .malformedResponse(let path, let missing):
                code = portal_auth_code(PORTAL_AUTH_E_MALFORMED_RESPONSE)
                self.path = OwnedCString(path)
                self.missing = missing.map(OwnedCString.init)
            case .invalidGrantResponse:
                code = portal_auth_code(PORTAL_AUTH_E_INVALID_GRANT_RESPONSE)
            case .invalidUserJwt(let detail):
                code = portal_auth_code(PORTAL_AUTH_E_INVALID_USER_JWT)
                self.detail = OwnedCString(detail)
            case .sessionStorageFailure(let reason, _):
                code = portal_auth_code(PORTAL_AUTH_E_SESSION_STORAGE_FAILURE)
                self.reason = CReason.of(reason).number
            case .accountAbstractionUnavailable(let detail):
                code = portal_auth_code(PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE)
                self.detail = OwnedCString(detail)
            case .rateLimited(let retryAfter):
                code = portal_auth_code(PORTAL_AUTH_E_RATE_LIMITED)
                self.retryAfter = retryAfter.map(Int64.init) ?? -1
            case .totpQrUnavailable:
                code = portal_auth_code(PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE)
            }
        case let error as PortalRequestsError:
            switch error {
            case .unauthorized(let reason):
                code = portal_auth_code(PORTAL_AUTH_E_UNAUTHORIZED)
                self.reason = reason.map { CReason.of($0).number } ?? portal_auth_reason(PORTAL_AUTH_REASON_NONE)
            case .httpStatus(_, let excerpt, let retryAfter):
                code = portal_auth_code(PORTAL_AUTH_E_HTTP_STATUS)
                body = excerpt.map(OwnedCString.init)
                self.retryAfter = retryAfter.map(Int64.init) ?? -1
            case .network(let failure, _):
                code = portal_auth_code(PORTAL_AUTH_E_NETWORK)
                self.reason = CReason.of(failure).number
            }
            httpStatus = Int32(error.status ?? 0)
        case is PortalCredentialError:
            code = portal_auth_code(PORTAL_AUTH_E_SESSION_INVALIDATED)
        case is CancellationError:
            code = portal_auth_code(PORTAL_AUTH_E_CANCELLED)
            described = Cancelled()
        case let error as PortalAuthSignInError:
            switch error {
            case .closed(let reason, _):
                code = portal_auth_code(PORTAL_AUTH_E_SIGN_IN_CLOSED)
                self.reason = CReason.of(reason).number
            case .unavailable(let reason, _, let url):
                code = portal_auth_code(PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE)
                self.reason = CReason.of(reason).number
                self.url = url.map(OwnedCString.init)
            case .signInInProgress: code = portal_auth_code(PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS)
            case .callbackIncomplete: code = portal_auth_code(PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE)
            }
        default:
            break
        }
        self.code = code
        // Only the library's own descriptions (a missing system library's names it, with
        // INTERNAL's code); an unknown error's text is not repeated.
        let known = code != portal_auth_code(PORTAL_AUTH_E_INTERNAL) || error is SystemLibraryUnavailable
        message = OwnedCString(known ? String(describing: described) : "An internal error occurred in portal-auth.")
    }

    /// Swift's cancellation, as a sentence.
    private struct Cancelled: CustomStringConvertible {
        var description: String { "The call was cancelled." }
    }

    /// The C spelling of an argument the core names: what the caller set in the options.
    private static func cName(_ name: String) -> String {
        switch name {
        case "authEnvironmentId": return "auth_environment_id"
        case "redirectUrl": return "redirect_url"
        case "apiHost": return "api_host"
        case "applicationId": return "application_id"
        case "directory": return "file_storage_path"
        case "caFile": return "ca_file"
        default: return name
        }
    }

    /// Hands a new error to C through `out` when the caller asked for one; returns its code.
    static func report(_ error: any Error, to out: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?) -> portal_auth_code {
        let box = ErrorBox(error)
        if let out { out.pointee = Handle<ErrorBox, portal_auth_error>.make(box) }
        return box.code
    }

    /// A synchronous call: `*out_error` is cleared first, and a failure of `body` is reported
    /// through it (see `report`).
    static func catching(_ out: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?,
                         _ body: () throws -> Void) -> portal_auth_code {
        out?.pointee = nil
        do {
            try body()
            return portal_auth_code(PORTAL_AUTH_OK)
        } catch {
            return report(error, to: out)
        }
    }
}

private typealias ErrorHandle = Handle<ErrorBox, portal_auth_error>

/// See portal_auth_error_code in include/portal_auth.h.
@c(portal_auth_error_code)
public func portalAuthErrorCode(_ error: UnsafePointer<portal_auth_error>?) -> portal_auth_code {
    ErrorHandle.object(error)?.code ?? portal_auth_code(PORTAL_AUTH_E_INTERNAL)
}

/// See portal_auth_error_message in include/portal_auth.h.
@c(portal_auth_error_message)
public func portalAuthErrorMessage(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error).map { UnsafePointer($0.message.pointer) }
}

/// See portal_auth_error_name in include/portal_auth.h.
@c(portal_auth_error_name)
public func portalAuthErrorName(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.name.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_path in include/portal_auth.h.
@c(portal_auth_error_path)
public func portalAuthErrorPath(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.path.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_missing in include/portal_auth.h.
@c(portal_auth_error_missing)
public func portalAuthErrorMissing(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.missing.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_detail in include/portal_auth.h.
@c(portal_auth_error_detail)
public func portalAuthErrorDetail(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.detail.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_method in include/portal_auth.h.
@c(portal_auth_error_method)
public func portalAuthErrorMethod(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.method.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_http_status in include/portal_auth.h.
@c(portal_auth_error_http_status)
public func portalAuthErrorHttpStatus(_ error: UnsafePointer<portal_auth_error>?) -> Int32 {
    ErrorHandle.object(error)?.httpStatus ?? 0
}

/// See portal_auth_error_body in include/portal_auth.h.
@c(portal_auth_error_body)
public func portalAuthErrorBody(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.body.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_url in include/portal_auth.h.
@c(portal_auth_error_url)
public func portalAuthErrorUrl(_ error: UnsafePointer<portal_auth_error>?) -> UnsafePointer<CChar>? {
    ErrorHandle.object(error)?.url.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_error_retry_after in include/portal_auth.h.
@c(portal_auth_error_retry_after)
public func portalAuthErrorRetryAfter(_ error: UnsafePointer<portal_auth_error>?) -> Int64 {
    ErrorHandle.object(error)?.retryAfter ?? -1
}

/// See portal_auth_error_reason in include/portal_auth.h.
@c(portal_auth_error_reason)
public func portalAuthErrorReason(_ error: UnsafePointer<portal_auth_error>?) -> portal_auth_reason {
    ErrorHandle.object(error)?.reason ?? portal_auth_reason(PORTAL_AUTH_REASON_NONE)
}

/// See portal_auth_error_free in include/portal_auth.h.
@c(portal_auth_error_free)
public func portalAuthErrorFree(_ error: UnsafeMutablePointer<portal_auth_error>?) {
    ErrorHandle.release(error)
}
