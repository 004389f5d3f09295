/* libFuzzer target: an arbitrary byte string as an .npz (zip of .npy,
 * stored or deflated): loading must fail cleanly or give arrays. */
#include <stdint.h>
#include <stdlib.h>

#include "io/npy.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    npz *z = NULL;
    if (npz_load(path, &z, NULL) == AIT_OK) npz_free(z);
    close(fd);
    return 0;
}
