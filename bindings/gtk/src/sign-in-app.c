/* SignInApp makes the app's one PortalAuthClient at start-up, shows the window (which
 * restores the session), and receives the redirect URLs of sign-ins: the app is the
 * handler of its redirect URL's scheme (its .desktop file's MimeType), so the desktop starts
 * it with the URL, and GApplication passes that URL to the instance already running, whose
 * `open` completes the sign-in. */
#include "sign-in-app.h"

#include <portal-auth-glib.h>

#include "sign-in-window.h"

/* Your auth environment: replace these with your own. The redirect URL's scheme is the one
   the .desktop file's MimeType names, allow-listed for the environment at Portal; a loopback
   URL (http://127.0.0.1:PORT/callback, allow-listed too) instead has the magic link finish
   in the library's listener, with no scheme handler. The
   PORTAL_AUTH_EXAMPLE_* environment variables override them (the tests point the app at the
   local emulator that way). */
#define AUTH_ENVIRONMENT_ID "YOUR_AUTH_ENVIRONMENT_ID"
#define SCHEME "io.portalhq.signinexample"
#define REDIRECT_URL SCHEME "://auth/callback"
#define MAGIC_LINK_FROM_EMAIL "hello@auth.example.com"
#define MAGIC_LINK_TEMPLATE_ID "YOUR_TEMPLATE_ID"

struct _SignInApp {
    GtkApplication parent_instance;
    PortalAuthClient *client;
    GError *client_error; /* shown in the window when the client could not be made */
    gboolean returns_by_scheme; /* the redirect URL is of SCHEME, which this app handles */
};

G_DEFINE_FINAL_TYPE (SignInApp, sign_in_app, GTK_TYPE_APPLICATION)

static const char *
setting (const char *variable, const char *fallback)
{
    const char *value = g_getenv (variable);
    return value && *value ? value : fallback;
}

static void
quit (GSimpleAction *action, GVariant *parameter, gpointer app)
{
    (void) action;
    (void) parameter;
    g_application_quit (G_APPLICATION (app));
}

static void
sign_in_app_startup (GApplication *application)
{
    SignInApp *self = SIGN_IN_APP (application);
    G_APPLICATION_CLASS (sign_in_app_parent_class)->startup (application);
    const char *redirect_url = setting ("PORTAL_AUTH_EXAMPLE_REDIRECT_URL", REDIRECT_URL);
    self->returns_by_scheme = g_strcmp0 (g_uri_peek_scheme (redirect_url), SCHEME) == 0;
    self->client = g_initable_new (PORTAL_AUTH_TYPE_CLIENT, NULL, &self->client_error,
                                   "auth-environment-id", setting ("PORTAL_AUTH_EXAMPLE_ENVIRONMENT_ID", AUTH_ENVIRONMENT_ID),
                                   "redirect-url", redirect_url,
                                   "api-host", g_getenv ("PORTAL_AUTH_EXAMPLE_API_HOST"), /* NULL: api.portalhq.io */
                                   "magic-link-from-email", MAGIC_LINK_FROM_EMAIL,
                                   "magic-link-template-id", setting ("PORTAL_AUTH_EXAMPLE_TEMPLATE_ID", MAGIC_LINK_TEMPLATE_ID),
                                   /* The keyring item is this app's own, named as its desktop file. */
                                   "application-id", g_application_get_application_id (application),
                                   NULL);
    const GActionEntry actions[] = { { .name = "quit", .activate = quit } };
    g_action_map_add_action_entries (G_ACTION_MAP (self), actions, G_N_ELEMENTS (actions), self);
    gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.quit", (const char *[]){ "<Control>q", NULL });
}

/* The window, made and restoring the session the first time. */
static SignInWindow *
window_of (SignInApp *self)
{
    GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));
    if (!window) {
        window = GTK_WINDOW (sign_in_window_new (GTK_APPLICATION (self), self->client, self->client_error, self->returns_by_scheme));
        sign_in_window_restore (SIGN_IN_WINDOW (window));
    }
    gtk_window_present (window);
    return SIGN_IN_WINDOW (window);
}

static void
sign_in_app_activate (GApplication *application)
{
    window_of (SIGN_IN_APP (application));
}

static void
sign_in_app_open (GApplication *application, GFile **files, int count, const char *hint)
{
    (void) hint;
    SignInWindow *window = window_of (SIGN_IN_APP (application));
    for (int i = 0; i < count; i++) {
        char *uri = g_file_get_uri (files[i]);
        sign_in_window_handle_redirect (window, uri);
        g_free (uri);
    }
}

static void
sign_in_app_shutdown (GApplication *application)
{
    SignInApp *self = SIGN_IN_APP (application);
    /* The client's dispose cancels what it has not sent and ends its waits. */
    g_clear_object (&self->client);
    g_clear_error (&self->client_error);
    G_APPLICATION_CLASS (sign_in_app_parent_class)->shutdown (application);
}

static void
sign_in_app_class_init (SignInAppClass *klass)
{
    GApplicationClass *application_class = G_APPLICATION_CLASS (klass);
    application_class->startup = sign_in_app_startup;
    application_class->activate = sign_in_app_activate;
    application_class->open = sign_in_app_open;
    application_class->shutdown = sign_in_app_shutdown;
}

static void
sign_in_app_init (SignInApp *self)
{
    (void) self;
}

SignInApp *
sign_in_app_new (void)
{
    return g_object_new (SIGN_IN_TYPE_APP, "application-id", "io.portalhq.SignInExample", "flags",
                         G_APPLICATION_HANDLES_OPEN, NULL);
}
