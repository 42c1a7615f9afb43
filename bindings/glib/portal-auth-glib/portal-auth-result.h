/* PortalAuthResult: where a sign-in left the user: signed in, or one TOTP step away. */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#include <glib-object.h>

#include "portal-auth-qr-code.h"
#include "portal-auth-session.h"
#include "portal-auth-visibility.h"

G_BEGIN_DECLS

/**
 * PortalAuthResultKind:
 * @PORTAL_AUTH_RESULT_KIND_AUTHENTICATED: Signed in: a session, already persisted.
 * @PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED: A TOTP step: ask for the user's code, then
 *   portal_auth_client_verify_totp_async().
 *
 * The kinds of #PortalAuthResult.
 */
typedef enum {
    PORTAL_AUTH_RESULT_KIND_AUTHENTICATED = 1,
    PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED = 2
} PortalAuthResultKind;

/**
 * PortalAuthTristate:
 * @PORTAL_AUTH_TRISTATE_UNSET: Not said: the server decides, or did not say.
 * @PORTAL_AUTH_TRISTATE_FALSE: No.
 * @PORTAL_AUTH_TRISTATE_TRUE: Yes.
 *
 * A yes or no that may be left unset (whether an account is account-abstracted).
 */
typedef enum {
    PORTAL_AUTH_TRISTATE_UNSET = -1,
    PORTAL_AUTH_TRISTATE_FALSE = 0,
    PORTAL_AUTH_TRISTATE_TRUE = 1
} PortalAuthTristate;

#define PORTAL_AUTH_TYPE_RESULT (portal_auth_result_get_type ())

PORTAL_AUTH_GLIB_API
G_DECLARE_FINAL_TYPE (PortalAuthResult, portal_auth_result, PORTAL_AUTH, RESULT, GObject)

PORTAL_AUTH_GLIB_API
PortalAuthResultKind portal_auth_result_get_kind (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
PortalAuthSession *portal_auth_result_get_session (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
const char *portal_auth_result_get_client_id (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
PortalAuthTristate portal_auth_result_get_is_account_abstracted (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
const char *portal_auth_result_get_user_jwt (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
const char *portal_auth_result_get_totp_link (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
const char *portal_auth_result_get_end_user_id (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
gint64 portal_auth_result_get_totp_expires_at (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
char *portal_auth_result_get_totp_secret (PortalAuthResult *self);

PORTAL_AUTH_GLIB_API
PortalAuthQrCode *portal_auth_result_get_qr_code (PortalAuthResult *self, GError **error);

PORTAL_AUTH_GLIB_API
char *portal_auth_normalize_totp_code (const char *typed);

G_END_DECLS
