/* libsecret, with the GLib, GObject and GIO functions the keyring code and the application's
   bus name (application_bus.c) call (dlsym finds them among libsecret's dependencies),
   loaded by the first keyring access or the first listening for redirects. */
#define SECRET_API_SUBJECT_TO_CHANGE
#include "loader.h"
#include "../CSecret/shim.h"

#define SECRET_FUNCTIONS(F, V, R) \
    F(secret_service_get_sync, SecretService *, (SecretServiceFlags flags, GCancellable *cancellable, GError **error), \
      (flags, cancellable, error), NULL) \
    V(secret_service_disconnect, (void), ()) \
    F(secret_value_new, SecretValue *, (const gchar *secret, gssize length, const gchar *content_type), \
      (secret, length, content_type), NULL) \
    F(secret_value_get, const gchar *, (SecretValue *value, gsize *length), (value, length), NULL) \
    V(secret_value_unref, (gpointer value), (value)) \
    F(g_hash_table_new_full, GHashTable *, \
      (GHashFunc hash, GEqualFunc equal, GDestroyNotify free_key, GDestroyNotify free_value), \
      (hash, equal, free_key, free_value), NULL) \
    F(g_hash_table_insert, gboolean, (GHashTable *table, gpointer key, gpointer value), (table, key, value), FALSE) \
    V(g_hash_table_unref, (GHashTable *table), (table)) \
    F(g_str_hash, guint, (gconstpointer text), (text), 0) \
    F(g_str_equal, gboolean, (gconstpointer a, gconstpointer b), (a, b), FALSE) \
    F(g_strdup, gchar *, (const gchar *text), (text), NULL) \
    V(g_free, (gpointer memory), (memory)) \
    V(g_object_unref, (gpointer object), (object)) \
    V(g_error_free, (GError *error), (error)) \
    F(g_io_error_quark, GQuark, (void), (), 0) \
    F(g_dbus_error_get_remote_error, gchar *, (const GError *error), (error), NULL) \
    F(g_dbus_address_get_for_bus_sync, gchar *, (GBusType type, GCancellable *cancellable, GError **error), \
      (type, cancellable, error), NULL) \
    F(g_dbus_connection_new_for_address_sync, GDBusConnection *, \
      (const gchar *address, GDBusConnectionFlags flags, GDBusAuthObserver *observer, GCancellable *cancellable, \
       GError **error), \
      (address, flags, observer, cancellable, error), NULL) \
    F(g_dbus_connection_close_sync, gboolean, (GDBusConnection *connection, GCancellable *cancellable, GError **error), \
      (connection, cancellable, error), FALSE) \
    F(g_dbus_connection_call_sync, GVariant *, \
      (GDBusConnection *connection, const gchar *bus_name, const gchar *path, const gchar *interface, \
       const gchar *method, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout, \
       GCancellable *cancellable, GError **error), \
      (connection, bus_name, path, interface, method, parameters, reply_type, flags, timeout, cancellable, error), NULL) \
    F(g_variant_new_string, GVariant *, (const gchar *text), (text), NULL) \
    F(g_variant_new_tuple, GVariant *, (GVariant *const *children, gsize count), (children, count), NULL) \
    F(g_variant_new_uint32, GVariant *, (guint32 value), (value), NULL) \
    F(g_variant_get_uint32, guint32, (GVariant *value), (value), 0) \
    F(g_dbus_node_info_new_for_xml, GDBusNodeInfo *, (const gchar *xml, GError **error), (xml, error), NULL) \
    V(g_dbus_node_info_unref, (GDBusNodeInfo *info), (info)) \
    F(g_dbus_connection_register_object, guint, \
      (GDBusConnection *connection, const gchar *path, GDBusInterfaceInfo *interface, const GDBusInterfaceVTable *vtable, \
       gpointer user_data, GDestroyNotify free_data, GError **error), \
      (connection, path, interface, vtable, user_data, free_data, error), 0) \
    F(g_dbus_connection_unregister_object, gboolean, (GDBusConnection *connection, guint registration), \
      (connection, registration), FALSE) \
    V(g_dbus_method_invocation_return_value, (GDBusMethodInvocation *invocation, GVariant *parameters), \
      (invocation, parameters)) \
    F(g_variant_get_child_value, GVariant *, (GVariant *value, gsize index), (value, index), NULL) \
    F(g_variant_n_children, gsize, (GVariant *value), (value), 0) \
    F(g_variant_get_string, const gchar *, (GVariant *value, gsize *length), (value, length), NULL) \
    V(g_variant_unref, (GVariant *value), (value)) \
    F(g_main_context_new, GMainContext *, (void), (), NULL) \
    V(g_main_context_unref, (GMainContext *context), (context)) \
    V(g_main_context_push_thread_default, (GMainContext *context), (context)) \
    V(g_main_context_pop_thread_default, (GMainContext *context), (context)) \
    F(g_main_context_iteration, gboolean, (GMainContext *context, gboolean may_block), (context, may_block), FALSE) \
    V(g_main_context_wakeup, (GMainContext *context), (context)) \
    F(g_dbus_proxy_get_connection, GDBusConnection *, (GDBusProxy *proxy), (proxy), NULL) \
    F(g_variant_new_objv, GVariant *, (const gchar *const *paths, gssize length), (paths, length), NULL) \
    F(g_variant_dup_objv, gchar **, (GVariant *value, gsize *length), (value, length), NULL) \
    F(g_variant_new_object_path, GVariant *, (const gchar *path), (path), NULL) \
    F(g_variant_new_boolean, GVariant *, (gboolean value), (value), NULL) \
    F(g_variant_get_boolean, gboolean, (GVariant *value), (value), TRUE) \
    F(g_variant_get_uint64, guint64, (GVariant *value), (value), 0) \
    F(g_variant_new_variant, GVariant *, (GVariant *value), (value), NULL) \
    F(g_variant_get_variant, GVariant *, (GVariant *value), (value), NULL) \
    F(g_variant_new_dict_entry, GVariant *, (GVariant *key, GVariant *value), (key, value), NULL) \
    F(g_variant_is_of_type, gboolean, (GVariant *value, const GVariantType *type), (value, type), FALSE) \
    F(g_variant_take_ref, GVariant *, (GVariant *value), (value), NULL) \
    V(g_variant_builder_init, (GVariantBuilder *builder, const GVariantType *type), (builder, type)) \
    V(g_variant_builder_add_value, (GVariantBuilder *builder, GVariant *value), (builder, value)) \
    F(g_variant_builder_end, GVariant *, (GVariantBuilder *builder), (builder), NULL) \
    V(g_hash_table_iter_init, (GHashTableIter *iter, GHashTable *table), (iter, table)) \
    F(g_hash_table_iter_next, gboolean, (GHashTableIter *iter, gpointer *key, gpointer *value), (iter, key, value), FALSE) \
    F(g_hash_table_lookup, gpointer, (GHashTable *table, gconstpointer key), (table, key), NULL) \
    V(g_strfreev, (gchar **strings), (strings)) \
    F(g_dbus_connection_signal_subscribe, guint, \
      (GDBusConnection *connection, const gchar *sender, const gchar *interface, const gchar *member, \
       const gchar *path, const gchar *arg0, GDBusSignalFlags flags, GDBusSignalCallback callback, gpointer user_data, \
       GDestroyNotify free_data), \
      (connection, sender, interface, member, path, arg0, flags, callback, user_data, free_data), 0) \
    V(g_dbus_connection_signal_unsubscribe, (GDBusConnection *connection, guint subscription), (connection, subscription)) \
    F(g_timeout_source_new, GSource *, (guint interval), (interval), NULL) \
    F(g_cancellable_source_new, GSource *, (GCancellable *cancellable), (cancellable), NULL) \
    V(g_source_set_callback, (GSource *source, GSourceFunc callback, gpointer data, GDestroyNotify notify), \
      (source, callback, data, notify)) \
    F(g_source_attach, guint, (GSource *source, GMainContext *context), (source, context), 0) \
    V(g_source_destroy, (GSource *source), (source)) \
    V(g_source_unref, (GSource *source), (source)) \
    F(g_cancellable_new, GCancellable *, (void), (), NULL) \
    V(g_cancellable_cancel, (GCancellable *cancellable), (cancellable)) \
    F(g_cancellable_is_cancelled, gboolean, (GCancellable *cancellable), (cancellable), FALSE) \
    F(secret_service_ensure_session_sync, gboolean, (SecretService *service, GCancellable *cancellable, GError **error), \
      (service, cancellable, error), FALSE) \
    F(secret_service_get_session_dbus_path, const gchar *, (SecretService *service), (service), "/") \
    F(secret_service_encode_dbus_secret, GVariant *, (SecretService *service, SecretValue *value), (service, value), NULL) \
    F(secret_service_decode_dbus_secret, SecretValue *, (SecretService *service, GVariant *value), (service, value), NULL) \
    V(secret_password_lookupv, \
      (const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GAsyncReadyCallback callback, \
       gpointer data), \
      (schema, attributes, cancellable, callback, data)) \
    F(secret_password_lookup_binary_finish, SecretValue *, (GAsyncResult *result, GError **error), (result, error), NULL) \
    V(secret_password_storev_binary, \
      (const SecretSchema *schema, GHashTable *attributes, const gchar *collection, const gchar *label, \
       SecretValue *value, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer data), \
      (schema, attributes, collection, label, value, cancellable, callback, data)) \
    F(secret_password_store_finish, gboolean, (GAsyncResult *result, GError **error), (result, error), FALSE) \
    V(secret_password_clearv, \
      (const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GAsyncReadyCallback callback, \
       gpointer data), \
      (schema, attributes, cancellable, callback, data)) \
    F(secret_password_clear_finish, gboolean, (GAsyncResult *result, GError **error), (result, error), FALSE) \
    F(g_object_ref, gpointer, (gpointer object), (object), NULL) \
    F(g_bus_get_sync, GDBusConnection *, (GBusType type, GCancellable *cancellable, GError **error), \
      (type, cancellable, error), NULL) \
    F(g_dbus_connection_get_unique_name, const gchar *, (GDBusConnection *connection), (connection), NULL)

PA_LIBRARY(pa_secret_load_error, "libsecret", "libsecret-1.so.0", SECRET_FUNCTIONS)
