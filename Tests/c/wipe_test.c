/* C test that the library wipes each secret it handed over, or was handed, before it frees
 * it: in the build a host links (the release build, as `make install` lays it out), where an
 * optimiser may drop a memset before free. This program's own free() sees every block the
 * library frees before the C library takes it back, and checks the watched bytes are zero
 * by then. Against the Portal emulator in PORTAL_AUTH_TEST_API_HOST:
 *   the token of portal_auth_session_copy_token, the TOTP secret and the SVG and terminal
 *   QR codes (portal_auth_string_free), the PNG QR code (portal_auth_bytes_free), a result's
 *   userJwt and TOTP link (freed with the result), a host storage's value (freed once read).
 * Named cases (test_support.h's run_cases). */
#define _GNU_SOURCE /* malloc_usable_size */
#include "session_support.h"

#include <malloc.h>

/* A secret the library holds in memory of its own: its place, and what free() found. */
typedef struct {
    const char *name;
    const unsigned char *bytes;
    size_t length;
    int freed;   /* its block went to free() */
    int wiped;   /* every byte was zero then */
} watched;

static watched secrets[16];
static size_t secret_count;

/* Starts watching `length` bytes at `bytes`; they must be wiped when their block is freed. */
static watched *watch(const char *name, const void *bytes, size_t length) {
    pthread_mutex_lock(&lock);
    watched *secret = &secrets[secret_count++];
    *secret = (watched){ .name = name, .bytes = bytes, .length = length };
    pthread_mutex_unlock(&lock);
    return secret;
}

extern void __libc_free(void *pointer);

/* Every free of the process passes here first: the library's calls of free() resolve to this
   definition, since the executable comes first in the dynamic linker's search. */
void free(void *pointer) {
    if (pointer) {
        const unsigned char *start = pointer, *end = start + malloc_usable_size(pointer);
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < secret_count; i++) {
            watched *secret = &secrets[i];
            if (secret->freed || secret->bytes < start || secret->bytes + secret->length > end) continue;
            int zero = 1;
            for (size_t j = 0; j < secret->length; j++) zero &= secret->bytes[j] == 0;
            secret->wiped = zero;
            secret->freed = 1;
        }
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
    __libc_free(pointer);
}

/* Waits until the library has freed `secret`, and says whether it was wiped first. */
static int freed_wiped(const watched *secret) {
    int freed = wait_count_within(&secret->freed, 1, 30);
    if (!freed) fprintf(stderr, "%s: never freed\n", secret->name);
    else if (!secret->wiped) fprintf(stderr, "%s: freed unwiped\n", secret->name);
    return freed && secret->wiped;
}

#define LINK "otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Portal"

/* The host's store: one session, handed to the library as a fresh malloc'd copy. */
static const char *stored_session;
static watched *host_value;

static int host_get(void *user_data, const char *environment_id, char **out_value) {
    (void)user_data;
    (void)environment_id;
    *out_value = strdup(stored_session);
    if (*out_value) host_value = watch("the host storage's value", *out_value, strlen(*out_value));
    return 0;
}

static int host_set(void *user_data, const char *environment_id, const char *value) {
    (void)user_data, (void)environment_id, (void)value;
    return 0;
}

static int host_remove(void *user_data, const char *environment_id) {
    (void)user_data, (void)environment_id;
    return 0;
}

static watched *user_jwt, *totp_link;

static void on_totp_step(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    outcome *out = user_data;
    out->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    const char *jwt = portal_auth_result_user_jwt(result), *link = portal_auth_result_totp_link(result);
    if (jwt) user_jwt = watch("the result's userJwt", jwt, strlen(jwt));
    if (link) totp_link = watch("the result's TOTP link", link, strlen(link));
    count_call(&out->calls);
}

/* A string the library handed over, freed with portal_auth_string_free. */
static void check_string(const char *name, char *string) {
    CHECK(string != NULL);
    if (!string) return;
    const watched *secret = watch(name, string, strlen(string));
    portal_auth_string_free(string);
    CHECK(freed_wiped(secret));
}

/* Enrollment: the secret, the SVG and terminal codes, the PNG. */
static void enrollment_secret_and_codes_wiped(void) {
    char *text = NULL;
    CHECK(portal_auth_totp_secret(LINK, &text, NULL) == PORTAL_AUTH_OK);
    check_string("the TOTP secret", text);
    CHECK(portal_auth_totp_qr_svg(LINK, 4, &text, NULL) == PORTAL_AUTH_OK);
    check_string("the SVG QR code", text);
    CHECK(portal_auth_totp_qr_terminal(LINK, PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK, &text, NULL) == PORTAL_AUTH_OK);
    check_string("the terminal QR code", text);
    uint8_t *png = NULL;
    size_t png_length = 0;
    CHECK(portal_auth_totp_qr_png(LINK, 4, &png, &png_length, NULL) == PORTAL_AUTH_OK);
    CHECK(png != NULL && png_length > 0);
    const watched *png_bytes = watch("the PNG QR code", png, png_length);
    portal_auth_bytes_free(png);
    CHECK(freed_wiped(png_bytes));
}

/* A first sign-in's TOTP step: its userJwt and link go with the result. */
static void totp_step_jwt_and_link_wiped(void) {
    portal_auth *client = demo_client();
    char url[1024];
    grant_redirect("env-demo", "wipe@example.com", url, sizeof url);
    outcome step = {0};
    CHECK(portal_auth_handle_redirect(client, url, on_totp_step, &step, NULL) == PORTAL_AUTH_OK);
    wait_calls(&step.calls);
    CHECK(step.code == PORTAL_AUTH_OK && user_jwt && totp_link);
    if (user_jwt) CHECK(freed_wiped(user_jwt));
    if (totp_link) CHECK(freed_wiped(totp_link));
    portal_auth_free(client);
}

/* A stored session, read from the host's store: its value, then the token handed over. */
static void stored_value_and_token_wiped(void) {
    stored_session = "{\"clientSessionToken\":\"cst_wipe_test_token\",\"endUserId\":\"eu_wipe\"}";
    portal_auth_storage_callbacks callbacks = {
        .size = sizeof callbacks, .get = host_get, .set = host_set, .remove = host_remove,
    };
    portal_auth_options options = emulator_options("env-open");
    options.storage = PORTAL_AUTH_STORAGE_HOST;
    options.host_storage = &callbacks;
    portal_auth *client = NULL;
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    outcome restored = restore(client);
    CHECK(restored.code == PORTAL_AUTH_OK && restored.session != NULL);
    CHECK(host_value != NULL);
    if (host_value) CHECK(freed_wiped(host_value));
    if (restored.session) {
        char *token = NULL;
        CHECK(portal_auth_session_copy_token(restored.session, &token, NULL) == PORTAL_AUTH_OK);
        CHECK(token && strcmp(token, "cst_wipe_test_token") == 0);
        check_string("the session's token", token);
        portal_auth_session_release(restored.session);
    }
    portal_auth_free(client);
}

static const test_case cases[] = {
    { "enrollment_secret_and_codes_wiped", enrollment_secret_and_codes_wiped, NULL },
    { "totp_step_jwt_and_link_wiped", totp_step_jwt_and_link_wiped, NULL },
    { "stored_value_and_token_wiped", stored_value_and_token_wiped, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "wipe_test", cases);
}
