/* GIO, for the desktop's proxy alone, loaded by the first request that asks the desktop. */
#include "loader.h"
#include "desktop_proxy.h"

#include <gio/gio.h>
#include <stdio.h>
#include <string.h>

/* g_strfreev and g_error_free are libsecret's file's already (secret.c): resolved here too,
   and called through PA_FUNCTION, so that each library keeps to its own handle. */
#define GIO_FUNCTIONS(F, V, R) \
    F(g_proxy_resolver_get_default, GProxyResolver *, (void), (), NULL) \
    F(g_proxy_resolver_lookup, gchar **, \
      (GProxyResolver *resolver, const gchar *uri, GCancellable *cancellable, GError **error), \
      (resolver, uri, cancellable, error), NULL) \
    R(g_strfreev) \
    R(g_error_free)

PA_LIBRARY(pa_gio_load_error, "GIO", "libgio-2.0.so.0", GIO_FUNCTIONS)

static int usable_by_libcurl(const char *proxy) {
    static const char *const schemes[] = { "http://", "https://", "socks4://", "socks4a://", "socks5://", "socks5h://" };
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        if (strncmp(proxy, schemes[i], strlen(schemes[i])) == 0) return 1;
    }
    return 0;
}

PA_HIDDEN pa_desktop_proxy_answer pa_desktop_proxy(const char *url, char *out, size_t size) {
    if (!out || size == 0) return PA_DESKTOP_PROXY_UNKNOWN;
    out[0] = '\0';
    const char *missing = pa_gio_load_error();
    if (missing) {
        snprintf(out, size, "%s", missing);
        return PA_DESKTOP_PROXY_UNKNOWN;
    }
    GProxyResolver *resolver = g_proxy_resolver_get_default();
    GError *error = NULL;
    gchar **proxies = resolver ? g_proxy_resolver_lookup(resolver, url, NULL, &error) : NULL;
    if (!proxies) {
        snprintf(out, size, "the desktop's proxy resolver failed: %s", error ? error->message : "no resolver");
        if (error) PA_FUNCTION(g_error_free)(error);
        return PA_DESKTOP_PROXY_UNKNOWN;
    }
    pa_desktop_proxy_answer answer = PA_DESKTOP_PROXY_DIRECT;
    for (gchar **proxy = proxies; *proxy; proxy++) {
        if (strcmp(*proxy, "direct://") == 0) break;
        if (!usable_by_libcurl(*proxy)) continue;
        answer = (size_t)snprintf(out, size, "%s", *proxy) < size ? PA_DESKTOP_PROXY_THROUGH : PA_DESKTOP_PROXY_UNKNOWN;
        if (answer == PA_DESKTOP_PROXY_UNKNOWN) snprintf(out, size, "the desktop's proxy URL is too long");
        break;
    }
    PA_FUNCTION(g_strfreev)(proxies);
    return answer;
}
