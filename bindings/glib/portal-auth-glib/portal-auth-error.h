/* The PORTAL_AUTH_ERROR domain: the C library's stable codes as GError codes, with the reason
 * and the fields of each case. */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#include <glib.h>

#include "portal-auth-visibility.h"

G_BEGIN_DECLS

/**
 * PORTAL_AUTH_ERROR:
 *
 * The error domain of the library's errors, whose codes are #PortalAuthError. A call that
 * was cancelled through its #GCancellable fails with %G_IO_ERROR_CANCELLED instead, as GIO's
 * calls do.
 */
#define PORTAL_AUTH_ERROR (portal_auth_error_quark ())

/**
 * PortalAuthError:
 * @PORTAL_AUTH_ERROR_INVALID_ARGUMENT: An unusable argument or property; portal_auth_error_get_name() names it.
 * @PORTAL_AUTH_ERROR_MAGIC_LINK_NOT_CONFIGURED: No magic-link sender and template.
 * @PORTAL_AUTH_ERROR_AUTH_METHOD_UNAVAILABLE: The environment has not enabled the method; portal_auth_error_get_method().
 * @PORTAL_AUTH_ERROR_AUTHENTICATION_FAILED: The redirect carried an error; portal_auth_error_get_detail().
 * @PORTAL_AUTH_ERROR_MALFORMED_RESPONSE: Portal's answer lacked something; portal_auth_error_get_path(), portal_auth_error_get_missing().
 * @PORTAL_AUTH_ERROR_INVALID_GRANT_RESPONSE: The grant gave neither a session nor a TOTP step.
 * @PORTAL_AUTH_ERROR_INVALID_USER_JWT: portal_auth_error_get_detail() says what is wrong with it.
 * @PORTAL_AUTH_ERROR_SESSION_STORAGE_FAILURE: The keyring failed; portal_auth_error_get_reason() says how.
 * @PORTAL_AUTH_ERROR_ACCOUNT_ABSTRACTION_UNAVAILABLE: The server's text is portal_auth_error_get_detail().
 * @PORTAL_AUTH_ERROR_RATE_LIMITED: Portal sends no more emails for now.
 * @PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE: No QR code of this link.
 * @PORTAL_AUTH_ERROR_UNAUTHORIZED: HTTP 401: portal_auth_error_get_reason() says what the user does next (a used link, a refused TOTP code, an expired step), when the call can tell.
 * @PORTAL_AUTH_ERROR_HTTP_STATUS: Another HTTP error; portal_auth_error_get_http_status(), portal_auth_error_get_body().
 * @PORTAL_AUTH_ERROR_NETWORK: No answer: refused, reset, timed out, too large.
 * @PORTAL_AUTH_ERROR_SESSION_INVALIDATED: The session was invalidated.
 * @PORTAL_AUTH_ERROR_SIGN_IN_CLOSED: A browser sign-in ended before the browser came back (a timeout, the client disposed).
 * @PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE: A browser sign-in could not start; portal_auth_error_get_reason() says why, and with no browser portal_auth_error_get_url() gives the URL to show.
 * @PORTAL_AUTH_ERROR_SIGN_IN_IN_PROGRESS: Another browser sign-in of the client runs.
 * @PORTAL_AUTH_ERROR_SIGN_IN_CALLBACK_INCOMPLETE: The browser came back without a usable grant.
 * @PORTAL_AUTH_ERROR_INTERNAL: Anything else.
 *
 * The codes of %PORTAL_AUTH_ERROR: the stable numbers of the C library's portal_auth_code
 * (portal_auth.h), never reused. A newer library may report a code this list lacks: treat
 * it as an error of the domain whose message says what happened.
 */
typedef enum {
    PORTAL_AUTH_ERROR_INVALID_ARGUMENT = 1,
    PORTAL_AUTH_ERROR_MAGIC_LINK_NOT_CONFIGURED = 2,
    PORTAL_AUTH_ERROR_AUTH_METHOD_UNAVAILABLE = 3,
    PORTAL_AUTH_ERROR_AUTHENTICATION_FAILED = 4,
    PORTAL_AUTH_ERROR_MALFORMED_RESPONSE = 5,
    PORTAL_AUTH_ERROR_INVALID_GRANT_RESPONSE = 6,
    PORTAL_AUTH_ERROR_INVALID_USER_JWT = 7,
    PORTAL_AUTH_ERROR_SESSION_STORAGE_FAILURE = 8,
    PORTAL_AUTH_ERROR_ACCOUNT_ABSTRACTION_UNAVAILABLE = 9,
    PORTAL_AUTH_ERROR_RATE_LIMITED = 10,
    PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE = 11,
    PORTAL_AUTH_ERROR_UNAUTHORIZED = 20,
    PORTAL_AUTH_ERROR_HTTP_STATUS = 21,
    PORTAL_AUTH_ERROR_NETWORK = 22,
    PORTAL_AUTH_ERROR_SESSION_INVALIDATED = 30,
    PORTAL_AUTH_ERROR_SIGN_IN_CLOSED = 40,
    PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE = 41,
    PORTAL_AUTH_ERROR_SIGN_IN_IN_PROGRESS = 42,
    PORTAL_AUTH_ERROR_SIGN_IN_CALLBACK_INCOMPLETE = 43,
    PORTAL_AUTH_ERROR_INTERNAL = 99
} PortalAuthError;

/**
 * PortalAuthErrorReason:
 * @PORTAL_AUTH_ERROR_REASON_NONE: Every other error.
 * @PORTAL_AUTH_ERROR_REASON_KEYRING_LOCKED: The keyring is locked: ask the user to unlock it.
 * @PORTAL_AUTH_ERROR_REASON_NO_SECRET_SERVICE: No Secret Service, or no login collection: install or set up a keyring.
 * @PORTAL_AUTH_ERROR_REASON_NO_SESSION_BUS: No D-Bus session bus: the program runs outside a desktop session.
 * @PORTAL_AUTH_ERROR_REASON_DBUS_FAILURE: D-Bus or the Secret Service failed or did not answer in time: try again.
 * @PORTAL_AUTH_ERROR_REASON_LIBSECRET_MISSING: libsecret could not be loaded.
 * @PORTAL_AUTH_ERROR_REASON_HOST_STORAGE_FAILED: The host's own store failed.
 * @PORTAL_AUTH_ERROR_REASON_ENTRY_NOT_CLEARED: An undecodable entry could not be deleted: it is still stored.
 * @PORTAL_AUTH_ERROR_REASON_KEYRING_NEEDS_CONFIRMATION: The keyring asks to confirm the access in a dialog, and prompts are not shown (#PortalAuthClient:keyring-prompt-timeout-ms), or nobody answered in time.
 * @PORTAL_AUTH_ERROR_REASON_KEYRING_PROMPT_DISMISSED: The user dismissed the keyring's dialog.
 * @PORTAL_AUTH_ERROR_REASON_KEYRING_ENCRYPTION_FAILED: The keyring could not set up the encrypted transfer of secrets.
 * @PORTAL_AUTH_ERROR_REASON_FILE_STORE_UNSAFE: The file store's folder or file is not the user's alone.
 * @PORTAL_AUTH_ERROR_REASON_FILE_STORE_FAILED: The file store could not read, write or remove its file.
 * @PORTAL_AUTH_ERROR_REASON_REDIRECT_NOT_LOOPBACK: The redirect URL is not a loopback URL with an explicit port.
 * @PORTAL_AUTH_ERROR_REASON_PORT_IN_USE: Another program listens on the redirect URL's port.
 * @PORTAL_AUTH_ERROR_REASON_LISTENER_FAILED: The loopback listener could not start.
 * @PORTAL_AUTH_ERROR_REASON_NO_BROWSER: No browser to open ($BROWSER, xdg-open); portal_auth_error_get_url() gives the URL to show the user.
 * @PORTAL_AUTH_ERROR_REASON_OPENER_FAILED: The browser opener failed.
 * @PORTAL_AUTH_ERROR_REASON_NO_RUNTIME_DIRECTORY: No $XDG_RUNTIME_DIR for the redirect channel.
 * @PORTAL_AUTH_ERROR_REASON_RUNTIME_DIRECTORY_UNSAFE: $XDG_RUNTIME_DIR is not the user's alone (mode 0700).
 * @PORTAL_AUTH_ERROR_REASON_CHANNEL_IN_USE: Another instance already listens for the redirects.
 * @PORTAL_AUTH_ERROR_REASON_CHANNEL_FAILED: The redirect channel failed, or the instance did not answer in time.
 * @PORTAL_AUTH_ERROR_REASON_SIGN_IN_CANCELLED: The sign-in was cancelled before the redirect came.
 * @PORTAL_AUTH_ERROR_REASON_SIGN_IN_TIMED_OUT: The sign-in's timeout passed before the redirect came.
 * @PORTAL_AUTH_ERROR_REASON_CLIENT_CLOSED: The client was disposed of during the sign-in.
 * @PORTAL_AUTH_ERROR_REASON_LINK_USED: A redirect's grant was refused: the link was already used, has expired, or is not Portal's. Request a new link.
 * @PORTAL_AUTH_ERROR_REASON_TOTP_CODE_REJECTED: The TOTP code was not accepted and the step had not expired: ask for the code again, and verify with the same step.
 * @PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED: The TOTP step had expired by the local clock (#PortalAuthResult:totp-expires-at): sign in again.
 *
 * Which failure a %PORTAL_AUTH_ERROR_SESSION_STORAGE_FAILURE, a
 * %PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE or a %PORTAL_AUTH_ERROR_UNAUTHORIZED was, or how a
 * %PORTAL_AUTH_ERROR_SIGN_IN_CLOSED ended, so that an app can choose what its user does
 * next: the C library's stable PORTAL_AUTH_REASON_* numbers. Each value's #GEnumValue
 * names it as the C library does (portal_auth_reason_name()), to log or to key translations
 * by: its value_name is that name after PORTAL_AUTH_ERROR_REASON_ ("KEYRING_LOCKED"), its
 * nick the same in lower case with dashes ("keyring-locked");
 * portal_auth_error_reason_get_user_message() gives a sentence to show the user. A newer
 * library may report one this list lacks: treat it as the error's code alone.
 */
typedef enum {
    PORTAL_AUTH_ERROR_REASON_NONE = 0,
    PORTAL_AUTH_ERROR_REASON_KEYRING_LOCKED = 1,
    PORTAL_AUTH_ERROR_REASON_NO_SECRET_SERVICE = 2,
    PORTAL_AUTH_ERROR_REASON_NO_SESSION_BUS = 3,
    PORTAL_AUTH_ERROR_REASON_DBUS_FAILURE = 4,
    PORTAL_AUTH_ERROR_REASON_LIBSECRET_MISSING = 5,
    PORTAL_AUTH_ERROR_REASON_HOST_STORAGE_FAILED = 6,
    PORTAL_AUTH_ERROR_REASON_ENTRY_NOT_CLEARED = 7,
    PORTAL_AUTH_ERROR_REASON_KEYRING_NEEDS_CONFIRMATION = 8,
    PORTAL_AUTH_ERROR_REASON_KEYRING_PROMPT_DISMISSED = 9,
    PORTAL_AUTH_ERROR_REASON_KEYRING_ENCRYPTION_FAILED = 10,
    PORTAL_AUTH_ERROR_REASON_FILE_STORE_UNSAFE = 11,
    PORTAL_AUTH_ERROR_REASON_FILE_STORE_FAILED = 12,
    PORTAL_AUTH_ERROR_REASON_REDIRECT_NOT_LOOPBACK = 20,
    PORTAL_AUTH_ERROR_REASON_PORT_IN_USE = 21,
    PORTAL_AUTH_ERROR_REASON_LISTENER_FAILED = 22,
    PORTAL_AUTH_ERROR_REASON_NO_BROWSER = 23,
    PORTAL_AUTH_ERROR_REASON_OPENER_FAILED = 24,
    PORTAL_AUTH_ERROR_REASON_NO_RUNTIME_DIRECTORY = 25,
    PORTAL_AUTH_ERROR_REASON_RUNTIME_DIRECTORY_UNSAFE = 26,
    PORTAL_AUTH_ERROR_REASON_CHANNEL_IN_USE = 27,
    PORTAL_AUTH_ERROR_REASON_CHANNEL_FAILED = 28,
    PORTAL_AUTH_ERROR_REASON_SIGN_IN_CANCELLED = 40,
    PORTAL_AUTH_ERROR_REASON_SIGN_IN_TIMED_OUT = 41,
    PORTAL_AUTH_ERROR_REASON_CLIENT_CLOSED = 42,
    PORTAL_AUTH_ERROR_REASON_LINK_USED = 50,
    PORTAL_AUTH_ERROR_REASON_TOTP_CODE_REJECTED = 51,
    PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED = 52
} PortalAuthErrorReason;

PORTAL_AUTH_GLIB_API
GQuark portal_auth_error_quark (void);

PORTAL_AUTH_GLIB_API
PortalAuthErrorReason portal_auth_error_get_reason (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_reason_get_user_message (PortalAuthErrorReason reason);

PORTAL_AUTH_GLIB_API
guint portal_auth_error_get_http_status (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_body (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_name (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_path (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_missing (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_detail (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_method (const GError *error);

PORTAL_AUTH_GLIB_API
const char *portal_auth_error_get_url (const GError *error);

G_END_DECLS
