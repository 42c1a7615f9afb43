/* The Secret Service's D-Bus methods, one round trip each, on the connection libsecret opened
 * (with its negotiated transfer encryption), and the prompts they may return. The keyring
 * store's rules (Sources/PortalAuthCore/Storage) decide which calls to make; these only make
 * them. libsecret's own calls would show every prompt and wait on it without a bound; here
 * a prompt is dismissed unless the caller allows it, and a wait is bounded and cancellable.
 *
 * Every function runs blocking on the caller's thread. A function that fails returns
 * PA_SECRET_FAILED with `error` set (the caller frees it), or a PA_SECRET_PROMPT_* status. */
#ifndef PORTAL_AUTH_SECRET_SERVICE_H
#define PORTAL_AUTH_SECRET_SERVICE_H

#include <stdint.h>

typedef struct _SecretService SecretService;
typedef struct _SecretValue SecretValue;
typedef struct _GHashTable GHashTable;
typedef struct _GCancellable GCancellable;
typedef struct _GError GError;

typedef enum {
    PA_SECRET_DONE = 0,
    PA_SECRET_FAILED,
    /* The provider asked to prompt, and prompts are not allowed: dismissed unshown. */
    PA_SECRET_PROMPT_DISMISSED,
    /* The user dismissed the provider's dialog. */
    PA_SECRET_PROMPT_REFUSED,
    /* The dialog was not answered within the timeout: dismissed. */
    PA_SECRET_PROMPT_TIMED_OUT,
    /* The wait was cancelled: dismissed. */
    PA_SECRET_PROMPT_CANCELLED
} pa_secret_status;

/* What to do with a prompt. */
typedef struct pa_secret_prompting {
    /* Zero or less: prompts are not allowed (below). Else show the provider's dialog and wait
       up to this long. */
    int64_t timeout_ms;
    /* Where prompts are not allowed: zero or less, dismiss it unshown; else perform it all the
       same and wait this long for it to complete without the user (KeePassXC answers each
       write with a prompt it completes itself; KWallet opens a wallet opened at login through
       one), then dismiss it: PA_SECRET_PROMPT_DISMISSED. */
    int64_t unattended_ms;
    /* Ends a wait on a dialog early; may be NULL. */
    GCancellable *cancellable;
    /* Told, when a prompt is allowed, that the provider's dialog is being shown; may be NULL. */
    void (*showing)(int64_t timeout_ms);
} pa_secret_prompting;

/* Service.ReadAlias: the collection's object path (g_free it), or NULL for none. */
pa_secret_status pa_secret_read_alias(SecretService *service, const char *alias, char **path, GError **error);

/* Service.SearchItems on `attributes` (string to string): the unlocked and the locked items'
   paths, each a NULL-terminated array (g_strfreev). */
pa_secret_status pa_secret_search(SecretService *service, GHashTable *attributes, char ***unlocked, char ***locked,
                                  GError **error);

/* Properties.Get of a collection's or an item's `Locked`. */
pa_secret_status pa_secret_is_locked(SecretService *service, const char *path, int is_collection, int *locked,
                                     GError **error);

/* Whether an item's `Attributes` (Properties.Get) hold `name`. */
pa_secret_status pa_secret_has_attribute(SecretService *service, const char *path, const char *name, int *has,
                                         GError **error);

/* Properties.Get of an item's `Modified`. */
pa_secret_status pa_secret_modified(SecretService *service, const char *path, uint64_t *modified, GError **error);

/* Service.Unlock of `paths` (NULL-terminated); done when the provider unlocked them, with or
   without a prompt. */
pa_secret_status pa_secret_unlock(SecretService *service, const char *const *paths,
                                  const pa_secret_prompting *prompting, GError **error);

/* Service.GetSecrets of `paths` (NULL-terminated): a table of path to SecretValue
   (g_hash_table_unref it; it unrefs its values), and how many values did not decode (the
   provider's end of the transfer session disagrees with libsecret's). */
pa_secret_status pa_secret_get_secrets(SecretService *service, const char *const *paths, GHashTable **secrets,
                                       int *undecodable, GError **error);

/* Collection.CreateItem; with `replace`, in place of an item of the same attributes. `*item`
   is the item's path when the reply names it (not through a prompt), else NULL (g_free it). */
pa_secret_status pa_secret_create_item(SecretService *service, const char *collection, const char *label,
                                       GHashTable *attributes, SecretValue *value, int replace,
                                       const pa_secret_prompting *prompting, char **item, GError **error);

/* Item.Delete. */
pa_secret_status pa_secret_delete_item(SecretService *service, const char *path, const pa_secret_prompting *prompting,
                                       GError **error);

/* The unique bus name that owns `name` now (g_free it), or NULL when none does. */
char *pa_bus_name_owner(SecretService *service, const char *name);

/* KWallet's own answer (org.kde.KWallet.isOpen, kwalletd5's or kwalletd6's) to whether
   `wallet` is open: 1 with `open` set, or 0 when no KWallet daemon answers. */
int pa_kwallet_is_open(SecretService *service, const char *wallet, int *open);

/* The process id of the bus name's owner (the provider), or 0 when the bus does not say. */
uint32_t pa_secret_provider_pid(SecretService *service);

#endif
