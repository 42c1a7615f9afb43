/* C test of a whole sign-in through the C ABI against the Portal emulator whose base URL is
 * in PORTAL_AUTH_TEST_API_HOST: magic link, TOTP step, code, session, replay, token, restore,
 * invalidate, clear. The test reads the emulator's outbox and current code with libcurl. */
#include <portal_auth.h>

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(condition) do { \
    if (condition) { passed++; } \
    else { failed++; fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); } \
} while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

typedef struct {
    int calls;
    portal_auth_code code;
    int kind;
    char user_jwt[4096];
    char text[512];
    int count;
    portal_auth_session *session; /* retained */
} outcome;

static void finish(outcome *out) {
    pthread_mutex_lock(&lock);
    out->calls++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_for(outcome *out) {
    pthread_mutex_lock(&lock);
    while (out->calls == 0) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static void on_done(void *user_data, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    finish(out);
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
    finish(out);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->session = portal_auth_session_retain(session);
    finish(out);
}

/* GET a control endpoint of the emulator; returns the body (free it). */
static size_t append(char *data, size_t size, size_t count, void *user) {
    char **body = user;
    size_t old = *body ? strlen(*body) : 0, extra = size * count;
    *body = realloc(*body, old + extra + 1);
    memcpy(*body + old, data, extra);
    (*body)[old + extra] = 0;
    return extra;
}

static char *get(const char *path) {
    char url[1024], *body = NULL;
    snprintf(url, sizeof url, "%s%s", getenv("PORTAL_AUTH_TEST_API_HOST"), path);
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(easy) != CURLE_OK) abort();
    curl_easy_cleanup(easy);
    return body;
}

/* The value of the last "key":"value" in a compact JSON text (the emulator's values hold no quotes). */
static void json_value(const char *json, const char *key, char *out, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *found = NULL;
    for (const char *at = strstr(json, pattern); at; at = strstr(at + 1, pattern)) found = at;
    out[0] = 0;
    if (!found) return;
    found += strlen(pattern);
    size_t length = strcspn(found, "\"");
    if (length >= size) length = size - 1;
    memcpy(out, found, length);
    out[length] = 0;
}

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    portal_auth_options options;
    portal_auth_options_init(&options);
    options.auth_environment_id = "env-demo";
    options.redirect_url = "myapp://auth/callback";
    options.api_host = getenv("PORTAL_AUTH_TEST_API_HOST");
    options.magic_link_from_email = "hello@auth.example.com";
    options.magic_link_template_id = "tmpl";
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);

    outcome sent = {0};
    CHECK(portal_auth_send_magic_link(client, "c-flow@example.com", on_done, &sent, NULL) == PORTAL_AUTH_OK);
    wait_for(&sent);
    CHECK(sent.code == PORTAL_AUTH_OK);
    char *outbox = get("/_emulator/outbox?email=c-flow%40example.com");
    char link[1024];
    json_value(outbox, "link", link, sizeof link);
    free(outbox);
    CHECK(strncmp(link, "myapp://auth/callback?token=", 28) == 0);

    /* The redirect: a TOTP step with the enrollment link. */
    outcome step = {0};
    CHECK(portal_auth_handle_redirect(client, link, on_result, &step, NULL) == PORTAL_AUTH_OK);
    wait_for(&step);
    CHECK(step.code == PORTAL_AUTH_OK && step.kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED);
    CHECK(strncmp(step.text, "eu_", 3) == 0 && strstr(step.text, "|link") != NULL);

    /* Not ours: no result, no error. */
    outcome other = {0};
    CHECK(portal_auth_handle_redirect(client, "otherapp://x?token=t&authMethod=EMAIL_MAGIC_LINK", on_result, &other, NULL) == PORTAL_AUTH_OK);
    wait_for(&other);
    CHECK(other.code == PORTAL_AUTH_OK && other.kind == 0);

    /* A JWT that cannot be read fails before any request. */
    outcome bad_jwt = {0};
    CHECK(portal_auth_verify_totp(client, "123456", "not-a-jwt", on_result, &bad_jwt, NULL) == PORTAL_AUTH_OK);
    wait_for(&bad_jwt);
    CHECK(bad_jwt.code == PORTAL_AUTH_E_INVALID_USER_JWT && strstr(bad_jwt.text, "malformed") != NULL);

    /* The code the authenticator shows now. */
    char *totp = get("/_emulator/totp?environmentId=env-demo&email=c-flow%40example.com");
    char code[16];
    json_value(totp, "code", code, sizeof code);
    free(totp);
    outcome signed_in = {0};
    CHECK(portal_auth_verify_totp(client, code, step.user_jwt, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
    wait_for(&signed_in);
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.kind == PORTAL_AUTH_RESULT_AUTHENTICATED);
    CHECK(signed_in.session != NULL && strncmp(signed_in.text, "cl_", 3) == 0);
    CHECK(signed_in.count == PORTAL_AUTH_FALSE);
    const char *end_user_id = portal_auth_session_end_user_id(signed_in.session);
    CHECK(end_user_id != NULL && strncmp(step.text, end_user_id, strlen(end_user_id)) == 0);

    /* The redirect again: the same session, the same handle. */
    outcome replay = {0};
    CHECK(portal_auth_handle_redirect(client, link, on_result, &replay, NULL) == PORTAL_AUTH_OK);
    wait_for(&replay);
    CHECK(replay.kind == PORTAL_AUTH_RESULT_AUTHENTICATED && replay.session == signed_in.session);
    portal_auth_session_release(replay.session);

    char *token = NULL;
    CHECK(portal_auth_session_copy_token(signed_in.session, &token, NULL) == PORTAL_AUTH_OK);
    CHECK(token != NULL && strncmp(token, "cst_", 4) == 0);
    portal_auth_string_free(token);

    outcome restored = {0};
    CHECK(portal_auth_restore_session(client, on_session, &restored, NULL) == PORTAL_AUTH_OK);
    wait_for(&restored);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    CHECK(strcmp(portal_auth_session_end_user_id(restored.session), end_user_id) == 0);
    portal_auth_session_release(restored.session);

    outcome invalidated = {0};
    CHECK(portal_auth_session_invalidate(signed_in.session, on_done, &invalidated, NULL) == PORTAL_AUTH_OK);
    wait_for(&invalidated);
    CHECK(invalidated.code == PORTAL_AUTH_OK);
    portal_auth_error *error = NULL;
    CHECK(portal_auth_session_copy_token(signed_in.session, &token, &error) == PORTAL_AUTH_E_SESSION_INVALIDATED);
    CHECK(token == NULL && portal_auth_error_code(error) == PORTAL_AUTH_E_SESSION_INVALIDATED);
    portal_auth_error_free(error);

    outcome cleared = {0}, gone = {0};
    CHECK(portal_auth_clear_persisted_session(client, on_done, &cleared, NULL) == PORTAL_AUTH_OK);
    wait_for(&cleared);
    CHECK(cleared.code == PORTAL_AUTH_OK);
    CHECK(portal_auth_restore_session(client, on_session, &gone, NULL) == PORTAL_AUTH_OK);
    wait_for(&gone);
    CHECK(gone.code == PORTAL_AUTH_OK && gone.session == NULL);

    /* Arguments that cannot start a call. */
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

    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
    curl_global_cleanup();
    printf("flow_test: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
