#ifndef PORTAL_AUTH_CSECRET_SHIM_H
#define PORTAL_AUTH_CSECRET_SHIM_H

#include <libsecret/secret.h>

/* libsecret is not linked: Sources/CLibraryLoader/secret.c defines every libsecret and GLib
   function the core calls (those below included), loading libsecret on first use. */

/* Loads libsecret (once): NULL, or why it could not be loaded. */
const char *pa_secret_load_error(void);

/* The schema of the project's persisted sessions: one item per auth environment. libsecret
   also stores its name as the xdg:schema attribute, so
   `secret-tool search xdg:schema io.portalhq.auth.Session` lists every such item. */
#define PA_SESSION_SCHEMA_NAME "io.portalhq.auth.Session"
#define PA_ENVIRONMENT_ATTRIBUTE "auth_environment_id"

static inline const SecretSchema *pa_session_schema(void) {
    static const SecretSchema schema = {
        PA_SESSION_SCHEMA_NAME, SECRET_SCHEMA_NONE,
        { { PA_ENVIRONMENT_ATTRIBUTE, SECRET_SCHEMA_ATTRIBUTE_STRING }, { NULL, 0 } },
        0, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    };
    return &schema;
}

/* The attributes that find one environment's item. The table keeps its own copy of
   `environment_id` (a string bridged from Swift lives only for the call). */
static inline GHashTable *pa_environment_attributes(const char *environment_id) {
    GHashTable *attributes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    g_hash_table_insert(attributes, (gpointer)PA_ENVIRONMENT_ATTRIBUTE, g_strdup(environment_id));
    return attributes;
}

/* Frees a list of SecretItem (a GDestroyNotify that Swift cannot name). */
static inline void pa_free_items(GList *items) {
    g_list_free_full(items, g_object_unref);
}

#endif
