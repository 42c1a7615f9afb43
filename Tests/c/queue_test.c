/* C tests of the completion queue (portal_auth_set_completion_queue), against the Portal
 * emulator in PORTAL_AUTH_TEST_API_HOST: completions run only inside
 * portal_auth_run_completions, on the thread that calls it, exactly once (also under 1,000
 * concurrent calls started from several threads while the main thread runs the queue, with
 * the client freed in flight, and for calls that complete before their start has returned);
 * the descriptor is read-ready (poll, and epoll level-triggered) exactly while the queue has
 * work: completions pending, or the I/O of its calls ready (not while a request waits for its
 * server); sessions lent through the queue invalidate through it; queued log lines; the other
 * models unchanged. Named cases (test_support.h's run_cases). Waits in poll or on condition
 * variables, never sleeps. */
#define _GNU_SOURCE
#include "session_support.h"
#include "paused_start.h"

#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The emulator's wait for a count of requests, on a thread of its own, which says when it
   has answered on an eventfd. */
typedef struct { char query[256]; char body[2048]; int done; } emulator_wait;

static void *wait_on_emulator(void *arg) {
    emulator_wait *wait = arg;
    emulator_request(wait->query, NULL, wait->body, sizeof wait->body);
    uint64_t one = 1;
    if (write(wait->done, &one, sizeof one) != sizeof one) abort();
    return NULL;
}

/* Runs the queue, whose runs send the requests, until the emulator has seen `count`
   requests to `path`. */
static int run_until_requested(int fd, const char *path, int count) {
    emulator_wait wait = { .done = eventfd(0, EFD_CLOEXEC) };
    snprintf(wait.query, sizeof wait.query, "/_emulator/wait?path=%s&count=%d&timeout=30", path, count);
    pthread_t waiter;
    if (wait.done < 0 || pthread_create(&waiter, NULL, wait_on_emulator, &wait) != 0) abort();
    struct pollfd watched[2] = { { .fd = fd, .events = POLLIN }, { .fd = wait.done, .events = POLLIN } };
    while (poll(watched, 2, 60000) > 0 && !(watched[1].revents & POLLIN)) portal_auth_run_completions();
    pthread_join(waiter, NULL);
    close(wait.done);
    char expected[32];
    snprintf(expected, sizeof expected, "\"count\":%d", count);
    return strstr(wait.body, expected) != NULL;
}

/* A host store that counts the sessions stored in it. */
static int stored_sessions;

static int store_get(void *user_data, const char *environment_id, char **out_value) {
    (void)user_data; (void)environment_id;
    *out_value = NULL;
    return 0;
}

static int store_set(void *user_data, const char *environment_id, const char *value) {
    (void)user_data; (void)environment_id; (void)value;
    count_call(&stored_sessions);
    return 0;
}

static int store_remove(void *user_data, const char *environment_id) {
    (void)user_data; (void)environment_id;
    return 0;
}

static portal_auth *queued_client(const char *environment) {
    portal_auth_options options = emulator_options(environment);
    portal_auth *client = NULL;
    if (portal_auth_new(&options, &client, NULL) != PORTAL_AUTH_OK) abort();
    if (portal_auth_set_completion_queue(client, PORTAL_AUTH_TRUE) != PORTAL_AUTH_OK) abort();
    return client;
}

/* 1,000 concurrent calls, started from 4 threads. */
enum { STARTERS = 4, PER_STARTER = 250, CONCURRENT = STARTERS * PER_STARTER };
static portal_auth *shared_client;
static outcome many[CONCURRENT];
static int many_done;

static void on_many(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)methods;
    finish(user_data, error);
    count_call(&many_done);
}

/* Where a host keeps a call's handle: in memory its completion frees, with the handle. */
enum { KEPT = 20 };
typedef struct { portal_auth_call *call; } kept_call;
static int kept_done;

static void on_kept(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    (void)result;
    (void)error;
    kept_call *kept = user_data;
    portal_auth_call_free(kept->call);
    free(kept);
    count_call(&kept_done);
    paused_call_completed();
}

/* Starts KEPT foreign redirects (they complete in the run that starts them, with no request),
   each paused until the main thread has run the queue: each completes there before its
   starting function returns. */
static void *start_kept(void *client) {
    for (int i = 0; i < KEPT; i++) {
        kept_call *kept = calloc(1, sizeof *kept);
        pause_starts(1);
        portal_auth_handle_redirect(client, "https://elsewhere.example/callback?token=x", on_kept, kept, &kept->call);
        pause_starts(0);
    }
    return NULL;
}

static void *start_many(void *arg) {
    outcome *slice = arg;
    for (int i = 0; i < PER_STARTER; i++) {
        if (portal_auth_get_methods(shared_client, on_many, &slice[i], NULL) != PORTAL_AUTH_OK) abort();
    }
    return NULL;
}

/* Queued log lines: counted by thread, and forwarded to the log audit. */
static int lines_on_main, lines_elsewhere, lines_replaced;

static void queued_line(void *user_data, portal_auth_log_level level, const char *message) {
    (void)user_data;
    audit_log_line(NULL, level, message);
    pthread_mutex_lock(&lock);
    if (pthread_equal(pthread_self(), main_thread)) lines_on_main++;
    else lines_elsewhere++;
    pthread_mutex_unlock(&lock);
}

static void replaced_line(void *user_data, portal_auth_log_level level, const char *message) {
    (void)user_data;
    audit_log_line(NULL, level, message);
    pthread_mutex_lock(&lock);
    lines_replaced++;
    pthread_mutex_unlock(&lock);
}

/* A dispatcher that runs each job at once, on the library thread that hands it over. */
static int dispatches;

static void dispatch_at_once(void *dispatcher_data, portal_auth_job_fn run, void *job) {
    (void)dispatcher_data;
    pthread_mutex_lock(&lock);
    dispatches++;
    pthread_mutex_unlock(&lock);
    run(job);
}

/* A completion that starts another call and runs the queue itself until that one is done. */
typedef struct { portal_auth *client; int fd; outcome outer, inner; int ran_inner; } nesting;

static void on_outer(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)methods;
    nesting *nest = user_data;
    if (portal_auth_get_methods(nest->client, on_methods, &nest->inner, NULL) != PORTAL_AUTH_OK) abort();
    nest->ran_inner = run_until(nest->fd, &nest->inner.calls, 1);
    finish(&nest->outer, error);
}

/* One descriptor for the process, not readable while nothing is pending. */
static void one_descriptor_idle_without_calls(void) {
    int fd = portal_auth_completion_fd();
    CHECK(fd >= 0 && portal_auth_completion_fd() == fd);
    CHECK(!readable(fd));
    CHECK(portal_auth_run_completions() == 0);
}

static void bad_arguments(void) {
    portal_auth *client = queued_client("env-open");
    CHECK(portal_auth_set_completion_queue(NULL, PORTAL_AUTH_TRUE) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_completion_queue(client, 2) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    portal_auth_free(client);
}

/* One call: it starts only when the host runs the queue (the descriptor readable at once,
   level-triggered), sends and completes in its runs, exactly once, on its thread. */
static void one_call_completes_in_runs(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    outcome first = {0};
    inside_start = 1;
    CHECK(portal_auth_get_methods(client, on_methods, &first, NULL) == PORTAL_AUTH_OK);
    inside_start = 0;
    CHECK(readable(fd) && readable(fd));
    pthread_mutex_lock(&lock);
    CHECK(first.calls == 0);
    pthread_mutex_unlock(&lock);
    CHECK(run_until(fd, &first.calls, 1));
    CHECK(first.calls == 1 && on_main(&first) && !first.inside_start && first.code == PORTAL_AUTH_OK);
    CHECK(!readable(fd));
    CHECK(portal_auth_run_completions() == 0);
    portal_auth_free(client);
    CHECK(first.calls == 1);
}

/* The descriptor under epoll, level-triggered (EPOLLIN): no event while a request waits for
   its server (held by the emulator), one on every wait once the response is there, until the
   runs have completed the call; none after. */
static void epoll_level_triggered_not_while_server_waits(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    char body[2048];
    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event watch = { .events = EPOLLIN, .data.fd = fd }, event;
    CHECK(poller >= 0 && epoll_ctl(poller, EPOLL_CTL_ADD, fd, &watch) == 0);
    clear_requests();
    emulator_request("/_emulator/faults", "{\"path\":\"/methods\",\"kind\":\"hold\"}", body, sizeof body);
    outcome held = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &held, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until_requested(fd, "/methods", 1));
    CHECK(epoll_wait(poller, &event, 1, 0) == 0 && !readable(fd));
    emulator_request("/_emulator/release", "{}", body, sizeof body);
    CHECK(epoll_wait(poller, &event, 1, 30000) == 1 && event.data.fd == fd && (event.events & EPOLLIN));
    CHECK(epoll_wait(poller, &event, 1, 0) == 1);
    CHECK(held.calls == 0);
    CHECK(run_until(fd, &held.calls, 1) && held.code == PORTAL_AUTH_OK);
    CHECK(epoll_wait(poller, &event, 1, 0) == 0);
    close(poller);
    portal_auth_free(client);
    CHECK(held.calls == 1);
}

/* 1,000 concurrent calls from 4 threads while this thread runs the queue: each completes
   exactly once, here, never inside its starting call; then nothing is pending. */
static void concurrent_calls_complete_once_here(void) {
    int fd = portal_auth_completion_fd();
    shared_client = queued_client("env-open");
    pthread_t threads[STARTERS];
    for (int t = 0; t < STARTERS; t++) pthread_create(&threads[t], NULL, start_many, &many[t * PER_STARTER]);
    CHECK(run_until(fd, &many_done, CONCURRENT));
    for (int t = 0; t < STARTERS; t++) pthread_join(threads[t], NULL);
    int once = 1, here = 1, ok = 1, outside = 1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < CONCURRENT; i++) {
        once &= many[i].calls == 1;
        here &= on_main(&many[i]);
        ok &= many[i].code == PORTAL_AUTH_OK;
        outside &= !many[i].inside_start;
    }
    pthread_mutex_unlock(&lock);
    CHECK(once && here && ok && outside);
    CHECK(!readable(fd) && portal_auth_run_completions() == 0);
    portal_auth_free(shared_client);
}

/* A call that completes here while another thread is still starting it: its handle is where
   the host asked before then, so the completion frees it with the memory that held it, and
   nothing is written there afterwards (valgrind). */
static void completes_before_its_start_returns(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    int kept_before = kept_done;
    pthread_t starter;
    pthread_create(&starter, NULL, start_kept, client);
    CHECK(run_until(fd, &kept_done, kept_before + KEPT));
    pthread_join(starter, NULL);
    CHECK(!readable(fd) && portal_auth_run_completions() == 0);
    portal_auth_free(client);
}

/* A client freed with calls in flight, and with a completion already queued: each still
   completes exactly once, through the queue. */
static void client_freed_with_calls_in_flight(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *doomed = queued_client("env-open");
    outcome queued_before = {0}, orphans[50] = {{0}};
    CHECK(portal_auth_get_methods(doomed, on_methods, &queued_before, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_readable(fd));
    for (int i = 0; i < 50; i++) CHECK(portal_auth_get_methods(doomed, on_methods, &orphans[i], NULL) == PORTAL_AUTH_OK);
    portal_auth_free(doomed);
    CHECK(run_until(fd, &queued_before.calls, 1));
    int freed_ok = queued_before.code == PORTAL_AUTH_OK && on_main(&queued_before);
    for (int i = 0; i < 50; i++) {
        CHECK(run_until(fd, &orphans[i].calls, 1));
        freed_ok &= orphans[i].code == PORTAL_AUTH_OK && on_main(&orphans[i]);
    }
    CHECK(freed_ok);
    CHECK(!readable(fd));
    int once = queued_before.calls == 1;
    for (int i = 0; i < 50; i++) once &= orphans[i].calls == 1;
    CHECK(once);
}

/* A grant exchange goes on while the host does not run the queue: once no run has begun for
   a second, a library thread attends to the calls' work, so the session is stored (the grant
   is spent); its completion still waits for the host's run. */
static void exchange_goes_on_while_queue_unattended(void) {
    int fd = portal_auth_completion_fd();
    portal_auth_storage_callbacks store = { .size = sizeof store, .get = store_get, .set = store_set, .remove = store_remove };
    portal_auth_options stored_options = emulator_options("env-open");
    stored_options.storage = PORTAL_AUTH_STORAGE_HOST;
    stored_options.host_storage = &store;
    portal_auth *unattended = NULL;
    CHECK(portal_auth_new(&stored_options, &unattended, NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_set_completion_queue(unattended, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    char unattended_url[512];
    grant_redirect("env-open", "c-queue-unattended@example.com", unattended_url, sizeof unattended_url);
    outcome left = {0};
    int stored_before = stored_sessions;
    CHECK(portal_auth_handle_redirect(unattended, unattended_url, on_result, &left, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_count_within(&stored_sessions, stored_before + 1, 30));
    pthread_mutex_lock(&lock);
    CHECK(left.calls == 0);
    pthread_mutex_unlock(&lock);
    CHECK(run_until(fd, &left.calls, 1) && left.code == PORTAL_AUTH_OK && on_main(&left) && left.session != NULL);
    portal_auth_session_release(left.session);
    portal_auth_free(unattended);
    CHECK(left.calls == 1);
}

/* A session lent through the queue invalidates through it. */
static void session_lent_through_queue_invalidates_through_it(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    char url[512];
    grant_redirect("env-open", "c-queue@example.com", url, sizeof url);
    outcome signed_in = {0}, invalidated = {0};
    CHECK(portal_auth_handle_redirect(client, url, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until(fd, &signed_in.calls, 1));
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.session != NULL);
    CHECK(portal_auth_session_invalidate(signed_in.session, on_done, &invalidated, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until(fd, &invalidated.calls, 1));
    CHECK(on_main(&invalidated) && invalidated.code == PORTAL_AUTH_OK);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
    CHECK(signed_in.calls == 1 && invalidated.calls == 1);
}

/* One lent on the library thread invalidates there, past the queue. */
static void session_lent_on_library_thread_invalidates_there(void) {
    int fd = portal_auth_completion_fd();
    portal_auth_options options = emulator_options("env-open");
    portal_auth *threaded = NULL;
    CHECK(portal_auth_new(&options, &threaded, NULL) == PORTAL_AUTH_OK);
    char url[512];
    grant_redirect("env-open", "c-queue-thread@example.com", url, sizeof url);
    outcome threaded_in = redirect(threaded, url);
    CHECK(threaded_in.code == PORTAL_AUTH_OK && threaded_in.session != NULL && !on_main(&threaded_in));
    outcome threaded_out = invalidate(threaded_in.session);
    CHECK(!on_main(&threaded_out) && !readable(fd));
    portal_auth_session_release(threaded_in.session);
    portal_auth_free(threaded);
    CHECK(threaded_in.calls == 1 && threaded_out.calls == 1);
}

/* Puts back the audit's log handler, on library threads. */
static void end_queued_lines(void) {
    CHECK(portal_auth_set_queued_log_handler(NULL, NULL) == PORTAL_AUTH_OK);
    portal_auth_set_log_handler(audit_log_line, NULL);
}

/* Queued log lines: delivered by the run, on this thread, never on a library thread. */
static void queued_log_lines_delivered_by_the_run(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    CHECK(portal_auth_set_queued_log_handler(queued_line, NULL) == PORTAL_AUTH_OK);
    char url[512];
    grant_redirect("env-open", "c-queue-log@example.com", url, sizeof url);
    outcome logged = {0};
    int lines_before = lines_on_main;
    CHECK(portal_auth_handle_redirect(client, url, on_result, &logged, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until(fd, &logged.calls, 1));
    /* signed in, persisted */
    CHECK(logged.code == PORTAL_AUTH_OK && lines_on_main - lines_before >= 2 && lines_elsewhere == 0);
    portal_auth_session_release(logged.session);
    end_queued_lines();
    portal_auth_free(client);
    CHECK(logged.calls == 1);
}

/* Lines still queued for a replaced handler are dropped: those of an exchange on the library
   thread, queued by the time it has completed there, reach neither handler. */
static void lines_queued_for_a_replaced_handler_dropped(void) {
    int fd = portal_auth_completion_fd();
    CHECK(portal_auth_set_queued_log_handler(queued_line, NULL) == PORTAL_AUTH_OK);
    portal_auth_options options = emulator_options("env-open");
    portal_auth *logging = NULL;
    CHECK(portal_auth_new(&options, &logging, NULL) == PORTAL_AUTH_OK);
    char url[512];
    grant_redirect("env-open", "c-queue-dropped@example.com", url, sizeof url);
    int lines_before = lines_on_main;
    outcome dropped = redirect(logging, url);
    CHECK(readable(fd));
    CHECK(portal_auth_set_queued_log_handler(replaced_line, NULL) == PORTAL_AUTH_OK);
    portal_auth_run_completions();
    CHECK(dropped.code == PORTAL_AUTH_OK && lines_on_main == lines_before && lines_replaced == 0 && !readable(fd));
    portal_auth_session_release(dropped.session);
    portal_auth_free(logging);
    end_queued_lines();
    CHECK(dropped.calls == 1 && lines_elsewhere == 0);
}

/* A completion may run the queue itself. */
static void completion_runs_the_queue_itself(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    nesting nest = { .client = client, .fd = fd };
    CHECK(portal_auth_get_methods(client, on_outer, &nest, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until(fd, &nest.outer.calls, 1));
    CHECK(nest.ran_inner && nest.inner.calls == 1 && on_main(&nest.inner) && on_main(&nest.outer));
    portal_auth_free(client);
    CHECK(nest.outer.calls == 1 && nest.inner.calls == 1);
}

/* A dispatcher replaces the queue; the queue switched off means the library thread. */
static void dispatcher_or_off_replaces_the_queue(void) {
    int fd = portal_auth_completion_fd();
    portal_auth *client = queued_client("env-open");
    int dispatches_before = dispatches;
    portal_auth_set_dispatcher(client, dispatch_at_once, NULL, NULL);
    outcome dispatched = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &dispatched, NULL) == PORTAL_AUTH_OK);
    wait_calls(&dispatched.calls);
    CHECK(dispatches == dispatches_before + 1 && !on_main(&dispatched) && !readable(fd));
    CHECK(portal_auth_set_completion_queue(client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    CHECK(portal_auth_set_completion_queue(client, PORTAL_AUTH_FALSE) == PORTAL_AUTH_OK);
    outcome off = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &off, NULL) == PORTAL_AUTH_OK);
    wait_calls(&off.calls);
    CHECK(dispatches == dispatches_before + 1 && !on_main(&off) && !readable(fd));
    portal_auth_free(client);
    CHECK(dispatched.calls == 1 && off.calls == 1);
}

static const test_case cases[] = {
    { "one_descriptor_idle_without_calls", one_descriptor_idle_without_calls, NULL },
    { "bad_arguments", bad_arguments, NULL },
    { "one_call_completes_in_runs", one_call_completes_in_runs, NULL },
    { "epoll_level_triggered_not_while_server_waits", epoll_level_triggered_not_while_server_waits, NULL },
    { "concurrent_calls_complete_once_here", concurrent_calls_complete_once_here, NULL },
    { "completes_before_its_start_returns", completes_before_its_start_returns, NULL },
    { "client_freed_with_calls_in_flight", client_freed_with_calls_in_flight, NULL },
    { "exchange_goes_on_while_queue_unattended", exchange_goes_on_while_queue_unattended, NULL },
    { "session_lent_through_queue_invalidates_through_it", session_lent_through_queue_invalidates_through_it, NULL },
    { "session_lent_on_library_thread_invalidates_there", session_lent_on_library_thread_invalidates_there, NULL },
    { "queued_log_lines_delivered_by_the_run", queued_log_lines_delivered_by_the_run, NULL },
    { "lines_queued_for_a_replaced_handler_dropped", lines_queued_for_a_replaced_handler_dropped, NULL },
    { "completion_runs_the_queue_itself", completion_runs_the_queue_itself, NULL },
    { "dispatcher_or_off_replaces_the_queue", dispatcher_or_off_replaces_the_queue, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "queue_test", cases);
}
