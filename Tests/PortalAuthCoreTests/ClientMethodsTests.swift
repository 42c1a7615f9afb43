import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §3: construction, sendMagicLink, loginWithGoogle / loginWithApple.
@Suite struct ClientMethodsTests {
    @Test func aBlankEnvironmentIdIsCheckedFirst() {
        #expect(throws: PortalAuthError.invalidArgument(name: "authEnvironmentId")) {
            try PortalAuth(authEnvironmentId: " \t", redirectUrl: "", apiHost: "bad host")
        }
        #expect(throws: PortalAuthError.invalidArgument(name: "authEnvironmentId")) {
            try PortalAuth(authEnvironmentId: "env\r\nX-Injected: 1", redirectUrl: appRedirect)
        }
        #expect(throws: PortalAuthError.invalidArgument(name: "redirectUrl")) {
            try PortalAuth(authEnvironmentId: "env", redirectUrl: "  \n", apiHost: "bad host")
        }
    }

    @Test func theRedirectUrlIsStoredTrimmedAndConstructionDoesNoIO() throws {
        let storage = FlakyStorage()
        // Nothing listens on port 9: construction must not notice.
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: "  myapp://auth/callback \n",
                                    apiHost: "127.0.0.1:9", storage: storage)
        #expect(client.redirectUrl == "myapp://auth/callback")
        #expect(storage.calls.withLock { $0 }.isEmpty)
    }

    @Test func sendMagicLinkChecksItsConfigurationAndEmailBeforeAnyRequest() async throws {
        let emulator = try await Emulator.start()
        let unconfigured = try makeClient(emulator, magicLink: nil)
        await #expect(throws: PortalAuthError.magicLinkNotConfigured) { try await unconfigured.sendMagicLink("") }
        let client = try makeClient(emulator)
        await #expect(throws: PortalAuthError.invalidArgument(name: "email")) { try await client.sendMagicLink(" \t ") }
        #expect(try await emulator.requests().isEmpty)
    }

    @Test func theEmailIsTrimmedAndLowercased() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await client.sendMagicLink("  Ada.Lovelace@Example.COM \n")
        let body = try #require(try await emulator.requests("/magic-links").first).jsonBody
        #expect(body["email"] as? String == "ada.lovelace@example.com")
        #expect(body["redirectUrl"] as? String == appRedirect)
        #expect(body["fromEmail"] as? String == testMagicLink.fromEmail)
        #expect(body["templateId"] as? String == testMagicLink.templateId)
    }

    @Test func authorizeUrlsAreFetchedFreshEveryTime() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let google = try await client.loginWithGoogle().authorizeUrl
        let apple = try await client.loginWithApple().authorizeUrl
        let again = try await client.loginWithGoogle().authorizeUrl
        #expect(google.contains("/google/") && apple.contains("/apple/"))
        #expect(google != again, "the single-use state is never cached")
        #expect(try await emulator.requests("/oauth/urls").count == 3)
    }

    @Test func aProviderTheEnvironmentLacksIsUnavailable() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator, environment: Env.open)
        await #expect(throws: PortalAuthError.authMethodUnavailable(.apple)) { _ = try await client.loginWithApple() }
    }

    @Test func aBlankAuthorizeUrlIsUnavailableAndOneWithSpacesIsTrimmed() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await emulator.fault("/oauth/urls", "malformed", ["body": #"{"data":{"google":"  ","apple":" https://a.example/x \n"}}"#])
        await #expect(throws: PortalAuthError.authMethodUnavailable(.google)) { _ = try await client.loginWithGoogle() }
        try await emulator.fault("/oauth/urls", "malformed", ["body": #"{"data":{"google":"  ","apple":" https://a.example/x \n"}}"#])
        #expect(try await client.loginWithApple().authorizeUrl == "https://a.example/x")
    }

    @Test func theFakeProviderRedirectCompletesAnOAuthSignIn() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator, environment: Env.open)
        let authorize = try await client.loginWithGoogle().authorizeUrl
        // Follow the provider's 302 the way a browser would, and deliver its Location.
        let response = try await HTTPEngine.shared.send(HTTPRequest(method: .get, url: authorize + "&email=\(QueryEncoding.encode(uniqueEmail()))", origin: "provider"))
        #expect(response.status == 302)
        let location = try #require(providerContinueLink(response.body))
        let result = try #require(try await client.handleRedirect(location)?.authenticated)
        #expect(result.session.endUserId.hasPrefix("eu_"))
    }
}

/// The redirect a fake provider page sends the browser to (also its "Continue" link).
func providerContinueLink(_ body: [UInt8]) -> String? {
    let page = String(decoding: body, as: UTF8.self)
    guard let start = page.range(of: #"id="continue" href=""#)?.upperBound,
          let end = page[start...].firstIndex(of: "\"") else { return nil }
    return String(page[start..<end]).replacingOccurrences(of: "&amp;", with: "&")
}
