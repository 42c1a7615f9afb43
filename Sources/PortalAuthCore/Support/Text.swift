// Whitespace handling shared by every rule that says "trim" or "blank".
// All of it walks Unicode scalars from both ends once, so it stays linear on hostile input.

#if canImport(Glibc)
import Glibc
#endif

extension StringProtocol {
    /// The string without leading and trailing Unicode whitespace.
    var trimmed: String {
        // Printable ASCII at both ends is not whitespace: nothing to scan.
        let whole = Substring(self)
        if let first = whole.utf8.first, let last = whole.utf8.last, (0x21...0x7E).contains(first), (0x21...0x7E).contains(last) {
            return String(self)  // a String is returned as is, not copied
        }
        let scalars = whole.unicodeScalars
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
        let mine = utf8, theirs = other.utf8
        guard mine.count == theirs.count else { return false }
        // Native strings are contiguous: one memcmp, where the generic walk over two UTF-8
        // views cost ~1,300 instructions a comparison (a redirect makes three).
        let compared = mine.withContiguousStorageIfAvailable { left in
            theirs.withContiguousStorageIfAvailable { right in
                guard let left = left.baseAddress, let right = right.baseAddress else { return true }  // both empty
                return memcmp(left, right, mine.count) == 0
            }
        }
        if let same = compared ?? nil { return same }
        return mine.elementsEqual(theirs)
    }

    /// The first `limit` characters: error fields carry bounded excerpts of server and URL text.
    func truncated(to limit: Int) -> String {
        String(prefix(limit))
    }

    /// The text with its control characters (U+0000–U+001F, U+007F–U+009F) escaped, as
    /// `\n`, `\r`, `\t` or `\xHH`: text from a server, a provider or an opener that is copied
    /// into a message can then neither break a log line nor drive a terminal. With
    /// `keepingLineBreaks`, tab, line feed and carriage return stay as they are.
    func escapingControlCharacters(keepingLineBreaks: Bool = false) -> String {
        let kept: Set<UInt32> = keepingLineBreaks ? [0x09, 0x0A, 0x0D] : []
        func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
            (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) && !kept.contains(scalar.value)
        }
        guard unicodeScalars.contains(where: isEscaped) else { return String(self) }
        var escaped = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            guard isEscaped(scalar) else {
                escaped.append(scalar)
                continue
            }
            switch scalar {
            case "\n": escaped.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": escaped.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": escaped.append(contentsOf: #"\t"#.unicodeScalars)
            default:
                let hex = String(scalar.value, radix: 16)
                escaped.append(contentsOf: ("\\x" + (hex.count < 2 ? "0" + hex : hex)).unicodeScalars)
            }
        }
        return String(escaped)
    }
}

extension Substring {
    /// The first `byte`, an ASCII byte (so never part of another scalar), found by a scan of
    /// the contiguous UTF-8: the generic search validates every index it visits.
    func firstIndex(ofASCII byte: UInt8) -> Index? {
        guard let offset = utf8.withContiguousStorageIfAvailable({ $0.firstIndex(of: byte) }) else {
            return utf8.firstIndex(of: byte)
        }
        return offset.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }

    /// Without any trailing `/`, in one backward scan (repeated `dropLast()` is quadratic).
    var withoutTrailingSlashes: Substring {
        guard let last = utf8.lastIndex(where: { $0 != UInt8(ascii: "/") }) else { return self[startIndex..<startIndex] }
        return self[...last]
    }
}

extension Optional where Wrapped == String {
    /// The value when it is present and not blank: on the wire, blank counts as absent.
    var nonBlank: String? {
        guard let value = self, !value.isBlank else { return nil }
        return value
    }
}

extension UInt8 {
    /// An ASCII upper-case letter's lower case; any other byte as it is.
    var asciiLowercased: UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) ? self | 0x20 : self
    }
}
