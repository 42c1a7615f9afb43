/* GNOME contender gnome-peer: what a GNOME app would write instead of the library. libsoup 3
 * (one SoupSession, keep-alive) for the requests, json-glib to read the answers and write the
 * stored session, libsecret's asynchronous password calls for the keyring, all on the
 * GMainLoop. It sends the headers the library sends and reads what the library reads; it
 * does none of the library's checks beyond the fields it needs. */
#include "bench.h"
#include "gnome.h"

#include <json-glib/json-glib.h>
#include <libsecret/secret.h>
#include <libsoup/soup.h>

static SoupSession *session;
static char url_methods[256], url_grant[256];

/* The last methods read, kept as an app keeps them. */
static struct {
    GPtrArray *methods;
    gboolean auto_create_wallet;
} last;

static const SecretSchema schema = {
    "io.portal.auth.bench.Gnome", SECRET_SCHEMA_NONE,
    { { "environment", SECRET_SCHEMA_ATTRIBUTE_STRING }, { NULL, 0 } }, 0, 0, 0, 0, 0, 0, 0, 0
};

static void setup(void) {
    const char *base = getenv("BENCH_BASE");
    snprintf(url_methods, sizeof url_methods, "%s/api/v3/auth/methods", base);
    snprintf(url_grant, sizeof url_grant, "%s/api/v3/auth/magic-links/validations", base);
    session = soup_session_new();
}

/* Sends a request with the library's headers (a fresh trace id each) and a JSON body, or
   none; `read` gets the answer. */
static void request(const char *method, const char *url, const char *body, GAsyncReadyCallback read, gnome_pending *p) {
    SoupMessage *message = soup_message_new(method, url);
    SoupMessageHeaders *headers = soup_message_get_request_headers(message);
    gchar *trace = g_uuid_string_random();
    soup_message_headers_append(headers, "x-portal-auth-environment-id", "env-bench");
    soup_message_headers_append(headers, "Accept", "application/json");
    soup_message_headers_append(headers, "X-Portal-Trace-Id", trace);
    g_free(trace);
    if (body) {
        GBytes *bytes = g_bytes_new(body, strlen(body));
        soup_message_set_request_body_from_bytes(message, "application/json", bytes);
        g_bytes_unref(bytes);
    }
    soup_session_send_and_read_async(session, message, G_PRIORITY_DEFAULT, NULL, read, p);
    g_object_unref(message); /* the session holds it while the request is in flight */
}

/* The answer's `data` object, or NULL for a failed request, another status or a body that is
   no envelope. Owned by `parser`. */
static JsonObject *answer_data(GAsyncResult *result, JsonParser *parser) {
    GError *error = NULL;
    GBytes *body = soup_session_send_and_read_finish(session, result, &error);
    if (!body) {
        g_error_free(error);
        return NULL;
    }
    SoupMessage *message = soup_session_get_async_result_message(session, result);
    gsize size = 0;
    const char *text = g_bytes_get_data(body, &size);
    gboolean parsed = soup_message_get_status(message) == SOUP_STATUS_OK &&
                      json_parser_load_from_data(parser, text, (gssize)size, &error);
    g_bytes_unref(body);
    if (error) g_error_free(error);
    JsonNode *root = parsed ? json_parser_get_root(parser) : NULL;
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) return NULL;
    JsonNode *data = json_object_get_member(json_node_get_object(root), "data");
    return data && JSON_NODE_HOLDS_OBJECT(data) ? json_node_get_object(data) : NULL;
}

/* A string member, or NULL. */
static const char *string_member(JsonObject *object, const char *name) {
    JsonNode *node = json_object_get_member(object, name);
    return node && JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING
               ? json_node_get_string(node) : NULL;
}

static void methods_read(GObject *source, GAsyncResult *result, gpointer user_data) {
    (void)source;
    JsonParser *parser = json_parser_new();
    JsonObject *data = answer_data(result, parser);
    JsonNode *allowed = data ? json_object_get_member(data, "allowedAuthMethods") : NULL;
    gboolean ok = allowed && JSON_NODE_HOLDS_ARRAY(allowed) && json_object_has_member(data, "autoCreateWallet");
    if (ok) {
        JsonArray *array = json_node_get_array(allowed);
        if (last.methods) g_ptr_array_unref(last.methods);
        last.methods = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < json_array_get_length(array); i++)
            g_ptr_array_add(last.methods, g_strdup(json_array_get_string_element(array, i)));
        last.auto_create_wallet = json_object_get_boolean_member(data, "autoCreateWallet");
        ok = last.methods->len > 0;
    }
    g_object_unref(parser);
    gnome_end(user_data, ok);
}

static void get_methods(gnome_done_fn done, gpointer data) {
    request("GET", url_methods, NULL, methods_read, gnome_pend(done, data));
}

static void stored(GObject *source, GAsyncResult *result, gpointer user_data) {
    (void)source;
    GError *error = NULL;
    gboolean ok = secret_password_store_finish(result, &error);
    if (error) g_error_free(error);
    gnome_end(user_data, ok);
}

static void grant_read(GObject *source, GAsyncResult *result, gpointer user_data) {
    (void)source;
    JsonParser *parser = json_parser_new();
    JsonObject *data = answer_data(result, parser);
    const char *token = data ? string_member(data, "clientSessionToken") : NULL;
    const char *end_user_id = data ? string_member(data, "endUserId") : NULL;
    if (!token || !*token || !end_user_id || !*end_user_id) {
        g_object_unref(parser);
        gnome_end(user_data, FALSE);
        return;
    }
    /* The stored session, written with json-glib, then into the keyring. */
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "clientSessionToken");
    json_builder_add_string_value(builder, token);
    json_builder_set_member_name(builder, "endUserId");
    json_builder_add_string_value(builder, end_user_id);
    json_builder_end_object(builder);
    JsonNode *root = json_builder_get_root(builder);
    gchar *value = json_to_string(root, FALSE);
    secret_password_store(&schema, SECRET_COLLECTION_DEFAULT, "portal-auth bench: GNOME peer", value, NULL, stored,
                          user_data, "environment", "env-bench", NULL);
    g_free(value);
    json_node_unref(root);
    g_object_unref(builder);
    g_object_unref(parser);
}

static void exchange(gnome_done_fn done, gpointer data) {
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "token");
    json_builder_add_string_value(builder, gnome_next_grant());
    json_builder_end_object(builder);
    JsonNode *root = json_builder_get_root(builder);
    gchar *body = json_to_string(root, FALSE);
    request("POST", url_grant, body, grant_read, gnome_pend(done, data));
    g_free(body);
    json_node_unref(root);
    g_object_unref(builder);
}

static void looked_up(GObject *source, GAsyncResult *result, gpointer user_data) {
    (void)source;
    GError *error = NULL;
    gchar *value = secret_password_lookup_finish(result, &error);
    if (error) g_error_free(error);
    gboolean ok = FALSE;
    if (value) {
        JsonParser *parser = json_parser_new();
        if (json_parser_load_from_data(parser, value, -1, NULL)) {
            JsonNode *root = json_parser_get_root(parser);
            JsonObject *object = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
            ok = object && string_member(object, "clientSessionToken") && string_member(object, "endUserId");
        }
        g_object_unref(parser);
        secret_password_free(value);
    }
    gnome_end(user_data, ok);
}

static void restore(gnome_done_fn done, gpointer data) {
    secret_password_lookup(&schema, NULL, looked_up, gnome_pend(done, data), "environment", "env-bench", NULL);
}

const gnome_contender contender = { "gnome-peer", setup, get_methods, exchange, restore };
