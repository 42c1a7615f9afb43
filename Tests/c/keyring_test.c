/* C test of the keyring store against a real gnome-keyring-daemon in a private D-Bus session
 * (scripts/private-keyring.sh run, whose script is in PORTAL_AUTH_PRIVATE_KEYRING) and the
 * Portal emulator in PORTAL_AUTH_TEST_API_HOST: an undecodable entry cleared by a restore
 * (with one warning line) and by invalidate; the reasons of a locked keyring and of a
 * stopped Secret Service; and 8 threads invalidating the sessions of one token at once,
 * whose calls to the Secret Service dbus-monitor counts. Across processes (this program run
 * again as workers, "worker"): a worker's sign-in over a stored session and its restore,
 * whose calls dbus-monitor counts; a sign-in whose write lands among five processes invalidating
 * the session it replaces always survives them, and an item secret-tool deletes while
 * workers restore, invalidate and sign out fails none of them. Named cases (test_support.h's
 * run_cases); the case refused_delete_keeps_undecodable_entry runs only when named, inside
 * `private-keyring.sh run --deny-item-delete`, whose bus refuses every item's Delete: a
 * restore that cannot clear the undecodable entry fails with
 * PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED, keeps it, and logs no such warning. */
#define _POSIX_C_SOURCE 200809L  /* pthread_barrier, posix_spawnp, strdup */
#include "session_support.h"

#include <signal.h>

static const char *const ENVIRONMENT = "env-open";

/* The warnings that an undecodable entry was cleared. */
static int cleared;

static void on_log(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    if (level == PORTAL_AUTH_LOG_WARNING && strcmp(message, "An undecodable stored session of environment env-open was cleared.") == 0) {
        pthread_mutex_lock(&lock);
        cleared++;
        pthread_mutex_unlock(&lock);
    }
}

static int cleared_count(void) {
    pthread_mutex_lock(&lock);
    int count = cleared;
    pthread_mutex_unlock(&lock);
    return count;
}

/* An entry for the environment written by another tool. */
static void store_entry(const char *value) {
    const char *const argv[] = { "secret-tool", "store", "--label=written by another tool", "xdg:schema",
                                 "io.portalhq.auth.Session", "auth_environment_id", ENVIRONMENT, NULL };
    CHECK(run(argv, value, NULL, 0) == 0);
}

/* Whether the environment's entry is `value` (NULL: none is stored). */
static int entry_is(const char *value) {
    const char *const argv[] = { "secret-tool", "lookup", "auth_environment_id", ENVIRONMENT, NULL };
    char found[512];
    int status = run(argv, NULL, found, sizeof found);
    return value ? status == 0 && strcmp(found, value) == 0 : status != 0;
}

/* dbus-monitor, watching the method calls made to the Secret Service on the session bus. */
typedef struct { pid_t pid; FILE *lines; } monitor;

/* The method calls counted between two Pings: every one, and some by name; `members` lists
   every one's, for a failure's message. */
typedef struct { int all, search_items, get_secrets, deletes; char members[512]; } bus_calls;

static void read_until(monitor *m, const char *marker, bus_calls *calls) {
    char line[4096];
    while (fgets(line, sizeof line, m->lines)) {
        if (strstr(line, marker)) return;
        if (strncmp(line, "method call ", 12) != 0 || !calls) continue;
        calls->all++;
        if (strstr(line, "interface=org.freedesktop.Secret.Service; member=SearchItems")) calls->search_items++;
        if (strstr(line, "interface=org.freedesktop.Secret.Service; member=GetSecrets")) calls->get_secrets++;
        if (strstr(line, "interface=org.freedesktop.Secret.Item; member=Delete")) calls->deletes++;
        const char *member = strstr(line, "member=");
        size_t used = strlen(calls->members);
        if (member && used + 2 < sizeof calls->members)
            snprintf(calls->members + used, sizeof calls->members - used, " %.*s", (int)strcspn(member + 7, "\n"), member + 7);
    }
    abort();  /* dbus-monitor ended before the marker */
}

static monitor monitor_start(void) {
    const char *const argv[] = { "dbus-monitor", "--session", "type='method_call',destination='org.freedesktop.secrets'", NULL };
    int out;
    monitor m;
    m.pid = spawn_piped(argv, environ, NULL, &out);
    m.lines = fdopen(out, "r");
    /* A monitor acquires, then gives up, a name of its own: from then on it sees every call. */
    read_until(&m, "member=NameLost", NULL);
    return m;
}

/* Counts the calls since the last count: a Ping of the service's own, sent now, comes after them. */
static bus_calls monitor_count(monitor *m) {
    bus_calls calls = {0};
    const char *const ping[] = { "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets",
                                 "/org/freedesktop/secrets", "org.freedesktop.DBus.Peer.Ping", NULL };
    if (run(ping, NULL, NULL, 0) != 0) abort();
    read_until(m, "member=Ping", &calls);
    return calls;
}

static void monitor_stop(monitor *m) {
    kill(m->pid, SIGTERM);
    fclose(m->lines);
    int status;
    while (waitpid(m->pid, &status, 0) < 0) {}
}

static portal_auth *keyring_client(void) {
    portal_auth_options options = emulator_options(ENVIRONMENT);
    options.storage = PORTAL_AUTH_STORAGE_KEYRING;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

/* A restore that cannot clear an undecodable entry fails as ENTRY_NOT_CLEARED, keeps it,
   and logs no warning that it was cleared. */
static void refused_delete_keeps_undecodable_entry(void) {
    portal_auth *client = keyring_client();
    int cleared_before = cleared_count();
    store_entry("{not a session");
    outcome kept = restore(client);
    CHECK(kept.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && kept.session == NULL);
    CHECK(kept.reason == PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED);
    CHECK(entry_is("{not a session") && cleared_count() == cleared_before);
    portal_auth_free(client);
}

/* A restore clears an undecodable entry, says so once, and reports no session. */
static void restore_clears_undecodable_entry(void) {
    portal_auth *client = keyring_client();
    int cleared_before = cleared_count();
    store_entry("{not a session");
    outcome healed = restore(client);
    CHECK(healed.code == PORTAL_AUTH_OK && healed.session == NULL);
    CHECK(entry_is(NULL) && cleared_count() == cleared_before + 1);
    portal_auth_free(client);
}

/* invalidate() clears one too: it belongs to nobody. */
static void invalidate_clears_undecodable_entry(void) {
    portal_auth *client = keyring_client();
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-keyring-1@example.com");
    int cleared_before = cleared_count();
    store_entry("\x01 not JSON");
    CHECK(invalidate(signed_in.session).code == PORTAL_AUTH_OK);
    CHECK(entry_is(NULL) && cleared_count() == cleared_before + 1);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
}

/* The reasons of a locked keyring and of a stopped Secret Service; nothing deleted. */
static void locked_and_stopped_keyring_reasons(void) {
    portal_auth *client = keyring_client();
    outcome kept = sign_in(client, ENVIRONMENT, "c-keyring-2@example.com");
    keyring("lock");
    outcome locked = restore(client);
    CHECK(locked.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && locked.reason == PORTAL_AUTH_REASON_KEYRING_LOCKED);
    keyring("stop");
    outcome stopped = restore(client);
    CHECK(stopped.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && stopped.reason == PORTAL_AUTH_REASON_NO_SECRET_SERVICE);
    keyring("start");
    outcome back = restore(client);
    CHECK(back.code == PORTAL_AUTH_OK && back.session != NULL);
    portal_auth_session_release(back.session);
    portal_auth_session_release(kept.session);
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    portal_auth_free(client);
}

/* One token, three sessions; 8 threads invalidate them at once: one read (a search with its
   secrets) and one delete reach the Secret Service. The delete searches twice, for the
   application's item and for one stored before the application attribute existed, and
   deletes the one it finds. Settled: invalidating again reaches no keyring. */
static void concurrent_invalidations_reach_the_keyring_once(void) {
    portal_auth *client = keyring_client(), *other = keyring_client();
    outcome shared = sign_in(client, ENVIRONMENT, "c-keyring-3@example.com");
    outcome by_client = restore(client), by_other = restore(other);
    portal_auth_session *sessions[3] = { shared.session, by_client.session, by_other.session };
    CHECK(sessions[1] != NULL && sessions[2] != NULL && sessions[0] != sessions[1] && sessions[1] != sessions[2]);
    monitor m = monitor_start();
    monitor_count(&m);
    CHECK(invalidate_at_once(sessions, 3) == THREADS);
    bus_calls calls = monitor_count(&m);
    CHECK(calls.search_items == 3 && calls.get_secrets == 1 && calls.deletes == 1);
    if (calls.search_items != 3 || calls.get_secrets != 1 || calls.deletes != 1)
        fprintf(stderr, "  SearchItems %d, GetSecrets %d, Delete %d\n", calls.search_items, calls.get_secrets, calls.deletes);
    for (int i = 0; i < 3; i++) CHECK(is_invalidated(sessions[i]));
    CHECK(invalidate(sessions[0]).code == PORTAL_AUTH_OK);
    calls = monitor_count(&m);
    CHECK(calls.all == 0);
    monitor_stop(&m);
    CHECK(entry_is(NULL));
    for (int i = 0; i < 3; i++) portal_auth_session_release(sessions[i]);
    portal_auth_free(other);
    portal_auth_free(client);
}

/* ---- Processes sharing the keyring ---------------------------------------------------- */

/* This program, which the cases run again as worker processes. */
static const char *self;

/* A worker process of the environment: `self worker`, answering a line per command. */
typedef struct { pid_t pid; FILE *commands, *answers; } worker;

static worker worker_start(void) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) abort();
    /* The next workers must not hold this one's ends: its commands end when this process
       closes them. */
    if (fcntl(in[1], F_SETFD, FD_CLOEXEC) != 0 || fcntl(out[0], F_SETFD, FD_CLOEXEC) != 0) abort();
    worker w;
    w.pid = fork();
    if (w.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execlp("timeout", "timeout", "300", self, "worker", (char *)NULL);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    w.commands = fdopen(in[1], "w");
    w.answers = fdopen(out[0], "r");
    return w;
}

static void worker_send(worker *w, const char *command) {
    fprintf(w->commands, "%s\n", command);
    fflush(w->commands);
}

/* The worker's answer to its last command (its line, without the line feed). */
static void worker_answer(worker *w, char *line, size_t size) {
    if (!fgets(line, (int)size, w->answers)) abort();
    line[strcspn(line, "\n")] = 0;
}

static void worker_stop(worker *w) {
    fclose(w->commands);
    fclose(w->answers);
    int status;
    while (waitpid(w->pid, &status, 0) < 0) {}
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* What a call ended with, as a worker answers it: "ok", or "failure <reason>". */
static void print_outcome(const outcome *out) {
    if (out->code == PORTAL_AUTH_OK) printf("ok\n");
    else printf("failure %d\n", (int)out->reason);
    fflush(stdout);
}

/* The worker: "restore" restores the environment's session and keeps it ("session" or
   "none"), "invalidate" invalidates the session kept, "clear" signs out, "redirect URL"
   signs in with the redirect URL. */
static int serve_as_worker(void) {
    portal_auth *client = keyring_client();
    portal_auth_session *kept = NULL;
    char command[640];
    while (fgets(command, sizeof command, stdin)) {
        if (strcmp(command, "restore\n") == 0) {
            portal_auth_session_release(kept);
            outcome restored = restore(client);
            kept = restored.session;
            if (restored.code != PORTAL_AUTH_OK) print_outcome(&restored);
            else printf(kept ? "session\n" : "none\n"), fflush(stdout);
        } else if (strcmp(command, "invalidate\n") == 0 && kept) {
            outcome out = invalidate(kept);
            print_outcome(&out);
        } else if (strcmp(command, "clear\n") == 0) {
            outcome out = clear_persisted(client);
            print_outcome(&out);
        } else if (strncmp(command, "redirect ", 9) == 0) {
            command[strcspn(command, "\n")] = 0;
            outcome out = redirect(client, command + 9);
            portal_auth_session_release(out.session);
            print_outcome(&out);
        } else {
            return 1;
        }
    }
    portal_auth_session_release(kept);
    portal_auth_free(client);
    return 0;
}

/* The token of the environment's stored session, restored in this process (empty: none). */
static void stored_token(portal_auth *client, char *token, size_t size) {
    outcome restored = restore(client);
    CHECK(restored.code == PORTAL_AUTH_OK);
    token[0] = 0;
    if (!restored.session) return;
    char *copy = NULL;
    CHECK(portal_auth_session_copy_token(restored.session, &copy, NULL) == PORTAL_AUTH_OK);
    if (copy) snprintf(token, size, "%s", copy);
    portal_auth_string_free(copy);
    portal_auth_session_release(restored.session);
}

/* A process signs in over the session another stored: it asks the Secret Service at most 3
   times (the check before the grant is spent, the write, and the clean-up of an item of
   before the application attribute, once per process), and a restore at most 2 (a search
   and its secret). gnome-keyring opens an item with its collection and replaces it in
   CreateItem, whose reply names the item: nothing more is needed. Counted once the worker
   has met the service (its connection, transfer session and default collection are asked
   once per process). */
static void sign_in_and_restore_call_the_keyring_little(void) {
    portal_auth *client = keyring_client();
    outcome first = sign_in(client, ENVIRONMENT, "c-keyring-calls-1@example.com");
    worker w = worker_start();
    char line[64], url[512], command[600];
    worker_send(&w, "restore");
    worker_answer(&w, line, sizeof line);
    CHECK(strcmp(line, "session") == 0);
    monitor m = monitor_start();
    monitor_count(&m);
    grant_redirect(ENVIRONMENT, "c-keyring-calls-2@example.com", url, sizeof url);
    snprintf(command, sizeof command, "redirect %s", url);
    worker_send(&w, command);
    worker_answer(&w, line, sizeof line);
    CHECK(strcmp(line, "ok") == 0);
    bus_calls signing_in = monitor_count(&m);
    CHECK(signing_in.all <= 3);
    if (signing_in.all > 3) fprintf(stderr, "  a sign-in made %d calls:%s\n", signing_in.all, signing_in.members);
    worker_send(&w, "restore");
    worker_answer(&w, line, sizeof line);
    CHECK(strcmp(line, "session") == 0);
    bus_calls restoring = monitor_count(&m);
    CHECK(restoring.all <= 2);
    if (restoring.all > 2) fprintf(stderr, "  a restore made %d calls:%s\n", restoring.all, restoring.members);
    monitor_stop(&m);
    worker_stop(&w);
    /* The worker's session replaced the first one. */
    char *replaced = NULL, stored[512];
    CHECK(portal_auth_session_copy_token(first.session, &replaced, NULL) == PORTAL_AUTH_OK);
    stored_token(client, stored, sizeof stored);
    CHECK(replaced && stored[0] && strcmp(stored, replaced) != 0);
    portal_auth_string_free(replaced);
    portal_auth_session_release(first.session);
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    portal_auth_free(client);
}

enum { INVALIDATORS = 5, RACE_ROUNDS = 30 };

/* One process signs in while five others invalidate the session it replaces, round after
   round: the new session is always what stays stored. The sign-in's exchange is held by the
   emulator until the invalidations start, so that its write lands among them. */
static void sign_in_survives_other_processes_invalidating(void) {
    portal_auth *client = keyring_client();
    worker workers[INVALIDATORS];
    for (int i = 0; i < INVALIDATORS; i++) workers[i] = worker_start();
    int lost = 0;
    for (int round = 0; round < RACE_ROUNDS; round++) {
        char line[64], body[1024], email[64], url[512];
        clear_requests();
        snprintf(email, sizeof email, "c-keyring-old-%d@example.com", round);
        outcome old = sign_in(client, ENVIRONMENT, email);
        for (int i = 0; i < INVALIDATORS; i++) worker_send(&workers[i], "restore");
        for (int i = 0; i < INVALIDATORS; i++) {
            worker_answer(&workers[i], line, sizeof line);
            CHECK(strcmp(line, "session") == 0);
        }
        snprintf(email, sizeof email, "c-keyring-new-%d@example.com", round);
        grant_redirect(ENVIRONMENT, email, url, sizeof url);
        emulator_request("/_emulator/faults", "{\"path\":\"/magic-links/validations\",\"kind\":\"hold\"}", body, sizeof body);
        outcome signed_in = {0};
        CHECK(portal_auth_handle_redirect(client, url, on_result, &signed_in, NULL) == PORTAL_AUTH_OK);
        CHECK(requests_seen("/magic-links/validations", 2, 30) == 2);
        for (int i = 0; i < INVALIDATORS; i++) worker_send(&workers[i], "invalidate");
        emulator_request("/_emulator/release", "{}", body, sizeof body);
        wait_calls(&signed_in.calls);
        CHECK(signed_in.code == PORTAL_AUTH_OK && signed_in.session);
        for (int i = 0; i < INVALIDATORS; i++) {
            worker_answer(&workers[i], line, sizeof line);
            CHECK(strcmp(line, "ok") == 0);
        }
        char *expected = NULL, stored[512];
        CHECK(portal_auth_session_copy_token(signed_in.session, &expected, NULL) == PORTAL_AUTH_OK);
        stored_token(client, stored, sizeof stored);
        lost += !expected || strcmp(stored, expected) != 0;
        portal_auth_string_free(expected);
        portal_auth_session_release(signed_in.session);
        portal_auth_session_release(old.session);
    }
    CHECK(lost == 0);
    if (lost) fprintf(stderr, "  the new session was deleted in %d of %d rounds\n", lost, RACE_ROUNDS);
    for (int i = 0; i < INVALIDATORS; i++) worker_stop(&workers[i]);
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    portal_auth_free(client);
}

enum { VANISH_ROUNDS = 40 };

/* Another program deletes the item (secret-tool, which takes no lock of the library's) while
   worker processes restore, invalidate and sign out, round after round: an item that is gone
   is no session, or already deleted, never a storage failure. */
static void an_item_deleted_meanwhile_is_no_failure(void) {
    portal_auth *client = keyring_client();
    worker workers[3];
    for (int i = 0; i < 3; i++) workers[i] = worker_start();
    const char *const clear[] = { "secret-tool", "clear", "auth_environment_id", ENVIRONMENT, NULL };
    int failures = 0;
    for (int round = 0; round < VANISH_ROUNDS; round++) {
        char line[64], email[64];
        snprintf(email, sizeof email, "c-keyring-vanish-%d@example.com", round);
        outcome signed_in = sign_in(client, ENVIRONMENT, email);
        for (int i = 0; i < 3; i++) worker_send(&workers[i], "restore");
        for (int i = 0; i < 3; i++) worker_answer(&workers[i], line, sizeof line);
        worker_send(&workers[0], "restore");
        worker_send(&workers[1], "invalidate");
        worker_send(&workers[2], "clear");
        /* It fails when the workers removed the item first: not what is checked here. */
        (void)run(clear, NULL, NULL, 0);
        for (int i = 0; i < 3; i++) {
            worker_answer(&workers[i], line, sizeof line);
            failures += strncmp(line, "failure", 7) == 0;
            if (strncmp(line, "failure", 7) == 0) fprintf(stderr, "  round %d, worker %d: %s\n", round, i, line);
        }
        portal_auth_session_release(signed_in.session);
    }
    CHECK(failures == 0);
    for (int i = 0; i < 3; i++) worker_stop(&workers[i]);
    portal_auth_free(client);
}

static const test_case cases[] = {
    { "restore_clears_undecodable_entry", restore_clears_undecodable_entry, NULL },
    { "invalidate_clears_undecodable_entry", invalidate_clears_undecodable_entry, NULL },
    { "locked_and_stopped_keyring_reasons", locked_and_stopped_keyring_reasons, NULL },
    { "concurrent_invalidations_reach_the_keyring_once", concurrent_invalidations_reach_the_keyring_once, NULL },
    { "sign_in_survives_other_processes_invalidating", sign_in_survives_other_processes_invalidating, NULL },
    { "an_item_deleted_meanwhile_is_no_failure", an_item_deleted_meanwhile_is_no_failure, NULL },
    { "sign_in_and_restore_call_the_keyring_little", sign_in_and_restore_call_the_keyring_little, NULL },
    { "refused_delete_keeps_undecodable_entry", refused_delete_keeps_undecodable_entry,
      "a keyring whose bus refuses deletes (scripts/private-keyring.sh run --deny-item-delete)" },
};

int main(int argc, char **argv) {
    if (!getenv("PORTAL_AUTH_PRIVATE_KEYRING")) {
        fprintf(stderr, "keyring_test needs a private keyring (scripts/private-keyring.sh run)\n");
        return 2;
    }
    portal_auth_set_log_handler(on_log, NULL);
    if (argc == 2 && strcmp(argv[1], "worker") == 0) return serve_as_worker();
    self = argv[0];
    int status = RUN_EMULATOR_CASES(argc, argv, "keyring_test", cases);
    portal_auth_set_log_handler(audit_log_line, NULL);
    return status;
}
