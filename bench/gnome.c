/* The driver of the GNOME contenders (bench/gnome.h): on one GMainLoop, get_methods, the grant
 * exchange with its persist, and the restore, each started from the completion of the one
 * before, as an app chains them; the median and p99 of each, and the resident memory once
 * they are done. BENCH_BASE is the loopback server (read by the contenders).
 * With the argument "keyring-calls": after a warm-up, KEYRING_COUNTED exchanges, then as many
 * restores, each run closed by a Ping of the Secret Service's own, so that bench/run.sh can
 * count, with dbus-monitor, the Secret Service calls of each. */
#include "bench.h"
#include "gnome.h"

enum { KEYRING_COUNTED = 10 };

typedef struct {
    void (*operation)(gnome_done_fn done, gpointer data);
    int n, next; /* samples wanted; the next call's index, from -warmup */
    double started;
    double *samples;
    int failures;
    GMainLoop *loop;
} series;

static void start(series *s);

static void finished(gboolean ok, gpointer data) {
    series *s = data;
    double elapsed = now_ms() - s->started;
    s->failures += !ok;
    if (s->next >= 0) s->samples[s->next] = elapsed;
    if (++s->next < s->n) start(s);
    else g_main_loop_quit(s->loop);
}

static void start(series *s) {
    s->started = now_ms();
    s->operation(finished, s);
}

/* Runs `operation` n times one after another (after a warm-up) on the loop; emits its median
   and p99 as <metric>_median_ms and <metric>_p99_ms. Returns the failures. */
static int measure(GMainLoop *loop, const char *metric, void (*operation)(gnome_done_fn, gpointer), int n, int warmup) {
    series s = { operation, n, -warmup, 0, g_new(double, n), 0, loop };
    start(&s);
    g_main_loop_run(loop);
    emit_latency(contender.name, metric, s.samples, n);
    g_free(s.samples);
    return s.failures;
}

const char *gnome_next_grant(void) {
    static char token[32];
    static unsigned long grant;
    snprintf(token, sizeof token, "mlg_bench%08lu", ++grant);
    return token;
}

struct gnome_pending {
    gnome_done_fn done;
    gpointer data;
};

gnome_pending *gnome_pend(gnome_done_fn done, gpointer data) {
    gnome_pending *pending = g_new(gnome_pending, 1);
    *pending = (gnome_pending){ done, data };
    return pending;
}

void gnome_end(gnome_pending *pending, gboolean ok) {
    gnome_pending ending = *pending;
    g_free(pending);
    ending.done(ok, ending.data);
}

/* Runs `operation` n times one after another, its figures dropped. */
static int run_only(GMainLoop *loop, void (*operation)(gnome_done_fn, gpointer), int n) {
    series s = { operation, n, 0, 0, g_new(double, n), 0, loop };
    start(&s);
    g_main_loop_run(loop);
    g_free(s.samples);
    return s.failures;
}

/* The mark between two counted runs: a call the counter sees, and knows for its own (made by
   dbus-send: the contenders link no D-Bus library of their own but the peer). */
static int mark(void) {
    return system("dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets "
                  "org.freedesktop.DBus.Peer.Ping > /dev/null") != 0;
}

static int keyring_calls(GMainLoop *loop) {
    int failures = run_only(loop, contender.exchange, 5) + run_only(loop, contender.restore, 5);
    failures += mark();
    failures += run_only(loop, contender.exchange, KEYRING_COUNTED);
    failures += mark();
    failures += run_only(loop, contender.restore, KEYRING_COUNTED);
    return failures + mark();
}

int main(int argc, char **argv) {
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    contender.setup();
    int failures = 0;
    if (argc > 1 && strcmp(argv[1], "keyring-calls") == 0) {
        failures = keyring_calls(loop);
    } else {
        failures = measure(loop, "methods", contender.get_methods, CALLS, WARMUP);
        failures += measure(loop, "persist", contender.exchange, KEYRING_CALLS, 5);
        failures += measure(loop, "restore", contender.restore, KEYRING_CALLS, 5);
        emit(contender.name, "rss_end_mb", rss_mb());
    }
    g_main_loop_unref(loop);
    if (failures) {
        fprintf(stderr, "%s: %d calls failed\n", contender.name, failures);
        return 1;
    }
    return 0;
}
