/* The program each consumer project in this folder builds against an installed
 * libportalauth, as an application's build would find it (pkg-config, CMake, Meson). It
 * checks that the header and the library it loads agree on the version, makes a client with
 * the initialiser macro, and reads an error. Prints "consumer: <version>" and exits 0. */
#include <portal_auth.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    if (portal_auth_version_number() != PORTAL_AUTH_VERSION_NUMBER ||
        strcmp(portal_auth_version(), PORTAL_AUTH_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: built against %s, loaded %s\n", PORTAL_AUTH_VERSION_STRING, portal_auth_version());
        return 1;
    }
    portal_auth_options options = PORTAL_AUTH_OPTIONS_INIT;
    options.auth_environment_id = "env-consumer";
    options.redirect_url = "myapp://auth/callback";
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    portal_auth *client = NULL;
    portal_auth_error *error = NULL;
    if (portal_auth_new(&options, &client, &error) != PORTAL_AUTH_OK) {
        fprintf(stderr, "consumer: %s\n", portal_auth_error_message(error));
        portal_auth_error_free(error);
        return 1;
    }
    portal_auth_free(client);
    options.redirect_url = " ";
    portal_auth_code code = portal_auth_new(&options, &client, &error);
    int refused = code == PORTAL_AUTH_E_INVALID_ARGUMENT && client == NULL &&
                  strcmp(portal_auth_error_name(error), "redirect_url") == 0;
    portal_auth_error_free(error);
    if (!refused) {
        fprintf(stderr, "consumer: a blank redirect URL was not refused\n");
        return 1;
    }
    printf("consumer: %s\n", portal_auth_version());
    return 0;
}
