import Synchronization

/// Severity of a library log line.
public enum LogLevel: Int, Sendable, Comparable {
    case debug = 0, info, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The library's log output: silent until a host installs a handler.
///
/// Log lines name the `endUserId` where useful and never carry a token, a grant, a
/// `userJwt`, a TOTP link or secret, or a stored value.
public enum PortalAuthLog {
    public typealias Handler = @Sendable (LogLevel, String) -> Void

    private static let handler = Mutex<Handler?>(nil)

    /// Installs (or with `nil` removes) the process-wide log handler.
    public static func setHandler(_ newHandler: Handler?) {
        handler.withLock { $0 = newHandler }
    }

    static func emit(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard let current = handler.withLock({ $0 }) else { return }
        current(level, message())
    }
}
