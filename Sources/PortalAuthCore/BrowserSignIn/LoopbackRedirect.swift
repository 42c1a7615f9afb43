/// A redirect URL a browser sign-in can listen on (docs/desktop.md "Browser sign-in",
/// RFC 8252 §7.3): `http`, a loopback host (`127.0.0.1`, `[::1]` or `localhost`) and an
/// explicit port. Portal matches the redirect byte for byte, so the port is the allow-listed
/// one, never an ephemeral one.
struct LoopbackRedirect: Equatable, Sendable {
    enum Host: Equatable, Sendable {
        case ipv4
        case ipv6
        /// Both loopback addresses: a browser may resolve `localhost` to either.
        case localhost
    }

    let host: Host
    let port: UInt16
    /// The scheme and authority as configured (`http://127.0.0.1:8765`): a request target
    /// appended to it is the callback URL the browser was sent to.
    let origin: String

    /// - Returns: `nil` for any other URL (another scheme or host, no port, userinfo).
    init?(_ redirectUrl: String) {
        let url = Substring(redirectUrl.trimmed)
        let scheme = "http://"
        guard url.utf8.count > scheme.utf8.count,
              url.prefix(scheme.count).lowercased() == scheme
        else { return nil }
        let rest = url.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        let hostText = authority[..<colon].lowercased()
        let portText = authority[authority.index(after: colon)...]

        switch hostText {
        case "127.0.0.1": host = .ipv4
        case "[::1]": host = .ipv6
        case "localhost": host = .localhost
        default: return nil
        }
        // Digits only (no sign, no spaces), 1 to 65535.
        guard (1...5).contains(portText.utf8.count),
              portText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let number = UInt16(portText), number != 0
        else { return nil }
        port = number
        origin = String(url[..<authorityEnd])
    }

    /// The address and port to show in log lines, e.g. `127.0.0.1:8765`.
    var endpoint: String {
        switch host {
        case .ipv4: return "127.0.0.1:\(port)"
        case .ipv6: return "[::1]:\(port)"
        case .localhost: return "localhost:\(port)"
        }
    }
}
