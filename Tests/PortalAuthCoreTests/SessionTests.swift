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
        let emulator = try await Emulator.start()
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

    /// Runs `body` with a client of a fresh environment over `storage`, and returns the log
    /// lines of that environment it caused.
    func loggingFor(_ storage: any SessionStorage, _ body: (PortalAuth) async throws -> Void) async throws -> [(LogLevel, String)] {
        let environment = "env-\(UUID().uuidString)"
        let lines = Locked<[(LogLevel, String)]>([])
        let client = try PortalAuth(authEnvironmentId: environment, redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: storage)
        try await LogAudit.listening({ level, line in
            if line.contains(environment) { lines.withLock { $0.append((level, line)) } }
        }) {
            try await body(client)
        }
        return lines.withLock { $0 }
    }

    @Test(arguments: [#"{"clientSessionToken":"t"}"#, "garbage", "", #"{"clientSessionToken":" ","endUserId":"eu"}"#])
    func anUndecodableEntryIsClearedWithOneWarningAndReadsAsNoSession(entry: String) async throws {
        let storage = FlakyStorage()
        let lines = try await loggingFor(storage) { client in
            try await storage.set(entry, environmentId: client.authEnvironmentId)
            #expect(try await client.restoreSession() == nil)
            #expect(await storage.stored(client.authEnvironmentId) == nil)
        }
        #expect(storage.calls.withLock { $0 } == ["set", "get", "delete"])
        #expect(lines.count == 1)
        let (level, line) = try #require(lines.first)
        #expect(level == .warning && line.contains("undecodable") && line.contains("cleared"))
        #expect(entry.isEmpty || !line.contains(entry))
    }

    @Test func aFailedSelfHealIsAStorageFailureAndKeepsTheEntry() async throws {
        let storage = FlakyStorage()
        let lines = try await loggingFor(storage) { client in
            try await storage.set("garbage", environmentId: client.authEnvironmentId)
            storage.failures.withLock { $0.delete = true }
            let error = await caught { _ = try await client.restoreSession() }
            guard case .sessionStorageFailure(.entryNotCleared, let message) = error as? PortalAuthError else {
                Issue.record("expected entryNotCleared, got \(String(describing: error))")
                return
            }
            #expect(message.hasPrefix("The stored session cannot be decoded and could not be cleared"))
            #expect(!message.contains("garbage"))
            #expect(await storage.stored(client.authEnvironmentId) == "garbage")
            // Once the delete works, the same call heals it.
            storage.failures.withLock { $0.delete = false }
            #expect(try await client.restoreSession() == nil)
            #expect(await storage.stored(client.authEnvironmentId) == nil)
        }
        #expect(lines.filter { $0.1.contains("cleared") }.count == 1, "only the heal that worked says so")
    }

    @Test func invalidateDeletesAnUndecodableEntry() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = FlakyStorage()
        let session = try await signIn(try makeClient(emulator, storage: storage), emulator)
        try await storage.set("garbage", environmentId: Env.open)
        try await session.invalidate()
        #expect(await storage.stored(Env.open) == nil)
    }

    @Test func invalidateOfAnUndecodableEntryThatCannotBeClearedFailsAndRetries() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = FlakyStorage()
        let session = try await signIn(try makeClient(emulator, storage: storage), emulator)
        try await storage.set("garbage", environmentId: Env.open)
        storage.failures.withLock { $0.delete = true }
        let error = await caught { try await session.invalidate() }
        guard case .sessionStorageFailure(.entryNotCleared, _) = error as? PortalAuthError else {
            Issue.record("expected entryNotCleared, got \(String(describing: error))")
            return
        }
        #expect(await storage.stored(Env.open) == "garbage")
        storage.failures.withLock { $0.delete = false }
        try await session.invalidate()
        #expect(await storage.stored(Env.open) == nil)
    }

    @Test func anUnreadableStoreIsAFailureAndTheEntryIsLeftAlone() async throws {
        let storage = FlakyStorage()
        let entry = StoredSession(clientSessionToken: "t", endUserId: "eu").encoded()
        try await storage.set(entry, environmentId: "env")
        storage.failures.withLock { $0.get = true }
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: storage)
        let error = await caught { _ = try await client.restoreSession() }
        guard case .sessionStorageFailure(.hostStorageFailed, let message) = error as? PortalAuthError else { Issue.record("\(String(describing: error))"); return }
        #expect(!message.contains("\"t\""))
        #expect(await storage.stored("env") == entry)
    }

    @Test func aStorageErrorMessageReachesTheCaller() async throws {
        struct Locked: SessionStorage {
            func get(environmentId: String) async throws -> String? {
                throw SessionStorageError(reason: .keyringLocked, message: "The keyring is locked; unlock it and try again.")
            }
            func set(_ value: String, environmentId: String) async throws {}
            func delete(environmentId: String) async throws {}
        }
        let client = try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "127.0.0.1:9", storage: Locked())
        await #expect(throws: PortalAuthError.sessionStorageFailure(reason: .keyringLocked, message: "The keyring is locked; unlock it and try again.")) {
            _ = try await client.restoreSession()
        }
    }

    @Test func getTokenUntilInvalidated() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator)
        let session = try await signIn(client, emulator)
        #expect(try session.getToken().hasPrefix("cst_"))
        try await session.invalidate()
        #expect(throws: PortalCredentialError.sessionInvalidated) { try session.getToken() }
        #expect(try await client.restoreSession() == nil, "its persisted copy is gone")
    }

    @Test func invalidateSparesANewerSignIn() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        let old = try await signIn(client, emulator)
        let newer = try await signIn(try makeClient(emulator, storage: storage), emulator)
        try await old.invalidate()
        let restored = try #require(try await client.restoreSession())
        #expect(try restored.getToken() == newer.getToken())
    }

    @Test func anUnreadableStoreIsNotDeletedBlindAndALaterInvalidateRetries() async throws {
        let emulator = try await Emulator.shared.get()
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

    @Test func concurrentInvalidationsOfSessionsOfOneTokenMakeOneCompareAndDelete() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = FlakyStorage()
        let client = try makeClient(emulator, storage: storage)
        // One token, three session objects: a sign-in, and a restore by this client and another.
        let signedIn = try await signIn(client, emulator)
        let restored = try #require(try await client.restoreSession())
        let elsewhere = try #require(try await makeClient(emulator, storage: storage).restoreSession())
        let sessions = [signedIn, restored, elsewhere]
        #expect(signedIn !== restored && restored !== elsewhere)
        storage.calls.withLock { $0 = [] }

        try await invalidateConcurrently(sessions)
        #expect(storage.calls.withLock { $0 } == ["get", "delete"], "one read and one delete")
        #expect(await storage.stored(Env.open) == nil)
        for session in sessions {
            #expect(throws: PortalCredentialError.sessionInvalidated) { try session.getToken() }
        }
        // Settled: a later call, on any of them, does no storage I/O.
        try await elsewhere.invalidate()
        try await signedIn.invalidate()
        #expect(storage.calls.withLock { $0 } == ["get", "delete"])
    }

    @Test func invalidatingOneSessionInvalidatesEveryOneOfItsToken() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = MemorySessionStorage()
        let signedIn = try await signIn(try makeClient(emulator, storage: storage), emulator)
        let restored = try #require(try await makeClient(emulator, storage: storage).restoreSession())
        try await restored.invalidate()
        #expect(throws: PortalCredentialError.sessionInvalidated) { try signedIn.getToken() }
        #expect(signedIn.isInvalidated)
    }

    /// Every caller that joined the compare-and-delete in flight gets its failure. The eight
    /// calls start on the library's I/O thread, whose jobs run in order: once a job queued
    /// after theirs has run, each has joined (its first job runs up to the wait).
    @Test func concurrentInvalidationsShareOneFailureAndTheNextCallRetries() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = HeldStorage()
        let session = try await signIn(try makeClient(emulator, storage: storage), emulator)
        storage.holdReads(failing: true)
        let calls = (0..<8).map { _ in
            Task(executorPreference: PortalAuth.executor) { await caught { try await session.invalidate() } }
        }
        await Task(executorPreference: PortalAuth.executor) {}.value
        storage.release()
        for call in calls {
            let error = await call.value
            guard case .sessionStorageFailure(.hostStorageFailed, _) = error as? PortalAuthError else {
                Issue.record("expected the shared failure, got \(String(describing: error))")
                continue
            }
        }
        #expect(storage.reads.withLock { $0 } == 1)
        #expect(throws: PortalCredentialError.sessionInvalidated) { try session.getToken() }
        // After the failure, the next call retries, and succeeds.
        try await session.invalidate()
        #expect(storage.reads.withLock { $0 } == 2)
        #expect(try await storage.get(environmentId: Env.open) == nil)
    }

    @Test func aRestoreOfATokenInvalidatedHereFinishesItsFailedDelete() async throws {
        let emulator = try await Emulator.shared.get()
        let storage = FlakyStorage()
        let client = try makeClient(emulator, storage: storage)
        let session = try await signIn(client, emulator)
        storage.failures.withLock { $0.delete = true }
        _ = await caught { try await session.invalidate() }
        #expect(await storage.stored(Env.open) != nil)
        storage.failures.withLock { $0.delete = false }
        // The user signed out in this process: the entry left behind is not handed back.
        #expect(try await client.restoreSession() == nil)
        #expect(await storage.stored(Env.open) == nil)
    }

    @Test func clearDeletesTheEntryAndForgetsTheMemo() async throws {
        let emulator = try await Emulator.start()
        let storage = MemorySessionStorage()
        let client = try makeClient(emulator, storage: storage)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        _ = try await client.handleRedirect(url)
        try await client.clearPersistedSession()
        #expect(try await client.restoreSession() == nil)
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await client.handleRedirect(url) }
        #expect(try await emulator.requests().count == 2)
    }

    @Test func clearForgetsAPendingTotpWrite() async throws {
        let emulator = try await Emulator.start()
        let storage = FlakyStorage()
        let (client, step) = try await clientWithPendingTotpWrite(emulator, storage: storage)
        try await client.clearPersistedSession()
        // No write resurrects what the user cleared: verifying again is an ordinary request.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) { _ = try await client.verifyTotp("000000", userJwt: step.userJwt) }
        #expect(await storage.stored(Env.demo) == nil)
    }

    @Test func printingASessionOrAStepShowsNoSecret() async throws {
        let emulator = try await Emulator.shared.get()
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

/// An in-memory store whose reads can be held until `release()`, to keep a compare-and-delete
/// in flight; a held read then fails when asked to.
final class HeldStorage: SessionStorage {
    private struct Hold {
        var held = false
        var failing = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let backing = MemorySessionStorage()
    private let hold = Locked(Hold())
    let reads = Locked(0)

    /// Holds the reads from now on (counted from zero), the first of them failing if asked.
    func holdReads(failing: Bool) {
        hold.withLock { $0 = Hold(held: true, failing: failing) }
        reads.withLock { $0 = 0 }
    }

    func release() {
        let waiting = hold.withLock { hold in
            defer { hold.waiting = [] }
            hold.held = false
            return hold.waiting
        }
        waiting.forEach { $0.resume() }
    }

    func get(environmentId: String) async throws -> String? {
        reads.withLock { $0 += 1 }
        await withCheckedContinuation { continuation in
            let wait = hold.withLock { hold in
                if hold.held { hold.waiting.append(continuation) }
                return hold.held
            }
            if !wait { continuation.resume() }
        }
        let fail = hold.withLock { hold in
            defer { hold.failing = false }
            return hold.failing
        }
        if fail { throw FlakyStorage.Unavailable() }
        return try await backing.get(environmentId: environmentId)
    }

    func set(_ value: String, environmentId: String) async throws {
        try await backing.set(value, environmentId: environmentId)
    }

    func delete(environmentId: String) async throws {
        try await backing.delete(environmentId: environmentId)
    }
}
