/* PortalAuthClient: a client of one auth environment, every call of the C library as
 * _async / _finish. */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#include <gio/gio.h>

#include "portal-auth-methods.h"
#include "portal-auth-result.h"
#include "portal-auth-session.h"
#include "portal-auth-visibility.h"

G_BEGIN_DECLS

/**
 * PortalAuthStorageKind:
 * @PORTAL_AUTH_STORAGE_KIND_KEYRING: The desktop keyring (Secret Service), the default.
 * @PORTAL_AUTH_STORAGE_KIND_MEMORY: This process only, forgotten at exit.
 * @PORTAL_AUTH_STORAGE_KIND_FILE: A plain file per application and environment (not
 *   encrypted), for machines with no keyring, in #PortalAuthClient:file-storage-path.
 *
 * Where a client keeps the session of its environment.
 */
typedef enum {
    PORTAL_AUTH_STORAGE_KIND_KEYRING = 0,
    PORTAL_AUTH_STORAGE_KIND_MEMORY = 1,
    PORTAL_AUTH_STORAGE_KIND_FILE = 3
} PortalAuthStorageKind;

#define PORTAL_AUTH_TYPE_CLIENT (portal_auth_client_get_type ())

PORTAL_AUTH_GLIB_API
G_DECLARE_FINAL_TYPE (PortalAuthClient, portal_auth_client, PORTAL_AUTH, CLIENT, GObject)

PORTAL_AUTH_GLIB_API
PortalAuthClient *portal_auth_client_new (const char *auth_environment_id, const char *redirect_url,
                                          GError **error);

PORTAL_AUTH_GLIB_API
PortalAuthSession *portal_auth_client_get_session (PortalAuthClient *self);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_client_get_prefers_ephemeral_web_browser_session (PortalAuthClient *self);

PORTAL_AUTH_GLIB_API
void portal_auth_client_set_prefers_ephemeral_web_browser_session (PortalAuthClient *self, gboolean prefers);

PORTAL_AUTH_GLIB_API
void portal_auth_client_get_methods_async (PortalAuthClient *self, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthMethods *portal_auth_client_get_methods_finish (PortalAuthClient *self, GAsyncResult *result,
                                                          GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_send_magic_link_async (PortalAuthClient *self, const char *email,
                                               GCancellable *cancellable, GAsyncReadyCallback callback,
                                               gpointer user_data);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_client_send_magic_link_finish (PortalAuthClient *self, GAsyncResult *result, GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_login_with_google_async (PortalAuthClient *self, GCancellable *cancellable,
                                                 GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
char *portal_auth_client_login_with_google_finish (PortalAuthClient *self, GAsyncResult *result, GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_login_with_apple_async (PortalAuthClient *self, GCancellable *cancellable,
                                                GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
char *portal_auth_client_login_with_apple_finish (PortalAuthClient *self, GAsyncResult *result, GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_sign_in_with_google_async (PortalAuthClient *self, int timeout_ms,
                                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                                   gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthResult *portal_auth_client_sign_in_with_google_finish (PortalAuthClient *self, GAsyncResult *result,
                                                                 GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_sign_in_with_apple_async (PortalAuthClient *self, int timeout_ms,
                                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                                  gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthResult *portal_auth_client_sign_in_with_apple_finish (PortalAuthClient *self, GAsyncResult *result,
                                                                GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_sign_in_with_magic_link_async (PortalAuthClient *self, const char *email, int timeout_ms,
                                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                                       gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthResult *portal_auth_client_sign_in_with_magic_link_finish (PortalAuthClient *self, GAsyncResult *result,
                                                                     GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_listen_for_redirects_async (PortalAuthClient *self, GCancellable *cancellable,
                                                    GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_client_listen_for_redirects_finish (PortalAuthClient *self, GAsyncResult *result,
                                                         GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_handle_redirect_async (PortalAuthClient *self, const char *url,
                                               GCancellable *cancellable, GAsyncReadyCallback callback,
                                               gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthResult *portal_auth_client_handle_redirect_finish (PortalAuthClient *self, GAsyncResult *result,
                                                             GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_verify_totp_async (PortalAuthClient *self, const char *code, const char *user_jwt,
                                           GCancellable *cancellable, GAsyncReadyCallback callback,
                                           gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthResult *portal_auth_client_verify_totp_finish (PortalAuthClient *self, GAsyncResult *result,
                                                         GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_restore_session_async (PortalAuthClient *self, GCancellable *cancellable,
                                               GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
PortalAuthSession *portal_auth_client_restore_session_finish (PortalAuthClient *self, GAsyncResult *result,
                                                              GError **error);

PORTAL_AUTH_GLIB_API
void portal_auth_client_clear_persisted_session_async (PortalAuthClient *self, GCancellable *cancellable,
                                                       GAsyncReadyCallback callback, gpointer user_data);

PORTAL_AUTH_GLIB_API
gboolean portal_auth_client_clear_persisted_session_finish (PortalAuthClient *self, GAsyncResult *result,
                                                            GError **error);

G_END_DECLS
