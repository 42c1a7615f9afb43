/// JSON (RFC 8259) as the library uses it: response envelopes, userJwt claims and the
/// persisted session are read strictly; request bodies and the persisted session are
/// written compactly.
///
/// The library's own, rather than FoundationEssentials' coders: those were half of the
/// library's size (statically linked, ~12 MB of 23), a share of its load time, and the
/// largest single cost of reading a response.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number as written (validated; converted only where read, as a JWT's `exp`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members by name; of a name given twice, the last counts.
    case object([String: JSONValue])

    /// Nesting deeper than this is refused, not recursed into.
    static let maxDepth = 512

    /// The one value `bytes` hold, with optional whitespace around it; nil for anything
    /// else: bad syntax, bytes that are not UTF-8 inside a string, a lone surrogate escape,
    /// nesting deeper than `maxDepth`.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(bytes: buffer)
            return try? reader.document()
        }
    }

    static func parse(_ text: String) -> JSONValue? {
        parse(Array(text.utf8))
    }

    /// Compact UTF-8: no whitespace, object members sorted by name (byte order), `/`
    /// unescaped, non-ASCII written as is.
    var encoded: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(to: &output)
        return output
    }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null: output += "null".utf8
        case .bool(let value): output += (value ? "true" : "false").utf8
        case .number(let text): output += text.utf8
        case .string(let text): Self.write(text, to: &output)
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                item.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.write(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func write(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        defer { output.append(UInt8(ascii: "\"")) }
        // Most text needs no escape: its bytes go out in one copy.
        let plain = text.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if plain == true {
            output.append(contentsOf: text.utf8)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += #"\""#.utf8
            case UInt8(ascii: "\\"): output += #"\\"#.utf8
            case 0x0A: output += #"\n"#.utf8
            case 0x0D: output += #"\r"#.utf8
            case 0x09: output += #"\t"#.utf8
            case 0x08: output += #"\b"#.utf8
            case 0x0C: output += #"\f"#.utf8
            case 0..<0x20:
                output += #"\u00"#.utf8
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// An object's members read by type, as docs/protocol.md §2 reads a payload: a member absent
/// or null is absent; a member of another type is the wrong shape.
struct JSONObject {
    struct WrongShape: Error {}

    let members: [String: JSONValue]

    /// Throws unless `value` is an object.
    init(_ value: JSONValue) throws(WrongShape) {
        guard case .object(let members) = value else { throw WrongShape() }
        self.members = members
    }

    func string(_ name: String) throws(WrongShape) -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw WrongShape()
        }
    }

    func bool(_ name: String) throws(WrongShape) -> Bool? {
        switch members[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw WrongShape()
        }
    }

    /// A number, as the nearest `Double`.
    func number(_ name: String) throws(WrongShape) -> Double? {
        switch members[name] {
        case nil, .null?: return nil
        case .number(let text)?: return Double(text)
        default: throw WrongShape()
        }
    }

    /// An array whose items are all strings.
    func strings(_ name: String) throws(WrongShape) -> [String]? {
        switch members[name] {
        case nil, .null?: return nil
        case .array(let items)?:
            var texts: [String] = []
            texts.reserveCapacity(items.count)
            for item in items {
                guard case .string(let text) = item else { throw WrongShape() }
                texts.append(text)
            }
            return texts
        default: throw WrongShape()
        }
    }
}

/// A strict recursive-descent reader over a document's bytes.
private struct JSONReader {
    struct Invalid: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func document() throws(Invalid) -> JSONValue {
        let value = try value(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw Invalid() }
        return value
    }

    private mutating func value(depth: Int) throws(Invalid) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw Invalid() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func object(depth: Int) throws(Invalid) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw Invalid() }
        index += 1
        // Room for a protocol object's handful of members without regrowing.
        var members = [String: JSONValue](minimumCapacity: 8)
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Invalid() }
            let name = try string()
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw Invalid() }
            members[name] = try value(depth: depth)
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "}")) else { throw Invalid() }
        return .object(members)
    }

    private mutating func array(depth: Int) throws(Invalid) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw Invalid() }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return .array(items) }
        repeat {
            items.append(try value(depth: depth))
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "]")) else { throw Invalid() }
        return .array(items)
    }

    /// A string from its opening quote; escapes decoded, the result checked to be UTF-8.
    private mutating func string() throws(Invalid) -> String {
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw Invalid() }
            index += 1
        }
        guard index < bytes.count else { throw Invalid() }
        // Most strings hold no escape: their bytes are the text, read in place.
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            guard let string = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
            else { throw Invalid() }
            return string
        }
        var text = Array(bytes[start..<index])
        while bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\") {
                try escape(into: &text)
            } else {
                guard bytes[index] >= 0x20 else { throw Invalid() }
                text.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw Invalid() }
        }
        index += 1
        guard let string = String(validating: text, as: UTF8.self) else { throw Invalid() }
        return string
    }

    /// One escape sequence from its backslash, appended as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws(Invalid) {
        index += 1
        guard index < bytes.count else { throw Invalid() }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(letter)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")) else { throw Invalid() }
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw Invalid() }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Invalid() }
            UTF8.encode(unicode) { text.append($0) }
        default: throw Invalid()
        }
    }

    private mutating func hexQuad() throws(Invalid) -> UInt32 {
        guard bytes.count - index >= 4 else { throw Invalid() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Invalid()
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as written.
    private mutating func number() throws(Invalid) -> String {
        let start = index
        _ = consume(UInt8(ascii: "-"))
        if consume(UInt8(ascii: "0")) {
            // No leading zeros.
        } else {
            guard digits() > 0 else { throw Invalid() }
        }
        if consume(UInt8(ascii: ".")) {
            guard digits() > 0 else { throw Invalid() }
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            guard digits() > 0 else { throw Invalid() }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    private mutating func literal(_ word: StaticString) throws(Invalid) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw Invalid() }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw Invalid() }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }
}
