#ifndef PORTAL_AUTH_CPOSIX_SHIM_H
#define PORTAL_AUTH_CPOSIX_SHIM_H

/* Linux calls the core uses that the toolchain's Glibc module leaves out. */

#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

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

/* A GNU extension (glibc 2.34): the spawned process starts with every descriptor from
   `from` up closed, whoever opened it and whether or not it was close-on-exec. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

#endif
