/* The application's name on the session bus: see include/application_bus.h. */
#include "application_bus.h"
#include "bus_daemon.h"
#include "loader.h"
#include "../CSecret/shim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The interface the desktop calls (the Desktop Entry Specification's D-Bus activation). */
static const char introspection[] =
    "<node><interface name='org.freedesktop.Application'>"
    "<method name='Activate'><arg type='a{sv}' name='platform_data' direction='in'/></method>"
    "<method name='Open'><arg type='as' name='uris' direction='in'/>"
    "<arg type='a{sv}' name='platform_data' direction='in'/></method>"
    "<method name='ActivateAction'><arg type='s' name='action_name' direction='in'/>"
    "<arg type='av' name='parameter' direction='in'/><arg type='a{sv}' name='platform_data' direction='in'/></method>"
    "</interface></node>";

typedef enum { STARTING, OWNED, NOT_OWNED } ownership;

struct pa_application_bus {
    char *name;
    char *path;
    pa_application_bus_open_fn open;
    void *context;
    pthread_t thread;
    GMainContext *main_context;
    _Atomic int stopping;
    /* Under `lock`: the start's outcome, for pa_application_bus_start to wait on. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    ownership owned;
    char why[256];
};

static void on_method(GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
                      const gchar *method, GVariant *parameters, GDBusMethodInvocation *invocation, gpointer data) {
    (void)connection;
    (void)sender;
    (void)path;
    (void)interface;
    pa_application_bus *bus = data;
    /* GDBus has checked the arguments against the introspection data. */
    if (strcmp(method, "Open") == 0) {
        GVariant *uris = g_variant_get_child_value(parameters, 0);
        for (gsize i = 0; i < g_variant_n_children(uris); i++) {
            GVariant *uri = g_variant_get_child_value(uris, i);
            bus->open(bus->context, g_variant_get_string(uri, NULL));
            g_variant_unref(uri);
        }
        g_variant_unref(uris);
    }
    g_dbus_method_invocation_return_value(invocation, NULL);
}

static const GDBusInterfaceVTable vtable = { on_method, NULL, NULL, { 0 } };

static void settle(pa_application_bus *bus, ownership owned, const char *why) {
    pthread_mutex_lock(&bus->lock);
    bus->owned = owned;
    if (why) snprintf(bus->why, sizeof bus->why, "%s", why);
    pthread_cond_broadcast(&bus->changed);
    pthread_mutex_unlock(&bus->lock);
}


/* The bus's answer (a uint32) to its method `method` with `arguments` (a tuple, taken),
   within 5 s; 0 when none came. RequestName and ReleaseName are made so, synchronously, so
   that the name is owned when the start returns and free when the stop does. */
static guint32 bus_call(GDBusConnection *connection, const char *method, GVariant *arguments) {
    GVariant *answer = pa_bus_daemon_answer(connection, method, arguments, 5000);
    if (!answer) return 0;
    guint32 value = g_variant_get_uint32(answer);
    g_variant_unref(answer);
    return value;
}

enum { DO_NOT_QUEUE = 4, PRIMARY_OWNER = 1 };

static guint32 request_name(GDBusConnection *connection, const char *name) {
    GVariant *arguments[2] = { g_variant_new_string(name), g_variant_new_uint32(DO_NOT_QUEUE) };
    return bus_call(connection, "RequestName", g_variant_new_tuple(arguments, 2));
}

static void release_name(GDBusConnection *connection, const char *name) {
    GVariant *argument = g_variant_new_string(name);
    bus_call(connection, "ReleaseName", g_variant_new_tuple(&argument, 1));
}

/* The bus's thread: its main context dispatches the calls. */
static void *serve(void *data) {
    pa_application_bus *bus = data;
    g_main_context_push_thread_default(bus->main_context);
    /* Its own connection: its objects and names are the library's alone (a host's
       GApplication has its own), and its end does not end the process. */
    GDBusConnection *connection = pa_session_bus_connect();
    GDBusNodeInfo *node = connection ? g_dbus_node_info_new_for_xml(introspection, NULL) : NULL;
    /* Served before the name is owned: a call the bus held for the name (an activation)
       finds the object. */
    guint registration = node ? g_dbus_connection_register_object(connection, bus->path, node->interfaces[0], &vtable,
                                                                  bus, NULL, NULL) : 0;
    if (!connection) {
        settle(bus, NOT_OWNED, "the session bus could not be reached");
    } else if (!registration) {
        settle(bus, NOT_OWNED, "the application's object could not be served");
    } else if (request_name(connection, bus->name) != PRIMARY_OWNER) {
        settle(bus, NOT_OWNED, "another process owns the name on the session bus");
    } else {
        settle(bus, OWNED, NULL);
        while (!atomic_load(&bus->stopping)) g_main_context_iteration(bus->main_context, TRUE);
        /* The name first, so that no call is routed here once the object is gone. */
        release_name(connection, bus->name);
    }
    if (registration) g_dbus_connection_unregister_object(connection, registration);
    /* What GDBus left for this context is done before it goes. */
    while (g_main_context_iteration(bus->main_context, FALSE)) {}
    if (connection) {
        g_dbus_connection_close_sync(connection, NULL, NULL);
        g_object_unref(connection);
    }
    if (node) g_dbus_node_info_unref(node);
    g_main_context_pop_thread_default(bus->main_context);
    return NULL;
}

static void free_bus(pa_application_bus *bus) {
    g_main_context_unref(bus->main_context);
    pthread_cond_destroy(&bus->changed);
    pthread_mutex_destroy(&bus->lock);
    free(bus->path);
    free(bus->name);
    free(bus);
}

PA_HIDDEN pa_application_bus *pa_application_bus_start(const char *name, pa_application_bus_open_fn open, void *context,
                                                       char *why, size_t size) {
    const char *missing = pa_secret_load_error();
    if (missing) {
        snprintf(why, size, "%s", missing);
        return NULL;
    }
    pa_application_bus *bus = calloc(1, sizeof *bus);
    size_t length = strlen(name);
    if (bus) {
        bus->name = strdup(name);
        bus->path = malloc(length + 2);
    }
    if (!bus || !bus->name || !bus->path) {
        if (bus) {
            free(bus->name);
            free(bus->path);
        }
        free(bus);
        snprintf(why, size, "out of memory");
        return NULL;
    }
    bus->path[0] = '/';
    for (size_t i = 0; i < length; i++) bus->path[i + 1] = name[i] == '.' ? '/' : name[i] == '-' ? '_' : name[i];
    bus->path[length + 1] = 0;
    bus->open = open;
    bus->context = context;
    bus->main_context = g_main_context_new();
    pthread_mutex_init(&bus->lock, NULL);
    pthread_cond_init(&bus->changed, NULL);
    if (pthread_create(&bus->thread, NULL, serve, bus) != 0) {
        free_bus(bus);
        snprintf(why, size, "no thread for the session bus");
        return NULL;
    }
    pthread_mutex_lock(&bus->lock);
    while (bus->owned == STARTING) pthread_cond_wait(&bus->changed, &bus->lock);
    pthread_mutex_unlock(&bus->lock);
    if (bus->owned != OWNED) {
        pthread_join(bus->thread, NULL);
        snprintf(why, size, "%s", bus->why);
        free_bus(bus);
        return NULL;
    }
    return bus;
}

PA_HIDDEN void pa_application_bus_stop(pa_application_bus *bus) {
    if (!bus) return;
    atomic_store(&bus->stopping, 1);
    g_main_context_wakeup(bus->main_context);
    pthread_join(bus->thread, NULL);
    free_bus(bus);
}
