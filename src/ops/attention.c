/* Attention (opsets 23, 24, 25) and ai.onnx.preview's FlexAttention (1): scaled dot-product attention over 3-D
 * (heads packed in the last axis) or 4-D (batch, heads, seq, size) inputs,
 * with grouped KV heads, an internal KV cache (past_* in, present_* out),
 * an external one (nonpad_kv_seqlen, 24), a causal frontier, sliding
 * windows (25), a soft cap and a bool or additive mask.
 *
 * Everything is computed in double (Q, K, V may be of different float
 * types; float16 and bfloat16 would lose too much in their own width) and
 * rounded once into the outputs. Version differences: 23 has no
 * nonpad_kv_seqlen, windows arrive in 25; the rest is one meaning (the
 * errata of 24 and 25 apply to 23 as well: bottom-right causal alignment,
 * zero rows where every key is masked, qk_matmul_output in Q's type). */
#include <math.h>
#include <string.h>

#include "ops/op.h"

enum { IN_Q, IN_K, IN_V, IN_MASK, IN_PK, IN_PV, IN_NONPAD };
enum { OUT_Y, OUT_PK, OUT_PV, OUT_QK };

typedef struct attn {
    bool packed;                 /* 3-D inputs */
    int64_t B, Hq, Hkv, Sq, Skv, P, T, D, Dv;
    double scale, softcap;
    bool causal;
    int64_t left, right;         /* window bounds, -1: unbounded */
    int mode;                    /* qk_matmul_output_mode */
    ait_dtype sm;                /* softmax_precision, AIT_UNDEFINED: none */
    int64_t mdims[4];            /* attn_mask's dims right-aligned to 4 (1 where absent) */
} attn;

static ait_status heads_attr(op_ctx *c, const char *name, int64_t *v)
{
    const attr *a = node_attr(c->n, name);
    if (!a) return err_set(c->err, AIT_E_INVALID_ARG, "3-D inputs need attribute %s", name);
    *v = attr_int(c->n, name, 0);
    if (*v < 1) return err_set(c->err, AIT_E_INVALID_ARG, "%s must be positive, not %lld", name,
                               (long long)*v);
    return AIT_OK;
}

/* Splits hidden size h into heads of equal size. */
static ait_status head_size(op_ctx *c, const char *what, int64_t h, int64_t heads, int64_t *d)
{
    if (h % heads)
        return err_set(c->err, AIT_E_SHAPE, "%s hidden size %lld is not a multiple of %lld heads",
                       what, (long long)h, (long long)heads);
    *d = h / heads;
    return AIT_OK;
}

static ait_status shape_err(op_ctx *c, const char *what, const tensor *t, const char *want)
{
    char s[128];
    return err_set(c->err, AIT_E_SHAPE, "%s has shape %s, expected %s", what,
                   shape_str(t->dims, t->rank, s, sizeof s), want);
}

static ait_status attn_params(op_ctx *c, attn *p)
{
    memset(p, 0, sizeof *p);
    static const char *const names[] = {"Q", "K", "V"};
    for (int i = 0; i < 3; i++) {
        TRY(need_in(c, i, names[i]));
        TRY(check_float(c, c->in[i], names[i]));
    }
    const tensor *q = c->in[IN_Q], *k = c->in[IN_K], *v = c->in[IN_V];
    int ver = c->n->version;
    if (q->rank != 3 && q->rank != 4)
        return err_set(c->err, AIT_E_SHAPE, "Q must have rank 3 or 4, not %d", q->rank);
    if (k->dtype != q->dtype)
        return err_set(c->err, AIT_E_DTYPE, "K is %s but Q is %s: they must have one type",
                       ait_dtype_name(k->dtype), ait_dtype_name(q->dtype));
    if (k->rank != q->rank || v->rank != q->rank)
        return err_set(c->err, AIT_E_SHAPE, "Q, K and V must have the same rank (%d, %d, %d)",
                       q->rank, k->rank, v->rank);
    if (ver < 24 && has_in(c, IN_NONPAD))
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "input nonpad_kv_seqlen needs Attention version 24 or above");
    p->packed = q->rank == 3;
    p->B = q->dims[0];
    if (k->dims[0] != p->B || v->dims[0] != p->B)
        return err_set(c->err, AIT_E_SHAPE, "Q, K and V batch sizes differ (%lld, %lld, %lld)",
                       (long long)p->B, (long long)k->dims[0], (long long)v->dims[0]);
    if (p->packed) {
        TRY(heads_attr(c, "q_num_heads", &p->Hq));
        TRY(heads_attr(c, "kv_num_heads", &p->Hkv));
        p->Sq = q->dims[1];
        p->Skv = k->dims[1];
        if (v->dims[1] != p->Skv)
            return err_set(c->err, AIT_E_SHAPE, "K and V sequence lengths differ (%lld, %lld)",
                           (long long)p->Skv, (long long)v->dims[1]);
        int64_t dk = 0;
        TRY(head_size(c, "Q", q->dims[2], p->Hq, &p->D));
        TRY(head_size(c, "K", k->dims[2], p->Hkv, &dk));
        TRY(head_size(c, "V", v->dims[2], p->Hkv, &p->Dv));
        if (dk != p->D)
            return err_set(c->err, AIT_E_SHAPE, "Q and K head sizes differ (%lld, %lld)",
                           (long long)p->D, (long long)dk);
    } else {
        p->Hq = q->dims[1];
        p->Hkv = k->dims[1];
        p->Sq = q->dims[2];
        p->Skv = k->dims[2];
        p->D = q->dims[3];
        p->Dv = v->dims[3];
        if (v->dims[1] != p->Hkv || v->dims[2] != p->Skv)
            return shape_err(c, "V", v, "K's batch, heads and sequence length");
        if (k->dims[3] != p->D)
            return err_set(c->err, AIT_E_SHAPE, "Q and K head sizes differ (%lld, %lld)",
                           (long long)p->D, (long long)k->dims[3]);
    }
    if (p->Hkv < 1 || p->Hq % p->Hkv)
        return err_set(c->err, AIT_E_SHAPE, "%lld query heads are not a multiple of %lld KV heads",
                       (long long)p->Hq, (long long)p->Hkv);
    /* The internal cache: past_key and past_value come together, 4-D. */
    if (has_in(c, IN_PK) != has_in(c, IN_PV))
        return err_set(c->err, AIT_E_INVALID_ARG, "past_key and past_value must be given together");
    if (has_out(c, OUT_PK) != has_out(c, OUT_PV))
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "present_key and present_value must be asked for together");
    if (has_in(c, IN_PK)) {
        const tensor *pk = c->in[IN_PK], *pv = c->in[IN_PV];
        if (pk->dtype != q->dtype || pv->dtype != v->dtype)
            return err_set(c->err, AIT_E_DTYPE, "past_key and past_value must have the types "
                           "of K and V (%s, %s), not %s and %s", ait_dtype_name(q->dtype),
                           ait_dtype_name(v->dtype), ait_dtype_name(pk->dtype),
                           ait_dtype_name(pv->dtype));
        if (pk->rank != 4 || pk->dims[0] != p->B || pk->dims[1] != p->Hkv ||
            pk->dims[3] != p->D)
            return shape_err(c, "past_key", pk, "(batch, kv_num_heads, past_len, head_size)");
        p->P = pk->dims[2];
        if (pv->rank != 4 || pv->dims[0] != p->B || pv->dims[1] != p->Hkv ||
            pv->dims[2] != p->P || pv->dims[3] != p->Dv)
            return shape_err(c, "past_value", pv, "(batch, kv_num_heads, past_len, v_head_size)");
    }
    p->T = p->P + p->Skv;
    if (has_in(c, IN_NONPAD)) {
        const tensor *np = c->in[IN_NONPAD];
        if (np->dtype != AIT_I64)
            return err_set(c->err, AIT_E_DTYPE, "nonpad_kv_seqlen must be int64, not %s",
                           ait_dtype_name(np->dtype));
        if (np->rank != 1 || np->dims[0] != p->B)
            return shape_err(c, "nonpad_kv_seqlen", np, "(batch_size)");
        if (has_in(c, IN_PK) || has_out(c, OUT_PK))
            return err_set(c->err, AIT_E_INVALID_ARG, "nonpad_kv_seqlen (an external cache) "
                           "cannot be used with past or present key and value");
    }
    for (int i = 0; i < 4; i++) p->mdims[i] = 1;
    if (has_in(c, IN_MASK)) {
        const tensor *m = c->in[IN_MASK];
        if (m->dtype != AIT_BOOL && !dtype_is_float(m->dtype) && !dtype_is_int(m->dtype))
            return err_set(c->err, AIT_E_DTYPE, "attn_mask has unsupported dtype %s",
                           ait_dtype_name(m->dtype));
        if (m->rank < 1 || m->rank > 4)
            return shape_err(c, "attn_mask", m, "rank 1 to 4");
        const int64_t want[4] = {p->B, p->Hq, p->Sq, p->T};
        for (int i = 0; i < m->rank; i++) p->mdims[4 - m->rank + i] = m->dims[i];
        for (int i = 0; i < 4; i++) {
            int64_t d = p->mdims[i];
            /* the last axis may be shorter (1 included, as onnx's reference
             * pads it): the missing keys are masked out */
            bool ok = d == 1 || d == want[i] || (i == 3 && d < want[i]);
            if (!ok) return shape_err(c, "attn_mask", m, "one that broadcasts to "
                                      "(batch, q_num_heads, q_seq_len, total_seq_len)");
        }
    }
    /* attributes */
    float sc = attr_float(c->n, "scale", 0);
    if (node_attr(c->n, "scale") && !(sc > 0 || sc < 0))
        return err_set(c->err, AIT_E_INVALID_ARG, "scale must be a nonzero number");
    p->scale = node_attr(c->n, "scale") ? sc : 1 / sqrt((double)p->D);
    p->softcap = attr_float(c->n, "softcap", 0);
    if (!(p->softcap >= 0))
        return err_set(c->err, AIT_E_INVALID_ARG, "softcap must be >= 0, not %g", p->softcap);
    int64_t causal = attr_int(c->n, "is_causal", 0);
    if (causal != 0 && causal != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "is_causal must be 0 or 1, not %lld",
                       (long long)causal);
    p->causal = causal;
    int64_t mode = attr_int(c->n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return err_set(c->err, AIT_E_INVALID_ARG, "qk_matmul_output_mode must be 0 to 3, not %lld",
                       (long long)mode);
    p->mode = (int)mode;
    p->sm = AIT_UNDEFINED;
    if (node_attr(c->n, "softmax_precision")) {
        int64_t s = attr_int(c->n, "softmax_precision", 0);
        if (s != AIT_F32 && s != AIT_F16 && s != AIT_F64 && s != AIT_BF16)
            return err_set(c->err, AIT_E_INVALID_ARG, "softmax_precision %lld is not float, "
                           "float16, double or bfloat16", (long long)s);
        p->sm = (ait_dtype)s;
    }
    static const char *const win[] = {"left_window_size", "right_window_size"};
    int64_t *wv[] = {&p->left, &p->right};
    for (int i = 0; i < 2; i++) {
        *wv[i] = attr_int(c->n, win[i], -1);
        if (node_attr(c->n, win[i]) && ver < 25)
            return err_set(c->err, AIT_E_INVALID_ARG, "%s needs Attention version 25 or above",
                           win[i]);
        if (*wv[i] < -1)
            return err_set(c->err, AIT_E_INVALID_ARG, "%s must be -1 or >= 0, not %lld", win[i],
                           (long long)*wv[i]);
    }
    return AIT_OK;
}

static ait_status attn_infer(op_ctx *c)
{
    attn p;
    TRY(attn_params(c, &p));
    const tensor *q = c->in[IN_Q];
    if (p.packed) {
        int64_t d[3] = {p.B, p.Sq, p.Hq * p.Dv};
        set_out(c, OUT_Y, q->dtype, 3, d);
    } else {
        int64_t d[4] = {p.B, p.Hq, p.Sq, p.Dv};
        set_out(c, OUT_Y, q->dtype, 4, d);
    }
    int64_t dk[4] = {p.B, p.Hkv, p.T, p.D}, dv[4] = {p.B, p.Hkv, p.T, p.Dv};
    set_out(c, OUT_PK, q->dtype, 4, dk);
    set_out(c, OUT_PV, c->in[IN_V]->dtype, 4, dv);
    int64_t dq[4] = {p.B, p.Hq, p.Sq, p.T};
    set_out(c, OUT_QK, q->dtype, 4, dq);
    return AIT_OK;
}

/* Offset of element (b, h, s, 0) of a 3-D or 4-D Q/K/V with H heads, S
 * positions and head size D. */
static int64_t at(bool packed, int64_t b, int64_t h, int64_t s, int64_t H, int64_t S, int64_t D)
{
    return packed ? (b * S + s) * H * D + h * D : ((b * H + h) * S + s) * D;
}

/* The cache in 4-D: past (P positions, may be NULL) then the new x (S
 * positions, 3-D or 4-D), into dst [B][H][P+S][D]. */
static void concat_cache(const double *past, const double *x, bool packed, int64_t B, int64_t H,
                         int64_t P, int64_t S, int64_t D, double *dst)
{
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            double *o = dst + (b * H + h) * (P + S) * D;
            if (P) memcpy(o, past + (b * H + h) * P * D, (size_t)(P * D) * sizeof *o);
            for (int64_t s = 0; s < S; s++)
                memcpy(o + (P + s) * D, x + at(packed, b, h, s, H, S, D), (size_t)D * sizeof *o);
        }
}

/* Rounds v to dtype t (float32, float16, bfloat16) or leaves it (double). */
static double round_to(ait_dtype t, double v)
{
    double r = v;
    if (t != AIT_F64 && t != AIT_UNDEFINED) {
        uint16_t h[4] = {0};
        elem_set_f64(h, t, 0, v);
        r = elem_get_f64(h, t, 0);
    }
    return r;
}

static ait_status attn_run(op_ctx *c)
{
    attn p;
    TRY(attn_params(c, &p));
    const tensor *tq = c->in[IN_Q], *tk = c->in[IN_K], *tv = c->in[IN_V];
    const tensor *tm = has_in(c, IN_MASK) ? c->in[IN_MASK] : NULL;
    const tensor *tpk = has_in(c, IN_PK) ? c->in[IN_PK] : NULL;
    const tensor *tpv = has_in(c, IN_PV) ? c->in[IN_PV] : NULL;
    const int64_t *nonpad = has_in(c, IN_NONPAD) ? c->in[IN_NONPAD]->data : NULL;
    for (int64_t b = 0; nonpad && b < p.B; b++)
        if (nonpad[b] < 0 || nonpad[b] > p.T)
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "nonpad_kv_seqlen[%lld] = %lld is outside [0, %lld]", (long long)b,
                           (long long)nonpad[b], (long long)p.T);
    const ait_dtype W = AIT_F64;
    scratch_layout L = {0};
    const void *q, *k, *v, *pk = NULL, *pv = NULL, *m = NULL;
    double *kc = NULL, *vc = NULL, *row = NULL, *acc = NULL, *y = NULL, *qk = NULL;
    void *bq = NULL, *bk = NULL, *bv = NULL, *bpk = NULL, *bpv = NULL, *bm = NULL;
    int64_t nm = tm ? tensor_numel(tm) : 0, ny = tensor_numel(c->out[OUT_Y]);
    int64_t nqk = has_out(c, OUT_QK) ? tensor_numel(c->out[OUT_QK]) : 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) TRY(scratch_commit(c, &L));
        bq = scratch_take(&L, tensor_numel(tq), 8);
        bk = scratch_take(&L, tensor_numel(tk), 8);
        bv = scratch_take(&L, tensor_numel(tv), 8);
        bpk = scratch_take(&L, tpk ? tensor_numel(tpk) : 0, 8);
        bpv = scratch_take(&L, tpv ? tensor_numel(tpv) : 0, 8);
        bm = scratch_take(&L, nm, 8);
        kc = scratch_take(&L, p.B * p.Hkv * p.T * p.D, 8);
        vc = scratch_take(&L, p.B * p.Hkv * p.T * p.Dv, 8);
        row = scratch_take(&L, p.T, 8);
        acc = scratch_take(&L, p.Dv, 8);
        y = scratch_take(&L, ny, 8);
        qk = scratch_take(&L, nqk, 8);
    }
    TRY(work_in(c, tq, W, bq, &q));
    TRY(work_in(c, tk, W, bk, &k));
    TRY(work_in(c, tv, W, bv, &v));
    if (tpk) TRY(work_in(c, tpk, W, bpk, &pk));
    if (tpv) TRY(work_in(c, tpv, W, bpv, &pv));
    if (tm) TRY(work_in(c, tm, W, bm, &m)); /* bool: 1 allowed, 0 not */
    concat_cache(pk, k, p.packed, p.B, p.Hkv, p.P, p.Skv, p.D, kc);
    concat_cache(pv, v, p.packed, p.B, p.Hkv, p.P, p.Skv, p.Dv, vc);
    int64_t ms[4]; /* mask strides over the 4 broadcast axes */
    ms[3] = 1;
    for (int i = 2; i >= 0; i--) ms[i] = ms[i + 1] * p.mdims[i + 1];
    for (int i = 0; i < 3; i++)
        if (p.mdims[i] == 1) ms[i] = 0;
    bool mbool = tm && tm->dtype == AIT_BOOL;
    int64_t grp = p.Hq / p.Hkv;
    for (int64_t b = 0; b < p.B; b++) {
        /* keys before the query block: the causal frontier and windows
         * count from here */
        int64_t off = nonpad && !tpk ? nonpad[b] - p.Sq : p.P;
        int64_t nkeys = nonpad ? nonpad[b] : p.T;
        for (int64_t h = 0; h < p.Hq; h++) {
            int64_t g = h / grp; /* KV heads are shared by consecutive query heads */
            const double *kh = kc + (b * p.Hkv + g) * p.T * p.D;
            const double *vh = vc + (b * p.Hkv + g) * p.T * p.Dv;
            for (int64_t i = 0; i < p.Sq; i++) {
                const double *qi = (const double *)q + at(p.packed, b, h, i, p.Hq, p.Sq, p.D);
                double *qko = nqk ? qk + ((b * p.Hq + h) * p.Sq + i) * p.T : NULL;
                int64_t pos = off + i;
                double mx = -INFINITY;
                for (int64_t j = 0; j < p.T; j++) {
                    double s = 0;
                    for (int64_t d = 0; d < p.D; d++) s += qi[d] * kh[j * p.D + d];
                    s *= p.scale;
                    if (qko && p.mode == 0) qko[j] = s;
                    if (p.softcap > 0) s = p.softcap * tanh(s / p.softcap);
                    if (qko && p.mode == 1) qko[j] = s;
                    bool ok = j < nkeys && (!p.causal || j <= pos) &&
                              (p.left < 0 || j >= pos - p.left) &&
                              (p.right < 0 || j <= pos + p.right);
                    if (tm) {
                        if (j >= p.mdims[3]) ok = false; /* short mask */
                        else {
                            double mv = ((const double *)m)[b * ms[0] + h * ms[1] + i * ms[2] + j];
                            if (mbool) ok = ok && mv != 0;
                            else s += mv;
                        }
                    }
                    if (!ok) s = -INFINITY;
                    if (qko && p.mode == 2) qko[j] = s;
                    s = round_to(p.sm, s);
                    row[j] = s;
                    if (s > mx) mx = s;
                }
                /* softmax with the maximum subtracted; a row with no key
                 * left gives zeros, not NaN */
                double sum = 0;
                for (int64_t j = 0; j < p.T; j++) {
                    row[j] = mx == -INFINITY ? 0 : exp(row[j] - mx);
                    sum += row[j];
                }
                for (int64_t j = 0; j < p.T; j++) {
                    if (sum > 0) row[j] = round_to(p.sm, row[j] / sum);
                    if (qko && p.mode == 3) qko[j] = row[j];
                }
                for (int64_t d = 0; d < p.Dv; d++) acc[d] = 0;
                for (int64_t j = 0; j < p.T; j++)
                    if (row[j] != 0)
                        for (int64_t d = 0; d < p.Dv; d++) acc[d] += row[j] * vh[j * p.Dv + d];
                memcpy(y + at(p.packed, b, h, i, p.Hq, p.Sq, p.Dv), acc,
                       (size_t)p.Dv * sizeof *acc);
            }
        }
    }
    TRY(convert_elems(y, W, c->out[OUT_Y]->data, c->out[OUT_Y]->dtype, ny, c->err));
    if (nqk) TRY(convert_elems(qk, W, c->out[OUT_QK]->data, c->out[OUT_QK]->dtype, nqk, c->err));
    if (has_out(c, OUT_PK)) {
        /* through double, which holds every value of the narrower types */
        TRY(convert_elems(kc, W, c->out[OUT_PK]->data, c->out[OUT_PK]->dtype,
                          tensor_numel(c->out[OUT_PK]), c->err));
        TRY(convert_elems(vc, W, c->out[OUT_PV]->data, c->out[OUT_PV]->dtype,
                          tensor_numel(c->out[OUT_PV]), c->err));
    }
    return AIT_OK;
}

/* ---- ai.onnx.preview FlexAttention 1 ----------------------------------- */

/* Rank-4 Q, K, V (grouped KV heads as Attention's); scores (Q.K^T * scale)
 * and probabilities pass through the optional score_mod and prob_mod
 * subgraphs, one rank-4 tensor of softmax_precision's type in and out. The
 * softmax is the plain one: a row the score_mod masks entirely is NaN, as
 * the spec's Softmax gives. */
typedef struct flex {
    int64_t B, Hq, Hkv, L, S, E, Ev;
    double scale;
    ait_dtype sp; /* softmax_precision */
    const graph *mod[2]; /* score_mod, prob_mod */
} flex;

static ait_status flex_params(op_ctx *c, flex *p)
{
    static const char *const names[] = {"Q", "K", "V"};
    for (int i = 0; i < 3; i++) {
        TRY(check_float(c, c->in[i], names[i]));
        if (c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but Q is %s: they must have one type",
                           names[i], ait_dtype_name(c->in[i]->dtype),
                           ait_dtype_name(c->in[0]->dtype));
        if (c->in[i]->rank != 4)
            return shape_err(c, names[i], c->in[i], "a rank-4 (batch, heads, seq, size) tensor");
    }
    const tensor *q = c->in[0], *k = c->in[1], *v = c->in[2];
    p->B = q->dims[0];
    p->Hq = q->dims[1];
    p->L = q->dims[2];
    p->E = q->dims[3];
    p->Hkv = k->dims[1];
    p->S = k->dims[2];
    p->Ev = v->dims[3];
    if (k->dims[0] != p->B || k->dims[3] != p->E)
        return shape_err(c, "K", k, "Q's batch and head size");
    if (v->dims[0] != p->B || v->dims[1] != p->Hkv || v->dims[2] != p->S)
        return shape_err(c, "V", v, "K's batch, heads and sequence length");
    if (p->Hkv < 1 || p->Hq % p->Hkv)
        return err_set(c->err, AIT_E_SHAPE, "%lld query heads are not a multiple of %lld KV heads",
                       (long long)p->Hq, (long long)p->Hkv);
    float sc = attr_float(c->n, "scale", 0);
    p->scale = node_attr(c->n, "scale") ? sc : 1 / sqrt((double)p->E);
    p->sp = q->dtype == AIT_F64 ? AIT_F64 : AIT_F32;
    if (node_attr(c->n, "softmax_precision")) {
        int64_t s = attr_int(c->n, "softmax_precision", 0);
        if (s != AIT_F32 && s != AIT_F16 && s != AIT_F64 && s != AIT_BF16)
            return err_set(c->err, AIT_E_INVALID_ARG, "softmax_precision %lld is not float, "
                           "float16, double or bfloat16", (long long)s);
        p->sp = (ait_dtype)s;
    }
    static const char *const mods[] = {"score_mod", "prob_mod"};
    for (int i = 0; i < 2; i++) {
        const attr *a = node_attr(c->n, mods[i]);
        p->mod[i] = a ? a->g : NULL;
        if (a && (!a->g || a->g->n_inputs != 1 || a->g->n_outputs != 1))
            return err_set(c->err, AIT_E_INVALID_ARG, "%s must be a graph of one input and one "
                           "output", mods[i]);
    }
    return AIT_OK;
}

static ait_status flex_infer(op_ctx *c)
{
    flex p;
    TRY(flex_params(c, &p));
    int64_t d[4] = {p.B, p.Hq, p.L, p.Ev};
    set_out(c, 0, c->in[0]->dtype, 4, d);
    return AIT_OK;
}

/* Runs modifier `which` on x (n values in double, shape dims) in place,
 * through a tensor of dtype sp. */
static ait_status flex_mod(op_ctx *c, const flex *p, int which, double *x, void *buf,
                           const int64_t *dims)
{
    static const char *const mods[] = {"score_mod", "prob_mod"};
    int64_t n = dims_prod(dims, 0, 4);
    tensor in = {.dtype = p->sp, .rank = 4, .data = buf}, out = {0};
    memcpy(in.dims, dims, 4 * sizeof *dims);
    TRY(convert_elems(x, AIT_F64, buf, p->sp, n, c->err));
    tensor *ins[1] = {&in}, *outs[1] = {&out};
    ait_status s = op_subgraph(c, p->mod[which], ins, outs);
    if (s == AIT_OK && (out.kind != VAL_TENSOR || out.dtype != p->sp || out.rank != 4 ||
                        memcmp(out.dims, dims, 4 * sizeof *dims))) {
        char sh[128];
        s = err_set(c->err, AIT_E_SHAPE, "%s gave a %s tensor of shape %s; it must keep its "
                    "input's type %s and shape", mods[which], ait_dtype_name(out.dtype),
                    shape_str(out.dims, out.rank, sh, sizeof sh), ait_dtype_name(p->sp));
    }
    if (s == AIT_OK) s = convert_elems(out.data, p->sp, x, AIT_F64, n, c->err);
    tensor_release(&out);
    return s;
}

static ait_status flex_run(op_ctx *c)
{
    flex p;
    TRY(flex_params(c, &p));
    int64_t dims[4] = {p.B, p.Hq, p.L, p.S}, n = p.B * p.Hq * p.L * p.S;
    size_t bytes[6] = {(size_t)tensor_numel(c->in[0]) * 8, (size_t)tensor_numel(c->in[1]) * 8,
                       (size_t)tensor_numel(c->in[2]) * 8, (size_t)n * 8, (size_t)n * 8,
                       (size_t)tensor_numel(c->out[0]) * 8};
    void *part[6];
    TRY(op_scratch_parts(c, 6, bytes, part));
    const void *q, *k, *v;
    TRY(work_in(c, c->in[0], AIT_F64, part[0], &q));
    TRY(work_in(c, c->in[1], AIT_F64, part[1], &k));
    TRY(work_in(c, c->in[2], AIT_F64, part[2], &v));
    double *sc = part[3], *y = part[5];
    int64_t grp = p.Hq / p.Hkv;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t h = 0; h < p.Hq; h++)
            for (int64_t i = 0; i < p.L; i++) {
                const double *qi = (const double *)q + ((b * p.Hq + h) * p.L + i) * p.E;
                const double *kh = (const double *)k + (b * p.Hkv + h / grp) * p.S * p.E;
                double *row = sc + ((b * p.Hq + h) * p.L + i) * p.S;
                for (int64_t j = 0; j < p.S; j++) {
                    double a = 0;
                    for (int64_t d = 0; d < p.E; d++) a += qi[d] * kh[j * p.E + d];
                    row[j] = round_to(p.sp, a * p.scale);
                }
            }
    if (p.mod[0]) TRY(flex_mod(c, &p, 0, sc, part[4], dims));
    int64_t rows = p.S ? n / p.S : 0;
    for (int64_t r = 0; r < rows; r++) {
        double *row = sc + r * p.S, mx = row[0], sum = 0;
        for (int64_t j = 1; j < p.S; j++) mx = row[j] > mx ? row[j] : mx;
        for (int64_t j = 0; j < p.S; j++) sum += row[j] = exp(row[j] - mx);
        for (int64_t j = 0; j < p.S; j++) row[j] = round_to(p.sp, row[j] / sum);
    }
    if (p.mod[1]) TRY(flex_mod(c, &p, 1, sc, part[4], dims));
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t h = 0; h < p.Hq; h++) {
            const double *vh = (const double *)v + (b * p.Hkv + h / grp) * p.S * p.Ev;
            for (int64_t i = 0; i < p.L; i++) {
                const double *pr = sc + ((b * p.Hq + h) * p.L + i) * p.S;
                double *yo = y + ((b * p.Hq + h) * p.L + i) * p.Ev;
                for (int64_t d = 0; d < p.Ev; d++) yo[d] = 0;
                for (int64_t j = 0; j < p.S; j++)
                    for (int64_t d = 0; d < p.Ev; d++) yo[d] += pr[j] * vh[j * p.Ev + d];
            }
        }
    return convert_elems(y, AIT_F64, c->out[0]->data, c->out[0]->dtype,
                         tensor_numel(c->out[0]), c->err);
}

OP_TABLE(attention, OP_DEF("Attention", 3, 7, 1, 4, attn_infer, attn_run),
         {.name = "FlexAttention", .min_in = 3, .max_in = 3, .min_out = 1, .max_out = 1,
          .infer = flex_infer, .run = flex_run, .domain = "ai.onnx.preview"});
