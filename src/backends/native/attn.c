/* Attention on kernels/attn.h, one kattention call each: the fusion passes'
 * FK_ATTENTION (softmax(Q K^T) V written out, graph/fuse.h), its operands
 * read where the fusion's views say (heads still packed in the projection's
 * rows, past and current keys apart, kv heads shared), and the ONNX
 * Attention op (23 to 25) with its past_key/past_value inputs read in place
 * and present_key/present_value written (that copy is the model's output).
 * Geometry is fixed at schedule (bm->att, per node); anything the kernel
 * does not do exactly (a mask shorter than the keys, a soft cap, a window,
 * the qk output, non-contiguous rows, batch broadcasts) stays on the
 * unfused ops or the reference op. */
#include <math.h>
#include <string.h>

#include "backends/native/native.h"

/* The (batch, head, row) strides of a rank-R operand with element strides
 * st: heads on axis R-3, batch on axis 0 when R is 4. */
static void bhr(int R, const int64_t *st, size_t *out)
{
    out[0] = R == 4 ? (size_t)st[0] : 0;
    out[1] = (size_t)st[R - 3];
    out[2] = (size_t)st[R - 2];
}

/* Mask m (float32 or bool, right-aligned to the scores [b, h, sq, t]) as
 * kernel strides; false unless each dim is 1 or the scores' and the last
 * is the keys'. */
static bool mask_strides(const tensor *m, const int64_t want[4], size_t *s)
{
    if (!m || m->rank < 1 || m->rank > 4 || m->dims[m->rank - 1] != want[3]) return false;
    int64_t d[4] = {1, 1, 1, 1}, st[4], n = 1;
    for (int i = 0; i < m->rank; i++) d[4 - m->rank + i] = m->dims[i];
    for (int i = 3; i >= 0; i--) {
        if (d[i] != 1 && d[i] != want[i]) return false;
        st[i] = d[i] == 1 ? 0 : n;
        n *= d[i];
    }
    s[0] = (size_t)st[0], s[1] = (size_t)st[1], s[2] = (size_t)st[2];
    return true;
}

/* Whether the attention's GEMMs run on int8 (kernels/attn_q8.h): in the
 * int8dq variant, whose modules' SQNR the tuner judges with them in. */
static bool nat_attn_q8(const built *bm)
{
    return bm->quant == QG_INT8DQ && !bm->qstatic;
}

/* ---- the fusion ---------------------------------------------------------------- */

/* View w's dims and element strides from its values' scheduled shapes;
 * false when they do not fit or rows are not contiguous. */
static bool view_of(const built *bm, const fuse_view *w, int64_t *dims, int64_t *st)
{
    const tensor *b = nat_shape(bm, w->v), *l = nat_shape(bm, w->lay);
    if (!b || !l || b->dtype != AIT_F32 || l->rank != w->rank ||
        tensor_numel(b) != tensor_numel(l) || w->perm[w->rank - 1] != w->rank - 1)
        return false;
    int64_t ls[AIT_MAX_RANK], n = 1;
    for (int d = l->rank - 1; d >= 0; d--) ls[d] = n, n *= l->dims[d];
    for (int i = 0; i < w->rank; i++) dims[i] = l->dims[w->perm[i]], st[i] = ls[w->perm[i]];
    return true;
}

static bool same_batch(int R, const int64_t *a, const int64_t *b)
{
    return R == 3 || a[0] == b[0];
}

/* Fusion f's kernel geometry at this schedule, or false. */
static bool fus_geom(const built *bm, const fusion *f, katt_geom *g)
{
    const fuse_attn *a = &f->att;
    const int R = a->q.rank;
    int64_t qd[AIT_MAX_RANK], qs[AIT_MAX_RANK], kd[AIT_MAX_RANK], ks[AIT_MAX_RANK];
    int64_t vd[AIT_MAX_RANK], vs[AIT_MAX_RANK], pd[AIT_MAX_RANK], ps[AIT_MAX_RANK];
    int64_t wd[AIT_MAX_RANK], ws[AIT_MAX_RANK], yd[AIT_MAX_RANK], ys[AIT_MAX_RANK];
    memset(g, 0, sizeof *g);
    if (R < 3 || R > 4 || (a->kp.v >= 0) != (a->vp.v >= 0) || a->kv_rep < 1 ||
        !view_of(bm, &a->q, qd, qs) || !view_of(bm, &a->k, kd, ks) || !view_of(bm, &a->v, vd, vs))
        return false;
    for (int j = 0; j < f->n_nodes; j++)
        if (!exec_node_runs(bm->x, f->nodes[j])) return false;
    g->strided = 1;
    bhr(R, qs, g->qs);
    bhr(R, ks, g->kcs);
    bhr(R, vs, g->vcs);
    if (a->kp.v >= 0) {
        if (!view_of(bm, &a->kp, pd, ps) || !view_of(bm, &a->vp, wd, ws)) return false;
        bhr(R, ps, g->kps);
        bhr(R, ws, g->vps);
        g->sp = (int)pd[R - 2];
        if (pd[R - 1] != kd[R - 1] || pd[R - 3] != kd[R - 3] || wd[R - 2] != pd[R - 2] ||
            wd[R - 1] != vd[R - 1] || wd[R - 3] != vd[R - 3] || !same_batch(R, pd, kd) ||
            !same_batch(R, wd, kd))
            return false;
    }
    g->b = R == 4 ? (int)qd[0] : 1;
    g->hq = (int)qd[R - 3];
    g->hkv = (int)kd[R - 3];
    g->sq = (int)qd[R - 2];
    g->sc = (int)kd[R - 2];
    g->d = (int)qd[R - 1];
    g->dv = (int)vd[R - 1];
    int64_t T = (int64_t)g->sp + g->sc;
    if (kd[R - 1] != g->d || vd[R - 2] != g->sc || vd[R - 3] != g->hkv ||
        (int64_t)g->hkv * a->kv_rep != g->hq || !same_batch(R, qd, kd) || !same_batch(R, qd, vd) ||
        T > 1 << 30 || qd[R - 3] > 1 << 30 || qd[R - 2] > 1 << 30 || g->b != (R == 4 ? qd[0] : 1))
        return false;
    g->scale = a->scale;
    if (!(g->scale != 0)) return false; /* 0 means 1 / sqrt(d) to the kernel */
    g->q8 = nat_attn_q8(bm);
    /* the scores the graph makes: no broadcast grows them */
    const int64_t want[4] = {g->b, g->hq, g->sq, T};
    for (int j = 0; j < f->n_nodes; j++) {
        const node *n = &bm->g->nodes[f->nodes[j]];
        if (strcmp(n->op, "Softmax")) continue;
        const tensor *s = nat_shape(bm, n->in[0]);
        if (!s || s->rank != R || s->dtype != AIT_F32) return false;
        for (int i = 0; i < R; i++)
            if (s->dims[i] != want[4 - R + i]) return false;
    }
    size_t ms[3];
    if (a->mask >= 0) {
        const tensor *m = nat_shape(bm, a->mask);
        if (!m || m->dtype != AIT_F32 || m->rank > R || !mask_strides(m, want, ms)) return false;
        g->mb = ms[0], g->mh = ms[1], g->mi = ms[2];
    }
    if (a->bmask >= 0) {
        const tensor *m = nat_shape(bm, a->bmask);
        if (!m || m->dtype != AIT_BOOL || m->rank > R || !mask_strides(m, want, ms)) return false;
        g->bb = ms[0], g->bh = ms[1], g->bi = ms[2];
        g->bkeep = a->bkeep;
        g->fill = a->fill;
    }
    /* the output: [b, hq, sq, dv] through y's view onto the lay value */
    const tensor *l = nat_shape(bm, a->y.lay), *o = nat_shape(bm, f->out);
    if (!l || !o || o->dtype != AIT_F32 || l->rank != R || a->y.perm[R - 1] != R - 1) return false;
    for (int i = 0; i < R; i++) yd[i] = i < R - 1 ? qd[i] : g->dv;
    int64_t n = 1;
    for (int i = 0; i < R; i++)
        if (l->dims[a->y.perm[i]] != yd[i]) return false;
    for (int i = R - 1; i >= 0; i--) ys[i] = n, n *= l->dims[i];
    if (tensor_numel(o) != n) return false;
    int64_t st[AIT_MAX_RANK];
    for (int i = 0; i < R; i++) st[i] = ys[a->y.perm[i]];
    bhr(R, st, g->ys);
    return true;
}

bool nat_attn_fusion(built *bm, int fi)
{
    const fusion *f = &bm->fus->f[fi];
    return f->kind == FK_ATTENTION && fus_geom(bm, f, &bm->att[f->last]);
}

/* A past view's strides: its value's own dims (a plain view, kv.c checks)
 * with the cache's capacity along its axis. */
static void kv_bhr(const built *bm, const fuse_view *w, size_t *out)
{
    const nat_val *d = w->v >= 0 ? &bm->vals[w->v] : NULL;
    const tensor *t = d && d->kv_cap > 0 ? nat_shape(bm, w->v) : NULL;
    if (!t) return;
    int64_t st[AIT_MAX_RANK];
    kv_strides(t->dims, t->rank, d->kv_axis, d->kv_cap, st);
    bhr(t->rank, st, out);
}

void nat_attn_kv(const built *bm, const fuse_attn *a, katt_geom *g)
{
    kv_bhr(bm, &a->kp, g->kps);
    kv_bhr(bm, &a->vp, g->vps);
}

static const float *data_of(const built *bm, int v)
{
    return v >= 0 ? bm->vals[v].cur->data : NULL;
}

static ait_status fus_run(built *bm, const nat_step *st)
{
    const fuse_attn *a = &bm->fus->f[st->geo[0]].att;
    katt_geom g = bm->att[st->node];
    nat_attn_kv(bm, a, &g);
    g.mask = a->mask >= 0 ? data_of(bm, a->mask) : NULL;
    g.bmask = a->bmask >= 0 ? (const unsigned char *)data_of(bm, a->bmask) : NULL;
    g.ws = bm->scratch, g.ws_bytes = bm->scratch_size; /* sched_node made it large enough */
    if (kattention(&g, data_of(bm, a->q.v), data_of(bm, a->kp.v), data_of(bm, a->vp.v),
                   data_of(bm, a->k.v), data_of(bm, a->v.v), bm->vals[st->epi.out].t.data,
                   bm->threads))
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for attention scratch");
    return AIT_OK;
}

const nat_op nat_attn_fused = {"(attention)", NULL, fus_run};

/* ---- the ONNX Attention op ----------------------------------------------------- */

enum { IN_Q, IN_K, IN_V, IN_MASK, IN_PK, IN_PV, IN_NONPAD };
enum { OUT_Y, OUT_PK, OUT_PV, OUT_QK };

static bool given(const node *n, int k, bool out)
{
    return out ? k < n->n_out && n->out[k] >= 0 : k < n->n_in && n->in[k] >= 0;
}

static const tensor *in_f32(const built *bm, const node *n, int k)
{
    const tensor *t = given(n, k, false) ? nat_shape(bm, n->in[k]) : NULL;
    return t && t->dtype == AIT_F32 ? t : NULL;
}

/* Operand [B, S, H * D] (packed, 3-D) or [B, H, S, D]: its strides. */
static void op_strides(bool packed, int64_t H, int64_t S, int64_t D, size_t *s)
{
    s[0] = (size_t)(H * S * D);
    s[1] = packed ? (size_t)D : (size_t)(S * D);
    s[2] = packed ? (size_t)(H * D) : (size_t)D;
}

static ait_status op_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    katt_geom *g = &bm->att[i];
    *taken = false;
    const tensor *q = in_f32(bm, n, IN_Q), *k = in_f32(bm, n, IN_K), *v = in_f32(bm, n, IN_V);
    if (n->version < 23 || !q || !k || !v || q->rank < 3 || q->rank > 4 || k->rank != q->rank ||
        v->rank != q->rank || given(n, IN_NONPAD, false) || given(n, OUT_QK, true) ||
        !given(n, OUT_Y, true) || given(n, IN_PK, false) != given(n, IN_PV, false) ||
        given(n, OUT_PK, true) != given(n, OUT_PV, true) || attr_float(n, "softcap", 0) != 0 ||
        attr_int(n, "softmax_precision", AIT_F32) != AIT_F32 ||
        attr_int(n, "qk_matmul_output_mode", 0) != 0 || attr_int(n, "left_window_size", -1) != -1 ||
        attr_int(n, "right_window_size", -1) != -1)
        return AIT_OK;
    int64_t causal = attr_int(n, "is_causal", 0);
    bool packed = q->rank == 3;
    int64_t B = q->dims[0], Hq, Hkv, Sq, Skv, D, Dv, P = 0;
    if (packed) {
        Hq = attr_int(n, "q_num_heads", 0);
        Hkv = attr_int(n, "kv_num_heads", 0);
        if (Hq < 1 || Hkv < 1 || q->dims[2] % Hq || k->dims[2] % Hkv || v->dims[2] % Hkv)
            return AIT_OK;
        Sq = q->dims[1], Skv = k->dims[1], D = q->dims[2] / Hq, Dv = v->dims[2] / Hkv;
        if (k->dims[2] / Hkv != D || v->dims[1] != Skv) return AIT_OK;
    } else {
        Hq = q->dims[1], Hkv = k->dims[1], Sq = q->dims[2], Skv = k->dims[2], D = q->dims[3];
        Dv = v->dims[3];
        if (k->dims[3] != D || v->dims[1] != Hkv || v->dims[2] != Skv) return AIT_OK;
    }
    if (k->dims[0] != B || v->dims[0] != B || Hkv < 1 || Hq % Hkv || (causal != 0 && causal != 1))
        return AIT_OK;
    const tensor *pk = NULL, *pv = NULL;
    if (given(n, IN_PK, false)) {
        pk = in_f32(bm, n, IN_PK), pv = in_f32(bm, n, IN_PV);
        if (!pk || !pv || pk->rank != 4 || pv->rank != 4 || pk->dims[0] != B ||
            pk->dims[1] != Hkv || pk->dims[3] != D || pv->dims[0] != B || pv->dims[1] != Hkv ||
            pv->dims[2] != pk->dims[2] || pv->dims[3] != Dv)
            return AIT_OK;
        P = pk->dims[2];
    }
    int64_t T = P + Skv;
    if (B > 1 << 30 || Hq > 1 << 20 || Sq > 1 << 30 || T > 1 << 30 || D > 1 << 20 || Dv > 1 << 20)
        return AIT_OK;
    float sc = attr_float(n, "scale", 0);
    memset(g, 0, sizeof *g);
    *g = (katt_geom){.b = (int)B, .hq = (int)Hq, .hkv = (int)Hkv, .sq = (int)Sq, .sp = (int)P,
                     .sc = (int)Skv, .d = (int)D, .dv = (int)Dv, .causal = (int)causal,
                     .strided = 1, .bkeep = 1, .fill = -INFINITY};
    g->q8 = nat_attn_q8(bm);
    if (node_attr(n, "scale")) {
        if (!(sc != 0)) return AIT_OK;
        g->scale = sc;
    }
    op_strides(packed, Hq, Sq, D, g->qs);
    op_strides(packed, Hq, Sq, Dv, g->ys);
    op_strides(packed, Hkv, Skv, D, g->kcs);
    op_strides(packed, Hkv, Skv, Dv, g->vcs);
    op_strides(false, Hkv, P, D, g->kps);
    op_strides(false, Hkv, P, Dv, g->vps);
    if (given(n, IN_MASK, false)) {
        const tensor *m = nat_shape(bm, n->in[IN_MASK]);
        const int64_t want[4] = {B, Hq, Sq, T};
        size_t ms[3];
        if (!m || (m->dtype != AIT_F32 && m->dtype != AIT_BOOL) || !mask_strides(m, want, ms))
            return AIT_OK;
        if (m->dtype == AIT_F32) g->mb = ms[0], g->mh = ms[1], g->mi = ms[2];
        else g->bb = ms[0], g->bh = ms[1], g->bi = ms[2];
    }
    const tensor *y = nat_shape(bm, n->out[OUT_Y]);
    if (!y || y->dtype != AIT_F32 || tensor_numel(y) != B * Hq * Sq * Dv) return AIT_OK;
    /* present_key and present_value: the step owns them (sched_node
     * places Y only); their storage is made by the run that writes them
     * there (present_write: not when they go to the caller's memory, so a
     * decode step appending in place allocates none at its new length) */
    for (int o = OUT_PK; o <= OUT_PV && given(n, OUT_PK, true); o++) {
        nat_val *pv_ = &bm->vals[n->out[o]];
        int64_t ds[4] = {B, Hkv, T, o == OUT_PK ? D : Dv};
        tensor_set_shape(&pv_->t, AIT_F32, 4, ds);
        pv_->cur = &pv_->t;
    }
    st->geo[0] = packed;
    st->scratch = kattention_scratch(g, bm->threads);
    *taken = true;
    return AIT_OK;
}

/* present [B][H][P + S][D] = past then the current rows (strides cs). */
static void present_fill(float *dst, const float *past, const float *cur, const size_t *cs,
                         int B, int H, int P, int S, int D)
{
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            float *o = dst + ((size_t)b * H + h) * (size_t)(P + S) * D;
            if (P) memcpy(o, past + ((size_t)b * H + h) * P * D, sizeof *o * (size_t)P * D);
            for (int s = 0; s < S; s++)
                memcpy(o + (size_t)(P + s) * D, cur + b * cs[0] + h * cs[1] + s * cs[2],
                       sizeof *o * (size_t)D);
        }
}

bool nat_attn_op_appends(const node *n, int pv, int ov)
{
    int k = -1;
    for (int o = OUT_PK; o <= OUT_PV; o++)
        if (given(n, o, true) && n->out[o] == ov) k = o == OUT_PK ? IN_PK : IN_PV;
    if (k < 0 || !given(n, k, false) || n->in[k] != pv) return false;
    for (int j = 0; j < n->n_in; j++)
        if (j != k && n->in[j] == pv) return false;
    return true;
}

/* Present output o (OUT_PK or OUT_PV) of node n: the past then the current
 * rows (strides cs), D wide. Where the pair is a cache view (kv.c), only
 * the new positions are written into the caller's buffer, after the past
 * it holds already, and *ps (the past's strides for the kernel) become the
 * cache's; else the whole present is written into the caller's tensor when
 * it is given and has room (nat_dest), or into the value's own. */
static ait_status present_write(built *bm, int i, int o, const katt_geom *g, const float *cur,
                                const size_t *cs, int D, size_t *ps)
{
    const node *n = &bm->g->nodes[i];
    const int kin = o == OUT_PK ? IN_PK : IN_PV, pin = given(n, kin, false) ? n->in[kin] : -1;
    nat_val *od = &bm->vals[n->out[o]];
    tensor *d = nat_dest(bm, n->out[o]);
    const int64_t T = (int64_t)g->sp + g->sc, ds[4] = {g->b, g->hkv, T, D};
    if (pin >= 0 && od->kv_cap > 0 && bm->vals[pin].kv_cap == od->kv_cap) {
        if (!d) return nat_fail(bm, i, AIT_E_INTERNAL, "a key/value cache's present has no buffer");
        if (T > od->kv_cap) {
            char b[160];
            return nat_fail(bm, i, AIT_E_SHAPE, "output '%s' needs shape %s; the cache bound to "
                            "it holds %lld positions along axis 2", bm->g->vals[n->out[o]].name,
                            shape_str(ds, 4, b, sizeof b), (long long)od->kv_cap);
        }
        const size_t cap = (size_t)od->kv_cap;
        float *base = d->data;
        for (int b = 0; b < g->b; b++)
            for (int h = 0; h < g->hkv; h++)
                for (int s = 0; s < g->sc; s++)
                    memcpy(base + (((size_t)b * g->hkv + h) * cap + (size_t)g->sp + s) * D,
                           cur + b * cs[0] + h * cs[1] + s * cs[2], sizeof *base * (size_t)D);
        tensor_set_shape(d, AIT_F32, 4, ds);
        od->cur = d;
        op_strides(false, g->hkv, (int64_t)cap, D, ps);
        return AIT_OK;
    }
    tensor *t = &od->t;
    if (d && d->dtype == AIT_F32 && d->data &&
        (d->owned ? d->cap : d->room) >= sizeof(float) * (size_t)(T * D) * g->b * g->hkv) {
        tensor_set_shape(d, AIT_F32, 4, ds);
        t = d;
    } else {
        tensor_set_shape(t, AIT_F32, 4, ds);
        TRY(tensor_alloc(t, bm->err));
    }
    present_fill(t->data, pin >= 0 ? bm->vals[pin].cur->data : NULL, cur, cs, g->b, g->hkv, g->sp,
                 g->sc, D);
    od->cur = t;
    return AIT_OK;
}

static ait_status op_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    katt_geom g = bm->att[st->node];
    const float *q = data_of(bm, n->in[IN_Q]), *k = data_of(bm, n->in[IN_K]),
                *v = data_of(bm, n->in[IN_V]);
    const float *pk = given(n, IN_PK, false) ? data_of(bm, n->in[IN_PK]) : NULL;
    const float *pv = given(n, IN_PV, false) ? data_of(bm, n->in[IN_PV]) : NULL;
    if (given(n, IN_MASK, false)) {
        const tensor *m = bm->vals[n->in[IN_MASK]].cur;
        if (m->dtype == AIT_BOOL) g.bmask = m->data;
        else g.mask = m->data;
    }
    if (given(n, OUT_PK, true)) {
        TRY(present_write(bm, st->node, OUT_PK, &g, k, g.kcs, g.d, g.kps));
        TRY(present_write(bm, st->node, OUT_PV, &g, v, g.vcs, g.dv, g.vps));
    }
    g.ws = bm->scratch, g.ws_bytes = bm->scratch_size;
    if (kattention(&g, q, pk, pv, k, v, bm->vals[n->out[OUT_Y]].t.data, bm->threads))
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for attention scratch");
    return AIT_OK;
}

const nat_op nat_attention = {"Attention", op_take, op_run};
