/* SignInWindow: the app's one window, a page for each step of signing in. */
#pragma once

#include <gtk/gtk.h>
#include <portal-auth-glib.h>

G_BEGIN_DECLS

#define SIGN_IN_TYPE_WINDOW (sign_in_window_get_type ())
G_DECLARE_FINAL_TYPE (SignInWindow, sign_in_window, SIGN_IN, WINDOW, GtkApplicationWindow)

/* `returns_by_scheme`: the redirect URL is of the app's own scheme, so a magic link comes
   back through GApplication's open; else it is loopback, and the library's listener takes it. */
GtkWidget *sign_in_window_new (GtkApplication *application, PortalAuthClient *client, const GError *client_error,
                               gboolean returns_by_scheme);
void sign_in_window_restore (SignInWindow *self);
void sign_in_window_handle_redirect (SignInWindow *self, const char *uri);

G_END_DECLS
