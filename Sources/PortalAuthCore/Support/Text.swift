// Whitespace handling shared by every rule that says "trim" or "blank".
// All of it walks Unicode scalars from both ends once, so it stays linear on hostile input.

extension StringProtocol {
    /// The string without leading and trailing Unicode whitespace.
    var trimmed: String {
        let scalars = Substring(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        guard let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        // Through a Substring: one copy of the bytes, not one append per scalar.
        return String(Substring(scalars[first...last]))
    }

    /// Empty, or whitespace only.
    var isBlank: Bool {
        unicodeScalars.allSatisfy { $0.properties.isWhitespace }
    }

    /// Byte-for-byte equality. Swift's `==` equates canonically equivalent text (a Kelvin
    /// sign and a K); grants, tokens and protocol markers must match exactly.
    func hasSameBytes(as other: some StringProtocol) -> Bool {
        utf8.elementsEqual(other.utf8)
    }

    /// The first `limit` characters: error fields carry bounded excerpts of server and URL text.
    func truncated(to limit: Int) -> String {
        String(prefix(limit))
    }
}

extension Substring {
    /// Without any trailing `/`, in one backward scan (repeated `dropLast()` is quadratic).
    var withoutTrailingSlashes: Substring {
        let scalars = unicodeScalars
        guard let last = scalars.lastIndex(where: { $0 != "/" }) else { return self[startIndex..<startIndex] }
        return Substring(scalars[...last])
    }
}

extension Optional where Wrapped == String {
    /// The value when it is present and not blank: on the wire, blank counts as absent.
    var nonBlank: String? {
        guard let value = self, !value.isBlank else { return nil }
        return value
    }
}
