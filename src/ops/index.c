/* Indexing ops: Gather, GatherElements, GatherND, ScatterND, ScatterElements
 * (and its old name Scatter), TensorScatter, TopK, CumSum, CumProd, NonZero, OneHot, Compress,
 * ReverseSequence, Unique.
 *
 * Ops that only move elements work on bytes (element size), so they handle
 * every fixed-size dtype with one kernel. Index inputs are int32 or int64;
 * negative indices count from the end, and anything still out of range is an
 * error that names the index. */
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "ops/op.h"

/* ---- shared helpers ------------------------------------------------------ */

/* Size of one element; fails for strings and undefined types. */
static ait_status elem_size(op_ctx *c, const tensor *t, const char *what, size_t *esz)
{
    *esz = ait_dtype_size(t->dtype);
    if (!*esz)
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s has unsupported dtype %s", what,
                       ait_dtype_name(t->dtype));
    return AIT_OK;
}

static inline void copy_elem(char *dst, const char *src, size_t esz)
{
    switch (esz) { /* constant-size memcpy compiles to a single move */
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, esz); break;
    }
}

static ait_status check_index_dtype(op_ctx *c, const tensor *t, const char *what)
{
    return check_dtype(c, t, what, 2, AIT_I32, AIT_I64);
}

static inline int64_t index_at(const tensor *t, int64_t i)
{
    return t->dtype == AIT_I64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
}

/* Wraps a negative index into [0, dim) and fails when it stays outside. */
static inline ait_status wrap_index(op_ctx *c, int64_t v, int64_t dim, const char *what,
                                    int64_t *out)
{
    int64_t w = v < 0 ? v + dim : v;
    if (w < 0 || w >= dim)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "%s index %lld is out of range for a dimension of size %lld", what,
                       (long long)v, (long long)dim);
    *out = w;
    return AIT_OK;
}

/* Validates an output shape (negative dims, element count overflow). */
static ait_status check_shape(op_ctx *c, const int64_t *dims, int rank, ait_dtype dt)
{
    int64_t n;
    return shape_numel(dims, rank, dt, &n, "output", c->err);
}

static bool is_numeric(ait_dtype t) { return dtype_is_float(t) || dtype_is_int(t); }

/* Walks a shape's coordinates in row-major order while keeping an element
 * offset into another tensor with its own strides. */
typedef struct walker {
    int rank;
    int64_t dims[AIT_MAX_RANK], coord[AIT_MAX_RANK], strides[AIT_MAX_RANK], off;
} walker;

static void walk_init(walker *w, int rank, const int64_t *dims, const int64_t *strides)
{
    w->rank = rank;
    w->off = 0;
    for (int d = 0; d < rank; d++) {
        w->dims[d] = dims[d];
        w->coord[d] = 0;
        w->strides[d] = strides[d];
    }
}

static inline void walk_next(walker *w)
{
    for (int d = w->rank - 1; d >= 0; d--) {
        w->off += w->strides[d];
        if (++w->coord[d] < w->dims[d]) return;
        w->off -= w->strides[d] * w->dims[d];
        w->coord[d] = 0;
    }
}

/* Order-preserving 64-bit keys: comparing keys as unsigned integers orders
 * the values numerically (floats: -0 equals 0, NaN sorts past infinity). */
static inline uint64_t f64_key(double v)
{
    if (v == 0) v = 0; /* folds -0 into +0 */
    uint64_t u;
    memcpy(&u, &v, 8);
    return (u >> 63) ? ~u : u | (1ull << 63);
}
static inline uint64_t i64_key(int64_t v) { return (uint64_t)v ^ (1ull << 63); }
static inline uint64_t f16_key(uint16_t v) { return f64_key(f16_to_f32(v)); }
static inline uint64_t bf16_key(uint16_t v) { return f64_key(bf16_to_f32(v)); }

/* keys[j] = key of element start + j * stride, for j < n. */
static void fill_keys(const tensor *t, int64_t start, int64_t stride, int64_t n, uint64_t *keys)
{
    const void *p = t->data;
#define KEYS(T, conv)                                                                      \
    for (int64_t j = 0; j < n; j++) keys[j] = conv(((const T *)p)[start + j * stride]);    \
    break
    switch (t->dtype) {
    case AIT_F32: KEYS(float, f64_key);
    case AIT_F64: KEYS(double, f64_key);
    case AIT_F16: KEYS(uint16_t, f16_key);
    case AIT_BF16: KEYS(uint16_t, bf16_key);
    case AIT_I8: KEYS(int8_t, i64_key);
    case AIT_I16: KEYS(int16_t, i64_key);
    case AIT_I32: KEYS(int32_t, i64_key);
    case AIT_I64: KEYS(int64_t, i64_key);
    case AIT_U8:
    case AIT_BOOL: KEYS(uint8_t, (uint64_t));
    case AIT_U16: KEYS(uint16_t, (uint64_t));
    case AIT_U32: KEYS(uint32_t, (uint64_t));
    case AIT_U64: KEYS(uint64_t, (uint64_t));
    default:
        for (int64_t j = 0; j < n; j++) keys[j] = 0;
        break;
    }
#undef KEYS
}

/* ---- scatter reductions -------------------------------------------------- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static ait_status parse_reduction(op_ctx *c, int *red)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *s = attr_str(c->n, "reduction", "none");
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) {
            *red = i;
            if (i != RED_NONE && c->in[0]->dtype == AIT_STRING)
                return err_set(c->err, AIT_E_DTYPE, "reduction '%s' on string tensors", s);
            return AIT_OK;
        }
    return err_set(c->err, AIT_E_INVALID_ARG, "unknown reduction '%s'", s);
}

/* dst[i] = red(dst[i], src[i]) for i < n. */
static void combine_n(ait_dtype dt, void *dst, const void *src, int64_t n, int red, size_t esz)
{
    if (red == RED_NONE) {
        memcpy(dst, src, (size_t)n * esz);
        return;
    }
#define COMBINE(T)                                                                         \
    do {                                                                                   \
        T *d = dst;                                                                        \
        const T *s = src;                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                  \
            T a = d[i], b = s[i];                                                          \
            d[i] = red == RED_ADD ? (T)(a + b)                                             \
                 : red == RED_MUL ? (T)(a * b)                                             \
                 : red == RED_MAX ? (a > b ? a : b)                                        \
                                  : (a < b ? a : b);                                       \
        }                                                                                  \
    } while (0);                                                                           \
    break
#define COMBINE_HALF(to, from)                                                             \
    do {                                                                                   \
        uint16_t *d = dst;                                                                 \
        const uint16_t *s = src;                                                           \
        for (int64_t i = 0; i < n; i++) {                                                  \
            float a = to(d[i]), b = to(s[i]);                                              \
            float r = red == RED_ADD ? a + b                                               \
                    : red == RED_MUL ? a * b                                               \
                    : red == RED_MAX ? (a > b ? a : b)                                     \
                                     : (a < b ? a : b);                                    \
            d[i] = from(r);                                                                \
        }                                                                                  \
    } while (0);                                                                           \
    break
    switch (dt) {
    case AIT_F32: COMBINE(float);
    case AIT_F64: COMBINE(double);
    case AIT_I8: COMBINE(int8_t);
    case AIT_U8: COMBINE(uint8_t);
    case AIT_I16: COMBINE(int16_t);
    case AIT_U16: COMBINE(uint16_t);
    case AIT_I32: COMBINE(int32_t);
    case AIT_U32: COMBINE(uint32_t);
    case AIT_I64: COMBINE(int64_t);
    case AIT_U64: COMBINE(uint64_t);
    case AIT_F16: COMBINE_HALF(f16_to_f32, f32_to_f16);
    case AIT_BF16: COMBINE_HALF(bf16_to_f32, f32_to_bf16);
    case AIT_BOOL: { /* add and max are "or", mul and min are "and" */
        uint8_t *d = dst;
        const uint8_t *s = src;
        bool any = red == RED_ADD || red == RED_MAX;
        for (int64_t i = 0; i < n; i++) d[i] = any ? (d[i] || s[i]) : (d[i] && s[i]);
        break;
    }
    default: break;
    }
#undef COMBINE
#undef COMBINE_HALF
}

/* ---- Gather ---------------------------------------------------------------- */

static ait_status gather_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1];
    TRY(check_index_dtype(c, ind, "indices"));
    size_t esz = 0;
    TRY(elem_size(c, x, "data", &esz));
    if (x->rank < 1) return err_set(c->err, AIT_E_SHAPE, "data must have rank >= 1");
    int axis = 0;
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, &axis));
    int r = x->rank - 1 + ind->rank;
    if (r > AIT_MAX_RANK)
        return err_set(c->err, AIT_E_UNSUPPORTED, "output rank %d exceeds %d", r, AIT_MAX_RANK);
    int64_t d[AIT_MAX_RANK];
    int k = 0;
    for (int i = 0; i < axis; i++) d[k++] = x->dims[i];
    for (int i = 0; i < ind->rank; i++) d[k++] = ind->dims[i];
    for (int i = axis + 1; i < x->rank; i++) d[k++] = x->dims[i];
    TRY(check_shape(c, d, r, x->dtype));
    set_out(c, 0, x->dtype, r, d);
    return AIT_OK;
}

static ait_status gather_run(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1];
    int axis = 0;
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, &axis));
    size_t esz = ait_dtype_size(x->dtype);
    int64_t outer = dims_prod(x->dims, 0, axis), n = x->dims[axis];
    size_t block = (size_t)dims_prod(x->dims, axis + 1, x->rank) * esz;
    int64_t ni = tensor_numel(ind), w = 0;
    for (int64_t j = 0; j < ni; j++) TRY(wrap_index(c, index_at(ind, j), n, "Gather", &w));
    const char *src = x->data;
    char *dst = c->out[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t v = index_at(ind, j);
            if (v < 0) v += n;
            memcpy(dst, src + (size_t)(o * n + v) * block, block);
            dst += block;
        }
    return AIT_OK;
}

/* ---- GatherElements / ScatterElements / Scatter ---------------------------- */

/* Shared checks: indices has data's rank and fits inside it off the axis. */
static ait_status elements_check(op_ctx *c, const tensor *x, const tensor *ind, int *axis)
{
    TRY(check_index_dtype(c, ind, "indices"));
    size_t esz = 0;
    TRY(elem_size(c, x, "data", &esz));
    if (x->rank < 1) return err_set(c->err, AIT_E_SHAPE, "data must have rank >= 1");
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, axis));
    if (ind->rank != x->rank)
        return err_set(c->err, AIT_E_SHAPE, "indices rank %d differs from data rank %d",
                       ind->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != *axis && ind->dims[d] > x->dims[d])
            return err_set(c->err, AIT_E_SHAPE,
                           "indices dimension %d (%lld) exceeds data's (%lld)", d,
                           (long long)ind->dims[d], (long long)x->dims[d]);
    return AIT_OK;
}

/* A walker over indices that tracks data's offset with the axis left out. */
static void elements_walker(walker *w, const tensor *x, const tensor *ind, int axis)
{
    int64_t st[AIT_MAX_RANK];
    row_strides(x->dims, x->rank, st);
    st[axis] = 0;
    walk_init(w, ind->rank, ind->dims, st);
}

static ait_status gather_elements_infer(op_ctx *c)
{
    int axis = 0;
    TRY(elements_check(c, c->in[0], c->in[1], &axis));
    set_out(c, 0, c->in[0]->dtype, c->in[1]->rank, c->in[1]->dims);
    return AIT_OK;
}

static ait_status gather_elements_run(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1];
    int axis = 0;
    TRY(elements_check(c, x, ind, &axis));
    size_t esz = ait_dtype_size(x->dtype);
    int64_t ax_stride = dims_prod(x->dims, axis + 1, x->rank), n = tensor_numel(ind), v = 0;
    walker w;
    elements_walker(&w, x, ind, axis);
    const char *src = x->data;
    char *dst = c->out[0]->data;
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        TRY(wrap_index(c, index_at(ind, i), x->dims[axis], "GatherElements", &v));
        copy_elem(dst + (size_t)i * esz, src + (size_t)(w.off + v * ax_stride) * esz, esz);
    }
    return AIT_OK;
}

static ait_status scatter_elements_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    int axis = 0, red = 0;
    TRY(elements_check(c, x, ind, &axis));
    TRY(parse_reduction(c, &red));
    if (upd->dtype != x->dtype)
        return err_set(c->err, AIT_E_DTYPE, "updates dtype %s differs from data dtype %s",
                       ait_dtype_name(upd->dtype), ait_dtype_name(x->dtype));
    bool same = upd->rank == ind->rank;
    for (int d = 0; same && d < ind->rank; d++) same = upd->dims[d] == ind->dims[d];
    if (!same) {
        char a[128], b[128];
        return err_set(c->err, AIT_E_SHAPE, "updates shape %s differs from indices shape %s",
                       shape_str(upd->dims, upd->rank, a, sizeof a),
                       shape_str(ind->dims, ind->rank, b, sizeof b));
    }
    set_out(c, 0, x->dtype, x->rank, x->dims);
    return AIT_OK;
}

static ait_status scatter_elements_run(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    int axis = 0, red = 0;
    TRY(elements_check(c, x, ind, &axis));
    TRY(parse_reduction(c, &red));
    size_t esz = ait_dtype_size(x->dtype);
    char *dst = c->out[0]->data;
    memcpy(dst, x->data, tensor_nbytes(x));
    int64_t ax_stride = dims_prod(x->dims, axis + 1, x->rank), n = tensor_numel(ind), v = 0;
    walker w;
    elements_walker(&w, x, ind, axis);
    const char *src = upd->data;
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        TRY(wrap_index(c, index_at(ind, i), x->dims[axis], "ScatterElements", &v));
        char *p = dst + (size_t)(w.off + v * ax_stride) * esz;
        if (red == RED_NONE) copy_elem(p, src + (size_t)i * esz, esz);
        else combine_n(x->dtype, p, src + (size_t)i * esz, 1, red, esz);
    }
    return AIT_OK;
}

/* ---- GatherND / ScatterND -------------------------------------------------- */

static ait_status gather_nd_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1];
    TRY(check_index_dtype(c, ind, "indices"));
    size_t esz = 0;
    TRY(elem_size(c, x, "data", &esz));
    int64_t b = attr_int(c->n, "batch_dims", 0);
    if (x->rank < 1 || ind->rank < 1)
        return err_set(c->err, AIT_E_SHAPE, "data and indices must have rank >= 1");
    if (b < 0 || b >= x->rank || b >= ind->rank)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "batch_dims %lld must be below the ranks of data (%d) and indices (%d)",
                       (long long)b, x->rank, ind->rank);
    int64_t k = ind->dims[ind->rank - 1];
    if (k < 1 || b + k > x->rank)
        return err_set(c->err, AIT_E_SHAPE,
                       "indices' last dimension %lld must be in [1, %lld] (data rank %d, "
                       "batch_dims %lld)",
                       (long long)k, (long long)(x->rank - b), x->rank, (long long)b);
    for (int i = 0; i < b; i++)
        if (ind->dims[i] != x->dims[i])
            return err_set(c->err, AIT_E_SHAPE,
                           "batch dimension %d differs between data (%lld) and indices (%lld)",
                           i, (long long)x->dims[i], (long long)ind->dims[i]);
    int64_t d[AIT_MAX_RANK];
    int r = 0;
    if (ind->rank - 1 + x->rank - (int)(b + k) > AIT_MAX_RANK)
        return err_set(c->err, AIT_E_UNSUPPORTED, "output rank exceeds %d", AIT_MAX_RANK);
    for (int i = 0; i < ind->rank - 1; i++) d[r++] = ind->dims[i];
    for (int i = (int)(b + k); i < x->rank; i++) d[r++] = x->dims[i];
    TRY(check_shape(c, d, r, x->dtype));
    set_out(c, 0, x->dtype, r, d);
    return AIT_OK;
}

static ait_status gather_nd_run(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1];
    int b = (int)attr_int(c->n, "batch_dims", 0), q = ind->rank;
    int k = (int)ind->dims[q - 1];
    size_t esz = ait_dtype_size(x->dtype);
    int64_t st[AIT_MAX_RANK];
    row_strides(x->dims, x->rank, st);
    int64_t batches = dims_prod(x->dims, 0, b), per = dims_prod(ind->dims, b, q - 1);
    int64_t block = b ? st[b - 1] : tensor_numel(x);
    size_t slice = (size_t)dims_prod(x->dims, b + k, x->rank) * esz;
    const char *src = x->data;
    char *dst = c->out[0]->data;
    int64_t t = 0; /* index tuple number */
    for (int64_t bi = 0; bi < batches; bi++)
        for (int64_t j = 0; j < per; j++, t++) {
            int64_t off = bi * block, v = 0;
            for (int m = 0; m < k; m++) {
                TRY(wrap_index(c, index_at(ind, t * k + m), x->dims[b + m], "GatherND", &v));
                off += v * st[b + m];
            }
            memcpy(dst, src + (size_t)off * esz, slice);
            dst += slice;
        }
    return AIT_OK;
}

static ait_status scatter_nd_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    TRY(check_index_dtype(c, ind, "indices"));
    size_t esz = 0;
    int red = 0;
    TRY(elem_size(c, x, "data", &esz));
    TRY(parse_reduction(c, &red));
    if (upd->dtype != x->dtype)
        return err_set(c->err, AIT_E_DTYPE, "updates dtype %s differs from data dtype %s",
                       ait_dtype_name(upd->dtype), ait_dtype_name(x->dtype));
    if (x->rank < 1 || ind->rank < 1)
        return err_set(c->err, AIT_E_SHAPE, "data and indices must have rank >= 1");
    int q = ind->rank;
    int64_t k = ind->dims[q - 1];
    if (k > x->rank)
        return err_set(c->err, AIT_E_SHAPE, "indices' last dimension %lld exceeds data rank %d",
                       (long long)k, x->rank);
    /* updates' shape must be indices.shape[:-1] + data.shape[k:] */
    bool ok = upd->rank == q - 1 + x->rank - (int)k;
    for (int i = 0; ok && i < q - 1; i++) ok = upd->dims[i] == ind->dims[i];
    for (int i = (int)k; ok && i < x->rank; i++) ok = upd->dims[q - 1 + i - k] == x->dims[i];
    if (!ok) {
        char a[128];
        return err_set(c->err, AIT_E_SHAPE,
                       "updates shape %s does not match indices.shape[:-1] + data.shape[%lld:]",
                       shape_str(upd->dims, upd->rank, a, sizeof a), (long long)k);
    }
    set_out(c, 0, x->dtype, x->rank, x->dims);
    return AIT_OK;
}

static ait_status scatter_nd_run(op_ctx *c)
{
    const tensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    int red = 0;
    TRY(parse_reduction(c, &red));
    int q = ind->rank, k = (int)ind->dims[q - 1];
    size_t esz = ait_dtype_size(x->dtype);
    int64_t st[AIT_MAX_RANK];
    row_strides(x->dims, x->rank, st);
    int64_t n = dims_prod(ind->dims, 0, q - 1), slice = dims_prod(x->dims, k, x->rank);
    char *dst = c->out[0]->data;
    memcpy(dst, x->data, tensor_nbytes(x));
    const char *src = upd->data;
    for (int64_t j = 0; j < n; j++) {
        int64_t off = 0, v = 0;
        for (int m = 0; m < k; m++) {
            TRY(wrap_index(c, index_at(ind, j * k + m), x->dims[m], "ScatterND", &v));
            off += v * st[m];
        }
        combine_n(x->dtype, dst + (size_t)off * esz, src + (size_t)(j * slice) * esz, slice,
                  red, esz);
    }
    return AIT_OK;
}

/* ---- TopK ---------------------------------------------------------------- */

typedef struct topk_params {
    int axis;
    int64_t k;
    bool largest;
} topk_params;

static ait_status topk_params_get(op_ctx *c, topk_params *p)
{
    const tensor *x = c->in[0];
    if (x->rank < 1) return err_set(c->err, AIT_E_SHAPE, "input must have rank >= 1");
    if (!is_numeric(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "input has unsupported dtype %s",
                       ait_dtype_name(x->dtype));
    TRY(norm_axis(c, attr_int(c->n, "axis", -1), x->rank, &p->axis));
    p->largest = attr_int(c->n, "largest", 1) != 0;
    if (c->n->version < 10) {
        if (!node_attr(c->n, "k"))
            return err_set(c->err, AIT_E_INVALID_ARG, "attribute k is required before opset 10");
        p->k = attr_int(c->n, "k", 0);
    } else {
        if (!has_in(c, 1)) return err_set(c->err, AIT_E_INVALID_ARG, "input K is missing");
        int64_t kv[1];
        int cnt;
        TRY(check_dtype(c, c->in[1], "K", 1, AIT_I64));
        if (tensor_numel(c->in[1]) != 1)
            return err_set(c->err, AIT_E_SHAPE, "K must hold exactly one value");
        TRY(in_ints(c, 1, kv, 1, &cnt)); /* AIT_DEFER without data */
        p->k = kv[0];
    }
    if (p->k < 0 || p->k > x->dims[p->axis])
        return err_set(c->err, AIT_E_INVALID_ARG, "k = %lld is outside [0, %lld]",
                       (long long)p->k, (long long)x->dims[p->axis]);
    return AIT_OK;
}

static ait_status topk_infer(op_ctx *c)
{
    topk_params p = {0};
    TRY(topk_params_get(c, &p));
    const tensor *x = c->in[0];
    int64_t d[AIT_MAX_RANK];
    memcpy(d, x->dims, sizeof d);
    d[p.axis] = p.k;
    set_out(c, 0, x->dtype, x->rank, d);
    set_out(c, 1, AIT_I64, x->rank, d);
    return AIT_OK;
}

/* True when element a goes before element b in the output: the better key,
 * or on a tie the lower index. */
static inline bool topk_before(const uint64_t *key, int64_t a, int64_t b, bool largest)
{
    if (key[a] != key[b]) return largest ? key[a] > key[b] : key[a] < key[b];
    return a < b;
}

/* heap[0] is the worst of the kept elements. */
static void topk_sift(int64_t *heap, int64_t n, int64_t i, const uint64_t *key, bool largest)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && topk_before(key, heap[w], heap[l], largest)) w = l;
        if (r < n && topk_before(key, heap[w], heap[r], largest)) w = r;
        if (w == i) return;
        int64_t t = heap[i];
        heap[i] = heap[w];
        heap[w] = t;
        i = w;
    }
}

static ait_status topk_run(op_ctx *c)
{
    topk_params p = {0};
    TRY(topk_params_get(c, &p));
    const tensor *x = c->in[0];
    int64_t outer = dims_prod(x->dims, 0, p.axis), n = x->dims[p.axis];
    int64_t inner = dims_prod(x->dims, p.axis + 1, x->rank), k = p.k;
    if (k == 0 || tensor_numel(x) == 0) return AIT_OK;
    uint64_t *key = op_scratch(c, (size_t)(n + k) * 8);
    if (!key) return AIT_E_NOMEM;
    int64_t *heap = (int64_t *)(key + n);
    size_t esz = ait_dtype_size(x->dtype);
    const char *src = x->data;
    char *vals = has_out(c, 0) ? c->out[0]->data : NULL;
    int64_t *idx = has_out(c, 1) ? c->out[1]->data : NULL;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            fill_keys(x, o * n * inner + in, inner, n, key);
            int64_t h = 0;
            for (int64_t j = 0; j < n; j++) {
                if (h < k) { /* push, sifting up */
                    int64_t i = h++;
                    heap[i] = j;
                    while (i > 0 && topk_before(key, heap[(i - 1) / 2], heap[i], p.largest)) {
                        int64_t par = (i - 1) / 2, t = heap[i];
                        heap[i] = heap[par];
                        heap[par] = t;
                        i = par;
                    }
                } else if (topk_before(key, j, heap[0], p.largest)) {
                    heap[0] = j;
                    topk_sift(heap, k, 0, key, p.largest);
                }
            }
            /* popping the worst first fills the output from its end */
            for (int64_t r = k - 1; r >= 0; r--) {
                int64_t j = heap[0];
                heap[0] = heap[r];
                topk_sift(heap, r, 0, key, p.largest);
                int64_t at = (o * k + r) * inner + in;
                if (vals)
                    copy_elem(vals + (size_t)at * esz,
                              src + (size_t)((o * n + j) * inner + in) * esz, esz);
                if (idx) idx[at] = j;
            }
        }
    return AIT_OK;
}

/* ---- TensorScatter --------------------------------------------------------- */

/* The KV-cache update: past_cache with, for each batch b, update's
 * sequence written from position write_indices[b] along `axis` (modulo the
 * cache length in circular mode). Bytes are moved, so any fixed-size dtype. */
typedef struct tscat {
    int axis;
    bool circular;
    int64_t outer, seq, max, inner; /* [outer][seq or max][inner], outer counts b first */
} tscat;

static ait_status tscat_params(op_ctx *c, tscat *p)
{
    const tensor *past = c->in[0], *up = c->in[1];
    if (!ait_dtype_size(past->dtype) || (past->dtype >= 21 && past->dtype <= 23) ||
        past->dtype == 25 || past->dtype == 26)
        return err_set(c->err, AIT_E_UNSUPPORTED, "TensorScatter of %s is not supported",
                       ait_dtype_name(past->dtype));
    if (up->dtype != past->dtype)
        return err_set(c->err, AIT_E_DTYPE, "update is %s but past_cache is %s",
                       ait_dtype_name(up->dtype), ait_dtype_name(past->dtype));
    if (past->rank < 2)
        return err_set(c->err, AIT_E_SHAPE, "past_cache must have rank >= 2, not %d",
                       past->rank);
    TRY(norm_axis(c, attr_int(c->n, "axis", -2), past->rank, &p->axis));
    if (p->axis == 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "axis cannot be 0 (the batch axis)");
    const char *mode = attr_str(c->n, "mode", "linear");
    p->circular = strcmp(mode, "circular") == 0;
    if (!p->circular && strcmp(mode, "linear") != 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "mode '%s' is not linear or circular", mode);
    bool ok = up->rank == past->rank;
    for (int i = 0; ok && i < past->rank; i++)
        ok = i == p->axis ? up->dims[i] <= past->dims[i] : up->dims[i] == past->dims[i];
    if (!ok) {
        char s1[128], s2[128];
        return err_set(c->err, AIT_E_SHAPE, "update %s does not fit past_cache %s (they may "
                       "differ only in axis %d, where update is not longer)",
                       shape_str(up->dims, up->rank, s1, sizeof s1),
                       shape_str(past->dims, past->rank, s2, sizeof s2), p->axis);
    }
    if (has_in(c, 2)) {
        const tensor *w = c->in[2];
        if (w->dtype != AIT_I64)
            return err_set(c->err, AIT_E_DTYPE, "write_indices must be int64, not %s",
                           ait_dtype_name(w->dtype));
        if (w->rank != 1 || w->dims[0] != past->dims[0])
            return err_set(c->err, AIT_E_SHAPE, "write_indices must have shape (%lld)",
                           (long long)past->dims[0]);
    }
    p->outer = dims_prod(past->dims, 0, p->axis);
    p->seq = up->dims[p->axis];
    p->max = past->dims[p->axis];
    p->inner = dims_prod(past->dims, p->axis + 1, past->rank);
    return AIT_OK;
}

static ait_status tscat_infer(op_ctx *c)
{
    tscat p;
    TRY(tscat_params(c, &p));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status tscat_run(op_ctx *c)
{
    tscat p;
    TRY(tscat_params(c, &p));
    const tensor *past = c->in[0], *up = c->in[1];
    const int64_t *wi = has_in(c, 2) ? c->in[2]->data : NULL;
    int64_t B = past->dims[0], per_b = B ? p.outer / B : 0;
    for (int64_t b = 0; wi && b < B; b++)
        if (!p.circular && (wi[b] < 0 || wi[b] > p.max - p.seq))
            return err_set(c->err, AIT_E_INVALID_ARG, "write_indices[%lld] = %lld: linear mode "
                           "needs 0 <= index and index + %lld <= %lld", (long long)b,
                           (long long)wi[b], (long long)p.seq, (long long)p.max);
    size_t es = ait_dtype_size(past->dtype), row = (size_t)p.inner * es;
    char *y = c->out[0]->data;
    memcpy(y, past->data, tensor_nbytes(past));
    if (!p.max) return AIT_OK;
    for (int64_t o = 0; o < p.outer; o++) {
        int64_t w = wi ? wi[o / per_b] : 0;
        if (p.circular) w = (w % p.max + p.max) % p.max; /* no overflow adding s below */
        for (int64_t s = 0; s < p.seq; s++) {
            int64_t at = p.circular ? (w + s) % p.max : w + s;
            memcpy(y + (size_t)(o * p.max + at) * row,
                   (const char *)up->data + (size_t)(o * p.seq + s) * row, row);
        }
    }
    return AIT_OK;
}

/* ---- CumSum, CumProd ----------------------------------------------------- */

static ait_status cumsum_axis(op_ctx *c, int *axis)
{
    const tensor *a = c->in[1];
    TRY(check_index_dtype(c, a, "axis"));
    if (a->rank > 1 || tensor_numel(a) != 1)
        return err_set(c->err, AIT_E_SHAPE, "axis must be a scalar");
    int64_t v[1];
    int cnt;
    TRY(in_ints(c, 1, v, 1, &cnt));
    return norm_axis(c, v[0], c->in[0]->rank, axis);
}

static ait_status cumsum_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    TRY(check_dtype(c, x, "input", 8, AIT_F32, AIT_F64, AIT_F16, AIT_BF16, AIT_I32, AIT_I64,
                    AIT_U32, AIT_U64));
    int axis = 0;
    if (c->in[1]->data) TRY(cumsum_axis(c, &axis)); /* the shape does not depend on it */
    set_out(c, 0, x->dtype, x->rank, x->dims);
    return AIT_OK;
}

/* CumSum and CumProd: one scan, `prod` picks the operation. Integers are
 * combined in uint64_t (wrapping, as the two's complement result does,
 * without signed overflow); float32 in double (one rounding per step, as
 * float arithmetic would give). */
static ait_status cumulate(op_ctx *c, bool prod)
{
    const tensor *x = c->in[0];
    int axis = 0;
    TRY(cumsum_axis(c, &axis));
    bool excl = attr_int(c->n, "exclusive", 0) != 0, rev = attr_int(c->n, "reverse", 0) != 0;
    int64_t outer = dims_prod(x->dims, 0, axis), n = x->rank ? x->dims[axis] : 1;
    int64_t inner = dims_prod(x->dims, axis + 1, x->rank), numel = tensor_numel(x);
    const void *src = x->data;
    void *dst = c->out[0]->data;
    ait_dtype dt = x->dtype;
    if (dt == AIT_F16 || dt == AIT_BF16) { /* sum in float32, round once per output */
        float *buf = op_scratch(c, (size_t)numel * 2 * sizeof(float));
        if (!buf) return AIT_E_NOMEM;
        TRY(convert_elems(src, dt, buf, AIT_F32, numel, c->err));
        src = buf;
        dst = buf + numel;
        dt = AIT_F32;
    }
    /* Rows along the axis in visiting order; each output row adds one input
     * row (its own, or with exclusive the previous one) to the previous
     * output row, a loop over `inner` contiguous elements. */
#define CUMSUM(T, U)                                                                       \
    do {                                                                                   \
        const T *xs = src;                                                                 \
        T *ys = dst;                                                                       \
        for (int64_t o = 0; o < outer; o++)                                                \
            for (int64_t s = 0; s < n; s++) {                                              \
                int64_t j = rev ? n - 1 - s : s, jp = rev ? j + 1 : j - 1;                \
                T *y = ys + (o * n + j) * inner;                                           \
                if (s == 0) {                                                              \
                    const T *xa = xs + (o * n + j) * inner;                                \
                    for (int64_t i = 0; i < inner; i++) y[i] = excl ? (T)prod : xa[i];     \
                } else {                                                                   \
                    const T *prev = ys + (o * n + jp) * inner;                             \
                    const T *xa = xs + (o * n + (excl ? jp : j)) * inner;                  \
                    for (int64_t i = 0; i < inner; i++)                                     \
                        y[i] = prod ? (T)((U)prev[i] * (U)xa[i]) : (T)((U)prev[i] + (U)xa[i]); \
                }                                                                          \
            }                                                                              \
    } while (0);                                                                           \
    break
    switch (dt) {
    case AIT_F32: CUMSUM(float, double);
    case AIT_F64: CUMSUM(double, double);
    case AIT_I32: CUMSUM(int32_t, uint64_t);
    case AIT_I64: CUMSUM(int64_t, uint64_t);
    case AIT_U32: CUMSUM(uint32_t, uint64_t);
    case AIT_U64: CUMSUM(uint64_t, uint64_t);
    default: return err_set(c->err, AIT_E_INTERNAL, "unexpected dtype");
    }
#undef CUMSUM
    if (dst != c->out[0]->data)
        TRY(convert_elems(dst, AIT_F32, c->out[0]->data, x->dtype, numel, c->err));
    return AIT_OK;
}

static ait_status cumsum_run(op_ctx *c) { return cumulate(c, false); }
static ait_status cumprod_run(op_ctx *c) { return cumulate(c, true); }

/* ---- NonZero ------------------------------------------------------------- */

static inline bool elem_nonzero(const void *p, ait_dtype t, int64_t i)
{
    switch (t) {
    case AIT_F32: return ((const float *)p)[i] != 0;
    case AIT_F64: return ((const double *)p)[i] != 0;
    case AIT_F16:
    case AIT_BF16: return (((const uint16_t *)p)[i] & 0x7fff) != 0; /* +-0 are zero */
    case AIT_I8:
    case AIT_U8:
    case AIT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case AIT_I16:
    case AIT_U16: return ((const uint16_t *)p)[i] != 0;
    case AIT_I32:
    case AIT_U32: return ((const uint32_t *)p)[i] != 0;
    case AIT_I64:
    case AIT_U64: return ((const uint64_t *)p)[i] != 0;
    case AIT_STRING: { /* not empty */
        const char *s = ((char *const *)p)[i];
        return s && *s;
    }
    default: return false;
    }
}

static int64_t count_nonzero(const tensor *t, int64_t n)
{
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) cnt += elem_nonzero(t->data, t->dtype, i);
    return cnt;
}

static ait_status nonzero_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    if (!is_numeric(x->dtype) && x->dtype != AIT_BOOL && x->dtype != AIT_STRING)
        return err_set(c->err, AIT_E_UNSUPPORTED, "input has unsupported dtype %s",
                       ait_dtype_name(x->dtype));
    if (!x->data) return AIT_DEFER;
    int64_t d[2] = {x->rank, count_nonzero(x, tensor_numel(x))};
    set_out(c, 0, AIT_I64, 2, d);
    return AIT_OK;
}

static ait_status nonzero_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t n = tensor_numel(x), cnt = c->out[0]->dims[1], m = 0;
    if (count_nonzero(x, n) != cnt)
        return err_set(c->err, AIT_E_INTERNAL, "output was sized for a different input");
    int64_t *out = c->out[0]->data, coord[AIT_MAX_RANK] = {0};
    for (int64_t i = 0; i < n; i++) {
        if (elem_nonzero(x->data, x->dtype, i)) {
            for (int d = 0; d < x->rank; d++) out[d * cnt + m] = coord[d];
            m++;
        }
        for (int d = x->rank - 1; d >= 0; d--) { /* next coordinate */
            if (++coord[d] < x->dims[d]) break;
            coord[d] = 0;
        }
    }
    return AIT_OK;
}

/* ---- OneHot -------------------------------------------------------------- */

static ait_status onehot_params(op_ctx *c, int *axis, int64_t *depth)
{
    const tensor *ind = c->in[0], *dep = c->in[1], *vals = c->in[2];
    if (!is_numeric(ind->dtype) || !is_numeric(dep->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "indices and depth must be numeric");
    size_t esz = 0;
    TRY(elem_size(c, vals, "values", &esz));
    if (tensor_numel(vals) != 2 || vals->rank != 1)
        return err_set(c->err, AIT_E_SHAPE, "values must be [off_value, on_value]");
    if (tensor_numel(dep) != 1 || dep->rank > 1)
        return err_set(c->err, AIT_E_SHAPE, "depth must hold exactly one value");
    if (ind->rank + 1 > AIT_MAX_RANK)
        return err_set(c->err, AIT_E_UNSUPPORTED, "output rank exceeds %d", AIT_MAX_RANK);
    TRY(norm_axis(c, attr_int(c->n, "axis", -1), ind->rank + 1, axis));
    if (!dep->data) return AIT_DEFER;
    double d = elem_get_f64(dep->data, dep->dtype, 0);
    if (!(d >= 1 && d < 9.0e18))
        return err_set(c->err, AIT_E_INVALID_ARG, "depth %g must be a positive count", d);
    *depth = (int64_t)d;
    return AIT_OK;
}

static ait_status onehot_infer(op_ctx *c)
{
    int axis = 0;
    int64_t depth = 0, d[AIT_MAX_RANK];
    TRY(onehot_params(c, &axis, &depth));
    const tensor *ind = c->in[0];
    for (int i = 0, k = 0; i <= ind->rank; i++) d[i] = i == axis ? depth : ind->dims[k++];
    TRY(check_shape(c, d, ind->rank + 1, c->in[2]->dtype));
    set_out(c, 0, c->in[2]->dtype, ind->rank + 1, d);
    return AIT_OK;
}

static ait_status onehot_run(op_ctx *c)
{
    int axis = 0;
    int64_t depth = 0;
    TRY(onehot_params(c, &axis, &depth));
    const tensor *ind = c->in[0], *vals = c->in[2];
    size_t esz = ait_dtype_size(vals->dtype);
    const char *off = vals->data, *on = off + esz;
    char *dst = c->out[0]->data;
    int64_t total = tensor_numel(c->out[0]);
    for (int64_t i = 0; i < total; i++) copy_elem(dst + (size_t)i * esz, off, esz);
    int64_t outer = dims_prod(ind->dims, 0, axis), inner = dims_prod(ind->dims, axis, ind->rank);
    bool fl = dtype_is_float(ind->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t at = o * inner + i;
            int64_t v = fl ? (int64_t)elem_get_f64(ind->data, ind->dtype, at)
                           : elem_get_i64(ind->data, ind->dtype, at);
            if (v < 0) v += depth;
            if (v < 0 || v >= depth) continue; /* the spec: all off_value */
            copy_elem(dst + (size_t)((o * depth + v) * inner + i) * esz, on, esz);
        }
    return AIT_OK;
}

/* ---- Compress ------------------------------------------------------------ */

/* Axis (-1: flattened), and the selected count when condition has data. */
static ait_status compress_params(op_ctx *c, int *axis, int64_t *n, int64_t *count)
{
    const tensor *x = c->in[0], *cond = c->in[1];
    size_t esz = 0;
    TRY(elem_size(c, x, "input", &esz));
    if (!is_numeric(cond->dtype) && cond->dtype != AIT_BOOL)
        return err_set(c->err, AIT_E_DTYPE, "condition must be bool");
    if (cond->rank != 1) return err_set(c->err, AIT_E_SHAPE, "condition must be 1-D");
    *axis = -1;
    *n = tensor_numel(x);
    if (node_attr(c->n, "axis")) {
        TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, axis));
        *n = x->dims[*axis];
    }
    if (cond->dims[0] > *n)
        return err_set(c->err, AIT_E_SHAPE,
                       "condition has %lld entries but the selected axis only %lld",
                       (long long)cond->dims[0], (long long)*n);
    if (!cond->data) return AIT_DEFER;
    *count = count_nonzero(cond, cond->dims[0]);
    return AIT_OK;
}

static ait_status compress_infer(op_ctx *c)
{
    int axis = 0;
    int64_t n = 0, cnt = 0;
    TRY(compress_params(c, &axis, &n, &cnt));
    const tensor *x = c->in[0];
    if (axis < 0) {
        set_out(c, 0, x->dtype, 1, &cnt);
    } else {
        int64_t d[AIT_MAX_RANK];
        memcpy(d, x->dims, sizeof d);
        d[axis] = cnt;
        set_out(c, 0, x->dtype, x->rank, d);
    }
    return AIT_OK;
}

static ait_status compress_run(op_ctx *c)
{
    int axis = 0;
    int64_t n = 0, cnt = 0;
    TRY(compress_params(c, &axis, &n, &cnt));
    const tensor *x = c->in[0], *cond = c->in[1];
    size_t esz = ait_dtype_size(x->dtype);
    int64_t outer = axis < 0 ? 1 : dims_prod(x->dims, 0, axis);
    size_t block = (axis < 0 ? 1 : (size_t)dims_prod(x->dims, axis + 1, x->rank)) * esz;
    const char *src = x->data;
    char *dst = c->out[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < cond->dims[0]; j++)
            if (elem_nonzero(cond->data, cond->dtype, j)) {
                memcpy(dst, src + (size_t)(o * n + j) * block, block);
                dst += block;
            }
    return AIT_OK;
}

/* ---- ReverseSequence ----------------------------------------------------- */

static ait_status revseq_params(op_ctx *c, int *tax, int *bax)
{
    const tensor *x = c->in[0], *lens = c->in[1];
    size_t esz = 0;
    TRY(elem_size(c, x, "input", &esz));
    TRY(check_index_dtype(c, lens, "sequence_lens"));
    if (x->rank < 2) return err_set(c->err, AIT_E_SHAPE, "input must have rank >= 2");
    int64_t t = attr_int(c->n, "time_axis", 0), b = attr_int(c->n, "batch_axis", 1);
    if (!((t == 0 && b == 1) || (t == 1 && b == 0)))
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "time_axis (%lld) and batch_axis (%lld) must be 0 and 1 in some order",
                       (long long)t, (long long)b);
    *tax = (int)t;
    *bax = (int)b;
    if (lens->rank != 1 || lens->dims[0] != x->dims[b])
        return err_set(c->err, AIT_E_SHAPE, "sequence_lens must be 1-D with the batch size %lld",
                       (long long)x->dims[b]);
    return AIT_OK;
}

static ait_status revseq_infer(op_ctx *c)
{
    int t = 0, b = 1;
    TRY(revseq_params(c, &t, &b));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status revseq_run(op_ctx *c)
{
    int tax = 0, bax = 1;
    TRY(revseq_params(c, &tax, &bax));
    const tensor *x = c->in[0], *lens = c->in[1];
    size_t esz = ait_dtype_size(x->dtype);
    int64_t inner = dims_prod(x->dims, 2, x->rank);
    size_t block = (size_t)inner * esz;
    int64_t T = x->dims[tax], B = x->dims[bax];
    /* element strides of the time and batch axes (the two leading axes) */
    int64_t ts = tax == 0 ? x->dims[1] * inner : inner, bs = bax == 0 ? x->dims[1] * inner : inner;
    const char *src = x->data;
    char *dst = c->out[0]->data;
    for (int64_t b = 0; b < B; b++) {
        int64_t len = index_at(lens, b);
        if (len < 0 || len > T)
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                           (long long)len, (long long)T);
        for (int64_t t = 0; t < T; t++) {
            int64_t from = t < len ? len - 1 - t : t;
            memcpy(dst + (size_t)(t * ts + b * bs) * esz, src + (size_t)(from * ts + b * bs) * esz,
                   block);
        }
    }
    return AIT_OK;
}

/* ---- Unique -------------------------------------------------------------- */

/* Items are elements (no axis) or slices along the axis, compared by their
 * keys laid out item after item. */
typedef struct uniq {
    int axis; /* -1: flattened */
    int64_t n, m; /* items, keys per item */
    int64_t groups;
    uint64_t *keys; /* n * m */
    int64_t *order, *tmp, *grp, *first, *cnt, *id;
} uniq;

static size_t uniq_bytes(int64_t numel, int64_t n)
{
    return (size_t)numel * 8 + (size_t)n * 6 * 8;
}

static int uniq_cmp(const uniq *u, int64_t a, int64_t b)
{
    const uint64_t *ka = u->keys + a * u->m, *kb = u->keys + b * u->m;
    for (int64_t e = 0; e < u->m; e++)
        if (ka[e] != kb[e]) return ka[e] < kb[e] ? -1 : 1;
    return 0;
}

/* Stable bottom-up merge sort of u->order by item. */
static void uniq_sort(uniq *u)
{
    int64_t n = u->n, *a = u->order, *b = u->tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) b[k++] = uniq_cmp(u, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid) b[k++] = a[i++];
            while (j < hi) b[k++] = a[j++];
        }
        int64_t *t = a;
        a = b;
        b = t;
    }
    if (a != u->order) memcpy(u->order, a, (size_t)n * 8);
}

/* Groups equal items: id[pos] is the output slot of item pos, first[g] and
 * cnt[g] describe output slot g. */
static void uniq_compute(uniq *u, const tensor *x, bool sorted, void *mem)
{
    int64_t numel = tensor_numel(x), n = u->n;
    u->keys = mem;
    int64_t *p = (int64_t *)(u->keys + numel);
    u->order = p;
    u->tmp = p + n;
    u->grp = p + 2 * n;
    u->first = p + 3 * n;
    u->cnt = p + 4 * n;
    u->id = p + 5 * n;
    if (u->axis < 0) {
        fill_keys(x, 0, 1, numel, u->keys);
    } else { /* item-major: keys[s * m + o * inner + i] for element (o, s, i) */
        int64_t outer = dims_prod(x->dims, 0, u->axis), inner = dims_prod(x->dims, u->axis + 1, x->rank);
        for (int64_t s = 0; s < n; s++)
            for (int64_t o = 0; o < outer; o++)
                fill_keys(x, (o * n + s) * inner, 1, inner, u->keys + s * u->m + o * inner);
    }
    for (int64_t i = 0; i < n; i++) u->order[i] = i;
    uniq_sort(u);
    int64_t g = -1;
    for (int64_t r = 0; r < n; r++) {
        int64_t pos = u->order[r];
        if (r == 0 || uniq_cmp(u, u->order[r - 1], pos) != 0) {
            g++;
            u->first[g] = pos; /* stable sort: the earliest of its group */
            u->cnt[g] = 0;
        }
        u->grp[pos] = g;
        u->cnt[g]++;
    }
    u->groups = g + 1;
    if (sorted) {
        for (int64_t i = 0; i < n; i++) u->id[i] = u->grp[i];
        return;
    }
    /* Unsorted: slots in order of first occurrence. tmp maps group -> slot. */
    int64_t next = 0;
    for (int64_t pos = 0; pos < n; pos++)
        if (u->first[u->grp[pos]] == pos) u->tmp[u->grp[pos]] = next++;
    for (int64_t pos = 0; pos < n; pos++) u->id[pos] = u->tmp[u->grp[pos]];
    /* reorder first and cnt by slot, through order as spare space */
    for (int64_t gi = 0; gi < u->groups; gi++) u->order[u->tmp[gi]] = u->first[gi];
    memcpy(u->first, u->order, (size_t)u->groups * 8);
    for (int64_t gi = 0; gi < u->groups; gi++) u->order[u->tmp[gi]] = u->cnt[gi];
    memcpy(u->cnt, u->order, (size_t)u->groups * 8);
}

/* Unique over strings sorts and groups each string's rank in byte order
 * (which is code point order for UTF-8): *view becomes x as those ranks. */
static int str_idx_cmp(const void *a, const void *b, void *arg)
{
    char *const *s = arg;
    const char *x = s[*(const int64_t *)a], *y = s[*(const int64_t *)b];
    return strcmp(x ? x : "", y ? y : "");
}

static ait_status str_ranks(op_ctx *c, const tensor *x, tensor *view, uint64_t **ranks)
{
    int64_t n = tensor_numel(x);
    int64_t *idx = malloc((size_t)n * 8 + 8);
    uint64_t *rk = malloc((size_t)n * 8 + 8);
    if (!idx || !rk) {
        free(idx);
        free(rk);
        return err_set(c->err, AIT_E_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, str_idx_cmp, x->data);
    uint64_t r = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i && str_idx_cmp(&idx[i - 1], &idx[i], x->data)) r++;
        rk[idx[i]] = r;
    }
    free(idx);
    *view = *x;
    view->dtype = AIT_U64;
    view->data = rk;
    view->owned = false;
    *ranks = rk;
    return AIT_OK;
}

static ait_status uniq_setup(op_ctx *c, uniq *u)
{
    const tensor *x = c->in[0];
    if (!is_numeric(x->dtype) && x->dtype != AIT_BOOL && x->dtype != AIT_STRING)
        return err_set(c->err, AIT_E_UNSUPPORTED, "input has unsupported dtype %s",
                       ait_dtype_name(x->dtype));
    u->axis = -1;
    u->n = tensor_numel(x);
    u->m = 1;
    if (node_attr(c->n, "axis")) {
        TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, &u->axis));
        u->n = x->dims[u->axis];
        u->m = u->n ? tensor_numel(x) / u->n : 0;
    }
    return AIT_OK;
}

static void uniq_set_outs(op_ctx *c, const uniq *u)
{
    const tensor *x = c->in[0];
    int64_t d[AIT_MAX_RANK], g = u->groups, n = u->n;
    if (u->axis < 0) {
        set_out(c, 0, x->dtype, 1, &g);
    } else {
        memcpy(d, x->dims, sizeof d);
        d[u->axis] = g;
        set_out(c, 0, x->dtype, x->rank, d);
    }
    set_out(c, 1, AIT_I64, 1, &g);
    set_out(c, 2, AIT_I64, 1, &n);
    set_out(c, 3, AIT_I64, 1, &g);
}

static ait_status unique_infer(op_ctx *c)
{
    uniq u = {0};
    TRY(uniq_setup(c, &u));
    const tensor *x = c->in[0];
    if (!x->data) return AIT_DEFER;
    tensor view;
    uint64_t *ranks = NULL;
    if (x->dtype == AIT_STRING) TRY(str_ranks(c, x, &view, &ranks));
    void *mem = malloc(uniq_bytes(tensor_numel(x), u.n) + 8);
    if (!mem) {
        free(ranks);
        return err_set(c->err, AIT_E_NOMEM, "out of memory");
    }
    uniq_compute(&u, ranks ? &view : x, attr_int(c->n, "sorted", 1) != 0, mem);
    free(mem);
    free(ranks);
    uniq_set_outs(c, &u);
    return AIT_OK;
}

static ait_status unique_run(op_ctx *c)
{
    uniq u = {0};
    TRY(uniq_setup(c, &u));
    const tensor *x = c->in[0];
    void *mem = op_scratch(c, uniq_bytes(tensor_numel(x), u.n) + 8);
    if (!mem) return AIT_E_NOMEM;
    tensor view;
    uint64_t *ranks = NULL;
    if (x->dtype == AIT_STRING) TRY(str_ranks(c, x, &view, &ranks));
    uniq_compute(&u, ranks ? &view : x, attr_int(c->n, "sorted", 1) != 0, mem);
    free(ranks);
    size_t esz = ait_dtype_size(x->dtype);
    int64_t g = u.groups;
    if (has_out(c, 0)) {
        char *dst = c->out[0]->data;
        const char *src = x->data;
        if (u.axis < 0) {
            for (int64_t s = 0; s < g; s++)
                copy_elem(dst + (size_t)s * esz, src + (size_t)u.first[s] * esz, esz);
        } else {
            int64_t outer = dims_prod(x->dims, 0, u.axis);
            size_t block = (size_t)dims_prod(x->dims, u.axis + 1, x->rank) * esz;
            for (int64_t o = 0; o < outer; o++)
                for (int64_t s = 0; s < g; s++)
                    memcpy(dst + (size_t)(o * g + s) * block,
                           src + (size_t)(o * u.n + u.first[s]) * block, block);
        }
    }
    if (has_out(c, 1)) memcpy(c->out[1]->data, u.first, (size_t)g * 8);
    if (has_out(c, 2)) memcpy(c->out[2]->data, u.id, (size_t)u.n * 8);
    if (has_out(c, 3)) memcpy(c->out[3]->data, u.cnt, (size_t)g * 8);
    return AIT_OK;
}

OP_TABLE(index,
         {"Gather", 2, 2, 1, 1, OP_STR_MOVES, gather_infer, gather_run},
         {"GatherElements", 2, 2, 1, 1, OP_STR_MOVES, gather_elements_infer, gather_elements_run},
         {"GatherND", 2, 2, 1, 1, OP_STR_MOVES, gather_nd_infer, gather_nd_run},
         {"ScatterND", 3, 3, 1, 1, OP_STR_MOVES, scatter_nd_infer, scatter_nd_run},
         {"ScatterElements", 3, 3, 1, 1, OP_STR_MOVES, scatter_elements_infer, scatter_elements_run},
         {"Scatter", 3, 3, 1, 1, OP_STR_MOVES, scatter_elements_infer, scatter_elements_run},
         {"TopK", 1, 2, 2, 2, 0, topk_infer, topk_run},
         {"CumSum", 2, 2, 1, 1, 0, cumsum_infer, cumsum_run},
         {"CumProd", 2, 2, 1, 1, 0, cumsum_infer, cumprod_run},
         {"TensorScatter", 2, 3, 1, 1, 0, tscat_infer, tscat_run},
         {"NonZero", 1, 1, 1, 1, OP_STR_OWNS, nonzero_infer, nonzero_run},
         {"OneHot", 3, 3, 1, 1, 0, onehot_infer, onehot_run},
         {"Compress", 2, 2, 1, 1, OP_STR_MOVES, compress_infer, compress_run},
         {"ReverseSequence", 2, 2, 1, 1, OP_STR_MOVES, revseq_infer, revseq_run},
         {"Unique", 1, 1, 1, 4, OP_STR_MOVES, unique_infer, unique_run});
