/* GIO on its own handle (gio.c): the proxy resolver's functions are defined under their real
 * names; these are the rest, for code that needs GIO without libsecret. */
#ifndef PORTAL_AUTH_GIO_H
#define PORTAL_AUTH_GIO_H

struct _GError;

/* Loads GIO (once): NULL, or why it could not be loaded. */
const char *pa_gio_load_error(void);

/* GIO's g_strfreev and g_error_free (the functions of those names are libsecret's). */
void pa_gio_strfreev(char **strings);
void pa_gio_error_free(struct _GError *error);

#endif
