/* PortalAuthMethods: the sign-in methods an environment has enabled. */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#include <glib-object.h>

#include "portal-auth-visibility.h"

G_BEGIN_DECLS

#define PORTAL_AUTH_TYPE_METHODS (portal_auth_methods_get_type ())

PORTAL_AUTH_GLIB_API
G_DECLARE_FINAL_TYPE (PortalAuthMethods, portal_auth_methods, PORTAL_AUTH, METHODS, GObject)

PORTAL_AUTH_GLIB_API
const char *const *portal_auth_methods_get_allowed_auth_methods (PortalAuthMethods *self);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_methods_get_auto_create_wallet (PortalAuthMethods *self);

G_END_DECLS
