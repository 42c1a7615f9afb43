/* The worst moment of a call started on a thread that does not run the completion queue,
 * made certain: the starting thread is paused just after the library has signalled the queue
 * (an 8-byte write, the eventfd's), until a run of the queue that began after that signal
 * has ended, so that the call can complete on the thread that runs the queue before the
 * starting function has returned. A preempted thread does the same, once in a great while.
 *
 * The test program defines write() and portal_auth_run_completions() itself; the library's
 * calls of each reach it first (symbol interposition) and go on to the real ones. Include
 * this header in one test program only, with _GNU_SOURCE defined (RTLD_NEXT).
 *
 *   pause_starts(1); start the call; pause_starts(0);   on the starting thread */
#ifndef PORTAL_AUTH_PAUSED_START_H
#define PORTAL_AUTH_PAUSED_START_H

#include <dlfcn.h>
#include <portal_auth.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static __thread int pausing_starts;
static pthread_mutex_t runs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t runs_changed = PTHREAD_COND_INITIALIZER;
static long runs_begun, runs_ended;

static inline void pause_starts(int on) { pausing_starts = on; }

/* Real calls, found next in the lookup order (the library's and libc's). */
static void *real_function(const char *name) {
    void *found = dlsym(RTLD_NEXT, name);
    if (!found) abort();
    return found;
}

size_t portal_auth_run_completions(void) {
    static size_t (*real)(void);
    if (!real) *(void **)&real = real_function("portal_auth_run_completions");  /* POSIX's cast of dlsym */
    pthread_mutex_lock(&runs_lock);
    long run = ++runs_begun;
    pthread_mutex_unlock(&runs_lock);
    size_t ran = real();
    pthread_mutex_lock(&runs_lock);
    if (run > runs_ended) runs_ended = run;
    pthread_cond_broadcast(&runs_changed);
    pthread_mutex_unlock(&runs_lock);
    return ran;
}

ssize_t write(int fd, const void *buffer, size_t size) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) *(void **)&real = real_function("write");
    ssize_t written = real(fd, buffer, size);
    if (pausing_starts && size == sizeof(uint64_t)) {
        /* Bounded: a write that no run answers (none is due) costs this thread 5 s, no more. */
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 5;
        pthread_mutex_lock(&runs_lock);
        long after = runs_begun + 1;
        while (runs_ended < after && pthread_cond_timedwait(&runs_changed, &runs_lock, &deadline) == 0) {}
        pthread_mutex_unlock(&runs_lock);
    }
    return written;
}

#endif
