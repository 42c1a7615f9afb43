import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// Who holds the other end of a loopback TCP connection (docs/desktop.md "Browser sign-in",
/// only this user's connections). Portal's redirect carries no PKCE or `state`: whoever receives it owns the
/// session. So a loopback listener serves only connections whose other end belongs to this
/// process's user; the user's browser runs as the user.
///
/// TCP carries no credentials, but on Linux the kernel's socket diagnostics (NETLINK_SOCK_DIAG)
/// tell who made a socket of the network namespace: the peer's socket is the one whose own
/// end is the peer's address and port and whose remote end is this one's, asked for by that
/// exact pair, so one lookup costs the same however many sockets the machine has.
///
/// The kernel tells the user as this process's user namespace sees it, and one that does not
/// map a user shows it as the overflow uid. A process that itself runs as the overflow uid
/// (`unshare -U` with no mapping, or its user mapped to it) cannot tell any user it does not
/// map from its own: it serves no one.
///
/// The diagnostics socket is opened with the listener, and the overflow uid read then: a
/// process out of descriptors (a listener's hardest case) can still tell.
final class LoopbackPeer: Sendable {
    /// Who a connection's other end is.
    enum Owner: Equatable {
        /// A socket this process's user made and its process still holds open.
        case thisUser
        /// Another user's socket (its uid), or one no open socket of a process shows for
        /// (nil: none found, or one its process has closed).
        case anotherUser(uid_t?)
        /// A socket that reads as the overflow uid, which is also this process's own: its
        /// user cannot be told from this one.
        case indistinct(overflow: uid_t)
    }

    private let diagnostics: Int32
    private let overflowUid: uid_t

    /// Opens the diagnostics socket and asks it about `listening`, a socket listening now.
    /// - Throws: `ListenerError` when no socket can be made or the kernel does not answer
    ///   (no socket diagnostics: not built, its module not loadable, or a sandbox that denies
    ///   them): the listener could not tell whose connections it gets.
    init(answeringFor listening: Int32) throws(ListenerError) {
        diagnostics = pa_socket_diagnostics_open()
        guard diagnostics >= 0 else {
            throw ListenerError(kind: .system, message: "no descriptor for the listener (errno \(errno))")
        }
        overflowUid = UserNamespace.current().overflowUid
        var found = pa_tcp_socket()
        let answer = pa_tcp_listener_find(diagnostics, listening, &found)
        guard answer == 1 else {
            let why = answer == 0 ? "do not know its own listening socket" : "gave no answer (errno \(errno))"
            throw ListenerError(kind: .system, message: "the kernel's socket diagnostics (NETLINK_SOCK_DIAG) \(why): "
                                + "the listener could not tell whose connections it gets")
        }
    }

    deinit {
        _ = close(diagnostics)
    }

    /// Who holds the other end of `fd`, a TCP connection just accepted. Anything that does not
    /// show this user's live socket is not this user: no socket found, a socket its process
    /// has closed (inode 0), no answer.
    func owner(of fd: Int32) -> Owner {
        var found = pa_tcp_socket()
        guard pa_tcp_peer_find(diagnostics, fd, &found) == 1, found.inode != 0 else { return .anotherUser(nil) }
        guard found.uid == getuid() else { return .anotherUser(found.uid) }
        return found.uid == overflowUid ? .indistinct(overflow: found.uid) : .thisUser
    }
}
