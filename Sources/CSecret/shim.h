#ifndef PORTAL_AUTH_CSECRET_SHIM_H
#define PORTAL_AUTH_CSECRET_SHIM_H

#include <libsecret/secret.h>
#include <string.h>

/* libsecret is not linked: Sources/CLibraryLoader/secret.c defines every libsecret and GLib
   function the core calls (those below included), loading libsecret on first use. */

/* Loads libsecret (once): NULL, or why it could not be loaded. */
const char *pa_secret_load_error(void);

/* The attribute libsecret gives every item of a schema its name in (secret-tool shows it). */
#define PA_SCHEMA_ATTRIBUTE "xdg:schema"

/* The schema of the project's persisted sessions: one item per application and auth
   environment. Its name is the xdg:schema attribute of each (as libsecret writes it), so
   `secret-tool search xdg:schema io.portalhq.auth.Session` lists every such item. Items
   written before the application attribute existed carry the environment alone. */
#define PA_SESSION_SCHEMA_NAME "io.portalhq.auth.Session"
#define PA_ENVIRONMENT_ATTRIBUTE "auth_environment_id"
#define PA_APPLICATION_ATTRIBUTE "application_id"

/* The marker an application that names itself leaves before it writes its own item of an
   environment: from then on it never adopts an item without the application attribute again (someone else's,
   or planted), even once its own is deleted. Its attributes are named apart from the
   session's, so no search for sessions (secret-tool's either) ever finds it; its name is
   its items' xdg:schema. */
#define PA_OWN_ITEM_MARKER_SCHEMA_NAME "io.portalhq.auth.OwnItemMarker"
#define PA_MARKER_ENVIRONMENT_ATTRIBUTE "own_item_environment_id"
#define PA_MARKER_APPLICATION_ATTRIBUTE "own_item_application_id"

static inline GHashTable *pa_marker_attributes(const char *environment_id, const char *application_id) {
    GHashTable *attributes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    g_hash_table_insert(attributes, (gpointer)PA_SCHEMA_ATTRIBUTE, g_strdup(PA_OWN_ITEM_MARKER_SCHEMA_NAME));
    g_hash_table_insert(attributes, (gpointer)PA_MARKER_ENVIRONMENT_ATTRIBUTE, g_strdup(environment_id));
    g_hash_table_insert(attributes, (gpointer)PA_MARKER_APPLICATION_ATTRIBUTE, g_strdup(application_id));
    return attributes;
}

/* The attributes that find one environment's items: of one application, or (NULL) of any.
   The table keeps its own copies (a string bridged from Swift lives only for the call). */
static inline GHashTable *pa_session_attributes(const char *environment_id, const char *application_id) {
    GHashTable *attributes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    g_hash_table_insert(attributes, (gpointer)PA_SCHEMA_ATTRIBUTE, g_strdup(PA_SESSION_SCHEMA_NAME));
    g_hash_table_insert(attributes, (gpointer)PA_ENVIRONMENT_ATTRIBUTE, g_strdup(environment_id));
    if (application_id) g_hash_table_insert(attributes, (gpointer)PA_APPLICATION_ATTRIBUTE, g_strdup(application_id));
    return attributes;
}

#endif
