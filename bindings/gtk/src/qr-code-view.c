/* QrCodeView paints the QR code's modules itself rather than scaling a bitmap: each module is
 * a square of a whole number of pixels, so the code stays sharp on any display, HiDPI
 * included, and a phone's camera reads it at any window size. */
#include "qr-code-view.h"

struct _QrCodeView {
    GtkWidget parent_instance;
    PortalAuthQrCode *code;
};

G_DEFINE_FINAL_TYPE (QrCodeView, qr_code_view, GTK_TYPE_WIDGET)

/* Pixels a module when the widget is as large as it likes to be. */
enum { NATURAL_MODULE = 6, SMALLEST_MODULE = 3 };

static void
qr_code_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                      int *minimum_baseline, int *natural_baseline)
{
    (void) orientation;
    (void) for_size;
    (void) minimum_baseline;
    (void) natural_baseline;
    QrCodeView *self = QR_CODE_VIEW (widget);
    int side = self->code ? portal_auth_qr_code_get_side (self->code) : 0;
    *minimum = side * SMALLEST_MODULE;
    *natural = side * NATURAL_MODULE;
}

static void
qr_code_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
    QrCodeView *self = QR_CODE_VIEW (widget);
    if (!self->code)
        return;
    int side = portal_auth_qr_code_get_side (self->code);
    int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
    /* Whole pixels a module (device pixels too at any integer scale), the code centred. */
    int module = MIN (width, height) / side;
    if (module < 1)
        return;
    float left = (float) ((width - module * side) / 2), top = (float) ((height - module * side) / 2);
    const GdkRGBA white = { 1, 1, 1, 1 }, black = { 0, 0, 0, 1 };
    gtk_snapshot_append_color (snapshot, &white, &GRAPHENE_RECT_INIT (left, top, (float) (module * side), (float) (module * side)));
    for (int row = 0; row < side; row++) {
        /* One rectangle for each run of dark modules in the row. */
        for (int column = 0; column < side;) {
            if (!portal_auth_qr_code_is_dark (self->code, row, column)) {
                column++;
                continue;
            }
            int run = column;
            while (run < side && portal_auth_qr_code_is_dark (self->code, row, run))
                run++;
            gtk_snapshot_append_color (snapshot, &black,
                                       &GRAPHENE_RECT_INIT (left + (float) (column * module), top + (float) (row * module),
                                                            (float) ((run - column) * module), (float) module));
            column = run;
        }
    }
}

static void
qr_code_view_dispose (GObject *object)
{
    g_clear_object (&QR_CODE_VIEW (object)->code);
    G_OBJECT_CLASS (qr_code_view_parent_class)->dispose (object);
}

static void
qr_code_view_class_init (QrCodeViewClass *klass)
{
    G_OBJECT_CLASS (klass)->dispose = qr_code_view_dispose;
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
    widget_class->measure = qr_code_view_measure;
    widget_class->snapshot = qr_code_view_snapshot;
    gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
qr_code_view_init (QrCodeView *self)
{
    gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                    "QR code to scan with your authenticator app", -1);
}

GtkWidget *
qr_code_view_new (void)
{
    return g_object_new (QR_CODE_TYPE_VIEW, NULL);
}

/* Shows `code` (NULL: nothing). */
void
qr_code_view_set_code (QrCodeView *self, PortalAuthQrCode *code)
{
    if (g_set_object (&self->code, code))
        gtk_widget_queue_resize (GTK_WIDGET (self));
}
