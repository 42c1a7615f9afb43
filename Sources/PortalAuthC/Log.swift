import CPortalAuth
import PortalAuthCore

/// Installs (or with NULL removes) the process-wide log handler, called on the thread that
/// logs: a library thread, or the one running the completion queue for the calls it drives. The library is silent until one is installed. It replaces a queued handler
/// (portal_auth_set_queued_log_handler). When this returns, the handler it replaced is not
/// running on any other thread and is never called again, so its user_data may be freed.
/// Returns PORTAL_AUTH_OK.
@c(portal_auth_set_log_handler)
public func portalAuthSetLogHandler(_ handler: portal_auth_log_fn?, _ user_data: UnsafeMutableRawPointer?) -> portal_auth_code {
    PortalAuthLog.setHandler(forwarding(to: handler, user_data))
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// Installs (or with NULL removes) the process-wide log handler, called from
/// portal_auth_run_completions on the thread that runs it, never on a library thread: each
/// line is queued as it is logged, beside the completions, and makes the completion queue's
/// descriptor readable. Lines still queued when the handler is replaced are dropped. It
/// replaces a handler of portal_auth_set_log_handler; when this returns, the handler it
/// replaced is not running on any other thread and is never called again. Returns
/// PORTAL_AUTH_E_INTERNAL, and changes nothing, when the completion queue has no descriptor.
@c(portal_auth_set_queued_log_handler)
public func portalAuthSetQueuedLogHandler(_ handler: portal_auth_log_fn?, _ user_data: UnsafeMutableRawPointer?) -> portal_auth_code {
    guard let forward = forwarding(to: handler, user_data) else {
        PortalAuthLog.setHandler(nil)
        return portal_auth_code(PORTAL_AUTH_OK)
    }
    guard let queue = CompletionQueue.shared else { return portal_auth_code(PORTAL_AUTH_E_INTERNAL) }
    PortalAuthLog.setHandler(forward, through: queue)
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// The host's handler as the core's, or nil for NULL.
private func forwarding(to handler: portal_auth_log_fn?, _ userData: UnsafeMutableRawPointer?) -> PortalAuthLog.Handler? {
    guard let handler else { return nil }
    let user = HostPointer(raw: userData)
    return { level, message in
        message.withCString { handler(user.raw, portal_auth_log_level(rawValue: UInt32(level.rawValue)), $0) }
    }
}

/// Passes only lines at `level` and above to the log handler, for lines emitted after this
/// returns; PORTAL_AUTH_LOG_NONE passes none. By default every line (PORTAL_AUTH_LOG_DEBUG).
/// Process-wide, like the handler: a host whose own filter drops the lower levels (a
/// logging framework's level) spares itself their calls, which for an interpreter's
/// callback cost more than the line. Returns PORTAL_AUTH_E_INVALID_ARGUMENT for a value
/// that is not a PORTAL_AUTH_LOG_* level.
@c(portal_auth_set_log_level)
public func portalAuthSetLogLevel(_ level: portal_auth_log_level) -> portal_auth_code {
    guard level.rawValue <= PORTAL_AUTH_LOG_NONE.rawValue else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    PortalAuthLog.setLowestLevel(Int(level.rawValue))
    return portal_auth_code(PORTAL_AUTH_OK)
}
