/* PortalAuthQrCode: the C library's QR code of an enrollment link, as its module matrix
 * (portal_auth_totp_qr_matrix) and as a PNG (portal_auth_totp_qr_png). Both carry the TOTP
 * secret: the object's copies are cleared before they are freed. */
#include "portal-auth-private.h"

#include <string.h>

/**
 * PortalAuthQrCode:
 *
 * The QR code of a TOTP enrollment link, for the user's authenticator app to scan: byte
 * mode, error correction M, a 4-module quiet zone, black on white. A toolkit paints the
 * modules itself, crisp at any scale: #PortalAuthQrCode:side modules a side, each a square,
 * dark where portal_auth_qr_code_is_dark() says so (or as #PortalAuthQrCode:modules packs
 * them); or shows portal_auth_qr_code_to_png(). It carries the TOTP secret: never log or
 * persist it.
 */
struct _PortalAuthQrCode {
    GObject parent_instance;
    char *link; /* a secret */
    int side;
    GBytes *modules;
};

G_DEFINE_FINAL_TYPE (PortalAuthQrCode, portal_auth_qr_code, G_TYPE_OBJECT)

enum { PROP_SIDE = 1, PROP_MODULES, N_PROPERTIES };
static GParamSpec *properties[N_PROPERTIES];

static void
portal_auth_qr_code_finalize (GObject *object)
{
    PortalAuthQrCode *self = PORTAL_AUTH_QR_CODE (object);
    portal_auth_glib_wipe_free (self->link);
    g_clear_pointer (&self->modules, g_bytes_unref);
    G_OBJECT_CLASS (portal_auth_qr_code_parent_class)->finalize (object);
}

static void
portal_auth_qr_code_get_property (GObject *object, guint id, GValue *value, GParamSpec *spec)
{
    PortalAuthQrCode *self = PORTAL_AUTH_QR_CODE (object);
    switch (id) {
    case PROP_SIDE: g_value_set_int (value, self->side); break;
    case PROP_MODULES: g_value_set_boxed (value, self->modules); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, spec);
    }
}

static void
portal_auth_qr_code_class_init (PortalAuthQrCodeClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS (klass);
    object_class->finalize = portal_auth_qr_code_finalize;
    object_class->get_property = portal_auth_qr_code_get_property;
    /**
     * PortalAuthQrCode:side:
     *
     * Modules a side, the quiet zone included.
     */
    properties[PROP_SIDE] = g_param_spec_int ("side", NULL, NULL, 0, G_MAXINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    /**
     * PortalAuthQrCode:modules:
     *
     * The modules, a bit each: #PortalAuthQrCode:side rows of (side + 7) / 8 bytes from the
     * top, the leftmost module of a row in the most significant bit of its first byte, a set
     * bit dark (the rows of a PBM image).
     */
    properties[PROP_MODULES] =
        g_param_spec_boxed ("modules", NULL, NULL, G_TYPE_BYTES, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties (object_class, N_PROPERTIES, properties);
}

static void
portal_auth_qr_code_init (PortalAuthQrCode *self)
{
    (void) self;
}

/* A buffer of the C library holding a rendering of the secret: cleared, then freed. */
typedef struct {
    uint8_t *bytes;
    size_t length;
} LibraryBuffer;

static void
free_library_buffer (gpointer data)
{
    LibraryBuffer *buffer = data;
    explicit_bzero (buffer->bytes, buffer->length);
    portal_auth_bytes_free (buffer->bytes);
    g_free (buffer);
}

static GBytes *
bytes_of_library_buffer (uint8_t *bytes, size_t length)
{
    LibraryBuffer *buffer = g_new (LibraryBuffer, 1);
    *buffer = (LibraryBuffer){ bytes, length };
    return g_bytes_new_with_free_func (bytes, length, free_library_buffer, buffer);
}

/**
 * portal_auth_qr_code_new:
 * @otpauth_url: the `otpauth://` enrollment link of a TOTP step, or one kept elsewhere
 * @error: where a failure is reported
 *
 * The QR code of an enrollment link.
 *
 * Returns: (transfer full): the code; %NULL with %PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE for
 *   a link that is not `otpauth://`, carries no valid secret or is too long,
 *   %PORTAL_AUTH_ERROR_INVALID_ARGUMENT for a link that is not UTF-8
 */
PortalAuthQrCode *
portal_auth_qr_code_new (const char *otpauth_url, GError **error)
{
    int32_t side = 0;
    uint8_t *modules = NULL;
    size_t length = 0;
    portal_auth_error *failure = NULL;
    if (portal_auth_totp_qr_matrix (otpauth_url, &side, &modules, &length, &failure) != PORTAL_AUTH_OK) {
        portal_auth_glib_propagate (error, failure);
        return NULL;
    }
    PortalAuthQrCode *self = g_object_new (PORTAL_AUTH_TYPE_QR_CODE, NULL);
    self->link = g_strdup (otpauth_url);
    self->side = side;
    self->modules = bytes_of_library_buffer (modules, length);
    return self;
}

/**
 * portal_auth_qr_code_get_side:
 * @self: the code
 *
 * Returns: the modules a side, the quiet zone included
 */
int
portal_auth_qr_code_get_side (PortalAuthQrCode *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_QR_CODE (self), 0);
    return self->side;
}

/**
 * portal_auth_qr_code_get_modules:
 * @self: the code
 *
 * The modules, packed as #PortalAuthQrCode:modules describes.
 *
 * Returns: (transfer none): the modules, owned by @self
 */
GBytes *
portal_auth_qr_code_get_modules (PortalAuthQrCode *self)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_QR_CODE (self), NULL);
    return self->modules;
}

/**
 * portal_auth_qr_code_is_dark:
 * @self: the code
 * @row: from 0 at the top
 * @column: from 0 at the left
 *
 * Whether a module is dark; every module outside the code (the quiet zone, beyond the side)
 * is light.
 *
 * Returns: %TRUE for a dark module
 */
gboolean
portal_auth_qr_code_is_dark (PortalAuthQrCode *self, int row, int column)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_QR_CODE (self), FALSE);
    if (row < 0 || column < 0 || row >= self->side || column >= self->side)
        return FALSE;
    const uint8_t *bits = g_bytes_get_data (self->modules, NULL);
    size_t row_bytes = ((size_t) self->side + 7) / 8;
    return bits[(size_t) row * row_bytes + (size_t) column / 8] >> (7 - column % 8) & 1;
}

/**
 * portal_auth_qr_code_to_png:
 * @self: the code
 * @scale: whole pixels a module, from 1 (10 is the usual size)
 * @error: where a failure is reported
 *
 * The code as a PNG, (side × scale) pixels square, 1-bit black on opaque white. The same
 * link gives the same bytes.
 *
 * Returns: (transfer full): the PNG; %NULL with %PORTAL_AUTH_ERROR_TOTP_QR_UNAVAILABLE for a
 *   scale under 1 or one that makes a side over 8192 pixels (the message gives the range)
 */
GBytes *
portal_auth_qr_code_to_png (PortalAuthQrCode *self, int scale, GError **error)
{
    g_return_val_if_fail (PORTAL_AUTH_IS_QR_CODE (self), NULL);
    uint8_t *png = NULL;
    size_t length = 0;
    portal_auth_error *failure = NULL;
    if (portal_auth_totp_qr_png (self->link, scale, &png, &length, &failure) != PORTAL_AUTH_OK) {
        portal_auth_glib_propagate (error, failure);
        return NULL;
    }
    return bytes_of_library_buffer (png, length);
}
