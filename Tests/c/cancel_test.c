/* C test of cancellation on the terms of docs/protocol.md §5, against the Portal emulator in
 * PORTAL_AUTH_TEST_API_HOST: a call cancelled before its request is sent ends CANCELLED and
 * sends nothing; one cancelled after its request is on the wire completes, and its session is
 * persisted. The emulator holds a request until released, so the order is certain. Named
 * cases (test_support.h's run_cases). */
#include "session_support.h"

/* A client whose first exchange is on the wire, held by the emulator: it holds the grant
   lock. */
typedef struct { portal_auth *client; outcome out; portal_auth_call *call; } held_exchange;

static void hold_an_exchange(held_exchange *held, const char *email) {
    char url[512], body[2048];
    clear_requests();
    portal_auth_options options = emulator_options("env-open");
    CHECK(portal_auth_new(&options, &held->client, NULL) == PORTAL_AUTH_OK);
    grant_redirect("env-open", email, url, sizeof url);
    emulator_request("/_emulator/faults", "{\"path\":\"/magic-links/validations\",\"kind\":\"hold\"}", body, sizeof body);
    CHECK(portal_auth_handle_redirect(held->client, url, on_result, &held->out, &held->call) == PORTAL_AUTH_OK);
    CHECK(requests_seen("/magic-links/validations", 1, 30) == 1);
}

/* Lets it complete: it alone reached the server. */
static void release_the_exchange(held_exchange *held) {
    char body[256];
    emulator_request("/_emulator/release", "{}", body, sizeof body);
    wait_calls(&held->out.calls);
    CHECK(count_requests("/magic-links/validations") == 1);
    pthread_mutex_lock(&lock);
    CHECK(held->out.calls == 1);
    pthread_mutex_unlock(&lock);
    portal_auth_session_release(held->out.session);
    portal_auth_call_free(held->call);
}

/* Before the request is sent: the second waits for the lock; cancelled there, it ends
   CANCELLED and never reaches the server. */
static void cancelled_before_sending_ends_cancelled(void) {
    held_exchange held = {0};
    hold_an_exchange(&held, "c-cancel-1@example.com");
    char waiting_url[512];
    grant_redirect("env-open", "c-cancel-2@example.com", waiting_url, sizeof waiting_url);
    outcome waiting = {0};
    portal_auth_call *waiting_call = NULL;
    CHECK(portal_auth_handle_redirect(held.client, waiting_url, on_result, &waiting, &waiting_call) == PORTAL_AUTH_OK);
    portal_auth_call_cancel(waiting_call);
    wait_calls(&waiting.calls);
    CHECK(waiting.code == PORTAL_AUTH_E_CANCELLED && waiting.calls == 1);
    CHECK(strcmp(waiting.message, "The call was cancelled.") == 0);
    release_the_exchange(&held);
    portal_auth_call_free(waiting_call);
    portal_auth_free(held.client);
    CHECK(waiting.calls == 1);
}

/* After the request is sent: cancelling the held exchange does not undo it; the spent
   grant's session was persisted, whatever the cancelled caller saw. */
static void cancelled_on_the_wire_completes_and_persists(void) {
    held_exchange held = {0};
    hold_an_exchange(&held, "c-cancel-3@example.com");
    portal_auth_call_cancel(held.call);
    release_the_exchange(&held);
    outcome restored = restore(held.client);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    portal_auth_session_release(restored.session);
    portal_auth_free(held.client);
    CHECK(restored.calls == 1);
}

static const test_case cases[] = {
    { "cancelled_before_sending_ends_cancelled", cancelled_before_sending_ends_cancelled, NULL },
    { "cancelled_on_the_wire_completes_and_persists", cancelled_on_the_wire_completes_and_persists, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "cancel_test", cases);
}
