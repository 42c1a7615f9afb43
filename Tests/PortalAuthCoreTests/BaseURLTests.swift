import Testing
@testable import PortalAuthCore

/// docs/protocol.md §1: the base URL from apiHost.
@Suite struct BaseURLTests {
    @Test(arguments: [
        ("api.portalhq.io", "https://api.portalhq.io"),
        ("  api.portalhq.io///  ", "https://api.portalhq.io"),
        ("localhost", "http://localhost"),
        ("LOCALHOST:8080", "http://LOCALHOST:8080"),
        ("127.0.0.1:9000/", "http://127.0.0.1:9000"),
        ("localhost/prefix", "http://localhost/prefix"),
        ("localhost.evil.com", "https://localhost.evil.com"),
        ("127.0.0.1.evil.com", "https://127.0.0.1.evil.com"),
        ("evil.com/localhost", "https://evil.com/localhost"),
        ("http://api.example.com/", "http://api.example.com"),
        ("HTTPS://Api.Example.com", "HTTPS://Api.Example.com"),
        ("https://localhost:8443", "https://localhost:8443"),
        ("[::1]:8080", "https://[::1]:8080"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ])
    func derivesTheBaseURL(apiHost: String, expected: String) throws {
        #expect(try BaseURL(apiHost: apiHost).origin == expected)
    }

    /// Loopback hosts never go through a proxy, and may hand a browser sign-in an http URL.
    @Test(arguments: [
        ("localhost", true), ("LOCALHOST:8080", true), ("127.0.0.1:9000/", true), ("http://127.0.0.1:8790", true),
        ("https://127.10.0.3", true), ("http://[::1]:8080", true), ("[::1]:8080", true),
        ("api.portalhq.io", false), ("localhost.evil.com", false), ("127.0.0.1.evil.com", false),
        ("http://127.0.0.256", false), ("http://127.1", false), ("http://evil.com/127.0.0.1", false),
        ("http://[::2]:80", false), ("http://128.0.0.1", false),
    ])
    func knowsALoopbackHost(apiHost: String, loopback: Bool) throws {
        #expect(try BaseURL(apiHost: apiHost).isLoopback == loopback)
    }

    /// A request's URL, read byte by byte as libcurl reads it (a combining mark does not join
    /// a delimiter), when the transport decides on a proxy.
    @Test(arguments: [
        ("http://127.0.0.1:8790/api/v3/auth/methods?x=http://evil.com", true), ("HTTP://LocalHost/a", true),
        ("http://127.000.000.001/", true), ("http://127.255.255.255#f", true), ("http://[::1]/a?b", true),
        ("http://localhost:8080@evil.com/", false), ("http://evil.com@localhost/", false),
        ("http://127.0.0.1.1/", false), ("http://127.0.0./", false), ("http://127..0.1/", false),
        ("http://127.0.0.1000/", false), ("http://127.0.0.-1/", false), ("http://l\u{043E}calhost/", false),
        ("http://localhost\u{301}/", false), ("http://127.0.0.1\u{301}/", false), ("http://[::1%25eth0]/", false),
        ("http://localhost/\u{301}", true), ("", false), ("://", false), ("http://", false), ("localhos", false),
        ("localhostt", false), ("http://127.0.0.1./", false), ("localhost/?u=http://evil.com", true),
        ("evil.com/?r=http://localhost", false), ("evil.com#http://localhost", false),
    ])
    func knowsALoopbackRequest(url: String, loopback: Bool) {
        #expect(LoopbackHost.isLoopback(url: url) == loopback)
    }

    @Test func pathsLiveUnderTheApiPrefix() throws {
        let base = try BaseURL(apiHost: "api.portalhq.io")
        #expect(base.url(path: "/methods") == "https://api.portalhq.io/api/v3/auth/methods")
        #expect(base.url(path: "/oauth/urls", query: "a=b") == "https://api.portalhq.io/api/v3/auth/oauth/urls?a=b")
    }

    @Test(arguments: ["", "   ", "///", "api portalhq.io", "api%2eportalhq.io", "api.portalhq.io?x", "api#x",
                      "user@api.portalhq.io", "http://", "https:///path", "http://a b", "host:port", "host:",
                      "[::1", "[zz]:80", "ho\u{0}st", "hö.st"])
    func rejectsUnusableHosts(apiHost: String) {
        #expect(throws: PortalAuthError.invalidArgument(name: "apiHost")) { try BaseURL(apiHost: apiHost) }
    }

    @Test func aBadHostFailsAtConstructionBeforeAnyRequest() {
        #expect(throws: PortalAuthError.invalidArgument(name: "apiHost")) {
            try PortalAuth(authEnvironmentId: "env", redirectUrl: appRedirect, apiHost: "bad host")
        }
    }
}

/// docs/protocol.md §2: the redirectUrl query encoding.
@Suite struct QueryEncodingTests {
    @Test func encodesEveryByteButTheUnreservedSet() {
        #expect(QueryEncoding.encode("AZaz09-_.*") == "AZaz09-_.*")
        #expect(QueryEncoding.encode("myapp://auth/callback") == "myapp%3A%2F%2Fauth%2Fcallback")
        #expect(QueryEncoding.encode("a b+c~d") == "a%20b%2Bc%7Ed")
        #expect(QueryEncoding.encode("é") == "%C3%A9")
        #expect(QueryEncoding.encode("?&=#%") == "%3F%26%3D%23%25")
    }

    @Test func decodesPlusAndEscapesAsUTF8() {
        #expect(QueryEncoding.decode("a+b%20c%C3%A9", plusIsSpace: true) == "a b cé")
        #expect(QueryEncoding.decode("%zz", plusIsSpace: true) == nil)
        #expect(QueryEncoding.decode("%C3", plusIsSpace: true) == nil)
        #expect(QueryEncoding.decode("%", plusIsSpace: true) == nil)
    }
}
