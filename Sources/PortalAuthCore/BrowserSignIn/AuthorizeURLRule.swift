/// What authorize URL the opener may be given: the server's answer goes to a browser (or a
/// host's opener, or a `$BROWSER` command line), so it must be a web page and nothing else,
/// not `file:`, `javascript:`, a custom scheme or something that reads as an option.
enum AuthorizeURLRule {
    /// Whether `url` is an absolute `https://` URL with a host, of visible ASCII only;
    /// `http://` too when the API host is itself loopback (the emulator's fake provider).
    static func accepts(_ url: String, apiIsLoopback: Bool) -> Bool {
        let bytes = url.utf8
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
        let lowered = url.lowercased()
        let scheme = lowered.hasPrefix("https://") ? "https://" : (apiIsLoopback && lowered.hasPrefix("http://") ? "http://" : nil)
        guard let scheme else { return false }
        let authority = url.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        return !host.isEmpty && !host.hasPrefix(":")
    }
}
