/* C test of host-supplied storage and the log hook (and its level), against the Portal
 * emulator whose base URL is in PORTAL_AUTH_TEST_API_HOST: a recording store that can fail,
 * undecodable values cleared (and a clear that fails), and invalidation shared by every
 * session of one token and single-flight from 8 threads, counted in the store's calls. */
#define _POSIX_C_SOURCE 200809L  /* strdup */
#include "session_support.h"

/* The host's store: one value, its calls counted, and switches to make it fail. */
static char *stored;
static int fail_get, fail_remove, gets, removes;

static int host_get(void *user_data, const char *environment_id, char **out_value) {
    (void)user_data; (void)environment_id;
    pthread_mutex_lock(&lock);
    gets++;
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
    removes++;
    int failing = fail_remove;
    if (!failing) {
        free(stored);
        stored = NULL;
    }
    pthread_mutex_unlock(&lock);
    return failing;
}

static void store_value(const char *value) {
    pthread_mutex_lock(&lock);
    free(stored);
    stored = value ? strdup(value) : NULL;
    pthread_mutex_unlock(&lock);
}

static int stored_is(const char *value) {
    pthread_mutex_lock(&lock);
    int same = value ? (stored && strcmp(stored, value) == 0) : stored == NULL;
    pthread_mutex_unlock(&lock);
    return same;
}

/* Counts the library's releases of the user_data it was given. */
static void host_release(void *user_data) {
    count_call(user_data);
}

/* Every log line, kept to check for secrets; and the warnings that an undecodable entry was cleared. */
static char logged[65536];
static int lines, cleared;

static void on_log(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    pthread_mutex_lock(&lock);
    if (level == PORTAL_AUTH_LOG_WARNING && strstr(message, "An undecodable stored session of environment env-open was cleared."))
        cleared++;
    if (level >= PORTAL_AUTH_LOG_DEBUG && level <= PORTAL_AUTH_LOG_ERROR
        && strlen(logged) + strlen(message) + 2 < sizeof logged) {
        strcat(logged, message);
        strcat(logged, "\n");
        lines++;
    }
    pthread_mutex_unlock(&lock);
}

static int counted(const int *counter) {
    pthread_mutex_lock(&lock);
    int value = *counter;
    pthread_mutex_unlock(&lock);
    return value;
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


    /* Its heal logged one warning, without the value. */
    pthread_mutex_lock(&lock);
    CHECK(cleared == 1 && strstr(logged, "garbage") == NULL);
    pthread_mutex_unlock(&lock);

    /* A heal whose delete fails: a storage failure that says so, the value kept, no warning. */
    store_value("garbage");
    pthread_mutex_lock(&lock);
    fail_remove = 1;
    pthread_mutex_unlock(&lock);
    outcome unhealed = restore(second);
    CHECK(unhealed.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && unhealed.session == NULL);
    CHECK(unhealed.reason == PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED);
    CHECK(stored_is("garbage") && counted(&cleared) == 1);
    /* ...which invalidate() reports too: an undecodable value belongs to nobody. */
    outcome other = sign_in(client, "env-open", "c-host-2@example.com");
    store_value("garbage");
    outcome refused = invalidate(other.session);
    CHECK(refused.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && refused.reason == PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED);
    CHECK(stored_is("garbage"));
    pthread_mutex_lock(&lock);
    fail_remove = 0;
    pthread_mutex_unlock(&lock);
    outcome retried = invalidate(other.session);
    CHECK(retried.code == PORTAL_AUTH_OK && stored_is(NULL) && counted(&cleared) == 2);
    portal_auth_session_release(other.session);

    /* A store that fails to read: the reason is the host's store. */
    pthread_mutex_lock(&lock);
    fail_get = 1;
    pthread_mutex_unlock(&lock);
    outcome unread = restore(second);
    CHECK(unread.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && unread.reason == PORTAL_AUTH_REASON_HOST_STORAGE_FAILED);
    pthread_mutex_lock(&lock);
    fail_get = 0;
    pthread_mutex_unlock(&lock);

    /* One token, three sessions (a sign-in, a restore by each client); 8 threads invalidate
       them at once: one read, one delete, the same outcome for all, every session invalidated. */
    outcome shared = sign_in(client, "env-open", "c-host-3@example.com");
    outcome by_first = restore(client), by_second = restore(second);
    portal_auth_session *sessions[3] = { shared.session, by_first.session, by_second.session };
    CHECK(sessions[0] && sessions[1] && sessions[2] && sessions[0] != sessions[1] && sessions[1] != sessions[2]);
    int gets_before = counted(&gets), removes_before = counted(&removes);
    CHECK(invalidate_at_once(sessions, 3) == THREADS);
    CHECK(counted(&gets) - gets_before == 1 && counted(&removes) - removes_before == 1 && stored_is(NULL));
    for (int i = 0; i < 3; i++) CHECK(is_invalidated(sessions[i]));
    /* Settled: invalidating again does no storage I/O. */
    CHECK(invalidate(sessions[2]).code == PORTAL_AUTH_OK);
    CHECK(counted(&gets) - gets_before == 1 && counted(&removes) - removes_before == 1);
    for (int i = 0; i < 3; i++) portal_auth_session_release(sessions[i]);

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
