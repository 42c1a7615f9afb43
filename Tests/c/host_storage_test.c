/* C test of host-supplied storage and the log hook (and its level), against the Portal
 * emulator whose base URL is in PORTAL_AUTH_TEST_API_HOST: a recording store that can fail,
 * undecodable values cleared (and a clear that fails), and invalidation shared by every
 * session of one token and single-flight from 8 threads, counted in the store's calls. Named
 * cases (test_support.h's run_cases), each with clients and a store of its own. */
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

static portal_auth *client_with(const portal_auth_storage_callbacks *callbacks, portal_auth_code *code, portal_auth_error **error) {
    portal_auth_options options = emulator_options("env-open");
    options.storage = PORTAL_AUTH_STORAGE_HOST;
    options.host_storage = callbacks;
    portal_auth *client = NULL;
    *code = portal_auth_new(&options, &client, error);
    return client;
}

/* A client of the host's store, whose user_data is `released`'s counter. */
typedef struct {
    portal_auth_storage_callbacks callbacks;
    int released;
    portal_auth *client;
} host_client;

/* An empty store that does not fail, and a client of it. */
static void open_client(host_client *host) {
    pthread_mutex_lock(&lock);
    fail_get = fail_remove = 0;
    pthread_mutex_unlock(&lock);
    store_value(NULL);
    host->callbacks = (portal_auth_storage_callbacks){ sizeof host->callbacks, host_get, host_set, host_remove,
                                                       &host->released, host_release };
    portal_auth_code code;
    host->client = client_with(&host->callbacks, &code, NULL);
    CHECK(code == PORTAL_AUTH_OK && host->client != NULL);
}

/* Frees the client, its sessions released: the host's user_data is released once. */
static void close_client(host_client *host) {
    portal_auth_free(host->client);
    wait_count(&host->released, 1);
    CHECK(read_count(&host->released) == 1);
}

static void set_switch(int *which, int on) {
    pthread_mutex_lock(&lock);
    *which = on;
    pthread_mutex_unlock(&lock);
}

/* A sign-in persists through the host's set; the log has lines, none with the token or the
   grant. */
static void sign_in_persists_through_set(void) {
    host_client host = {0};
    open_client(&host);
    char url[512];
    grant_redirect("env-open", "c-host@example.com", url, sizeof url);
    outcome signed_in = redirect(host.client, url);
    CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.session != NULL);
    char *token = NULL;
    CHECK(portal_auth_session_copy_token(signed_in.session, &token, NULL) == PORTAL_AUTH_OK);
    char expected[512];
    snprintf(expected, sizeof expected, "{\"clientSessionToken\":\"%s\",\"endUserId\":\"%s\"}", token,
             portal_auth_session_end_user_id(signed_in.session));
    CHECK(stored_is(expected));

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
    close_client(&host);
}

/* A second client restores it, which logs a line at info level; with the log level at
   warning, the same restore passes no line to the handler. */
static void restore_logs_at_info_only(void) {
    host_client first = {0}, second = {0};
    open_client(&first);
    open_client(&second);
    outcome signed_in = sign_in(first.client, "env-open", "c-host@example.com");
    int lines_before = read_count(&lines);
    outcome restored = restore(second.client);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    portal_auth_session_release(restored.session);
    CHECK(read_count(&lines) > lines_before);

    lines_before = read_count(&lines);
    portal_auth_set_log_level(PORTAL_AUTH_LOG_WARNING);
    outcome quiet = restore(second.client);
    portal_auth_set_log_level(PORTAL_AUTH_LOG_DEBUG);
    CHECK(quiet.code == PORTAL_AUTH_OK && quiet.session != NULL);
    portal_auth_session_release(quiet.session);
    CHECK(read_count(&lines) == lines_before);
    portal_auth_session_release(signed_in.session);
    close_client(&second);
    close_client(&first);
}

/* A failing get is transient: an error, and the value stays. */
static void failing_get_keeps_the_value(void) {
    host_client host = {0};
    open_client(&host);
    outcome signed_in = sign_in(host.client, "env-open", "c-host@example.com");
    int removes_before = read_count(&removes);
    set_switch(&fail_get, 1);
    outcome failing = restore(host.client);
    set_switch(&fail_get, 0);
    CHECK(failing.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && failing.session == NULL);
    CHECK(!stored_is(NULL) && read_count(&removes) == removes_before);
    portal_auth_session_release(signed_in.session);
    close_client(&host);
}

/* A value that does not decode is deleted and reads as no session; its heal logs one
   warning, without the value. */
static void undecodable_value_cleared(void) {
    host_client host = {0};
    open_client(&host);
    int removes_before = read_count(&removes), cleared_before = read_count(&cleared);
    store_value("garbage");
    outcome corrupt = restore(host.client);
    CHECK(corrupt.code == PORTAL_AUTH_OK && corrupt.session == NULL);
    CHECK(stored_is(NULL) && read_count(&removes) == removes_before + 1);
    pthread_mutex_lock(&lock);
    CHECK(cleared == cleared_before + 1 && strstr(logged, "garbage") == NULL);
    pthread_mutex_unlock(&lock);
    close_client(&host);
}

/* A heal whose delete fails: a storage failure that says so, the value kept, no warning;
   which invalidate() reports too (an undecodable value belongs to nobody), and clears once
   the delete works. */
static void failed_clear_reported_and_kept(void) {
    host_client host = {0};
    open_client(&host);
    int cleared_before = read_count(&cleared);
    store_value("garbage");
    set_switch(&fail_remove, 1);
    outcome unhealed = restore(host.client);
    CHECK(unhealed.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && unhealed.session == NULL);
    CHECK(unhealed.reason == PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED);
    CHECK(stored_is("garbage") && read_count(&cleared) == cleared_before);

    outcome other = sign_in(host.client, "env-open", "c-host-2@example.com");
    store_value("garbage");
    outcome refused = invalidate(other.session);
    CHECK(refused.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && refused.reason == PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED);
    CHECK(stored_is("garbage"));
    set_switch(&fail_remove, 0);
    outcome retried = invalidate(other.session);
    CHECK(retried.code == PORTAL_AUTH_OK && stored_is(NULL) && read_count(&cleared) == cleared_before + 1);
    portal_auth_session_release(other.session);
    close_client(&host);
}

/* A store that fails to read: the reason is the host's store. */
static void unreadable_store_is_the_hosts_failure(void) {
    host_client host = {0};
    open_client(&host);
    set_switch(&fail_get, 1);
    outcome unread = restore(host.client);
    set_switch(&fail_get, 0);
    CHECK(unread.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && unread.reason == PORTAL_AUTH_REASON_HOST_STORAGE_FAILED);
    close_client(&host);
}

/* One token, three sessions (a sign-in, a restore by each client); 8 threads invalidate them
   at once: one read, one delete, the same outcome for all, every session invalidated; then
   invalidating again does no storage I/O. */
static void concurrent_invalidations_share_one_delete(void) {
    host_client first = {0}, second = {0};
    open_client(&first);
    open_client(&second);
    outcome shared = sign_in(first.client, "env-open", "c-host-3@example.com");
    outcome by_first = restore(first.client), by_second = restore(second.client);
    portal_auth_session *sessions[3] = { shared.session, by_first.session, by_second.session };
    CHECK(sessions[0] && sessions[1] && sessions[2] && sessions[0] != sessions[1] && sessions[1] != sessions[2]);
    int gets_before = read_count(&gets), removes_before = read_count(&removes);
    CHECK(invalidate_at_once(sessions, 3) == THREADS);
    CHECK(read_count(&gets) - gets_before == 1 && read_count(&removes) - removes_before == 1 && stored_is(NULL));
    for (int i = 0; i < 3; i++) CHECK(is_invalidated(sessions[i]));
    CHECK(invalidate(sessions[2]).code == PORTAL_AUTH_OK);
    CHECK(read_count(&gets) - gets_before == 1 && read_count(&removes) - removes_before == 1);
    for (int i = 0; i < 3; i++) portal_auth_session_release(sessions[i]);
    close_client(&second);
    close_client(&first);
}

/* Host storage without callbacks, or without all of them; a failed portal_auth_new releases
   the host's user_data before it returns, also when the client's own checks fail after it
   read the callbacks. */
static void incomplete_callbacks_refused_and_released(void) {
    portal_auth_code code;
    portal_auth_error *error = NULL;
    CHECK(client_with(NULL, &code, &error) == NULL && code == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(strcmp(portal_auth_error_name(error), "host_storage") == 0);
    portal_auth_error_free(error);
    int partial_released = 0;
    portal_auth_storage_callbacks partial = { sizeof partial, host_get, host_set, NULL, &partial_released, host_release };
    CHECK(client_with(&partial, &code, NULL) == NULL && code == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(read_count(&partial_released) == 1);
    portal_auth_options blank = emulator_options("");
    blank.storage = PORTAL_AUTH_STORAGE_HOST;
    blank.host_storage = &partial;
    partial.remove = host_remove;
    portal_auth *none = NULL;
    CHECK(portal_auth_new(&blank, &none, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT && none == NULL);
    CHECK(read_count(&partial_released) == 2);
}

static const test_case cases[] = {
    { "sign_in_persists_through_set", sign_in_persists_through_set, NULL },
    { "restore_logs_at_info_only", restore_logs_at_info_only, NULL },
    { "failing_get_keeps_the_value", failing_get_keeps_the_value, NULL },
    { "undecodable_value_cleared", undecodable_value_cleared, NULL },
    { "failed_clear_reported_and_kept", failed_clear_reported_and_kept, NULL },
    { "unreadable_store_is_the_hosts_failure", unreadable_store_is_the_hosts_failure, NULL },
    { "concurrent_invalidations_share_one_delete", concurrent_invalidations_share_one_delete, NULL },
    { "incomplete_callbacks_refused_and_released", incomplete_callbacks_refused_and_released, NULL },
};

int main(int argc, char **argv) {
    portal_auth_set_log_handler(on_log, NULL);
    int status = RUN_EMULATOR_CASES(argc, argv, "host_storage_test", cases);
    portal_auth_set_log_handler(audit_log_line, NULL);
    store_value(NULL);
    return status;
}
