/* The OpenURI portal (org.freedesktop.portal.OpenURI): how an app in a Flatpak sandbox has the
 * desktop open a URL with the user's handler (its browser), started outside the sandbox. */
#ifndef PORTAL_AUTH_OPEN_URI_PORTAL_H
#define PORTAL_AUTH_OPEN_URI_PORTAL_H

/* Asks the portal to open `uri`, on a connection of its own, and waits for its answer (up to
   two minutes: it may ask the user which application to use): 1 when it started the
   handler, 0 when there was no session bus (or no GLib), no portal with the interface, or
   the user cancelled or the start failed. Blocks the caller's thread. */
int pa_portal_open_uri(const char *uri);

#endif
