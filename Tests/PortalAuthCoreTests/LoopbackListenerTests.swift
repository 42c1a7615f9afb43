import Foundation
import Testing
@testable import PortalAuthCore

/// The loopback redirect URLs a browser sign-in accepts (docs/desktop.md "Browser sign-in",
/// RFC 8252 §7.3).
@Suite struct LoopbackRedirectTests {
    @Test func loopbackAddressesWithAnExplicitPortAreAccepted() throws {
        let ipv4 = try #require(LoopbackRedirect("  http://127.0.0.1:8765/callback?app=1#x "))
        #expect(ipv4.host == .ipv4 && ipv4.port == 8765 && ipv4.origin == "http://127.0.0.1:8765")
        let ipv6 = try #require(LoopbackRedirect("HTTP://[::1]:1"))
        #expect(ipv6.host == .ipv6 && ipv6.port == 1 && ipv6.origin == "HTTP://[::1]:1")
        #expect(LoopbackRedirect("http://LocalHost:65535/a/b")?.host == .localhost)
        #expect(LoopbackRedirect("http://localhost:65535?x")?.origin == "http://localhost:65535")
    }

    @Test(arguments: [
        "", "http://", "myapp://auth/callback", "https://127.0.0.1:8765/callback", "http://127.0.0.1/callback",
        "http://127.0.0.1:/callback", "http://127.0.0.1:0/callback", "http://127.0.0.1:65536/callback",
        "http://127.0.0.1:+80/callback", "http://127.0.0.1:80 /callback", "http://127.0.0.1:008080/callback",
        "http://127.0.0.2:8765/", "http://0.0.0.0:8765/", "http://[::]:8765/", "http://[::1]/x",
        "http://example.com:8765/", "http://user@127.0.0.1:8765/", "http://localhost.:8765/", "http://127.1:8765/",
        "http:127.0.0.1:8765", "ws://127.0.0.1:8765/",
    ])
    func otherURLsAreRefused(_ url: String) {
        #expect(LoopbackRedirect(url) == nil)
    }
}

/// The listener on its own: limits that the browser sign-in tests leave at their defaults.
@Suite struct LoopbackListenerTests {
    private func listener(limits: LoopbackListener.Limits = .init()) async throws -> (LoopbackListener, UInt16) {
        try await LoopbackClient.onFreePort { port in
            let redirectUrl = "http://127.0.0.1:\(port)/callback"
            let redirect = try #require(LoopbackRedirect(redirectUrl))
            return (try LoopbackListener(CallbackAdmission(redirect: redirect, redirectUrl: redirectUrl), limits: limits), port)
        }
    }

    /// The helper's retry: a port that another program takes between the check and the bind
    /// is given up for another, where the listener opens.
    @Test func aPortTakenAfterItsCheckIsGivenUpForAnother() async throws {
        var occupied: (fd: Int32, port: UInt16)?
        defer { if let occupied { close(occupied.fd) } }
        let (listener, port) = try await LoopbackClient.onFreePort { port in
            if occupied == nil { occupied = (try LoopbackClient.occupy(port), port) }  // the other program, just then
            let redirectUrl = "http://127.0.0.1:\(port)/callback"
            let redirect = try #require(LoopbackRedirect(redirectUrl))
            return (try LoopbackListener(CallbackAdmission(redirect: redirect, redirectUrl: redirectUrl)), port)
        }
        #expect(port != occupied?.port)
        try listener.start(timeout: .seconds(120))
        #expect(LoopbackClient.connectErrno(port) == 0, "it listens there")
        listener.stop()
        #expect(await listener.outcome() == .stopped)
    }

    private func request(_ port: UInt16, _ target: String) -> [UInt8] {
        Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
    }

    @Test func aClientThatSaysNothingIsDroppedAtItsReadDeadline() async throws {
        var limits = LoopbackListener.Limits()
        limits.readTimeout = .milliseconds(100)
        let (listener, port) = try await listener(limits: limits)
        try listener.start(timeout: .seconds(120))
        let silent = try LoopbackClient.connect(port)
        defer { close(silent) }
        // The listener closes it: the read ends with nothing, long before the 30 s guard.
        #expect(LoopbackClient.receiveAll(silent) == "")
        listener.stop()
        #expect(await listener.outcome() == .stopped)
    }

    @Test func aConnectionAfterALongIdleWaitGetsItsWholeReadTime() async throws {
        // Whole seconds: the margins below must outlast a busy machine's scheduling.
        let readTime = Duration.seconds(1)
        var limits = LoopbackListener.Limits()
        limits.readTimeout = readTime
        let (listener, port) = try await listener(limits: limits)
        try listener.start(timeout: .seconds(120))
        // Idle for longer than the read time, as while the user signs in at the provider or
        // opens their email, then a client that takes a quarter of it to send: a read time
        // counted from before the idle wait would drop it unread. The condition under test is
        // time passing, not an event.
        try await Task.sleep(for: readTime * 2)
        let bytes = request(port, "/elsewhere")
        // On a thread of its own: after a suspension between the connect and the send, the
        // test would wait for a thread of the cooperative pool, which a busy suite's blocking
        // tests may hold for longer than the whole read time.
        let answer = try await LoopbackClient.offThePool {
            let client = try LoopbackClient.connect(port)
            defer { close(client) }
            Thread.sleep(forTimeInterval: readTime / 4 / .seconds(1))
            LoopbackClient.send(bytes, on: client)
            return LoopbackClient.receiveAll(client)
        }
        // A dropped connection reads as nothing at all (closed) or nil (reset).
        let read = try #require(answer.flatMap { $0.isEmpty ? nil : $0 }, "the connection was dropped unread")
        #expect(try LoopbackClient.parse(read).status == 404)
        listener.stop()
        #expect(await listener.outcome() == .stopped)
    }

    /// A waiting listener that reads at most two connections at once.
    private func waitingWithTwoPlaces() async throws -> (LoopbackListener, UInt16) {
        var limits = LoopbackListener.Limits()
        limits.maxConnections = 2
        let (listener, port) = try await listener(limits: limits)
        try listener.start(timeout: .seconds(120))
        return (listener, port)
    }

    @Test func beyondTheLimitTheOldestIdleConnectionMakesWay() async throws {
        let (listener, port) = try await waitingWithTwoPlaces()
        let first = try LoopbackClient.connect(port)
        defer { close(first) }
        let second = try LoopbackClient.connect(port)
        defer { close(second) }
        // The third connection's request is served; the first, silent, was dropped for it.
        let answer = try LoopbackClient.exchange(port, sending: request(port, "/x"))
        #expect(try LoopbackClient.parse(try #require(answer)).status == 404)
        #expect(LoopbackClient.receiveAll(first) == "")
        listener.stop()
        #expect(await listener.outcome() == .stopped)
    }

    /// A burst of connections that send nothing must not cost the browser the request it is
    /// sending: the idle ones go first, however new they are.
    @Test func aConnectionThatIsSendingOutlastsIdleOnes() async throws {
        let (listener, port) = try await waitingWithTwoPlaces()
        let sending = try LoopbackClient.connect(port)
        defer { close(sending) }
        let whole = request(port, "/x")
        _ = whole.prefix(10).withUnsafeBytes { Glibc.send(sending, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<3 { idle.append(try LoopbackClient.connect(port)) }
        // Three idle connections came after it: two of them were dropped, never it.
        _ = whole.dropFirst(10).withUnsafeBytes { Glibc.send(sending, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let answer = try #require(LoopbackClient.receiveAll(sending))
        #expect(try LoopbackClient.parse(answer).status == 404)
        #expect(LoopbackClient.receiveAll(idle[0]) == "" && LoopbackClient.receiveAll(idle[1]) == "")
        listener.stop()
        #expect(await listener.outcome() == .stopped)
    }

    @Test func bareLineFeedsEndAHeadAndTheCallbackURLIsTheConfiguredOriginPlusTheTarget() async throws {
        let (listener, port) = try await listener()
        try listener.start(timeout: .seconds(120))
        let answer = try LoopbackClient.exchange(
            port, sending: Array("GET /callback?token=t&login_type=GOOGLE HTTP/1.0\nHost: 127.0.0.1:\(port)\n\n".utf8))
        #expect(try LoopbackClient.parse(try #require(answer)).status == 200)
        #expect(await listener.outcome() == .callback(url: "http://127.0.0.1:\(port)/callback?token=t&login_type=GOOGLE"))
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED)
    }

    /// Another local user's process reaches the port as easily as the browser does; had it a
    /// say, it could end the user's wait (`error=`) or take the redirect, and the redirect is
    /// the session. Its connection is closed before anything of it is read; the wait goes on,
    /// and the user's own request still ends it.
    @Test(arguments: ["127.0.0.1", "[::1]"])
    func aConnectionFromAnotherUserIsClosedUnread(_ host: String) async throws {
        let (listener, port) = try await LoopbackClient.onFreePort { port in
            let redirectUrl = "http://\(host):\(port)/callback"
            let redirect = try #require(LoopbackRedirect(redirectUrl))
            return (try LoopbackListener(CallbackAdmission(redirect: redirect, redirectUrl: redirectUrl)), port)
        }
        try listener.start(timeout: .seconds(120))
        let url = "http://\(host):\(port)/callback?error=x"
        // No reply at all: curl's 000, and its exit status for a connection closed (52) or
        // reset (56: closed with the request unread) before any.
        let other = try AnotherUser.run("curl", ["-sg", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30", url])
        #expect(other.output == "000" && [52 << 8, 56 << 8].contains(other.status))
        let own = try Subprocess.runReportingStatus("/usr/bin/env", ["curl", "-sg", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30", url])
        #expect(own == (0, "200"))
        #expect(await listener.outcome() == .callback(url: url))
    }

    /// Another user's connect flood: 40,000 sockets of its own, which a lookup through the
    /// kernel's whole socket table would go through for each connection it refuses (the
    /// client waited past its 30 s guard behind the refusals then), and two loops that
    /// connect and close without end. A refusal looks up that one socket, so the listener
    /// keeps up, and the user's own client gets in while the flood goes on.
    @Test func theUsersOwnClientGetsThroughAnotherUsersConnectFlood() async throws {
        let (listener, port) = try await listener()
        try listener.start(timeout: .seconds(120))
        let script = Emulator.repositoryRoot.appendingPathComponent("scripts/connect-flood.py").path
        let flood = try AnotherUser.start("/usr/bin/python3", [script, "\(port)", "40000", "2"])
        #expect(flood.readLine() == "flooding\n")
        let answer = Result { try LoopbackClient.exchange(port, sending: request(port, "/callback?error=x")) }
        flood.closeInput()
        #expect(flood.wait() == 0)
        #expect(try LoopbackClient.parse(try #require(try answer.get())).status == 200)
        #expect(await listener.outcome() == .callback(url: "http://127.0.0.1:\(port)/callback?error=x"))
    }

    /// A client of this user whose socket is IPv6 (dual-stack, as Java's are) reaches an IPv4
    /// listener through the IPv4-mapped address: the kernel's lookup of the IPv4 pair finds
    /// its socket, and it is served.
    @Test func aDualStackClientOfThisUserIsServed() async throws {
        let (listener, port) = try await listener()
        try listener.start(timeout: .seconds(120))
        let url = "http://[::ffff:127.0.0.1]:\(port)/callback?error=x"
        let served = try Subprocess.runReportingStatus("/usr/bin/env", ["curl", "-sg", "-o", "/dev/null", "-w", "%{http_code}",
                                                                       "--max-time", "30", "-H", "Host: 127.0.0.1:\(port)", url])
        #expect(served == (0, "200"))
        #expect(await listener.outcome() == .callback(url: "http://127.0.0.1:\(port)/callback?error=x"))
    }

    /// The kernel's socket diagnostics as LoopbackPeer asks them: the peer of an accepted
    /// connection is this user's while its process holds it open; once closed (the kernel
    /// keeps it a while, with no inode), it is no one's.
    @Test func theOwnerIsThePeersLiveSocket() async throws {
        let port = try await LoopbackClient.freePort()
        let listening = try LoopbackClient.occupy(port)
        defer { close(listening) }
        let peers = try LoopbackPeer(answeringFor: listening)
        let client = try LoopbackClient.connect(port)
        let accepted = accept(listening, nil, nil)
        defer { close(accepted) }
        #expect(peers.owner(of: accepted) == .thisUser)
        close(client)
        #expect(LoopbackClient.receiveAll(accepted) == "", "the client's close has arrived")
        #expect(peers.owner(of: accepted) == .anotherUser(nil))
    }

    @Test func aListenerNeverStartedReleasesItsPort() async throws {
        let (listener, port) = try await listener()
        withExtendedLifetime(listener) { #expect(LoopbackClient.connectErrno(port) == 0) }
        _ = consume listener
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED)
    }
}
