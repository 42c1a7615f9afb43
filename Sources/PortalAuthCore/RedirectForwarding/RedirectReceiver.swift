import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// The running instance's end of a redirect channel: it holds the channel's lock, listens
/// on its socket and, on a thread of its own (`ConnectionLoop`), takes the URLs the next
/// instances forward, until it is stopped.
///
/// A hostile local client can neither stall nor crash it: a connection from another user
/// is closed unread, each connection has a read deadline and a bounded message, a burst of
/// idle ones gives way first, and only URLs the channel carries are taken (`ForwardedLine`),
/// each answered at once, before it is handled. No line it logs holds a URL.
final class RedirectReceiver: Sendable {
    struct Limits: Sendable {
        /// How long a connection may take to send its line.
        var readTimeout: Duration = .seconds(5)
        /// Connections read at once.
        var maxConnections = 16
    }

    /// How the receiver's wait ended.
    enum Ending: Sendable {
        /// `stop` or `close`.
        case stopped
        /// poll failed.
        case failed
    }

    private enum Phase {
        case bound
        case running
        case finished
    }

    private let channel: RedirectChannel
    private let configured: String
    private let limits: Limits
    private let socket: Int32
    /// The channel's lock file, held locked while the receiver lives.
    private let lock: Int32
    private let wake: WakeSignal
    /// Signalled once the socket and the lock are released, for `close` to wait on.
    private let released: WakeSignal
    private let phase = Locked(Phase.bound)

    /// Takes the channel's lock and listens on its socket (replacing one a crashed instance
    /// left). From then on the next instances can connect; what they send waits until
    /// `start`.
    /// - Throws: `unavailable(channelInUse)` when another instance listens; `channelFailed`
    ///   when a file, a socket or a descriptor cannot be made.
    init(_ channel: RedirectChannel, redirectUrl: String, limits: Limits = Limits()) throws(PortalAuthSignInError) {
        self.channel = channel
        configured = redirectUrl
        self.limits = limits
        guard let wake = WakeSignal(), let released = WakeSignal() else {
            throw .unavailable(reason: .channelFailed, detail: "no descriptor left (errno \(errno))")
        }
        self.wake = wake
        self.released = released
        lock = Glibc.open(channel.lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw .unavailable(reason: .channelFailed, detail: "cannot open \(channel.lockPath): errno \(errno)") }
        guard pa_try_lock(lock) == 0 else {
            let code = errno
            _ = Glibc.close(lock)
            if code == EWOULDBLOCK { throw .unavailable(reason: .channelInUse, detail: nil) }
            throw .unavailable(reason: .channelFailed, detail: "cannot lock \(channel.lockPath): errno \(code)")
        }
        // Under the lock, a socket file can only be one that an instance left behind.
        unlink(channel.socketPath)
        do {
            socket = try ChannelSocket.listen(at: channel.socketPath)
        } catch {
            _ = pa_unlock(lock)
            _ = Glibc.close(lock)
            throw error
        }
    }

    deinit {
        if case .bound = phase.withLock({ $0 }) { release() }
    }

    /// Starts taking URLs on a thread of its own: `take(url)` for each URL the channel
    /// carries, which answers whether it was taken (it must not block); `ended` once the
    /// wait is over and the socket is gone. A receiver closed already calls `ended(.stopped)`
    /// at once.
    /// - Throws: `unavailable(channelFailed)` when no thread could be made.
    func start(take: @escaping @Sendable (String) -> Bool, ended: @escaping @Sendable (Ending) -> Void) throws(PortalAuthSignInError) {
        let starts = phase.withLock { phase -> Bool in
            guard case .bound = phase else { return false }
            phase = .running
            return true
        }
        guard starts else { return ended(.stopped) }
        let result = DetachedThread.start(name: "portal-auth-fwd") { [self] in
            let how = receive(take)
            release()
            phase.withLock { $0 = .finished }
            released.signal()
            ended(how)
        }
        guard result == 0 else {
            release()
            phase.withLock { $0 = .finished }
            released.signal()
            throw .unavailable(reason: .channelFailed, detail: "no thread for the channel (error \(result))")
        }
    }

    /// Ends the wait; returns at once.
    func stop() {
        wake.signal()
    }

    /// Ends the wait (or keeps it from starting) and returns once the socket and the lock
    /// are released: another instance may listen at once.
    func close() {
        let waits = phase.withLock { phase -> Bool in
            switch phase {
            case .bound:
                release()
                phase = .finished
                return false
            case .running:
                return true
            case .finished:
                return false
            }
        }
        guard waits else { return }
        wake.signal()
        released.waitUntilSignalled()
    }

    /// The socket file removed, then the lock released (so that no other instance's socket
    /// is ever removed). Unlocked before it is closed: a child process forked meanwhile
    /// holds a copy of the lock's descriptor until it execs or exits, and the copy alone
    /// would keep the channel locked against the next instance.
    private func release() {
        unlink(channel.socketPath)
        _ = Glibc.close(socket)
        _ = pa_unlock(lock)
        _ = Glibc.close(lock)
    }

    // MARK: - The wait (on the receiver's thread)

    private func receive(_ take: (String) -> Bool) -> Ending {
        let loop = ConnectionLoop(
            sockets: [socket], wake: wake,
            limits: .init(maxMessage: ForwardedLine.maxMessage, readTimeout: limits.readTimeout, maxConnections: limits.maxConnections),
            frameEnd: { ForwardedLine.end(in: $0, scanned: &$1) })
        return loop.run(until: nil, admit: { fd in
            guard ChannelSocket.peerIsThisUser(fd) else {
                PortalAuthLog.emit(.warning, "Redirect forwarding: refused a connection from another user's process.")
                return false
            }
            return true
        }, message: { fd, line in
            let taken = ForwardedLine.url(of: line, configured: configured).map(take) ?? false
            PortalAuthLog.emit(taken ? .info : .warning,
                               taken ? "Redirect forwarding: took a redirect from another instance." : "Redirect forwarding: refused a message that is not a redirect of this client.")
            reply(taken ? .taken : .refused, on: fd)
            return .next
        }, tooLarge: { fd in
            PortalAuthLog.emit(.warning, "Redirect forwarding: refused a message longer than any redirect.")
            reply(.refused, on: fd)
        }, ended: { how in
            if case .failed = how {
                PortalAuthLog.emit(.error, "Redirect forwarding: the channel failed (errno \(errno)).")
                return .failed
            }
            return .stopped
        })
    }

    /// Sends the reply without blocking (it fits any socket buffer; a client that reads
    /// nothing loses it).
    private func reply(_ reply: ForwardedLine.Reply, on fd: Int32) {
        var bytes = reply.line
        _ = send(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
    }
}
