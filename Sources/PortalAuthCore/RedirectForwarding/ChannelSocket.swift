import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// The Unix sockets of a redirect channel: the running instance's listening one, the next
/// instance's connection to it, and whose process is at the other end. Every descriptor is
/// close-on-exec from the start; the listening one is non-blocking.
enum ChannelSocket {
    /// What connecting found.
    enum Connection {
        case connected(Int32)
        /// No socket there, or none listening on it: no instance runs.
        case noInstance
    }

    /// Listens on `path`, which must not exist (a stale socket is unlinked by the caller,
    /// under the channel's lock).
    static func listen(at path: String) throws(PortalAuthSignInError) -> Int32 {
        let fd = try make()
        let status = withAddress(of: path) { bind(fd, $0, $1) }
        guard status == 0, Glibc.listen(fd, 16) == 0 else {
            let code = errno
            _ = close(fd)
            throw .unavailable(reason: .channelFailed, detail: "cannot listen on \(path): errno \(code)")
        }
        return fd
    }

    /// Connects to the socket at `path`. The connection blocks, each of its operations
    /// (connecting while the instance's backlog is full, sending, receiving) for at most
    /// `timeout`: the next instance runs it on a thread of its own.
    static func connect(to path: String, timeout: Duration) throws(PortalAuthSignInError) -> Connection {
        let fd = try make(blocking: true)
        let (seconds, attoseconds) = timeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        for option in [SO_SNDTIMEO, SO_RCVTIMEO] {
            setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        let status = withAddress(of: path) { Glibc.connect(fd, $0, $1) }
        if status == 0 { return .connected(fd) }
        let code = errno
        _ = close(fd)
        switch code {
        case ENOENT, ECONNREFUSED:
            return .noInstance
        case EAGAIN, EINPROGRESS:
            throw .unavailable(reason: .channelFailed, detail: "the running instance did not accept the connection in time")
        default:
            throw .unavailable(reason: .channelFailed, detail: "cannot connect to \(path): errno \(code)")
        }
    }

    /// Whether the process at the other end of `fd` runs as this process's user.
    static func peerIsThisUser(_ fd: Int32) -> Bool {
        var uid = uid_t()
        return pa_peer_uid(fd, &uid) == 0 && uid == getuid()
    }

    private static func make(blocking: Bool = false) throws(PortalAuthSignInError) -> Int32 {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (blocking ? 0 : Int32(SOCK_NONBLOCK.rawValue))
        let fd = socket(AF_UNIX, flags, 0)
        guard fd >= 0 else { throw .unavailable(reason: .channelFailed, detail: "no socket: errno \(errno)") }
        return fd
    }

    /// Calls `body` with the `sockaddr_un` of `path` (which RedirectChannel keeps short
    /// enough) and its length.
    private static func withAddress(of path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(RedirectChannel.maxSocketPath))
        withUnsafeMutableBytes(of: &address.sun_path) { room in
            room.copyBytes(from: bytes)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
