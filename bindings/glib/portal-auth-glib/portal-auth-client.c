/* PortalAuthClient: a client of the C library as a GObject with GIO's _async / _finish calls,
 * completed through the completion queue on the caller's thread-default main context. */
#include "portal-auth-private.h"

/**
 * PortalAuthClient:
 *
 * A client of one auth environment: Portal's Client Auth sign-in (magic links, Google and
 * Apple, TOTP) with the session persisted in the desktop keyring.
 *
 * Make one with portal_auth_client_new(), or with g_initable_new() and its construct
 * properties. Every call is asynchronous, as GIO's are: `_async` takes a #GCancellable and a
 * #GAsyncReadyCallback, which is called on the thread-default main context of the thread
 * that made the call; call the matching `_finish` from it. Calls may be made from several
 * threads' contexts; #PortalAuthClient::session-changed is emitted on the context of the
 * call that changed the session.
 *
 * Cancelling a call is honoured before its request is sent. A request already sent (a grant
 * exchange, a TOTP code) is spent on the server: it finishes in the library, its session is
 * persisted (and #PortalAuthClient::session-changed emitted), and the call reports
 * %G_IO_ERROR_CANCELLED.
 *
 * A call in flight does not keep its client alive: when the last reference to the client
 * goes, its dispose cancels what has not been sent, ends the waits (a browser sign-in's
 * listener, which releases its port at once), and frees the C client. The calls still
 * finish, each calling back once, with the client as their source object.
 */
struct _PortalAuthClient {
    GObject parent_instance;
    /* Construct properties. */
    char *auth_environment_id;
    char *redirect_url;
    char *api_host;
    char *magic_link_from_email;
    char *magic_link_template_id;
    PortalAuthTristate is_account_abstracted;
    PortalAuthStorageKind storage;
    int connect_timeout_ms;
    int request_timeout_ms;
    char *application_id;
    int keyring_prompt_timeout_ms;
    char *file_storage_path;
    char *ca_file;
    gboolean prefers_ephemeral;

    /* Set by g_initable_init: the C client, or the error that kept it from being made. */
    gboolean initialized;
    portal_auth *native;
    GError *init_error;

    /* Under `lock`, since calls may be made from several threads' contexts: */
    GMutex lock;
    PortalAuthSession *session;
    /* The calls in flight. A call's task holds a reference to its source object, the client;
       while the client is not disposed that reference is borrowed back (released when the
       call starts, taken again before it returns), so that calls in flight do not keep the
       client alive. Dispose takes each back at once. */
    GPtrArray *calls;
    gboolean disposed;
};

static void initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PortalAuthClient, portal_auth_client, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, initable_iface_init))

enum {
    PROP_AUTH_ENVIRONMENT_ID = 1,
    PROP_REDIRECT_URL,
    PROP_API_HOST,
    PROP_MAGIC_LINK_FROM_EMAIL,
    PROP_MAGIC_LINK_TEMPLATE_ID,
    PROP_IS_ACCOUNT_ABSTRACTED,
    PROP_STORAGE,
    PROP_CONNECT_TIMEOUT_MS,
    PROP_REQUEST_TIMEOUT_MS,
    PROP_APPLICATION_ID,
    PROP_KEYRING_PROMPT_TIMEOUT_MS,
    PROP_FILE_STORAGE_PATH,
    PROP_CA_FILE,
    PROP_PREFERS_EPHEMERAL_WEB_BROWSER_SESSION,
    PROP_SESSION,
    N_PROPERTIES
};
static GParamSpec *properties[N_PROPERTIES];

enum { SESSION_CHANGED, REDIRECT_FORWARDED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
portal_auth_client_dispose (GObject *object)
{
    PortalAuthClient *self = PORTAL_AUTH_CLIENT (object);
    g_mutex_lock (&self->lock);
    gboolean first = !self->disposed;
    self->disposed = TRUE;
    for (guint i = 0; first && i < self->calls->len; i++) {
        PortalAuthCall *call = g_ptr_array_index (self->calls, i);
        g_object_ref (self); /* the task's reference, taken back */
        call->owns_client_reference = TRUE;
        portal_auth_call_cancel (call->handle);
    }
    PortalAuthSession *session = g_steal_pointer (&self->session);
    g_mutex_unlock (&self->lock);
    /* Calls in flight still complete, through the completion queue. */
    if (first)
        g_clear_pointer (&self->native, portal_auth_free);
    g_clear_object (&session);
    G_OBJECT_CLASS (portal_auth_client_parent_class)->dispose (object);
}

static void
portal_auth_client_finalize (GObject *object)
{
    PortalAuthClient *self = PORTAL_AUTH_CLIENT (object);
    g_free (self->auth_environment_id);
    g_free (self->redirect_url);
    g_free (self->api_host);
    g_free (self->magic_link_from_email);
    g_free (self->magic_link_template_id);
    g_free (self->application_id);
    g_free (self->file_storage_path);
    g_free (self->ca_file);
    g_clear_error (&self->init_error);
    g_ptr_array_unref (self->calls);
    g_mutex_clear (&self->lock);
    G_OBJECT_CLASS (portal_auth_client_parent_class)->finalize (object);
}

static void
portal_auth_client_set_property (GObject *object, guint id, const GValue *value, GParamSpec *spec)
{
    PortalAuthClient *self = PORTAL_AUTH_CLIENT (object);
    switch (id) {
    case PROP_AUTH_ENVIRONMENT_ID: self->auth_environment_id = g_value_dup_string (value); break;
    case PROP_REDIRECT_URL: self->redirect_url = g_value_dup_string (value); break;
    case PROP_API_HOST: self->api_host = g_value_dup_string (value); break;
    case PROP_MAGIC_LINK_FROM_EMAIL: self->magic_link_from_email = g_value_dup_string (value); break;
    case PROP_MAGIC_LINK_TEMPLATE_ID: self->magic_link_template_id = g_value_dup_string (value); break;
    case PROP_IS_ACCOUNT_ABSTRACTED: self->is_account_abstracted = g_value_get_enum (value); break;
    case PROP_STORAGE: self->storage = g_value_get_enum (value); break;
    case PROP_CONNECT_TIMEOUT_MS: self->connect_timeout_ms = g_value_get_int (value); break;
    case PROP_REQUEST_TIMEOUT_MS: self->request_timeout_ms = g_value_get_int (value); break;
    case PROP_APPLICATION_ID: self->application_id = g_value_dup_string (value); break;
    case PROP_KEYRING_PROMPT_TIMEOUT_MS: self->keyring_prompt_timeout_ms = g_value_get_int (value); break;
    case PROP_FILE_STORAGE_PATH: self->file_storage_path = g_value_dup_string (value); break;
    case PROP_CA_FILE: self->ca_file = g_value_dup_string (value); break;
    case PROP_PREFERS_EPHEMERAL_WEB_BROWSER_SESSION:
        portal_auth_client_set_prefers_ephemeral_web_browser_session (self, g_value_get_boolean (value));
        break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, spec);
    }
}

static void
portal_auth_client_get_property (GObject *object, guint id, GValue *value, GParamSpec *spec)
{
    PortalAuthClient *self = PORTAL_AUTH_CLIENT (object);
    switch (id) {
    case PROP_AUTH_ENVIRONMENT_ID: g_value_set_string (value, self->auth_environment_id); break;
    case PROP_REDIRECT_URL: g_value_set_string (value, self->redirect_url); break;
    case PROP_API_HOST: g_value_set_string (value, self->api_host); break;
    case PROP_MAGIC_LINK_FROM_EMAIL: g_value_set_string (value, self->magic_link_from_email); break;
    case PROP_MAGIC_LINK_TEMPLATE_ID: g_value_set_string (value, self->magic_link_template_id); break;
    case PROP_IS_ACCOUNT_ABSTRACTED: g_value_set_enum (value, self->is_account_abstracted); break;
    case PROP_STORAGE: g_value_set_enum (value, self->storage); break;
    case PROP_CONNECT_TIMEOUT_MS: g_value_set_int (value, self->connect_timeout_ms); break;
    case PROP_REQUEST_TIMEOUT_MS: g_value_set_int (value, self->request_timeout_ms); break;
    case PROP_APPLICATION_ID: g_value_set_string (value, self->application_id); break;
    case PROP_KEYRING_PROMPT_TIMEOUT_MS: g_value_set_int (value, self->keyring_prompt_timeout_ms); break;
    case PROP_FILE_STORAGE_PATH: g_value_set_string (value, self->file_storage_path); break;
    case PROP_CA_FILE: g_value_set_string (value, self->ca_file); break;
    case PROP_PREFERS_EPHEMERAL_WEB_BROWSER_SESSION: g_value_set_boolean (value, self->prefers_ephemeral); break;
    case PROP_SESSION: g_value_set_object (value, portal_auth_client_get_session (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, spec);
    }
}

static GParamSpec *
construct_string (const char *name)
{
    return g_param_spec_string (name, NULL, NULL, NULL,
                                G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
}

static GParamSpec *
construct_timeout (const char *name)
{
    return g_param_spec_int (name, NULL, NULL, G_MININT, G_MAXINT, 0,
                             G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
}

static void
portal_auth_client_class_init (PortalAuthClientClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS (klass);
    object_class->dispose = portal_auth_client_dispose;
    object_class->finalize = portal_auth_client_finalize;
    object_class->set_property = portal_auth_client_set_property;
    object_class->get_property = portal_auth_client_get_property;

    /**
     * PortalAuthClient:auth-environment-id:
     *
     * The auth environment's id. Required: blank fails the client's initialization.
     */
    properties[PROP_AUTH_ENVIRONMENT_ID] = construct_string ("auth-environment-id");
    /**
     * PortalAuthClient:redirect-url:
     *
     * The redirect URL Portal sends the user back to: the app's own scheme (delivered to
     * #GApplication::open once the app handles x-scheme-handler/SCHEME), or a loopback URL
     * with an explicit port for the browser sign-ins. Required.
     */
    properties[PROP_REDIRECT_URL] = construct_string ("redirect-url");
    /**
     * PortalAuthClient:api-host:
     *
     * The API host; %NULL means "api.portalhq.io".
     */
    properties[PROP_API_HOST] = construct_string ("api-host");
    /**
     * PortalAuthClient:magic-link-from-email:
     *
     * The magic-link sender's address, with #PortalAuthClient:magic-link-template-id; both
     * %NULL: no magic links.
     */
    properties[PROP_MAGIC_LINK_FROM_EMAIL] = construct_string ("magic-link-from-email");
    /**
     * PortalAuthClient:magic-link-template-id:
     *
     * The magic-link email template, with #PortalAuthClient:magic-link-from-email.
     */
    properties[PROP_MAGIC_LINK_TEMPLATE_ID] = construct_string ("magic-link-template-id");
    /**
     * PortalAuthClient:is-account-abstracted:
     *
     * Whether the account is account-abstracted; %PORTAL_AUTH_TRISTATE_UNSET sends nothing.
     */
    properties[PROP_IS_ACCOUNT_ABSTRACTED] =
        g_param_spec_enum ("is-account-abstracted", NULL, NULL, PORTAL_AUTH_TYPE_TRISTATE, PORTAL_AUTH_TRISTATE_UNSET,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthClient:storage:
     *
     * Where the session is kept: the desktop keyring by default.
     */
    properties[PROP_STORAGE] =
        g_param_spec_enum ("storage", NULL, NULL, PORTAL_AUTH_TYPE_STORAGE_KIND, PORTAL_AUTH_STORAGE_KIND_KEYRING,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthClient:connect-timeout-ms:
     *
     * How long a connection may take to open, in milliseconds; zero or less: 10,000.
     */
    properties[PROP_CONNECT_TIMEOUT_MS] = construct_timeout ("connect-timeout-ms");
    /**
     * PortalAuthClient:request-timeout-ms:
     *
     * How long a whole request may take, in milliseconds; zero or less: 30,000.
     */
    properties[PROP_REQUEST_TIMEOUT_MS] = construct_timeout ("request-timeout-ms");
    /**
     * PortalAuthClient:application-id:
     *
     * The application's reverse-DNS name, as its desktop file's and #GApplication's
     * ("com.example.App"): the keyring item is then the application's own, never shared
     * with (or signed out by) another application of the environment. %NULL: the item every
     * program of the environment that names none shares. Anything but a reverse-DNS name
     * fails the client's initialization.
     */
    properties[PROP_APPLICATION_ID] = construct_string ("application-id");
    /**
     * PortalAuthClient:keyring-prompt-timeout-ms:
     *
     * With the keyring: how long a call waits for the user to answer the keyring's dialog
     * (an unlock, KeePassXC's access confirmation), in milliseconds; zero or less (the
     * default): no dialog is shown, and such a call fails with
     * %PORTAL_AUTH_ERROR_REASON_KEYRING_NEEDS_CONFIRMATION (or _KEYRING_LOCKED).
     */
    properties[PROP_KEYRING_PROMPT_TIMEOUT_MS] = construct_timeout ("keyring-prompt-timeout-ms");
    /**
     * PortalAuthClient:file-storage-path:
     *
     * With %PORTAL_AUTH_STORAGE_KIND_FILE: the folder of the session files, an absolute path
     * of the user's alone; %NULL: `$XDG_STATE_HOME/portal-auth`. The files are not encrypted.
     */
    properties[PROP_FILE_STORAGE_PATH] = construct_string ("file-storage-path");
    /**
     * PortalAuthClient:ca-file:
     *
     * A PEM file of the certificate authorities to trust in place of the system's (a
     * company's own CA); a path that is not a readable file fails the client's
     * initialization with %PORTAL_AUTH_ERROR_INVALID_ARGUMENT ("ca_file"). %NULL:
     * `$CURL_CA_BUNDLE`, else `$SSL_CERT_FILE` and `$SSL_CERT_DIR`, else the system's
     * (docs/network.md).
     */
    properties[PROP_CA_FILE] = construct_string ("ca-file");
    /**
     * PortalAuthClient:prefers-ephemeral-web-browser-session:
     *
     * Whether the browser sign-ins ask the browser for a private window.
     */
    properties[PROP_PREFERS_EPHEMERAL_WEB_BROWSER_SESSION] =
        g_param_spec_boolean ("prefers-ephemeral-web-browser-session", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthClient:session:
     *
     * The session this client last signed in, restored or handed out; %NULL before any, and
     * once it signed out or the session was invalidated.
     */
    properties[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, PORTAL_AUTH_TYPE_SESSION,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties (object_class, N_PROPERTIES, properties);

    /**
     * PortalAuthClient::session-changed:
     * @self: the client
     * @session: (nullable): the new session; %NULL once signed out
     *
     * Emitted on the client's context when a sign-in of this client succeeds (even one whose
     * call was cancelled after its request was sent), when a restore finds a session (or
     * finds none where the client had one), when this client clears the persisted session,
     * and when a session it handed out is invalidated. #PortalAuthClient:session holds the
     * same session.
     */
    signals[SESSION_CHANGED] = g_signal_new ("session-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                             NULL, NULL, NULL, G_TYPE_NONE, 1, PORTAL_AUTH_TYPE_SESSION);
    /**
     * PortalAuthClient::redirect-forwarded:
     * @self: the client
     * @result: (nullable): signed in, or a TOTP step; %NULL on failure, and for a URL that
     *   is not a sign-in redirect of this client
     * @error: (nullable): the failure, as portal_auth_client_handle_redirect_finish() reports it
     *
     * Emitted on the context of portal_auth_client_listen_for_redirects_async() for each
     * redirect another instance of the application forwarded, once it is handled, in the
     * order they came. A sign-in emits #PortalAuthClient::session-changed first.
     */
    signals[REDIRECT_FORWARDED] = g_signal_new ("redirect-forwarded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                0, NULL, NULL, NULL, G_TYPE_NONE, 2, PORTAL_AUTH_TYPE_RESULT,
                                                G_TYPE_ERROR);
}

static void
portal_auth_client_init (PortalAuthClient *self)
{
    self->is_account_abstracted = PORTAL_AUTH_TRISTATE_UNSET;
    self->calls = g_ptr_array_new ();
    g_mutex_init (&self->lock);
}

static gboolean
portal_auth_client_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
    (void) cancellable;
    PortalAuthClient *self = PORTAL_AUTH_CLIENT (initable);
    if (!self->initialized) {
        self->initialized = TRUE;
        portal_auth_glib_log_install ();
        portal_auth_options options;
        portal_auth_options_init (&options, sizeof options);
        options.auth_environment_id = self->auth_environment_id;
        options.redirect_url = self->redirect_url;
        options.api_host = self->api_host;
        options.magic_link_from_email = self->magic_link_from_email;
        options.magic_link_template_id = self->magic_link_template_id;
        options.is_account_abstracted = self->is_account_abstracted == PORTAL_AUTH_TRISTATE_TRUE    ? PORTAL_AUTH_YES
                                        : self->is_account_abstracted == PORTAL_AUTH_TRISTATE_FALSE ? PORTAL_AUTH_NO
                                                                                                    : PORTAL_AUTH_UNSET;
        options.storage = self->storage == PORTAL_AUTH_STORAGE_KIND_MEMORY ? PORTAL_AUTH_STORAGE_MEMORY
                          : self->storage == PORTAL_AUTH_STORAGE_KIND_FILE ? PORTAL_AUTH_STORAGE_FILE
                                                                            : PORTAL_AUTH_STORAGE_KEYRING;
        options.file_storage_path = self->file_storage_path;
        options.connect_timeout_ms = self->connect_timeout_ms;
        options.request_timeout_ms = self->request_timeout_ms;
        options.application_id = self->application_id;
        options.keyring_prompt_timeout_ms = self->keyring_prompt_timeout_ms;
        options.ca_file = self->ca_file;
        portal_auth_error *failure = NULL;
        if (portal_auth_new (&options, &self->native, &failure) != PORTAL_AUTH_OK)
            portal_auth_glib_propagate (&self->init_error, failure);
        else if (portal_auth_set_completion_queue (self->native, PORTAL_AUTH_TRUE) != PORTAL_AUTH_OK) {
            g_set_error_literal (&self->init_error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INTERNAL,
                                 "The completion queue has no descriptor: the process is out of them.");
            g_clear_pointer (&self->native, portal_auth_free);
        } else
            portal_auth_set_prefers_ephemeral_web_browser_session (self->native, self->prefers_ephemeral ? PORTAL_AUTH_TRUE
                                                                                                         : PORTAL_AUTH_FALSE);
    }
    if (self->init_error) {
        g_propagate_error (error, g_error_copy (self->init_error));
        return FALSE;
    }
    return TRUE;
}

static void
initable_iface_init (GInitableIface *iface)
{
    iface->init = portal_auth_client_initable_init;
}

/**
 * portal_auth_client_new:
 * @auth_environment_id: the auth environment's id
 * @redirect_url: the redirect URL Portal sends the user back to
 * @error: where a failure is reported
 *
 * A client that keeps its session in the desktop keyring and talks to api.portalhq.io. For
 * the other options, use g_initable_new() with the construct properties. No network or
 * keyring I/O happens here.
 *
 * Returns: (transfer full): the client; %NULL with %PORTAL_AUTH_ERROR_INVALID_ARGUMENT for a
 *   blank id or redirect URL
 */
PortalAuthClient *
portal_auth_client_new (const char *auth_environment_id, const char *redirect_url, GError **error)
{
    return g_initable_new (PORTAL_AUTH_TYPE_CLIENT, NULL, error, "auth-environment-id", auth_environment_id,
                           "redirect-url", redirect_url, NULL);
}

/**
 * portal_auth_client_get_session:
 * @self: the client
 *
 * Returns: (transfer none) (nullable): #PortalAuthClient:session
 */
PortalAuthSession *
portal_auth_client_get_session (PortalAuthClient *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_CLIENT (self), NULL);
    g_mutex_lock (&self->lock);
    PortalAuthSession *session = self->session;
    g_mutex_unlock (&self->lock);
    return session;
}

/**
 * portal_auth_client_get_prefers_ephemeral_web_browser_session:
 * @self: the client
 *
 * Returns: #PortalAuthClient:prefers-ephemeral-web-browser-session
 */
gboolean
portal_auth_client_get_prefers_ephemeral_web_browser_session (PortalAuthClient *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_CLIENT (self), FALSE);
    return self->prefers_ephemeral;
}

/**
 * portal_auth_client_set_prefers_ephemeral_web_browser_session:
 * @self: the client
 * @prefers: whether to ask for a private window
 *
 * Sets #PortalAuthClient:prefers-ephemeral-web-browser-session.
 */
void
portal_auth_client_set_prefers_ephemeral_web_browser_session (PortalAuthClient *self, gboolean prefers)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    prefers = !!prefers;
    if (self->prefers_ephemeral == prefers)
        return;
    self->prefers_ephemeral = prefers;
    if (self->native)
        portal_auth_set_prefers_ephemeral_web_browser_session (self->native, prefers ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE);
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PREFERS_EPHEMERAL_WEB_BROWSER_SESSION]);
}

/* The client's session is now `session` (NULL: signed out), unless `only_if` (not NULL) is
   no longer its session. On the context of the call that changed it. */
static void
change_session (PortalAuthClient *self, PortalAuthSession *session, PortalAuthSession *only_if)
{
    g_mutex_lock (&self->lock);
    gboolean changes = !self->disposed && (!only_if || self->session == only_if);
    PortalAuthSession *replaced = changes ? g_steal_pointer (&self->session) : NULL;
    if (changes)
        self->session = session ? g_object_ref (session) : NULL;
    g_mutex_unlock (&self->lock);
    g_clear_object (&replaced);
    if (!changes)
        return;
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION]);
    g_signal_emit (self, signals[SESSION_CHANGED], 0, session);
}

void
portal_auth_glib_client_session_invalidated (PortalAuthClient *self, PortalAuthSession *session)
{
    change_session (self, NULL, session);
}

/* What a returning call does to the client's session. */
typedef enum { KEEPS_SESSION, SIGNS_IN, RESTORES, SIGNS_OUT } SessionEffect;

/* On the client's context, before a call's task returns: the client's reference back to the
   task, and the call's effect on the session. */
static void
returning (PortalAuthCall *call, SessionEffect effect)
{
    PortalAuthClient *self = call->client;
    g_mutex_lock (&self->lock);
    if (!call->owns_client_reference)
        g_object_ref (self);
    g_ptr_array_remove_fast (self->calls, call);
    gboolean had_session = self->session != NULL;
    g_mutex_unlock (&self->lock);
    if (call->error)
        return;
    PortalAuthSession *session = NULL;
    switch (effect) {
    case KEEPS_SESSION: return;
    case SIGNS_IN:
        if (!call->value || portal_auth_result_get_kind (call->value) != PORTAL_AUTH_RESULT_KIND_AUTHENTICATED)
            return;
        session = portal_auth_result_get_session (call->value);
        break;
    case RESTORES:
        session = call->value;
        if (!session && !had_session)
            return;
        break;
    case SIGNS_OUT:
        if (!had_session)
            return;
        break;
    }
    if (session)
        portal_auth_glib_session_set_lender (session, self);
    change_session (self, session, NULL);
}

static void returning_keeps_session (PortalAuthCall *call) { returning (call, KEEPS_SESSION); }
static void returning_signs_in (PortalAuthCall *call) { returning (call, SIGNS_IN); }
static void returning_restores (PortalAuthCall *call) { returning (call, RESTORES); }
static void returning_signs_out (PortalAuthCall *call) { returning (call, SIGNS_OUT); }

/* A call of the client for a new task, or NULL when the task has already returned an error
   (the client is not initialized, or disposed; the queue cannot be watched). The caller
   starts the C call on `native` with the call as user_data, then portal_auth_glib_call_started. */
static PortalAuthCall *
begin (PortalAuthClient *self, gpointer tag, PortalAuthCallReturns returns, SessionEffect effect,
       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
    GTask *task = g_task_new (self, cancellable, callback, user_data);
    g_task_set_source_tag (task, tag);
    if (!self->native) {
        if (self->init_error)
            g_task_return_error (task, g_error_copy (self->init_error));
        else if (self->disposed)
            g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CLOSED, "The client was disposed.");
        else
            g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                                     "The client is not initialized: call g_initable_init first.");
        g_object_unref (task);
        return NULL;
    }
    PortalAuthCall *call = portal_auth_glib_call_new (task, returns);
    if (!call)
        return NULL;
    call->client = self;
    static void (*const hooks[]) (PortalAuthCall *) = {
        [KEEPS_SESSION] = returning_keeps_session,
        [SIGNS_IN] = returning_signs_in,
        [RESTORES] = returning_restores,
        [SIGNS_OUT] = returning_signs_out,
    };
    call->returning = hooks[effect];
    return call;
}

/* After the C call returned `started`: a started call waits with the client's reference
   borrowed back (see the struct); a refused one has returned already. */
static void
started (PortalAuthClient *self, PortalAuthCall *call, portal_auth_code code, const char *argument)
{
    if (code == PORTAL_AUTH_OK) {
        g_mutex_lock (&self->lock);
        g_ptr_array_add (self->calls, call);
        g_mutex_unlock (&self->lock);
        g_object_unref (self);
    }
    portal_auth_glib_call_started (call, code, argument);
}

/* The value of a pointer-returning call's task. */
static gpointer
finish_pointer (PortalAuthClient *self, GAsyncResult *result, gpointer tag, GError **error)
{
    g_return_val_if_fail (g_task_is_valid (result, self), NULL);
    g_return_val_if_fail (g_async_result_is_tagged (result, tag), NULL);
    return g_task_propagate_pointer (G_TASK (result), error);
}

static gboolean
finish_boolean (PortalAuthClient *self, GAsyncResult *result, gpointer tag, GError **error)
{
    g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
    g_return_val_if_fail (g_async_result_is_tagged (result, tag), FALSE);
    return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * portal_auth_client_get_methods_async:
 * @self: the client
 * @cancellable: (nullable): cancels the call before its request is sent
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Fetches the sign-in methods the environment has enabled. Call
 * portal_auth_client_get_methods_finish() from @callback.
 */
void
portal_auth_client_get_methods_async (PortalAuthClient *self, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_get_methods_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  KEEPS_SESSION, cancellable, callback, user_data);
    if (call)
        started (self, call, portal_auth_get_methods (self->native, portal_auth_glib_call_on_methods, call, &call->handle), NULL);
}

/**
 * portal_auth_client_get_methods_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): the methods; %NULL with @error set
 */
PortalAuthMethods *
portal_auth_client_get_methods_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_get_methods_async, error);
}

/**
 * portal_auth_client_send_magic_link_async:
 * @self: the client
 * @email: (nullable): the user's address, trimmed and lowercased; blank fails with
 *   %PORTAL_AUTH_ERROR_INVALID_ARGUMENT
 * @cancellable: (nullable): cancels the call before its request is sent
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Emails the user a sign-in link, which leads to the redirect URL: pass what the app
 * receives there to portal_auth_client_handle_redirect_async(). Needs the magic-link
 * properties. Call portal_auth_client_send_magic_link_finish() from @callback.
 */
void
portal_auth_client_send_magic_link_async (PortalAuthClient *self, const char *email, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_send_magic_link_async, PORTAL_AUTH_CALL_RETURNS_BOOLEAN,
                                  KEEPS_SESSION, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_send_magic_link (self->native, email, portal_auth_glib_call_on_done, call, &call->handle),
                 "email");
}

/**
 * portal_auth_client_send_magic_link_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: %TRUE once Portal sent the email; %FALSE with @error set
 *   (%PORTAL_AUTH_ERROR_MAGIC_LINK_NOT_CONFIGURED, %PORTAL_AUTH_ERROR_RATE_LIMITED, ...)
 */
gboolean
portal_auth_client_send_magic_link_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_boolean (self, result, portal_auth_client_send_magic_link_async, error);
}

/**
 * portal_auth_client_login_with_google_async:
 * @self: the client
 * @cancellable: (nullable): cancels the call before its request is sent
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Fetches a fresh Google authorize URL for the app to open in the user's browser (with
 * gtk_show_uri() or g_app_info_launch_default_for_uri()); Google and Portal then send the
 * user to the redirect URL, whose URL goes to portal_auth_client_handle_redirect_async().
 * Each URL is single-use. Call portal_auth_client_login_with_google_finish() from @callback.
 */
void
portal_auth_client_login_with_google_async (PortalAuthClient *self, GCancellable *cancellable,
                                            GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_login_with_google_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  KEEPS_SESSION, cancellable, callback, user_data);
    if (call)
        started (self, call, portal_auth_login_with_google (self->native, portal_auth_glib_call_on_url, call, &call->handle), NULL);
}

/**
 * portal_auth_client_login_with_google_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): the authorize URL; %NULL with @error set
 *   (%PORTAL_AUTH_ERROR_AUTH_METHOD_UNAVAILABLE without Google sign-in)
 */
char *
portal_auth_client_login_with_google_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_login_with_google_async, error);
}

/**
 * portal_auth_client_login_with_apple_async:
 * @self: the client
 * @cancellable: (nullable): cancels the call before its request is sent
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Fetches a fresh Apple authorize URL; as portal_auth_client_login_with_google_async().
 */
void
portal_auth_client_login_with_apple_async (PortalAuthClient *self, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_login_with_apple_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  KEEPS_SESSION, cancellable, callback, user_data);
    if (call)
        started (self, call, portal_auth_login_with_apple (self->native, portal_auth_glib_call_on_url, call, &call->handle), NULL);
}

/**
 * portal_auth_client_login_with_apple_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): the authorize URL; %NULL with @error set
 */
char *
portal_auth_client_login_with_apple_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_login_with_apple_async, error);
}

/**
 * portal_auth_client_sign_in_with_google_async:
 * @self: the client
 * @timeout_ms: how long to wait for the browser; zero or less: 300,000
 * @cancellable: (nullable): ends the wait; a grant the browser already brought back is
 *   still exchanged and persisted
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Signs in with Google in the user's browser in one call: with a loopback redirect URL
 * (http://127.0.0.1:PORT/PATH, allow-listed by Portal), the library opens the browser
 * ($BROWSER, else xdg-open), waits on a one-shot listener on that port for the browser to
 * come back, and exchanges the grant. Call portal_auth_client_sign_in_with_google_finish()
 * from @callback.
 */
void
portal_auth_client_sign_in_with_google_async (PortalAuthClient *self, int timeout_ms, GCancellable *cancellable,
                                              GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_sign_in_with_google_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  SIGNS_IN, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_sign_in_with_google (self->native, timeout_ms, portal_auth_glib_call_on_result, call,
                                                  &call->handle),
                 NULL);
}

/**
 * portal_auth_client_sign_in_with_google_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): signed in, or a TOTP step; %NULL with @error set
 *   (%PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE and its reason, %PORTAL_AUTH_ERROR_SIGN_IN_CLOSED
 *   on timeout, %PORTAL_AUTH_ERROR_SIGN_IN_IN_PROGRESS, ...)
 */
PortalAuthResult *
portal_auth_client_sign_in_with_google_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_sign_in_with_google_async, error);
}

/**
 * portal_auth_client_sign_in_with_apple_async:
 * @self: the client
 * @timeout_ms: how long to wait for the browser; zero or less: 300,000
 * @cancellable: (nullable): ends the wait
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Signs in with Apple in the user's browser; as portal_auth_client_sign_in_with_google_async().
 */
void
portal_auth_client_sign_in_with_apple_async (PortalAuthClient *self, int timeout_ms, GCancellable *cancellable,
                                             GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_sign_in_with_apple_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  SIGNS_IN, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_sign_in_with_apple (self->native, timeout_ms, portal_auth_glib_call_on_result, call,
                                                 &call->handle),
                 NULL);
}

/**
 * portal_auth_client_sign_in_with_apple_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): signed in, or a TOTP step; %NULL with @error set
 */
PortalAuthResult *
portal_auth_client_sign_in_with_apple_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_sign_in_with_apple_async, error);
}

/**
 * portal_auth_client_sign_in_with_magic_link_async:
 * @self: the client
 * @email: (nullable): the user's address, trimmed and lowercased; blank fails with
 *   %PORTAL_AUTH_ERROR_INVALID_ARGUMENT
 * @timeout_ms: how long to wait for the user to open the link; zero or less: 900,000
 * @cancellable: (nullable): ends the wait; a grant the browser already brought back is
 *   still exchanged and persisted
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Signs in by magic link with nothing to paste: with a loopback redirect URL, the library
 * emails the link, waits on a listener on the URL's port for the browser the user opens it
 * in, exchanges the grant and tells the browser it is done. Meanwhile
 * portal_auth_client_handle_redirect_async() with the link (from #GApplication::open, or
 * forwarded) completes it too. Shares the one-at-a-time rule of the browser sign-ins. Call
 * portal_auth_client_sign_in_with_magic_link_finish() from @callback.
 */
void
portal_auth_client_sign_in_with_magic_link_async (PortalAuthClient *self, const char *email, int timeout_ms,
                                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                                  gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_sign_in_with_magic_link_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  SIGNS_IN, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_sign_in_with_magic_link (self->native, email, timeout_ms, portal_auth_glib_call_on_result,
                                                      call, &call->handle),
                 "email");
}

/**
 * portal_auth_client_sign_in_with_magic_link_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): signed in, or a TOTP step; %NULL with @error set
 *   (%PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE and its reason, %PORTAL_AUTH_ERROR_SIGN_IN_CLOSED
 *   on timeout or dispose, %PORTAL_AUTH_ERROR_SIGN_IN_IN_PROGRESS, ...)
 */
PortalAuthResult *
portal_auth_client_sign_in_with_magic_link_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_sign_in_with_magic_link_async, error);
}

/* A forwarded redirect handled: its sign-in, then the signal. */
static void
forwarded (PortalAuthCall *call, PortalAuthResult *result, const GError *error)
{
    PortalAuthClient *self = call->client;
    PortalAuthSession *session = result ? portal_auth_result_get_session (result) : NULL;
    if (session) {
        portal_auth_glib_session_set_lender (session, self);
        change_session (self, session, NULL);
    }
    g_signal_emit (self, signals[REDIRECT_FORWARDED], 0, result, error);
}

/**
 * portal_auth_client_listen_for_redirects_async:
 * @self: the client
 * @cancellable: (nullable): ends listening
 * @callback: (scope async): called on the thread-default main context of this call, once
 *   listening has ended
 * @user_data: (closure): passed to @callback
 *
 * Listens for the redirect URLs the application's other instances forward with the C
 * library's portal_auth_forward_redirect() (a URL handler that is not a #GApplication, or
 * runs in another session bus), on the channel of this user, #PortalAuthClient:application-id
 * and environment, and handles each as portal_auth_client_handle_redirect_async() would,
 * emitting #PortalAuthClient::redirect-forwarded. A forwarded magic link completes a
 * portal_auth_client_sign_in_with_magic_link_async() that waits for it. It listens once this
 * returns. Call portal_auth_client_listen_for_redirects_finish() from @callback.
 */
void
portal_auth_client_listen_for_redirects_async (PortalAuthClient *self, GCancellable *cancellable,
                                               GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_listen_for_redirects_async, PORTAL_AUTH_CALL_RETURNS_BOOLEAN,
                                  KEEPS_SESSION, cancellable, callback, user_data);
    if (!call)
        return;
    call->forwarded = forwarded;
    started (self, call,
             portal_auth_listen_for_redirects (self->native, portal_auth_glib_call_on_redirect, call, &call->handle),
             NULL);
}

/**
 * portal_auth_client_listen_for_redirects_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: why listening ended
 *
 * Returns: %FALSE, with @error set: %G_IO_ERROR_CANCELLED when @cancellable ended it,
 *   %PORTAL_AUTH_ERROR_SIGN_IN_CLOSED when the client was disposed,
 *   %PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE when it could not listen (its reason:
 *   %PORTAL_AUTH_ERROR_REASON_CHANNEL_IN_USE for another instance listening, ...)
 */
gboolean
portal_auth_client_listen_for_redirects_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_boolean (self, result, portal_auth_client_listen_for_redirects_async, error);
}

/**
 * portal_auth_client_handle_redirect_async:
 * @self: the client
 * @url: the URL the app received (#GApplication::open gives it for the app's scheme)
 * @cancellable: (nullable): cancels the call before its request is sent; a grant sent is
 *   still exchanged and persisted
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Completes a sign-in from the redirect URL a magic link or a provider sent the user to:
 * exchanges its grant (docs/protocol.md §3). The same redirect handled again replays its
 * result with no request. Call portal_auth_client_handle_redirect_finish() from @callback.
 */
void
portal_auth_client_handle_redirect_async (PortalAuthClient *self, const char *url, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_handle_redirect_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  SIGNS_IN, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_handle_redirect (self->native, url, portal_auth_glib_call_on_result, call, &call->handle),
                 "url");
}

/**
 * portal_auth_client_handle_redirect_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full) (nullable): signed in, or a TOTP step; %NULL without @error set
 *   when the URL is not a sign-in redirect for this client (nothing was sent), %NULL with
 *   @error set on failure (%PORTAL_AUTH_ERROR_AUTHENTICATION_FAILED when the redirect
 *   carries an error)
 */
PortalAuthResult *
portal_auth_client_handle_redirect_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_handle_redirect_async, error);
}

/**
 * portal_auth_client_verify_totp_async:
 * @self: the client
 * @code: the user's code, posted as it is
 * @user_jwt: the TOTP step's userJwt (portal_auth_result_get_user_jwt()); a secret
 * @cancellable: (nullable): cancels the call before its request is sent; a code sent is
 *   still verified and its session persisted
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Submits the user's code for a TOTP step. A wrong code fails with
 * %PORTAL_AUTH_ERROR_UNAUTHORIZED and %PORTAL_AUTH_ERROR_REASON_TOTP_CODE_REJECTED: ask for
 * the code again, for the same step (the other reasons say to sign in again). Call
 * portal_auth_client_verify_totp_finish() from @callback.
 */
void
portal_auth_client_verify_totp_async (PortalAuthClient *self, const char *code, const char *user_jwt,
                                      GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_verify_totp_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  SIGNS_IN, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_verify_totp (self->native, code, user_jwt, portal_auth_glib_call_on_result, call,
                                          &call->handle),
                 code && g_utf8_validate (code, -1, NULL) ? "user_jwt" : "code");
}

/**
 * portal_auth_client_verify_totp_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full): the authenticated result, its session persisted; %NULL with
 *   @error set
 */
PortalAuthResult *
portal_auth_client_verify_totp_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_verify_totp_async, error);
}

/**
 * portal_auth_client_restore_session_async:
 * @self: the client
 * @cancellable: (nullable): cancels the call before it reads the keyring
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Reads the persisted session, with no network: what an app does at start-up. Call
 * portal_auth_client_restore_session_finish() from @callback.
 */
void
portal_auth_client_restore_session_async (PortalAuthClient *self, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_restore_session_async, PORTAL_AUTH_CALL_RETURNS_POINTER,
                                  RESTORES, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_restore_session (self->native, portal_auth_glib_call_on_session, call, &call->handle), NULL);
}

/**
 * portal_auth_client_restore_session_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: (transfer full) (nullable): the session; %NULL without @error set when none is
 *   stored; %NULL with %PORTAL_AUTH_ERROR_SESSION_STORAGE_FAILURE (and its reason) when the
 *   keyring cannot be read now, which leaves the stored session alone
 */
PortalAuthSession *
portal_auth_client_restore_session_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_pointer (self, result, portal_auth_client_restore_session_async, error);
}

/**
 * portal_auth_client_clear_persisted_session_async:
 * @self: the client
 * @cancellable: (nullable): cancels the call before it reaches the keyring
 * @callback: (scope async): called on the thread-default main context of this call
 * @user_data: (closure): passed to @callback
 *
 * Signs out on this machine: deletes the persisted session, once any exchange in flight has
 * persisted its own. Portal has no server-side sign-out. Call
 * portal_auth_client_clear_persisted_session_finish() from @callback.
 */
void
portal_auth_client_clear_persisted_session_async (PortalAuthClient *self, GCancellable *cancellable,
                                                  GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail (PORTAL_AUTH_IS_CLIENT (self));
    PortalAuthCall *call = begin (self, portal_auth_client_clear_persisted_session_async,
                                  PORTAL_AUTH_CALL_RETURNS_BOOLEAN, SIGNS_OUT, cancellable, callback, user_data);
    if (call)
        started (self, call,
                 portal_auth_clear_persisted_session (self->native, portal_auth_glib_call_on_done, call, &call->handle),
                 NULL);
}

/**
 * portal_auth_client_clear_persisted_session_finish:
 * @self: the client
 * @result: the result @callback received
 * @error: where a failure is reported
 *
 * Returns: %TRUE once deleted; %FALSE with @error set
 */
gboolean
portal_auth_client_clear_persisted_session_finish (PortalAuthClient *self, GAsyncResult *result, GError **error)
{
    return finish_boolean (self, result, portal_auth_client_clear_persisted_session_async, error);
}
