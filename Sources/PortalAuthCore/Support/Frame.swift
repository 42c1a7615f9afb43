#if canImport(Glibc)
import Glibc
#endif

/// Length-prefixed fields and messages over a stream socket.
enum Frame {
    /// The longest message: far beyond any session's JSON.
    static let maxLength = 1 << 20

    /// Zeroes a buffer that held a session (the library's own working copy: best effort, as
    /// Swift may have copied it on the way).
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let start = $0.baseAddress { explicit_bzero(start, $0.count) } }
    }

    static func field(_ text: String) -> [UInt8] {
        length(text.utf8.count) + Array(text.utf8)
    }

    private static func length(_ count: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: count >> ($0 * 8)) }
    }

    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        var atEnd: Bool { offset == bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func text() -> String? {
            guard let count = count(), count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return String(validating: bytes[offset..<(offset + count)], as: UTF8.self)
        }

        private mutating func count() -> Int? {
            guard bytes.count - offset >= 4 else { return nil }
            defer { offset += 4 }
            return (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << ($1 * 8) }
        }
    }

    /// Writes the message whole (retrying short writes); false on any failure.
    static func write(_ message: [UInt8], to fd: Int32) -> Bool {
        var whole = length(message.count) + message
        defer { wipe(&whole) }
        var sent = 0
        while sent < whole.count {
            let count = whole[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Reads one message, waiting at most `milliseconds` (-1: for ever) for each part; nil
    /// when the socket closes, fails, or sends more than `maxLength`.
    static func read(from fd: Int32, waiting milliseconds: Int32) -> [UInt8]? {
        guard let header = exactly(4, from: fd, waiting: milliseconds) else { return nil }
        let count = (0..<4).reduce(0) { $0 | Int(header[$1]) << ($1 * 8) }
        guard count <= maxLength else { return nil }
        return exactly(count, from: fd, waiting: milliseconds)
    }

    private static func exactly(_ count: Int, from fd: Int32, waiting milliseconds: Int32) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready == 1 else { return nil }
            let read = bytes[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return nil }
            got += read
        }
        return bytes
    }
}
