/* Ops that carry a recurrent state from one decode step to the next
 * (opset 27): LinearAttention (linear, gated, delta and gated-delta
 * recurrences over a per-KV-head state matrix) and CausalConvWithState (a
 * depthwise causal 1-D convolution whose last k - 1 inputs are the state).
 * Both run the recurrence token by token in double, as the spec defines
 * them, and round once into the outputs. */
#include <math.h>
#include <string.h>

#include "ops/op.h"

/* Converts input t (NULL: none) to double in scratch part p. */
static ait_status to_f64(op_ctx *c, const tensor *t, void *p, const double **out)
{
    *out = NULL;
    if (!t) return AIT_OK;
    *out = p;
    return convert_elems(t->data, t->dtype, p, AIT_F64, tensor_numel(t), c->err);
}

static ait_status check_act(op_ctx *c, const tensor *t, const char *what)
{
    return check_dtype(c, t, what, 3, AIT_F32, AIT_F16, AIT_BF16);
}

static ait_status rank_err(op_ctx *c, const char *what, const tensor *t, const char *want)
{
    char s[128];
    return err_set(c->err, AIT_E_SHAPE, "%s has shape %s, expected %s", what,
                   shape_str(t->dims, t->rank, s, sizeof s), want);
}

/* ---- LinearAttention --------------------------------------------------- */

enum { LA_LINEAR, LA_GATED, LA_DELTA, LA_GATED_DELTA };
enum { LA_Q, LA_K, LA_V, LA_PAST, LA_DECAY, LA_BETA };

typedef struct la {
    int rule;
    int64_t B, T, Hq, Hkv, dk, dv;
    bool decay_per_key; /* decay is (B, T, Hkv * dk), else (B, T, Hkv) */
    bool beta_shared;   /* beta is (B, T, 1), else (B, T, Hkv) */
    double scale;
    ait_dtype st;       /* the state's dtype */
} la;

static ait_status la_params(op_ctx *c, la *p)
{
    static const char *const names[] = {"query", "key", "value", "past_state", "decay", "beta"};
    memset(p, 0, sizeof *p);
    static const char *const rules[] = {"linear", "gated", "delta", "gated_delta"};
    const char *r = attr_str(c->n, "update_rule", "gated_delta");
    p->rule = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(r, rules[i]) == 0) p->rule = i;
    if (p->rule < 0)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "update_rule '%s' is not linear, gated, delta or gated_delta", r);
    for (int i = 0; i < 6; i++) {
        if (i < 3) TRY(need_in(c, i, names[i]));
        if (!has_in(c, i)) continue;
        TRY(check_act(c, c->in[i], names[i]));
        if (i != LA_PAST && c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but query is %s", names[i],
                           ait_dtype_name(c->in[i]->dtype), ait_dtype_name(c->in[0]->dtype));
        if (i != LA_PAST && c->in[i]->rank != 3)
            return rank_err(c, names[i], c->in[i], "a 3-D (batch, seq, heads * size) tensor");
    }
    bool gated = p->rule == LA_GATED || p->rule == LA_GATED_DELTA;
    bool delta = p->rule == LA_DELTA || p->rule == LA_GATED_DELTA;
    if (gated && !has_in(c, LA_DECAY))
        return err_set(c->err, AIT_E_INVALID_ARG, "update_rule '%s' needs input decay", r);
    if (delta && !has_in(c, LA_BETA))
        return err_set(c->err, AIT_E_INVALID_ARG, "update_rule '%s' needs input beta", r);
    static const char *const heads[] = {"q_num_heads", "kv_num_heads"};
    int64_t *hv[] = {&p->Hq, &p->Hkv};
    for (int i = 0; i < 2; i++) {
        if (!node_attr(c->n, heads[i]))
            return err_set(c->err, AIT_E_INVALID_ARG, "attribute %s is required", heads[i]);
        *hv[i] = attr_int(c->n, heads[i], 0);
        if (*hv[i] < 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "%s must be positive, not %lld", heads[i],
                           (long long)*hv[i]);
    }
    if (p->Hq % p->Hkv)
        return err_set(c->err, AIT_E_INVALID_ARG, "q_num_heads %lld is not a multiple of "
                       "kv_num_heads %lld", (long long)p->Hq, (long long)p->Hkv);
    const tensor *q = c->in[LA_Q], *k = c->in[LA_K], *v = c->in[LA_V];
    p->B = q->dims[0];
    p->T = q->dims[1];
    for (int i = 1; i < 3; i++)
        if (c->in[i]->dims[0] != p->B || c->in[i]->dims[1] != p->T)
            return rank_err(c, names[i], c->in[i], "query's batch and sequence length");
    if (q->dims[2] % p->Hq || k->dims[2] % p->Hkv || v->dims[2] % p->Hkv)
        return err_set(c->err, AIT_E_SHAPE, "hidden sizes (%lld, %lld, %lld) are not multiples of "
                       "the head counts (%lld, %lld, %lld)", (long long)q->dims[2],
                       (long long)k->dims[2], (long long)v->dims[2], (long long)p->Hq,
                       (long long)p->Hkv, (long long)p->Hkv);
    p->dk = q->dims[2] / p->Hq;
    p->dv = v->dims[2] / p->Hkv;
    if (k->dims[2] / p->Hkv != p->dk)
        return err_set(c->err, AIT_E_SHAPE, "query and key head sizes differ (%lld, %lld)",
                       (long long)p->dk, (long long)(k->dims[2] / p->Hkv));
    p->st = q->dtype;
    if (has_in(c, LA_PAST)) {
        const tensor *s = c->in[LA_PAST];
        if (s->rank != 4 || s->dims[0] != p->B || s->dims[1] != p->Hkv || s->dims[2] != p->dk ||
            s->dims[3] != p->dv)
            return rank_err(c, "past_state", s, "(batch, kv_num_heads, d_k, d_v)");
        p->st = s->dtype;
    }
    if (has_in(c, LA_DECAY)) {
        const tensor *d = c->in[LA_DECAY];
        int64_t last = d->dims[2];
        p->decay_per_key = last == p->Hkv * p->dk;
        if (d->dims[0] != p->B || d->dims[1] != p->T || (last != p->Hkv * p->dk && last != p->Hkv))
            return rank_err(c, "decay", d, "(batch, seq, kv_num_heads * d_k) or "
                            "(batch, seq, kv_num_heads)");
    }
    if (has_in(c, LA_BETA)) {
        const tensor *b = c->in[LA_BETA];
        p->beta_shared = b->dims[2] == 1;
        if (b->dims[0] != p->B || b->dims[1] != p->T || (b->dims[2] != p->Hkv && b->dims[2] != 1))
            return rank_err(c, "beta", b, "(batch, seq, kv_num_heads) or (batch, seq, 1)");
    }
    float sc = attr_float(c->n, "scale", 0);
    p->scale = sc != 0 ? sc : 1 / sqrt((double)p->dk);
    if (attr_int(c->n, "chunk_size", 64) < 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "chunk_size must be positive");
    return AIT_OK;
}

static ait_status la_infer(op_ctx *c)
{
    la p;
    TRY(la_params(c, &p));
    int64_t y[3] = {p.B, p.T, p.Hq * p.dv}, s[4] = {p.B, p.Hkv, p.dk, p.dv};
    set_out(c, 0, c->in[0]->dtype, 3, y);
    set_out(c, 1, p.st, 4, s);
    return AIT_OK;
}

static ait_status la_run(op_ctx *c)
{
    la p;
    TRY(la_params(c, &p));
    const tensor *in[6];
    size_t bytes[9];
    for (int i = 0; i < 6; i++) {
        in[i] = has_in(c, i) ? c->in[i] : NULL;
        bytes[i] = in[i] ? (size_t)tensor_numel(in[i]) * 8 : 0;
    }
    int64_t ns = p.B * p.Hkv * p.dk * p.dv;
    bytes[6] = (size_t)ns * 8;                          /* the state */
    bytes[7] = (size_t)tensor_numel(c->out[0]) * 8;     /* output */
    bytes[8] = (size_t)(p.dv + p.dk) * 8;               /* one prediction, one gate row */
    void *part[9];
    TRY(op_scratch_parts(c, 9, bytes, part));
    const double *x[6];
    for (int i = 0; i < 6; i++) TRY(to_f64(c, in[i], part[i], &x[i]));
    double *S = part[6], *Y = part[7], *pred = part[8], *gate = pred + p.dv;
    if (x[LA_PAST]) memcpy(S, x[LA_PAST], bytes[6]);
    else memset(S, 0, bytes[6]);
    int64_t grp = p.Hq / p.Hkv, dk = p.dk, dv = p.dv;
    bool gated = p.rule == LA_GATED || p.rule == LA_GATED_DELTA;
    bool delta = p.rule == LA_DELTA || p.rule == LA_GATED_DELTA;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t t = 0; t < p.T; t++) {
            int64_t bt = b * p.T + t;
            for (int64_t g = 0; g < p.Hkv; g++) {
                double *s = S + (b * p.Hkv + g) * dk * dv;
                const double *k = x[LA_K] + bt * p.Hkv * dk + g * dk;
                const double *v = x[LA_V] + bt * p.Hkv * dv + g * dv;
                if (gated) { /* S = exp(g_t) * S, per key row or per head */
                    for (int64_t i = 0; i < dk; i++)
                        gate[i] = exp(p.decay_per_key ? x[LA_DECAY][(bt * p.Hkv + g) * dk + i]
                                                      : x[LA_DECAY][bt * p.Hkv + g]);
                    for (int64_t i = 0; i < dk; i++)
                        for (int64_t j = 0; j < dv; j++) s[i * dv + j] *= gate[i];
                }
                if (delta) { /* S += beta * k (v - S^T k), S already decayed */
                    double beta = x[LA_BETA][p.beta_shared ? bt : bt * p.Hkv + g];
                    for (int64_t j = 0; j < dv; j++) {
                        double a = 0;
                        for (int64_t i = 0; i < dk; i++) a += s[i * dv + j] * k[i];
                        pred[j] = beta * (v[j] - a);
                    }
                } else {
                    memcpy(pred, v, (size_t)dv * sizeof *pred);
                }
                for (int64_t i = 0; i < dk; i++)
                    for (int64_t j = 0; j < dv; j++) s[i * dv + j] += k[i] * pred[j];
            }
            /* o = scale * q^T S, query head h reading KV head h / grp */
            for (int64_t h = 0; h < p.Hq; h++) {
                const double *s = S + (b * p.Hkv + h / grp) * dk * dv;
                const double *q = x[LA_Q] + bt * p.Hq * dk + h * dk;
                double *o = Y + bt * p.Hq * dv + h * dv;
                for (int64_t j = 0; j < dv; j++) {
                    double a = 0;
                    for (int64_t i = 0; i < dk; i++) a += q[i] * s[i * dv + j];
                    o[j] = p.scale * a;
                }
            }
        }
    TRY(convert_elems(Y, AIT_F64, c->out[0]->data, c->out[0]->dtype, tensor_numel(c->out[0]),
                      c->err));
    if (has_out(c, 1))
        TRY(convert_elems(S, AIT_F64, c->out[1]->data, c->out[1]->dtype, ns, c->err));
    return AIT_OK;
}

/* ---- CausalConvWithState ----------------------------------------------- */

enum { CC_X, CC_W, CC_BIAS, CC_PAST };

typedef struct ccs {
    int64_t B, C, L, k;
    bool silu;
} ccs;

static ait_status cc_params(op_ctx *c, ccs *p)
{
    static const char *const names[] = {"input", "weight", "bias", "past_state"};
    for (int i = 0; i < 4; i++) {
        if (i < 2) TRY(need_in(c, i, names[i]));
        if (!has_in(c, i)) continue;
        TRY(check_act(c, c->in[i], names[i]));
        if (c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but input is %s", names[i],
                           ait_dtype_name(c->in[i]->dtype), ait_dtype_name(c->in[0]->dtype));
    }
    const tensor *x = c->in[CC_X], *w = c->in[CC_W];
    if (x->rank != 3) return rank_err(c, "input", x, "(batch, channels, length)");
    p->B = x->dims[0];
    p->C = x->dims[1];
    p->L = x->dims[2];
    if (w->rank != 3 || w->dims[0] != p->C || w->dims[1] != 1 || w->dims[2] < 1)
        return rank_err(c, "weight", w, "(channels, 1, k) with k >= 1");
    p->k = w->dims[2];
    if (has_in(c, CC_BIAS) && (c->in[CC_BIAS]->rank != 1 || c->in[CC_BIAS]->dims[0] != p->C))
        return rank_err(c, "bias", c->in[CC_BIAS], "(channels)");
    if (has_in(c, CC_PAST)) {
        const tensor *s = c->in[CC_PAST];
        if (s->rank != 3 || s->dims[0] != p->B || s->dims[1] != p->C || s->dims[2] != p->k - 1)
            return rank_err(c, "past_state", s, "(batch, channels, k - 1)");
    }
    const char *a = attr_str(c->n, "activation", "none");
    p->silu = strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0;
    if (!p->silu && strcmp(a, "none") != 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "activation '%s' is not silu, swish or none", a);
    return AIT_OK;
}

static ait_status cc_infer(op_ctx *c)
{
    ccs p;
    TRY(cc_params(c, &p));
    int64_t s[3] = {p.B, p.C, p.k - 1};
    set_out(c, 0, c->in[0]->dtype, 3, c->in[0]->dims);
    set_out(c, 1, c->in[0]->dtype, 3, s);
    return AIT_OK;
}

static ait_status cc_run(op_ctx *c)
{
    ccs p;
    TRY(cc_params(c, &p));
    const tensor *tb = has_in(c, CC_BIAS) ? c->in[CC_BIAS] : NULL;
    const tensor *tp = has_in(c, CC_PAST) ? c->in[CC_PAST] : NULL;
    int64_t P = p.L + p.k - 1; /* the padded sequence: state, then input */
    size_t bytes[6] = {(size_t)tensor_numel(c->in[CC_X]) * 8, (size_t)tensor_numel(c->in[CC_W]) * 8,
                       tb ? (size_t)p.C * 8 : 0, tp ? (size_t)tensor_numel(tp) * 8 : 0,
                       (size_t)P * 8, (size_t)(p.B * p.C * (p.L + p.k - 1)) * 8};
    void *part[6];
    TRY(op_scratch_parts(c, 6, bytes, part));
    const double *x, *w, *bias, *past;
    TRY(to_f64(c, c->in[CC_X], part[0], &x));
    TRY(to_f64(c, c->in[CC_W], part[1], &w));
    TRY(to_f64(c, tb, part[2], &bias));
    TRY(to_f64(c, tp, part[3], &past));
    double *pad = part[4], *out = part[5]; /* out: y [B][C][L], then state [B][C][k-1] */
    double *st = out + p.B * p.C * p.L;
    for (int64_t bc = 0; bc < p.B * p.C; bc++) {
        int64_t ch = bc % p.C;
        if (past) memcpy(pad, past + bc * (p.k - 1), (size_t)(p.k - 1) * sizeof *pad);
        else memset(pad, 0, (size_t)(p.k - 1) * sizeof *pad);
        memcpy(pad + p.k - 1, x + bc * p.L, (size_t)p.L * sizeof *pad);
        const double *wk = w + ch * p.k;
        for (int64_t t = 0; t < p.L; t++) {
            double a = bias ? bias[ch] : 0;
            for (int64_t i = 0; i < p.k; i++) a += wk[i] * pad[t + i];
            out[bc * p.L + t] = p.silu ? a / (1 + exp(-a)) : a;
        }
        memcpy(st + bc * (p.k - 1), pad + p.L, (size_t)(p.k - 1) * sizeof *st);
    }
    TRY(convert_elems(out, AIT_F64, c->out[0]->data, c->out[0]->dtype, p.B * p.C * p.L, c->err));
    if (has_out(c, 1))
        TRY(convert_elems(st, AIT_F64, c->out[1]->data, c->out[1]->dtype, p.B * p.C * (p.k - 1),
                          c->err));
    return AIT_OK;
}

OP_TABLE(recurrent, OP_DEF("LinearAttention", 3, 6, 1, 2, la_infer, la_run),
         OP_DEF("CausalConvWithState", 2, 4, 1, 2, cc_infer, cc_run));
