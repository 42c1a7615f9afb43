import FoundationEssentials
import Testing
@testable import PortalAuthCore

/// docs/protocol.md §7: reading the endUserId out of a userJwt.
@Suite struct UserJwtTests {
    static func segment(_ json: String, urlSafe: Bool = true, padded: Bool = false) -> String {
        var text = Data(json.utf8).base64EncodedString()
        if urlSafe { text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") }
        if !padded { while text.hasSuffix("=") { text.removeLast() } }
        return text
    }

    static func jwt(_ claims: String, urlSafe: Bool = true, padded: Bool = false) -> String {
        "eyJhbGciOiJIUzI1NiJ9." + segment(claims, urlSafe: urlSafe, padded: padded) + ".signature"
    }

    @Test func readsTheEndUserId() throws {
        #expect(try UserJwt.endUserId(of: Self.jwt(#"{"endUserId":"eu_1","exp":1}"#)) == "eu_1")
    }

    @Test func acceptsBothAlphabetsAndOptionalPadding() throws {
        // Claims chosen so their base64 holds both '+' / '/' or '-' / '_' forms.
        let claims = #"{"endUserId":"eu_>>>???","n":"ÿÿ"}"#
        for urlSafe in [true, false] {
            for padded in [true, false] {
                #expect(try UserJwt.endUserId(of: Self.jwt(claims, urlSafe: urlSafe, padded: padded)) == "eu_>>>???")
            }
        }
    }

    @Test func ignoresHeaderSignatureAndExtraSegments() throws {
        let claims = Self.segment(#"{"endUserId":"eu_2"}"#)
        #expect(try UserJwt.endUserId(of: "garbage!." + claims) == "eu_2")
        #expect(try UserJwt.endUserId(of: "h." + claims + ".s.extra.more") == "eu_2")
    }

    @Test(arguments: ["", "   ", "nodots", "a\nb.c", "h.e30.s\r\nX-Injected: 1", "h.e30\u{7F}.s"])
    func malformed(jwt: String) {
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.malformed)) { try UserJwt.endUserId(of: jwt) }
    }

    @Test(arguments: ["h.abc*def.s", "h.ab=cd.s", "h.é.s", "h.a b.s"])
    func notBase64(jwt: String) {
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.notBase64)) { try UserJwt.endUserId(of: jwt) }
    }

    @Test func headerAndSignatureMayHoldAnyPrintableText() throws {
        let claims = Self.segment(#"{"endUserId":"eu_3"}"#)
        #expect(try UserJwt.endUserId(of: "héader." + claims + ".sïg nature") == "eu_3")
    }

    @Test(arguments: ["not json", "[1,2]", "\"text\"", "42"])
    func unreadableClaims(claims: String) {
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.unreadableClaims)) {
            try UserJwt.endUserId(of: Self.jwt(claims))
        }
    }

    @Test func claimsThatAreNotUTF8AreUnreadable() {
        let bytes: [UInt8] = Array(#"{"endUserId":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        let segment = Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.unreadableClaims)) {
            try UserJwt.endUserId(of: "h." + segment + ".s")
        }
    }

    @Test(arguments: [#"{"endUserId":42}"#, #"{"endUserId":true}"#, #"{"endUserId":null}"#, #"{}"#,
                      #"{"endUserId":"  "}"#, #"{"endUserId":{"a":1}}"#])
    func noEndUserId(claims: String) {
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.noEndUserId)) {
            try UserJwt.endUserId(of: Self.jwt(claims))
        }
    }

    @Test func bitsThatDoNotCompleteAByteAreDropped() {
        #expect(Base64.decode(Array("QQ".utf8)) == [0x41])
        #expect(Base64.decode(Array("QUJ".utf8)) == [0x41, 0x42])
        #expect(Base64.decode(Array("Q".utf8)) == [])
    }

    @Test(.timeLimit(.minutes(1)))
    func aHostileJwtIsReadInLinearTime() {
        let huge = String(repeating: "A", count: 200_000)
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.unreadableClaims)) {
            try UserJwt.endUserId(of: huge + "." + huge + "." + huge)
        }
        // The second of many segments is empty: no claims to read.
        #expect(throws: PortalAuthError.invalidUserJwt(detail: UserJwt.unreadableClaims)) {
            try UserJwt.endUserId(of: String(repeating: ".", count: 200_000))
        }
    }

    @Test func detailsNeverEchoTheJwt() {
        for jwt in ["secret-jwt", "h.secret*jwt.s", Self.jwt("secret"), Self.jwt(#"{"endUserId":1,"s":"secret"}"#)] {
            do {
                _ = try UserJwt.endUserId(of: jwt)
                Issue.record("expected a failure")
            } catch {
                #expect(!"\(error)".contains("secret"))
                #expect(!"\(error)".contains(jwt))
            }
        }
    }
}
