/* What the C tests share: checks and their count, named cases and the main that runs them,
 * one lock and condition for callbacks to report through, requests to the Portal emulator's
 * control endpoints (with libcurl), and a child process that holds the test's descriptors.
 * Each test is a program of its own, so the state below is per test. */
#ifndef PORTAL_AUTH_TEST_SUPPORT_H
#define PORTAL_AUTH_TEST_SUPPORT_H

/* POSIX 2008 (clock_gettime, setenv, mkdtemp) for a test that asked for no more. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <portal_auth.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

/* The log audit: with PORTAL_AUTH_TEST_LOG_FILE set, every line the library logs goes there as
   `c<TAB>level<TAB>message`, one write each (scripts/log-audit.py checks them for secrets).
   Installed before main; a test that installs its own handler forwards to audit_log_line and
   reinstalls audit_log_line when done. */
static int audit_log_fd = -1;

static void audit_log_line(void *user_data, portal_auth_log_level level, const char *message) {
    (void)user_data;
    if (audit_log_fd < 0 || !message) return;
    size_t size = strlen(message) + 16;
    char *line = malloc(size);
    if (!line) return;
    int length = snprintf(line, size, "c\t%d\t%s\n", (int)level, message);
    if (length > 0 && write(audit_log_fd, line, (size_t)length) < 0) { /* the audit then finds it missing */ }
    free(line);
}

__attribute__((constructor)) static void audit_log_install(void) {
    const char *path = getenv("PORTAL_AUTH_TEST_LOG_FILE");
    if (!path) return;
    audit_log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    portal_auth_set_log_handler(audit_log_line, NULL);
}

#define CHECK(condition) do { \
    if (condition) { passed++; } \
    else { failed++; fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); } \
} while (0)

/* Prints the closing line and returns the exit status. */
static inline int report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, passed, failed);
    return failed == 0 ? 0 : 1;
}

/* A named case of a test program: one behaviour, which sets up what it needs itself, so that
   it can run alone. `needs` is NULL, or says what a run of the case needs beyond the
   program's usual surroundings (a libcurl that refuses options, a library hidden): such a
   case runs only when named. */
typedef struct {
    const char *name;
    void (*run)(void);
    const char *needs;
} test_case;

static inline const test_case *find_case(const test_case *cases, size_t count, const char *name) {
    for (size_t index = 0; index < count; index++) {
        if (strcmp(cases[index].name, name) == 0) return &cases[index];
    }
    return NULL;
}

/* Runs one case; its name goes with its failures, which CHECK has told by line. */
static inline void run_case(const char *test, const test_case *chosen) {
    int failed_before = failed;
    chosen->run();
    if (failed > failed_before) fprintf(stderr, "%s %s: %d failed\n", test, chosen->name, failed - failed_before);
}

/* A test program's main after its setup: with no argument, every case that needs nothing
   more, in order; else the cases named, in the order given. Then the closing line of `test`.
   An unknown name runs nothing: it lists the cases and returns 2. */
static inline int run_cases(int argc, char **argv, const char *test, const test_case *cases, size_t count) {
    for (int arg = 1; arg < argc; arg++) {
        if (find_case(cases, count, argv[arg])) continue;
        fprintf(stderr, "%s: no case named %s; its cases:\n", test, argv[arg]);
        for (size_t index = 0; index < count; index++) {
            fprintf(stderr, "  %s%s%s\n", cases[index].name, cases[index].needs ? " (only when named) needs " : "",
                    cases[index].needs ? cases[index].needs : "");
        }
        return 2;
    }
    if (argc == 1) {
        for (size_t index = 0; index < count; index++) {
            if (!cases[index].needs) run_case(test, &cases[index]);
        }
    }
    for (int arg = 1; arg < argc; arg++) run_case(test, find_case(cases, count, argv[arg]));
    return report(test);
}

#define RUN_CASES(argc, argv, test, cases) run_cases((argc), (argv), (test), (cases), sizeof (cases) / sizeof (cases)[0])

/* The errno of a connection to 127.0.0.1:`port`; 0 when it connected (something listens). */
static inline int connect_errno(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int code = connect(fd, (struct sockaddr *)&address, sizeof address) == 0 ? 0 : errno;
    close(fd);
    return code;
}

/* A child process holding a copy of every descriptor the test has when it is made, as any
   child does between fork and exec: an application may fork while the library listens.
   end_descriptor_holder kills it with SIGKILL, so that valgrind makes no exit report in it;
   should the test die first, the child ends when its pipe's write end closes. */
typedef struct {
    pid_t pid;
    int release[2];
} descriptor_holder;

static inline descriptor_holder fork_descriptor_holder(void) {
    descriptor_holder holder = { .pid = -1, .release = { -1, -1 } };
    if (pipe(holder.release) != 0) return holder;
    holder.pid = fork();
    if (holder.pid == 0) {
        char byte;
        close(holder.release[1]);
        while (read(holder.release[0], &byte, 1) < 0 && errno == EINTR) {}
        _exit(0);
    }
    return holder;
}

/* Kills and reaps the holder: 1 when it lived until then. */
static inline int end_descriptor_holder(descriptor_holder *holder) {
    int status = 0;
    int lived = holder->pid > 0 && kill(holder->pid, SIGKILL) == 0 && waitpid(holder->pid, &status, 0) == holder->pid
                && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    close(holder->release[0]);
    close(holder->release[1]);
    return lived;
}

/* Callbacks count their calls under `lock` and signal `changed`; tests wait on it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static inline void count_call(int *calls) {
    pthread_mutex_lock(&lock);
    (*calls)++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* A count's value now, read under `lock`. */
static inline int read_count(const int *calls) {
    pthread_mutex_lock(&lock);
    int now = *calls;
    pthread_mutex_unlock(&lock);
    return now;
}

static inline void wait_count(const int *calls, int count) {
    pthread_mutex_lock(&lock);
    while (*calls < count) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static inline void wait_calls(const int *calls) {
    wait_count(calls, 1);
}

/* As wait_count, for at most `seconds` (a bound for a broken library, never a wait for
   success): 1 when the count was reached, 0 when the time ran out first. */
static inline int wait_count_within(const int *calls, int count, int seconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    pthread_mutex_lock(&lock);
    int timed_out = 0;
    while (*calls < count && !timed_out) timed_out = pthread_cond_timedwait(&changed, &lock, &deadline) != 0;
    int reached = *calls >= count;
    pthread_mutex_unlock(&lock);
    return reached;
}

/* Whether the descriptor is readable now (poll with no wait). */
static inline int readable(int fd) {
    struct pollfd watched = { .fd = fd, .events = POLLIN };
    return poll(&watched, 1, 0) == 1 && (watched.revents & POLLIN);
}

/* A blocking host's wait on the completion queue's descriptor: poll with a timeout (30 s,
   far beyond any call here). */
static inline int wait_readable(int fd) {
    struct pollfd watched = { .fd = fd, .events = POLLIN };
    return poll(&watched, 1, 30000) == 1 && (watched.revents & POLLIN);
}

/* Runs a completion queue with `run(queue)`, waiting on its descriptor `fd`, until `*count`
   reaches `target`; 0 if a wait timed out. */
static inline int run_with_until(int fd, size_t (*run)(void *), void *queue, const int *count, int target) {
    for (;;) {
        pthread_mutex_lock(&lock);
        int now = *count;
        pthread_mutex_unlock(&lock);
        if (now >= target) return 1;
        if (!wait_readable(fd)) return 0;
        run(queue);
    }
}

static inline size_t run_process_queue(void *unused) {
    (void)unused;
    return portal_auth_run_completions();
}

static inline size_t run_own_queue(void *queue) {
    return portal_auth_completion_queue_run(queue);
}

/* The process's completion queue, whose descriptor is `fd`, run until `*count` reaches `target`. */
static inline int run_until(int fd, const int *count, int target) {
    return run_with_until(fd, run_process_queue, NULL, count, target);
}

/* A component's own queue run until `*count` reaches `target`. */
static inline int run_queue_until(portal_auth_completion_queue *queue, const int *count, int target) {
    return run_with_until(portal_auth_completion_queue_fd(queue), run_own_queue, queue, count, target);
}

typedef struct { char *text; size_t size; } response_body;

static inline size_t append_body(char *data, size_t size, size_t count, void *user) {
    response_body *body = user;
    size_t extra = size * count, old = strlen(body->text);
    if (old + extra < body->size) {
        memcpy(body->text + old, data, extra);
        body->text[old + extra] = 0;
    }
    return extra;
}

/* GET (json NULL) or POST a control endpoint of the emulator in PORTAL_AUTH_TEST_API_HOST;
   the answer goes into `text`. */
static inline void emulator_request(const char *path, const char *json, char *text, size_t size) {
    char url[1024];
    snprintf(url, sizeof url, "%s%s", getenv("PORTAL_AUTH_TEST_API_HOST"), path);
    text[0] = 0;
    response_body body = { text, size };
    CURL *easy = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    if (json) curl_easy_setopt(easy, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(easy) != CURLE_OK) abort();
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
}

/* How many requests went to `path` (under /api/v3/auth) since clear_requests, once `count`
   did or after `seconds`, whichever came first. */
static inline int requests_seen(const char *path, int count, int seconds) {
    char query[256], body[1024];
    snprintf(query, sizeof query, "/_emulator/wait?path=%s&count=%d&timeout=%d", path, count, seconds);
    emulator_request(query, NULL, body, sizeof body);
    const char *seen = strstr(body, "\"count\":");
    return seen ? atoi(seen + 8) : -1;
}

/* How many requests went to `path` (under /api/v3/auth) since clear_requests. */
static inline int count_requests(const char *path) {
    return requests_seen(path, 0, 0);
}

/* Forgets the requests the emulator recorded so far (every test of a run shares it). */
static inline void clear_requests(void) {
    char url[1024];
    snprintf(url, sizeof url, "%s/_emulator/requests", getenv("PORTAL_AUTH_TEST_API_HOST"));
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append_body);
    char text[256] = "";
    response_body body = { text, sizeof text };
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(easy) != CURLE_OK) abort();
    curl_easy_cleanup(easy);
}

/* The value of the last "key":"value" in the emulator's compact JSON (its values hold no quotes). */
static inline void json_string(const char *json, const char *key, char *out, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *found = NULL;
    for (const char *at = strstr(json, pattern); at; at = strstr(at + 1, pattern)) found = at;
    out[0] = 0;
    if (!found) return;
    found += strlen(pattern);
    size_t length = strcspn(found, "\"");
    if (length >= size) length = size - 1;
    memcpy(out, found, length);
    out[length] = 0;
}

/* Options of a client of `environment` at the emulator, keeping its session in memory. */
static inline portal_auth_options emulator_options(const char *environment) {
    portal_auth_options options;
    portal_auth_options_init(&options, sizeof options);
    options.auth_environment_id = environment;
    options.redirect_url = "myapp://auth/callback";
    options.api_host = getenv("PORTAL_AUTH_TEST_API_HOST");
    options.magic_link_from_email = "hello@auth.example.com";
    options.magic_link_template_id = "tmpl";
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    return options;
}

/* A new environment `id` at the emulator allowing `redirect` (magic links and Google), with
   or without TOTP. */
static inline void emulator_environment(const char *id, const char *redirect, int totp) {
    char json[512], answer[256];
    snprintf(json, sizeof json, "{\"id\":\"%s\",\"allowedMethods\":[\"EMAIL_MAGIC_LINK\",\"GOOGLE\"],"
             "\"redirectUrls\":[\"%s\"],\"totpRequired\":%s,\"accountAbstraction\":false,\"autoCreateWallet\":false}",
             id, redirect, totp ? "true" : "false");
    emulator_request("/_emulator/environments", json, answer, sizeof answer);
}

/* A magic-link redirect URL carrying a fresh grant made at the emulator. */
static inline void grant_redirect(const char *environment, const char *email, char *url, size_t size) {
    char json[256], answer[1024], token[256];
    snprintf(json, sizeof json, "{\"environmentId\":\"%s\",\"email\":\"%s\",\"kind\":\"magic\"}", environment, email);
    emulator_request("/_emulator/grants", json, answer, sizeof answer);
    json_string(answer, "token", token, sizeof token);
    if (!token[0]) abort();
    snprintf(url, size, "myapp://auth/callback?token=%s&authMethod=EMAIL_MAGIC_LINK", token);
}

/* A loopback port nobody listens on now, for the test's own listener: the emulator hands it
   out (emulator/README.md, `GET loopback-port`). */
static inline int free_port(void) {
    char answer[64];
    int port = 0;
    emulator_request("/_emulator/loopback-port", NULL, answer, sizeof answer);
    if (sscanf(answer, "{\"port\":%d}", &port) != 1 || port <= 0) abort();
    return port;
}

/* The `key` ("link" or "emailLink") of the last email to `email`, once `count` were sent. */
static inline void mail_field(const char *email, int count, const char *key, char *out, size_t size) {
    char *escaped = curl_easy_escape(NULL, email, 0), path[256], answer[1 << 14];
    snprintf(path, sizeof path, "/_emulator/outbox?email=%s&count=%d&timeout=30", escaped, count);
    curl_free(escaped);
    emulator_request(path, NULL, answer, sizeof answer);
    json_string(answer, key, out, size);
}

/* The code the authenticator of `email` in `environment` shows now. */
static inline void totp_code(const char *environment, const char *email, char *code, size_t size) {
    char *escaped = curl_easy_escape(NULL, email, 0), path[256], answer[512];
    snprintf(path, sizeof path, "/_emulator/totp?environmentId=%s&email=%s", environment, escaped);
    curl_free(escaped);
    emulator_request(path, NULL, answer, sizeof answer);
    json_string(answer, "code", code, size);
}

/* A client of env-demo, whose new users enroll in TOTP, keeping its session in memory. */
static inline portal_auth *demo_client(void) {
    portal_auth_options options = emulator_options("env-demo");
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    return client;
}

/* run_cases for a test against the emulator in PORTAL_AUTH_TEST_API_HOST: libcurl set up
   around the cases, which start from a reset emulator. */
static inline int run_emulator_cases(int argc, char **argv, const char *test, const test_case *cases, size_t count) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) { fprintf(stderr, "%s: PORTAL_AUTH_TEST_API_HOST is not set\n", test); return 2; }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char answer[256];
    emulator_request("/_emulator/reset", "{}", answer, sizeof answer);
    int status = run_cases(argc, argv, test, cases, count);
    curl_global_cleanup();
    return status;
}

#define RUN_EMULATOR_CASES(argc, argv, test, cases) \
    run_emulator_cases((argc), (argv), (test), (cases), sizeof (cases) / sizeof (cases)[0])

#endif
