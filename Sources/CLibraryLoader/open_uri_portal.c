/* The OpenURI portal: see include/open_uri_portal.h. */
#include "open_uri_portal.h"
#include "bus_daemon.h"

#define TYPE(text) ((const GVariantType *)(text))

enum { CALL_TIMEOUT_MS = 5000 };

int pa_portal_open_uri(const char *uri) {
    if (pa_secret_load_error()) return 0;
    GDBusConnection *connection = pa_session_bus_connect();
    if (!connection) return 0;
    GVariantBuilder options;
    g_variant_builder_init(&options, TYPE("a{sv}"));
    /* No parent window: the library knows none of the app's. */
    GVariant *arguments[3] = { g_variant_new_string(""), g_variant_new_string(uri), g_variant_builder_end(&options) };
    GVariant *reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.OpenURI",
        "OpenURI", g_variant_new_tuple(arguments, 3), TYPE("(o)"), G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, NULL);
    g_dbus_connection_close_sync(connection, NULL, NULL);
    g_object_unref(connection);
    if (!reply) return 0;
    g_variant_unref(reply);
    return 1;
}
