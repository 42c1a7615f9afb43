/* Fault injection from C against the Portal emulator in PORTAL_AUTH_TEST_API_HOST: under
 * each fault (5xx, a reset connection, no answer until the timeout, a truncated body, a
 * 10 MB body, a slow answer) a burst of concurrent calls on one client each completes
 * exactly once, with the fault's error code, HTTP status and body excerpt. After the client
 * is freed and its burst is over, no callback has fired a second time. Named cases, one a
 * fault (test_support.h's run_cases). Waits on condition variables, never sleeps. */
#include "test_support.h"

enum { CALLS = 50 };

typedef struct {
    int calls;
    portal_auth_code code;
    int status;
    char body[64];   /* portal_auth_error_body, "(null)" for NULL */
} outcome;

static void on_methods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)methods;
    outcome *out = user_data;
    pthread_mutex_lock(&lock);
    out->calls++;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->status = error ? portal_auth_error_http_status(error) : 0;
    const char *body = portal_auth_error_body(error);
    snprintf(out->body, sizeof out->body, "%s", body ? body : "(null)");
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

typedef struct {
    const char *fault;      /* the fault's JSON fields besides path and count */
    portal_auth_code code;  /* what every call must end in */
    int status;
    const char *body;       /* the error's body excerpt */
    int held;               /* never answered: the calls end at a short request timeout */
} fault_case;

/* A burst of CALLS calls under `fault`. The held requests go through a client whose timeout
   ends them soon; every other fault through one with the default timeout, so that a busy
   machine (valgrind) cannot turn a slow answer into a timeout. The outcomes are freed only
   after the client: a callback fired again would write to freed memory (valgrind). */
static void burst_under(fault_case fault) {
    portal_auth_options options = emulator_options("env-demo");
    if (fault.held) options.request_timeout_ms = 1000;
    portal_auth *client = NULL;
    if (portal_auth_new(&options, &client, NULL) != PORTAL_AUTH_OK) abort();
    outcome *outcomes = calloc(CALLS, sizeof *outcomes);
    if (!outcomes) abort();

    char answer[4096], json[512];
    snprintf(json, sizeof json, "{\"path\":\"/methods\",\"count\":%d,%s}", CALLS, fault.fault);
    emulator_request("/_emulator/faults", json, answer, sizeof answer);
    for (int i = 0; i < CALLS; i++) {
        CHECK(portal_auth_get_methods(client, on_methods, &outcomes[i], NULL) == PORTAL_AUTH_OK);
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < CALLS; i++) {
        while (outcomes[i].calls == 0) pthread_cond_wait(&changed, &lock);
    }
    pthread_mutex_unlock(&lock);
    emulator_request("/_emulator/release", "{}", answer, sizeof answer);
    int matching = 0;
    for (int i = 0; i < CALLS; i++) {
        matching += outcomes[i].code == fault.code && outcomes[i].status == fault.status && strcmp(outcomes[i].body, fault.body) == 0;
    }
    if (matching != CALLS) fprintf(stderr, "%s: %d of %d calls ended as expected\n", fault.fault, matching, CALLS);
    CHECK(matching == CALLS);
    /* The emulator served every fault it was given: none is left for a later case. */
    emulator_request("/_emulator/faults", NULL, answer, sizeof answer);
    CHECK(strcmp(answer, "{\"faults\":[]}") == 0);

    portal_auth_free(client);
    pthread_mutex_lock(&lock);
    int once = 0;
    for (int i = 0; i < CALLS; i++) once += outcomes[i].calls == 1;
    pthread_mutex_unlock(&lock);
    CHECK(once == CALLS);
    free(outcomes);
}

static void server_error_500(void) {
    burst_under((fault_case){ "\"kind\":\"status\",\"status\":500", PORTAL_AUTH_E_HTTP_STATUS, 500, "{\"error\":\"injected\"}", 0 });
}

static void status_503_with_an_empty_body(void) {
    burst_under((fault_case){ "\"kind\":\"status\",\"status\":503,\"body\":\"\"", PORTAL_AUTH_E_HTTP_STATUS, 503, "(null)", 0 });
}

static void connection_reset(void) {
    burst_under((fault_case){ "\"kind\":\"drop\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 0 });
}

static void no_answer_until_the_timeout(void) {
    burst_under((fault_case){ "\"kind\":\"hold\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 1 });
}

static void truncated_body(void) {
    burst_under((fault_case){ "\"kind\":\"truncated\",\"body\":\"{\\\"data\\\":\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 0 });
}

static void body_of_10_mb(void) {
    burst_under((fault_case){ "\"kind\":\"oversized\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 0 });
}

static void slow_answer_succeeds(void) {
    burst_under((fault_case){ "\"kind\":\"latency\",\"ms\":200", PORTAL_AUTH_OK, 0, "(null)", 0 });
}

static const test_case cases[] = {
    { "server_error_500", server_error_500, NULL },
    { "status_503_with_an_empty_body", status_503_with_an_empty_body, NULL },
    { "connection_reset", connection_reset, NULL },
    { "no_answer_until_the_timeout", no_answer_until_the_timeout, NULL },
    { "truncated_body", truncated_body, NULL },
    { "body_of_10_mb", body_of_10_mb, NULL },
    { "slow_answer_succeeds", slow_answer_succeeds, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "faults_test", cases);
}
