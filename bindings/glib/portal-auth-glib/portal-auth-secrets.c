/* The library's copies of secrets (userJwts, TOTP links, their QR codes) are cleared before
 * their memory goes back. */
#include "portal-auth-private.h"

#include <string.h>

void
portal_auth_glib_wipe_free (char *secret)
{
    if (!secret)
        return;
    explicit_bzero (secret, strlen (secret));
    g_free (secret);
}
