/* PortalAuthMethods: what portal_auth_client_get_methods_async() finds the environment has
 * enabled, copied from the C library's methods. */
#include "portal-auth-private.h"

/**
 * PortalAuthMethods:
 *
 * The sign-in methods an environment has enabled, and whether Portal suggests creating a
 * wallet for a new user.
 */
struct _PortalAuthMethods {
    GObject parent_instance;
    GStrv allowed;
    gboolean auto_create_wallet;
};

G_DEFINE_FINAL_TYPE (PortalAuthMethods, portal_auth_methods, G_TYPE_OBJECT)

enum { PROP_ALLOWED_AUTH_METHODS = 1, PROP_AUTO_CREATE_WALLET, N_PROPERTIES };
static GParamSpec *properties[N_PROPERTIES];

static void
portal_auth_methods_finalize (GObject *object)
{
    g_strfreev (PORTAL_AUTH_METHODS (object)->allowed);
    G_OBJECT_CLASS (portal_auth_methods_parent_class)->finalize (object);
}

static void
portal_auth_methods_get_property (GObject *object, guint id, GValue *value, GParamSpec *spec)
{
    PortalAuthMethods *self = PORTAL_AUTH_METHODS (object);
    switch (id) {
    case PROP_ALLOWED_AUTH_METHODS: g_value_set_boxed (value, self->allowed); break;
    case PROP_AUTO_CREATE_WALLET: g_value_set_boolean (value, self->auto_create_wallet); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, spec);
    }
}

static void
portal_auth_methods_class_init (PortalAuthMethodsClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS (klass);
    object_class->finalize = portal_auth_methods_finalize;
    object_class->get_property = portal_auth_methods_get_property;
    /**
     * PortalAuthMethods:allowed-auth-methods:
     *
     * The methods enabled: "EMAIL_MAGIC_LINK", "GOOGLE", "APPLE".
     */
    properties[PROP_ALLOWED_AUTH_METHODS] =
        g_param_spec_boxed ("allowed-auth-methods", NULL, NULL, G_TYPE_STRV, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthMethods:auto-create-wallet:
     *
     * Whether Portal suggests creating a wallet for a new user.
     */
    properties[PROP_AUTO_CREATE_WALLET] =
        g_param_spec_boolean ("auto-create-wallet", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties (object_class, N_PROPERTIES, properties);
}

static void
portal_auth_methods_init (PortalAuthMethods *self)
{
    (void) self;
}

PortalAuthMethods *
portal_auth_glib_methods_new (const portal_auth_methods *methods)
{
    PortalAuthMethods *self = g_object_new (PORTAL_AUTH_TYPE_METHODS, NULL);
    size_t count = portal_auth_methods_count (methods);
    self->allowed = g_new0 (char *, count + 1);
    for (size_t i = 0; i < count; i++)
        self->allowed[i] = g_strdup (portal_auth_methods_at (methods, i));
    self->auto_create_wallet = portal_auth_methods_auto_create_wallet (methods) == PORTAL_AUTH_TRUE;
    return self;
}

/**
 * portal_auth_methods_get_allowed_auth_methods:
 * @self: the methods
 *
 * The methods the environment has enabled.
 *
 * Returns: (transfer none) (array zero-terminated=1): "EMAIL_MAGIC_LINK", "GOOGLE" and "APPLE"
 *   as enabled, owned by @self
 */
const char *const *
portal_auth_methods_get_allowed_auth_methods (PortalAuthMethods *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_METHODS (self), NULL);
    return (const char *const *) self->allowed;
}

/**
 * portal_auth_methods_get_auto_create_wallet:
 * @self: the methods
 *
 * Whether Portal suggests creating a wallet for a new user.
 *
 * Returns: %TRUE when it does
 */
gboolean
portal_auth_methods_get_auto_create_wallet (PortalAuthMethods *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_METHODS (self), FALSE);
    return self->auto_create_wallet;
}
