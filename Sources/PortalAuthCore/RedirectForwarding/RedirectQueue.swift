/// The URLs a receiver took and the client has not handled yet, in order. Bounded: a local
/// client that forwards faster than the client exchanges is refused beyond `capacity`,
/// rather than queueing requests to Portal without end.
final class RedirectQueue: Sendable {
    private struct State {
        var urls: [String] = []
        var ended = false
        var waiter: CheckedContinuation<String?, Never>?
    }

    let capacity: Int
    private let state = Locked(State())

    init(capacity: Int = 16) {
        self.capacity = capacity
    }

    /// Queues `url`; false when the queue is full or has ended (the URL is refused).
    func offer(_ url: String) -> Bool {
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<String?, Never>?) in
            guard !state.ended, state.urls.count < capacity else { return (false, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (true, waiter)
            }
            state.urls.append(url)
            return (true, nil)
        }
        waiter?.resume(returning: url)
        return accepted
    }

    /// No URL comes after those queued.
    func end() {
        let waiter = state.withLock { state -> CheckedContinuation<String?, Never>? in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next URL; nil once the queue has ended and every URL was taken. Not cancellable:
    /// a URL the receiver took was promised to the instance that forwarded it, so the
    /// caller ends the queue (by stopping the receiver) instead.
    func next() async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let ready = state.withLock { state -> String?? in
                if !state.urls.isEmpty { return .some(state.urls.removeFirst()) }
                if state.ended { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
