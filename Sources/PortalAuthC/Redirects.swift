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

/// Exchanges the grant a redirect URL carries (docs/protocol.md §3). `url` is borrowed.
/// Returns PORTAL_AUTH_E_INVALID_ARGUMENT, and never calls back, for a NULL client, callback
/// or URL, or a URL that is not UTF-8.
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

/// Submits the user's code for a TOTP step; `code` is posted verbatim. Both strings are
/// borrowed. The callback's result is PORTAL_AUTH_RESULT_AUTHENTICATED on success.
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

/// Reads the persisted session (no network). The callback lends it, or NULL with no error
/// when none is stored. A stored entry that cannot be decoded is deleted (one warning line
/// says so, never its content) and reads as NULL; when that delete fails, the callback gets
/// SESSION_STORAGE_FAILURE with PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED and the entry stays.
/// Other storage failures leave the entry alone (portal_auth_error_reason tells which). The
/// session shares its state with every other of its token in the process (see
/// portal_auth_session_invalidate); a token invalidated here whose delete had failed is
/// deleted now, and reads as NULL.
@c(portal_auth_restore_session)
public func portalAuthRestoreSession(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_session_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startLendingCall(client, out_call, work: { try await $0.restoreSession() }) { outcome, lender in
        switch outcome {
        case .success(let session?):
            withSessionHandle(session, lentBy: lender) { done(user.raw, $0, nil) }
        case .success(nil):
            done(user.raw, nil, nil)
        case .failure(let error):
            withErrorHandle(error) { done(user.raw, nil, $0) }
        }
    }
}

/// Deletes the persisted session and forgets the client's memory of its last grant.
@c(portal_auth_clear_persisted_session)
public func portalAuthClearPersistedSession(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_done_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startCall(client, out_call, work: { try await $0.clearPersistedSession() }) { outcome in
        withErrorHandle(outcome.failureValue) { done(user.raw, $0) }
    }
}

/// PORTAL_AUTH_RESULT_AUTHENTICATED or PORTAL_AUTH_RESULT_TOTP_REQUIRED; 0 for NULL.
@c(portal_auth_result_kind)
public func portalAuthResultKind(_ result: UnsafePointer<portal_auth_result>?) -> portal_auth_result_type {
    switch ResultHandle.object(result)?.result {
    case .authenticated?: return PORTAL_AUTH_RESULT_AUTHENTICATED
    case .totpRequired?: return PORTAL_AUTH_RESULT_TOTP_REQUIRED
    case nil: return portal_auth_result_type(rawValue: 0)
    }
}

/// AUTHENTICATED: the session, lent for the callback (retain it to keep it); else NULL.
@c(portal_auth_result_session)
public func portalAuthResultSession(_ result: UnsafePointer<portal_auth_result>?) -> UnsafeMutablePointer<portal_auth_session>? {
    guard let box = ResultHandle.object(result), case .authenticated(let authenticated) = box.result else { return nil }
    // The box lives as long as the result: the result's own reference keeps it.
    let handle = SessionHandle.make(SessionBox.of(authenticated.session, lentBy: box.lender))
    box.keep(handle)
    return handle
}

/// AUTHENTICATED: the Portal Client id, or NULL when absent. Owned by the result.
@c(portal_auth_result_client_id)
public func portalAuthResultClientId(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.clientId.map { UnsafePointer($0.pointer) }
}

/// AUTHENTICATED: PORTAL_AUTH_YES, _NO, or _UNSET when the server did not say.
@c(portal_auth_result_is_account_abstracted)
public func portalAuthResultIsAccountAbstracted(_ result: UnsafePointer<portal_auth_result>?) -> portal_auth_tristate {
    guard case .authenticated(let authenticated)? = ResultHandle.object(result)?.result,
          let abstracted = authenticated.isAccountAbstracted
    else { return PORTAL_AUTH_UNSET }
    return abstracted ? PORTAL_AUTH_YES : PORTAL_AUTH_NO
}

/// TOTP_REQUIRED: the userJwt to pass to portal_auth_verify_totp. A secret: never log it.
/// Owned by the result, which wipes it when it goes: copy it to keep it beyond the callback.
@c(portal_auth_result_user_jwt)
public func portalAuthResultUserJwt(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.userJwt.map { UnsafePointer($0.pointer) }
}

/// TOTP_REQUIRED: the enrollment link (first sign-in only), else NULL. It embeds the TOTP
/// secret: never log it. Owned by the result, which wipes it when it goes.
@c(portal_auth_result_totp_link)
public func portalAuthResultTotpLink(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.totpLink.map { UnsafePointer($0.pointer) }
}

/// TOTP_REQUIRED: the user's id ("" when the server did not send it). Owned by the result.
@c(portal_auth_result_end_user_id)
public func portalAuthResultEndUserId(_ result: UnsafePointer<portal_auth_result>?) -> UnsafePointer<CChar>? {
    ResultHandle.object(result)?.endUserId.map { UnsafePointer($0.pointer) }
}

/// TOTP_REQUIRED: when the step expires, in whole seconds since the Unix epoch (the
/// userJwt's `exp`); 0 when the userJwt carries none, or for another kind.
@c(portal_auth_result_totp_expires_at)
public func portalAuthResultTotpExpiresAt(_ result: UnsafePointer<portal_auth_result>?) -> Int64 {
    guard case .totpRequired(let step)? = ResultHandle.object(result)?.result else { return 0 }
    return step.expiresAt ?? 0
}
