/* C test of the library on the oldest glibc it claims (its floor is older still: Debian 11's
 * 2.31 is the oldest Debian here), run by scripts/test-old-glibc.sh inside a Debian 11 root:
 * the library loads there, and a magic-link redirect signs a user in against the Portal
 * emulator in PORTAL_AUTH_TEST_API_HOST (in memory: the root has no keyring), restores, and
 * signs out. Named cases (test_support.h's run_cases). */
#include "session_support.h"

#include <gnu/libc-version.h>

/* Every line the library logs, also on stderr: what went wrong there is seen in the stage's
   output. */
static void log_to_stderr(void *user_data, portal_auth_log_level level, const char *message) {
    audit_log_line(user_data, level, message);
    fprintf(stderr, "library: %s\n", message);
}

/* The glibc this runs on is the one the stage put it on. */
static void runs_on_the_expected_glibc(void) {
    const char *expected = getenv("PORTAL_AUTH_TEST_GLIBC");
    printf("glibc %s\n", gnu_get_libc_version());
    CHECK(expected && strcmp(gnu_get_libc_version(), expected) == 0);
}

static void signs_in_restores_and_signs_out(void) {
    portal_auth_options options = emulator_options("env-open");
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);

    outcome signed_in = sign_in(client, "env-open", "old-glibc@example.com");
    if (signed_in.code != PORTAL_AUTH_OK) fprintf(stderr, "sign-in: code %d, reason %d\n", signed_in.code, signed_in.reason);

    outcome restored = restore(client);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session);
    CHECK(clear_persisted(client).code == PORTAL_AUTH_OK);
    outcome gone = restore(client);
    CHECK(gone.code == PORTAL_AUTH_OK && !gone.session);

    if (signed_in.session) portal_auth_session_release(signed_in.session);
    if (restored.session) portal_auth_session_release(restored.session);
    portal_auth_free(client);
}

static const test_case cases[] = {
    { "runs_on_the_expected_glibc", runs_on_the_expected_glibc, NULL },
    { "signs_in_restores_and_signs_out", signs_in_restores_and_signs_out, NULL },
};

int main(int argc, char **argv) {
    portal_auth_set_log_handler(log_to_stderr, NULL);
    portal_auth_set_log_level(PORTAL_AUTH_LOG_DEBUG);
    return RUN_EMULATOR_CASES(argc, argv, "old_glibc_test", cases);
}
