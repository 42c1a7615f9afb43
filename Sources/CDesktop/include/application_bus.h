/* The application's name on the session bus, where the desktop hands a DBusActivatable
 * application its URLs (org.freedesktop.Application.Open): the route of a forwarded redirect
 * that puts the URL on no command line (docs/desktop.md "Redirect forwarding"). Over GIO,
 * which libsecret brings (secret.c loads it). */
#ifndef PORTAL_AUTH_APPLICATION_BUS_H
#define PORTAL_AUTH_APPLICATION_BUS_H

#include <stddef.h>

/* Hands one URI of an Open call over; on the bus's thread. */
typedef void (*pa_application_bus_open_fn)(void *context, const char *uri);

typedef struct pa_application_bus pa_application_bus;

/* On a thread of its own: connects to the session bus, serves org.freedesktop.Application at
   the path of `name` (its dots as slashes, its hyphens as underscores) and owns `name`,
   without queueing: another owner is another instance. Open hands each URI to `open`;
   Activate and ActivateAction do nothing. Returns once `name` is owned; else NULL, with why
   (never a URI) in `why`. */
pa_application_bus *pa_application_bus_start(const char *name, pa_application_bus_open_fn open, void *context,
                                             char *why, size_t size);

/* Lets the name go and ends the thread: `open` is never called once this returns. */
void pa_application_bus_stop(pa_application_bus *bus);

#endif
