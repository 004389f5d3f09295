/* Normalisation ops: BatchNormalization, InstanceNormalization,
 * LayerNormalization, RMSNormalization, GroupNormalization, LRN, MeanVarianceNormalization,
 * LpNormalization and the softmax family (Softmax, LogSoftmax, Hardmax).
 *
 * Kernels (norm_kernels.h) exist for float and double: float64 data is
 * computed in double, float32 in place in float, and float16/bfloat16 data
 * is widened into scratch, computed in float32 and narrowed into the output.
 * Statistics are accumulated in double. */
#include <stdbool.h>
#include <string.h>
#include <tgmath.h>

#include "ops/op.h"

enum { SM_SOFTMAX, SM_LOGSOFTMAX, SM_HARDMAX };

#define T float
#define K(name) name##_f32
#include "norm_kernels.h"
#undef T
#undef K
#define T double
#define K(name) name##_f64
#include "norm_kernels.h"
#undef T
#undef K

/* Calls the float or the double instance of kernel fn, by work dtype. */
#define KCALL(wt, fn, ...) ((wt) == AIT_F64 ? fn##_f64(__VA_ARGS__) : fn##_f32(__VA_ARGS__))

/* ---- helpers ------------------------------------------------------------ */

/* The first output is never optional in this family. */
static ait_status need_y(op_ctx *c)
{
    if (!has_out(c, 0)) return err_set(c->err, AIT_E_INVALID_ARG, "output 0 is missing");
    return AIT_OK;
}

/* The dtype kernels compute in for data of dtype t. */
static ait_dtype work_dtype(ait_dtype t) { return t == AIT_F64 ? AIT_F64 : AIT_F32; }

/* Small parameter vectors (one value per channel) are read as double. */
static void load_f64(const tensor *t, double *dst)
{
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++) dst[i] = elem_get_f64(t->data, t->dtype, i);
}

/* ---- Softmax, LogSoftmax, Hardmax ---------------------------------------- */

/* The op runs along the middle axis of [outer][len][inner]. Before opset 13
 * the input is coerced to 2-D [dims_prod(dims[:axis]), dims_prod(dims[axis:])]
 * (default axis 1); from 13 it works along dims[axis] alone (default -1). */
static ait_status sm_layout(op_ctx *c, int64_t *outer, int64_t *len, int64_t *inner)
{
    TRY(need_y(c));
    const tensor *x = c->in[0];
    bool old = c->n->version < 13;
    int64_t a = attr_int(c->n, "axis", old ? 1 : -1);
    int axis;
    if (old && a == x->rank) { /* coerced to [numel, 1] */
        axis = x->rank;
    } else {
        TRY(norm_axis(c, a, x->rank, &axis));
    }
    if (x->rank == 0) {
        *outer = *len = *inner = 1;
    } else if (old) {
        *outer = dims_prod(x->dims, 0, axis);
        *len = dims_prod(x->dims, axis, x->rank);
        *inner = 1;
    } else {
        *outer = dims_prod(x->dims, 0, axis);
        *len = x->dims[axis];
        *inner = dims_prod(x->dims, axis + 1, x->rank);
    }
    return AIT_OK;
}

static ait_status sm_infer(op_ctx *c)
{
    TRY(need_in(c, 0, "input"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "input"));
    int64_t outer, len, inner;
    TRY(sm_layout(c, &outer, &len, &inner));
    set_out(c, 0, x->dtype, x->rank, x->dims);
    return AIT_OK;
}

static ait_status sm_run(op_ctx *c, int mode)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t outer, len, inner;
    TRY(sm_layout(c, &outer, &len, &inner));
    if (tensor_numel(x) == 0) return AIT_OK;
    ait_dtype wt = work_dtype(x->dtype);
    size_t ws = ait_dtype_size(wt);
    size_t bytes[5] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)inner * ws,
                       (size_t)inner * 8, (size_t)inner * 8};
    void *p[5];
    TRY(op_scratch_parts(c, 5, bytes, p));
    const void *xs;
    TRY(work_in(c, x, wt, p[0], &xs));
    void *ys = work_out(y, wt, p[1]);
    KCALL(wt, softmax, xs, ys, outer, len, inner, mode, p[2], p[3], p[4]);
    return work_done(c, y, ys, wt);
}

static ait_status softmax_run(op_ctx *c) { return sm_run(c, SM_SOFTMAX); }
static ait_status logsoftmax_run(op_ctx *c) { return sm_run(c, SM_LOGSOFTMAX); }
static ait_status hardmax_run(op_ctx *c) { return sm_run(c, SM_HARDMAX); }

/* ---- BatchNormalization -------------------------------------------------- */

/* X is seen as [N][P][S]: P = C channels of S = D1*...*Dn positions, or
 * (spatial=0, opsets 7-8) P = C*D1*...*Dn activations with S = 1. In
 * training mode the statistics come from the batch and the running
 * statistics are returned: from opset 14 when training_mode=1, before that
 * whenever an output beyond Y is requested (mean, var, saved_mean,
 * saved_var). */
typedef struct bn_params {
    int64_t N, P, S;
    bool train;
} bn_params;

static ait_status bn_params_of(op_ctx *c, bn_params *b)
{
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    TRY(need_y(c));
    for (int i = 0; i < 5; i++) {
        TRY(need_in(c, i, names[i]));
        TRY(check_float(c, c->in[i], names[i]));
    }
    const tensor *x = c->in[0];
    if (x->rank < 2)
        return err_set(c->err, AIT_E_SHAPE, "X must have rank >= 2 (N x C x ...), not %d",
                       x->rank);
    int64_t cs;
    TRY(shape_numel(x->dims + 1, x->rank - 1, x->dtype, &cs, "X", c->err));
    bool spatial = c->n->version >= 9 || attr_int(c->n, "spatial", 1) != 0;
    int64_t C = x->dims[1];
    b->N = x->dims[0];
    b->P = spatial ? C : cs;
    b->S = spatial ? dims_prod(x->dims, 2, x->rank) : 1;
    for (int i = 1; i < 5; i++) {
        const tensor *t = c->in[i];
        if (spatial ? t->rank != 1 || t->dims[0] != C : tensor_numel(t) != cs)
            return err_set(c->err, AIT_E_SHAPE, "%s must have %s %lld, as X has", names[i],
                           spatial ? "shape [C] with C =" : "C*D1*...*Dn elements =",
                           (long long)b->P);
    }
    if (c->n->version >= 14) {
        int64_t tm = attr_int(c->n, "training_mode", 0);
        if (tm != 0 && tm != 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "training_mode must be 0 or 1, not %lld",
                           (long long)tm);
        if (c->n_out > 3)
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "has %d outputs; from opset 14 at most 3 (Y, running_mean, "
                           "running_var)", c->n_out);
        if (!tm && (has_out(c, 1) || has_out(c, 2)))
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "outputs running_mean and running_var need training_mode=1");
        b->train = tm != 0;
    } else {
        b->train = false;
        for (int i = 1; i < c->n_out; i++) b->train |= has_out(c, i);
    }
    return AIT_OK;
}

static ait_status bn_infer(op_ctx *c)
{
    bn_params b;
    TRY(bn_params_of(c, &b));
    const tensor *x = c->in[0];
    set_out(c, 0, x->dtype, x->rank, x->dims);
    /* opset 14+: running_mean/var take input_mean/var's type; before, every
     * output has X's type and the parameters' shape */
    for (int i = 1; i < c->n_out; i++) {
        const tensor *p = c->in[3 + (i - 1) % 2];
        set_out(c, i, c->n->version >= 14 ? p->dtype : x->dtype, p->rank, p->dims);
    }
    return AIT_OK;
}

static ait_status bn_run(op_ctx *c)
{
    bn_params b;
    TRY(bn_params_of(c, &b));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    ait_dtype wt = work_dtype(x->dtype);
    int64_t P = b.P;
    size_t pb = (size_t)P * 8, bytes[8] = {work_bytes(x, wt), work_bytes(y, wt), pb, pb, pb, pb, pb, pb};
    void *p[8];
    TRY(op_scratch_parts(c, 8, bytes, p));
    double *scale = p[2], *bias = p[3], *mean = p[4], *var = p[5], *mu = p[6], *mul = p[7];
    load_f64(c->in[1], scale);
    load_f64(c->in[2], bias);
    load_f64(c->in[3], mean);
    load_f64(c->in[4], var);
    double eps = attr_float(c->n, "epsilon", 1e-5f);
    const void *xs;
    TRY(work_in(c, x, wt, p[0], &xs));
    void *ys = work_out(y, wt, p[1]);
    if (b.train) {
        double mom = attr_float(c->n, "momentum", 0.9f);
        double *bvar = mul; /* batch variance, until mul is computed below */
        KCALL(wt, bn_stats, xs, b.N, P, b.S, mu, bvar);
        /* outputs: [1] running mean, [2] running var; before opset 14 also
         * [3] saved (batch) mean and [4] saved (batch) variance */
        for (int i = 1; i < c->n_out && i < 5; i++) {
            tensor *o = c->out[i];
            if (!o) continue;
            for (int64_t p = 0; p < P; p++) {
                double v = i == 1   ? mean[p] * mom + mu[p] * (1 - mom)
                           : i == 2 ? var[p] * mom + bvar[p] * (1 - mom)
                           : i == 3 ? mu[p]
                                    : bvar[p];
                elem_set_f64(o->data, o->dtype, p, v);
            }
        }
        for (int64_t p = 0; p < P; p++) mul[p] = scale[p] / sqrt(bvar[p] + eps);
    } else {
        for (int64_t p = 0; p < P; p++) {
            mu[p] = mean[p];
            mul[p] = scale[p] / sqrt(var[p] + eps);
        }
    }
    KCALL(wt, batchnorm, xs, ys, b.N, P, b.S, mu, mul, bias);
    return work_done(c, y, ys, wt);
}

/* ---- InstanceNormalization, GroupNormalization --------------------------- */

/* X is [N][C][S] normalised per (n, group of C/G channels); scale and bias
 * have one value per channel, or per group for GroupNormalization before
 * opset 21. */
typedef struct gn_params {
    int64_t N, C, G, S;
    bool per_group;
} gn_params;

static ait_status gn_params_of(op_ctx *c, bool instance, gn_params *g)
{
    static const char *const names[] = {"X", "scale", "B"};
    TRY(need_y(c));
    for (int i = 0; i < 3; i++) {
        TRY(need_in(c, i, names[i]));
        TRY(check_float(c, c->in[i], names[i]));
    }
    const tensor *x = c->in[0];
    if (x->rank < 2)
        return err_set(c->err, AIT_E_SHAPE, "X must have rank >= 2 (N x C x ...), not %d",
                       x->rank);
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->S = dims_prod(x->dims, 2, x->rank);
    if (instance) {
        g->G = g->C;
        g->per_group = false;
    } else {
        if (!node_attr(c->n, "num_groups"))
            return err_set(c->err, AIT_E_INVALID_ARG, "attribute num_groups is required");
        g->G = attr_int(c->n, "num_groups", 1);
        if (g->G < 1 || (g->C % g->G) != 0)
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "num_groups %lld must be positive and divide the %lld channels",
                           (long long)g->G, (long long)g->C);
        g->per_group = c->n->version < 21;
    }
    int64_t want = g->per_group ? g->G : g->C;
    for (int i = 1; i < 3; i++) {
        const tensor *t = c->in[i];
        if (t->rank != 1 || t->dims[0] != want)
            return err_set(c->err, AIT_E_SHAPE, "%s must have shape [%lld] (%s)", names[i],
                           (long long)want, g->per_group ? "num_groups" : "channels");
    }
    return AIT_OK;
}

static ait_status gn_infer(op_ctx *c, bool instance)
{
    gn_params g;
    TRY(gn_params_of(c, instance, &g));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status gn_run(op_ctx *c, bool instance)
{
    gn_params g;
    TRY(gn_params_of(c, instance, &g));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (tensor_numel(x) == 0) return AIT_OK;
    ait_dtype wt = work_dtype(x->dtype);
    size_t bytes[4] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)g.C * 8, (size_t)g.C * 8};
    void *p[4];
    TRY(op_scratch_parts(c, 4, bytes, p));
    double *scale = p[2], *bias = p[3];
    load_f64(c->in[1], scale);
    load_f64(c->in[2], bias);
    if (g.per_group) /* spread the per-group values over their channels */
        for (int64_t ch = g.C - 1; ch >= 0; ch--) {
            scale[ch] = scale[ch / (g.C / g.G)];
            bias[ch] = bias[ch / (g.C / g.G)];
        }
    const void *xs;
    TRY(work_in(c, x, wt, p[0], &xs));
    void *ys = work_out(y, wt, p[1]);
    KCALL(wt, groupnorm, xs, ys, g.N, g.C, g.G, g.S, scale, bias,
          attr_float(c->n, "epsilon", 1e-5f));
    return work_done(c, y, ys, wt);
}

static ait_status in_infer(op_ctx *c) { return gn_infer(c, true); }
static ait_status in_run(op_ctx *c) { return gn_run(c, true); }
static ait_status groupnorm_infer(op_ctx *c) { return gn_infer(c, false); }
static ait_status groupnorm_run(op_ctx *c) { return gn_run(c, false); }

/* ---- LayerNormalization ---------------------------------------------------- */

/* X is [outer][inner] with inner = dims_prod(dims[axis:]). Scale and B broadcast
 * (numpy, unidirectionally) to X; they are expanded to X's last pr dims,
 * pr = max(rank - axis, their ranks), i.e. prow rows of inner values.
 * Mean and InvStdDev have dims[:axis] + [1]*(rank-axis) and stash_type's
 * dtype. */
typedef struct ln_params {
    int axis, pr;
    int64_t outer, inner, prow;
    ait_dtype ut;
} ln_params;

static ait_status ln_params_of(op_ctx *c, ln_params *p)
{
    static const char *const names[] = {"X", "Scale", "B"};
    TRY(need_y(c));
    for (int i = 0; i < 3; i++) {
        if (i < 2) TRY(need_in(c, i, names[i]));
        if (has_in(c, i)) TRY(check_float(c, c->in[i], names[i]));
    }
    const tensor *x = c->in[0];
    int r = x->rank;
    TRY(norm_axis(c, attr_int(c->n, "axis", -1), r, &p->axis));
    if (r == 0) p->axis = 0;
    int64_t st = attr_int(c->n, "stash_type", 1);
    if (st != AIT_F32 && st != AIT_F64 && st != AIT_F16 && st != AIT_BF16)
        return err_set(c->err, AIT_E_UNSUPPORTED, "stash_type %lld is not a float type",
                       (long long)st);
    p->ut = (ait_dtype)st;
    p->pr = r - p->axis;
    for (int i = 1; i < 3; i++) {
        if (!has_in(c, i)) continue;
        const tensor *t = c->in[i];
        bool ok = t->rank <= r;
        for (int j = 0; ok && j < t->rank; j++) {
            int64_t d = t->dims[j], xd = x->dims[r - t->rank + j];
            ok = d == 1 || d == xd;
        }
        if (!ok) {
            char s1[128], s2[128];
            return err_set(c->err, AIT_E_SHAPE, "%s %s does not broadcast to X %s", names[i],
                           shape_str(t->dims, t->rank, s1, sizeof s1),
                           shape_str(x->dims, r, s2, sizeof s2));
        }
        if (t->rank > p->pr) p->pr = t->rank;
    }
    p->outer = dims_prod(x->dims, 0, p->axis);
    p->inner = dims_prod(x->dims, p->axis, r);
    p->prow = dims_prod(x->dims, r - p->pr, p->axis);
    return AIT_OK;
}

static ait_status ln_infer(op_ctx *c)
{
    ln_params p;
    TRY(ln_params_of(c, &p));
    const tensor *x = c->in[0];
    set_out(c, 0, x->dtype, x->rank, x->dims);
    int64_t d[AIT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = i < p.axis ? x->dims[i] : 1;
    set_out(c, 1, p.ut, x->rank, d);
    set_out(c, 2, p.ut, x->rank, d);
    return AIT_OK;
}

/* Parameter t broadcast to shape dims[0..rank) as an array of wt. */
static ait_status param_expand(op_ctx *c, const tensor *t, int rank, const int64_t *dims,
                               ait_dtype wt, void *dst, const void **out)
{
    int64_t n = dims_prod(dims, 0, rank);
    if (tensor_numel(t) == n) return work_in(c, t, wt, dst, out); /* same layout */
    int64_t st[AIT_MAX_RANK], idx[AIT_MAX_RANK] = {0};
    bcast_strides(t, rank, dims, st);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) off += idx[d] * st[d];
        elem_set_f64(dst, wt, i, elem_get_f64(t->data, t->dtype, off));
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
    *out = dst;
    return AIT_OK;
}

static ait_status ln_run(op_ctx *c)
{
    ln_params p;
    TRY(ln_params_of(c, &p));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (tensor_numel(x) == 0) return AIT_OK;
    ait_dtype wt = x->dtype == AIT_F64 || p.ut == AIT_F64 ? AIT_F64 : AIT_F32;
    size_t ws = ait_dtype_size(wt);
    int64_t pn = p.prow * p.inner;
    size_t bytes[6] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)pn * ws, (size_t)pn * ws,
                       (size_t)p.outer * 8, (size_t)p.outer * 8};
    void *q[6];
    TRY(op_scratch_parts(c, 6, bytes, q));
    const int64_t *pd = x->dims + x->rank - p.pr;
    const void *s, *b = NULL;
    TRY(param_expand(c, c->in[1], p.pr, pd, wt, q[2], &s));
    if (has_in(c, 2)) TRY(param_expand(c, c->in[2], p.pr, pd, wt, q[3], &b));
    double *mean = q[4], *inv = q[5];
    const void *xs;
    TRY(work_in(c, x, wt, q[0], &xs));
    void *ys = work_out(y, wt, q[1]);
    KCALL(wt, layernorm, xs, ys, p.outer, p.inner, p.prow, s, b,
          attr_float(c->n, "epsilon", 1e-5f), mean, inv);
    TRY(work_done(c, y, ys, wt));
    if (has_out(c, 1)) convert_floats(mean, AIT_F64, c->out[1]->data, c->out[1]->dtype, p.outer);
    if (has_out(c, 2)) convert_floats(inv, AIT_F64, c->out[2]->data, c->out[2]->dtype, p.outer);
    return AIT_OK;
}

/* ---- RMSNormalization ---------------------------------------------------- */

/* LayerNormalization's parameters (no B); Y takes scale's dtype, which may
 * differ from X's. */
static ait_status rms_infer(op_ctx *c)
{
    ln_params p;
    TRY(ln_params_of(c, &p));
    set_out(c, 0, c->in[1]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status rms_run(op_ctx *c)
{
    ln_params p;
    TRY(ln_params_of(c, &p));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (tensor_numel(x) == 0) return AIT_OK;
    ait_dtype wt = x->dtype == AIT_F64 || y->dtype == AIT_F64 || p.ut == AIT_F64 ? AIT_F64
                                                                                 : AIT_F32;
    size_t bytes[3] = {work_bytes(x, wt), work_bytes(y, wt),
                       (size_t)(p.prow * p.inner) * ait_dtype_size(wt)};
    void *q[3];
    TRY(op_scratch_parts(c, 3, bytes, q));
    const void *s, *xs;
    TRY(param_expand(c, c->in[1], p.pr, x->dims + x->rank - p.pr, wt, q[2], &s));
    TRY(work_in(c, x, wt, q[0], &xs));
    void *ys = work_out(y, wt, q[1]);
    KCALL(wt, rmsnorm, xs, ys, p.outer, p.inner, p.prow, s, attr_float(c->n, "epsilon", 1e-5f));
    return work_done(c, y, ys, wt);
}

/* ---- LRN ----------------------------------------------------------------- */

static ait_status lrn_check(op_ctx *c, int64_t *size)
{
    TRY(need_in(c, 0, "X"));
    TRY(need_y(c));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "X"));
    if (x->rank < 2)
        return err_set(c->err, AIT_E_SHAPE, "X must have rank >= 2 (N x C x ...), not %d",
                       x->rank);
    if (!node_attr(c->n, "size"))
        return err_set(c->err, AIT_E_INVALID_ARG, "attribute size is required");
    *size = attr_int(c->n, "size", 1);
    if (*size < 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "size must be positive, not %lld",
                       (long long)*size);
    return AIT_OK;
}

static ait_status lrn_infer(op_ctx *c)
{
    int64_t size;
    TRY(lrn_check(c, &size));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status lrn_run(op_ctx *c)
{
    int64_t size;
    TRY(lrn_check(c, &size));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (tensor_numel(x) == 0) return AIT_OK;
    ait_dtype wt = work_dtype(x->dtype);
    int64_t S = dims_prod(x->dims, 2, x->rank);
    size_t bytes[3] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)S * ait_dtype_size(wt)};
    void *p[3];
    TRY(op_scratch_parts(c, 3, bytes, p));
    const void *xs;
    TRY(work_in(c, x, wt, p[0], &xs));
    void *ys = work_out(y, wt, p[1]);
    void *acc = p[2];
    KCALL(wt, lrn, xs, ys, x->dims[0], x->dims[1], S, size, attr_float(c->n, "alpha", 1e-4f),
          attr_float(c->n, "beta", 0.75f), attr_float(c->n, "bias", 1.0f), acc);
    return work_done(c, y, ys, wt);
}

/* ---- MeanVarianceNormalization ------------------------------------------- */

/* y = (x - mean) / (sqrt(var) + 1e-9) with mean and var over `axes`
 * (default [0, 2, 3]), as the ONNX function defines it. Sets reduced[d]. */
static ait_status mvn_axes(op_ctx *c, bool *reduced)
{
    TRY(need_in(c, 0, "X"));
    TRY(need_y(c));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "X"));
    static const int64_t dflt[] = {0, 2, 3};
    int n;
    const int64_t *axes = attr_ints(c->n, "axes", &n);
    if (!axes) {
        axes = dflt;
        n = 3;
    }
    int rank = x->rank ? x->rank : 1; /* a scalar is treated as [1] */
    for (int d = 0; d < rank; d++) reduced[d] = false;
    for (int i = 0; i < n; i++) {
        int d;
        TRY(norm_axis(c, axes[i], rank, &d));
        if (reduced[d])
            return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is repeated in axes",
                           (long long)axes[i]);
        reduced[d] = true;
    }
    return AIT_OK;
}

static ait_status mvn_infer(op_ctx *c)
{
    bool reduced[AIT_MAX_RANK];
    TRY(mvn_axes(c, reduced));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status mvn_run(op_ctx *c)
{
    bool reduced[AIT_MAX_RANK];
    TRY(mvn_axes(c, reduced));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t n = tensor_numel(x);
    if (n == 0) return AIT_OK;
    int rank = x->rank ? x->rank : 1;
    int64_t one = 1, kst[AIT_MAX_RANK], nk = 1;
    const int64_t *dims = x->rank ? x->dims : &one;
    for (int d = rank - 1; d >= 0; d--) { /* strides in the array of kept positions */
        kst[d] = reduced[d] ? 0 : nk;
        if (!reduced[d]) nk *= dims[d];
    }
    double cnt = (double)(n / nk);
    ait_dtype wt = work_dtype(x->dtype);
    size_t bytes[4] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)nk * 8, (size_t)nk * 8};
    void *p[4];
    TRY(op_scratch_parts(c, 4, bytes, p));
    double *mean = p[2], *var = p[3];
    memset(mean, 0, nk * 8);
    memset(var, 0, nk * 8);
    const void *xs;
    TRY(work_in(c, x, wt, p[0], &xs));
    void *ys = work_out(y, wt, p[1]);
    KCALL(wt, mvn_pass, 0, xs, ys, rank, dims, kst, mean, var);
    for (int64_t i = 0; i < nk; i++) mean[i] /= cnt;
    KCALL(wt, mvn_pass, 1, xs, ys, rank, dims, kst, mean, var);
    for (int64_t i = 0; i < nk; i++) var[i] /= cnt;
    KCALL(wt, mvn_pass, 2, xs, ys, rank, dims, kst, mean, var);
    return work_done(c, y, ys, wt);
}

/* ---- LpNormalization ------------------------------------------------------ */

/* x / ||x||_p along one axis (p 1 or 2); a zero norm gives zeros. Versions 1
 * and 22 differ only in 22's bfloat16. */
static ait_status lpn_layout(op_ctx *c, int *p, int64_t *outer, int64_t *len, int64_t *inner)
{
    TRY(need_y(c));
    TRY(need_in(c, 0, "input"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "input"));
    int64_t pv = attr_int(c->n, "p", 2);
    if (pv != 1 && pv != 2)
        return err_set(c->err, AIT_E_INVALID_ARG, "p must be 1 or 2, not %lld", (long long)pv);
    *p = (int)pv;
    if (x->rank == 0) return err_set(c->err, AIT_E_SHAPE, "input must have rank >= 1");
    int axis;
    TRY(norm_axis(c, attr_int(c->n, "axis", -1), x->rank, &axis));
    *outer = dims_prod(x->dims, 0, axis);
    *len = x->dims[axis];
    *inner = dims_prod(x->dims, axis + 1, x->rank);
    return AIT_OK;
}

static ait_status lpn_infer(op_ctx *c)
{
    int p;
    int64_t outer, len, inner;
    TRY(lpn_layout(c, &p, &outer, &len, &inner));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status lpn_run(op_ctx *c)
{
    int p;
    int64_t outer, len, inner;
    TRY(lpn_layout(c, &p, &outer, &len, &inner));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (tensor_numel(x) == 0) return AIT_OK;
    ait_dtype wt = work_dtype(x->dtype);
    size_t bytes[3] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)inner * 8};
    void *s[3];
    TRY(op_scratch_parts(c, 3, bytes, s));
    const void *xs;
    TRY(work_in(c, x, wt, s[0], &xs));
    void *ys = work_out(y, wt, s[1]);
    KCALL(wt, lp_normalize, xs, ys, outer, len, inner, p, s[2]);
    return work_done(c, y, ys, wt);
}

OP_TABLE(norm,
         {"BatchNormalization", 5, 5, 1, 5, 0, bn_infer, bn_run},
         {"InstanceNormalization", 3, 3, 1, 1, 0, in_infer, in_run},
         {"LayerNormalization", 2, 3, 1, 3, 0, ln_infer, ln_run},
         {"RMSNormalization", 2, 2, 1, 1, 0, rms_infer, rms_run},
         {"GroupNormalization", 3, 3, 1, 1, 0, groupnorm_infer, groupnorm_run},
         {"LRN", 1, 1, 1, 1, 0, lrn_infer, lrn_run},
         {"MeanVarianceNormalization", 1, 1, 1, 1, 0, mvn_infer, mvn_run},
         {"Softmax", 1, 1, 1, 1, 0, sm_infer, softmax_run},
         {"LogSoftmax", 1, 1, 1, 1, 0, sm_infer, logsoftmax_run},
         {"Hardmax", 1, 1, 1, 1, 0, sm_infer, hardmax_run},
         {"LpNormalization", 1, 1, 1, 1, 0, lpn_infer, lpn_run});
