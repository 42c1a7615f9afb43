/* C test of the file store (PORTAL_AUTH_STORAGE_FILE) with no session bus at all, against
 * the Portal emulator in PORTAL_AUTH_TEST_API_HOST:
 * - a sign-in persists (the folder made 0700, the file 0600), a new process restores it,
 *   and a sign-out removes the file;
 * - a folder that is a symlink, open to others (0777) or another user's (as root) is
 *   refused with PORTAL_AUTH_REASON_FILE_STORE_UNSAFE, and a redirect then spends no grant;
 *   so is a folder under a parent another user could rename or replace: one open to others
 *   and not sticky, one of nobody's (as root), a symlink of nobody's in a sticky folder, a
 *   symlink to a folder under an open one; a sticky parent (like /tmp) with the user's
 *   folder in it, and a symlink of the user's to a trusted folder, are taken, and so is a
 *   folder under /tmp from a user namespace that maps only the user (root's folders then
 *   read as the overflow uid's);
 * - two processes invalidating one token at once remove the file once;
 * - a temporary file a crash left beside the entry is never read, and the next write
 *   replaces it;
 * - a sign-in killed at the rename (strace's fault injection) leaves its session in the
 *   temporary file; the next restore, sign-out or invalidation removes it.
 * Named cases (test_support.h's run_cases). With the arguments "restore FOLDER" it is the new
 * process: it prints what a restore gave; with "invalidate FOLDER", it restores, waits for a
 * line on stdin, invalidates, and prints how many times it removed the file; with "sign-in
 * FOLDER", it signs in. */
/* setresuid, setgroups, unshare. */
#define _GNU_SOURCE
#include "session_support.h"

#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *const ENVIRONMENT = "env-open";
static const char *const APPLICATION = "io.portalhq.auth.FileStoreTest";
static const char *const FILE_NAME = "io.portalhq.auth.FileStoreTest@env-open.json";

static portal_auth *client_in(const char *folder) {
    portal_auth_options options = emulator_options(ENVIRONMENT);
    options.storage = PORTAL_AUTH_STORAGE_FILE;
    options.application_id = APPLICATION;
    options.file_storage_path = folder;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}


static int mode_of(const char *path) {
    struct stat info;
    return lstat(path, &info) == 0 ? (int)(info.st_mode & 07777) : -1;
}


/* The removals this process made, as the library logs them. */
static int removals;

static void count_removals(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    if (strncmp(message, "File store: the session file", 28) == 0) {
        pthread_mutex_lock(&lock);
        removals++;
        pthread_mutex_unlock(&lock);
    }
}

static int print_invalidate(const char *folder) {
    portal_auth_set_log_level(PORTAL_AUTH_LOG_DEBUG);
    portal_auth_set_log_handler(count_removals, NULL);
    portal_auth *client = client_in(folder);
    outcome restored = restore(client);
    printf("ready\n");
    fflush(stdout);
    char go[8];
    if (!restored.session || !fgets(go, sizeof go, stdin)) return 1;
    CHECK(invalidate(restored.session).code == PORTAL_AUTH_OK);
    pthread_mutex_lock(&lock);
    printf("removed %d\n", removals);
    pthread_mutex_unlock(&lock);
    portal_auth_set_log_handler(audit_log_line, NULL);
    portal_auth_session_release(restored.session);
    portal_auth_free(client);
    return 0;
}

static void restore_in_new_process(const char *self, const char *folder, char *seen, size_t size) {
    const char *const argv[] = { "timeout", "60", self, "restore", folder, NULL };
    CHECK(run(argv, NULL, seen, size) == 0);
}

/* Two processes holding sessions of one token invalidate at once: one removes the file. */
static void two_invalidate_at_once(const char *self, const char *folder) {
    FILE *pipes[2][2];
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        int in[2], out[2];
        if (pipe(in) != 0 || pipe(out) != 0) abort();
        pids[i] = fork();
        if (pids[i] == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[0]), close(in[1]), close(out[0]), close(out[1]);
            execlp("timeout", "timeout", "60", self, "invalidate", folder, (char *)NULL);
            _exit(127);
        }
        close(in[0]), close(out[1]);
        pipes[i][0] = fdopen(out[0], "r");
        pipes[i][1] = fdopen(in[1], "w");
    }
    char line[64];
    for (int i = 0; i < 2; i++) CHECK(fgets(line, sizeof line, pipes[i][0]) && strcmp(line, "ready\n") == 0);
    for (int i = 0; i < 2; i++) fputs("go\n", pipes[i][1]), fflush(pipes[i][1]);
    int total = 0;
    for (int i = 0; i < 2; i++) {
        int count = -1;
        CHECK(fgets(line, sizeof line, pipes[i][0]) && sscanf(line, "removed %d", &count) == 1);
        total += count;
        fclose(pipes[i][0]), fclose(pipes[i][1]);
        int status;
        waitpid(pids[i], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(total == 1);
}

static void refused(const char *folder, const char *what) {
    portal_auth *client = client_in(folder);
    outcome restored = restore(client);
    CHECK(restored.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && restored.reason == PORTAL_AUTH_REASON_FILE_STORE_UNSAFE);
    char url[512];
    grant_redirect(ENVIRONMENT, "c-file-refused@example.com", url, sizeof url);
    clear_requests();
    outcome out = redirect(client, url);
    CHECK(out.code == PORTAL_AUTH_E_SESSION_STORAGE_FAILURE && out.reason == PORTAL_AUTH_REASON_FILE_STORE_UNSAFE);
    CHECK(count_requests("/magic-links/validations") == 0);
    if (out.reason != PORTAL_AUTH_REASON_FILE_STORE_UNSAFE) fprintf(stderr, "  %s: not refused\n", what);
    portal_auth_free(client);
}

/* This program, which the cases run again as a new process. */
static const char *self;

/* Whether the file at `path` holds `text`. */
static int holds(const char *path, const char *text) {
    char content[4096] = {0};
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    size_t length = fread(content, 1, sizeof content - 1, file);
    fclose(file);
    content[length] = 0;
    return strstr(content, text) != NULL;
}

/* A case's own folder: `base`, made now, with `folder` to be made in it by the library. */
typedef struct { char base[64], folder[256], file[512]; } place;

static place new_place(void) {
    place at;
    snprintf(at.base, sizeof at.base, "/tmp/portal-auth-file-store-XXXXXX");
    if (!mkdtemp(at.base)) abort();
    snprintf(at.folder, sizeof at.folder, "%s/state/portal-auth", at.base);
    snprintf(at.file, sizeof at.file, "%s/%s", at.folder, FILE_NAME);
    return at;
}

static void remove_place(const place *at) {
    char cleanup[512];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", at->base);
    if (system(cleanup) != 0) abort();
}

/* A new process restores `signed_in`'s session from the folder. */
static void restored_in_new_process(const place *at, const outcome *signed_in) {
    char seen[256], expected[256];
    snprintf(expected, sizeof expected, "session %s\n", portal_auth_session_end_user_id(signed_in->session));
    restore_in_new_process(self, at->folder, seen, sizeof seen);
    CHECK(strcmp(seen, expected) == 0);
}

/* Persisted: the folder made 0700, the file 0600; a new process restores it. */
static void sign_in_persists_privately(void) {
    place at = new_place();
    portal_auth *client = client_in(at.folder);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-file-1@example.com");
    CHECK(mode_of(at.folder) == 0700 && mode_of(at.file) == 0600);
    restored_in_new_process(&at, &signed_in);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
    remove_place(&at);
}

/* A crash's temporary file is never read; the next write replaces it. */
static void crash_leftover_never_read_then_replaced(void) {
    place at = new_place();
    portal_auth *client = client_in(at.folder);
    outcome first = sign_in(client, ENVIRONMENT, "c-file-1@example.com");
    char temporary[512];
    snprintf(temporary, sizeof temporary, "%s/.%s.tmp", at.folder, FILE_NAME);
    FILE *partial = fopen(temporary, "w");
    if (!partial) abort();
    fputs("{\"clientSessionTok", partial);
    fclose(partial);
    restored_in_new_process(&at, &first);
    outcome second = sign_in(client, ENVIRONMENT, "c-file-2@example.com");
    CHECK(mode_of(temporary) == -1);
    restored_in_new_process(&at, &second);
    portal_auth_session_release(first.session);
    portal_auth_session_release(second.session);
    portal_auth_free(client);
    remove_place(&at);
}

/* A sign-in in a new process, killed by strace's fault injection at the rename that would put
   its session in place (glibc's rename and renameat are the renameat syscall on x86_64; all
   three are named): its temporary file is left, holding the session the server issued. The
   temporary file's path goes to `temporary`. */
static void killed_at_rename(const place *at, char *temporary, size_t size) {
    const char *const argv[] = { "timeout", "60", "strace", "-f", "-o", "/dev/null",
                                 "-e", "inject=rename,renameat,renameat2:signal=SIGKILL",
                                 self, "sign-in", at->folder, NULL };
    CHECK(run(argv, NULL, NULL, 0) != 0);
    snprintf(temporary, size, "%s/.%s.tmp", at->folder, FILE_NAME);
    CHECK(holds(temporary, "clientSessionToken"));
}

/* Killed at the rename, then restored by a new process: no session, and the token is gone. */
static void killed_write_removed_by_restore(void) {
    place at = new_place();
    char temporary[512], seen[256];
    killed_at_rename(&at, temporary, sizeof temporary);
    restore_in_new_process(self, at.folder, seen, sizeof seen);
    CHECK(strcmp(seen, "none\n") == 0);
    CHECK(mode_of(temporary) == -1);
    remove_place(&at);
}

/* Killed at the rename, then signed out: the token is gone. */
static void killed_write_removed_by_sign_out(void) {
    place at = new_place();
    char temporary[512];
    killed_at_rename(&at, temporary, sizeof temporary);
    portal_auth *client = client_in(at.folder);
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    CHECK(mode_of(temporary) == -1);
    portal_auth_free(client);
    remove_place(&at);
}

/* Signed in, then another sign-in killed at the rename, then the first session invalidated:
   both tokens are gone. */
static void killed_write_removed_by_invalidation(void) {
    place at = new_place();
    char temporary[512];
    portal_auth *client = client_in(at.folder);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-file-4@example.com");
    killed_at_rename(&at, temporary, sizeof temporary);
    CHECK(invalidate(signed_in.session).code == PORTAL_AUTH_OK);
    CHECK(mode_of(at.file) == -1 && mode_of(temporary) == -1);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
    remove_place(&at);
}

/* Two processes invalidate at once: one removal; then there is no session. */
static void two_processes_invalidating_remove_once(void) {
    place at = new_place();
    portal_auth *client = client_in(at.folder);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-file-2@example.com");
    two_invalidate_at_once(self, at.folder);
    CHECK(mode_of(at.file) == -1);
    char seen[256];
    restore_in_new_process(self, at.folder, seen, sizeof seen);
    CHECK(strcmp(seen, "none\n") == 0);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
    remove_place(&at);
}

/* Signed in, then out: the file goes. */
static void sign_out_removes_the_file(void) {
    place at = new_place();
    portal_auth *client = client_in(at.folder);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-file-3@example.com");
    CHECK(mode_of(at.file) == 0600);
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    CHECK(mode_of(at.file) == -1);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
    remove_place(&at);
}

/* Hostile folders are refused, and spend nothing: a symlink, one open to others, and (as
   root) another user's. */
static void hostile_folders_refused(void) {
    place at = new_place();
    char link[256], open_folder[256], foreign[256];
    /* The link's target is a folder the store would take. */
    snprintf(link, sizeof link, "%s/safe", at.base);
    if (mkdir(link, 0700) != 0) abort();
    snprintf(link, sizeof link, "%s/link", at.base);
    if (symlink("safe", link) != 0) abort();
    refused(link, "a symlink");
    snprintf(open_folder, sizeof open_folder, "%s/open", at.base);
    if (mkdir(open_folder, 0700) != 0 || chmod(open_folder, 0777) != 0) abort();
    refused(open_folder, "a folder of mode 0777");
    if (geteuid() == 0) {
        snprintf(foreign, sizeof foreign, "%s/foreign", at.base);
        if (mkdir(foreign, 0700) != 0 || chown(foreign, 65534, 65534) != 0) abort();
        refused(foreign, "another user's folder");
    }
    remove_place(&at);
}

/* A folder the store takes: a sign-in persists there, and a new process restores it. */
static void taken(const char *path, const char *what) {
    place at = {0};
    snprintf(at.folder, sizeof at.folder, "%s", path);
    snprintf(at.file, sizeof at.file, "%s/%s", path, FILE_NAME);
    portal_auth *client = client_in(at.folder);
    outcome signed_in = sign_in(client, ENVIRONMENT, "c-file-5@example.com");
    CHECK(mode_of(at.file) == 0600);
    if (mode_of(at.file) != 0600) fprintf(stderr, "  %s: not taken\n", what);
    restored_in_new_process(&at, &signed_in);
    portal_auth_session_release(signed_in.session);
    portal_auth_free(client);
}

/* `base`/`name`, made a folder of mode `mode` owned by `owner`: its path in `path`. */
static void make_folder(char *path, size_t size, const char *base, const char *name, mode_t mode, uid_t owner) {
    snprintf(path, size, "%s/%s", base, name);
    if (mkdir(path, 0700) != 0 || chown(path, owner, owner) != 0 || chmod(path, mode) != 0) abort();
}

/* Folders under a parent another user could rename or replace are refused, and spend
   nothing; so is a symlink among the parents that another user could swap, or whose target
   is under such a parent. (As root: root's folders are trusted, nobody's are not.) */
static void untrusted_parents_refused(void) {
    place at = new_place();
    char open_parent[256], sticky[256], theirs[256], safe[256], link[512], folder[768];
    make_folder(open_parent, sizeof open_parent, at.base, "open", 0777, geteuid());
    snprintf(folder, sizeof folder, "%s/store", open_parent);
    refused(folder, "under a parent open to others, not sticky");
    /* A symlink of the user's, in a trusted folder, to that open parent. */
    snprintf(link, sizeof link, "%s/to-open", at.base);
    if (symlink("open", link) != 0) abort();
    snprintf(folder, sizeof folder, "%s/store", link);
    refused(folder, "through a symlink to a parent open to others");
    if (geteuid() == 0) {
        make_folder(theirs, sizeof theirs, at.base, "theirs", 0755, 65534);
        snprintf(folder, sizeof folder, "%s/store", theirs);
        refused(folder, "under a parent of nobody's");
        /* nobody's symlink in a sticky folder (a swapped-in one) to a folder holding a store. */
        make_folder(sticky, sizeof sticky, at.base, "sticky", 01777, geteuid());
        make_folder(safe, sizeof safe, at.base, "safe", 0700, geteuid());
        snprintf(link, sizeof link, "%s/swapped", sticky);
        if (symlink(safe, link) != 0 || lchown(link, 65534, 65534) != 0) abort();
        snprintf(folder, sizeof folder, "%s/store", link);
        refused(folder, "through nobody's symlink in a sticky folder");
        /* nobody's folder in a sticky one. */
        make_folder(theirs, sizeof theirs, sticky, "theirs", 0755, 65534);
        snprintf(folder, sizeof folder, "%s/store", theirs);
        refused(folder, "under nobody's folder in a sticky one");
    }
    remove_place(&at);
}

/* A sticky parent (like /tmp) with the user's folder in it is taken, and so is a path
   through a symlink of the user's, in a trusted folder, to a trusted folder. */
static void trusted_parents_taken(void) {
    place at = new_place();
    char sticky[256], target[256], link[256], folder[512];
    make_folder(sticky, sizeof sticky, at.base, "sticky", 01777, geteuid());
    snprintf(folder, sizeof folder, "%s/store", sticky);
    taken(folder, "the user's folder in a sticky one");
    make_folder(target, sizeof target, at.base, "target", 0755, geteuid());
    snprintf(link, sizeof link, "%s/link", at.base);
    if (symlink("target", link) != 0) abort();
    snprintf(folder, sizeof folder, "%s/store", link);
    taken(folder, "through a symlink to a trusted folder");
    remove_place(&at);
}

/* Writes `text` to the /proc file at `path`; 0 on failure. */
static int write_proc(const char *path, const char *text) {
    FILE *file = fopen(path, "w");
    if (!file) return 0;
    int written = fputs(text, file) >= 0;
    return fclose(file) == 0 && written;
}

/* Inside a user namespace that maps only the user (as a Flatpak app's), root's folders read as
   the overflow uid's: a folder under /tmp is still taken. A forked child becomes uid 4242 in
   such a namespace and signs in there. (As root only: it takes another uid.) */
static void parents_in_a_user_namespace_taken(void) {
    if (geteuid() != 0) return;
    enum { USER = 4242 };
    place at = new_place();
    if (chown(at.base, USER, USER) != 0) abort();
    pid_t child = fork();
    if (child == 0) {
        /* Dumpable again after the change of user: the namespace's maps are written in /proc/self. */
        if (setgroups(0, NULL) != 0 || setresgid(USER, USER, USER) != 0 || setresuid(USER, USER, USER) != 0 ||
            prctl(PR_SET_DUMPABLE, 1) != 0 || unshare(CLONE_NEWUSER) != 0 ||
            !write_proc("/proc/self/setgroups", "deny") || !write_proc("/proc/self/uid_map", "4242 4242 1") ||
            !write_proc("/proc/self/gid_map", "4242 4242 1"))
            _exit(2);
        portal_auth *client = client_in(at.folder);
        outcome signed_in = sign_in(client, ENVIRONMENT, "c-file-namespace@example.com");
        _exit(signed_in.code == PORTAL_AUTH_OK ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    /* The session persisted is the proof; the child's status is not judged: under valgrind its
       exit's leak check counts the parent's threads, whose objects fork copies and not them. */
    CHECK(mode_of(at.file) == 0600);
    if (mode_of(at.file) != 0600) fprintf(stderr, "  the child ended with wait status %d\n", status);
    remove_place(&at);
}

static const test_case cases[] = {
    { "sign_in_persists_privately", sign_in_persists_privately, NULL },
    { "crash_leftover_never_read_then_replaced", crash_leftover_never_read_then_replaced, NULL },
    { "two_processes_invalidating_remove_once", two_processes_invalidating_remove_once, NULL },
    { "sign_out_removes_the_file", sign_out_removes_the_file, NULL },
    { "hostile_folders_refused", hostile_folders_refused, NULL },
    { "untrusted_parents_refused", untrusted_parents_refused, NULL },
    { "trusted_parents_taken", trusted_parents_taken, NULL },
    { "parents_in_a_user_namespace_taken", parents_in_a_user_namespace_taken, NULL },
    { "killed_write_removed_by_restore", killed_write_removed_by_restore, NULL },
    { "killed_write_removed_by_sign_out", killed_write_removed_by_sign_out, NULL },
    { "killed_write_removed_by_invalidation", killed_write_removed_by_invalidation, NULL },
};

int main(int argc, char **argv) {
    /* No session bus: the file store needs none. */
    unsetenv("DBUS_SESSION_BUS_ADDRESS");
    portal_auth_set_log_handler(audit_log_line, NULL);
    if (argc == 3 && strcmp(argv[1], "restore") == 0) return print_restore_of(client_in(argv[2]));
    if (argc == 3 && strcmp(argv[1], "invalidate") == 0) return print_invalidate(argv[2]);
    if (argc == 3 && strcmp(argv[1], "sign-in") == 0) {
        portal_auth *client = client_in(argv[2]);
        portal_auth_session_release(sign_in(client, ENVIRONMENT, "c-file-killed@example.com").session);
        portal_auth_free(client);
        return 0;
    }
    self = argv[0];
    return RUN_EMULATOR_CASES(argc, argv, "file_store_test", cases);
}
