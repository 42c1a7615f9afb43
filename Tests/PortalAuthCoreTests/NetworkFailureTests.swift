import Foundation
import Testing
@testable import PortalAuthCore

/// docs/network.md: the certificate authorities a client trusts, the proxy it takes, the
/// reason of each failure with no answer, and the server's Retry-After.
@Suite struct NetworkFailureTests {
    // MARK: - Certificate authorities

    @Test func aPrivateCAIsTrustedThroughCaFileAndOnlyThen() async throws {
        let pki = try PrivateCA()
        let emulator = try await Emulator.start(arguments: try pki.serverArguments(name: "IP:127.0.0.1"))
        #expect(try await makeClient(emulator, caFile: pki.caFile).getMethods().allowedAuthMethods.contains(.google))
        try await expectFailure(.certificateUntrusted, makeClient(emulator))
    }

    @Test func aCertificateForAnotherNameIsTheWrongHost() async throws {
        let pki = try PrivateCA()
        let emulator = try await Emulator.start(arguments: try pki.serverArguments(name: "DNS:portal.example"))
        try await expectFailure(.certificateWrongHost, makeClient(emulator, caFile: pki.caFile))
    }

    @Test(arguments: [("-400d", NetworkFailure.certificateExpired), ("+400d", .certificateNotYetValid)])
    func aCertificateOutOfItsDatesSaysWhich(shift: String, failure: NetworkFailure) async throws {
        let pki = try PrivateCA()
        let emulator = try await Emulator.start(arguments: try pki.serverArguments(name: "IP:127.0.0.1", clockShift: shift))
        try await expectFailure(failure, makeClient(emulator, caFile: pki.caFile))
    }

    @Test func aCaFileGoneAfterTheClientWasMadeIsUnusable() async throws {
        let pki = try PrivateCA()
        let emulator = try await Emulator.start(arguments: try pki.serverArguments(name: "IP:127.0.0.1"))
        let copy = pki.folder + "/copy.pem"
        try FileManager.default.copyItem(atPath: pki.caFile, toPath: copy)
        let client = try makeClient(emulator, caFile: copy)
        try FileManager.default.removeItem(atPath: copy)
        try await expectFailure(.caFileUnusable, client)
    }

    @Test(arguments: ["", "   ", "/nonexistent/ca.pem", "/tmp"])
    func aCaFileThatIsNotAReadableFileIsRefusedAtOnce(path: String) throws {
        #expect(throws: PortalAuthError.invalidArgument(name: "caFile", accepted: "a readable file of PEM certificates")) {
            try PortalAuth(authEnvironmentId: Env.open, redirectUrl: appRedirect, caFile: path)
        }
    }

    @Test func theEnvironmentIsReadInCurlsOrder() throws {
        func trust(_ variables: [String: String], caFile: String? = nil) throws -> TrustStore {
            try TrustStore(caFile: caFile) { variables[$0] }
        }
        let all = ["CURL_CA_BUNDLE": "/bundle.pem", "SSL_CERT_FILE": "/file.pem", "SSL_CERT_DIR": "/certs"]
        #expect(try trust(all) == trust(["CURL_CA_BUNDLE": "/bundle.pem"]))
        #expect(try trust(all).file == "/bundle.pem" && trust(all).folder == nil)
        let openssl = try trust(["SSL_CERT_FILE": "/file.pem", "SSL_CERT_DIR": "/certs"])
        #expect(openssl.file == "/file.pem" && openssl.folder == "/certs")
        #expect(try trust(["SSL_CERT_DIR": "/certs"]).file == nil)
        let pki = try PrivateCA()
        let chosen = try trust(all, caFile: pki.caFile)
        #expect(chosen.file == pki.caFile && chosen.folder == nil)
        #expect(try trust([:]) == .system)
    }

    // MARK: - Proxies

    @Test func theProxyIsTheEnvironmentsAsCurlReadsIt() {
        func route(_ origin: String, _ variables: [String: String]) -> ProxyRoute? {
            ProxyRoute.of(origin: origin) { variables[$0] }
        }
        func through(_ url: String) -> ProxyRoute { .through(ProxyAddress(url)) }
        let proxy = "http://user:secret@proxy.corp:3128"
        #expect(route("https://api.portalhq.io", ["https_proxy": proxy]) == through(proxy))
        #expect(route("https://api.portalhq.io", ["HTTPS_PROXY": proxy]) == through(proxy))
        #expect(route("https://api.portalhq.io", ["https_proxy": "http://a:1", "HTTPS_PROXY": "http://b:1"]) == through("http://a:1"))
        #expect(route("https://api.portalhq.io", ["http_proxy": proxy]) == .direct)
        #expect(route("http://portal.corp", ["HTTP_PROXY": proxy]) == nil, "a CGI's HTTP_PROXY is a request header: ignored")
        #expect(route("http://portal.corp", ["http_proxy": proxy]) == through(proxy))
        #expect(route("https://api.portalhq.io", ["ALL_PROXY": proxy]) == through(proxy))
        #expect(route("http://127.0.0.1:8080", ["http_proxy": proxy, "all_proxy": proxy]) == .direct)
        #expect(route("http://[::1]:8080", ["http_proxy": proxy]) == .direct)
        #expect(route("https://api.portalhq.io", [:]) == nil, "no variable: the desktop decides")
        #expect(route("https://api.portalhq.io", ["no_proxy": "other.example"]) == nil, "no_proxy names no proxy")
        #expect(route("https://api.portalhq.io", ["no_proxy": "portalhq.io"]) == .direct, "exempt from the desktop's too")
        #expect(route("http://127.0.0.1:8080", [:]) == .direct)
        #expect(route("https://api.portalhq.io", ["https_proxy": proxy])?.displayName == "proxy.corp:3128")
    }

    @Test(arguments: [
        ("http://user:secret@proxy.corp:3128", "http://proxy.corp:3128", "user", "secret"),
        ("proxy.corp:3128", "http://proxy.corp:3128", nil, nil),
        ("socks5h://proxy.corp:1080/", "socks5h://proxy.corp:1080", nil, nil),
        ("http://do%40main%5Cuser:p%23ss@proxy.corp:3128", "http://proxy.corp:3128", "do@main\\user", "p#ss"),
        ("http://user:pa/ss#w?rd@d@proxy.corp:3128", "http://proxy.corp:3128", "user", "pa/ss#w?rd@d"),
        ("http://user@proxy.corp", "http://proxy.corp", "user", nil),
    ] as [(String, String, String?, String?)])
    func aProxysCredentialsAreKeptApartFromItsURL(given: String, url: String, user: String?, password: String?) {
        let proxy = ProxyAddress(given)
        #expect(proxy.url == url && proxy.user == user && proxy.password == password)
        var dumped = ""
        dump(ProxyRoute.through(proxy), to: &dumped)
        #expect(password.map { !"\(proxy)".contains($0) && !dumped.contains($0) } ?? true, "\(dumped)")
    }

    @Test(arguments: [
        ("*", "api.portalhq.io", true), ("portalhq.io", "api.portalhq.io", true), (".portalhq.io", "api.portalhq.io", true),
        ("api.portalhq.io", "api.portalhq.io", true), ("io.example, portalhq.io", "api.portalhq.io", true),
        ("hq.io", "api.portalhq.io", false), ("other.io", "api.portalhq.io", false), ("", "api.portalhq.io", false),
        ("10.0.0.0/8", "10.20.30.40", true), ("10.0.0.0/8", "11.0.0.1", false), ("10.1.2.3", "10.1.2.3", true),
        ("fd00::/8", "fd12::1", true), ("fd00::/8", "fe80::1", false), ("[::2]", "::2", true), ("10.0.0.0/99", "10.0.0.1", false),
    ])
    func noProxyExemptsAsCurlDoes(list: String, host: String, exempt: Bool) {
        #expect(NoProxyList(list).exempts(host: host) == exempt)
    }

    // MARK: - Failures with no answer

    @Test func anUnreachableProxyIsTheProxys() async throws {
        let port = try await LoopbackClient.freePort()
        let request = HTTPRequest(method: .get, url: "http://portal.invalid/methods", origin: "http://portal.invalid",
                                  network: NetworkSettings(timeouts: Timeouts(), trust: .system,
                                                           route: .through(ProxyAddress("http://user:p@ss/w#rd@127.0.0.1:\(port)"))))
        let error = await caught { _ = try await HTTPEngine.shared.send(request) }
        guard case .network(.proxyUnreachable, let message) = error as? PortalRequestsError else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(message.hasSuffix("(http://portal.invalid, through the proxy 127.0.0.1:\(port))"), "\(message)")
        #expect(!message.contains("p@ss") && !message.contains("rd@"))
    }

    // MARK: - Retry-After

    @Test func rateLimitedCarriesTheServersDelay() async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/magic-links", "status", ["status": 429, "retryAfter": "120"])
        let client = try makeClient(emulator)
        await #expect(throws: PortalAuthError.rateLimited(retryAfter: 120)) { try await client.sendMagicLink(uniqueEmail()) }
        #expect(try await emulator.requests("/magic-links").count == 1, "nothing is resent")
    }

    @Test(arguments: [("30", 30 as Int?), ("0", 0), ("soon", nil), ("", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", 0),
                      ("12345678901234567890", Int(Int32.max))])
    func anHttpErrorCarriesRetryAfterInSeconds(header: String, seconds: Int?) async throws {
        let emulator = try await Emulator.start()
        try await emulator.fault("/methods", "status", ["status": 503, "retryAfter": header])
        let error = await caught { _ = try await makeClient(emulator).getMethods() }
        #expect(error as? PortalRequestsError == .httpStatus(status: 503, bodyExcerpt: #"{"error":"injected"}"#, retryAfter: seconds))
    }

    @Test func aRetryAfterDateIsTheTimeUntilIt() async throws {
        let emulator = try await Emulator.start()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        try await emulator.fault("/methods", "status", ["status": 503, "retryAfter": formatter.string(from: Date().addingTimeInterval(600))])
        let error = await caught { _ = try await makeClient(emulator).getMethods() }
        guard case .httpStatus(503, _, let seconds?) = error as? PortalRequestsError else { Issue.record("\(String(describing: error))"); return }
        // Ten minutes, less the time the request took (a minute at most on a loaded machine).
        #expect((540...600).contains(seconds))
    }

    // MARK: - Helpers

    /// `client`'s call fails as `failure`, and its message names the server.
    private func expectFailure(_ failure: NetworkFailure, _ client: PortalAuth,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let error = await caught { _ = try await client.getMethods() }
        guard case .network(let kind, let message) = error as? PortalRequestsError else {
            Issue.record("not a network error: \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(kind == failure, "\(message)", sourceLocation: sourceLocation)
        #expect(message.hasSuffix("(\(client.api.base.origin))"), "\(message)", sourceLocation: sourceLocation)
    }
}

/// A certificate authority of the test's own, in a temporary folder, and server
/// certificates it signs.
struct PrivateCA {
    let folder: String
    var caFile: String { folder + "/ca.pem" }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=Portal Auth Test CA",
                     "-keyout", folder + "/ca.key", "-out", caFile])
    }

    /// The emulator's arguments to serve TLS with a certificate for `name` (`IP:…` or
    /// `DNS:…`), signed with the clock shifted by `clockShift` (faketime's `-400d`), valid 30 days.
    func serverArguments(name: String, clockShift: String? = nil) throws -> [String] {
        let key = folder + "/server-\(UUID().uuidString).key"
        let request = key + ".csr"
        let certificate = key + ".pem"
        let extensions = key + ".ext"
        try Data("subjectAltName=\(name)\n".utf8).write(to: URL(fileURLWithPath: extensions))
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=server", "-keyout", key, "-out", request])
        try openssl(["x509", "-req", "-in", request, "-CA", caFile, "-CAkey", folder + "/ca.key", "-CAcreateserial",
                     "-days", "30", "-extfile", extensions, "-out", certificate], clockShift: clockShift)
        return ["--tls-cert", certificate, "--tls-key", key]
    }

    private func openssl(_ arguments: [String], clockShift: String? = nil) throws {
        if let clockShift {
            _ = try Subprocess.run("/usr/bin/env", ["faketime", "-f", clockShift, "openssl"] + arguments)
        } else {
            _ = try Subprocess.run("/usr/bin/env", ["openssl"] + arguments)
        }
    }
}

/// docs/network.md "Time" and "A lost answer": the TOTP step's expiry by the server's clock,
/// and a 401 after an answer lost on the way back said as such.
@Suite struct ServerClockAndLostAnswerTests {
    @Test(arguments: [600, -600])
    func aStepCountsDownByTheServersClock(serverAhead: Int) async throws {
        let emulator = try await Emulator.start()
        try await emulator.control(["clockOffsetSeconds": serverAhead])
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        let left = try #require(step.expiresAt) - Int64(Date().timeIntervalSince1970)
        // About ten minutes (the sign-in's own time taken off), not twenty nor none.
        #expect((540...601).contains(left), "\(left) s left of a ten-minute step")
        // A typo is a typo, not an expired step, whichever way the clocks differ.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) {
            _ = try await client.verifyTotp(try wrongCode(for: step), userJwt: step.userJwt)
        }
    }

    @Test func smallDifferencesAreNoSkew() {
        let clock = ServerClock()
        clock.record(2)
        #expect(clock.skew == 0)
        clock.record(-600)
        #expect(clock.skew == -600)
        clock.record(nil)
        #expect(clock.skew == -600, "an answer without a Date changes nothing")
    }

    @Test func aTotpAnswerLostAfterTheServerSignedInIsNotAWrongCode() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator, environment: Env.demo)
        let step = try #require(try await client.handleRedirect(magicLinkRedirect(client, emulator, email: uniqueEmail()))?.totpStep)
        try await emulator.fault("/totps/validations", "lost")
        let lost = await caught { _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt) }
        guard case .network(.connectionReset, _) = lost as? PortalRequestsError else { Issue.record("\(String(describing: lost))"); return }
        await #expect(throws: PortalRequestsError.unauthorized(reason: .outcomeUnknown)) {
            _ = try await client.verifyTotp(try currentCode(for: step), userJwt: step.userJwt)
        }
        #expect(try await emulator.requests("/totps/validations").count == 2, "nothing added or repeated on the wire")
        // Said once: the step's next refusal is read as usual.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .totpCodeRejected)) {
            _ = try await client.verifyTotp(try wrongCode(for: step), userJwt: step.userJwt)
        }
    }

    @Test func aGrantAnswerLostAfterTheExchangeIsNotAUsedLink() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        try await emulator.fault("/magic-links/validations", "lost")
        let lost = await caught { _ = try await client.handleRedirect(url) }
        guard case .network(.connectionReset, _) = lost as? PortalRequestsError else { Issue.record("\(String(describing: lost))"); return }
        await #expect(throws: PortalRequestsError.unauthorized(reason: .outcomeUnknown)) { _ = try await client.handleRedirect(url) }
        // Another client never lost an answer for it: to it, the link is used.
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await makeClient(emulator).handleRedirect(url) }
    }

    @Test func a401AfterA5xxIsNotAUsedLink() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        try await emulator.fault("/magic-links/validations", "status", ["status": 504])
        _ = await caught { _ = try await client.handleRedirect(url) }
        // Spent meanwhile (as a gateway's 504 may come after the server acted).
        #expect(try await makeClient(emulator).handleRedirect(url) != nil)
        await #expect(throws: PortalRequestsError.unauthorized(reason: .outcomeUnknown)) { _ = try await client.handleRedirect(url) }
    }

    @Test func aRequestDroppedUnreadStillSignsInWithItsGrant() async throws {
        let emulator = try await Emulator.start()
        let client = try makeClient(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        try await emulator.fault("/magic-links/validations", "drop")
        _ = await caught { _ = try await client.handleRedirect(url) }
        #expect(try await client.handleRedirect(url) != nil, "a dropped request was not acted on: the grant still signs in")
        await #expect(throws: PortalRequestsError.unauthorized(reason: .linkUsed)) { _ = try await makeClient(emulator).handleRedirect(url) }
    }
}
