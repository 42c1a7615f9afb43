import CPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a listener's wait ended.
enum ListenerOutcome: Equatable, Sendable {
    /// A request completed the wait (`CallbackAdmission`) and was answered: the full callback URL.
    case callback(url: String)
    /// The time given to `start` ran out.
    case timedOut
    /// `stop` was called, or the task awaiting the outcome was cancelled.
    case stopped
}

/// A one-shot HTTP listener on a loopback redirect URL's address and port, over POSIX
/// sockets (docs/desktop.md "Browser sign-in").
///
/// One thread of its own polls every socket without blocking on any, so a client that
/// connects and says nothing cannot hold up the browser: each connection has a read
/// deadline and a bounded request head (`ListenerConnections`). Each complete head goes to
/// its `CallbackAdmission`, which says what to answer and whether the wait ends. When the
/// wait ends, by a callback, the timeout or `stop`, every socket is closed before the
/// outcome is reported.
final class LoopbackListener: Sendable {
    struct Limits: Sendable {
        /// The longest request head (request line and headers) read: a browser's redirect is
        /// far shorter; a longer one is answered 431.
        var maxRequestHead = 8192
        /// How long one connection may take to send its request head before it is dropped.
        var readTimeout: Duration = .seconds(10)
        /// Connections read at once; beyond it one gives way (`ListenerConnections`).
        var maxConnections = 16
    }

    private enum Phase {
        case bound
        case running
        case finished(ListenerOutcome)
    }

    private struct State {
        var phase = Phase.bound
        var waiter: CheckedContinuation<ListenerOutcome, Never>?
    }

    private let admission: CallbackAdmission
    private let limits: Limits
    /// Listening sockets: closed by the wait when it ends, or at deinit if it never ran.
    private let sockets: [Int32]
    /// Written to end the wait; closed at deinit only, so a late `stop` never writes to a
    /// descriptor reused by someone else.
    private let wake: WakeSignal
    private let state = Mutex(State())

    /// Binds and listens on the redirect's loopback address and port at once, so that a
    /// port in use is known before anything else happens.
    /// - Throws: `ListenerError` when the port is in use or no socket can be made.
    init(_ admission: CallbackAdmission, limits: Limits = Limits()) throws(ListenerError) {
        self.admission = admission
        self.limits = limits
        guard let wake = WakeSignal() else { throw ListenerError(kind: .system, message: "no descriptor for the listener (errno \(errno))") }
        self.wake = wake
        sockets = try ListenerSockets.open(for: admission.redirect)
    }

    deinit {
        if case .bound = state.withLock({ $0.phase }) { sockets.forEach { _ = close($0) } }
    }

    private var endpoint: String { admission.redirect.endpoint }

    /// Starts waiting, on a thread of the listener's own, for at most `timeout`.
    /// - Throws: `ListenerError` when no thread could be made.
    func start(timeout: Duration) throws(ListenerError) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        state.withLock { $0.phase = .running }
        let result = DetachedThread.start(name: "portal-auth-lsn") { [self] in
            finish(waitForCallback(until: deadline))
        }
        guard result == 0 else {
            state.withLock { $0.phase = .bound }
            throw ListenerError(kind: .system, message: "no thread for the listener (error \(result))")
        }
    }

    /// Ends the wait (as `.stopped`) unless it has already ended.
    func stop() {
        wake.signal()
    }

    /// How the wait ended; cancelling the awaiting task stops it. Without `start`, `.stopped`.
    func outcome() async -> ListenerOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ListenerOutcome, Never>) in
                let ready = state.withLock { state -> ListenerOutcome? in
                    switch state.phase {
                    case .bound: return .stopped
                    case .finished(let outcome): return outcome
                    case .running:
                        state.waiter = continuation
                        return nil
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            stop()
        }
    }

    private func finish(_ outcome: ListenerOutcome) {
        let waiter = state.withLock { state -> CheckedContinuation<ListenerOutcome, Never>? in
            state.phase = .finished(outcome)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    // MARK: - The wait (on the listener's thread)

    private func waitForCallback(until deadline: ContinuousClock.Instant) -> ListenerOutcome {
        var connections = ListenerConnections(capacity: limits.maxConnections)
        // Out of file descriptors, a pending connection keeps the listening sockets readable:
        // they are left out of poll for a moment instead of spinning.
        var acceptPausedUntil: ContinuousClock.Instant?
        defer {
            connections.closeAll()
            sockets.forEach { _ = close($0) }
        }
        while true {
            let now = ContinuousClock.now
            if now >= deadline { return .timedOut }
            connections.dropExpired(at: now)
            if let paused = acceptPausedUntil, paused <= now { acceptPausedUntil = nil }
            let nextDeadline = [connections.earliestDeadline, acceptPausedUntil].compactMap { $0 }.reduce(deadline, min)

            var fds = [wake.pollDescriptor]
            let listening = Int16(acceptPausedUntil == nil ? POLLIN : 0)
            fds += sockets.map { pollfd(fd: $0, events: listening, revents: 0) }
            fds += connections.all.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Self.milliseconds(now.duration(to: nextDeadline)))
            if ready < 0 {
                if errno == EINTR { continue }
                PortalAuthLog.emit(.error, "Browser sign-in: the listener on \(endpoint) failed (errno \(errno)).")
                return .stopped
            }
            if fds[0].revents != 0 { return .stopped }

            // Connections first: the indexes of `fds` follow `connections` as it was.
            let firstConnection = 1 + sockets.count
            for index in connections.all.indices.reversed() where fds[firstConnection + index].revents != 0 {
                switch connections[index].receive(limit: limits.maxRequestHead) {
                case .pending:
                    continue
                case .closed:
                    break
                case .head(let end):
                    switch admission.verdict(on: RequestHead(connections[index].head[..<end])) {
                    case .complete(let url, let page):
                        ListenerResponse(status: "200 OK", page: page, reason: "the callback").send(on: connections[index].fd)
                        return .callback(url: url)
                    case .refuse(let response):
                        refuse(connections[index].fd, response)
                    }
                case .tooLarge:
                    refuse(connections[index].fd, .tooLarge)
                }
                connections.close(at: index)
            }
            for (offset, socket) in sockets.enumerated() where fds[1 + offset].revents != 0 {
                if !accept(from: socket, into: &connections, now: now) {
                    acceptPausedUntil = now.advanced(by: Self.acceptBackoff)
                }
            }
        }
    }

    private func refuse(_ fd: Int32, _ response: ListenerResponse) {
        // Before the answer: once the client has it, the line is already there.
        PortalAuthLog.emit(.debug, "Browser sign-in: the listener on \(endpoint) refused \(response.reason) (\(response.status)); still waiting.")
        response.send(on: fd)
    }

    private static let acceptBackoff = Duration.milliseconds(50)

    /// Accepts what is pending; false when out of descriptors with no connection to give up.
    private func accept(from socket: Int32, into connections: inout ListenerConnections, now: ContinuousClock.Instant) -> Bool {
        while true {
            let fd = pa_accept_nonblocking(socket)
            guard fd >= 0 else {
                guard errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM else { return true }
                guard connections.dropOne() else { return false }
                continue
            }
            connections.admit(fd, deadline: now.advanced(by: limits.readTimeout))
        }
    }

    /// `duration` in whole milliseconds for poll, rounded up so a wait never ends early.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
