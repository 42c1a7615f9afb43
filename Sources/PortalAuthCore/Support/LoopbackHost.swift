/// This machine's loopback hosts: `localhost`, `127.x.x.x` and `[::1]`, exactly (so
/// `localhost.evil.com` is not one). A request to one never goes through a proxy, which would
/// carry grants in cleartext off the machine.
enum LoopbackHost {
    /// Whether the host of `url` (`scheme://host[:port]/...`, or `host[:port]/...`) is loopback.
    /// Every request asks, so this scans UTF-8 bytes (a loopback host is ASCII), where a walk
    /// by characters cost more than the rest of the request's set-up.
    static func isLoopback(url: String) -> Bool {
        var url = url
        return url.withUTF8 { isLoopback(utf8: $0) }
    }

    private static func isLoopback(utf8 url: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = schemeEnd(of: url) ?? 0
        let authority = url[start...].prefix { !endsAuthority($0) }
        guard !authority.contains(UInt8(ascii: "@")) else { return false }
        if authority.first == UInt8(ascii: "[") {
            return authority.prefix { $0 != UInt8(ascii: "]") }.elementsEqual("[::1".utf8)
        }
        let host = authority.prefix { $0 != UInt8(ascii: ":") }
        return host.lazy.map(\.asciiLowercased).elementsEqual("localhost".utf8) || isLoopbackIPv4(host)
    }

    /// Where the authority starts: after a `://` that comes before any `/`, `?` or `#` (one in
    /// a query is not a scheme's), if there is one.
    private static func schemeEnd(of url: UnsafeBufferPointer<UInt8>) -> Int? {
        for index in url.indices {
            if endsAuthority(url[index]) { return nil }
            if url[index] == UInt8(ascii: ":"), index + 2 < url.count,
               url[index + 1] == UInt8(ascii: "/"), url[index + 2] == UInt8(ascii: "/") {
                return index + 3
            }
        }
        return nil
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    /// `127.a.b.c`, each part one to three decimal digits, at most 255.
    private static func isLoopbackIPv4(_ host: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let parts = host.split(separator: UInt8(ascii: "."), maxSplits: 4, omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0].elementsEqual("127".utf8) && parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                && part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 255
        }
    }
}
