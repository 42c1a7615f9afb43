/* SignInApp: the application, the handler of its redirect URL's scheme. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SIGN_IN_TYPE_APP (sign_in_app_get_type ())
G_DECLARE_FINAL_TYPE (SignInApp, sign_in_app, SIGN_IN, APP, GtkApplication)

SignInApp *sign_in_app_new (void);

G_END_DECLS
