#ifndef PORTAL_AUTH_CQRENCODE_SHIM_H
#define PORTAL_AUTH_CQRENCODE_SHIM_H

/* libqrencode (Debian's build is thread-safe): the QR matrix of a TOTP enrollment link. */
#include <qrencode.h>

#endif
