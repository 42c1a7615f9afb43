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
            let (status, printed) = try runDemo(apiHost: "http://portal.test", proxy: emulator.baseURL)
            #expect(status == 0, "\(printed)")
            #expect(printed.contains("Signed in: endUserId eu_"))
            let requests = try await emulator.requests()
            #expect(requests.count == 4)
            #expect(requests.allSatisfy { $0.proxied })
        }

        /// A proxy would carry the grant in cleartext off the machine: a loopback API host is
        /// always reached directly.
        @Test func aLoopbackApiHostIsNeverReachedThroughAProxy() async throws {
            let api = try Emulator.start()
            let proxy = try Emulator.start()
            for host in [api.baseURL, api.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost")] {
                let (status, printed) = try runDemo(apiHost: host, proxy: proxy.baseURL)
                #expect(status == 0, "\(host): \(printed)")
            }
            let requests = try await api.requests()
            #expect(requests.count == 8)
            #expect(requests.allSatisfy { !$0.proxied })
            #expect(try await proxy.requests().isEmpty)
        }

        /// The demo signs a user in through `apiHost` with `http_proxy` set to `proxy`.
        private func runDemo(apiHost: String, proxy: String) throws -> (status: Int32, output: String) {
            let demo = Emulator.repositoryRoot.appendingPathComponent(".build/debug/portal-auth-demo").path
            return try Subprocess.runReportingStatus(
                "/usr/bin/env", ["-u", "no_proxy", "-u", "NO_PROXY", "http_proxy=\(proxy)", demo,
                                 "--api-host", apiHost, "--email", uniqueEmail()])
        }
    }
}
