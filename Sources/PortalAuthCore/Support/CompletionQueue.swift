import CPosix
import CProcess
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Work for the host's own thread, done by whichever thread calls `run()`: the completions
/// that calls hand over, and, for calls whose tasks prefer the queue as their executor, the
/// calls' own work and the HTTP they wait on (a `CompletionQueueDriver`). One descriptor
/// tells the host's event loop (poll, GLib, asyncio, tokio) when there is some: an epoll set
/// holding an eventfd that is signalled exactly while jobs are pending, and the driver's
/// descriptors (connections, a timer) while it has transfers in flight.
///
/// The C ABI's completion queues: the process's (portal_auth_completion_fd) and those a
/// host component makes for itself (portal_auth_completion_queue_new); Swift code awaits its
/// calls instead. A host's queue, once the host lets go of it (`retire()`), is run by the
/// I/O thread, completions included, until nothing of it is left. The eventfd's counter is non-zero exactly while jobs are pending, but for those
/// that a thread advancing the calls queues for itself: the push that fills an empty queue
/// signals it once, and the take that empties the queue drains that signal. The push signals
/// after letting go of the lock, because the write wakes the host's thread, which would
/// otherwise find the lock still held (often by the thread it has just displaced from its
/// CPU); so a take whose jobs' signal is still on its way waits for it to land before
/// draining it, and the counter is never left set for jobs taken. A call's steps, run inside
/// `advanceCalls`, queue its next step and its completion, which that same run takes as a
/// rule: they go unsignalled (a write and a read saved, twice a call), and whatever the run
/// leaves is signalled as it ends. Host code that a step calls runs through `hostCode`, as
/// outside the run.
public final class CompletionQueue: TaskExecutor, Sendable {
    public typealias Job = @Sendable () -> Void

    /// The process's queue, made by its first use; nil when no descriptor was left for it. A
    /// forked child's is its own, on the same descriptor numbers (`CProcess`).
    public static var shared: CompletionQueue? { perProcess.value }

    private static let perProcess = PerProcess<CompletionQueue?> {
        var (poller, event): (Int32, Int32) = (-1, -1)
        if pa_fork_kept_queue(&poller, &event) != 0 { return CompletionQueue(adopting: poller, event) }
        let queue = CompletionQueue()
        if let queue { pa_fork_keep_queue(queue.descriptor, queue.signal.fd) }
        return queue
    }

    /// A queue a host component made for itself, watched by the I/O thread (`attendAll`);
    /// nil when no descriptor was left for it.
    public static func hostQueue() -> CompletionQueue? {
        guard let queue = CompletionQueue() else { return nil }
        hostQueues.withLock { queues in
            queues.removeAll { $0.queue == nil }
            queues.append(WeakQueue(queue: queue))
        }
        return queue
    }

    private struct WeakQueue: Sendable {
        weak var queue: CompletionQueue?
    }

    /// The hosts' queues still alive: few, one per component that made one.
    private static let hostQueues = Locked<[WeakQueue]>([])

    private struct Pending {
        /// Completions, and the lines of a queued log handler: the host's code.
        var completions: [Job] = []
        /// Steps of the tasks that prefer the queue: the library's own work.
        var tasks: [UnownedJob] = []
        /// The eventfd is signalled (or its write is on its way) for the jobs pending.
        var signalled = false
        /// The threads inside `advanceCalls` now (a handful: the hosts' threads that run the
        /// queue at once, and the I/O thread attending to it).
        var advancing: [pthread_t] = []
        var isEmpty: Bool { completions.isEmpty && tasks.isEmpty }

        /// Whether the jobs pending need the signal that no one has sent yet: not while the
        /// thread that queued them is advancing the calls (it takes them itself, or signals
        /// what it leaves as it stops).
        mutating func claimSignal(for thread: pthread_t) -> Bool {
            guard !isEmpty, !signalled, !advancing.contains(where: { pthread_equal($0, thread) != 0 }) else { return false }
            signalled = true
            return true
        }
    }

    /// Rounds of the calls' work in one run (the driver's I/O, then the steps ready): enough
    /// for a call's request, response and result, with a session's write between; a burst
    /// of work beyond them waits for the next run, so a run never holds a host's loop long.
    private static let roundsPerRun = 8
    /// A library thread does the calls' work (never the completions) once no run has begun
    /// for this long while some is ready (`attend()`).
    private static let unattendedNanoseconds: UInt64 = 1_000_000_000

    private let pending = Locked(Pending())
    /// The host has let go of the queue: the I/O thread runs it from now on.
    private let retired = Atomic(false)
    /// When the last run began, on CLOCK_MONOTONIC.
    private let lastRun = Atomic<UInt64>(0)
    private let signal: WakeSignal
    private let driver = Locked<(any CompletionQueueDriver)?>(nil)

    /// The descriptor to poll for reading: the epoll set.
    public let descriptor: Int32

    /// Nil when no descriptor is left.
    public init?() {
        guard let signal = WakeSignal() else { return nil }
        let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard poller >= 0 else { return nil }
        guard pa_epoll_watch(poller, signal.fd, UInt32(EPOLLIN.rawValue)) == 0 else {
            _ = close(poller)
            return nil
        }
        self.signal = signal
        descriptor = poller
    }

    /// Over an epoll set that already watches `event` (a forked child's renewed descriptors).
    private init(adopting poller: Int32, _ event: Int32) {
        signal = WakeSignal(adopting: event)
        descriptor = poller
    }

    deinit { _ = close(descriptor) }

    /// The driver whose descriptors share the epoll set, which each run advances first: the
    /// one installed, else the one `make` gives (nil: none, and nothing installed).
    public func driver<Driver: CompletionQueueDriver>(madeBy make: () -> Driver?) -> Driver? {
        driver.withLock { installed in
            if let existing = installed as? Driver { return existing }
            let made = make()
            if let made { installed = made }
            return made
        }
    }

    /// The host will run this queue no more (its handle is freed): the I/O thread does, its
    /// calls' work and their completions, on its next turn and on each one after while the
    /// descriptor is readable, so every call still completes exactly once.
    public func retire() {
        retired.store(true, ordering: .releasing)
        HTTPEngine.shared.wakeIOThread()
    }

    /// Queues `job` for the next `run()`; any thread.
    public func push(_ job: @escaping Job) {
        add { $0.completions.append(job) }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        if !Self.executing.load(ordering: .relaxed) { Self.executing.store(true, ordering: .releasing) }
        let job = UnownedJob(job)
        add { $0.tasks.append(job) }
    }

    private func add(_ body: (inout Pending) -> Void) {
        update { pending in
            body(&pending)
            return true
        }
    }

    /// Changes `pending` under its lock; then, if `change` says the jobs may need it, sends
    /// the signal they are due (after letting go of the lock).
    private func update(_ change: (inout Pending) -> Bool) {
        let thread = pthread_self()
        let signals = pending.withLock { pending in change(&pending) && pending.claimSignal(for: thread) }
        if signals { signal.signal() }
    }

    /// Takes the jobs of one kind, draining the signal when none of either kind is left.
    private func take<Item: Sendable>(_ kind: WritableKeyPath<Pending, [Item]>) -> [Item] {
        pending.withLock { pending -> [Item] in
            let taken = pending[keyPath: kind]
            guard !taken.isEmpty else { return [] }
            pending[keyPath: kind] = []
            if pending.isEmpty, pending.signalled {
                signal.drainLanded()
                pending.signalled = false
            }
            return taken
        }
    }

    /// Does, on the calling thread, the library's work that is ready (the driver's I/O, the
    /// tasks' steps, and those their progress makes ready in turn, for `roundsPerRun`
    /// rounds), then runs every completion pending at that point; those queued meanwhile (a
    /// completion that starts a call) wait for the next run, the descriptor readable again.
    /// Returns how many completions ran. Completions may call `run()` themselves.
    @discardableResult
    public func run() -> Int {
        lastRun.store(Self.now(), ordering: .relaxed)
        let completions = advanceCalls(takingCompletions: true)
        for job in completions { job() }
        return completions.count
    }

    /// Set once a task has preferred a queue: from then on the I/O thread attends to the
    /// queues (`attendAll`), and host code called inside its steps may need `hostCode`.
    private static let executing = Atomic(false)

    /// Runs `body`, host code that the library's work calls where it stands (a log handler
    /// called as a line is logged), on the process's queue's terms below.
    public static func hostCode<T>(_ body: () throws -> T) rethrows -> T {
        guard executing.load(ordering: .acquiring), let queue = HTTPEngine.drivingQueue else { return try body() }
        return try queue.hostCode(body)
    }

    /// Runs `body` as outside any run of this queue, even when a call's step on this thread
    /// calls it: what is pending is signalled first, and what `body` queues (a call it
    /// starts) is signalled as from any other thread. So host code may wait for the
    /// descriptor, or for another thread that runs the queue, without waiting for itself.
    public func hostCode<T>(_ body: () throws -> T) rethrows -> T {
        let thread = pthread_self()
        var setAside = 0
        update { pending in
            let before = pending.advancing.count
            pending.advancing.removeAll { pthread_equal($0, thread) != 0 }
            setAside = before - pending.advancing.count
            return setAside > 0
        }
        defer {
            if setAside > 0 { pending.withLock { $0.advancing += repeatElement(thread, count: setAside) } }
        }
        return try body()
    }

    /// For the I/O thread, on each turn of its loop (at least once a second): `attend()` on
    /// every queue, once tasks run on one.
    static func attendAll() {
        guard executing.load(ordering: .acquiring) else { return }
        shared?.attend()
        for queue in hostQueues.withLock({ $0.compactMap(\.queue) }) { queue.attend() }
    }

    /// The descriptors of the queues the hosts have let go of, for the I/O thread to wait on
    /// beside its own: what such a queue is given is its to run at once.
    static var retiredDescriptors: [Int32] {
        hostQueues.withLock { queues in
            var descriptors: [Int32] = []
            for entry in queues {
                if let queue = entry.queue, queue.retired.load(ordering: .acquiring) { descriptors.append(queue.descriptor) }
            }
            return descriptors
        }
    }

    /// For a library thread, now and then: when no run has begun for a second while the
    /// queue is readable, does the calls' work that is ready, but runs no completion. So a
    /// call whose request is spent (a grant exchange) still reads its response and stores
    /// its session, well within the request's timeout, when the host stops running the
    /// queue; its completion waits for the host, as ever. A retired queue is run whole.
    func attend() {
        let retired = retired.load(ordering: .acquiring)
        guard retired || Self.now() &- lastRun.load(ordering: .relaxed) > Self.unattendedNanoseconds else { return }
        var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&watched, 1, 0) == 1 else { return }
        if retired {
            run()
        } else {
            _ = advanceCalls(takingCompletions: false)
        }
    }

    /// The rounds of the calls' work; then, when `takingCompletions`, takes the completions
    /// pending, before what the calls queued meanwhile and left untaken is signalled.
    private func advanceCalls(takingCompletions: Bool) -> [Job] {
        let thread = pthread_self()
        pending.withLock { $0.advancing.append(thread) }
        defer {
            update { pending in
                if let index = pending.advancing.lastIndex(where: { pthread_equal($0, thread) != 0 }) {
                    pending.advancing.remove(at: index)
                }
                return true
            }
        }
        for _ in 0..<Self.roundsPerRun {
            // Read each time: a task's first request installs it (QueueTransfers.of).
            driver.withLock { $0 }?.advance()
            let steps = take(\.tasks)
            if steps.isEmpty { break }
            for step in steps { step.runSynchronously(on: asUnownedTaskExecutor()) }
        }
        return takingCompletions ? take(\.completions) : []
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// I/O whose descriptors are in a completion queue's epoll set, done by its runs.
public protocol CompletionQueueDriver: Sendable {
    /// Does what the descriptors have ready, without waiting; any thread, one at a time or not.
    func advance()
}
