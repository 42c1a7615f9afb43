import Testing
@testable import PortalAuthCore

/// docs/protocol.md §4: matching and query parsing, linear on hostile input.
@Suite struct RedirectURLTests {
    @Test(arguments: [
        "myapp://auth/callback",
        "myapp://auth/callback?token=t",
        "myapp://auth/callback/?token=t#frag",
        "MYAPP://AUTH/callback",
        "  myapp://auth/callback//  ",
        "myapp://auth/callback#?x",
    ])
    func matchesTheConfiguredURL(incoming: String) {
        #expect(RedirectURL.matches(incoming, configured: "myapp://auth/callback"))
    }

    @Test(arguments: [
        "myapp://auth/Callback",
        "myapp://auth/callb%61ck",
        "otherapp://auth/callback",
        "myapp://user@auth/callback",
        "myapp://auth:99/callback",
        "myapp://auth/callback/more",
        "myapp://auth",
    ])
    func rejectsOtherURLs(incoming: String) {
        #expect(!RedirectURL.matches(incoming, configured: "myapp://auth/callback"))
    }

    @Test func portsAndLoopbackRedirectsCompareExactly() {
        #expect(RedirectURL.matches("HTTP://127.0.0.1:8765/callback?token=x", configured: "http://127.0.0.1:8765/callback"))
        #expect(!RedirectURL.matches("http://127.0.0.1:8766/callback", configured: "http://127.0.0.1:8765/callback"))
        #expect(!RedirectURL.matches("https://127.0.0.1:8765/callback", configured: "http://127.0.0.1:8765/callback"))
    }

    @Test func aStringWithoutSchemeSeparatorIsLowercasedWhole() {
        #expect(RedirectURL.normalise("MyApp:Auth/Callback/") == "myapp:auth/callback")
        #expect(RedirectURL.normalise("MyApp://Auth/Callback/") == "myapp://auth/Callback")
    }

    @Test func parsesTheQuery() {
        let parameters = RedirectURL.queryParameters(of: "  myapp://cb?a=1&&b=x=y&c&=v&d=a+b%20c&e=%zz&f=%C3&a=2#g=3  ")
        #expect(parameters == ["a": "2", "b": "x=y", "c": "", "d": "a b c", "e": "%zz", "f": "%C3"])
    }

    @Test func aQuestionMarkAfterTheFragmentIsNoQuery() {
        #expect(RedirectURL.queryParameters(of: "myapp://cb#frag?token=t").isEmpty)
        #expect(RedirectURL.queryParameters(of: "myapp://cb").isEmpty)
    }

    @Test func aCombiningMarkCannotHideASeparator() {
        #expect(RedirectURL.matches("myapp://auth/callback#\u{301}x", configured: "myapp://auth/callback"))
        #expect(RedirectURL.matches("myapp://auth/callback?\u{301}x", configured: "myapp://auth/callback"))
        let parameters = RedirectURL.queryParameters(of: "x://y?token=\u{301}abc&authMethod=EMAIL_MAGIC_LINK#\u{301}f")
        #expect(parameters["token"]?.hasSameBytes(as: "\u{301}abc") == true)
        #expect(parameters["authMethod"]?.hasSameBytes(as: "EMAIL_MAGIC_LINK") == true)
        #expect(RedirectURL.queryParameters(of: "x://y?a=1&\u{301}=2").count == 2)
    }

    @Test func matchingComparesBytesNotCanonicalEquivalence() {
        // "é" precomposed and decomposed are canonically equivalent: different paths all the same.
        #expect(!RedirectURL.matches("myapp://auth/caf\u{E9}", configured: "myapp://auth/cafe\u{301}"))
        #expect(RedirectURL.matches("myapp://auth/caf\u{E9}", configured: "myapp://auth/caf\u{E9}"))
    }

    @Test func keysAreDecodedToo() {
        #expect(RedirectURL.queryParameters(of: "x://y?%74oken=a&login%5Ftype=GOOGLE") == ["token": "a", "login_type": "GOOGLE"])
    }

    /// A quadratic step would take minutes on these; the time limit turns that into a failure.
    @Test(.timeLimit(.minutes(1)), arguments: ["/", "=", "&", "%", " ", "?", "#", "+"])
    func hostileInputsStayLinear(character: String) {
        let run = String(repeating: character, count: 200_000)
        let url = "myapp://auth/callback" + run + "?token=" + run + "&x" + run
        _ = RedirectURL.matches(url, configured: "myapp://auth/callback" + run)
        let parameters = RedirectURL.queryParameters(of: url)
        #expect(parameters.count <= 3)
        _ = run.trimmed
    }
}
