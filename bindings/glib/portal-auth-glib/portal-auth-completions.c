/* The C library's completion queue on GLib main contexts. Every client runs its calls
 * through the process's one queue (portal_auth_set_completion_queue), whose descriptor is
 * readable while the queue has work. Each main context with a call in flight watches
 * that descriptor with a GUnixFDSource, as g_unix_fd_add() does for the default context, and
 * runs the completions there: on the context's own thread, with no thread hop. Where several
 * contexts have calls in flight, whichever runs the queue first runs them all, and each call
 * returns on its own context (portal-auth-call.c). */
#include "portal-auth-private.h"

#include <glib-unix.h>

typedef struct {
    GSource *source;
    guint calls; /* in flight from the context */
} Watch;

static GMutex watches_lock;
static GHashTable *watches; /* GMainContext * → Watch *, under watches_lock */

static gboolean
run_completions (gint fd, GIOCondition condition, gpointer unused)
{
    (void) fd;
    (void) condition;
    (void) unused;
    portal_auth_run_completions ();
    return G_SOURCE_CONTINUE;
}

gboolean
portal_auth_glib_completions_hold (GMainContext *context, GError **error)
{
    int fd = portal_auth_completion_fd ();
    if (fd < 0) {
        g_set_error_literal (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INTERNAL,
                             "The completion queue has no descriptor: the process is out of them.");
        return FALSE;
    }
    g_mutex_lock (&watches_lock);
    if (!watches)
        watches = g_hash_table_new (NULL, NULL);
    Watch *watch = g_hash_table_lookup (watches, context);
    if (!watch) {
        watch = g_new0 (Watch, 1);
        watch->source = g_unix_fd_source_new (fd, G_IO_IN);
        g_source_set_callback (watch->source, G_SOURCE_FUNC (run_completions), NULL, NULL);
        g_source_set_static_name (watch->source, "PortalAuth completion queue");
        g_source_attach (watch->source, context);
        g_hash_table_insert (watches, g_main_context_ref (context), watch);
    }
    watch->calls++;
    g_mutex_unlock (&watches_lock);
    return TRUE;
}

void
portal_auth_glib_completions_release (GMainContext *context)
{
    g_mutex_lock (&watches_lock);
    Watch *watch = g_hash_table_lookup (watches, context);
    g_assert (watch != NULL && watch->calls > 0);
    if (--watch->calls == 0) {
        g_hash_table_remove (watches, context);
        g_source_destroy (watch->source);
        g_source_unref (watch->source);
        g_free (watch);
        g_main_context_unref (context);
    }
    g_mutex_unlock (&watches_lock);
}
