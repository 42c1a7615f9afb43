/* Fault injection from C against the Portal emulator in PORTAL_AUTH_TEST_API_HOST: under
 * each fault (5xx, a reset connection, no answer until the timeout, a truncated body, a
 * 10 MB body, a slow answer) a burst of concurrent calls on one client each completes
 * exactly once, with the fault's error code, HTTP status and body excerpt. After the clients are freed and
 * every burst is over, no callback has fired a second time. Waits on condition variables,
 * never sleeps. */
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
    const char *name;
    const char *fault;      /* the fault's JSON fields besides path and count */
    portal_auth_code code;  /* what every call must end in */
    int status;
    const char *body;       /* the error's body excerpt */
    int held;               /* never answered: the calls end at a short request timeout */
} fault_case;

static const fault_case cases[] = {
    { "500", "\"kind\":\"status\",\"status\":500", PORTAL_AUTH_E_HTTP_STATUS, 500, "{\"error\":\"injected\"}", 0 },
    { "503 with an empty body", "\"kind\":\"status\",\"status\":503,\"body\":\"\"", PORTAL_AUTH_E_HTTP_STATUS, 503, "(null)", 0 },
    { "reset", "\"kind\":\"drop\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 0 },
    { "timeout", "\"kind\":\"hold\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 1 },
    { "truncated", "\"kind\":\"truncated\",\"body\":\"{\\\"data\\\":\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 0 },
    { "10 MB body", "\"kind\":\"oversized\"", PORTAL_AUTH_E_NETWORK, 0, "(null)", 0 },
    { "slow", "\"kind\":\"latency\",\"ms\":200", PORTAL_AUTH_OK, 0, "(null)", 0 },
};
enum { CASES = sizeof cases / sizeof cases[0] };
static outcome outcomes[CASES][CALLS];

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) { fprintf(stderr, "PORTAL_AUTH_TEST_API_HOST is not set\n"); return 2; }
    /* The held requests go through a client whose timeout ends them soon; every other case
       through one with the default timeout, so that a busy machine (valgrind) cannot turn
       a slow answer into a timeout. */
    portal_auth_options options = emulator_options("env-demo");
    portal_auth *patient = NULL, *impatient = NULL;
    if (portal_auth_new(&options, &patient, NULL) != PORTAL_AUTH_OK) abort();
    options.request_timeout_ms = 1000;
    if (portal_auth_new(&options, &impatient, NULL) != PORTAL_AUTH_OK) abort();

    char answer[4096], json[512];
    for (int c = 0; c < CASES; c++) {
        snprintf(json, sizeof json, "{\"path\":\"/methods\",\"count\":%d,%s}", CALLS, cases[c].fault);
        emulator_request("/_emulator/faults", json, answer, sizeof answer);
        portal_auth *client = cases[c].held ? impatient : patient;
        for (int i = 0; i < CALLS; i++) {
            CHECK(portal_auth_get_methods(client, on_methods, &outcomes[c][i], NULL) == PORTAL_AUTH_OK);
        }
        pthread_mutex_lock(&lock);
        for (int i = 0; i < CALLS; i++) {
            while (outcomes[c][i].calls == 0) pthread_cond_wait(&changed, &lock);
        }
        pthread_mutex_unlock(&lock);
        emulator_request("/_emulator/release", "{}", answer, sizeof answer);
        int matching = 0;
        for (int i = 0; i < CALLS; i++) {
            matching += outcomes[c][i].code == cases[c].code && outcomes[c][i].status == cases[c].status
                && strcmp(outcomes[c][i].body, cases[c].body) == 0;
        }
        if (matching != CALLS) fprintf(stderr, "%s: %d of %d calls ended as expected\n", cases[c].name, matching, CALLS);
        CHECK(matching == CALLS);
    }
    /* The emulator served every fault it was given: none is left for a later test. */
    emulator_request("/_emulator/faults", NULL, answer, sizeof answer);
    CHECK(strcmp(answer, "{\"faults\":[]}") == 0);

    portal_auth_free(patient);
    portal_auth_free(impatient);
    pthread_mutex_lock(&lock);
    int once = 0;
    for (int c = 0; c < CASES; c++) {
        for (int i = 0; i < CALLS; i++) once += outcomes[c][i].calls == 1;
    }
    pthread_mutex_unlock(&lock);
    CHECK(once == CASES * CALLS);
    return report("faults_test");
}
