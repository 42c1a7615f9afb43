/* C test of a whole sign-in through the C ABI against the Portal emulator whose base URL is
 * in PORTAL_AUTH_TEST_API_HOST: magic link, TOTP step, code, session, replay, token, restore,
 * invalidate, clear. The test reads the emulator's outbox and current code with libcurl.
 * Named cases, each signing in a user of its own (test_support.h's run_cases). */
#include "test_support.h"

typedef struct {
    int calls;
    portal_auth_code code;
    int kind;
    char user_jwt[4096];
    char text[512];
    int count;
    portal_auth_session *session; /* retained */
} outcome;

static void on_done(void *user_data, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    count_call(&out->calls);
}

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    if (error && portal_auth_error_detail(error)) snprintf(out->text, sizeof out->text, "%s", portal_auth_error_detail(error));
    out->kind = result ? portal_auth_result_kind(result) : 0;
    if (out->kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED) {
        snprintf(out->user_jwt, sizeof out->user_jwt, "%s", portal_auth_result_user_jwt(result));
        snprintf(out->text, sizeof out->text, "%s|%s", portal_auth_result_end_user_id(result),
                 portal_auth_result_totp_link(result) ? "link" : "none");
    } else if (out->kind == PORTAL_AUTH_RESULT_AUTHENTICATED) {
        out->session = portal_auth_session_retain(portal_auth_result_session(result));
        /* The emulator's environment has no gas sponsorship: it answers false. */
        out->count = portal_auth_result_is_account_abstracted(result);
        snprintf(out->text, sizeof out->text, "%s", portal_auth_result_client_id(result) ? portal_auth_result_client_id(result) : "");
    }
    count_call(&out->calls);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->session = portal_auth_session_retain(session);
    count_call(&out->calls);
}

static portal_auth *demo_client(void) {
    portal_auth_options options = emulator_options("env-demo");
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

/* GETs an emulator path whose query names `email`. */
static void emulator_query(const char *format, const char *email, char *answer, size_t size) {
    char *escaped = curl_easy_escape(NULL, email, 0), path[256];
    snprintf(path, sizeof path, format, escaped);
    curl_free(escaped);
    emulator_request(path, NULL, answer, size);
}

/* The magic link the client sent to `email`, from the emulator's outbox. */
static void sent_link(portal_auth *client, const char *email, char *link, size_t size) {
    outcome sent = {0};
    CHECK(portal_auth_send_magic_link(client, email, on_done, &sent, NULL) == PORTAL_AUTH_OK);
    wait_calls(&sent.calls);
    CHECK(sent.code == PORTAL_AUTH_OK);
    char answer[4096];
    emulator_query("/_emulator/outbox?email=%s", email, answer, sizeof answer);
    json_string(answer, "link", link, size);
    CHECK(strncmp(link, "myapp://auth/callback?token=", 28) == 0);
}

static outcome redirect(portal_auth *client, const char *url) {
    outcome out = {0};
    CHECK(portal_auth_handle_redirect(client, url, on_result, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

static outcome restore(portal_auth *client) {
    outcome out = {0};
    CHECK(portal_auth_restore_session(client, on_session, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

/* A client of env-demo with a new user `email` signed in, through the user's link (in
   `link`), its TOTP step and the code the authenticator shows now. */
typedef struct { portal_auth *client; char link[1024]; outcome signed_in; } user;

static void sign_in_user(user *who, const char *email) {
    who->client = demo_client();
    sent_link(who->client, email, who->link, sizeof who->link);
    outcome step = redirect(who->client, who->link);
    char answer[512], code[16];
    emulator_query("/_emulator/totp?environmentId=env-demo&email=%s", email, answer, sizeof answer);
    json_string(answer, "code", code, sizeof code);
    outcome *signed_in = &who->signed_in;
    *signed_in = (outcome){0};
    CHECK(portal_auth_verify_totp(who->client, code, step.user_jwt, on_result, signed_in, NULL) == PORTAL_AUTH_OK);
    wait_calls(&signed_in->calls);
    CHECK(signed_in->code == PORTAL_AUTH_OK && signed_in->kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    const char *end_user_id = portal_auth_session_end_user_id(signed_in->session);
    CHECK(end_user_id != NULL && strncmp(step.text, end_user_id, strlen(end_user_id)) == 0);
}

static void forget_user(user *who) {
    portal_auth_session_release(who->signed_in.session);
    portal_auth_free(who->client);
}

/* The redirect of a new user's link: a TOTP step with the enrollment link. */
static void link_gives_a_totp_step(void) {
    portal_auth *client = demo_client();
    char link[1024];
    sent_link(client, "c-flow-step@example.com", link, sizeof link);
    outcome step = redirect(client, link);
    CHECK(step.code == PORTAL_AUTH_OK && step.kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED);
    CHECK(strncmp(step.text, "eu_", 3) == 0 && strstr(step.text, "|link") != NULL);
    portal_auth_free(client);
}

/* Not ours: no result, no error. */
static void other_applications_redirect_is_nothing(void) {
    portal_auth *client = demo_client();
    outcome other = redirect(client, "otherapp://x?token=t&authMethod=EMAIL_MAGIC_LINK");
    CHECK(other.code == PORTAL_AUTH_OK && other.kind == 0);
    portal_auth_free(client);
}

/* A JWT that cannot be read fails before any request. */
static void unreadable_jwt_fails_at_once(void) {
    portal_auth *client = demo_client();
    outcome bad_jwt = {0};
    CHECK(portal_auth_verify_totp(client, "123456", "not-a-jwt", on_result, &bad_jwt, NULL) == PORTAL_AUTH_OK);
    wait_calls(&bad_jwt.calls);
    CHECK(bad_jwt.code == PORTAL_AUTH_E_INVALID_USER_JWT && strstr(bad_jwt.text, "malformed") != NULL);
    portal_auth_free(client);
}

/* The code signs in: a session and its client id, no gas sponsorship (the emulator's
   environment has none); the redirect again gives the same session, the same handle. */
static void code_signs_in_and_replay_gives_the_same_session(void) {
    user ada;
    sign_in_user(&ada, "c-flow@example.com");
    CHECK(ada.signed_in.session != NULL && strncmp(ada.signed_in.text, "cl_", 3) == 0);
    CHECK(ada.signed_in.count == PORTAL_AUTH_NO);
    outcome replay = redirect(ada.client, ada.link);
    CHECK(replay.kind == PORTAL_AUTH_RESULT_AUTHENTICATED && replay.session == ada.signed_in.session);
    portal_auth_session_release(replay.session);
    forget_user(&ada);
}

/* The session's token; a restore gives the same user. */
static void token_and_restore(void) {
    user ada;
    sign_in_user(&ada, "c-flow-restore@example.com");
    char *token = NULL;
    CHECK(portal_auth_session_copy_token(ada.signed_in.session, &token, NULL) == PORTAL_AUTH_OK);
    CHECK(token != NULL && strncmp(token, "cst_", 4) == 0);
    portal_auth_string_free(token);
    outcome restored = restore(ada.client);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    CHECK(strcmp(portal_auth_session_end_user_id(restored.session), portal_auth_session_end_user_id(ada.signed_in.session)) == 0);
    portal_auth_session_release(restored.session);
    forget_user(&ada);
}

/* Invalidated: the token is gone; cleared: nothing to restore. */
static void invalidate_and_clear(void) {
    user ada;
    sign_in_user(&ada, "c-flow-end@example.com");
    outcome invalidated = {0};
    CHECK(portal_auth_session_invalidate(ada.signed_in.session, on_done, &invalidated, NULL) == PORTAL_AUTH_OK);
    wait_calls(&invalidated.calls);
    CHECK(invalidated.code == PORTAL_AUTH_OK);
    char *token = NULL;
    portal_auth_error *error = NULL;
    CHECK(portal_auth_session_copy_token(ada.signed_in.session, &token, &error) == PORTAL_AUTH_E_SESSION_INVALIDATED);
    CHECK(token == NULL && portal_auth_error_code(error) == PORTAL_AUTH_E_SESSION_INVALIDATED);
    portal_auth_error_free(error);

    outcome cleared = {0};
    CHECK(portal_auth_clear_persisted_session(ada.client, on_done, &cleared, NULL) == PORTAL_AUTH_OK);
    wait_calls(&cleared.calls);
    CHECK(cleared.code == PORTAL_AUTH_OK);
    outcome gone = restore(ada.client);
    CHECK(gone.code == PORTAL_AUTH_OK && gone.session == NULL);
    forget_user(&ada);
}

static void arguments_that_cannot_start_a_call(void) {
    portal_auth *client = demo_client();
    outcome never = {0};
    CHECK(portal_auth_handle_redirect(client, NULL, on_result, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_handle_redirect(client, "myapp://auth/callback?token=\xff", on_result, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_verify_totp(client, "1", NULL, on_result, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_restore_session(client, NULL, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_session_invalidate(NULL, on_done, &never, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_session_end_user_id(NULL) == NULL && portal_auth_session_retain(NULL) == NULL);
    portal_auth_session_release(NULL);
    portal_auth_string_free(NULL);
    CHECK(never.calls == 0);
    portal_auth_free(client);
}

static const test_case cases[] = {
    { "link_gives_a_totp_step", link_gives_a_totp_step, NULL },
    { "other_applications_redirect_is_nothing", other_applications_redirect_is_nothing, NULL },
    { "unreadable_jwt_fails_at_once", unreadable_jwt_fails_at_once, NULL },
    { "code_signs_in_and_replay_gives_the_same_session", code_signs_in_and_replay_gives_the_same_session, NULL },
    { "token_and_restore", token_and_restore, NULL },
    { "invalidate_and_clear", invalidate_and_clear, NULL },
    { "arguments_that_cannot_start_a_call", arguments_that_cannot_start_a_call, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "flow_test", cases);
}
