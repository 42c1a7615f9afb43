import Foundation
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §8, §10 and the log hook: the library's log lines never carry a secret.
@Suite struct LogTests {
    @Test func aWholeSignInLogsTheUserButNoSecret() async throws {
        let lines = Locked<[String]>([])
        let (url, step, token) = try await LogAudit.listening({ _, line in lines.withLock { $0.append(line) } }) {
            let emulator = try await Emulator.shared.get()
            let storage = FlakyStorage()
            let client = try makeClient(emulator, environment: Env.demo, storage: storage)
            let url = try await magicLinkRedirect(client, emulator, email: uniqueEmail())
            let step = try #require(try await client.handleRedirect(url)?.totpStep)
            let code = try currentCode(for: step)
            let result = try await client.verifyTotp(code, userJwt: step.userJwt)
            let token = try result.session.getToken()
            _ = try await client.handleRedirect(url)
            try await storage.set("corrupt \(step.userJwt)", environmentId: Env.demo)
            _ = try await client.restoreSession()
            try await result.session.invalidate()
            return (url, step, token)
        }
        let grant = try #require(RedirectURL.queryParameters(of: url)["token"])
        let link = try #require(step.totpLink)
        let secrets = [grant, step.userJwt, link, token, try #require(step.totpSecret)]
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains(step.endUserId) })
        for line in logged {
            for secret in secrets {
                #expect(!line.contains(secret), "a log line carries a secret")
            }
        }
    }
}
