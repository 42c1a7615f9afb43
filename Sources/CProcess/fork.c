/* fork() and the library's process-wide state: see include/process.h. */
#define _GNU_SOURCE
#include "process.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define PA_HIDDEN __attribute__((visibility("hidden")))

static pthread_once_t watching = PTHREAD_ONCE_INIT;
static _Atomic uint64_t generation;
static pthread_mutex_t process_lock;
/* The queue's descriptors, -1 until kept; written under process_lock, and in a child. */
static int queue_epoll = -1, queue_event = -1;

static void make_process_lock(void) {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&process_lock, &attributes);
    pthread_mutexattr_destroy(&attributes);
}

/* In the child: the numbers get objects of the child's own (dup3 replaces each at once). If
   that fails, the numbers are closed and forgotten, never left shared with the parent: the
   child's queue then takes new ones. */
static void renew_queue(void) {
    if (queue_epoll < 0) return;
    int event = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event watch = { .events = EPOLLIN, .data.fd = queue_event };
    int renewed = event >= 0 && poller >= 0 && dup3(event, queue_event, O_CLOEXEC) >= 0
                  && epoll_ctl(poller, EPOLL_CTL_ADD, queue_event, &watch) == 0 && dup3(poller, queue_epoll, O_CLOEXEC) >= 0;
    if (event >= 0) close(event);
    if (poller >= 0) close(poller);
    if (!renewed) {
        close(queue_epoll);
        close(queue_event);
        queue_epoll = queue_event = -1;
    }
}

/* Held across fork: the child reads the queue's descriptors whole, never half-written. */
static void before_fork(void) { pthread_mutex_lock(&process_lock); }

static void in_parent(void) { pthread_mutex_unlock(&process_lock); }

/* Runs in the child before fork() returns there, on its one thread. */
static void in_child(void) {
    make_process_lock();
    renew_queue();
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

static void watch(void) {
    make_process_lock();
    pthread_atfork(before_fork, in_parent, in_child);
}

PA_HIDDEN void pa_fork_watch(void) { pthread_once(&watching, watch); }

PA_HIDDEN uint64_t pa_fork_generation(void) { return atomic_load_explicit(&generation, memory_order_acquire); }

PA_HIDDEN void pa_process_lock(void) { pthread_mutex_lock(&process_lock); }

PA_HIDDEN void pa_process_unlock(void) { pthread_mutex_unlock(&process_lock); }

PA_HIDDEN void pa_fork_keep_queue(int epoll, int eventfd) {
    pthread_mutex_lock(&process_lock);
    queue_epoll = epoll;
    queue_event = eventfd;
    pthread_mutex_unlock(&process_lock);
}

PA_HIDDEN int pa_fork_kept_queue(int *epoll, int *eventfd) {
    pthread_mutex_lock(&process_lock);
    int kept = queue_epoll >= 0;
    if (kept) {
        *epoll = queue_epoll;
        *eventfd = queue_event;
    }
    pthread_mutex_unlock(&process_lock);
    return kept;
}
