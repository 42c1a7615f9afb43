/* PortalAuthSession: a signed-in user, persisted by the client that signed them in. */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#include <gio/gio.h>

#include "portal-auth-visibility.h"

G_BEGIN_DECLS

#define PORTAL_AUTH_TYPE_SESSION (portal_auth_session_get_type ())

PORTAL_AUTH_GLIB_API
G_DECLARE_FINAL_TYPE (PortalAuthSession, portal_auth_session, PORTAL_AUTH, SESSION, GObject)

PORTAL_AUTH_GLIB_API
const char *portal_auth_session_get_end_user_id (PortalAuthSession *self);

PORTAL_AUTH_GLIB_API
char *portal_auth_session_get_token (PortalAuthSession *self, GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_session_invalidate_async (PortalAuthSession *self, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_session_invalidate_finish (PortalAuthSession *self, GAsyncResult *result, GError **error);

G_END_DECLS
