/* QrCodeView: a widget that paints a PortalAuthQrCode from its modules, crisp at any size. */
#pragma once

#include <gtk/gtk.h>
#include <portal-auth-glib.h>

G_BEGIN_DECLS

#define QR_CODE_TYPE_VIEW (qr_code_view_get_type ())
G_DECLARE_FINAL_TYPE (QrCodeView, qr_code_view, QR_CODE, VIEW, GtkWidget)

GtkWidget *qr_code_view_new (void);
void qr_code_view_set_code (QrCodeView *self, PortalAuthQrCode *code);

G_END_DECLS
