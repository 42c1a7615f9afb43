import CPortalAuth
import PortalAuthCore

/// See portal_auth_set_log_handler in include/portal_auth.h.
@c(portal_auth_set_log_handler)
public func portalAuthSetLogHandler(_ handler: portal_auth_log_fn?, _ user_data: UnsafeMutableRawPointer?) -> portal_auth_code {
    PortalAuthLog.setHandler(forwarding(to: handler, user_data))
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// See portal_auth_set_queued_log_handler in include/portal_auth.h.
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

/// See portal_auth_set_log_level in include/portal_auth.h.
@c(portal_auth_set_log_level)
public func portalAuthSetLogLevel(_ level: portal_auth_log_level) -> portal_auth_code {
    guard level.rawValue <= PORTAL_AUTH_LOG_NONE.rawValue else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    PortalAuthLog.setLowestLevel(Int(level.rawValue))
    return portal_auth_code(PORTAL_AUTH_OK)
}
