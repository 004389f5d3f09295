/* NumPy .npy: parse from memory, serialise to memory, file wrappers. */
#include "io/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "io/file.h"
#include "io/publish.h"

static const struct {
    const char *descr; /* without the byte-order character */
    ait_dtype t;
} npy_types[] = {
    {"f4", AIT_F32}, {"f8", AIT_F64}, {"f2", AIT_F16}, {"i1", AIT_I8},  {"u1", AIT_U8},
    {"i2", AIT_I16}, {"u2", AIT_U16}, {"i4", AIT_I32}, {"u4", AIT_U32}, {"i8", AIT_I64},
    {"u8", AIT_U64}, {"b1", AIT_BOOL},
};

/* The value text after 'key': in the header dict, or NULL. */
static const char *dict_get(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ' || *p == ':') p++;
    return p;
}

/* NumPy's unicode arrays ('<UN': N UCS-4 code points per element, NUL
 * padded) are string tensors: read into UTF-8, written at the widest
 * element's width. */
static ait_status ucs4_read(const uint8_t *p, int64_t numel, long w, tensor *x, const char *what,
                            ait_error *e)
{
    char *buf = malloc((size_t)w * 4 + 1);
    if (!buf) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = AIT_OK;
    for (int64_t i = 0; i < numel && s == AIT_OK; i++) {
        size_t k = 0;
        for (long j = 0; j < w; j++, p += 4) {
            uint32_t c = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24;
            if (!c) continue; /* padding (numpy strips trailing NULs too) */
            if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
                s = err_set(e, AIT_E_PARSE, "%s: element %lld holds code point %#x, which is not "
                            "Unicode", what, (long long)i, (unsigned)c);
                break;
            }
            k += (size_t)utf8_enc(c, buf + k);
        }
        if (s == AIT_OK) s = tensor_set_str(x, i, buf, k, e);
    }
    free(buf);
    return s;
}

static int64_t utf8_count(const char *s)
{
    int64_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void ucs4_write(const tensor *t, int64_t w, uint8_t *p)
{
    memset(p, 0, (size_t)(tensor_numel(t) * w * 4));
    for (int64_t i = 0, n = tensor_numel(t); i < n; i++) {
        const char *v = tensor_str(t, i);
        size_t len = strlen(v);
        uint32_t c;
        uint8_t *q = p + i * w * 4;
        for (size_t k = 0; k < len;) {
            int m = utf8_dec((const unsigned char *)v + k, len - k, &c);
            if (!m) c = 0xfffd, m = 1; /* not UTF-8: the replacement character */
            k += (size_t)m;
            for (int b = 0; b < 4; b++) *q++ = (uint8_t)(c >> (8 * b));
        }
    }
}

ait_status npy_header(const uint8_t *buf, size_t len, npy_info *o, const char *what, ait_error *e)
{
    ait_dtype t;
    int64_t *dims = o->dims;
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return err_set(e, AIT_E_PARSE, "%s: not a .npy file (bad magic)", what);
    int major = buf[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return err_set(e, AIT_E_PARSE, "%s: truncated .npy header", what);
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        off = 12;
    } else {
        return err_set(e, AIT_E_UNSUPPORTED, "%s: .npy format version %d", what, major);
    }
    if (hlen > len - off || hlen > 65536)
        return err_set(e, AIT_E_PARSE, "%s: truncated .npy header", what);
    char h[65537];
    memcpy(h, buf + off, hlen);
    h[hlen] = 0;
    const char *d = dict_get(h, "descr"), *fo = dict_get(h, "fortran_order"),
               *sh = dict_get(h, "shape");
    if (!d || !fo || !sh || *d != '\'' || *sh != '(')
        return err_set(e, AIT_E_PARSE, "%s: malformed .npy header", what);
    char bo = d[1];
    t = AIT_UNDEFINED;
    long uw = 0; /* '<UN': N code points per element */
    if (d[2] == 'U') {
        char *end;
        uw = strtol(d + 3, &end, 10);
        if (*end == '\'' && uw > 0 && uw < (1L << 24)) t = AIT_STRING;
    }
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (strncmp(d + 2, npy_types[i].descr, 2) == 0 && d[4] == '\'') t = npy_types[i].t;
    if (t == AIT_UNDEFINED || bo == '>' || (bo != '<' && bo != '|' && bo != '='))
        return err_set(e, AIT_E_UNSUPPORTED, "%s: .npy dtype %.8s is not supported (little-endian "
                       "numeric, bool and unicode '<U' only)", what, d);
    if (strncmp(fo, "False", 5) != 0)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: Fortran-order arrays are not supported; save "
                       "with np.ascontiguousarray", what);
    int rank = 0;
    const char *p = sh + 1;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) return err_set(e, AIT_E_PARSE, "%s: malformed .npy shape", what);
        if (rank == AIT_MAX_RANK)
            return err_set(e, AIT_E_UNSUPPORTED, "%s: rank exceeds %d", what, AIT_MAX_RANK);
        dims[rank++] = v;
        p = end;
    }
    int64_t numel;
    TRY(shape_numel(dims, rank, t, &numel, what, e));
    size_t es = t == AIT_STRING ? (size_t)uw * 4 : ait_dtype_size(t);
    if (t == AIT_STRING && numel && (uint64_t)numel > SIZE_MAX / 2 / es)
        return err_set(e, AIT_E_OVERFLOW, "%s: byte size overflows", what);
    o->dtype = t;
    o->rank = rank;
    o->numel = numel;
    o->uw = uw;
    o->data_off = off + hlen;
    o->bytes = (size_t)numel * es;
    if (o->bytes > SIZE_MAX - o->data_off)
        return err_set(e, AIT_E_OVERFLOW, "%s: byte size overflows", what);
    return AIT_OK;
}

ait_status npy_check_limit(const npy_info *h, size_t max_bytes, const char *what, ait_error *e)
{
    if (!max_bytes || h->bytes <= max_bytes) return AIT_OK;
    return err_set(e, AIT_E_OVERFLOW, "%s: the array declares %zu bytes (%s, %lld elements), more "
                   "than the limit of %zu bytes (%.1f MiB) per input", what, h->bytes,
                   ait_dtype_name(h->dtype), (long long)h->numel, max_bytes,
                   (double)max_bytes / (1 << 20));
}

ait_status npy_parse(const uint8_t *buf, size_t len, tensor **out, const char *what, ait_error *e)
{
    return npy_parse_max(buf, len, 0, out, what, e);
}

ait_status npy_parse_max(const uint8_t *buf, size_t len, size_t max_bytes, tensor **out,
                         const char *what, ait_error *e)
{
    npy_info h;
    TRY(npy_header(buf, len, &h, what, e));
    TRY(npy_check_limit(&h, max_bytes, what, e));
    size_t off = 0, hlen = h.data_off, bytes = h.bytes;
    int64_t numel = h.numel, *dims = h.dims;
    int rank = h.rank;
    long uw = h.uw;
    ait_dtype t = h.dtype;
    if (bytes > len - hlen)
        return err_set(e, AIT_E_PARSE, "%s: .npy data is truncated (%zu of %zu bytes)", what,
                       len - hlen, bytes);
    if (bytes < len - hlen)
        return err_set(e, AIT_E_PARSE, "%s: %zu unexpected bytes after the .npy data (the "
                       "header declares %zu)", what, len - hlen - bytes, bytes);
    tensor *x = calloc(1, sizeof *x);
    if (!x) return err_set(e, AIT_E_NOMEM, "out of memory");
    tensor_set_shape(x, t, rank, dims);
    ait_status s = tensor_alloc(x, e);
    if (s != AIT_OK) {
        free(x);
        return s;
    }
    if (t == AIT_STRING) s = ucs4_read(buf + off + hlen, numel, uw, x, what, e);
    else memcpy(x->data, buf + off + hlen, bytes);
    if (s != AIT_OK) {
        tensor_release(x);
        free(x);
        return s;
    }
    *out = x;
    return AIT_OK;
}

ait_status npy_serialise(const tensor *t, uint8_t **out, size_t *len, ait_error *e)
{
    const char *descr = NULL;
    char ud[32];
    int64_t uw = 1;
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (npy_types[i].t == t->dtype) descr = npy_types[i].descr;
    if (t->dtype == AIT_STRING) {
        for (int64_t i = 0, n = tensor_numel(t); i < n; i++) {
            int64_t k = utf8_count(tensor_str(t, i));
            uw = k > uw ? k : uw;
        }
        snprintf(ud, sizeof ud, "U%lld", (long long)uw);
        descr = ud;
    }
    if (!descr)
        return err_set(e, AIT_E_UNSUPPORTED, "dtype %s cannot be stored in .npy",
                       ait_dtype_name(t->dtype));
    char h[512];
    int k = snprintf(h, sizeof h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     t->dtype == AIT_BOOL || ait_dtype_size(t->dtype) == 1 ? '|' : '<', descr);
    for (int i = 0; i < t->rank; i++)
        k += snprintf(h + k, sizeof h - (size_t)k, "%lld,%s", (long long)t->dims[i],
                      i + 1 < t->rank ? " " : "");
    k += snprintf(h + k, sizeof h - (size_t)k, "), }");
    size_t total_h = 10 + (size_t)k + 1;
    size_t pad = (64 - total_h % 64) % 64;
    size_t hlen = (size_t)k + pad + 1;
    size_t bytes = t->dtype == AIT_STRING ? (size_t)(tensor_numel(t) * uw * 4) : tensor_nbytes(t);
    uint8_t *b = malloc(10 + hlen + bytes);
    if (!b) return err_set(e, AIT_E_NOMEM, "out of memory");
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)(hlen & 0xff);
    b[9] = (uint8_t)(hlen >> 8);
    memcpy(b + 10, h, (size_t)k);
    memset(b + 10 + k, ' ', pad);
    b[10 + hlen - 1] = '\n';
    if (t->dtype == AIT_STRING) ucs4_write(t, uw, b + 10 + hlen);
    else if (bytes) memcpy(b + 10 + hlen, t->data, bytes);
    *out = b;
    *len = 10 + hlen + bytes;
    return AIT_OK;
}

ait_status ait_tensor_load_npy(const char *path, ait_tensor **out, ait_error *err)
{
    return ait_tensor_load_npy_max(path, 0, out, err);
}

/* The header alone, checked against the limit before the file is read. */
static ait_status head_check(const char *path, size_t max_bytes, ait_error *e)
{
    int fd;
    struct stat st;
    TRY(file_open_regular(path, &fd, &st, e));
    size_t n = (uint64_t)st.st_size < NPY_HEAD_MAX ? (size_t)st.st_size : NPY_HEAD_MAX;
    uint8_t *head = malloc(n + 1);
    ait_status s = head ? file_read_fd(fd, head, n, path, e)
                        : err_set(e, AIT_E_NOMEM, "%s: out of memory", path);
    close(fd);
    npy_info h;
    if (s == AIT_OK) s = npy_header(head, n, &h, path, e);
    if (s == AIT_OK) s = npy_check_limit(&h, max_bytes, path, e);
    free(head);
    return s;
}

ait_status ait_tensor_load_npy_max(const char *path, size_t max_bytes, ait_tensor **out,
                                   ait_error *err)
{
    uint8_t *buf;
    size_t len;
    if (out) *out = NULL;
    if (!path || !out) return err_set(err, AIT_E_INVALID_ARG, "ait_tensor_load_npy: NULL argument");
    if (max_bytes) TRY(head_check(path, max_bytes, err));
    /* A file swapped for a bigger one since is refused by its size here, or
     * by its header again below. */
    size_t cap = max_bytes && max_bytes < ((size_t)1 << 40) - NPY_HEAD_MAX ? max_bytes + NPY_HEAD_MAX
                                                                          : (size_t)1 << 40;
    TRY(file_read_all(path, cap, &buf, &len, err));
    ait_status s = npy_parse_max(buf, len, max_bytes, out, path, err);
    free(buf);
    return s;
}

ait_status ait_tensor_save_npy(const char *path, const ait_tensor *t, ait_error *err)
{
    if (!path || !t || !t->data)
        return err_set(err, AIT_E_INVALID_ARG, "ait_tensor_save_npy: NULL argument");
    uint8_t *buf;
    size_t len;
    TRY(npy_serialise(t, &buf, &len, err));
    ait_status s = file_write_atomic(path, buf, len, err);
    free(buf);
    return s;
}
