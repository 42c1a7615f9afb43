import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §5: the replay memo, persist before return, the grant lock, cancellation.
@Suite struct ReplayAndPersistenceTests {
    @Test func aRedeliveredGrantReplaysTheSameSessionWithoutARequest() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        let first = try #require(try await client.handleRedirect(url)?.authenticated)
        let second = try #require(try await client.handleRedirect(url + "#again")?.authenticated)
        #expect(first.session === second.session)
        #expect(try await emulator.requests().count == 1)
    }

    @Test func aFailedExchangeIsNotRemembered() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        try await emulator.fault("/magic-links/validations", "status", ["status": 503])
        await #expect(throws: PortalRequestsError.self) { _ = try await client.handleRedirect(url) }
        #expect(try await client.handleRedirect(url)?.authenticated != nil)
        #expect(try await emulator.requests().count == 2)
    }

    @Test func aTotpStepReplaysUntilVerifiedThenTheSession() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let url = try await magicLinkRedirect(client, emulator, email: uniqueEmail())
        let step = try #require(try await client.handleRedirect(url)?.totpStep)
        #expect(try await client.handleRedirect(url)?.totpStep == step)
        let verified = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        let replayed = try #require(try await client.handleRedirect(url)?.authenticated)
        #expect(replayed.session === verified.session)
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
    }

    @Test func aWrongCodeDoesNotConsumeTheJwt() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) {
            _ = try await client.verifyTotp(try wrongCode(for: step), userJwt: step.userJwt)
        }
        #expect(try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt).session.endUserId == step.endUserId)
    }

    @Test func theCodeIsPostedVerbatimAndABadJwtCostsNoRequest() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        await #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.malformed)) {
            _ = try await client.verifyTotp("123456", userJwt: "  ")
        }
        #expect(try await emulator.requests().isEmpty)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) { _ = try await client.verifyTotp(" 12 34 ", userJwt: step.userJwt) }
        #expect(try await emulator.requests("/totps/validations").first?.jsonBody["code"] as? String == " 12 34 ")
    }

    @Test func aFailedWriteIsRetriedByRedeliveryWithoutARequest() async throws {
        let emulator = try await Emulator.start()
        let storage = FlakyStorage()
        let client = try makeClient(emulator, storage: storage)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        storage.failures.withLock { $0.set = true }
        let error = await caught { _ = try await client.handleRedirect(url) }
        guard case .sessionStorageFailure = error as? PortalAuthError else { Issue.record("\(String(describing: error))"); return }
        #expect(await storage.stored(Env.open) == nil)

        storage.failures.withLock { $0.set = false }
        let result = try #require(try await client.handleRedirect(url)?.authenticated)
        #expect(StoredSession.decode(await storage.stored(Env.open) ?? "") == result.session.stored)
        #expect(try await emulator.requests().count == 1, "the backend burned the grant: only the write is retried")
        // Settled: a third delivery neither requests nor writes.
        let writes = storage.calls.withLock { $0.filter { $0 == "set" }.count }
        _ = try await client.handleRedirect(url)
        #expect(storage.calls.withLock { $0.filter { $0 == "set" }.count } == writes)
    }

    @Test func aFailedTotpWriteIsFinishedByVerifyingAgainWithoutARequest() async throws {
        let emulator = try await Emulator.start()
        let storage = FlakyStorage()
        let client = try makeClient(emulator, environment: Env.demo, storage: storage)
        let url = try await magicLinkRedirect(client, emulator, email: uniqueEmail())
        let step = try #require(try await client.handleRedirect(url)?.totpStep)
        storage.failures.withLock { $0.set = true }
        let error = await caught { _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt) }
        guard case .sessionStorageFailure = error as? PortalAuthError else { Issue.record("\(String(describing: error))"); return }

        storage.failures.withLock { $0.set = false }
        // The code is not consulted: the accepted session is written and returned.
        let result = try await client.verifyTotp("not a code", userJwt: step.userJwt)
        #expect(StoredSession.decode(await storage.stored(Env.demo) ?? "") == result.session.stored)
        #expect(try await emulator.requests("/totps/validations").count == 1)
        // And the grant now replays as that session.
        #expect(try await client.handleRedirect(url)?.authenticated?.session === result.session)
    }

    @Test func aNewerSignInSettlesPendingWrites() async throws {
        let emulator = try await Emulator.start()
        let storage = FlakyStorage()
        let (client, step) = try await clientWithPendingTotpWrite(emulator, storage: storage)

        // A newer sign-in reaches the store...
        let newer = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        let newest = try await client.verifyTotp(try currentCode(for: newer), userJwt: newer.userJwt)
        // ...so the stale pending write is gone: verifying the old JWT is an ordinary
        // request (the JWT is spent: 401, the step used) and the newer entry is untouched.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpStepUsed)) {
            _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        }
        #expect(StoredSession.decode(await storage.stored(Env.demo) ?? "") == newest.session.stored)
        #expect(try await emulator.requests("/totps/validations").count == 3)
    }

    @Test func aNewerSignInWithoutTotpAlsoSettlesAPendingTotpWrite() async throws {
        let emulator = try await Emulator.start()
        let storage = FlakyStorage()
        let (client, step) = try await clientWithPendingTotpWrite(emulator, storage: storage)

        // A sign-in that needs no code reaches the store.
        try await emulator.fault("/oauth/tokens", "malformed", ["body": #"{"data":{"clientSessionToken":"cst_newer","endUserId":"eu_newer"}}"#])
        let newer = try #require(try await client.handleRedirect(appRedirect + "?token=g2&login_type=GOOGLE")?.authenticated)
        // The stale pending write is settled: the old JWT is an ordinary request, for a used step.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpStepUsed)) { _ = try await client.verifyTotp("000000", userJwt: step.userJwt) }
        #expect(StoredSession.decode(await storage.stored(Env.demo) ?? "") == newer.session.stored)
    }

    @Test func theMemoMatchesTheGrantByteForByte() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        try await emulator.fault("/oauth/tokens", "malformed", ["body": #"{"data":{"clientSessionToken":"cst_1","endUserId":"eu_1"}}"#])
        // Precomposed and decomposed é: canonically equivalent, different grants.
        _ = try await client.handleRedirect(appRedirect + "?token=caf%C3%A9&login_type=GOOGLE")
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) {
            _ = try await client.handleRedirect(appRedirect + "?token=cafe%CC%81&login_type=GOOGLE")
        }
        #expect(try await emulator.requests("/oauth/tokens").count == 2)
    }

    @Test func aCallQueuedBehindTheConnectionLimitCanStillBeCancelled() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let limit = HTTPEngine.maxConnectionsPerOrigin
        try await emulator.fault("/methods", "hold", count: limit)
        let held = (0..<limit).map { _ in Task { try await client.getMethods() } }
        try await emulator.waitForRequests("/methods", count: limit)
        // Every connection to the origin is busy: this call waits in the engine, unsent.
        let queued = Task { try await client.getMethods() }
        queued.cancel()
        await #expect(throws: CancellationError.self) { _ = try await queued.value }
        try await emulator.release()
        for task in held { _ = try await task.value }
        #expect(try await emulator.requests("/methods").count == limit)
    }

    @Test func anInvalidatedRememberedSessionIsNotHandedBack() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        let result = try #require(try await client.handleRedirect(url)?.authenticated)
        try await result.session.invalidate()
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await client.handleRedirect(url) }
        #expect(try await emulator.requests().count == 1, "no request for the invalidated replay")
        // The memo was dropped: a further delivery is a real (spent-grant) request.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await client.handleRedirect(url) }
        #expect(try await emulator.requests().count == 2)
    }

    @Test func twoConcurrentDeliveriesMakeOneRequest() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        let first = try await heldExchange(client, emulator, url)
        // The first exchange is on the wire and holds the grant lock: the second waits.
        let second = Task { try await client.handleRedirect(url) }
        try await emulator.release()
        let sessions = try await [first.value?.authenticated?.session, second.value?.authenticated?.session]
        #expect(sessions[0] != nil && sessions[0] === sessions[1])
        #expect(try await emulator.requests().count == 1)
    }

    @Test func clearWaitsForAnInFlightExchange() async throws {
        let emulator = try await Emulator.start()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        let exchange = try await heldExchange(client, emulator, url)
        let clear = Task { try await client.clearPersistedSession() }
        try await emulator.release()
        _ = try await exchange.value
        try await clear.value
        // Had clear not waited, the exchange would have persisted after it.
        #expect(try await storage.get(environmentId: Env.open) == nil)
        // The memo is forgotten too: the grant is exchanged again (and is spent).
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await client.handleRedirect(url) }
    }

    @Test func cancellingBeforeTheRequestIsSentMakesNoRequest() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (held, _) = try await grantRedirect(emulator, environment: Env.open)
        let (waiting, _) = try await grantRedirect(emulator, environment: Env.open)
        let first = try await heldExchange(client, emulator, held)
        // The second exchange waits for the grant lock; cancelled there, it never goes out.
        let second = Task { try await client.handleRedirect(waiting) }
        second.cancel()
        await #expect(throws: CancellationError.self) { _ = try await second.value }
        try await emulator.release()
        #expect(try await first.value?.authenticated != nil)
        #expect(try await emulator.requests().count == 1)
    }

    @Test func cancellingAfterTheRequestIsSentStillPersists() async throws {
        let emulator = try await Emulator.start()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        let exchange = try await heldExchange(client, emulator, url)
        exchange.cancel()
        try await emulator.release()
        _ = try? await exchange.value
        let stored = try #require(try await storage.get(environmentId: Env.open))
        #expect(StoredSession.decode(stored) != nil, "the spent grant's session is not lost")
        #expect(try await client.restoreSession() != nil)
    }
}
