/* What keeps libportalauth.so loadable on an older glibc than the one it is built on: the
 * oldest glibc it needs is the newest GLIBC_ symbol version it imports (objdump -T), which
 * scripts/test-library.sh checks against PORTAL_AUTH_GLIBC_FLOOR. */
#ifndef PORTAL_AUTH_GLIBC_FLOOR_H
#define PORTAL_AUTH_GLIBC_FLOOR_H

#include <stddef.h>

/* The oldest glibc the library loads on (the wheel's manylinux tag follows from the
   library's symbols, not from this). */
#define PORTAL_AUTH_GLIBC_FLOOR "2.34"

/* Fills `buffer` with `length` bytes from the kernel's random source (getrandom(2), in
   glibc since 2.25; arc4random_buf is 2.36): 0, or -1 when the kernel gave none. */
int pa_random_bytes(void *buffer, size_t length);

#endif
