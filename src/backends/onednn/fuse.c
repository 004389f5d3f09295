/* onednn: what follows a primitive and goes into its post-ops (element-wise
 * functions, a binary op with a constant or an earlier value, the sum with
 * a residual), and BatchNormalization folded into the Conv before it. A
 * node is swallowed only when it is the only consumer of the value before
 * it, so no one else needs that value. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/onednn/onednn.h"

typedef struct elt_row {
    const char *op;
    dnnl_alg_kind_t alg;
    float a, b;
    const char *attr_a; /* attribute giving a, or NULL */
} elt_row;

static const elt_row elts[] = {
    {"Relu", dnnl_eltwise_relu, 0, 0, NULL},
    {"LeakyRelu", dnnl_eltwise_relu, 0.01f, 0, "alpha"},
    {"Sigmoid", dnnl_eltwise_logistic, 0, 0, NULL},
    {"Tanh", dnnl_eltwise_tanh, 0, 0, NULL},
    {"Elu", dnnl_eltwise_elu, 1.0f, 0, "alpha"},
    {"Exp", dnnl_eltwise_exp, 0, 0, NULL},
    {"Abs", dnnl_eltwise_abs, 0, 0, NULL},
    {"Neg", dnnl_eltwise_linear, -1.0f, 0, NULL},
    {"Clip", dnnl_eltwise_clip_v2, -FLT_MAX, FLT_MAX, NULL},
    {"HardSwish", dnnl_eltwise_hardswish, 0, 0, NULL}, /* x * relu6(x + 3) / 6, as ONNX's */
};

/* Clip's bound from input k (opset 11+) or attribute name: *v unchanged
 * when absent; false when it is not a constant scalar. */
static bool clip_bound(const built *bm, const node *n, int k, const char *name, float *v)
{
    if (bm->g->opset < 11) {
        *v = attr_float(n, name, *v);
        return true;
    }
    if (k >= n->n_in || n->in[k] < 0) return true;
    const tensor *t = dn_shape(bm, n->in[k]);
    if (!t || !t->data || t->dtype != AIT_F32 || tensor_numel(t) != 1) return false;
    *v = *(const float *)t->data;
    return true;
}

bool dn_eltwise(const built *bm, int i, dnnl_alg_kind_t *alg, float *a, float *b)
{
    const node *n = &bm->g->nodes[i];
    for (size_t r = 0; r < sizeof elts / sizeof elts[0]; r++) {
        if (strcmp(n->op, elts[r].op) != 0) continue;
        *alg = elts[r].alg;
        *a = elts[r].attr_a ? attr_float(n, elts[r].attr_a, elts[r].a) : elts[r].a;
        *b = elts[r].b;
        if (strcmp(n->op, "Clip") == 0 &&
            (!clip_bound(bm, n, 1, "min", a) || !clip_bound(bm, n, 2, "max", b) || *a > *b))
            return false;
        return true;
    }
    return false;
}

int dn_only_consumer(const built *bm, int v)
{
    const graph *g = bm->g;
    if (bm->p->vals[v].uses != 1 || g->vals[v].is_output) return -1;
    for (int j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == v) return -1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!exec_node_runs(bm->p->x, i)) continue;
        const node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == v) return i;
    }
    return -1;
}

static bool same_shape(const tensor *a, const tensor *b)
{
    return a && b && a->rank == b->rank &&
           memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* True when t broadcasts to full without growing it. */
static bool bcasts_to(const tensor *t, const tensor *full)
{
    if (!t || t->rank > full->rank) return false;
    for (int i = 0; i < t->rank; i++) {
        int64_t d = t->dims[i], f = full->dims[full->rank - t->rank + i];
        if (d != 1 && d != f) return false;
    }
    return true;
}

typedef struct bin_row {
    const char *op;
    dnnl_alg_kind_t alg;
    bool commutes;
} bin_row;

static const bin_row bins[] = {
    {"Add", dnnl_binary_add, true},
    {"Mul", dnnl_binary_mul, true},
    {"Sub", dnnl_binary_sub, false},
    {"Div", dnnl_binary_div, false},
};

/* Value v's constant scalar (any shape of one element). */
static bool scalar(const built *bm, int v, float *f)
{
    const tensor *t = v >= 0 ? dn_shape(bm, v) : NULL;
    if (!t || !t->data || t->dtype != AIT_F32 || tensor_numel(t) != 1) return false;
    *f = *(const float *)t->data;
    return true;
}

bool dn_scalar_linear(const built *bm, int i, int *in, float *a, float *b)
{
    const node *n = &bm->g->nodes[i];
    float k;
    if ((n->domain && n->domain[0]) || n->n_in != 2 || n->n_out != 1 || n->in[0] < 0 ||
        n->in[1] < 0)
        return false;
    int side = scalar(bm, n->in[1], &k) ? 0 : scalar(bm, n->in[0], &k) ? 1 : -1;
    if (side < 0 || (side == 0 && scalar(bm, n->in[0], &(float){0}))) return false;
    const tensor *x = dn_shape(bm, n->in[side]), *y = dn_shape(bm, n->out[0]);
    if (!x || !y || !same_shape(x, y)) return false; /* the scalar must not grow the rank */
    *in = n->in[side];
    if (!strcmp(n->op, "Add")) *a = 1, *b = k;
    else if (!strcmp(n->op, "Mul")) *a = k, *b = 0;
    else if (!strcmp(n->op, "Sub")) *a = side ? -1 : 1, *b = side ? k : -k;
    else if (!strcmp(n->op, "Div") && side == 0 && k != 0 && isfinite(1.0f / k)) *a = 1 / k, *b = 0;
    else return false;
    return true;
}

/* Node n is op with input `in` and a constant scalar near want on the
 * other side (either side when commutes). */
static bool op_with(const built *bm, int j, const char *op, int in, float want, bool commutes)
{
    const node *n = &bm->g->nodes[j];
    float f;
    if (strcmp(n->op, op) != 0 || n->n_in != 2 || n->n_out != 1) return false;
    int side = n->in[0] == in ? 0 : commutes && n->in[1] == in ? 1 : -1;
    return side >= 0 && scalar(bm, n->in[1 - side], &f) && fabsf(f - want) <= 1e-4f * fabsf(want);
}

/* x * 0.5 * (1 + erf(x / sqrt(2))) as PyTorch exports nn.GELU: Div(x, 1.414)
 * -> Erf -> Add(1) -> Mul(x, .) -> Mul(., 0.5), x read by the Div and the
 * first Mul only: one gelu_erf post-op. */
static bool gelu_at(const built *bm, int v, dn_post *p)
{
    const graph *g = bm->g;
    if (bm->p->vals[v].uses != 2 || g->vals[v].is_output) return false;
    int d = -1, m = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!exec_node_runs(bm->p->x, i)) continue;
        const node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == v) {
                if (strcmp(n->op, "Div") == 0) d = i;
                else if (strcmp(n->op, "Mul") == 0) m = i;
                break;
            }
    }
    if (d < 0 || m < 0 || !op_with(bm, d, "Div", v, 1.41421356f, false)) return false;
    int e = dn_only_consumer(bm, g->nodes[d].out[0]);
    if (e < 0 || strcmp(g->nodes[e].op, "Erf") != 0) return false;
    int a = dn_only_consumer(bm, g->nodes[e].out[0]);
    if (a < 0 || !op_with(bm, a, "Add", g->nodes[e].out[0], 1.0f, true)) return false;
    if (dn_only_consumer(bm, g->nodes[a].out[0]) != m) return false;
    const node *mn = &g->nodes[m];
    if (mn->n_in != 2 || !((mn->in[0] == v && mn->in[1] == g->nodes[a].out[0]) ||
                           (mn->in[1] == v && mn->in[0] == g->nodes[a].out[0])))
        return false;
    int h = dn_only_consumer(bm, mn->out[0]);
    if (h < 0 || !op_with(bm, h, "Mul", mn->out[0], 0.5f, true)) return false;
    const tensor *vs = dn_shape(bm, v), *os = dn_shape(bm, g->nodes[h].out[0]);
    if (!vs || !os || !same_shape(vs, os)) return false;
    *p = (dn_post){.node = h, .kind = DN_PO_ELT, .alg = dnnl_eltwise_gelu_erf, .other = -1,
                   .out = g->nodes[h].out[0], .n_swallow = 4,
                   .swallow = {g->nodes[d].out[0], g->nodes[e].out[0], g->nodes[a].out[0],
                               mn->out[0]}};
    return true;
}

void dn_chain_match(const built *bm, int anchor, int v, bool allow_sum, dn_chain *c)
{
    const graph *g = bm->g;
    bool sum_used = false, lin_used = false;
    c->n = 0;
    while (c->n < DN_MAX_POST) {
        if (gelu_at(bm, v, &c->p[c->n])) {
            v = c->p[c->n++].out;
            continue;
        }
        int j = dn_only_consumer(bm, v);
        if (j < 0) return;
        const node *n = &g->nodes[j];
        if (n->domain && n->domain[0]) return;
        if (n->n_out != 1 || n->out[0] < 0) return;
        const tensor *vs = dn_shape(bm, v), *os = dn_shape(bm, n->out[0]);
        if (!vs || !os || !same_shape(vs, os) || os->dtype != AIT_F32) return;
        dn_post p = {.node = j, .out = n->out[0], .other = -1};
        int lin_in = -1;
        if (dn_eltwise(bm, j, &p.alg, &p.a, &p.b)) {
            if (n->in[0] != v) return;
            p.kind = DN_PO_ELT;
        } else if (dn_scalar_linear(bm, j, &lin_in, &p.a, &p.b)) {
            /* One linear per chain: oneDNN 2.6's brgconv_1x1 gave wrong
             * answers for a Conv with linear, clip, linear post-ops
             * (HardSigmoid as Add 3, Clip 0 6, Div 6; test_backends). */
            if (lin_in != v || lin_used) return;
            lin_used = true;
            p.kind = DN_PO_ELT;
            p.alg = dnnl_eltwise_linear;
        } else {
            const bin_row *r = NULL;
            for (size_t k = 0; k < sizeof bins / sizeof bins[0]; k++)
                if (strcmp(n->op, bins[k].op) == 0) r = &bins[k];
            if (!r || n->n_in != 2 || n->in[0] == n->in[1]) return;
            int side = n->in[0] == v ? 0 : 1;
            if (side == 1 && !r->commutes) return;
            int o = n->in[1 - side];
            const tensor *ot = dn_shape(bm, o);
            if (!ot || ot->dtype != AIT_F32 || !bcasts_to(ot, os)) return;
            /* The other operand must be there before the anchor runs. */
            if (!bm->p->vals[o].done) return;
            p.other = o;
            p.alg = r->alg;
            if (allow_sum && !sum_used && r->alg == dnnl_binary_add && !ot->data &&
                same_shape(ot, os)) {
                p.kind = DN_PO_SUM;
                sum_used = true;
            } else {
                p.kind = DN_PO_BIN;
            }
        }
        c->p[c->n++] = p;
        v = p.out;
    }
}

/* The md of value o broadcast to full_rank dims, with the leading
 * full_rank - prim_rank + 1 dims merged; false when it cannot be said so. */
static bool bin_md(const built *bm, int o, int full_rank, const int64_t *full_dims, int prim_rank,
                   dnnl_memory_desc_t *md)
{
    const tensor *t = dn_shape(bm, o);
    int64_t d[DNNL_MAX_NDIMS], m[DNNL_MAX_NDIMS];
    if (!t || full_rank > DNNL_MAX_NDIMS || prim_rank > full_rank) return false;
    for (int i = 0; i < full_rank; i++) {
        int k = i - (full_rank - t->rank);
        d[i] = k >= 0 ? t->dims[k] : 1;
    }
    int lead = full_rank - prim_rank + 1;
    bool ones = true, full = true;
    m[0] = 1;
    for (int i = 0; i < lead; i++) {
        ones &= d[i] == 1;
        full &= d[i] == full_dims[i];
        m[0] *= d[i];
    }
    if (!ones && !full) return false;
    for (int i = lead; i < full_rank; i++) m[i - lead + 1] = d[i];
    dn_md_plain(md, prim_rank, m);
    return true;
}

/* oneDNN's implementation name for pd ("?" when it does not say). */
const char *dn_impl(const_dnnl_primitive_desc_t pd)
{
    const char *s = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s) != dnnl_success || !s)
        return "?";
    return s;
}

/* A reference implementation: oneDNN's unoptimised fallback, named "ref:..."
 * (or "gemm:ref", a convolution over its reference GEMM). Reorders' "simple"
 * ones are fine. */
bool dn_is_ref(const_dnnl_primitive_desc_t pd)
{
    const char *s = dn_impl(pd);
    return strncmp(s, "ref", 3) == 0 || strstr(s, ":ref") != NULL;
}

/* The md of a BIN post-op's operand: as bin_md, or `like` (the primitive's
 * dst layout) when given and the operand has the dst's full shape. *in_like
 * says which. */
static bool post_md(const built *bm, int o, int full_rank, const int64_t *full_dims, int prim_rank,
                    const dnnl_memory_desc_t *like, dnnl_memory_desc_t *md, bool *in_like)
{
    const tensor *t = dn_shape(bm, o);
    *in_like = like && t && prim_rank == full_rank && t->rank == full_rank &&
               memcmp(t->dims, full_dims, sizeof(int64_t) * (size_t)full_rank) == 0;
    if (*in_like) {
        *md = *like;
        return true;
    }
    return bin_md(bm, o, full_rank, full_dims, prim_rank, md);
}

/* The primitive desc for desc with the first n of c's post-ops (operand
 * layouts as post_md says, mds[] receiving them); *pd NULL when oneDNN
 * refuses that form. */
static ait_status pd_try(built *bm, int anchor, const void *desc, const dn_chain *c, int n,
                         int full_rank, const int64_t *full_dims, int prim_rank,
                         const dnnl_memory_desc_t *pre_md, const float *scale,
                         const dnnl_memory_desc_t *like, dnnl_memory_desc_t *mds, bool *in_like,
                         dnnl_primitive_desc_t *pd)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    *pd = NULL;
    TRY(dn_check(bm, anchor, dnnl_primitive_attr_create(&attr), "attr"));
    dnnl_status_t s = dnnl_post_ops_create(&po);
    if (s == dnnl_success && scale) s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, scale);
    if (s == dnnl_success && pre_md) s = dnnl_post_ops_append_binary(po, dnnl_binary_add, pre_md);
    bool ok = true;
    for (int k = 0; s == dnnl_success && ok && k < n; k++) {
        const dn_post *p = &c->p[k];
        if (p->kind == DN_PO_ELT) {
            s = dnnl_post_ops_append_eltwise(po, 1.0f, p->alg, p->a, p->b);
        } else if (p->kind == DN_PO_SUM) {
            s = dnnl_post_ops_append_sum(po, 1.0f);
        } else {
            ok = post_md(bm, p->other, full_rank, full_dims, prim_rank, like, &mds[k], &in_like[k]);
            if (ok) s = dnnl_post_ops_append_binary(po, p->alg, &mds[k]);
        }
    }
    if (s == dnnl_success && ok) s = dnnl_primitive_attr_set_post_ops(attr, po);
    if (s == dnnl_success && ok) s = dnnl_primitive_desc_create(pd, desc, attr, bm->eng, NULL);
    if (po) dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success || !ok) *pd = NULL;
    if (s == dnnl_out_of_memory) return dn_check(bm, anchor, s, "primitive desc");
    return AIT_OK;
}

/* Whether some BIN post-op among the first n has an operand of the full shape
 * (so that it can be given in the dst's layout). */
static bool full_operand(const built *bm, const dn_chain *c, int n, int full_rank,
                         const int64_t *full_dims, int prim_rank)
{
    for (int k = 0; k < n; k++) {
        const tensor *t = c->p[k].kind == DN_PO_BIN ? dn_shape(bm, c->p[k].other) : NULL;
        if (t && prim_rank == full_rank && t->rank == full_rank &&
            memcmp(t->dims, full_dims, sizeof(int64_t) * (size_t)full_rank) == 0)
            return true;
    }
    return false;
}

/* Forms are tried from the whole chain down to none; within one, the
 * operands first plain, then (when oneDNN answered with a reference
 * implementation, which it does for a plain operand beside a channels-last
 * or blocked dst) in the dst's layout. A form oneDNN runs on a reference
 * implementation is never taken: fewer post-ops (the rest become primitives
 * of their own), else the node is left to its reference op. */
ait_status dn_pd_posts(built *bm, int anchor, const void *desc, const dn_chain *c, int full_rank,
                       const int64_t *full_dims, int prim_rank, const dnnl_memory_desc_t *pre_md,
                       dnnl_memory_t pre_mem, const float *scale, dnnl_primitive_desc_t *pd,
                       dnnl_exec_arg_t *args, int *n_args, int *np, int *sum_from)
{
    const int base = *n_args;
    *pd = NULL;
    *np = 0;
    *sum_from = -1;
    for (int n = c->n; n >= 0; n--) {
        dnnl_memory_desc_t mds[DN_MAX_POST], like;
        bool in_like[DN_MAX_POST] = {0}, use_like = false;
        dnnl_primitive_desc_t got = NULL;
        for (int pass = 0; pass < 2; pass++) {
            TRY(pd_try(bm, anchor, desc, c, n, full_rank, full_dims, prim_rank, pre_md, scale,
                       use_like ? &like : NULL, mds, in_like, &got));
            if (!got || !dn_is_ref(got)) break;
            dn_refused(bm);
            bool retry = pass == 0 && full_operand(bm, c, n, full_rank, full_dims, prim_rank);
            if (retry) {
                const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(got, dnnl_query_dst_md, 0);
                dnnl_memory_desc_t plain;
                dn_md_plain(&plain, full_rank, full_dims);
                retry = dmd && !dnnl_memory_desc_equal(dmd, &plain);
                if (retry) like = *dmd;
            }
            dnnl_primitive_desc_destroy(got);
            got = NULL;
            if (!retry) break;
            use_like = true;
        }
        if (!got) continue;
        /* Taken: the operands' memories and the arguments. */
        int idx = 0;
        if (pre_md) {
            args[(*n_args)++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1,
                                                  pre_mem};
            idx++;
        }
        for (int k = 0; k < n; k++, idx++) {
            const dn_post *p = &c->p[k];
            if (p->kind == DN_PO_SUM) *sum_from = p->other;
            if (p->kind != DN_PO_BIN) continue;
            dnnl_memory_t m = in_like[k] ? dn_as(bm, p->other, &mds[k]) : dn_view(bm, p->other, &mds[k]);
            if (!m) {
                dnnl_primitive_desc_destroy(got);
                *n_args = base;
                *sum_from = -1;
                return bm->err ? bm->err->code : AIT_E_INTERNAL;
            }
            args[(*n_args)++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, m};
        }
        *pd = got;
        *np = n;
        return AIT_OK;
    }
    return AIT_OK;
}

/* ---- BatchNormalization after Conv ------------------------------------------------ */

int dn_bn_after(const built *bm, int i)
{
    const node *cv = &bm->g->nodes[i];
    int j = dn_only_consumer(bm, cv->out[0]);
    if (j < 0) return -1;
    const node *n = &bm->g->nodes[j];
    if (strcmp(n->op, "BatchNormalization") != 0 || (n->domain && n->domain[0]) || n->n_in != 5 ||
        attr_int(n, "training_mode", 0) != 0 || n->in[0] != cv->out[0])
        return -1;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && bm->p->vals[n->out[k]].uses) return -1;
    const tensor *y = dn_shape(bm, cv->out[0]);
    if (!y || y->rank < 2) return -1;
    for (int k = 1; k < 5; k++) {
        const tensor *t = n->in[k] >= 0 ? dn_shape(bm, n->in[k]) : NULL;
        if (!t || !t->data || t->dtype != AIT_F32 || t->rank != 1 || t->dims[0] != y->dims[1])
            return -1;
    }
    return j;
}

ait_status dn_bn_fold(built *bm, int b, float *w, int64_t per_o, float *bias, int64_t o)
{
    const node *n = &bm->g->nodes[b];
    const float *gamma = dn_shape(bm, n->in[1])->data, *beta = dn_shape(bm, n->in[2])->data,
                *mean = dn_shape(bm, n->in[3])->data, *var = dn_shape(bm, n->in[4])->data;
    float eps = attr_float(n, "epsilon", 1e-5f);
    for (int64_t c = 0; c < o; c++) {
        /* as the reference computes it: (x - mean) / sqrt(var + eps) * gamma + beta */
        float sc = gamma[c] / sqrtf(var[c] + eps);
        for (int64_t k = 0; w && k < per_o; k++) w[c * per_o + k] *= sc;
        bias[c] = (bias[c] - mean[c]) * sc + beta[c];
    }
    return AIT_OK;
}
