/* C tests of the asynchronous calls against the Portal emulator whose base URL is in
 * PORTAL_AUTH_TEST_API_HOST: exactly-once completion (also under 1,000 concurrent calls from
 * several threads, and with the client freed in flight), never inside the starting call,
 * the dispatcher, cancellation, and bad arguments. Named cases (test_support.h's run_cases).
 * Waits on condition variables, never sleeps. */
#define _GNU_SOURCE /* pthread_getname_np */
#include "test_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Completions counted under one lock; waiters wake on each. */
static _Thread_local int inside_start;

typedef struct {
    int calls;             /* how often the callback ran: must end at exactly 1 */
    int inside_start;      /* it ran inside the starting call */
    portal_auth_code code; /* the error's code, or PORTAL_AUTH_OK */
    char text[256];        /* an error field or a result */
    int count;
    pthread_t thread;
} outcome;

static void record(outcome *out, const portal_auth_error *error, const char *text) {
    pthread_mutex_lock(&lock);
    out->calls++;
    out->inside_start |= inside_start;
    out->thread = pthread_self();
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    if (text) snprintf(out->text, sizeof out->text, "%s", text);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_for(outcome *out, int n) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
        while (out[i].calls == 0) pthread_cond_wait(&changed, &lock);
    }
    pthread_mutex_unlock(&lock);
}

static void on_methods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    outcome *out = user_data;
    char text[256] = "";
    if (methods) {
        for (size_t i = 0; i < portal_auth_methods_count(methods); i++) {
            strcat(text, portal_auth_methods_at(methods, i));
            strcat(text, " ");
        }
        out->count = portal_auth_methods_auto_create_wallet(methods);
    }
    record(out, error, methods ? text : portal_auth_error_message(error));
}

static void on_done(void *user_data, const portal_auth_error *error) {
    const char *name = portal_auth_error_name(error);
    record(user_data, error, name ? name : "");
}

static void on_url(void *user_data, const char *url, const portal_auth_error *error) {
    const char *method = portal_auth_error_method(error);
    record(user_data, error, url ? url : (method ? method : ""));
}

static portal_auth *client_for(const char *environment) {
    portal_auth_options options = emulator_options(environment);
    portal_auth *client = NULL;
    if (portal_auth_new(&options, &client, NULL) != PORTAL_AUTH_OK) abort();
    return client;
}

/* 1,000 concurrent calls from several threads. */
enum { THREADS = 4, PER_THREAD = 250 };
static portal_auth *shared_client;
static outcome many[THREADS * PER_THREAD];

static void *start_many(void *arg) {
    outcome *slice = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        if (portal_auth_get_methods(shared_client, on_methods, &slice[i], NULL) != PORTAL_AUTH_OK) abort();
    }
    return NULL;
}

/* A dispatcher that queues jobs for the main thread. */
typedef struct job { portal_auth_job_fn run; void *data; struct job *next; } job;
static job *jobs;

static void queue_job(void *dispatcher_data, portal_auth_job_fn run, void *data) {
    (void)dispatcher_data;
    job *entry = malloc(sizeof *entry);
    entry->run = run;
    entry->data = data;
    pthread_mutex_lock(&lock);
    entry->next = jobs;
    jobs = entry;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* get_methods: one completion, after the starting call returned. */
static void get_methods_completes_once_after_its_start(void) {
    portal_auth *client = client_for("env-demo");
    outcome methods = {0};
    portal_auth_call *call = NULL;
    inside_start = 1;
    CHECK(portal_auth_get_methods(client, on_methods, &methods, &call) == PORTAL_AUTH_OK);
    inside_start = 0;
    CHECK(call != NULL);
    wait_for(&methods, 1);
    CHECK(methods.code == PORTAL_AUTH_OK && !methods.inside_start);
    CHECK(strcmp(methods.text, "EMAIL_MAGIC_LINK GOOGLE APPLE ") == 0 && methods.count == 1);
    portal_auth_call_cancel(call); /* finished: ignored */
    portal_auth_call_free(call);
    portal_auth_free(client);
    CHECK(methods.calls == 1);
}

/* send_magic_link: success, and a blank address through the callback. */
static void send_magic_link_and_a_blank_address(void) {
    portal_auth *client = client_for("env-demo");
    outcome sent[2] = {{0}};
    CHECK(portal_auth_send_magic_link(client, "Ada@Example.com", on_done, &sent[0], NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_send_magic_link(client, "  ", on_done, &sent[1], NULL) == PORTAL_AUTH_OK);
    wait_for(sent, 2);
    CHECK(sent[0].code == PORTAL_AUTH_OK);
    CHECK(sent[1].code == PORTAL_AUTH_E_INVALID_ARGUMENT && strcmp(sent[1].text, "email") == 0);
    portal_auth_free(client);
    CHECK(sent[0].calls == 1 && sent[1].calls == 1);
}

/* Calls that cannot start: an error code, no callback ever, and each of the eleven clears
   *out_call. */
static void refused_calls_never_call_back(void) {
    portal_auth *client = client_for("env-demo");
    outcome never = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_get_methods(NULL, on_methods, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_get_methods(client, NULL, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_send_magic_link(client, "\xff\xfe@example.com", on_done, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_send_magic_link(client, NULL, NULL, &never, &call) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_login_with_google(client, NULL, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);

    portal_auth_call *stale = (portal_auth_call *)&never;
    portal_auth_call *refused[11];
    for (int i = 0; i < 11; i++) refused[i] = stale;
    portal_auth_code codes[11] = {
        portal_auth_get_methods(client, NULL, &never, &refused[0]),
        portal_auth_send_magic_link(client, "ada@example.com", NULL, &never, &refused[1]),
        portal_auth_login_with_google(client, NULL, &never, &refused[2]),
        portal_auth_login_with_apple(client, NULL, &never, &refused[3]),
        portal_auth_sign_in_with_google(client, 0, NULL, &never, &refused[4]),
        portal_auth_sign_in_with_apple(client, 0, NULL, &never, &refused[5]),
        portal_auth_handle_redirect(client, "myapp://auth/callback?token=t", NULL, &never, &refused[6]),
        portal_auth_verify_totp(client, "123456", "a.b.c", NULL, &never, &refused[7]),
        portal_auth_restore_session(client, NULL, &never, &refused[8]),
        portal_auth_clear_persisted_session(client, NULL, &never, &refused[9]),
        portal_auth_session_invalidate(NULL, on_done, &never, &refused[10]),
    };
    for (int i = 0; i < 11; i++) {
        if (codes[i] != PORTAL_AUTH_E_INVALID_ARGUMENT || refused[i] != NULL) fprintf(stderr, "call %d: code %d\n", i, (int)codes[i]);
        CHECK(codes[i] == PORTAL_AUTH_E_INVALID_ARGUMENT && refused[i] == NULL);
    }
    portal_auth_free(client);
    CHECK(never.calls == 0);
}

/* The setters all answer with a code. */
static void setters_answer_with_a_code(void) {
    CHECK(portal_auth_set_dispatcher(NULL, queue_job, NULL, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_browser_opener(NULL, NULL, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(NULL, PORTAL_AUTH_TRUE) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_log_level((portal_auth_log_level)5) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_log_level(PORTAL_AUTH_LOG_NONE) == PORTAL_AUTH_OK);
    CHECK(portal_auth_set_log_level(PORTAL_AUTH_LOG_DEBUG) == PORTAL_AUTH_OK);
}

/* Authorize URLs, and a provider the environment lacks. */
static void authorize_urls_and_a_missing_provider(void) {
    portal_auth *open_client = client_for("env-open");
    outcome urls[2] = {{0}};
    CHECK(portal_auth_login_with_google(open_client, on_url, &urls[0], NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_login_with_apple(open_client, on_url, &urls[1], NULL) == PORTAL_AUTH_OK);
    wait_for(urls, 2);
    CHECK(urls[0].code == PORTAL_AUTH_OK && strncmp(urls[0].text, "http://127.0.0.1:", 17) == 0);
    CHECK(urls[1].code == PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE && strcmp(urls[1].text, "APPLE") == 0);
    portal_auth_free(open_client);
    CHECK(urls[0].calls == 1 && urls[1].calls == 1);
}

/* 1,000 concurrent calls from 4 threads: each completes exactly once; without a dispatcher,
   all of them on the library's one I/O thread. */
static void concurrent_calls_complete_once_on_the_io_thread(void) {
    shared_client = client_for("env-demo");
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, start_many, &many[t * PER_THREAD]);
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    wait_for(many, THREADS * PER_THREAD);
    portal_auth_free(shared_client);
    int all_once = 1, all_ok = 1, one_thread = 1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < THREADS * PER_THREAD; i++) {
        all_once &= many[i].calls == 1;
        all_ok &= many[i].code == PORTAL_AUTH_OK;
        one_thread &= pthread_equal(many[i].thread, many[0].thread);
    }
    pthread_mutex_unlock(&lock);
    CHECK(all_once && all_ok);
    char thread_name[16] = "";
    pthread_getname_np(many[0].thread, thread_name, sizeof thread_name);
    CHECK(one_thread && strcmp(thread_name, "portal-auth-io") == 0);
}

/* The client freed with calls in flight: every call still completes, once. */
static void client_freed_with_calls_in_flight(void) {
    portal_auth *doomed = client_for("env-demo");
    outcome orphans[50] = {{0}};
    for (int i = 0; i < 50; i++) CHECK(portal_auth_get_methods(doomed, on_methods, &orphans[i], NULL) == PORTAL_AUTH_OK);
    portal_auth_free(doomed);
    wait_for(orphans, 50);
    int all_done = 1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 50; i++) all_done &= orphans[i].calls == 1 && orphans[i].code == PORTAL_AUTH_OK;
    pthread_mutex_unlock(&lock);
    CHECK(all_done);
}

/* Cancelled at once: one completion, cancelled or (if already sent) done. */
static void cancelled_at_once_completes_once(void) {
    portal_auth *client = client_for("env-demo");
    outcome cancelled = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_get_methods(client, on_methods, &cancelled, &call) == PORTAL_AUTH_OK);
    portal_auth_call_cancel(call);
    portal_auth_call_free(call);
    wait_for(&cancelled, 1);
    CHECK(cancelled.code == PORTAL_AUTH_E_CANCELLED || cancelled.code == PORTAL_AUTH_OK);
    portal_auth_free(client);
    CHECK(cancelled.calls == 1);
}

/* A dispatcher: the completion runs where the host runs the job, here the main thread. */
static void dispatcher_completes_where_host_runs_the_job(void) {
    portal_auth *client = client_for("env-demo");
    CHECK(portal_auth_set_dispatcher(client, queue_job, NULL, NULL) == PORTAL_AUTH_OK);
    outcome dispatched = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &dispatched, NULL) == PORTAL_AUTH_OK);
    pthread_mutex_lock(&lock);
    while (jobs == NULL) pthread_cond_wait(&changed, &lock);
    job *entry = jobs;
    jobs = NULL;
    pthread_mutex_unlock(&lock);
    CHECK(dispatched.calls == 0); /* nothing ran before the host ran the job */
    entry->run(entry->data);
    free(entry);
    CHECK(dispatched.calls == 1 && pthread_equal(dispatched.thread, pthread_self()));
    CHECK(portal_auth_set_dispatcher(client, NULL, NULL, NULL) == PORTAL_AUTH_OK);
    portal_auth_free(client);
    CHECK(dispatched.calls == 1);
}

static const test_case cases[] = {
    { "get_methods_completes_once_after_its_start", get_methods_completes_once_after_its_start, NULL },
    { "send_magic_link_and_a_blank_address", send_magic_link_and_a_blank_address, NULL },
    { "refused_calls_never_call_back", refused_calls_never_call_back, NULL },
    { "setters_answer_with_a_code", setters_answer_with_a_code, NULL },
    { "authorize_urls_and_a_missing_provider", authorize_urls_and_a_missing_provider, NULL },
    { "concurrent_calls_complete_once_on_the_io_thread", concurrent_calls_complete_once_on_the_io_thread, NULL },
    { "client_freed_with_calls_in_flight", client_freed_with_calls_in_flight, NULL },
    { "cancelled_at_once_completes_once", cancelled_at_once_completes_once, NULL },
    { "dispatcher_completes_where_host_runs_the_job", dispatcher_completes_where_host_runs_the_job, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "calls_test", cases);
}
