#if canImport(Glibc)
import Glibc
#endif

/// Who holds the other end of a loopback TCP connection (docs/desktop.md "Only this user's
/// connections"). Portal's redirect carries no PKCE or `state`: whoever receives it owns the
/// session. So a loopback listener serves only connections whose other end belongs to this
/// process's user; the user's browser runs as the user.
///
/// TCP carries no credentials, but on Linux the kernel lists every socket of the network
/// namespace in `/proc/net/tcp` and `/proc/net/tcp6`, with the user id of the process that
/// made it. The peer's socket is the row whose local address is the peer's address and
/// whose remote address is this end's.
///
/// The tables are opened with the listener and read anew from their start for each
/// connection: a process out of descriptors (a listener's hardest case) can still tell.
final class LoopbackPeer: Sendable {
    /// The tables' descriptors, those a listener on `host` needs (else -1): IPv4's, and
    /// IPv6's where the system has it.
    private let tcp: Int32
    private let tcp6: Int32
    /// For an IPv4 listener, IPv6's, opened by the first connection not found in IPv4's (a
    /// dual-stack client's socket, listed there under its IPv4-mapped address).
    private let mapped = Locked<Int32>(-1)

    /// Nil when a table it needs cannot be opened (no descriptor, no /proc); for `localhost`,
    /// IPv6's may be missing, as the listener's IPv6 socket then is.
    init?(for host: LoopbackRedirect.Host) {
        tcp = host == .ipv6 ? -1 : open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        tcp6 = host == .ipv4 ? -1 : open("/proc/net/tcp6", O_RDONLY | O_CLOEXEC)
        // Failing now, deinit closes what was opened.
        guard host == .ipv6 ? tcp6 >= 0 : tcp >= 0 else { return nil }
    }

    deinit {
        [tcp, tcp6, mapped.withLock { $0 }].filter { $0 >= 0 }.forEach { _ = close($0) }
    }

    /// Whether the other end of `fd`, a TCP connection just accepted, is a socket of this
    /// process's user that its process still holds open. False whenever that cannot be
    /// shown: no row for it, a row the kernel keeps for a socket its process has closed
    /// (its inode and user id read 0), an unreadable table.
    func isThisUser(_ fd: Int32) -> Bool {
        owner(of: fd) == getuid()
    }

    /// The user id of the process holding the other end of `fd`, or nil when no open socket
    /// of a process shows for it (see `isThisUser`).
    func owner(of fd: Int32) -> uid_t? {
        guard let ends = Ends(fd) else { return nil }
        if ends.isIPv6 { return owner(in: tcp6, local: ends.peer.text(), remote: ends.own.text()) }
        if let owner = owner(in: tcp, local: ends.peer.text(), remote: ends.own.text()) { return owner }
        let table = mapped.withLock { fd in
            if fd < 0 { fd = tcp6 >= 0 ? dup(tcp6) : open("/proc/net/tcp6", O_RDONLY | O_CLOEXEC) }
            return fd
        }
        return owner(in: table, local: ends.peer.text(mapped: true), remote: ends.own.text(mapped: true))
    }

    private func owner(in table: Int32, local: [UInt8], remote: [UInt8]) -> uid_t? {
        guard table >= 0, let contents = Self.readWhole(table) else { return nil }
        return Self.owner(in: contents, local: local, remote: remote)
    }

    /// One end of a connection: its address (4 bytes, or 16) and port.
    private struct End {
        let address: [UInt8]
        let port: UInt16

        /// `ADDRESS:PORT` as the kernel's table prints it, in upper-case hex: the address as
        /// the 32-bit words the kernel stores (in the machine's byte order), the port as a
        /// number. `mapped`: an IPv4 address as the IPv6 table lists it (::ffff:a.b.c.d).
        func text(mapped: Bool = false) -> [UInt8] {
            let bytes = mapped ? [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + address : address
            let words = stride(from: 0, to: bytes.count, by: 4).map { index in
                bytes[index..<(index + 4)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            }
            return words.flatMap { Self.hex($0, digits: 8) } + [UInt8(ascii: ":")] + Self.hex(UInt32(port), digits: 4)
        }

        private static func hex(_ value: UInt32, digits: Int) -> [UInt8] {
            (0..<digits).reversed().map { shift in
                let nibble = UInt8((value >> UInt32(shift * 4)) & 0xF)
                return nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
            }
        }
    }

    /// A connection's two ends.
    private struct Ends {
        let own: End
        let peer: End
        var isIPv6: Bool { own.address.count == 16 }

        init?(_ fd: Int32) {
            var own = sockaddr_storage()
            var peer = sockaddr_storage()
            guard Self.address(of: fd, into: &own, getsockname), Self.address(of: fd, into: &peer, getpeername),
                  own.ss_family == peer.ss_family, let ownEnd = Self.end(own), let peerEnd = Self.end(peer)
            else { return nil }
            (self.own, self.peer) = (ownEnd, peerEnd)
        }

        private static func address(
            of fd: Int32, into storage: inout sockaddr_storage,
            _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
        ) -> Bool {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            return withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
            } == 0
        }

        private static func end(_ storage: sockaddr_storage) -> End? {
            var storage = storage
            let family = Int32(storage.ss_family)
            return withUnsafeBytes(of: &storage) { raw -> End? in
                switch family {
                case AF_INET:
                    let address = raw.loadUnaligned(as: sockaddr_in.self)
                    return End(address: withUnsafeBytes(of: address.sin_addr) { Array($0) }, port: UInt16(bigEndian: address.sin_port))
                case AF_INET6:
                    let address = raw.loadUnaligned(as: sockaddr_in6.self)
                    return End(address: withUnsafeBytes(of: address.sin6_addr) { Array($0) }, port: UInt16(bigEndian: address.sin6_port))
                default:
                    return nil
                }
            }
        }
    }

    /// The user id of the live socket in a table's `contents` whose addresses are `local`
    /// and `remote`; nil when there is none. A row's fields: slot, local, remote, state,
    /// queues, timer, retransmits, uid, timeout, inode, ...
    static func owner(in contents: [UInt8], local: [UInt8], remote: [UInt8]) -> uid_t? {
        for line in contents.split(separator: UInt8(ascii: "\n")).dropFirst() {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 10)
            guard fields.count >= 10, fields[1].elementsEqual(local), fields[2].elementsEqual(remote) else { continue }
            // A socket its process has closed (TIME_WAIT, an orphan in FIN_WAIT2) has no inode
            // and reads as user 0: its owner is unknown, not root; a live row may follow.
            guard let inode = UInt64(decimal: fields[9]), inode != 0, let uid = UInt32(decimal: fields[7]) else { continue }
            return uid_t(uid)
        }
        return nil
    }

    /// The whole of an open /proc table as it is now (read from its start: the kernel makes
    /// it anew), or nil.
    private static func readWhole(_ fd: Int32) -> [UInt8]? {
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(contents.count)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return contents }
            contents += chunk[..<count]
        }
    }
}

private extension FixedWidthInteger where Self: UnsignedInteger {
    /// The value of ASCII decimal digits, or nil for anything else or an overflow.
    init?(decimal digits: ArraySlice<UInt8>) {
        guard !digits.isEmpty else { return nil }
        var value: Self = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            let (sum, carry) = shifted.addingReportingOverflow(Self(digit - UInt8(ascii: "0")))
            guard !carry else { return nil }
            value = sum
        }
        self = value
    }
}
