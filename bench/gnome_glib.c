/* GNOME contender gnome-glib: portal-auth-glib on a GMainLoop, as a GNOME app uses it: one
 * PortalAuthClient, each call as _async/_finish, completing on the thread-default main
 * context (the library's completion queue, watched by that context). The session is kept in
 * the keyring (the client's default storage). */
#include <portal-auth-glib.h>
#include <portal_auth.h>

#include "bench.h"
#include "gnome.h"

static PortalAuthClient *client;

static void setup(void) {
    portal_auth_options options;
    portal_auth_options_init(&options, sizeof options);
    bench_options(&options, PORTAL_AUTH_STORAGE_KEYRING);
    client = g_initable_new(PORTAL_AUTH_TYPE_CLIENT, NULL, NULL, "auth-environment-id", options.auth_environment_id,
                            "redirect-url", options.redirect_url, "api-host", options.api_host, NULL);
    if (!client) abort();
}

static void on_methods(GObject *source, GAsyncResult *result, gpointer pending) {
    PortalAuthMethods *methods = portal_auth_client_get_methods_finish(PORTAL_AUTH_CLIENT(source), result, NULL);
    const char *const *allowed = methods ? portal_auth_methods_get_allowed_auth_methods(methods) : NULL;
    gnome_end(pending, allowed && allowed[0]);
    g_clear_object(&methods);
}

static void on_result(GObject *source, GAsyncResult *result, gpointer pending) {
    PortalAuthResult *signed_in = portal_auth_client_handle_redirect_finish(PORTAL_AUTH_CLIENT(source), result, NULL);
    gnome_end(pending, signed_in && portal_auth_result_get_kind(signed_in) == PORTAL_AUTH_RESULT_KIND_AUTHENTICATED);
    g_clear_object(&signed_in);
}

static void on_session(GObject *source, GAsyncResult *result, gpointer pending) {
    PortalAuthSession *session = portal_auth_client_restore_session_finish(PORTAL_AUTH_CLIENT(source), result, NULL);
    gnome_end(pending, session && portal_auth_session_get_end_user_id(session) != NULL);
    g_clear_object(&session);
}

static void get_methods(gnome_done_fn done, gpointer data) {
    portal_auth_client_get_methods_async(client, NULL, on_methods, gnome_pend(done, data));
}

static void exchange(gnome_done_fn done, gpointer data) {
    char url[128];
    snprintf(url, sizeof url, "myapp://auth/callback?token=%s&authMethod=EMAIL_MAGIC_LINK", gnome_next_grant());
    portal_auth_client_handle_redirect_async(client, url, NULL, on_result, gnome_pend(done, data));
}

static void restore(gnome_done_fn done, gpointer data) {
    portal_auth_client_restore_session_async(client, NULL, on_session, gnome_pend(done, data));
}

const gnome_contender contender = { "gnome-glib", setup, get_methods, exchange, restore };
