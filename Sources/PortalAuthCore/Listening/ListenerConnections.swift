#if canImport(Glibc)
import Glibc
#endif

/// Where a message ends in the bytes a connection has sent so far: the end of its frame, or
/// nil while it has not ended. `scanned` carries the search across calls, so that each byte
/// received is looked at about once.
typealias FrameEnd = @Sendable (_ bytes: [UInt8], _ scanned: inout Int) -> Int?

/// The connections a listener reads at once, and which one gives way when there are too
/// many. Any local process can connect and hold connections open; the browser's own (or the
/// app's next instance's) must survive that. So a connection that has sent nothing goes first (the oldest of them),
/// and one that is sending a request only when every other is sending too.
struct ListenerConnections {
    struct Connection {
        let fd: Int32
        /// When its time to send its message is up: the first poll that begins after it and
        /// does not find the message complete drops it (`ConnectionLoop`).
        let deadline: ContinuousClock.Instant
        /// What it has sent so far.
        var received: [UInt8] = []
        /// Where the search for the end of the message resumes (`FrameEnd`).
        var scanned = 0

        enum Received {
            case pending
            /// The peer closed or reset the connection before its message ended.
            case closed
            /// The message is complete: `received[..<end]`.
            case message(end: Int)
            /// The message grew past the limit without ending.
            case tooLarge
        }

        /// Reads what has arrived, without blocking, and never more than one byte past
        /// `limit`: a client that sends a megabyte costs the listener `limit` bytes.
        mutating func receive(limit: Int, until frameEnd: FrameEnd) -> Received {
            var chunk = [UInt8](repeating: 0, count: 2048)
            while true {
                let room = min(chunk.count, limit + 1 - received.count)
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, room, 0) }
                if count == 0 { return .closed }
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno == EAGAIN || errno == EWOULDBLOCK ? .pending : .closed
                }
                received += chunk[..<count]
                if let end = frameEnd(received, &scanned) { return .message(end: end) }
                if received.count > limit { return .tooLarge }
            }
        }
    }

    /// Oldest first.
    private(set) var all: [Connection] = []
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    var isEmpty: Bool { all.isEmpty }

    var earliestDeadline: ContinuousClock.Instant? { all.map(\.deadline).min() }

    /// Takes a new connection, making room first when all places are taken.
    mutating func admit(_ fd: Int32, deadline: ContinuousClock.Instant) {
        if all.count >= capacity { _ = dropOne() }
        all.append(Connection(fd: fd, deadline: deadline))
    }

    /// Closes the connection that matters least (see the type); false when there is none.
    mutating func dropOne() -> Bool {
        guard let victim = all.indices.min(by: { rank(all[$0]) < rank(all[$1]) }) else { return false }
        close(at: victim)
        return true
    }

    subscript(index: Int) -> Connection {
        get { all[index] }
        set { all[index] = newValue }
    }

    mutating func close(at index: Int) {
        _ = Glibc.close(all.remove(at: index).fd)
    }

    /// Lets go of the connection without closing it: its descriptor is someone else's now.
    mutating func forget(at index: Int) {
        all.remove(at: index)
    }

    mutating func closeAll() {
        all.forEach { _ = Glibc.close($0.fd) }
        all.removeAll()
    }

    /// 0: its peer has closed it; 1: nothing sent (nothing read, nothing waiting to be
    /// read); 2: sending. `min` keeps the first of equals, the oldest.
    private func rank(_ connection: Connection) -> Int {
        guard connection.received.isEmpty else { return 2 }
        var byte: UInt8 = 0
        let peeked = recv(connection.fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if peeked > 0 { return 2 }
        return peeked == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ? 0 : 1
    }
}
