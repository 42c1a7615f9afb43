import Synchronization

/// Work that library threads hand to the host's own thread: jobs queued from any thread,
/// run by whichever thread calls `run()`, with an eventfd that is readable exactly while
/// jobs are pending, so that a host's event loop (poll, GLib, asyncio, tokio) can watch it.
///
/// The C ABI's completion queue (portal_auth_completion_fd); Swift code awaits its calls
/// instead. The descriptor's counter is non-zero exactly while jobs are pending: the push that
/// fills an empty queue signals it once, and the run that empties the queue drains that
/// signal. The push signals after letting go of the lock, because the write wakes the host's
/// thread, which would otherwise find the lock still held (often by the thread it has just
/// displaced from its CPU); so a run that takes jobs whose signal is still on its way waits
/// for it to land before draining it, and the counter is never left set for jobs taken.
public final class CompletionQueue: Sendable {
    public typealias Job = @Sendable () -> Void

    /// The process's queue, made by its first use; nil when no descriptor was left for it.
    public static let shared = CompletionQueue()

    private let pending = Mutex<[Job]>([])
    private let signal: WakeSignal

    /// Nil when no descriptor is left.
    public init?() {
        guard let signal = WakeSignal() else { return nil }
        self.signal = signal
    }

    /// The descriptor to poll for reading. Never read from or write to it: the queue keeps its
    /// counter in step with the jobs.
    public var descriptor: Int32 { signal.fd }

    /// Queues `job` for the next `run()`; any thread.
    public func push(_ job: @escaping Job) {
        let first = pending.withLock { queue -> Bool in
            queue.append(job)
            return queue.count == 1
        }
        if first { signal.signal() }
    }

    /// Runs, on the calling thread, every job pending when it is called (those queued
    /// meanwhile make the descriptor readable again, for the next run). Returns how many ran.
    /// Jobs may call `run()` themselves.
    @discardableResult
    public func run() -> Int {
        let batch = pending.withLock { queue -> [Job] in
            guard !queue.isEmpty else { return [] }
            signal.drainLanded()
            defer { queue = [] }
            return queue
        }
        for job in batch { job() }
        return batch.count
    }
}
