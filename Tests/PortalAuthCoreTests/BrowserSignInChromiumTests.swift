import Foundation
import Testing
@testable import PortalAuthCore

/// docs/desktop.md "Browser sign-in" with a real headless Chromium as the browser: it loads the
/// emulator's fake provider page and follows its redirect to the loopback listener. One
/// browser at a time: the machine has two cores.
@Suite(.serialized) struct BrowserSignInChromiumTests {
    /// Generous: only a broken listener makes a browser sign-in wait this long.
    static let patience: Duration = .seconds(120)

    @Test func googleInChromiumSignsInAndPersistsTheSession() async throws {
        let emulator = try await Emulator.start()
        let storage = MemorySessionStorage()
        let (client, _, port) = try await loopbackClient(emulator, storage: storage)
        let chromium = try Chromium()
        defer { chromium.stop() }
        client.setBrowserOpener(chromium.opener)
        client.prefersEphemeralWebBrowserSession = true

        let result = try #require(try await client.signInWithGoogle(timeout: Self.patience).authenticated)
        #expect(try await client.restoreSession()?.endUserId == result.session.endUserId)
        #expect(try await emulator.requests("/oauth/urls").count == 1)
        #expect(try await emulator.requests("/oauth/tokens").count == 1)
        #expect(chromium.launchedFlags.first?.contains("--incognito") == true, "the ephemeral flag reaches the opener")

        let page = try chromium.page()
        // Answered at once when the callback came before the opener returned, else with the outcome.
        #expect(page.contains("You are signed in. You can close this window") || page.contains("Sign-in received. You can close this window"))
        let grant = try #require(try await emulator.requests("/oauth/tokens").first?.jsonBody["token"] as? String)
        #expect(!page.contains(grant), "the page never carries the grant")
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED, "the listener stopped")
    }

    @Test func appleInChromiumReachesTheTotpStepAndPersistsNothing() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator, totp: true)
        let chromium = try Chromium()
        defer { chromium.stop() }
        client.setBrowserOpener(chromium.opener)

        let step = try #require(try await client.signInWithApple(timeout: Self.patience).totpStep)
        #expect(step.totpLink != nil, "a first sign-in enrolls")
        #expect(try await client.restoreSession() == nil)
        #expect(try await emulator.requests("/oauth/tokens").first?.jsonBody["token"] != nil)
        #expect(chromium.launchedFlags.first?.contains("--incognito") == false)

        let verified = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        #expect(verified.session.endUserId == step.endUserId)
        let page = try chromium.page()
        #expect(page.contains("enter the code from your authenticator app") || page.contains("Sign-in received"))
    }

    @Test func aProviderErrorInChromiumFailsWithItsTextEscapedOnThePage() async throws {
        let emulator = try await Emulator.start()
        let error = #"<b>denied</b> & "x""#
        try await emulator.control(["oauthOutcome": "error", "oauthError": error])
        let (client, _, _) = try await loopbackClient(emulator)
        let chromium = try Chromium()
        defer { chromium.stop() }
        client.setBrowserOpener(chromium.opener)

        await #expect(throws: PortalAuthError.authenticationFailed(error: error)) {
            _ = try await client.signInWithGoogle(timeout: Self.patience)
        }
        #expect(try await emulator.requests("/oauth/tokens").isEmpty)
        let page = try chromium.page()
        // Text, not markup: the browser's DOM has no <b> element, only the escaped characters.
        #expect(page.contains("Sign-in failed: &lt;b&gt;denied&lt;/b&gt; &amp; \"x\""))
        #expect(!page.contains("<b>"))
    }

    /// A page the user visits while the sign-in waits (or a local process) plants another
    /// account's grant: as an image, a cross-origin fetch, a navigation under a foreign Host,
    /// or a stray navigation with no grant. Each is refused, the wait goes on, and the user's
    /// own callback completes the sign-in.
    @Test func hostileRequestsFromRealPagesDoNotCompleteTheSignIn() async throws {
        let emulator = try await Emulator.start()
        let browser = try await BrowserFixture(emulator)
        let port = browser.port
        let attacker = try await emulator.grant(environment: browser.client.authEnvironmentId,
                                                email: uniqueEmail("attacker"), kind: "oauth")
        let planted = "http://127.0.0.1:\(port)/callback?token=\(attacker)&login_type=GOOGLE"
        try await emulator.request(.post, "/_emulator/pages", json: [
            "name": "image", "html": "<!doctype html><img src=\"\(planted)\">"])
        try await emulator.request(.post, "/_emulator/pages", json: [
            "name": "fetch", "html": "<!doctype html><script>fetch(\"\(planted)\").catch(() => {})</script>"])

        try await LogLines.recording { lines in
            let (signIn, authorizeUrl) = await browser.startSignIn()
            let chromium = try Chromium()
            defer { chromium.stop() }
            let cases: [(url: String, flags: [String], refused: String)] = [
                ("\(emulator.baseURL)/_emulator/pages?name=image", [], "not a top-level navigation"),
                // The page's load does not wait for a fetch; virtual time keeps the browser until it is done.
                ("\(emulator.baseURL)/_emulator/pages?name=fetch", ["--virtual-time-budget=10000"], "not a top-level navigation"),
                (planted.replacingOccurrences(of: "127.0.0.1", with: "evil.example"),
                 ["--host-resolver-rules=MAP evil.example 127.0.0.1", "--disable-features=HttpsUpgrades"], "a foreign Host"),
                ("http://127.0.0.1:\(port)/callback", [], "no sign-in response"),
            ]
            for (index, hostile) in cases.enumerated() {
                let before = lines.all.count
                try chromium.launch(hostile.url, flags: hostile.flags)
                let line = await lines.first(from: before) { line in
                    line.contains("127.0.0.1:\(port) refused \(hostile.refused)")
                }
                #expect(line != nil, "case \(index): the listener never refused \(hostile.refused)")
                #expect(LoopbackClient.connectErrno(port) == 0, "case \(index): the listener still waits")
            }

            try chromium.launch(authorizeUrl)
            let result = try #require(try await signIn.value.authenticated)
            let page = try chromium.page(cases.count)
            #expect(page.contains("You are signed in") || page.contains("Sign-in received"))
            let exchanged = try await emulator.requests("/oauth/tokens").compactMap { $0.jsonBody["token"] as? String }
            #expect(exchanged.count == 1 && exchanged.first != attacker, "only the user's own grant was exchanged")
            #expect(try await browser.client.restoreSession()?.endUserId == result.session.endUserId)
        }
    }

    /// docs/desktop.md "Magic-link sign-in" as a user does it: the email's button opened in
    /// Chromium, through the emulator's page, to the listener, with no URL pasted anywhere;
    /// a page the user visited meanwhile planted another account's grant as an image, and was
    /// refused.
    @Test func aMagicLinkOpenedInChromiumSignsInWithNoPaste() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator, totp: true)
        let attacker = try await emulator.grant(environment: client.authEnvironmentId, email: uniqueEmail("attacker"))
        let planted = "http://127.0.0.1:\(port)/callback?token=\(attacker)&authMethod=EMAIL_MAGIC_LINK"
        try await emulator.request(.post, "/_emulator/pages", json: [
            "name": "magic-image", "html": "<!doctype html><img src=\"\(planted)\">"])
        let chromium = try Chromium()
        defer { chromium.stop() }
        let email = uniqueEmail("chromium")

        try await LogLines.recording { lines in
            let signIn = Task { try await client.signInWithMagicLink(email, timeout: Self.patience) }
            let mail = try #require(try await emulator.mail(to: email).last)
            let before = lines.all.count
            try chromium.launch("\(emulator.baseURL)/_emulator/pages?name=magic-image")
            let refused = await lines.first(from: before) { $0.contains("127.0.0.1:\(port) refused not a top-level navigation") }
            #expect(refused != nil, "the planted image was refused")

            try chromium.launch(mail.emailLink)
            let step = try #require(try await signIn.value.totpStep)
            #expect(try chromium.page(1).contains("enter the code from your authenticator app to finish signing in"))
            let exchanged = try await emulator.requests("/magic-links/validations").compactMap { $0.jsonBody["token"] as? String }
            #expect(exchanged.count == 1 && exchanged.first != attacker, "only the user's own grant was exchanged")
            let verified = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
            #expect(try await client.restoreSession()?.endUserId == verified.session.endUserId)
        }
    }
}
