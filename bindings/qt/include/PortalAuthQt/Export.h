// The library's exported names: the API alone (it is built with hidden visibility).
#pragma once

#if defined(PORTAL_AUTH_QT_BUILDING)
#define PORTAL_AUTH_QT_EXPORT __attribute__((visibility("default")))
#else
#define PORTAL_AUTH_QT_EXPORT
#endif
