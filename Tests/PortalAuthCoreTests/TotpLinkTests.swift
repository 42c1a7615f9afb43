import Testing
@testable import PortalAuthCore

/// docs/protocol.md §8: the enrollment link and its secret.
@Suite struct TotpLinkTests {
    static let link = "otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Portal"

    @Test(arguments: [
        (link, "JBSWY3DPEHPK3PXP"),
        ("  OTPAUTH://totp/x?secret=jbswy3dp  ", "JBSWY3DP"),
        ("otpauth%3A%2F%2Ftotp%2Fx%3Fsecret%3DJBSWY3DP", "JBSWY3DP"),
        ("otpauth://totp/x?secret=AAAA&secret=BBBB", "BBBB"),
        ("otpauth://totp/x?secret=AAAA#secret=BBBB", "AAAA"),
        ("otpauth://totp/x?secret&secret=CCCC&other", "CCCC"),
        ("otpauth://totp/x?%73ecret=DDDD", "DDDD"),
        ("otpauth://totp/x?secret=%20eeee%3D%3D%20", "EEEE=="),
        ("otpauth://totp/x?secret=MZXW6===", "MZXW6==="),
    ])
    func readsTheSecret(link: String, expected: String) {
        #expect(TotpLink.secret(of: link) == expected)
    }

    @Test(arguments: [
        "", "https://example.com/?secret=JBSWY3DP", "otpauth://totp/x", "otpauth://totp/x?secret=",
        "otpauth://totp/x?secret===", "otpauth://totp/x?secret=AB1C", "otpauth://totp/x?secret=AB=C",
        "otpauth://totp/x?issuer=P", "otpauth://totp/x#?secret=JBSWY3DP", "%zzotpauth://x?secret=AA",
        // Only letters are case-insensitive: control bytes are not `:` or `/`.
        "otpauth\u{1A}//totp/x?secret=JBSWY3DP", "otpauth:/\u{0F}totp/x?secret=JBSWY3DP",
        // Letters whose Unicode uppercase is in base32 (ı → I, ſ → S, ﬀ → FF) are not base32.
        "otpauth://totp/x?secret=%C4%B1", "otpauth://totp/x?secret=\u{017F}", "otpauth://totp/x?secret=\u{FB00}",
    ])
    func noSecret(link: String) {
        #expect(TotpLink.secret(of: link) == nil)
    }

    @Test func aStepWithoutLinkHasNoSecret() {
        #expect(TotpRequiredResult(userJwt: "j", totpLink: nil, endUserId: "e").totpSecret == nil)
        #expect(TotpRequiredResult(userJwt: "j", totpLink: Self.link, endUserId: "e").totpSecret == "JBSWY3DPEHPK3PXP")
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["%", "&", "=", "?", " ", "#"])
    func hostileLinksStayLinear(character: String) {
        let run = String(repeating: character, count: 200_000)
        #expect(TotpLink.secret(of: "otpauth://totp/x?" + run + "secret=" + run) == nil)
        _ = TotpLink.normalised(run + "otpauth://" + run)
    }
}
