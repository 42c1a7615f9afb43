/* C test of cancellation on the terms of docs/protocol.md §5, against the Portal emulator in
 * PORTAL_AUTH_TEST_API_HOST: a call cancelled before its request is sent ends CANCELLED and
 * sends nothing; one cancelled after its request is on the wire completes, and its session is
 * persisted. The emulator holds a request until released, so the order is certain. */
#include "test_support.h"

typedef struct { int calls; portal_auth_code code; int kind; char message[256]; portal_auth_session *session; } outcome;

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    snprintf(out->message, sizeof out->message, "%s", error ? portal_auth_error_message(error) : "");
    out->kind = result ? portal_auth_result_kind(result) : 0;
    count_call(&out->calls);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    outcome *out = user_data;
    out->session = portal_auth_session_retain(session);
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    count_call(&out->calls);
}

static int exchanges(void) {
    char body[2048];
    emulator_request("/_emulator/wait?path=/magic-links/validations&count=0&timeout=1", NULL, body, sizeof body);
    const char *count = strstr(body, "\"count\":");
    return count ? atoi(count + 8) : -1;
}

int main(void) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char body[2048];
    emulator_request("/_emulator/reset", "{}", body, sizeof body);

    portal_auth_options options = emulator_options("env-open");
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);

    char held_url[512], waiting_url[512];
    grant_redirect("env-open", "c-cancel-1@example.com", held_url, sizeof held_url);
    grant_redirect("env-open", "c-cancel-2@example.com", waiting_url, sizeof waiting_url);

    /* The first exchange goes out and is held by the emulator: it holds the grant lock. */
    emulator_request("/_emulator/faults", "{\"path\":\"/magic-links/validations\",\"kind\":\"hold\"}", body, sizeof body);
    outcome held = {0}, waiting = {0};
    portal_auth_call *held_call = NULL, *waiting_call = NULL;
    CHECK(portal_auth_handle_redirect(client, held_url, on_result, &held, &held_call) == PORTAL_AUTH_OK);
    emulator_request("/_emulator/wait?path=/magic-links/validations&count=1&timeout=30", NULL, body, sizeof body);

    /* Before the request is sent: the second waits for the lock; cancelled there, it ends
       CANCELLED and never reaches the server. */
    CHECK(portal_auth_handle_redirect(client, waiting_url, on_result, &waiting, &waiting_call) == PORTAL_AUTH_OK);
    portal_auth_call_cancel(waiting_call);
    wait_calls(&waiting.calls);
    CHECK(waiting.code == PORTAL_AUTH_E_CANCELLED && waiting.calls == 1);
    CHECK(strcmp(waiting.message, "The call was cancelled.") == 0);

    /* After the request is sent: cancelling the held exchange does not undo it. */
    portal_auth_call_cancel(held_call);
    emulator_request("/_emulator/release", "{}", body, sizeof body);
    wait_calls(&held.calls);
    CHECK(held.calls == 1);
    CHECK(exchanges() == 1);

    /* The spent grant's session was persisted, whatever the cancelled caller saw. */
    outcome restored = {0};
    CHECK(portal_auth_restore_session(client, on_session, &restored, NULL) == PORTAL_AUTH_OK);
    wait_calls(&restored.calls);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);

    pthread_mutex_lock(&lock);
    CHECK(held.calls == 1 && waiting.calls == 1 && restored.calls == 1);
    pthread_mutex_unlock(&lock);
    portal_auth_session_release(restored.session);
    portal_auth_call_free(held_call);
    portal_auth_call_free(waiting_call);
    portal_auth_free(client);
    curl_global_cleanup();
    return report("cancel_test");
}
