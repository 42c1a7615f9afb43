/// Redirect URL matching and query parsing (client-auth.md §4). Every step is a single
/// forward or backward scan: linear on hostile input, no regular expressions.
enum RedirectURL {
    /// Whether `incoming` targets `configured`, comparing normalised forms.
    static func matches(_ incoming: String, configured: String) -> Bool {
        normalise(incoming) == normalise(configured)
    }

    /// Fragment and query dropped, trimmed, trailing `/` stripped, scheme and authority
    /// lowercased; the path keeps its case and is never percent-decoded.
    static func normalise(_ url: String) -> String {
        var value = Substring(url)
        if let hash = value.firstIndex(of: "#") { value = value[..<hash] }
        if let question = value.firstIndex(of: "?") { value = value[..<question] }
        value = Substring(value.trimmed).withoutTrailingSlashes

        guard let separator = value.firstRange(of: "://") else { return value.lowercased() }
        let pathStart = value[separator.upperBound...].firstIndex(of: "/") ?? value.endIndex
        return value[..<pathStart].lowercased() + value[pathStart...]
    }

    /// The query parameters of a whole URL; for a repeated key the last occurrence wins,
    /// because the backend appends its parameters to a URL that may already carry some.
    static func queryParameters(of url: String) -> [String: String] {
        var value = Substring(url.trimmed)
        if let hash = value.firstIndex(of: "#") { value = value[..<hash] }
        guard let question = value.firstIndex(of: "?") else { return [:] }

        var parameters: [String: String] = [:]
        for pair in value[value.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: "=")
            let rawKey = pair[..<(equals ?? pair.endIndex)]
            let rawValue = equals.map { pair[pair.index(after: $0)...] } ?? ""
            let key = QueryEncoding.decode(rawKey, plusIsSpace: true) ?? String(rawKey)
            guard !key.isEmpty else { continue }
            parameters[key] = QueryEncoding.decode(rawValue, plusIsSpace: true) ?? String(rawValue)
        }
        return parameters
    }
}
