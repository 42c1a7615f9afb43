import CGlibcFloor

/// The `X-Portal-Trace-Id` of a request (docs/protocol.md §2): a fresh lowercase UUID v4.
///
/// Drawn with one `getrandom` system call and no file, where FoundationEssentials' `UUID()`
/// opens `/dev/urandom` each time (glibc's `arc4random_buf` would raise the library's glibc
/// floor to 2.36).
enum TraceId {
    static func make() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes { buffer in
            // The kernel's source never runs dry once booted; a failure leaves zeros, still a
            // well-formed id, which only traces requests.
            if let base = buffer.baseAddress { _ = pa_random_bytes(base, buffer.count) }
        }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
