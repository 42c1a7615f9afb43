/*
 * portal_auth_types.h: the types of libportalauth's C ABI, written by hand.
 * Include <portal_auth.h>, which includes this file and declares the functions.
 */
#ifndef PORTAL_AUTH_TYPES_H
#define PORTAL_AUTH_TYPES_H

#include <stdint.h>

/* The version these headers describe; portal_auth_version() reports the library's. */
#define PORTAL_AUTH_VERSION_MAJOR 0
#define PORTAL_AUTH_VERSION_MINOR 1
#define PORTAL_AUTH_VERSION_PATCH 0
#define PORTAL_AUTH_VERSION_STRING "0.1.0"
/* One number, comparable: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define PORTAL_AUTH_VERSION_NUMBER \
    (PORTAL_AUTH_VERSION_MAJOR * 10000 + PORTAL_AUTH_VERSION_MINOR * 100 + PORTAL_AUTH_VERSION_PATCH)

#endif
