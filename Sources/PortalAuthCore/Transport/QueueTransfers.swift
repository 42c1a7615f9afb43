import CCurl
import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP of the calls that complete through a completion queue, done by the host's
/// thread in the queue's runs: a multi handle of its own, driven through libcurl's socket API,
/// its connections and its timer watched by the queue's descriptor. Such a call's request,
/// response and completion all happen on the thread that runs the queue, so it wakes no
/// other thread (docs/desktop.md "C ABI contract").
final class QueueTransfers: TransferDriver, CompletionQueueDriver, @unchecked Sendable {
    /// `queue`'s, made by its first request.
    static func of(_ queue: CompletionQueue) -> Result<QueueTransfers, PortalRequestsError> {
        guard let transfers = queue.driver(madeBy: { QueueTransfers(queue) }) else {
            return .failure(.network(.connection, message: "The completion queue has no descriptor for its requests (errno \(errno))."))
        }
        return .success(transfers)
    }

    private let lock = Locked(())
    /// The queue's epoll set, which this adds the connections and the timer to.
    private let poller: Int32
    /// curl's timeout, as a timerfd in the set.
    private let timer: Int32

    // Guarded by `lock`: curl calls the callbacks below inside the calls made under it.
    private var transfers = TransferPool()
    private var sockets: Set<Int32> = []
    /// curl asked to be called at once (a timeout of 0).
    private var timeoutDue = false
    /// The timer may be set (a one-shot: it disarms itself as it fires). Disarming one that is
    /// not would cost a system call on every request.
    private var timerArmed = false

    private init?(_ queue: CompletionQueue) {
        poller = queue.descriptor
        timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC) | Int32(TFD_NONBLOCK))
        guard timer >= 0 else { return nil }
        guard pa_epoll_watch(poller, timer, UInt32(EPOLLIN.rawValue)) == 0 else {
            _ = close(timer)
            return nil
        }
        transfers = TransferPool { [unowned self] multi in
            let me = Unmanaged.passUnretained(self).toOpaque()
            return pa_multi_setopt_socket_function(multi, queueSocketCallback) == CURLM_OK
                && pa_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me) == CURLM_OK
                && pa_multi_setopt_timer_function(multi, queueTimerCallback) == CURLM_OK
                && pa_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me) == CURLM_OK
        }
    }

    /// A host's queue, freed with it once nothing of it is in flight: curl must not call back
    /// into what is going (its connections close as the pool goes).
    deinit {
        if let multi = transfers.multi {
            _ = pa_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, nil)
            _ = pa_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, nil)
        }
        _ = close(timer)
    }

    /// Takes a transfer, from any thread (a task of a call the queue drives, in a run or on
    /// the library thread that attends to the queue): it is started here, its request sent
    /// as far as its connection allows, and the queue's descriptor then watches the rest.
    func submit(_ transfer: Transfer) {
        lock.withLock { _ in
            transfers.add(transfer)
            _ = transfers.startReady()
            settle()
        }
    }

    func advance() {
        lock.withLock { _ in
            guard let multi = transfers.multi else { return }
            // Room for every watched descriptor (the timer, the queue's eventfd), so that one
            // wait takes all that is ready: an edge-triggered host sees no new edge for the rest.
            // On the stack, not in arrays: a run advances several times per call.
            let capacity = sockets.count + 2
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: capacity) { fds in
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: capacity) { events in
                    guard let fdBase = fds.baseAddress, let eventBase = events.baseAddress else { return }
                    let ready = Int(pa_epoll_ready(poller, fdBase, eventBase, Int32(capacity)))
                    var running: Int32 = 0
                    for index in 0..<max(ready, 0) {
                        let fd = fdBase[index]
                        if fd == timer {
                            var expirations: UInt64 = 0
                            // Nothing read: a socket's action just now set it again.
                            if read(timer, &expirations, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size {
                                timerArmed = false
                            }
                            timeoutDue = true
                        } else if sockets.contains(fd) {
                            curl_multi_socket_action(multi, fd, Self.curlEvents(eventBase[index]), &running)
                        }
                    }
                }
            }
            settle()
        }
    }

    /// Acts on the timeouts due, completes what finished and starts what waited for a
    /// connection, until none of them leaves a timeout due (starting one asks for an
    /// immediate timeout; that timeout's action can finish more). Under `lock`.
    private func settle() {
        guard let multi = transfers.multi else { return }
        var running: Int32 = 0
        repeat {
            while timeoutDue {
                timeoutDue = false
                curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
            }
            _ = transfers.collectFinished()
            _ = transfers.startReady()
        } while timeoutDue
    }

    private static func curlEvents(_ events: UInt32) -> Int32 {
        var mask: Int32 = 0
        if events & UInt32(EPOLLIN.rawValue) != 0 { mask |= CURL_CSELECT_IN }
        if events & UInt32(EPOLLOUT.rawValue) != 0 { mask |= CURL_CSELECT_OUT }
        if events & (UInt32(EPOLLERR.rawValue) | UInt32(EPOLLHUP.rawValue)) != 0 { mask |= CURL_CSELECT_ERR }
        return mask
    }

    /// curl's socket callback: what to watch `socket` for, in the queue's set.
    fileprivate func watch(_ socket: Int32, _ what: Int32) {
        var events: UInt32 = 0
        switch what {
        case CURL_POLL_IN: events = UInt32(EPOLLIN.rawValue)
        case CURL_POLL_OUT: events = UInt32(EPOLLOUT.rawValue)
        case CURL_POLL_INOUT: events = UInt32(EPOLLIN.rawValue) | UInt32(EPOLLOUT.rawValue)
        default:
            pa_epoll_unwatch(poller, socket)
            sockets.remove(socket)
            return
        }
        if pa_epoll_watch(poller, socket, events) == 0 { sockets.insert(socket) }
    }

    /// curl's timer callback: when to call it back, -1 for never. A timeout of 0 is acted on in
    /// this run (`settle`), with the timer disarmed so that the descriptor is not readable for
    /// nothing.
    fileprivate func schedule(_ milliseconds: Int) {
        if milliseconds == 0 { timeoutDue = true }
        if milliseconds > 0 {
            _ = pa_timer_arm(timer, milliseconds)
            timerArmed = true  // even if that failed: a disarm then is merely spare
        } else if timerArmed, pa_timer_arm(timer, -1) == 0 {
            timerArmed = false
        }
    }
}

private let queueSocketCallback: pa_curl_socket_fn = { _, socket, what, context, _ in
    guard let context else { return -1 }
    Unmanaged<QueueTransfers>.fromOpaque(context).takeUnretainedValue().watch(socket, what)
    return 0
}

private let queueTimerCallback: pa_curl_timer_fn = { _, milliseconds, context in
    guard let context else { return -1 }
    Unmanaged<QueueTransfers>.fromOpaque(context).takeUnretainedValue().schedule(milliseconds)
    return 0
}
