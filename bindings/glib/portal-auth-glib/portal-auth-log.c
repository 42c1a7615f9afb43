/* The C library's log lines on g_log, in the domain PortalAuth (G_LOG_DOMAIN), so that
 * G_MESSAGES_DEBUG and the host's log writer apply to them. Levels follow GLib's meanings:
 * the library's warnings and errors are unexpected outside conditions (a keyring entry that
 * does not decode, a browser that would not open), which GLib logs as warnings; critical
 * is for programming errors and error aborts, so neither is used. */
#include "portal-auth-private.h"

static void
forward (void *user_data, portal_auth_log_level level, const char *message)
{
    (void) user_data;
    GLogLevelFlags flags;
    switch (level) {
    case PORTAL_AUTH_LOG_DEBUG: flags = G_LOG_LEVEL_DEBUG; break;
    case PORTAL_AUTH_LOG_INFO: flags = G_LOG_LEVEL_INFO; break;
    default: flags = G_LOG_LEVEL_WARNING; break;
    }
    g_log (G_LOG_DOMAIN, flags, "%s", message);
}

void
portal_auth_glib_log_install (void)
{
    static gsize installed;
    if (g_once_init_enter (&installed)) {
        /* On the library's threads: g_log may be called from any thread. */
        portal_auth_set_log_handler (forward, NULL);
        g_once_init_leave (&installed, 1);
    }
}
