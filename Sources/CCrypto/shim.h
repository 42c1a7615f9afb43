#ifndef PORTAL_AUTH_CCRYPTO_SHIM_H
#define PORTAL_AUTH_CCRYPTO_SHIM_H
#include <openssl/hmac.h>
#include <openssl/evp.h>
#endif
