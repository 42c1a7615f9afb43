import Foundation
import Testing

/// docs/protocol.md §1 transport: the standard proxy variables are honoured. The demo runs in
/// a process of its own, so the variables reach no other test; its API host resolves
/// nowhere (.test is reserved), so only the proxy (the emulator) can answer. The demo
/// persists its session in the keyring: nested in KeyringTests, it runs only in a private
/// keyring and never while those tests have the daemon stopped or locked.
extension KeyringTests {
    @Suite struct ProxyTests {
        @Test func requestsGoThroughHttpProxy() async throws {
            let emulator = try Emulator.start()
            let demo = Emulator.repositoryRoot.appendingPathComponent(".build/debug/portal-auth-demo")
            var environment = ProcessInfo.processInfo.environment
            environment["http_proxy"] = emulator.baseURL
            environment.removeValue(forKey: "no_proxy")
            environment.removeValue(forKey: "NO_PROXY")
            let (status, printed) = try Subprocess.runReportingStatus(
                demo.path, ["--api-host", "http://portal.test", "--email", uniqueEmail()], environment: environment)

            #expect(status == 0, "\(printed)")
            #expect(printed.contains("Signed in: endUserId eu_"))
            let requests = try await emulator.requests()
            #expect(requests.count == 4)
            #expect(requests.allSatisfy { $0.proxied })
        }
    }
}
