import CCrypto

/// RFC 6238 time-based codes (HMAC-SHA1, 6 digits, 30-second steps): what an
/// authenticator app computes from the secret of an enrollment link.
public enum OneTimeCode {
    /// The code for `secret` (base32) at `unixTime`, or `nil` if the secret is not base32.
    public static func totp(secret: String, unixTime: Int64, digits: Int = 6, period: Int64 = 30) -> String? {
        guard (1...9).contains(digits), period > 0, unixTime >= 0, let key = base32Decode(secret) else { return nil }
        var counter = UInt64(unixTime / period).bigEndian
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { keyBytes in
            withUnsafeBytes(of: &counter) { message in
                HMAC(EVP_sha1(), keyBytes.baseAddress, Int32(keyBytes.count),
                     message.bindMemory(to: UInt8.self).baseAddress, message.count, &digest, &length) != nil
            }
        }
        guard ok, length >= 20 else { return nil }
        // Dynamic truncation (RFC 4226 §5.3).
        let offset = Int(digest[Int(length) - 1] & 0x0F)
        let binary = (UInt32(digest[offset] & 0x7F) << 24) | (UInt32(digest[offset + 1]) << 16)
            | (UInt32(digest[offset + 2]) << 8) | UInt32(digest[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The current code for `secret`.
    public static func now(secret: String) -> String? {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return totp(secret: secret, unixTime: Int64(now.tv_sec))
    }

    static func base32Decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for scalar in text.uppercased().unicodeScalars where scalar != "=" {
            let value: UInt32
            switch scalar {
            case "A"..."Z": value = scalar.value - 65
            case "2"..."7": value = scalar.value - 50 + 26
            default: return nil
            }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return output
    }
}
