/* The system libraries are loaded on first use: loading libportalauth and making a client
 * (keyring storage, the default) loads none of libcurl, libsecret, libqrencode and libpng;
 * the first request loads libcurl, the first keyring access libsecret, the first QR code
 * libqrencode and the first PNG libpng. When one cannot be loaded, only the calls that need
 * it fail, each with an error that names it; the others work. Named cases (test_support.h's
 * run_cases), one a run, since what is loaded is the process's:
 *
 *   libraries_load_on_first_use   every library installed
 *   libcurl_missing, libsecret_missing, libqrencode_missing, libpng_missing
 *                                 that library made unloadable (scripts/test-c.sh covers its
 *                                 file with an empty one in a private mount namespace); only
 *                                 when named
 *
 * Built without libcurl (the curl calls of test_support.h and session_support.h are unused
 * here, and the build links with --as-needed), so nothing but the library can have loaded
 * these. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "session_support.h"

#include <dlfcn.h>

#define LINK "otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Portal"

static const char *hidden = "";  /* the case's unloadable library, or none */

/* Whether `soname` is loaded in this process (RTLD_NOLOAD loads nothing). */
static int loaded(const char *soname) {
    void *handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (handle) dlclose(handle);
    return handle != NULL;
}

/* Which of the four are loaded, as a bit set in the order of `libraries`. */
static const char *const libraries[] = { "libcurl.so.4", "libsecret-1.so.0", "libqrencode.so.4", "libpng16.so.16" };
enum { WITH_CURL = 1, WITH_SECRET = 2, WITH_QRENCODE = 4, WITH_PNG = 8 };

static int loaded_set(void) {
    int set = 0;
    for (int i = 0; i < 4; i++) set |= loaded(libraries[i]) << i;
    return set;
}

/* Loaded by now: `expected`, less a hidden library (which never loads). */
static void expect_loaded(int expected) {
    for (int i = 0; i < 4; i++) {
        if (strcmp(hidden, libraries[i]) == 0) expected &= ~(1 << i);
    }
    int got = loaded_set();
    CHECK(got == expected);
    if (got != expected) fprintf(stderr, "  loaded %#x, expected %#x\n", (unsigned)got, (unsigned)expected);
}

/* When `soname` is the hidden library, the call failed with `code` and a message saying
   that `name` could not be loaded; else it ended in `otherwise` and says nothing of it. */
static void expect_outcome(const outcome *out, const char *soname, portal_auth_code code, const char *name,
                           portal_auth_code otherwise) {
    int missing = strcmp(hidden, soname) == 0;
    char says[64];
    snprintf(says, sizeof says, "%s could not be loaded", name);
    CHECK(out->code == (missing ? code : otherwise));
    CHECK((strstr(out->message, says) != NULL) == missing);
    if (out->code != (missing ? code : otherwise) || (strstr(out->message, says) != NULL) != missing)
        fprintf(stderr, "  code %d: %s\n", (int)out->code, out->message);
}

static outcome get_methods(portal_auth *client) {
    outcome out = { 0 };
    CHECK(portal_auth_get_methods(client, on_methods, &out, NULL) == PORTAL_AUTH_OK);
    wait_calls(&out.calls);
    return out;
}

/* A synchronous call's outcome, from its code and error (freed here). */
static outcome synchronous(portal_auth_code code, portal_auth_error *error) {
    outcome out = { 0 };
    finish(&out, error);
    out.code = code;
    portal_auth_error_free(error);
    return out;
}

/* Each call in turn, `hidden` (maybe "") unloadable. */
static void load_on_first_use(const char *soname) {
    hidden = soname;
    /* The hidden library really cannot be loaded (else this run would prove nothing), and
       nothing has loaded any of them yet. */
    if (*hidden) {
        void *handle = dlopen(hidden, RTLD_NOW | RTLD_LOCAL);
        CHECK(handle == NULL);
        if (handle) dlclose(handle);
    }
    expect_loaded(0);

    /* A client with the default options (keyring storage), and one keeping its session in memory. */
    portal_auth_options options = emulator_options("env-demo");
    options.storage = PORTAL_AUTH_STORAGE_KEYRING;
    portal_auth *keyring_client = NULL, *memory_client = NULL;
    CHECK(portal_auth_new(&options, &keyring_client, NULL) == PORTAL_AUTH_OK);
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    CHECK(portal_auth_new(&options, &memory_client, NULL) == PORTAL_AUTH_OK);
    if (!keyring_client || !memory_client) return;
    expect_loaded(0);

    /* The secret for manual entry needs none of them. */
    char *secret = NULL;
    CHECK(portal_auth_totp_secret(LINK, &secret, NULL) == PORTAL_AUTH_OK && secret && strcmp(secret, "JBSWY3DPEHPK3PXP") == 0);
    portal_auth_string_free(secret);
    expect_loaded(0);

    /* A call that sends nothing loads none of them, not even libcurl, which the I/O thread
       opens for its first request: memory storage never needs libsecret either. */
    outcome memory = restore(memory_client);
    CHECK(memory.code == PORTAL_AUTH_OK);
    portal_auth_session_release(memory.session);
    expect_loaded(0);

    /* The first request: libcurl. A second call meets the same state. */
    outcome methods = get_methods(memory_client);
    expect_outcome(&methods, "libcurl.so.4", PORTAL_AUTH_E_NETWORK, "libcurl", PORTAL_AUTH_OK);
    methods = get_methods(keyring_client);
    expect_outcome(&methods, "libcurl.so.4", PORTAL_AUTH_E_NETWORK, "libcurl", PORTAL_AUTH_OK);
    expect_loaded(WITH_CURL);

    /* The first keyring access: libsecret. With it, the missing bus is the failure. */
    outcome keyring = restore(keyring_client);
    portal_auth_session_release(keyring.session);
    expect_outcome(&keyring, "libsecret-1.so.0", PORTAL_AUTH_E_SESSION_STORAGE_FAILURE, "libsecret",
                   PORTAL_AUTH_E_SESSION_STORAGE_FAILURE);
    CHECK(keyring.reason == (strcmp(hidden, "libsecret-1.so.0") == 0 ? PORTAL_AUTH_REASON_LIBSECRET_MISSING
                                                                      : PORTAL_AUTH_REASON_NO_SESSION_BUS));
    expect_loaded(WITH_CURL | WITH_SECRET);

    /* The first QR code: libqrencode (SVG needs no more), then libpng for the first PNG. */
    char *svg = NULL;
    portal_auth_error *error = NULL;
    portal_auth_code code = portal_auth_totp_qr_svg(LINK, 4, &svg, &error);
    outcome qr = synchronous(code, error);
    expect_outcome(&qr, "libqrencode.so.4", PORTAL_AUTH_E_INTERNAL, "libqrencode", PORTAL_AUTH_OK);
    CHECK((svg != NULL) == (qr.code == PORTAL_AUTH_OK));
    portal_auth_string_free(svg);
    expect_loaded(WITH_CURL | WITH_SECRET | WITH_QRENCODE);

    uint8_t *png = NULL;
    size_t length = 0;
    error = NULL;
    code = portal_auth_totp_qr_png(LINK, 4, &png, &length, &error);
    qr = synchronous(code, error);
    /* Without libqrencode there is no code to draw: that failure comes first. */
    if (strcmp(hidden, "libqrencode.so.4") == 0) {
        expect_outcome(&qr, "libqrencode.so.4", PORTAL_AUTH_E_INTERNAL, "libqrencode", PORTAL_AUTH_OK);
    } else {
        expect_outcome(&qr, "libpng16.so.16", PORTAL_AUTH_E_INTERNAL, "libpng", PORTAL_AUTH_OK);
    }
    CHECK((png != NULL && length > 8 && memcmp(png, "\x89PNG", 4) == 0) == (qr.code == PORTAL_AUTH_OK));
    portal_auth_bytes_free(png);
    expect_loaded(strcmp(hidden, "libqrencode.so.4") == 0 ? WITH_CURL | WITH_SECRET : WITH_CURL | WITH_SECRET | WITH_QRENCODE | WITH_PNG);

    portal_auth_free(keyring_client);
    portal_auth_free(memory_client);
}

static void libraries_load_on_first_use(void) {
    load_on_first_use("");
}

static void libcurl_missing(void) {
    load_on_first_use("libcurl.so.4");
}

static void libsecret_missing(void) {
    load_on_first_use("libsecret-1.so.0");
}

static void libqrencode_missing(void) {
    load_on_first_use("libqrencode.so.4");
}

static void libpng_missing(void) {
    load_on_first_use("libpng16.so.16");
}

static const test_case cases[] = {
    { "libraries_load_on_first_use", libraries_load_on_first_use, NULL },
    { "libcurl_missing", libcurl_missing, "libcurl.so.4 unloadable" },
    { "libsecret_missing", libsecret_missing, "libsecret-1.so.0 unloadable" },
    { "libqrencode_missing", libqrencode_missing, "libqrencode.so.4 unloadable" },
    { "libpng_missing", libpng_missing, "libpng16.so.16 unloadable" },
};

int main(int argc, char **argv) {
    if (!getenv("PORTAL_AUTH_TEST_API_HOST")) { fprintf(stderr, "PORTAL_AUTH_TEST_API_HOST is not set\n"); return 2; }
    /* A session bus that is not there: the keyring calls reach libsecret and fail at once,
       and no keyring of the user's is ever touched. */
    setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/portal-auth-test-bus", 1);
    return RUN_CASES(argc, argv, "lazy_load_test", cases);
}
