/* PortalAuthSession: a session handle of the C library as a GObject, one object per handle. */
#include "portal-auth-private.h"

/**
 * PortalAuthSession:
 *
 * A signed-in user. The client persisted the session before handing it out; a later launch
 * restores it with portal_auth_client_restore_session_async(). Sessions of one environment
 * and one token share their state in the process: invalidating one invalidates them all.
 */
struct _PortalAuthSession {
    GObject parent_instance;
    portal_auth_session *native; /* retained */
    GWeakRef lender;             /* the PortalAuthClient that handed it out last */
};

G_DEFINE_FINAL_TYPE (PortalAuthSession, portal_auth_session, G_TYPE_OBJECT)

enum { PROP_END_USER_ID = 1, N_PROPERTIES };
static GParamSpec *properties[N_PROPERTIES];

/* The live GObject of each C session handle: portal_auth_session * → Entry. A weak reference,
   which reads NULL once the object's last reference is going, so that a wrap on another
   thread never revives an object being finalized. */
typedef struct {
    GWeakRef object;
    PortalAuthSession *made; /* the object the entry was made for, to compare with */
} Entry;

static GMutex sessions_lock;
static GHashTable *sessions;

static void
free_entry (gpointer data)
{
    Entry *entry = data;
    g_weak_ref_clear (&entry->object);
    g_free (entry);
}

static void
portal_auth_session_finalize (GObject *object)
{
    PortalAuthSession *self = PORTAL_AUTH_SESSION (object);
    g_mutex_lock (&sessions_lock);
    /* A wrap that found this object going has made a new one for its handle: keep that. */
    Entry *entry = g_hash_table_lookup (sessions, self->native);
    if (entry && entry->made == self)
        g_hash_table_remove (sessions, self->native);
    g_mutex_unlock (&sessions_lock);
    g_weak_ref_clear (&self->lender);
    portal_auth_session_release (self->native);
    G_OBJECT_CLASS (portal_auth_session_parent_class)->finalize (object);
}

static void
portal_auth_session_get_property (GObject *object, guint id, GValue *value, GParamSpec *spec)
{
    switch (id) {
    case PROP_END_USER_ID:
        g_value_set_string (value, portal_auth_session_get_end_user_id (PORTAL_AUTH_SESSION (object)));
        break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, spec);
    }
}

static void
portal_auth_session_class_init (PortalAuthSessionClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS (klass);
    object_class->finalize = portal_auth_session_finalize;
    object_class->get_property = portal_auth_session_get_property;
    /**
     * PortalAuthSession:end-user-id:
     *
     * The user's id: never secret, what to log and key per-user state on.
     */
    properties[PROP_END_USER_ID] =
        g_param_spec_string ("end-user-id", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties (object_class, N_PROPERTIES, properties);
}

static void
portal_auth_session_init (PortalAuthSession *self)
{
    g_weak_ref_init (&self->lender, NULL);
}

PortalAuthSession *
portal_auth_glib_session_wrap (portal_auth_session *session)
{
    g_mutex_lock (&sessions_lock);
    if (!sessions)
        sessions = g_hash_table_new_full (NULL, NULL, NULL, free_entry);
    Entry *entry = g_hash_table_lookup (sessions, session);
    PortalAuthSession *self = entry ? g_weak_ref_get (&entry->object) : NULL;
    if (!self) {
        self = g_object_new (PORTAL_AUTH_TYPE_SESSION, NULL);
        self->native = portal_auth_session_retain (session);
        if (!entry) {
            entry = g_new0 (Entry, 1);
            g_weak_ref_init (&entry->object, NULL);
            g_hash_table_insert (sessions, session, entry);
        }
        g_weak_ref_set (&entry->object, self);
        entry->made = self;
    }
    g_mutex_unlock (&sessions_lock);
    return self;
}

void
portal_auth_glib_session_set_lender (PortalAuthSession *session, PortalAuthClient *client)
{
    g_weak_ref_set (&session->lender, client);
}

/**
 * portal_auth_session_get_end_user_id:
 * @self: the session
 *
 * The user's id: never secret, what to log and key per-user state on.
 *
 * Returns: (transfer none): the id, owned by @self
 */
const char *
portal_auth_session_get_end_user_id (PortalAuthSession *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_SESSION (self), NULL);
    return portal_auth_session_end_user_id (self->native);
}

/**
 * portal_auth_session_get_token:
 * @self: the session
 * @error: where a failure is reported
 *
 * The Client Session Token, the secret that authenticates the user to Portal: never log it.
 * Clear it before freeing it when you can.
 *
 * Returns: (transfer full): the token; %NULL with %PORTAL_AUTH_ERROR_SESSION_INVALIDATED once
 *   the session, or another of its token, was invalidated
 */
char *
portal_auth_session_get_token (PortalAuthSession *self, GError **error)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_SESSION (self), NULL);
    char *token = NULL;
    portal_auth_error *failure = NULL;
    if (portal_auth_session_copy_token (self->native, &token, &failure) != PORTAL_AUTH_OK) {
        portal_auth_glib_propagate (error, failure);
        return NULL;
    }
    char *copy = g_strdup (token);
    portal_auth_string_free (token); /* which clears it */
    return copy;
}

/* On the session's context, before the task returns: the client that handed it out hears of it. */
static void
invalidated (PortalAuthCall *call)
{
    if (call->error)
        return;
    PortalAuthSession *self = g_task_get_source_object (call->task);
    PortalAuthClient *lender = g_weak_ref_get (&self->lender);
    if (lender) {
        portal_auth_glib_client_session_invalidated (lender, self);
        g_object_unref (lender);
    }
}

/**
 * portal_auth_session_invalidate_async:
 * @self: the session
 * @cancellable: (nullable): cancels the call before it reaches the keyring
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Invalidates the session: the token is forgotten at once, in every session of its
 * environment and token in the process, then the persisted copy is deleted if it is still
 * this token's (a newer sign-in's is spared). The client that handed it out emits
 * #PortalAuthClient::session-changed when this was its session. Call
 * portal_auth_session_invalidate_finish() from @callback.
 */
void
portal_auth_session_invalidate_async (PortalAuthSession *self, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_SESSION (self));
    GTask *task = g_task_new (self, cancellable, callback, user_data);
    g_task_set_source_tag (task, portal_auth_session_invalidate_async);
    PortalAuthCall *call = portal_auth_glib_call_new (task, PORTAL_AUTH_CALL_RETURNS_BOOLEAN);
    if (!call)
        return;
    call->returning = invalidated;
    portal_auth_glib_call_started (
        call, portal_auth_session_invalidate (self->native, portal_auth_glib_call_on_done, call, &call->handle),
        "session");
}

/**
 * portal_auth_session_invalidate_finish:
 * @self: the session
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * The outcome of portal_auth_session_invalidate_async(). A storage failure leaves the
 * session invalidated, and invalidating it again retries the delete.
 *
 * Returns: %TRUE once invalidated and deleted; %FALSE with @error set
 */
gboolean
portal_auth_session_invalidate_finish (PortalAuthSession *self, GAsyncResult *result, GError **error)
{
    g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
    g_return_val_if_fail (g_async_result_is_tagged (result, portal_auth_session_invalidate_async), FALSE);
    return g_task_propagate_boolean (G_TASK (result), error);
}
