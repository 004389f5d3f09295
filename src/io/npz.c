/* .npz: a zip archive of .npy files (stored or deflated, zip64 sizes).
 * Every offset and size read from the archive is bounds-checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/file.h"
#include "io/npy.h"

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

void npz_free(npz *z)
{
    if (!z) return;
    for (int i = 0; i < z->n; i++) {
        free(z->names[i]);
        if (z->arrays[i]) {
            tensor_release(z->arrays[i]);
            free(z->arrays[i]);
        }
    }
    free(z->names);
    free(z->arrays);
    free(z);
}

/* Inflates into dst[out_n]. prefix: stop when dst is full (the header only);
 * otherwise the stream must end exactly at out_n: one byte more is refused
 * without inflating any further. */
static ait_status inflate_raw(const uint8_t *src, size_t n, uint8_t *dst, size_t out_n, int prefix,
                              size_t *got, const char *what, ait_error *e)
{
    z_stream zs = {0};
    if (inflateInit2(&zs, -15) != Z_OK) return err_set(e, AIT_E_NOMEM, "zlib init failed");
    ait_status s = AIT_OK;
    size_t done_in = 0, done_out = 0;
    int r = Z_OK;
    while (r == Z_OK) { /* feed in chunks: avail_* are 32-bit */
        size_t ci = n - done_in, co = out_n - done_out;
        zs.next_in = (Bytef *)(src + done_in);
        zs.avail_in = (uInt)(ci > (1u << 30) ? (1u << 30) : ci);
        zs.next_out = dst + done_out;
        zs.avail_out = (uInt)(co > (1u << 30) ? (1u << 30) : co);
        uInt ai = zs.avail_in, ao = zs.avail_out;
        r = inflate(&zs, Z_NO_FLUSH);
        done_in += ai - zs.avail_in;
        done_out += ao - zs.avail_out;
        if (r == Z_BUF_ERROR && (done_in == n || done_out == out_n)) break;
    }
    if (prefix && done_out == out_n) r = Z_STREAM_END;
    if (prefix && r == Z_STREAM_END) out_n = done_out; /* a short stream: its header is shorter */
    if (got) *got = done_out;
    if (r != Z_STREAM_END && done_out == out_n && r != Z_DATA_ERROR)
        s = err_set(e, AIT_E_PARSE, "%s: inflates past the %zu bytes its .npy header declares",
                    what, out_n);
    else if (r != Z_STREAM_END || done_out != out_n)
        s = err_set(e, AIT_E_PARSE, "%s: corrupt deflate data", what);
    inflateEnd(&zs);
    return s;
}

ait_status npz_load(const char *path, npz **out, ait_error *e)
{
    return npz_load_max(path, 0, out, e);
}

ait_status npz_load_max(const char *path, size_t max_bytes, npz **out, ait_error *e)
{
    uint8_t *buf;
    size_t len;
    *out = NULL;
    TRY(file_read_all(path, (size_t)1 << 40, &buf, &len, e));
    ait_status s = AIT_OK;
    npz *z = calloc(1, sizeof *z);
    /* End of central directory: scan back over a possible comment. */
    size_t eocd = SIZE_MAX;
    for (size_t i = len >= 22 ? len - 22 : SIZE_MAX; i != SIZE_MAX && len - i <= 65557; i--) {
        if (rd32(buf + i) == 0x06054b50) {
            eocd = i;
            break;
        }
        if (i == 0) break;
    }
    if (!z) s = err_set(e, AIT_E_NOMEM, "out of memory");
    else if (eocd == SIZE_MAX) s = err_set(e, AIT_E_PARSE, "%s: not a .npz (zip) file", path);
    uint64_t count = 0, cd = 0, cd_size = 0;
    if (s == AIT_OK) {
        count = rd16(buf + eocd + 10);
        cd_size = rd32(buf + eocd + 12);
        cd = rd32(buf + eocd + 16);
        /* zip64 end record, located just before */
        if ((cd == 0xffffffffu || count == 0xffff) && eocd >= 20 &&
            rd32(buf + eocd - 20) == 0x07064b50) {
            uint64_t z64 = rd64(buf + eocd - 12);
            if (z64 > len || len - z64 < 56 || rd32(buf + z64) != 0x06064b50)
                s = err_set(e, AIT_E_PARSE, "%s: corrupt zip64 directory", path);
            else {
                count = rd64(buf + z64 + 32);
                cd_size = rd64(buf + z64 + 40);
                cd = rd64(buf + z64 + 48);
            }
        }
        if (s == AIT_OK && (cd > len || cd_size > len - cd || count > cd_size / 46))
            s = err_set(e, AIT_E_PARSE, "%s: corrupt zip directory", path);
    }
    if (s == AIT_OK) {
        z->names = calloc(count + 1, sizeof *z->names);
        z->arrays = calloc(count + 1, sizeof *z->arrays);
        if (!z->names || !z->arrays) s = err_set(e, AIT_E_NOMEM, "out of memory");
    }
    uint64_t p = cd;
    for (uint64_t i = 0; s == AIT_OK && i < count; i++) {
        if (p + 46 > cd + cd_size || rd32(buf + p) != 0x02014b50) {
            s = err_set(e, AIT_E_PARSE, "%s: corrupt zip directory entry %llu", path,
                        (unsigned long long)i);
            break;
        }
        uint32_t method = rd16(buf + p + 10), nlen = rd16(buf + p + 28), xlen = rd16(buf + p + 30),
                 clen = rd16(buf + p + 32);
        uint64_t csize = rd32(buf + p + 20), usize = rd32(buf + p + 24), loff = rd32(buf + p + 42);
        if (p + 46 + nlen + xlen + clen > cd + cd_size) {
            s = err_set(e, AIT_E_PARSE, "%s: corrupt zip directory entry %llu", path,
                        (unsigned long long)i);
            break;
        }
        const uint8_t *x = buf + p + 46 + nlen;
        for (uint32_t k = 0; k + 4 <= xlen;) { /* zip64 extra: only the fields that overflowed */
            uint32_t id = rd16(x + k), sz = rd16(x + k + 2), q = k + 4;
            if (k + 4 + sz > xlen) break;
            if (id == 1) {
                if (usize == 0xffffffffu && q + 8 <= k + 4 + sz) usize = rd64(x + q), q += 8;
                if (csize == 0xffffffffu && q + 8 <= k + 4 + sz) csize = rd64(x + q), q += 8;
                if (loff == 0xffffffffu && q + 8 <= k + 4 + sz) loff = rd64(x + q);
            }
            k += 4 + sz;
        }
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)(nlen < 500 ? nlen : 500), (const char *)buf + p + 46);
        size_t nl = strlen(name);
        if (nl > 4 && strcmp(name + nl - 4, ".npy") == 0) name[nl - 4] = 0;
        char what[1024];
        snprintf(what, sizeof what, "%s: array '%s'", path, name);
        p += 46 + nlen + xlen + clen;
        if (loff > len || len - loff < 30 || rd32(buf + loff) != 0x04034b50) {
            s = err_set(e, AIT_E_PARSE, "%s: bad local header", what);
            break;
        }
        uint64_t data = loff + 30 + rd16(buf + loff + 26) + rd16(buf + loff + 28);
        if (data > len || csize > len - data) {
            s = err_set(e, AIT_E_PARSE, "%s: data runs past the end of the file", what);
            break;
        }
        z->names[z->n] = strdup(name);
        z->n++;
        if (method == 0) {
            s = npy_parse_max(buf + data, (size_t)csize, max_bytes, &z->arrays[z->n - 1], what, e);
        } else if (method == 8) {
            /* The size to inflate comes from the .npy header inside, not the zip
             * directory: a small array cannot inflate to gigabytes. */
            uint8_t head[65536 + 12];
            size_t hn = usize < sizeof head ? (size_t)usize : sizeof head;
            npy_info h;
            s = inflate_raw(buf + data, (size_t)csize, head, hn, 1, &hn, what, e);
            if (s == AIT_OK) s = npy_header(head, hn, &h, what, e);
            if (s == AIT_OK) s = npy_check_limit(&h, max_bytes, what, e);
            if (s != AIT_OK) break;
            size_t need = h.data_off + h.bytes;
            if (usize != need) {
                s = err_set(e, AIT_E_PARSE, "%s: the zip entry declares %llu bytes, its .npy "
                            "header %zu", what, (unsigned long long)usize, need);
                break;
            }
            uint8_t *tmp = malloc(need + 1);
            if (!tmp) s = err_set(e, AIT_E_NOMEM, "%s: out of memory", what);
            else s = inflate_raw(buf + data, (size_t)csize, tmp, need, 0, NULL, what, e);
            if (s == AIT_OK) s = npy_parse(tmp, need, &z->arrays[z->n - 1], what, e);
            free(tmp);
        } else {
            s = err_set(e, AIT_E_UNSUPPORTED, "%s: zip compression method %u", what, method);
        }
    }
    free(buf);
    if (s != AIT_OK) {
        npz_free(z);
        return s;
    }
    *out = z;
    return AIT_OK;
}

static void wr16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v & 0xffff), wr16(p + 2, v >> 16); }

ait_status npz_save(const char *path, int n, const char *const *names, const tensor *const *arrays,
                    ait_error *e)
{
    uint8_t **img = calloc((size_t)n + 1, sizeof *img);
    size_t *ilen = calloc((size_t)n + 1, sizeof *ilen), total = 22;
    ait_status s = img && ilen ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK && n > 65535)
        s = err_set(e, AIT_E_UNSUPPORTED, "%s: more than 65535 arrays", path);
    for (int i = 0; s == AIT_OK && i < n; i++)
        if (strlen(names[i]) > 1000)
            s = err_set(e, AIT_E_UNSUPPORTED, "%s: array name '%.40s...' is too long", path, names[i]);
    for (int i = 0; s == AIT_OK && i < n; i++) {
        s = npy_serialise(arrays[i], &img[i], &ilen[i], e);
        total += 30 + 46 + 2 * (strlen(names[i]) + 4) + ilen[i];
        if (s == AIT_OK && ilen[i] >= 0xffffffffu)
            s = err_set(e, AIT_E_UNSUPPORTED, "%s: array '%s' is over 4 GiB", path, names[i]);
    }
    uint8_t *b = s == AIT_OK ? malloc(total) : NULL;
    if (s == AIT_OK && !b) s = err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK) {
        size_t p = 0;
        uint32_t *crc = calloc((size_t)n + 1, sizeof *crc);
        size_t *lofs = calloc((size_t)n + 1, sizeof *lofs);
        int m = crc && lofs ? n : 0; /* out of memory: write nothing, report below */
        for (int i = 0; i < m; i++) {
            char nm[1024];
            int nl = snprintf(nm, sizeof nm, "%s.npy", names[i]);
            crc[i] = (uint32_t)crc32(0, img[i], (uInt)ilen[i]);
            lofs[i] = p;
            memset(b + p, 0, 30);
            wr32(b + p, 0x04034b50), wr16(b + p + 4, 20), wr32(b + p + 14, crc[i]);
            wr32(b + p + 18, (uint32_t)ilen[i]), wr32(b + p + 22, (uint32_t)ilen[i]);
            wr16(b + p + 26, (uint32_t)nl);
            memcpy(b + p + 30, nm, (size_t)nl);
            memcpy(b + p + 30 + nl, img[i], ilen[i]);
            p += 30 + (size_t)nl + ilen[i];
        }
        size_t cd = p;
        for (int i = 0; i < m; i++) {
            char nm[1024];
            int nl = snprintf(nm, sizeof nm, "%s.npy", names[i]);
            memset(b + p, 0, 46);
            wr32(b + p, 0x02014b50), wr16(b + p + 4, 20), wr16(b + p + 6, 20);
            wr32(b + p + 16, crc[i]), wr32(b + p + 20, (uint32_t)ilen[i]);
            wr32(b + p + 24, (uint32_t)ilen[i]), wr16(b + p + 28, (uint32_t)nl);
            wr32(b + p + 42, (uint32_t)lofs[i]);
            memcpy(b + p + 46, nm, (size_t)nl);
            p += 46 + (size_t)nl;
        }
        memset(b + p, 0, 22);
        wr32(b + p, 0x06054b50), wr16(b + p + 8, (uint32_t)n), wr16(b + p + 10, (uint32_t)n);
        wr32(b + p + 12, (uint32_t)(p - cd)), wr32(b + p + 16, (uint32_t)cd);
        p += 22;
        free(crc);
        free(lofs);
        s = m < n ? err_set(e, AIT_E_NOMEM, "out of memory") : file_write_atomic(path, b, p, e);
    }
    for (int i = 0; img && i < n; i++) free(img[i]);
    free(img);
    free(ilen);
    free(b);
    return s;
}
