#ifndef PORTAL_AUTH_CPOSIX_SOCKET_DIAGNOSTICS_H
#define PORTAL_AUTH_CPOSIX_SOCKET_DIAGNOSTICS_H

/* The kernel's socket diagnostics (NETLINK_SOCK_DIAG, as `ss` uses them): who made one TCP
   socket of this network namespace, asked for by its exact addresses and ports. The
   loopback listener's owner check (docs/desktop.md "Browser sign-in", its connections). */

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

/* A socket of the kernel's socket diagnostics, close-on-exec; -1 with errno. */
static inline int pa_socket_diagnostics_open(void) {
    return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

/* What the kernel says of a TCP socket: the user id of the process that made it, as this
   process's user namespace sees it (a user it does not map reads as the overflow uid), and
   its inode, 0 once no process holds it (a closed socket the kernel keeps for a while). */
struct pa_tcp_socket { uid_t uid; uint64_t inode; };

/* The TCP socket whose own end is `local` and whose peer is `remote` (both sockaddr_in or
   both sockaddr_in6; a pair of IPv4-mapped IPv6 addresses finds an IPv4 socket too, and an
   IPv4 pair a dual-stack socket's IPv4 connection), asked of `diagnostics`: 1 when found
   (`found` set), 0 when there is none, -1 with errno when the kernel gave no answer (no
   handler: errno ENOENT is then the same as "none", so a caller checks at start, on a
   socket it knows exists). A remote address and port of zero finds a listening socket.
   One request, answered before sendto returns, so the reply is read without waiting. */
static inline int pa_tcp_socket_find(int diagnostics, const struct sockaddr *local, const struct sockaddr *remote,
                                     struct pa_tcp_socket *found) {
    static uint32_t last_sequence;
    struct { struct nlmsghdr header; struct inet_diag_req_v2 request; } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.header.nlmsg_seq = __atomic_add_fetch(&last_sequence, 1, __ATOMIC_RELAXED);
    message.request.sdiag_family = (uint8_t)local->sa_family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0U;
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct inet_diag_sockid *id = &message.request.id;
    if (local->sa_family == AF_INET && remote->sa_family == AF_INET) {
        const struct sockaddr_in *own = (const struct sockaddr_in *)local, *peer = (const struct sockaddr_in *)remote;
        memcpy(id->idiag_src, &own->sin_addr, sizeof own->sin_addr);
        memcpy(id->idiag_dst, &peer->sin_addr, sizeof peer->sin_addr);
        id->idiag_sport = own->sin_port;
        id->idiag_dport = peer->sin_port;
    } else if (local->sa_family == AF_INET6 && remote->sa_family == AF_INET6) {
        const struct sockaddr_in6 *own = (const struct sockaddr_in6 *)local, *peer = (const struct sockaddr_in6 *)remote;
        memcpy(id->idiag_src, &own->sin6_addr, sizeof own->sin6_addr);
        memcpy(id->idiag_dst, &peer->sin6_addr, sizeof peer->sin6_addr);
        id->idiag_sport = own->sin6_port;
        id->idiag_dport = peer->sin6_port;
    } else {
        errno = EAFNOSUPPORT;
        return -1;
    }
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    ssize_t sent;
    do sent = sendto(diagnostics, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel);
    while (sent < 0 && errno == EINTR);
    if (sent < 0) return -1;

    union { struct nlmsghdr header; char bytes[4096]; } reply;
    for (;;) {
        ssize_t length = recv(diagnostics, &reply, sizeof reply, MSG_DONTWAIT);
        if (length < 0 && errno == EINTR) continue;
        if (length < 0) return -1;  /* EAGAIN: the reply was lost (ENOBUFS); no answer */
        for (struct nlmsghdr *header = &reply.header; NLMSG_OK(header, (size_t)length); header = NLMSG_NEXT(header, length)) {
            if (header->nlmsg_seq != message.header.nlmsg_seq) continue;  /* an earlier request's */
            if (header->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *error = NLMSG_DATA(header);
                if (header->nlmsg_len < NLMSG_LENGTH(sizeof *error) || error->error == 0) { errno = EPROTO; return -1; }
                if (error->error == -ENOENT) return 0;
                errno = -error->error;
                return -1;
            }
            const struct inet_diag_msg *socket_found = NLMSG_DATA(header);
            if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY || header->nlmsg_len < NLMSG_LENGTH(sizeof *socket_found)) {
                errno = EPROTO;
                return -1;
            }
            /* An exact request that finds no connection falls back to a socket listening on
               the local end: not the one asked for, unless a listener was. */
            if (socket_found->id.idiag_sport != id->idiag_sport || socket_found->id.idiag_dport != id->idiag_dport) return 0;
            found->uid = socket_found->idiag_uid;
            found->inode = socket_found->idiag_inode;
            return 1;
        }
    }
}

/* The socket at the other end of `connection`, a TCP connection of this network namespace
   (over loopback, both ends are): as pa_tcp_socket_find, and -1 with errno when the
   connection's addresses cannot be read. */
static inline int pa_tcp_peer_find(int diagnostics, int connection, struct pa_tcp_socket *found) {
    struct sockaddr_storage own, peer;
    socklen_t own_length = sizeof own, peer_length = sizeof peer;
    if (getsockname(connection, (struct sockaddr *)&own, &own_length) != 0
        || getpeername(connection, (struct sockaddr *)&peer, &peer_length) != 0) return -1;
    return pa_tcp_socket_find(diagnostics, (struct sockaddr *)&peer, (struct sockaddr *)&own, found);
}

/* The listening socket `listening` itself, as pa_tcp_socket_find: whether the kernel's
   socket diagnostics answer at all. */
static inline int pa_tcp_listener_find(int diagnostics, int listening, struct pa_tcp_socket *found) {
    struct sockaddr_storage own, anyone;
    socklen_t own_length = sizeof own;
    if (getsockname(listening, (struct sockaddr *)&own, &own_length) != 0) return -1;
    memset(&anyone, 0, sizeof anyone);
    anyone.ss_family = own.ss_family;
    return pa_tcp_socket_find(diagnostics, (struct sockaddr *)&own, (struct sockaddr *)&anyone, found);
}

#endif
