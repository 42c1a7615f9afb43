/// The head of one HTTP/1.x request to the loopback listener: its request line and header
/// fields (RFC 9112 §2–§5), read strictly. A browser's redirect is plain ASCII and well
/// formed; anything a browser would not send is refused as a whole (400), never repaired.
struct RequestHead: Equatable {
    let method: String
    /// The origin-form target: `/path?query`.
    let target: String
    /// The header fields in order: names lowercased, values without surrounding whitespace.
    let fields: [Field]

    struct Field: Equatable {
        let name: String
        let value: String
    }

    /// More fields than any browser sends: beyond it the head is refused.
    static let maxFields = 100

    /// Every value of the field `name` (lowercase), in order.
    func values(of name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// Nil for a head that is not a well-formed request: a request line other than
    /// `METHOD SP /target SP HTTP/1.x`, a field line without a token name and a colon, an
    /// obsolete line folding, control characters, or more than `maxFields` fields.
    init?(_ head: ArraySlice<UInt8>) {
        var lines = Self.lines(head)
        guard let requestLine = lines.first,
              let (method, target) = Self.requestLine(requestLine)
        else { return nil }
        lines.removeFirst()
        guard lines.count <= Self.maxFields else { return nil }
        var fields: [Field] = []
        fields.reserveCapacity(lines.count)
        for line in lines {
            guard let field = Self.field(line) else { return nil }
            fields.append(field)
        }
        self.method = method
        self.target = target
        self.fields = fields
    }

    /// Where a head ends in `bytes`: before the first empty line (CRLF CRLF, or bare LFs,
    /// which RFC 9112 lets a server accept). Nil while it has not ended. `scanned` carries
    /// the search across calls, so each byte received is looked at about once.
    static func end(in bytes: [UInt8], scanned: inout Int) -> Int? {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var index = scanned
        while index < bytes.count {
            if bytes[index] == lf {
                let next = index + 1
                if next < bytes.count, bytes[next] == lf { return index + 1 }
                if next + 1 < bytes.count, bytes[next] == cr, bytes[next + 1] == lf { return index + 1 }
                if next >= bytes.count || (bytes[next] == cr && next + 1 >= bytes.count) { break }
            }
            index += 1
        }
        scanned = index
        return nil
    }

    // MARK: - Parsing

    private static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")

    /// The lines of the head (which ends with the LF of its last line), each without its
    /// LF or CRLF.
    private static func lines(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        let body = head.last == UInt8(ascii: "\n") ? head.dropLast() : head
        return body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
    }

    /// The method and target of `METHOD SP /target SP HTTP/1.x`; the target printable ASCII.
    private static func requestLine(_ line: ArraySlice<UInt8>) -> (String, String)? {
        let parts = line.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3,
              !parts[0].isEmpty, parts[0].allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }),
              parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ (0x21...0x7E).contains($0) }),
              parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
        else { return nil }
        return (String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self))
    }

    /// `name: value`: a token name right before the colon (no whitespace there:
    /// RFC 9112 §5.1), a value of visible characters, spaces and tabs (and obs-text, which no
    /// field the listener reads uses).
    private static func field(_ line: ArraySlice<UInt8>) -> Field? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return nil }
        let value = line[line.index(after: colon)...]
        guard value.allSatisfy({ $0 == tab || $0 >= space && $0 != 0x7F }) else { return nil }
        let start = value.firstIndex { $0 != space && $0 != tab } ?? value.endIndex
        let end = value.lastIndex { $0 != space && $0 != tab }.map { value.index(after: $0) } ?? start
        return Field(name: String(decoding: name, as: UTF8.self).lowercased(),
                     value: String(decoding: value[start..<max(start, end)], as: UTF8.self))
    }

    /// tchar of RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
