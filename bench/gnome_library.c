/* GNOME contender gnome-library: libportalauth on a GMainLoop, its completions through the
 * completion queue, whose descriptor the loop watches (g_unix_fd_add) and runs
 * (portal_auth_run_completions), as the C header's "Completion models" shows for GLib. The
 * session is kept in the keyring (the library's default storage). */
#include <portal_auth.h>

#include "bench.h"
#include "gnome.h"

#include <glib-unix.h>

static portal_auth *client;

static gboolean run_completions(gint fd, GIOCondition condition, gpointer data) {
    (void)fd; (void)condition; (void)data;
    portal_auth_run_completions();
    return G_SOURCE_CONTINUE;
}

static void setup(void) {
    portal_auth_options options;
    portal_auth_options_init(&options, sizeof options);
    bench_options(&options, PORTAL_AUTH_STORAGE_KEYRING);
    if (portal_auth_new(&options, &client, NULL) != PORTAL_AUTH_OK) abort();
    if (portal_auth_set_completion_queue(client, PORTAL_AUTH_TRUE) != PORTAL_AUTH_OK) abort();
    g_unix_fd_add(portal_auth_completion_fd(), G_IO_IN, run_completions, NULL);
}

static void on_methods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    gnome_end(user_data, !error && portal_auth_methods_count(methods) > 0);
}

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    gnome_end(user_data, !error && portal_auth_result_kind(result) == PORTAL_AUTH_RESULT_AUTHENTICATED);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    gnome_end(user_data, !error && portal_auth_session_end_user_id(session) != NULL); /* lent: not released */
}

static void get_methods(gnome_done_fn done, gpointer data) {
    if (portal_auth_get_methods(client, on_methods, gnome_pend(done, data), NULL) != PORTAL_AUTH_OK) abort();
}

static void exchange(gnome_done_fn done, gpointer data) {
    char url[128];
    snprintf(url, sizeof url, "myapp://auth/callback?token=%s&authMethod=EMAIL_MAGIC_LINK", gnome_next_grant());
    if (portal_auth_handle_redirect(client, url, on_result, gnome_pend(done, data), NULL) != PORTAL_AUTH_OK) abort();
}

static void restore(gnome_done_fn done, gpointer data) {
    if (portal_auth_restore_session(client, on_session, gnome_pend(done, data), NULL) != PORTAL_AUTH_OK) abort();
}

const gnome_contender contender = { "gnome-library", setup, get_methods, exchange, restore };
