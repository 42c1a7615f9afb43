/* C test of portal_auth_free in the middle of a sign-in's step, against the Portal emulator
 * in PORTAL_AUTH_TEST_API_HOST: freeing the client stops everything it started. A browser
 * sign-in whose authorize URL is on the wire when the client is freed ends
 * SIGN_IN_CLOSED once the answer comes, and no opener is called; a magic-link sign-in whose
 * email is still queued (every connection to the server busy) ends SIGN_IN_CLOSED, and the
 * email is never sent. The emulator holds requests until released, and the second case's
 * calls run through the completion queue, whose runs the test makes, so the order is
 * certain. Named cases (test_support.h's run_cases). */
#include "session_support.h"

/* The calls of idle_opener. */
static int opened;

/* Runs the completion queue while it is readable now: the calls' work that is ready, done. */
static void run_ready(int fd) {
    struct pollfd watched = { .fd = fd, .events = POLLIN };
    while (poll(&watched, 1, 0) == 1) portal_auth_run_completions();
}

/* Runs the queue, whose runs do its calls' I/O, until the emulator has `count` requests to
   `path`: after each wait for the descriptor (at most a second; it goes quiet once the
   requests are sent and held), for at most 30 s. */
static int run_until_seen(int fd, const char *path, int count) {
    for (int second = 0; second < 30; second++) {
        struct pollfd watched = { .fd = fd, .events = POLLIN };
        if (poll(&watched, 1, 1000) == 1) portal_auth_run_completions();
        if (requests_seen(path, count, 0) >= count) return 1;
    }
    return 0;
}

/* The emulator served every fault it was given: none is left for a later case. */
static void no_fault_left(void) {
    char body[256];
    emulator_request("/_emulator/faults", NULL, body, sizeof body);
    CHECK(strcmp(body, "{\"faults\":[]}") == 0);
}

static portal_auth *client_of(const char *id, const char *redirect) {
    emulator_environment(id, redirect, 0);
    portal_auth_options options = emulator_options(id);
    options.redirect_url = redirect;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

/* The authorize URL is on the wire when the client goes: the answer comes, no browser opens. */
static void free_while_fetching_the_authorize_url(void) {
    char redirect[128], body[1024];
    snprintf(redirect, sizeof redirect, "http://127.0.0.1:%d/callback", free_port());
    portal_auth *client = client_of("env-free-browser", redirect);
    CHECK(portal_auth_set_browser_opener(client, idle_opener, &opened) == PORTAL_AUTH_OK);
    clear_requests();
    emulator_request("/_emulator/faults", "{\"path\":\"/oauth/urls\",\"kind\":\"hold\"}", body, sizeof body);

    outcome signed_in = {0};
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
    CHECK(requests_seen("/oauth/urls", 1, 30) == 1);
    portal_auth_free(client);
    emulator_request("/_emulator/release", "{}", body, sizeof body);
    wait_calls(&signed_in.calls);
    CHECK(signed_in.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && signed_in.reason == PORTAL_AUTH_REASON_CLIENT_CLOSED);
    pthread_mutex_lock(&lock);
    CHECK(opened == 0);
    pthread_mutex_unlock(&lock);
    no_fault_left();
}

/* The email is queued behind 16 held requests when the client goes: it is never sent. */
static void free_while_the_email_waits_for_a_connection(void) {
    int fd = portal_auth_completion_fd();
    CHECK(fd >= 0);
    enum { connections = 16 };  /* per origin (ARCHITECTURE.md, "Transport") */
    char redirect[128], body[1024];
    snprintf(redirect, sizeof redirect, "http://127.0.0.1:%d/callback", free_port());
    portal_auth *client = client_of("env-free-magic", redirect);
    CHECK(portal_auth_set_completion_queue(client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    clear_requests();
    emulator_request("/_emulator/faults", "{\"path\":\"/methods\",\"kind\":\"hold\",\"count\":16}", body, sizeof body);
    int methods = 0;
    for (int i = 0; i < connections; i++) CHECK(portal_auth_get_methods(client, count_methods, &methods, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until_seen(fd, "/methods", connections));

    outcome signed_in = {0};
    CHECK(portal_auth_sign_in_with_magic_link(client, "c-free@example.com", 0, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
    run_ready(fd);  /* the sign-in binds its listener and queues its email, then waits */
    portal_auth_free(client);
    emulator_request("/_emulator/release", "{}", body, sizeof body);
    CHECK(run_until(fd, &methods, connections));
    CHECK(run_until(fd, &signed_in.calls, 1));
    CHECK(signed_in.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && signed_in.reason == PORTAL_AUTH_REASON_CLIENT_CLOSED);
    CHECK(requests_seen("/magic-links", 1, 0) == 0);
    no_fault_left();
}

static const test_case cases[] = {
    { "free_while_fetching_the_authorize_url", free_while_fetching_the_authorize_url, NULL },
    { "free_while_the_email_waits_for_a_connection", free_while_the_email_waits_for_a_connection, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "free_test", cases);
}
