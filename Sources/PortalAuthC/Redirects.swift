import CPortalAuth
import PortalAuthCore

/// What a portal_auth_result handle holds during its callback.
final class ResultBox {
    let result: AuthResult
    // The strings C reads, owned for the callback's duration.
    let clientId: OwnedCString?
    let userJwt: OwnedCString?
    let totpLink: OwnedCString?
    let endUserId: OwnedCString?
    /// The call that lent the result, which lends its session.
    let lender: SessionLender
    /// Session handles lent through this result, released with it.
    private var lentSessions: [UnsafeMutablePointer<portal_auth_session>] = []

    init(_ result: AuthResult, lentBy lender: SessionLender) {
        self.result = result
        self.lender = lender
        switch result {
        case .authenticated(let authenticated):
            clientId = authenticated.clientId.map(OwnedCString.init)
            (userJwt, totpLink, endUserId) = (nil, nil, nil)
        case .totpRequired(let step):
            clientId = nil
            userJwt = OwnedCString(step.userJwt)
            totpLink = step.totpLink.map(OwnedCString.init)
            endUserId = OwnedCString(step.endUserId)
        }
    }

    deinit {
        lentSessions.forEach(SessionHandle.release)
    }

    func keep(_ session: UnsafeMutablePointer<portal_auth_session>) {
        lentSessions.append(session)
    }
}

private typealias ResultHandle = Handle<ResultBox, portal_auth_result>

/// Lends a result handle to `body`, from a call of `lender`; the session inside is lent with it.
func withResultHandle(_ result: AuthResult, lentBy lender: SessionLender, _ body: (UnsafePointer<portal_auth_result>) -> Void) {
    let handle = ResultHandle.make(ResultBox(result, lentBy: lender))
    defer { ResultHandle.release(handle) }
    body(UnsafePointer(handle))
}

/// Calls `done` with the outcome of a call of `lender` that signs a user in.
func deliver(_ outcome: Result<AuthResult?, any Error>, lentBy lender: SessionLender, _ done: portal_auth_result_fn, _ user: HostPointer) {
    switch outcome {
    case .success(let result?):
        withResultHandle(result, lentBy: lender) { done(user.raw, $0, nil) }
    case .success(nil):
        done(user.raw, nil, nil)
    case .failure(let error):
        withErrorHandle(error) { done(user.raw, nil, $0) }
    }
}

/// See portal_auth_handle_redirect in include/portal_auth.h.
@c(portal_auth_handle_redirect)
public func portalAuthHandleRedirect(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ url: UnsafePointer<CChar>?,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done, let url = try? CText.read(url) else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startLendingCall(client, out_call, work: { try await $0.handleRedirect(url) }) { deliver($0, lentBy: $1, done, user) }
}

/// See portal_auth_verify_totp in include/portal_auth.h.
@c(portal_auth_verify_totp)
public func portalAuthVerifyTotp(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ code: UnsafePointer<CChar>?,
    _ user_jwt: UnsafePointer<CChar>?,
    _ done: portal_auth_result_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done, let code = try? CText.read(code), let jwt = try? CText.read(user_jwt) else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startLendingCall(client, out_call, work: { auth -> AuthResult? in
        .authenticated(try await auth.verifyTotp(code, userJwt: jwt))
    }) { deliver($0, lentBy: $1, done, user) }
}

/// See portal_auth_result_kind in include/portal_auth.h.
@c(portal_auth_result_kind)
public func portalAuthResultKind(_ result: UnsafePointer<portal_auth_result>?) -> portal_auth_result_type {
    switch ResultHandle.object(result)?.result {
    case .authenticated?: return PORTAL_AUTH_RESULT_AUTHENTICATED
    case .totpRequired?: return PORTAL_AUTH_RESULT_TOTP_REQUIRED
    case nil: return portal_auth_result_type(rawValue: 0)
    }
}

/// See portal_auth_result_session in include/portal_auth.h.
@c(portal_auth_result_session)
public func portalAuthResultSession(_ result: UnsafePointer<portal_auth_result>?) -> UnsafeMutablePointer<portal_auth_session>? {
    guard let box = ResultHandle.object(result), case .authenticated(let authenticated) = box.result else { return nil }
    // The box lives as long as the result: the result's own reference keeps it.
    let handle = SessionHandle.make(SessionBox.of(authenticated.session, lentBy: box.lender))
    box.keep(handle)
    return handle
}

/// See portal_auth_result_client_id in include/portal_auth.h.
@c(portal_auth_result_client_id)
public func portalAuthResultClientId(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.clientId.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_result_is_account_abstracted in include/portal_auth.h.
@c(portal_auth_result_is_account_abstracted)
public func portalAuthResultIsAccountAbstracted(_ result: UnsafePointer<portal_auth_result>?) -> portal_auth_tristate {
    guard case .authenticated(let authenticated)? = ResultHandle.object(result)?.result,
          let abstracted = authenticated.isAccountAbstracted
    else { return PORTAL_AUTH_UNSET }
    return abstracted ? PORTAL_AUTH_YES : PORTAL_AUTH_NO
}

/// See portal_auth_result_user_jwt in include/portal_auth.h.
@c(portal_auth_result_user_jwt)
public func portalAuthResultUserJwt(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.userJwt.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_result_totp_link in include/portal_auth.h.
@c(portal_auth_result_totp_link)
public func portalAuthResultTotpLink(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.totpLink.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_result_end_user_id in include/portal_auth.h.
@c(portal_auth_result_end_user_id)
public func portalAuthResultEndUserId(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.endUserId.map { UnsafePointer($0.pointer) }
}

/// See portal_auth_result_totp_expires_at in include/portal_auth.h.
@c(portal_auth_result_totp_expires_at)
public func portalAuthResultTotpExpiresAt(_ result: UnsafePointer<portal_auth_result>?) -> Int64 {
    guard case .totpRequired(let step)? = ResultHandle.object(result)?.result else { return 0 }
    return step.expiresAt ?? 0
}
