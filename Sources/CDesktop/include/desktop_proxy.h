/* The proxy the desktop is set to use (docs/network.md "Proxies"): GIO's default
 * GProxyResolver, which is GNOME's settings or libproxy (glib-networking) on a desktop, and
 * the ProxyResolver portal inside a Flatpak sandbox. GIO is opened on first use. */
#ifndef PORTAL_AUTH_DESKTOP_PROXY_H
#define PORTAL_AUTH_DESKTOP_PROXY_H

#include <stddef.h>

/* What pa_desktop_proxy found. */
typedef enum {
    PA_DESKTOP_PROXY_DIRECT = 0,   /* no proxy for the URL */
    PA_DESKTOP_PROXY_THROUGH = 1,  /* the proxy's URL is in `out` */
    PA_DESKTOP_PROXY_UNKNOWN = 2   /* GIO missing, or the resolver failed: why is in `out` */
} pa_desktop_proxy_answer;

/* The first proxy the desktop names for `url` that libcurl can use (http, https, socks4,
   socks4a, socks5, socks5h), or direct. It blocks while the resolver works (a PAC script may
   be fetched and run): never call it on the I/O thread. `out` gets a NUL-terminated text of at
   most `size` - 1 bytes; a proxy URL that does not fit is UNKNOWN. */
pa_desktop_proxy_answer pa_desktop_proxy(const char *url, char *out, size_t size);

#endif
