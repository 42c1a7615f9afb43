#if canImport(Glibc)
import Glibc
#endif

/// Memory of the library's that crosses the ABI and may hold a secret (a token, a userJwt,
/// a TOTP link or secret, a QR code of one, a stored session): wiped with `explicit_bzero`,
/// which the optimiser cannot drop the way it drops a `memset` before `free`, and only then
/// freed. What cannot be wiped is said in portal_auth.h ("Secrets in memory").
enum SecretMemory {
    /// Zeroes `count` bytes at `pointer`.
    static func wipe(_ pointer: UnsafeMutableRawPointer, count: Int) {
        explicit_bzero(pointer, count)
    }

    /// A malloc'd NUL-terminated copy of `text` for the host, which frees it with
    /// `freeString` (portal_auth_string_free); nil when out of memory.
    static func copy(_ text: String) -> UnsafeMutablePointer<CChar>? {
        strdup(text)
    }

    /// Wipes and frees a NUL-terminated string that was malloc'd, by the library (`copy`)
    /// or by the host (a host storage's value).
    static func freeString(_ string: UnsafeMutablePointer<CChar>?) {
        guard let string else { return }
        wipe(string, count: strlen(string))
        free(string)
    }

    /// The bytes' length sits in a header before them, so that `freeBytes` knows how much
    /// to wipe; 16 bytes keep the bytes as aligned as malloc's.
    private static let header = 16

    /// A malloc'd copy of `bytes` for the host, which frees it with `freeBytes`
    /// (portal_auth_bytes_free); nil when out of memory.
    static func copy(_ bytes: [UInt8]) -> UnsafeMutablePointer<UInt8>? {
        guard let block = malloc(header + bytes.count) else { return nil }
        block.storeBytes(of: bytes.count, as: Int.self)
        let start = (block + header).assumingMemoryBound(to: UInt8.self)
        start.initialize(from: bytes, count: bytes.count)
        return start
    }

    /// Wipes and frees bytes made by `copy`.
    static func freeBytes(_ bytes: UnsafeMutablePointer<UInt8>?) {
        guard let bytes else { return }
        let block = UnsafeMutableRawPointer(bytes) - header
        wipe(block, count: header + block.load(as: Int.self))
        free(block)
    }
}
