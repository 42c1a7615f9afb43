#ifndef PORTAL_AUTH_CQRENCODE_SHIM_H
#define PORTAL_AUTH_CQRENCODE_SHIM_H

/* libqrencode (Debian's build is thread-safe): the QR matrix of a TOTP enrollment link. */
#include <qrencode.h>

/* libqrencode is not linked: Sources/CLibraryLoader/qrencode.c defines the functions the
   core calls, loading libqrencode on first use. */

/* Loads libqrencode (once): NULL, or why it could not be loaded. */
const char *pa_qrencode_load_error(void);

#endif
