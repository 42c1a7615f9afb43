#if canImport(Glibc)
import Glibc
#endif
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

    private static var state: LogHandlerSlot { slot.value }
    /// A forked child's carries on with the handler installed in the parent.
    private static let slot = PerProcess<LogHandlerSlot> { previous in LogHandlerSlot(continuing: previous) }
    /// Lines below this level (a LogLevel raw value; above .error: no line) are dropped
    /// before their message is even made.
    private static let lowestLevel = Atomic<Int>(LogLevel.debug.rawValue)

    /// Installs (or with `nil` removes) the process-wide log handler, called on the library
    /// thread that logs. When it returns, the handler it replaced is no longer running on any
    /// other thread and is never called again.
    public static func setHandler(_ newHandler: Handler?) {
        state.replace(with: newHandler, queue: nil)
    }

    /// Installs (or with `nil` removes) the process-wide log handler, called by `queue`'s
    /// run on the thread that runs it: each line is queued as it is logged. Lines still
    /// queued for a handler that has been replaced are dropped. When it returns, the handler
    /// it replaced is no longer running on any other thread and is never called again.
    public static func setHandler(_ newHandler: Handler?, through queue: CompletionQueue) {
        state.replace(with: newHandler, queue: newHandler == nil ? nil : queue)
    }

    /// Passes only lines at `raw` (a LogLevel raw value) and above to the handler, for lines
    /// logged after this returns.
    public static func setLowestLevel(_ raw: Int) {
        lowestLevel.store(raw, ordering: .relaxed)
    }

    static func emit(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level.rawValue >= lowestLevel.load(ordering: .relaxed) else { return }
        state.emit(level, message)
    }
}

/// The handler, and the calls of it under way. Replacing the handler waits for the calls
/// of the one it replaces, so that a host may free what its handler uses (a C user_data,
/// an interpreter about to shut down) as soon as `setHandler` returns.
final class LogHandlerSlot: @unchecked Sendable {
    typealias Handler = PortalAuthLog.Handler

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var handler: Handler?
    /// Set: lines are queued there, and the handler is called by the queue's run, on the
    /// host's thread.
    private var queue: CompletionQueue?
    private var generation: UInt64 = 0
    /// The threads inside a handler, with the generation of the handler they called.
    private var calls: [(thread: pthread_t, generation: UInt64)] = []

    /// With the handler of `previous` (a forked parent's slot, which nobody else touches
    /// here), queued through this process's queue if it was through the parent's; none of its
    /// calls under way, which were the parent's threads'.
    init(continuing previous: LogHandlerSlot?) {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(finished, nil)
        if let previous {
            handler = previous.handler
            queue = previous.queue == nil ? nil : CompletionQueue.shared
            generation = previous.generation
        }
    }

    deinit {
        pthread_cond_destroy(finished)
        pthread_mutex_destroy(mutex)
        finished.deallocate()
        mutex.deallocate()
    }

    func replace(with newHandler: Handler?, queue newQueue: CompletionQueue?) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        handler = newHandler
        queue = newQueue
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
        let emitted = generation
        // Called where the line is logged, maybe inside a call's step in a queue's run.
        guard let queue else { return call(current, emitted) { CompletionQueue.hostCode { current(level, message()) } } }
        pthread_mutex_unlock(mutex)
        let text = message()
        queue.push { [self] in deliver(level, text, emitted) }
    }

    /// A queued line, on the thread running the queue: passed to the handler it was
    /// emitted for, unless that one has been replaced since.
    private func deliver(_ level: LogLevel, _ text: String, _ emitted: UInt64) {
        pthread_mutex_lock(mutex)
        guard emitted == generation, let current = handler else {
            pthread_mutex_unlock(mutex)
            return
        }
        call(current, emitted) { current(level, text) }
    }

    /// Runs `body` (a call of `current`) as a call under way, which `replace` waits for.
    /// Entered with the mutex held; returns with it released.
    private func call(_ current: Handler, _ emitted: UInt64, _ body: () -> Void) {
        let call = (thread: pthread_self(), generation: emitted)
        calls.append(call)
        pthread_mutex_unlock(mutex)

        body()

        pthread_mutex_lock(mutex)
        if let index = calls.firstIndex(where: { pthread_equal($0.thread, call.thread) != 0 && $0.generation == call.generation }) {
            calls.remove(at: index)
        }
        pthread_cond_broadcast(finished)
        pthread_mutex_unlock(mutex)
    }
}
