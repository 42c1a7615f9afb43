/* The OpenURI portal (org.freedesktop.portal.OpenURI): how an app in a Flatpak sandbox has the
 * desktop open a URL with the user's handler (its browser), started outside the sandbox. */
#ifndef PORTAL_AUTH_OPEN_URI_PORTAL_H
#define PORTAL_AUTH_OPEN_URI_PORTAL_H

/* Asks the portal to open `uri`, on a connection of its own, within 5 s: 1 when the portal
   took the request (it then starts the handler itself), 0 when there was no session bus, no
   portal with the interface, or a refusal. Blocks the caller's thread. */
int pa_portal_open_uri(const char *uri);

#endif
