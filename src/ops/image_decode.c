/* Picks the decoder by the stream's signature; the common allocation with
 * its size limit. */
#include <stdlib.h>
#include <string.h>

#include "ops/image_decode.h"

typedef struct format {
    const char *name;
    const char *magic;
    size_t len, at; /* magic is data[at..at+len) */
    ait_status (*decode)(const uint8_t *, size_t, image *, ait_error *);
} format;

static const format formats[] = {
    {"BMP", "BM", 2, 0, image_bmp},
    {"JPEG", "\xff\xd8\xff", 3, 0, image_jpeg},
    {"PNG", "\x89PNG\r\n\x1a\n", 8, 0, image_png},
    {"TIFF", "II*\0", 4, 0, image_tiff},
    {"TIFF", "MM\0*", 4, 0, image_tiff},
    {"BigTIFF", "II+\0", 4, 0, image_tiff},
    {"BigTIFF", "MM\0+", 4, 0, image_tiff},
    {"WebP", "WEBP", 4, 8, image_webp}, /* after "RIFF" and the size */
    {"JPEG 2000", "\0\0\0\x0cjP  \r\n\x87\n", 12, 0, image_jp2},
    {"JPEG 2000", "\xff\x4f\xff\x51", 4, 0, image_jp2}, /* a bare codestream */
};

ait_status image_decode(const uint8_t *data, size_t n, int64_t max_pixels, image *im,
                        ait_error *e)
{
    memset(im, 0, sizeof *im);
    im->max_pixels = max_pixels > 0 ? max_pixels : IMG_MAX_PIXELS;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        const format *f = &formats[i];
        if (n >= f->at + f->len && memcmp(data + f->at, f->magic, f->len) == 0 &&
            (f->at == 0 || memcmp(data, "RIFF", 4) == 0)) {
            ait_status s = f->decode(data, n, im, e);
            if (s != AIT_OK) {
                image_free(im);
                err_prefix(e, "%s: ", f->name);
            }
            return s;
        }
    }
    if (n >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7') {
        ait_status s = image_pnm(data, n, im, e);
        if (s != AIT_OK) image_free(im);
        return s;
    }
    return err_set(e, AIT_E_PARSE, "not an image of a known format (%zu bytes)", n);
}

void image_free(image *im)
{
    free(im->px);
    im->px = NULL;
    im->w = im->h = im->ch = 0;
}

ait_status image_check(const image *im, int64_t w, int64_t h, ait_error *e)
{
    if (w <= 0 || h <= 0)
        return err_set(e, AIT_E_PARSE, "declared size %lldx%lld is empty", (long long)w,
                       (long long)h);
    if (w > im->max_pixels || h > im->max_pixels / w)
        return err_set(e, AIT_E_OVERFLOW, "declared size %lldx%lld is over the limit of "
                       "%lld pixels", (long long)w, (long long)h, (long long)im->max_pixels);
    return AIT_OK;
}

ait_status image_alloc(image *im, int64_t w, int64_t h, int ch, ait_error *e)
{
    TRY(image_check(im, w, h, e));
    free(im->px);
    im->px = malloc((size_t)(w * h * ch));
    if (!im->px)
        return err_set(e, AIT_E_NOMEM, "out of memory for a %lldx%lld image", (long long)w,
                       (long long)h);
    im->w = w, im->h = h, im->ch = ch;
    return AIT_OK;
}
