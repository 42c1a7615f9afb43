/// Redirect URL matching and query parsing (docs/protocol.md §4). Separators are found among
/// UTF-8 bytes, not Characters, so a combining mark after `#`, `?`, `&` or `=` cannot hide
/// it (an ASCII byte is never part of another scalar); every step is a single scan, linear
/// on hostile input.
enum RedirectURL {
    /// Whether `incoming` targets `configured`: their normalised forms are the same bytes.
    static func matches(_ incoming: String, configured: String) -> Bool {
        normalise(incoming).hasSameBytes(as: normalise(configured))
    }

    /// Fragment and query dropped, trimmed, trailing `/` stripped, scheme and authority
    /// lowercased; the path keeps its case and is never percent-decoded.
    static func normalise(_ url: String) -> String {
        let value = Substring(withoutFragment(Substring(url)).upTo("?").trimmed).withoutTrailingSlashes
        guard let authorityStart = value.schemeSeparatorEnd else { return value.lowercased() }
        let pathStart = value[authorityStart...].firstIndex(ofASCII: UInt8(ascii: "/")) ?? value.endIndex
        return value[..<pathStart].lowercased() + value[pathStart...]
    }

    /// The query parameters of a whole URL; for a repeated key the last occurrence wins,
    /// because the backend appends its parameters to a URL that may already carry some.
    static func queryParameters(of url: String) -> [String: String] {
        let value = withoutFragment(Substring(url.trimmed))
        guard let question = value.firstIndex(ofASCII: UInt8(ascii: "?")) else { return [:] }

        var parameters: [String: String] = [:]
        var rest = value[value.utf8.index(after: question)...]
        while !rest.isEmpty {
            let end = rest.firstIndex(ofASCII: UInt8(ascii: "&")) ?? rest.endIndex
            let pair = rest[..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.utf8.index(after: end)...]
            guard !pair.isEmpty else { continue }
            let equals = pair.firstIndex(ofASCII: UInt8(ascii: "="))
            let rawKey = pair[..<(equals ?? pair.endIndex)]
            let rawValue = equals.map { pair[pair.utf8.index(after: $0)...] } ?? ""
            let key = QueryEncoding.decode(rawKey, plusIsSpace: true) ?? String(rawKey)
            guard !key.isEmpty else { continue }
            parameters[key] = QueryEncoding.decode(rawValue, plusIsSpace: true) ?? String(rawValue)
        }
        return parameters
    }

    private static func withoutFragment(_ value: Substring) -> Substring {
        value.upTo("#")
    }
}

private extension Substring {
    /// Everything before the first `separator` (ASCII), or all of it.
    func upTo(_ separator: Unicode.Scalar) -> Substring {
        guard let index = firstIndex(ofASCII: UInt8(ascii: separator)) else { return self }
        return self[..<index]
    }

    /// Where the authority starts: just after the first `://`.
    var schemeSeparatorEnd: Index? {
        let bytes = utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index] == UInt8(ascii: ":") {
                let slash1 = bytes.index(after: index)
                if slash1 != bytes.endIndex, bytes[slash1] == UInt8(ascii: "/") {
                    let slash2 = bytes.index(after: slash1)
                    if slash2 != bytes.endIndex, bytes[slash2] == UInt8(ascii: "/") {
                        return bytes.index(after: slash2)
                    }
                }
            }
            index = bytes.index(after: index)
        }
        return nil
    }
}
