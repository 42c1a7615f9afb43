/* C test of redirect forwarding against the Portal emulator whose base URL is in
 * PORTAL_AUTH_TEST_API_HOST, in a runtime folder of the test's own ($XDG_RUNTIME_DIR):
 * portal_auth_listen_for_redirects (its callback once per forwarded redirect, then its last
 * call), portal_auth_forward_redirect (taken, replayed, refused, no instance), one listener
 * per application and environment, the completion queue, cancellation and portal_auth_free
 * ending listening at once, a runtime folder others could reach, none at all, and arguments
 * that cannot start a call. (bindings/c/tests has the desktop's side: xdg-open starting the
 * sample as the URL handler.) Named cases, each in a runtime folder of its own
 * (test_support.h's run_cases). */
#include "test_support.h"

#include <poll.h>
#include <sys/stat.h>

#define APPLICATION "com.example.CForwarding"

/* What a listener's callback saw. */
typedef struct {
    int calls;                 /* every call, the last one included */
    int results;               /* AUTHENTICATED ones */
    int nothing;               /* neither result nor error, not last */
    int last;                  /* the last call came */
    int after_last;            /* calls after the last one: never */
    portal_auth_code last_code;
    portal_auth_reason last_reason;
    portal_auth_session *session; /* the first result's, retained */
    int same_session;          /* later results had the same handle */
} listened;

static void on_redirect(void *user_data, const portal_auth_result *result, const portal_auth_error *error,
                        portal_auth_bool last) {
    listened *seen = user_data;
    pthread_mutex_lock(&lock);
    if (seen->last) seen->after_last++;
    if (last == PORTAL_AUTH_TRUE) {
        seen->last = 1;
        seen->last_code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
        seen->last_reason = portal_auth_error_reason(error);
    } else if (result && portal_auth_result_kind(result) == PORTAL_AUTH_RESULT_AUTHENTICATED) {
        portal_auth_session *session = portal_auth_result_session(result);
        if (!seen->session) seen->session = portal_auth_session_retain(session);
        else seen->same_session += session == seen->session;
        seen->results++;
    } else if (!result && !error) {
        seen->nothing++;
    }
    seen->calls++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

typedef struct {
    int calls;
    portal_auth_forward_result outcome;
    portal_auth_code code;
    portal_auth_reason reason;
    char name[64];
} forwarded;

static void on_forwarded(void *user_data, portal_auth_forward_result outcome, const portal_auth_error *error) {
    forwarded *out = user_data;
    out->outcome = outcome;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->reason = portal_auth_error_reason(error);
    snprintf(out->name, sizeof out->name, "%s", error && portal_auth_error_name(error) ? portal_auth_error_name(error) : "");
    count_call(&out->calls);
}

static portal_auth_options forwarding_options(void) {
    portal_auth_options options = emulator_options("env-open");
    options.application_id = APPLICATION;
    return options;
}

/* Forwards `url` as the next instance would; its outcome. */
static forwarded forward(const portal_auth_options *options, const char *url) {
    forwarded out = {0};
    CHECK(portal_auth_forward_redirect(options, url, on_forwarded, &out) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

static portal_auth *client_with(portal_auth_options options) {
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

/* A runtime folder of the case's own ($XDG_RUNTIME_DIR): mode 0700, the user's, as a
   session's. */
typedef struct { char path[40]; } runtime_folder;

static runtime_folder enter_runtime_folder(void) {
    runtime_folder runtime = { "/tmp/portal-auth-runtime-XXXXXX" };
    if (!mkdtemp(runtime.path)) abort();
    setenv("XDG_RUNTIME_DIR", runtime.path, 1);
    return runtime;
}

static void leave_runtime_folder(const runtime_folder *runtime) {
    char remove[80];
    snprintf(remove, sizeof remove, "rm -rf %s", runtime->path);
    CHECK(system(remove) == 0);
    unsetenv("XDG_RUNTIME_DIR");
}

/* A running instance, in a runtime folder of the case's own, listening; `url` carries a fresh
   grant. */
typedef struct {
    runtime_folder runtime;
    portal_auth_options options;
    char url[512];
    portal_auth *running;
    listened seen;
    portal_auth_call *call;
} instance;

static void start_instance(instance *at) {
    at->runtime = enter_runtime_folder();
    at->options = forwarding_options();
    grant_redirect("env-open", "c-forward@example.com", at->url, sizeof at->url);
    at->running = client_with(at->options);
    CHECK(portal_auth_listen_for_redirects(at->running, on_redirect, &at->seen, &at->call) == PORTAL_AUTH_OK);
    CHECK(at->call != NULL);
}

/* Nobody listens: the next instance handles the URL itself. */
static void nobody_listening_no_instance(void) {
    runtime_folder runtime = enter_runtime_folder();
    portal_auth_options options = forwarding_options();
    char url[512];
    grant_redirect("env-open", "c-forward@example.com", url, sizeof url);
    forwarded none = forward(&options, url);
    CHECK(none.code == PORTAL_AUTH_OK && none.outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    leave_runtime_folder(&runtime);
}

/* The running instance listens; the next one forwards; the same URL again replays; taken
   but no sign-in: nothing, as portal_auth_handle_redirect says. */
static void listener_takes_and_replays(void) {
    instance at = {0};
    start_instance(&at);
    forwarded taken = forward(&at.options, at.url);
    CHECK(taken.code == PORTAL_AUTH_OK && taken.outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&at.seen.calls, 1);
    CHECK(at.seen.results == 1 && at.seen.session != NULL && !at.seen.last);
    CHECK(forward(&at.options, at.url).outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&at.seen.calls, 2);
    CHECK(at.seen.results == 2 && at.seen.same_session == 1);
    CHECK(forward(&at.options, "myapp://auth/callback?nothing=here").outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&at.seen.calls, 3);
    CHECK(at.seen.nothing == 1);
    portal_auth_free(at.running);
    wait_count(&at.seen.calls, 4);
    CHECK(at.seen.last && at.seen.after_last == 0);
    portal_auth_call_free(at.call);
    portal_auth_session_release(at.seen.session);
    leave_runtime_folder(&at.runtime);
}

/* Another redirect's URL is refused here, before anything is sent; and by the instance when
   the forwarding process is configured with another redirect URL. Another application's
   instance is not this one. */
static void other_redirects_and_applications_refused(void) {
    instance at = {0};
    start_instance(&at);
    CHECK(forward(&at.options, "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK").outcome == PORTAL_AUTH_FORWARD_REFUSED);
    portal_auth_options other = forwarding_options();
    other.redirect_url = "otherapp://auth/callback";
    CHECK(forward(&other, "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK").outcome == PORTAL_AUTH_FORWARD_REFUSED);
    portal_auth_options another_app = forwarding_options();
    another_app.application_id = "com.example.Another";
    CHECK(forward(&another_app, at.url).outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    portal_auth_free(at.running);
    wait_calls(&at.seen.calls);
    CHECK(at.seen.calls == 1 && at.seen.last && at.seen.results == 0);
    portal_auth_call_free(at.call);
    leave_runtime_folder(&at.runtime);
}

/* One listener per application and environment: the second one's only call is its last. */
static void one_listener_per_application(void) {
    instance at = {0};
    start_instance(&at);
    portal_auth *second = client_with(at.options);
    listened in_use = {0};
    CHECK(portal_auth_listen_for_redirects(second, on_redirect, &in_use, NULL) == PORTAL_AUTH_OK);
    wait_calls(&in_use.calls);
    CHECK(in_use.last && in_use.last_code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE);
    CHECK(in_use.last_reason == PORTAL_AUTH_REASON_CHANNEL_IN_USE);
    portal_auth_free(second);
    portal_auth_free(at.running);
    wait_calls(&at.seen.calls);
    CHECK(in_use.calls == 1 && at.seen.calls == 1);
    portal_auth_call_free(at.call);
    leave_runtime_folder(&at.runtime);
}

/* Cancelling ends listening: the last call, SIGN_IN_CLOSED, and no instance any more; also
   while a child forked meanwhile holds the channel's lock file and socket. The channel is
   free beside the child: the next listener takes it, and is forwarded to. */
static void cancel_ends_listening_beside_a_forked_child(void) {
    instance at = {0};
    start_instance(&at);
    CHECK(forward(&at.options, at.url).outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&at.seen.calls, 1);
    descriptor_holder holder = fork_descriptor_holder();
    CHECK(holder.pid > 0);
    portal_auth_call_cancel(at.call);
    wait_count(&at.seen.calls, 2);
    CHECK(at.seen.last && at.seen.last_code == PORTAL_AUTH_E_SIGN_IN_CLOSED);
    CHECK(forward(&at.options, at.url).outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    portal_auth_call_free(at.call);
    portal_auth_session_release(at.seen.session);
    CHECK(at.seen.calls == 2 && at.seen.after_last == 0);
    portal_auth *next = client_with(at.options);
    listened again = {0};
    CHECK(portal_auth_listen_for_redirects(next, on_redirect, &again, NULL) == PORTAL_AUTH_OK);
    grant_redirect("env-open", "c-forward-again@example.com", at.url, sizeof at.url);
    CHECK(forward(&at.options, at.url).outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_calls(&again.calls);
    CHECK(again.results == 1 && !again.last);
    portal_auth_free(next);
    if (!again.last) wait_count(&again.calls, 2);  /* a refused listener's one call was its last */
    CHECK(again.last && again.last_code == PORTAL_AUTH_E_SIGN_IN_CLOSED);
    if (again.session) portal_auth_session_release(again.session);
    CHECK(end_descriptor_holder(&holder));
    portal_auth_free(at.running);
    leave_runtime_folder(&at.runtime);
}

/* Through the completion queue: the outcome only inside portal_auth_run_completions; and
   portal_auth_free ends listening at once: no instance as soon as it returns. */
static void queued_listener_and_free_ending_it(void) {
    runtime_folder runtime = enter_runtime_folder();
    portal_auth_options options = forwarding_options();
    char url[512];
    portal_auth *running = client_with(options);
    CHECK(portal_auth_set_completion_queue(running, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    listened queued = {0};
    CHECK(portal_auth_listen_for_redirects(running, on_redirect, &queued, NULL) == PORTAL_AUTH_OK);
    grant_redirect("env-open", "c-forward-queued@example.com", url, sizeof url);
    CHECK(forward(&options, url).outcome == PORTAL_AUTH_FORWARD_TAKEN);
    struct pollfd watched = { .fd = portal_auth_completion_fd(), .events = POLLIN };
    CHECK(poll(&watched, 1, 30000) == 1);
    CHECK(queued.calls == 0);
    while (queued.calls == 0 && poll(&watched, 1, 30000) == 1) portal_auth_run_completions();
    CHECK(queued.results == 1);
    portal_auth_session_release(queued.session);

    portal_auth_free(running);
    CHECK(forward(&options, url).outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    while (!queued.last && poll(&watched, 1, 30000) == 1) portal_auth_run_completions();
    CHECK(queued.last && queued.last_code == PORTAL_AUTH_E_SIGN_IN_CLOSED && queued.calls == 2);
    leave_runtime_folder(&runtime);
}

/* A runtime folder others can reach: refused at both ends, nothing sent. */
static void runtime_folder_others_reach_refused(void) {
    runtime_folder runtime = enter_runtime_folder();
    portal_auth_options options = forwarding_options();
    char url[512];
    grant_redirect("env-open", "c-forward@example.com", url, sizeof url);
    CHECK(chmod(runtime.path, 0755) == 0);
    forwarded unsafe = forward(&options, url);
    CHECK(unsafe.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && unsafe.reason == PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE);
    portal_auth *exposed = client_with(options);
    listened refused = {0};
    CHECK(portal_auth_listen_for_redirects(exposed, on_redirect, &refused, NULL) == PORTAL_AUTH_OK);
    wait_calls(&refused.calls);
    CHECK(refused.last && refused.last_reason == PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE);
    portal_auth_free(exposed);
    leave_runtime_folder(&runtime);
}

static void no_runtime_folder(void) {
    unsetenv("XDG_RUNTIME_DIR");
    portal_auth_options options = forwarding_options();
    forwarded missing = forward(&options, "myapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK");
    CHECK(missing.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && missing.reason == PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY);
}

/* Options that make no client: their error, through the callback. */
static void options_that_make_no_client(void) {
    portal_auth_options blank = forwarding_options();
    blank.auth_environment_id = " ";
    forwarded invalid = forward(&blank, "myapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK");
    CHECK(invalid.code == PORTAL_AUTH_E_INVALID_ARGUMENT && strcmp(invalid.name, "auth_environment_id") == 0);
}

static void arguments_that_cannot_start_a_call(void) {
    portal_auth_options options = forwarding_options();
    const char *url = "myapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK";
    forwarded never = {0};
    CHECK(portal_auth_forward_redirect(NULL, url, on_forwarded, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_forward_redirect(&options, NULL, on_forwarded, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_forward_redirect(&options, "\xff", on_forwarded, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_forward_redirect(&options, url, NULL, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    portal_auth_call *call = (portal_auth_call *)&never;
    CHECK(portal_auth_listen_for_redirects(NULL, on_redirect, &never, &call) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(call == NULL && never.calls == 0);
}

static const test_case cases[] = {
    { "nobody_listening_no_instance", nobody_listening_no_instance, NULL },
    { "listener_takes_and_replays", listener_takes_and_replays, NULL },
    { "other_redirects_and_applications_refused", other_redirects_and_applications_refused, NULL },
    { "one_listener_per_application", one_listener_per_application, NULL },
    { "cancel_ends_listening_beside_a_forked_child", cancel_ends_listening_beside_a_forked_child, NULL },
    { "queued_listener_and_free_ending_it", queued_listener_and_free_ending_it, NULL },
    { "runtime_folder_others_reach_refused", runtime_folder_others_reach_refused, NULL },
    { "no_runtime_folder", no_runtime_folder, NULL },
    { "options_that_make_no_client", options_that_make_no_client, NULL },
    { "arguments_that_cannot_start_a_call", arguments_that_cannot_start_a_call, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "forward_test", cases);
}
