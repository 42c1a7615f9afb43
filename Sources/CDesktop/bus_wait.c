/* The bounded wait for a D-Bus answer: see bus_wait.h. */
#include "bus_wait.h"
#include "loader.h"

static gboolean on_deadline(gpointer data) {
    pa_bus_wait *wait = data;
    if (wait->ended == PA_BUS_WAIT_RUNNING) wait->ended = PA_BUS_WAIT_TIMED_OUT;
    return G_SOURCE_REMOVE;
}

static gboolean on_cancelled(GCancellable *cancellable, gpointer data) {
    (void)cancellable;
    pa_bus_wait *wait = data;
    if (wait->ended == PA_BUS_WAIT_RUNNING) wait->ended = PA_BUS_WAIT_CANCELLED;
    return G_SOURCE_REMOVE;
}

PA_HIDDEN void pa_bus_wait_open(pa_bus_wait *wait) {
    *wait = (pa_bus_wait){ g_main_context_new(), NULL, NULL, PA_BUS_WAIT_RUNNING };
    g_main_context_push_thread_default(wait->context);
}

PA_HIDDEN GSource *pa_bus_wait_attach(pa_bus_wait *wait, GSource *source, GSourceFunc callback, void *data) {
    g_source_set_callback(source, callback, data, NULL);
    g_source_attach(source, wait->context);
    return source;
}

PA_HIDDEN void pa_bus_wait_drop(GSource *source) {
    if (!source) return;
    g_source_destroy(source);
    g_source_unref(source);
}

PA_HIDDEN void pa_bus_wait_bound(pa_bus_wait *wait, int64_t timeout_ms, GCancellable *cancellable) {
    guint interval = timeout_ms > G_MAXUINT ? G_MAXUINT : (guint)timeout_ms;
    wait->deadline = pa_bus_wait_attach(wait, g_timeout_source_new(interval), on_deadline, wait);
    if (cancellable)
        wait->cancellation = pa_bus_wait_attach(wait, g_cancellable_source_new(cancellable),
                                                (GSourceFunc)(void (*)(void))on_cancelled, wait);
}

PA_HIDDEN void pa_bus_wait_until(pa_bus_wait *wait, const int *answered) {
    while (!*answered && wait->ended == PA_BUS_WAIT_RUNNING) g_main_context_iteration(wait->context, TRUE);
}

PA_HIDDEN void pa_bus_wait_close(pa_bus_wait *wait, int drain) {
    pa_bus_wait_drop(wait->deadline);
    pa_bus_wait_drop(wait->cancellation);
    wait->deadline = wait->cancellation = NULL;
    if (drain)
        while (g_main_context_iteration(wait->context, FALSE)) {}
    g_main_context_pop_thread_default(wait->context);
    g_main_context_unref(wait->context);
}
