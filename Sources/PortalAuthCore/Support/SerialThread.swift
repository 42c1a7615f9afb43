#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own that runs jobs that block (a keyring's calls, a host's session store)
/// one at a time, in order, never on the caller's thread or the HTTP thread. It starts with
/// the first job and ends once its owner lets it go and it has run what was queued.
/// (Not a Dispatch queue: Dispatch has no thread left in a forked child, and makes none.)
final class SerialThread: Sendable {
    struct NoThread: Error {}

    private final class Core: Sendable {
        struct State {
            var jobs: [@Sendable () -> Void] = []
            var started = false
            var stopping = false
        }

        let name: String
        let state = Locked(State())
        let wake: WakeSignal?

        init(name: String) {
            self.name = name
            wake = WakeSignal()
        }

        func loop() {
            guard let wake else { return }
            while true {
                let (jobs, stopping) = state.withLock { state in
                    defer { state.jobs.removeAll() }
                    return (state.jobs, state.stopping)
                }
                jobs.forEach { $0() }
                if jobs.isEmpty {
                    if stopping { return }
                    wake.waitUntilSignalled()
                    wake.drain()
                }
            }
        }
    }

    private let core: Core

    /// `name`: the thread's, at most 15 bytes.
    init(name: String) {
        core = Core(name: name)
    }

    deinit {
        core.state.withLock { $0.stopping = true }
        core.wake?.signal()
    }

    /// Queues `job`, starting the thread for the first.
    /// - Throws: `NoThread` when there is no thread, and none can be made (nothing queued).
    func run(_ job: @escaping @Sendable () -> Void) throws(NoThread) {
        guard let wake = core.wake else { throw NoThread() }
        let core = core
        // The thread is made under the lock: a job queued meanwhile would otherwise wait for
        // a thread that no one goes on to make.
        let started = core.state.withLock { state -> Bool in
            if !state.started {
                guard DetachedThread.start(name: core.name, { core.loop() }) == 0 else { return false }
                state.started = true
            }
            state.jobs.append(job)
            return true
        }
        guard started else { throw NoThread() }
        wake.signal()
    }
}

extension SerialThread {
    /// Runs `work` on the thread, its outcome returned to the awaiting task.
    func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try run { continuation.resume(with: Result(catching: work)) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
