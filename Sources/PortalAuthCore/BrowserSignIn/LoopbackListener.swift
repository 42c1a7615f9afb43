import CPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a listener's wait ended.
enum ListenerOutcome: Equatable, Sendable {
    /// A browser requested the redirect path, and was answered: the full callback URL.
    case callback(url: String)
    /// The time given to `start` ran out.
    case timedOut
    /// `stop` was called, or the task awaiting the outcome was cancelled.
    case stopped
}

/// Why a listener could not listen; the message names the address, never a URL's query.
struct ListenerError: Error, Equatable {
    enum Kind: Equatable {
        case portInUse
        /// The system has no IPv6 loopback.
        case noIPv6
        /// No socket, descriptor or thread; another bind or listen failure.
        case system
    }

    let kind: Kind
    let message: String
}

/// A one-shot HTTP listener on a loopback redirect URL's address and port, over POSIX
/// sockets (docs/desktop.md "Browser sign-in").
///
/// It listens on loopback only. One thread of its own polls every socket without blocking
/// on any, so a client that connects and says nothing cannot hold up the browser: each
/// connection has a read deadline and a bounded request head. A GET of the redirect path
/// is answered with a small page and ends the wait; other paths get 404, malformed
/// requests 400, oversized ones 431, and the wait goes on. When the wait ends, by a
/// callback, the timeout or `stop`, every socket is closed before the outcome is reported.
final class LoopbackListener: Sendable {
    struct Limits: Sendable {
        /// The longest request head (request line and headers) read: a browser's redirect is
        /// far shorter; a longer one is answered 431.
        var maxRequestHead = 8192
        /// How long one connection may take to send its request head before it is dropped.
        var readTimeout: Duration = .seconds(10)
        /// Connections read at once; beyond it the oldest makes way for the newest.
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

    private let redirect: LoopbackRedirect
    /// The configured redirect URL, which requests are matched against (docs/protocol.md §4).
    private let redirectUrl: String
    private let limits: Limits
    /// Listening sockets: closed by the wait when it ends, or at deinit if it never ran.
    private let sockets: [Int32]
    /// Written to end the wait; closed at deinit only, so a late `stop` never writes to a
    /// descriptor reused by someone else.
    private let wake: WakeSignal
    private let state = Mutex(State())

    /// Binds and listens on the redirect URL's loopback address and port at once, so that
    /// a port in use is known before anything else happens.
    /// - Throws: `ListenerError` when the port is in use or no socket can be made.
    init(_ redirect: LoopbackRedirect, redirectUrl: String, limits: Limits = Limits()) throws(ListenerError) {
        self.redirect = redirect
        self.redirectUrl = redirectUrl
        self.limits = limits
        guard let wake = WakeSignal() else { throw ListenerError(kind: .system, message: "no descriptor for the listener (errno \(errno))") }
        self.wake = wake

        var opened: [Int32] = []
        do {
            switch redirect.host {
            case .ipv4:
                opened.append(try Self.listen(ipv6: false, port: redirect.port))
            case .ipv6:
                opened.append(try Self.listen(ipv6: true, port: redirect.port))
            case .localhost:
                opened.append(try Self.listen(ipv6: false, port: redirect.port))
                // [::1] too where the system has IPv6; where it has not, no browser uses it.
                do {
                    opened.append(try Self.listen(ipv6: true, port: redirect.port))
                } catch where error.kind == .noIPv6 {}
            }
        } catch {
            opened.forEach { _ = close($0) }
            throw error
        }
        sockets = opened
    }

    deinit {
        if case .bound = state.withLock({ $0.phase }) { sockets.forEach { _ = close($0) } }
    }

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

    private struct Connection {
        let fd: Int32
        let deadline: ContinuousClock.Instant
        var head: [UInt8] = []
        /// Where the search for the end of the head resumes.
        var scanned = 0
    }

    private func waitForCallback(until deadline: ContinuousClock.Instant) -> ListenerOutcome {
        var connections: [Connection] = []
        // Out of file descriptors, a pending connection keeps the listening sockets readable:
        // they are left out of poll for a moment instead of spinning.
        var acceptPausedUntil: ContinuousClock.Instant?
        defer {
            connections.forEach { _ = close($0.fd) }
            sockets.forEach { _ = close($0) }
        }
        while true {
            let now = ContinuousClock.now
            if now >= deadline { return .timedOut }
            connections.removeAll { connection in
                guard connection.deadline <= now else { return false }
                _ = close(connection.fd)
                return true
            }
            if let paused = acceptPausedUntil, paused <= now { acceptPausedUntil = nil }
            let nextDeadline = (connections.map(\.deadline) + [acceptPausedUntil].compactMap { $0 }).reduce(deadline, min)

            var fds = [wake.pollDescriptor]
            let listening = Int16(acceptPausedUntil == nil ? POLLIN : 0)
            fds += sockets.map { pollfd(fd: $0, events: listening, revents: 0) }
            fds += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Self.milliseconds(now.duration(to: nextDeadline)))
            if ready < 0 {
                if errno == EINTR { continue }
                PortalAuthLog.emit(.error, "Browser sign-in: the listener on \(redirect.endpoint) failed (errno \(errno)).")
                return .stopped
            }
            if fds[0].revents != 0 { return .stopped }

            // Connections first: the indexes of `fds` follow `connections` as it was.
            let firstConnection = 1 + sockets.count
            for index in connections.indices.reversed() where fds[firstConnection + index].revents != 0 {
                switch receive(&connections[index]) {
                case .pending:
                    continue
                case .closed:
                    _ = close(connections[index].fd)
                case .head(let end):
                    let connection = connections[index]
                    let callback = answer(connection.fd, head: connection.head[..<end])
                    _ = close(connection.fd)
                    if let callback {
                        connections.remove(at: index)
                        return .callback(url: callback)
                    }
                case .tooLarge:
                    send(connections[index].fd, status: "431 Request Header Fields Too Large",
                         page: CallbackPage.document(title: "Request too large", message: "The request is too large."))
                    _ = close(connections[index].fd)
                }
                connections.remove(at: index)
            }
            for (offset, socket) in sockets.enumerated() where fds[1 + offset].revents != 0 {
                if !accept(from: socket, into: &connections, now: now) {
                    acceptPausedUntil = now.advanced(by: Self.acceptBackoff)
                }
            }
        }
    }

    private static let acceptBackoff = Duration.milliseconds(50)

    /// Accepts what is pending; false when out of descriptors with no connection to give up.
    private func accept(from socket: Int32, into connections: inout [Connection], now: ContinuousClock.Instant) -> Bool {
        while true {
            let fd = pa_accept_nonblocking(socket)
            guard fd >= 0 else {
                guard errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM else { return true }
                guard !connections.isEmpty else { return false }
                _ = close(connections.removeFirst().fd)  // the oldest makes room for the newest
                continue
            }
            if connections.count >= limits.maxConnections {
                _ = close(connections.removeFirst().fd)
            }
            connections.append(Connection(fd: fd, deadline: now.advanced(by: limits.readTimeout)))
        }
    }

    private enum ReadResult {
        case pending
        case closed
        /// The head is complete: it ends before this index (its blank line excluded).
        case head(end: Int)
        case tooLarge
    }

    /// Reads what the connection has sent, without blocking, up to one byte past the limit.
    private func receive(_ connection: inout Connection) -> ReadResult {
        var chunk = [UInt8](repeating: 0, count: 2048)
        while true {
            let room = min(chunk.count, limits.maxRequestHead + 1 - connection.head.count)
            let count = chunk.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, room, 0) }
            if count == 0 { return .closed }
            if count < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? .pending : .closed
            }
            connection.head += chunk[..<count]
            if let end = Self.endOfHead(connection.head, from: &connection.scanned) { return .head(end: end) }
            if connection.head.count > limits.maxRequestHead { return .tooLarge }
        }
    }

    /// Where the head ends: before the first empty line (CRLF CRLF, or bare LFs, which
    /// RFC 9112 lets a server accept). `scanned` makes each byte looked at about once.
    private static func endOfHead(_ bytes: [UInt8], from scanned: inout Int) -> Int? {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var index = scanned
        while index < bytes.count {
            if bytes[index] == lf {
                let next = index + 1
                if next < bytes.count, bytes[next] == lf { return index + 1 }
                if next + 1 < bytes.count, bytes[next] == cr, bytes[next + 1] == lf { return index + 1 }
                if next >= bytes.count || (bytes[next] == cr && next + 1 >= bytes.count) { break }
            }
            index += 1
        }
        scanned = index
        return nil
    }

    /// Answers a complete request head; returns the callback URL when it was the redirect.
    private func answer(_ fd: Int32, head: ArraySlice<UInt8>) -> String? {
        guard let (method, target) = Self.requestLine(head) else {
            send(fd, status: "400 Bad Request", page: CallbackPage.document(title: "Bad request", message: "Bad request."))
            return nil
        }
        let url = redirect.origin + target
        guard RedirectURL.matches(url, configured: redirectUrl) else {
            send(fd, status: "404 Not Found", page: CallbackPage.document(title: "Not found", message: "Not found."))
            return nil
        }
        guard method == "GET" else {
            send(fd, status: "405 Method Not Allowed", extraHeaders: "Allow: GET\r\n",
                 page: CallbackPage.document(title: "Method not allowed", message: "Method not allowed."))
            return nil
        }
        send(fd, status: "200 OK", page: CallbackPage.html(forCallback: url, configured: redirectUrl))
        return url
    }

    /// The method and origin-form target of `METHOD SP /target SP HTTP/1.x`; nil for
    /// anything else. The target is printable ASCII, as browsers send it.
    private static func requestLine(_ head: ArraySlice<UInt8>) -> (method: String, target: String)? {
        let lineEnd = head.firstIndex(of: UInt8(ascii: "\n")) ?? head.endIndex
        var line = head[..<lineEnd]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3,
              !parts[0].isEmpty, parts[0].allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }),
              parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ (0x21...0x7E).contains($0) }),
              parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
        else { return nil }
        return (String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self))
    }

    /// Sends a whole response without blocking (it fits in any socket buffer; what a client
    /// that reads nothing leaves unsent is dropped), then ends the connection's output.
    private func send(_ fd: Int32, status: String, extraHeaders: String = "", page: String) {
        let response = "HTTP/1.1 \(status)\r\n"
            + "Content-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(page.utf8.count)\r\n"
            + "Cache-Control: no-store\r\n"
            // The tab's address holds the grant: nothing on the page may send it anywhere.
            + "Referrer-Policy: no-referrer\r\n"
            + "Content-Security-Policy: default-src 'none'\r\n"
            + extraHeaders
            + "Connection: close\r\n\r\n"
            + page
        var bytes = Array(response.utf8)
        _ = Glibc.send(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// `duration` in whole milliseconds for poll, rounded up so a wait never ends early.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    // MARK: - Sockets

    /// A non-blocking socket listening on 127.0.0.1 or [::1] at `port`.
    private static func listen(ipv6: Bool, port: UInt16) throws(ListenerError) -> Int32 {
        let address = ipv6 ? "[::1]:\(port)" : "127.0.0.1:\(port)"
        let fd = socket(ipv6 ? AF_INET6 : AF_INET,
                        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT { throw ListenerError(kind: .noIPv6, message: "cannot listen on \(address): no IPv6 loopback") }
            throw ListenerError(kind: .system, message: "cannot listen on \(address): errno \(code)")
        }
        var on: Int32 = 1
        // Lets the port be bound again at once after a sign-in, while its closed connections
        // linger in TIME_WAIT; Linux still refuses it while anyone listens there.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var status: Int32
        if ipv6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            socketAddress.sin6_addr = in6addr_loopback
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            socketAddress.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if status == 0 { status = Glibc.listen(fd, 16) }
        guard status == 0 else {
            let code = errno
            _ = close(fd)
            switch code {
            case EADDRINUSE: throw ListenerError(kind: .portInUse, message: "cannot listen on \(address): the port is in use")
            case EADDRNOTAVAIL where ipv6: throw ListenerError(kind: .noIPv6, message: "cannot listen on \(address): no IPv6 loopback")
            default: throw ListenerError(kind: .system, message: "cannot listen on \(address): errno \(code)")
            }
        }
        return fd
    }
}
