/* The PORTAL_AUTH_ERROR domain. Its codes and reasons are the C library's numbers (checked
 * below at compile time); an extended GError carries the case's fields, so that a GError
 * copied or propagated keeps them. */
#include "portal-auth-private.h"

#include <gio/gio.h>

#define SAME(glib, c) G_STATIC_ASSERT ((int) (glib) == (int) (c))
SAME (PORTAL_AUTH_ERROR_INVALID_ARGUMENT, PORTAL_AUTH_E_INVALID_ARGUMENT);
SAME (PORTAL_AUTH_ERROR_MAGIC_LINK_NOT_CONFIGURED, PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED);
SAME (PORTAL_AUTH_ERROR_AUTH_METHOD_UNAVAILABLE, PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE);
SAME (PORTAL_AUTH_ERROR_AUTHENTICATION_FAILED, PORTAL_AUTH_E_AUTHENTICATION_FAILED);
SAME (PORTAL_AUTH_ERROR_MALFORMED_RESPONSE, PORTAL_AUTH_E_MALFORMED_RESPONSE);
SAME (PORTAL_AUTH_ERROR_INVALID_GRANT_RESPONSE, PORTAL_AUTH_E_INVALID_GRANT_RESPONSE);
SAME (PORTAL_AUTH_ERROR_INVALID_USER_JWT, PORTAL_AUTH_E_INVALID_USER_JWT);
SAME (PORTAL_AUTH_ERROR_SESSION_STORAGE_FAILURE, PORTAL_AUTH_E_SESSION_STORAGE_FAILURE);
SAME (PORTAL_AUTH_ERROR_ACCOUNT_ABSTRACTION_UNAVAILABLE, PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE);
SAME (PORTAL_AUTH_ERROR_RATE_LIMITED, PORTAL_AUTH_E_RATE_LIMITED);
SAME (PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE);
SAME (PORTAL_AUTH_ERROR_UNAUTHORIZED, PORTAL_AUTH_E_UNAUTHORIZED);
SAME (PORTAL_AUTH_ERROR_HTTP_STATUS, PORTAL_AUTH_E_HTTP_STATUS);
SAME (PORTAL_AUTH_ERROR_NETWORK, PORTAL_AUTH_E_NETWORK);
SAME (PORTAL_AUTH_ERROR_SESSION_INVALIDATED, PORTAL_AUTH_E_SESSION_INVALIDATED);
SAME (PORTAL_AUTH_ERROR_SIGN_IN_CLOSED, PORTAL_AUTH_E_SIGN_IN_CLOSED);
SAME (PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE, PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE);
SAME (PORTAL_AUTH_ERROR_SIGN_IN_IN_PROGRESS, PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS);
SAME (PORTAL_AUTH_ERROR_SIGN_IN_CALLBACK_INCOMPLETE, PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE);
SAME (PORTAL_AUTH_ERROR_INTERNAL, PORTAL_AUTH_E_INTERNAL);
SAME (PORTAL_AUTH_ERROR_REASON_NONE, PORTAL_AUTH_REASON_NONE);
SAME (PORTAL_AUTH_ERROR_REASON_KEYRING_LOCKED, PORTAL_AUTH_REASON_KEYRING_LOCKED);
SAME (PORTAL_AUTH_ERROR_REASON_NO_SECRET_SERVICE, PORTAL_AUTH_REASON_NO_SECRET_SERVICE);
SAME (PORTAL_AUTH_ERROR_REASON_NO_SESSION_BUS, PORTAL_AUTH_REASON_NO_SESSION_BUS);
SAME (PORTAL_AUTH_ERROR_REASON_DBUS_FAILURE, PORTAL_AUTH_REASON_DBUS_FAILURE);
SAME (PORTAL_AUTH_ERROR_REASON_LIBSECRET_MISSING, PORTAL_AUTH_REASON_LIBSECRET_MISSING);
SAME (PORTAL_AUTH_ERROR_REASON_HOST_STORAGE_FAILED, PORTAL_AUTH_REASON_HOST_STORAGE_FAILED);
SAME (PORTAL_AUTH_ERROR_REASON_ENTRY_NOT_CLEARED, PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED);
SAME (PORTAL_AUTH_ERROR_REASON_KEYRING_NEEDS_CONFIRMATION, PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION);
SAME (PORTAL_AUTH_ERROR_REASON_KEYRING_PROMPT_DISMISSED, PORTAL_AUTH_REASON_KEYRING_PROMPT_DISMISSED);
SAME (PORTAL_AUTH_ERROR_REASON_KEYRING_ENCRYPTION_FAILED, PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED);
SAME (PORTAL_AUTH_ERROR_REASON_FILE_STORE_UNSAFE, PORTAL_AUTH_REASON_FILE_STORE_UNSAFE);
SAME (PORTAL_AUTH_ERROR_REASON_FILE_STORE_FAILED, PORTAL_AUTH_REASON_FILE_STORE_FAILED);
SAME (PORTAL_AUTH_ERROR_REASON_REDIRECT_NOT_LOOPBACK, PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK);
SAME (PORTAL_AUTH_ERROR_REASON_PORT_IN_USE, PORTAL_AUTH_REASON_PORT_IN_USE);
SAME (PORTAL_AUTH_ERROR_REASON_LISTENER_FAILED, PORTAL_AUTH_REASON_LISTENER_FAILED);
SAME (PORTAL_AUTH_ERROR_REASON_NO_BROWSER, PORTAL_AUTH_REASON_NO_BROWSER);
SAME (PORTAL_AUTH_ERROR_REASON_OPENER_FAILED, PORTAL_AUTH_REASON_OPENER_FAILED);
SAME (PORTAL_AUTH_ERROR_REASON_NO_RUNTIME_DIRECTORY, PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY);
SAME (PORTAL_AUTH_ERROR_REASON_RUNTIME_DIRECTORY_UNSAFE, PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE);
SAME (PORTAL_AUTH_ERROR_REASON_CHANNEL_IN_USE, PORTAL_AUTH_REASON_CHANNEL_IN_USE);
SAME (PORTAL_AUTH_ERROR_REASON_CHANNEL_FAILED, PORTAL_AUTH_REASON_CHANNEL_FAILED);
SAME (PORTAL_AUTH_ERROR_REASON_SIGN_IN_CANCELLED, PORTAL_AUTH_REASON_SIGN_IN_CANCELLED);
SAME (PORTAL_AUTH_ERROR_REASON_SIGN_IN_TIMED_OUT, PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT);
SAME (PORTAL_AUTH_ERROR_REASON_CLIENT_CLOSED, PORTAL_AUTH_REASON_CLIENT_CLOSED);
SAME (PORTAL_AUTH_ERROR_REASON_LINK_USED, PORTAL_AUTH_REASON_LINK_USED);
SAME (PORTAL_AUTH_ERROR_REASON_TOTP_CODE_REJECTED, PORTAL_AUTH_REASON_TOTP_CODE_REJECTED);
SAME (PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED, PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED);

/* The case's fields, as the C library's error holds them; strings NULL when absent. */
typedef struct {
    PortalAuthErrorReason reason;
    guint http_status;
    char *body;
    char *name;
    char *path;
    char *missing;
    char *detail;
    char *method;
    char *url;
} PortalAuthErrorPrivate;

static void
portal_auth_error_private_init (PortalAuthErrorPrivate *fields)
{
    (void) fields; /* zeroed by GLib */
}

static void
portal_auth_error_private_copy (const PortalAuthErrorPrivate *from, PortalAuthErrorPrivate *to)
{
    to->reason = from->reason;
    to->http_status = from->http_status;
    to->body = g_strdup (from->body);
    to->name = g_strdup (from->name);
    to->path = g_strdup (from->path);
    to->missing = g_strdup (from->missing);
    to->detail = g_strdup (from->detail);
    to->method = g_strdup (from->method);
    to->url = g_strdup (from->url);
}

static void
portal_auth_error_private_clear (PortalAuthErrorPrivate *fields)
{
    g_clear_pointer (&fields->body, g_free);
    g_clear_pointer (&fields->name, g_free);
    g_clear_pointer (&fields->path, g_free);
    g_clear_pointer (&fields->missing, g_free);
    g_clear_pointer (&fields->detail, g_free);
    g_clear_pointer (&fields->method, g_free);
    g_clear_pointer (&fields->url, g_free);
}

/**
 * portal_auth_error_quark:
 *
 * The quark of %PORTAL_AUTH_ERROR.
 *
 * Returns: the error domain's quark
 */
G_DEFINE_EXTENDED_ERROR (PortalAuthError, portal_auth_error)

GError *
portal_auth_glib_error_new (const portal_auth_error *error)
{
    portal_auth_code code = portal_auth_error_code (error);
    const char *message = portal_auth_error_message (error);
    if (code == PORTAL_AUTH_E_CANCELLED)
        return g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, message);
    GError *made = g_error_new_literal (PORTAL_AUTH_ERROR, code, message);
    PortalAuthErrorPrivate *fields = portal_auth_error_get_private (made);
    fields->reason = (PortalAuthErrorReason) portal_auth_error_reason (error);
    fields->http_status = (guint) portal_auth_error_http_status (error);
    fields->body = g_strdup (portal_auth_error_body (error));
    fields->name = g_strdup (portal_auth_error_name (error));
    fields->path = g_strdup (portal_auth_error_path (error));
    fields->missing = g_strdup (portal_auth_error_missing (error));
    fields->detail = g_strdup (portal_auth_error_detail (error));
    fields->method = g_strdup (portal_auth_error_method (error));
    fields->url = g_strdup (portal_auth_error_url (error));
    return made;
}

void
portal_auth_glib_propagate (GError **error, portal_auth_error *failure)
{
    g_propagate_error (error, portal_auth_glib_error_new (failure));
    portal_auth_error_free (failure);
}

GError *
portal_auth_glib_error_new_invalid_argument (const char *name)
{
    GError *made = g_error_new (PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INVALID_ARGUMENT,
                                "Invalid argument: %s is missing or not UTF-8.", name);
    portal_auth_error_get_private (made)->name = g_strdup (name);
    return made;
}

/* The fields of a PORTAL_AUTH_ERROR error; NULL for any other. */
static const PortalAuthErrorPrivate *
fields_of (const GError *error)
{
    return error && error->domain == PORTAL_AUTH_ERROR ? portal_auth_error_get_private (error) : NULL;
}

/**
 * portal_auth_error_get_reason:
 * @error: an error
 *
 * Which failure a %PORTAL_AUTH_ERROR_SESSION_STORAGE_FAILURE, a
 * %PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE, a %PORTAL_AUTH_ERROR_SIGN_IN_CLOSED or a
 * %PORTAL_AUTH_ERROR_UNAUTHORIZED was.
 *
 * Returns: the reason; %PORTAL_AUTH_ERROR_REASON_NONE for any other error, and for a
 *   %PORTAL_AUTH_ERROR_UNAUTHORIZED of a call that cannot tell
 */
PortalAuthErrorReason
portal_auth_error_get_reason (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->reason : PORTAL_AUTH_ERROR_REASON_NONE;
}

/**
 * portal_auth_error_reason_get_user_message:
 * @reason: a reason
 *
 * A one-line sentence for the user, in English, saying what to do about @reason ("Your
 * keyring is locked. Unlock it, then try again."), to show as it is; the error's own message
 * is the developer's. The C library's portal_auth_reason_user_message().
 *
 * Returns: (nullable): the sentence, static; %NULL for %PORTAL_AUTH_ERROR_REASON_NONE and a
 *   value the library does not know
 */
const char *
portal_auth_error_reason_get_user_message (PortalAuthErrorReason reason)
{
    return portal_auth_reason_user_message ((portal_auth_reason) reason);
}

/**
 * portal_auth_error_get_http_status:
 * @error: an error
 *
 * The HTTP status of a %PORTAL_AUTH_ERROR_UNAUTHORIZED or %PORTAL_AUTH_ERROR_HTTP_STATUS.
 *
 * Returns: the status; 0 when no answer came, or for any other error
 */
guint
portal_auth_error_get_http_status (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->http_status : 0;
}

/**
 * portal_auth_error_get_body:
 * @error: an error
 *
 * The server's reason for a %PORTAL_AUTH_ERROR_HTTP_STATUS: an excerpt of the answer's body,
 * for developers (a log, a debug view), never from an answer to a request that carried a
 * secret.
 *
 * Returns: (nullable): the excerpt, owned by @error
 */
const char *
portal_auth_error_get_body (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->body : NULL;
}

/**
 * portal_auth_error_get_name:
 * @error: an error
 *
 * The argument or option a %PORTAL_AUTH_ERROR_INVALID_ARGUMENT is about, as the C library
 * spells it ("auth_environment_id", "email", ...).
 *
 * Returns: (nullable): the name, owned by @error
 */
const char *
portal_auth_error_get_name (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->name : NULL;
}

/**
 * portal_auth_error_get_path:
 * @error: an error
 *
 * The endpoint of a %PORTAL_AUTH_ERROR_MALFORMED_RESPONSE.
 *
 * Returns: (nullable): the path, owned by @error
 */
const char *
portal_auth_error_get_path (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->path : NULL;
}

/**
 * portal_auth_error_get_missing:
 * @error: an error
 *
 * The field a %PORTAL_AUTH_ERROR_MALFORMED_RESPONSE lacked.
 *
 * Returns: (nullable): the field, owned by @error; %NULL when the envelope itself was wrong
 */
const char *
portal_auth_error_get_missing (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->missing : NULL;
}

/**
 * portal_auth_error_get_detail:
 * @error: an error
 *
 * The text of a %PORTAL_AUTH_ERROR_AUTHENTICATION_FAILED, %PORTAL_AUTH_ERROR_INVALID_USER_JWT
 * or %PORTAL_AUTH_ERROR_ACCOUNT_ABSTRACTION_UNAVAILABLE.
 *
 * Returns: (nullable): the text, owned by @error
 */
const char *
portal_auth_error_get_detail (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->detail : NULL;
}

/**
 * portal_auth_error_get_method:
 * @error: an error
 *
 * The method of a %PORTAL_AUTH_ERROR_AUTH_METHOD_UNAVAILABLE: "GOOGLE" or "APPLE".
 *
 * Returns: (nullable): the method, owned by @error
 */
const char *
portal_auth_error_get_method (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->method : NULL;
}

/**
 * portal_auth_error_get_url:
 * @error: an error
 *
 * The authorize URL of a %PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE with
 * %PORTAL_AUTH_ERROR_REASON_NO_BROWSER from a browser sign-in, which no browser could open:
 * show it to the user, to open elsewhere.
 *
 * Returns: (nullable): the URL, owned by @error
 */
const char *
portal_auth_error_get_url (const GError *error)
{
    const PortalAuthErrorPrivate *fields = fields_of (error);
    return fields ? fields->url : NULL;
}
