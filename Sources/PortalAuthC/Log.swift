import CPortalAuth
import PortalAuthCore

/// Installs (or with NULL removes) the process-wide log handler. The library is silent
/// until one is installed. When this returns, the handler it replaced is not running on any
/// other thread and is never called again, so its user_data may be freed.
@c(portal_auth_set_log_handler)
public func portalAuthSetLogHandler(_ handler: portal_auth_log_fn?, _ user_data: UnsafeMutableRawPointer?) {
    guard let handler else { return PortalAuthLog.setHandler(nil) }
    let user = HostPointer(raw: user_data)
    PortalAuthLog.setHandler { level, message in
        message.withCString { handler(user.raw, Int32(level.rawValue), $0) }
    }
}
