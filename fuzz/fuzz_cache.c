/* libFuzzer target: an arbitrary byte string as a tune cache entry
 * (src/tune/cache.c): cache_get must give a hit with sane results or a
 * miss with a warning, never more. The entry is written under a fixed key in
 * a private folder; the seeds (fuzz/corpus/cache) are real entries. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune/cache.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/ait-fuzz-cache.XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    char p[128];
    snprintf(p, sizeof p, "%s/" CACHE_PREFIX KEY CACHE_SUFFIX, dir);
    FILE *f = fopen(p, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    tune_cache c;
    cache_open(&c, dir, NULL);
    tune_cand r = {0};
    snprintf(r.name, sizeof r.name, "native/t1");
    if (cache_get(&c, KEY, r.name, &r) && r.valid && !(r.prof.median >= 0)) abort();
    return 0;
}
