/* C tests of a component's own completion queue (portal_auth_completion_queue_new, named in
 * the options), against the Portal emulator in PORTAL_AUTH_TEST_API_HOST: two queues run by
 * two threads while the main thread runs the process's queue, 1,000 calls each, every
 * completion exactly once, on its own queue's thread, never inside its start; each
 * descriptor readable exactly while its queue has work; a session lent through a queue
 * invalidates through it; a queue freed with calls in flight, or from inside one of its
 * completions, loses none of them. Named cases (test_support.h's run_cases). Waits in poll
 * or on condition variables, never sleeps. */
#define _GNU_SOURCE
#include "session_support.h"

#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* A client of the emulator's open environment whose calls complete through `queue`. */
static portal_auth *client_of(portal_auth_completion_queue *queue) {
    portal_auth_options options = emulator_options("env-open");
    options.completion_queue = queue;
    portal_auth *client = NULL;
    if (portal_auth_new(&options, &client, NULL) != PORTAL_AUTH_OK) abort();
    return client;
}

static void bad_arguments(void) {
    CHECK(portal_auth_completion_queue_new(NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_completion_queue_fd(NULL) == -1);
    CHECK(portal_auth_completion_queue_run(NULL) == 0);
    portal_auth_completion_queue_free(NULL);
    /* An options struct of the size before the field: no queue, the I/O thread. */
    portal_auth_options options = emulator_options("env-open");
    options.size = offsetof(portal_auth_options, completion_queue);
    options.completion_queue = (portal_auth_completion_queue *)&options;  /* beyond size: never read */
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    outcome out = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    CHECK(out.code == PORTAL_AUTH_OK && !pthread_equal(out.thread, pthread_self()));
    portal_auth_free(client);
}

/* Its own descriptor, unreadable while idle; one call starts only in a run, completes in
   one, and leaves the descriptor unreadable. The process's queue sees none of it. */
static void one_call(void) {
    portal_auth_completion_queue *queue = NULL;
    CHECK(portal_auth_completion_queue_new(&queue) == PORTAL_AUTH_OK && queue != NULL);
    int fd = portal_auth_completion_queue_fd(queue);
    CHECK(fd >= 0 && fd != portal_auth_completion_fd());
    CHECK(!readable(fd) && portal_auth_completion_queue_run(queue) == 0);
    portal_auth *client = client_of(queue);
    outcome out = {0};
    inside_start = 1;
    CHECK(portal_auth_get_methods(client, on_methods, &out, NULL) == PORTAL_AUTH_OK);
    inside_start = 0;
    CHECK(readable(fd));
    CHECK(run_queue_until(queue, &out.calls, 1));
    CHECK(out.calls == 1 && out.code == PORTAL_AUTH_OK && !out.inside_start && pthread_equal(out.thread, pthread_self()));
    CHECK(!readable(fd));
    CHECK(portal_auth_run_completions() == 0 && !readable(portal_auth_completion_fd()));
    portal_auth_free(client);
    portal_auth_completion_queue_free(queue);
}

/* Two components, each with its queue and client on a thread of its own, and the process's
   queue run by the main thread: 1,000 calls each. */
enum { CALLS = 1000 };

typedef struct {
    portal_auth_completion_queue *queue;
    outcome outcomes[CALLS];
    int reached;   /* every call completed in time */
    int finished_fd;  /* an eventfd the thread signals as it ends */
} component;

static void *run_component(void *arg) {
    component *self = arg;
    portal_auth *client = client_of(self->queue);
    inside_start = 1;
    for (int index = 0; index < CALLS; index++) {
        if (portal_auth_get_methods(client, on_methods, &self->outcomes[index], NULL) != PORTAL_AUTH_OK) abort();
    }
    inside_start = 0;
    int fd = portal_auth_completion_queue_fd(self->queue);
    for (;;) {
        int finished = 0;
        pthread_mutex_lock(&lock);
        for (int index = 0; index < CALLS; index++) finished += self->outcomes[index].calls > 0;
        pthread_mutex_unlock(&lock);
        if (finished == CALLS) { self->reached = 1; break; }
        if (!wait_readable(fd)) break;
        portal_auth_completion_queue_run(self->queue);
    }
    portal_auth_free(client);
    uint64_t one = 1;
    if (write(self->finished_fd, &one, sizeof one) != sizeof one) abort();
    return NULL;
}

static void two_components(void) {
    static component components[2];
    pthread_t threads[2];
    int finished_fd = eventfd(0, EFD_CLOEXEC);
    for (int which = 0; which < 2; which++) {
        components[which].finished_fd = finished_fd;
        CHECK(portal_auth_completion_queue_new(&components[which].queue) == PORTAL_AUTH_OK);
        CHECK(pthread_create(&threads[which], NULL, run_component, &components[which]) == 0);
    }
    /* Meanwhile the main thread runs the process's queue, with calls of its own. */
    portal_auth *process_client = client_of(NULL);
    CHECK(portal_auth_set_completion_queue(process_client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    int process_fd = portal_auth_completion_fd();
    outcome mine[100] = {{0}};
    for (int index = 0; index < 100; index++) {
        CHECK(portal_auth_get_methods(process_client, on_methods, &mine[index], NULL) == PORTAL_AUTH_OK);
    }
    /* Until both threads have ended (the eventfd's count reaches 2). */
    for (uint64_t ended = 0; ended < 2;) {
        struct pollfd watched[2] = { { .fd = process_fd, .events = POLLIN }, { .fd = finished_fd, .events = POLLIN } };
        if (poll(watched, 2, 60000) <= 0) break;
        if (watched[0].revents & POLLIN) portal_auth_run_completions();
        uint64_t count = 0;
        if ((watched[1].revents & POLLIN) && read(finished_fd, &count, sizeof count) == sizeof count) ended += count;
    }
    close(finished_fd);
    for (int index = 0; index < 100; index++) CHECK(run_until(process_fd, &mine[index].calls, 1));
    for (int which = 0; which < 2; which++) {
        CHECK(pthread_join(threads[which], NULL) == 0);
        component *self = &components[which];
        CHECK(self->reached);
        int once = 0, own_thread = 0, succeeded = 0, outside_start = 0;
        for (int index = 0; index < CALLS; index++) {
            outcome *out = &self->outcomes[index];
            once += out->calls == 1;
            own_thread += pthread_equal(out->thread, threads[which]) != 0;
            succeeded += out->code == PORTAL_AUTH_OK;
            outside_start += !out->inside_start;
        }
        CHECK(once == CALLS && own_thread == CALLS && succeeded == CALLS && outside_start == CALLS);
        CHECK(!readable(portal_auth_completion_queue_fd(self->queue)));
        portal_auth_completion_queue_free(self->queue);
    }
    for (int index = 0; index < 100; index++) {
        CHECK(mine[index].calls == 1 && pthread_equal(mine[index].thread, pthread_self()));
    }
    portal_auth_free(process_client);
}

/* A session lent through a queue invalidates through it, also once its client is freed. */
static void sessions_invalidate_through_it(void) {
    portal_auth_completion_queue *queue = NULL;
    CHECK(portal_auth_completion_queue_new(&queue) == PORTAL_AUTH_OK);
    portal_auth *client = client_of(queue);
    char url[512];
    grant_redirect("env-open", "component-queue@example.com", url, sizeof url);
    outcome signed_in = {0}, invalidated = {0};
    CHECK(portal_auth_handle_redirect(client, url, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
    CHECK(run_queue_until(queue, &signed_in.calls, 1));
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.session != NULL);
    portal_auth_free(client);
    if (signed_in.session) {
        CHECK(portal_auth_session_invalidate(signed_in.session, on_done, &invalidated, NULL) == PORTAL_AUTH_OK);
        CHECK(run_queue_until(queue, &invalidated.calls, 1));
        CHECK(invalidated.code == PORTAL_AUTH_OK && pthread_equal(invalidated.thread, pthread_self()));
        portal_auth_session_release(signed_in.session);
    }
    portal_auth_completion_queue_free(queue);
}

/* Freed with calls in flight and completions queued: each still completes exactly once, on
   a library thread, with nobody running the queue. */
static void freed_with_calls_in_flight(void) {
    enum { IN_FLIGHT = 20 };
    portal_auth_completion_queue *queue = NULL;
    CHECK(portal_auth_completion_queue_new(&queue) == PORTAL_AUTH_OK);
    portal_auth *client = client_of(queue);
    static outcome outcomes[IN_FLIGHT];
    int completed = 0;
    for (int index = 0; index < IN_FLIGHT; index++) {
        CHECK(portal_auth_get_methods(client, on_methods, &outcomes[index], NULL) == PORTAL_AUTH_OK);
    }
    portal_auth_completion_queue_run(queue);  /* some requests on the wire, maybe some done */
    portal_auth_completion_queue_free(queue);
    /* The client still names it: a call started now completes the same way. */
    outcome later = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &later, NULL) == PORTAL_AUTH_OK);
    for (int index = 0; index < IN_FLIGHT; index++) {
        CHECK(wait_count_within(&outcomes[index].calls, 1, 30));
        completed += outcomes[index].calls == 1 && outcomes[index].code == PORTAL_AUTH_OK;
    }
    CHECK(wait_count_within(&later.calls, 1, 30) && later.code == PORTAL_AUTH_OK);
    CHECK(completed == IN_FLIGHT);
    portal_auth_free(client);
}

/* A completion frees the queue that runs it; the run goes on with what it had taken. */
typedef struct { outcome out; portal_auth_completion_queue *queue; } freeing;

static void on_freeing(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)methods;
    freeing *self = user_data;
    portal_auth_completion_queue_free(self->queue);
    finish(&self->out, error);
}

static void freed_inside_its_completion(void) {
    freeing first = {0};
    CHECK(portal_auth_completion_queue_new(&first.queue) == PORTAL_AUTH_OK);
    portal_auth *client = client_of(first.queue);
    outcome other = {0};
    CHECK(portal_auth_get_methods(client, on_freeing, &first, NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_get_methods(client, on_methods, &other, NULL) == PORTAL_AUTH_OK);
    CHECK(run_queue_until(first.queue, &first.out.calls, 1));
    /* `first.queue` is freed now: the other call completes all the same. */
    CHECK(wait_count_within(&other.calls, 1, 30) && other.code == PORTAL_AUTH_OK);
    CHECK(first.out.calls == 1 && other.calls == 1);
    portal_auth_free(client);
}

static const test_case cases[] = {
    { "bad_arguments", bad_arguments, NULL },
    { "one_call", one_call, NULL },
    { "two_components", two_components, NULL },
    { "sessions_invalidate_through_it", sessions_invalidate_through_it, NULL },
    { "freed_with_calls_in_flight", freed_with_calls_in_flight, NULL },
    { "freed_inside_its_completion", freed_inside_its_completion, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "component_queue_test", cases);
}
