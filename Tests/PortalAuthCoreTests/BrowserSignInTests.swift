import Foundation
import Testing
@testable import PortalAuthCore

/// docs/desktop.md "Browser sign-in": the order of the flow and its errors. The browser here is
/// this test, over plain sockets (BrowserSignInChromiumTests has the real one).
@Suite struct BrowserSignInTests {
    @Test(arguments: [
        "myapp://auth/callback", "http://example.com:8765/callback", "https://127.0.0.1:8765/callback",
        "http://127.0.0.1/callback", "http://127.0.0.2:8765/callback", "http://user@127.0.0.1:8765/callback",
    ])
    func aRedirectUrlThatIsNotLoopbackIsUnavailableBeforeAnyRequest(_ redirectUrl: String) async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, redirectUrl: redirectUrl)
        let opener = RecordingOpener()
        client.setBrowserOpener(opener.opener)
        await #expect(throws: PortalAuthSignInError.unavailable(reason: .redirectNotLoopback, detail: nil)) {
            _ = try await client.signInWithGoogle()
        }
        #expect(try await emulator.requests().isEmpty)
        #expect(opener.callCount == 0)
    }

    @Test(arguments: [
        ("https://accounts.example.com/o/oauth2/auth?x=1", false, true),
        ("HTTPS://accounts.example.com", false, true),
        ("http://127.0.0.1:8790/_emulator/oauth/google/authorize", true, true),
        ("http://accounts.example.com/auth", false, false),
        ("file:///etc/passwd", true, false), ("javascript:alert(1)", true, false), ("myapp://x", true, false),
        ("https://", false, false), ("https:///path", false, false), ("https://:443/x", false, false),
        ("https://user@/x", false, false), ("--incognito https://x", false, false),
        ("https://accounts.example.com/a b", false, false), ("https://accounts.example.com/\u{1}", false, false),
        ("https://accöunts.example.com/", false, false), ("//accounts.example.com/", false, false),
    ])
    func onlyAnAbsoluteHttpsAuthorizeURLReachesTheOpener(url: String, apiIsLoopback: Bool, accepted: Bool) {
        #expect(AuthorizeURLRule.accepts(url, apiIsLoopback: apiIsLoopback) == accepted)
    }

    /// A server that sends something else than a web page to open gets no browser started.
    @Test(arguments: ["file:///etc/passwd", "javascript:alert(document.cookie)", "--new-window=x", "myapp://auth"])
    func anAuthorizeURLThatIsNotAWebPageIsRefusedBeforeAnyBrowser(url: String) async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["data": ["google": url]]), as: UTF8.self)
        try await emulator.fault("/oauth/urls", "malformed", ["body": body])
        await #expect(throws: PortalAuthError.malformedResponse(path: "/api/v3/auth/oauth/urls", missing: nil)) {
            _ = try await browser.client.signInWithGoogle()
        }
        #expect(browser.opener.callCount == 0)
        await browser.expectReleased()
    }

    /// The opener runs on a thread of its own even when the sign-in runs on the library's I/O
    /// thread (as every C call does): it may block, and may call the library and wait.
    @Test func theOpenerRunsOffTheIOThreadAndMayCallTheLibraryAndWait() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator)
        let seen = Locked<(thread: String, methods: AuthMethodsResult?)>(("", nil))
        // The opener holds the client, which holds the opener: let go when done.
        defer { client.setBrowserOpener(nil) }
        client.setBrowserOpener { url, _ in
            let methods = Locked<AuthMethodsResult?>(nil)
            let done = DispatchSemaphore(value: 0)
            Task(executorPreference: PortalAuth.executor) {
                let answer = try? await client.getMethods()
                methods.withLock { $0 = answer }
                done.signal()
            }
            let answered = done.wait(timeout: .now() + 30) == .success
            seen.withLock { $0 = (currentThreadName(), answered ? methods.withLock { $0 } : nil) }
            _ = try LoopbackClient.followSignIn(url)
        }
        let result = try await Task(executorPreference: PortalAuth.executor) { try await client.signInWithGoogle() }.value
        #expect(result.authenticated != nil)
        #expect(seen.withLock { $0.thread } == "portal-auth-opn")
        #expect(seen.withLock { $0.methods } != nil, "the opener's call of the library completed")
    }

    @Test func aPortInUseIsUnavailableBeforeAnyRequest() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let taken = try LoopbackClient.occupy(browser.port)
        defer { close(taken) }
        let error = await caught { _ = try await browser.client.signInWithApple() }
        guard case .unavailable(.portInUse, let detail?, _) = error as? PortalAuthSignInError else {
            Issue.record("expected unavailable(portInUse), got \(String(describing: error))")
            return
        }
        #expect(detail == "cannot listen on 127.0.0.1:\(browser.port): the port is in use")
        #expect("\(error!)".contains("another program listens on the redirect URL's port"))
        #expect(try await emulator.requests().isEmpty)
        #expect(browser.opener.callCount == 0)
    }

    @Test func aFailingOpenerIsUnavailableAndLeavesNothingBehind() async throws {
        /// Its description quotes the URL: never repeated.
        struct NoDisplay: Error, CustomStringConvertible {
            var description: String { "cannot show http://secret.example/" }
        }
        let browser = try await BrowserFixture(try await Emulator.shared.get(), opener: RecordingOpener(failingWith: NoDisplay()))
        let error = await caught { _ = try await browser.client.signInWithGoogle() }
        #expect(error as? PortalAuthSignInError == .unavailable(reason: .openerFailed, detail: nil))
        #expect(!"\(error!)".contains("secret.example"))
        #expect(browser.opener.callCount == 1)
        await browser.expectReleased()
    }

    @Test func anOpenersOwnTextIsCarriedEscapedAndCut() async throws {
        let text = "no display\u{1B}[31m\nfor " + String(repeating: "x", count: 300)
        let opener = RecordingOpener(failingWith: BrowserOpenerError(message: text))
        let browser = try await BrowserFixture(try await Emulator.shared.get(), opener: opener)
        let error = await caught { _ = try await browser.client.signInWithGoogle() }
        guard case .unavailable(.openerFailed, let detail?, _) = error as? PortalAuthSignInError else {
            Issue.record("expected unavailable(openerFailed), got \(String(describing: error))")
            return
        }
        #expect(detail == #"no display\x1b[31m\nfor "# + String(repeating: "x", count: 200 - 20))
        #expect("\(error!)".hasPrefix(#"Browser sign-in is not possible: the application's browser opener failed (no display\x1b"#))
        await browser.expectReleased()
    }

    @Test func aFailedAuthorizeFetchPassesItsErrorThroughAndLeavesNothingBehind() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        try await emulator.fault("/oauth/urls", "status", ["status": 503])
        let error = await caught { _ = try await browser.client.signInWithGoogle() }
        #expect((error as? PortalRequestsError)?.status == 503)
        #expect(browser.opener.callCount == 0)
        await browser.expectReleased()
    }

    @Test func aSecondSignInOfTheClientIsRefusedWithoutARequest() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (first, _) = await browser.startSignIn()

        await #expect(throws: PortalAuthSignInError.signInInProgress) { _ = try await browser.client.signInWithApple() }
        await #expect(throws: PortalAuthSignInError.signInInProgress) { _ = try await browser.client.signInWithGoogle() }
        #expect(try await emulator.requests("/oauth/urls").count == 1)
        #expect(browser.opener.callCount == 1)

        first.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await first.value }
        await browser.expectReleased()
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
    }

    @Test func theTimeoutEndsTheWaitAsClosedWithNothingExchanged() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        await #expect(throws: PortalAuthSignInError.closed(reason: .timedOut)) {
            _ = try await browser.client.signInWithGoogle(timeout: .milliseconds(200))
        }
        #expect(browser.opener.callCount == 1)
        await browser.expectReleased()
        // The user's browser arriving late finds nobody: the grant is never exchanged.
        let url = await browser.opener.firstCall().url
        #expect(throws: LoopbackClient.Failure.self) { _ = try LoopbackClient.followSignIn(url) }
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
    }

    @Test func cancellationEndsTheWaitAsClosedWithNothingExchanged() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (signIn, url) = await browser.startSignIn(apple: true)
        signIn.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await signIn.value }
        await browser.expectReleased()
        #expect(throws: LoopbackClient.Failure.self) { _ = try LoopbackClient.followSignIn(url) }
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
    }

    /// What portal_auth_free does: the wait ends at once, and the port is free when endWaits
    /// returns, for the next client of the same redirect URL.
    @Test func endWaitsEndsTheWaitAtOnceAndFreesThePort() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (signIn, url) = await browser.startSignIn()
        browser.client.endWaits()
        #expect(LoopbackClient.connectErrno(browser.port) == ECONNREFUSED)
        await #expect(throws: PortalAuthSignInError.closed(reason: .clientClosed)) { _ = try await signIn.value }
        #expect(throws: LoopbackClient.Failure.self) { _ = try LoopbackClient.followSignIn(url) }
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
        // The client starts no wait any more; the next client of the redirect URL does, at once.
        await #expect(throws: PortalAuthSignInError.closed(reason: .clientClosed)) { _ = try await browser.client.signInWithApple() }
        let next = try makeClient(emulator, environment: browser.client.authEnvironmentId, redirectUrl: browser.redirectUrl)
        let opener = RecordingOpener()
        next.setBrowserOpener(opener.opener)
        let nextSignIn = Task { try await next.signInWithGoogle() }
        let page = try await LoopbackClient.followSignIn(await opener.firstCall().url)
        #expect(page.status == 200)
        #expect(try await nextSignIn.value.authenticated != nil)
    }

    @Test func aSignInCancelledBeforeItStartsIsClosedAndOpensNothing() async throws {
        let browser = try await BrowserFixture(try await Emulator.shared.get())
        let signIn = Task { [client = browser.client] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.signInWithGoogle()
        }
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await signIn.value }
        #expect(browser.opener.callCount == 0)
    }

    @Test func aTimeoutThatIsNotPositiveIsAnInvalidArgument() async throws {
        let client = try makeClient(try await Emulator.shared.get(), redirectUrl: "http://127.0.0.1:8765/callback")
        await #expect(throws: PortalAuthError.invalidArgument(name: "timeout")) { _ = try await client.signInWithGoogle(timeout: .zero) }
    }

    @Test func theCallbackIsAnsweredWithAPageAndCompletesTheSignIn() async throws {
        let browser = try await BrowserFixture(try await Emulator.start())
        let (signIn, url) = await browser.startSignIn()
        #expect(await browser.opener.firstCall().ephemeral == false)

        let page = try await LoopbackClient.followSignIn(url)
        #expect(page.status == 200)
        #expect(page.head.contains("Content-Type: text/html; charset=utf-8"))
        #expect(page.head.contains("Referrer-Policy: no-referrer"))
        // The page says the outcome, or (for a callback that beat the opener's return) that it came.
        #expect(page.body.contains("You are signed in") || page.body.contains("Sign-in received"))
        let result = try #require(try await signIn.value.authenticated)
        #expect(try await browser.client.restoreSession()?.endUserId == result.session.endUserId)
        await browser.expectReleased()
    }

    /// A 5xx before any session leaves the grant unspent: the page says to reload, the wait
    /// goes on, and the reload (the same redirect) signs in.
    @Test(arguments: [502, 503])
    func anExchangeThatLeftTheGrantUnspentWaitsForAReload(status: Int) async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/oauth/tokens", "status", ["status": status])
        let browser = try await BrowserFixture(emulator)
        try await LogLines.recording { lines in
            let (signIn, url) = await browser.startSignIn()
            // The opener has returned: the page waits for the outcome.
            #expect(await lines.first { $0.contains("127.0.0.1:\(browser.port) now waits for the outcome") } != nil)
            let callback = try #require(try LoopbackClient.get(url).location)
            let load = { try await LoopbackClient.offThePool { try LoopbackClient.get(callback, headers: LoopbackClient.navigation) } }

            #expect(try await load().body.contains("Reload this page to try once more"))
            #expect(try await load().body.contains("You are signed in"))
            #expect(try await signIn.value.authenticated != nil)
        }
        #expect(try await emulator.requests("/oauth/tokens").count == 2, "the same grant, sent again by the reload")
        await browser.expectReleased()
    }

    @Test func theErrorPageEscapesTheProviderError() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (signIn, url) = await browser.startSignIn()

        let page = try await LoopbackClient.followSignIn(url + "&outcome=error&error=%3Cscript%3Ealert(1)%3C%2Fscript%3E%20%26%20'q'")
        #expect(page.status == 200)
        #expect(page.body.contains("Sign-in failed: &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;q&#39;."))
        #expect(!page.body.contains("<script"))
        await #expect(throws: PortalAuthError.authenticationFailed(error: "<script>alert(1)</script> & 'q'")) {
            _ = try await signIn.value
        }
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
    }

    /// No grant, or a token with no authMethod or login_type (handleRedirect finds nothing to
    /// exchange): a stray or hostile request must not end the user's sign-in.
    @Test(arguments: ["", "?state=x&login_type=GOOGLE", "?token=abc&state=x"])
    func aCallbackWithNothingToExchangeLeavesTheWaitGoing(query: String) async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (signIn, url) = await browser.startSignIn()

        let page = try LoopbackClient.get(browser.redirectUrl + query, headers: LoopbackClient.navigation)
        #expect(page.status == 400 && page.body.contains("The application is still waiting"))
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
        #expect(try await LoopbackClient.followSignIn(url).status == 200)
        #expect(try await signIn.value.authenticated != nil)
    }

    /// Another account's grant, sent by a page or a local process: only a top-level navigation
    /// to the listener's own authority could complete the sign-in with it.
    @Test func anAttackersGrantNeedsTheOwnHostAndATopLevelNavigation() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (signIn, url) = await browser.startSignIn()
        let attacker = try await emulator.grant(environment: browser.client.authEnvironmentId, email: uniqueEmail("attacker"), kind: "oauth")
        let planted = "\(browser.redirectUrl)?token=\(attacker)&login_type=GOOGLE"

        let foreign = try LoopbackClient.get(planted, host: "evil.example:\(browser.port)", headers: LoopbackClient.navigation)
        #expect(foreign.status == 421)
        let image = try LoopbackClient.get(planted, headers: ["Origin: https://evil.example", "Sec-Fetch-Site: cross-site",
                                                              "Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: image"])
        #expect(image.status == 403)
        #expect(!image.body.contains("Sign-in received") && !foreign.body.contains("Sign-in received"))

        #expect(try await LoopbackClient.followSignIn(url).status == 200)
        let result = try #require(try await signIn.value.authenticated)
        let exchanged = try await emulator.requests("/oauth/tokens").compactMap { $0.jsonBody["token"] as? String }
        #expect(exchanged.count == 1 && exchanged[0] != attacker, "only the user's own grant was exchanged")
        #expect(!result.session.endUserId.isEmpty)
    }

    @Test func otherPathsAndMethodsAreRefusedAndTheWaitGoesOn() async throws {
        let browser = try await BrowserFixture(try await Emulator.start())
        let (signIn, url) = await browser.startSignIn()
        let origin = "http://127.0.0.1:\(browser.port)"

        #expect(try LoopbackClient.get(origin + "/favicon.ico").status == 404)
        #expect(try LoopbackClient.get(origin + "/callbackx?token=t&login_type=GOOGLE").status == 404)
        #expect(try LoopbackClient.get(origin + "/CALLBACK?token=t&login_type=GOOGLE").status == 404)
        let post = try LoopbackClient.exchange(
            browser.port, sending: Array("POST /callback?token=t HTTP/1.1\r\nHost: 127.0.0.1:\(browser.port)\r\n\r\n".utf8))
        #expect(try LoopbackClient.parse(try #require(post)).status == 405)

        // A trailing slash is the same redirect (docs/protocol.md §4).
        let location = try #require(try LoopbackClient.get(url).location)
        #expect(location.hasPrefix(browser.redirectUrl + "?"))
        let slashed = location.replacingOccurrences(of: "/callback?", with: "/callback/?")
        #expect(try await LoopbackClient.offThePool { try LoopbackClient.get(slashed, headers: LoopbackClient.navigation) }.status == 200)
        #expect(try await signIn.value.authenticated != nil)
    }

    @Test func hostileClientsDoNotStopTheRealCallback() async throws {
        let browser = try await BrowserFixture(try await Emulator.start())
        let (signIn, url) = await browser.startSignIn()
        let port = browser.port

        // Connects and says nothing, for the whole test.
        let silent = try LoopbackClient.connect(port)
        defer { close(silent) }
        // Sends half a request head and stops.
        let halfway = try LoopbackClient.connect(port)
        defer { close(halfway) }
        _ = Glibc.send(halfway, "GET /callback?tok", 17, Int32(MSG_NOSIGNAL))

        let garbage = try LoopbackClient.exchange(port, sending: [0x16, 0x03, 0x01, 0x00, 0xFF] + Array("\r\n\r\n".utf8))
        #expect(try LoopbackClient.parse(try #require(garbage)).status == 400)
        let binary = try LoopbackClient.exchange(port, sending: Array("GET /callback?\u{1}x HTTP/1.1\r\n\r\n".utf8))
        #expect(try LoopbackClient.parse(try #require(binary)).status == 400)
        // One byte over the head limit is refused as too large ...
        let overLimit = [UInt8]("GET /".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 8192 - 4)
        let tooLarge = try LoopbackClient.exchange(port, sending: overLimit)
        #expect(try LoopbackClient.parse(try #require(tooLarge)).status == 431)
        // ... and a megabyte is cut off without being read.
        _ = try LoopbackClient.exchange(port, sending: [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20))

        #expect(try await LoopbackClient.followSignIn(url).status == 200)
        #expect(try await signIn.value.authenticated != nil)
    }

    @Test func theGrantLockIsNotHeldWhileWaiting() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (signIn, _) = await browser.startSignIn()

        // A magic link completes while the browser sign-in waits.
        let (link, _) = try await grantRedirect(emulator, environment: browser.client.authEnvironmentId,
                                                redirectUrl: browser.redirectUrl)
        #expect(try await browser.client.handleRedirect(link)?.authenticated != nil)

        signIn.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await signIn.value }
    }

    @Test func localhostListensOnBothLoopbackAddresses() async throws {
        let browser = try await BrowserFixture(try await Emulator.start(), host: "localhost")
        let (signIn, url) = await browser.startSignIn()

        let host = "localhost:\(browser.port)"
        #expect(try LoopbackClient.get("http://[::1]:\(browser.port)/elsewhere", host: host).status == 404)
        #expect(try LoopbackClient.get("http://127.0.0.1:\(browser.port)/elsewhere", host: host).status == 404)
        let location = try #require(try LoopbackClient.get(url).location)
        #expect(location.hasPrefix("http://localhost:\(browser.port)/callback?"))
        // A browser that resolved localhost to [::1] still sends the name it was given.
        let callback = location.replacingOccurrences(of: "localhost", with: "[::1]")
        #expect(try LoopbackClient.get(callback, headers: LoopbackClient.navigation).status == 421)
        #expect(try await LoopbackClient.offThePool { try LoopbackClient.get(callback, host: host, headers: LoopbackClient.navigation) }.status == 200)
        #expect(try await signIn.value.authenticated != nil)
    }
}
