#ifndef PORTAL_AUTH_CPNG_SHIM_H
#define PORTAL_AUTH_CPNG_SHIM_H

/* libpng. Its errors longjmp to the setjmp of the failing call's caller, and a longjmp must
   never cross Swift frames: every png_write_* call happens in the C function below, which
   owns the setjmp and returns a status. (Swift may call the simplified png_image_* API,
   which catches its own errors.) */
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libpng is not linked: Sources/CLibraryLoader/png.c defines the functions the writer below
   calls, loading libpng on first use. (The tests read PNGs with libpng's own png_image_*,
   linking it themselves.) */

/* Loads libpng (once): NULL, or why it could not be loaded. */
const char *pa_png_load_error(void);

/* The PNG stream, growing in memory. */
typedef struct pa_png_buffer {
    unsigned char *bytes;
    size_t length;
    size_t capacity;
} pa_png_buffer;

static inline void pa_png_append(png_structp png, png_bytep data, size_t length) {
    pa_png_buffer *buffer = (pa_png_buffer *)png_get_io_ptr(png);
    if (length > buffer->capacity - buffer->length) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (length > capacity - buffer->length) {
            if (capacity > SIZE_MAX / 2) png_error(png, "too large");
            capacity *= 2;
        }
        unsigned char *grown = (unsigned char *)realloc(buffer->bytes, capacity);
        if (!grown) png_error(png, "out of memory");
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
}

static inline void pa_png_flush(png_structp png) { (void)png; }

/* The library is silent: an error only unwinds to the setjmp, a warning is dropped. */
static inline void pa_png_error(png_structp png, png_const_charp message) {
    (void)message;
    png_longjmp(png, 1);
}

static inline void pa_png_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/* Writes a 1-bit grayscale PNG (no alpha: opaque) of `height` rows of `row_bytes` bytes
   from `rows`: bit 1 is white, the most significant bit the leftmost pixel. Deterministic:
   no time or text chunk, fixed compression settings. On success returns 0 and hands over
   *out_bytes (malloc'd; the caller frees it) and *out_length; on failure returns -1 and
   sets *out_bytes to NULL. */
static inline int pa_png_write_gray1(uint32_t width, uint32_t height, const unsigned char *rows,
                                     size_t row_bytes, unsigned char **out_bytes, size_t *out_length) {
    *out_bytes = NULL;
    *out_length = 0;
    /* On the heap and assigned before setjmp: defined after a longjmp, unlike a local the
       write callback changed. */
    pa_png_buffer *buffer = (pa_png_buffer *)calloc(1, sizeof *buffer);
    if (!buffer) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, pa_png_error, pa_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        free(buffer);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(buffer->bytes);
        free(buffer);
        return -1;
    }
    png_set_write_fn(png, buffer, pa_png_append, pa_png_flush);
    png_set_IHDR(png, info, width, height, 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 9);
    /* Filters do not pay at one bit a pixel (libpng's own advice). */
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) png_write_row(png, rows + (size_t)y * row_bytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out_bytes = buffer->bytes;
    *out_length = buffer->length;
    free(buffer);
    return 0;
}

#endif
