/* C test of cancellation on the terms of client-auth.md §5, against the Portal emulator in
 * PORTAL_AUTH_TEST_API_HOST: a call cancelled before its request is sent ends CANCELLED and
 * sends nothing; one cancelled after its request is on the wire completes, and its session is
 * persisted. The emulator holds a request until released, so the order is certain. */
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

typedef struct { int calls; portal_auth_code code; int kind; portal_auth_session *session; } outcome;

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    outcome *out = user_data;
    pthread_mutex_lock(&lock);
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->kind = result ? portal_auth_result_kind(result) : 0;
    out->calls++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    outcome *out = user_data;
    pthread_mutex_lock(&lock);
    out->session = portal_auth_session_retain(session);
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->calls++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_for(outcome *out) {
    pthread_mutex_lock(&lock);
    while (out->calls == 0) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static size_t append(char *data, size_t size, size_t count, void *user) {
    char *body = user;
    size_t extra = size * count, old = strlen(body);
    if (old + extra < 2048) { memcpy(body + old, data, extra); body[old + extra] = 0; }
    return extra;
}

/* A control request to the emulator (POST when `json` is given); returns the body. */
static void control(const char *path, const char *json, char *body) {
    char url[512];
    snprintf(url, sizeof url, "%s%s", getenv("PORTAL_AUTH_TEST_API_HOST"), path);
    body[0] = 0;
    CURL *easy = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    if (json) curl_easy_setopt(easy, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, body);
    if (curl_easy_perform(easy) != CURLE_OK) abort();
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
}

static void grant_redirect(const char *email, char *url, size_t size) {
    char json[256], body[2048];
    snprintf(json, sizeof json, "{\"environmentId\":\"env-open\",\"email\":\"%s\",\"kind\":\"magic\"}", email);
    control("/_emulator/grants", json, body);
    const char *token = strstr(body, "\"token\":\"");
    if (!token) abort();
    token += 9;
    snprintf(url, size, "myapp://auth/callback?token=%.*s&authMethod=EMAIL_MAGIC_LINK", (int)strcspn(token, "\""), token);
}

/* How many exchanges the emulator has received. */
static int exchanges(void) {
    char body[2048];
    control("/_emulator/wait?path=/magic-links/validations&count=0&timeout=1", NULL, body);
    const char *count = strstr(body, "\"count\":");
    return count ? atoi(count + 8) : -1;
}

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char body[2048];
    control("/_emulator/reset", "{}", body);

    portal_auth_options options;
    portal_auth_options_init(&options);
    options.auth_environment_id = "env-open";
    options.redirect_url = "myapp://auth/callback";
    options.api_host = getenv("PORTAL_AUTH_TEST_API_HOST");
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);

    char held_url[512], waiting_url[512];
    grant_redirect("c-cancel-1@example.com", held_url, sizeof held_url);
    grant_redirect("c-cancel-2@example.com", waiting_url, sizeof waiting_url);

    /* The first exchange goes out and is held by the emulator: it holds the grant lock. */
    control("/_emulator/faults", "{\"path\":\"/magic-links/validations\",\"kind\":\"hold\"}", body);
    outcome held = {0}, waiting = {0};
    portal_auth_call *held_call = NULL, *waiting_call = NULL;
    CHECK(portal_auth_handle_redirect(client, held_url, on_result, &held, &held_call) == PORTAL_AUTH_OK);
    control("/_emulator/wait?path=/magic-links/validations&count=1&timeout=30", NULL, body);

    /* Before the request is sent: the second waits for the lock; cancelled there, it ends
       CANCELLED and never reaches the server. */
    CHECK(portal_auth_handle_redirect(client, waiting_url, on_result, &waiting, &waiting_call) == PORTAL_AUTH_OK);
    portal_auth_call_cancel(waiting_call);
    wait_for(&waiting);
    CHECK(waiting.code == PORTAL_AUTH_E_CANCELLED && waiting.calls == 1);

    /* After the request is sent: cancelling the held exchange does not undo it. */
    portal_auth_call_cancel(held_call);
    control("/_emulator/release", "{}", body);
    wait_for(&held);
    CHECK(held.calls == 1);
    CHECK(exchanges() == 1);

    /* The spent grant's session was persisted, whatever the cancelled caller saw. */
    outcome restored = {0};
    CHECK(portal_auth_restore_session(client, on_session, &restored, NULL) == PORTAL_AUTH_OK);
    wait_for(&restored);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);

    pthread_mutex_lock(&lock);
    CHECK(held.calls == 1 && waiting.calls == 1 && restored.calls == 1);
    pthread_mutex_unlock(&lock);
    portal_auth_session_release(restored.session);
    portal_auth_call_free(held_call);
    portal_auth_call_free(waiting_call);
    portal_auth_free(client);
    curl_global_cleanup();
    printf("cancel_test: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
