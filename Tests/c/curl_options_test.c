/* C test of the transport's protections against the Portal emulator in
 * PORTAL_AUTH_TEST_API_HOST. A request goes out with every option set. The case
 * each_refused_protection_fails_the_call, run only when named (scripts/test-c.sh runs it with
 * Tests/c/support/refusing_libcurl.c as libcurl), for each protection in turn: a libcurl that
 * cannot honour the option, nor the older one that stands in for it (an older libcurl's),
 * fails the call with PORTAL_AUTH_E_NETWORK and a message naming the libcurl version and the
 * option, and nothing reaches the server; a libcurl that lacks only the newer option sends
 * the request. Named cases (test_support.h's run_cases). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "session_support.h"

/* CURLOPT_PROTOCOLS, the bit mask before 7.85 (its name is marked deprecated). */
#define PROTOCOLS_MASK (CURLOPTTYPE_LONG + 181)

/* The options the library must never go without: the ones a libcurl refuses (up to two), and
   the one the error names; none named: an older option stands in, and the request goes out. */
static const struct { long refused[2]; const char *named; } protections[] = {
    { { CURLOPT_PROTOCOLS_STR, 0 }, NULL },
    { { CURLOPT_PROTOCOLS_STR, PROTOCOLS_MASK }, "CURLOPT_PROTOCOLS_STR" },
    { { CURLOPT_SSL_VERIFYPEER, 0 }, "CURLOPT_SSL_VERIFYPEER" },
    { { CURLOPT_SSL_VERIFYHOST, 0 }, "CURLOPT_SSL_VERIFYHOST" },
    { { CURLOPT_PREREQFUNCTION, 0 }, NULL },   /* before 7.80: fresh, unshared connections */
    { { CURLOPT_PREREQFUNCTION, CURLOPT_FRESH_CONNECT }, "CURLOPT_FRESH_CONNECT" },
    { { CURLOPT_PREREQFUNCTION, CURLOPT_FORBID_REUSE }, "CURLOPT_FORBID_REUSE" },
    { { CURLOPT_OPENSOCKETFUNCTION, 0 }, "CURLOPT_OPENSOCKETFUNCTION" },
    { { CURLOPT_PROXY, 0 }, "CURLOPT_PROXY" },   /* the route is always set: here, direct */
};

/* How many requests reached the emulator's Portal API since clear_requests. */
static int recorded_requests(void) {
    static char answer[1 << 16];
    emulator_request("/_emulator/requests", NULL, answer, sizeof answer);
    int count = 0;
    for (const char *at = strstr(answer, "\"path\":\"/api/v3/auth"); at; at = strstr(at + 1, "\"path\":\"/api/v3/auth")) count++;
    return count;
}

/* Makes one request; `refused` names the option the libcurl refuses, or is NULL. */
static void check_a_request(const char *refused, const char *version) {
    portal_auth_options options = emulator_options("env-open");
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    clear_requests();
    outcome methods = {0};
    CHECK(portal_auth_get_methods(client, on_methods, &methods, NULL) == PORTAL_AUTH_OK);
    wait_calls(&methods.calls);
    if (refused) {
        CHECK(methods.code == PORTAL_AUTH_E_NETWORK);
        CHECK(strstr(methods.message, version) != NULL);
        CHECK(strstr(methods.message, refused) != NULL);
        CHECK(strstr(methods.message, "the request was not sent") != NULL);
        CHECK(recorded_requests() == 0);
    } else {
        CHECK(methods.code == PORTAL_AUTH_OK);
        CHECK(recorded_requests() == 1);
    }
    portal_auth_free(client);
}

/* The version as the library's errors name it. */
static void libcurl_version(char *version, size_t size) {
    snprintf(version, size, "libcurl %s ", curl_version_info(CURLVERSION_NOW)->version);
}

static void request_sent_with_every_option(void) {
    char version[64];
    libcurl_version(version, sizeof version);
    check_a_request(NULL, version);
}

/* The refusing libcurl reads the option at each call: one at a time, then none. */
static void each_refused_protection_fails_the_call(void) {
    char version[64];
    libcurl_version(version, sizeof version);
    for (size_t i = 0; i < sizeof protections / sizeof protections[0]; i++) {
        char numbers[64];
        snprintf(numbers, sizeof numbers, "%ld,%ld", protections[i].refused[0], protections[i].refused[1]);
        setenv("PORTAL_AUTH_TEST_REFUSED_CURLOPT", numbers, 1);
        check_a_request(protections[i].named, version);
    }
    unsetenv("PORTAL_AUTH_TEST_REFUSED_CURLOPT");
    check_a_request(NULL, version);
}

static const test_case cases[] = {
    { "request_sent_with_every_option", request_sent_with_every_option, NULL },
    { "each_refused_protection_fails_the_call", each_refused_protection_fails_the_call,
      "Tests/c/support/refusing_libcurl.c as libcurl (scripts/test-c.sh)" },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "curl_options_test", cases);
}
