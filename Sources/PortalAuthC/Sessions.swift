import CPortalAuth
import PortalAuthCore
#if canImport(Glibc)
import Glibc
#endif

/// What a portal_auth_session handle holds. One box per live session, so a replayed
/// redirect hands the host the pointer it already holds.
final class SessionBox: Sendable, ProcessBound {
    let session: PortalSession
    let endUserId: OwnedCStringBox
    let generation = ProcessFork.generation
    /// The client whose call lent the session last (docs/desktop.md "C ABI contract"): its
    /// invalidation completes through that client's dispatcher.
    private let lender = Locked<SessionLender?>(nil)

    /// Where the session's invalidation completes: as the call that lent it last.
    var invalidationRoute: Dispatcher { lender.withLock { $0 }?.route ?? .direct }

    private init(_ session: PortalSession) {
        self.session = session
        endUserId = OwnedCStringBox(session.endUserId)
    }

    private struct WeakBox: @unchecked Sendable {
        weak var box: SessionBox?
    }

    /// A forked child's is its own.
    private static var live: Locked<[ObjectIdentifier: WeakBox]> { registry.value }
    private static let registry = PerProcess { Locked<[ObjectIdentifier: WeakBox]>([:]) }

    /// The box of `session`, to lend to the host from a call of `lender`: the live one if the
    /// host still holds it, else a new one.
    static func of(_ session: PortalSession, lentBy lender: SessionLender) -> SessionBox {
        let box = live.withLock { live in
            if let box = live[ObjectIdentifier(session)]?.box { return box }
            live = live.filter { $0.value.box != nil }
            let box = SessionBox(session)
            live[ObjectIdentifier(session)] = WeakBox(box: box)
            return box
        }
        box.lender.withLock { $0 = lender }
        return box
    }
}

/// An OwnedCString that may cross threads: immutable after creation.
final class OwnedCStringBox: @unchecked Sendable {
    let string: OwnedCString
    init(_ text: String) { string = OwnedCString(text) }
}

typealias SessionHandle = Handle<SessionBox, portal_auth_session>

/// Lends `session` to `body` as a handle, from a call of `lender`: valid for the call, kept
/// only if the host retains it.
func withSessionHandle(_ session: PortalSession, lentBy lender: SessionLender, _ body: (UnsafeMutablePointer<portal_auth_session>) -> Void) {
    let handle = SessionHandle.make(SessionBox.of(session, lentBy: lender))
    defer { SessionHandle.release(handle) }
    body(handle)
}

/// See portal_auth_session_retain in include/portal_auth.h.
@c(portal_auth_session_retain)
public func portalAuthSessionRetain(_ session: UnsafeMutablePointer<portal_auth_session>?) -> UnsafeMutablePointer<portal_auth_session>? {
    guard let session else { return nil }
    _ = Unmanaged<SessionBox>.fromOpaque(UnsafeRawPointer(session)).retain()
    return session
}

/// See portal_auth_session_release in include/portal_auth.h.
@c(portal_auth_session_release)
public func portalAuthSessionRelease(_ session: UnsafeMutablePointer<portal_auth_session>?) {
    SessionHandle.release(session)
}

/// See portal_auth_session_end_user_id in include/portal_auth.h.
@c(portal_auth_session_end_user_id)
public func portalAuthSessionEndUserId(_ session: UnsafePointer<portal_auth_session>?) -> UnsafePointer<CChar>? {
    SessionHandle.object(session).map { UnsafePointer($0.endUserId.string.pointer) }
}

/// See portal_auth_session_copy_token in include/portal_auth.h.
@c(portal_auth_session_copy_token)
public func portalAuthSessionCopyToken(
    _ session: UnsafePointer<portal_auth_session>?,
    _ out_token: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ out_error: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_error>?>?
) -> portal_auth_code {
    out_token?.pointee = nil
    out_error?.pointee = nil
    do {
        guard let box = SessionHandle.object(session), let out_token else {
            throw PortalAuthError.invalidArgument(name: session == nil ? "session" : "out_token")
        }
        guard let copy = SecretMemory.copy(try box.session.getToken()) else { throw OutOfMemory() }
        out_token.pointee = copy
        return portal_auth_code(PORTAL_AUTH_OK)
    } catch {
        return ErrorBox.report(error, to: out_error)
    }
}

/// See portal_auth_string_free in include/portal_auth.h.
@c(portal_auth_string_free)
public func portalAuthStringFree(_ string: UnsafeMutablePointer<CChar>?) {
    SecretMemory.freeString(string)
}

/// See portal_auth_session_invalidate in include/portal_auth.h.
@c(portal_auth_session_invalidate)
public func portalAuthSessionInvalidate(
    _ session: UnsafeMutablePointer<portal_auth_session>?,
    _ done: portal_auth_done_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done, let box = SessionHandle.object(session) else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startTask(dispatcher: box.invalidationRoute, out_call, work: { try await box.session.invalidate() }) { outcome in
        withErrorHandle(outcome.failureValue) { done(user.raw, $0) }
    }
}
