/* portal-auth-glib: Portal's Client Auth sign-in as GObjects, over the C library libportalauth.
 * The one header to include. */
#pragma once

#define PORTAL_AUTH_GLIB_INSIDE
#include "portal-auth-client.h"
#include "portal-auth-enums.h"
#include "portal-auth-error.h"
#include "portal-auth-methods.h"
#include "portal-auth-qr-code.h"
#include "portal-auth-result.h"
#include "portal-auth-session.h"
#undef PORTAL_AUTH_GLIB_INSIDE
