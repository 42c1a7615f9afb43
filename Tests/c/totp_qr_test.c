/* C tests of TOTP enrollment (docs/protocol.md §8): the secret, and the QR code as PNG bytes,
 * a module matrix, SVG text and terminal text, with the ownership the header states; bad
 * arguments of every kind. Run under valgrind by scripts/test-c.sh; the PNG, and the
 * matrix painted as a PBM image, are read back with zbarimg. Named cases (test_support.h's
 * run_cases). */
/* popen, mkstemp */
#define _POSIX_C_SOURCE 200809L

#include "test_support.h"

#include <math.h>
#include <stdint.h>
#include <unistd.h>

#define LINK "otpauth://totp/Portal:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Portal"

/* A failed call's error, which the call stored in *slot: `code`, a message that never
   repeats the link or its secret, and for INVALID_ARGUMENT the argument's name. Frees it. */
static void expect_error(portal_auth_code got, portal_auth_error **slot, portal_auth_code code, const char *name) {
    portal_auth_error *error = *slot;
    *slot = NULL;
    CHECK(got == code);
    CHECK(error != NULL && portal_auth_error_code(error) == code);
    const char *message = portal_auth_error_message(error);
    CHECK(message != NULL && message[0] != 0 && !strstr(message, "JBSWY3DP") && !strstr(message, "otpauth:"));
    const char *actual = portal_auth_error_name(error);
    if (name) CHECK(actual != NULL && strcmp(actual, name) == 0);
    else CHECK(actual == NULL);
    portal_auth_error_free(error);
}

/* PNG width and height from the IHDR chunk. */
static uint32_t png_side(const uint8_t *png, size_t length, uint32_t *height) {
    if (length < 24 || memcmp(png, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(png + 12, "IHDR", 4) != 0) return 0;
    *height = (uint32_t)png[20] << 24 | (uint32_t)png[21] << 16 | (uint32_t)png[22] << 8 | png[23];
    return (uint32_t)png[16] << 24 | (uint32_t)png[17] << 16 | (uint32_t)png[18] << 8 | png[19];
}

/* What zbarimg reads from the image (a PNG, a PBM), into `out`. */
static void zbar_read(const uint8_t *png, size_t length, char *out, size_t size) {
    char path[] = "/tmp/portal-auth-qr-XXXXXX";
    int fd = mkstemp(path);
    out[0] = 0;
    if (fd < 0 || write(fd, png, length) != (ssize_t)length) abort();
    close(fd);
    char command[128];
    snprintf(command, sizeof command, "zbarimg --raw -q -Sbinary %s 2>/dev/null", path);
    FILE *pipe = popen(command, "r");
    if (!pipe) abort();
    size_t count = fread(out, 1, size - 1, pipe);
    out[count] = 0;
    pclose(pipe);
    unlink(path);
}

static void secret_of_a_link(void) {
    char *secret = (char *)1;
    portal_auth_error *error = (portal_auth_error *)1;
    CHECK(portal_auth_totp_secret("  " LINK "\n", &secret, &error) == PORTAL_AUTH_OK);
    CHECK(error == NULL && secret != NULL && strcmp(secret, "JBSWY3DPEHPK3PXP") == 0);
    portal_auth_string_free(secret);

    /* No valid secret is not an error: NULL, as TotpRequiredResult.totpSecret is nil. */
    const char *without[] = { "", "https://example.com/?secret=JBSWY3DP", "otpauth://totp/x", "otpauth://totp/x?secret=AB1C" };
    for (size_t i = 0; i < sizeof without / sizeof *without; i++) {
        secret = (char *)1;
        CHECK(portal_auth_totp_secret(without[i], &secret, &error) == PORTAL_AUTH_OK);
        CHECK(secret == NULL && error == NULL);
    }

    secret = (char *)1;
    expect_error(portal_auth_totp_secret(NULL, &secret, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    CHECK(secret == NULL);
    expect_error(portal_auth_totp_secret("otpauth://totp/x?secret=\xff", &secret, &error), &error,
                 PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_secret(LINK, NULL, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_secret");
    /* Without out_error, only the code. */
    CHECK(portal_auth_totp_secret(NULL, &secret, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT);
}

static void png_reads_back(void) {
    uint8_t *png = (uint8_t *)1, *again = NULL, *small = NULL;
    size_t length = 1, again_length = 0, small_length = 0;
    portal_auth_error *error = (portal_auth_error *)1;
    CHECK(portal_auth_totp_qr_png(LINK, 10, &png, &length, &error) == PORTAL_AUTH_OK);
    CHECK(error == NULL && png != NULL && length > 0);
    uint32_t height = 0, width = png_side(png, length, &height);
    CHECK(portal_auth_totp_qr_png(LINK, 1, &small, &small_length, NULL) == PORTAL_AUTH_OK);
    uint32_t modules_and_quiet_zone = png_side(small, small_length, &height);
    CHECK(modules_and_quiet_zone >= 21 + 8 && (modules_and_quiet_zone - 8 - 21) % 4 == 0);
    CHECK(width == modules_and_quiet_zone * 10 && height == modules_and_quiet_zone);
    CHECK(portal_auth_totp_qr_png(LINK, 10, &again, &again_length, NULL) == PORTAL_AUTH_OK);
    CHECK(again_length == length && memcmp(again, png, length) == 0);
    char decoded[256];
    zbar_read(png, length, decoded, sizeof decoded);
    CHECK(strcmp(decoded, LINK) == 0);
    portal_auth_bytes_free(png);
    portal_auth_bytes_free(again);
    portal_auth_bytes_free(small);
    portal_auth_bytes_free(NULL);

    /* Scales: whole pixels, from 1, a side of at most 8192; another is TOTP_QR_UNAVAILABLE, as
       the seed SDK's qrCodeImage(scale:) throws, with a message giving this code's range. */
    char range[64];
    snprintf(range, sizeof range, "from 1 to %u for this code", 8192 / modules_and_quiet_zone);
    const int32_t scales[] = { 0, -1, INT32_MIN, INT32_MAX, 8192, 8192 / modules_and_quiet_zone + 1 };
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
        png = (uint8_t *)1;
        length = 1;
        CHECK(portal_auth_totp_qr_png(LINK, scales[i], &png, &length, &error) == PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE);
        CHECK(error && strstr(portal_auth_error_message(error), range) != NULL);
        expect_error(PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, &error, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
        CHECK(png == NULL && length == 0);
    }
    CHECK(portal_auth_totp_qr_png(LINK, 8192 / modules_and_quiet_zone, &png, &length, NULL) == PORTAL_AUTH_OK);
    CHECK(png_side(png, length, &height) <= 8192);
    portal_auth_bytes_free(png);

    /* Unusable links. */
    const char *unusable[] = { "", "   ", "https://example.com/?secret=JBSWY3DP", "otpauth://totp/x?issuer=P",
                               "otpauth://totp/x?secret=AB1C" };
    for (size_t i = 0; i < sizeof unusable / sizeof *unusable; i++) {
        expect_error(portal_auth_totp_qr_png(unusable[i], 10, &png, &length, &error), &error, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
        CHECK(png == NULL);
    }

    /* Bad arguments. */
    expect_error(portal_auth_totp_qr_png(NULL, 10, &png, &length, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_qr_png("otpauth://totp/\xc3\x28?secret=AA", 10, &png, &length, &error), &error,
                 PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_qr_png(LINK, 10, NULL, &length, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_png");
    expect_error(portal_auth_totp_qr_png(LINK, 10, &png, NULL, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_length");
    CHECK(png == NULL);
}

/* Links of 200,000 characters: too long for a QR code, or carrying no secret. */
static void hostile_links_refused(void) {
    const size_t size = 200000;
    char *link = malloc(size + 1);
    if (!link) abort();
    const char *heads[] = { "otpauth://totp/x?secret=JBSWY3DP&issuer=", "otpauth://totp/x?secret=", "otpauth://totp/x?" };
    const char fills[] = { 'A', '%', '&' };
    for (size_t h = 0; h < sizeof heads / sizeof *heads; h++) {
        for (size_t f = 0; f < sizeof fills; f++) {
            strcpy(link, heads[h]);
            memset(link + strlen(heads[h]), fills[f], size - strlen(heads[h]));
            link[size] = 0;
            uint8_t *png = (uint8_t *)1;
            size_t length = 1;
            portal_auth_error *error = NULL;
            expect_error(portal_auth_totp_qr_png(link, 10, &png, &length, &error), &error, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
            CHECK(png == NULL && length == 0);
            char *text = NULL;
            CHECK(portal_auth_totp_qr_terminal(link, PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK, &text, NULL) == PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE);
            CHECK(text == NULL);
        }
    }
    free(link);
}

/* The matrix: the PNG's side, its layout, and the code itself, painted 4 pixels a module as
   a PBM image (whose rows are packed the same way) for zbarimg to read. */
static void matrix_reads_back(void) {
    int32_t side = -1;
    uint8_t *modules = (uint8_t *)1, *png = NULL;
    size_t length = 1, png_length = 0;
    portal_auth_error *error = (portal_auth_error *)1;
    CHECK(portal_auth_totp_qr_matrix(LINK, &side, &modules, &length, &error) == PORTAL_AUTH_OK);
    CHECK(error == NULL && modules != NULL);
    CHECK(portal_auth_totp_qr_png(LINK, 1, &png, &png_length, NULL) == PORTAL_AUTH_OK);
    uint32_t height = 0;
    CHECK(side > 0 && png_side(png, png_length, &height) == (uint32_t)side && height == (uint32_t)side);
    portal_auth_bytes_free(png);
    size_t row_bytes = ((size_t)side + 7) / 8;
    CHECK(length == (size_t)side * row_bytes);
    if (!modules || length != (size_t)side * row_bytes) return;

    /* The quiet zone and a row's padding bits are clear; the finder pattern's corner is dark. */
    int clear = 1;
    for (int32_t row = 0; row < side; row++)
        for (int32_t column = 0; column < (int32_t)(row_bytes * 8); column++) {
            int dark = modules[(size_t)row * row_bytes + (size_t)column / 8] >> (7 - column % 8) & 1;
            int outside = row < 4 || row >= side - 4 || column < 4 || column >= side - 4;
            if (outside && dark) clear = 0;
        }
    CHECK(clear && (modules[4 * row_bytes] & 0x08) != 0);

    enum { pixels = 4 };
    size_t image_row = ((size_t)side * pixels + 7) / 8, header = 32;
    uint8_t *pbm = calloc(header + image_row * (size_t)side * pixels, 1);
    if (!pbm) abort();
    int written = snprintf((char *)pbm, header, "P4\n%d %d\n", (int)side * pixels, (int)side * pixels);
    uint8_t *pixel_rows = pbm + written;
    for (int32_t y = 0; y < side * pixels; y++)
        for (int32_t x = 0; x < side * pixels; x++)
            if (modules[(size_t)(y / pixels) * row_bytes + (size_t)(x / pixels) / 8] >> (7 - (x / pixels) % 8) & 1)
                pixel_rows[(size_t)y * image_row + (size_t)x / 8] |= (uint8_t)(0x80 >> (x % 8));
    char decoded[256];
    zbar_read(pbm, (size_t)written + image_row * (size_t)side * pixels, decoded, sizeof decoded);
    CHECK(strcmp(decoded, LINK) == 0);
    free(pbm);
    portal_auth_bytes_free(modules);

    /* Failures clear every output. */
    side = 7;
    modules = (uint8_t *)1;
    length = 7;
    expect_error(portal_auth_totp_qr_matrix("https://example.com/", &side, &modules, &length, &error), &error,
                 PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
    CHECK(side == 0 && modules == NULL && length == 0);
    expect_error(portal_auth_totp_qr_matrix(NULL, &side, &modules, &length, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_qr_matrix("\xff", &side, &modules, &length, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_qr_matrix(LINK, NULL, &modules, &length, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_side");
    expect_error(portal_auth_totp_qr_matrix(LINK, &side, NULL, &length, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_modules");
    expect_error(portal_auth_totp_qr_matrix(LINK, &side, &modules, NULL, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_length");
    CHECK(modules == NULL && side == 0);
}

static void svg_text(void) {
    char *svg = (char *)1;
    portal_auth_error *error = (portal_auth_error *)1;
    CHECK(portal_auth_totp_qr_svg(LINK, 4, &svg, &error) == PORTAL_AUTH_OK);
    CHECK(error == NULL && svg != NULL && strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    CHECK(svg != NULL && strstr(svg, "viewBox=\"0 0 ") != NULL && strstr(svg, "</svg>") != NULL);
    portal_auth_string_free(svg);

    svg = (char *)1;
    expect_error(portal_auth_totp_qr_svg(LINK, 0, &svg, &error), &error, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
    CHECK(svg == NULL);
    expect_error(portal_auth_totp_qr_svg("otpauth://totp/x", 4, &svg, &error), &error, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
    expect_error(portal_auth_totp_qr_svg(NULL, 4, &svg, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_qr_svg(LINK, 4, NULL, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_svg");
}

/* Lines of the text, each `side` characters of " ▀▄█" (the blocks are 3 bytes in UTF-8). */
static int terminal_lines(const char *text, size_t *side) {
    int lines = 0;
    *side = 0;
    for (const char *line = text; *line; lines++) {
        const char *end = strchr(line, '\n');
        if (!end) return -1;
        size_t columns = 0;
        for (const char *at = line; at < end; columns++) {
            if (*at == ' ') at += 1;
            else if (strncmp(at, "\xe2\x96\x80", 3) == 0 || strncmp(at, "\xe2\x96\x84", 3) == 0 || strncmp(at, "\xe2\x96\x88", 3) == 0) at += 3;
            else return -1;
        }
        if (*side != 0 && columns != *side) return -1;
        *side = columns;
        line = end + 1;
    }
    return lines;
}

static void terminal_text(void) {
    char *light = NULL, *dark = NULL;
    portal_auth_error *error = NULL;
    CHECK(portal_auth_totp_qr_terminal(LINK, PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK, &light, &error) == PORTAL_AUTH_OK);
    CHECK(portal_auth_totp_qr_terminal(LINK, PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT, &dark, &error) == PORTAL_AUTH_OK);
    CHECK(error == NULL && light != NULL && dark != NULL);
    size_t side = 0;
    int lines = light ? terminal_lines(light, &side) : -1;
    CHECK(lines > 0 && (size_t)lines == (side + 1) / 2 && side >= 21 + 8);
    /* A light-on-dark terminal draws the quiet zone in blocks; a dark-on-light one leaves it blank. */
    CHECK(light != NULL && strncmp(light, "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88", 12) == 0);
    CHECK(dark != NULL && strncmp(dark, "    ", 4) == 0);
    portal_auth_string_free(light);
    portal_auth_string_free(dark);

    char *text = (char *)1;
    expect_error(portal_auth_totp_qr_terminal(LINK, 2, &text, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "colors");
    CHECK(text == NULL);
    expect_error(portal_auth_totp_qr_terminal("", 0, &text, &error), &error, PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE, NULL);
    expect_error(portal_auth_totp_qr_terminal("\xff", 0, &text, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "otpauth_url");
    expect_error(portal_auth_totp_qr_terminal(LINK, 0, NULL, &error), &error, PORTAL_AUTH_E_INVALID_ARGUMENT, "out_text");
}

/* Any thread, at once: every render from four threads equals the first. */
static uint8_t *reference;
static size_t reference_length;
static int mismatches;

static void *render_many(void *unused) {
    (void)unused;
    for (int i = 0; i < 10; i++) {
        uint8_t *png = NULL;
        size_t length = 0;
        int same = portal_auth_totp_qr_png(LINK, 4, &png, &length, NULL) == PORTAL_AUTH_OK
            && length == reference_length && memcmp(png, reference, length) == 0;
        portal_auth_bytes_free(png);
        pthread_mutex_lock(&lock);
        if (!same) mismatches++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void same_png_on_many_threads(void) {
    CHECK(portal_auth_totp_qr_png(LINK, 4, &reference, &reference_length, NULL) == PORTAL_AUTH_OK);
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) pthread_create(&threads[i], NULL, render_many, NULL);
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    CHECK(mismatches == 0);
    portal_auth_bytes_free(reference);
}

static const test_case cases[] = {
    { "secret_of_a_link", secret_of_a_link, NULL },
    { "png_reads_back", png_reads_back, NULL },
    { "hostile_links_refused", hostile_links_refused, NULL },
    { "matrix_reads_back", matrix_reads_back, NULL },
    { "svg_text", svg_text, NULL },
    { "terminal_text", terminal_text, NULL },
    { "same_png_on_many_threads", same_png_on_many_threads, NULL },
};

int main(int argc, char **argv) {
    return RUN_CASES(argc, argv, "totp_qr_test", cases);
}
