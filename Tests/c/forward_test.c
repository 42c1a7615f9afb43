/* C test of redirect forwarding against the Portal emulator whose base URL is in
 * PORTAL_AUTH_TEST_API_HOST, in a runtime folder of the test's own ($XDG_RUNTIME_DIR):
 * portal_auth_listen_for_redirects (its callback once per forwarded redirect, then its last
 * call), portal_auth_forward_redirect (taken, replayed, refused, no instance), one listener
 * per application and environment, the completion queue, cancellation and portal_auth_free
 * ending listening at once, a runtime folder others could reach, none at all, and arguments
 * that cannot start a call. (bindings/c/tests has the desktop's side: xdg-open starting the
 * sample as the URL handler.) */
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

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char runtime[] = "/tmp/portal-auth-runtime-XXXXXX";
    CHECK(mkdtemp(runtime) != NULL);   /* mode 0700, the user's, as a session's */
    setenv("XDG_RUNTIME_DIR", runtime, 1);
    portal_auth_options options = forwarding_options();
    char url[512];
    grant_redirect("env-open", "c-forward@example.com", url, sizeof url);

    /* Nobody listens yet: the next instance handles the URL itself. */
    forwarded none = forward(&options, url);
    CHECK(none.code == PORTAL_AUTH_OK && none.outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);

    /* The running instance listens; the next one forwards; the same URL again replays. */
    portal_auth *running = client_with(options);
    listened seen = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_listen_for_redirects(running, on_redirect, &seen, &call) == PORTAL_AUTH_OK);
    CHECK(call != NULL);
    forwarded taken = forward(&options, url);
    CHECK(taken.code == PORTAL_AUTH_OK && taken.outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&seen.calls, 1);
    CHECK(seen.results == 1 && seen.session != NULL && !seen.last);
    CHECK(forward(&options, url).outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&seen.calls, 2);
    CHECK(seen.results == 2 && seen.same_session == 1);
    /* Taken but no sign-in: nothing, as portal_auth_handle_redirect says. */
    CHECK(forward(&options, "myapp://auth/callback?nothing=here").outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_count(&seen.calls, 3);
    CHECK(seen.nothing == 1);

    /* Another redirect's URL is refused here, before anything is sent; and by the instance
       when the forwarding process is configured with another redirect URL. */
    CHECK(forward(&options, "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK").outcome == PORTAL_AUTH_FORWARD_REFUSED);
    portal_auth_options other = forwarding_options();
    other.redirect_url = "otherapp://auth/callback";
    CHECK(forward(&other, "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK").outcome == PORTAL_AUTH_FORWARD_REFUSED);
    /* Another application's instance is not this one. */
    portal_auth_options another_app = forwarding_options();
    another_app.application_id = "com.example.Another";
    CHECK(forward(&another_app, url).outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);

    /* One listener per application and environment: the second one's only call is its last. */
    portal_auth *second = client_with(options);
    listened in_use = {0};
    CHECK(portal_auth_listen_for_redirects(second, on_redirect, &in_use, NULL) == PORTAL_AUTH_OK);
    wait_calls(&in_use.calls);
    CHECK(in_use.last && in_use.last_code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE);
    CHECK(in_use.last_reason == PORTAL_AUTH_REASON_CHANNEL_IN_USE);
    portal_auth_free(second);

    /* Cancelling ends listening: the last call, SIGN_IN_CLOSED, and no instance any more;
       also while a child forked meanwhile holds the channel's lock file and socket. */
    descriptor_holder holder = fork_descriptor_holder();
    CHECK(holder.pid > 0);
    portal_auth_call_cancel(call);
    wait_count(&seen.calls, 4);
    CHECK(seen.last && seen.last_code == PORTAL_AUTH_E_SIGN_IN_CLOSED);
    CHECK(forward(&options, url).outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    portal_auth_call_free(call);
    portal_auth_session_release(seen.session);
    CHECK(seen.calls == 4 && seen.after_last == 0);
    /* The channel is free beside the child: the next listener takes it, and is forwarded to. */
    portal_auth *next = client_with(options);
    listened again = {0};
    CHECK(portal_auth_listen_for_redirects(next, on_redirect, &again, NULL) == PORTAL_AUTH_OK);
    grant_redirect("env-open", "c-forward-again@example.com", url, sizeof url);
    CHECK(forward(&options, url).outcome == PORTAL_AUTH_FORWARD_TAKEN);
    wait_calls(&again.calls);
    CHECK(again.results == 1 && !again.last);
    portal_auth_free(next);
    if (!again.last) wait_count(&again.calls, 2);  /* a refused listener's one call was its last */
    CHECK(again.last && again.last_code == PORTAL_AUTH_E_SIGN_IN_CLOSED);
    if (again.session) portal_auth_session_release(again.session);
    CHECK(end_descriptor_holder(&holder));

    /* Through the completion queue: the outcome only inside portal_auth_run_completions. */
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

    /* portal_auth_free ends listening at once: no instance as soon as it returns. */
    portal_auth_free(running);
    CHECK(forward(&options, url).outcome == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    while (!queued.last && poll(&watched, 1, 30000) == 1) portal_auth_run_completions();
    CHECK(queued.last && queued.last_code == PORTAL_AUTH_E_SIGN_IN_CLOSED && queued.calls == 2);

    /* A runtime folder others can reach: refused at both ends, nothing sent. */
    CHECK(chmod(runtime, 0755) == 0);
    forwarded unsafe = forward(&options, url);
    CHECK(unsafe.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && unsafe.reason == PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE);
    portal_auth *exposed = client_with(options);
    listened refused = {0};
    CHECK(portal_auth_listen_for_redirects(exposed, on_redirect, &refused, NULL) == PORTAL_AUTH_OK);
    wait_calls(&refused.calls);
    CHECK(refused.last && refused.last_reason == PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE);
    portal_auth_free(exposed);
    CHECK(chmod(runtime, 0700) == 0);

    /* No runtime folder at all. */
    unsetenv("XDG_RUNTIME_DIR");
    forwarded missing = forward(&options, url);
    CHECK(missing.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && missing.reason == PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY);

    /* Options that make no client: their error, through the callback. */
    portal_auth_options blank = forwarding_options();
    blank.auth_environment_id = " ";
    forwarded invalid = forward(&blank, url);
    CHECK(invalid.code == PORTAL_AUTH_E_INVALID_ARGUMENT && strcmp(invalid.name, "auth_environment_id") == 0);

    /* Arguments that cannot start a call. */
    forwarded never = {0};
    CHECK(portal_auth_forward_redirect(NULL, url, on_forwarded, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_forward_redirect(&options, NULL, on_forwarded, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_forward_redirect(&options, "\xff", on_forwarded, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_forward_redirect(&options, url, NULL, &never) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    call = (portal_auth_call *)&never;
    CHECK(portal_auth_listen_for_redirects(NULL, on_redirect, &never, &call) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(call == NULL && never.calls == 0);

    char remove[160];
    snprintf(remove, sizeof remove, "rm -rf %s", runtime);
    CHECK(system(remove) == 0);
    curl_global_cleanup();
    return report("forward_test");
}
