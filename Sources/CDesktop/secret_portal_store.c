/* The keyring inside a Flatpak sandbox: see include/secret_portal_store.h. */
#define SECRET_API_SUBJECT_TO_CHANGE
#include "secret_portal_store.h"
#include "bus_daemon.h"
#include "bus_wait.h"
#include <stdlib.h>

enum {
    CHECK_TIMEOUT_MS = 5000,
    /* How long libsecret has to end its call once the portal has answered (it reads the key
       from a pipe, derives the file's key from it and reads, or writes and flushes, the
       file); past it, the answer was lost (below). */
    AFTER_ANSWER_MS = 5000,
    /* Calls made anew after a lost answer. */
    RETRIES = 4
};

pa_portal_status pa_portal_secret_check(void) {
    GDBusConnection *connection = pa_session_bus_connect();
    if (!connection) return PA_PORTAL_NO_BUS;
    GVariant *arguments[2] = { g_variant_new_string("org.freedesktop.portal.Secret"), g_variant_new_string("version") };
    GVariant *reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.DBus.Properties",
        "Get", g_variant_new_tuple(arguments, 2), NULL, G_DBUS_CALL_FLAGS_NONE, CHECK_TIMEOUT_MS, NULL, NULL);
    g_dbus_connection_close_sync(connection, NULL, NULL);
    g_object_unref(connection);
    if (!reply) return PA_PORTAL_NO_SECRET_PORTAL;
    g_variant_unref(reply);
    return PA_PORTAL_DONE;
}

/* One call's wait. Freed by the waiter; one given up on (below) is left with its call, a few
   objects and descriptors of libsecret's, as the price of a call that cannot be cancelled. */
typedef struct {
    pa_bus_wait bus;
    GAsyncResult *result;
    int over;         /* libsecret answered, or its answer was lost */
    int lost;         /* the portal answered, and libsecret did not end its call */
    int abandoned;
    GSource *after_answer;
} op_wait;

static void on_answer(GObject *source, GAsyncResult *result, gpointer data) {
    (void)source;
    op_wait *wait = data;
    if (wait->abandoned) {
        free(wait);
        return;
    }
    wait->result = g_object_ref(result);
    wait->over = 1;
}

static gboolean on_answer_lost(gpointer data) {
    op_wait *wait = data;
    wait->over = wait->lost = 1;
    return G_SOURCE_REMOVE;
}

/* libsecret 0.20 asks the portal for the key, and only then subscribes to the portal's answer
   (a Request's Response signal): an answer sent before that is never seen, and its call
   never ends (about one call in ten with gnome-keyring's portal, which answers at once). An
   answer is watched for here, subscribed before the call; once one came, the call has a
   bound of its own, and past it is made anew. A Response from elsewhere only shortens the
   wait of a call that was waiting on the portal anyway. */
static void on_portal_response(GDBusConnection *connection, const gchar *sender, const gchar *path,
                               const gchar *interface, const gchar *signal, GVariant *parameters, gpointer data) {
    (void)connection, (void)sender, (void)path, (void)interface, (void)signal, (void)parameters;
    op_wait *wait = data;
    if (!wait->after_answer)
        wait->after_answer = pa_bus_wait_attach(&wait->bus, g_timeout_source_new(AFTER_ANSWER_MS), on_answer_lost, wait);
}

typedef enum { LOOKUP, WRITE, CLEAR } operation;

typedef struct {
    operation operation;
    GHashTable *attributes;
    const char *label;
    SecretValue *value;
} call;

static void start(const call *call, op_wait *wait) {
    switch (call->operation) {
    case LOOKUP:
        secret_password_lookupv(NULL, call->attributes, NULL, on_answer, wait);
        break;
    case WRITE:
        secret_password_storev_binary(NULL, call->attributes, NULL, call->label, call->value, NULL, on_answer, wait);
        break;
    case CLEAR:
        secret_password_clearv(NULL, call->attributes, NULL, on_answer, wait);
        break;
    }
}

/* One try of `call`, bounded by `timeout_ms` and `cancellable`; sets *result (the caller
   finishes and unrefs it) when it was answered in time. */
static pa_portal_status attempt(const call *call, int64_t timeout_ms, GCancellable *cancellable,
                                GAsyncResult **result) {
    op_wait *wait = calloc(1, sizeof *wait);
    pa_bus_wait_open(&wait->bus);
    /* libsecret keeps one backend per process, which reads the file once: dropped, the next
       call's backend reads it anew and so sees what another process of the app wrote (a
       write on a stale one is refused as "externally modified"). */
    secret_service_disconnect();
    /* The process's shared connection: the one libsecret asks the portal on. */
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    guint subscription = bus ? g_dbus_connection_signal_subscribe(bus, NULL, "org.freedesktop.portal.Request",
                                                                  "Response", NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                                  on_portal_response, wait, NULL)
                             : 0;
    /* No cancellable for libsecret: its file backend's cancel handler disconnects itself from
       the cancellable inside the cancel, a deadlock in GLib. A call given up on is left
       pending on this context, which is never iterated again (the steps GIO runs on its own
       threads, a file write's among them, may still end). */
    start(call, wait);
    pa_bus_wait_bound(&wait->bus, timeout_ms, cancellable);
    pa_bus_wait_until(&wait->bus, &wait->over);
    if (bus) {
        g_dbus_connection_signal_unsubscribe(bus, subscription);
        g_object_unref(bus);
    }
    pa_bus_wait_drop(wait->after_answer);
    pa_portal_status status = wait->bus.ended == PA_BUS_WAIT_CANCELLED ? PA_PORTAL_CANCELLED
                            : !wait->result ? PA_PORTAL_TIMED_OUT : PA_PORTAL_DONE;
    int lost = wait->lost && !wait->result;
    *result = wait->result;
    if (wait->result) {
        pa_bus_wait_close(&wait->bus, 1);
        free(wait);
    } else {
        wait->abandoned = 1;
        pa_bus_wait_close(&wait->bus, 0);
    }
    if (status != PA_PORTAL_DONE && *result) {
        g_object_unref(*result);
        *result = NULL;
    }
    return lost && status == PA_PORTAL_TIMED_OUT ? PA_PORTAL_ANSWER_LOST : status;
}

/* `call`, made anew while the portal's answer is lost. */
static pa_portal_status run(const call *call, int64_t timeout_ms, GCancellable *cancellable, GAsyncResult **result) {
    pa_portal_status status = PA_PORTAL_ANSWER_LOST;
    for (int try = 0; try <= RETRIES && status == PA_PORTAL_ANSWER_LOST; try++)
        status = attempt(call, timeout_ms, cancellable, result);
    return status == PA_PORTAL_ANSWER_LOST ? PA_PORTAL_TIMED_OUT : status;
}

pa_portal_status pa_portal_store_lookup(GHashTable *attributes, SecretValue **value, int64_t timeout_ms,
                                        GCancellable *cancellable, GError **error) {
    *value = NULL;
    const call call = { LOOKUP, attributes, NULL, NULL };
    GAsyncResult *result = NULL;
    pa_portal_status status = run(&call, timeout_ms, cancellable, &result);
    if (status != PA_PORTAL_DONE) return status;
    *value = secret_password_lookup_binary_finish(result, error);
    g_object_unref(result);
    return *error ? PA_PORTAL_FAILED : PA_PORTAL_DONE;
}

pa_portal_status pa_portal_store_write(GHashTable *attributes, const char *label, SecretValue *value,
                                       int64_t timeout_ms, GCancellable *cancellable, GError **error) {
    const call call = { WRITE, attributes, label, value };
    GAsyncResult *result = NULL;
    pa_portal_status status = run(&call, timeout_ms, cancellable, &result);
    if (status != PA_PORTAL_DONE) return status;
    gboolean stored = secret_password_store_finish(result, error);
    g_object_unref(result);
    return stored ? PA_PORTAL_DONE : PA_PORTAL_FAILED;
}

pa_portal_status pa_portal_store_clear(GHashTable *attributes, int64_t timeout_ms, GCancellable *cancellable,
                                       GError **error) {
    const call call = { CLEAR, attributes, NULL, NULL };
    GAsyncResult *result = NULL;
    pa_portal_status status = run(&call, timeout_ms, cancellable, &result);
    if (status != PA_PORTAL_DONE) return status;
    secret_password_clear_finish(result, error);
    g_object_unref(result);
    return *error ? PA_PORTAL_FAILED : PA_PORTAL_DONE;
}
