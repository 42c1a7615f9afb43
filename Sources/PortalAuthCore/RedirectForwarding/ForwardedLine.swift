/// What travels on a redirect channel: the next instance sends the URL it was given, as
/// UTF-8, and a line feed; the running instance answers one line, `taken` or `refused`, and
/// closes the connection. The same rule decides on both ends what may travel at all: a URL
/// `handleRedirect` would consider (no longer than it reads, no control characters) that
/// targets the configured redirect URL (docs/protocol.md §4). The URL carries a grant: no
/// log line on either end ever holds it.
enum ForwardedLine {
    /// The longest message: the longest URL `handleRedirect` considers, at most 3 bytes of
    /// UTF-8 for each of its UTF-16 code units, and the line feed.
    static let maxMessage = PortalAuth.maxRedirectLength * 3 + 1

    enum Reply: String {
        case taken
        case refused

        var line: [UInt8] { Array((rawValue + "\n").utf8) }

        /// The reply in `bytes`, read up to its line feed; nil for anything else.
        init?(_ bytes: ArraySlice<UInt8>) {
            guard bytes.last == UInt8(ascii: "\n") else { return nil }
            self.init(rawValue: String(decoding: bytes.dropLast(), as: UTF8.self))
        }
    }

    /// Whether `url` may travel on the channel of a client whose redirect URL is `configured`.
    static func carries(_ url: String, configured: String) -> Bool {
        PortalAuth.isCandidate(url) && !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            && RedirectURL.matches(url, configured: configured)
    }

    /// The message that forwards `url`.
    static func message(_ url: String) -> [UInt8] {
        Array(url.utf8) + [UInt8(ascii: "\n")]
    }

    /// Where a message ends: at its line feed (left out of the message).
    static func end(in bytes: [UInt8], scanned: inout Int) -> Int? {
        if let index = bytes[scanned...].firstIndex(of: UInt8(ascii: "\n")) { return index }
        scanned = bytes.count
        return nil
    }

    /// The URL of a message, when it is UTF-8 the channel carries.
    static func url(of message: ArraySlice<UInt8>, configured: String) -> String? {
        guard let url = String(validating: message, as: UTF8.self), carries(url, configured: configured) else { return nil }
        return url
    }
}
