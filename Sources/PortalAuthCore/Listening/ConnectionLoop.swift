import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// The wait of a local listener, on a thread of its own: one poll over its wake-up signal,
/// its listening sockets and the connections they accept, blocking on none of them. The
/// loopback listener of a sign-in (HTTP from the browser) and the redirect channel's
/// receiver (a line from the app's next instance) both run it; each says where a message
/// ends and what to do with it.
///
/// Any local process may connect, say nothing or send a megabyte: each connection has a
/// read deadline and a bounded message (`ListenerConnections`), so none can hold up the
/// one that matters, and a burst of idle ones gives way first.
struct ConnectionLoop {
    struct Limits: Sendable {
        /// The longest message read; a longer one gets `tooLarge`.
        var maxMessage: Int
        /// How long one connection may take to send its message before it is dropped.
        var readTimeout: Duration
        /// Connections read at once; beyond it one gives way (`ListenerConnections`).
        var maxConnections: Int
    }

    /// What the loop does once a connection's message has been handled.
    enum Disposition<Outcome> {
        /// Close the connection and go on waiting.
        case next
        /// Close the connection and end the wait with this outcome.
        case end(Outcome)
        /// End the wait with this outcome and leave the connection open: whoever takes the
        /// outcome answers and closes it.
        case endKeeping(Outcome)
    }

    /// Why a wait ended without a message ending it.
    enum Ending {
        /// The wake-up signal was sent (a stop).
        case woken
        /// The deadline passed.
        case timedOut
        /// poll failed.
        case failed
    }

    let sockets: [Int32]
    let wake: WakeSignal
    let limits: Limits
    let frameEnd: FrameEnd

    /// Waits until `message` ends it, `deadline` passes (nil: never) or `wake` is signalled.
    /// Closes every connection it accepted (but one `endKeeping` keeps); the listening
    /// sockets are the caller's.
    /// - Parameters:
    ///   - admit: whether to read a connection just accepted (false closes it at once).
    ///   - message: what to do with a complete message (`received[..<end]`).
    ///   - tooLarge: answers a connection whose message passed `maxMessage` (then closed).
    ///   - ended: the outcome of a wait that no message ended.
    func run<Outcome>(
        until deadline: ContinuousClock.Instant?,
        admit: (Int32) -> Bool = { _ in true },
        message: (Int32, ArraySlice<UInt8>) -> Disposition<Outcome>,
        tooLarge: (Int32) -> Void,
        ended: (Ending) -> Outcome
    ) -> Outcome {
        var connections = ListenerConnections(capacity: limits.maxConnections)
        // Out of file descriptors, a pending connection keeps the listening sockets readable:
        // they are left out of poll for a moment instead of spinning.
        var acceptPausedUntil: ContinuousClock.Instant?
        defer { connections.closeAll() }
        while true {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { return ended(.timedOut) }
            if let paused = acceptPausedUntil, paused <= now { acceptPausedUntil = nil }
            let nextDeadline = [deadline, connections.earliestDeadline, acceptPausedUntil].compactMap { $0 }.min()

            var fds = [wake.pollDescriptor]
            let listening = Int16(acceptPausedUntil == nil ? POLLIN : 0)
            fds += sockets.map { pollfd(fd: $0, events: listening, revents: 0) }
            fds += connections.all.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let timeout = nextDeadline.map { Self.milliseconds(now.duration(to: $0)) } ?? -1
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                return ended(.failed)
            }
            if fds[0].revents != 0 { return ended(.woken) }

            // Connections first: the indexes of `fds` follow `connections` as it was. One whose
            // deadline had passed before this poll began goes unless the poll found its message
            // complete: what arrived in time is read, however late this loop runs (a busy
            // machine, a slow handler), and what dribbles in past its time is not waited for.
            let firstConnection = 1 + sockets.count
            for index in connections.all.indices.reversed() {
                let expired = connections[index].deadline <= now
                guard fds[firstConnection + index].revents != 0 else {
                    if expired { connections.close(at: index) }
                    continue
                }
                switch connections[index].receive(limit: limits.maxMessage, until: frameEnd) {
                case .pending:
                    if !expired { continue }
                case .closed:
                    break
                case .message(let end):
                    switch message(connections[index].fd, connections[index].received[..<end]) {
                    case .next:
                        break
                    case .end(let outcome):
                        return outcome
                    case .endKeeping(let outcome):
                        connections.forget(at: index)
                        return outcome
                    }
                case .tooLarge:
                    tooLarge(connections[index].fd)
                }
                connections.close(at: index)
            }
            // The clock read again: `now` is from before poll, which may have waited for
            // minutes (the user reading their email), and a deadline counted from it would
            // drop the connection before its first read.
            let arrived = ContinuousClock.now
            for (offset, socket) in sockets.enumerated() where fds[1 + offset].revents != 0 {
                if !accept(from: socket, into: &connections, now: arrived, admit: admit) {
                    acceptPausedUntil = arrived.advanced(by: Self.acceptBackoff)
                }
            }
        }
    }

    private static let acceptBackoff = Duration.milliseconds(50)

    /// Accepts what is pending, at most as many as it reads at once: a flood of connections
    /// (each refused, or dropped for the next) must leave the loop its turn at the deadlines
    /// and the wake-up; the rest wait for the next round. False when out of descriptors with
    /// no connection to give up.
    private func accept(from socket: Int32, into connections: inout ListenerConnections, now: ContinuousClock.Instant,
                        admit: (Int32) -> Bool) -> Bool {
        for _ in 0..<limits.maxConnections {
            let fd = pa_accept_nonblocking(socket)
            guard fd >= 0 else {
                guard errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM else { return true }
                guard connections.dropOne() else { return false }
                continue
            }
            guard admit(fd) else {
                _ = close(fd)
                continue
            }
            connections.admit(fd, deadline: now.advanced(by: limits.readTimeout))
        }
        return true
    }

    /// `duration` in whole milliseconds for poll, rounded up so a wait never ends early.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        // Not `seconds >= 0`: a past deadline less than a second ago has zero seconds and
        // negative attoseconds, and a negative timeout is poll's "forever".
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
