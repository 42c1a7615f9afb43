import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// How a listener's wait ended.
enum ListenerOutcome: Equatable, Sendable {
    /// A request completed the wait (`CallbackAdmission`) and was answered: the full callback URL.
    case callback(url: String)
    /// The time given to `start` ran out; `refused` says what came from other users meanwhile.
    case timedOut(refused: RefusedConnections?)
    /// `stop` was called, or the task awaiting the outcome was cancelled.
    case stopped
}

/// The connections of other users' processes a listener refused: a browser that sends loopback
/// addresses through a proxy reaches the listener as the proxy's user, so its redirect is
/// refused (it could be anyone's), and the user is told to exempt loopback from the proxy.
/// In a user namespace where this process runs as the overflow uid, no user it does not map
/// can be told from its own, and the user is told that instead.
struct RefusedConnections: Equatable, Sendable, CustomStringConvertible {
    var count: Int
    /// The user id of the last one's process, when it could be told.
    var lastOwner: uid_t?
    /// The overflow uid, when a refused connection's socket read as it and so does this
    /// process's own user (`LoopbackPeer.Owner.indistinct`).
    var indistinctOwner: uid_t?

    var description: String {
        let connections = "\(count) connection\(count == 1 ? "" : "s")"
        if let overflow = indistinctOwner {
            return "the listener refused \(connections): this process runs as uid \(overflow), the overflow uid every user its "
                + "user namespace does not map reads as, so it cannot tell the user's browser from another user's process; "
                + "run the application where its user namespace maps its user (not `unshare -U` alone)"
        }
        let owner = lastOwner.map { uid in Self.userName(uid).map { "\($0), uid \(uid)" } ?? "uid \(uid)" } ?? "unknown"
        return "the listener refused \(connections) of another user (\(owner)), such as a proxy "
            + "the browser sends loopback addresses through: exempt 127.0.0.1, [::1] and localhost from the browser's proxy"
    }

    /// Counts a refused connection of `owner`; true for the first of its kind (another
    /// user's, or one that cannot be told).
    mutating func record(_ owner: LoopbackPeer.Owner) -> Bool {
        count += 1
        if case .indistinct(let overflow) = owner {
            defer { indistinctOwner = overflow }
            return count == 1 || indistinctOwner == nil
        }
        if case .anotherUser(let uid) = owner { lastOwner = uid }
        return count == 1
    }

    private static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }
}

/// A one-shot HTTP listener on a loopback redirect URL's address and port, over POSIX
/// sockets (docs/desktop.md "Browser sign-in").
///
/// One thread of its own waits (`ConnectionLoop`), so a client that connects and says
/// nothing cannot hold up the browser: each connection has a read deadline and a bounded
/// request head. A connection from another user's process is closed before anything of it
/// is read (`LoopbackPeer`): the redirect is the session. Each complete head goes to its `CallbackAdmission`, which says what to
/// answer and whether the wait ends. When the wait ends, by a callback, the timeout, `stop`
/// or `close`, every listening socket is closed before the outcome is reported.
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

    /// When the callback that ends the wait is answered.
    enum Answer: Sendable {
        /// At once, with the admission's page, before the outcome is reported.
        case atOnce
        /// When the flow has completed the sign-in and calls `answer(_:)`, with the page it
        /// gives: the browser's connection is held until then. A callback left unanswered
        /// gets the admission's page when the listener goes.
        case whenComplete
    }

    private enum Phase {
        case bound
        case running
        case finished(ListenerOutcome)
    }

    /// The connection of a callback that waits for its answer, and the page it gets if the
    /// flow gives none.
    private struct HeldCallback {
        let fd: Int32
        let page: String
    }

    private struct State {
        var phase = Phase.bound
        var waiter: CheckedContinuation<ListenerOutcome, Never>?
        var held: HeldCallback?
    }

    private let admission: CallbackAdmission
    /// The sign-in it serves, in log lines ("Browser sign-in").
    private let flow: String
    private let limits: Limits
    /// Changed once at most, from `.atOnce` to `.whenComplete` (`holdCallbacks`).
    private let answering: Locked<Answer>
    /// Listening sockets: closed by the wait when it ends, by `close` before it starts, or at
    /// deinit if neither ran.
    private let sockets: [Int32]
    /// Written to end the wait; closed at deinit only, so a late `stop` never writes to a
    /// descriptor reused by someone else.
    private let wake: WakeSignal
    /// Signalled once the wait has closed the listening sockets, for `close` to wait on.
    private let socketsClosed = Latch()
    /// Who each connection's other end is.
    private let peers: LoopbackPeer
    private let state = Locked(State())

    /// Binds and listens on the redirect's loopback address and port at once, so that a
    /// port in use is known before anything else happens.
    /// - Throws: `ListenerError` when the port is in use or no socket can be made.
    init(_ admission: CallbackAdmission, flow: String = "Browser sign-in", limits: Limits = Limits(),
         answer: Answer = .atOnce) throws(ListenerError) {
        self.admission = admission
        self.flow = flow
        self.limits = limits
        answering = Locked(answer)
        guard let wake = WakeSignal() else {
            throw ListenerError(kind: .system, message: "no descriptor for the listener (errno \(errno))")
        }
        self.wake = wake
        let sockets = try ListenerSockets.open(for: admission.redirect)
        do {
            peers = try LoopbackPeer(answeringFor: sockets[0])
        } catch {
            ListenerSockets.close(sockets)
            throw error
        }
        self.sockets = sockets
    }

    deinit {
        let (phase, held) = state.withLock { ($0.phase, $0.held) }
        if case .bound = phase { ListenerSockets.close(sockets) }
        if let held { Self.send(held.page, on: held.fd) }
    }

    /// The address and port it listens on, for log lines.
    var endpoint: String { admission.redirect.endpoint }

    /// Starts waiting, on a thread of the listener's own, for at most `timeout`. A listener
    /// already closed does not start: its outcome is `.stopped`.
    /// - Throws: `ListenerError` when no thread could be made (the sockets are closed then).
    func start(timeout: Duration) throws(ListenerError) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let starts = state.withLock { state -> Bool in
            guard case .bound = state.phase else { return false }
            state.phase = .running
            return true
        }
        guard starts else { return }
        let result = DetachedThread.start(name: "portal-auth-lsn") { [self] in
            finish(waitForCallback(until: deadline))
        }
        guard result == 0 else {
            ListenerSockets.close(sockets)
            socketsClosed.open()
            finish(.stopped)
            throw ListenerError(kind: .system, message: "no thread for the listener (error \(result))")
        }
    }

    /// Ends the wait (as `.stopped`) unless it has already ended; returns at once.
    func stop() {
        wake.signal()
    }

    /// Ends the wait (as `.stopped`) unless it has already ended, and returns once the port
    /// is free again: the next listener on it may bind at once. A listener not started yet
    /// never starts.
    func close() {
        let waits = state.withLock { state -> Bool in
            switch state.phase {
            case .bound:
                ListenerSockets.close(sockets)
                state.phase = .finished(.stopped)
                return false
            case .running:
                return true
            case .finished:
                return false
            }
        }
        guard waits else { return }
        wake.signal()
        socketsClosed.wait()
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

    /// From now on, a callback waits for `answer(_:)` (`.whenComplete`): for a browser
    /// sign-in once its opener has returned, so that an opener that loads the page itself
    /// before it returns is still answered at once.
    func holdCallbacks() {
        answering.withLock { $0 = .whenComplete }
    }

    /// Whether a callback that ended the wait is waiting for `answer(_:)`.
    var holdsCallback: Bool {
        state.withLock { $0.held != nil }
    }

    /// `.whenComplete`: answers the callback that ended the wait with `page`, once, and
    /// closes its connection. Nothing to answer (another outcome, answered already): nothing.
    func answer(_ page: String) {
        let held = state.withLock { state -> HeldCallback? in
            defer { state.held = nil }
            return state.held
        }
        if let held { Self.send(page, on: held.fd) }
    }

    private static func send(_ page: String, on fd: Int32) {
        ListenerResponse(status: "200 OK", page: page, reason: "the callback").send(on: fd)
        _ = Glibc.close(fd)
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
        defer {
            ListenerSockets.close(sockets)
            socketsClosed.open()
        }
        let loop = ConnectionLoop(
            sockets: sockets, wake: wake,
            limits: .init(maxMessage: limits.maxRequestHead, readTimeout: limits.readTimeout, maxConnections: limits.maxConnections),
            frameEnd: { RequestHead.end(in: $0, scanned: &$1) })
        // The first of each kind said at the warning level: a flood of them must not flood the
        // log too.
        var refused: RefusedConnections?
        return loop.run(until: deadline, admit: { fd in
            let owner = peers.owner(of: fd)
            guard owner != .thisUser else { return true }
            var seen = refused ?? RefusedConnections(count: 0)
            let first = seen.record(owner)
            refused = seen
            PortalAuthLog.emit(first ? .warning : .debug, "\(flow): on \(endpoint), \(seen); still waiting.")
            return false
        }, message: { fd, head in
            switch admission.verdict(on: RequestHead(head)) {
            case .complete(let url, let page):
                switch answering.withLock({ $0 }) {
                case .atOnce:
                    ListenerResponse(status: "200 OK", page: page, reason: "the callback").send(on: fd)
                    return .end(.callback(url: url))
                case .whenComplete:
                    state.withLock { $0.held = HeldCallback(fd: fd, page: page) }
                    return .endKeeping(.callback(url: url))
                }
            case .refuse(let response):
                refuse(fd, response)
                return .next
            }
        }, tooLarge: { refuse($0, .tooLarge) }, ended: { ending in
            switch ending {
            case .timedOut:
                return .timedOut(refused: refused)
            case .woken:
                return .stopped
            case .failed:
                PortalAuthLog.emit(.error, "\(flow): the listener on \(endpoint) failed (errno \(errno)).")
                return .stopped
            }
        })
    }

    private func refuse(_ fd: Int32, _ response: ListenerResponse) {
        // Before the answer: once the client has it, the line is already there.
        PortalAuthLog.emit(.debug, "\(flow): the listener on \(endpoint) refused \(response.reason) (\(response.status)); still waiting.")
        response.send(on: fd)
    }
}
