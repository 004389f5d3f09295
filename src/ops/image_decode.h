/* The image decoders behind ImageDecoder (src/ops/image.c). Each turns one
 * encoded stream into 8-bit pixels, gray (1 channel) or RGB (3), rows top to
 * bottom, channels last. The bytes are untrusted: a decoder reads only
 * data[0..n), prints nothing, checks the declared size before it allocates,
 * and fails with
 *   AIT_E_PARSE     the stream is not an image it can decode (ImageDecoder
 *                   then gives the spec's empty image),
 *   AIT_E_OVERFLOW  the image has more than IMG_MAX_PIXELS pixels,
 *   AIT_E_NOMEM     out of memory. */
#ifndef AIT_OPS_IMAGE_DECODE_H
#define AIT_OPS_IMAGE_DECODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* 2^28 pixels (16384 x 16384): 768 MiB of RGB. Larger declared sizes are
 * refused before decoding, which stops decompression bombs. */
#define IMG_MAX_PIXELS ((int64_t)1 << 28)

typedef struct image {
    int64_t w, h;
    int ch;      /* 1 (gray) or 3 (RGB) */
    uint8_t *px; /* h * w * ch bytes, malloc'd */
    int64_t max_pixels; /* the size limit (image_decode sets it) */
} image;

/* Decodes any supported format, found by its signature, refusing images of
 * more than max_pixels (0: IMG_MAX_PIXELS; the fuzzer sets less, so that
 * its time goes to parsing, not to filling large images). On failure im
 * holds no pixels. */
ait_status image_decode(const uint8_t *data, size_t n, int64_t max_pixels, image *im,
                        ait_error *e);
void image_free(image *im);
/* Checks a declared size: not empty (AIT_E_PARSE), at most im->max_pixels
 * (AIT_E_OVERFLOW). */
ait_status image_check(const image *im, int64_t w, int64_t h, ait_error *e);
/* image_check, then allocates im->px for h * w * ch bytes. */
ait_status image_alloc(image *im, int64_t w, int64_t h, int ch, ait_error *e);

/* One per format (image_decode_<format>.c); image_decode picks by signature. */
ait_status image_bmp(const uint8_t *data, size_t n, image *im, ait_error *e);
ait_status image_pnm(const uint8_t *data, size_t n, image *im, ait_error *e);
ait_status image_jpeg(const uint8_t *data, size_t n, image *im, ait_error *e);
ait_status image_png(const uint8_t *data, size_t n, image *im, ait_error *e);
ait_status image_tiff(const uint8_t *data, size_t n, image *im, ait_error *e);
ait_status image_webp(const uint8_t *data, size_t n, image *im, ait_error *e);
ait_status image_jp2(const uint8_t *data, size_t n, image *im, ait_error *e);

#endif
