/* The desktop's proxy: see include/desktop_proxy.h. */
#include "desktop_proxy.h"
#include "gio.h"
#include "loader.h"

#include <gio/gio.h>
#include <stdio.h>
#include <string.h>

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
        if (error) pa_gio_error_free(error);
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
    pa_gio_strfreev(proxies);
    return answer;
}
