/* The keyring inside a Flatpak sandbox: libsecret's file backend, whose items are encrypted
 * with a key of the application's own that the Secret portal (org.freedesktop.portal.Secret)
 * hands it. libsecret chooses that backend itself in a sandbox whose portal has the Secret
 * interface; these calls only bound its waits and let a new process's writes be seen. The
 * store's rules are in Sources/PortalAuthCore/Storage/SandboxSessionStorage.swift.
 *
 * Every function runs blocking on the caller's thread, on a main context of its own. */
#ifndef PORTAL_AUTH_SECRET_PORTAL_STORE_H
#define PORTAL_AUTH_SECRET_PORTAL_STORE_H

#include <stdint.h>

typedef struct _SecretValue SecretValue;
typedef struct _GHashTable GHashTable;
typedef struct _GCancellable GCancellable;
typedef struct _GError GError;

typedef enum {
    PA_PORTAL_DONE = 0,
    /* `error` is set (the caller frees it). */
    PA_PORTAL_FAILED,
    /* No session bus could be reached. */
    PA_PORTAL_NO_BUS,
    /* The bus has no Secret portal: no xdg-desktop-portal, or none with a Secret backend. */
    PA_PORTAL_NO_SECRET_PORTAL,
    /* The portal did not hand over the key within the bound (a dialog left open). */
    PA_PORTAL_TIMED_OUT,
    /* The caller's cancellable ended the wait. */
    PA_PORTAL_CANCELLED,
    /* (Internal: the portal's answer was lost, and the call is made anew.) */
    PA_PORTAL_ANSWER_LOST
} pa_portal_status;

/* Asks the bus for the Secret portal's `version`, within 5 s. */
pa_portal_status pa_portal_secret_check(void);

/* The item whose attributes include `attributes`, or *value NULL when none (or when it cannot
   be decrypted with this application's key). secret_value_unref the value. */
pa_portal_status pa_portal_store_lookup(GHashTable *attributes, SecretValue **value, int64_t timeout_ms,
                                        GCancellable *cancellable, GError **error);

/* Replaces the item of exactly `attributes` with one holding `value`. */
pa_portal_status pa_portal_store_write(GHashTable *attributes, const char *label, SecretValue *value,
                                       int64_t timeout_ms, GCancellable *cancellable, GError **error);

/* Removes the items whose attributes include `attributes`; none is not an error. */
pa_portal_status pa_portal_store_clear(GHashTable *attributes, int64_t timeout_ms, GCancellable *cancellable,
                                       GError **error);

#endif
