/* See include/glibc_floor.h. */
#define _GNU_SOURCE
#include "glibc_floor.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
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

typedef int (*close_from_function)(posix_spawn_file_actions_t *, int);

int pa_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    close_from_function close_from =
        (close_from_function)(void (*)(void))dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addclosefrom_np");
    if (close_from) return close_from(actions, from);
    DIR *open_descriptors = opendir("/proc/self/fd");
    if (!open_descriptors) return errno;
    int listing = dirfd(open_descriptors), status = 0;
    struct dirent *entry;
    while (status == 0 && (entry = readdir(open_descriptors))) {
        char *end;
        long fd = strtol(entry->d_name, &end, 10);
        if (*end || end == entry->d_name || fd < from || fd == listing) continue;
        status = posix_spawn_file_actions_addclose(actions, (int)fd);
    }
    closedir(open_descriptors);
    return status;
}

/* libstdc++'s (GCC 11, GLIBCXX_3.4.29), called by the Swift runtime's inline C++ when an
   array's size overflows: defined here, so the library needs no libstdc++ newer than
   GCC 10's. It never returns, as libstdc++'s (which throws into code built without
   exceptions, where that ends the process too). */
void _ZSt28__throw_bad_array_new_lengthv(void) {
    abort();
}
