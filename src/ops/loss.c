/* Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * Both views an input [N, C, d1..dk] as [N, C, D] (D = d1*..*dk, 1 for a
 * 2-D input) and a target [N, d1..dk] as [N, D]. SoftmaxCrossEntropyLoss is
 * LogSoftmax over axis 1 followed by the NLL gather.
 *
 * Only the log-softmax touches every element, so it runs in the work dtype
 * (float32, or double for float64 data; float16/bfloat16 are widened into
 * float32 scratch). The NLL gather and the reductions touch N*D elements and
 * are done in double through per-element accessors. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ops/op.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

/* ---- element access for the O(N*D) paths (floats: elem_get_f64) ---------- */

static inline int64_t geti(const void *p, ait_dtype t, int64_t i)
{
    return t == AIT_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* ---- log-softmax over axis 1 of [N, C, D] --------------------------------- */

/* The inner loops run along D (contiguous) so they vectorise; mx and sm are
 * D-element row buffers. y may alias x. */
#define LOGSOFTMAX_KERNEL(T, EXP, LOG, SUF)                                                  \
    static void logsoftmax_##SUF(const T *x, T *y, int64_t N, int64_t C, int64_t D, T *mx,  \
                                 T *sm)                                                      \
    {                                                                                        \
        for (int64_t n = 0; n < N; n++) {                                                    \
            const T *xb = x + n * C * D;                                                     \
            T *yb = y + n * C * D;                                                           \
            for (int64_t d = 0; d < D; d++) {                                                \
                mx[d] = xb[d];                                                               \
                sm[d] = 0;                                                                   \
            }                                                                                \
            for (int64_t c = 1; c < C; c++)                                                  \
                for (int64_t d = 0; d < D; d++) {                                            \
                    T v = xb[c * D + d];                                                     \
                    mx[d] = v > mx[d] ? v : mx[d];                                           \
                }                                                                            \
            for (int64_t c = 0; c < C; c++)                                                  \
                for (int64_t d = 0; d < D; d++) sm[d] += EXP(xb[c * D + d] - mx[d]);         \
            for (int64_t d = 0; d < D; d++) mx[d] += LOG(sm[d]);                             \
            for (int64_t c = 0; c < C; c++)                                                  \
                for (int64_t d = 0; d < D; d++) yb[c * D + d] = xb[c * D + d] - mx[d];       \
        }                                                                                    \
    }
LOGSOFTMAX_KERNEL(float, expf, logf, f32)
LOGSOFTMAX_KERNEL(double, exp, log, f64)

/* ---- shared attribute and shape handling ---------------------------------- */

typedef struct loss_cfg {
    int reduction;
    bool has_ii;
    int64_t ii; /* ignore_index when has_ii */
    int64_t N, C, D;
} loss_cfg;

static ait_status get_cfg(op_ctx *c, loss_cfg *cfg)
{
    const char *r = attr_str(c->n, "reduction", "mean");
    if (strcmp(r, "none") == 0) cfg->reduction = RED_NONE;
    else if (strcmp(r, "sum") == 0) cfg->reduction = RED_SUM;
    else if (strcmp(r, "mean") == 0) cfg->reduction = RED_MEAN;
    else
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "reduction '%s' is not one of 'none', 'sum', 'mean'", r);
    cfg->has_ii = node_attr(c->n, "ignore_index") != NULL;
    cfg->ii = attr_int(c->n, "ignore_index", 0);

    const tensor *x = c->in[0];
    cfg->N = x->dims[0];
    cfg->C = x->dims[1];
    cfg->D = 1;
    for (int i = 2; i < x->rank; i++) cfg->D *= x->dims[i];
    return AIT_OK;
}

/* Checks input [N,C,d..], target [N,d..] and weight [C]; sets output 0 (the
 * loss: target's shape for 'none', a scalar otherwise). */
static ait_status infer_common(op_ctx *c, loss_cfg *cfg)
{
    if (!has_in(c, 0) || !has_in(c, 1))
        return err_set(c->err, AIT_E_INVALID_ARG, "inputs 0 (scores) and 1 (target) are required");
    if (!has_out(c, 0)) return err_set(c->err, AIT_E_INVALID_ARG, "output 0 is missing");
    const tensor *x = c->in[0], *t = c->in[1];
    TRY(check_dtype(c, x, "input", 4, AIT_F32, AIT_F64, AIT_F16, AIT_BF16));
    TRY(check_dtype(c, t, "target", 2, AIT_I32, AIT_I64));
    char b1[96], b2[96];
    if (x->rank < 2)
        return err_set(c->err, AIT_E_SHAPE, "input must have rank >= 2 ([N, C, ...]), got %s",
                       shape_str(x->dims, x->rank, b1, sizeof b1));
    bool ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int i = 1; ok && i < t->rank; i++) ok = t->dims[i] == x->dims[i + 1];
    if (!ok)
        return err_set(c->err, AIT_E_SHAPE, "target shape %s does not fit input shape %s "
                       "(expected [N, d1, ..., dk] for [N, C, d1, ..., dk])",
                       shape_str(t->dims, t->rank, b1, sizeof b1),
                       shape_str(x->dims, x->rank, b2, sizeof b2));
    if (has_in(c, 2)) {
        const tensor *w = c->in[2];
        if (w->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "weight dtype differs from input dtype");
        if (w->rank != 1 || w->dims[0] != x->dims[1])
            return err_set(c->err, AIT_E_SHAPE, "weight shape %s is not [C] = [%lld]",
                           shape_str(w->dims, w->rank, b1, sizeof b1), (long long)x->dims[1]);
    }
    TRY(get_cfg(c, cfg));
    if (cfg->reduction == RED_NONE) set_out(c, 0, x->dtype, t->rank, t->dims);
    else set_out(c, 0, x->dtype, 0, NULL);
    return AIT_OK;
}

/* The NLL gather and reduction: lp is [N,C,D] log-probabilities of dtype lt,
 * the loss goes to output 0. wbuf: C doubles of scratch for the weights. */
static ait_status nll(op_ctx *c, const loss_cfg *cfg, const void *lp, ait_dtype lt, double *wbuf)
{
    const tensor *t = c->in[1];
    tensor *y = c->out[0];
    const bool has_w = has_in(c, 2);
    const int64_t N = cfg->N, C = cfg->C, D = cfg->D;
    if (has_w)
        for (int64_t k = 0; k < C; k++) wbuf[k] = elem_get_f64(c->in[2]->data, c->in[2]->dtype, k);

    double sum = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            int64_t i = n * D + d, k = geti(t->data, t->dtype, i);
            double l = 0, w = 0;
            if (!(cfg->has_ii && k == cfg->ii)) {
                if (k < 0 || k >= C)
                    return err_set(c->err, AIT_E_INVALID_ARG,
                                   "target value %lld (at index %lld) is outside [0, %lld)%s",
                                   (long long)k, (long long)i, (long long)C,
                                   cfg->has_ii ? " and is not ignore_index" : "");
                w = has_w ? wbuf[k] : 1.0;
                l = -elem_get_f64(lp, lt, (n * C + k) * D + d) * w;
            }
            if (cfg->reduction == RED_NONE) elem_set_f64(y->data, y->dtype, i, l);
            sum += l;
            wsum += w;
        }
    if (cfg->reduction == RED_SUM) elem_set_f64(y->data, y->dtype, 0, sum);
    /* Ignored targets carry weight 0, so they are excluded from the mean too;
     * all targets ignored gives 0/0 = NaN, as the reference does. */
    else if (cfg->reduction == RED_MEAN) elem_set_f64(y->data, y->dtype, 0, sum / wsum);
    return AIT_OK;
}

/* ---- NegativeLogLikelihoodLoss -------------------------------------------- */

static ait_status nll_infer(op_ctx *c)
{
    loss_cfg cfg;
    return infer_common(c, &cfg);
}

static ait_status nll_run(op_ctx *c)
{
    loss_cfg cfg;
    TRY(get_cfg(c, &cfg));
    double *wbuf = NULL;
    if (has_in(c, 2) && cfg.C > 0 && !(wbuf = op_scratch(c, (size_t)cfg.C * sizeof(double))))
        return AIT_E_NOMEM;
    return nll(c, &cfg, c->in[0]->data, c->in[0]->dtype, wbuf);
}

/* ---- SoftmaxCrossEntropyLoss ---------------------------------------------- */

static ait_status sce_infer(op_ctx *c)
{
    loss_cfg cfg;
    TRY(infer_common(c, &cfg));
    if (has_out(c, 1)) set_out(c, 1, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status sce_run(op_ctx *c)
{
    loss_cfg cfg;
    TRY(get_cfg(c, &cfg));
    const tensor *x = c->in[0];
    const ait_dtype dt = x->dtype, wt = dt == AIT_F64 ? AIT_F64 : AIT_F32;
    const size_t es = ait_dtype_size(wt);
    const int64_t total = cfg.N * cfg.C * cfg.D;
    tensor *lpo = has_out(c, 1) ? c->out[1] : NULL;
    /* The log-probabilities go straight into output 1 when it exists and has
     * the work dtype; otherwise into scratch. */
    const bool direct = lpo && dt == wt;

    /* class weights, the row max and sum, the log-probabilities */
    size_t db = (size_t)cfg.D * es;
    size_t bytes[4] = {(size_t)cfg.C * sizeof(double), db, db, direct ? 0 : (size_t)total * es};
    void *s[4];
    TRY(op_scratch_parts(c, 4, bytes, s));
    void *lp = direct ? lpo->data : s[3];
    void *mx = s[1], *sm = s[2];

    if (dt == AIT_F16 || dt == AIT_BF16) convert_floats(x->data, dt, lp, AIT_F32, total);
    const void *src = (dt == AIT_F16 || dt == AIT_BF16) ? lp : x->data;
    if (cfg.C > 0) {
        if (wt == AIT_F64) logsoftmax_f64(src, lp, cfg.N, cfg.C, cfg.D, mx, sm);
        else logsoftmax_f32(src, lp, cfg.N, cfg.C, cfg.D, mx, sm);
    }
    if (lpo && !direct) convert_floats(lp, AIT_F32, lpo->data, dt, total);
    return nll(c, &cfg, lp, wt, s[0]);
}

OP_TABLE(loss,
         {.name = "NegativeLogLikelihoodLoss", .min_in = 2, .max_in = 3, .min_out = 1,
          .max_out = 1, .infer = nll_infer, .run = nll_run},
         {.name = "SoftmaxCrossEntropyLoss", .min_in = 2, .max_in = 3, .min_out = 1,
          .max_out = 2, .infer = sce_infer, .run = sce_run});
