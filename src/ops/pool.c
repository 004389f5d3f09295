/* Pooling: MaxPool, AveragePool, LpPool, their Global forms, and MaxUnpool.
 *
 * The windowed pools share one driver: pool_geometry reads the attributes
 * and computes output sizes per the spec; pool_windows lists, per output
 * position, the input offsets its window covers (built once per run and
 * shared by all N*C planes); pool_tmpl.h reduces them (max, average, Lp).
 * The global pools are the same driver with one whole-plane window. */
#include <math.h>
#include <string.h>

#include "ops/op.h"

#define POOL_MAX_SP (AIT_MAX_RANK - 2)
#define POOL_ATTR_MAX INT32_MAX /* bound on kernel, stride, dilation and pad values */

typedef struct pool_geom {
    int nd;         /* spatial dims */
    int64_t planes; /* N * C */
    int64_t in[POOL_MAX_SP], out[POOL_MAX_SP], k[POOL_MAX_SP];
    int64_t s[POOL_MAX_SP], d[POOL_MAX_SP], pb[POOL_MAX_SP], pe[POOL_MAX_SP];
    int64_t in_sp, out_sp;
    bool global;
} pool_geom;

/* The input elements of every output position's window, as offsets into a
 * plane: window o is off[start[o] .. start[o + 1]). npad[o] counts the
 * window's positions inside the padded input (AveragePool's
 * count_include_pad divisor). A global pool has one window, the whole
 * plane, and no lists. */
typedef struct pool_win {
    bool global;
    const int64_t *start;
    const int32_t *off;
    const int32_t *npad;
} pool_win;

enum { POOL_MAX, POOL_AVG, POOL_LP };

typedef struct pool_kind {
    int op;
    bool include_pad; /* AveragePool count_include_pad */
    bool col_major;   /* MaxPool storage_order 1 for Indices */
    double p;         /* LpPool's p */
} pool_kind;

/* MaxPool's Indices within a plane: row-major is the offset itself;
 * column-major (storage_order 1) reverses the order of the spatial dims. */
static int64_t pool_index(const pool_geom *g, int64_t off, bool col_major)
{
    if (!col_major) return off;
    int64_t idx = 0, stride = 1, coord[POOL_MAX_SP];
    for (int i = g->nd - 1; i >= 0; i--) {
        coord[i] = off % g->in[i];
        off /= g->in[i];
    }
    for (int i = 0; i < g->nd; i++) {
        idx += coord[i] * stride;
        stride *= g->in[i];
    }
    return idx;
}

#define PT float
#define PS f32
#include "pool_tmpl.h"
#define PT double
#define PS f64
#include "pool_tmpl.h"

/* ---- attributes and output sizes --------------------------------------- */

static ait_status check_input(op_ctx *c, const tensor *x)
{
    char sx[96];
    if (x->rank < 3)
        return err_set(c->err, AIT_E_SHAPE, "input has shape %s; expected [N, C, spatial...]",
                       shape_str(x->dims, x->rank, sx, sizeof sx));
    return AIT_OK;
}

/* Geometry of a pool over in[0]: the global pools cover the whole plane;
 * the others read kernel_shape, strides, dilations, pads, auto_pad and
 * ceil_mode. */
static ait_status pool_geometry(op_ctx *c, bool global, pool_geom *g)
{
    const tensor *x = c->in[0];
    memset(g, 0, sizeof *g);
    TRY(check_input(c, x));
    const int nd = g->nd = x->rank - 2;
    g->planes = x->dims[0] * x->dims[1];
    g->global = global;
    g->in_sp = g->out_sp = 1;
    for (int i = 0; i < nd; i++) {
        g->in[i] = x->dims[i + 2];
        g->in_sp *= g->in[i];
    }
    if (global) {
        for (int i = 0; i < nd; i++) {
            g->k[i] = g->in[i];
            g->s[i] = g->d[i] = g->out[i] = 1;
        }
        return AIT_OK;
    }
    int kc, mode = PAD_NOTSET;
    const int64_t *ks = attr_ints(c->n, "kernel_shape", &kc);
    if (!ks) return err_set(c->err, AIT_E_INVALID_ARG, "kernel_shape is required");
    int64_t pads[2 * POOL_MAX_SP];
    TRY(ints_attr(c, "kernel_shape", nd, 1, 1, POOL_ATTR_MAX, g->k));
    TRY(ints_attr(c, "strides", nd, 1, 1, POOL_ATTR_MAX, g->s));
    TRY(ints_attr(c, "dilations", nd, 1, 1, POOL_ATTR_MAX, g->d));
    TRY(ints_attr(c, "pads", 2 * nd, 0, 0, POOL_ATTR_MAX, pads));
    TRY(auto_pad_attr(c, &mode));
    const int64_t ceil_mode = attr_int(c->n, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "ceil_mode must be 0 or 1, not %lld",
                       (long long)ceil_mode);
    for (int i = 0; i < nd; i++) {
        const int64_t in = g->in[i], s = g->s[i], dk = (g->k[i] - 1) * g->d[i] + 1;
        int64_t out;
        if (in > INT64_MAX / 4)
            return err_set(c->err, AIT_E_OVERFLOW, "spatial dim %d (%lld) is too large", i,
                           (long long)in);
        g->pb[i] = mode == PAD_NOTSET ? pads[i] : 0;
        g->pe[i] = mode == PAD_NOTSET ? pads[nd + i] : 0;
        TRY(window_out(c, i, in, s, dk, mode, ceil_mode, &g->pb[i], &g->pe[i], &out));
        g->out[i] = out;
        g->out_sp *= out;
    }
    return AIT_OK;
}

static void pool_out_dims(const op_ctx *c, const pool_geom *g, int64_t *dims)
{
    dims[0] = c->in[0]->dims[0];
    dims[1] = c->in[0]->dims[1];
    memcpy(dims + 2, g->out, (size_t)g->nd * sizeof dims[0]);
}

/* ---- the window driver ------------------------------------------------- */

/* Per dim and output coordinate o: the first input coordinate inside the
 * window, how many dilated taps land inside the input, and how many inside
 * the padded input. */
typedef struct dim_range {
    int64_t first, count, padded;
} dim_range;

static dim_range dim_range_at(const pool_geom *g, int i, int64_t o)
{
    const int64_t in = g->in[i], k = g->k[i], d = g->d[i], start = o * g->s[i] - g->pb[i];
    int64_t lo = start < 0 ? ceil_div(-start, d) : 0;
    int64_t hi = floor_div(in - 1 - start, d) + 1;
    int64_t phi = floor_div(in + g->pe[i] - 1 - start, d) + 1;
    hi = hi < k ? hi : k;
    phi = phi < k ? phi : k;
    return (dim_range){start + lo * d, hi > lo ? hi - lo : 0, phi > 0 ? phi : 0};
}

/* Builds the windows of g into scratch, together with the extra float
 * buffers the caller asks for (xf_n, yf_n floats; NULL when 0). */
static ait_status pool_windows(op_ctx *c, const pool_geom *g, pool_win *w, int64_t xf_n,
                               int64_t yf_n, float **xf, float **yf)
{
    const int nd = g->nd;
    int64_t nranges = 0, total = 1;
    dim_range *rg[POOL_MAX_SP];
    if (g->in_sp > INT32_MAX)
        return err_set(c->err, AIT_E_UNSUPPORTED, "a plane of %lld elements is too large",
                       (long long)g->in_sp);
    for (int i = 0; i < nd; i++) nranges += g->out[i];
    const bool global = g->global;
    size_t bytes[6] = {
        global ? 0 : (size_t)nranges * sizeof(dim_range),
        global ? 0 : (size_t)(g->out_sp + 1) * sizeof(int64_t),
        0, /* offsets, sized below */
        global ? 0 : (size_t)g->out_sp * sizeof(int32_t),
        (size_t)xf_n * sizeof(float),
        (size_t)yf_n * sizeof(float),
    };
    void *p[6];
    if (!global) {
        /* The windows' total size is the product over dims of the sums of
         * the per-dim tap counts. */
        for (int i = 0; i < nd; i++) {
            int64_t sum = 0;
            for (int64_t o = 0; o < g->out[i]; o++) sum += dim_range_at(g, i, o).count;
            if (sum && total > INT64_MAX / 4 / sum)
                return err_set(c->err, AIT_E_OVERFLOW, "pooling windows are too large");
            total *= sum;
        }
        if ((uint64_t)total > SIZE_MAX / sizeof(int32_t))
            return err_set(c->err, AIT_E_OVERFLOW, "pooling windows are too large");
        /* At least one: windows that are all empty (an input dim of 0)
         * still index the offsets (NULL + 0 is undefined). */
        bytes[2] = (size_t)(total ? total : 1) * sizeof(int32_t);
    }
    TRY(op_scratch_parts(c, 6, bytes, p));
    *xf = p[4];
    *yf = p[5];
    w->global = global;
    if (global) return AIT_OK;

    dim_range *all = p[0];
    int64_t *start = p[1];
    int32_t *off = p[2], *npad = p[3];
    /* An empty output (a dim of 0) has no ranges: all is NULL, and even
     * NULL + 0 is undefined. */
    for (int i = 0; i < nd && nranges > 0; i++) {
        rg[i] = all;
        for (int64_t o = 0; o < g->out[i]; o++) all[o] = dim_range_at(g, i, o);
        all += g->out[i];
    }
    int64_t istr[POOL_MAX_SP], opos[POOL_MAX_SP] = {0}, t[POOL_MAX_SP];
    row_strides(g->in, nd, istr);
    int64_t at = 0;
    for (int64_t o = 0; o < g->out_sp; o++) {
        start[o] = at;
        int64_t np = 1, n = 1;
        const dim_range *r[POOL_MAX_SP];
        for (int i = 0; i < nd; i++) {
            r[i] = &rg[i][opos[i]];
            np *= r[i]->padded;
            n *= r[i]->count;
            t[i] = 0;
        }
        npad[o] = (int32_t)(np < INT32_MAX ? np : INT32_MAX);
        for (int64_t q = 0; q < n; q++) { /* the window's taps, last dim fastest */
            int64_t ofs = 0;
            for (int i = 0; i < nd; i++) ofs += (r[i]->first + t[i] * g->d[i]) * istr[i];
            off[at++] = (int32_t)ofs;
            for (int i = nd - 1; i >= 0 && ++t[i] == r[i]->count; i--) t[i] = 0;
        }
        for (int i = nd - 1; i >= 0 && ++opos[i] == g->out[i]; i--) opos[i] = 0;
    }
    start[g->out_sp] = at;
    w->start = start;
    w->off = off;
    w->npad = npad;
    return AIT_OK;
}

/* ---- the ops ----------------------------------------------------------- */

static ait_status check_x(op_ctx *c, const tensor *x, bool ints_too)
{
    if (ints_too)
        return check_dtype(c, x, "X", 6, AIT_F32, AIT_F64, AIT_F16, AIT_BF16, AIT_I8, AIT_U8);
    return check_float(c, x, "X");
}

static ait_status pool_kind_of(op_ctx *c, int op, pool_kind *k)
{
    memset(k, 0, sizeof *k);
    k->op = op;
    if (op == POOL_AVG) {
        int64_t v = attr_int(c->n, "count_include_pad", 0);
        if (v != 0 && v != 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "count_include_pad must be 0 or 1");
        k->include_pad = v;
    } else if (op == POOL_MAX) {
        int64_t v = attr_int(c->n, "storage_order", 0);
        if (v != 0 && v != 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "storage_order must be 0 or 1");
        k->col_major = v;
    } else {
        const attr *a = node_attr(c->n, "p"); /* a float before opset 2, an int after */
        k->p = !a ? 2 : a->type == ATTR_FLOAT ? a->f : (double)a->i;
        if (!(k->p > 0) || isinf(k->p))
            return err_set(c->err, AIT_E_INVALID_ARG, "p must be positive, not %g", k->p);
    }
    return AIT_OK;
}

static ait_status pool_infer_any(op_ctx *c, int op, bool global)
{
    pool_geom g;
    int64_t dims[AIT_MAX_RANK], numel;
    pool_kind k;
    TRY(check_x(c, c->in[0], op == POOL_MAX && !global));
    TRY(pool_kind_of(c, op, &k));
    TRY(pool_geometry(c, global, &g));
    pool_out_dims(c, &g, dims);
    TRY(shape_numel(dims, g.nd + 2, c->in[0]->dtype, &numel, "output", c->err));
    set_out(c, 0, c->in[0]->dtype, g.nd + 2, dims);
    set_out(c, 1, AIT_I64, g.nd + 2, dims);
    return AIT_OK;
}

static ait_status pool_run_any(op_ctx *c, int op, bool global)
{
    pool_geom g;
    pool_win w;
    pool_kind k;
    float *xf = NULL, *yf = NULL;
    TRY(pool_kind_of(c, op, &k));
    TRY(pool_geometry(c, global, &g));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t *idx = has_out(c, 1) ? c->out[1]->data : NULL;
    const ait_dtype dt = x->dtype;
    const bool conv = dt != AIT_F32 && dt != AIT_F64; /* computed in float32 */
    const int64_t nx = tensor_numel(x), ny = tensor_numel(y);
    /* + 1: the float copies are never empty (an empty x is still offset, and NULL + 0 is undefined) */
    TRY(pool_windows(c, &g, &w, conv ? nx + 1 : 0, conv ? ny + 1 : 0, &xf, &yf));
    if (dt == AIT_F64) {
        pool_planes_f64(&g, &w, &k, x->data, y->data, idx);
        return AIT_OK;
    }
    if (!conv) {
        pool_planes_f32(&g, &w, &k, x->data, y->data, idx);
        return AIT_OK;
    }
    TRY(convert_elems(x->data, dt, xf, AIT_F32, nx, c->err));
    pool_planes_f32(&g, &w, &k, xf, yf, idx);
    /* exact for int8/uint8 too: MaxPool only picks elements */
    return convert_elems(yf, AIT_F32, y->data, dt, ny, c->err);
}

static ait_status maxpool_infer(op_ctx *c) { return pool_infer_any(c, POOL_MAX, false); }
static ait_status maxpool_run(op_ctx *c) { return pool_run_any(c, POOL_MAX, false); }
static ait_status avgpool_infer(op_ctx *c) { return pool_infer_any(c, POOL_AVG, false); }
static ait_status avgpool_run(op_ctx *c) { return pool_run_any(c, POOL_AVG, false); }
static ait_status lppool_infer(op_ctx *c) { return pool_infer_any(c, POOL_LP, false); }
static ait_status lppool_run(op_ctx *c) { return pool_run_any(c, POOL_LP, false); }
static ait_status gmaxpool_infer(op_ctx *c) { return pool_infer_any(c, POOL_MAX, true); }
static ait_status gmaxpool_run(op_ctx *c) { return pool_run_any(c, POOL_MAX, true); }
static ait_status gavgpool_infer(op_ctx *c) { return pool_infer_any(c, POOL_AVG, true); }
static ait_status gavgpool_run(op_ctx *c) { return pool_run_any(c, POOL_AVG, true); }
static ait_status glppool_infer(op_ctx *c) { return pool_infer_any(c, POOL_LP, true); }
static ait_status glppool_run(op_ctx *c) { return pool_run_any(c, POOL_LP, true); }

/* ---- MaxUnpool --------------------------------------------------------- */

/* The output shape MaxUnpool infers from its attributes (the shape of the
 * MaxPool input the indices refer to), and the shape it produces. */
static ait_status unpool_shapes(op_ctx *c, int64_t *inferred, int64_t *out)
{
    const tensor *x = c->in[0], *ix = c->in[1];
    char sx[96], si[96];
    TRY(check_input(c, x));
    TRY(check_x(c, x, false));
    if (ix->dtype != AIT_I64)
        return err_set(c->err, AIT_E_DTYPE, "I must be int64, not %s", ait_dtype_name(ix->dtype));
    if (ix->rank != x->rank || memcmp(ix->dims, x->dims, (size_t)x->rank * sizeof x->dims[0]))
        return err_set(c->err, AIT_E_SHAPE, "I has shape %s but X has %s",
                       shape_str(ix->dims, ix->rank, si, sizeof si),
                       shape_str(x->dims, x->rank, sx, sizeof sx));
    const int nd = x->rank - 2;
    int64_t k[POOL_MAX_SP], s[POOL_MAX_SP], pads[2 * POOL_MAX_SP];
    int kc;
    if (!attr_ints(c->n, "kernel_shape", &kc))
        return err_set(c->err, AIT_E_INVALID_ARG, "kernel_shape is required");
    TRY(ints_attr(c, "kernel_shape", nd, 1, 1, POOL_ATTR_MAX, k));
    TRY(ints_attr(c, "strides", nd, 1, 1, POOL_ATTR_MAX, s));
    TRY(ints_attr(c, "pads", 2 * nd, 0, 0, POOL_ATTR_MAX, pads));
    inferred[0] = x->dims[0];
    inferred[1] = x->dims[1];
    for (int i = 0; i < nd; i++) {
        if (x->dims[i + 2] > INT64_MAX / 4 / s[i])
            return err_set(c->err, AIT_E_OVERFLOW, "spatial dim %d is too large", i);
        inferred[i + 2] = (x->dims[i + 2] - 1) * s[i] - pads[i] - pads[nd + i] + k[i];
        if (inferred[i + 2] < 0)
            return err_set(c->err, AIT_E_SHAPE, "spatial dim %d: output size %lld is negative",
                           i, (long long)inferred[i + 2]);
    }
    memcpy(out, inferred, (size_t)x->rank * sizeof out[0]);
    if (has_in(c, 2)) {
        int n;
        TRY(in_ints(c, 2, out, AIT_MAX_RANK, &n));
        if (n != x->rank)
            return err_set(c->err, AIT_E_SHAPE, "output_shape has %d values, expected %d", n,
                           x->rank);
        for (int i = 0; i < n; i++)
            if (i < 2 ? out[i] != inferred[i] : out[i] < 0)
                return err_set(c->err, AIT_E_SHAPE, "output_shape %s does not fit input %s",
                               shape_str(out, n, si, sizeof si),
                               shape_str(x->dims, x->rank, sx, sizeof sx));
    }
    int64_t numel;
    return shape_numel(out, x->rank, x->dtype, &numel, "output", c->err);
}

static ait_status unpool_infer(op_ctx *c)
{
    int64_t inferred[AIT_MAX_RANK], out[AIT_MAX_RANK];
    TRY(unpool_shapes(c, inferred, out));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, out);
    return AIT_OK;
}

/* Scatters X into a zero tensor at the flat indices I. The indices address
 * the inferred shape (that of the pooled input); a larger output_shape gets
 * that block in its leading corner. */
static ait_status unpool_run(op_ctx *c)
{
    int64_t inferred[AIT_MAX_RANK], out[AIT_MAX_RANK];
    TRY(unpool_shapes(c, inferred, out));
    const tensor *x = c->in[0];
    const int64_t *ix = c->in[1]->data;
    const int rank = x->rank;
    const size_t es = ait_dtype_size(x->dtype);
    const bool same = memcmp(inferred, out, (size_t)rank * sizeof out[0]) == 0;
    int64_t ostr[AIT_MAX_RANK], lim = 1;
    row_strides(out, rank, ostr);
    for (int i = 0; i < rank; i++) lim *= inferred[i];
    char *y = c->out[0]->data;
    memset(y, 0, tensor_nbytes(c->out[0]));
    for (int64_t j = 0, n = tensor_numel(x); j < n; j++) {
        int64_t at = ix[j];
        if (at < 0 || at >= lim)
            return err_set(c->err, AIT_E_INVALID_ARG, "index %lld is out of range [0, %lld)",
                           (long long)at, (long long)lim);
        if (!same) {
            int64_t rest = at, dst = 0;
            for (int i = rank - 1; i >= 0; i--) {
                int64_t q = rest % inferred[i];
                rest /= inferred[i];
                if (q >= out[i])
                    return err_set(c->err, AIT_E_INVALID_ARG,
                                   "index %lld falls outside output_shape", (long long)at);
                dst += q * ostr[i];
            }
            at = dst;
        }
        memcpy(y + at * es, (const char *)x->data + j * es, es);
    }
    return AIT_OK;
}

OP_TABLE(pool,
         {"MaxPool", 1, 1, 1, 2, 0, maxpool_infer, maxpool_run},
         {"AveragePool", 1, 1, 1, 1, 0, avgpool_infer, avgpool_run},
         {"LpPool", 1, 1, 1, 1, 0, lppool_infer, lppool_run},
         {"GlobalMaxPool", 1, 1, 1, 1, 0, gmaxpool_infer, gmaxpool_run},
         {"GlobalAveragePool", 1, 1, 1, 1, 0, gavgpool_infer, gavgpool_run},
         {"GlobalLpPool", 1, 1, 1, 1, 0, glppool_infer, glppool_run},
         {"MaxUnpool", 2, 3, 1, 1, 0, unpool_infer, unpool_run});
