/* PortalAuthQrCode: the QR code of a TOTP enrollment link, as modules to paint and as a PNG. */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#include <glib-object.h>

#include "portal-auth-visibility.h"

G_BEGIN_DECLS

#define PORTAL_AUTH_TYPE_QR_CODE (portal_auth_qr_code_get_type ())

PORTAL_AUTH_GLIB_API
G_DECLARE_FINAL_TYPE (PortalAuthQrCode, portal_auth_qr_code, PORTAL_AUTH, QR_CODE, GObject)

PORTAL_AUTH_GLIB_API
PortalAuthQrCode *portal_auth_qr_code_new (const char *otpauth_url, GError **error);

PORTAL_AUTH_GLIB_API
int portal_auth_qr_code_get_side (PortalAuthQrCode *self);

PORTAL_AUTH_GLIB_API
GBytes *portal_auth_qr_code_get_modules (PortalAuthQrCode *self);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_qr_code_is_dark (PortalAuthQrCode *self, int row, int column);

PORTAL_AUTH_GLIB_API
GBytes *portal_auth_qr_code_to_png (PortalAuthQrCode *self, int scale, GError **error);

G_END_DECLS
