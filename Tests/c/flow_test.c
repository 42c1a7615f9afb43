/* C test of a whole sign-in through the C ABI against the Portal emulator whose base URL is
 * in PORTAL_AUTH_TEST_API_HOST: magic link, TOTP step, code, session, replay, token, restore,
 * invalidate, clear. The test reads the emulator's outbox and current code with libcurl.
 * Named cases, each signing in a user of its own (test_support.h's run_cases). */
#include "session_support.h"

/* A sign-in call's outcome with what this test reads of its result beyond session_support.h's:
   `text` holds a TOTP step's "end user id|link" ("|none" without an enrollment link), the
   signed-in client id, or the error's detail. */
typedef struct {
    outcome out;
    char text[512];
    portal_auth_tristate account_abstracted;  /* the signed-in result's */
} sign_in_outcome;

static void on_sign_in(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    sign_in_outcome *in = user_data;
    copy_text(in->text, sizeof in->text, portal_auth_error_detail(error));
    keep_result(&in->out, result);
    if (in->out.kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED) {
        snprintf(in->text, sizeof in->text, "%s|%s", portal_auth_result_end_user_id(result),
                 portal_auth_result_totp_link(result) ? "link" : "none");
    } else if (in->out.kind == PORTAL_AUTH_RESULT_AUTHENTICATED) {
        /* The emulator's environment has no gas sponsorship: it answers false. */
        in->account_abstracted = portal_auth_result_is_account_abstracted(result);
        copy_text(in->text, sizeof in->text, portal_auth_result_client_id(result));
    }
    finish(&in->out, error);
}

/* The magic link the client sent to `email`, from the emulator's outbox. */
static void sent_link(portal_auth *client, const char *email, char *link, size_t size) {
    outcome sent = {0};
    CHECK(portal_auth_send_magic_link(client, email, on_done, &sent, NULL) == PORTAL_AUTH_OK);
    wait_calls(&sent.calls);
    CHECK(sent.code == PORTAL_AUTH_OK);
    mail_field(email, 1, "link", link, size);
    CHECK(strncmp(link, "myapp://auth/callback?token=", 28) == 0);
}

/* The redirect of a new user's link: its TOTP step. */
static sign_in_outcome step_of(portal_auth *client, const char *link) {
    sign_in_outcome step = {0};
    CHECK(portal_auth_handle_redirect(client, link, on_sign_in, &step, NULL) == PORTAL_AUTH_OK);
    wait_calls(&step.out.calls);
    return step;
}

/* A client of env-demo with a new user `email` signed in, through the user's link (in
   `link`), its TOTP step and the code the authenticator shows now. */
typedef struct { portal_auth *client; char link[1024]; sign_in_outcome signed_in; } user;

static void sign_in_user(user *who, const char *email) {
    who->client = demo_client();
    sent_link(who->client, email, who->link, sizeof who->link);
    sign_in_outcome step = step_of(who->client, who->link);
    char code[16];
    totp_code("env-demo", email, code, sizeof code);
    sign_in_outcome *signed_in = &who->signed_in;
    *signed_in = (sign_in_outcome){0};
    CHECK(portal_auth_verify_totp(who->client, code, step.out.user_jwt, on_sign_in, signed_in, NULL) == PORTAL_AUTH_OK);
    wait_calls(&signed_in->out.calls);
    CHECK(signed_in->out.code == PORTAL_AUTH_OK && signed_in->out.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    const char *end_user_id = portal_auth_session_end_user_id(signed_in->out.session);
    CHECK(end_user_id != NULL && strncmp(step.text, end_user_id, strlen(end_user_id)) == 0);
}

static void forget_user(user *who) {
    portal_auth_session_release(who->signed_in.out.session);
    portal_auth_free(who->client);
}

/* The redirect of a new user's link: a TOTP step with the enrollment link. */
static void link_gives_a_totp_step(void) {
    portal_auth *client = demo_client();
    char link[1024];
    sent_link(client, "c-flow-step@example.com", link, sizeof link);
    sign_in_outcome step = step_of(client, link);
    CHECK(step.out.code == PORTAL_AUTH_OK && step.out.kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED);
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
    sign_in_outcome bad_jwt = {0};
    CHECK(portal_auth_verify_totp(client, "123456", "not-a-jwt", on_sign_in, &bad_jwt, NULL) == PORTAL_AUTH_OK);
    wait_calls(&bad_jwt.out.calls);
    CHECK(bad_jwt.out.code == PORTAL_AUTH_E_INVALID_USER_JWT && strstr(bad_jwt.text, "malformed") != NULL);
    portal_auth_free(client);
}

/* The code signs in: a session and its client id, no gas sponsorship (the emulator's
   environment has none); the redirect again gives the same session, the same handle. */
static void code_signs_in_and_replay_gives_the_same_session(void) {
    user ada;
    sign_in_user(&ada, "c-flow@example.com");
    CHECK(ada.signed_in.out.session != NULL && strncmp(ada.signed_in.text, "cl_", 3) == 0);
    CHECK(ada.signed_in.account_abstracted == PORTAL_AUTH_NO);
    outcome replay = redirect(ada.client, ada.link);
    CHECK(replay.kind == PORTAL_AUTH_RESULT_AUTHENTICATED && replay.session == ada.signed_in.out.session);
    portal_auth_session_release(replay.session);
    forget_user(&ada);
}

/* The session's token; a restore gives the same user. */
static void token_and_restore(void) {
    user ada;
    sign_in_user(&ada, "c-flow-restore@example.com");
    char *token = NULL;
    CHECK(portal_auth_session_copy_token(ada.signed_in.out.session, &token, NULL) == PORTAL_AUTH_OK);
    CHECK(token != NULL && strncmp(token, "cst_", 4) == 0);
    portal_auth_string_free(token);
    outcome restored = restore(ada.client);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    CHECK(strcmp(portal_auth_session_end_user_id(restored.session), portal_auth_session_end_user_id(ada.signed_in.out.session)) == 0);
    portal_auth_session_release(restored.session);
    forget_user(&ada);
}

/* Invalidated: the token is gone; cleared: nothing to restore. */
static void invalidate_and_clear(void) {
    user ada;
    sign_in_user(&ada, "c-flow-end@example.com");
    outcome invalidated = invalidate(ada.signed_in.out.session);
    CHECK(invalidated.code == PORTAL_AUTH_OK);
    char *token = NULL;
    portal_auth_error *error = NULL;
    CHECK(portal_auth_session_copy_token(ada.signed_in.out.session, &token, &error) == PORTAL_AUTH_E_SESSION_INVALIDATED);
    CHECK(token == NULL && portal_auth_error_code(error) == PORTAL_AUTH_E_SESSION_INVALIDATED);
    portal_auth_error_free(error);

    outcome cleared = clear_persisted(ada.client);
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
