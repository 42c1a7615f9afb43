/* What the library exports: only its API, marked PORTAL_AUTH_GLIB_API (it is built with
 * hidden visibility, so that its own helpers stay inside). */
#pragma once

#if !defined(PORTAL_AUTH_GLIB_INSIDE) && !defined(PORTAL_AUTH_GLIB_COMPILATION)
#error "Only <portal-auth-glib.h> can be included directly."
#endif

#if defined(PORTAL_AUTH_GLIB_COMPILATION) && defined(__GNUC__)
#define PORTAL_AUTH_GLIB_API __attribute__((visibility("default"))) extern
#else
#define PORTAL_AUTH_GLIB_API extern
#endif
