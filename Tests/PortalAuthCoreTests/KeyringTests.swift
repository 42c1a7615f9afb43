import Foundation
import Testing
@testable import PortalAuthCore

/// The keyring store against a real gnome-keyring-daemon on a private session bus
/// (scripts/private-keyring.sh, which `make test` runs the tests inside). Serialised: the
/// tests stop, restart and lock the one daemon. Outside a private keyring they are off, so
/// a developer's own keyring is never touched.
@Suite(.serialized, .enabled(if: PrivateKeyring.script != nil, "needs scripts/private-keyring.sh run"))
struct KeyringTests {
    static let application = "io.portalhq.auth.Tests"
    let storage = try! KeyringSessionStorage(applicationId: KeyringTests.application)

    func client(_ emulator: Emulator, _ environment: String = Env.open) throws -> PortalAuth {
        try makeClient(emulator, environment: environment, storage: storage)
    }

    func signIn(_ client: PortalAuth, _ emulator: Emulator) async throws -> PortalSession {
        let (url, _) = try await grantRedirect(emulator, environment: client.authEnvironmentId)
        return try #require(try await client.handleRedirect(url)?.authenticated).session
    }

    func expectStorageFailure(_ reason: StorageFailureReason, _ body: () async throws -> Void, mentioning word: String? = nil) async {
        let error = await caught(body)
        guard case .sessionStorageFailure(let actual, let message) = error as? PortalAuthError else {
            Issue.record("expected sessionStorageFailure, got \(String(describing: error))")
            return
        }
        #expect(actual == reason, "\(message)")
        if let word { #expect(message.contains(word), "\(message)") }
    }

    init() async throws {
        try PrivateKeyring.control("start")
        try await storage.delete(environmentId: Env.open)
        try await storage.delete(environmentId: Env.demo)
    }

    @Test func persistRestoreClearAndInvalidateThroughTheClient() async throws {
        let emulator = try await Emulator.shared.get()
        let auth = try client(emulator)
        let session = try await signIn(auth, emulator)

        let item = try #require(PrivateKeyring.secretTool(["search", "--all", "auth_environment_id", Env.open]))
        #expect(item.contains("label = io.portalhq.auth.Tests: Portal session (env-open)"))
        #expect(item.contains("schema = io.portalhq.auth.Session"))
        #expect(PrivateKeyring.secretTool(["lookup", "application_id", Self.application, "auth_environment_id", Env.open]) != nil)
        let stored = try #require(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]))
        #expect(stored == #"{"clientSessionToken":"\#(try session.getToken())","endUserId":"\#(session.endUserId)"}"#)

        let restored = try #require(try await client(emulator).restoreSession())
        #expect(try restored.getToken() == session.getToken())
        try await auth.clearPersistedSession()
        #expect(try await auth.restoreSession() == nil)

        let again = try await signIn(auth, emulator)
        try await again.invalidate()
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]) == nil)
    }

    @Test func aStoppedDaemonFailsTransientlyAndSpendsNoGrant() async throws {
        let emulator = try await Emulator.start()
        let auth = try client(emulator)
        let first = try await signIn(auth, emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)

        try PrivateKeyring.control("stop")
        await expectStorageFailure(.noSecretService, { _ = try await auth.restoreSession() }, mentioning: "Secret Service")
        await expectStorageFailure(.noSecretService) { _ = try await auth.handleRedirect(url) }
        // The store could not take a session: the grant was never sent.
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
        try PrivateKeyring.control("start")

        // Nothing was deleted while the daemon was away.
        #expect(try await auth.restoreSession()?.endUserId == first.endUserId)
        // The same redirect signs in once the store is back.
        let second = try #require(try await auth.handleRedirect(url)?.authenticated)
        #expect(try await auth.restoreSession().map { try $0.getToken() } == (try second.session.getToken()))
        #expect(try await emulator.requests("/magic-links/validations").count == 2)
    }

    @Test func aStoppedDaemonBeforeVerifyTotpSpendsNeitherCodeNorStep() async throws {
        let emulator = try await Emulator.start()
        let auth = try client(emulator, Env.demo)
        let step = try #require(try await auth.handleRedirect(magicLinkRedirect(auth, emulator, email: uniqueEmail()))?.totpStep)
        try PrivateKeyring.control("stop")
        await expectStorageFailure(.noSecretService) { _ = try await auth.verifyTotp(try currentCode(for: step), userJwt: step.userJwt) }
        #expect(try await emulator.requests("/totps/validations").isEmpty)
        try PrivateKeyring.control("start")
        let result = try await auth.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        #expect(try await auth.restoreSession()?.endUserId == result.session.endUserId)
        #expect(try await emulator.requests("/totps/validations").count == 1)
    }

    @Test func aLockedCollectionIsTransientNeverADeletion() async throws {
        let emulator = try await Emulator.shared.get()
        let auth = try client(emulator)
        let session = try await signIn(auth, emulator)
        try PrivateKeyring.control("lock")
        await expectStorageFailure(.keyringLocked, { _ = try await auth.restoreSession() }, mentioning: "locked")
        await expectStorageFailure(.keyringLocked, { try await auth.clearPersistedSession() }, mentioning: "locked")
        await expectStorageFailure(.keyringLocked, { try await session.invalidate() }, mentioning: "locked")
        await expectStorageFailure(.keyringLocked, { _ = try await signIn(auth, emulator) }, mentioning: "locked")
        // Restarting unlocks it: the entry is still the first session's...
        try PrivateKeyring.control("start")
        let stored = PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open])
        #expect(stored == session.stored.encoded())
        // ...whose invalidation this process still owes: restoring it finishes the sign-out.
        #expect(try await auth.restoreSession() == nil)
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]) == nil)
    }

    /// An environment no other test uses: the warning counted below names it, and the Swift
    /// suite's other tests (its sessions' own tests among them) clear undecodable entries of
    /// the emulator's environments while this one runs. Restoring a session sends no request,
    /// so the emulator need not know it.
    static let corruptEntryEnvironment = "env-keyring-corrupt-entry"

    func storeCorrupt(_ entry: [UInt8], environment: String = Env.open) {
        plant(entry, label: "corrupt", environment: environment)
    }

    /// Not JSON; and JSON whose token is not UTF-8, which must not be repaired into a session.
    @Test(arguments: [Array("{not json".utf8),
                      Array(#"{"clientSessionToken":"cst_"#.utf8) + [0xFF] + Array(#"","endUserId":"eu_1"}"#.utf8)])
    func aCorruptEntryIsClearedWithOneWarningAndReadsAsNoSession(entry: [UInt8]) async throws {
        let emulator = try await Emulator.shared.get()
        let environment = Self.corruptEntryEnvironment
        storeCorrupt(entry, environment: environment)
        let warnings = Locked<[String]>([])
        let auth = try client(emulator, environment)
        let restored = try await LogAudit.listening({ level, line in
            if level == .warning, line.contains("environment \(environment) ") { warnings.withLock { $0.append(line) } }
        }) {
            try await auth.restoreSession()
        }
        #expect(restored == nil)
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", environment]) == nil)
        #expect(warnings.withLock { $0 } == ["An undecodable stored session of environment \(environment) was cleared."])
    }

    /// The delete of the self-heal fails for real: the keyring is locked between the read
    /// and the delete.
    @Test func aSelfHealTheKeyringRefusesIsAFailureAndKeepsTheEntry() async throws {
        struct LockingAfterRead: SessionStorage {
            let keyring: KeyringSessionStorage
            func get(environmentId: String) async throws -> String? {
                let value = try await keyring.get(environmentId: environmentId)
                try PrivateKeyring.control("lock")
                return value
            }
            func set(_ value: String, environmentId: String) async throws { try await keyring.set(value, environmentId: environmentId) }
            func delete(environmentId: String) async throws { try await keyring.delete(environmentId: environmentId) }
        }
        let emulator = try await Emulator.shared.get()
        storeCorrupt(Array("{not json".utf8))
        let auth = try makeClient(emulator, storage: LockingAfterRead(keyring: storage))
        await expectStorageFailure(.entryNotCleared, { _ = try await auth.restoreSession() }, mentioning: "locked")
        try PrivateKeyring.control("start")
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]) == "{not json")
    }

    @Test func invalidateClearsACorruptEntry() async throws {
        let emulator = try await Emulator.shared.get()
        let session = try await signIn(try client(emulator), emulator)
        try await storage.delete(environmentId: Env.open)
        storeCorrupt(Array("{not json".utf8))
        try await session.invalidate()
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]) == nil)
    }

    @Test func eightConcurrentInvalidationsMakeOneReadAndOneDelete() async throws {
        let emulator = try await Emulator.shared.get()
        let counted = FlakyStorage(over: storage)
        let auth = try makeClient(emulator, storage: counted)
        let signedIn = try await signIn(auth, emulator)
        let sessions = [signedIn, try #require(try await auth.restoreSession()), try #require(try await client(emulator).restoreSession())]
        counted.calls.withLock { $0 = [] }
        try await invalidateConcurrently(sessions)
        #expect(counted.calls.withLock { $0 } == ["get", "delete"])
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]) == nil)
        for session in sessions {
            #expect(throws: PortalCredentialError.sessionInvalidated) { try session.getToken() }
        }
    }

    @Test func clientsAndProcessesOfOneApplicationShareTheEnvironmentsEntry() async throws {
        let emulator = try await Emulator.shared.get()
        let session = try await signIn(try client(emulator), emulator)
        // A second client in this process, with a store of its own for the same application...
        let other = try makeClient(emulator, environment: Env.open, storage: try KeyringSessionStorage(applicationId: Self.application))
        #expect(try await other.restoreSession()?.endUserId == session.endUserId)
        // ...and a second process.
        let printed = try Subprocess.run(Emulator.repositoryRoot.appendingPathComponent(".build/debug/portal-auth-demo").path,
                                         ["--restore", "--environment", Env.open, "--application-id", Self.application])
        #expect(printed == "Restored the session of \(session.endUserId)\n")
    }

    /// A GTK app and a script of one environment used to sign each other out.
    @Test func twoApplicationsOfOneEnvironmentNeverShareASession() async throws {
        let emulator = try await Emulator.shared.get()
        let otherStorage = try KeyringSessionStorage(applicationId: "com.example.Other-App")
        try await otherStorage.delete(environmentId: Env.open)
        let mine = try await signIn(try client(emulator), emulator)
        let other = try makeClient(emulator, environment: Env.open, storage: otherStorage)
        #expect(try await other.restoreSession() == nil)
        let theirs = try await signIn(other, emulator)
        #expect(try await client(emulator).restoreSession().map { try $0.getToken() } == (try mine.getToken()))
        try await other.clearPersistedSession()
        #expect(try await client(emulator).restoreSession()?.endUserId == mine.endUserId, "the other app signed out alone")
        try await theirs.invalidate()
        #expect(try await client(emulator).restoreSession()?.endUserId == mine.endUserId)
        let item = try #require(PrivateKeyring.secretTool(["search", "--all", "auth_environment_id", Env.open]))
        #expect(!item.contains("com.example.Other-App"))
    }

    /// The library writes to the default collection and reads only there: an item planted in
    /// another one (here the `session` collection) is not the user's session.
    @Test func anItemInAnotherCollectionIsNeverTakenForTheSession() async throws {
        let emulator = try await Emulator.shared.get()
        let planted = #"{"clientSessionToken":"cst_planted","endUserId":"eu_attacker"}"#
        plant(Array(planted.utf8), in: "session", label: "\(Self.application): Portal session (\(Env.open))")
        #expect(try await client(emulator).restoreSession() == nil)
        try await client(emulator).clearPersistedSession()
        let session = try await signIn(try client(emulator), emulator)
        #expect(try await client(emulator).restoreSession()?.endUserId == session.endUserId)
        try await session.invalidate()
        #expect(try await client(emulator).restoreSession() == nil)
        // Not the library's to delete either.
        #expect(PrivateKeyring.secretTool(["search", "--all", "auth_environment_id", Env.open])?.contains("eu_attacker") == true)
    }

    /// A store of an application that has never written an item of its own in this keyring.
    func freshApplication() throws -> KeyringSessionStorage {
        try KeyringSessionStorage(applicationId: "io.portalhq.auth.Fresh-\(UUID().uuidString)")
    }

    /// The item without an application attribute (as every program wrote it before the
    /// attribute, and as one that names no application still does) is found by an app that
    /// names itself until it writes its own, which removes it.
    @Test func anItemWithoutTheApplicationAttributeIsMigrated() async throws {
        let emulator = try await Emulator.shared.get()
        let earlier = try await signIn(try makeClient(emulator, environment: Env.open, storage: KeyringSessionStorage.shared), emulator)
        let value = #"{"clientSessionToken":"\#(try earlier.getToken())","endUserId":"\#(earlier.endUserId)"}"#
        try await KeyringSessionStorage.shared.delete(environmentId: Env.open)
        try storeItemWithoutApplication(value)

        let fresh = try freshApplication()
        let auth = try makeClient(emulator, environment: Env.open, storage: fresh)
        #expect(try await auth.restoreSession()?.endUserId == earlier.endUserId)
        let newer = try await signIn(auth, emulator)
        #expect(PrivateKeyring.secretTool(["search", "--all", "auth_environment_id", Env.open])?
            .contains("label = portal-auth-old: Portal session") == false, "the old item went")
        #expect(try await makeClient(emulator, environment: Env.open, storage: fresh).restoreSession()?.endUserId == newer.endUserId)
        try await fresh.delete(environmentId: Env.open)
    }

    /// Migration ends with the app's first item of its own: signed out, it never adopts an
    /// item without the attribute that another program writes afterwards (it cannot be the
    /// app's: its delete removed those), from this process or a new one.
    @Test func anAppThatHasHadItsOwnItemNeverAdoptsAnotherWithoutTheAttribute() async throws {
        let emulator = try await Emulator.shared.get()
        let applicationId = "io.portalhq.auth.Fresh-\(UUID().uuidString)"
        let auth = try makeClient(emulator, environment: Env.open, storage: try KeyringSessionStorage(applicationId: applicationId))
        _ = try await signIn(auth, emulator)
        try await auth.clearPersistedSession()
        try storeItemWithoutApplication(#"{"clientSessionToken":"cst_planted","endUserId":"eu_planted"}"#)
        #expect(try await auth.restoreSession() == nil)
        let demo = Emulator.repositoryRoot.appendingPathComponent(".build/debug/portal-auth-demo").path
        let (status, printed) = try Subprocess.runReportingStatus(
            demo, ["--restore", "--application-id", applicationId, "--environment", Env.open, "--api-host", emulator.baseURL])
        #expect(status == 0 && printed.contains("No session is persisted for \(Env.open)"), "\(printed)")
        // The marker is the application's own: another app of the environment still migrates.
        #expect(try await makeClient(emulator, environment: Env.open, storage: try freshApplication()).restoreSession()?.endUserId
            == "eu_planted")
        try await KeyringSessionStorage.shared.delete(environmentId: Env.open)
    }

    /// A program that names no application keeps to the items without the attribute: it
    /// neither reads nor deletes an app's own.
    /// An app whose own item a version before the marker wrote: its sign-out leaves the marker
    /// before the item goes, and migration ends there too.
    @Test func anAppUpgradedFromBeforeTheMarkerEndsMigrationAtItsSignOut() async throws {
        let emulator = try await Emulator.shared.get()
        let applicationId = "io.portalhq.auth.Fresh-\(UUID().uuidString)"
        let value = #"{"clientSessionToken":"cst_own","endUserId":"eu_own"}"#
        try #require(PrivateKeyring.secretTool(["store", "--label=own", "xdg:schema", "io.portalhq.auth.Session",
                                                "auth_environment_id", Env.open, "application_id", applicationId],
                                               input: Array(value.utf8)) != nil)
        let auth = try makeClient(emulator, environment: Env.open, storage: try KeyringSessionStorage(applicationId: applicationId))
        #expect(try await auth.restoreSession()?.endUserId == "eu_own")
        try await auth.clearPersistedSession()
        try storeItemWithoutApplication(#"{"clientSessionToken":"cst_planted","endUserId":"eu_planted"}"#)
        #expect(try await auth.restoreSession() == nil)
        try await KeyringSessionStorage.shared.delete(environmentId: Env.open)
    }

    @Test func aProgramThatNamesNoApplicationLeavesTheAppsItemsAlone() async throws {
        let emulator = try await Emulator.shared.get()
        let unnamed = try makeClient(emulator, environment: Env.open, storage: KeyringSessionStorage.shared)
        try await unnamed.clearPersistedSession()
        let mine = try await signIn(try client(emulator), emulator)
        #expect(try await unnamed.restoreSession() == nil)
        try await unnamed.clearPersistedSession()
        #expect(try await client(emulator).restoreSession()?.endUserId == mine.endUserId)
        let theirs = try await signIn(unnamed, emulator)
        #expect(try await unnamed.restoreSession()?.endUserId == theirs.endUserId)
        #expect(try await client(emulator).restoreSession()?.endUserId == mine.endUserId, "an app's own item comes first")
        try await unnamed.clearPersistedSession()
    }

    /// An item as the library wrote it before the application attribute.
    private func storeItemWithoutApplication(_ value: String) throws {
        let stored = PrivateKeyring.secretTool(["store", "--label=portal-auth-old: Portal session (\(Env.open))", "xdg:schema",
                                                "io.portalhq.auth.Session", "auth_environment_id", Env.open], input: Array(value.utf8))
        try #require(stored != nil)
    }

    @Test func aDeleteRemovesTheItemWithoutTheApplicationAttributeToo() async throws {
        let emulator = try await Emulator.shared.get()
        try storeItemWithoutApplication(#"{"clientSessionToken":"cst_old","endUserId":"eu_old"}"#)
        let fresh = try makeClient(emulator, environment: Env.open, storage: try freshApplication())
        #expect(try await fresh.restoreSession()?.endUserId == "eu_old")
        try await fresh.clearPersistedSession()
        #expect(try await fresh.restoreSession() == nil)
        #expect(PrivateKeyring.secretTool(["lookup", "auth_environment_id", Env.open]) == nil)
    }

    @Test(arguments: [(["-u", "DBUS_SESSION_BUS_ADDRESS"], "No D-Bus session bus was found"),
                      (["DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus"], "The D-Bus session bus could not be reached")])
    func withoutASessionBusTheFailureSaysWhatToDo(environment: [String], expected: String) throws {
        let demo = Emulator.repositoryRoot.appendingPathComponent(".build/debug/portal-auth-demo").path
        let (status, printed) = try Subprocess.runReportingStatus(
            "/usr/bin/env", ["-u", "DISPLAY"] + environment + [demo, "--restore"])
        #expect(status != 0)
        #expect(printed.contains("Session storage failure: " + expected), "\(printed)")
    }

    @Test func aStaleSessionsInvalidateSparesANewerEntry() async throws {
        let emulator = try await Emulator.shared.get()
        let stale = try await signIn(try client(emulator), emulator)
        let newer = try await signIn(try client(emulator), emulator)
        try await stale.invalidate()
        #expect(try await client(emulator).restoreSession().map { try $0.getToken() } == (try newer.getToken()))
    }
}

extension KeyringTests {
    /// Stores `value` as an item of the session schema in `collection` (an alias), as another
    /// program could.
    func plant(_ value: [UInt8], in collection: String = "default", label: String,
               environment: String = Env.open, application: String = KeyringTests.application) {
        #expect(PrivateKeyring.secretTool(["store", "--label=\(label)", "--collection=\(collection)",
                                           "xdg:schema", "io.portalhq.auth.Session",
                                           "auth_environment_id", environment, "application_id", application],
                                          input: value) != nil)
    }
}

/// The private keyring the tests run in, and the tools that inspect it.
enum PrivateKeyring {
    static var script: String? { ProcessInfo.processInfo.environment["PORTAL_AUTH_PRIVATE_KEYRING"] }

    static func control(_ command: String) throws {
        guard let script else { throw EmulatorError.exited }
        _ = try Subprocess.run(script, [command])
    }

    /// `secret-tool` output, or nil when it fails (nothing found).
    static func secretTool(_ arguments: [String], input: [UInt8] = []) -> String? {
        try? Subprocess.run("/usr/bin/secret-tool", arguments, input: input)
    }
}

/// The application id of a keyring store: a reverse-DNS name, as a desktop file's.
@Suite struct ApplicationIdTests {
    @Test(arguments: ["com.example.App", "io.portalhq.auth.Tests", "org.gnome.Text-Editor", "a.b", "com.example._private9"])
    func aReverseDNSNameIsAnApplicationId(_ id: String) throws {
        #expect(try KeyringSessionStorage(applicationId: id).applicationId == id)
    }

    @Test(arguments: ["", "app", "com.", ".com", "com..example", "com.9example", "com.example.App ", "com.exam ple",
                      "com.example/App", "com.exämple", "com.example.App\n", String(repeating: "a.", count: 128) + "b"])
    func anythingElseIsAnInvalidArgument(_ id: String) {
        #expect(throws: PortalAuthError.invalidArgument(name: "applicationId")) { _ = try KeyringSessionStorage(applicationId: id) }
    }
}
