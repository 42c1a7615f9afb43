/* C tests of portal-auth-glib against the Portal emulator in PORTAL_AUTH_TEST_API_HOST, inside
 * a private keyring, under valgrind (scripts/test-glib.sh): a magic-link sign-in with TOTP
 * enrollment on a GMainLoop (the QR code's modules, its PNG read back by zbarimg, the
 * secret), the session-changed signal and the session property on sign-in, restore,
 * replay, sign-out and invalidation; completions on the caller's thread-default context,
 * also on a second thread's context at the same time, and calls started on a thread with no
 * context of its own that complete on the main thread before their start has returned; cancellation before and after the
 * request is sent (the session persisted all the same); the PORTAL_AUTH_ERROR domain with
 * its fields; the reasons of a refused TOTP code, a step expired by the server's clock, a used
 * link and no browser (with its URL), the reasons' names and sentences, the typed-code
 * helper; dispose ending a browser sign-in's wait and releasing its port at once; the
 * library's log lines on g_log. Waits by iterating main contexts, never by sleeping; a wait
 * that outlasts 60 s fails. */
#define _GNU_SOURCE
#include "test_support.h"
#include "paused_start.h"

#include <portal-auth-glib.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* Iterates the thread-default context until `*done`; false when 60 s passed first. */
static gboolean
timed_out (gpointer flag)
{
    *(gboolean *) flag = TRUE;
    return G_SOURCE_REMOVE;
}

/* Iterates the thread's context until *done is non-zero (a flag, or a count of signals), or
   60 s have passed: whether it is. */
static int
iterate_until (const gboolean *done)
{
    GMainContext *context = g_main_context_ref_thread_default ();
    gboolean expired = FALSE;
    GSource *timer = g_timeout_source_new_seconds (60);
    g_source_set_callback (timer, timed_out, &expired, NULL);
    g_source_attach (timer, context);
    while (!*done && !expired)
        g_main_context_iteration (context, TRUE);
    g_source_destroy (timer);
    g_source_unref (timer);
    g_main_context_unref (context);
    return *done;
}

/* A call's result, kept by its callback with the thread it ran on. */
typedef struct {
    gboolean done;
    GAsyncResult *result;
    GObject *source;
    GThread *thread;
} Ready;

static void
on_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
    Ready *ready = user_data;
    ready->result = g_object_ref (result);
    ready->source = source;
    ready->thread = g_thread_self ();
    ready->done = TRUE;
}

static GAsyncResult *
wait_ready (Ready *ready)
{
    CHECK (iterate_until (&ready->done));
    return ready->result;
}

static void
clear_ready (Ready *ready)
{
    g_clear_object (&ready->result);
    *ready = (Ready){ 0 };
}

/* session-changed, counted. */
typedef struct {
    int emitted;
    PortalAuthSession *last; /* unowned, compared only */
} Changes;

static void
on_session_changed (PortalAuthClient *client, PortalAuthSession *session, gpointer user_data)
{
    Changes *changes = user_data;
    CHECK (portal_auth_client_get_session (client) == session);
    changes->emitted++;
    changes->last = session;
}

static char environment[64];

/* A fresh environment at the emulator, with or without TOTP, also allowing `loopback` as a
   redirect URL. */
static void
new_environment (const char *loopback, gboolean totp)
{
    static int count;
    snprintf (environment, sizeof environment, "env-glib-%d-%d", (int) getpid (), ++count);
    char json[512], answer[256];
    snprintf (json, sizeof json,
              "{\"id\":\"%s\",\"allowedMethods\":[\"EMAIL_MAGIC_LINK\",\"GOOGLE\",\"APPLE\"],"
              "\"redirectUrls\":[\"myapp://auth/callback\",\"%s\"],\"totpRequired\":%s,"
              "\"accountAbstraction\":false,\"autoCreateWallet\":true}",
              environment, loopback, totp ? "true" : "false");
    emulator_request ("/_emulator/environments", json, answer, sizeof answer);
}

static PortalAuthClient *
new_client (const char *redirect_url, PortalAuthStorageKind storage)
{
    GError *error = NULL;
    PortalAuthClient *client = g_initable_new (
        PORTAL_AUTH_TYPE_CLIENT, NULL, &error, "auth-environment-id", environment, "redirect-url", redirect_url,
        "api-host", getenv ("PORTAL_AUTH_TEST_API_HOST"), "magic-link-from-email", "hello@auth.example.com",
        "magic-link-template-id", "tmpl", "storage", storage, NULL);
    CHECK (client != NULL && error == NULL);
    if (!client)
        abort ();
    return client;
}

/* The log audit: the library's lines through g_log, appended as glib<TAB>level<TAB>message. */
static int glib_lines;

static GLogWriterOutput
audit_writer (GLogLevelFlags level, const GLogField *fields, gsize count, gpointer user_data)
{
    (void) user_data;
    const char *domain = NULL, *message = NULL;
    for (gsize i = 0; i < count; i++) {
        if (strcmp (fields[i].key, "GLIB_DOMAIN") == 0)
            domain = fields[i].value;
        else if (strcmp (fields[i].key, "MESSAGE") == 0)
            message = fields[i].value;
    }
    if (domain && strcmp (domain, "PortalAuth") == 0 && message) {
        g_atomic_int_inc (&glib_lines);
        if (audit_log_fd >= 0) {
            char *line = g_strdup_printf ("glib\t%d\t%s\n", (int) level, message);
            if (write (audit_log_fd, line, strlen (line)) < 0) { /* the audit then finds it missing */ }
            g_free (line);
        }
        if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
            CHECK (!"the library logs nothing at error or critical");
        return G_LOG_WRITER_HANDLED;
    }
    return g_log_writer_default (level, fields, count, user_data);
}

/* What zbarimg reads from a PNG. */
static char *
zbar_decode (GBytes *png)
{
    char *path = NULL;
    int fd = g_file_open_tmp ("portal-auth-glib-qr-XXXXXX.png", &path, NULL);
    gsize length = 0;
    const void *data = g_bytes_get_data (png, &length);
    if (fd < 0 || write (fd, data, length) != (ssize_t) length)
        abort ();
    close (fd);
    char *argv[] = { "zbarimg", "--raw", "-q", "-Sbinary", path, NULL };
    char *out = NULL;
    g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, NULL, NULL);
    unlink (path);
    g_free (path);
    return out;
}

static void
test_errors (void)
{
    GError *error = NULL;
    CHECK (portal_auth_client_new ("  ", "myapp://auth/callback", &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INVALID_ARGUMENT));
    CHECK (g_strcmp0 (portal_auth_error_get_name (error), "auth_environment_id") == 0);
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_NONE);
    /* A copy keeps the fields. */
    GError *copy = g_error_copy (error);
    CHECK (g_strcmp0 (portal_auth_error_get_name (copy), "auth_environment_id") == 0);
    g_clear_error (&copy);
    g_clear_error (&error);
    CHECK (portal_auth_error_get_name (NULL) == NULL && portal_auth_error_get_http_status (NULL) == 0);
    CHECK (portal_auth_error_get_retry_after (NULL) == -1);

    /* A CA file that is not there: refused at initialization, by its C name. */
    PortalAuthClient *untrusting = g_initable_new (PORTAL_AUTH_TYPE_CLIENT, NULL, &error, "auth-environment-id", environment,
                                                   "redirect-url", "myapp://auth/callback", "ca-file",
                                                   "/nonexistent/company-ca.pem", NULL);
    CHECK (untrusting == NULL && g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INVALID_ARGUMENT));
    CHECK (g_strcmp0 (portal_auth_error_get_name (error), "ca_file") == 0);
    CHECK (portal_auth_error_get_retry_after (error) == -1);
    g_clear_error (&error);

    /* The application id: checked at initialization, kept as given. */
    PortalAuthClient *named = g_initable_new (PORTAL_AUTH_TYPE_CLIENT, NULL, &error, "auth-environment-id", environment,
                                              "redirect-url", "myapp://auth/callback", "application-id", "not an id", NULL);
    CHECK (named == NULL && g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INVALID_ARGUMENT));
    CHECK (g_strcmp0 (portal_auth_error_get_name (error), "application_id") == 0);
    g_clear_error (&error);
    named = g_initable_new (PORTAL_AUTH_TYPE_CLIENT, NULL, &error, "auth-environment-id", environment, "redirect-url",
                            "myapp://auth/callback", "application-id", "io.portalhq.GlibTest", NULL);
    CHECK (named != NULL && error == NULL);
    char *application_id = NULL;
    if (named)
        g_object_get (named, "application-id", &application_id, NULL);
    CHECK (g_strcmp0 (application_id, "io.portalhq.GlibTest") == 0);
    g_free (application_id);
    g_clear_object (&named);

    /* A client never initialized, and a refused argument, answer through the callback. */
    PortalAuthClient *bare = g_object_new (PORTAL_AUTH_TYPE_CLIENT, "auth-environment-id", environment, NULL);
    Ready ready = { 0 };
    portal_auth_client_get_methods_async (bare, NULL, on_ready, &ready);
    CHECK (!ready.done); /* never inside the starting call */
    CHECK (portal_auth_client_get_methods_finish (bare, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED));
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (bare);

    PortalAuthClient *client = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY);
    portal_auth_client_handle_redirect_async (client, "myapp://auth/callback?token=\xff", NULL, on_ready, &ready);
    CHECK (!ready.done);
    CHECK (portal_auth_client_handle_redirect_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INVALID_ARGUMENT));
    CHECK (g_strcmp0 (portal_auth_error_get_name (error), "url") == 0);
    g_clear_error (&error);
    clear_ready (&ready);

    /* Errors from the library carry their fields: a method the environment lacks... */
    char answer[256];
    emulator_request ("/_emulator/faults",
                      "{\"path\":\"/oauth/urls\",\"kind\":\"status\",\"status\":503,\"body\":\"{\\\"error\\\":\\\"down\\\"}\","
                      "\"retryAfter\":\"120\"}",
                      answer, sizeof answer);
    portal_auth_client_login_with_google_async (client, NULL, on_ready, &ready);
    CHECK (portal_auth_client_login_with_google_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_HTTP_STATUS));
    CHECK (portal_auth_error_get_http_status (error) == 503);
    CHECK (g_strcmp0 (portal_auth_error_get_body (error), "{\"error\":\"down\"}") == 0);
    CHECK (portal_auth_error_get_retry_after (error) == 120);
    copy = g_error_copy (error);
    CHECK (portal_auth_error_get_retry_after (copy) == 120);
    g_clear_error (&copy);
    g_clear_error (&error);
    clear_ready (&ready);
    /* ...and a reason: a browser sign-in needs a loopback redirect URL. */
    portal_auth_client_sign_in_with_google_async (client, 0, NULL, on_ready, &ready);
    CHECK (portal_auth_client_sign_in_with_google_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_REDIRECT_NOT_LOOPBACK);
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (client);

    /* A network failure says which: nothing listens on port 1. */
    PortalAuthClient *unreachable = g_initable_new (PORTAL_AUTH_TYPE_CLIENT, NULL, &error, "auth-environment-id",
                                                    environment, "redirect-url", "myapp://auth/callback", "api-host",
                                                    "http://127.0.0.1:1", "storage", PORTAL_AUTH_STORAGE_KIND_MEMORY, NULL);
    CHECK (unreachable != NULL && error == NULL);
    portal_auth_client_get_methods_async (unreachable, NULL, on_ready, &ready);
    CHECK (portal_auth_client_get_methods_finish (unreachable, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_NETWORK));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_CONNECTION_REFUSED);
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (unreachable);
}

/* The first magic-link sign-in of a new user, to the end: TOTP enrollment, then verified. */
static void
test_magic_link_with_totp (void)
{
    PortalAuthClient *client = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_KEYRING);
    Changes changes = { 0 };
    g_signal_connect (client, "session-changed", G_CALLBACK (on_session_changed), &changes);
    GError *error = NULL;
    Ready ready = { 0 };

    portal_auth_client_get_methods_async (client, NULL, on_ready, &ready);
    PortalAuthMethods *methods = portal_auth_client_get_methods_finish (client, wait_ready (&ready), &error);
    CHECK (methods != NULL && ready.thread == g_thread_self () && ready.source == G_OBJECT (client));
    const char *const *allowed = methods ? portal_auth_methods_get_allowed_auth_methods (methods) : NULL;
    CHECK (allowed && g_strv_length ((char **) allowed) == 3 && g_strcmp0 (allowed[0], "EMAIL_MAGIC_LINK") == 0);
    CHECK (methods && portal_auth_methods_get_auto_create_wallet (methods));
    g_clear_object (&methods);
    clear_ready (&ready);

    const char *email = "glib-ada@example.com";
    portal_auth_client_send_magic_link_async (client, email, NULL, on_ready, &ready);
    CHECK (portal_auth_client_send_magic_link_finish (client, wait_ready (&ready), &error) && error == NULL);
    clear_ready (&ready);
    char path[256], answer[4096], link[1024];
    snprintf (path, sizeof path, "/_emulator/outbox?email=%s", email);
    emulator_request (path, NULL, answer, sizeof answer);
    json_string (answer, "link", link, sizeof link);
    CHECK (g_str_has_prefix (link, "myapp://auth/callback?"));

    portal_auth_client_handle_redirect_async (client, link, NULL, on_ready, &ready);
    PortalAuthResult *step = portal_auth_client_handle_redirect_finish (client, wait_ready (&ready), &error);
    clear_ready (&ready);
    CHECK (step && portal_auth_result_get_kind (step) == PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED);
    if (!step)
        abort ();
    CHECK (portal_auth_result_get_session (step) == NULL && changes.emitted == 0);
    const char *totp_link = portal_auth_result_get_totp_link (step);
    CHECK (g_str_has_prefix (totp_link, "otpauth://totp/"));
    char *secret = portal_auth_result_get_totp_secret (step);
    CHECK (secret && strlen (secret) >= 16 && strspn (secret, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567=") == strlen (secret));
    CHECK (secret && strstr (totp_link, secret) != NULL);
    g_free (secret);

    /* The QR code: its modules agree with is_dark, and its PNG reads back as the link. */
    PortalAuthQrCode *code = portal_auth_result_get_qr_code (step, &error);
    CHECK (code != NULL && error == NULL);
    int side = portal_auth_qr_code_get_side (code);
    gsize length = 0;
    const guint8 *bits = g_bytes_get_data (portal_auth_qr_code_get_modules (code), &length);
    CHECK (side >= 29 && length == (gsize) side * ((gsize) (side + 7) / 8));
    int agree = 1, dark = 0;
    for (int row = 0; row < side; row++)
        for (int column = 0; column < side; column++) {
            int bit = bits[(gsize) row * ((gsize) (side + 7) / 8) + (gsize) column / 8] >> (7 - column % 8) & 1;
            agree &= bit == portal_auth_qr_code_is_dark (code, row, column);
            dark += bit;
        }
    CHECK (agree && dark > 0 && !portal_auth_qr_code_is_dark (code, -1, 0) && !portal_auth_qr_code_is_dark (code, side, 0));
    GBytes *png = portal_auth_qr_code_to_png (code, 6, &error);
    char *decoded = png ? zbar_decode (png) : NULL;
    CHECK (decoded && strcmp (decoded, totp_link) == 0);
    g_free (decoded);
    g_clear_pointer (&png, g_bytes_unref);
    CHECK (portal_auth_qr_code_to_png (code, 0, &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE));
    CHECK (error && strstr (error->message, "scale must be a whole number of pixels a module from 1 to ") != NULL);
    g_clear_error (&error);
    g_clear_object (&code);
    CHECK (portal_auth_qr_code_new ("https://example.com/", &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE));
    g_clear_error (&error);

    /* The step expires ten minutes after the sign-in, by its userJwt. */
    gint64 now = g_get_real_time () / G_USEC_PER_SEC, expires_at = 0;
    g_object_get (step, "totp-expires-at", &expires_at, NULL);
    CHECK (expires_at >= now + 590 && expires_at <= now + 601);
    CHECK (portal_auth_result_get_totp_expires_at (step) == expires_at);

    /* A wrong code is UNAUTHORIZED and rejected, for the same step again; the right one,
       typed as the app shows it and tidied, signs in. */
    char query[256], totp[64];
    snprintf (query, sizeof query, "/_emulator/totp?environmentId=%s&email=%s", environment, email);
    emulator_request (query, NULL, answer, sizeof answer);
    json_string (answer, "code", totp, sizeof totp);
    char wrong[16];
    snprintf (wrong, sizeof wrong, "%06d", (atoi (totp) + 500000) % 1000000);
    portal_auth_client_verify_totp_async (client, wrong, portal_auth_result_get_user_jwt (step), NULL, on_ready, &ready);
    CHECK (portal_auth_client_verify_totp_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_UNAUTHORIZED) && changes.emitted == 0);
    CHECK (portal_auth_error_get_http_status (error) == 401);
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_TOTP_CODE_REJECTED);
    CHECK (portal_auth_error_get_url (error) == NULL);
    g_clear_error (&error);
    clear_ready (&ready);
    emulator_request (query, NULL, answer, sizeof answer); /* the code of now, should the 30 s have turned */
    json_string (answer, "code", totp, sizeof totp);
    char *typed = g_strdup_printf ("%.3s %s", totp, totp + 3);
    char *tidied = portal_auth_normalize_totp_code (typed);
    CHECK (g_strcmp0 (tidied, totp) == 0);
    portal_auth_client_verify_totp_async (client, tidied ? tidied : "", portal_auth_result_get_user_jwt (step), NULL, on_ready,
                                          &ready);
    g_free (tidied);
    g_free (typed);
    PortalAuthResult *signed_in = portal_auth_client_verify_totp_finish (client, wait_ready (&ready), &error);
    clear_ready (&ready);
    CHECK (signed_in && portal_auth_result_get_kind (signed_in) == PORTAL_AUTH_RESULT_KIND_AUTHENTICATED);
    if (!signed_in)
        abort ();
    PortalAuthSession *session = portal_auth_result_get_session (signed_in);
    CHECK (session && changes.emitted == 1 && changes.last == session && portal_auth_client_get_session (client) == session);
    CHECK (g_str_has_prefix (portal_auth_session_get_end_user_id (session), "eu_"));
    CHECK (g_str_has_prefix (portal_auth_result_get_client_id (signed_in), "cl_"));
    CHECK (portal_auth_result_get_is_account_abstracted (signed_in) == PORTAL_AUTH_TRISTATE_FALSE);
    char *token = portal_auth_session_get_token (session, &error);
    CHECK (token && strlen (token) > 16 && error == NULL);
    g_free (token);

    /* The same redirect again replays the step; a second client restores the session. */
    portal_auth_client_handle_redirect_async (client, link, NULL, on_ready, &ready);
    PortalAuthResult *replayed = portal_auth_client_handle_redirect_finish (client, wait_ready (&ready), &error);
    clear_ready (&ready);
    CHECK (replayed && portal_auth_result_get_session (replayed) == session && changes.emitted == 2);
    g_clear_object (&replayed);
    /* From a client that never saw it, the link is used: request a new one. */
    PortalAuthClient *stranger = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY);
    portal_auth_client_handle_redirect_async (stranger, link, NULL, on_ready, &ready);
    CHECK (portal_auth_client_handle_redirect_finish (stranger, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_UNAUTHORIZED));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_LINK_USED);
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (stranger);

    PortalAuthClient *next_launch = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_KEYRING);
    Changes restored = { 0 };
    g_signal_connect (next_launch, "session-changed", G_CALLBACK (on_session_changed), &restored);
    portal_auth_client_restore_session_async (next_launch, NULL, on_ready, &ready);
    PortalAuthSession *again = portal_auth_client_restore_session_finish (next_launch, wait_ready (&ready), &error);
    clear_ready (&ready);
    CHECK (again && restored.emitted == 1 && restored.last == again);
    CHECK (again && strcmp (portal_auth_session_get_end_user_id (again), portal_auth_session_get_end_user_id (session)) == 0);

    /* Invalidating the restored session tells the client that handed it out, and only it. */
    portal_auth_session_invalidate_async (again, NULL, on_ready, &ready);
    CHECK (portal_auth_session_invalidate_finish (again, wait_ready (&ready), &error) && error == NULL);
    clear_ready (&ready);
    CHECK (restored.emitted == 2 && restored.last == NULL && portal_auth_client_get_session (next_launch) == NULL);
    CHECK (changes.emitted == 2);
    /* Sessions of one token share their state: the first one is invalidated too. */
    CHECK (portal_auth_session_get_token (session, &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SESSION_INVALIDATED));
    g_clear_error (&error);
    g_clear_object (&again);

    /* Signing out: nothing is stored afterwards. */
    portal_auth_client_clear_persisted_session_async (client, NULL, on_ready, &ready);
    CHECK (portal_auth_client_clear_persisted_session_finish (client, wait_ready (&ready), &error));
    clear_ready (&ready);
    CHECK (changes.emitted == 3 && changes.last == NULL && portal_auth_client_get_session (client) == NULL);
    portal_auth_client_restore_session_async (next_launch, NULL, on_ready, &ready);
    CHECK (portal_auth_client_restore_session_finish (next_launch, wait_ready (&ready), &error) == NULL && error == NULL);
    clear_ready (&ready);
    CHECK (restored.emitted == 2); /* it had no session, and still has none */

    g_object_unref (signed_in);
    g_object_unref (step);
    g_object_unref (next_launch);
    g_object_unref (client);
}

/* The GLib reasons are the C library's: the same numbers, and each GEnumValue names its reason
   as the C library does, with its sentence for the user from there too. */
#define SAME(glib, c) G_STATIC_ASSERT ((int) (glib) == (int) (c))
SAME (PORTAL_AUTH_ERROR_REASON_CLIENT_CLOSED, PORTAL_AUTH_REASON_CLIENT_CLOSED);
SAME (PORTAL_AUTH_ERROR_REASON_LINK_USED, PORTAL_AUTH_REASON_LINK_USED);
SAME (PORTAL_AUTH_ERROR_REASON_TOTP_CODE_REJECTED, PORTAL_AUTH_REASON_TOTP_CODE_REJECTED);
SAME (PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED, PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED);

static void
test_reason_names (void)
{
    GEnumClass *reasons = g_type_class_ref (PORTAL_AUTH_TYPE_ERROR_REASON);
    int named = 0, agree = 1;
    for (guint i = 0; i < reasons->n_values; i++) {
        const GEnumValue *value = &reasons->values[i];
        const char *name = portal_auth_reason_name (value->value);
        const char *sentence = portal_auth_error_reason_get_user_message (value->value);
        if (value->value == PORTAL_AUTH_ERROR_REASON_NONE) {
            agree &= name == NULL && sentence == NULL;
            continue;
        }
        char *value_name = g_strconcat ("PORTAL_AUTH_ERROR_REASON_", name, NULL);
        char *nick = g_ascii_strdown (name ? name : "", -1);
        g_strdelimit (nick, "_", '-');
        agree &= name && strcmp (value->value_name, value_name) == 0 && strcmp (value->value_nick, nick) == 0;
        agree &= sentence && sentence == portal_auth_reason_user_message (value->value) && g_str_has_suffix (sentence, ".");
        g_free (value_name);
        g_free (nick);
        named++;
    }
    /* As many as the library names, so that a reason it has and the enum lacks fails here. */
    int known = 0;
    for (portal_auth_reason number = 1; number < 1000; number++)
        known += portal_auth_reason_name (number) != NULL;
    CHECK (agree && named == known && known > 20);
    const GEnumValue *link_used = g_enum_get_value (reasons, PORTAL_AUTH_ERROR_REASON_LINK_USED);
    CHECK (link_used && strcmp (link_used->value_nick, "link-used") == 0);
    g_type_class_unref (reasons);
    CHECK (g_strcmp0 (portal_auth_error_reason_get_user_message (PORTAL_AUTH_ERROR_REASON_KEYRING_LOCKED),
                      "Your keyring is locked. Unlock it, then try again.") == 0);
    CHECK (portal_auth_error_reason_get_user_message ((PortalAuthErrorReason) 999) == NULL);

    char *code = portal_auth_normalize_totp_code (" 123-456\n");
    CHECK (g_strcmp0 (code, "123456") == 0);
    g_free (code);
    CHECK (portal_auth_normalize_totp_code ("12345") == NULL && portal_auth_normalize_totp_code ("12a456") == NULL);
    CHECK (portal_auth_normalize_totp_code ("12\xff" "456") == NULL && portal_auth_normalize_totp_code (NULL) == NULL);
}

/* The emulator's clock, offset by `seconds` for what it issues. */
static void
clock_offset (int seconds)
{
    char json[64], answer[512];
    snprintf (json, sizeof json, "{\"clockOffsetSeconds\":%d}", seconds);
    emulator_request ("/_emulator/control", json, answer, sizeof answer);
}

/* Eleven minutes after a TOTP step, by the server's clock (its answers' Date): expired, though
   this machine's clock has not moved, so even the right code fails, with the reason that says
   to sign in again. */
static void
test_expired_step (void)
{
    PortalAuthClient *client = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY);
    GError *error = NULL;
    Ready ready = { 0 };
    char url[1024], query[256], answer[512], totp[64];
    grant_redirect (environment, "glib-late@example.com", url, sizeof url);
    portal_auth_client_handle_redirect_async (client, url, NULL, on_ready, &ready);
    PortalAuthResult *step = portal_auth_client_handle_redirect_finish (client, wait_ready (&ready), &error);
    clear_ready (&ready);
    CHECK (step && portal_auth_result_get_kind (step) == PORTAL_AUTH_RESULT_KIND_TOTP_REQUIRED);
    if (!step)
        abort ();
    gint64 expires_at = portal_auth_result_get_totp_expires_at (step);
    CHECK (expires_at > g_get_real_time () / G_USEC_PER_SEC);
    clock_offset (660);
    snprintf (query, sizeof query, "/_emulator/totp?environmentId=%s&email=glib-late%%40example.com", environment);
    emulator_request (query, NULL, answer, sizeof answer);
    json_string (answer, "code", totp, sizeof totp);
    portal_auth_client_verify_totp_async (client, totp, portal_auth_result_get_user_jwt (step), NULL, on_ready, &ready);
    CHECK (portal_auth_client_verify_totp_finish (client, wait_ready (&ready), &error) == NULL);
    clock_offset (0);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_UNAUTHORIZED));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED);
    /* A copy keeps the reason. */
    GError *copy = g_error_copy (error);
    CHECK (portal_auth_error_get_reason (copy) == PORTAL_AUTH_ERROR_REASON_TOTP_STEP_EXPIRED);
    g_clear_error (&copy);
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (step);
    g_object_unref (client);
}

/* No browser to open ($BROWSER fails, no xdg-open on $PATH): the browser sign-in fails at once
   with NO_BROWSER, and the error carries the URL to show the user. */
static void
test_no_browser (void)
{
    int port = free_port ();
    char redirect[64];
    snprintf (redirect, sizeof redirect, "http://127.0.0.1:%d/callback", port);
    new_environment (redirect, FALSE);
    char *browser = g_strdup (g_getenv ("BROWSER")), *path = g_strdup (g_getenv ("PATH"));
    char *nowhere = g_dir_make_tmp ("portal-auth-glib-path-XXXXXX", NULL);
    g_setenv ("BROWSER", "/bin/false", TRUE);
    g_setenv ("PATH", nowhere, TRUE);
    PortalAuthClient *client = new_client (redirect, PORTAL_AUTH_STORAGE_KIND_MEMORY);
    GError *error = NULL;
    Ready ready = { 0 };
    portal_auth_client_sign_in_with_google_async (client, 0, NULL, on_ready, &ready);
    CHECK (portal_auth_client_sign_in_with_google_finish (client, wait_ready (&ready), &error) == NULL);
    g_setenv ("BROWSER", browser, TRUE);
    g_setenv ("PATH", path, TRUE);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_NO_BROWSER);
    const char *url = portal_auth_error_get_url (error);
    CHECK (url && strstr (url, "/oauth/google/authorize?state=") != NULL);
    CHECK (error && url && strstr (error->message, url) == NULL);
    GError *copy = g_error_copy (error);
    CHECK (g_strcmp0 (portal_auth_error_get_url (copy), url) == 0);
    g_clear_error (&copy);
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (client);
    rmdir (nowhere);
    g_free (nowhere);
    g_free (browser);
    g_free (path);
}

/* Two contexts with calls in flight at once, one on another thread: each call returns on the
   context of the thread that made it, whichever of them ran the queue. */
typedef struct {
    PortalAuthClient *client;
    Ready ready;
    int ok;
} Worker;

static gpointer
work_on_own_context (gpointer data)
{
    Worker *worker = data;
    GMainContext *context = g_main_context_new ();
    g_main_context_push_thread_default (context);
    portal_auth_client_get_methods_async (worker->client, NULL, on_ready, &worker->ready);
    if (iterate_until (&worker->ready.done)) {
        PortalAuthMethods *methods = portal_auth_client_get_methods_finish (worker->client, worker->ready.result, NULL);
        worker->ok = methods != NULL && worker->ready.thread == g_thread_self ();
        g_clear_object (&methods);
    }
    clear_ready (&worker->ready);
    g_main_context_pop_thread_default (context);
    g_main_context_unref (context);
    return NULL;
}

static void
test_contexts (void)
{
    PortalAuthClient *client = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY);
    Worker worker = { .client = client };
    Ready here = { 0 };
    portal_auth_client_get_methods_async (client, NULL, on_ready, &here);
    GThread *thread = g_thread_new ("glib-test-worker", work_on_own_context, &worker);
    PortalAuthMethods *methods = portal_auth_client_get_methods_finish (client, wait_ready (&here), NULL);
    CHECK (methods != NULL && here.thread == g_thread_self ());
    g_clear_object (&methods);
    clear_ready (&here);
    g_thread_join (thread);
    CHECK (worker.ok);
    g_object_unref (client);
}

/* Calls made from a thread that has no thread-default context, while the main thread runs the
   global default one, each paused (paused_start.h) after the library has signalled the queue
   until the main thread has run it: each call completes there while its _async function is
   still starting it. Its object is owned until the start is done, so none is written or
   read once freed (valgrind), and each returns once, on the main thread. Foreign redirects
   complete in the run that starts them, with no request. */
enum { PAUSED_STARTS = 20 };

static gboolean pausing_redirects;

portal_auth_code
portal_auth_handle_redirect (portal_auth *client, const char *url, portal_auth_result_fn done, void *user_data,
                             portal_auth_call **out_call)
{
    static portal_auth_code (*real) (portal_auth *, const char *, portal_auth_result_fn, void *, portal_auth_call **);
    if (!real)
        *(void **) &real = real_function ("portal_auth_handle_redirect");
    pause_starts (g_atomic_int_get (&pausing_redirects));
    portal_auth_code code = real (client, url, done, user_data, out_call);
    pause_starts (0);
    return code;
}

typedef struct {
    PortalAuthClient *client;
    int completed; /* atomic */
    int wrong;     /* atomic: a result, an error or another thread */
    GThread *main_thread;
} Starter;

static void
on_foreign_redirect (GObject *source, GAsyncResult *result, gpointer user_data)
{
    Starter *starter = user_data;
    GError *error = NULL;
    PortalAuthResult *handled = portal_auth_client_handle_redirect_finish (PORTAL_AUTH_CLIENT (source), result, &error);
    if (handled || error || g_thread_self () != starter->main_thread)
        g_atomic_int_inc (&starter->wrong);
    g_clear_object (&handled);
    g_clear_error (&error);
    g_atomic_int_inc (&starter->completed);
}

static gpointer
start_foreign_redirects (gpointer data)
{
    Starter *starter = data;
    for (int i = 0; i < PAUSED_STARTS; i++)
        portal_auth_client_handle_redirect_async (starter->client, "https://elsewhere.example/callback?token=x", NULL,
                                                  on_foreign_redirect, starter);
    return NULL;
}

static void
test_calls_completing_while_they_start (void)
{
    Starter starter = { .client = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY),
                        .main_thread = g_thread_self () };
    g_atomic_int_set (&pausing_redirects, TRUE);
    GThread *thread = g_thread_new ("glib-test-starter", start_foreign_redirects, &starter);
    gboolean expired = FALSE;
    GSource *timer = g_timeout_source_new_seconds (60);
    g_source_set_callback (timer, timed_out, &expired, NULL);
    g_source_attach (timer, NULL);
    while (g_atomic_int_get (&starter.completed) < PAUSED_STARTS && !expired)
        g_main_context_iteration (NULL, TRUE);
    g_source_destroy (timer);
    g_source_unref (timer);
    g_thread_join (thread);
    g_atomic_int_set (&pausing_redirects, FALSE);
    CHECK (g_atomic_int_get (&starter.completed) == PAUSED_STARTS);
    CHECK (g_atomic_int_get (&starter.wrong) == 0);
    g_object_unref (starter.client);
}

/* Cancelling: before the request is sent, and after, when the exchange still completes and
   persists its session, and the task reports G_IO_ERROR_CANCELLED. */
static void
test_cancellation (void)
{
    new_environment ("http://127.0.0.1:8765/callback", FALSE); /* no TOTP: the grant signs in */
    PortalAuthClient *client = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY);
    Changes changes = { 0 };
    g_signal_connect (client, "session-changed", G_CALLBACK (on_session_changed), &changes);
    GError *error = NULL;
    Ready ready = { 0 };
    GCancellable *cancelled = g_cancellable_new ();
    g_cancellable_cancel (cancelled);
    portal_auth_client_get_methods_async (client, cancelled, on_ready, &ready);
    CHECK (portal_auth_client_get_methods_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (cancelled);

    /* The emulator holds the grant exchange once it has it: cancel then. (Its count starts
       from nothing here, so that it counts this exchange, which may leave only when the
       library goes on with it: this thread does not run the completion queue meanwhile.) */
    char url[512], answer[256];
    grant_redirect (environment, "glib-cancel@example.com", url, sizeof url);
    clear_requests ();
    emulator_request ("/_emulator/faults", "{\"path\":\"/magic-links/validations\",\"kind\":\"hold\"}", answer, sizeof answer);
    GCancellable *cancellable = g_cancellable_new ();
    portal_auth_client_handle_redirect_async (client, url, cancellable, on_ready, &ready);
    emulator_request ("/_emulator/wait?path=/magic-links/validations&count=1&timeout=30", NULL, answer, sizeof answer);
    CHECK (strstr (answer, "\"count\"") != NULL);
    g_cancellable_cancel (cancellable);
    emulator_request ("/_emulator/release", "{}", answer, sizeof answer);
    CHECK (portal_auth_client_handle_redirect_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
    g_clear_error (&error);
    clear_ready (&ready);
    g_object_unref (cancellable);
    /* The grant was spent: the session was persisted, and the client says so. */
    CHECK (changes.emitted == 1 && changes.last != NULL);
    PortalAuthClient *other = new_client ("myapp://auth/callback", PORTAL_AUTH_STORAGE_KIND_MEMORY);
    portal_auth_client_restore_session_async (other, NULL, on_ready, &ready);
    PortalAuthSession *restored = portal_auth_client_restore_session_finish (other, wait_ready (&ready), &error);
    clear_ready (&ready);
    CHECK (restored && changes.last
           && strcmp (portal_auth_session_get_end_user_id (restored), portal_auth_session_get_end_user_id (changes.last)) == 0);
    g_clear_object (&restored);
    g_object_unref (other);
    g_object_unref (client);
}

/* Whether 127.0.0.1:port can be bound now. */
static int
port_free (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    /* As the library's listener binds: a connection it served and closed (TIME_WAIT) leaves
       the port free for the next listener, a listening socket does not. */
    int on = 1;
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    address.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    int bound = bind (fd, (struct sockaddr *) &address, sizeof address) == 0;
    int in_use = !bound && errno == EADDRINUSE;
    close (fd);
    return bound ? 1 : in_use ? 0 : -1;
}

/* The browser of the test: $BROWSER writes the URL into a FIFO, which tells the test the
   sign-in's listener is up (the opener runs once it answers). */
static gboolean
on_opened (gint fd, GIOCondition condition, gpointer user_data)
{
    (void) condition;
    char drained[4096];
    while (read (fd, drained, sizeof drained) > 0) { }
    *(gboolean *) user_data = TRUE;
    return G_SOURCE_REMOVE;
}

static void
set_flag (gpointer flag)
{
    *(gboolean *) flag = TRUE;
}

static void
test_dispose_ends_the_wait (const char *fifo)
{
    int port = free_port ();
    char redirect[64];
    snprintf (redirect, sizeof redirect, "http://127.0.0.1:%d/callback", port);
    new_environment (redirect, TRUE);

    for (int by_cancelling = 0; by_cancelling < 2; by_cancelling++) {
        /* Opened afresh: once a writer has come and gone, a FIFO reads as hung up for good. */
        int watched = open (fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        CHECK (watched >= 0);
        PortalAuthClient *client = new_client (redirect, PORTAL_AUTH_STORAGE_KIND_MEMORY);
        GCancellable *cancellable = g_cancellable_new ();
        gboolean opened = FALSE;
        g_unix_fd_add (watched, G_IO_IN, on_opened, &opened);
        Ready ready = { 0 };
        portal_auth_client_sign_in_with_google_async (client, 0, cancellable, on_ready, &ready);
        CHECK (iterate_until (&opened));
        CHECK (port_free (port) == 0 && !ready.done);
        GError *error = NULL;
        if (by_cancelling) {
            g_cancellable_cancel (cancellable);
            CHECK (portal_auth_client_sign_in_with_google_finish (client, wait_ready (&ready), &error) == NULL);
            CHECK (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
            CHECK (port_free (port) == 1);
            g_object_unref (client);
        } else {
            /* The last reference goes while the sign-in waits: dispose ends it, and the call
               returns with the client as its source, finalized once the call is done. */
            gboolean finalized = FALSE;
            g_object_set_data_full (G_OBJECT (client), "finalized", &finalized, set_flag);
            g_object_unref (client);
            CHECK (!finalized);
            PortalAuthClient *source = PORTAL_AUTH_CLIENT (g_async_result_get_source_object (wait_ready (&ready)));
            CHECK (source == client && ready.source == G_OBJECT (client));
            CHECK (port_free (port) == 1);
            CHECK (portal_auth_client_sign_in_with_google_finish (source, ready.result, &error) == NULL);
            CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SIGN_IN_CLOSED));
            /* A disposed client refuses new calls through their callback. */
            Ready refused = { 0 };
            portal_auth_client_get_methods_async (source, NULL, on_ready, &refused);
            GError *closed = NULL;
            CHECK (portal_auth_client_get_methods_finish (source, wait_ready (&refused), &closed) == NULL);
            CHECK (g_error_matches (closed, G_IO_ERROR, G_IO_ERROR_CLOSED));
            g_clear_error (&closed);
            clear_ready (&refused);
            g_object_unref (source);
            clear_ready (&ready);
            CHECK (finalized);
        }
        g_clear_error (&error);
        clear_ready (&ready);
        g_object_unref (cancellable);
        close (watched);
    }
}

/* The last email to `email`, once `count` were sent: its link. */
static void
mailed_link (const char *email, int count, char *link, size_t size)
{
    char path[256], answer[4096];
    snprintf (path, sizeof path, "/_emulator/outbox?email=%s&count=%d&timeout=30", email, count);
    emulator_request (path, NULL, answer, sizeof answer);
    json_string (answer, "link", link, size);
}

/* The user's browser opening a link, on a thread of its own: the HTTP status it got. */
static gpointer
browse (gpointer url)
{
    CURL *easy = curl_easy_init ();
    long status = 0;
    curl_easy_setopt (easy, CURLOPT_URL, (const char *) url);
    curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, append_body);
    char body[4096] = "";
    response_body page = { body, sizeof body };
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, &page);
    if (curl_easy_perform (easy) == CURLE_OK)
        curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (easy);
    return GINT_TO_POINTER ((int) status);
}

/* The loopback magic link: the link the browser opens finishes the call; disposed while it
   waits, the wait ends at once and its port is free. */
static void
test_magic_link_loopback (void)
{
    int port = free_port ();
    char redirect[64], link[1024];
    snprintf (redirect, sizeof redirect, "http://127.0.0.1:%d/callback", port);
    new_environment (redirect, FALSE);
    PortalAuthClient *client = new_client (redirect, PORTAL_AUTH_STORAGE_KIND_MEMORY);
    Changes changes = { 0 };
    g_signal_connect (client, "session-changed", G_CALLBACK (on_session_changed), &changes);
    Ready ready = { 0 };
    GError *error = NULL;
    portal_auth_client_sign_in_with_magic_link_async (client, "glib-loopback@example.com", 0, NULL, on_ready, &ready);
    mailed_link ("glib-loopback%40example.com", 1, link, sizeof link);
    CHECK (g_str_has_prefix (link, redirect) && !ready.done);
    GThread *browser = g_thread_new ("browser", browse, link);
    PortalAuthResult *result = portal_auth_client_sign_in_with_magic_link_finish (client, wait_ready (&ready), &error);
    CHECK (GPOINTER_TO_INT (g_thread_join (browser)) == 200);
    CHECK (result && portal_auth_result_get_kind (result) == PORTAL_AUTH_RESULT_KIND_AUTHENTICATED && error == NULL);
    CHECK (result && changes.emitted == 1 && changes.last == portal_auth_result_get_session (result));
    CHECK (port_free (port) == 1);
    g_clear_object (&result);
    clear_ready (&ready);
    /* A blank address: refused through the callback. */
    portal_auth_client_sign_in_with_magic_link_async (client, " ", 0, NULL, on_ready, &ready);
    CHECK (portal_auth_client_sign_in_with_magic_link_finish (client, wait_ready (&ready), &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_INVALID_ARGUMENT));
    g_clear_error (&error);
    clear_ready (&ready);

    portal_auth_client_sign_in_with_magic_link_async (client, "glib-disposed@example.com", 0, NULL, on_ready, &ready);
    mailed_link ("glib-disposed%40example.com", 1, link, sizeof link);
    CHECK (port_free (port) == 0);
    g_object_unref (client);
    CHECK (port_free (port) == 1); /* released by dispose itself */
    GAsyncResult *closed = wait_ready (&ready);
    CHECK (portal_auth_client_sign_in_with_magic_link_finish (PORTAL_AUTH_CLIENT (ready.source), closed, &error) == NULL);
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SIGN_IN_CLOSED));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_CLIENT_CLOSED);
    g_clear_error (&error);
    clear_ready (&ready);
}

/* redirect-forwarded, kept. */
typedef struct {
    int emitted;
    PortalAuthResultKind kind; /* of the last result; -1 for none */
    GError *error;
} Forwarded;

static void
on_redirect_forwarded (PortalAuthClient *client, PortalAuthResult *result, GError *error, gpointer user_data)
{
    (void) client;
    Forwarded *forwarded = user_data;
    forwarded->emitted++;
    forwarded->kind = result ? portal_auth_result_get_kind (result) : (PortalAuthResultKind) -1;
    g_clear_error (&forwarded->error);
    forwarded->error = error ? g_error_copy (error) : NULL;
}

/* What portal_auth_forward_redirect answered, from its library thread. */
typedef struct {
    gboolean done;
    portal_auth_forward_result outcome;
} Forwarding;

static gboolean
forwarding_done (gpointer forwarding)
{
    ((Forwarding *) forwarding)->done = TRUE;
    return G_SOURCE_REMOVE;
}

static void
on_forward (void *user_data, portal_auth_forward_result outcome, const portal_auth_error *error)
{
    Forwarding *forwarding = user_data;
    CHECK (error == NULL);
    forwarding->outcome = outcome;
    g_main_context_invoke (NULL, forwarding_done, forwarding);
}

/* As the application's next instance would: hands `url` to the one listening. */
static portal_auth_forward_result
forward (const char *url)
{
    portal_auth_options options = emulator_options (environment);
    options.application_id = "io.portalhq.GlibTest";
    Forwarding forwarding = { 0 };
    CHECK (portal_auth_forward_redirect (&options, url, on_forward, &forwarding) == PORTAL_AUTH_OK);
    CHECK (iterate_until (&forwarding.done));
    return forwarding.outcome;
}

static PortalAuthClient *
new_listener (void)
{
    GError *error = NULL;
    PortalAuthClient *client = g_initable_new (
        PORTAL_AUTH_TYPE_CLIENT, NULL, &error, "auth-environment-id", environment, "redirect-url", "myapp://auth/callback",
        "api-host", getenv ("PORTAL_AUTH_TEST_API_HOST"), "magic-link-from-email", "hello@auth.example.com",
        "magic-link-template-id", "tmpl", "storage", PORTAL_AUTH_STORAGE_KIND_MEMORY, "application-id",
        "io.portalhq.GlibTest", NULL);
    CHECK (client != NULL && error == NULL);
    if (!client)
        abort ();
    return client;
}

/* Listening: a forwarded magic link signs in; one listener per channel; dispose ends it and
   frees the channel; the cancellable ends it too. */
static void
test_listening (void)
{
    new_environment ("http://127.0.0.1:8765/callback", FALSE);
    PortalAuthClient *client = new_listener ();
    Forwarded forwarded = { 0 };
    Changes changes = { 0 };
    g_signal_connect (client, "redirect-forwarded", G_CALLBACK (on_redirect_forwarded), &forwarded);
    g_signal_connect (client, "session-changed", G_CALLBACK (on_session_changed), &changes);
    Ready listening = { 0 }, ready = { 0 };
    GError *error = NULL;
    portal_auth_client_listen_for_redirects_async (client, NULL, on_ready, &listening);

    portal_auth_client_send_magic_link_async (client, "glib-forwarded@example.com", NULL, on_ready, &ready);
    CHECK (portal_auth_client_send_magic_link_finish (client, wait_ready (&ready), &error));
    clear_ready (&ready);
    char link[1024];
    mailed_link ("glib-forwarded%40example.com", 1, link, sizeof link);
    CHECK (forward (link) == PORTAL_AUTH_FORWARD_TAKEN);
    /* An iteration may end with nothing dispatched (a wake-up): wait for the signal itself. */
    CHECK (iterate_until (&forwarded.emitted));
    CHECK (forwarded.emitted == 1 && forwarded.kind == PORTAL_AUTH_RESULT_KIND_AUTHENTICATED && forwarded.error == NULL);
    CHECK (changes.emitted == 1 && portal_auth_client_get_session (client) != NULL);
    CHECK (forward ("https://example.com/elsewhere?token=x") == PORTAL_AUTH_FORWARD_REFUSED);

    /* Another client of the application listening meanwhile: the channel is taken. */
    PortalAuthClient *second = new_listener ();
    portal_auth_client_listen_for_redirects_async (second, NULL, on_ready, &ready);
    CHECK (!portal_auth_client_listen_for_redirects_finish (second, wait_ready (&ready), &error));
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SIGN_IN_UNAVAILABLE));
    CHECK (portal_auth_error_get_reason (error) == PORTAL_AUTH_ERROR_REASON_CHANNEL_IN_USE);
    g_clear_error (&error);
    clear_ready (&ready);

    /* Disposed: listening ends as closed, and the channel is free for the next client. */
    g_object_unref (client);
    GAsyncResult *ended = wait_ready (&listening);
    CHECK (!portal_auth_client_listen_for_redirects_finish (PORTAL_AUTH_CLIENT (listening.source), ended, &error));
    CHECK (g_error_matches (error, PORTAL_AUTH_ERROR, PORTAL_AUTH_ERROR_SIGN_IN_CLOSED));
    g_clear_error (&error);
    clear_ready (&listening);
    GCancellable *cancellable = g_cancellable_new ();
    Forwarded next = { 0 };
    g_signal_connect (second, "redirect-forwarded", G_CALLBACK (on_redirect_forwarded), &next);
    portal_auth_client_listen_for_redirects_async (second, cancellable, on_ready, &listening);
    CHECK (forward ("myapp://auth/callback") == PORTAL_AUTH_FORWARD_TAKEN);
    CHECK (iterate_until (&next.emitted));
    CHECK (next.emitted == 1 && (int) next.kind == -1 && next.error == NULL); /* no grant: nothing to handle */
    g_cancellable_cancel (cancellable);
    CHECK (!portal_auth_client_listen_for_redirects_finish (second, wait_ready (&listening), &error));
    CHECK (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
    g_clear_error (&error);
    clear_ready (&listening);
    CHECK (forward ("myapp://auth/callback") == PORTAL_AUTH_FORWARD_NO_INSTANCE);
    g_clear_error (&forwarded.error);
    g_object_unref (cancellable);
    g_object_unref (second);
}

int
main (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
    g_log_set_writer_func (audit_writer, NULL, NULL);
    new_environment ("http://127.0.0.1:8765/callback", TRUE);

    /* The test's browser: a script that hands the URL to a FIFO. */
    char *folder = g_dir_make_tmp ("portal-auth-glib-XXXXXX", NULL);
    char *fifo = g_build_filename (folder, "opened", NULL);
    char *browser = g_build_filename (folder, "browser", NULL);
    char *script = g_strdup_printf ("#!/bin/sh\nprintf '%%s\\n' \"$1\" > '%s'\n", fifo);
    CHECK (mkfifo (fifo, 0600) == 0 && g_file_set_contents (browser, script, -1, NULL) && chmod (browser, 0700) == 0);
    g_setenv ("BROWSER", browser, TRUE);

    test_errors ();
    test_reason_names ();
    test_magic_link_with_totp ();
    test_expired_step ();
    test_contexts ();
    test_calls_completing_while_they_start ();
    test_cancellation ();
    test_dispose_ends_the_wait (fifo);
    test_magic_link_loopback ();
    test_no_browser ();
    test_listening ();
    CHECK (g_atomic_int_get (&glib_lines) > 0);

    unlink (fifo);
    unlink (browser);
    rmdir (folder);
    g_free (script);
    g_free (browser);
    g_free (fifo);
    g_free (folder);
    curl_global_cleanup ();
    return report ("client_test");
}
