/// This machine's loopback hosts: `localhost`, `127.x.x.x` and `[::1]`, exactly (so
/// `localhost.evil.com` is not one). A request to one never goes through a proxy, which would
/// carry grants in cleartext off the machine.
enum LoopbackHost {
    /// Whether the host of `url` (`scheme://host[:port]/...`, or `host[:port]/...`) is loopback.
    static func isLoopback(url: String) -> Bool {
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.lowercased()
        guard !authority.contains("@") else { return false }
        let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }) + "]" : String(authority.prefix { $0 != ":" })
        if host == "localhost" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { (1...3).contains($0.count) && $0.allSatisfy { ("0"..."9").contains($0) } && UInt8($0) != nil }
    }
}
