/* portal-auth-gtk-example: a GTK 4 app that signs its users in with Portal's Client Auth
 * through portal-auth-glib. Run it with a redirect URL as its argument (as the desktop does
 * when a link to its scheme is opened) to complete a sign-in in the running app. */
#include "sign-in-app.h"

int
main (int argc, char **argv)
{
    SignInApp *app = sign_in_app_new ();
    int status = g_application_run (G_APPLICATION (app), argc, argv);
    g_object_unref (app);
    return status;
}
