/* C test of the browser sign-in entry points against the Portal emulator whose base URL is in
 * PORTAL_AUTH_TEST_API_HOST. The opener installed here is the browser: it loads the authorize
 * URL with libcurl and follows the fake provider's redirect to the loopback listener, before
 * it returns (the listener already answers then). Also: the ephemeral flag, a failing opener,
 * cancellation and timeout (nothing exchanged), two sign-ins at once, a redirect URL that is
 * not loopback, and arguments that cannot start a call. The opener never runs on the I/O
 * thread: a slow one delays no other call, one may call the library and wait, and the default
 * one ($BROWSER) runs off it too; the browser it starts (a script that lists its descriptors)
 * inherits none but 0, 1 and 2. Named cases, each with an environment and client of its own
 * (test_support.h's run_cases). */
#include "session_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* The library's I/O thread, which carries every request of the process. */
#define IO_THREAD "portal-auth-io"

/* What an opener saw, and for the following one, the page it ended on. */
typedef struct {
    int calls;
    int follow;   /* load the URL and follow its redirects */
    int status;   /* returned to the library */
    char url[2048];
    int32_t ephemeral;
    long http_code;
    char page[4096];
} browser;

static int opener(void *user_data, const char *url, portal_auth_bool ephemeral) {
    browser *b = user_data;
    snprintf(b->url, sizeof b->url, "%s", url);
    b->ephemeral = ephemeral;
    if (b->follow) {
        b->page[0] = 0;
        response_body body = { b->page, sizeof b->page };
        CURL *easy = curl_easy_init();
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_body);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
        if (curl_easy_perform(easy) == CURLE_OK) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &b->http_code);
        curl_easy_cleanup(easy);
    }
    count_call(&b->calls);
    return b->status;
}

/* An opener that first makes a descriptor holder, which holds the listening socket too, and
   then is the `opener` browser. */
typedef struct {
    browser follow;
    descriptor_holder holder;
    int forked;
} forking_browser;

static int forking_opener(void *user_data, const char *url, portal_auth_bool ephemeral) {
    forking_browser *f = user_data;
    if (!f->forked) {
        f->forked = 1;
        f->holder = fork_descriptor_holder();
    }
    return opener(&f->follow, url, ephemeral);
}

static void wait_result(outcome *out) { wait_calls(&out->calls); }

/* An opener that first makes a call of the library and waits for its callback, then
   behaves as `follow`. */
typedef struct {
    portal_auth *client;
    int methods;       /* get_methods called back */
    int answered;      /* ... within the bound */
    char thread[16];   /* the thread the opener ran on */
    browser *follow;
} reentrant_opener;

static int reentrant(void *user_data, const char *url, portal_auth_bool ephemeral) {
    reentrant_opener *r = user_data;
    prctl(PR_GET_NAME, r->thread, 0, 0, 0);
    if (portal_auth_get_methods(r->client, count_methods, &r->methods, NULL) == PORTAL_AUTH_OK)
        r->answered = wait_count_within(&r->methods, 1, 30);
    return opener(r->follow, url, ephemeral);
}

/* An opener that takes its time: it waits until the test releases it, then fails. */
typedef struct {
    int started;
    int released;
    char thread[16];
} slow_opener_gate;

static int slow_opener(void *user_data, const char *url, portal_auth_bool ephemeral) {
    (void)url;
    (void)ephemeral;
    slow_opener_gate *gate = user_data;
    prctl(PR_GET_NAME, gate->thread, 0, 0, 0);
    count_call(&gate->started);
    wait_count_within(&gate->released, 1, 60);
    return 1;
}

/* The thread that logged the default opener's launch, and how many launches. */
static char launch_thread[16];
static int launches;

static void on_launch_line(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    if (strstr(message, "opened the browser with")) {
        prctl(PR_GET_NAME, launch_thread, 0, 0, 0);
        count_call(&launches);
    }
}

/* Signs in with the default opener and $BROWSER set to `command`, until the browser is
   launched; then cancels. The thread the default opener ran on is in launch_thread. */
static void launch_default_browser(portal_auth *client, const char *command) {
    setenv("BROWSER", command, 1);
    CHECK(portal_auth_set_browser_opener(client, NULL, NULL) == PORTAL_AUTH_OK);
    portal_auth_set_log_handler(on_launch_line, NULL);
    int before = launches;
    outcome signed_in = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &signed_in, &call) == PORTAL_AUTH_OK);
    CHECK(wait_count_within(&launches, before + 1, 60));
    portal_auth_call_cancel(call);
    wait_result(&signed_in);
    CHECK(signed_in.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && signed_in.reason == PORTAL_AUTH_REASON_SIGN_IN_CANCELLED);
    portal_auth_call_free(call);
    portal_auth_set_log_handler(audit_log_line, NULL);
    unsetenv("BROWSER");
}

/* The descriptors a fake browser found open (the numbers `ls /proc/self/fd` wrote to the
   FIFO `fd` reads), as a bit set; -1 when nothing came within a minute. */
static long long listed_descriptors(int fd) {
    char text[1024];
    size_t length = 0;
    struct pollfd ready = { .fd = fd, .events = POLLIN };
    while (length < sizeof text - 1 && poll(&ready, 1, 60000) == 1) {
        ssize_t count = read(fd, text + length, sizeof text - 1 - length);
        if (count <= 0) break;
        length += (size_t)count;
    }
    if (length == 0) return -1;
    text[length] = 0;
    long long set = 0;
    for (char *at = text, *end; *at; at = end) {
        long number = strtol(at, &end, 10);
        if (end == at) { end++; continue; }
        set |= number < 62 ? 1LL << number : 1LL << 62;
    }
    return set;
}

/* The browser the default opener starts inherits 0, 1 and 2 and nothing else: not curl's
   connection to the API or its wake-up pair, not the listener's sockets, not a descriptor
   of the host's that is not close-on-exec. */
static void check_the_browser_inherits_no_descriptor(portal_auth *client) {
    char folder[] = "/tmp/portal-auth-browser-XXXXXX";
    CHECK(mkdtemp(folder) != NULL);
    char script[128], listing[160];
    snprintf(script, sizeof script, "%s/browser", folder);
    snprintf(listing, sizeof listing, "%s.fds", script);
    FILE *file = fopen(script, "w");
    CHECK(file != NULL);
    if (!file) return;
    /* Its standard output is the FIFO; ls opens /proc/self/fd itself, on the lowest free
       descriptor: 3 when none was inherited. */
    fputs("#!/bin/sh\nexec ls /proc/self/fd > \"$0.fds\"\n", file);
    fclose(file);
    chmod(script, 0755);
    CHECK(mkfifo(listing, 0600) == 0);
    /* Open before the browser starts, so that it never waits for a reader. */
    int reader = open(listing, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    CHECK(reader >= 0);
    int host_pipe[2];
    CHECK(pipe(host_pipe) == 0);   /* not close-on-exec */

    launch_default_browser(client, script);
    CHECK(listed_descriptors(reader) == 0xF);
    close(reader);
    CHECK(strcmp(launch_thread, IO_THREAD) != 0);

    close(host_pipe[0]);
    close(host_pipe[1]);
    unlink(listing);
    unlink(script);
    rmdir(folder);
}

/* A client of a new environment of its own whose allow-listed redirect URL is at a free
   loopback port; the emulator's requests cleared. */
typedef struct { int port; portal_auth *client; } browser_client;

static browser_client open_client(void) {
    static int environments;
    browser_client at = { .port = free_port() };
    char id[32], redirect[128], json[512], answer[1024];
    snprintf(id, sizeof id, "env-c-browser-%d", ++environments);
    snprintf(redirect, sizeof redirect, "http://127.0.0.1:%d/callback", at.port);
    snprintf(json, sizeof json, "{\"id\":\"%s\",\"allowedMethods\":[\"GOOGLE\",\"APPLE\"],"
             "\"redirectUrls\":[\"%s\"],\"totpRequired\":false,\"accountAbstraction\":false,\"autoCreateWallet\":false}",
             id, redirect);
    emulator_request("/_emulator/environments", json, answer, sizeof answer);
    portal_auth_options options = emulator_options(id);
    options.redirect_url = redirect;
    CHECK(portal_auth_new(&options, &at.client, NULL) == PORTAL_AUTH_OK);
    clear_requests();
    return at;
}

/* The ephemeral flag: off by default, settable. */
static void ephemeral_flag_off_by_default(void) {
    browser_client at = open_client();
    CHECK(portal_auth_prefers_ephemeral_web_browser_session(at.client) == PORTAL_AUTH_FALSE);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(at.client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    CHECK(portal_auth_prefers_ephemeral_web_browser_session(at.client) == PORTAL_AUTH_TRUE);
    portal_auth_free(at.client);
}

/* Google: the opener, given the ephemeral flag, follows the provider back to the listener. */
static void google_opener_follows_back_to_the_listener(void) {
    browser_client at = open_client();
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(at.client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    browser following = { .follow = 1 };
    CHECK(portal_auth_set_browser_opener(at.client, opener, &following) == PORTAL_AUTH_OK);
    outcome google = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &google, &call) == PORTAL_AUTH_OK);
    CHECK(call != NULL);
    wait_result(&google);
    CHECK(google.code == PORTAL_AUTH_OK && google.kind == PORTAL_AUTH_RESULT_AUTHENTICATED && google.session != NULL);
    CHECK(following.calls == 1 && following.ephemeral == 1);
    CHECK(strstr(following.url, "/_emulator/oauth/google/authorize?state=") != NULL);
    CHECK(following.http_code == 200 && strstr(following.page, "Sign-in received") != NULL);
    portal_auth_call_free(call);
    portal_auth_session_release(google.session);
    portal_auth_free(at.client);
}

/* Apple, without the ephemeral flag. A negative timeout is the default wait, as 0 is. */
static void apple_without_the_ephemeral_flag(void) {
    browser_client at = open_client();
    browser following = { .follow = 1 };
    CHECK(portal_auth_set_browser_opener(at.client, opener, &following) == PORTAL_AUTH_OK);
    outcome apple = {0};
    CHECK(portal_auth_sign_in_with_apple(at.client, -1, on_result, &apple, NULL) == PORTAL_AUTH_OK);
    wait_result(&apple);
    CHECK(apple.code == PORTAL_AUTH_OK && apple.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(following.calls == 1 && following.ephemeral == 0);
    CHECK(strstr(following.url, "/_emulator/oauth/apple/authorize?state=") != NULL);
    portal_auth_session_release(apple.session);
    portal_auth_free(at.client);
}

/* A child forked while the listener listened holds the listening socket too: once the
   sign-in has ended its port refuses connections all the same, and the next sign-in listens
   on it at once, while the child lives. */
static void forked_child_keeps_no_listener(void) {
    browser_client at = open_client();
    forking_browser forking = { .follow = { .follow = 1 }, .holder = { .pid = -1, .release = { -1, -1 } } };
    CHECK(portal_auth_set_browser_opener(at.client, forking_opener, &forking) == PORTAL_AUTH_OK);
    outcome forked = {0};
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &forked, NULL) == PORTAL_AUTH_OK);
    wait_result(&forked);
    CHECK(forking.holder.pid > 0);
    CHECK(forked.code == PORTAL_AUTH_OK && forked.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(connect_errno(at.port) == ECONNREFUSED);
    outcome beside_the_child = {0};
    CHECK(portal_auth_sign_in_with_apple(at.client, 0, on_result, &beside_the_child, NULL) == PORTAL_AUTH_OK);
    wait_result(&beside_the_child);
    CHECK(beside_the_child.code == PORTAL_AUTH_OK && beside_the_child.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(end_descriptor_holder(&forking.holder));
    if (forked.session) portal_auth_session_release(forked.session);
    if (beside_the_child.session) portal_auth_session_release(beside_the_child.session);
    portal_auth_free(at.client);
}

/* An opener that fails: unavailable, its reason, and the value it returned; nothing reaches
   the grant exchange. */
static void failing_opener_is_unavailable(void) {
    browser_client at = open_client();
    browser failing = { .status = 7 };
    CHECK(portal_auth_set_browser_opener(at.client, opener, &failing) == PORTAL_AUTH_OK);
    outcome unavailable = {0};
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &unavailable, NULL) == PORTAL_AUTH_OK);
    wait_result(&unavailable);
    CHECK(unavailable.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && failing.calls == 1);
    CHECK(unavailable.reason == PORTAL_AUTH_REASON_OPENER_FAILED);
    CHECK(strcmp(unavailable.message,
                 "Browser sign-in is not possible: the application's browser opener failed (it returned 7).") == 0);
    CHECK(unavailable.url[0] == 0);
    CHECK(count_requests("/oauth/urls") == 1 && count_requests("/oauth/tokens") == 0);
    portal_auth_free(at.client);
}

/* An opener with no browser to open: NO_BROWSER at once, with the URL it was given to show
   the user instead. */
static void no_browser_gives_the_url_to_show(void) {
    browser_client at = open_client();
    browser no_browser = { .status = PORTAL_AUTH_REASON_NO_BROWSER };
    CHECK(portal_auth_set_browser_opener(at.client, opener, &no_browser) == PORTAL_AUTH_OK);
    outcome nowhere = {0};
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &nowhere, NULL) == PORTAL_AUTH_OK);
    wait_result(&nowhere);
    CHECK(nowhere.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && nowhere.reason == PORTAL_AUTH_REASON_NO_BROWSER);
    CHECK(no_browser.calls == 1 && strcmp(nowhere.url, no_browser.url) == 0 && strstr(nowhere.url, "/oauth/google/authorize"));
    CHECK(strstr(nowhere.message, nowhere.url) == NULL);
    CHECK(count_requests("/oauth/tokens") == 0);
    portal_auth_free(at.client);
}

/* The port in use: unavailable, before any request. */
static void port_in_use_is_unavailable(void) {
    browser_client at = open_client();
    browser failing = { .status = 7 };
    CHECK(portal_auth_set_browser_opener(at.client, opener, &failing) == PORTAL_AUTH_OK);
    int taken = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                   .sin_port = htons((uint16_t)at.port) };
    CHECK(taken >= 0 && bind(taken, (struct sockaddr *)&address, sizeof address) == 0 && listen(taken, 1) == 0);
    outcome in_use = {0};
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &in_use, NULL) == PORTAL_AUTH_OK);
    wait_result(&in_use);
    close(taken);
    CHECK(in_use.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && in_use.reason == PORTAL_AUTH_REASON_PORT_IN_USE);
    CHECK(strstr(in_use.message, "the port is in use") != NULL && failing.calls == 0);
    CHECK(count_requests("/oauth/urls") == 0);
    portal_auth_free(at.client);
}

/* An opener that opens nothing: cancellation while waiting, then the timeout, end closed; a
   second sign-in of the client meanwhile is refused, with no request. Nothing reaches the
   grant exchange. */
static void cancel_and_timeout_end_closed(void) {
    browser_client at = open_client();
    browser idle = {0};
    CHECK(portal_auth_set_browser_opener(at.client, opener, &idle) == PORTAL_AUTH_OK);
    outcome cancelled = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &cancelled, &call) == PORTAL_AUTH_OK);
    wait_calls(&idle.calls);
    outcome second = {0};
    CHECK(portal_auth_sign_in_with_apple(at.client, 0, on_result, &second, NULL) == PORTAL_AUTH_OK);
    wait_result(&second);
    CHECK(second.code == PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS && second.reason == PORTAL_AUTH_REASON_NONE);
    portal_auth_call_cancel(call);
    wait_result(&cancelled);
    CHECK(cancelled.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && cancelled.reason == PORTAL_AUTH_REASON_SIGN_IN_CANCELLED);
    portal_auth_call_free(call);

    outcome timed_out = {0};
    CHECK(portal_auth_sign_in_with_apple(at.client, 200, on_result, &timed_out, NULL) == PORTAL_AUTH_OK);
    wait_result(&timed_out);
    CHECK(timed_out.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && idle.calls == 2);
    CHECK(timed_out.reason == PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT);
    CHECK(count_requests("/oauth/urls") == 2 && count_requests("/oauth/tokens") == 0);
    portal_auth_free(at.client);
}

/* The opener runs off the I/O thread: it may call the library and wait for the result. */
static void opener_may_call_the_library(void) {
    browser_client at = open_client();
    browser follow_after = { .follow = 1 };
    reentrant_opener calling = { .client = at.client, .follow = &follow_after };
    CHECK(portal_auth_set_browser_opener(at.client, reentrant, &calling) == PORTAL_AUTH_OK);
    outcome reentered = {0};
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &reentered, NULL) == PORTAL_AUTH_OK);
    wait_result(&reentered);
    CHECK(calling.answered == 1);
    CHECK(strcmp(calling.thread, IO_THREAD) != 0);
    CHECK(reentered.code == PORTAL_AUTH_OK && reentered.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    if (reentered.session) portal_auth_session_release(reentered.session);
    portal_auth_free(at.client);
}

/* A slow opener delays only its own sign-in: another client's call completes meanwhile. */
static void slow_opener_delays_only_its_sign_in(void) {
    browser_client at = open_client();
    slow_opener_gate gate = {0};
    CHECK(portal_auth_set_browser_opener(at.client, slow_opener, &gate) == PORTAL_AUTH_OK);
    outcome slow = {0};
    CHECK(portal_auth_sign_in_with_apple(at.client, 0, on_result, &slow, NULL) == PORTAL_AUTH_OK);
    wait_calls(&gate.started);
    portal_auth *other = NULL;
    portal_auth_options other_options = emulator_options("env-open");
    CHECK(portal_auth_new(&other_options, &other, NULL) == PORTAL_AUTH_OK);
    int other_methods = 0;
    CHECK(portal_auth_get_methods(other, count_methods, &other_methods, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_count_within(&other_methods, 1, 30));
    count_call(&gate.released);
    wait_result(&slow);
    CHECK(slow.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE);
    CHECK(strcmp(gate.thread, IO_THREAD) != 0);
    portal_auth_free(other);
    portal_auth_free(at.client);
}

/* A sign-in calls the opener installed when its call was made, whatever is installed before
   its work starts: the host frees an opener it replaced, no sign-in of its being under way
   (under AddressSanitizer in make test). The client runs on a queue of its own, which this
   thread runs only at the end: a library thread starts the work meanwhile, after the swap. */
static void replaced_opener_is_never_called(void) {
    static int environments;
    char id[32], redirect[128], json[512], answer[1024];
    int port = free_port();
    snprintf(id, sizeof id, "env-c-swap-%d", ++environments);
    snprintf(redirect, sizeof redirect, "http://127.0.0.1:%d/callback", port);
    snprintf(json, sizeof json, "{\"id\":\"%s\",\"allowedMethods\":[\"GOOGLE\"],\"redirectUrls\":[\"%s\"],"
             "\"totpRequired\":false,\"accountAbstraction\":false,\"autoCreateWallet\":false}", id, redirect);
    emulator_request("/_emulator/environments", json, answer, sizeof answer);
    portal_auth_completion_queue *queue = NULL;
    CHECK(portal_auth_completion_queue_new(&queue) == PORTAL_AUTH_OK);
    portal_auth_options options = emulator_options(id);
    options.redirect_url = redirect;
    options.completion_queue = queue;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    clear_requests();
    emulator_request("/_emulator/faults", "{\"path\":\"/oauth/urls\",\"kind\":\"hold\"}", answer, sizeof answer);

    browser *first = calloc(1, sizeof *first), *second = calloc(1, sizeof *second), last = {0};
    first->follow = 1;
    CHECK(portal_auth_set_browser_opener(client, opener, first) == PORTAL_AUTH_OK);
    outcome google = {0};
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &google, NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_set_browser_opener(client, opener, second) == PORTAL_AUTH_OK);
    CHECK(requests_seen("/oauth/urls", 1, 30) == 1);
    CHECK(portal_auth_set_browser_opener(client, opener, &last) == PORTAL_AUTH_OK);
    free(second);
    emulator_request("/_emulator/release", "{}", answer, sizeof answer);
    CHECK(run_queue_until(queue, &google.calls, 1));
    CHECK(google.code == PORTAL_AUTH_OK && google.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(first->calls == 1 && last.calls == 0);
    free(first);
    if (google.session) portal_auth_session_release(google.session);
    portal_auth_free(client);
    portal_auth_completion_queue_free(queue);
}

/* The default opener too runs off the I/O thread, and its browser inherits nothing. */
static void default_opener_browser_inherits_nothing(void) {
    browser_client at = open_client();
    check_the_browser_inherits_no_descriptor(at.client);
    portal_auth_free(at.client);
}

/* A redirect URL that is not loopback: unavailable, before any request. */
static void redirect_not_loopback_is_unavailable(void) {
    portal_auth_options app_options = emulator_options("env-open");
    portal_auth *app = NULL;
    CHECK(portal_auth_new(&app_options, &app, NULL) == PORTAL_AUTH_OK);
    clear_requests();
    browser idle = {0};
    CHECK(portal_auth_set_browser_opener(app, opener, &idle) == PORTAL_AUTH_OK);
    outcome not_loopback = {0};
    CHECK(portal_auth_sign_in_with_google(app, 0, on_result, &not_loopback, NULL) == PORTAL_AUTH_OK);
    wait_result(&not_loopback);
    CHECK(not_loopback.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && idle.calls == 0);
    CHECK(not_loopback.reason == PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK);
    CHECK(count_requests("/oauth/urls") == 0);
    portal_auth_free(app);
}

/* Arguments that cannot start a call, and NULL handles; NULL restores the default opener. */
static void arguments_that_cannot_start_a_call(void) {
    browser_client at = open_client();
    browser idle = {0};
    outcome never = {0};
    portal_auth_call *call = (portal_auth_call *)&never;
    CHECK(portal_auth_sign_in_with_google(NULL, 0, on_result, &never, &call) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(call == NULL);
    CHECK(portal_auth_sign_in_with_apple(at.client, 0, NULL, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_browser_opener(NULL, opener, &idle) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(at.client, (portal_auth_bool)2) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(at.client, (portal_auth_bool)-1) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(NULL, PORTAL_AUTH_TRUE) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_prefers_ephemeral_web_browser_session(NULL) == PORTAL_AUTH_FALSE);
    CHECK(portal_auth_set_browser_opener(at.client, NULL, NULL) == PORTAL_AUTH_OK);
    CHECK(never.calls == 0 && idle.calls == 0);
    portal_auth_free(at.client);
}

static const test_case cases[] = {
    { "ephemeral_flag_off_by_default", ephemeral_flag_off_by_default, NULL },
    { "google_opener_follows_back_to_the_listener", google_opener_follows_back_to_the_listener, NULL },
    { "apple_without_the_ephemeral_flag", apple_without_the_ephemeral_flag, NULL },
    { "forked_child_keeps_no_listener", forked_child_keeps_no_listener, NULL },
    { "failing_opener_is_unavailable", failing_opener_is_unavailable, NULL },
    { "no_browser_gives_the_url_to_show", no_browser_gives_the_url_to_show, NULL },
    { "port_in_use_is_unavailable", port_in_use_is_unavailable, NULL },
    { "cancel_and_timeout_end_closed", cancel_and_timeout_end_closed, NULL },
    { "opener_may_call_the_library", opener_may_call_the_library, NULL },
    { "slow_opener_delays_only_its_sign_in", slow_opener_delays_only_its_sign_in, NULL },
    { "replaced_opener_is_never_called", replaced_opener_is_never_called, NULL },
    { "default_opener_browser_inherits_nothing", default_opener_browser_inherits_nothing, NULL },
    { "redirect_not_loopback_is_unavailable", redirect_not_loopback_is_unavailable, NULL },
    { "arguments_that_cannot_start_a_call", arguments_that_cannot_start_a_call, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "browser_test", cases);
}
