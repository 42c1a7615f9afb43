/* C test of the browser sign-in entry points against the Portal emulator whose base URL is in
 * PORTAL_AUTH_TEST_API_HOST. The opener installed here is the browser: it loads the authorize
 * URL with libcurl and follows the fake provider's redirect to the loopback listener, before
 * it returns (the listener already answers then). Also: the ephemeral flag, a failing opener,
 * cancellation and timeout (nothing exchanged), two sign-ins at once, a redirect URL that is
 * not loopback, and arguments that cannot start a call. */
#include "test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    int calls;
    portal_auth_code code;
    portal_auth_reason reason;
    int kind;
    char message[512];
    portal_auth_session *session; /* retained */
} outcome;

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->reason = portal_auth_error_reason(error);
    if (error) snprintf(out->message, sizeof out->message, "%s", portal_auth_error_message(error));
    out->kind = result ? portal_auth_result_kind(result) : 0;
    if (out->kind == PORTAL_AUTH_RESULT_AUTHENTICATED) out->session = portal_auth_session_retain(portal_auth_result_session(result));
    count_call(&out->calls);
}

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

/* A loopback port nobody listens on now. */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof address;
    if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
        getsockname(fd, (struct sockaddr *)&address, &length) != 0) abort();
    close(fd);
    return ntohs(address.sin_port);
}

static void clear_requests(void) {
    char url[1024];
    snprintf(url, sizeof url, "%s/_emulator/requests", getenv("PORTAL_AUTH_TEST_API_HOST"));
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_body);
    char text[256] = "";
    response_body body = { text, sizeof text };
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(easy) != CURLE_OK) abort();
    curl_easy_cleanup(easy);
}

/* How many recorded requests went to `path` (under /api/v3/auth). */
static int count_requests(const char *path) {
    static char answer[1 << 16];
    char needle[128];
    emulator_request("/_emulator/requests", NULL, answer, sizeof answer);
    snprintf(needle, sizeof needle, "\"path\":\"/api/v3/auth%s\"", path);
    int count = 0;
    for (const char *at = strstr(answer, needle); at; at = strstr(at + 1, needle)) count++;
    return count;
}

static void wait_result(outcome *out) { wait_calls(&out->calls); }

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);

    /* An environment whose allow-listed redirect URL is a free loopback port. */
    char redirect[128], json[512], answer[1024];
    snprintf(redirect, sizeof redirect, "http://127.0.0.1:%d/callback", free_port());
    snprintf(json, sizeof json, "{\"id\":\"env-c-browser\",\"allowedMethods\":[\"GOOGLE\",\"APPLE\"],"
             "\"redirectUrls\":[\"%s\"],\"totpRequired\":false,\"accountAbstraction\":false,\"autoCreateWallet\":false}", redirect);
    emulator_request("/_emulator/environments", json, answer, sizeof answer);
    portal_auth_options options = emulator_options("env-c-browser");
    options.redirect_url = redirect;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);

    /* The ephemeral flag: off by default, settable, passed to the opener. */
    CHECK(portal_auth_prefers_ephemeral_web_browser_session(client) == PORTAL_AUTH_FALSE);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    CHECK(portal_auth_prefers_ephemeral_web_browser_session(client) == PORTAL_AUTH_TRUE);

    /* Google: the opener follows the provider back to the listener. */
    browser following = { .follow = 1 };
    CHECK(portal_auth_set_browser_opener(client, opener, &following) == PORTAL_AUTH_OK);
    outcome google = {0};
    portal_auth_call *call = NULL;
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &google, &call) == PORTAL_AUTH_OK);
    CHECK(call != NULL);
    wait_result(&google);
    CHECK(google.code == PORTAL_AUTH_OK && google.kind == PORTAL_AUTH_RESULT_AUTHENTICATED && google.session != NULL);
    CHECK(following.calls == 1 && following.ephemeral == 1);
    CHECK(strstr(following.url, "/_emulator/oauth/google/authorize?state=") != NULL);
    CHECK(following.http_code == 200 && strstr(following.page, "Sign-in received") != NULL);
    portal_auth_call_free(call);
    portal_auth_session_release(google.session);

    /* Apple, without the ephemeral flag. A negative timeout is the default wait, as 0 is. */
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(client, PORTAL_AUTH_FALSE) == PORTAL_AUTH_OK);
    outcome apple = {0};
    CHECK(portal_auth_sign_in_with_apple(client, -1, on_result, &apple, NULL) == PORTAL_AUTH_OK);
    wait_result(&apple);
    CHECK(apple.code == PORTAL_AUTH_OK && apple.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(following.calls == 2 && following.ephemeral == 0);
    CHECK(strstr(following.url, "/_emulator/oauth/apple/authorize?state=") != NULL);
    portal_auth_session_release(apple.session);

    /* From here on nothing reaches the grant exchange. */
    clear_requests();

    /* An opener that fails: unavailable, its reason, and the value it returned. */
    browser failing = { .status = 7 };
    CHECK(portal_auth_set_browser_opener(client, opener, &failing) == PORTAL_AUTH_OK);
    outcome unavailable = {0};
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &unavailable, NULL) == PORTAL_AUTH_OK);
    wait_result(&unavailable);
    CHECK(unavailable.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && failing.calls == 1);
    CHECK(unavailable.reason == PORTAL_AUTH_REASON_OPENER_FAILED);
    CHECK(strcmp(unavailable.message,
                 "Browser sign-in is not possible: the application's browser opener failed (it returned 7).") == 0);

    /* The port in use: unavailable, before any request. (SO_REUSEADDR: the port's closed
       connections of the sign-ins above may linger in TIME_WAIT.) */
    int taken = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    setsockopt(taken, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                   .sin_port = htons((uint16_t)atoi(strrchr(redirect, ':') + 1)) };
    CHECK(taken >= 0 && bind(taken, (struct sockaddr *)&address, sizeof address) == 0 && listen(taken, 1) == 0);
    outcome in_use = {0};
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &in_use, NULL) == PORTAL_AUTH_OK);
    wait_result(&in_use);
    close(taken);
    CHECK(in_use.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && in_use.reason == PORTAL_AUTH_REASON_PORT_IN_USE);
    CHECK(strstr(in_use.message, "the port is in use") != NULL && failing.calls == 1);

    /* An opener that opens nothing: cancellation while waiting, then the timeout, end closed. */
    browser idle = {0};
    CHECK(portal_auth_set_browser_opener(client, opener, &idle) == PORTAL_AUTH_OK);
    outcome cancelled = {0};
    CHECK(portal_auth_sign_in_with_google(client, 0, on_result, &cancelled, &call) == PORTAL_AUTH_OK);
    wait_calls(&idle.calls);
    /* A second sign-in of the client meanwhile is refused, with no request. */
    outcome second = {0};
    CHECK(portal_auth_sign_in_with_apple(client, 0, on_result, &second, NULL) == PORTAL_AUTH_OK);
    wait_result(&second);
    CHECK(second.code == PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS && second.reason == PORTAL_AUTH_REASON_NONE);
    portal_auth_call_cancel(call);
    wait_result(&cancelled);
    CHECK(cancelled.code == PORTAL_AUTH_E_SIGN_IN_CLOSED);
    portal_auth_call_free(call);

    outcome timed_out = {0};
    CHECK(portal_auth_sign_in_with_apple(client, 200, on_result, &timed_out, NULL) == PORTAL_AUTH_OK);
    wait_result(&timed_out);
    CHECK(timed_out.code == PORTAL_AUTH_E_SIGN_IN_CLOSED && idle.calls == 2);

    CHECK(count_requests("/oauth/urls") == 3);
    CHECK(count_requests("/oauth/tokens") == 0);

    /* A redirect URL that is not loopback: unavailable, before any request. */
    portal_auth_options app_options = emulator_options("env-open");
    portal_auth *app = NULL;
    CHECK(portal_auth_new(&app_options, &app, NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_set_browser_opener(app, opener, &idle) == PORTAL_AUTH_OK);
    outcome not_loopback = {0};
    CHECK(portal_auth_sign_in_with_google(app, 0, on_result, &not_loopback, NULL) == PORTAL_AUTH_OK);
    wait_result(&not_loopback);
    CHECK(not_loopback.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && idle.calls == 2);
    CHECK(not_loopback.reason == PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK);
    CHECK(count_requests("/oauth/urls") == 3);
    portal_auth_free(app);

    /* Arguments that cannot start a call, and NULL handles. */
    outcome never = {0};
    call = (portal_auth_call *)&never;
    CHECK(portal_auth_sign_in_with_google(NULL, 0, on_result, &never, &call) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(call == NULL);
    CHECK(portal_auth_sign_in_with_apple(client, 0, NULL, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_browser_opener(NULL, opener, &idle) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(client, (portal_auth_bool)2) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(client, PORTAL_AUTH_UNSET) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_prefers_ephemeral_web_browser_session(NULL, PORTAL_AUTH_TRUE) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_prefers_ephemeral_web_browser_session(NULL) == PORTAL_AUTH_FALSE);
    /* NULL restores the default opener. */
    CHECK(portal_auth_set_browser_opener(client, NULL, NULL) == PORTAL_AUTH_OK);
    CHECK(never.calls == 0);

    portal_auth_free(client);
    curl_global_cleanup();
    return report("browser_test");
}
