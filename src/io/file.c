#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"

ait_status file_read_all(const char *path, size_t max_bytes, uint8_t **buf, size_t *len,
                         ait_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, AIT_E_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fseeko(f, 0, SEEK_END) != 0) {
        fclose(f);
        return err_set(e, AIT_E_IO, "%s: cannot seek: %s", path, strerror(errno));
    }
    off_t size = ftello(f);
    if (size < 0 || (uint64_t)size > max_bytes) {
        fclose(f);
        return err_set(e, AIT_E_IO, "%s: size %lld is not readable (limit %zu bytes)", path,
                       (long long)size, max_bytes);
    }
    rewind(f);
    uint8_t *p = malloc((size_t)size + 1);
    if (!p) {
        fclose(f);
        return err_set(e, AIT_E_NOMEM, "%s: out of memory reading %lld bytes", path,
                       (long long)size);
    }
    size_t got = fread(p, 1, (size_t)size, f);
    int bad = ferror(f);
    fclose(f);
    if (got != (size_t)size || bad) {
        free(p);
        return err_set(e, AIT_E_IO, "%s: read failed", path);
    }
    *buf = p;
    *len = (size_t)size;
    return AIT_OK;
}
