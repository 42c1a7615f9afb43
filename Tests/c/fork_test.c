/* C test of fork() (docs/desktop.md "fork()"), against the Portal emulator in
 * PORTAL_AUTH_TEST_API_HOST, inside a private keyring (scripts/private-keyring.sh run): the
 * parent forks with a call in flight (held by the emulator) and a call's work or completion
 * queued, and has used the keyring first (case child_starts_anew_after_keyring_use) or not
 * (case child_starts_anew). The child starts with a library of its own: the completion
 * queue's descriptor keeps its number but has nothing pending, the parent's completion never
 * runs there, the parent's client and session act as NULL there (their frees free nothing),
 * and new clients make calls of their own, through the queue and on the I/O thread, the
 * keyring's included, each bounded. The parent is untouched: once the child has ended, its
 * queued completion runs, its held call completes, and the keyring answers it. The keyring
 * helper a child starts never dumps core: its core limit is 0, and its memory cannot be
 * opened without CAP_SYS_PTRACE (case keyring_helper_never_dumps_core). */
#define _GNU_SOURCE
#include "session_support.h"

#include <dirent.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <valgrind/valgrind.h>

/* Ends the child with `status`. Under valgrind, by exec, after the errors it found so far have
   counted (3): its leak check at exit would read as lost whatever only the parent's other
   threads referenced (valgrind does not scan their stacks in a child, where they do not
   exist), which the child never touches, nor frees. */
static void end_child(int status) {
    if (RUNNING_ON_VALGRIND) {
        char command[32];
        snprintf(command, sizeof command, "exit %d", VALGRIND_COUNT_ERRORS ? 3 : status);
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
    }
    _exit(status);
}

static void on_url(void *user_data, const char *url, const portal_auth_error *error) {
    (void)url;
    finish(user_data, error);
}

static portal_auth *keyring_client(const char *environment) {
    portal_auth_options options = emulator_options(environment);
    options.storage = PORTAL_AUTH_STORAGE_KEYRING;
    options.application_id = "io.portalhq.auth.ForkTest";
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

static portal_auth *queued_client(void) {
    portal_auth_options options = emulator_options("env-open");
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    CHECK(portal_auth_set_completion_queue(client, PORTAL_AUTH_TRUE) == PORTAL_AUTH_OK);
    return client;
}

/* The child's checks; its exit status is 0 when all held. */
static int in_child(int fd, portal_auth *parents, portal_auth_session *parents_session, const outcome *queued) {
    passed = failed = 0;
    /* Its own queue on the same number: nothing pending, and the parent's completion is not
       run here. */
    CHECK(portal_auth_completion_fd() == fd);
    CHECK(!readable(fd));
    CHECK(portal_auth_run_completions() == 0 && queued->calls == 0);

    /* The parent's client and session act as NULL. */
    outcome refused = {0};
    CHECK(portal_auth_get_methods(parents, on_methods, &refused, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(portal_auth_set_completion_queue(parents, PORTAL_AUTH_TRUE) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    if (parents_session) {
        CHECK(portal_auth_session_end_user_id(parents_session) == NULL);
        CHECK(portal_auth_session_invalidate(parents_session, on_done, &refused, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
        portal_auth_session_release(parents_session);
    }
    portal_auth_free(parents);

    /* Calls of its own: through the queue, and on the I/O thread. */
    portal_auth *queued_here = queued_client();
    outcome first = {0};
    CHECK(portal_auth_get_methods(queued_here, on_methods, &first, NULL) == PORTAL_AUTH_OK);
    CHECK(run_until(fd, &first.calls, 1) && first.code == PORTAL_AUTH_OK);
    CHECK(!readable(fd) && queued->calls == 0);
    portal_auth_free(queued_here);

    portal_auth *direct = keyring_client("env-open");
    outcome second = {0}, restored = {0};
    CHECK(portal_auth_get_methods(direct, on_methods, &second, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_count_within(&second.calls, 1, 30) && second.code == PORTAL_AUTH_OK);
    /* The keyring: it answers the child, whatever the parent did with it. */
    CHECK(portal_auth_restore_session(direct, on_session, &restored, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_count_within(&restored.calls, 1, 30) && restored.code == PORTAL_AUTH_OK);
    portal_auth_session_release(restored.session);
    portal_auth_free(direct);
    printf("fork_test (child): %d passed, %d failed\n", passed, failed);
    fflush(stdout);
    return failed == 0 ? 0 : 1;
}

/* The parent forks and checks the child's outcome and its own. */
static void fork_with_calls_in_flight(int keyring_first) {
    char body[1024];
    clear_requests();
    int fd = portal_auth_completion_fd();
    CHECK(fd >= 0);

    /* The parent: with `keyring_first`, signed in and its session restored from the keyring
       (GLib's D-Bus is then running in it); a call queued and not yet run; a call on the
       wire, held by the emulator. */
    portal_auth *keyring = keyring_client("env-open");
    portal_auth_session *session = NULL;
    if (keyring_first) {
        outcome signed_in = sign_in(keyring, "env-open", "c-fork@example.com");
        portal_auth_session_release(signed_in.session);
        outcome restored = restore(keyring);
        CHECK(restored.code == PORTAL_AUTH_OK && restored.session);
        session = restored.session;
    }
    portal_auth *client = queued_client();
    outcome queued = {0}, held = {0};
    CHECK(portal_auth_handle_redirect(client, "https://elsewhere.example/callback?token=x", on_result, &queued, NULL)
          == PORTAL_AUTH_OK);
    CHECK(readable(fd));
    portal_auth *direct = keyring_client("env-open");
    emulator_request("/_emulator/faults", "{\"path\":\"/oauth/urls\",\"kind\":\"hold\"}", body, sizeof body);
    CHECK(portal_auth_login_with_google(direct, on_url, &held, NULL) == PORTAL_AUTH_OK);
    CHECK(requests_seen("/oauth/urls", 1, 30) == 1);
    CHECK(readable(fd));  /* the queued call's work, or its completion (the I/O thread may have done the work) */

    pid_t child = fork();
    if (child == 0) end_child(in_child(fd, client, session, &queued));
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* The parent, untouched: its queued call and its held call complete here, once each. */
    CHECK(run_until(fd, &queued.calls, 1) && queued.code == PORTAL_AUTH_OK);
    emulator_request("/_emulator/release", "{}", body, sizeof body);
    CHECK(wait_count_within(&held.calls, 1, 30) && held.code == PORTAL_AUTH_OK);
    outcome restored = {0};
    CHECK(portal_auth_restore_session(keyring, on_session, &restored, NULL) == PORTAL_AUTH_OK);
    CHECK(wait_count_within(&restored.calls, 1, 30) && restored.code == PORTAL_AUTH_OK);
    pthread_mutex_lock(&lock);
    CHECK(queued.calls == 1 && held.calls == 1);
    pthread_mutex_unlock(&lock);
    portal_auth_session_release(restored.session);
    portal_auth_session_release(session);
    portal_auth_free(client);
    portal_auth_free(direct);
    portal_auth_free(keyring);
}

static void child_starts_anew(void) {
    fork_with_calls_in_flight(0);
}

/* GLib's D-Bus running in the parent as it forks. */
static void child_starts_anew_after_keyring_use(void) {
    fork_with_calls_in_flight(1);
}

/* This process's child that runs the library as its keyring helper; 0 when none. */
static pid_t keyring_helper(void) {
    DIR *processes = opendir("/proc");
    if (!processes) abort();
    pid_t found = 0;
    struct dirent *entry;
    while (!found && (entry = readdir(processes))) {
        char path[300], text[4096] = "";
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        FILE *stat = fopen(path, "r");
        if (!stat) continue;
        int parent = 0;
        /* pid (comm) state ppid: the name may hold spaces, so read after its last ')'. */
        size_t length = fread(text, 1, sizeof text - 1, stat);
        fclose(stat);
        text[length] = 0;
        const char *after = strrchr(text, ')');
        if (!after || sscanf(after, ") %*c %d", &parent) != 1 || parent != getpid()) continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", entry->d_name);
        FILE *cmdline = fopen(path, "r");
        if (!cmdline) continue;
        length = fread(text, 1, sizeof text - 1, cmdline);
        fclose(cmdline);
        for (size_t i = 0; i < length; i++) if (text[i] == 0) text[i] = ' ';
        text[length] = 0;
        if (strstr(text, "--portal-auth-keyring-helper")) found = (pid_t)atoi(entry->d_name);
    }
    closedir(processes);
    return found;
}

/* Whether `pid`'s memory can be opened as this user without CAP_SYS_PTRACE: a process that
   cannot dump core cannot be. (As root, the reader must hold every capability the process
   holds: the child drops CAP_SYS_PTRACE from its bounding set before the processes it
   starts.) */
static int memory_open_without_ptrace_capability(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "if=/proc/%d/mem", (int)pid);
    /* Opened, not read (count=0): /proc/PID/mem is opened only by who may attach. */
    const char *const argv[] = { "setpriv", "--bounding-set=-sys_ptrace", "dd", path, "count=0", "status=none", NULL };
    return run(argv, NULL, NULL, 0) == 0;
}

/* Whether a process the child starts, as it starts the helper, can be read: `cat`, waiting
   on a pipe. */
static int started_process_memory_opens(void) {
    const char *const argv[] = { "cat", NULL };
    int in;
    pid_t pid = spawn_piped(argv, environ, &in, NULL);
    int readable = memory_open_without_ptrace_capability(pid);
    close(in);
    int status;
    while (waitpid(pid, &status, 0) < 0) {}
    return readable;
}

/* The child's checks of its keyring helper: no core file, not dumpable. */
static int helper_in_child(void) {
    passed = failed = 0;
    if (geteuid() == 0 && prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0) abort();
    portal_auth *client = keyring_client("env-open");
    outcome restored = restore(client);
    CHECK(restored.code == PORTAL_AUTH_OK);
    pid_t helper = keyring_helper();
    CHECK(helper > 0);
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/limits", (int)helper);
    FILE *limits = fopen(path, "r");
    char soft[32] = "", hard[32] = "";
    while (limits && fgets(line, sizeof line, limits))
        if (strncmp(line, "Max core file size", 18) == 0 && sscanf(line + 18, "%31s %31s", soft, hard) != 2) abort();
    if (limits) fclose(limits);
    CHECK(strcmp(soft, "0") == 0 && strcmp(hard, "0") == 0);
    /* The check can tell: another process started alike is readable. */
    CHECK(started_process_memory_opens());
    CHECK(!memory_open_without_ptrace_capability(helper));
    portal_auth_session_release(restored.session);
    portal_auth_free(client);
    printf("fork_test (child): %d passed, %d failed\n", passed, failed);
    fflush(stdout);
    return failed == 0 ? 0 : 1;
}

/* A forked child's keyring helper holds sessions: it never dumps core, and its memory cannot
   be read through /proc. */
static void keyring_helper_never_dumps_core(void) {
    portal_auth *keyring = keyring_client("env-open");
    outcome signed_in = sign_in(keyring, "env-open", "c-fork-helper@example.com");
    pid_t child = fork();
    if (child == 0) end_child(helper_in_child());
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(keyring);
}

static const test_case cases[] = {
    { "child_starts_anew", child_starts_anew, NULL },
    { "child_starts_anew_after_keyring_use", child_starts_anew_after_keyring_use, NULL },
    { "keyring_helper_never_dumps_core", keyring_helper_never_dumps_core, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "fork_test", cases);
}
