/* Contender 1: libportalauth from C. One mode per run (a fresh process each time):
 *   calls     get_methods, a grant exchange (handle_redirect) and a call that sends nothing,
 *             one at a time
 *   concurrent 1,000 get_methods started at once on one client: wall time, threads made
 *   keyring   a grant exchange persisted to the keyring, and restore_session
 *   hostile   a 200,000-character redirect URL, userJwt and otpauth link
 *   soak      100,000 calls, get_methods and grant exchanges in turn: resident memory after
 *             the first 10,000 (the warm-up) and at the end
 *   repeat    `repeat [queue] methods|grant N`: N calls and nothing printed, for run.sh's
 *             count of instructions per call
 * With a second argument `queue`, the client completes through the completion queue, which
 * this thread runs as it waits (contender c-queue); else on the library thread (c-library).
 * The calls mode measures both models, in turn, in one process (the argument is ignored).
 * BENCH_BASE is the loopback server. The load figure is bench/load.c's.
 *
 * Built with -DBENCH_IN_PROCESS as a shared library (no main), it is contender
 * c-queue-in-python: bench_queue_chunk makes the same calls through the completion queue
 * from C inside python_bench.py's process, in the chunks that interleave with the binding's,
 * so that the binding's overhead over C is taken in one process under one machine load. */
#include <portal_auth.h>

#include "bench.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>

static const char *contender = "c-library";
static int queued; /* the completion model: 1 for the completion queue */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int completed, failures;

static void done(const portal_auth_error *error) {
    pthread_mutex_lock(&lock);
    completed++;
    failures += error != NULL;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_methods(void *data, const portal_auth_methods *methods, const portal_auth_error *error) {
    (void)data; (void)methods;
    done(error);
}

static void on_result(void *data, const portal_auth_result *result, const portal_auth_error *error) {
    (void)data;
    done(error ? error : (result ? NULL : (const portal_auth_error *)1));
}

static void on_hostile(void *data, const portal_auth_result *result, const portal_auth_error *error) {
    (void)data; (void)result; (void)error;
    done(NULL); /* an error is the expected outcome here */
}

static void on_session(void *data, portal_auth_session *session, const portal_auth_error *error) {
    (void)data;
    done(error ? error : (session ? NULL : (const portal_auth_error *)1)); /* lent: not released */
}

/* Until `count` calls have completed: on the condition the library thread signals, or
   running the completion queue whenever its descriptor is readable. */
static void wait_completed(int count) {
    if (queued) {
        struct pollfd watched = { .fd = portal_auth_completion_fd(), .events = POLLIN };
        while (completed < count) {
            int ready = poll(&watched, 1, -1);
            if (ready < 0 && errno == EINTR) continue; /* a signal, in the Python process */
            if (ready != 1) abort();
            portal_auth_run_completions();
        }
        return;
    }
    pthread_mutex_lock(&lock);
    while (completed < count) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static portal_auth *client(portal_auth_storage_kind storage) {
    portal_auth_options options;
    portal_auth_options_init(&options, sizeof options);
    bench_options(&options, storage);
    portal_auth *made = NULL;
    if (portal_auth_new(&options, &made, NULL) != PORTAL_AUTH_OK) abort();
    if (queued && portal_auth_set_completion_queue(made, PORTAL_AUTH_TRUE) != PORTAL_AUTH_OK) abort();
    return made;
}

static char redirect[256];
static const char *next_redirect(void) {
    static unsigned long grant;
    snprintf(redirect, sizeof redirect, "myapp://auth/callback?token=mlg_bench%08lu&authMethod=EMAIL_MAGIC_LINK", ++grant);
    return redirect;
}

/* One call, from its start to its completion, in ms. */
static double timed_call(int (*call)(portal_auth *), portal_auth *c) {
    int before = completed;
    double start = now_ms();
    if (call(c) != PORTAL_AUTH_OK) abort();
    wait_completed(before + 1);
    return now_ms() - start;
}

/* Runs `call` n times one after another (after a warm-up); the median and p99 in ms. */
static void sequential(const char *metric, int n, int warmup, int (*call)(portal_auth *), portal_auth *c) {
    double *samples = malloc(sizeof(double) * (size_t)n);
    for (int i = -warmup; i < n; i++) {
        double taken = timed_call(call, c);
        if (i >= 0) samples[i] = taken;
    }
    emit_latency(contender, metric, samples, n);
    free(samples);
}

/* Both completion models in one process, CALLS calls each after WARMUP, in chunks of CHUNK
   calls, the models in turn (each chunk led by the other): the machine's load drifts within
   seconds, and both models must see the same drift. The median and p99 of each, in ms. */
static void both_models(const char *metric, int (*call)(portal_auth *), portal_auth *clients[2]) {
    static const char *names[2] = { "c-library", "c-queue" };
    double *samples[2] = { malloc(sizeof(double) * CALLS), malloc(sizeof(double) * CALLS) };
    int taken[2] = { 0, 0 };
    for (int round = 0; round < (WARMUP + CALLS) / CHUNK; round++) {
        for (int turn = 0; turn < 2; turn++) {
            int model = (round + turn) % 2;
            queued = model;
            for (int i = 0; i < CHUNK; i++) {
                double ms = timed_call(call, clients[model]);
                if (round * CHUNK >= WARMUP) samples[model][taken[model]++] = ms;
            }
        }
    }
    for (int model = 0; model < 2; model++) {
        emit_latency(names[model], metric, samples[model], taken[model]);
        free(samples[model]);
    }
}

static int get_methods(portal_auth *c) { return portal_auth_get_methods(c, on_methods, NULL, NULL); }
static int exchange(portal_auth *c) { return portal_auth_handle_redirect(c, next_redirect(), on_result, NULL, NULL); }
static int restore(portal_auth *c) { return portal_auth_restore_session(c, on_session, NULL, NULL); }
/* A URL that is not a sign-in redirect: nothing is sent, so this is the asynchronous
   contract's own cost (to the I/O thread and back, never inside the starting call). */
static int no_request(portal_auth *c) { return portal_auth_handle_redirect(c, "other://x", on_hostile, NULL, NULL); }

static void hostile(void) {
    portal_auth *c = client(PORTAL_AUTH_STORAGE_MEMORY);
    enum { SIZE = 200000 };
    char *url = malloc(SIZE + 1), *jwt = malloc(SIZE + 1), *link = malloc(SIZE + 1);
    /* The configured redirect with a query of '&' and '=' to 200,000 characters. */
    int prefix = snprintf(url, SIZE + 1, "myapp://auth/callback?token=x&");
    for (int i = prefix; i < SIZE; i++) url[i] = i % 2 ? '=' : '&';
    url[SIZE] = 0;
    /* Three segments whose claims are 200,000 characters of base64url. */
    memset(jwt, 'A', SIZE);
    jwt[0] = 'e'; jwt[1] = '.'; jwt[SIZE - 2] = '.'; jwt[SIZE - 1] = 's';
    jwt[SIZE] = 0;
    /* An otpauth link of repeated secret= parameters. */
    prefix = snprintf(link, SIZE + 1, "otpauth://totp/Portal:a?");
    for (int i = prefix; i < SIZE; i++) link[i] = "secret=A&"[(i - prefix) % 9];
    link[SIZE] = 0;
    /* The first call of a process starts the I/O thread: not the parse. */
    int warmed = completed + 1;
    if (no_request(c) != PORTAL_AUTH_OK) abort();
    wait_completed(warmed);
    double samples[3][HOSTILE_RUNS];
    for (int i = 0; i < HOSTILE_RUNS; i++) {
        int before = completed;
        double start = now_ms();
        if (portal_auth_handle_redirect(c, url, on_hostile, NULL, NULL) != PORTAL_AUTH_OK) abort();
        wait_completed(before + 1);
        samples[0][i] = now_ms() - start;
        start = now_ms();
        if (portal_auth_verify_totp(c, "123456", jwt, on_hostile, NULL, NULL) != PORTAL_AUTH_OK) abort();
        wait_completed(before + 2);
        samples[1][i] = now_ms() - start;
        start = now_ms();
        char *secret = NULL;
        if (portal_auth_totp_secret(link, &secret, NULL) != PORTAL_AUTH_OK) failures++;
        samples[2][i] = now_ms() - start;
        portal_auth_string_free(secret);
    }
    emit(contender, "hostile_redirect_max_ms", quantile(samples[0], HOSTILE_RUNS, 1));
    emit(contender, "hostile_jwt_max_ms", quantile(samples[1], HOSTILE_RUNS, 1));
    emit(contender, "hostile_otpauth_max_ms", quantile(samples[2], HOSTILE_RUNS, 1));
    portal_auth_free(c);
    free(url); free(jwt); free(link);
}

/* 100,000 calls one after another, get_methods and grant exchanges in turn. */
static void soak(void) {
    enum { SOAK = 100000, SOAK_WARMUP = 10000 };
    portal_auth *c = client(PORTAL_AUTH_STORAGE_MEMORY);
    double start = now_ms();
    for (int i = 0; i < SOAK; i++) {
        if (i == SOAK_WARMUP) emit(contender, "soak_rss_warm_mb", rss_mb());
        int before = completed;
        if ((i % 2 ? exchange(c) : get_methods(c)) != PORTAL_AUTH_OK) abort();
        wait_completed(before + 1);
    }
    emit(contender, "soak_rss_end_mb", rss_mb());
    emit(contender, "soak_call_ms", (now_ms() - start) / SOAK);
    portal_auth_free(c);
}

#ifdef BENCH_IN_PROCESS
/* `n` calls of one kind (0 get_methods, 1 a grant exchange, 2 a call that sends nothing), one
   after another, on a client of its own through the completion queue: each one's time in ms
   into samples_ms. 0, or -1 once a call failed. */
__attribute__((visibility("default"))) int bench_queue_chunk(int kind, int n, double *samples_ms) {
    static int (*const calls[3])(portal_auth *) = { get_methods, exchange, no_request };
    static portal_auth *queue_client;
    if (kind < 0 || kind > 2) return -1;
    queued = 1;
    if (!queue_client) queue_client = client(PORTAL_AUTH_STORAGE_MEMORY);
    for (int i = 0; i < n; i++) samples_ms[i] = timed_call(calls[kind], queue_client);
    return failures ? -1 : 0;
}
#else
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (argc > 2 && strcmp(argv[2], "queue") == 0) {
        queued = 1;
        contender = "c-queue";
    }
    if (strcmp(mode, "calls") == 0) {
        queued = 0;
        portal_auth *thread_model = client(PORTAL_AUTH_STORAGE_MEMORY);
        queued = 1;
        portal_auth *clients[2] = { thread_model, client(PORTAL_AUTH_STORAGE_MEMORY) };
        both_models("methods", get_methods, clients);
        both_models("grant", exchange, clients);
        both_models("no_request", no_request, clients);
        for (int model = 0; model < 2; model++) portal_auth_free(clients[model]);
    } else if (strcmp(mode, "concurrent") == 0) {
        int before_threads = thread_count();
        portal_auth *c = client(PORTAL_AUTH_STORAGE_MEMORY);
        double start = now_ms();
        for (int i = 0; i < CONCURRENT; i++) {
            if (get_methods(c) != PORTAL_AUTH_OK) abort();
        }
        wait_completed(CONCURRENT);
        emit(contender, "concurrent_wall_ms", now_ms() - start);
        emit(contender, "concurrent_threads", thread_count() - before_threads);
        print_thread_names(contender);
        portal_auth_free(c);
    } else if (strcmp(mode, "keyring") == 0) {
        portal_auth *c = client(PORTAL_AUTH_STORAGE_KEYRING);
        sequential("persist", KEYRING_CALLS, 5, exchange, c);
        sequential("restore", KEYRING_CALLS, 5, restore, c);
        portal_auth_free(c);
    } else if (strcmp(mode, "hostile") == 0) {
        hostile();
    } else if (strcmp(mode, "soak") == 0) {
        soak();
    } else if (strcmp(mode, "repeat") == 0 && argc > 3 + queued
               && (strcmp(argv[2 + queued], "methods") == 0 || strcmp(argv[2 + queued], "grant") == 0)) {
        int (*call)(portal_auth *) = strcmp(argv[2 + queued], "grant") == 0 ? exchange : get_methods;
        portal_auth *c = client(PORTAL_AUTH_STORAGE_MEMORY);
        for (int i = atoi(argv[3 + queued]); i > 0; i--) timed_call(call, c);
        portal_auth_free(c);
    } else {
        fprintf(stderr, "usage: %s calls|concurrent|keyring|hostile|soak [queue]\n"
                        "       %s repeat [queue] methods|grant N\n", argv[0], argv[0]);
        return 2;
    }
    if (failures) { fprintf(stderr, "%s: %d calls failed\n", mode, failures); return 1; }
    return 0;
}
#endif
