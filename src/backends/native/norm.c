/* Row-wise ops over the last axis, float32, on kernels/norm.h:
 * LayerNormalization (Y only; scale and bias of the row's length),
 * RMSNormalization, Softmax and LogSoftmax, and LayerNorm and RMSNorm
 * written out (the graph's FK_LAYERNORM fusions). Another axis, more outputs or
 * another dtype stay on the reference op. And BatchNormalization over the
 * channels (below). */
#include <math.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/chan_copy.h"
#include "kernels/norm.h"

enum { R_LN, R_RMS, R_SM, R_LSM };

/* A float32 input k of node n holding d values, or absent (k past the
 * inputs or -1) when optional. */
static bool row_param(built *bm, const node *n, int k, int64_t d, bool optional)
{
    if (k >= n->n_in || n->in[k] < 0) return optional;
    const tensor *t = nat_shape(bm, n->in[k]);
    return t && t->dtype == AIT_F32 && tensor_numel(t) == d;
}

static ait_status row_take(built *bm, int i, nat_step *st, bool *taken)
{
    static const char *const names[] = {"LayerNormalization", "RMSNormalization", "Softmax",
                                        "LogSoftmax"};
    const node *n = &bm->g->nodes[i];
    *taken = false;
    int kind = 0;
    while (strcmp(n->op, names[kind])) kind++;
    if (n->out[0] < 0) return AIT_OK;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0) return AIT_OK; /* LayerNorm's Mean, InvStdDev */
    const tensor *x = nat_shape(bm, n->in[0]), *y = nat_shape(bm, n->out[0]);
    if (!x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank < 1 ||
        tensor_numel(x) == 0)
        return AIT_OK;
    bool old_sm = kind >= R_SM && n->version < 13; /* axis 1 by default, coerced to 2-D */
    int64_t a = attr_int(n, "axis", old_sm ? 1 : -1);
    if (a != -1 && a != x->rank - 1) return AIT_OK;
    int64_t d = x->dims[x->rank - 1];
    if (kind <= R_RMS) {
        if (attr_int(n, "stash_type", 1) != 1 || !row_param(bm, n, 1, d, false) ||
            !row_param(bm, n, 2, d, kind == R_LN))
            return AIT_OK;
    }
    st->geo[0] = kind;
    st->geo[1] = tensor_numel(x) / d;
    st->geo[2] = d;
    *taken = true;
    return AIT_OK;
}

static ait_status row_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const float *x = bm->vals[n->in[0]].cur->data;
    float *y = bm->vals[n->out[0]].t.data;
    size_t rows = (size_t)st->geo[1], d = (size_t)st->geo[2];
    const float *scale = n->n_in > 1 && n->in[1] >= 0 ? bm->vals[n->in[1]].cur->data : NULL;
    const float *bias = n->n_in > 2 && n->in[2] >= 0 ? bm->vals[n->in[2]].cur->data : NULL;
    float eps = attr_float(n, "epsilon", 1e-5f);
    switch (st->geo[0]) {
    case R_LN: klayernorm(x, scale, bias, y, rows, d, eps, bm->threads); break;
    case R_RMS: krmsnorm(x, scale, NULL, y, rows, d, eps, bm->threads); break;
    default: ksoftmax(x, y, rows, d, st->geo[0] == R_LSM, bm->threads); break;
    }
    return AIT_OK;
}

/* A LayerNorm or RMSNorm written out (graph/fuse.h's FK_LAYERNORM) as one
 * pass of klayernorm or krmsnorm, when its input and output are float32 of
 * one shape, every node runs and its scale and bias hold the last axis'
 * d values along that axis. */
bool nat_ln_fusion(built *bm, int fi)
{
    const fusion *f = &bm->fus->f[fi];
    if (f->kind != FK_LAYERNORM) return false;
    const tensor *x = nat_shape(bm, f->in), *y = nat_shape(bm, f->out);
    if (!x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank < 1 ||
        x->rank != y->rank || memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank) ||
        tensor_numel(x) == 0)
        return false;
    int64_t d = x->dims[x->rank - 1];
    const int par[] = {f->ln_scale, f->ln_bias};
    for (int k = 0; k < 2; k++) {
        const tensor *t = par[k] >= 0 ? nat_shape(bm, par[k]) : NULL;
        if (par[k] >= 0 && (!t || !nat_const(bm, par[k]) || t->dtype != AIT_F32 || t->rank < 1 ||
                            t->rank > x->rank || t->dims[t->rank - 1] != d ||
                            tensor_numel(t) != d))
            return false;
    }
    for (int j = 0; j < f->n_nodes; j++)
        if (!exec_node_runs(bm->x, f->nodes[j])) return false;
    return true;
}

static ait_status ln_fused_run(built *bm, const nat_step *st)
{
    const fusion *f = &bm->fus->f[st->geo[0]];
    const tensor *y = &bm->vals[f->out].t;
    size_t d = (size_t)y->dims[y->rank - 1], rows = (size_t)tensor_numel(y) / d;
    const float *x = bm->vals[f->in].cur->data;
    const float *scale = f->ln_scale >= 0 ? bm->vals[f->ln_scale].cur->data : NULL;
    const float *bias = f->ln_bias >= 0 ? bm->vals[f->ln_bias].cur->data : NULL;
    (f->rms ? krmsnorm : klayernorm)(x, scale, bias, y->data, rows, d, f->eps, bm->threads);
    return AIT_OK;
}

const nat_op nat_ln_fused = {"(layernorm)", NULL, ln_fused_run};

const nat_op nat_layernorm = {"LayerNormalization", row_take, row_run};
const nat_op nat_rmsnorm = {"RMSNormalization", row_take, row_run};
const nat_op nat_softmax = {"Softmax", row_take, row_run};
const nat_op nat_logsoftmax = {"LogSoftmax", row_take, row_run};

/* Inference BatchNormalization of a 4-D value, with the Relu or Clip after
 * it (nat_chain), as one pass of kchan_scale (y = min(max(x * s + t, lo),
 * hi), s and t folded from its constants at take), its input and output
 * each NCHW or channels-last (layout.c), the input maybe a view of a
 * longer Concat's first channels (concat.c): DenseNet's BatchNormalization and
 * Relu after every Concat, between channels-last convolutions. One after a
 * Conv is folded into the Conv instead (conv.c), so never reaches here;
 * other ranks, training mode and a chain of anything else (a bias, a
 * residual, another activation: those nodes then run after it) leave
 * their nodes as they were. */
static ait_status bn_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    *taken = false;
    const tensor *x = nat_shape(bm, n->in[0]), *y = n->n_out > 0 ? nat_shape(bm, n->out[0]) : NULL;
    if (!x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank != 4 || y->rank != 4 ||
        memcmp(x->dims, y->dims, sizeof x->dims[0] * 4) || tensor_numel(y) == 0 ||
        !nat_bn_node(bm, i, n->in[0], x->dims[1]))
        return AIT_OK;
    const int64_t C = x->dims[1];
    nat_pack *p = &bm->packs[i];
    if (!p->wt) { /* s, then t: from constants, not saved */
        p->wt = aligned_zalloc(sizeof(float) * 2 * (size_t)C);
        if (!p->wt) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
        nat_bn_fold(bm, i, C, p->wt, p->wt + C);
    }
    nat_epi plain = st->epi;
    nat_chain(bm, n->out[0], true, true, &st->epi);
    gemm_act a = st->epi.act;
    if (st->epi.bias >= 0 || st->epi.res >= 0 ||
        (a != GEMM_ACT_NONE && a != GEMM_ACT_RELU && a != GEMM_ACT_CLIP))
        st->epi = plain;
    st->can_nhwc = true;
    *taken = true;
    return AIT_OK;
}

static ait_status bn_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const nat_val *x = &bm->vals[n->in[0]];
    nat_val *y = &bm->vals[st->epi.out];
    if (!x->cur || !x->cur->data)
        return nat_fail(bm, st->node, AIT_E_INTERNAL, "input was not computed");
    const int64_t *d = y->t.dims, C = d[1];
    const float *s = bm->packs[st->node].wt;
    float lo = -INFINITY, hi = INFINITY;
    if (st->epi.act == GEMM_ACT_RELU) lo = 0;
    if (st->epi.act == GEMM_ACT_CLIP) lo = st->epi.lo, hi = st->epi.hi;
    /* a view of a longer Concat's output (concat.c): its rows that one's channels apart */
    const int64_t cx = x->view ? bm->vals[x->view - 1].t.dims[1] : C;
    kchan_geom g = {d[0], d[2] * d[3], cx, 0, C, 0, 0, x->nhwc, y->nhwc};
    kchan_scale(&g, x->cur->data, s, 0, s + C, lo, hi, y->t.data, bm->threads);
    return AIT_OK;
}

const nat_op nat_batchnorm = {"BatchNormalization", bn_take, bn_run, NULL};
