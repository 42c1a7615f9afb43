/// Reading a `userJwt`'s claims without verifying it (docs/protocol.md §7): the client has no
/// key, and the TOTP endpoint does not return the id. The `endUserId` is required; the
/// expiry (`exp`) only informs the app and a refused code's reason.
enum UserJwt {
    static let malformed = "The provided userJwt is malformed."
    static let notBase64 = "The provided userJwt is not valid base64url."
    static let unreadableClaims = "Unable to read the claims of the provided userJwt."
    static let noEndUserId = "The provided userJwt does not carry an endUserId."

    /// What the client reads of a `userJwt`.
    struct Claims {
        let endUserId: String
        /// `exp`, whole seconds since the Unix epoch; nil when absent or not a number in range.
        let expiresAt: Int64?
    }

    static func endUserId(of jwt: String) throws(PortalAuthError) -> String {
        try claims(of: jwt).endUserId
    }

    /// The expiry of a `userJwt` whose claims may be unreadable (a grant's answer is not
    /// refused for it).
    static func expiry(of jwt: String) -> Int64? {
        try? claims(of: jwt).expiresAt
    }

    static func claims(of jwt: String) throws(PortalAuthError) -> Claims {
        // Control characters (CR, LF...) would break the Authorization header the JWT goes in.
        // One copy into an array: walking it by integer index keeps a hostile 200,000-character
        // JWT well under a millisecond or two, where string-view indices cost several.
        let bytes = Array(jwt.utf8)
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw .invalidUserJwt(detail: malformed)
        }
        let segments = bytes.split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false)
        guard segments.count >= 2 else { throw .invalidUserJwt(detail: malformed) }
        guard let claimsBytes = Base64.decode(segments[1]) else { throw .invalidUserJwt(detail: notBase64) }
        // Claims must be UTF-8 text: bytes outside strings that are not UTF-8 are not JSON either.
        guard let document = JSONValue.parse(claimsBytes), let claims = try? JSONObject(document) else {
            throw .invalidUserJwt(detail: unreadableClaims)
        }
        // A claim of another type (number, boolean, null) only means the id is absent.
        guard let endUserId = (try? claims.string("endUserId")).nonBlank else {
            throw .invalidUserJwt(detail: noEndUserId)
        }
        return Claims(endUserId: endUserId, expiresAt: (try? claims.number("exp")).flatMap(wholeSeconds))
    }

    /// A NumericDate (RFC 7519: seconds, possibly fractional) as whole seconds, rounded down;
    /// nil for a value no clock will reach or has left (negative, not finite, past 2^53).
    private static func wholeSeconds(_ value: Double?) -> Int64? {
        guard let value, value.isFinite, value >= 0, value < 9_007_199_254_740_992 else { return nil }
        return Int64(value.rounded(.down))
    }
}

/// Base64 decoding that accepts both alphabets (`+/` and `-_`) and optional padding.
/// Bits that do not complete a byte are dropped.
enum Base64 {
    static func decode<C: BidirectionalCollection<UInt8>>(_ text: C) -> [UInt8]? {
        var end = text.endIndex
        while end != text.startIndex, text[text.index(before: end)] == UInt8(ascii: "=") {
            end = text.index(before: end)
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text[..<end] {
            guard let value = sextet(byte) else { return nil }
            buffer = (buffer << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): return 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
