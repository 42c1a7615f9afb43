/* PortalAuthResult: a sign-in's outcome, copied from the result the C library lends. */
#include "portal-auth-private.h"

/**
 * PortalAuthResult:
 *
 * Where a sign-in left the user: signed in (%PORTAL_AUTH_RESULT_KIND_AUTHENTICATED, with a
 * #PortalAuthSession already persisted), or one TOTP step away
 * (%PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED: show the enrollment QR code and secret on the
 * first sign-in, ask for the code, then portal_auth_client_verify_totp_async() with the
 * step's userJwt). The userJwt and the enrollment link are secrets: never log them.
 */
struct _PortalAuthResult {
    GObject parent_instance;
    PortalAuthResultKind kind;
    PortalAuthSession *session;
    char *client_id;
    PortalAuthTristate is_account_abstracted;
    char *user_jwt;  /* a secret */
    char *totp_link; /* a secret */
    char *end_user_id;
    gint64 totp_expires_at;
};

G_DEFINE_FINAL_TYPE (PortalAuthResult, portal_auth_result, G_TYPE_OBJECT)

enum {
    PROP_KIND = 1,
    PROP_SESSION,
    PROP_CLIENT_ID,
    PROP_IS_ACCOUNT_ABSTRACTED,
    PROP_USER_JWT,
    PROP_TOTP_LINK,
    PROP_END_USER_ID,
    PROP_TOTP_EXPIRES_AT,
    N_PROPERTIES
};
static GParamSpec *properties[N_PROPERTIES];

static void
portal_auth_result_finalize (GObject *object)
{
    PortalAuthResult *self = PORTAL_AUTH_RESULT (object);
    g_clear_object (&self->session);
    g_free (self->client_id);
    portal_auth_glib_wipe_free (self->user_jwt);
    portal_auth_glib_wipe_free (self->totp_link);
    g_free (self->end_user_id);
    G_OBJECT_CLASS (portal_auth_result_parent_class)->finalize (object);
}

static void
portal_auth_result_get_property (GObject *object, guint id, GValue *value, GParamSpec *spec)
{
    PortalAuthResult *self = PORTAL_AUTH_RESULT (object);
    switch (id) {
    case PROP_KIND: g_value_set_enum (value, self->kind); break;
    case PROP_SESSION: g_value_set_object (value, self->session); break;
    case PROP_CLIENT_ID: g_value_set_string (value, self->client_id); break;
    case PROP_IS_ACCOUNT_ABSTRACTED: g_value_set_enum (value, self->is_account_abstracted); break;
    case PROP_USER_JWT: g_value_set_string (value, self->user_jwt); break;
    case PROP_TOTP_LINK: g_value_set_string (value, self->totp_link); break;
    case PROP_END_USER_ID: g_value_set_string (value, self->end_user_id); break;
    case PROP_TOTP_EXPIRES_AT: g_value_set_int64 (value, self->totp_expires_at); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, spec);
    }
}

static GParamSpec *
readable_string (const char *name)
{
    return g_param_spec_string (name, NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
}

static void
portal_auth_result_class_init (PortalAuthResultClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS (klass);
    object_class->finalize = portal_auth_result_finalize;
    object_class->get_property = portal_auth_result_get_property;
    /**
     * PortalAuthResult:kind:
     *
     * Signed in, or a TOTP step.
     */
    properties[PROP_KIND] = g_param_spec_enum ("kind", NULL, NULL, PORTAL_AUTH_TYPE_RESULT_KIND,
                                               PORTAL_AUTH_RESULT_KIND_AUTHENTICATED,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthResult:session:
     *
     * %PORTAL_AUTH_RESULT_KIND_AUTHENTICATED: the session, already persisted.
     */
    properties[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, PORTAL_AUTH_TYPE_SESSION,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthResult:client-id:
     *
     * %PORTAL_AUTH_RESULT_KIND_AUTHENTICATED: the Portal client id, when the server sent one.
     */
    properties[PROP_CLIENT_ID] = readable_string ("client-id");
    /**
     * PortalAuthResult:is-account-abstracted:
     *
     * %PORTAL_AUTH_RESULT_KIND_AUTHENTICATED: whether the account is account-abstracted.
     */
    properties[PROP_IS_ACCOUNT_ABSTRACTED] =
        g_param_spec_enum ("is-account-abstracted", NULL, NULL, PORTAL_AUTH_TYPE_TRISTATE, PORTAL_AUTH_TRISTATE_UNSET,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthResult:user-jwt:
     *
     * %PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED: the userJwt to verify the code with. A secret.
     */
    properties[PROP_USER_JWT] = readable_string ("user-jwt");
    /**
     * PortalAuthResult:totp-link:
     *
     * %PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED: the `otpauth://` enrollment link, on the user's
     * first sign-in only. A secret: it embeds the TOTP secret.
     */
    properties[PROP_TOTP_LINK] = readable_string ("totp-link");
    /**
     * PortalAuthResult:end-user-id:
     *
     * %PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED: the user's id ("" when the server did not send it).
     */
    properties[PROP_END_USER_ID] = readable_string ("end-user-id");
    /**
     * PortalAuthResult:totp-expires-at:
     *
     * %PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED: when the step expires, in seconds since the Unix
     * epoch, by its userJwt (ten minutes after the sign-in); 0 when the userJwt carries no
     * expiry, and for an authenticated result. A code verified later fails with
     * %PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED.
     */
    properties[PROP_TOTP_EXPIRES_AT] = g_param_spec_int64 ("totp-expires-at", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties (object_class, N_PROPERTIES, properties);
}

static void
portal_auth_result_init (PortalAuthResult *self)
{
    self->is_account_abstracted = PORTAL_AUTH_TRISTATE_UNSET;
}

PortalAuthResult *
portal_auth_glib_result_new (const portal_auth_result *result)
{
    PortalAuthResult *self = g_object_new (PORTAL_AUTH_TYPE_RESULT, NULL);
    if (portal_auth_result_kind (result) == PORTAL_AUTH_RESULT_TOTP_REQUIRED) {
        self->kind = PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED;
        self->user_jwt = g_strdup (portal_auth_result_user_jwt (result));
        self->totp_link = g_strdup (portal_auth_result_totp_link (result));
        self->end_user_id = g_strdup (portal_auth_result_end_user_id (result));
        self->totp_expires_at = portal_auth_result_totp_expires_at (result);
        return self;
    }
    self->kind = PORTAL_AUTH_RESULT_KIND_AUTHENTICATED;
    self->session = portal_auth_glib_session_wrap (portal_auth_result_session (result));
    self->client_id = g_strdup (portal_auth_result_client_id (result));
    portal_auth_tristate abstracted = portal_auth_result_is_account_abstracted (result);
    self->is_account_abstracted = abstracted == PORTAL_AUTH_YES  ? PORTAL_AUTH_TRISTATE_TRUE
                                  : abstracted == PORTAL_AUTH_NO ? PORTAL_AUTH_TRISTATE_FALSE
                                                                 : PORTAL_AUTH_TRISTATE_UNSET;
    return self;
}

/**
 * portal_auth_result_get_kind:
 * @self: the result
 *
 * Returns: signed in, or a TOTP step
 */
PortalAuthResultKind
portal_auth_result_get_kind (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), PORTAL_AUTH_RESULT_KIND_AUTHENTICATED);
    return self->kind;
}

/**
 * portal_auth_result_get_session:
 * @self: the result
 *
 * Returns: (transfer none) (nullable): the session of an authenticated result; %NULL for a TOTP step
 */
PortalAuthSession *
portal_auth_result_get_session (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    return self->session;
}

/**
 * portal_auth_result_get_client_id:
 * @self: the result
 *
 * Returns: (nullable): the Portal client id of an authenticated result, when the server sent one
 */
const char *
portal_auth_result_get_client_id (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    return self->client_id;
}

/**
 * portal_auth_result_get_is_account_abstracted:
 * @self: the result
 *
 * Returns: whether the account is account-abstracted; %PORTAL_AUTH_TRISTATE_UNSET when the
 *   server did not say, or for a TOTP step
 */
PortalAuthTristate
portal_auth_result_get_is_account_abstracted (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), PORTAL_AUTH_TRISTATE_UNSET);
    return self->is_account_abstracted;
}

/**
 * portal_auth_result_get_user_jwt:
 * @self: the result
 *
 * Returns: (nullable): a TOTP step's userJwt, for portal_auth_client_verify_totp_async(); a
 *   secret, owned by @self
 */
const char *
portal_auth_result_get_user_jwt (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    return self->user_jwt;
}

/**
 * portal_auth_result_get_totp_link:
 * @self: the result
 *
 * Returns: (nullable): a TOTP step's enrollment link, present on the user's first sign-in
 *   only; a secret, owned by @self
 */
const char *
portal_auth_result_get_totp_link (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    return self->totp_link;
}

/**
 * portal_auth_result_get_end_user_id:
 * @self: the result
 *
 * Returns: (nullable): a TOTP step's user id ("" when the server did not send it); for an
 *   authenticated result, the session's (portal_auth_session_get_end_user_id())
 */
const char *
portal_auth_result_get_end_user_id (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    return self->session ? portal_auth_session_get_end_user_id (self->session) : self->end_user_id;
}

/**
 * portal_auth_result_get_totp_expires_at:
 * @self: the result
 *
 * When a TOTP step expires (#PortalAuthResult:totp-expires-at).
 *
 * Returns: seconds since the Unix epoch; 0 when the step's userJwt carries no expiry, and for
 *   an authenticated result
 */
gint64
portal_auth_result_get_totp_expires_at (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), 0);
    return self->totp_expires_at;
}

/**
 * portal_auth_result_get_totp_secret:
 * @self: the result
 *
 * The base32 secret of a TOTP step's enrollment link, for the user to type into an
 * authenticator app instead of scanning the code. A secret: never log it.
 *
 * Returns: (transfer full) (nullable): the secret; %NULL without a link, or when it carries
 *   no valid secret
 */
char *
portal_auth_result_get_totp_secret (PortalAuthResult *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    if (!self->totp_link)
        return NULL;
    char *secret = NULL;
    if (portal_auth_totp_secret (self->totp_link, &secret, NULL) != PORTAL_AUTH_OK)
        return NULL;
    char *copy = g_strdup (secret);
    portal_auth_string_free (secret); /* which clears it */
    return copy;
}

/**
 * portal_auth_result_get_qr_code:
 * @self: the result
 * @error: where a failure is reported
 *
 * The QR code of a TOTP step's enrollment link, for the user's authenticator app to scan.
 *
 * Returns: (transfer full): the code; %NULL with %PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE
 *   without a usable link
 */
PortalAuthQrCode *
portal_auth_result_get_qr_code (PortalAuthResult *self, GError **error)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_RESULT (self), NULL);
    if (!self->totp_link) {
        g_set_error_literal (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE,
                             "This result has no TOTP enrollment link.");
        return NULL;
    }
    return portal_auth_qr_code_new (self->totp_link, error);
}

/**
 * portal_auth_normalize_totp_code:
 * @typed: what the user typed for a TOTP code
 *
 * Tidies what the user typed before portal_auth_client_verify_totp_async(): removes the
 * spaces and dashes authenticator apps show ("123 456", "123-456"), and gives the six digits
 * that remain. Makes no request. The C library's portal_auth_totp_code_normalize().
 *
 * Returns: (transfer full) (nullable): the six digits; %NULL when anything else, or another
 *   number of digits, is left (ask the user again), and for a string that is not UTF-8
 */
char *
portal_auth_normalize_totp_code (const char *typed)
{
    char code[PORTAL_AUTH_TOTP_CODE_SIZE] = "";
    if (!typed || portal_auth_totp_code_normalize (typed, code) != PORTAL_AUTH_TRUE)
        return NULL;
    return g_strdup (code);
}
