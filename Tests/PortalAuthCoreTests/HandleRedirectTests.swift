import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §3 handleRedirect, in its order, and grant response handling.
@Suite struct HandleRedirectTests {
    @Test func urlsThatAreNotOursReturnNothingWithoutARequest() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (valid, _) = try await grantRedirect(emulator, environment: Env.open)
        let notOurs = [
            "",
            valid + "&pad=" + String(repeating: "x", count: 8192),
            "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK",
            appRedirect + "/other?token=t&authMethod=EMAIL_MAGIC_LINK",
            appRedirect + "?authMethod=EMAIL_MAGIC_LINK",
            appRedirect + "?token=&authMethod=EMAIL_MAGIC_LINK",
            appRedirect + "?token=t",
            appRedirect + "?token=t&authMethod=email_magic_link",
            appRedirect + "?token=t&login_type=google",
            appRedirect + "?token=t&login_type=FACEBOOK",
            appRedirect + "#?token=t&authMethod=EMAIL_MAGIC_LINK",
            // A marker under the other key is no marker.
            appRedirect + "?token=t&login_type=EMAIL_MAGIC_LINK",
            appRedirect + "?token=t&authMethod=GOOGLE",
            // A Kelvin sign is not a K: the match is byte for byte.
            appRedirect + "?token=t&authMethod=EMAIL_MAGIC_LIN%E2%84%AA",
        ]
        for url in notOurs {
            #expect(try await client.handleRedirect(url) == nil, "\(url.prefix(80))")
        }
        #expect(try await emulator.requests().isEmpty)
    }

    @Test func theLengthLimitCountsUTF16CodeUnits() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (valid, _) = try await grantRedirect(emulator, environment: Env.open)
        // 8192 code units exactly is still considered; one more is not ours.
        let atLimit = valid + "&p=" + String(repeating: "x", count: 8192 - valid.utf16.count - 3)
        #expect(atLimit.utf16.count == 8192)
        #expect(try await client.handleRedirect(atLimit + "x") == nil)
        #expect(try await client.handleRedirect(atLimit)?.authenticated != nil)
    }

    @Test func theLengthLimitIsNotACharacterCount() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (valid, _) = try await grantRedirect(emulator, environment: Env.open)
        // 4,100 emoji: 4,100 Characters but 8,200 UTF-16 code units.
        let url = valid + "&pad=" + String(repeating: "😀", count: 4100)
        #expect(url.count < 8192 && url.utf16.count > 8192)
        #expect(try await client.handleRedirect(url) == nil)
        #expect(try await emulator.requests().isEmpty)
    }

    @Test(arguments: [("error=oauth_failed", "oauth_failed"), ("error=", ""), ("token=t&login_type=GOOGLE&error=x", "x"),
                      ("error=a+b%20c", "a b c")])
    func anErrorParameterFailsWithoutARequest(query: String, expected: String) async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        await #expect(throws: PortalAuthError.authenticationFailed(error: expected)) {
            _ = try await client.handleRedirect(appRedirect + "?" + query)
        }
        #expect(try await emulator.requests().isEmpty)
    }

    @Test func theErrorTextIsCutTo100Characters() async throws {
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9")
        let long = String(repeating: "ü", count: 150)
        await #expect(throws: PortalAuthError.authenticationFailed(error: String(repeating: "ü", count: 100))) {
            _ = try await client.handleRedirect(appRedirect + "?error=" + QueryEncoding.encode(long))
        }
    }

    @Test func theErrorTextKeepsItsControlCharactersButTheMessageEscapesThem() async throws {
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9")
        let error = await caught { _ = try await client.handleRedirect(appRedirect + "?error=denied%0Aforged%1B%5B2J%C2%9B%09x") }
        #expect(error as? PortalAuthError == .authenticationFailed(error: "denied\nforged\u{1B}[2J\u{9B}\tx"))
        #expect("\(error!)" == #"Authentication failed: denied\nforged\x1b[2J\x9b\tx"#)
    }

    @Test func routesByTheMarker() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let magic = try await emulator.grant(environment: Env.open, email: uniqueEmail(), kind: "magic")
        let oauth = try await emulator.grant(environment: Env.open, email: uniqueEmail(), kind: "oauth")
        let oauthApple = try await emulator.grant(environment: Env.open, email: uniqueEmail(), kind: "oauth")
        // authMethod wins over login_type; the redirect's own query and fragment are ignored.
        #expect(try await client.handleRedirect(appRedirect + "/?x=1&token=\(magic)&login_type=GOOGLE&authMethod=EMAIL_MAGIC_LINK#f")?.authenticated != nil)
        #expect(try await client.handleRedirect(appRedirect + "?token=\(oauth)&login_type=GOOGLE")?.authenticated != nil)
        #expect(try await client.handleRedirect(appRedirect + "?token=\(oauthApple)&login_type=APPLE")?.authenticated != nil)
        #expect(try await emulator.requests().map(\.path) == ["/magic-links/validations", "/oauth/tokens", "/oauth/tokens"].map { BaseURL.apiPrefix + $0 })
        #expect(try await emulator.requests().first?.jsonBody["token"] as? String == magic)
    }

    @Test func theLastTokenWins() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let grant = try await emulator.grant(environment: Env.open, email: uniqueEmail())
        let result = try await client.handleRedirect(appRedirect + "?token=stale&authMethod=EMAIL_MAGIC_LINK&token=\(grant)")
        #expect(result?.authenticated != nil)
    }

    @Test func aSignedInAnswerNeedsAnEndUserId() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await emulator.fault("/oauth/tokens", "malformed", ["body": #"{"data":{"clientSessionToken":"cst_1","endUserId":"  "}}"#])
        await #expect(throws: PortalAuthError.malformedResponse(path: "/api/v3/auth/oauth/tokens", missing: "endUserId")) {
            _ = try await client.handleRedirect(appRedirect + "?token=t1&login_type=GOOGLE")
        }
    }

    @Test func aUserJwtWithoutSessionIsTheTotpStep() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await emulator.fault("/oauth/tokens", "malformed", ["body": #"{"data":{"clientSessionToken":" ","userJwt":"a.b.c","totpLink":"","clientId":"c"}}"#])
        let step = try #require(try await client.handleRedirect(appRedirect + "?token=t1&login_type=GOOGLE")?.totpStep)
        #expect(step == TotpRequiredResult(userJwt: "a.b.c", totpLink: nil, endUserId: ""))
    }

    @Test(arguments: [#"{"data":{}}"#, #"{"data":{"endUserId":"eu","clientSessionToken":"","userJwt":"  "}}"#])
    func neitherIsAnInvalidGrantResponse(body: String) async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await emulator.fault("/magic-links/validations", "malformed", ["body": body])
        await #expect(throws: PortalAuthError.invalidGrantResponse) {
            _ = try await client.handleRedirect(appRedirect + "?token=t1&authMethod=EMAIL_MAGIC_LINK")
        }
    }

    @Test func aSignedInResultCarriesTheResponseFields() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await emulator.fault("/oauth/tokens", "malformed", ["body": #"{"data":{"clientSessionToken":"cst_9","endUserId":"eu_9","clientId":" ","isAccountAbstracted":true}}"#])
        let result = try #require(try await client.handleRedirect(appRedirect + "?token=t1&login_type=APPLE")?.authenticated)
        #expect(result.session.endUserId == "eu_9")
        #expect(try result.session.getToken() == "cst_9")
        #expect(result.clientId == nil, "blank counts as absent")
        #expect(result.isAccountAbstracted == true)
    }

    @Test func magicLinkWithTotpEndToEnd() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, environment: Env.demo, storage: storage)
        let email = uniqueEmail()
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: email))?.totpStep)
        #expect(step.endUserId.hasPrefix("eu_"))
        #expect(step.totpLink?.hasPrefix("otpauth://") == true)
        #expect(try await storage.get(environmentId: Env.demo) == nil, "nothing persisted before the code")

        let result = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        #expect(result.session.endUserId == step.endUserId)
        #expect(result.clientId?.hasPrefix("cl_") == true)
        let stored = try #require(try await storage.get(environmentId: Env.demo))
        #expect(StoredSession.decode(stored) == result.session.stored)

        // A second sign-in of the enrolled user carries no enrollment link.
        let again = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: email))?.totpStep)
        #expect(again.totpLink == nil)
        #expect(again.endUserId == step.endUserId)
    }
}
