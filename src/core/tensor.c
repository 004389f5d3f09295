#include "core/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/block_pool.h"
#include "core/half.h"

static const struct {
    const char *name;
    size_t size;
} dtype_table[] = {
    [AIT_UNDEFINED] = {"undefined", 0}, [AIT_F32] = {"float32", 4}, [AIT_U8] = {"uint8", 1},
    [AIT_I8] = {"int8", 1},             [AIT_U16] = {"uint16", 2},  [AIT_I16] = {"int16", 2},
    [AIT_I32] = {"int32", 4},           [AIT_I64] = {"int64", 8},   [AIT_STRING] = {"string", sizeof(char *)},
    [AIT_BOOL] = {"bool", 1},           [AIT_F16] = {"float16", 2}, [AIT_F64] = {"float64", 8},
    [AIT_U32] = {"uint32", 4},          [AIT_U64] = {"uint64", 8},  [14] = {"complex64", 0},
    [15] = {"complex128", 0},           [AIT_BF16] = {"bfloat16", 2},
    /* one byte each in memory (ait.h) */
    [AIT_F8E4M3FN] = {"float8e4m3fn", 1}, [AIT_F8E4M3FNUZ] = {"float8e4m3fnuz", 1},
    [AIT_F8E5M2] = {"float8e5m2", 1},     [AIT_F8E5M2FNUZ] = {"float8e5m2fnuz", 1},
    [AIT_U4] = {"uint4", 1},              [AIT_I4] = {"int4", 1},
    [AIT_F4E2M1] = {"float4e2m1", 1},     [AIT_F8E8M0] = {"float8e8m0", 1},
    [AIT_U2] = {"uint2", 1},              [AIT_I2] = {"int2", 1},
};
#define N_DTYPES (int)(sizeof dtype_table / sizeof dtype_table[0])

const char *ait_dtype_name(ait_dtype t)
{
    if ((int)t >= 0 && (int)t < N_DTYPES && dtype_table[t].name) return dtype_table[t].name;
    return "unknown";
}

size_t ait_dtype_size(ait_dtype t)
{
    if ((int)t >= 0 && (int)t < N_DTYPES) return dtype_table[t].size;
    return 0;
}

ait_status shape_numel(const int64_t *dims, int rank, ait_dtype t, int64_t *numel,
                       const char *what, ait_error *e)
{
    if (rank < 0 || rank > AIT_MAX_RANK)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: rank %d exceeds the maximum of %d", what, rank,
                       AIT_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return err_set(e, AIT_E_SHAPE, "%s: dimension %d is negative (%lld)", what, i,
                           (long long)dims[i]);
        if (dims[i] != 0 && n > INT64_MAX / dims[i])
            return err_set(e, AIT_E_OVERFLOW, "%s: element count overflows", what);
        n *= dims[i];
    }
    size_t es = ait_dtype_size(t);
    if (es && (uint64_t)n > SIZE_MAX / 2 / es)
        return err_set(e, AIT_E_OVERFLOW, "%s: byte size overflows", what);
    *numel = n;
    return AIT_OK;
}

/* An owned string buffer's strings, freed: every slot NULL. */
static void strs_free(tensor *t)
{
    if (!t->owned || !t->data || t->dtype != AIT_STRING) return;
    char **p = t->data;
    for (size_t i = 0, n = t->cap / sizeof *p; i < n; i++) {
        free(p[i]);
        p[i] = NULL;
    }
}

/* A dtype change into or out of string clears an owned buffer: its bytes
 * are not strings, or its strings go. */
static void set_dtype(tensor *t, ait_dtype dt)
{
    if (t->dtype == dt) return;
    if (t->dtype == AIT_STRING) strs_free(t);
    else if (dt == AIT_STRING && t->owned && t->data) memset(t->data, 0, t->cap);
    t->dtype = dt;
}

void tensor_set_shape(tensor *t, ait_dtype dt, int rank, const int64_t *dims)
{
    set_dtype(t, dt);
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
}

/* Buffers of HUGE_MIN_BYTES or more (big weights, batch activations) are
 * aligned to 2 MiB and asked for transparent huge pages: the MLP's reference
 * GEMVs, streaming 100 MB of weights, ran 9% faster with them and varied
 * less from process to process (bench/tuned-notes.md). Where the kernel
 * says no (THP "never"), the memory is ordinary. */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/* The bytes aligned_malloc takes for `bytes` (0: too many). */
static size_t aligned_size(size_t bytes)
{
    size_t n = (bytes + 63) & ~(size_t)63;
    if (n == 0) n = 64;
    if (n < HUGE_MIN_BYTES) return n;
    if (n > SIZE_MAX - HUGE_PAGE_BYTES) return 0;
    return (n + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
}

void *aligned_malloc(size_t bytes)
{
    size_t n = aligned_size(bytes);
    if (!n || bytes > SIZE_MAX - 63) return NULL;
    if (n < HUGE_MIN_BYTES) return aligned_alloc(64, n);
    void *p = aligned_alloc(HUGE_PAGE_BYTES, n);
#ifdef MADV_HUGEPAGE
    if (p) (void)madvise(p, n, MADV_HUGEPAGE); /* before the first touch */
#endif
    return p;
}

void *aligned_zalloc(size_t bytes)
{
    void *p = aligned_malloc(bytes);
    if (p) memset(p, 0, aligned_size(bytes));
    return p;
}

void aligned_free(void *p) { free(p); }

static void seq_clear(tensor *t);

/* Frees t's owned data, or gives it back to its pool. */
static void data_free(tensor *t)
{
    if (t->pool) block_pool_give(t->pool, t->data);
    else aligned_free(t->data);
    t->pool = NULL;
}

ait_status tensor_alloc(tensor *t, ait_error *e)
{
    if (t->kind != VAL_TENSOR) {
        seq_clear(t);
        t->kind = VAL_TENSOR;
    }
    int64_t n;
    TRY(shape_numel(t->dims, t->rank, t->dtype, &n, "tensor", e));
    size_t need = (size_t)n * ait_dtype_size(t->dtype);
    strs_free(t);
    if (t->owned && t->data && t->cap >= need) return AIT_OK;
    if (!t->owned && t->data && t->room >= need && t->dtype != AIT_STRING) return AIT_OK;
    if (t->owned) data_free(t);
    t->room = 0;
    t->data = aligned_zalloc(need);
    t->owned = t->data != NULL;
    t->cap = t->data ? need : 0;
    if (!t->data) return err_set(e, AIT_E_NOMEM, "out of memory allocating %zu bytes", need);
    return AIT_OK;
}

ait_status tensor_alloc_zeroed(tensor *t, ait_error *e)
{
    TRY(tensor_alloc(t, e));
    if (t->dtype != AIT_STRING && t->data) memset(t->data, 0, tensor_nbytes(t));
    return AIT_OK;
}

ait_status tensor_own(tensor *t, ait_error *e)
{
    if (t->owned || !t->data || t->kind != VAL_TENSOR || t->dtype == AIT_STRING) return AIT_OK;
    size_t n = tensor_nbytes(t);
    void *d = aligned_malloc(n ? n : 1); /* written whole below: not zeroed */
    if (!d) return err_set(e, AIT_E_NOMEM, "out of memory copying %zu bytes", n);
    memcpy(d, t->data, n);
    t->data = d;
    t->owned = true;
    t->cap = n;
    t->room = 0;
    return AIT_OK;
}

static void seq_clear(tensor *t)
{
    for (int i = 0; i < t->n_items; i++) tensor_release(&t->items[i]);
    free(t->items);
    t->items = NULL;
    t->n_items = t->cap_items = 0;
}

void tensor_release(tensor *t)
{
    strs_free(t);
    if (t->owned) data_free(t);
    seq_clear(t);
    t->data = NULL;
    t->owned = false;
    t->cap = 0;
    t->room = 0;
    t->kind = VAL_TENSOR;
}

void tensor_make_sequence(tensor *t, ait_dtype elem)
{
    seq_clear(t);
    t->kind = VAL_SEQUENCE;
    set_dtype(t, elem);
    t->rank = 0;
}

void tensor_make_none(tensor *t)
{
    seq_clear(t);
    t->kind = VAL_NONE;
    t->rank = 0;
}

ait_status tensor_make_map(tensor *t, const tensor *keys, const tensor *vals, ait_error *e)
{
    if (keys->kind != VAL_TENSOR || vals->kind != VAL_TENSOR || keys->rank != 1 ||
        vals->rank != 1 || keys->dims[0] != vals->dims[0])
        return err_set(e, AIT_E_INVALID_ARG, "a map needs 1-D keys and values of one length");
    if (keys->dtype != AIT_I64 && keys->dtype != AIT_STRING)
        return err_set(e, AIT_E_DTYPE, "map keys must be int64 or string, not %s",
                       ait_dtype_name(keys->dtype));
    seq_clear(t);
    t->kind = VAL_MAP;
    set_dtype(t, vals->dtype);
    t->rank = 0;
    TRY(seq_insert(t, 0, keys, e));
    return seq_insert(t, 1, vals, e);
}

const char *val_kind_name(val_kind k)
{
    static const char *const names[] = {"tensor", "sequence", "none", "map"};
    return k >= VAL_TENSOR && k <= VAL_MAP ? names[k] : "value";
}

ait_status seq_insert(tensor *t, int pos, const tensor *item, ait_error *e)
{
    if (pos < 0 || pos > t->n_items)
        return err_set(e, AIT_E_INVALID_ARG, "position %d is outside the sequence of %d", pos,
                       t->n_items);
    if (t->n_items == t->cap_items) {
        int cap = t->cap_items ? 2 * t->cap_items : 8;
        tensor *p = realloc(t->items, sizeof *p * (size_t)cap);
        if (!p) return err_set(e, AIT_E_NOMEM, "out of memory");
        t->items = p;
        t->cap_items = cap;
    }
    tensor copy = {0};
    TRY(tensor_copy_into(&copy, item, e));
    memmove(&t->items[pos + 1], &t->items[pos], sizeof copy * (size_t)(t->n_items - pos));
    t->items[pos] = copy;
    t->n_items++;
    if (t->dtype == AIT_UNDEFINED) set_dtype(t, item->dtype);
    return AIT_OK;
}

ait_status tensor_copy_into(tensor *dst, const tensor *src, ait_error *e)
{
    if (dst == src) return AIT_OK;
    if (src->kind != VAL_TENSOR) {
        if (src->kind == VAL_MAP) return tensor_make_map(dst, map_keys(src), map_vals(src), e);
        if (src->kind == VAL_NONE) tensor_make_none(dst);
        else tensor_make_sequence(dst, src->dtype);
        for (int i = 0; i < src->n_items; i++) TRY(seq_insert(dst, i, &src->items[i], e));
        return AIT_OK;
    }
    seq_clear(dst);
    dst->kind = VAL_TENSOR;
    tensor_set_shape(dst, src->dtype, src->rank, src->dims);
    TRY(tensor_alloc(dst, e));
    if (src->data) TRY(elems_copy(dst->data, src->data, tensor_numel(src), src->dtype, e));
    return AIT_OK;
}

ait_status tensor_clone(const tensor *src, tensor **out, ait_error *e)
{
    return tensor_clone_pooled(src, NULL, out, e);
}

ait_status tensor_clone_pooled(const tensor *src, block_pool *pool, tensor **out, ait_error *e)
{
    tensor *t = calloc(1, sizeof *t);
    if (!t) return err_set(e, AIT_E_NOMEM, "out of memory");
    size_t n = src->kind == VAL_TENSOR && src->dtype != AIT_STRING && src->data ? tensor_nbytes(src)
                                                                               : 0;
    /* a pooled block, owned by t: tensor_copy_into's tensor_alloc keeps it (it holds n) */
    if (n && (t->data = block_pool_take(pool, n, &t->cap))) t->owned = true, t->pool = pool;
    ait_status s = tensor_copy_into(t, src, e);
    if (s != AIT_OK) {
        tensor_release(t);
        free(t);
        return s;
    }
    *out = t;
    return AIT_OK;
}

ait_status tensor_set_str(tensor *t, int64_t i, const char *s, size_t len, ait_error *e)
{
    char *c = NULL;
    if (len) {
        if (!(c = malloc(len + 1))) return err_set(e, AIT_E_NOMEM, "out of memory");
        memcpy(c, s, len);
        c[len] = 0;
    }
    tensor_put_str(t, i, c);
    return AIT_OK;
}

void tensor_put_str(tensor *t, int64_t i, char *s)
{
    char **p = t->data;
    free(p[i]);
    p[i] = s && *s ? s : NULL;
    if (s && !*s) free(s);
}

ait_status elems_copy(void *dst, const void *src, int64_t n, ait_dtype dt, ait_error *e)
{
    if (dt != AIT_STRING) {
        if (n) memcpy(dst, src, (size_t)n * ait_dtype_size(dt));
        return AIT_OK;
    }
    char **d = dst;
    char *const *s = src;
    for (int64_t i = 0; i < n; i++) {
        char *c = s[i] && *s[i] ? strdup(s[i]) : NULL;
        if (s[i] && *s[i] && !c) return err_set(e, AIT_E_NOMEM, "out of memory");
        free(d[i]);
        d[i] = c;
    }
    return AIT_OK;
}

ait_status tensor_own_strs(tensor *t, ait_error *e)
{
    if (t->kind != VAL_TENSOR || t->dtype != AIT_STRING || !t->data) return AIT_OK;
    char **p = t->data;
    int64_t n = tensor_numel(t), i = 0;
    for (; i < n; i++) {
        if (!p[i]) continue;
        if (!(p[i] = strdup(p[i]))) break;
    }
    if (i == n) return AIT_OK;
    for (; i < n; i++) p[i] = NULL;
    return err_set(e, AIT_E_NOMEM, "out of memory");
}

void tensor_drop_strs(tensor *t)
{
    if (t->kind == VAL_TENSOR && t->dtype == AIT_STRING && t->data)
        memset(t->data, 0, tensor_nbytes(t));
}

const char *shape_str(const int64_t *dims, int rank, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

int64_t elem_get_i64(const void *d, ait_dtype t, int64_t i)
{
    switch (t) {
    case AIT_I64: return ((const int64_t *)d)[i];
    case AIT_U64: return (int64_t)((const uint64_t *)d)[i];
    case AIT_I32: return ((const int32_t *)d)[i];
    case AIT_U32: return ((const uint32_t *)d)[i];
    case AIT_I16: return ((const int16_t *)d)[i];
    case AIT_U16: return ((const uint16_t *)d)[i];
    case AIT_I8: return ((const int8_t *)d)[i];
    case AIT_U8: return ((const uint8_t *)d)[i];
    case AIT_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: {
        double v = elem_get_f64(d, t, i);
        if (!(v == v)) return 0;
        if (v >= 9.2e18) return INT64_MAX;
        if (v <= -9.2e18) return INT64_MIN;
        return (int64_t)v;
    }
    }
}

void elem_set_sat(void *d, ait_dtype t, int64_t i, double v)
{
    if (dtype_is_float(t) || dtype_is_small_float(t)) { /* small floats: saturating */
        elem_set_f64(d, t, i, v);
        return;
    }
    if (t == AIT_BOOL) {
        ((uint8_t *)d)[i] = v > 0;
        return;
    }
    if (v != v) v = 0;
    double lo, hi;
    switch (t) {
    case AIT_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case AIT_U8: lo = 0, hi = UINT8_MAX; break;
    case AIT_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case AIT_U16: lo = 0, hi = UINT16_MAX; break;
    case AIT_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case AIT_U32: lo = 0, hi = UINT32_MAX; break;
    case AIT_I4: lo = -8, hi = 7; break;
    case AIT_U4: lo = 0, hi = 15; break;
    case AIT_I2: lo = -2, hi = 1; break;
    case AIT_U2: lo = 0, hi = 3; break;
    case AIT_I64:
        ((int64_t *)d)[i] = v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
        return;
    case AIT_U64:
        ((uint64_t *)d)[i] = v >= 0x1p64 ? UINT64_MAX : v <= 0 ? 0 : (uint64_t)v;
        return;
    default: return;
    }
    elem_set_f64(d, t, i, v < lo ? lo : v > hi ? hi : v);
}

/* Plain loops for the pairs ops stage through (float16/bfloat16/float64 <->
 * float32); float64 <-> half goes through float32, as elem_set_f64 does. */
bool convert_floats(const void *src, ait_dtype st, void *dst, ait_dtype dt, int64_t n)
{
    if (!dtype_is_float(st) || !dtype_is_float(dt)) return false;
    const uint16_t *hs = src;
    const float *fs = src;
    const double *ds = src;
    uint16_t *hd = dst;
    float *fd = dst;
    double *dd = dst;
    if (st == dt) {
        memcpy(dst, src, (size_t)n * ait_dtype_size(st));
    } else if (dt == AIT_F32) {
        if (st == AIT_F16) for (int64_t i = 0; i < n; i++) fd[i] = f16_to_f32(hs[i]);
        else if (st == AIT_BF16) for (int64_t i = 0; i < n; i++) fd[i] = bf16_to_f32(hs[i]);
        else for (int64_t i = 0; i < n; i++) fd[i] = (float)ds[i];
    } else if (st == AIT_F32) {
        if (dt == AIT_F16) for (int64_t i = 0; i < n; i++) hd[i] = f32_to_f16(fs[i]);
        else if (dt == AIT_BF16) for (int64_t i = 0; i < n; i++) hd[i] = f32_to_bf16(fs[i]);
        else for (int64_t i = 0; i < n; i++) dd[i] = fs[i];
    } else {
        for (int64_t i = 0; i < n; i++) elem_set_f64(dst, dt, i, elem_get_f64(src, st, i));
    }
    return true;
}

/* Casting: go through double for floats, through int64 for integers so that
 * large int64 values survive; float -> int truncates toward zero. */
ait_status convert_elems(const void *src, ait_dtype st, void *dst, ait_dtype dt, int64_t n,
                         ait_error *e)
{
    if (st == dt) return elems_copy(dst, src, n, st, e);
    if (!ait_dtype_size(st) || !ait_dtype_size(dt) || st == AIT_STRING || dt == AIT_STRING)
        return err_set(e, AIT_E_UNSUPPORTED, "cannot convert %s to %s", ait_dtype_name(st),
                       ait_dtype_name(dt));
    if (dtype_is_small(st) || dtype_is_small(dt)) return small_convert(src, st, dst, dt, n, NULL, e);
    if (convert_floats(src, st, dst, dt, n)) return AIT_OK;
    bool from_float = dtype_is_float(st), to_float = dtype_is_float(dt);
    for (int64_t i = 0; i < n; i++) {
        if (dt == AIT_BOOL) {
            ((uint8_t *)dst)[i] = elem_get_f64(src, st, i) != 0;
        } else if (to_float || from_float) {
            double v = elem_get_f64(src, st, i);
            if (!to_float) { /* float -> int: truncate, saturate NaN/inf to 0/limits */
                int64_t k = elem_get_i64(src, st, i);
                if (dt == AIT_U64 && v >= 9.2e18) ((uint64_t *)dst)[i] = (uint64_t)v;
                else elem_set_f64(dst, dt, i, (double)k);
                if (dt == AIT_I64) ((int64_t *)dst)[i] = k;
            } else if (st == AIT_I64 || st == AIT_U64) {
                elem_set_f64(dst, dt, i, st == AIT_I64 ? (double)((const int64_t *)src)[i]
                                                       : (double)((const uint64_t *)src)[i]);
            } else {
                elem_set_f64(dst, dt, i, v);
            }
        } else { /* int -> int: wrap like C */
            int64_t k = elem_get_i64(src, st, i);
            switch (dt) {
            case AIT_I64: ((int64_t *)dst)[i] = k; break;
            case AIT_U64: ((uint64_t *)dst)[i] = (uint64_t)k; break;
            default: elem_set_f64(dst, dt, i, (double)k); break;
            }
        }
    }
    return AIT_OK;
}
