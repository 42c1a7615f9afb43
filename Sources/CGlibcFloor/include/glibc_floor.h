/* What keeps libportalauth.so loadable on an older glibc than the one it is built on: the
 * oldest glibc it needs is the newest GLIBC_ symbol version it imports (objdump -T), which
 * scripts/test-library.sh checks is not above PORTAL_AUTH_GLIBC_FLOOR. scripts/build-library.sh
 * links it against glibc 2.31's libraries (scripts/glibc-sysroot.sh), so each import binds
 * to the oldest version that has it; what 2.31 lacks is here. */
#ifndef PORTAL_AUTH_GLIBC_FLOOR_H
#define PORTAL_AUTH_GLIBC_FLOOR_H

#include <spawn.h>
#include <stddef.h>

/* The oldest glibc the library is said to load on, and is tested on (Debian 11's): no symbol
   it imports is of a newer GLIBC_ version. The wheel's manylinux tag follows from the
   library's symbols (bindings/python/setup.py), and is this one. */
#define PORTAL_AUTH_GLIBC_FLOOR "2.31"

/* Fills `buffer` with `length` bytes from the kernel's random source (getrandom(2), in
   glibc since 2.25; arc4random_buf is 2.36): 0, or -1 when the kernel gave none. */
int pa_random_bytes(void *buffer, size_t length);

/* Has the spawned process start with every descriptor from `from` up closed:
   posix_spawn_file_actions_addclosefrom_np where glibc has it (2.34), else a close action for
   each descriptor open now (/proc/self/fd), which leaves out one another thread opens
   meanwhile without close-on-exec. 0, or an errno value. */
int pa_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

#endif
