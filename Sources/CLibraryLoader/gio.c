/* GIO, for the desktop's proxy alone (Sources/CDesktop/desktop_proxy.c), loaded by the first
   request that asks the desktop. */
#include "loader.h"
#include "gio.h"

#include <gio/gio.h>

/* g_strfreev and g_error_free are libsecret's file's already (secret.c): resolved here too,
   and called through pa_gio_strfreev and pa_gio_error_free, so that each library keeps to
   its own handle. */
#define GIO_FUNCTIONS(F, V, R) \
    F(g_proxy_resolver_get_default, GProxyResolver *, (void), (), NULL) \
    F(g_proxy_resolver_lookup, gchar **, \
      (GProxyResolver *resolver, const gchar *uri, GCancellable *cancellable, GError **error), \
      (resolver, uri, cancellable, error), NULL) \
    R(g_strfreev) \
    R(g_error_free)

PA_LIBRARY(pa_gio_load_error, "GIO", "libgio-2.0.so.0", GIO_FUNCTIONS)

PA_CALLING_VOID(pa_gio_strfreev, (gchar **strings), g_strfreev, (strings))
PA_CALLING_VOID(pa_gio_error_free, (GError *error), g_error_free, (error))
