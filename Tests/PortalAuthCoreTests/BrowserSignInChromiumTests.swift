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
        let emulator = try Emulator.start()
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
        #expect(page.contains("Sign-in received. You can close this window"))
        let grant = try #require(try await emulator.requests("/oauth/tokens").first?.jsonBody["token"] as? String)
        #expect(!page.contains(grant), "the page never carries the grant")
        #expect(LoopbackClient.isRefused(port), "the listener stopped")
    }

    @Test func appleInChromiumReachesTheTotpStepAndPersistsNothing() async throws {
        let emulator = try Emulator.start()
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
        #expect(try chromium.page().contains("Sign-in received"))
    }

    @Test func aProviderErrorInChromiumFailsWithItsTextEscapedOnThePage() async throws {
        let emulator = try Emulator.start()
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
}
