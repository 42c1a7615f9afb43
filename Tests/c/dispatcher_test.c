/* C tests of the main-loop contract of a host dispatcher (portal_auth_set_dispatcher), against
 * the Portal emulator in PORTAL_AUTH_TEST_API_HOST: its destroy function is called exactly
 * once, once no job of it can run any more (at once when nothing is in flight, else after the
 * host has run the last job handed to it, whether the dispatcher was replaced or the client
 * freed), and at once for a NULL client or a NULL dispatcher; a session's invalidation
 * completes through the dispatcher of the client that lent it, as that client is set at the
 * time, while it lives, and once it is freed on a library thread, or from the completion queue
 * when the session was lent through it. Named cases (test_support.h's run_cases). Waits on
 * condition variables or in poll, never sleeps. */
#define _GNU_SOURCE
#include "session_support.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

/* A host dispatcher: jobs wait in a list until the main thread runs them. */
typedef struct job {
    portal_auth_job_fn run;
    void *data;
    struct job *next;
} job;

typedef struct {
    int dispatched;  /* jobs handed to it */
    int destroyed;   /* calls of its destroy function: must end at exactly 1 */
    job *jobs;       /* waiting, newest first */
} dispatcher;

static void dispatch(void *dispatcher_data, portal_auth_job_fn run, void *data) {
    dispatcher *host = dispatcher_data;
    job *entry = malloc(sizeof *entry);
    if (!entry) abort();
    pthread_mutex_lock(&lock);
    *entry = (job){ run, data, host->jobs };
    host->jobs = entry;
    host->dispatched++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void destroy(void *dispatcher_data) {
    dispatcher *host = dispatcher_data;
    count_call(&host->destroyed);
}

/* Waits up to 30 s (far beyond any call here) for `*value` to reach `target`. */
static int wait_until(const int *value, int target) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&lock);
    int status = 0;
    while (*value < target && status != ETIMEDOUT) status = pthread_cond_timedwait(&changed, &lock, &deadline);
    int reached = *value >= target;
    pthread_mutex_unlock(&lock);
    return reached;
}

/* Runs, on this thread, the jobs waiting at `host`; how many. */
static int run_jobs(dispatcher *host) {
    pthread_mutex_lock(&lock);
    job *entry = host->jobs;
    host->jobs = NULL;
    pthread_mutex_unlock(&lock);
    int ran = 0;
    while (entry) {
        job *next = entry->next;
        entry->run(entry->data);
        free(entry);
        entry = next;
        ran++;
    }
    return ran;
}

static portal_auth *client_for(const char *environment) {
    portal_auth_options options = emulator_options(environment);
    portal_auth *client = NULL;
    if (portal_auth_new(&options, &client, NULL) != PORTAL_AUTH_OK) abort();
    return client;
}

/* Starts get_methods through `host` and waits for its job, not run yet. */
static outcome *methods_in_flight(portal_auth *client, dispatcher *host, outcome *out) {
    int before = read_count(&host->dispatched);
    CHECK(portal_auth_get_methods(client, on_methods, out, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_until(&host->dispatched, before + 1));
    return out;
}

/* Signs in with a fresh magic-link grant; the outcome's completion is `host`'s job. */
static void sign_in_through(portal_auth *client, dispatcher *host, const char *email, outcome *out) {
    char url[512];
    grant_redirect("env-open", email, url, sizeof url);
    int before = read_count(&host->dispatched);
    CHECK(portal_auth_handle_redirect(client, url, on_result, out, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_until(&host->dispatched, before + 1));
    CHECK(run_jobs(host) == 1 && out->calls == 1 && on_main(out) && out->session != NULL);
}

/* A NULL client, and a NULL dispatcher: destroyed before the call returns. */
static void null_client_or_dispatcher_destroyed_at_once(void) {
    portal_auth *client = client_for("env-open");
    dispatcher refused = {0}, unused = {0};
    CHECK(portal_auth_set_dispatcher(NULL, dispatch, &refused, destroy) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(refused.destroyed == 1);
    CHECK(portal_auth_set_dispatcher(client, NULL, &unused, destroy) == PORTAL_AUTH_OK);
    CHECK(unused.destroyed == 1);
    CHECK(portal_auth_set_dispatcher(client, dispatch, NULL, NULL) == PORTAL_AUTH_OK); /* no destroy: fine */
    portal_auth_free(client);
    CHECK(refused.destroyed == 1 && unused.destroyed == 1);
}

/* Replaced with nothing in flight: destroyed inside the call that replaces it. */
static void replaced_idle_destroyed_at_once(void) {
    portal_auth *client = client_for("env-open");
    dispatcher idle = {0}, next = {0};
    CHECK(portal_auth_set_dispatcher(client, dispatch, &idle, destroy) == PORTAL_AUTH_OK);
    CHECK(idle.destroyed == 0);
    CHECK(portal_auth_set_dispatcher(client, dispatch, &next, destroy) == PORTAL_AUTH_OK);
    CHECK(idle.destroyed == 1 && idle.dispatched == 0);
    portal_auth_free(client);
    CHECK(wait_until(&next.destroyed, 1) && idle.destroyed == 1 && next.destroyed == 1);
}

/* Replaced with a job waiting: kept until the host has run it, then destroyed. */
static void replaced_busy_destroyed_after_its_job(void) {
    portal_auth *client = client_for("env-open");
    dispatcher busy = {0}, last = {0};
    CHECK(portal_auth_set_dispatcher(client, dispatch, &busy, destroy) == PORTAL_AUTH_OK);
    outcome waiting = {0};
    methods_in_flight(client, &busy, &waiting);
    CHECK(portal_auth_set_dispatcher(client, dispatch, &last, destroy) == PORTAL_AUTH_OK);
    CHECK(read_count(&busy.destroyed) == 0);
    CHECK(run_jobs(&busy) == 1 && waiting.calls == 1 && on_main(&waiting) && waiting.code == PORTAL_AUTH_OK);
    CHECK(wait_until(&busy.destroyed, 1));
    portal_auth_free(client);
    CHECK(wait_until(&last.destroyed, 1));
    pthread_mutex_lock(&lock);
    CHECK(busy.destroyed == 1 && last.destroyed == 1 && waiting.calls == 1);
    pthread_mutex_unlock(&lock);
}

/* The client freed with a job waiting: the same. */
static void client_freed_busy_destroyed_after_its_job(void) {
    portal_auth *client = client_for("env-open");
    dispatcher last = {0};
    CHECK(portal_auth_set_dispatcher(client, dispatch, &last, destroy) == PORTAL_AUTH_OK);
    outcome orphan = {0};
    methods_in_flight(client, &last, &orphan);
    portal_auth_free(client);
    CHECK(read_count(&last.destroyed) == 0);
    CHECK(run_jobs(&last) == 1 && orphan.calls == 1 && orphan.code == PORTAL_AUTH_OK);
    CHECK(wait_until(&last.destroyed, 1));
    pthread_mutex_lock(&lock);
    CHECK(last.destroyed == 1 && orphan.calls == 1);
    pthread_mutex_unlock(&lock);
}

/* A session's invalidation completes through the dispatcher of the client that lent it, as
   the client is set when it is invalidated... */
static void invalidation_through_lenders_dispatcher_of_the_time(void) {
    dispatcher first = {0}, second = {0};
    portal_auth *lender = client_for("env-open");
    CHECK(portal_auth_set_dispatcher(lender, dispatch, &first, destroy) == PORTAL_AUTH_OK);
    outcome signed_in = {0}, invalidated = {0}, again = {0};
    sign_in_through(lender, &first, "c-dispatcher@example.com", &signed_in);
    CHECK(portal_auth_session_invalidate(signed_in.session, on_done, &invalidated, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_until(&first.dispatched, 2));
    CHECK(read_count(&invalidated.calls) == 0); /* nothing ran before the host ran the job */
    CHECK(run_jobs(&first) == 1 && invalidated.calls == 1 && on_main(&invalidated) && invalidated.code == PORTAL_AUTH_OK);

    CHECK(portal_auth_set_dispatcher(lender, dispatch, &second, destroy) == PORTAL_AUTH_OK);
    CHECK(wait_until(&first.destroyed, 1));
    CHECK(portal_auth_session_invalidate(signed_in.session, on_done, &again, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_until(&second.dispatched, 1));
    CHECK(run_jobs(&second) == 1 && again.calls == 1 && on_main(&again) && again.code == PORTAL_AUTH_OK);
    portal_auth_free(lender);
    CHECK(wait_until(&second.destroyed, 1));
    portal_auth_session_release(signed_in.session);
    pthread_mutex_lock(&lock);
    CHECK(first.destroyed == 1 && second.destroyed == 1);
    CHECK(signed_in.calls == 1 && invalidated.calls == 1 && again.calls == 1);
    pthread_mutex_unlock(&lock);
}

/* ...while it lives: once it is freed, on a library thread, through no dispatcher. */
static void invalidation_on_library_thread_once_lender_freed(void) {
    dispatcher host = {0};
    portal_auth *lender = client_for("env-open");
    CHECK(portal_auth_set_dispatcher(lender, dispatch, &host, destroy) == PORTAL_AUTH_OK);
    outcome signed_in = {0}, orphaned = {0};
    sign_in_through(lender, &host, "c-dispatcher-freed@example.com", &signed_in);
    portal_auth_free(lender);
    CHECK(wait_until(&host.destroyed, 1));
    CHECK(portal_auth_session_invalidate(signed_in.session, on_done, &orphaned, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_until(&orphaned.calls, 1));
    CHECK(!on_main(&orphaned) && orphaned.code == PORTAL_AUTH_OK && host.dispatched == 1);
    portal_auth_session_release(signed_in.session);
    pthread_mutex_lock(&lock);
    CHECK(host.destroyed == 1 && signed_in.calls == 1 && orphaned.calls == 1);
    pthread_mutex_unlock(&lock);
}

/* A session lent through the completion queue invalidates through it after its client is
   freed, as before. */
static void queue_lent_session_invalidates_through_queue(void) {
    portal_auth *queued = client_for("env-open");
    int fd = portal_auth_completion_fd();
    CHECK(fd >= 0 && portal_auth_set_completion_queue(queued, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    char url[512];
    grant_redirect("env-open", "c-dispatcher-queue@example.com", url, sizeof url);
    outcome through_queue = {0}, after_free = {0};
    CHECK(portal_auth_handle_redirect(queued, url, on_result, &through_queue, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until(fd, &through_queue.calls, 1));
    CHECK(through_queue.calls == 1 && through_queue.session != NULL);
    portal_auth_free(queued);
    CHECK(portal_auth_session_invalidate(through_queue.session, on_done, &after_free, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_readable(fd) && read_count(&after_free.calls) == 0);
    CHECK(run_until(fd, &after_free.calls, 1) && after_free.calls == 1 && on_main(&after_free));
    portal_auth_session_release(through_queue.session);
    pthread_mutex_lock(&lock);
    CHECK(through_queue.calls == 1 && after_free.calls == 1);
    pthread_mutex_unlock(&lock);
}

static const test_case cases[] = {
    { "null_client_or_dispatcher_destroyed_at_once", null_client_or_dispatcher_destroyed_at_once, NULL },
    { "replaced_idle_destroyed_at_once", replaced_idle_destroyed_at_once, NULL },
    { "replaced_busy_destroyed_after_its_job", replaced_busy_destroyed_after_its_job, NULL },
    { "client_freed_busy_destroyed_after_its_job", client_freed_busy_destroyed_after_its_job, NULL },
    { "invalidation_through_lenders_dispatcher_of_the_time", invalidation_through_lenders_dispatcher_of_the_time, NULL },
    { "invalidation_on_library_thread_once_lender_freed", invalidation_on_library_thread_once_lender_freed, NULL },
    { "queue_lent_session_invalidates_through_queue", queue_lent_session_invalidates_through_queue, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "dispatcher_test", cases);
}
