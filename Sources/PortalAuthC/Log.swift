import CPortalAuth
import PortalAuthCore
import Synchronization

/// The lowest level passed to the host's handler (portal_auth_set_log_level).
private let handledLevel = Atomic<UInt32>(PORTAL_AUTH_LOG_DEBUG.rawValue)

/// Installs (or with NULL removes) the process-wide log handler. The library is silent
/// until one is installed. When this returns, the handler it replaced is not running on any
/// other thread and is never called again, so its user_data may be freed. Returns
/// PORTAL_AUTH_OK.
@c(portal_auth_set_log_handler)
public func portalAuthSetLogHandler(_ handler: portal_auth_log_fn?, _ user_data: UnsafeMutableRawPointer?) -> portal_auth_code {
    guard let handler else {
        PortalAuthLog.setHandler(nil)
        return portal_auth_code(PORTAL_AUTH_OK)
    }
    let user = HostPointer(raw: user_data)
    PortalAuthLog.setHandler { level, message in
        let level = portal_auth_log_level(rawValue: UInt32(level.rawValue))
        guard level.rawValue >= handledLevel.load(ordering: .relaxed) else { return }
        message.withCString { handler(user.raw, level, $0) }
    }
    return portal_auth_code(PORTAL_AUTH_OK)
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
    handledLevel.store(level.rawValue, ordering: .relaxed)
    return portal_auth_code(PORTAL_AUTH_OK)
}
