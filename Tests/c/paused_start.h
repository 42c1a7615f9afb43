/* The worst moment of a call started on a thread that does not run the completion queue,
 * made certain: the starting thread is paused just after the library has signalled the queue
 * (an 8-byte write, the eventfd's), until a run of the queue that began after that signal
 * has ended, or the call has completed in a run already under way, so that the call can
 * complete on the thread that runs the queue before the starting function has returned. A
 * preempted thread does the same, once in a great while. One thread at a time starts paused
 * calls: any paused call's completion ends the wait.
 *
 * The test program defines write() and portal_auth_run_completions() itself; the library's
 * calls of each reach it first (symbol interposition) and go on to the real ones. Include
 * this header in one test program only, with _GNU_SOURCE defined (RTLD_NEXT).
 *
 *   pause_starts(1); start the call; pause_starts(0);   on the starting thread
 *   paused_call_completed();                           in the call's callback */
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
static long runs_begun, runs_ended, calls_completed;

static inline void pause_starts(int on) { pausing_starts = on; }

/* Called by a paused call's callback: its start waits no longer. */
static inline void paused_call_completed(void) {
    pthread_mutex_lock(&runs_lock);
    calls_completed++;
    pthread_cond_broadcast(&runs_changed);
    pthread_mutex_unlock(&runs_lock);
}

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
    if (!pausing_starts || size != sizeof(uint64_t)) return real(fd, buffer, size);
    /* Taken before the signal: a run begun after this point drains the call's completion,
       queued already; one begun before may have drained it too, which its callback tells. */
    pthread_mutex_lock(&runs_lock);
    long after = runs_begun + 1, completed = calls_completed;
    pthread_mutex_unlock(&runs_lock);
    ssize_t written = real(fd, buffer, size);
    /* Bounded: a write that no run answers (none is due) costs this thread 5 s, no more. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&runs_lock);
    while (runs_ended < after && calls_completed == completed
           && pthread_cond_timedwait(&runs_changed, &runs_lock, &deadline) == 0) {}
    pthread_mutex_unlock(&runs_lock);
    return written;
}

#endif
