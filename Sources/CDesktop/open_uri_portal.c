/* The OpenURI portal: see include/open_uri_portal.h. */
#include "open_uri_portal.h"
#include "bus_daemon.h"
#include "bus_wait.h"

#include <stdio.h>

#define TYPE(text) ((const GVariantType *)(text))

enum {
    CALL_TIMEOUT_MS = 5000,
    /* How long the portal may take to start the handler: it may first ask the user which
       application to use. */
    RESPONSE_TIMEOUT_MS = 120000
};

typedef struct {
    pa_bus_wait bus;
    int answered;
    guint32 response;   /* the Request's answer: 0 started, 1 cancelled by the user, 2 failed */
} open_wait;

static void on_response(GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
                        const gchar *signal, GVariant *parameters, gpointer data) {
    (void)connection, (void)sender, (void)path, (void)interface, (void)signal;
    open_wait *wait = data;
    if (wait->answered || wait->bus.ended || !g_variant_is_of_type(parameters, TYPE("(ua{sv})"))) return;
    GVariant *response = g_variant_get_child_value(parameters, 0);
    wait->response = g_variant_get_uint32(response);
    g_variant_unref(response);
    wait->answered = 1;
}

static guint subscribe(GDBusConnection *connection, const char *path, open_wait *wait) {
    return g_dbus_connection_signal_subscribe(connection, NULL, "org.freedesktop.portal.Request", "Response", path, NULL,
                                              G_DBUS_SIGNAL_FLAGS_NONE, on_response, wait, NULL);
}

/* The Request's answer is subscribed to before the call, on the path the portal makes of the
   caller's unique name and the token (a portal that answers at once is never missed), and
   waited for on the connection, which stays open meanwhile: the portal closes the requests
   of a caller that leaves, an app chooser it shows among them. */
int pa_portal_open_uri(const char *uri) {
    if (pa_secret_load_error()) return 0;
    open_wait wait = { .answered = 0, .response = 2 };
    pa_bus_wait_open(&wait.bus);
    GDBusConnection *connection = pa_session_bus_connect();
    int opened = 0;
    if (connection) {
        static int next_token;
        char token[32], sender[128], expected[256];
        snprintf(token, sizeof token, "portal_auth_%d", __atomic_add_fetch(&next_token, 1, __ATOMIC_RELAXED));
        /* ":1.42" is "1_42" in the path. */
        const char *unique = g_dbus_connection_get_unique_name(connection);
        snprintf(sender, sizeof sender, "%s", unique && unique[0] == ':' ? unique + 1 : "");
        for (char *at = sender; *at; at++)
            if (*at == '.') *at = '_';
        snprintf(expected, sizeof expected, "/org/freedesktop/portal/desktop/request/%s/%s", sender, token);
        guint subscription = subscribe(connection, expected, &wait);

        GVariantBuilder options;
        g_variant_builder_init(&options, TYPE("a{sv}"));
        g_variant_builder_add_value(&options, g_variant_new_dict_entry(g_variant_new_string("handle_token"),
                                                                       g_variant_new_variant(g_variant_new_string(token))));
        /* No parent window: the library knows none of the app's. */
        GVariant *arguments[3] = { g_variant_new_string(""), g_variant_new_string(uri), g_variant_builder_end(&options) };
        GVariant *reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
            "org.freedesktop.portal.OpenURI", "OpenURI", g_variant_new_tuple(arguments, 3), TYPE("(o)"),
            G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, NULL);
        if (reply) {
            GVariant *handle = g_variant_get_child_value(reply, 0);
            const char *path = g_variant_get_string(handle, NULL);
            if (strcmp(path, expected) != 0) {
                /* A portal older than handle_token: its own path, subscribed to now. */
                g_dbus_connection_signal_unsubscribe(connection, subscription);
                subscription = subscribe(connection, path, &wait);
            }
            g_variant_unref(handle);
            g_variant_unref(reply);
            pa_bus_wait_bound(&wait.bus, RESPONSE_TIMEOUT_MS, NULL);
            pa_bus_wait_until(&wait.bus, &wait.answered);
            opened = wait.response == 0;
        }
        g_dbus_connection_signal_unsubscribe(connection, subscription);
        g_dbus_connection_close_sync(connection, NULL, NULL);
        g_object_unref(connection);
    }
    /* A Response already queued must not run once `wait` is gone. */
    pa_bus_wait_close(&wait.bus, 1);
    return opened;
}
