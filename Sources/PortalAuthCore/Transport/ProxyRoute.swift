/// How a request reaches the API host (docs/network.md "Proxies"): never through a proxy to a
/// loopback host; else through the proxy the environment names for the API's scheme; with no
/// variable naming one, as the desktop says (`DesktopProxy`); either way unless `no_proxy`
/// exempts the host. Every request sets its route explicitly, so libcurl never chooses one of
/// its own.
package enum ProxyRoute: Sendable, Equatable {
    case direct
    case through(ProxyAddress)

    /// The variables that name a proxy: with any set, the environment decides and the
    /// desktop is not asked.
    static let variables = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"]

    /// The route to `origin` (`scheme://host[:port]`) under `environment`'s variables, read as
    /// curl reads them: `https_proxy` or `HTTPS_PROXY` for https, `http_proxy` alone for http
    /// (a CGI program's `HTTP_PROXY` comes from a request header), then `all_proxy` or
    /// `ALL_PROXY`; the lower-case spelling first. Nil when no variable names a proxy and
    /// `no_proxy` does not exempt the host: the desktop's proxy applies.
    package static func of(origin: String, environment: (String) -> String? = TrustStore.processEnvironment) -> ProxyRoute? {
        if LoopbackHost.isLoopback(url: origin) { return .direct }
        let exemptions = environment("no_proxy") ?? environment("NO_PROXY") ?? ""
        if NoProxyList(exemptions).exempts(host: host(of: origin)) { return .direct }
        guard variables.contains(where: { environment($0) != nil }) else { return nil }
        let https = origin.lowercased().hasPrefix("https://")
        let names = https ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        return names.lazy.compactMap(environment).first.map { .through(ProxyAddress($0)) } ?? .direct
    }

    /// The proxy's host and port, for messages and logs.
    package var displayName: String? {
        guard case .through(let proxy) = self else { return nil }
        return proxy.hostAndPort
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

/// A proxy's URL with its credentials kept apart: libcurl gets `scheme://host[:port]` and the
/// user name and password as options of their own, so that no text libcurl makes of the URL (a
/// message about its syntax) can carry the password, and nothing prints them.
package struct ProxyAddress: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `scheme://host[:port]`; `http://` when the proxy was given without a scheme.
    package let url: String
    package let hostAndPort: String
    /// Percent-decoded, as libcurl decodes a URL's.
    package let user: String?
    package let password: String?

    /// Reads `text` as proxy variables are written: `[scheme://][user[:password]@]host[:port][/]`.
    /// The credentials end at the last `@`, so a password with a `/`, `?`, `#` or `@` that
    /// was not percent-encoded is still kept apart.
    package init(_ text: String) {
        let schemeEnd = text.firstRange(of: "://")
        let scheme = schemeEnd.map { String(text[..<$0.lowerBound]).lowercased() } ?? "http"
        let rest = schemeEnd.map { text[$0.upperBound...] } ?? text[...]
        let at = rest.lastIndex(of: "@")
        let authority = (at.map { rest[rest.index(after: $0)...] } ?? rest).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        hostAndPort = String(authority)
        url = "\(scheme)://\(authority)"
        if let at {
            let credentials = rest[..<at]
            let colon = credentials.firstIndex(of: ":")
            user = Self.percentDecoded(colon.map { credentials[..<$0] } ?? credentials)
            password = colon.map { Self.percentDecoded(credentials[credentials.index(after: $0)...]) }
        } else {
            user = nil
            password = nil
        }
    }

    package var description: String { "ProxyAddress(\(url)\(user == nil ? "" : ", with credentials"))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["url": url]) }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
