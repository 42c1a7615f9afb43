#ifndef PORTAL_AUTH_CPOSIX_SHIM_H
#define PORTAL_AUTH_CPOSIX_SHIM_H

/* Linux calls the core uses that the toolchain's Glibc module leaves out. */

#include <spawn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/types.h>

/* O_PATH, a Linux open flag the Glibc module (built without _GNU_SOURCE) leaves out: a
   descriptor that names a file without reading it (fstat, the folder of an *at call), and
   with O_NOFOLLOW the symlink itself. */
#include <fcntl.h>
#define PA_O_PATH __O_PATH

/* A GNU extension; the Glibc module is built without _GNU_SOURCE, so declare it here. */
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/* Accepts a connection whose descriptor is non-blocking and close-on-exec from the start,
   so a process spawned meanwhile (the browser) never inherits it. */
static inline int pa_accept_nonblocking(int fd) {
    return accept4(fd, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* A GNU extension: a pipe whose two ends are close-on-exec from the start, so a process
   spawned meanwhile never inherits them. */
extern int pipe2(int fds[2], int flags);

/* The user id of the process at the other end of a connected Unix socket, as the kernel
   recorded it (SO_PEERCRED): 0 on success. struct ucred is a GNU declaration, so its layout
   is spelled here. */
struct pa_peer_credentials { pid_t pid; uid_t uid; gid_t gid; };
static inline int pa_peer_uid(int fd, uid_t *uid) {
    struct pa_peer_credentials credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 || length != sizeof credentials) return -1;
    *uid = credentials.uid;
    return 0;
}

/* Takes an exclusive lock on an open file without waiting (flock): 0 when taken, -1 with
   errno EWOULDBLOCK when another open file description holds it. Held until pa_unlock, or
   until every descriptor of the open file is closed: a forked child's copy too. */
static inline int pa_try_lock(int fd) {
    return flock(fd, LOCK_EX | LOCK_NB);
}

/* Releases pa_try_lock's lock, whoever else holds a descriptor of the open file. */
static inline int pa_unlock(int fd) {
    return flock(fd, LOCK_UN);
}

/* struct epoll_event is packed on x86_64, which Swift does not import faithfully: the
   completion queue's epoll set is reached through these. Each entry's data is its fd. */

/* Watches `fd` for `events` (EPOLLIN, EPOLLOUT; level-triggered), or changes what it is
   watched for: 0, or -1 with errno. */
static inline int pa_epoll_watch(int epoll, int fd, unsigned events) {
    struct epoll_event event = { .events = events, .data.fd = fd };
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

/* Stops watching `fd` (ignored when it is not watched). */
static inline void pa_epoll_unwatch(int epoll, int fd) {
    struct epoll_event unused = { 0 };
    (void)epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &unused);
}

/* The watched descriptors ready now, without waiting: up to `capacity` (at least 1) of
   them into `fds` and `events`; returns how many, or -1 with errno. */
static inline int pa_epoll_ready(int epoll, int *fds, unsigned *events, int capacity) {
    struct epoll_event small[16];
    struct epoll_event *ready = capacity <= 16 ? small : malloc(sizeof *ready * (size_t)capacity);
    if (!ready) return -1;
    int count;
    do count = epoll_wait(epoll, ready, capacity, 0); while (count < 0 && errno == EINTR);
    for (int i = 0; i < count; i++) {
        fds[i] = ready[i].data.fd;
        events[i] = ready[i].events;
    }
    if (ready != small) free(ready);
    return count;
}

/* Sets a timerfd to expire once, `milliseconds` from now (at least 1), or disarms it for a
   negative value: 0, or -1 with errno. */
static inline int pa_timer_arm(int timer, long milliseconds) {
    struct itimerspec when = { 0 };
    if (milliseconds >= 0) {
        if (milliseconds == 0) milliseconds = 1;
        when.it_value.tv_sec = milliseconds / 1000;
        when.it_value.tv_nsec = (milliseconds % 1000) * 1000000L;
    }
    return timerfd_settime(timer, 0, &when, NULL);
}

#endif
