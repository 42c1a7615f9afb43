import CPortalAuth
import PortalAuthCore

/// See portal_auth_restore_session in include/portal_auth.h.
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

/// See portal_auth_clear_persisted_session in include/portal_auth.h.
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
