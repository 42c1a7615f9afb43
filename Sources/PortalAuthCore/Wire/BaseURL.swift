/// The API's base URL, derived from `apiHost` (docs/protocol.md §1).
struct BaseURL: Sendable, Equatable {
    /// Scheme, authority and any path prefix, with no trailing `/`.
    let origin: String

    /// Every Client Auth path lives under this prefix.
    static let apiPrefix = "/api/v3/auth"

    init(apiHost: String) throws(PortalAuthError) {
        let value = Substring(apiHost.trimmed).withoutTrailingSlashes

        let lowered = value.lowercased()
        let authorityStart: String.Index
        let scheme: String
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            // Used as is: the host still has to be one a request can go to.
            scheme = ""
            authorityStart = value.index(value.startIndex, offsetBy: lowered.hasPrefix("http://") ? 7 : 8)
        } else {
            authorityStart = value.startIndex
            let host = value.prefix { $0 != "/" && $0 != ":" }
            let isLoopback = host.lowercased() == "localhost" || host == "127.0.0.1"
            scheme = isLoopback ? "http://" : "https://"
        }
        guard Self.isValidAuthority(value[authorityStart...].prefix { $0 != "/" }) else {
            throw .invalidArgument(name: "apiHost")
        }
        origin = scheme + value
    }

    /// Whether the host is this machine's loopback (`LoopbackHost`): a browser sign-in may
    /// then open an `http` authorize URL (the emulator's).
    var isLoopback: Bool { LoopbackHost.isLoopback(url: origin) }

    func url(path: String, query: String? = nil) -> String {
        var url = origin + Self.apiPrefix + path
        if let query { url += "?" + query }
        return url
    }

    /// `host[:port]` where host is a DNS name, an IPv4 address or a bracketed IPv6 literal.
    private static func isValidAuthority(_ authority: Substring) -> Bool {
        let host: Substring
        let rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            let literal = authority[authority.index(after: authority.startIndex)..<close]
            guard !literal.isEmpty,
                  literal.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." })
            else { return false }
            host = authority[...close]
            rest = authority[authority.index(after: close)...]
        } else {
            let colon = authority.firstIndex(of: ":") ?? authority.endIndex
            host = authority[..<colon]
            rest = authority[colon...]
            guard !host.isEmpty, host.unicodeScalars.allSatisfy(isHostNameScalar) else { return false }
        }
        guard !host.isEmpty else { return false }
        if rest.isEmpty { return true }
        let port = rest.dropFirst()
        return rest.first == ":" && (1...5).contains(port.count)
            && port.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    private static func isHostNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", ".", "_": return true
        default: return false
        }
    }
}
