/* C test of portal_auth_sign_in_with_magic_link against the Portal emulator whose base URL is
 * in PORTAL_AUTH_TEST_API_HOST, with Debian's real headless Chromium as the user's browser: it
 * opens the email's button (the emulator's page), follows its redirect to the loopback
 * listener, and ends on the page the library answers once the sign-in is done. No URL is
 * pasted anywhere. Also: the TOTP branch, a timeout and a cancellation (nothing exchanged),
 * the guard shared with a browser sign-in, the link handled with portal_auth_handle_redirect
 * meanwhile (one exchange, one callback, one session), hostile requests that neither complete
 * nor end the wait, portal_auth_free ending the wait and freeing the port for the next
 * client at once, and arguments that cannot start the call. Named cases, each with an
 * environment and client of its own (test_support.h's run_cases). */
#define _GNU_SOURCE
#include "session_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>

static void forget(outcome *out) {
    portal_auth_session_release(out->session);
    out->session = NULL;
}

static portal_auth *client_of(const char *id, const char *redirect) {
    portal_auth_options options = emulator_options(id);
    options.redirect_url = redirect;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

/* Debian's Chromium, headless, opening `url` as the user's browser; in a PID namespace of its
   own, so that none of its processes outlives it. Its output (the DOM of the page it ends
   on, --dump-dom) is read from `*out`. */
static pid_t chromium(const char *url, const char *profile, int *out) {
    char data_dir[256], home[256];
    snprintf(data_dir, sizeof data_dir, "--user-data-dir=%s", profile);
    snprintf(home, sizeof home, "HOME=%s", profile);
    const char *argv[32];
    int argc = 0;
    argv[argc++] = "unshare";
    if (geteuid() != 0) argv[argc++] = "--map-root-user";
    const char *rest[] = { "--pid", "--fork", "--kill-child", "--mount-proc", "/usr/bin/chromium", "--headless=new",
                           "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                           "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", "--no-proxy-server", data_dir, "--dump-dom", url, NULL };
    for (int i = 0; rest[i]; i++) argv[argc++] = rest[i];
    argv[argc] = NULL;
    char *env[] = { home, "PATH=/usr/bin:/bin", NULL };
    return spawn_piped(argv, env, NULL, out);
}

/* Waits for the browser to end (a minute at most) and keeps the page it printed. */
static void chromium_page(pid_t pid, int out, char *page, size_t size) {
    size_t length = 0;
    struct pollfd ready = { .fd = out, .events = POLLIN };
    while (length < size - 1 && poll(&ready, 1, 60000) == 1) {
        ssize_t count = read(out, page + length, size - 1 - length);
        if (count <= 0) break;
        length += (size_t)count;
    }
    page[length] = 0;
    close(out);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* The email's button opened in Chromium; the page it ends on. */
static void open_in_chromium(const char *email, int count, const char *profile, char *page, size_t size) {
    char link[2048];
    mail_field(email, count, "emailLink", link, sizeof link);
    CHECK(strstr(link, "/_emulator/mail/open?id=msg_") != NULL);
    int out = -1;
    pid_t pid = chromium(link, profile, &out);
    chromium_page(pid, out, page, size);
}

/* A GET of the email's link at the listener, as a page could make the browser send it: with
   `header`, and Host `host` when not NULL. The status. */
static long hostile_get(const char *link, const char *host, const char *header) {
    char host_line[128];
    struct curl_slist *headers = NULL;
    if (host) {
        snprintf(host_line, sizeof host_line, "Host: %s", host);
        headers = curl_slist_append(headers, host_line);
    }
    if (header) headers = curl_slist_append(headers, header);
    char text[4096] = "";
    response_body body = { text, sizeof text };
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, link);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    long status = 0;
    if (curl_easy_perform(easy) == CURLE_OK) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    return status;
}

/* The calls of idle_opener, across the cases. */
static int opener_calls;

/* Chromium's profile, one for the whole run. */
static char profile[] = "/tmp/portal-auth-chromium-XXXXXX";

/* A client of a new environment of its own, with or without TOTP, whose redirect URL is at a
   free loopback port. */
typedef struct { int port; char id[32], redirect[128]; portal_auth *client; } magic_client;

static void open_client(magic_client *at, int totp) {
    static int environments;
    at->port = free_port();
    snprintf(at->id, sizeof at->id, "env-c-magic-%d", ++environments);
    snprintf(at->redirect, sizeof at->redirect, "http://127.0.0.1:%d/callback", at->port);
    emulator_environment(at->id, at->redirect, totp);
    at->client = client_of(at->id, at->redirect);
    clear_requests();
}

/* Starts a magic-link sign-in of `email` on `at`'s client, ending in `out` (its call handle in
   `call`, unless NULL), and reads the link the user was sent into `link`. */
static void start_sign_in(magic_client *at, const char *email, outcome *out, portal_auth_call **call,
                          char *link, size_t size) {
    CHECK(portal_auth_sign_in_with_magic_link(at->client, email, 0, on_result, out, call) == PORTAL_AUTH_OK);
    mail_field(email, 1, "link", link, size);
}

/* The email opened in Chromium: signed in, and the page says so. */
static void email_opened_in_chromium_signs_in(void) {
    magic_client at;
    open_client(&at, 0);
    char page[1 << 16];
    outcome signed_in = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_sign_in_with_magic_link(at.client, " C-Magic@Example.com ", 0, on_result, &signed_in, &call) == PORTAL_AUTH_OK);
    CHECK(call != NULL);
    open_in_chromium("c-magic@example.com", 1, profile, page, sizeof page);
    wait_calls(&signed_in.calls);
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(strstr(page, "You are signed in. You can close this window and go back to the application.") != NULL);
    CHECK(connect_errno(at.port) != 0);
    portal_auth_call_free(call);
    forget(&signed_in);
    portal_auth_free(at.client);
}

/* The TOTP branch: the page sends the user back to the application for the code. */
static void totp_branch_sends_the_user_back(void) {
    magic_client at;
    open_client(&at, 1);
    char page[1 << 16];
    outcome step = {0};
    CHECK(portal_auth_sign_in_with_magic_link(at.client, "c-totp@example.com", 0, on_result, &step, NULL) == PORTAL_AUTH_OK);
    open_in_chromium("c-totp@example.com", 1, profile, page, sizeof page);
    wait_calls(&step.calls);
    CHECK(step.code == PORTAL_AUTH_OK && step.kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED);
    CHECK(strstr(page, "enter the code from your authenticator app") != NULL);
    char code[16];
    totp_code(at.id, "c-totp@example.com", code, sizeof code);
    outcome verified = verify(at.client, code, step.user_jwt);
    CHECK(verified.code == PORTAL_AUTH_OK && strcmp(verified.end_user_id, step.end_user_id) == 0);
    forget(&verified);
    portal_auth_free(at.client);
}

/* One sign-in at a time, with the browser sign-ins: refused with no request. */
static void one_sign_in_at_a_time_with_the_browser(void) {
    magic_client at;
    open_client(&at, 0);
    int opened_before = read_count(&opener_calls);
    CHECK(portal_auth_set_browser_opener(at.client, idle_opener, &opener_calls) == PORTAL_AUTH_OK);
    outcome browser = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_sign_in_with_google(at.client, 0, on_result, &browser, &call) == PORTAL_AUTH_OK);
    wait_count(&opener_calls, opened_before + 1);
    outcome refused = {0};
    CHECK(portal_auth_sign_in_with_magic_link(at.client, "c-guard@example.com", 0, on_result, &refused, NULL) == PORTAL_AUTH_OK);
    wait_calls(&refused.calls);
    CHECK(refused.code == PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS);
    portal_auth_call_cancel(call);
    wait_calls(&browser.calls);
    CHECK(browser.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && browser.reason == PORTAL_AUTH_REASON_SIGN_IN_CANCELLED);
    portal_auth_call_free(call);
    CHECK(count_requests("/magic-links") == 0);
    portal_auth_free(at.client);
}

/* A timeout, then a cancellation: closed, nothing exchanged, the port free again. */
static void timeout_and_cancel_end_the_wait(void) {
    magic_client at;
    open_client(&at, 0);
    char link[2048];
    outcome timed_out = {0};
    CHECK(portal_auth_sign_in_with_magic_link(at.client, "c-timeout@example.com", 300, on_result, &timed_out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&timed_out.calls);
    CHECK(timed_out.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && connect_errno(at.port) != 0);
    CHECK(timed_out.reason == PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT);
    outcome cancelled = {0};
    portal_auth_call *call = NULL;
    start_sign_in(&at, "c-cancel@example.com", &cancelled, &call, link, sizeof link);
    portal_auth_call_cancel(call);
    wait_calls(&cancelled.calls);
    CHECK(cancelled.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && connect_errno(at.port) != 0);
    CHECK(cancelled.reason == PORTAL_AUTH_REASON_SIGN_IN_CANCELLED);
    portal_auth_call_free(call);
    CHECK(count_requests("/magic-links") == 2 && count_requests("/magic-links/validations") == 0);
    portal_auth_free(at.client);
}

/* The link handled meanwhile (pasted): one exchange, the sign-in called back once, with the
   same session handle. */
static void link_handled_meanwhile_exchanged_once(void) {
    magic_client at;
    open_client(&at, 0);
    char link[2048];
    outcome waiting = {0};
    start_sign_in(&at, "c-pasted@example.com", &waiting, NULL, link, sizeof link);
    outcome pasted = redirect(at.client, link);
    wait_calls(&waiting.calls);
    CHECK(pasted.kind == PORTAL_AUTH_RESULT_AUTHENTICATED && waiting.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(pasted.session == waiting.session && waiting.calls == 1);
    CHECK(count_requests("/magic-links/validations") == 1 && connect_errno(at.port) != 0);
    forget(&pasted);
    forget(&waiting);
    portal_auth_free(at.client);
}

/* Hostile requests with the user's own link: another Host, an image. Refused, nothing
   exchanged, and the wait goes on until the browser comes. */
static void hostile_requests_neither_complete_nor_end_it(void) {
    magic_client at;
    open_client(&at, 0);
    char link[2048], page[1 << 16];
    outcome hostile = {0};
    start_sign_in(&at, "c-hostile@example.com", &hostile, NULL, link, sizeof link);
    char foreign[64];
    snprintf(foreign, sizeof foreign, "evil.example:%d", at.port);
    CHECK(hostile_get(link, foreign, NULL) == 421);
    CHECK(hostile_get(link, NULL, "Sec-Fetch-Dest: image") == 403);
    CHECK(count_requests("/magic-links/validations") == 0 && connect_errno(at.port) == 0 && hostile.calls == 0);
    open_in_chromium("c-hostile@example.com", 1, profile, page, sizeof page);
    wait_calls(&hostile.calls);
    CHECK(hostile.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    forget(&hostile);
    portal_auth_free(at.client);
}

/* portal_auth_free ends the wait at once and frees the port: the next client's sign-in on it
   starts at once (a browser's, then a magic link's). */
static void free_ends_the_wait_and_frees_the_port(void) {
    magic_client at;
    open_client(&at, 0);
    char link[2048], page[1 << 16];
    outcome ended = {0};
    start_sign_in(&at, "c-freed@example.com", &ended, NULL, link, sizeof link);
    portal_auth_free(at.client);
    CHECK(connect_errno(at.port) != 0);
    wait_calls(&ended.calls);
    CHECK(ended.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && ended.reason == PORTAL_AUTH_REASON_CLIENT_CLOSED);
    portal_auth *browser_client = client_of(at.id, at.redirect);
    int opened_before = read_count(&opener_calls);
    CHECK(portal_auth_set_browser_opener(browser_client, idle_opener, &opener_calls) == PORTAL_AUTH_OK);
    outcome browser_ended = {0};
    CHECK(portal_auth_sign_in_with_google(browser_client, 0, on_result, &browser_ended, NULL) == PORTAL_AUTH_OK);
    wait_count(&opener_calls, opened_before + 1);
    CHECK(connect_errno(at.port) == 0);
    portal_auth_free(browser_client);
    CHECK(connect_errno(at.port) != 0);
    wait_calls(&browser_ended.calls);
    CHECK(browser_ended.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && browser_ended.reason == PORTAL_AUTH_REASON_CLIENT_CLOSED);
    portal_auth *next = client_of(at.id, at.redirect);
    outcome again = {0};
    CHECK(portal_auth_sign_in_with_magic_link(next, "c-freed@example.com", 0, on_result, &again, NULL) == PORTAL_AUTH_OK);
    open_in_chromium("c-freed@example.com", 2, profile, page, sizeof page);
    wait_calls(&again.calls);
    CHECK(again.code == PORTAL_AUTH_OK && again.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    forget(&again);
    portal_auth_free(next);
}

/* Arguments that cannot start the call; a NULL email fails through the callback, as a blank
   one. */
static void arguments_that_cannot_start_the_call(void) {
    magic_client at;
    open_client(&at, 0);
    outcome never = {0};
    portal_auth_call *call = (portal_auth_call *)&never;
    CHECK(portal_auth_sign_in_with_magic_link(NULL, "a@example.com", 0, on_result, &never, &call) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(call == NULL);
    CHECK(portal_auth_sign_in_with_magic_link(at.client, "a@example.com", 0, NULL, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_sign_in_with_magic_link(at.client, "\xff", 0, on_result, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(never.calls == 0);
    outcome no_email = {0};
    CHECK(portal_auth_sign_in_with_magic_link(at.client, NULL, 0, on_result, &no_email, NULL) == PORTAL_AUTH_OK);
    wait_calls(&no_email.calls);
    CHECK(no_email.code == PORTAL_AUTH_E_INVALID_ARGUMENT);
    portal_auth_free(at.client);
}

static const test_case cases[] = {
    { "email_opened_in_chromium_signs_in", email_opened_in_chromium_signs_in, NULL },
    { "totp_branch_sends_the_user_back", totp_branch_sends_the_user_back, NULL },
    { "one_sign_in_at_a_time_with_the_browser", one_sign_in_at_a_time_with_the_browser, NULL },
    { "timeout_and_cancel_end_the_wait", timeout_and_cancel_end_the_wait, NULL },
    { "link_handled_meanwhile_exchanged_once", link_handled_meanwhile_exchanged_once, NULL },
    { "hostile_requests_neither_complete_nor_end_it", hostile_requests_neither_complete_nor_end_it, NULL },
    { "free_ends_the_wait_and_frees_the_port", free_ends_the_wait_and_frees_the_port, NULL },
    { "arguments_that_cannot_start_the_call", arguments_that_cannot_start_the_call, NULL },
};

int main(int argc, char **argv) {
    if (!mkdtemp(profile)) abort();
    int status = RUN_EMULATOR_CASES(argc, argv, "magic_link_test", cases);
    char remove[300];
    snprintf(remove, sizeof remove, "rm -rf %s", profile);
    if (system(remove) != 0) abort();
    return status;
}
