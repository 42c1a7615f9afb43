/* C test of the reasons that tell an app what its user does next, against the Portal
 * emulator in PORTAL_AUTH_TEST_API_HOST: a refused TOTP code and an expired step, a used
 * magic link, the step's expiry, the names and user messages of every reason, and the
 * typed-code helper. Named cases (test_support.h's run_cases). */
#include "session_support.h"

#include <time.h>

static void set_clock_offset(int seconds) {
    char json[64], answer[512];
    snprintf(json, sizeof json, "{\"clockOffsetSeconds\":%d}", seconds);
    emulator_request("/_emulator/control", json, answer, sizeof answer);
}

/* A fresh magic-link grant of a new user `email` of env-demo (its redirect URL in `url`),
   delivered to the client: its TOTP step. */
static outcome totp_step(portal_auth *client, const char *email, char *url, size_t size) {
    grant_redirect("env-demo", email, url, size);
    outcome step = redirect(client, url);
    CHECK(step.code == PORTAL_AUTH_OK && step.kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED);
    return step;
}

/* The step's expiry, a refused code, and the link again, spent. */
static void step_expiry_refused_code_and_used_link(void) {
    portal_auth *client = demo_client();
    char url[1024];
    outcome step = totp_step(client, "c-reasons-retype@example.com", url, sizeof url);
    int64_t now = (int64_t)time(NULL);
    CHECK(step.expires_at >= now + 590 && step.expires_at <= now + 601);

    char code[16];
    totp_code("env-demo", "c-reasons-retype@example.com", code, sizeof code);
    char wrong[16];
    snprintf(wrong, sizeof wrong, "%06d", (atoi(code) + 500000) % 1000000);
    outcome refused = verify(client, wrong, step.user_jwt);
    CHECK(refused.code == PORTAL_AUTH_E_UNAUTHORIZED && refused.reason == PORTAL_AUTH_REASON_TOTP_CODE_REJECTED);
    /* The same step takes the right code. */
    outcome signed_in = verify(client, code, step.user_jwt);
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    portal_auth_session_release(signed_in.session);

    /* The link again, from a client that never saw it: the grant is spent. */
    portal_auth *another = demo_client();
    outcome used = redirect(another, url);
    CHECK(used.code == PORTAL_AUTH_E_UNAUTHORIZED && used.reason == PORTAL_AUTH_REASON_LINK_USED);
    portal_auth_free(another);
    portal_auth_free(client);
}

static void expired_step(void) {
    portal_auth *client = demo_client();
    char url[1024];
    outcome step = totp_step(client, "c-reasons-late@example.com", url, sizeof url);
    CHECK(step.expires_at > (int64_t)time(NULL));
    /* Eleven minutes later by the server's clock (its answers' Date): expired, though this
       machine's clock has not moved. */
    set_clock_offset(660);
    char code[16];
    totp_code("env-demo", "c-reasons-late@example.com", code, sizeof code);
    outcome late = verify(client, code, step.user_jwt);
    set_clock_offset(0);
    CHECK(late.code == PORTAL_AUTH_E_UNAUTHORIZED && late.reason == PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED);
    portal_auth_free(client);
}

static void names_and_user_messages(void) {
    static const struct { portal_auth_reason reason; const char *name; } reasons[] = {
        { PORTAL_AUTH_REASON_KEYRING_LOCKED, "KEYRING_LOCKED" },
        { PORTAL_AUTH_REASON_FILE_STORE_FAILED, "FILE_STORE_FAILED" },
        { PORTAL_AUTH_REASON_NO_BROWSER, "NO_BROWSER" },
        { PORTAL_AUTH_REASON_CHANNEL_FAILED, "CHANNEL_FAILED" },
        { PORTAL_AUTH_REASON_SIGN_IN_CANCELLED, "SIGN_IN_CANCELLED" },
        { PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT, "SIGN_IN_TIMED_OUT" },
        { PORTAL_AUTH_REASON_CLIENT_CLOSED, "CLIENT_CLOSED" },
        { PORTAL_AUTH_REASON_LINK_USED, "LINK_USED" },
        { PORTAL_AUTH_REASON_TOTP_CODE_REJECTED, "TOTP_CODE_REJECTED" },
        { PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED, "TOTP_STEP_EXPIRED" },
        { PORTAL_AUTH_REASON_TOTP_STEP_USED, "TOTP_STEP_USED" },
    };
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        CHECK(strcmp(portal_auth_reason_name(reasons[i].reason), reasons[i].name) == 0);
        const char *sentence = portal_auth_reason_user_message(reasons[i].reason);
        CHECK(sentence != NULL && strchr(sentence, '\n') == NULL && sentence[strlen(sentence) - 1] == '.');
    }
    CHECK(strcmp(portal_auth_reason_user_message(PORTAL_AUTH_REASON_KEYRING_LOCKED),
                 "Your keyring is locked. Unlock it, then try again.") == 0);
    CHECK(strcmp(portal_auth_reason_user_message(PORTAL_AUTH_REASON_SIGN_IN_CANCELLED),
                 portal_auth_reason_user_message(PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT)) != 0);
    CHECK(portal_auth_reason_name(PORTAL_AUTH_REASON_NONE) == NULL);
    CHECK(portal_auth_reason_user_message(PORTAL_AUTH_REASON_NONE) == NULL);
    CHECK(portal_auth_reason_name(999) == NULL && portal_auth_reason_name(-1) == NULL && portal_auth_reason_name(INT32_MAX) == NULL);

    /* A bare code's name and meaning (every code's: bindings/python/tests/test_abi.py). */
    CHECK(strcmp(portal_auth_code_name(PORTAL_AUTH_E_UNAUTHORIZED), "UNAUTHORIZED") == 0);
    CHECK(strcmp(portal_auth_code_name(PORTAL_AUTH_OK), "OK") == 0);
    CHECK(strcmp(portal_auth_code_message(PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS), "Another sign-in of this client is running.") == 0);
    CHECK(portal_auth_code_name(12) == NULL && portal_auth_code_message(-1) == NULL && portal_auth_code_name(INT32_MAX) == NULL);
    CHECK(portal_auth_error_reason(NULL) == PORTAL_AUTH_REASON_NONE && portal_auth_error_url(NULL) == NULL);
}

static void typed_codes(void) {
    char code[PORTAL_AUTH_TOTP_CODE_SIZE];
    CHECK(portal_auth_totp_code_normalize("123 456", code) == PORTAL_AUTH_TRUE && strcmp(code, "123456") == 0);
    CHECK(portal_auth_totp_code_normalize(" 123-456\n", code) == PORTAL_AUTH_TRUE && strcmp(code, "123456") == 0);
    CHECK(portal_auth_totp_code_normalize("12\xe2\x80\x89" "34 56", code) == PORTAL_AUTH_TRUE && strcmp(code, "123456") == 0);
    CHECK(portal_auth_totp_code_normalize("12345", code) == PORTAL_AUTH_FALSE && code[0] == 0);
    CHECK(portal_auth_totp_code_normalize("1234567", code) == PORTAL_AUTH_FALSE && code[0] == 0);
    CHECK(portal_auth_totp_code_normalize("12a456", code) == PORTAL_AUTH_FALSE && code[0] == 0);
    CHECK(portal_auth_totp_code_normalize("12\xff" "456", code) == PORTAL_AUTH_FALSE && code[0] == 0);
    CHECK(portal_auth_totp_code_normalize(NULL, code) == PORTAL_AUTH_FALSE && code[0] == 0);
    CHECK(portal_auth_totp_code_normalize("654321", NULL) == PORTAL_AUTH_TRUE);
}

static const test_case cases[] = {
    { "names_and_user_messages", names_and_user_messages, NULL },
    { "typed_codes", typed_codes, NULL },
    { "step_expiry_refused_code_and_used_link", step_expiry_refused_code_and_used_link, NULL },
    { "expired_step", expired_step, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "reasons_test", cases);
}
