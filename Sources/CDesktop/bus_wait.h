/* A bounded wait for a D-Bus answer, for the clients that wait on a signal or an async call
 * (secret_service.c, secret_portal_store.c, open_uri_portal.c). GDBus delivers a signal to
 * the context that was the thread's default when it was subscribed, and GIO an async call's
 * end to the one that was when it started: the wait makes a context of its own that default,
 * and runs it, on the caller's thread, until the caller's answer came or the bound ended it. */
#ifndef PORTAL_AUTH_BUS_WAIT_H
#define PORTAL_AUTH_BUS_WAIT_H

#include "../CSecret/shim.h"

#include <stdint.h>

/* How the bound ended a wait: the first of its deadline and its cancellable to. */
typedef enum { PA_BUS_WAIT_RUNNING = 0, PA_BUS_WAIT_TIMED_OUT, PA_BUS_WAIT_CANCELLED } pa_bus_wait_end;

typedef struct pa_bus_wait {
    GMainContext *context;
    GSource *deadline;
    GSource *cancellation;
    pa_bus_wait_end ended;
} pa_bus_wait;

/* Makes a new context the thread's default: subscribe and start what the wait is for after. */
void pa_bus_wait_open(pa_bus_wait *wait);

/* Bounds the wait from now: `timeout_ms` (at most G_MAXUINT), and `cancellable` (may be NULL). */
void pa_bus_wait_bound(pa_bus_wait *wait, int64_t timeout_ms, GCancellable *cancellable);

/* Runs the wait's context until `*answered` is set (by a callback the context runs) or the
   bound ends the wait. A callback that answers after the bound ended it should not: the
   first end stands. */
void pa_bus_wait_until(pa_bus_wait *wait, const int *answered);

/* A bound of the caller's own, `callback(data)` on the wait's context: pa_bus_wait_drop it. */
GSource *pa_bus_wait_attach(pa_bus_wait *wait, GSource *source, GSourceFunc callback, void *data);

/* Destroys and releases a source attached to the wait; NULL is none. */
void pa_bus_wait_drop(GSource *source);

/* Ends the bound; with `drain`, runs what is already queued on the context (unsubscribe
   first: a callback must not run once its data is gone); and gives the thread its default
   context back. Without `drain`, a call still pending stays on the context, which is never
   run again. */
void pa_bus_wait_close(pa_bus_wait *wait, int drain);

#endif
