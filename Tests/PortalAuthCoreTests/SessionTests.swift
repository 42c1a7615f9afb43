import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §3 restoreSession / clearPersistedSession, §6 sessions.
@Suite struct SessionTests {
    func signIn(_ client: PortalAuth, _ emulator: Emulator) async throws -> PortalSession {
        let (url, _) = try await grantRedirect(emulator, environment: client.authEnvironmentId)
        return try #require(try await client.handleRedirect(url)?.authenticated).session
    }

    @Test func restoreReadsTheStoreOnly() async throws {
        let emulator = try Emulator.start()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        #expect(try await client.restoreSession() == nil)
        let session = try await signIn(client, emulator)
        let before = try await emulator.requests().count
        // A second client of the environment shares the session through the store.
        let restored = try #require(try await makeClient(emulator, storage: storage).restoreSession())
        #expect(restored.endUserId == session.endUserId)
        #expect(try restored.getToken() == session.getToken())
        #expect(try await emulator.requests().count == before)
    }

    @Test func anUndecodableEntryIsDeletedAndReadsAsNoSession() async throws {
        let storage = FlakyStorage()
        try await storage.set(#"{"clientSessionToken":"t"}"#, environmentId: "env")
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: storage)
        #expect(try await client.restoreSession() == nil)
        #expect(await storage.stored("env") == nil)
    }

    @Test func anUndecodableEntryReadsAsNoSessionEvenWhenItsDeleteFails() async throws {
        let storage = FlakyStorage()
        try await storage.set("garbage", environmentId: "env")
        storage.failures.withLock { $0.delete = true }
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: storage)
        #expect(try await client.restoreSession() == nil)
        storage.failures.withLock { $0.delete = false }
        #expect(try await client.restoreSession() == nil)
        #expect(await storage.stored("env") == nil, "the next read deletes it")
    }

    @Test func anUnreadableStoreIsAFailureAndTheEntryIsLeftAlone() async throws {
        let storage = FlakyStorage()
        let entry = StoredSession(clientSessionToken: "t", endUserId: "eu").encoded()
        try await storage.set(entry, environmentId: "env")
        storage.failures.withLock { $0.get = true }
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: storage)
        let error = await caught { _ = try await client.restoreSession() }
        guard case .sessionStorageFailure(let message) = error as? PortalAuthError else { Issue.record("\(String(describing: error))"); return }
        #expect(!message.contains("\"t\""))
        #expect(await storage.stored("env") == entry)
    }

    @Test func aStorageErrorMessageReachesTheCaller() async throws {
        struct Locked: SessionStorage {
            func get(environmentId: String) async throws -> String? { throw SessionStorageError(message: "The keyring is locked; unlock it and try again.") }
            func set(_ value: String, environmentId: String) async throws {}
            func delete(environmentId: String) async throws {}
        }
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: Locked())
        await #expect(throws: PortalAuthError.sessionStorageFailure(message: "The keyring is locked; unlock it and try again.")) {
            _ = try await client.restoreSession()
        }
    }

    @Test func getTokenUntilInvalidated() async throws {
        let emulator = try Emulator.shared.get()
        let client = try makeClient(emulator)
        let session = try await signIn(client, emulator)
        #expect(try session.getToken().hasPrefix("cst_"))
        try await session.invalidate()
        #expect(throws: PortalCredentialError.sessionInvalidated) { try session.getToken() }
        #expect(try await client.restoreSession() == nil, "its persisted copy is gone")
    }

    @Test func invalidateSparesANewerSignIn() async throws {
        let emulator = try Emulator.shared.get()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        let old = try await signIn(client, emulator)
        let newer = try await signIn(try makeClient(emulator, storage: storage), emulator)
        try await old.invalidate()
        let restored = try #require(try await client.restoreSession())
        #expect(try restored.getToken() == newer.getToken())
    }

    @Test func anUnreadableStoreIsNotDeletedBlindAndALaterInvalidateRetries() async throws {
        let emulator = try Emulator.shared.get()
        let storage = FlakyStorage()
        let client = try makeClient(emulator, storage: storage)
        let session = try await signIn(client, emulator)
        storage.failures.withLock { $0.get = true }
        let error = await caught { try await session.invalidate() }
        guard case .sessionStorageFailure = error as? PortalAuthError else { Issue.record("\(String(describing: error))"); return }
        #expect(throws: PortalCredentialError.sessionInvalidated) { try session.getToken() }
        #expect(await storage.stored(Env.open) != nil)

        storage.failures.withLock { $0.get = false }
        try await session.invalidate()
        #expect(await storage.stored(Env.open) == nil)
    }

    @Test func clearDeletesTheEntryAndForgetsTheMemo() async throws {
        let emulator = try Emulator.start()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        _ = try await client.handleRedirect(url)
        try await client.clearPersistedSession()
        #expect(try await client.restoreSession() == nil)
        await #expect(throws: PortalRequestsError.unauthorized) { _ = try await client.handleRedirect(url) }
        #expect(try await emulator.requests().count == 2)
    }

    @Test func clearForgetsAPendingTotpWrite() async throws {
        let emulator = try Emulator.start()
        let storage = FlakyStorage()
        let (client, step) = try await clientWithPendingTotpWrite(emulator, storage: storage)
        try await client.clearPersistedSession()
        // No write resurrects what the user cleared: verifying again is an ordinary request.
        await #expect(throws: PortalRequestsError.unauthorized) { _ = try await client.verifyTotp("000000", userJwt: step.userJwt) }
        #expect(await storage.stored(Env.demo) == nil)
    }

    @Test func printingASessionOrAStepShowsNoSecret() async throws {
        let emulator = try Emulator.shared.get()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        let link = try #require(step.totpLink)
        var dumped = ""
        dump(step, to: &dumped)
        for text in ["\(step)", String(reflecting: step), dumped, "\(AuthResult.totpRequired(step))"] {
            #expect(!text.contains(step.userJwt) && !text.contains(link))
            #expect(text.contains(step.endUserId))
        }
        let result = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        let token = try result.session.getToken()
        var dumpedResult = ""
        dump(result, to: &dumpedResult)
        for text in ["\(result.session)", "\(result)", dumpedResult, String(reflecting: result)] {
            #expect(!text.contains(token))
        }
    }
}
