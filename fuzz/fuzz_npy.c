/* libFuzzer target: an arbitrary byte string as a .npy image. */
#include <stdint.h>
#include <stdlib.h>

#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tensor *t = NULL;
    if (npy_parse(data, size, &t, "fuzz.npy", NULL) == AIT_OK) {
        tensor_release(t);
        free(t);
    }
    return 0;
}
