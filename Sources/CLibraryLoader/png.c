/* libpng, loaded by the first PNG (pa_png_write_gray1 in CPNG's shim calls these). */
#include "loader.h"
#include "../CPNG/shim.h"

#include <stdlib.h>

#define PNG_FUNCTIONS(F, V, R) \
    F(png_create_write_struct, png_structp, \
      (png_const_charp version, png_voidp error_context, png_error_ptr error_fn, png_error_ptr warning_fn), \
      (version, error_context, error_fn, warning_fn), NULL) \
    F(png_create_info_struct, png_infop, (png_const_structrp png), (png), NULL) \
    V(png_destroy_write_struct, (png_structpp png, png_infopp info), (png, info)) \
    F(png_set_longjmp_fn, jmp_buf *, (png_structrp png, png_longjmp_ptr longjmp_fn, size_t jmp_buf_size), \
      (png, longjmp_fn, jmp_buf_size), NULL) \
    R(png_longjmp) \
    R(png_error) \
    V(png_set_write_fn, (png_structrp png, png_voidp context, png_rw_ptr write_fn, png_flush_ptr flush_fn), \
      (png, context, write_fn, flush_fn)) \
    F(png_get_io_ptr, png_voidp, (png_const_structrp png), (png), NULL) \
    V(png_set_IHDR, \
      (png_const_structrp png, png_inforp info, png_uint_32 width, png_uint_32 height, int bit_depth, \
       int color_type, int interlace, int compression, int filter), \
      (png, info, width, height, bit_depth, color_type, interlace, compression, filter)) \
    V(png_set_compression_level, (png_structrp png, int level), (png, level)) \
    V(png_set_filter, (png_structrp png, int method, int filters), (png, method, filters)) \
    V(png_write_info, (png_structrp png, png_const_inforp info), (png, info)) \
    V(png_write_row, (png_structrp png, png_const_bytep row), (png, row)) \
    V(png_write_end, (png_structrp png, png_inforp info), (png, info))

PA_LIBRARY(pa_png_load_error, "libpng", "libpng16.so.16", PNG_FUNCTIONS)

/* The two that never return (they longjmp); only libpng's own callbacks call them, so the
   library is loaded by then. */

PA_HIDDEN void (png_longjmp)(png_const_structrp png, int value) {
    PA_FUNCTION(png_longjmp)(png, value);
    abort();
}

PA_HIDDEN void (png_error)(png_const_structrp png, png_const_charp message) {
    PA_FUNCTION(png_error)(png, message);
    abort();
}
