/// The TOTP enrollment link and its secret (docs/protocol.md §8). Each step is one scan over
/// Unicode scalars or bytes: linear on hostile links.
enum TotpLink {
    /// The link as an authenticator reads it: trimmed; if it does not start with
    /// `otpauth://` (any case), percent-decoded once as a whole and trimmed again. `nil`
    /// when it is still not an `otpauth://` link.
    static func normalised(_ link: String) -> String? {
        let trimmed = link.trimmed
        if isOtpauth(trimmed) { return trimmed }
        guard let decoded = QueryEncoding.decode(trimmed, plusIsSpace: false)?.trimmed, isOtpauth(decoded) else {
            return nil
        }
        return decoded
    }

    /// The base32 secret of the link's last `secret=` parameter, uppercased; `nil` when the
    /// link is unusable or the value is not base32 with at least one data character.
    static func secret(of link: String) -> String? {
        normalised(link).flatMap(secret(ofNormalised:))
    }

    /// The secret of a link `normalised` returned.
    static func secret(ofNormalised link: String) -> String? {
        // Separators are ASCII, found among the UTF-8 bytes (a multi-byte scalar never holds
        // an ASCII byte), so every piece cut at them is whole UTF-8 text.
        let bytes = Array(link.utf8)
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        guard var start = bytes[..<end].firstIndex(of: UInt8(ascii: "?")).map({ $0 + 1 }) else { return nil }

        // Only the last secret= counts: where its raw value lies is kept, and it is decoded
        // once at the end.
        var rawSecret: Range<Int>?
        while start < end {
            let pairEnd = bytes[start..<end].firstIndex(of: UInt8(ascii: "&")) ?? end
            if let equals = bytes[start..<pairEnd].firstIndex(of: UInt8(ascii: "=")), isSecretName(bytes[start..<equals]) {
                rawSecret = (equals + 1)..<pairEnd
            }
            start = pairEnd + 1
        }
        let secret = rawSecret.map { range in
            let raw = String(decoding: bytes[range], as: UTF8.self)
            return QueryEncoding.decode(raw, plusIsSpace: false) ?? raw
        }
        guard let value = secret.map({ asciiUppercased($0.trimmed.utf8) }), isBase32(value) else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    /// `secret`, percent-encoded or not. Only a name with an escape is decoded, so a link of
    /// many parameters stays linear with a small constant.
    private static func isSecretName(_ raw: ArraySlice<UInt8>) -> Bool {
        guard raw.contains(UInt8(ascii: "%")) else { return raw.elementsEqual("secret".utf8) }
        let name = String(decoding: raw, as: UTF8.self)
        return (QueryEncoding.decode(name, plusIsSpace: false) ?? name).hasSameBytes(as: "secret")
    }

    /// Case-insensitive for the letters only: folding every byte with 0x20 would also take
    /// control bytes 0x1A and 0x0F for `:` and `/`.
    private static func isOtpauth(_ text: String) -> Bool {
        text.utf8.count >= 10 && asciiUppercased(text.utf8.prefix(10)).elementsEqual("OTPAUTH://".utf8)
    }

    /// ASCII letters only: Unicode case mapping would turn letters outside base32 (`ı`, `ſ`,
    /// `ﬀ`) into a secret the link does not carry, one its QR code's reader would reject.
    private static func asciiUppercased(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) ? $0 - 0x20 : $0 }
    }

    /// `A-Z` and `2-7`, at least one, then only `=` padding.
    private static func isBase32(_ bytes: [UInt8]) -> Bool {
        let data = bytes.prefix { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains($0) }
        return !data.isEmpty && bytes.dropFirst(data.count).allSatisfy { $0 == UInt8(ascii: "=") }
    }
}

extension TotpRequiredResult {
    /// The base32 secret of `totpLink`, for manual entry in an authenticator app; `nil` when
    /// there is no link or it carries no valid secret. Never log or persist it.
    public var totpSecret: String? {
        totpLink.flatMap { portalTotpSecret(otpAuthUrl: $0) }
    }
}

/// The base32 secret of an enrollment link kept elsewhere, as `TotpRequiredResult.totpSecret`
/// reads it; `nil` when the link is unusable or carries no valid secret.
public func portalTotpSecret(otpAuthUrl: String) -> String? {
    TotpLink.secret(of: otpAuthUrl)
}
