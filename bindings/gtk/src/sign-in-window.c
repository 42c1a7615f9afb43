/* SignInWindow shows one page a step: restoring the session at start-up; signing in (a magic
 * link by email, Google or Apple in the system browser), each finished by the redirect the
 * app receives; the TOTP step (the enrollment QR code and its secret on the first sign-in,
 * and the code); and the signed-in user with a sign-out button. The page follows the
 * client's session-changed signal. Errors appear in the window, above the page.
 *
 * Every call takes the window's cancellable, cancelled when the window goes: a call still in
 * flight then reports G_IO_ERROR_CANCELLED to its callback, which touches nothing. */
#include "sign-in-window.h"

#include "qr-code-view.h"

struct _SignInWindow {
    GtkApplicationWindow parent_instance;
    PortalAuthClient *client;
    gboolean returns_by_scheme; /* the magic link comes back through the app's scheme */
    GCancellable *cancellable;
    PortalAuthResult *step; /* the TOTP step being answered */

    GtkWidget *error;
    GtkWidget *pages;
    GtkWidget *email;
    GtkWidget *sent;
    GtkWidget *qr_code;
    GtkWidget *totp_heading;
    GtkWidget *secret;
    GtkWidget *code;
    GtkWidget *user;
};

G_DEFINE_FINAL_TYPE (SignInWindow, sign_in_window, GTK_TYPE_APPLICATION_WINDOW)

/* A call cancelled because the window went: its callback must touch nothing. */
static gboolean
window_gone (GError *error)
{
    if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return FALSE;
    g_error_free (error);
    return TRUE;
}

/* The error of a call, in the window (which takes it); FALSE when there was none. */
static gboolean
shows_error (SignInWindow *self, GError *error)
{
    if (!error)
        return FALSE;
    gtk_label_set_text (GTK_LABEL (self->error), error->message);
    g_error_free (error);
    return TRUE;
}

static void
clear_error (SignInWindow *self)
{
    gtk_label_set_text (GTK_LABEL (self->error), "");
}

/* The page, and the window's title that names it. */
static void
show_page (SignInWindow *self, const char *page)
{
    static const struct { const char *page, *title; } titles[] = {
        { "restoring", "Restoring your session" },
        { "sign-in", "Sign in" },
        { "totp", "Two-factor authentication" },
        { "signed-in", "Your account" },
    };
    gtk_stack_set_visible_child_name (GTK_STACK (self->pages), page);
    for (gsize i = 0; i < G_N_ELEMENTS (titles); i++)
        if (strcmp (titles[i].page, page) == 0)
            gtk_window_set_title (GTK_WINDOW (self), titles[i].title);
}

/* The client's session changed: signed in, or out. */
/* The TOTP step is over: its code and secret leave the window. */
static void
forget_step (SignInWindow *self)
{
    g_clear_object (&self->step);
    qr_code_view_set_code (QR_CODE_VIEW (self->qr_code), NULL);
    gtk_label_set_text (GTK_LABEL (self->secret), "");
    gtk_editable_set_text (GTK_EDITABLE (self->code), "");
}

static void
on_session_changed (PortalAuthClient *client, PortalAuthSession *session, SignInWindow *self)
{
    (void) client;
    forget_step (self);
    if (!session) {
        show_page (self, "sign-in");
        return;
    }
    char *text = g_strdup_printf ("Signed in as %s", portal_auth_session_get_end_user_id (session));
    gtk_label_set_text (GTK_LABEL (self->user), text);
    g_free (text);
    show_page (self, "signed-in");
}

/* A TOTP step: its QR code and secret when this is the user's first sign-in, and the code. */
static void
show_step (SignInWindow *self, PortalAuthResult *step)
{
    g_set_object (&self->step, step);
    PortalAuthQrCode *code = portal_auth_result_get_totp_link (step) ? portal_auth_result_get_qr_code (step, NULL) : NULL;
    char *secret = portal_auth_result_get_totp_secret (step);
    qr_code_view_set_code (QR_CODE_VIEW (self->qr_code), code);
    gtk_widget_set_visible (self->qr_code, code != NULL);
    gtk_label_set_text (GTK_LABEL (self->totp_heading),
                        code ? "Scan this code with your authenticator app" : "Enter the code from your authenticator app");
    char *manual = secret ? g_strdup_printf ("Or enter this key: %s", secret) : NULL;
    gtk_label_set_text (GTK_LABEL (self->secret), manual ? manual : "");
    gtk_widget_set_visible (self->secret, secret != NULL);
    gtk_editable_set_text (GTK_EDITABLE (self->code), "");
    g_clear_object (&code);
    g_free (manual);
    if (secret)
        memset (secret, 0, strlen (secret));
    g_free (secret);
    show_page (self, "totp");
    gtk_widget_grab_focus (self->code);
}

/* A sign-in's result: a TOTP step to show (a signed-in user arrives by session-changed). */
static void
on_signed_in (SignInWindow *self, PortalAuthResult *result, GError *error)
{
    if (window_gone (error) || shows_error (self, error))
        return;
    if (result && portal_auth_result_get_kind (result) == PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED)
        show_step (self, result);
    g_clear_object (&result);
}

static void
on_restored (GObject *source, GAsyncResult *result, gpointer data)
{
    SignInWindow *self = data;
    GError *error = NULL;
    PortalAuthSession *session = portal_auth_client_restore_session_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    if (window_gone (error))
        return;
    /* A session arrived by session-changed; none, or a keyring that failed: sign in, unless
       a redirect the app was started with has moved on meanwhile. */
    gboolean still_restoring = g_strcmp0 (gtk_stack_get_visible_child_name (GTK_STACK (self->pages)), "restoring") == 0;
    if ((shows_error (self, error) || !session) && still_restoring)
        show_page (self, "sign-in");
    g_clear_object (&session);
}

/* At start-up: the session kept from the last run, with no network. */
void
sign_in_window_restore (SignInWindow *self)
{
    if (!self->client)
        return;
    portal_auth_client_restore_session_async (self->client, self->cancellable, on_restored, self);
}

static void
on_redirect (GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    PortalAuthResult *step = portal_auth_client_handle_redirect_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    on_signed_in (data, step, error);
}

/* A URL of the app's scheme, from GApplication's open: a magic link's or a provider's redirect. */
void
sign_in_window_handle_redirect (SignInWindow *self, const char *uri)
{
    if (!self->client)
        return;
    clear_error (self);
    portal_auth_client_handle_redirect_async (self->client, uri, self->cancellable, on_redirect, self);
}

static void
on_sent (GObject *source, GAsyncResult *result, gpointer data)
{
    SignInWindow *self = data;
    GError *error = NULL;
    portal_auth_client_send_magic_link_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    if (!window_gone (error))
        gtk_label_set_text (GTK_LABEL (self->sent),
                            shows_error (self, error) ? "" : "Check your inbox: the link in the email opens this app.");
}

/* The loopback magic link's end: the browser brought the link back to the library's listener. */
static void
on_magic_link (GObject *source, GAsyncResult *result, gpointer data)
{
    SignInWindow *self = data;
    GError *error = NULL;
    PortalAuthResult *step = portal_auth_client_sign_in_with_magic_link_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    if (window_gone (error))
        return;
    if (error)
        gtk_label_set_text (GTK_LABEL (self->sent), "");
    on_signed_in (self, step, error);
}

/* The magic link by email. Through the app's scheme, it is only sent: opening it opens this
   app (see sign_in_window_handle_redirect). With a loopback redirect URL, the library sends
   it and waits here for the browser the user opens it in, finishing the sign-in in this one
   call. */
static void
send_magic_link (GtkButton *button, SignInWindow *self)
{
    (void) button;
    clear_error (self);
    const char *email = gtk_editable_get_text (GTK_EDITABLE (self->email));
    if (self->returns_by_scheme) {
        gtk_label_set_text (GTK_LABEL (self->sent), "");
        portal_auth_client_send_magic_link_async (self->client, email, self->cancellable, on_sent, self);
        return;
    }
    gtk_label_set_text (GTK_LABEL (self->sent), "Check your inbox: open the link in this computer's browser.");
    portal_auth_client_sign_in_with_magic_link_async (self->client, email, 0, self->cancellable, on_magic_link, self);
}

static void
on_browser_opened (GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    gtk_show_uri_full_finish (GTK_WINDOW (source), result, &error);
    if (!window_gone (error))
        shows_error (data, error);
}

/* The provider's authorize URL, in the user's browser; the provider and Portal then send the
   browser to the redirect URL, which opens this app. */
static void
on_authorize_url (GObject *source, GAsyncResult *result, gpointer data, char *(*finish) (PortalAuthClient *, GAsyncResult *, GError **))
{
    SignInWindow *self = data;
    GError *error = NULL;
    char *url = finish (PORTAL_AUTH_CLIENT (source), result, &error);
    if (window_gone (error) || shows_error (self, error))
        return;
    gtk_show_uri_full (GTK_WINDOW (self), url, GDK_CURRENT_TIME, self->cancellable, on_browser_opened, self);
    g_free (url);
}

static void
on_google_url (GObject *source, GAsyncResult *result, gpointer data)
{
    on_authorize_url (source, result, data, portal_auth_client_login_with_google_finish);
}

static void
on_apple_url (GObject *source, GAsyncResult *result, gpointer data)
{
    on_authorize_url (source, result, data, portal_auth_client_login_with_apple_finish);
}

static void
sign_in_with_google (GtkButton *button, SignInWindow *self)
{
    (void) button;
    clear_error (self);
    portal_auth_client_login_with_google_async (self->client, self->cancellable, on_google_url, self);
}

static void
sign_in_with_apple (GtkButton *button, SignInWindow *self)
{
    (void) button;
    clear_error (self);
    portal_auth_client_login_with_apple_async (self->client, self->cancellable, on_apple_url, self);
}

static void
on_verified (GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    PortalAuthResult *signed_in = portal_auth_client_verify_totp_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    on_signed_in (data, signed_in, error);
}

static void
verify (GtkWidget *widget, SignInWindow *self)
{
    (void) widget;
    if (!self->step)
        return;
    clear_error (self);
    portal_auth_client_verify_totp_async (self->client, gtk_editable_get_text (GTK_EDITABLE (self->code)),
                                          portal_auth_result_get_user_jwt (self->step), self->cancellable, on_verified, self);
}

static void
on_signed_out (GObject *source, GAsyncResult *result, gpointer data)
{
    GError *error = NULL;
    portal_auth_client_clear_persisted_session_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    if (!window_gone (error))
        shows_error (data, error);
}

static void
sign_out (GtkButton *button, SignInWindow *self)
{
    (void) button;
    clear_error (self);
    portal_auth_client_clear_persisted_session_async (self->client, self->cancellable, on_signed_out, self);
}

/* A labelled entry's accessible name, for screen readers (and the tests, which find it so). */
static GtkWidget *
entry (const char *label, GtkInputPurpose purpose)
{
    GtkWidget *widget = gtk_entry_new ();
    gtk_entry_set_placeholder_text (GTK_ENTRY (widget), label);
    gtk_entry_set_input_purpose (GTK_ENTRY (widget), purpose);
    gtk_accessible_update_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
    return widget;
}

static GtkWidget *
button (const char *label, GCallback clicked, SignInWindow *self)
{
    GtkWidget *widget = gtk_button_new_with_label (label);
    g_signal_connect (widget, "clicked", clicked, self);
    return widget;
}

static GtkWidget *
page (GtkWidget *first, ...)
{
    GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
    gtk_widget_set_valign (box, GTK_ALIGN_CENTER);
    va_list children;
    va_start (children, first);
    for (GtkWidget *child = first; child; child = va_arg (children, GtkWidget *))
        gtk_box_append (GTK_BOX (box), child);
    va_end (children);
    return box;
}

static GtkWidget *
heading (const char *text)
{
    GtkWidget *label = gtk_label_new (text);
    gtk_widget_add_css_class (label, "title-2");
    return label;
}

static void
sign_in_window_init (SignInWindow *self)
{
    self->cancellable = g_cancellable_new ();
    gtk_window_set_default_size (GTK_WINDOW (self), 480, 640);

    /* An alert, which screen readers announce. */
    self->error = g_object_new (GTK_TYPE_LABEL, "accessible-role", GTK_ACCESSIBLE_ROLE_ALERT, NULL);
    gtk_label_set_wrap (GTK_LABEL (self->error), TRUE);
    gtk_widget_add_css_class (self->error, "error");

    self->email = entry ("Email address", GTK_INPUT_PURPOSE_EMAIL);
    g_signal_connect_swapped (self->email, "activate", G_CALLBACK (send_magic_link), self);
    self->sent = gtk_label_new ("");
    self->qr_code = qr_code_view_new ();
    self->totp_heading = heading ("Scan this code with your authenticator app");
    self->secret = gtk_label_new (NULL);
    gtk_label_set_selectable (GTK_LABEL (self->secret), TRUE);
    self->code = entry ("Authentication code", GTK_INPUT_PURPOSE_DIGITS);
    g_signal_connect (self->code, "activate", G_CALLBACK (verify), self);
    self->user = heading ("");

    GtkWidget *restoring = gtk_spinner_new ();
    gtk_spinner_start (GTK_SPINNER (restoring));
    self->pages = gtk_stack_new ();
    gtk_stack_add_named (GTK_STACK (self->pages), page (restoring, gtk_label_new ("Restoring your session…"), NULL), "restoring");
    gtk_stack_add_named (GTK_STACK (self->pages),
                         page (heading ("Sign in"), self->email, button ("Send magic link", G_CALLBACK (send_magic_link), self),
                               self->sent, gtk_separator_new (GTK_ORIENTATION_HORIZONTAL),
                               button ("Continue with Google", G_CALLBACK (sign_in_with_google), self),
                               button ("Continue with Apple", G_CALLBACK (sign_in_with_apple), self), NULL),
                         "sign-in");
    gtk_stack_add_named (GTK_STACK (self->pages),
                         page (self->totp_heading, self->qr_code, self->secret, self->code,
                               button ("Verify", G_CALLBACK (verify), self), NULL),
                         "totp");
    gtk_stack_add_named (GTK_STACK (self->pages), page (self->user, button ("Sign out", G_CALLBACK (sign_out), self), NULL),
                         "signed-in");
    gtk_widget_set_vexpand (self->pages, TRUE);
    show_page (self, "restoring");

    GtkWidget *content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
    gtk_widget_set_margin_top (content, 24);
    gtk_widget_set_margin_bottom (content, 24);
    gtk_widget_set_margin_start (content, 24);
    gtk_widget_set_margin_end (content, 24);
    gtk_box_append (GTK_BOX (content), self->error);
    gtk_box_append (GTK_BOX (content), self->pages);
    gtk_window_set_child (GTK_WINDOW (self), content);
}

static void
sign_in_window_dispose (GObject *object)
{
    SignInWindow *self = SIGN_IN_WINDOW (object);
    g_cancellable_cancel (self->cancellable);
    g_clear_object (&self->cancellable);
    g_clear_object (&self->step);
    g_clear_object (&self->client);
    G_OBJECT_CLASS (sign_in_window_parent_class)->dispose (object);
}

static void
sign_in_window_class_init (SignInWindowClass *klass)
{
    G_OBJECT_CLASS (klass)->dispose = sign_in_window_dispose;
}

GtkWidget *
sign_in_window_new (GtkApplication *application, PortalAuthClient *client, const GError *client_error,
                    gboolean returns_by_scheme)
{
    SignInWindow *self = g_object_new (SIGN_IN_TYPE_WINDOW, "application", application, NULL);
    self->returns_by_scheme = returns_by_scheme;
    if (!client) {
        /* No client: say why, on the sign-in page. */
        show_page (self, "sign-in");
        shows_error (self, g_error_copy (client_error));
        gtk_widget_set_sensitive (self->pages, FALSE);
        return GTK_WIDGET (self);
    }
    self->client = g_object_ref (client);
    g_signal_connect_object (client, "session-changed", G_CALLBACK (on_session_changed), self, 0);
    return GTK_WIDGET (self);
}
