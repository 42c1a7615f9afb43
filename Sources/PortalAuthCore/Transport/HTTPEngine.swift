import CCurl
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// All HTTP of the process: one I/O thread drives one curl multi handle for every request
/// of every client. Callers suspend instead of blocking; connections are kept alive and
/// reused; no thread is made per request.
///
/// The same thread is a task executor: a call whose task prefers it builds its request,
/// waits for the response and reads it without ever changing threads.
package final class HTTPEngine: Sendable {
    /// The process-wide engine; its thread starts on first use.
    package static let shared = HTTPEngine()

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

    /// Sends `request` and returns its response, whatever its status.
    ///
    /// Cancellation is honoured until the request is handed to curl; from then on it runs
    /// to completion (a grant on the wire is spent either way).
    /// - Throws: `CancellationError`, or `PortalRequestsError.network`.
    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let loop = try loop.get()
        let transfer = Transfer(request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if transfer.queue(continuation) { loop.submit(transfer) }
            }
        } onCancel: {
            transfer.cancel()
        }
    }
}

/// The I/O thread and everything only it touches: the multi handle, the queues per origin,
/// the transfers in flight, spare easy handles; and the jobs of the tasks that prefer it.
private final class IOLoop: TaskExecutor, @unchecked Sendable {
    // Shared with other threads: guarded by their mutexes, or thread-safe.
    private let submitted = Mutex<[Transfer]>([])
    private let jobs = Mutex<[UnownedJob]>([])
    private let wake: WakeSignal
    /// The loop thread's pthread_t once it runs: work it hands itself needs no wake-up.
    private let thread = Atomic<UInt>(0)

    // Owned by the I/O thread alone.
    /// The multi handle, made (and libcurl loaded) by the first transfer, so that calls
    /// that send nothing (a restore, a foreign redirect) never load libcurl; or why not.
    private var curl: Result<UnsafeMutableRawPointer, PortalRequestsError>?
    private var waiting: [String: [Transfer]] = [:]
    private var activeCount: [String: Int] = [:]
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var spareHandles: [UnsafeMutableRawPointer] = []

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

    /// The multi handle, made on first use; libcurl is loaded then (CLibraryLoader).
    private func multiHandle() -> Result<UnsafeMutableRawPointer, PortalRequestsError> {
        if let curl { return curl }
        let made: Result<UnsafeMutableRawPointer, PortalRequestsError>
        if let missing = pa_curl_load_error() {
            made = .failure(.network(.connection, message: String(cString: missing)))
        } else {
            curl_global_init(Int(CURL_GLOBAL_DEFAULT))
            if let multi = curl_multi_init() {
                pa_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, HTTPEngine.connectionCacheSize)
                made = .success(multi)
            } else {
                made = .failure(.network(.connection, message: "libcurl could not allocate its multi handle."))
            }
        }
        curl = made
        return made
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
    private func wakeUnlessOnLoop() {
        if thread.load(ordering: .acquiring) != UInt(pthread_self()) { wake.signal() }
    }

    private func run() -> Never {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        while true {
            var progressed = runJobs()
            progressed = startReadyTransfers() || progressed
            if case .success(let multi)? = curl {
                var running: Int32 = 0
                curl_multi_perform(multi, &running)
                progressed = collectFinishedTransfers(multi) || progressed
            }
            if !progressed, jobs.withLock({ $0.isEmpty }) { waitForWork() }
        }
    }

    /// Sleeps until a wake-up, a transfer's socket or curl's own timeout (at most a second).
    private func waitForWork() {
        var signal = wake.pollDescriptor
        if case .success(let multi)? = curl {
            var extra = curl_waitfd(fd: signal.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            curl_multi_poll(multi, &extra, 1, 1000, nil)
        } else {
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

    /// Moves new submissions into their origin's queue and starts as many as the
    /// connection limit allows. Returns whether anything started.
    private func startReadyTransfers() -> Bool {
        for transfer in submitted.withLock({ queue in defer { queue.removeAll() }; return queue }) {
            waiting[transfer.request.origin, default: []].append(transfer)
        }
        var started = false
        for origin in Array(waiting.keys) {
            guard var queue = waiting[origin] else { continue }
            var index = 0
            while index < queue.count, activeCount[origin, default: 0] < HTTPEngine.maxConnectionsPerOrigin {
                let transfer = queue[index]
                index += 1
                guard transfer.markSent() else { continue }
                start(transfer)
                started = true
            }
            queue.removeFirst(index)
            waiting[origin] = queue.isEmpty ? nil : queue
        }
        return started
    }

    private func start(_ transfer: Transfer) {
        let multi: UnsafeMutableRawPointer
        switch multiHandle() {
        case .success(let made): multi = made
        case .failure(let error): return transfer.finish(.failure(error))
        }
        let easy = spareHandles.popLast() ?? curl_easy_init()
        guard let easy else {
            transfer.finish(.failure(PortalRequestsError.network(.connection, message: "libcurl could not allocate a handle.")))
            return
        }
        do {
            try transfer.configure(easy)
            guard curl_multi_add_handle(multi, easy) == CURLM_OK else {
                throw PortalRequestsError.network(.connection, message: "libcurl refused the request.")
            }
        } catch {
            transfer.release()
            recycle(easy)
            transfer.finish(.failure(error))
            return
        }
        active[easy] = transfer
        activeCount[transfer.request.origin, default: 0] += 1
    }

    /// Completes every finished transfer. Returns whether any finished.
    private func collectFinishedTransfers(_ multi: UnsafeMutableRawPointer) -> Bool {
        var finishedAny = false
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active.removeValue(forKey: easy)
            else { continue }
            let code = pa_message_result(message)
            curl_multi_remove_handle(multi, easy)
            activeCount[transfer.request.origin, default: 1] -= 1
            let outcome = transfer.outcome(code: code, easy: easy)
            transfer.release()
            recycle(easy)
            transfer.finish(outcome)
            finishedAny = true
        }
        return finishedAny
    }

    private func recycle(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        spareHandles.append(easy)
    }
}

/// One request in flight, from submission to completion.
private final class Transfer: @unchecked Sendable {
    private enum Phase {
        case created, queued, cancelled, sent, finished
    }

    let request: HTTPRequest
    private let phase = Mutex(Phase.created)
    private var continuation: CheckedContinuation<HTTPResponse, any Error>?

    // Touched by the I/O thread only, between `configure` and `release`.
    private var body: [UInt8] = []
    private var overflowed = false
    private var attempts = 0
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// curl writes its detail here during the transfer: memory of our own, not an array's.
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(_ request: HTTPRequest) {
        self.request = request
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// Records the caller's continuation. Returns false (after failing it) when the call
    /// was cancelled before it could be queued.
    func queue(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let queued = phase.withLock { phase -> Bool in
            guard phase == .created else { return false }
            self.continuation = continuation
            phase = .queued
            return true
        }
        if !queued { continuation.resume(throwing: CancellationError()) }
        return queued
    }

    /// Cancels unless the request has already gone to curl.
    func cancel() {
        let pending = phase.withLock { phase -> CheckedContinuation<HTTPResponse, any Error>? in
            switch phase {
            case .created:
                phase = .cancelled
                return nil
            case .queued:
                phase = .cancelled
                defer { continuation = nil }
                return continuation
            case .cancelled, .sent, .finished:
                return nil
            }
        }
        pending?.resume(throwing: CancellationError())
    }

    /// Claims the transfer for sending; false if it was cancelled while it waited.
    func markSent() -> Bool {
        phase.withLock { phase in
            guard phase == .queued else { return false }
            phase = .sent
            return true
        }
    }

    func finish(_ result: Result<HTTPResponse, any Error>) {
        let pending = phase.withLock { phase -> CheckedContinuation<HTTPResponse, any Error>? in
            phase = .finished
            defer { continuation = nil }
            return continuation
        }
        pending?.resume(with: result)
    }

    /// Sets the transfer up on `easy`. Every option is checked: a libcurl that cannot honour
    /// one (an older one) fails the request with a message naming it, before anything is
    /// sent. The protections above all must never be silently missing: the restriction to
    /// http and https, TLS verification, the refusal to resend, close-on-exec connections
    /// and, to a loopback host, no proxy.
    /// - Throws: `PortalRequestsError.network`, also when a header cannot be added (out of
    ///   memory), since a request missing its environment id or bearer must not go out.
    func configure(_ easy: UnsafeMutableRawPointer) throws(PortalRequestsError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"),
                            "CURLOPT_PROTOCOLS_STR", "restrict requests to http and https")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1),
                            "CURLOPT_SSL_VERIFYPEER", "verify the server's TLS certificate")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2),
                            "CURLOPT_SSL_VERIFYHOST", "verify that the TLS certificate names the server")
        try CurlOptions.set(pa_easy_setopt_prereq_function(easy, transferPrereqCallback),
                            "CURLOPT_PREREQFUNCTION", "refuse to send a request twice")
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, me),
                            "CURLOPT_PREREQDATA", "refuse to send a request twice")
        try CurlOptions.set(pa_easy_setopt_close_on_exec_sockets(easy),
                            "CURLOPT_OPENSOCKETFUNCTION", "keep its connections from the programs the app starts")
        if request.direct {
            try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_NOPROXY, "*"),
                                "CURLOPT_NOPROXY", "reach a loopback host without a proxy")
        }

        try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_URL, request.url), "CURLOPT_URL", "take the request's URL")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL", "run without signals")
        try CurlOptions.set(pa_easy_setopt_string(easy, CURLOPT_USERAGENT, "portal-auth/\(PortalAuthVersion.string)"),
                            "CURLOPT_USERAGENT", "name the client")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, request.timeouts.connectMilliseconds),
                            "CURLOPT_CONNECTTIMEOUT_MS", "bound the connection time")
        try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, request.timeouts.totalMilliseconds),
                            "CURLOPT_TIMEOUT_MS", "bound the request time")
        try CurlOptions.set(pa_easy_setopt_write_function(easy, transferWriteCallback),
                            "CURLOPT_WRITEFUNCTION", "bound the response")
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA", "bound the response")
        errorBuffer[0] = 0
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer),
                            "CURLOPT_ERRORBUFFER", "report its errors")

        // "Expect:" keeps curl from waiting on 100-continue.
        for line in request.headers + ["Expect:"] {
            guard let appended = curl_slist_append(headerList, line) else {
                throw .network(.connection, message: "libcurl could not allocate the request's headers.")
            }
            headerList = appended
        }
        try CurlOptions.set(pa_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)),
                            "CURLOPT_HTTPHEADER", "send the request's headers")

        if request.method == .post {
            let payload = request.body ?? []
            try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_POST, 1), "CURLOPT_POST", "send a POST")
            try CurlOptions.set(pa_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, payload.count),
                                "CURLOPT_POSTFIELDSIZE", "send the request's body")
            // COPYPOSTFIELDS copies, so the array need not outlive this call.
            let copied = payload.withUnsafeBytes { bytes in
                pa_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS,
                                       UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)))
            }
            try CurlOptions.set(copied, "CURLOPT_COPYPOSTFIELDS", "send the request's body")
        }
    }

    /// Called by curl right before each attempt to send. libcurl silently resends a request
    /// whose reused connection closed without a byte of answer; a grant, a code or an email
    /// must not go out twice, so a second attempt is refused and the first failure stands.
    func allowAttempt() -> Bool {
        attempts += 1
        return attempts == 1
    }

    /// Appends a chunk of the response body; false once the cap would be exceeded.
    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard body.count + chunk.count <= HTTPEngine.maxResponseBytes else {
            overflowed = true
            return false
        }
        body.append(contentsOf: chunk)
        return true
    }

    func outcome(code: CURLcode, easy: UnsafeMutableRawPointer) -> Result<HTTPResponse, any Error> {
        switch code {
        case CURLE_OK:
            var status = 0
            pa_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return .success(HTTPResponse(status: status, body: body))
        case CURLE_WRITE_ERROR where overflowed:
            return .failure(PortalRequestsError.network(
                .responseTooLarge, message: "The response exceeded \(HTTPEngine.maxResponseBytes) bytes."))
        case CURLE_ABORTED_BY_CALLBACK where attempts > 1:
            return .failure(PortalRequestsError.network(
                .connection, message: "The connection closed before the server answered; the request was not retried."))
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(PortalRequestsError.network(.timeout, message: detail(code)))
        default:
            return .failure(PortalRequestsError.network(.connection, message: detail(code)))
        }
    }

    /// curl's own words: the error buffer when it has something, else the code's text.
    private func detail(_ code: CURLcode) -> String {
        let buffered = String(cString: errorBuffer)
        if !buffered.isEmpty { return buffered }
        return String(cString: curl_easy_strerror(code))
    }

    func release() {
        curl_slist_free_all(headerList)
        headerList = nil
    }
}

private let transferPrereqCallback: pa_curl_prereq_fn = { context, _, _, _, _ in
    guard let context else { return Int32(CURL_PREREQFUNC_ABORT) }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    return Int32(transfer.allowAttempt() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT)
}

private let transferWriteCallback: pa_curl_write_fn = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    return transfer.append(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}
