/// Redirect URL matching and query parsing (client-auth.md §4). Separators are found among
/// Unicode scalars, not Characters, so a combining mark after `#`, `?`, `&` or `=` cannot
/// hide it; every step is a single scan, linear on hostile input.
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
        let pathStart = value.unicodeScalars[authorityStart...].firstIndex(of: "/") ?? value.endIndex
        return value[..<pathStart].lowercased() + value[pathStart...]
    }

    /// The query parameters of a whole URL; for a repeated key the last occurrence wins,
    /// because the backend appends its parameters to a URL that may already carry some.
    static func queryParameters(of url: String) -> [String: String] {
        let value = withoutFragment(Substring(url.trimmed))
        guard let question = value.unicodeScalars.firstIndex(of: "?") else { return [:] }

        var parameters: [String: String] = [:]
        let query = value.unicodeScalars[value.unicodeScalars.index(after: question)...]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: "=")
            let rawKey = Substring(pair[..<(equals ?? pair.endIndex)])
            let rawValue = equals.map { Substring(pair[pair.index(after: $0)...]) } ?? ""
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
    /// Everything before the first `scalar`, or all of it.
    func upTo(_ scalar: Unicode.Scalar) -> Substring {
        guard let index = unicodeScalars.firstIndex(of: scalar) else { return self }
        return Substring(unicodeScalars[..<index])
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
