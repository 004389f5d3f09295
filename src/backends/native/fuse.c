/* The epilogue chain after an anchor (MatMul, Gemm, Conv): the element-wise
 * nodes that follow it, each the only consumer of the value before it, as
 * one gemm_epi: a bias Add (a constant along the output channels), one
 * activation, and a residual Add (a value of the output's own shape)
 * before or after the activation. */
#include <math.h>
#include <string.h>

#include "backends/native/native.h"

int nat_sole_consumer(const built *bm, int v)
{
    if (bm->vals[v].uses != 1) return -1; /* a module output counts as a use */
    for (int r = bm->reader_at[v]; r < bm->reader_at[v + 1]; r++)
        if (exec_node_runs(bm->x, bm->readers[r])) return bm->readers[r];
    return -1;
}

static bool same_shape(const tensor *a, const tensor *b)
{
    return a && b && a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

/* A constant scalar float input k of node n (Clip's min/max), or dflt when omitted. */
static bool scalar_in(const built *bm, const node *n, int k, float dflt, float *out)
{
    *out = dflt;
    if (k >= n->n_in || n->in[k] < 0) return true;
    const tensor *t = nat_shape(bm, n->in[k]);
    if (!nat_const(bm, n->in[k]) || t->dtype != AIT_F32 || tensor_numel(t) != 1) return false;
    *out = *(const float *)t->data;
    return true;
}

/* Node n as an activation: its gemm_act and parameters. */
static bool as_act(const built *bm, const node *n, nat_epi *ep)
{
    static const struct {
        const char *op;
        gemm_act act;
    } simple[] = {
        {"Relu", GEMM_ACT_RELU},     {"Sigmoid", GEMM_ACT_SIGMOID},
        {"Tanh", GEMM_ACT_TANH},     {"HardSwish", GEMM_ACT_HARDSWISH},
    };
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++)
        if (!strcmp(n->op, simple[k].op)) {
            ep->act = simple[k].act;
            return true;
        }
    if (!strcmp(n->op, "LeakyRelu")) {
        ep->act = GEMM_ACT_LEAKY;
        ep->lo = attr_float(n, "alpha", 0.01f);
        return true;
    }
    if (!strcmp(n->op, "HardSigmoid")) {
        ep->act = GEMM_ACT_HARDSIGMOID;
        ep->lo = attr_float(n, "alpha", 0.2f);
        ep->hi = attr_float(n, "beta", 0.5f);
        return true;
    }
    if (!strcmp(n->op, "Gelu")) {
        const char *a = attr_str(n, "approximate", "none");
        ep->act = !strcmp(a, "tanh") ? GEMM_ACT_GELU_TANH : GEMM_ACT_GELU;
        return !strcmp(a, "tanh") || !strcmp(a, "none");
    }
    if (!strcmp(n->op, "Clip")) {
        ep->act = GEMM_ACT_CLIP;
        if (n->version < 11) {
            ep->lo = attr_float(n, "min", -3.402823466e38f);
            ep->hi = attr_float(n, "max", 3.402823466e38f);
            return true;
        }
        return scalar_in(bm, n, 1, -3.402823466e38f, &ep->lo) &&
               scalar_in(bm, n, 2, 3.402823466e38f, &ep->hi);
    }
    return false;
}

/* Whether constant t is a bias along the output's channel axis: for the
 * output shape `o`, [C] or [1,C] along the last axis (row_bias false), or
 * [C,1,1] / [1,C,1,1] along axis 1 (row_bias, a 4-D Conv output). */
static bool is_bias(const tensor *t, const tensor *o, bool row_bias)
{
    int64_t c = row_bias ? o->dims[1] : o->dims[o->rank - 1];
    if (tensor_numel(t) != c || t->rank > o->rank) return false;
    int axis = row_bias ? 1 : o->rank - 1, off = o->rank - t->rank;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != (d + off == axis ? c : 1)) return false;
    return true;
}

/* The activation of an epilogue fusion's step (FF_NONE: GEMM_ACT_NONE);
 * false when gemm_epi has none for it. */
static bool fixed_act(const fuse_step *st, nat_epi *ep)
{
    if (st->f == FF_NONE) return true;
    for (int a = GEMM_ACT_NONE + 1; a < GEMM_ACT_COUNT; a++)
        if ((int)gemm_act_fun((gemm_act)a) == (int)st->f && (int)st->f < (int)KF_N) {
            ep->act = (gemm_act)a;
            ep->lo = st->a; /* Clip's bounds, LeakyRelu's and HardSigmoid's alpha (beta) */
            ep->hi = st->b;
            return true;
        }
    return false;
}

/* Whether node n is a Pad that pads nothing (every pad 0, from its
 * constant `pads` input or, before opset 11, its attribute): an identity,
 * as torch exports AvgPool2d(count_include_pad=True) with padding 0 (a Pad
 * of zeros before each of DenseNet's transition pools). */
static bool pad_none(const built *bm, const node *n)
{
    if (strcmp(n->op, "Pad")) return false;
    if (n->n_in < 2 || n->in[1] < 0) {
        int cnt = 0;
        const int64_t *p = attr_ints(n, "pads", &cnt);
        for (int k = 0; p && k < cnt; k++)
            if (p[k]) return false;
        return p != NULL;
    }
    const tensor *t = nat_shape(bm, n->in[1]);
    if (!nat_const(bm, n->in[1]) || !t || t->dtype != AIT_I64 || !t->data) return false;
    const int64_t *p = t->data;
    for (int64_t k = 0; k < tensor_numel(t); k++)
        if (p[k]) return false;
    return true;
}

/* The graph's epilogue fusion of v's producer as the chain (nat_chain's
 * comment): its fixed form with no scale (all ones), a shift (the bias)
 * along the last axis when bias_ok, one activation, a residual ready now,
 * no final scale. */
static bool chain_of_fusion(const built *bm, int v, const tensor *o, bool bias_ok, nat_epi *ep)
{
    int p = bm->g->vals[v].producer, fi = bm->fus && p >= 0 ? bm->fus->of_node[p] : -1;
    if (fi < 0) return false;
    const fusion *f = &bm->fus->f[fi];
    const fuse_fixed *x = &f->fixed;
    if (f->kind != FK_EPILOGUE || f->node != p || f->in != v || !x->ok || x->post != 1 ||
        f->n_nodes > (int)(sizeof ep->nodes / sizeof ep->nodes[0]) ||
        !same_shape(nat_shape(bm, f->out), o) || nat_shape(bm, f->out)->dtype != AIT_F32)
        return false;
    if (x->scale) {
        int axis = f->axis < 0 ? o->rank - 1 : f->axis;
        if (!bias_ok || axis != o->rank - 1 || f->channels != o->dims[o->rank - 1]) return false;
        for (int64_t c = 0; c < f->channels; c++)
            if (x->scale[c] != 1) return false;
    }
    if (x->act1.f != FF_NONE && x->act2.f != FF_NONE) return false;
    nat_epi next = *ep;
    if (!fixed_act(x->act1.f != FF_NONE ? &x->act1 : &x->act2, &next)) return false;
    if (x->residual >= 0) {
        if (!bm->vals[x->residual].done || !same_shape(nat_shape(bm, x->residual), o)) return false;
        next.res = x->residual;
        next.res_after = x->act1.f != FF_NONE;
    }
    for (int j = 0; j < f->n_nodes; j++) {
        const node *n = &bm->g->nodes[f->nodes[j]];
        if (!exec_node_runs(bm->x, f->nodes[j])) return false;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && bm->vals[n->out[k]].done) return false;
        next.nodes[j] = f->nodes[j];
    }
    next.n_nodes = f->n_nodes;
    next.fixed = x->scale ? fi + 1 : 0;
    next.out = f->out;
    *ep = next;
    return true;
}

/* x * sigmoid(x) after v, as torch exports SiLU: v read (by nodes that run)
 * by exactly a Sigmoid of it and a Mul of it by that Sigmoid's output, which
 * the Mul alone reads; the Sigmoid's node, *mul the Mul's; -1 when not. */
static int silu_at(const built *bm, int v, int *mul)
{
    if (bm->vals[v].uses != 2) return -1; /* a module output counts as a use */
    int sig = -1, m = -1;
    for (int r = bm->reader_at[v]; r < bm->reader_at[v + 1]; r++) {
        int j = bm->readers[r];
        if (!exec_node_runs(bm->x, j)) continue;
        const node *n = &bm->g->nodes[j];
        if (n->domain && n->domain[0]) return -1;
        if (!strcmp(n->op, "Sigmoid") && sig < 0 && n->n_in == 1 && n->n_out == 1 && n->out[0] >= 0)
            sig = j;
        else if (!strcmp(n->op, "Mul") && m < 0 && n->n_in == 2)
            m = j;
        else
            return -1;
    }
    if (sig < 0 || m < 0) return -1;
    const node *x = &bm->g->nodes[m];
    int s = bm->g->nodes[sig].out[0];
    if (nat_sole_consumer(bm, s) != m || !((x->in[0] == v && x->in[1] == s) || (x->in[0] == s && x->in[1] == v)))
        return -1;
    *mul = m;
    return sig;
}

void nat_chain(const built *bm, int v, bool row_bias, bool bias_ok, nat_epi *ep)
{
    const tensor *o = nat_shape(bm, v);
    ep->out = v;
    if (!o || o->dtype != AIT_F32 || o->rank < (row_bias ? 4 : 1)) return;
    if (!row_bias && chain_of_fusion(bm, v, o, bias_ok, ep)) return;
    while (ep->n_nodes < 8) {
        int i = nat_sole_consumer(bm, ep->out), mul = -1;
        if (i < 0 && ep->n_nodes < 7 && ep->act == GEMM_ACT_NONE && ep->res < 0)
            i = silu_at(bm, ep->out, &mul);
        if (i < 0) return;
        if (mul >= 0) { /* SiLU: the Sigmoid and the Mul as one activation */
            const node *x = &bm->g->nodes[mul];
            const tensor *y = x->n_out == 1 && x->out[0] >= 0 ? nat_shape(bm, x->out[0]) : NULL;
            if (!same_shape(y, o) || y->dtype != AIT_F32) return;
            ep->act = GEMM_ACT_SILU;
            ep->nodes[ep->n_nodes++] = i;
            ep->nodes[ep->n_nodes++] = mul;
            ep->out = x->out[0];
            continue;
        }
        const node *n = &bm->g->nodes[i];
        if ((n->domain && n->domain[0]) || n->n_out != 1 || n->out[0] < 0) return;
        const tensor *y = nat_shape(bm, n->out[0]);
        if (!same_shape(y, o) || y->dtype != AIT_F32) return;
        nat_epi next = *ep;
        if (!strcmp(n->op, "Add") && n->n_in == 2) {
            int other = n->in[0] == ep->out ? n->in[1] : n->in[0];
            const tensor *t = nat_shape(bm, other);
            /* the other operand must be ready when the anchor runs */
            if (n->in[0] == n->in[1] || !t || t->dtype != AIT_F32 || !bm->vals[other].done) return;
            if (bias_ok && ep->bias < 0 && ep->res < 0 && ep->act == GEMM_ACT_NONE &&
                nat_const(bm, other) && is_bias(t, o, row_bias)) {
                next.bias = other;
            } else if (ep->res < 0 && same_shape(t, o)) {
                next.res = other;
                next.res_after = ep->act != GEMM_ACT_NONE;
            } else {
                return;
            }
        } else if (ep->act == GEMM_ACT_NONE && ep->res < 0 && as_act(bm, n, &next)) {
        } else if (n->in[0] == ep->out && pad_none(bm, n)) { /* nothing to do: swallowed */
        } else {
            return;
        }
        next.out = n->out[0];
        next.nodes[next.n_nodes++] = i;
        *ep = next;
    }
}

void nat_chain_act_last(const built *bm, nat_epi *ep)
{
    if (ep->res < 0 || ep->res_after || ep->act != GEMM_ACT_NONE || ep->n_nodes >= 8) return;
    int i = nat_sole_consumer(bm, ep->out);
    if (i < 0) return;
    const node *n = &bm->g->nodes[i];
    if ((n->domain && n->domain[0]) || n->n_out != 1 || n->out[0] < 0) return;
    const tensor *o = nat_shape(bm, ep->out), *y = nat_shape(bm, n->out[0]);
    nat_epi next = *ep;
    if (!o || !y || !same_shape(y, o) || y->dtype != AIT_F32 || !as_act(bm, n, &next)) return;
    next.out = n->out[0];
    next.nodes[next.n_nodes++] = i;
    *ep = next;
}

void nat_gemm_epi(const built *bm, const nat_epi *ep, int64_t off, int64_t ldr, gemm_epi *out)
{
    if (ep->fixed) { /* a fusion's bias (chain_of_fusion) */
        out->bias_mode = GEMM_BIAS_COL;
        out->bias = bm->fus->f[ep->fixed - 1].fixed.shift;
    }
    out->act = ep->act;
    out->lo = ep->lo;
    out->hi = ep->hi;
    if (ep->res >= 0) {
        out->res = (const float *)bm->vals[ep->res].cur->data + off;
        out->ldr = ldr;
        out->res_after = ep->res_after;
    }
}

/* The kernels' activation for the epilogue's. */
kact nat_kact(const nat_epi *ep)
{
    return (kact){gemm_act_fun(ep->act), ep->lo, ep->hi};
}

void nat_res_add(const built *bm, const nat_step *st, float *y)
{
    if (st->epi.res < 0) return;
    const float *r = bm->vals[st->epi.res].cur->data;
    size_t total = tensor_numel(&bm->vals[st->epi.out].t);
    for (size_t k = 0; k < total; k++) y[k] += r[k];
}

int nat_bn_after(const built *bm, int v, int64_t c)
{
    int i = nat_sole_consumer(bm, v);
    return i >= 0 && nat_bn_node(bm, i, v, c) ? i : -1;
}

bool nat_bn_node(const built *bm, int i, int v, int64_t c)
{
    const node *n = &bm->g->nodes[i];
    if (strcmp(n->op, "BatchNormalization") || (n->domain && n->domain[0]) || n->n_in != 5 ||
        n->in[0] != v || n->n_out < 1 || n->out[0] < 0 || n->version < 7 ||
        attr_int(n, "training_mode", 0) != 0 || attr_int(n, "spatial", 1) != 1)
        return false;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && bm->vals[n->out[k]].uses) return false; /* training outputs */
    for (int k = 1; k < 5; k++) {
        const tensor *t = nat_shape(bm, n->in[k]);
        if (!t || !nat_const(bm, n->in[k]) || t->dtype != AIT_F32 || t->rank != 1 ||
            t->dims[0] != c)
            return false;
    }
    return true;
}

void nat_bn_fold(const built *bm, int bn, int64_t c, float *s, float *t)
{
    const node *n = &bm->g->nodes[bn];
    const float *g = nat_shape(bm, n->in[1])->data, *b = nat_shape(bm, n->in[2])->data,
                *m = nat_shape(bm, n->in[3])->data, *v = nat_shape(bm, n->in[4])->data;
    float eps = attr_float(n, "epsilon", 1e-5f);
    for (int64_t k = 0; k < c; k++) {
        s[k] = g[k] / sqrtf(v[k] + eps);
        t[k] = b[k] - m[k] * s[k];
    }
}
