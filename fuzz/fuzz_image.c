/* libFuzzer target: an arbitrary byte string as an encoded image, through
 * ImageDecoder's decoders (every format, picked by signature). */
#include <stdint.h>
#include <stdlib.h>

#include "ops/image_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    image im;
    ait_error e;
    if (image_decode(data, size, 1 << 22, &im, &e) == AIT_OK) image_free(&im);
    return 0;
}
