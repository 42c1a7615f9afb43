/// Percent-encoding of a query value the way the backend expects it (docs/protocol.md §2):
/// byte by byte over UTF-8, `A-Z a-z 0-9 - _ . *` unchanged, every other byte `%XX` with
/// uppercase hex, so space is `%20` and never `+`.
package enum QueryEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    package static func encode(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "*"):
            return true
        default:
            return false
        }
    }

    /// Decodes `%XX` escapes (and `+` as space when `plusIsSpace`) as UTF-8. `nil` for a
    /// bad escape or bytes that are not UTF-8: callers keep the raw text then.
    static func decode<S: StringProtocol>(_ text: S, plusIsSpace: Bool) -> String? {
        // Most values hold nothing to decode: they are their own text.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusIsSpace) }) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue),
                      let low = iterator.next().flatMap(hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
