/* A call of the C library in flight for a GTask. The C callback runs wherever the completion
 * queue is run (portal-auth-completions.c), copies what the library lends it into GLib values,
 * and the task returns them on its own context: at once when that is the context running the
 * queue, else from an idle source attached to it. Cancelling the task's GCancellable cancels
 * the C call, which the library honours only before its request is sent (docs/protocol.md §5):
 * after that the call finishes, its session is persisted, and GTask reports
 * G_IO_ERROR_CANCELLED for it, as it does for any task whose cancellable was cancelled. */
#include "portal-auth-private.h"

PortalAuthCall *
portal_auth_glib_call_new (GTask *task, PortalAuthCallReturns returns)
{
    GError *error = NULL;
    if (!portal_auth_glib_completions_hold (g_task_get_context (task), &error)) {
        g_task_return_error (task, error);
        g_object_unref (task);
        return NULL;
    }
    PortalAuthCall *call = g_new0 (PortalAuthCall, 1);
    call->task = task;
    call->returns = returns;
    return call;
}

static void
free_call (PortalAuthCall *call)
{
    portal_auth_glib_completions_release (g_task_get_context (call->task));
    g_object_unref (call->task);
    g_free (call);
}

static void
cancel (GCancellable *cancellable, PortalAuthCall *call)
{
    (void) cancellable;
    portal_auth_call_cancel (call->handle);
}

/* On the task's context: the task returns the outcome, and the call is freed. */
static gboolean
return_outcome (gpointer data)
{
    PortalAuthCall *call = data;
    GCancellable *cancellable = g_task_get_cancellable (call->task);
    if (cancellable)
        g_cancellable_disconnect (cancellable, call->cancelled_id);
    g_clear_pointer (&call->handle, portal_auth_call_free);
    if (call->returning)
        call->returning (call);
    if (call->error)
        g_task_return_error (call->task, g_steal_pointer (&call->error));
    else if (call->returns == PORTAL_AUTH_CALL_RETURNS_BOOLEAN)
        g_task_return_boolean (call->task, TRUE);
    else
        g_task_return_pointer (call->task, g_steal_pointer (&call->value), call->value_free);
    free_call (call);
    return G_SOURCE_REMOVE;
}

/* Runs `function` from an idle source of the task's context, after what is queued there. */
static void
in_idle (PortalAuthCall *call, GSourceFunc function, gpointer data, const char *name)
{
    GSource *idle = g_idle_source_new ();
    g_source_set_callback (idle, function, data, NULL);
    g_source_set_static_name (idle, name);
    g_source_attach (idle, g_task_get_context (call->task));
    g_source_unref (idle);
}

/* Runs `function` on the task's context: at once when this thread owns it, else from an idle
   source (so that what one call delivers keeps its order). */
static void
on_task_context (PortalAuthCall *call, GSourceFunc function, gpointer data, const char *name)
{
    if (g_main_context_is_owner (g_task_get_context (call->task))) {
        function (data);
        return;
    }
    in_idle (call, function, data, name);
}

void
portal_auth_glib_call_started (PortalAuthCall *call, portal_auth_code started, const char *argument)
{
    if (started != PORTAL_AUTH_OK) {
        g_task_return_error (call->task, portal_auth_glib_error_new_invalid_argument (argument));
        free_call (call);
        return;
    }
    GCancellable *cancellable = g_task_get_cancellable (call->task);
    if (cancellable)
        call->cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (cancel), call, NULL);
    /* The callback came first and left the call for this thread to return: from an idle, after
       the forwarded redirects it may have queued there already. */
    if (!g_atomic_int_compare_and_exchange (&call->gate, PORTAL_AUTH_CALL_STARTING, PORTAL_AUTH_CALL_STARTED))
        in_idle (call, return_outcome, call, "PortalAuth call returning");
}

/* From the C callback, on the thread running the completion queue: keeps the outcome (the
   error is borrowed, `value` taken) and has the task return it on its context. */
static void
complete (PortalAuthCall *call, const portal_auth_error *error, gpointer value, GDestroyNotify value_free)
{
    call->error = error ? portal_auth_glib_error_new (error) : NULL;
    call->value = value;
    call->value_free = value ? value_free : NULL;
    /* The starter, on another thread, is not done with the call yet: it returns it then. */
    if (g_atomic_int_compare_and_exchange (&call->gate, PORTAL_AUTH_CALL_STARTING, PORTAL_AUTH_CALL_COMPLETED_EARLY))
        return;
    on_task_context (call, return_outcome, call, "PortalAuth call returning");
}

/* One forwarded redirect's outcome, on its way to the call's context. */
typedef struct {
    PortalAuthCall *call;
    PortalAuthResult *result;
    GError *error;
} Forwarded;

static gboolean
hand_forwarded (gpointer data)
{
    Forwarded *forwarded = data;
    forwarded->call->forwarded (forwarded->call, forwarded->result, forwarded->error);
    g_clear_object (&forwarded->result);
    g_clear_error (&forwarded->error);
    g_free (forwarded);
    return G_SOURCE_REMOVE;
}

void
portal_auth_glib_call_on_done (void *user_data, const portal_auth_error *error)
{
    complete (user_data, error, NULL, NULL);
}

void
portal_auth_glib_call_on_methods (void *user_data, const portal_auth_methods *methods, const portal_auth_error *error)
{
    complete (user_data, error, methods ? portal_auth_glib_methods_new (methods) : NULL, g_object_unref);
}

void
portal_auth_glib_call_on_url (void *user_data, const char *url, const portal_auth_error *error)
{
    complete (user_data, error, g_strdup (url), g_free);
}

void
portal_auth_glib_call_on_result (void *user_data, const portal_auth_result *result, const portal_auth_error *error)
{
    complete (user_data, error, result ? portal_auth_glib_result_new (result) : NULL, g_object_unref);
}

void
portal_auth_glib_call_on_session (void *user_data, portal_auth_session *session, const portal_auth_error *error)
{
    complete (user_data, error, session ? portal_auth_glib_session_wrap (session) : NULL, g_object_unref);
}

void
portal_auth_glib_call_on_redirect (void *user_data, const portal_auth_result *result, const portal_auth_error *error,
                                   portal_auth_bool last)
{
    PortalAuthCall *call = user_data;
    if (last == PORTAL_AUTH_TRUE) {
        complete (call, error, NULL, NULL);
        return;
    }
    Forwarded *forwarded = g_new0 (Forwarded, 1);
    forwarded->call = call;
    forwarded->result = result ? portal_auth_glib_result_new (result) : NULL;
    forwarded->error = error ? portal_auth_glib_error_new (error) : NULL;
    on_task_context (call, hand_forwarded, forwarded, "PortalAuth forwarded redirect");
}
