/// Help with what a user typed for a TOTP code, kept apart from `verifyTotp`, which posts
/// exactly what it is given (docs/protocol.md §3): an app runs this first, so that
/// `123 456` or `123-456`, as authenticator apps show a code, is sent as `123456`.
public enum TotpCodeInput {
    /// The six digits of `typed` once the spaces and dashes are removed (any Unicode space or
    /// dash, as a paste may carry), or nil when anything else is left or not exactly six
    /// ASCII digits remain: ask the user to type the code again, without a request.
    public static func normalized(_ typed: String) -> String? {
        var digits = ""
        for scalar in typed.unicodeScalars {
            if scalar.properties.isWhitespace || isDash(scalar) { continue }
            guard scalar.isASCII, scalar.properties.numericType == .decimal, digits.utf8.count < 6 else { return nil }
            digits.unicodeScalars.append(scalar)
        }
        return digits.utf8.count == 6 ? digits : nil
    }

    /// Hyphen-minus, the Unicode dashes (General Category Pd) and the minus sign.
    private static func isDash(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .dashPunctuation || scalar == "\u{2212}"
    }
}
