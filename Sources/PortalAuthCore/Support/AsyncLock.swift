/// A FIFO mutual-exclusion lock for async code, held across suspension points.
///
/// Actors re-enter at every `await`; the grant lock and the per-environment storage lock
/// must serialise whole sequences (look up, exchange, persist), so they use this instead.
final class AsyncLock: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var isLocked = false
        var waiters: [Waiter] = []
        var nextWaiterId: UInt64 = 0
    }

    private let state = Locked(State())

    /// Runs `body` while holding the lock. With `cancellable`, a task cancelled while it
    /// waits gives up its place and throws `CancellationError`; without, it always waits
    /// (writes that must land even for a caller who stopped listening).
    func withLock<T: Sendable>(
        cancellable: Bool = true,
        _ body: () async throws -> T
    ) async throws -> T {
        try await acquire(cancellable: cancellable)
        defer { release() }
        return try await body()
    }

    private func acquire(cancellable: Bool) async throws {
        let immediate = state.withLock { state -> Bool in
            guard !state.isLocked else { return false }
            state.isLocked = true
            return true
        }
        if immediate { return }

        let id = state.withLock { state -> UInt64 in
            state.nextWaiterId += 1
            return state.nextWaiterId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.isLocked {
                        state.isLocked = true
                        return true
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if resumeNow {
                    continuation.resume()
                } else if cancellable && Task.isCancelled {
                    // The cancellation handler may have run before the waiter was queued.
                    abandon(id)
                }
            }
        } onCancel: {
            if cancellable { abandon(id) }
        }
    }

    /// Removes a waiting task and fails it; a waiter already handed the lock is left alone.
    private func abandon(_ id: UInt64) {
        let removed = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        removed?.continuation.resume(throwing: CancellationError())
    }

    private func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.isLocked = false
                return nil
            }
            // Ownership passes straight to the next waiter: the lock never looks free in between.
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
