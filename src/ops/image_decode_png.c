/* PNG through libpng. Errors come back by longjmp instead of libpng's
 * abort(); warnings are dropped. Palettes are expanded, gray below 8 bits
 * scaled up, 16-bit samples cut to their high byte (as Pillow and OpenCV
 * do), alpha and transparency dropped: gray images (with or without alpha)
 * give 1 channel, the others RGB. */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "ops/image_decode.h"

typedef struct src {
    const uint8_t *d;
    size_t n, at;
    char msg[160];
} src;

static void on_read(png_structp p, png_bytep out, size_t len)
{
    src *s = png_get_io_ptr(p);
    if (len > s->n - s->at) png_error(p, "truncated stream");
    memcpy(out, s->d + s->at, len);
    s->at += len;
}

static void on_error(png_structp p, png_const_charp msg)
{
    src *s = png_get_error_ptr(p);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    png_longjmp(p, 1);
}

static void on_warning(png_structp p, png_const_charp msg) {}

ait_status image_png(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    src s = {d, n, 0, "invalid stream"};
    png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, on_error, on_warning);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    png_bytep *volatile rows = NULL;
    if (!info) {
        png_destroy_read_struct(p ? &p : NULL, NULL, NULL);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    /* AIT_OK: libpng's error (in s.msg); else ours, already in e. */
    volatile ait_status status = AIT_OK;
    if (setjmp(png_jmpbuf(p))) {
        free(rows);
        png_destroy_read_struct(&p, &info, NULL);
        return status != AIT_OK ? status : err_set(e, AIT_E_PARSE, "%s", s.msg);
    }
    /* Any size PNG allows (libpng's default stops at 10^6): image_check below
     * refuses large ones with its message. */
    png_set_user_limits(p, 0x7fffffff, 0x7fffffff);
    png_set_chunk_malloc_max(p, 64u << 20);
    png_set_read_fn(p, &s, on_read);
    png_read_info(p, info);
    png_uint_32 w = png_get_image_width(p, info), h = png_get_image_height(p, info);
    int type = png_get_color_type(p, info), depth = png_get_bit_depth(p, info);
    int ch = type & PNG_COLOR_MASK_COLOR ? 3 : 1;
    /* Before png_read_update_info, which allocates a row of the declared width. */
    if ((status = image_check(im, w, h, e)) != AIT_OK) png_longjmp(p, 1);
    if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(p);
    if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(p);
    if (depth == 16) png_set_strip_16(p);
    if (type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(p);
    png_set_interlace_handling(p);
    png_read_update_info(p, info);
    if (png_get_rowbytes(p, info) != (size_t)w * ch) png_error(p, "unexpected row layout");
    if ((status = image_alloc(im, w, h, ch, e)) != AIT_OK) png_longjmp(p, 1);
    rows = malloc(sizeof *rows * h);
    if (!rows) {
        status = err_set(e, AIT_E_NOMEM, "out of memory");
        png_longjmp(p, 1);
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = im->px + (size_t)y * w * ch;
    png_read_image(p, rows);
    /* What follows the pixels (IEND, text) is not read: not needed. */
    free(rows);
    png_destroy_read_struct(&p, &info, NULL);
    return AIT_OK;
}
