/* The Secret Service's methods, one round trip each: see include/secret_service.h. */
#define SECRET_API_SUBJECT_TO_CHANGE
#include "secret_service.h"
#include "../CSecret/shim.h"
#include "bus_daemon.h"
#include "bus_wait.h"

#define SERVICE_NAME "org.freedesktop.secrets"
#define SERVICE_PATH "/org/freedesktop/secrets"
#define SERVICE_INTERFACE "org.freedesktop.Secret.Service"
#define COLLECTION_INTERFACE "org.freedesktop.Secret.Collection"
#define ITEM_INTERFACE "org.freedesktop.Secret.Item"
#define PROMPT_INTERFACE "org.freedesktop.Secret.Prompt"
#define PROPERTIES_INTERFACE "org.freedesktop.DBus.Properties"

/* A type string as a GVariantType: G_VARIANT_TYPE calls a checking function the loader does
   not provide. */
#define TYPE(text) ((const GVariantType *)(text))

/* The Secret Service's default call timeout is libsecret's: D-Bus's own 25 s. A call that
   waits on a user goes through a prompt, whose wait has its own bound. */
#define CALL_TIMEOUT_MS -1

static GDBusConnection *connection_of(SecretService *service) {
    return g_dbus_proxy_get_connection((GDBusProxy *)service);
}

/* One method call; `parameters` is consumed (floating). The reply, or NULL with `error`. */
static GVariant *call(SecretService *service, const char *path, const char *interface, const char *method,
                      GVariant *parameters, const char *reply_type, GError **error) {
    return g_dbus_connection_call_sync(connection_of(service), SERVICE_NAME, path, interface, method, parameters,
                                       TYPE(reply_type), G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_TIMEOUT_MS, NULL, error);
}

static GVariant *tuple1(GVariant *child) {
    return g_variant_new_tuple(&child, 1);
}

static GVariant *object_paths(const char *const *paths) {
    return g_variant_new_objv(paths, -1);
}

/* The string-to-string table as a{ss}. */
static GVariant *string_dictionary(GHashTable *table) {
    GVariantBuilder builder;
    g_variant_builder_init(&builder, TYPE("a{ss}"));
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, table);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        GVariant *entry[2] = { g_variant_new_string(key), g_variant_new_string(value) };
        g_variant_builder_add_value(&builder, g_variant_new_dict_entry(entry[0], entry[1]));
    }
    return g_variant_builder_end(&builder);
}

/* ---- Prompts ---------------------------------------------------------------------------- */

typedef struct {
    pa_bus_wait bus;
    int completed;
    pa_secret_status status;  /* once completed: done, or refused */
} prompt_wait;

static void on_completed(GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
                         const gchar *signal, GVariant *parameters, gpointer data) {
    (void)connection, (void)sender, (void)path, (void)interface, (void)signal;
    prompt_wait *wait = data;
    if (wait->completed || wait->bus.ended) return;
    GVariant *dismissed = g_variant_get_child_value(parameters, 0);
    wait->status = g_variant_get_boolean(dismissed) ? PA_SECRET_PROMPT_REFUSED : PA_SECRET_DONE;
    g_variant_unref(dismissed);
    wait->completed = 1;
}

static void dismiss(SecretService *service, const char *prompt) {
    GVariant *reply = call(service, prompt, PROMPT_INTERFACE, "Dismiss", NULL, NULL, NULL);
    if (reply) g_variant_unref(reply);
}

/* The unique name that owns `name` now, asked of the bus: the proxy's own record of the
   provider is updated only by a main loop this thread does not run, and a provider restarted
   since the connection was made signals from a new name. NULL when none owns it. */
gchar *pa_bus_name_owner(SecretService *service, const char *name) {
    GVariant *answer = pa_bus_daemon_answer(connection_of(service), "GetNameOwner", tuple1(g_variant_new_string(name)),
                                            CALL_TIMEOUT_MS);
    if (!answer) return NULL;
    gchar *owner = g_variant_is_of_type(answer, TYPE("s")) ? g_strdup(g_variant_get_string(answer, NULL)) : NULL;
    g_variant_unref(answer);
    return owner;
}

/* Handles the prompt a method returned ("/" for none). */
static pa_secret_status perform_prompt(SecretService *service, const char *prompt, const pa_secret_prompting *prompting,
                                       GError **error) {
    if (!prompt || strcmp(prompt, "/") == 0) return PA_SECRET_DONE;
    int allowed = prompting && prompting->timeout_ms > 0;
    int64_t bound = !prompting ? 0 : allowed ? prompting->timeout_ms : prompting->unattended_ms;
    if (bound <= 0) {
        dismiss(service, prompt);
        return PA_SECRET_PROMPT_DISMISSED;
    }
    if (prompting->cancellable && g_cancellable_is_cancelled(prompting->cancellable)) {
        dismiss(service, prompt);
        return PA_SECRET_PROMPT_CANCELLED;
    }
    /* The signal is delivered to the context that is the thread's default when subscribing:
       a context of this wait's own, iterated here until the prompt ends. */
    gchar *owner = pa_bus_name_owner(service, SERVICE_NAME);
    if (!owner) {
        /* No sender to hold the signal to (anyone could answer for the provider): not shown. */
        dismiss(service, prompt);
        return PA_SECRET_PROMPT_DISMISSED;
    }
    prompt_wait wait = { .completed = 0, .status = PA_SECRET_DONE };
    pa_bus_wait_open(&wait.bus);
    GDBusConnection *connection = connection_of(service);
    guint subscription = g_dbus_connection_signal_subscribe(connection, owner, PROMPT_INTERFACE, "Completed", prompt,
                                                            NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_completed, &wait, NULL);
    g_free(owner);
    pa_bus_wait_bound(&wait.bus, bound, prompting->cancellable);
    if (allowed && prompting->showing) prompting->showing(bound);
    /* An empty window id: the provider shows a dialog of its own. */
    GVariant *reply = call(service, prompt, PROMPT_INTERFACE, "Prompt", tuple1(g_variant_new_string("")), NULL, error);
    pa_secret_status status;
    if (!reply) {
        status = PA_SECRET_FAILED;
    } else {
        g_variant_unref(reply);
        pa_bus_wait_until(&wait.bus, &wait.completed);
        if (wait.completed) status = wait.status;
        else status = wait.bus.ended == PA_BUS_WAIT_TIMED_OUT ? PA_SECRET_PROMPT_TIMED_OUT : PA_SECRET_PROMPT_CANCELLED;
        if (status == PA_SECRET_PROMPT_TIMED_OUT || status == PA_SECRET_PROMPT_CANCELLED) dismiss(service, prompt);
        /* Not allowed, and it waited on the user: as if dismissed unshown. */
        if (status == PA_SECRET_PROMPT_TIMED_OUT && !allowed) status = PA_SECRET_PROMPT_DISMISSED;
    }
    g_dbus_connection_signal_unsubscribe(connection, subscription);
    /* A Completed already queued must not run once `wait` is gone. */
    pa_bus_wait_close(&wait.bus, 1);
    return status;
}

/* The prompt path a reply holds as its child `index`, handled. Consumes `reply`. */
static pa_secret_status prompt_of_reply(SecretService *service, GVariant *reply, gsize index,
                                        const pa_secret_prompting *prompting, GError **error) {
    GVariant *prompt = g_variant_get_child_value(reply, index);
    pa_secret_status status = perform_prompt(service, g_variant_get_string(prompt, NULL), prompting, error);
    g_variant_unref(prompt);
    g_variant_unref(reply);
    return status;
}

/* ---- Methods ---------------------------------------------------------------------------- */

pa_secret_status pa_secret_read_alias(SecretService *service, const char *alias, char **path, GError **error) {
    *path = NULL;
    GVariant *reply = call(service, SERVICE_PATH, SERVICE_INTERFACE, "ReadAlias", tuple1(g_variant_new_string(alias)),
                           "(o)", error);
    if (!reply) return PA_SECRET_FAILED;
    GVariant *child = g_variant_get_child_value(reply, 0);
    const char *found = g_variant_get_string(child, NULL);
    if (strcmp(found, "/") != 0) *path = g_strdup(found);
    g_variant_unref(child);
    g_variant_unref(reply);
    return PA_SECRET_DONE;
}

pa_secret_status pa_secret_search(SecretService *service, GHashTable *attributes, char ***unlocked, char ***locked,
                                  GError **error) {
    *unlocked = NULL;
    *locked = NULL;
    GVariant *reply = call(service, SERVICE_PATH, SERVICE_INTERFACE, "SearchItems", tuple1(string_dictionary(attributes)),
                           "(aoao)", error);
    if (!reply) return PA_SECRET_FAILED;
    GVariant *first = g_variant_get_child_value(reply, 0), *second = g_variant_get_child_value(reply, 1);
    *unlocked = g_variant_dup_objv(first, NULL);
    *locked = g_variant_dup_objv(second, NULL);
    g_variant_unref(first);
    g_variant_unref(second);
    g_variant_unref(reply);
    return PA_SECRET_DONE;
}

/* Properties.Get of `name`; the value inside the variant. */
static GVariant *property(SecretService *service, const char *path, const char *interface, const char *name,
                          GError **error) {
    GVariant *names[2] = { g_variant_new_string(interface), g_variant_new_string(name) };
    GVariant *reply = call(service, path, PROPERTIES_INTERFACE, "Get", g_variant_new_tuple(names, 2), "(v)", error);
    if (!reply) return NULL;
    GVariant *boxed = g_variant_get_child_value(reply, 0);
    GVariant *value = g_variant_get_variant(boxed);
    g_variant_unref(boxed);
    g_variant_unref(reply);
    return value;
}

pa_secret_status pa_secret_is_locked(SecretService *service, const char *path, int is_collection, int *locked,
                                     GError **error) {
    GVariant *value = property(service, path, is_collection ? COLLECTION_INTERFACE : ITEM_INTERFACE, "Locked", error);
    if (!value) return PA_SECRET_FAILED;
    /* A provider that answers with another type is taken as locked: never read as open. */
    *locked = g_variant_is_of_type(value, TYPE("b")) ? g_variant_get_boolean(value) : 1;
    g_variant_unref(value);
    return PA_SECRET_DONE;
}

pa_secret_status pa_secret_has_attribute(SecretService *service, const char *path, const char *name, int *has,
                                         GError **error) {
    GVariant *value = property(service, path, ITEM_INTERFACE, "Attributes", error);
    if (!value) return PA_SECRET_FAILED;
    *has = 0;
    if (g_variant_is_of_type(value, TYPE("a{ss}"))) {
        for (gsize i = 0; i < g_variant_n_children(value) && !*has; i++) {
            GVariant *entry = g_variant_get_child_value(value, i), *key = g_variant_get_child_value(entry, 0);
            *has = strcmp(g_variant_get_string(key, NULL), name) == 0;
            g_variant_unref(key);
            g_variant_unref(entry);
        }
    }
    g_variant_unref(value);
    return PA_SECRET_DONE;
}

pa_secret_status pa_secret_modified(SecretService *service, const char *path, uint64_t *modified, GError **error) {
    GVariant *value = property(service, path, ITEM_INTERFACE, "Modified", error);
    if (!value) return PA_SECRET_FAILED;
    *modified = g_variant_is_of_type(value, TYPE("t")) ? g_variant_get_uint64(value) : 0;
    g_variant_unref(value);
    return PA_SECRET_DONE;
}

pa_secret_status pa_secret_unlock(SecretService *service, const char *const *paths,
                                  const pa_secret_prompting *prompting, GError **error) {
    GVariant *reply = call(service, SERVICE_PATH, SERVICE_INTERFACE, "Unlock", tuple1(object_paths(paths)), "(aoo)",
                           error);
    if (!reply) return PA_SECRET_FAILED;
    return prompt_of_reply(service, reply, 1, prompting, error);
}

pa_secret_status pa_secret_get_secrets(SecretService *service, const char *const *paths, GHashTable **secrets,
                                       int *undecodable, GError **error) {
    *secrets = NULL;
    *undecodable = 0;
    GVariant *arguments[2] = { object_paths(paths),
                               g_variant_new_object_path(secret_service_get_session_dbus_path(service)) };
    GVariant *reply = call(service, SERVICE_PATH, SERVICE_INTERFACE, "GetSecrets", g_variant_new_tuple(arguments, 2),
                           "(a{o(oayays)})", error);
    if (!reply) return PA_SECRET_FAILED;
    GHashTable *table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, secret_value_unref);
    GVariant *entries = g_variant_get_child_value(reply, 0);
    for (gsize i = 0; i < g_variant_n_children(entries); i++) {
        GVariant *entry = g_variant_get_child_value(entries, i);
        GVariant *path = g_variant_get_child_value(entry, 0), *encoded = g_variant_get_child_value(entry, 1);
        /* A value that does not decode is left out, and counted. */
        SecretValue *value = secret_service_decode_dbus_secret(service, encoded);
        if (value) g_hash_table_insert(table, g_strdup(g_variant_get_string(path, NULL)), value);
        else (*undecodable)++;
        g_variant_unref(encoded);
        g_variant_unref(path);
        g_variant_unref(entry);
    }
    g_variant_unref(entries);
    g_variant_unref(reply);
    *secrets = table;
    return PA_SECRET_DONE;
}

pa_secret_status pa_secret_create_item(SecretService *service, const char *collection, const char *label,
                                       GHashTable *attributes, SecretValue *value, int replace,
                                       const pa_secret_prompting *prompting, char **item, GError **error) {
    *item = NULL;
    GVariantBuilder properties;
    g_variant_builder_init(&properties, TYPE("a{sv}"));
    g_variant_builder_add_value(&properties, g_variant_new_dict_entry(
        g_variant_new_string(ITEM_INTERFACE ".Label"), g_variant_new_variant(g_variant_new_string(label))));
    g_variant_builder_add_value(&properties, g_variant_new_dict_entry(
        g_variant_new_string(ITEM_INTERFACE ".Attributes"), g_variant_new_variant(string_dictionary(attributes))));
    /* Held as a full reference whether libsecret returns it floating or not. */
    GVariant *secret = g_variant_take_ref(secret_service_encode_dbus_secret(service, value));
    GVariant *arguments[3] = { g_variant_builder_end(&properties), secret, g_variant_new_boolean(replace != 0) };
    GVariant *reply = call(service, collection, COLLECTION_INTERFACE, "CreateItem", g_variant_new_tuple(arguments, 3),
                           "(oo)", error);
    g_variant_unref(secret);
    if (!reply) return PA_SECRET_FAILED;
    GVariant *created = g_variant_get_child_value(reply, 0);
    const char *path = g_variant_get_string(created, NULL);
    if (strcmp(path, "/") != 0) *item = g_strdup(path);
    g_variant_unref(created);
    return prompt_of_reply(service, reply, 1, prompting, error);
}

pa_secret_status pa_secret_delete_item(SecretService *service, const char *path, const pa_secret_prompting *prompting,
                                       GError **error) {
    GVariant *reply = call(service, path, ITEM_INTERFACE, "Delete", NULL, "(o)", error);
    if (!reply) return PA_SECRET_FAILED;
    return prompt_of_reply(service, reply, 0, prompting, error);
}

uint32_t pa_secret_provider_pid(SecretService *service) {
    GVariant *answer = pa_bus_daemon_answer(connection_of(service), "GetConnectionUnixProcessID",
                                            tuple1(g_variant_new_string(SERVICE_NAME)), CALL_TIMEOUT_MS);
    if (!answer) return 0;
    uint32_t pid = g_variant_is_of_type(answer, TYPE("u")) ? g_variant_get_uint32(answer) : 0;
    g_variant_unref(answer);
    return pid;
}

int pa_kwallet_is_open(SecretService *service, const char *wallet, int *open) {
    static const char *const daemons[][2] = { { "org.kde.kwalletd5", "/modules/kwalletd5" },
                                              { "org.kde.kwalletd6", "/modules/kwalletd6" } };
    for (size_t i = 0; i < sizeof daemons / sizeof daemons[0]; i++) {
        GVariant *reply = g_dbus_connection_call_sync(connection_of(service), daemons[i][0], daemons[i][1],
                                                      "org.kde.KWallet", "isOpen", tuple1(g_variant_new_string(wallet)),
                                                      TYPE("(b)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_TIMEOUT_MS,
                                                      NULL, NULL);
        if (!reply) continue;
        GVariant *answer = g_variant_get_child_value(reply, 0);
        *open = g_variant_get_boolean(answer);
        g_variant_unref(answer);
        g_variant_unref(reply);
        return 1;
    }
    return 0;
}
