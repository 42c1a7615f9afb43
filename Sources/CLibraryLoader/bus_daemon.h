/* A private connection to the session bus, and a call to the message bus itself
 * (org.freedesktop.DBus), for the C files that need them (application_bus.c,
 * open_uri_portal.c, secret_service.c, secret_portal_store.c). */
#ifndef PORTAL_AUTH_BUS_DAEMON_H
#define PORTAL_AUTH_BUS_DAEMON_H

#include "../CSecret/shim.h"

/* `method` with `arguments` (consumed), waiting up to `timeout_ms`: the reply's one value
   (g_variant_unref it), or NULL when the bus refused or did not answer. */
static inline GVariant *pa_bus_daemon_answer(GDBusConnection *connection, const char *method, GVariant *arguments,
                                             int timeout_ms) {
    GVariant *reply = g_dbus_connection_call_sync(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus", method, arguments, NULL,
                                                  G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, NULL);
    if (!reply) return NULL;
    GVariant *answer = g_variant_get_child_value(reply, 0);
    g_variant_unref(reply);
    return answer;
}

/* A connection of the caller's own, not the process's shared one (g_bus_get's, which ends the
   process when it closes): close and unref it when done. NULL when the session bus cannot be
   found or reached. */
static inline GDBusConnection *pa_session_bus_connect(void) {
    gchar *address = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!address) return NULL;
    GDBusConnection *connection = g_dbus_connection_new_for_address_sync(
        address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL,
        NULL, NULL);
    g_free(address);
    return connection;
}

#endif
