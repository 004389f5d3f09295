/* .npz: a zip archive of .npy files (stored or deflated, zip64 sizes).
 * Every offset and size read from the archive is bounds-checked. The
 * archive is read in pieces (its directory, then each entry straight into
 * its tensor), so what one input allocates is its declared array, within
 * the limit, never the archive or an entry's compressed bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/file.h"
#include "io/npy.h"
#include "io/publish.h"

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

/* An .npz being read: the file, never held whole. Every offset and size is
 * checked against the file's size before it is read. */
typedef struct zfile {
    int fd;
    uint64_t len;
    const char *path;
} zfile;

/* Reads n bytes at off (the caller checked off + n <= len). */
static ait_status zread(const zfile *f, uint64_t off, void *dst, size_t n, const char *what,
                        ait_error *e)
{
    for (size_t done = 0; done < n;) {
        size_t want = n - done > (1u << 30) ? (1u << 30) : n - done;
        ssize_t got = pread(f->fd, (uint8_t *)dst + done, want, (off_t)(off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return err_set(e, AIT_E_IO, "%s: read failed: %s", what, strerror(errno));
        if (got == 0) return err_set(e, AIT_E_IO, "%s: the file shrank while being read", what);
        done += (size_t)got;
    }
    return AIT_OK;
}

/* A deflated entry inflated as it is read: csize bytes at off, fed through
 * a 64 KiB window, into whatever buffers zin_fill is given. */
typedef struct zin {
    const zfile *f;
    uint64_t off, left;
    z_stream zs;
    int end; /* the stream ended */
    uint8_t in[65536];
} zin;

/* Inflates into dst[n]; *got: how many bytes came (fewer only if the stream
 * ended). A corrupt stream, or one whose input runs out before its end, is
 * refused. */
static ait_status zin_fill(zin *z, uint8_t *dst, size_t n, size_t *got, const char *what,
                           ait_error *e)
{
    size_t done = 0;
    while (done < n && !z->end) {
        if (!z->zs.avail_in && z->left) {
            size_t c = z->left < sizeof z->in ? (size_t)z->left : sizeof z->in;
            TRY(zread(z->f, z->off, z->in, c, what, e));
            z->off += c, z->left -= c;
            z->zs.next_in = z->in;
            z->zs.avail_in = (uInt)c;
        }
        size_t co = n - done > (1u << 30) ? (1u << 30) : n - done;
        z->zs.next_out = dst + done;
        z->zs.avail_out = (uInt)co;
        int r = inflate(&z->zs, Z_NO_FLUSH);
        done += co - z->zs.avail_out;
        if (r == Z_STREAM_END) z->end = 1;
        else if (r != Z_OK && !(r == Z_BUF_ERROR && z->zs.avail_in == 0 && z->left))
            return err_set(e, AIT_E_PARSE, "%s: corrupt deflate data", what);
    }
    *got = done;
    return AIT_OK;
}

/* The stream must end here: one byte more is refused without inflating
 * any further. */
static ait_status zin_end(zin *z, size_t declared, const char *what, ait_error *e)
{
    uint8_t one;
    size_t got;
    TRY(zin_fill(z, &one, 1, &got, what, e));
    if (got) return err_set(e, AIT_E_PARSE, "%s: inflates past the %zu bytes its .npy header "
                            "declares", what, declared);
    return AIT_OK;
}

/* A tensor of header h holding bytes have[n] of its data now and the rest
 * from rest() (NULL: none): numeric arrays are read straight into the
 * tensor; unicode ones (converted from UCS-4) through a whole image. */
typedef ait_status (*rest_fn)(void *ctx, uint8_t *dst, size_t n, const char *what, ait_error *e);

static ait_status entry_tensor(const npy_info *h, const uint8_t *head, size_t hn, rest_fn rest,
                               void *ctx, tensor **out, const char *what, ait_error *e)
{
    size_t need = h->data_off + h->bytes;
    if (h->dtype == AIT_STRING) {
        uint8_t *img = malloc(need + 1);
        if (!img) return err_set(e, AIT_E_NOMEM, "%s: out of memory", what);
        memcpy(img, head, hn);
        ait_status s = rest(ctx, img + hn, need - hn, what, e);
        if (s == AIT_OK) s = npy_parse(img, need, out, what, e);
        free(img);
        return s;
    }
    tensor *x = calloc(1, sizeof *x);
    if (!x) return err_set(e, AIT_E_NOMEM, "out of memory");
    tensor_set_shape(x, h->dtype, h->rank, h->dims);
    ait_status s = tensor_alloc(x, e);
    if (s == AIT_OK) {
        size_t have = hn - h->data_off; /* data bytes already read with the header */
        if (have) memcpy(x->data, head + h->data_off, have);
        if (h->bytes > have) s = rest(ctx, (uint8_t *)x->data + have, h->bytes - have, what, e);
    }
    if (s != AIT_OK) {
        tensor_release(x);
        free(x);
        return s;
    }
    *out = x;
    return AIT_OK;
}

typedef struct stored {
    const zfile *f;
    uint64_t off; /* of the bytes still to read */
} stored;

static ait_status stored_rest(void *ctx, uint8_t *dst, size_t n, const char *what, ait_error *e)
{
    stored *st = ctx;
    return zread(st->f, st->off, dst, n, what, e);
}

static ait_status inflated_rest(void *ctx, uint8_t *dst, size_t n, const char *what, ait_error *e)
{
    size_t got;
    TRY(zin_fill(ctx, dst, n, &got, what, e));
    if (got < n) return err_set(e, AIT_E_PARSE, "%s: corrupt deflate data", what);
    return AIT_OK;
}

/* A stored entry: its .npy header first (and the limit), then its data read
 * straight into the tensor; data shorter or longer than declared is refused
 * before anything is allocated. */
static ait_status read_stored(const zfile *f, uint64_t data, uint64_t csize, size_t max_bytes,
                              tensor **out, const char *what, ait_error *e)
{
    uint8_t *head = malloc(NPY_HEAD_MAX);
    if (!head) return err_set(e, AIT_E_NOMEM, "out of memory");
    size_t hn = csize < NPY_HEAD_MAX ? (size_t)csize : NPY_HEAD_MAX;
    npy_info h;
    ait_status s = zread(f, data, head, hn, what, e);
    if (s == AIT_OK) s = npy_header(head, hn, &h, what, e);
    if (s == AIT_OK) s = npy_check_limit(&h, max_bytes, what, e);
    if (s == AIT_OK && h.bytes > csize - h.data_off)
        s = err_set(e, AIT_E_PARSE, "%s: .npy data is truncated (%llu of %zu bytes)", what,
                    (unsigned long long)(csize - h.data_off), h.bytes);
    else if (s == AIT_OK && h.bytes < csize - h.data_off)
        s = err_set(e, AIT_E_PARSE, "%s: %llu unexpected bytes after the .npy data (the header "
                    "declares %zu)", what, (unsigned long long)(csize - h.data_off - h.bytes),
                    h.bytes);
    if (s == AIT_OK) {
        if (hn > h.data_off + h.bytes) hn = h.data_off + h.bytes;
        stored st = {f, data + hn};
        s = entry_tensor(&h, head, hn, stored_rest, &st, out, what, e);
    }
    free(head);
    return s;
}

/* A deflated entry, inflated in steps: its first 64 KiB give the .npy
 * header, and the size to inflate is the one that header declares (within
 * the limit, equal to the zip directory's), inflated straight into the
 * tensor and refused the moment it would pass it: a small array cannot
 * inflate to gigabytes, and the compressed bytes are never held whole. */
static ait_status read_deflated(const zfile *f, uint64_t data, uint64_t csize, uint64_t usize,
                                size_t max_bytes, tensor **out, const char *what, ait_error *e)
{
    zin *z = calloc(1, sizeof *z);
    uint8_t *head = malloc(NPY_HEAD_MAX);
    if (!z || !head || inflateInit2(&z->zs, -15) != Z_OK) {
        free(z);
        free(head);
        return err_set(e, AIT_E_NOMEM, "%s: out of memory (zlib)", what);
    }
    z->f = f, z->off = data, z->left = csize;
    size_t hn = usize < NPY_HEAD_MAX ? (size_t)usize : NPY_HEAD_MAX;
    npy_info h;
    ait_status s = zin_fill(z, head, hn, &hn, what, e);
    if (s == AIT_OK) s = npy_header(head, hn, &h, what, e);
    if (s == AIT_OK) s = npy_check_limit(&h, max_bytes, what, e);
    if (s == AIT_OK && usize != h.data_off + h.bytes)
        s = err_set(e, AIT_E_PARSE, "%s: the zip entry declares %llu bytes, its .npy header %zu",
                    what, (unsigned long long)usize, h.data_off + h.bytes);
    /* hn <= usize = the declared image: the header's 64 KiB hold no more than it */
    if (s == AIT_OK) s = entry_tensor(&h, head, hn, inflated_rest, z, out, what, e);
    if (s == AIT_OK) s = zin_end(z, h.data_off + h.bytes, what, e);
    if (s != AIT_OK && *out) {
        tensor_release(*out);
        free(*out);
        *out = NULL;
    }
    inflateEnd(&z->zs);
    free(z);
    free(head);
    return s;
}

ait_status npz_load(const char *path, npz **out, ait_error *e)
{
    return npz_load_max(path, 0, out, e);
}

/* The end of central directory record within the file's last 64 KiB + 22
 * bytes (a comment may follow it), and a zip64 end record before it. */
static ait_status find_directory(const zfile *f, uint64_t *count, uint64_t *cd, uint64_t *cd_size,
                                 ait_error *e)
{
    const char *path = f->path;
    size_t tn = f->len < 65557 + 20 ? (size_t)f->len : 65557 + 20;
    uint8_t *tail = malloc(tn + 1);
    if (!tail) return err_set(e, AIT_E_NOMEM, "out of memory");
    uint64_t base = f->len - tn; /* tail[i] is byte base + i */
    ait_status s = zread(f, base, tail, tn, path, e);
    size_t eocd = SIZE_MAX;
    for (size_t i = tn >= 22 ? tn - 22 : SIZE_MAX; s == AIT_OK && i != SIZE_MAX && tn - i <= 65557; i--) {
        if (rd32(tail + i) == 0x06054b50) {
            eocd = i;
            break;
        }
        if (i == 0) break;
    }
    if (s == AIT_OK && eocd == SIZE_MAX) s = err_set(e, AIT_E_PARSE, "%s: not a .npz (zip) file", path);
    if (s == AIT_OK) {
        *count = rd16(tail + eocd + 10);
        *cd_size = rd32(tail + eocd + 12);
        *cd = rd32(tail + eocd + 16);
        /* zip64 end record, located just before */
        if ((*cd == 0xffffffffu || *count == 0xffff) && eocd >= 20 &&
            rd32(tail + eocd - 20) == 0x07064b50) {
            uint64_t z64 = rd64(tail + eocd - 12);
            uint8_t r[56];
            if (z64 > f->len || f->len - z64 < 56 || zread(f, z64, r, 56, path, e) != AIT_OK ||
                rd32(r) != 0x06064b50)
                s = err_set(e, AIT_E_PARSE, "%s: corrupt zip64 directory", path);
            else {
                *count = rd64(r + 32);
                *cd_size = rd64(r + 40);
                *cd = rd64(r + 48);
            }
        }
        if (s == AIT_OK && (*cd > f->len || *cd_size > f->len - *cd || *count > *cd_size / 46))
            s = err_set(e, AIT_E_PARSE, "%s: corrupt zip directory", path);
    }
    free(tail);
    return s;
}

ait_status npz_load_max(const char *path, size_t max_bytes, npz **out, ait_error *e)
{
    *out = NULL;
    zfile f = {.fd = -1, .path = path};
    struct stat st;
    TRY(file_open_regular(path, &f.fd, &st, e));
    f.len = (uint64_t)st.st_size;
    uint64_t count = 0, cd = 0, cd_size = 0;
    uint8_t *dir = NULL; /* the central directory: within the file's size */
    npz *z = calloc(1, sizeof *z);
    ait_status s = z ? find_directory(&f, &count, &cd, &cd_size, e)
                     : err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK) {
        z->names = calloc(count + 1, sizeof *z->names);
        z->arrays = calloc(count + 1, sizeof *z->arrays);
        dir = malloc((size_t)cd_size + 1);
        if (!z->names || !z->arrays || !dir) s = err_set(e, AIT_E_NOMEM, "out of memory");
    }
    if (s == AIT_OK) s = zread(&f, cd, dir, (size_t)cd_size, path, e);
    uint64_t p = 0;
    for (uint64_t i = 0; s == AIT_OK && i < count; i++) {
        if (p + 46 > cd_size || rd32(dir + p) != 0x02014b50) {
            s = err_set(e, AIT_E_PARSE, "%s: corrupt zip directory entry %llu", path,
                        (unsigned long long)i);
            break;
        }
        uint32_t method = rd16(dir + p + 10), nlen = rd16(dir + p + 28), xlen = rd16(dir + p + 30),
                 clen = rd16(dir + p + 32);
        uint64_t csize = rd32(dir + p + 20), usize = rd32(dir + p + 24), loff = rd32(dir + p + 42);
        if (p + 46 + nlen + xlen + clen > cd_size) {
            s = err_set(e, AIT_E_PARSE, "%s: corrupt zip directory entry %llu", path,
                        (unsigned long long)i);
            break;
        }
        const uint8_t *x = dir + p + 46 + nlen;
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
        snprintf(name, sizeof name, "%.*s", (int)(nlen < 500 ? nlen : 500), (const char *)dir + p + 46);
        size_t nl = strlen(name);
        if (nl > 4 && strcmp(name + nl - 4, ".npy") == 0) name[nl - 4] = 0;
        char what[1024];
        snprintf(what, sizeof what, "%s: array '%s'", path, name);
        p += 46 + nlen + xlen + clen;
        uint8_t lh[30];
        if (loff > f.len || f.len - loff < 30 || zread(&f, loff, lh, 30, what, e) != AIT_OK ||
            rd32(lh) != 0x04034b50) {
            s = err_set(e, AIT_E_PARSE, "%s: bad local header", what);
            break;
        }
        uint64_t data = loff + 30 + rd16(lh + 26) + rd16(lh + 28);
        if (data > f.len || csize > f.len - data) {
            s = err_set(e, AIT_E_PARSE, "%s: data runs past the end of the file", what);
            break;
        }
        if (!(z->names[z->n] = strdup(name))) {
            s = err_set(e, AIT_E_NOMEM, "out of memory");
            break;
        }
        z->n++;
        if (method == 0)
            s = read_stored(&f, data, csize, max_bytes, &z->arrays[z->n - 1], what, e);
        else if (method == 8)
            s = read_deflated(&f, data, csize, usize, max_bytes, &z->arrays[z->n - 1], what, e);
        else
            s = err_set(e, AIT_E_UNSUPPORTED, "%s: zip compression method %u", what, method);
    }
    free(dir);
    close(f.fd);
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
