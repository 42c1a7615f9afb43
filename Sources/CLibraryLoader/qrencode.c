/* libqrencode, loaded by the first QR code. */
#include "loader.h"
#include "../CQREncode/shim.h"

#define QRENCODE_FUNCTIONS(F, V, R) \
    F(QRcode_encodeData, QRcode *, (int size, const unsigned char *data, int version, QRecLevel level), \
      (size, data, version, level), NULL) \
    V(QRcode_free, (QRcode *code), (code))

PA_LIBRARY(pa_qrencode_load_error, "libqrencode", "libqrencode.so.4", QRENCODE_FUNCTIONS)
