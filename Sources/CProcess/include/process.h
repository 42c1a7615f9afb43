/* The process the library runs in, as the core sees it through fork(): a count of the forks
 * this process is a child of, the lock under which the core makes its per-process state, and
 * the completion queue's descriptors, which a child renews in place (docs/desktop.md
 * "fork()"). Only the forking thread lives on in a child: state that the parent's other
 * threads left mid-way (held locks, pending work, their threads themselves) is never touched
 * there; the core makes its state anew instead, on first use. */
#ifndef PORTAL_AUTH_PROCESS_H
#define PORTAL_AUTH_PROCESS_H

#include <stdint.h>

/* From now on (once per process; any thread), a forked child counts itself a new
   generation before fork() returns in it. */
void pa_fork_watch(void);

/* The generation of this process: 0 where the library was loaded, one more in each child
   forked after pa_fork_watch. */
uint64_t pa_fork_generation(void);

/* The lock under which per-process state is made (recursive: making one piece may make
   another). A child starts with it free, whoever held it in the parent. */
void pa_process_lock(void);
void pa_process_unlock(void);

/* Keeps the completion queue's descriptors: an epoll set and the eventfd in it, each watched
   for EPOLLIN with its own number as data. In a forked child the same numbers name a new,
   empty epoll set holding a new, unsignalled eventfd, the child's own, so that a host still
   watching the number watches the child's queue, and nothing the child does reaches the
   parent's. Returns 1 with them once kept (renewed in a child), 0 when none are. */
void pa_fork_keep_queue(int epoll, int eventfd);
int pa_fork_kept_queue(int *epoll, int *eventfd);

/* The library as a program (Sources/CProgramEntry): the dynamic loader that runs it, and its
   own file (an absolute path), or NULL where either is unknown (another architecture; a
   library not loaded from a file by its path; a program the core is linked into). */
const char *pa_program_interpreter(void);
const char *pa_program_path(void);

#endif
