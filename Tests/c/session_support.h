/* What the C tests of calls and their outcomes share (browser_test, cancel_test,
 * component_queue_test, curl_options_test, dispatcher_test, file_store_test, flow_test,
 * fork_test, free_test, host_storage_test, keyring_test, lazy_load_test, magic_link_test,
 * old_glibc_test, providers_test, queue_test, reasons_test, wipe_test): the outcome of a
 * call, with the callbacks that record it and the calls that wait for theirs, a sign-in at
 * the emulator, 8 threads invalidating at once, and programs run to their end (the private
 * keyring's control). */
#ifndef PORTAL_AUTH_SESSION_SUPPORT_H
#define PORTAL_AUTH_SESSION_SUPPORT_H

#include "test_support.h"

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

/* Set by a test around a starting call, to see whether a callback runs inside it. */
static _Thread_local int inside_start;

/* What a call gave the test, copied in its callback: everything the tests read of an
   error or a result, so that one type and one set of callbacks serve every call. */
typedef struct {
    int calls;                     /* how often the callback ran: must end at exactly 1 */
    portal_auth_code code;         /* the error's code, or PORTAL_AUTH_OK */
    portal_auth_reason reason;     /* the error's reason, or PORTAL_AUTH_REASON_NONE */
    pthread_t thread;              /* where the callback ran */
    int inside_start;              /* it ran inside a starting call */
    portal_auth_result_type kind;  /* the result's kind; 0 with no result */
    portal_auth_session *session;  /* a signed-in result's or a restore's, retained: the test releases it */
    int64_t expires_at;            /* a TOTP step's expiry (portal_auth_result_totp_expires_at) */
    char end_user_id[128];         /* a TOTP step's end user, or the signed-in session's */
    char message[512];             /* a copy of the error's message; "" with no error */
    char url[2048];                /* a copy of the error's URL to show the user (portal_auth_error_url), or "" */
    char user_jwt[4096];           /* a TOTP step's userJwt, for portal_auth_verify_totp */
} outcome;

/* `text` copied into `to` (cut to its size); "" for NULL. */
static inline void copy_text(char *to, size_t size, const char *text) {
    snprintf(to, size, "%s", text ? text : "");
}

/* The error (NULL for success) into `out`, then the call counted: the last thing a callback does. */
static inline void finish(outcome *out, const portal_auth_error *error) {
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    out->reason = portal_auth_error_reason(error);
    copy_text(out->message, sizeof out->message, portal_auth_error_message(error));
    copy_text(out->url, sizeof out->url, portal_auth_error_url(error));
    out->thread = pthread_self();
    out->inside_start |= inside_start;
    count_call(&out->calls);
}

/* What a result (maybe NULL) tells, into `out`: its kind; a signed-in session, retained, and
   its end user; a TOTP step's userJwt, end user and expiry. A callback then calls finish. */
static inline void keep_result(outcome *out, const portal_auth_result *result) {
    out->kind = portal_auth_result_kind(result);
    if (out->kind == PORTAL_AUTH_RESULT_AUTHENTICATED) {
        out->session = portal_auth_session_retain(portal_auth_result_session(result));
        copy_text(out->end_user_id, sizeof out->end_user_id, portal_auth_session_end_user_id(out->session));
    } else if (out->kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED) {
        copy_text(out->user_jwt, sizeof out->user_jwt, portal_auth_result_user_jwt(result));
        copy_text(out->end_user_id, sizeof out->end_user_id, portal_auth_result_end_user_id(result));
        out->expires_at = portal_auth_result_totp_expires_at(result);
    }
}

/* The thread that runs main: constructors run on it, before main. */
static pthread_t main_thread;

__attribute__((constructor)) static void note_main_thread(void) {
    main_thread = pthread_self();
}

static inline int on_main(const outcome *out) {
    return pthread_equal(out->thread, main_thread);
}

static inline void on_methods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)methods;
    finish(user_data, error);
}

/* Counts its calls in the int at user_data, and records nothing. */
static inline void count_methods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)methods;
    (void)error;
    count_call(user_data);
}

/* A browser opener that opens nothing: it counts its calls in the int at user_data. */
static inline int idle_opener(void *user_data, const char *url, portal_auth_bool ephemeral) {
    (void)url;
    (void)ephemeral;
    count_call(user_data);
    return 0;
}

static inline void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    keep_result(user_data, result);
    finish(user_data, error);
}

static inline void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    outcome *out = user_data;
    out->session = portal_auth_session_retain(session);
    finish(out, error);
}

static inline void on_done(void *user_data, const portal_auth_error *error) {
    finish(user_data, error);
}

static inline outcome restore(portal_auth *client) {
    outcome out = {0};
    CHECK(portal_auth_restore_session(client, on_session, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

static inline outcome invalidate(portal_auth_session *session) {
    outcome out = {0};
    CHECK(portal_auth_session_invalidate(session, on_done, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

static inline outcome clear_persisted(portal_auth *client) {
    outcome out = {0};
    CHECK(portal_auth_clear_persisted_session(client, on_done, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

/* What a restore gave, as a new process of a test prints it: "none", "session <end user
   id>" or "failure <reason>". Frees the client. */
static inline int print_restore_of(portal_auth *client) {
    outcome restored = restore(client);
    if (restored.code != PORTAL_AUTH_OK) printf("failure %d\n", (int)restored.reason);
    else if (!restored.session) printf("none\n");
    else printf("session %s\n", portal_auth_session_end_user_id(restored.session));
    portal_auth_session_release(restored.session);
    portal_auth_free(client);
    return 0;
}

/* The client's handling of the redirect `url`: its outcome. */
static inline outcome redirect(portal_auth *client, const char *url) {
    outcome out = {0};
    CHECK(portal_auth_handle_redirect(client, url, on_result, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

/* The code submitted for the TOTP step of `user_jwt`: its outcome. */
static inline outcome verify(portal_auth *client, const char *code, const char *user_jwt) {
    outcome out = {0};
    CHECK(portal_auth_verify_totp(client, code, user_jwt, on_result, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

/* Delivers a fresh magic-link grant of `environment` to the client: its outcome. */
static inline outcome sign_in(portal_auth *client, const char *environment, const char *email) {
    char url[512];
    grant_redirect(environment, email, url, sizeof url);
    outcome out = redirect(client, url);
    CHECK(out.code == PORTAL_AUTH_OK && out.session != NULL);
    return out;
}

enum { THREADS = 8 };

typedef struct {
    portal_auth_session *session;
    pthread_barrier_t *start;
    portal_auth_code started;
    outcome out;
} invalidation;

/* Starts its call once every thread is ready, then waits for the callback. It checks nothing
   itself: CHECK's counts are the main thread's. */
static inline void *invalidate_thread(void *argument) {
    invalidation *job = argument;
    pthread_barrier_wait(job->start);
    job->started = portal_auth_session_invalidate(job->session, on_done, &job->out, NULL);
    if (job->started == PORTAL_AUTH_OK) wait_calls(&job->out.calls);
    return NULL;
}

/* Invalidates from THREADS threads at once, round robin over the `count` sessions; returns
   how many calls called back once, with success. */
static inline int invalidate_at_once(portal_auth_session *const *sessions, int count) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    invalidation jobs[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (invalidation){ .session = sessions[i % count], .start = &start };
        if (pthread_create(&threads[i], NULL, invalidate_thread, &jobs[i]) != 0) abort();
    }
    int succeeded = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        succeeded += jobs[i].started == PORTAL_AUTH_OK && jobs[i].out.calls == 1 && jobs[i].out.code == PORTAL_AUTH_OK;
    }
    pthread_barrier_destroy(&start);
    return succeeded;
}

/* Whether the session's token is gone: copying it fails as SESSION_INVALIDATED. */
static inline int is_invalidated(const portal_auth_session *session) {
    char *token = NULL;
    portal_auth_error *error = NULL;
    portal_auth_code code = portal_auth_session_copy_token(session, &token, &error);
    portal_auth_string_free(token);
    portal_auth_error_free(error);
    return code == PORTAL_AUTH_E_SESSION_INVALIDATED;
}

/* Starts the program `argv` (argv[0] looked up in PATH) with the environment `envp`: its
   standard input a new pipe whose write end goes to *input when `input` is given, else this
   process's; its standard output a new pipe whose read end goes to *output when `output` is
   given, else this process's; its standard error /dev/null. Returns its pid; aborts when it
   cannot start. */
static inline pid_t spawn_piped(const char *const argv[], char *const envp[], int *input, int *output) {
    int in[2], out[2];
    if ((input && pipe(in) != 0) || (output && pipe(out) != 0)) abort();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (input) posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    if (output) posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    for (int i = 0; i < 2; i++) {
        if (input) posix_spawn_file_actions_addclose(&actions, in[i]);
        if (output) posix_spawn_file_actions_addclose(&actions, out[i]);
    }
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], &actions, NULL, (char *const *)argv, envp) != 0) abort();
    posix_spawn_file_actions_destroy(&actions);
    if (input) {
        close(in[0]);
        *input = in[1];
    }
    if (output) {
        close(out[1]);
        *output = out[0];
    }
    return pid;
}

/* Runs a program to its end (standard output to `output` when given, else nowhere) and
   returns its exit status; -1 when it did not exit. */
static inline int run(const char *const argv[], const char *input, char *output, size_t size) {
    int in, out;
    pid_t pid = spawn_piped(argv, environ, &in, &out);
    if (input && write(in, input, strlen(input)) < 0) abort();
    close(in);
    size_t length = 0;
    char chunk[256];
    ssize_t got;
    while ((got = read(out, chunk, sizeof chunk)) > 0) {
        size_t kept = output && length + 1 < size ? size - 1 - length : 0;
        if (kept > (size_t)got) kept = (size_t)got;
        if (kept) memcpy(output + length, chunk, kept);
        length += kept;
    }
    if (output) output[length] = 0;
    close(out);
    int status;
    while (waitpid(pid, &status, 0) < 0) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline void keyring(const char *command) {
    const char *const argv[] = { getenv("PORTAL_AUTH_PRIVATE_KEYRING"), command, NULL };
    if (run(argv, NULL, NULL, 0) != 0) abort();
}

#endif
