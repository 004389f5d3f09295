/* Layout ops: they move bytes without looking at them, so kernels work on
 * the element size (1, 2, 4 or 8 bytes) rather than on the dtype. Most of
 * them (Transpose, Slice, Expand, Tile, DepthToSpace, SpaceToDepth) are a
 * strided "view" of the input copied into a dense output by one engine,
 * copy_view(), which merges dimensions and copies contiguous runs with
 * memcpy. */
#include <math.h>
#include <string.h>

#include "ops/op.h"

/* Views may split each axis in two (Tile, DepthToSpace). */
#define MAXR (2 * AIT_MAX_RANK)

/* ---- shared helpers ----------------------------------------------------- */

/* Element size of t, which must be one this family can move. */
static ait_status esize(op_ctx *c, const tensor *t, size_t *es)
{
    size_t s = ait_dtype_size(t->dtype);
    if (s != 1 && s != 2 && s != 4 && s != 8)
        return err_set(c->err, AIT_E_UNSUPPORTED, "dtype %s is not supported",
                       ait_dtype_name(t->dtype));
    *es = s;
    return AIT_OK;
}

/* Checks the output size of a shape computed from input values. */
static ait_status check_out(op_ctx *c, const int64_t *dims, int rank, ait_dtype dt)
{
    int64_t n;
    return shape_numel(dims, rank, dt, &n, "output", c->err);
}

/* Expands a typed statement for the unsigned type of element size es. */
#define BY_SIZE(es, M)                                                                       \
    switch (es) {                                                                            \
    case 1: M(uint8_t); break;                                                               \
    case 2: M(uint16_t); break;                                                              \
    case 4: M(uint32_t); break;                                                              \
    default: M(uint64_t); break;                                                             \
    }

/* n copies of the element at val. */
static void fill_elems(void *dst, int64_t n, const void *val, size_t es)
{
#define FILL(T)                                                                              \
    {                                                                                        \
        T v_, *d_ = dst;                                                                     \
        memcpy(&v_, val, sizeof v_);                                                         \
        for (int64_t i = 0; i < n; i++) d_[i] = v_;                                          \
    }
    BY_SIZE(es, FILL)
#undef FILL
}

/* An integer list given as input `idx` when present, else as attribute
 * `name` (the form ops used before the attribute moved to an input).
 * *present is false when neither is given. */
static ait_status ints_arg(op_ctx *c, const char *name, int idx, int64_t *vals, int max, int *n,
                           bool *present)
{
    *n = 0;
    *present = false;
    if (idx >= 0 && has_in(c, idx)) {
        TRY(in_ints(c, idx, vals, max, n));
        *present = true;
        return AIT_OK;
    }
    int cnt;
    const int64_t *a = name ? attr_ints(c->n, name, &cnt) : NULL;
    if (!a) return AIT_OK;
    if (cnt > max)
        return err_set(c->err, AIT_E_INVALID_ARG, "attribute %s has %d values, at most %d allowed",
                       name, cnt, max);
    memcpy(vals, a, (size_t)cnt * sizeof *vals);
    *n = cnt;
    *present = true;
    return AIT_OK;
}

/* Normalises n axes against rank and rejects repeats. */
static ait_status norm_axes(op_ctx *c, const int64_t *ax, int n, int rank, int *out)
{
    bool seen[MAXR] = {false};
    for (int i = 0; i < n; i++) {
        TRY(norm_axis(c, ax[i], rank, &out[i]));
        if (seen[out[i]])
            return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is repeated", (long long)ax[i]);
        seen[out[i]] = true;
    }
    return AIT_OK;
}

/* A scalar (or one-element) input as int64 or double; DEFER without data. */
static ait_status scalar_in(op_ctx *c, int i, const char *what, int64_t *iv, double *fv)
{
    const tensor *t = c->in[i];
    if (!t->data) return AIT_DEFER;
    if (tensor_numel(t) != 1)
        return err_set(c->err, AIT_E_SHAPE, "%s must be a scalar, got %lld values", what,
                       (long long)tensor_numel(t));
    if (iv) *iv = elem_get_i64(t->data, t->dtype, 0);
    if (fv) *fv = elem_get_f64(t->data, t->dtype, 0);
    return AIT_OK;
}

/* Copies the whole input into the output (ops that only change the shape). */
static ait_status run_copy(op_ctx *c)
{
    size_t nb = tensor_nbytes(c->in[0]);
    if (nb && c->out[0]->data != c->in[0]->data) memcpy(c->out[0]->data, c->in[0]->data, nb);
    return AIT_OK;
}

/* ---- the strided copy engine --------------------------------------------- */

/* Output element (i_0 .. i_{rank-1}) of a dense row-major output comes from
 * source element sum(i_d * st[d]) (element units; strides may be 0 or
 * negative). */
typedef struct view {
    int rank;
    int64_t dims[MAXR];
    int64_t st[MAXR];
} view;

/* Drops size-1 axes and merges neighbours the source walks contiguously,
 * so a permutation that keeps inner axes together becomes one memcpy per
 * run. Returns false when the view is empty. */
static bool view_simplify(view *v)
{
    int r = 0;
    for (int d = 0; d < v->rank; d++) {
        if (v->dims[d] == 0) return false;
        if (v->dims[d] == 1) continue;
        if (r > 0 && v->st[r - 1] == v->st[d] * v->dims[d]) {
            v->dims[r - 1] *= v->dims[d];
            v->st[r - 1] = v->st[d];
            continue;
        }
        v->dims[r] = v->dims[d];
        v->st[r] = v->st[d];
        r++;
    }
    v->rank = r;
    return true;
}

/* d[p * dsp + q] = s[p + q * ist] over a P x Q plane: a transpose, done in
 * square tiles, writing contiguously (measured faster than contiguous reads;
 * tile sizes measured best on 4096x4096). */
#define DEF_TRANSPOSE(T)                                                                     \
    static void transpose_##T(T *d, const T *s, int64_t P, int64_t Q, int64_t dsp,          \
                              int64_t ist)                                                   \
    {                                                                                        \
        const int64_t tb = sizeof(T) <= 2 ? 32 : 16;                                         \
        for (int64_t p0 = 0; p0 < P; p0 += tb)                                               \
            for (int64_t q0 = 0; q0 < Q; q0 += tb) {                                         \
                int64_t pe = p0 + tb < P ? p0 + tb : P, qe = q0 + tb < Q ? q0 + tb : Q;      \
                for (int64_t p = p0; p < pe; p++)                                            \
                    for (int64_t q = q0; q < qe; q++) d[p * dsp + q] = s[p + q * ist];       \
            }                                                                                \
    }
DEF_TRANSPOSE(uint8_t)
DEF_TRANSPOSE(uint16_t)
DEF_TRANSPOSE(uint32_t)
DEF_TRANSPOSE(uint64_t)

/* Copies view v of src (src points at the view's origin) into dense dst. */
static void copy_view(void *dst, const void *src, view v, size_t es)
{
    if (!view_simplify(&v)) return;
    if (v.rank == 0) {
        memcpy(dst, src, es);
        return;
    }
    int r = v.rank, last = r - 1;
    int64_t inner = v.dims[last], ist = v.st[last];
    int64_t dstr[MAXR];
    row_strides(v.dims, r, dstr);

    /* When the source is contiguous along some outer axis p but not along
     * the last one, copy (p, last) planes in cache-sized tiles: a transpose. */
    int p = -1;
    if (ist != 1 && ist != 0)
        for (int d = 0; d < last; d++)
            if (v.st[d] == 1 && v.dims[d] >= 4) p = d;

    int no = 0;
    int64_t od[MAXR], os[MAXR], ods[MAXR];
    for (int d = 0; d < last; d++) {
        if (d == p) continue;
        od[no] = v.dims[d];
        os[no] = v.st[d];
        ods[no] = dstr[d];
        no++;
    }
    int64_t idx[MAXR] = {0}, so = 0, doff = 0;
    const char *s0 = src;
    char *d0 = dst;
    for (;;) {
        const char *s = s0 + so * (int64_t)es;
        char *d = d0 + doff * (int64_t)es;
        if (ist == 1) {
            memcpy(d, s, (size_t)inner * es);
        } else if (ist == 0) {
            fill_elems(d, inner, s, es);
        } else if (p < 0) {
#define GATHER(T)                                                                            \
    {                                                                                        \
        const T *s_ = (const T *)s;                                                          \
        T *d_ = (T *)d;                                                                      \
        for (int64_t i = 0; i < inner; i++) d_[i] = s_[i * ist];                             \
    }
            BY_SIZE(es, GATHER)
#undef GATHER
        } else {
#define TRANSPOSE(T) transpose_##T((T *)d, (const T *)s, v.dims[p], inner, dstr[p], ist)
            BY_SIZE(es, TRANSPOSE)
#undef TRANSPOSE
        }
        int k = no - 1;
        for (; k >= 0; k--) {
            idx[k]++;
            so += os[k];
            doff += ods[k];
            if (idx[k] < od[k]) break;
            so -= os[k] * od[k];
            doff -= ods[k] * od[k];
            idx[k] = 0;
        }
        if (k < 0) break;
    }
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------------- */

static ait_status reshape_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    int64_t shp[AIT_MAX_RANK];
    int n;
    TRY(in_ints(c, 1, shp, AIT_MAX_RANK, &n));
    bool allowzero = attr_int(c->n, "allowzero", 0) != 0;
    int neg = -1;
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        if (shp[i] == -1) {
            if (neg >= 0)
                return err_set(c->err, AIT_E_INVALID_ARG, "shape has more than one -1");
            neg = i;
            continue;
        }
        if (shp[i] == 0 && !allowzero) {
            if (i >= x->rank)
                return err_set(c->err, AIT_E_SHAPE,
                               "shape[%d] is 0 (copy) but the input has rank %d", i, x->rank);
            shp[i] = x->dims[i];
        }
        if (shp[i] < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "shape[%d] is negative (%lld)", i,
                           (long long)shp[i]);
        if (shp[i] && known > INT64_MAX / shp[i])
            return err_set(c->err, AIT_E_OVERFLOW, "shape's element count overflows");
        known *= shp[i];
    }
    int64_t total = tensor_numel(x);
    char sa[128], sb[128];
    if (neg >= 0) {
        if (known == 0)
            return err_set(c->err, AIT_E_SHAPE, "cannot infer the -1 of shape %s: other dims are 0",
                           shape_str(shp, n, sb, sizeof sb));
        if (total % known)
            return err_set(c->err, AIT_E_SHAPE, "cannot reshape %s to %s",
                           shape_str(x->dims, x->rank, sa, sizeof sa),
                           shape_str(shp, n, sb, sizeof sb));
        shp[neg] = total / known;
    } else if (known != total) {
        return err_set(c->err, AIT_E_SHAPE, "cannot reshape %s (%lld elements) to %s",
                       shape_str(x->dims, x->rank, sa, sizeof sa), (long long)total,
                       shape_str(shp, n, sb, sizeof sb));
    }
    set_out(c, 0, x->dtype, n, shp);
    return AIT_OK;
}

static ait_status flatten_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    int64_t axis = attr_int(c->n, "axis", 1);
    if (axis < -x->rank || axis > x->rank)
        return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is out of range for rank %d",
                       (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t d[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) d[i >= axis] *= x->dims[i];
    set_out(c, 0, x->dtype, 2, d);
    return AIT_OK;
}

static ait_status squeeze_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    int64_t ax[MAXR];
    int n, nax[MAXR];
    bool have;
    TRY(ints_arg(c, "axes", 1, ax, MAXR, &n, &have));
    bool drop[AIT_MAX_RANK] = {false};
    if (have && n > 0) {
        TRY(norm_axes(c, ax, n, x->rank, nax));
        for (int i = 0; i < n; i++) {
            if (x->dims[nax[i]] != 1)
                return err_set(c->err, AIT_E_SHAPE, "cannot squeeze axis %d of size %lld", nax[i],
                               (long long)x->dims[nax[i]]);
            drop[nax[i]] = true;
        }
    } else {
        for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
    }
    int64_t d[AIT_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) d[r++] = x->dims[i];
    set_out(c, 0, x->dtype, r, d);
    return AIT_OK;
}

static ait_status unsqueeze_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    int64_t ax[MAXR];
    int n, nax[MAXR];
    bool have;
    TRY(ints_arg(c, "axes", 1, ax, MAXR, &n, &have));
    if (!have) return err_set(c->err, AIT_E_INVALID_ARG, "axes is missing");
    int r = x->rank + n;
    if (r > AIT_MAX_RANK)
        return err_set(c->err, AIT_E_UNSUPPORTED, "output rank %d exceeds the maximum of %d", r,
                       AIT_MAX_RANK);
    TRY(norm_axes(c, ax, n, r, nax));
    bool ins[AIT_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) ins[nax[i]] = true;
    int64_t d[AIT_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++) d[i] = ins[i] ? 1 : x->dims[j++];
    set_out(c, 0, x->dtype, r, d);
    return AIT_OK;
}

/* ---- Transpose ------------------------------------------------------------- */

static ait_status transpose_perm(op_ctx *c, int *perm)
{
    int r = c->in[0]->rank, n;
    const int64_t *p = attr_ints(c->n, "perm", &n);
    if (!p) {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
        return AIT_OK;
    }
    if (n != r)
        return err_set(c->err, AIT_E_INVALID_ARG, "perm has %d values for rank %d", n, r);
    bool seen[AIT_MAX_RANK] = {false};
    for (int i = 0; i < r; i++) {
        if (p[i] < 0 || p[i] >= r || seen[p[i]])
            return err_set(c->err, AIT_E_INVALID_ARG, "perm is not a permutation of 0..%d", r - 1);
        seen[p[i]] = true;
        perm[i] = (int)p[i];
    }
    return AIT_OK;
}

static ait_status transpose_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    int perm[AIT_MAX_RANK];
    size_t es;
    TRY(esize(c, x, &es));
    TRY(transpose_perm(c, perm));
    int64_t d[AIT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[perm[i]];
    set_out(c, 0, x->dtype, x->rank, d);
    return AIT_OK;
}

static ait_status transpose_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int perm[AIT_MAX_RANK];
    TRY(transpose_perm(c, perm));
    int64_t st[AIT_MAX_RANK];
    row_strides(x->dims, x->rank, st);
    view v = {.rank = x->rank};
    for (int i = 0; i < x->rank; i++) {
        v.dims[i] = x->dims[perm[i]];
        v.st[i] = st[perm[i]];
    }
    copy_view(c->out[0]->data, x->data, v, ait_dtype_size(x->dtype));
    return AIT_OK;
}

/* ---- Concat, Split ----------------------------------------------------------- */

static ait_status concat_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    if (!x) return err_set(c->err, AIT_E_INVALID_ARG, "input 0 is missing");
    TRY(esize(c, x, &es));
    const attr *a = node_attr(c->n, "axis");
    if (!a) return err_set(c->err, AIT_E_INVALID_ARG, "attribute axis is missing");
    if (x->rank == 0) return err_set(c->err, AIT_E_SHAPE, "cannot concatenate scalars");
    int axis;
    TRY(norm_axis(c, a->i, x->rank, &axis));
    int64_t d[AIT_MAX_RANK];
    memcpy(d, x->dims, sizeof d);
    d[axis] = 0;
    for (int i = 0; i < c->n_in; i++) {
        const tensor *t = c->in[i];
        if (!t) return err_set(c->err, AIT_E_INVALID_ARG, "input %d is missing", i);
        if (t->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "input %d is %s, input 0 is %s", i,
                           ait_dtype_name(t->dtype), ait_dtype_name(x->dtype));
        bool ok = t->rank == x->rank;
        for (int k = 0; ok && k < x->rank; k++) ok = k == axis || t->dims[k] == x->dims[k];
        if (!ok) {
            char sa[128], sb[128];
            return err_set(c->err, AIT_E_SHAPE, "input %d has shape %s, incompatible with %s", i,
                           shape_str(t->dims, t->rank, sa, sizeof sa),
                           shape_str(x->dims, x->rank, sb, sizeof sb));
        }
        d[axis] += t->dims[axis];
    }
    TRY(check_out(c, d, x->rank, x->dtype));
    set_out(c, 0, x->dtype, x->rank, d);
    return AIT_OK;
}

/* Bytes of one slab along `axis` per unit of its length, and the number of
 * slabs before it. */
static void outer_inner(const tensor *t, int axis, int64_t *outer, int64_t *inner)
{
    *outer = 1;
    *inner = (int64_t)ait_dtype_size(t->dtype);
    for (int i = 0; i < axis; i++) *outer *= t->dims[i];
    for (int i = axis + 1; i < t->rank; i++) *inner *= t->dims[i];
}

static ait_status concat_run(op_ctx *c)
{
    tensor *y = c->out[0];
    int axis;
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), y->rank, &axis));
    int64_t outer, inner;
    outer_inner(y, axis, &outer, &inner);
    int64_t row = y->dims[axis] * inner, off = 0;
    for (int i = 0; i < c->n_in; i++) {
        const tensor *t = c->in[i];
        int64_t len = t->dims[axis] * inner;
        if (len == 0) continue;
        const char *s = t->data;
        char *d = (char *)y->data + off;
        for (int64_t o = 0; o < outer; o++) memcpy(d + o * row, s + o * len, (size_t)len);
        off += len;
    }
    return AIT_OK;
}

#define MAXSPLIT 1024

/* The split sizes along the axis, one per output. */
static ait_status split_sizes(op_ctx *c, int *axis_out, int64_t *sizes)
{
    const tensor *x = c->in[0];
    int axis;
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, &axis));
    int64_t dim = x->dims[axis], vals[MAXSPLIT];
    int n, no = c->n_out;
    bool have;
    if (no > MAXSPLIT)
        return err_set(c->err, AIT_E_UNSUPPORTED, "at most %d outputs are supported", MAXSPLIT);
    TRY(ints_arg(c, "split", 1, vals, MAXSPLIT, &n, &have));
    const attr *num = node_attr(c->n, "num_outputs");
    if (have) {
        if (n != no)
            return err_set(c->err, AIT_E_INVALID_ARG, "split has %d values for %d outputs", n, no);
        int64_t sum = 0;
        for (int i = 0; i < n; i++) {
            if (vals[i] < 0 || vals[i] > dim)
                return err_set(c->err, AIT_E_INVALID_ARG, "split[%d] = %lld is out of range", i,
                               (long long)vals[i]);
            sizes[i] = vals[i];
            sum += vals[i];
        }
        if (sum != dim)
            return err_set(c->err, AIT_E_SHAPE, "split sums to %lld, axis %d has %lld",
                           (long long)sum, axis, (long long)dim);
    } else if (num) {
        /* opset 18: chunks of ceil(dim / n), the last one smaller */
        if (num->i != no)
            return err_set(c->err, AIT_E_INVALID_ARG, "num_outputs is %lld but the node has %d",
                           (long long)num->i, no);
        int64_t chunk = (dim + no - 1) / no;
        for (int i = 0; i < no; i++) {
            int64_t left = dim - chunk * i;
            sizes[i] = left < 0 ? 0 : left < chunk ? left : chunk;
        }
    } else {
        if (dim % no)
            return err_set(c->err, AIT_E_SHAPE, "axis %d of size %lld does not split into %d equal parts",
                           axis, (long long)dim, no);
        for (int i = 0; i < no; i++) sizes[i] = dim / no;
    }
    *axis_out = axis;
    return AIT_OK;
}

static ait_status split_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    if (x->rank == 0) return err_set(c->err, AIT_E_SHAPE, "cannot split a scalar");
    int axis;
    int64_t sizes[MAXSPLIT], d[AIT_MAX_RANK];
    TRY(split_sizes(c, &axis, sizes));
    memcpy(d, x->dims, sizeof d);
    for (int i = 0; i < c->n_out; i++) {
        d[axis] = sizes[i];
        set_out(c, i, x->dtype, x->rank, d);
    }
    return AIT_OK;
}

static ait_status split_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int axis;
    int64_t sizes[MAXSPLIT], outer, inner;
    TRY(split_sizes(c, &axis, sizes));
    outer_inner(x, axis, &outer, &inner);
    int64_t row = x->dims[axis] * inner, off = 0;
    for (int i = 0; i < c->n_out; i++) {
        int64_t len = sizes[i] * inner;
        if (has_out(c, i) && len > 0) {
            const char *s = (const char *)x->data + off;
            char *d = c->out[i]->data;
            for (int64_t o = 0; o < outer; o++) memcpy(d + o * len, s + o * row, (size_t)len);
        }
        off += len;
    }
    return AIT_OK;
}

/* ---- Slice ------------------------------------------------------------------ */

/* Per-axis start and step of the slice, and the output dims. */
static ait_status slice_bounds(op_ctx *c, int64_t *start, int64_t *step, int64_t *odims)
{
    const tensor *x = c->in[0];
    int r = x->rank;
    int64_t st[MAXR], en[MAXR], ax[MAXR], sp[MAXR];
    int ns, ne, na, nsp;
    bool hs, he, ha, hsp;
    bool old = c->n->version < 10 && c->n_in == 1; /* attributes before opset 10 */
    TRY(ints_arg(c, "starts", old ? -1 : 1, st, MAXR, &ns, &hs));
    TRY(ints_arg(c, "ends", old ? -1 : 2, en, MAXR, &ne, &he));
    TRY(ints_arg(c, "axes", old ? -1 : 3, ax, MAXR, &na, &ha));
    TRY(ints_arg(c, NULL, old ? -1 : 4, sp, MAXR, &nsp, &hsp));
    if (!hs || !he) return err_set(c->err, AIT_E_INVALID_ARG, "starts and ends are required");
    if (ne != ns || (ha && na != ns) || (hsp && nsp != ns))
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "starts, ends, axes and steps must have the same length");
    if (ns > r)
        return err_set(c->err, AIT_E_INVALID_ARG, "%d starts for rank %d", ns, r);
    int axes[MAXR];
    if (ha) {
        TRY(norm_axes(c, ax, ns, r, axes));
    } else {
        for (int i = 0; i < ns; i++) axes[i] = i;
    }
    for (int d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
        odims[d] = x->dims[d];
    }
    for (int i = 0; i < ns; i++) {
        int a = axes[i];
        int64_t dim = x->dims[a], s = st[i], e = en[i], k = hsp ? sp[i] : 1;
        if (k == 0) return err_set(c->err, AIT_E_INVALID_ARG, "step for axis %d is 0", a);
        /* a step past the whole axis takes one element: clamp it so that
         * strides cannot overflow */
        if (k > dim) k = dim > 0 ? dim : 1;
        if (k < -dim) k = dim > 0 ? -dim : -1;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        int64_t len;
        if (k > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            len = e > s ? (e - s + k - 1) / k : 0;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            len = s > e ? (s - e - k - 1) / -k : 0;
        }
        start[a] = len ? s : 0;
        step[a] = k;
        odims[a] = len;
    }
    return AIT_OK;
}

static ait_status slice_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    int64_t start[AIT_MAX_RANK], step[AIT_MAX_RANK], d[AIT_MAX_RANK];
    TRY(slice_bounds(c, start, step, d));
    set_out(c, 0, x->dtype, x->rank, d);
    return AIT_OK;
}

static ait_status slice_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t start[AIT_MAX_RANK], step[AIT_MAX_RANK], st[AIT_MAX_RANK];
    view v = {.rank = x->rank};
    TRY(slice_bounds(c, start, step, v.dims));
    row_strides(x->dims, x->rank, st);
    int64_t base = 0;
    for (int d = 0; d < x->rank; d++) {
        base += start[d] * st[d];
        v.st[d] = st[d] * step[d];
    }
    size_t es = ait_dtype_size(x->dtype);
    copy_view(c->out[0]->data, (const char *)x->data + base * (int64_t)es, v, es);
    return AIT_OK;
}

/* ---- Expand, Tile ----------------------------------------------------------- */

static ait_status expand_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    tensor s = {.dtype = AIT_I64};
    int n;
    TRY(in_ints(c, 1, s.dims, AIT_MAX_RANK, &n));
    s.rank = n;
    for (int i = 0; i < n; i++)
        if (s.dims[i] < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "shape[%d] is negative (%lld)", i,
                           (long long)s.dims[i]);
    int r;
    int64_t d[AIT_MAX_RANK];
    TRY(broadcast_shape(c, x, &s, &r, d));
    TRY(check_out(c, d, r, x->dtype));
    set_out(c, 0, x->dtype, r, d);
    return AIT_OK;
}

static ait_status expand_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    view v = {.rank = y->rank};
    memcpy(v.dims, y->dims, sizeof y->dims);
    bcast_strides(x, y->rank, y->dims, v.st);
    copy_view(y->data, x->data, v, ait_dtype_size(x->dtype));
    return AIT_OK;
}

static ait_status tile_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    int64_t rep[AIT_MAX_RANK], d[AIT_MAX_RANK];
    int n;
    TRY(in_ints(c, 1, rep, AIT_MAX_RANK, &n));
    if (n != x->rank)
        return err_set(c->err, AIT_E_INVALID_ARG, "repeats has %d values for rank %d", n, x->rank);
    for (int i = 0; i < n; i++) {
        if (rep[i] < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "repeats[%d] is negative", i);
        if (rep[i] && x->dims[i] > INT64_MAX / rep[i])
            return err_set(c->err, AIT_E_OVERFLOW, "output dimension %d overflows", i);
        d[i] = x->dims[i] * rep[i];
    }
    TRY(check_out(c, d, n, x->dtype));
    set_out(c, 0, x->dtype, n, d);
    return AIT_OK;
}

static ait_status tile_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t st[AIT_MAX_RANK];
    row_strides(x->dims, x->rank, st);
    /* output axis i is (repeat, original index): stride 0 then the input's */
    view v = {.rank = 2 * x->rank};
    for (int i = 0; i < x->rank; i++) {
        v.dims[2 * i] = x->dims[i] ? y->dims[i] / x->dims[i] : 0;
        v.st[2 * i] = 0;
        v.dims[2 * i + 1] = x->dims[i];
        v.st[2 * i + 1] = st[i];
    }
    copy_view(y->data, x->data, v, ait_dtype_size(x->dtype));
    return AIT_OK;
}

/* ---- Pad ------------------------------------------------------------------------ */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static ait_status pad_mode(op_ctx *c, int *mode)
{
    const char *m = attr_str(c->n, "mode", "constant");
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    for (int i = 0; i < 4; i++)
        if (strcmp(m, names[i]) == 0) {
            *mode = i;
            return AIT_OK;
        }
    return err_set(c->err, AIT_E_UNSUPPORTED, "mode '%s' is not supported", m);
}

/* Full-rank begin and end pads (negative crops). */
static ait_status pad_amounts(op_ctx *c, int64_t *pre, int64_t *post)
{
    const tensor *x = c->in[0];
    int r = x->rank;
    int64_t p[2 * MAXR], ax[MAXR];
    int np, na;
    bool hp, ha;
    TRY(ints_arg(c, "pads", c->n->version < 11 ? -1 : 1, p, 2 * MAXR, &np, &hp));
    if (!hp) return err_set(c->err, AIT_E_INVALID_ARG, "pads is missing");
    TRY(ints_arg(c, NULL, c->n->version < 11 ? -1 : 3, ax, MAXR, &na, &ha));
    int axes[MAXR];
    if (ha) {
        TRY(norm_axes(c, ax, na, r, axes));
    } else {
        na = r;
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    if (np != 2 * na)
        return err_set(c->err, AIT_E_INVALID_ARG, "pads has %d values, %d axes need %d", np, na,
                       2 * na);
    for (int i = 0; i < r; i++) pre[i] = post[i] = 0;
    for (int i = 0; i < na; i++) {
        pre[axes[i]] = p[i];
        post[axes[i]] = p[i + na];
    }
    return AIT_OK;
}

static ait_status pad_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    int mode;
    TRY(esize(c, x, &es));
    TRY(pad_mode(c, &mode));
    int64_t pre[AIT_MAX_RANK], post[AIT_MAX_RANK], d[AIT_MAX_RANK];
    TRY(pad_amounts(c, pre, post));
    for (int i = 0; i < x->rank; i++) {
        int64_t lo = pre[i] < 0 ? -pre[i] : 0, hi = post[i] < 0 ? -post[i] : 0;
        if (lo > x->dims[i] || hi > x->dims[i] - lo)
            return err_set(c->err, AIT_E_INVALID_ARG, "pads crop more than axis %d has", i);
        int64_t kept = x->dims[i] - lo - hi;
        int64_t add = (pre[i] > 0 ? pre[i] : 0) + (post[i] > 0 ? post[i] : 0);
        if (add > INT64_MAX / 2)
            return err_set(c->err, AIT_E_OVERFLOW, "pads of axis %d are too large", i);
        d[i] = kept + add;
        if (kept == 0 && add > 0 && mode != PAD_CONSTANT)
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "cannot pad empty axis %d in a non-constant mode", i);
    }
    TRY(check_out(c, d, x->rank, x->dtype));
    set_out(c, 0, x->dtype, x->rank, d);
    return AIT_OK;
}

/* Source index along an axis of kept length n (after cropping), for output
 * position j relative to the first kept element; -1 means the constant. */
static int64_t pad_src(int mode, int64_t j, int64_t n)
{
    if (j >= 0 && j < n) return j;
    switch (mode) {
    case PAD_EDGE: return j < 0 ? 0 : n - 1;
    case PAD_WRAP: return ((j % n) + n) % n;
    case PAD_REFLECT: {
        if (n == 1) return 0;
        int64_t per = 2 * (n - 1), m = ((j % per) + per) % per;
        return m < n ? m : per - m;
    }
    default: return -1;
    }
}

static ait_status pad_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int r = x->rank, mode;
    size_t es = ait_dtype_size(x->dtype);
    TRY(pad_mode(c, &mode));
    int64_t pre[AIT_MAX_RANK], post[AIT_MAX_RANK];
    TRY(pad_amounts(c, pre, post));

    /* the constant, in the output's dtype */
    unsigned char val[8] = {0};
    if (has_in(c, 2) && tensor_numel(c->in[2]) > 0) {
        if (c->in[2]->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "constant_value is %s, data is %s",
                           ait_dtype_name(c->in[2]->dtype), ait_dtype_name(x->dtype));
        memcpy(val, c->in[2]->data, es);
    } else if (c->n->version < 11) {
        elem_set_f64(val, x->dtype, 0, attr_float(c->n, "value", 0.0f));
    }
    if (tensor_numel(y) == 0) return AIT_OK;
    if (r == 0) {
        memcpy(y->data, x->data, es);
        return AIT_OK;
    }

    /* per-axis map from output index to input index (-1: constant) */
    int64_t tot = 0, st[AIT_MAX_RANK];
    for (int i = 0; i < r; i++) tot += y->dims[i];
    int64_t *map = op_scratch(c, (size_t)tot * sizeof *map), *m[AIT_MAX_RANK];
    if (!map) return c->err->code;
    row_strides(x->dims, r, st);
    int64_t lo[AIT_MAX_RANK], kept[AIT_MAX_RANK], lead[AIT_MAX_RANK];
    int64_t k = 0;
    for (int i = 0; i < r; i++) {
        lo[i] = pre[i] < 0 ? -pre[i] : 0;
        lead[i] = pre[i] > 0 ? pre[i] : 0;
        kept[i] = y->dims[i] - lead[i] - (post[i] > 0 ? post[i] : 0);
        m[i] = map + k;
        for (int64_t o = 0; o < y->dims[i]; o++) {
            int64_t s = pad_src(mode, o - lead[i], kept[i]);
            m[i][o] = s < 0 ? -1 : lo[i] + s;
        }
        k += y->dims[i];
    }

    /* one output row (the last axis) at a time */
    int L = r - 1;
    int64_t W = y->dims[L], rows = tensor_numel(y) / W, idx[AIT_MAX_RANK] = {0};
    const char *xs = x->data;
    char *d = y->data;
    for (int64_t row = 0; row < rows; row++, d += W * (int64_t)es) {
        int64_t src = 0;
        bool constant = false;
        for (int i = 0; i < L; i++) {
            int64_t s = m[i][idx[i]];
            if (s < 0) constant = true;
            src += s * st[i];
        }
        if (constant) {
            fill_elems(d, W, val, es);
        } else {
            const char *s = xs + src * (int64_t)es;
            int64_t a = lead[L], b = lead[L] + kept[L];
            for (int64_t o = 0; o < W; o++) {
                if (o == a && b > a) {
                    memcpy(d + a * (int64_t)es, s + m[L][a] * (int64_t)es, (size_t)(b - a) * es);
                    o = b - 1;
                    continue;
                }
                if (m[L][o] < 0) memcpy(d + o * (int64_t)es, val, es);
                else memcpy(d + o * (int64_t)es, s + m[L][o] * (int64_t)es, es);
            }
        }
        for (int i = L - 1; i >= 0; i--) {
            if (++idx[i] < y->dims[i]) break;
            idx[i] = 0;
        }
    }
    return AIT_OK;
}

/* ---- Shape, Size, ConstantOfShape, Range --------------------------------------- */

static void shape_range(op_ctx *c, int64_t *start, int64_t *end)
{
    int64_t r = c->in[0]->rank, s = attr_int(c->n, "start", 0), e = attr_int(c->n, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    *start = s < 0 ? 0 : s > r ? r : s;
    *end = e < *start ? *start : e > r ? r : e;
}

static ait_status shape_infer(op_ctx *c)
{
    int64_t s, e;
    shape_range(c, &s, &e);
    int64_t n = e - s;
    set_out(c, 0, AIT_I64, 1, &n);
    return AIT_OK;
}

static ait_status shape_run(op_ctx *c)
{
    int64_t s, e, *y = c->out[0]->data;
    shape_range(c, &s, &e);
    for (int64_t i = s; i < e; i++) y[i - s] = c->in[0]->dims[i];
    return AIT_OK;
}

static ait_status size_infer(op_ctx *c)
{
    set_out(c, 0, AIT_I64, 0, NULL);
    return AIT_OK;
}

static ait_status size_run(op_ctx *c)
{
    *(int64_t *)c->out[0]->data = tensor_numel(c->in[0]);
    return AIT_OK;
}

/* ConstantOfShape's fill value: the `value` tensor attribute or float 0. */
static ait_status cos_value(op_ctx *c, ait_dtype *dt, const void **val)
{
    static const float zero = 0;
    const attr *a = node_attr(c->n, "value");
    *dt = AIT_F32;
    *val = &zero;
    if (!a) return AIT_OK;
    if (a->type != ATTR_TENSOR || !a->t || !a->t->data || tensor_numel(a->t) != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "value must be a one-element tensor");
    size_t es;
    TRY(esize(c, a->t, &es));
    *dt = a->t->dtype;
    *val = a->t->data;
    return AIT_OK;
}

static ait_status cos_infer(op_ctx *c)
{
    int64_t d[AIT_MAX_RANK];
    int n;
    ait_dtype dt;
    const void *val;
    TRY(cos_value(c, &dt, &val));
    TRY(in_ints(c, 0, d, AIT_MAX_RANK, &n));
    TRY(check_out(c, d, n, dt));
    set_out(c, 0, dt, n, d);
    return AIT_OK;
}

static ait_status cos_run(op_ctx *c)
{
    ait_dtype dt;
    const void *val;
    TRY(cos_value(c, &dt, &val));
    fill_elems(c->out[0]->data, tensor_numel(c->out[0]), val, ait_dtype_size(dt));
    return AIT_OK;
}

/* Range 27's float16 and bfloat16: the length and the values are computed
 * in float32 (stash_type 1, the default) or in their own type (stash_type
 * naming it), each operation rounded to it. *half is false for other types. */
static ait_status range_stash(op_ctx *c, bool *half, bool *in_own)
{
    ait_dtype dt = c->in[0]->dtype;
    *half = dt == AIT_F16 || dt == AIT_BF16;
    *in_own = false;
    if (!*half) return AIT_OK;
    int64_t st = attr_int(c->n, "stash_type", 1);
    if (st != 1 && st != dt)
        return err_set(c->err, AIT_E_INVALID_ARG, "stash_type %lld: for %s inputs it is 1 "
                       "(float) or %d (%s)", (long long)st, ait_dtype_name(dt), (int)dt,
                       ait_dtype_name(dt));
    *in_own = st == dt;
    return AIT_OK;
}

/* x rounded to dtype dt (float16 or bfloat16) and back. */
static float round_to(ait_dtype dt, float x)
{
    return dt == AIT_F16 ? f16_to_f32(f32_to_f16(x)) : bf16_to_f32(f32_to_bf16(x));
}

/* Range's length max(ceil((limit - start) / delta), 0). */
static ait_status range_len(op_ctx *c, int64_t *n)
{
    ait_dtype dt = c->in[0]->dtype;
    if (c->n->version >= 27)
        TRY(check_dtype(c, c->in[0], "start", 7, AIT_F32, AIT_F64, AIT_I16, AIT_I32, AIT_I64,
                        AIT_F16, AIT_BF16));
    else
        TRY(check_dtype(c, c->in[0], "start", 5, AIT_F32, AIT_F64, AIT_I16, AIT_I32, AIT_I64));
    for (int i = 1; i < 3; i++)
        if (c->in[i]->dtype != dt)
            return err_set(c->err, AIT_E_DTYPE, "start, limit and delta must share a dtype");
    bool half, own;
    TRY(range_stash(c, &half, &own));
    if (half) {
        double s, l, d;
        TRY(scalar_in(c, 0, "start", NULL, &s));
        TRY(scalar_in(c, 1, "limit", NULL, &l));
        TRY(scalar_in(c, 2, "delta", NULL, &d));
        float diff = (float)l - (float)s, q = diff / (float)d;
        if (own) q = round_to(dt, round_to(dt, diff) / (float)d);
        q = ceilf(q);
        if (!(q <= 9e18f)) return err_set(c->err, AIT_E_INVALID_ARG, "range has no finite length");
        *n = q > 0 ? (int64_t)q : 0;
        return AIT_OK;
    }
    if (dtype_is_int(dt)) {
        int64_t s, l, d;
        TRY(scalar_in(c, 0, "start", &s, NULL));
        TRY(scalar_in(c, 1, "limit", &l, NULL));
        TRY(scalar_in(c, 2, "delta", &d, NULL));
        if (d == 0) return err_set(c->err, AIT_E_INVALID_ARG, "delta is 0");
        __int128 diff = (__int128)l - s, q = diff / d;
        if (q * d != diff && (diff > 0) == (d > 0)) q++; /* ceil */
        if (q > INT64_MAX) return err_set(c->err, AIT_E_OVERFLOW, "range length overflows");
        *n = q > 0 ? (int64_t)q : 0;
    } else {
        double s, l, d;
        TRY(scalar_in(c, 0, "start", NULL, &s));
        TRY(scalar_in(c, 1, "limit", NULL, &l));
        TRY(scalar_in(c, 2, "delta", NULL, &d));
        double q = ceil((l - s) / d);
        if (!(q <= 9e18)) /* also catches NaN and delta 0 */
            return err_set(c->err, AIT_E_INVALID_ARG, "range has no finite length");
        *n = q > 0 ? (int64_t)q : 0;
    }
    return AIT_OK;
}

static ait_status range_infer(op_ctx *c)
{
    int64_t n;
    TRY(range_len(c, &n));
    TRY(check_out(c, &n, 1, c->in[0]->dtype));
    set_out(c, 0, c->in[0]->dtype, 1, &n);
    return AIT_OK;
}

static ait_status range_run(op_ctx *c)
{
    ait_dtype dt = c->in[0]->dtype;
    int64_t n = tensor_numel(c->out[0]);
    void *y = c->out[0]->data;
    if (dtype_is_int(dt)) {
        int64_t s, d;
        TRY(scalar_in(c, 0, "start", &s, NULL));
        TRY(scalar_in(c, 2, "delta", &d, NULL));
        for (int64_t i = 0; i < n; i++) {
            int64_t v = s + i * d;
            if (dt == AIT_I64) ((int64_t *)y)[i] = v;
            else if (dt == AIT_I32) ((int32_t *)y)[i] = (int32_t)v;
            else ((int16_t *)y)[i] = (int16_t)v;
        }
    } else if (dt == AIT_F16 || dt == AIT_BF16) {
        bool half, own;
        TRY(range_stash(c, &half, &own));
        float s = (float)elem_get_f64(c->in[0]->data, dt, 0);
        float d = (float)elem_get_f64(c->in[2]->data, dt, 0);
        for (int64_t i = 0; i < n; i++) {
            float v = own ? round_to(dt, s + round_to(dt, (float)i * d)) : s + (float)i * d;
            elem_set_f64(y, dt, i, v);
        }
    } else if (dt == AIT_F32) {
        float s = *(const float *)c->in[0]->data, d = *(const float *)c->in[2]->data;
        for (int64_t i = 0; i < n; i++) ((float *)y)[i] = s + (float)i * d;
    } else {
        double s = *(const double *)c->in[0]->data, d = *(const double *)c->in[2]->data;
        for (int64_t i = 0; i < n; i++) ((double *)y)[i] = s + (double)i * d;
    }
    return AIT_OK;
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------------ */

static ait_status blocksize(op_ctx *c, int64_t *b)
{
    const tensor *x = c->in[0];
    *b = attr_int(c->n, "blocksize", 0);
    if (*b <= 0 || *b > (int64_t)1 << 20)
        return err_set(c->err, AIT_E_INVALID_ARG, "blocksize %lld is invalid", (long long)*b);
    if (x->rank != 4)
        return err_set(c->err, AIT_E_SHAPE, "input must have rank 4, not %d", x->rank);
    size_t es;
    return esize(c, x, &es);
}

static ait_status d2s_crd(op_ctx *c, bool *crd)
{
    const char *m = attr_str(c->n, "mode", "DCR");
    *crd = strcmp(m, "CRD") == 0;
    if (!*crd && strcmp(m, "DCR") != 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "mode '%s' is not DCR or CRD", m);
    return AIT_OK;
}

static ait_status d2s_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t b;
    bool crd;
    TRY(blocksize(c, &b));
    TRY(d2s_crd(c, &crd));
    if (x->dims[1] % (b * b))
        return err_set(c->err, AIT_E_SHAPE, "channels %lld are not a multiple of blocksize^2",
                       (long long)x->dims[1]);
    int64_t d[4] = {x->dims[0], x->dims[1] / (b * b), x->dims[2] * b, x->dims[3] * b};
    TRY(check_out(c, d, 4, x->dtype));
    set_out(c, 0, x->dtype, 4, d);
    return AIT_OK;
}

static ait_status d2s_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t b;
    bool crd;
    TRY(blocksize(c, &b));
    TRY(d2s_crd(c, &crd));
    int64_t N = x->dims[0], C = x->dims[1] / (b * b), H = x->dims[2], W = x->dims[3];
    int64_t hw = H * W;
    /* DCR reads channels as (b1, b2, C), CRD as (C, b1, b2); the output is
     * (N, C, H, b1, W, b2) */
    int64_t sc = crd ? b * b * hw : hw, s1 = crd ? b * hw : b * C * hw, s2 = crd ? hw : C * hw;
    view v = {6, {N, C, H, b, W, b}, {C * b * b * hw, sc, W, s1, 1, s2}};
    copy_view(c->out[0]->data, x->data, v, ait_dtype_size(x->dtype));
    return AIT_OK;
}

static ait_status s2d_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t b;
    TRY(blocksize(c, &b));
    if (x->dims[2] % b || x->dims[3] % b)
        return err_set(c->err, AIT_E_SHAPE, "height and width must be multiples of blocksize %lld",
                       (long long)b);
    int64_t d[4] = {x->dims[0], x->dims[1] * b * b, x->dims[2] / b, x->dims[3] / b};
    TRY(check_out(c, d, 4, x->dtype));
    set_out(c, 0, x->dtype, 4, d);
    return AIT_OK;
}

static ait_status s2d_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t b;
    TRY(blocksize(c, &b));
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    /* input (N, C, H/b, b1, W/b, b2) read as output (N, b1, b2, C, H/b, W/b) */
    view v = {6, {N, b, b, C, H / b, W / b}, {C * H * W, W, 1, H * W, b * W, b}};
    copy_view(c->out[0]->data, x->data, v, ait_dtype_size(x->dtype));
    return AIT_OK;
}

/* ---- Trilu, EyeLike ------------------------------------------------------------- */

static ait_status same_shape_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    size_t es;
    TRY(esize(c, x, &es));
    set_out(c, 0, x->dtype, x->rank, x->dims);
    return AIT_OK;
}

static ait_status trilu_infer(op_ctx *c)
{
    if (c->in[0]->rank < 2)
        return err_set(c->err, AIT_E_SHAPE, "input must have rank >= 2, not %d", c->in[0]->rank);
    return same_shape_infer(c);
}

static ait_status trilu_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t k = 0;
    if (has_in(c, 1)) TRY(scalar_in(c, 1, "k", &k, NULL));
    bool upper = attr_int(c->n, "upper", 1) != 0;
    int r = x->rank;
    int64_t R = x->dims[r - 2], M = x->dims[r - 1], es = (int64_t)ait_dtype_size(x->dtype);
    if (R == 0 || M == 0) return AIT_OK;
    int64_t rows = tensor_numel(x) / M;
    /* clamp k so that i + k cannot overflow; the result is unchanged */
    if (k > M + 1) k = M + 1;
    if (k < -R - 1) k = -R - 1;
    const char *s = x->data;
    char *d = c->out[0]->data;
    for (int64_t row = 0; row < rows; row++, s += M * es, d += M * es) {
        int64_t i = row % R, a, b; /* keep columns [a, b) */
        if (upper) {
            a = i + k < 0 ? 0 : i + k > M ? M : i + k;
            b = M;
        } else {
            a = 0;
            b = i + k + 1 < 0 ? 0 : i + k + 1 > M ? M : i + k + 1;
        }
        memset(d, 0, (size_t)(M * es));
        if (b > a) memcpy(d + a * es, s + a * es, (size_t)((b - a) * es));
    }
    return AIT_OK;
}

static ait_status eyelike_dtype(op_ctx *c, ait_dtype *dt)
{
    *dt = (ait_dtype)attr_int(c->n, "dtype", c->in[0]->dtype);
    tensor t = {.dtype = *dt};
    size_t es;
    return esize(c, &t, &es);
}

static ait_status eyelike_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    ait_dtype dt;
    TRY(eyelike_dtype(c, &dt));
    if (x->rank != 2)
        return err_set(c->err, AIT_E_SHAPE, "input must have rank 2, not %d", x->rank);
    set_out(c, 0, dt, 2, x->dims);
    return AIT_OK;
}

static ait_status eyelike_run(op_ctx *c)
{
    tensor *y = c->out[0];
    ait_dtype dt = y->dtype;
    int64_t R = y->dims[0], M = y->dims[1], k = attr_int(c->n, "k", 0);
    memset(y->data, 0, tensor_nbytes(y));
    unsigned char one[8];
    elem_set_f64(one, dt, 0, 1.0);
    size_t es = ait_dtype_size(dt);
    if (k > M) k = M; /* no diagonal; clamped so that i + k cannot overflow */
    if (k < -R) k = -R;
    for (int64_t i = k < 0 ? -k : 0; i < R && i + k < M; i++)
        memcpy((char *)y->data + (i * M + i + k) * (int64_t)es, one, es);
    return AIT_OK;
}

/* ---- the table ---------------------------------------------------------------- */

OP_TABLE(layout,
         {"Reshape", 2, 2, 1, 1, OP_STR_MOVES, reshape_infer, run_copy},
         {"Flatten", 1, 1, 1, 1, OP_STR_MOVES, flatten_infer, run_copy},
         {"Squeeze", 1, 2, 1, 1, OP_STR_MOVES, squeeze_infer, run_copy},
         {"Unsqueeze", 1, 2, 1, 1, OP_STR_MOVES, unsqueeze_infer, run_copy},
         {"Transpose", 1, 1, 1, 1, OP_STR_MOVES, transpose_infer, transpose_run},
         {"Concat", 1, 1 << 20, 1, 1, OP_VARIADIC | OP_STR_MOVES, concat_infer, concat_run},
         {"Split", 1, 2, 1, MAXSPLIT, OP_STR_MOVES, split_infer, split_run},
         {"Slice", 1, 5, 1, 1, OP_STR_MOVES, slice_infer, slice_run},
         {"Expand", 2, 2, 1, 1, OP_STR_MOVES, expand_infer, expand_run},
         {"Tile", 2, 2, 1, 1, OP_STR_MOVES, tile_infer, tile_run},
         {"Pad", 1, 4, 1, 1, OP_STR_MOVES, pad_infer, pad_run},
         {"Shape", 1, 1, 1, 1, OP_READS_SHAPE | OP_STR_MOVES, shape_infer, shape_run},
         {"Size", 1, 1, 1, 1, OP_READS_SHAPE | OP_STR_MOVES, size_infer, size_run},
         {"ConstantOfShape", 1, 1, 1, 1, 0, cos_infer, cos_run},
         {"Range", 3, 3, 1, 1, 0, range_infer, range_run},
         {"DepthToSpace", 1, 1, 1, 1, OP_STR_MOVES, d2s_infer, d2s_run},
         {"SpaceToDepth", 1, 1, 1, 1, OP_STR_MOVES, s2d_infer, s2d_run},
         {"Trilu", 1, 2, 1, 1, OP_STR_MOVES, trilu_infer, trilu_run},
         {"EyeLike", 1, 1, 1, 1, 0, eyelike_infer, eyelike_run});
