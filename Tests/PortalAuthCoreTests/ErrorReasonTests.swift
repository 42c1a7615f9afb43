import Foundation
import Testing
@testable import PortalAuthCore

/// The reasons that tell an app what its user does next (docs/errors.md).
@Suite struct ErrorReasonTests {
    @Test func aTotpStepSaysWhenItExpiresAndARefusedCodeIsToRetype() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        let now = Int64(Date().timeIntervalSince1970)
        let expiresAt = try #require(step.expiresAt)
        #expect((now + 590...now + 601).contains(expiresAt), "ten minutes from the sign-in")
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) {
            _ = try await client.verifyTotp(try wrongCode(for: step), userJwt: step.userJwt)
        }
        _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
    }

    @Test func aStepAlreadyUsedIsToStartOverAndNeverCalledUsable() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        let refused = await #expect(throws: PortalRequestsError.unauthorized(reason: .totpStepUsed)) {
            _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        }
        #expect("\(try #require(refused))".contains("already used"))
        // Another client (another process) cannot know: the server refuses the step as it
        // refuses a wrong code, and neither is said to leave the step usable.
        let other = try makeClient(emulator, environment: Env.demo)
        let elsewhere = await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) {
            _ = try await other.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        }
        #expect(!"\(try #require(elsewhere))".contains("usable"))
        #expect(try await emulator.requests("/totps/validations").count == 3, "each is sent: the server decides")
    }

    @Test func aStepExpiredByTheServersClockIsToStartOverAndIsStillSent() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        #expect(try #require(step.expiresAt) > Int64(Date().timeIntervalSince1970))
        // Eleven minutes later by the server's clock (its answers' Date says so): expired,
        // though this machine's clock has not moved.
        try await emulator.control(["clockOffsetSeconds": 660])
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpStepExpired)) {
            _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        }
        #expect(try await emulator.requests("/totps/validations").count == 1, "the wire is unchanged: the server decides")
    }

    @Test func aStepWithoutAnExpiryHasNone() {
        // {"endUserId":"e"} and {"endUserId":"e","exp":"soon"}
        #expect(TotpRequiredResult(userJwt: "h.eyJlbmRVc2VySWQiOiJlIn0.s", totpLink: nil, endUserId: "e").expiresAt == nil)
        #expect(TotpRequiredResult(userJwt: "h.eyJlbmRVc2VySWQiOiJlIiwiZXhwIjoic29vbiJ9.s", totpLink: nil, endUserId: "e").expiresAt == nil)
        // {"endUserId":"e","exp":1700000000.75}
        #expect(TotpRequiredResult(userJwt: "h.eyJlbmRVc2VySWQiOiJlIiwiZXhwIjoxNzAwMDAwMDAwLjc1fQ.s", totpLink: nil, endUserId: "e").expiresAt == 1_700_000_000)
        #expect(TotpRequiredResult(userJwt: "not a jwt", totpLink: nil, endUserId: "").expiresAt == nil)
    }

    @Test func aUsedMagicLinkIsToRequestANewOne() async throws {
        let emulator = try await Emulator.start()
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        _ = try await makeClient(emulator).handleRedirect(url)
        // Another client (another process) has no memory of it: the server refuses the grant.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) {
            _ = try await makeClient(emulator).handleRedirect(url)
        }
    }

    @Test func typedCodesLoseTheirSpacesAndDashesOnly() {
        #expect(TotpCodeInput.normalized("123456") == "123456")
        #expect(TotpCodeInput.normalized(" 123 456\n") == "123456")
        #expect(TotpCodeInput.normalized("123-456") == "123456")
        #expect(TotpCodeInput.normalized("123\u{2009}456") == "123456", "a thin space, as a paste may carry")
        #expect(TotpCodeInput.normalized("12\u{2013}34\u{00A0}56") == "123456")
        #expect(TotpCodeInput.normalized("12345") == nil)
        #expect(TotpCodeInput.normalized("1234567") == nil)
        #expect(TotpCodeInput.normalized("12a456") == nil)
        #expect(TotpCodeInput.normalized("١٢٣٤٥٦") == nil, "Arabic-Indic digits are not what the server compares")
        #expect(TotpCodeInput.normalized("") == nil)
        #expect(TotpCodeInput.normalized(String(repeating: "1", count: 100_000)) == nil)
    }

    @Test func everyReasonHasItsOwnOneLineSentence() {
        let sentences = StorageFailureReason.allCases.map(\.userMessage) + SignInUnavailableReason.allCases.map(\.userMessage)
            + SignInClosedReason.allCases.map(\.userMessage) + UnauthorizedReason.allCases.map(\.userMessage)
        #expect(Set(sentences).count == sentences.count)
        for sentence in sentences {
            #expect(sentence.hasSuffix(".") && !sentence.contains("\n") && sentence.count <= 120, "\(sentence)")
        }
    }

    @Test func anOpenerThatFindsNoBrowserFailsAtOnceWithTheURL() async throws {
        let opener = RecordingOpener(failingWith: BrowserOpenerError(message: "no display", noBrowser: true))
        let browser = try await BrowserFixture(try await Emulator.shared.get(), opener: opener)
        let error = await caught { _ = try await browser.client.signInWithGoogle() }
        guard case .unavailable(.noBrowser, "no display", let url?) = error as? PortalAuthSignInError else {
            Issue.record("expected unavailable(noBrowser) with the URL, got \(String(describing: error))")
            return
        }
        #expect(await opener.firstCall().url == url)
        #expect(!"\(error!)".contains(url), "the URL is a field, not part of the message")
        await browser.expectReleased()
    }
}
