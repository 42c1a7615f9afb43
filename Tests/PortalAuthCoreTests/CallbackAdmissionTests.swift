import Testing
@testable import PortalAuthCore

/// The request head as the listener reads it (RFC 9112), bounded and strict.
@Suite struct RequestHeadTests {
    private func head(_ text: String) -> RequestHead? {
        RequestHead(ArraySlice(Array(text.utf8)))
    }

    @Test func fieldsAreReadWithLowercaseNamesAndTrimmedValues() throws {
        let parsed = try #require(head("GET /callback?a=1 HTTP/1.1\r\nHost:  127.0.0.1:8765 \r\nSec-Fetch-Mode:\tnavigate\r\nX-Empty:\r\n"))
        #expect(parsed.method == "GET" && parsed.target == "/callback?a=1")
        #expect(parsed.values(of: "host") == ["127.0.0.1:8765"])
        #expect(parsed.values(of: "sec-fetch-mode") == ["navigate"])
        #expect(parsed.values(of: "x-empty") == [""])
        #expect(parsed.values(of: "missing").isEmpty)
        #expect(head("GET / HTTP/1.0\n")?.fields == [])
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost : x\r\n",              // whitespace before the colon
        "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n",    // obsolete line folding
        "GET / HTTP/1.1\r\nNo colon\r\n",
        "GET / HTTP/1.1\r\n: value\r\n",
        "GET / HTTP/1.1\r\nHost: a\u{1}b\r\n",          // a control character
        "GET / HTTP/1.1\r\nHost: a\rb\r\n",
        "GET / HTTP/2\r\n", "get / HTTP/1.1\r\n", "GET x HTTP/1.1\r\n", "GET  / HTTP/1.1\r\n",
    ])
    func anythingABrowserWouldNotSendIsRefused(_ text: String) {
        #expect(head(text) == nil)
    }

    @Test func moreFieldsThanABrowserSendsAreRefused() {
        let fields = (0..<RequestHead.maxFields).map { "X-\($0): y\r\n" }.joined()
        #expect(head("GET / HTTP/1.1\r\n" + fields) != nil)
        #expect(head("GET / HTTP/1.1\r\n" + fields + "X-Last: y\r\n") == nil)
    }
}

/// Which requests end the wait (docs/desktop.md "Browser sign-in"): a callback to the redirect's
/// own authority, as a top-level navigation where the browser says so, with a grant or an error.
@Suite struct CallbackAdmissionTests {
    private static let grant = "/callback?token=t&login_type=GOOGLE"

    private func verdict(redirect redirectUrl: String = "http://127.0.0.1:8765/callback", target: String = grant,
                         method: String = "GET", _ fields: [String]) throws -> CallbackAdmission.Verdict {
        let admission = CallbackAdmission(redirect: try #require(LoopbackRedirect(redirectUrl)), redirectUrl: redirectUrl)
        let text = "\(method) \(target) HTTP/1.1\r\n" + fields.map { $0 + "\r\n" }.joined()
        return admission.verdict(on: RequestHead(ArraySlice(Array(text.utf8))))
    }

    private func status(_ verdict: CallbackAdmission.Verdict) -> String {
        switch verdict {
        case .complete: return "complete"
        case .refuse(let response): return String(response.status.prefix(3))
        }
    }

    @Test(arguments: [
        ("http://127.0.0.1:8765/callback", "127.0.0.1:8765"),
        ("http://[::1]:8765/callback", "[::1]:8765"),
        ("http://localhost:8765/callback", "localhost:8765"),
        ("http://localhost:8765/callback", "LocalHost:8765"),
        ("http://127.0.0.1:80/callback", "127.0.0.1"),
        ("http://127.0.0.1:80/callback", "127.0.0.1:80"),
    ])
    func theRedirectsOwnAuthorityCompletes(redirectUrl: String, host: String) throws {
        #expect(status(try verdict(redirect: redirectUrl, ["Host: \(host)"])) == "complete")
    }

    @Test(arguments: [
        ("http://127.0.0.1:8765/callback", "evil.example:8765"),
        ("http://127.0.0.1:8765/callback", "localhost:8765"),
        ("http://127.0.0.1:8765/callback", "127.0.0.1:8766"),
        ("http://127.0.0.1:8765/callback", "127.0.0.1"),
        ("http://127.0.0.1:8765/callback", "127.0.0.1.:8765"),
        ("http://localhost:8765/callback", "127.0.0.1:8765"),
        ("http://localhost:8765/callback", "[::1]:8765"),
        ("http://[::1]:8765/callback", "::1:8765"),
    ])
    func anotherAuthorityIsMisdirected(redirectUrl: String, host: String) throws {
        #expect(status(try verdict(redirect: redirectUrl, ["Host: \(host)"])) == "421")
    }

    @Test func noHostOrSeveralAreBadRequests() throws {
        #expect(status(try verdict([])) == "400")
        #expect(status(try verdict(["Host: 127.0.0.1:8765", "Host: 127.0.0.1:8765"])) == "400")
    }

    @Test func aTopLevelNavigationCompletesAndSoDoesAClientThatSendsNoMetadata() throws {
        let host = "Host: 127.0.0.1:8765"
        #expect(status(try verdict([host, "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document"])) == "complete")
        #expect(status(try verdict([host, "Sec-Fetch-Mode: navigate"])) == "complete")
        #expect(status(try verdict([host, "Sec-Fetch-Site: none"])) == "complete")
    }

    @Test(arguments: [
        ["Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: image"],          // <img>
        ["Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: script"],         // <script>
        ["Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: iframe"],        // <iframe>
        ["Sec-Fetch-Mode: cors", "Sec-Fetch-Dest: empty"],             // fetch()
        ["Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: empty"],          // fetch(..., {mode: "no-cors"})
        ["Sec-Fetch-Dest: image"],
        ["Sec-Fetch-Mode: navigate", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document"],
        ["Sec-Fetch-Mode: Navigate", "Sec-Fetch-Dest: document"],
    ])
    func anythingButATopLevelNavigationIsForbidden(_ metadata: [String]) throws {
        #expect(status(try verdict(["Host: 127.0.0.1:8765"] + metadata)) == "403")
    }

    @Test func theHostIsJudgedBeforeThePathAndTheMetadata() throws {
        #expect(status(try verdict(target: "/favicon.ico", ["Host: evil.example"])) == "421")
        #expect(status(try verdict(target: "/favicon.ico", ["Host: 127.0.0.1:8765", "Sec-Fetch-Dest: image"])) == "404")
        #expect(status(try verdict(method: "POST", ["Host: 127.0.0.1:8765"])) == "405")
    }

    @Test(arguments: ["/callback", "/callback?state=x", "/callback?token=&login_type=GOOGLE", "/callback?token=t",
                      "/callback?token=t&login_type=google"])
    func aCallbackWithNeitherAGrantNorAnErrorLeavesTheWaitGoing(target: String) throws {
        guard case .refuse(let response) = try verdict(target: target, ["Host: 127.0.0.1:8765"]) else {
            Issue.record("\(target) completed the wait")
            return
        }
        #expect(response.status == "400 Bad Request")
        #expect(response.page.contains("The application is still waiting"))
    }

    @Test func aGrantOrAnErrorCompletesWithItsPage() throws {
        #expect(try verdict(["Host: 127.0.0.1:8765"])
                == .complete(callbackUrl: "http://127.0.0.1:8765" + Self.grant, page: CallbackPage.received))
        #expect(try verdict(target: "/callback?error=%3Cx%3E", ["Host: 127.0.0.1:8765"])
                == .complete(callbackUrl: "http://127.0.0.1:8765/callback?error=%3Cx%3E", page: CallbackPage.failed("<x>")))
    }
}
