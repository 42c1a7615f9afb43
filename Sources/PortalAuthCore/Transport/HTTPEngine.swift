import CCurl
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// All HTTP of the process: one I/O thread drives one curl multi handle for every request
/// of every client, except those of calls that complete through the completion queue,
/// which the host's thread drives in the queue's runs (QueueTransfers). Callers suspend
/// instead of blocking; connections are kept alive and reused; no thread is made per request.
///
/// The same thread is a task executor: a call whose task prefers it builds its request,
/// waits for the response and reads it without ever changing threads.
package final class HTTPEngine: Sendable {
    /// The process-wide engine; its thread starts on first use (in a forked child, a new
    /// engine's thread).
    package static var shared: HTTPEngine { perProcess.value }

    private static let perProcess = PerProcess { HTTPEngine() }

    /// A hostile server must not be able to exhaust memory.
    static let maxResponseBytes = 1 << 20
    /// Connections per origin; further requests wait in the engine's own queue, where they
    /// are still cancellable because nothing of them is on the wire yet.
    static let maxConnectionsPerOrigin = 16
    /// Connections curl keeps, busy and idle, across all origins. When it is exceeded curl
    /// closes the oldest idle one, which under a burst to several origins can be the one
    /// the next call wanted; curl's default (four per running transfer) is smaller still.
    static let connectionCacheSize = 256

    /// The running loop, or why none could start (no descriptor, no thread): every
    /// call then fails with a network error rather than taking the host process down.
    private let loop: Result<IOLoop, PortalRequestsError>

    private init() {
        loop = IOLoop.start()
    }

    /// The I/O thread as a task executor, or nil when it could not start (tasks then run
    /// on Swift's global executor and their requests fail with the reason).
    package var executor: (any TaskExecutor)? { try? loop.get() }

    /// In the tasks of calls that complete through a completion queue, that queue, which they
    /// run on as their executor: their requests then go to the queue's own multi handle, so
    /// that such a call never involves the I/O thread.
    @TaskLocal package static var drivingQueue: CompletionQueue?

    /// The executor for a task that a call starts on its own (a session's write): the
    /// completion queue in a call it drives, else the I/O thread, where the call itself runs.
    package static var currentExecutor: (any TaskExecutor)? {
        drivingQueue ?? shared.executor
    }

    /// Wakes the I/O thread to look at the queues again (one the host has just let go of).
    func wakeIOThread() {
        try? loop.get().wakeUnlessOnLoop()
    }

    /// Sends `request` and returns its response, whatever its status.
    ///
    /// Cancellation is honoured until the request is handed to curl; from then on it runs
    /// to completion (a grant on the wire is spent either way).
    /// - Throws: `CancellationError`, or `PortalRequestsError.network`.
    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let driver: any TransferDriver = try HTTPEngine.drivingQueue.map { try QueueTransfers.of($0).get() } ?? loop.get()
        let transfer = Transfer(request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if transfer.queue(continuation) { driver.submit(transfer) }
            }
        } onCancel: {
            transfer.cancel()
        }
    }
}

/// What sends a transfer: the I/O thread, or the completion queue's runs.
protocol TransferDriver: Sendable {
    /// Takes `transfer` (queued, not yet sent) to send it and finish it.
    func submit(_ transfer: Transfer)
}

/// The I/O thread and everything only it touches: its transfer pool; and the jobs of the
/// tasks that prefer it.
private final class IOLoop: TaskExecutor, TransferDriver, @unchecked Sendable {
    // Shared with other threads: guarded by their mutexes, or thread-safe.
    private let submitted = Locked<[Transfer]>([])
    private let jobs = Locked<[UnownedJob]>([])
    private let wake: WakeSignal
    /// The loop thread's pthread_t once it runs: work it hands itself needs no wake-up.
    private let thread = Atomic<UInt>(0)

    /// Owned by the I/O thread alone.
    private let transfers = TransferPool()

    private init(wake: WakeSignal) {
        self.wake = wake
    }

    /// Starts the thread; libcurl waits for the first transfer.
    static func start() -> Result<IOLoop, PortalRequestsError> {
        guard let wake = WakeSignal() else {
            return .failure(.network(.connection, message: "The HTTP engine has no descriptor for its I/O thread (errno \(errno))."))
        }
        let loop = IOLoop(wake: wake)
        let result = DetachedThread.start(name: "portal-auth-io") { loop.run() }
        guard result == 0 else {
            return .failure(.network(.connection, message: "The HTTP engine could not start its I/O thread (error \(result))."))
        }
        return .success(loop)
    }

    /// Hands a queued transfer to the thread (any thread may call this).
    func submit(_ transfer: Transfer) {
        submitted.withLock { $0.append(transfer) }
        wakeUnlessOnLoop()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        wakeUnlessOnLoop()
    }

    /// The loop checks its queues before it waits again, so it only needs waking from
    /// another thread (where the wake also ends a wait already begun).
    func wakeUnlessOnLoop() {
        if thread.load(ordering: .acquiring) != UInt(pthread_self()) { wake.signal() }
    }

    private func run() -> Never {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        while true {
            // Lets the completion queues' calls go on when their hosts have stopped running them.
            CompletionQueue.attendAll()
            var progressed = runJobs()
            for transfer in submitted.withLock({ queue in defer { queue.removeAll() }; return queue }) {
                transfers.add(transfer)
            }
            progressed = transfers.startReady() || progressed
            if let multi = transfers.multi {
                var running: Int32 = 0
                curl_multi_perform(multi, &running)
                progressed = transfers.collectFinished() || progressed
            }
            if !progressed, jobs.withLock({ $0.isEmpty }) { waitForWork() }
        }
    }

    /// Sleeps until a wake-up, a transfer's socket, work for a retired completion queue or
    /// curl's own timeout (at most a second).
    private func waitForWork() {
        // Retired queues are rare: the usual wait watches the wake-up alone, allocating nothing.
        let retired = CompletionQueue.retiredDescriptors
        let watched = retired.isEmpty ? nil : [wake.pollDescriptor.fd] + retired
        if let multi = transfers.multi {
            if let watched {
                var extra = watched.map { curl_waitfd(fd: $0, events: Int16(CURL_WAIT_POLLIN), revents: 0) }
                curl_multi_poll(multi, &extra, UInt32(extra.count), 1000, nil)
            } else {
                var extra = curl_waitfd(fd: wake.pollDescriptor.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0)
                curl_multi_poll(multi, &extra, 1, 1000, nil)
            }
        } else if let watched {
            var extra = watched.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&extra, nfds_t(extra.count), 1000)
        } else {
            var signal = wake.pollDescriptor
            _ = poll(&signal, 1, 1000)
        }
        wake.drain()
    }

    /// Runs the queued jobs, and those they queue in turn, until none is left. Returns
    /// whether any ran.
    private func runJobs() -> Bool {
        var ranAny = false
        while true {
            let batch = jobs.withLock { queue in defer { queue.removeAll() }; return queue }
            if batch.isEmpty { return ranAny }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            ranAny = true
        }
    }
}
