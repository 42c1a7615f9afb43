/* What the C contenders share: a monotonic clock, resident memory, the process's thread
 * count, percentiles, and the result lines (`contender<TAB>metric<TAB>value`) that
 * bench/report.py reads. */
#ifndef PORTAL_AUTH_BENCH_H
#define PORTAL_AUTH_BENCH_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Resident set size in MB. */
static inline double rss_mb(void) {
    long pages = 0, resident = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (!statm || fscanf(statm, "%ld %ld", &pages, &resident) != 2) abort();
    fclose(statm);
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static inline int thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) abort();
    int count = 0;
    for (struct dirent *entry; (entry = readdir(tasks));) count += entry->d_name[0] != '.';
    closedir(tasks);
    return count;
}

/* The names of the process's threads, to stderr: which ones a contender made. */
static inline void print_thread_names(const char *contender) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) abort();
    fprintf(stderr, "%s threads:", contender);
    for (struct dirent *entry; (entry = readdir(tasks));) {
        if (entry->d_name[0] == '.') continue;
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *comm = fopen(path, "r");
        if (comm && fgets(name, sizeof name, comm)) name[strcspn(name, "\n")] = 0;
        if (comm) fclose(comm);
        fprintf(stderr, " [%s]", name);
    }
    fprintf(stderr, "\n");
    closedir(tasks);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile (0 < p <= 1) of n samples, sorted in place. */
static inline double quantile(double *samples, int n, double p) {
    qsort(samples, (size_t)n, sizeof *samples, compare_doubles);
    int index = (int)ceil(p * n) - 1;
    return samples[index < 0 ? 0 : index];
}

static inline void emit(const char *contender, const char *metric, double value) {
    printf("%s\t%s\t%.4f\n", contender, metric, value);
    fflush(stdout);
}

/* <metric>_median_ms and <metric>_p99_ms of n samples. */
static inline void emit_latency(const char *contender, const char *metric, double *samples, int n) {
    char name[64];
    snprintf(name, sizeof name, "%s_median_ms", metric);
    emit(contender, name, quantile(samples, n, 0.5));
    snprintf(name, sizeof name, "%s_p99_ms", metric);
    emit(contender, name, quantile(samples, n, 0.99));
}

#ifdef PORTAL_AUTH_H
/* The benchmark's client options, on options the library's portal_auth_options_init filled. */
static inline void bench_options(portal_auth_options *options, portal_auth_storage_kind storage) {
    options->auth_environment_id = "env-bench";
    options->redirect_url = "myapp://auth/callback";
    options->api_host = getenv("BENCH_BASE");
    options->storage = storage;
}
#endif

enum { CALLS = 2000, WARMUP = 200, CHUNK = 100, CONCURRENT = 1000, KEYRING_CALLS = 100, HOSTILE_RUNS = 20 };

#endif
