#if canImport(Glibc)
import Glibc
#endif

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

    /// The handler, and the calls of it under way. Replacing the handler waits for the calls
    /// of the one it replaces, so that a host may free what its handler uses (a C user_data,
    /// an interpreter about to shut down) as soon as `setHandler` returns.
    private final class State: @unchecked Sendable {
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private var handler: Handler?
        private var generation: UInt64 = 0
        /// The threads inside a handler, with the generation of the handler they called.
        private var calls: [(thread: pthread_t, generation: UInt64)] = []

        init() {
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(finished, nil)
        }

        func replace(with newHandler: Handler?) {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            handler = newHandler
            generation &+= 1
            let replaced = generation
            let me = pthread_self()
            // A handler that replaces itself does not wait for its own call.
            while calls.contains(where: { $0.generation < replaced && pthread_equal($0.thread, me) == 0 }) {
                pthread_cond_wait(finished, mutex)
            }
        }

        func emit(_ level: LogLevel, _ message: () -> String) {
            pthread_mutex_lock(mutex)
            guard let current = handler else {
                pthread_mutex_unlock(mutex)
                return
            }
            let call = (thread: pthread_self(), generation: generation)
            calls.append(call)
            pthread_mutex_unlock(mutex)

            current(level, message())

            pthread_mutex_lock(mutex)
            if let index = calls.firstIndex(where: { pthread_equal($0.thread, call.thread) != 0 && $0.generation == call.generation }) {
                calls.remove(at: index)
            }
            pthread_cond_broadcast(finished)
            pthread_mutex_unlock(mutex)
        }
    }

    private static let state = State()

    /// Installs (or with `nil` removes) the process-wide log handler. When it returns, the
    /// handler it replaced is no longer running on any other thread and is never called again.
    public static func setHandler(_ newHandler: Handler?) {
        state.replace(with: newHandler)
    }

    static func emit(_ level: LogLevel, _ message: @autoclosure () -> String) {
        state.emit(level, message)
    }
}
