import CCurl

/// The requests of one curl multi handle: the queues per origin, the transfers in flight and
/// spare easy handles. Not thread-safe: its driver (the I/O thread, or the completion queue's
/// runs under a lock) owns it, and is the one to make curl progress (perform, socket action).
final class TransferPool {
    /// The multi handle, made (and libcurl loaded) by the first transfer, so that calls that
    /// send nothing (a restore, a foreign redirect) never load libcurl; or why not.
    private var curl: Result<UnsafeMutableRawPointer, PortalRequestsError>?
    /// Sets up a multi handle just made (the driver's callbacks); false if it cannot.
    private let configure: (UnsafeMutableRawPointer) -> Bool
    private var waiting: [String: [Transfer]] = [:]
    private var activeCount: [String: Int] = [:]
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var spareHandles: [UnsafeMutableRawPointer] = []

    /// curl_global_init, once for the process: the two pools' drivers may make their multi
    /// handles at the same time (a lazy static is initialised once, under a lock).
    private static let curlInitialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init(configure: @escaping (UnsafeMutableRawPointer) -> Bool = { _ in true }) {
        self.configure = configure
    }

    /// A completion queue's pool goes with its queue, with nothing in flight (each transfer's
    /// task holds the queue): its spare handles and its connections go too.
    deinit {
        for easy in spareHandles { curl_easy_cleanup(easy) }
        if let multi { curl_multi_cleanup(multi) }
    }

    /// The multi handle, once a transfer has made it.
    var multi: UnsafeMutableRawPointer? {
        if case .success(let multi)? = curl { return multi }
        return nil
    }

    /// Queues `transfer` behind its origin's others; `startReady()` sends it.
    func add(_ transfer: Transfer) {
        waiting[transfer.request.origin, default: []].append(transfer)
    }

    /// The multi handle, made on first use; libcurl is loaded then (CLibraryLoader).
    private func multiHandle() -> Result<UnsafeMutableRawPointer, PortalRequestsError> {
        if let curl { return curl }
        let made: Result<UnsafeMutableRawPointer, PortalRequestsError>
        if let missing = pa_curl_load_error() {
            made = .failure(.network(.libcurlMissing, message: String(cString: missing)))
        } else {
            _ = TransferPool.curlInitialised
            if let multi = curl_multi_init() {
                pa_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, HTTPEngine.connectionCacheSize)
                if configure(multi) {
                    made = .success(multi)
                } else {
                    curl_multi_cleanup(multi)
                    made = .failure(.network(.connection, message: "libcurl refused the multi handle's callbacks."))
                }
            } else {
                made = .failure(.network(.connection, message: "libcurl could not allocate its multi handle."))
            }
        }
        curl = made
        return made
    }

    /// Starts as many queued transfers as the connection limit allows. Returns whether
    /// anything started.
    func startReady() -> Bool {
        guard !waiting.isEmpty else { return false }  // the common case, every time a queue's run advances
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
            // Recorded first: with the socket API, the next action may finish it.
            active[easy] = transfer
            activeCount[transfer.request.origin, default: 0] += 1
            guard curl_multi_add_handle(multi, easy) == CURLM_OK else {
                active[easy] = nil
                activeCount[transfer.request.origin, default: 1] -= 1
                throw PortalRequestsError.network(.connection, message: "libcurl refused the request.")
            }
        } catch {
            transfer.release()
            recycle(easy)
            transfer.finish(.failure(error))
        }
    }

    /// Completes every finished transfer. Returns whether any finished.
    func collectFinished() -> Bool {
        guard let multi else { return false }
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
