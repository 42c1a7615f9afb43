import Foundation
import Testing
@testable import PortalAuthCore

/// docs/desktop.md "Magic-link sign-in": the order of the flow and its errors, the page the
/// browser ends on, a redirect handled meanwhile, hostile requests, and `endWaits`. The
/// browser here is this test, over plain sockets (BrowserSignInChromiumTests has the real one).
@Suite struct MagicLinkSignInTests {
    /// Generous: only a broken listener makes a sign-in wait this long.
    static let patience: Duration = .seconds(120)

    /// Starts a magic-link sign-in and returns once its email is sent.
    private func startSignIn(_ client: PortalAuth, _ emulator: Emulator, email: String,
                             timeout: Duration = patience) async throws -> (Task<AuthResult, any Error>, Emulator.Mail) {
        let signIn = Task { try await client.signInWithMagicLink(email, timeout: timeout) }
        let mail = try #require(try await emulator.mail(to: email).last)
        return (signIn, mail)
    }

    /// What a browser does with the email's button: the emulator's page, then its redirect to
    /// the listener as a top-level navigation. The listener's answer.
    private func open(_ mail: Emulator.Mail) async throws -> LoopbackClient.Response {
        try await LoopbackClient.offThePool {
            let page = try LoopbackClient.get(mail.emailLink)
            guard page.status == 302, page.location == mail.link else {
                throw LoopbackClient.Failure(description: "the email's page answered \(page.status)")
            }
            return try LoopbackClient.get(mail.link, headers: LoopbackClient.navigation)
        }
    }

    @Test func theBrowserBringsTheRedirectAndThePageSaysTheSignInIsDone() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator)
        let email = uniqueEmail("magic")
        let (signIn, mail) = try await startSignIn(client, emulator, email: email)

        let page = try await open(mail)
        let result = try #require(try await signIn.value.authenticated)
        #expect(page.status == 200 && page.body.contains("You are signed in. You can close this window and go back to the application."))
        #expect(page.head.contains("Cache-Control: no-store") && page.head.contains("Referrer-Policy: no-referrer"))
        let grant = try #require(try await emulator.requests("/magic-links/validations").first?.jsonBody["token"] as? String)
        #expect(!page.body.contains(grant), "the page never carries the grant")
        #expect(try await client.restoreSession()?.endUserId == result.session.endUserId)
        #expect(try await emulator.requests("/magic-links").count == 1)
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED, "the listener stopped")
    }

    @Test func theTotpStepSendsTheUserBackToTheApplicationForTheCode() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator, totp: true)
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("totp"))

        let page = try await open(mail)
        let step = try #require(try await signIn.value.totpStep)
        #expect(page.body.contains("Go back to the application and enter the code from your authenticator app"))
        #expect(step.totpLink != nil, "a first sign-in enrolls")
        #expect(try await client.restoreSession() == nil)
        let verified = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        #expect(verified.session.endUserId == step.endUserId)
    }

    @Test func aFailedExchangeFailsTheSignInAndThePageSaysSo() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator)
        try await emulator.fault("/magic-links/validations", "status", ["status": 400])
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("failed"))

        let page = try await open(mail)
        await #expect(throws: PortalRequestsError.httpStatus(status: 400, bodyExcerpt: nil)) { _ = try await signIn.value }
        #expect(page.status == 200 && page.body.contains("The sign-in could not be completed"))
    }

    /// A 5xx before any session leaves the grant unspent: the wait goes on, the page says to
    /// open the link again, and the link then signs in (docs/network.md "A lost answer").
    @Test(arguments: [502, 503])
    func anExchangeThatLeftTheLinkUsableKeepsWaitingForIt(status: Int) async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator)
        try await emulator.fault("/magic-links/validations", "status", ["status": status])
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("again"))

        let first = try await open(mail)
        #expect(first.body.contains("Open the link in the email again"))
        let second = try await open(mail)
        #expect(second.body.contains("You are signed in"))
        #expect(try await signIn.value.authenticated != nil)
        #expect(try await emulator.requests("/magic-links/validations").count == 2)
    }

    @Test func aSpentLinkEndsTheWait() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator)
        try await emulator.fault("/magic-links/validations", "lost")
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("spent"))

        let page = try await open(mail)
        let error = await caught { _ = try await signIn.value }
        guard case .network(.connectionReset, _) = error as? PortalRequestsError else { Issue.record("\(String(describing: error))"); return }
        #expect(page.body.contains("The sign-in could not be completed"))
    }

    @Test func itsChecksComeInTheirOrderBeforeAnyEmail() async throws {
        let emulator = try await Emulator.start()
        let (client, redirectUrl, port) = try await loopbackClient(emulator)
        let environment = client.authEnvironmentId
        await #expect(throws: PortalAuthError.invalidArgument(name: "timeout")) {
            _ = try await client.signInWithMagicLink("ada@example.com", timeout: .zero)
        }
        // Not configured for magic links: said before the email is looked at.
        let unconfigured = try makeClient(emulator, environment: environment, redirectUrl: redirectUrl, magicLink: nil)
        await #expect(throws: PortalAuthError.magicLinkNotConfigured) { _ = try await unconfigured.signInWithMagicLink(" ") }
        await #expect(throws: PortalAuthError.invalidArgument(name: "email")) { _ = try await client.signInWithMagicLink(" \t") }
        // Not a loopback redirect URL.
        let custom = try makeClient(emulator)
        await #expect(throws: PortalAuthSignInError.unavailable(reason: .redirectNotLoopback, detail: nil)) {
            _ = try await custom.signInWithMagicLink("ada@example.com")
        }
        // The port is in use: unavailable before the email is sent.
        let taken = try LoopbackClient.occupy(port)
        await #expect(throws: PortalAuthSignInError.unavailable(reason: .portInUse, detail: "cannot listen on 127.0.0.1:\(port): the port is in use")) {
            _ = try await client.signInWithMagicLink("ada@example.com")
        }
        close(taken)
        #expect(try await emulator.requests("/magic-links").isEmpty, "no email went out")
    }

    @Test func oneSignInAtATimeWithTheBrowserSignIns() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let (browserSignIn, _) = await browser.startSignIn()
        await #expect(throws: PortalAuthSignInError.signInInProgress) {
            _ = try await browser.client.signInWithMagicLink("ada@example.com")
        }
        #expect(try await emulator.requests("/magic-links").isEmpty)
        browserSignIn.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await browserSignIn.value }

        // And the other way round.
        let email = uniqueEmail("guard")
        let (magicLink, _) = try await startSignIn(browser.client, emulator, email: email)
        await #expect(throws: PortalAuthSignInError.signInInProgress) { _ = try await browser.client.signInWithGoogle() }
        await #expect(throws: PortalAuthSignInError.signInInProgress) { _ = try await browser.client.signInWithMagicLink(email) }
        #expect(try await emulator.requests("/oauth/urls").count == 1, "the browser sign-in's only")
        magicLink.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await magicLink.value }
    }

    @Test func aTimeoutClosesItWithNothingExchangedAndReleasesTheGuard() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator)
        let email = uniqueEmail("timeout")
        await #expect(throws: PortalAuthSignInError.closed(reason: .timedOut)) {
            _ = try await client.signInWithMagicLink(email, timeout: .milliseconds(300))
        }
        #expect(try await emulator.requests("/magic-links").count == 1, "the email went out")
        #expect(try await emulator.requests("/magic-links/validations").isEmpty)
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED)
        // The guard is free: the next sign-in starts, and the first email's link still works.
        let (signIn, _) = try await startSignIn(client, emulator, email: email)
        let first = try #require(try await emulator.mail(to: email, count: 2).first)
        _ = try await open(first)
        #expect(try await signIn.value.authenticated != nil)
    }

    @Test func cancellationClosesItWithNothingExchanged() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator)
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("cancel"))
        signIn.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { _ = try await signIn.value }
        #expect(try await emulator.requests("/magic-links/validations").isEmpty)
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED)
        // The link is still good for handleRedirect.
        #expect(try await client.handleRedirect(mail.link)?.authenticated != nil)
    }

    @Test func aRedirectHandledMeanwhileCompletesItOnceWithTheSameSession() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator)
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("pasted"))

        let pasted = try #require(try await client.handleRedirect(mail.link)?.authenticated)
        let signedIn = try #require(try await signIn.value.authenticated)
        #expect(signedIn.session === pasted.session, "one exchange, one session")
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED, "the listener stopped")
        // Another sign-in's redirect (not a magic link) does not complete a waiting one.
        let email = uniqueEmail("other")
        let (next, nextMail) = try await startSignIn(client, emulator, email: email)
        let oauth = try await emulator.grant(environment: client.authEnvironmentId, email: email, kind: "oauth")
        let google = "\(client.redirectUrl)?token=\(oauth)&login_type=GOOGLE"
        #expect(try await client.handleRedirect(google)?.authenticated != nil)
        #expect(LoopbackClient.connectErrno(port) == 0, "still waiting for its own link")
        _ = try await open(nextMail)
        #expect(try await next.value.authenticated != nil)
    }

    @Test func aPastedRedirectThatFailsFailsTheSignInToo() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator)
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("spent"))
        try await emulator.fault("/magic-links/validations", "status", ["status": 401])
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await client.handleRedirect(mail.link) }
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await signIn.value }
    }

    @Test func hostileRequestsNeitherCompleteNorEndTheWait() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator)
        let (signIn, mail) = try await startSignIn(client, emulator, email: uniqueEmail("hostile"))
        let idle = try (0..<20).map { _ in try LoopbackClient.connect(port) }
        defer { idle.forEach { close($0) } }
        let refusals = try await LoopbackClient.offThePool { () -> [Int] in
            let target = String(mail.link.dropFirst("http://127.0.0.1:\(port)".count))
            return [
                try LoopbackClient.get(mail.link, host: "evil.example:\(port)").status,
                try LoopbackClient.get(mail.link, headers: ["Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: image"]).status,
                try LoopbackClient.get(mail.link, headers: ["Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: iframe"]).status,
                try LoopbackClient.get("http://127.0.0.1:\(port)/elsewhere" + target.drop { $0 != "?" }).status,
                try LoopbackClient.get("http://127.0.0.1:\(port)/callback?nothing=here").status,
                try LoopbackClient.parse(LoopbackClient.exchange(port, sending: Array("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)) ?? "").status,
                try LoopbackClient.parse(LoopbackClient.exchange(port, sending: Array("garbage\r\n\r\n".utf8)) ?? "").status,
            ]
        }
        #expect(refusals == [421, 403, 403, 404, 400, 405, 400])
        #expect(try await emulator.requests("/magic-links/validations").isEmpty, "nothing was exchanged")

        let page = try await open(mail)
        #expect(page.status == 200)
        #expect(try await signIn.value.authenticated != nil)
    }

    @Test func endWaitsClosesItAtOnceAndFreesThePortForTheNextClient() async throws {
        let emulator = try await Emulator.start()
        let (client, redirectUrl, port) = try await loopbackClient(emulator)
        let (signIn, _) = try await startSignIn(client, emulator, email: uniqueEmail("freed"))
        client.endWaits()
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED, "the port is free when endWaits returns")
        await #expect(throws: PortalAuthSignInError.closed(reason: .clientClosed)) { _ = try await signIn.value }
        #expect(try await emulator.requests("/magic-links/validations").isEmpty)
        // The client starts no wait any more: closed before any email.
        await #expect(throws: PortalAuthSignInError.closed(reason: .clientClosed)) { _ = try await client.signInWithMagicLink("ada@example.com") }
        #expect(try await emulator.requests("/magic-links").count == 1)

        // The next client of the same redirect URL listens on the port at once.
        let next = try makeClient(emulator, environment: client.authEnvironmentId, redirectUrl: redirectUrl)
        let email = uniqueEmail("next")
        let (nextSignIn, mail) = try await startSignIn(next, emulator, email: email)
        _ = try await open(mail)
        #expect(try await nextSignIn.value.authenticated != nil)
    }
}
