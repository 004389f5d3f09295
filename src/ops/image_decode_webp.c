/* WebP (lossy and lossless, still images) through libwebp, which reads
 * only the buffer and prints nothing. Alpha is dropped; animations are not
 * decoded. */
#include <webp/decode.h>

#include "ops/image_decode.h"

ait_status image_webp(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    WebPBitstreamFeatures f;
    if (WebPGetFeatures(d, n, &f) != VP8_STATUS_OK)
        return err_set(e, AIT_E_PARSE, "invalid header");
    if (f.has_animation) return err_set(e, AIT_E_PARSE, "animations are not supported");
    TRY(image_alloc(im, f.width, f.height, 3, e));
    size_t stride = (size_t)im->w * 3;
    if (!WebPDecodeRGBInto(d, n, im->px, stride * (size_t)im->h, (int)stride))
        return err_set(e, AIT_E_PARSE, "invalid or truncated stream");
    return AIT_OK;
}
