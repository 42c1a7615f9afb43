import Foundation
import Testing
@testable import PortalAuthCore

/// Plain TCP on loopback for the listener tests: a raw HTTP client that can also misbehave,
/// a port that is free, and a port that is taken. Blocking calls, bounded by a 30 s receive
/// timeout so a broken listener fails the test instead of hanging it.
enum LoopbackClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// A failed connect's errno, which connectErrno reads.
        var code: Int32? = nil
    }

    /// A port nobody uses now, from the shared emulator (`GET /_emulator/loopback-port`: the
    /// one home of that rule, for every language's tests), which hands no two callers the same.
    static func freePort() async throws -> UInt16 {
        let answer = try await Emulator.shared.get().request(.get, "/_emulator/loopback-port") as? [String: Any]
        guard let port = (answer?["port"] as? Int).flatMap(UInt16.init(exactly:)) else {
            throw Failure(description: "the emulator handed out no loopback port: \(String(describing: answer))")
        }
        return port
    }

    /// `open(port)` on a free port; on another one if something else bound that port between
    /// the check and `open`'s bind (a free port can only be checked, not held): once in a
    /// while, one was.
    static func onFreePort<T>(_ open: (UInt16) throws -> T) async throws -> T {
        for _ in 0..<8 {
            do {
                return try open(try await freePort())
            } catch let error as ListenerError where error.kind == .portInUse {
                continue
            }
        }
        throw Failure(description: "each of 8 free ports was taken before it could be bound")
    }

    /// A socket listening on 127.0.0.1:`port`, so that the port is in use; close it when done.
    static func occupy(_ port: UInt16) throws -> Int32 {
        let fd = try open(ipv6: false)
        var address = sockaddr_in(ipv4Port: port)
        guard withSocketAddress(&address, { bind(fd, $0, $1) }) == 0, listen(fd, 1) == 0 else {
            close(fd)
            throw Failure(description: "occupy: errno \(errno)")
        }
        return fd
    }

    /// A connected socket to the loopback `port` (IPv4 unless `ipv6`); close it when done.
    static func connect(_ port: UInt16, ipv6: Bool = false) throws -> Int32 {
        let fd = try open(ipv6: ipv6)
        let status: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            status = withSocketAddress(&address) { Glibc.connect(fd, $0, $1) }
        } else {
            var address = sockaddr_in(ipv4Port: port)
            status = withSocketAddress(&address) { Glibc.connect(fd, $0, $1) }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect: errno \(code)", code: code)
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// The errno a connection to 127.0.0.1:`port` fails with (ECONNREFUSED: nobody listens
    /// there), 0 when it connects, -1 when no socket could be made. A number rather than a
    /// Bool, so that a failed expectation shows what the connection met.
    static func connectErrno(_ port: UInt16) -> Int32 {
        do {
            close(try connect(port))
            return 0
        } catch {
            return (error as? Failure)?.code ?? -1
        }
    }

    /// Sends `bytes` (as much as the peer takes), then reads until the peer closes. The
    /// text read, or nil when the connection was reset before anything arrived.
    static func exchange(_ port: UInt16, ipv6: Bool = false, sending bytes: [UInt8]) throws -> String? {
        let fd = try connect(port, ipv6: ipv6)
        defer { close(fd) }
        send(bytes, on: fd)
        return receiveAll(fd)
    }

    /// Sends `bytes` on `fd`, as much as the peer takes.
    static func send(_ bytes: [UInt8], on fd: Int32) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }
            sent += count
        }
    }

    /// Everything `fd` receives until the peer closes; nil when it reset the connection first.
    static func receiveAll(_ fd: Int32) -> String? {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 {
                return String(decoding: received, as: UTF8.self)
            } else if errno != EINTR {
                return received.isEmpty ? nil : String(decoding: received, as: UTF8.self)
            }
        }
    }

    struct Response {
        let status: Int
        let head: String
        let body: String

        var location: String? {
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }
                .map { $0.dropFirst("location:".count).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// A GET of an `http://127.0.0.1:PORT/...`, `http://[::1]:PORT/...` or
    /// `http://localhost:PORT/...` URL (localhost over IPv4), as a browser that sends no
    /// Fetch Metadata sends it: with the URL's authority as its Host, unless `host` says
    /// otherwise, and `headers` (`Name: value` lines) besides.
    static func get(_ url: String, host: String? = nil, headers: [String] = []) throws -> Response {
        guard let parts = URLComponents(string: url), let port = parts.port else {
            throw Failure(description: "not a loopback URL")
        }
        let authority = url.components(separatedBy: "://").dropFirst().first?.prefix { $0 != "/" && $0 != "?" } ?? ""
        let target = parts.percentEncodedPath + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
        let lines = ["GET \(target) HTTP/1.1", "Host: \(host ?? String(authority))", "Accept: text/html", "Connection: close"] + headers
        let request = lines.joined(separator: "\r\n") + "\r\n\r\n"
        guard let text = try exchange(UInt16(port), ipv6: authority.hasPrefix("["), sending: Array(request.utf8)) else {
            throw Failure(description: "reset")
        }
        return try parse(text)
    }

    /// Runs the blocking `body` on a thread of its own and awaits it. A listener that answers
    /// only once the client has completed the sign-in (the magic link's) needs Swift's
    /// cooperative pool meanwhile: a test must not hold one of its threads while it waits.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let started = DetachedThread.start(name: "test-browser") { continuation.resume(with: Result { try body() }) }
            if started != 0 { continuation.resume(throwing: Failure(description: "no thread")) }
        }
    }

    /// The headers a browser sends with a top-level navigation.
    static let navigation = ["Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document", "Sec-Fetch-User: ?1"]

    static func parse(_ text: String) throws -> Response {
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no head in \(text.prefix(80))") }
        let head = String(text[..<split.lowerBound])
        let statusLine = head.prefix { $0 != "\r" }.split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "no status") }
        return Response(status: status, head: head, body: String(text[split.upperBound...]))
    }

    /// Follows what a browser does with an authorize URL: load the provider's page, follow
    /// its redirect to the app's loopback redirect URL (a top-level navigation). Returns the
    /// listener's answer.
    static func followSignIn(_ authorizeUrl: String) throws -> Response {
        let provider = try get(authorizeUrl)
        guard provider.status == 302, let location = provider.location else {
            throw Failure(description: "the provider answered \(provider.status)")
        }
        return try get(location, headers: navigation)
    }

    /// `followSignIn` from a test's task: off Swift's pool, which a wait for a page the
    /// sign-in answers only once it has completed must not hold.
    static func followSignIn(_ authorizeUrl: String) async throws -> Response {
        try await offThePool { try followSignIn(authorizeUrl) as Response }
    }

    private static func open(ipv6: Bool) throws -> Int32 {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        return fd
    }

    private static func withSocketAddress<Address>(_ address: inout Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }
}

private extension sockaddr_in {
    init(ipv4Port port: UInt16) {
        self.init()
        sin_family = sa_family_t(AF_INET)
        sin_port = port.bigEndian
        sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    }
}

/// An opener that opens nothing: it records each URL and flag, and lets a test await them.
final class RecordingOpener: Sendable {
    typealias Call = (url: String, ephemeral: Bool)

    private struct State {
        var calls: [Call] = []
        var waiters: [CheckedContinuation<Call, Never>] = []
        /// The sign-in it was installed for has ended: nobody will call it any more.
        var ended = false
    }

    private let state = Locked(State())
    /// Thrown from the opener after recording, when set.
    private let failure: (any Error & Sendable)?

    init(failingWith failure: (any Error & Sendable)? = nil) {
        self.failure = failure
    }

    var opener: BrowserOpener {
        { [self] url, ephemeral in
            let waiters = state.withLock { state in
                state.calls.append((url, ephemeral))
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            waiters.forEach { $0.resume(returning: (url, ephemeral)) }
            if let failure { throw failure }
        }
    }

    var callCount: Int { state.withLock { $0.calls.count } }

    /// The first call, once it has happened; an empty URL when the sign-in ended without one.
    func firstCall() async -> Call {
        await withCheckedContinuation { continuation in
            let first = state.withLock { state -> Call? in
                if let first = state.calls.first { return first }
                if state.ended { return ("", false) }
                state.waiters.append(continuation)
                return nil
            }
            if let first { continuation.resume(returning: first) }
        }
    }

    /// The sign-in ended: a test still awaiting a call gets an empty URL instead of hanging.
    func signInEnded() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        waiters.forEach { $0.resume(returning: ("", false)) }
    }
}

/// A client whose redirect URL is on a free loopback port, allow-listed in a new environment
/// of `emulator` (with TOTP or without, Google and Apple enabled).
func loopbackClient(
    _ emulator: Emulator, totp: Bool = false, host: String = "127.0.0.1", path: String = "/callback",
    storage: any SessionStorage = MemorySessionStorage()
) async throws -> (client: PortalAuth, redirectUrl: String, port: UInt16) {
    let port = try await LoopbackClient.freePort()
    let redirectUrl = "http://\(host):\(port)\(path)"
    let environment = "env-browser-\(port)-\(UUID().uuidString.prefix(6))"
    try await emulator.addEnvironment([
        "id": environment, "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
        "redirectUrls": [redirectUrl], "totpRequired": totp, "accountAbstraction": false, "autoCreateWallet": false,
    ])
    let client = try makeClient(emulator, environment: environment, redirectUrl: redirectUrl, storage: storage)
    return (client, redirectUrl, port)
}

/// A loopback client of an emulator with a recording opener installed: a browser sign-in
/// whose browser is the test.
struct BrowserFixture {
    let emulator: Emulator
    let client: PortalAuth
    let redirectUrl: String
    let port: UInt16
    let opener: RecordingOpener

    init(_ emulator: Emulator, host: String = "127.0.0.1", opener: RecordingOpener = RecordingOpener()) async throws {
        self.emulator = emulator
        (client, redirectUrl, port) = try await loopbackClient(emulator, host: host)
        self.opener = opener
        client.setBrowserOpener(opener.opener)
    }

    /// Starts a sign-in and returns once the browser was opened, with the URL it was given.
    func startSignIn(apple: Bool = false) async -> (signIn: Task<AuthResult, any Error>, url: String) {
        await startSignIn(apple: apple, opener: opener)
    }

    /// The sign-in that just ended left nothing behind: its port is closed, and the next
    /// sign-in starts (it reaches its opener).
    func expectReleased() async {
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED, "the listener stopped")
        let next = RecordingOpener()
        client.setBrowserOpener(next.opener)
        defer { client.setBrowserOpener(opener.opener) }
        let (signIn, _) = await startSignIn(apple: false, opener: next)
        signIn.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await signIn.value }
    }

    private func startSignIn(apple: Bool, opener: RecordingOpener) async -> (signIn: Task<AuthResult, any Error>, url: String) {
        let signIn = Task { [client] in
            defer { opener.signInEnded() }
            return try await apple ? client.signInWithApple() : client.signInWithGoogle()
        }
        return (signIn, await opener.firstCall().url)
    }
}
