/* C test of host-supplied storage and the log hook (and its level), against the Portal
 * emulator whose base URL is in PORTAL_AUTH_TEST_API_HOST. */
#define _POSIX_C_SOURCE 200809L  /* strdup */
#include "test_support.h"

/* The host's store: one value, and switches to make it fail. */
static char *stored;
static int fail_get, removes;

static int host_get(void *user_data, const char *environment_id, char **out_value) {
    (void)user_data; (void)environment_id;
    pthread_mutex_lock(&lock);
    int failing = fail_get;
    *out_value = (!failing && stored) ? strdup(stored) : NULL;
    pthread_mutex_unlock(&lock);
    return failing;
}

static int host_set(void *user_data, const char *environment_id, const char *value) {
    (void)user_data; (void)environment_id;
    pthread_mutex_lock(&lock);
    free(stored);
    stored = strdup(value);
    pthread_mutex_unlock(&lock);
    return 0;
}

static int host_remove(void *user_data, const char *environment_id) {
    (void)user_data; (void)environment_id;
    pthread_mutex_lock(&lock);
    free(stored);
    stored = NULL;
    removes++;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* Counts the library's releases of the user_data it was given. */
static void host_release(void *user_data) {
    count_call(user_data);
}

/* Every log line, kept to check for secrets. */
static char logged[65536];
static int lines;

static void on_log(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    pthread_mutex_lock(&lock);
    if (level >= PORTAL_AUTH_LOG_DEBUG && level <= PORTAL_AUTH_LOG_ERROR
        && strlen(logged) + strlen(message) + 2 < sizeof logged) {
        strcat(logged, message);
        strcat(logged, "\n");
        lines++;
    }
    pthread_mutex_unlock(&lock);
}

typedef struct { int calls; portal_auth_code code; portal_auth_session *session; } outcome;

static void finish(outcome *out, const portal_auth_error *error) {
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    count_call(&out->calls);
}

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    outcome *out = user_data;
    if (result) out->session = portal_auth_session_retain(portal_auth_result_session(result));
    finish(out, error);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    outcome *out = user_data;
    out->session = portal_auth_session_retain(session);
    finish(out, error);
}

static portal_auth *client_with(const portal_auth_storage_callbacks *callbacks, portal_auth_code *code, portal_auth_error **error) {
    portal_auth_options options = emulator_options("env-open");
    options.storage = PORTAL_AUTH_STORAGE_HOST;
    options.host_storage = callbacks;
    portal_auth *client = NULL;
    *code = portal_auth_new(&options, &client, error);
    return client;
}

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    portal_auth_set_log_handler(on_log, NULL);

    int released = 0;
    portal_auth_storage_callbacks callbacks = { sizeof callbacks, host_get, host_set, host_remove, &released, host_release };
    portal_auth_code code;
    portal_auth_error *error = NULL;
    portal_auth *client = client_with(&callbacks, &code, &error);
    CHECK(code == PORTAL_AUTH_OK && client != NULL);

    /* A sign-in persists through the host's set. */
    char url[512];
    grant_redirect("env-open", "c-host@example.com", url, sizeof url);
    outcome signed_in = {0};
    CHECK(portal_auth_handle_redirect(client, url, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
    wait_calls(&signed_in.calls);
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.session != NULL);
    char *token = NULL;
    CHECK(portal_auth_session_copy_token(signed_in.session, &token, NULL) == PORTAL_AUTH_OK);
    char expected[512];
    snprintf(expected, sizeof expected, "{\"clientSessionToken\":\"%s\",\"endUserId\":\"%s\"}", token,
             portal_auth_session_end_user_id(signed_in.session));
    pthread_mutex_lock(&lock);
    CHECK(stored != NULL && strcmp(stored, expected) == 0);
    pthread_mutex_unlock(&lock);

    /* A second client restores it, which logs a line at info level. */
    portal_auth *second = client_with(&callbacks, &code, NULL);
    pthread_mutex_lock(&lock);
    int lines_before = lines;
    pthread_mutex_unlock(&lock);
    outcome restored = {0};
    CHECK(portal_auth_restore_session(second, on_session, &restored, NULL) == PORTAL_AUTH_OK);
    wait_calls(&restored.calls);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    portal_auth_session_release(restored.session);
    pthread_mutex_lock(&lock);
    CHECK(lines > lines_before);
    lines_before = lines;
    pthread_mutex_unlock(&lock);

    /* With the log level at warning, the same restore passes no line to the handler. */
    portal_auth_set_log_level(PORTAL_AUTH_LOG_WARNING);
    outcome quiet = {0};
    CHECK(portal_auth_restore_session(second, on_session, &quiet, NULL) == PORTAL_AUTH_OK);
    wait_calls(&quiet.calls);
    portal_auth_set_log_level(PORTAL_AUTH_LOG_DEBUG);
    CHECK(quiet.code == PORTAL_AUTH_OK && quiet.session != NULL);
    portal_auth_session_release(quiet.session);
    pthread_mutex_lock(&lock);
    CHECK(lines == lines_before);
    pthread_mutex_unlock(&lock);

    /* A failing get is transient: an error, and the value stays. */
    pthread_mutex_lock(&lock);
    fail_get = 1;
    pthread_mutex_unlock(&lock);
    outcome failing = {0};
    CHECK(portal_auth_restore_session(second, on_session, &failing, NULL) == PORTAL_AUTH_OK);
    wait_calls(&failing.calls);
    CHECK(failing.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && failing.session == NULL);
    pthread_mutex_lock(&lock);
    fail_get = 0;
    CHECK(stored != NULL && removes == 0);
    /* A value that does not decode is deleted and reads as no session. */
    free(stored);
    stored = strdup("garbage");
    pthread_mutex_unlock(&lock);
    outcome corrupt = {0};
    CHECK(portal_auth_restore_session(second, on_session, &corrupt, NULL) == PORTAL_AUTH_OK);
    wait_calls(&corrupt.calls);
    CHECK(corrupt.code == PORTAL_AUTH_OK && corrupt.session == NULL);
    pthread_mutex_lock(&lock);
    CHECK(stored == NULL && removes == 1);
    pthread_mutex_unlock(&lock);

    /* Host storage without callbacks, or without all of them. */
    error = NULL;
    CHECK(client_with(NULL, &code, &error) == NULL && code == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(strcmp(portal_auth_error_name(error), "host_storage") == 0);
    portal_auth_error_free(error);
    /* A failed portal_auth_new releases the host's user_data before it returns. */
    int partial_released = 0;
    portal_auth_storage_callbacks partial = callbacks;
    partial.remove = NULL;
    partial.user_data = &partial_released;
    CHECK(client_with(&partial, &code, NULL) == NULL && code == PORTAL_AUTH_E_INVALID_ARGUMENT);
    pthread_mutex_lock(&lock);
    CHECK(partial_released == 1);
    pthread_mutex_unlock(&lock);
    /* So does one that fails the client's own checks after reading the callbacks. */
    portal_auth_options blank = emulator_options("");
    blank.storage = PORTAL_AUTH_STORAGE_HOST;
    blank.host_storage = &partial;
    partial.remove = host_remove;
    portal_auth *none = NULL;
    CHECK(portal_auth_new(&blank, &none, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT && none == NULL);
    pthread_mutex_lock(&lock);
    CHECK(partial_released == 2);
    pthread_mutex_unlock(&lock);

    /* The log: lines arrived, none with the token or the grant. */
    portal_auth_set_log_handler(audit_log_line, NULL);
    pthread_mutex_lock(&lock);
    CHECK(lines > 0 && strstr(logged, portal_auth_session_end_user_id(signed_in.session)) != NULL);
    CHECK(strstr(logged, token) == NULL);
    const char *grant = strstr(url, "token=") + 6;
    char grant_only[256];
    snprintf(grant_only, sizeof grant_only, "%.*s", (int)strcspn(grant, "&"), grant);
    CHECK(strstr(logged, grant_only) == NULL);
    pthread_mutex_unlock(&lock);

    portal_auth_string_free(token);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(second);
    portal_auth_free(client);
    /* Both clients and their sessions gone: each released the host's user_data once. */
    wait_count(&released, 2);
    pthread_mutex_lock(&lock);
    CHECK(released == 2);
    pthread_mutex_unlock(&lock);
    free(stored);
    curl_global_cleanup();
    return report("host_storage_test");
}
