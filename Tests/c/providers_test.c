/* C test of the keyring on the Secret Service provider scripts/private-keyring.sh runs
 * (`run --provider NAME`, the name in PORTAL_AUTH_TEST_PROVIDER; scripts/test-providers.sh
 * runs it inside each), with the Portal emulator in PORTAL_AUTH_TEST_API_HOST:
 * - a sign-in persists, a new process restores it (KeePassXC with its access confirmation:
 *   refused at once with PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION, never a hang), and a
 *   sign-out removes it;
 * - locked, restore, sign-out and a redirect each fail with _KEYRING_LOCKED, and the
 *   redirect's grant is never sent; unlocked, the session is still there;
 * - KWallet that cannot encrypt: _KEYRING_ENCRYPTION_FAILED on every path, nothing spent;
 * - with no Secret Service, or no default collection, a redirect spends no grant; KeePassXC
 *   started anew asks again before the item is replaced: a redirect spends nothing then.
 * - KeePassXC with its confirmation, keyring prompts allowed: the restore of a new process
 *   waits on the access dialog until it is cancelled, and then ends at once.
 * Named cases (test_support.h's run_cases), those that apply to the provider. With the
 * arguments "restore APP_ID" it is the new process: it prints what a restore gave; with
 * "restore-cancelled APP_ID", the same with prompts allowed for a minute, the restore
 * cancelled once the library says the dialog shows. */
#include "session_support.h"

static const char *const ENVIRONMENT = "env-open";

static const char *provider(void) {
    const char *name = getenv("PORTAL_AUTH_TEST_PROVIDER");
    return name ? name : "gnome";
}

static portal_auth *client_of(const char *application_id) {
    portal_auth_options options = emulator_options(ENVIRONMENT);
    options.storage = PORTAL_AUTH_STORAGE_KEYRING;
    options.application_id = application_id;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}


/* The restore whose dialog is waited for, and the log line that says so. */
static portal_auth_call *waiting_call;
static const char DIALOG_SHOWN[] = "Keyring: the provider's dialog is shown";

static void cancel_once_shown(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    if (strncmp(message, DIALOG_SHOWN, strlen(DIALOG_SHOWN)) != 0) return;
    pthread_mutex_lock(&lock);
    portal_auth_call_cancel(waiting_call);
    pthread_mutex_unlock(&lock);
}

/* The new process whose restore is cancelled while the dialog waits: "ended <code> <reason>". */
static int print_cancelled_restore(const char *application_id) {
    portal_auth_options options = emulator_options(ENVIRONMENT);
    options.storage = PORTAL_AUTH_STORAGE_KEYRING;
    options.application_id = application_id;
    options.keyring_prompt_timeout_ms = 60000;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    portal_auth_set_log_level(PORTAL_AUTH_LOG_DEBUG);
    portal_auth_set_log_handler(cancel_once_shown, NULL);
    outcome restored = {0};
    pthread_mutex_lock(&lock);
    CHECK(portal_auth_restore_session(client, on_session, &restored, &waiting_call) == PORTAL_AUTH_OK);
    pthread_mutex_unlock(&lock);
    wait_calls(&restored.calls);
    printf("ended %d %d\n", (int)restored.code, (int)restored.reason);
    portal_auth_set_log_handler(audit_log_line, NULL);
    portal_auth_call_free(waiting_call);
    portal_auth_session_release(restored.session);
    portal_auth_free(client);
    return 0;
}

static void restore_in_new_process(const char *self, const char *mode, const char *application_id, char *seen,
                                   size_t size) {
    /* Bounded: a wait on a dialog that never ends fails the test rather than hanging it. */
    const char *const argv[] = { "timeout", "60", self, mode, application_id, NULL };
    CHECK(run(argv, NULL, seen, size) == 0);
}

/* Checks what the new process printed, and shows it when it is not `expected`. */
#define CHECK_SEEN(seen, expected) do { \
        CHECK(strcmp((seen), (expected)) == 0); \
        if (strcmp((seen), (expected)) != 0) fprintf(stderr, "  the new process printed: %s", (seen)); \
    } while (0)

/* A redirect the store cannot take fails with `reason`, and its grant is never sent. */
static void spends_nothing(portal_auth *client, const char *url, portal_auth_reason reason) {
    clear_requests();
    outcome refused = redirect(client, url);
    CHECK(refused.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && refused.reason == reason && refused.session == NULL);
    CHECK(count_requests("/magic-links/validations") == 0);
}

/* This program, which the cases run again as a new process, and this run's application: the
   provider's earlier items are not its. */
static const char *self;
static char application_id[64];

/* KeePassXC with its access confirmation: a new process is refused at once. */
static int confirms_access(void) {
    return strcmp(provider(), "keepassxc") == 0;
}

/* A new process's restore gives `signed_in`'s session, or with confirmations the reason to
   confirm. */
static void restored_in_new_process(const outcome *signed_in) {
    char seen[256], expected[256];
    if (confirms_access()) snprintf(expected, sizeof expected, "failure %d\n", (int)PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION);
    else snprintf(expected, sizeof expected, "session %s\n", portal_auth_session_end_user_id(signed_in->session));
    restore_in_new_process(self, "restore", application_id, seen, sizeof seen);
    CHECK_SEEN(seen, expected);
}

/* Persisted; restored here, and in a new process. */
static void persisted_and_restored_in_a_new_process(void) {
    portal_auth *client = client_of(application_id);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-provider-1@example.com");
    outcome here = restore(client);
    CHECK(here.code == PORTAL_AUTH_OK && here.session != NULL);
    portal_auth_session_release(here.session);
    restored_in_new_process(&signed_in);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
}

/* Locked: every path says so; nothing is spent or lost. */
static void locked_keyring_fails_every_path(void) {
    portal_auth *client = client_of(application_id);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-provider-1@example.com");
    char url[512];
    grant_redirect(ENVIRONMENT, "c-provider-2@example.com", url, sizeof url);
    keyring("lock");
    outcome locked = restore(client);
    CHECK(locked.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && locked.reason == PORTAL_AUTH_REASON_KEYRING_LOCKED);
    outcome kept = clear_persisted(client);
    CHECK(kept.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && kept.reason == PORTAL_AUTH_REASON_KEYRING_LOCKED);
    spends_nothing(client, url, PORTAL_AUTH_REASON_KEYRING_LOCKED);
    keyring("unlock");
    restored_in_new_process(&signed_in);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
}

/* No Secret Service: nothing spent; the same redirect signs in once it is back. A KeePassXC
   started anew asks again before this process may replace (or delete) the item: nothing is
   spent then, and the item stays. */
static void stopped_service_spends_nothing(void) {
    portal_auth *client = client_of(application_id);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-provider-1@example.com");
    char url[512];
    grant_redirect(ENVIRONMENT, "c-provider-2@example.com", url, sizeof url);
    keyring("stop");
    spends_nothing(client, url, PORTAL_AUTH_REASON_NO_SECRET_SERVICE);
    keyring("start");
    if (confirms_access()) {
        spends_nothing(client, url, PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION);
        outcome confirm = clear_persisted(client);
        CHECK(confirm.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && confirm.reason == PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION);
    } else {
        outcome later = redirect(client, url);
        if (later.code) fprintf(stderr, "later: code %d reason %d\n", (int)later.code, (int)later.reason);
        CHECK(later.code == PORTAL_AUTH_OK && later.session != NULL);
        portal_auth_session_release(later.session);
    }
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
}

/* Signed out: gone, here and for a new process. */
static void sign_out_removes_it(void) {
    portal_auth *client = client_of(application_id);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-provider-1@example.com");
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    outcome gone = restore(client);
    CHECK(gone.code == PORTAL_AUTH_OK && gone.session == NULL);
    char seen[256];
    restore_in_new_process(self, "restore", application_id, seen, sizeof seen);
    CHECK_SEEN(seen, "none\n");
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
}

/* KeePassXC, prompts allowed: a new process's restore waits on the access dialog until the
   call is cancelled. Last of its run: KeePassXC 2.7.4 keeps its dialog open once the prompt
   is dismissed. */
static void dialog_wait_ends_with_its_cancel(void) {
    /* An item of this application's to ask for: stored now, or kept from an earlier case
       (a KeePassXC that case started anew asks before this process may replace it). */
    portal_auth *client = client_of(application_id);
    char url[512], seen[256];
    grant_redirect(ENVIRONMENT, "c-provider-1@example.com", url, sizeof url);
    outcome stored = redirect(client, url);
    CHECK(stored.code == PORTAL_AUTH_OK || stored.reason == PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION);
    restore_in_new_process(self, "restore-cancelled", application_id, seen, sizeof seen);
    CHECK_SEEN(seen, "ended 31 0\n");
    portal_auth_session_release(stored.session);
    portal_auth_free(client);
}

/* With no default collection, a redirect spends no grant. */
static void without_a_collection_spends_nothing(void) {
    portal_auth *client = client_of(application_id);
    char url[512];
    grant_redirect(ENVIRONMENT, "c-provider-3@example.com", url, sizeof url);
    spends_nothing(client, url, PORTAL_AUTH_REASON_NO_SECRET_SERVICE);
    outcome nothing = restore(client);
    CHECK(nothing.code == PORTAL_AUTH_OK && nothing.session == NULL);
    portal_auth_free(client);
}

/* KWallet without its encryption plugins: its own reason, on every path, nothing spent. */
static void without_encryption_every_path_fails(void) {
    portal_auth *client = client_of(application_id);
    outcome restored = restore(client);
    CHECK(restored.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && restored.reason == PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED);
    outcome cleared = clear_persisted(client);
    CHECK(cleared.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && cleared.reason == PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED);
    char url[512];
    grant_redirect(ENVIRONMENT, "c-provider-4@example.com", url, sizeof url);
    spends_nothing(client, url, PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED);
    portal_auth_free(client);
}

/* The cases of each kind of provider. */
static const test_case on_a_store[] = {
    { "persisted_and_restored_in_a_new_process", persisted_and_restored_in_a_new_process, NULL },
    { "locked_keyring_fails_every_path", locked_keyring_fails_every_path, NULL },
    { "stopped_service_spends_nothing", stopped_service_spends_nothing, NULL },
    { "sign_out_removes_it", sign_out_removes_it, NULL },
};

static const test_case on_keepassxc[] = {
    { "persisted_and_restored_in_a_new_process", persisted_and_restored_in_a_new_process, NULL },
    { "locked_keyring_fails_every_path", locked_keyring_fails_every_path, NULL },
    { "stopped_service_spends_nothing", stopped_service_spends_nothing, NULL },
    { "dialog_wait_ends_with_its_cancel", dialog_wait_ends_with_its_cancel, NULL },
};

static const test_case without_a_collection[] = {
    { "without_a_collection_spends_nothing", without_a_collection_spends_nothing, NULL },
};

static const test_case without_encryption[] = {
    { "without_encryption_every_path_fails", without_encryption_every_path_fails, NULL },
};

int main(int argc, char **argv) {
    if (!getenv("PORTAL_AUTH_PRIVATE_KEYRING")) {
        fprintf(stderr, "providers_test needs a private keyring (scripts/private-keyring.sh run --provider NAME)\n");
        return 2;
    }
    portal_auth_set_log_handler(audit_log_line, NULL);
    if (argc == 3 && strcmp(argv[1], "restore") == 0) return print_restore_of(client_of(argv[2]));
    if (argc == 3 && strcmp(argv[1], "restore-cancelled") == 0) return print_cancelled_restore(argv[2]);
    self = argv[0];
    snprintf(application_id, sizeof application_id, "io.portalhq.auth.CProviders-%ld", (long)getpid());
    if (strcmp(provider(), "gnome-no-login") == 0) return RUN_EMULATOR_CASES(argc, argv, "providers_test", without_a_collection);
    if (strcmp(provider(), "kwallet-noqca") == 0) return RUN_EMULATOR_CASES(argc, argv, "providers_test", without_encryption);
    if (confirms_access()) return RUN_EMULATOR_CASES(argc, argv, "providers_test", on_keepassxc);
    return RUN_EMULATOR_CASES(argc, argv, "providers_test", on_a_store);
}
