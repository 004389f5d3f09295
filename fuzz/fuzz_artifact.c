/* libFuzzer target: an arbitrary byte string as a .ait container: opening it
 * (every layout check and hash) must fail cleanly, or give blobs and a
 * manifest inside the file. (Hashes make most mutations fail early; the
 * manifest target, fuzz_manifest.c, gets past them.) */
#include <stdint.h>
#include <stdlib.h>

#include "io/artifact.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    artifact *a = NULL;
    artifact_expect x = {.skip_cpu_check = 1, .skip_manifest = size & 1};
    if (artifact_open(path, &x, &a, NULL) == AIT_OK) {
        size_t len;
        volatile uint8_t sink = 0;
        const uint8_t *m = artifact_manifest(a, &len);
        if (m && len) sink ^= m[len - 1];
        for (size_t i = 0; i < artifact_blob_count(a); i++) {
            const artifact_blob *b = artifact_blob_at(a, i);
            if (b->size) sink ^= b->data[b->size - 1];
        }
        (void)sink;
        artifact_close(a);
    }
    close(fd);
    return 0;
}
