#if canImport(Glibc)
import Glibc
#endif

/// The text of a small kernel file (`/proc/<pid>/comm`, `/proc/self/uid_map`, a sysctl):
/// at most `limit` bytes, read once; nil when it cannot be opened or reads as nothing.
enum ProcText {
    static func read(_ path: String, limit: Int = 4096) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Its first line, or nil when that is empty.
    static func firstLine(_ path: String, limit: Int = 4096) -> String? {
        read(path, limit: limit)?.split(separator: "\n", omittingEmptySubsequences: false).first.flatMap { $0.isEmpty ? nil : String($0) }
    }
}
