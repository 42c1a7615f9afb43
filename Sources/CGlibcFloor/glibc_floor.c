/* See include/glibc_floor.h. */
#include "glibc_floor.h"

#include <errno.h>
#include <math.h>
#include <sys/random.h>

int pa_random_bytes(void *buffer, size_t length) {
    unsigned char *next = buffer;
    while (length > 0) {
        ssize_t got = getrandom(next, length, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        next += got;
        length -= (size_t)got;
    }
    return 0;
}

/* The Swift Glibc module's overlay calls hypotf, whose default version is glibc 2.35's: this
   definition (local to the library, which exports only portal_auth_*) is bound instead. A
   float's square and sum are exact in double, so the result is hypotf's to within rounding. */
float hypotf(float x, float y) {
    double wide_x = x, wide_y = y;
    return (float)sqrt(wide_x * wide_x + wide_y * wide_y);
}
