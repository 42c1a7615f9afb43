/* Contender 4, the floor: what the same work costs with no library between the caller and
 * the system libraries: one libcurl easy handle reused (a multi handle for the concurrent
 * calls) and libsecret called directly. The responses are read into memory, as the library
 * does, but not decoded. Modes and environment as bench/library.c (`repeat methods|grant N`:
 * no `queue`); the load figure is bench/load.c's. */
#include "bench.h"

#include <curl/curl.h>
#include <libsecret/secret.h>

static const char *contender = "c-floor";
static char url_methods[256], url_grant[256];

typedef struct { char data[1 << 16]; size_t size; } buffer;

static size_t keep(char *data, size_t size, size_t count, void *user) {
    buffer *into = user;
    size_t bytes = size * count;
    if (into->size + bytes < sizeof into->data) { memcpy(into->data + into->size, data, bytes); into->size += bytes; }
    return bytes;
}

static void setup(void) {
    const char *base = getenv("BENCH_BASE");
    snprintf(url_methods, sizeof url_methods, "%s/api/v3/auth/methods", base);
    snprintf(url_grant, sizeof url_grant, "%s/api/v3/auth/magic-links/validations", base);
}

static buffer response;

/* The request headers with a fresh UUID v4 trace id, as the library sends on each request.
   The caller frees the list once the transfer is over. */
static struct curl_slist *request_headers(void) {
    char trace[64];
    unsigned char b[16];
    for (int i = 0; i < 16; i++) b[i] = (unsigned char)rand();
    snprintf(trace, sizeof trace, "X-Portal-Trace-Id: %02x%02x%02x%02x-%02x%02x-4%x%02x-%x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6] & 15, b[7], 8 | (b[8] & 3), b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    struct curl_slist *list = curl_slist_append(NULL, "x-portal-auth-environment-id: env-bench");
    list = curl_slist_append(list, "Accept: application/json");
    list = curl_slist_append(list, "Content-Type: application/json");
    return curl_slist_append(list, trace);
}

static struct curl_slist *prepare(CURL *easy, int grant) {
    static unsigned long token;
    static char body[128];
    struct curl_slist *list = request_headers();
    curl_easy_setopt(easy, CURLOPT_URL, grant ? url_grant : url_methods);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    if (grant) {
        snprintf(body, sizeof body, "{\"token\":\"mlg_bench%08lu\"}", ++token);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
    } else {
        curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    }
    return list;
}

static void perform(CURL *easy, int grant) {
    response.size = 0;
    struct curl_slist *list = prepare(easy, grant);
    long status = 0;
    if (curl_easy_perform(easy) != CURLE_OK) abort();
    curl_slist_free_all(list);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200 || response.size == 0) abort();
}

static const SecretSchema schema = {
    "io.portal.auth.bench.Floor", SECRET_SCHEMA_NONE,
    { { "environment", SECRET_SCHEMA_ATTRIBUTE_STRING }, { NULL, 0 } }, 0, 0, 0, 0, 0, 0, 0, 0
};

static void sequential(const char *metric, int n, int warmup, void (*call)(CURL *), CURL *easy) {
    double *samples = malloc(sizeof(double) * (size_t)n);
    for (int i = -warmup; i < n; i++) {
        double start = now_ms();
        call(easy);
        if (i >= 0) samples[i] = now_ms() - start;
    }
    emit_latency(contender, metric, samples, n);
    free(samples);
}

static void get_methods(CURL *easy) { perform(easy, 0); }
static void exchange(CURL *easy) { perform(easy, 1); }

static void persist(CURL *easy) {
    perform(easy, 1);
    GError *error = NULL;
    if (!secret_password_store_sync(&schema, SECRET_COLLECTION_DEFAULT, "portal-auth bench floor",
                                    "{\"clientSessionToken\":\"cst_bench\",\"endUserId\":\"eu_bench\"}", NULL, &error,
                                    "environment", "env-bench", NULL)) abort();
}

static void restore(CURL *easy) {
    (void)easy;
    GError *error = NULL;
    gchar *stored = secret_password_lookup_sync(&schema, NULL, &error, "environment", "env-bench", NULL);
    if (!stored) abort();
    secret_password_free(stored);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    curl_global_init(CURL_GLOBAL_DEFAULT);
    setup();
    CURL *easy = curl_easy_init();
    if (strcmp(mode, "calls") == 0) {
        sequential("methods", CALLS, WARMUP, get_methods, easy);
        sequential("grant", CALLS, WARMUP, exchange, easy);
    } else if (strcmp(mode, "concurrent") == 0) {
        int before_threads = thread_count();
        CURLM *multi = curl_multi_init();
        curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 16L);
        static CURL *handles[CONCURRENT];
        static buffer bodies[CONCURRENT];
        double start = now_ms();
        for (int i = 0; i < CONCURRENT; i++) {
            handles[i] = curl_easy_init();
            prepare(handles[i], 0); /* its header list lives until exit */
            curl_easy_setopt(handles[i], CURLOPT_WRITEDATA, &bodies[i]);
            curl_multi_add_handle(multi, handles[i]);
        }
        int running = 1;
        while (running) {
            curl_multi_perform(multi, &running);
            if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
        }
        emit(contender, "concurrent_wall_ms", now_ms() - start);
        emit(contender, "concurrent_threads", thread_count() - before_threads);
    } else if (strcmp(mode, "keyring") == 0) {
        sequential("persist", KEYRING_CALLS, 5, persist, easy);
        sequential("restore", KEYRING_CALLS, 5, restore, easy);
    } else if (strcmp(mode, "repeat") == 0 && argc > 3
               && (strcmp(argv[2], "methods") == 0 || strcmp(argv[2], "grant") == 0)) {
        /* N calls and nothing printed, for run.sh's count of instructions per call. */
        for (int i = atoi(argv[3]); i > 0; i--) perform(easy, strcmp(argv[2], "grant") == 0);
    } else {
        fprintf(stderr, "usage: %s calls|concurrent|keyring\n       %s repeat methods|grant N\n", argv[0], argv[0]);
        return 2;
    }
    return 0;
}
