/// How a request reaches the API host (docs/network.md "Proxies"): never through a proxy to a
/// loopback host; else through the proxy the environment names for the API's scheme, unless
/// `no_proxy` exempts the host; with no proxy variable set, as the desktop says
/// (`DesktopProxy`). Every request sets its route explicitly, so libcurl never chooses one of
/// its own.
package enum ProxyRoute: Sendable, Equatable {
    case direct
    /// The proxy's URL as given, credentials included: never printed (see `displayName`).
    case through(String)

    /// The variables that name a proxy, or exempt hosts from one: with any set, the
    /// environment decides and the desktop is not asked.
    static let variables = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

    /// The route to `origin` (`scheme://host[:port]`) under `environment`'s variables, read as
    /// curl reads them: `https_proxy` or `HTTPS_PROXY` for https, `http_proxy` alone for http
    /// (a CGI program's `HTTP_PROXY` comes from a request header), then `all_proxy` or
    /// `ALL_PROXY`; the lower-case spelling first. Nil when no variable is set: the desktop's
    /// proxy applies.
    package static func of(origin: String, environment: (String) -> String? = TrustStore.processEnvironment) -> ProxyRoute? {
        if LoopbackHost.isLoopback(url: origin) { return .direct }
        guard variables.contains(where: { environment($0) != nil }) else { return nil }
        let https = origin.lowercased().hasPrefix("https://")
        let names = https ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        guard let proxy = names.lazy.compactMap(environment).first else { return .direct }
        let exemptions = environment("no_proxy") ?? environment("NO_PROXY") ?? ""
        return NoProxyList(exemptions).exempts(host: host(of: origin)) ? .direct : .through(proxy)
    }

    /// The proxy's host and port, without its scheme or credentials, for messages and logs.
    package var displayName: String? {
        guard case .through(let url) = self else { return nil }
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? url[...]
        let authority = afterScheme.prefix { $0 != "/" }
        return String(authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority)
    }

    /// The host of `scheme://host[:port]...`, lower-cased, an IPv6 literal without brackets.
    static func host(of origin: String) -> String {
        let afterScheme = origin.firstRange(of: "://").map { origin[$0.upperBound...] } ?? origin[...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.hasPrefix("[") { return String(authority.dropFirst().prefix { $0 != "]" }).lowercased() }
        return String(authority.prefix { $0 != ":" }).lowercased()
    }
}

/// `no_proxy`'s list, with curl's rules: entries separated by commas or spaces; `*` exempts
/// every host; a name exempts itself and its subdomains (a leading dot changes nothing); an
/// IP address exempts itself, and a CIDR range (`10.0.0.0/8`) its addresses.
struct NoProxyList {
    private let entries: [Substring]

    init(_ text: String) {
        entries = text.split { $0 == "," || $0 == " " || $0 == "\t" }
    }

    func exempts(host: String) -> Bool {
        entries.contains { entry in
            if entry == "*" { return true }
            var name = entry.lowercased()[...]
            while name.hasPrefix(".") { name = name.dropFirst() }
            if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
            if let slash = name.firstIndex(of: "/") {
                return IPAddress.contains(network: String(name[..<slash]), prefixLength: Int(name[name.index(after: slash)...]),
                                          address: host)
            }
            return host == name || host.hasSuffix("." + name)
        }
    }
}

/// IPv4 and IPv6 addresses as bytes, for `no_proxy`'s ranges.
enum IPAddress {
    static func bytes(_ text: String) -> [UInt8]? {
        if text.contains(":") { return ipv6(text) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let values = parts.compactMap { UInt8($0) }
        return values.count == 4 ? values : nil
    }

    /// Whether `address` lies in `network/prefixLength`; false when either is not an address
    /// of the same family or the length is out of range.
    static func contains(network: String, prefixLength: Int?, address: String) -> Bool {
        guard let net = bytes(network), let addr = bytes(address), net.count == addr.count,
              let length = prefixLength, (0...net.count * 8).contains(length)
        else { return false }
        for bit in 0..<length where (net[bit / 8] ^ addr[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 {
            return false
        }
        return true
    }

    private static func ipv6(_ text: String) -> [UInt8]? {
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var values: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                values.append(value)
            }
            return values
        }
        let all: [UInt16]
        if let gap = text.firstRange(of: "::") {
            guard let head = groups(text[..<gap.lowerBound]), let tail = groups(text[gap.upperBound...]),
                  head.count + tail.count <= 7
            else { return nil }
            all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let every = groups(text[...]), every.count == 8 else { return nil }
            all = every
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
