import CPortalAuth
import PortalAuthCore
import Synchronization

/// The lowest level passed to the host's handler (portal_auth_set_log_level).
private let handledLevel = Atomic<Int32>(Int32(PORTAL_AUTH_LOG_DEBUG))

/// Installs (or with NULL removes) the process-wide log handler. The library is silent
/// until one is installed. When this returns, the handler it replaced is not running on any
/// other thread and is never called again, so its user_data may be freed.
@c(portal_auth_set_log_handler)
public func portalAuthSetLogHandler(_ handler: portal_auth_log_fn?, _ user_data: UnsafeMutableRawPointer?) {
    guard let handler else { return PortalAuthLog.setHandler(nil) }
    let user = HostPointer(raw: user_data)
    PortalAuthLog.setHandler { level, message in
        let level = Int32(level.rawValue)
        guard level >= handledLevel.load(ordering: .relaxed) else { return }
        message.withCString { handler(user.raw, level, $0) }
    }
}

/// Passes only lines at `level` (a PORTAL_AUTH_LOG_* value) and above to the log handler,
/// for lines emitted after this returns; above PORTAL_AUTH_LOG_ERROR, none. By default every
/// line (PORTAL_AUTH_LOG_DEBUG). Process-wide, like the handler: a host whose own filter
/// drops the lower levels (a logging framework's level) spares itself their calls, which
/// for an interpreter's callback cost more than the line.
@c(portal_auth_set_log_level)
public func portalAuthSetLogLevel(_ level: Int32) {
    handledLevel.store(level, ordering: .relaxed)
}
