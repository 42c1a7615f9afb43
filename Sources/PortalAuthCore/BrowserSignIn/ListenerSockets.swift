import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// Why a listener could not listen; the message names the address, never a URL's query.
struct ListenerError: Error, Equatable {
    enum Kind: Equatable {
        case portInUse
        /// The system has no IPv6 loopback.
        case noIPv6
        /// No socket, descriptor or thread; another bind or listen failure.
        case system
    }

    let kind: Kind
    let message: String
}

/// The listening sockets of a loopback redirect: on its loopback address and port only,
/// never a public interface (RFC 8252 §8.3); `localhost` is both 127.0.0.1 and [::1], since
/// a browser may resolve it to either.
enum ListenerSockets {
    /// Binds and listens at once, so that a port in use is known before anything else.
    /// - Throws: `ListenerError` when the port is in use or no socket can be made.
    static func open(for redirect: LoopbackRedirect) throws(ListenerError) -> [Int32] {
        var opened: [Int32] = []
        do {
            switch redirect.host {
            case .ipv4:
                opened.append(try listen(ipv6: false, port: redirect.port))
            case .ipv6:
                opened.append(try listen(ipv6: true, port: redirect.port))
            case .localhost:
                opened.append(try listen(ipv6: false, port: redirect.port))
                // [::1] too where the system has IPv6; where it has not, no browser uses it.
                do {
                    opened.append(try listen(ipv6: true, port: redirect.port))
                } catch where error.kind == .noIPv6 {}
            }
        } catch {
            close(opened)
            throw error
        }
        return opened
    }

    /// Stops listening, then closes. The shutdown (on Linux, a listening socket's end) acts
    /// on the socket, not on this descriptor: a child process forked while it listened holds
    /// a copy of it until the child execs or exits, and that copy alone would keep the port
    /// accepting connections and refuse it to the next sign-in's bind.
    static func close(_ sockets: [Int32]) {
        for fd in sockets {
            _ = shutdown(fd, Int32(SHUT_RDWR))
            _ = Glibc.close(fd)
        }
    }

    /// A non-blocking, close-on-exec socket listening on 127.0.0.1 or [::1] at `port`.
    private static func listen(ipv6: Bool, port: UInt16) throws(ListenerError) -> Int32 {
        let address = ipv6 ? "[::1]:\(port)" : "127.0.0.1:\(port)"
        let fd = socket(ipv6 ? AF_INET6 : AF_INET,
                        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT { throw ListenerError(kind: .noIPv6, message: "cannot listen on \(address): no IPv6 loopback") }
            throw ListenerError(kind: .system, message: "cannot listen on \(address): errno \(code)")
        }
        var on: Int32 = 1
        // Lets the port be bound again at once after a sign-in, while its closed connections
        // linger in TIME_WAIT; Linux still refuses it while anyone listens there.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var status: Int32
        if ipv6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            socketAddress.sin6_addr = in6addr_loopback
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            socketAddress.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            status = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        // The longest queue the system allows: another user's connect flood fills a short one
        // whenever the listener's thread is off the CPU for a moment, and the browser's SYN is
        // then dropped and sent again a second or more later; refusing one costs one lookup.
        if status == 0 { status = Glibc.listen(fd, SOMAXCONN) }
        guard status == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            switch code {
            case EADDRINUSE: throw ListenerError(kind: .portInUse, message: "cannot listen on \(address): the port is in use")
            case EADDRNOTAVAIL where ipv6: throw ListenerError(kind: .noIPv6, message: "cannot listen on \(address): no IPv6 loopback")
            default: throw ListenerError(kind: .system, message: "cannot listen on \(address): errno \(code)")
            }
        }
        return fd
    }
}
