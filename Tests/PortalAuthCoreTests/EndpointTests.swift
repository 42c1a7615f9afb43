import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §2: endpoints, query encoding on the wire, the two remaps.
@Suite struct EndpointTests {
    @Test func getMethodsDropsUnknownMethods() async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "malformed", ["body": #"{"data":{"allowedAuthMethods":["GOOGLE","PASSKEY","APPLE","google"],"autoCreateWallet":true}}"#])
        let client = try makeClient(emulator)
        #expect(try await client.getMethods() == AuthMethodsResult(allowedAuthMethods: [.google, .apple], autoCreateWallet: true))
        #expect(try await client.getMethods() == AuthMethodsResult(allowedAuthMethods: [.emailMagicLink, .google], autoCreateWallet: false))
    }

    @Test func theRedirectUrlQueryIsEncodedByteByByte() async throws {
        let emulator = try await Emulator.start()
        let redirect = "http://127.0.0.1:8765/cb~x/a b+c?q=1"
        try await emulator.addEnvironment([
            "id": "env-encoding", "allowedMethods": ["GOOGLE", "APPLE"], "redirectUrls": [redirect],
            "totpRequired": false, "accountAbstraction": true, "autoCreateWallet": false,
        ])
        let client = try makeClient(emulator, environment: "env-encoding", redirectUrl: redirect, isAccountAbstracted: true)
        _ = try await client.loginWithApple()
        let request = try #require(try await emulator.requests("/oauth/urls").first)
        #expect(request.query == "redirectUrl=http%3A%2F%2F127.0.0.1%3A8765%2Fcb%7Ex%2Fa%20b%2Bc%3Fq%3D1&isAccountAbstracted=true")
    }

    @Test func isAccountAbstractedIsSentOnlyWhenConfigured() async throws {
        let emulator = try await Emulator.start()
        for setting in [nil, false, true] as [Bool?] {
            let client = try makeClient(emulator, isAccountAbstracted: setting)
            _ = try await client.loginWithGoogle()
            try await client.sendMagicLink(uniqueEmail())
        }
        let queries = try await emulator.requests("/oauth/urls").map(\.query)
        #expect(queries == ["redirectUrl=myapp%3A%2F%2Fauth%2Fcallback",
                            "redirectUrl=myapp%3A%2F%2Fauth%2Fcallback&isAccountAbstracted=false",
                            "redirectUrl=myapp%3A%2F%2Fauth%2Fcallback&isAccountAbstracted=true"])
        let bodies = try await emulator.requests("/magic-links").map(\.jsonBody)
        #expect(bodies.map { $0["isAccountAbstracted"] as? Bool } == [nil, false, true])
        #expect(bodies[0].keys.sorted() == ["email", "fromEmail", "redirectUrl", "templateId"])
    }

    /// The email went out: whatever the body of a 2xx, the send succeeded (docs/protocol.md §2).
    @Test(arguments: [(200, ""), (200, "{}"), (200, #"{"data":null}"#), (200, "<html><body>Sent</body></html>"),
                      (202, "not json"), (204, "")])
    func aMagicLinkSendChecksOnlyTheStatus(status: Int, body: String) async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/magic-links", "status", ["status": status, "body": body])
        try await makeClient(emulator).sendMagicLink(uniqueEmail())
        // The envelope rule still holds for the other endpoints.
        try await emulator.fault("/methods", "status", ["status": status, "body": body])
        await #expect(throws: PortalAuthError.malformedResponse(path: "/api/v3/auth/methods", missing: nil)) {
            _ = try await makeClient(emulator).getMethods()
        }
    }

    @Test func anErrorStatusCarriesTheServersReason() async throws {
        let emulator = try await Emulator.start()
        let reason = #"{"error":"redirectUrl is not allow-listed"}"#
        try await emulator.fault("/magic-links", "status", ["status": 400, "body": reason])
        let error = await caught { try await makeClient(emulator).sendMagicLink(uniqueEmail()) }
        #expect(error as? PortalRequestsError == .httpStatus(status: 400, bodyExcerpt: reason))
        #expect(!"\(error!)".contains("allow-listed"), "the excerpt is a field, not the message")
        // Bounded, with control characters other than line breaks escaped; none for an empty body.
        let hostile = "line one\nline\ttwo\u{1B}[31m\u{0}" + String(repeating: "x", count: 600)
        try await emulator.fault("/oauth/urls", "status", ["status": 502, "body": hostile])
        let bounded = await caught { _ = try await makeClient(emulator).loginWithGoogle() }
        let expected = "line one\nline\ttwo\\x1b[31m\\x00" + String(repeating: "x", count: 512 - 23)
        #expect(bounded as? PortalRequestsError == .httpStatus(status: 502, bodyExcerpt: expected))
        try await emulator.fault("/methods", "status", ["status": 503, "body": ""])
        let empty = await caught { _ = try await makeClient(emulator).getMethods() }
        #expect(empty as? PortalRequestsError == .httpStatus(status: 503, bodyExcerpt: nil))
    }

    @Test func aSendOverTheLimitIsRateLimited() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator)
        let email = uniqueEmail()
        for _ in 0..<5 { try await client.sendMagicLink(email) }
        await #expect(throws: PortalAuthError.rateLimited()) { try await client.sendMagicLink(email) }
    }

    @Test func aRejectedAccountAbstractionIsRemappedOnBothEndpoints() async throws {
        let emulator = try await Emulator.shared.get()
        // env-demo has no gas sponsorship: the emulator answers 400 {"error": ...}.
        let client = try makeClient(emulator, environment: Env.demo, isAccountAbstracted: true)
        let expected = PortalAuthError.accountAbstractionUnavailable(message: "Gas sponsorship is not enabled for this environment.")
        await #expect(throws: expected) { try await client.sendMagicLink(uniqueEmail()) }
        await #expect(throws: expected) { _ = try await client.loginWithGoogle() }
    }

    @Test func theRemapCutsTheMessageTo200Characters() async throws {
        let emulator = try await Emulator.start()
        let long = String(repeating: "é", count: 300)
        try await emulator.fault("/oauth/urls", "status", ["status": 400, "body": #"{"error":"\#(long)"}"#])
        let client = try makeClient(emulator, isAccountAbstracted: true)
        await #expect(throws: PortalAuthError.accountAbstractionUnavailable(message: String(repeating: "é", count: 200))) {
            _ = try await client.loginWithGoogle()
        }
    }

    @Test func otherFour100sPassThroughUnchanged() async throws {
        let emulator = try await Emulator.start()
        // Account abstraction not requested (nil and false): the same 400 is not remapped.
        for setting in [nil, false] as [Bool?] {
            try await emulator.fault("/magic-links", "status", ["status": 400, "body": #"{"error":"nope"}"#])
            let client = try makeClient(emulator, isAccountAbstracted: setting)
            let error = await caught { try await client.sendMagicLink(uniqueEmail()) }
            #expect((error as? PortalRequestsError)?.status == 400)
        }
        // Requested, but a 400 without an error text, or another status: not remapped either.
        let client = try makeClient(emulator, isAccountAbstracted: true)
        try await emulator.fault("/oauth/urls", "status", ["status": 400, "body": #"{"message":"nope"}"#])
        #expect((await caught { _ = try await client.loginWithGoogle() } as? PortalRequestsError)?.status == 400)
        try await emulator.fault("/oauth/urls", "status", ["status": 403, "body": #"{"error":"nope"}"#])
        #expect((await caught { _ = try await client.loginWithGoogle() } as? PortalRequestsError)?.status == 403)
        // 429 is rateLimited only on the magic-link send.
        try await emulator.fault("/oauth/urls", "status", ["status": 429])
        #expect((await caught { _ = try await client.loginWithGoogle() } as? PortalRequestsError)?.status == 429)
    }

    @Test(arguments: [#"{"data":{}}"#, #"{"data":{"clientSessionToken":"  ","clientId":"c"}}"#])
    func aTotpAnswerWithoutTokenIsMalformed(body: String) async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        try await emulator.fault("/totps/validations", "malformed", ["body": body])
        await #expect(throws: PortalAuthError.malformedResponse(path: "/api/v3/auth/totps/validations", missing: "clientSessionToken")) {
            _ = try await client.verifyTotp("000000", userJwt: step.userJwt)
        }
    }
}
