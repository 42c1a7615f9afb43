import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §1 against the emulator over real loopback HTTP. Each test that counts
/// requests or injects faults has an emulator of its own.
@Suite struct TransportTests {
    @Test func everyRequestCarriesTheHeadersAndOnlyTotpABearer() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        _ = try await client.getMethods()
        _ = try await client.loginWithGoogle()
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)

        let requests = try await emulator.requests()
        #expect(requests.map(\.path) == ["/methods", "/oauth/urls", "/magic-links", "/magic-links/validations",
                                         "/totps/validations"].map { BaseURL.apiPrefix + $0 })
        var traceIds = Set<String>()
        let uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
        for request in requests {
            #expect(request.headers["x-portal-auth-environment-id"] == Env.demo)
            #expect(request.headers["accept"] == "application/json")
            #expect(request.headers["content-type"] == "application/json")
            let traceId = try #require(request.headers["x-portal-trace-id"])
            #expect(traceId.wholeMatch(of: uuidV4) != nil)
            traceIds.insert(traceId)
            if request.path.hasSuffix("/totps/validations") {
                #expect(request.headers["authorization"] == "Bearer \(step.userJwt)")
            } else {
                #expect(request.headers["authorization"] == nil)
            }
        }
        #expect(traceIds.count == requests.count, "a fresh trace id per request")
    }

    @Test func unsetOptionalFieldsAreOmittedNeverNull() async throws {
        let emulator = try await Emulator.start()
        let plain = try makeClient(emulator)
        try await plain.sendMagicLink(uniqueEmail())
        let abstracted = try makeClient(emulator, isAccountAbstracted: false)
        try await abstracted.sendMagicLink(uniqueEmail())

        let requests = try await emulator.requests("/magic-links")
        let bodies = requests.map(\.jsonBody)
        #expect(bodies.count == 2)
        #expect(bodies[0]["isAccountAbstracted"] == nil)
        #expect(!requests[0].body.contains("null"))
        #expect(bodies[1]["isAccountAbstracted"] as? Bool == false)
    }

    @Test(arguments: ["not json", "{}", #"{"data":null}"#, #"{"data":[1]}"#, #"{"data":{"allowedAuthMethods":"GOOGLE"}}"#,
                      #"{"data":{"autoCreateWallet":"yes"}}"#, "[]", ""])
    func aBrokenEnvelopeIsMalformedResponse(body: String) async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "malformed", ["body": body])
        let client = try makeClient(emulator)
        await #expect(throws: PortalAuthError.malformedResponse(path: "/api/v3/auth/methods", missing: nil)) {
            try await client.getMethods()
        }
    }

    @Test func absentFieldsAreAbsentAndUnknownKeysIgnored() async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "malformed", ["body": #"{"data":{"extra":{"x":[1,2]}},"meta":1}"#])
        let client = try makeClient(emulator)
        let methods = try await client.getMethods()
        #expect(methods == AuthMethodsResult(allowedAuthMethods: [], autoCreateWallet: false))
    }

    @Test func unauthorizedIsTheTransportsOwn401() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: "env-unknown")
        await #expect(throws: PortalRequestsError.unauthorized(reason: nil)) { try await client.getMethods() }
    }

    @Test(arguments: [400, 403, 404, 409, 500, 502, 503])
    func otherStatusesPassThroughWithTheirStatus(status: Int) async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "status", ["status": status])
        let client = try makeClient(emulator)
        let error = await caught { _ = try await client.getMethods() }
        let requestsError = try #require(error as? PortalRequestsError)
        #expect(requestsError.status == status)
        guard case .httpStatus(_, let excerpt, _) = requestsError else { Issue.record("\(requestsError)"); return }
        #expect(excerpt == #"{"error":"injected"}"#)
    }

    /// libcurl would resend a request whose reused connection closed with no answer; a
    /// single-use grant or a magic-link email must not go out twice.
    @Test(arguments: ["drop", "status"])
    func nothingIsRetried(kind: String) async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        // Warm a keep-alive connection, so the next requests go over a reused one.
        _ = try await client.getMethods()
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        for path in ["/magic-links", "/magic-links/validations", "/methods"] {
            try await emulator.fault(path, kind, ["status": 503])
        }
        await #expect(throws: PortalRequestsError.self) { try await client.sendMagicLink(uniqueEmail()) }
        await #expect(throws: PortalRequestsError.self) { _ = try await client.handleRedirect(url) }
        await #expect(throws: PortalRequestsError.self) { _ = try await client.getMethods() }
        #expect(try await emulator.requests("/magic-links").count == 1)
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
        #expect(try await emulator.requests("/methods").count == 2)
    }

    @Test func aDroppedConnectionIsANetworkErrorWithoutStatus() async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "drop")
        let client = try makeClient(emulator)
        let error = try #require(await caught { _ = try await client.getMethods() } as? PortalRequestsError)
        guard case .network(.connectionReset, _) = error else { Issue.record("\(error)"); return }
        #expect(error.status == nil)
    }

    @Test func aRefusedConnectionIsANetworkError() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        emulator.stop()
        let error = try #require(await caught { _ = try await client.getMethods() } as? PortalRequestsError)
        guard case .network(.connectionRefused, let message) = error else { Issue.record("\(error)"); return }
        #expect(message.hasSuffix("(\(emulator.baseURL))"), "the message names the server: \(message)")
    }

    @Test func theOverallTimeoutEndsASlowResponse() async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "hold")
        let client = try makeClient(emulator, timeouts: Timeouts(connect: .seconds(5), total: .milliseconds(300)))
        let error = try #require(await caught { _ = try await client.getMethods() } as? PortalRequestsError)
        guard case .network(.requestTimeout, _) = error else { Issue.record("\(error)"); return }
        try await emulator.release()
    }

    @Test func bodiesOverOneMebibyteAreRefused() async throws {
        let emulator = try await Emulator.start()
        let huge = #"{"data":{"allowedAuthMethods":[],"pad":""# + String(repeating: "x", count: 2 << 20) + #""}}"#
        try await emulator.fault("/methods", "malformed", ["body": huge])
        let client = try makeClient(emulator)
        let error = try #require(await caught { _ = try await client.getMethods() } as? PortalRequestsError)
        guard case .network(.responseTooLarge, _) = error else { Issue.record("\(error)"); return }
        // A body just under the cap is read.
        let fits = #"{"data":{"allowedAuthMethods":["GOOGLE"],"pad":""# + String(repeating: "x", count: 1_000_000) + #""}}"#
        try await emulator.fault("/methods", "malformed", ["body": fits])
        #expect(try await client.getMethods().allowedAuthMethods == [.google])
    }

    @Test func anErrorOfACredentialRequestKeepsNoExcerpt() async throws {
        let emulator = try await Emulator.start()
        let (url, grant) = try await grantRedirect(emulator, environment: Env.open)
        try await emulator.fault("/magic-links/validations", "status", ["status": 500, "body": "echo: \(grant)"])
        let client = try makeClient(emulator)
        let error = try #require(await caught { _ = try await client.handleRedirect(url) } as? PortalRequestsError)
        guard case .httpStatus(500, let excerpt, _) = error else { Issue.record("\(error)"); return }
        #expect(excerpt == nil)
        var dumped = ""
        dump(error, to: &dumped)
        #expect(!dumped.contains(grant) && !"\(error)".contains(grant))
    }

    @Test(arguments: [Duration.seconds(-5), .zero, .seconds(Int64.max / 1000), .nanoseconds(1)])
    func anyTimeoutIsUsableAndNoneDisablesTheLimit(duration: Duration) {
        let timeouts = Timeouts(connect: duration, total: duration)
        #expect((1...86_400_000).contains(timeouts.connectMilliseconds))
        #expect((1...86_400_000).contains(timeouts.totalMilliseconds))
    }

    @Test func connectionsAreReused() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        for _ in 0..<20 { _ = try await client.getMethods() }
        let sequence = try await emulator.requests("/methods").map(\.peerPort)
        #expect(Set(sequence).count == 1, "client ports: \(sequence)")
    }

    @Test func httpsRefusesACertificateItCannotVerify() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, _) = try Subprocess.runReportingStatus(
            "/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                             "-keyout", folder.appendingPathComponent("key.pem").path,
                             "-out", folder.appendingPathComponent("cert.pem").path])
        #expect(status == 0)

        let emulator = try await Emulator.start(arguments: ["--tls-cert", folder.appendingPathComponent("cert.pem").path,
                                                      "--tls-key", folder.appendingPathComponent("key.pem").path])
        #expect(emulator.baseURL.hasPrefix("https://"))
        let client = try makeClient(emulator)
        let error = try #require(await caught { _ = try await client.getMethods() } as? PortalRequestsError)
        guard case .network(.certificateUntrusted, _) = error else { Issue.record("\(error)"); return }
    }

    @Test func manyConcurrentCallsAllComplete() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { try await client.getMethods().allowedAuthMethods.contains(.google) } }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(results == 200)
    }
}
