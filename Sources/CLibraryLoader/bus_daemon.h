/* A call to the message bus itself (org.freedesktop.DBus), for the C files that need one
 * (application_bus.c, secret_service.c). */
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

#endif
