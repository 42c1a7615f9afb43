import Foundation
import OneTimeCode
@testable import PortalAuthCore

/// Environments of the emulator's default configuration.
enum Env {
    /// Magic link, Google and Apple; TOTP required; no account abstraction.
    static let demo = "env-demo"
    /// Magic link and Google; no TOTP; account abstraction available.
    static let open = "env-open"
}

let appRedirect = "myapp://auth/callback"
let testMagicLink = MagicLinkConfig(fromEmail: "hello@auth.example.com", templateId: "tmpl-1")

func uniqueEmail(_ tag: String = "user") -> String {
    "\(tag)-\(UUID().uuidString.prefix(8).lowercased())@example.com"
}

func makeClient(
    _ emulator: Emulator,
    environment: String = Env.open,
    redirectUrl: String = appRedirect,
    magicLink: MagicLinkConfig? = testMagicLink,
    isAccountAbstracted: Bool? = nil,
    storage: any SessionStorage = MemorySessionStorage(),
    timeouts: Timeouts = Timeouts(),
    caFile: String? = nil
) throws -> PortalAuth {
    try PortalAuth(authEnvironmentId: environment, redirectUrl: redirectUrl, apiHost: emulator.apiHost,
                   magicLink: magicLink, isAccountAbstracted: isAccountAbstracted, storage: storage,
                   timeouts: timeouts, caFile: caFile)
}

/// The redirect a user's magic-link email leads to.
func magicLinkRedirect(_ client: PortalAuth, _ emulator: Emulator, email: String) async throws -> String {
    try await client.sendMagicLink(email)
    guard let link = try await emulator.outbox(email).last else { throw EmulatorError.exited }
    return link
}

/// A magic-link redirect for a grant made directly at the emulator.
func grantRedirect(_ emulator: Emulator, environment: String, email: String = uniqueEmail(),
                   redirectUrl: String = appRedirect) async throws -> (url: String, grant: String) {
    let grant = try await emulator.grant(environment: environment, email: email)
    return (redirectUrl + "?token=" + QueryEncoding.encode(grant) + "&authMethod=EMAIL_MAGIC_LINK", grant)
}

extension AuthResult {
    var authenticated: AuthenticatedResult? {
        if case .authenticated(let result) = self { return result }
        return nil
    }

    var totpStep: TotpRequiredResult? {
        if case .totpRequired(let step) = self { return step }
        return nil
    }
}

/// A code the authenticator would compute now for the step's enrollment link.
func currentCode(for step: TotpRequiredResult) throws -> String {
    guard let secret = step.totpSecret, let code = OneTimeCode.now(secret: secret) else { throw EmulatorError.exited }
    return code
}

/// A six-digit code that is valid in none of the steps the emulator accepts.
func wrongCode(for step: TotpRequiredResult) throws -> String {
    guard let secret = step.totpSecret else { throw EmulatorError.exited }
    let now = Int64(Date().timeIntervalSince1970)
    let valid = Set((-2...2).compactMap { OneTimeCode.totp(secret: secret, unixTime: now + Int64($0) * 30) })
    return (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first { !valid.contains($0) } ?? "000000"
}

/// Storage whose operations are recorded and can be made to fail, over another store (in
/// memory unless told otherwise).
final class FlakyStorage: SessionStorage {
    struct Failures: Sendable {
        var get = false
        var set = false
        var delete = false
    }

    let backing: any SessionStorage
    let failures = Locked(Failures())
    let calls = Locked<[String]>([])

    init(over backing: any SessionStorage = MemorySessionStorage()) {
        self.backing = backing
    }

    struct Unavailable: Error {}

    func get(environmentId: String) async throws -> String? {
        calls.withLock { $0.append("get") }
        if failures.withLock({ $0.get }) { throw Unavailable() }
        return try await backing.get(environmentId: environmentId)
    }

    func set(_ value: String, environmentId: String) async throws {
        calls.withLock { $0.append("set") }
        if failures.withLock({ $0.set }) { throw Unavailable() }
        try await backing.set(value, environmentId: environmentId)
    }

    func delete(environmentId: String) async throws {
        calls.withLock { $0.append("delete") }
        if failures.withLock({ $0.delete }) { throw Unavailable() }
        try await backing.delete(environmentId: environmentId)
    }

    func stored(_ environmentId: String) async -> String? {
        try? await backing.get(environmentId: environmentId)
    }
}

/// Invalidates from `calls` tasks at once, round robin over `sessions`.
func invalidateConcurrently(_ sessions: [PortalSession], calls: Int = 8) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<calls {
            let session = sessions[index % sessions.count]
            group.addTask { try await session.invalidate() }
        }
        try await group.waitForAll()
    }
}

/// Runs `body` and returns the error it threw, or nil.
func caught(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}

/// A client of env-demo whose user's code was accepted but whose session write failed: a
/// pending TOTP write (docs/protocol.md §5).
func clientWithPendingTotpWrite(_ emulator: Emulator, storage: FlakyStorage) async throws -> (PortalAuth, TotpRequiredResult) {
    let client = try makeClient(emulator, environment: Env.demo, storage: storage)
    guard let step = try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep else {
        throw EmulatorError.exited
    }
    storage.failures.withLock { $0.set = true }
    _ = await caught { _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt) }
    storage.failures.withLock { $0.set = false }
    return (client, step)
}

/// Starts delivering `url` and returns once its exchange is on the wire, held there by the
/// emulator until `release()`.
func heldExchange(_ client: PortalAuth, _ emulator: Emulator, _ url: String) async throws -> Task<AuthResult?, any Error> {
    try await emulator.fault("/magic-links/validations", "hold")
    let exchange = Task { try await client.handleRedirect(url) }
    try await emulator.waitForRequests("/magic-links/validations")
    return exchange
}

/// The calling thread's name as the kernel knows it (what ps and gdb show).
func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? ""
}
