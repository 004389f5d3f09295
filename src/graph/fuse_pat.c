/* LayerNormalization and attention from their decomposed exports. */
#include <math.h>
#include <string.h>

#include "graph/fuse_ctx.h"

/* Node j's first output, -1 when it has none. */
static int out0(const fctx *c, int j)
{
    const node *n = &c->g->nodes[j];
    return n->n_out > 0 ? n->out[0] : -1;
}

/* ReduceMean node i reduces x over its last axis only, keeping dims. */
static bool mean_last(const fctx *c, int i, int x)
{
    const node *n = &c->g->nodes[i];
    if (!fx_is(c, i, "ReduceMean") || n->n_in < 1 || n->in[0] != x || n->n_out != 1 ||
        n->out[0] < 0 ||
        attr_int(n, "keepdims", 1) != 1)
        return false;
    int64_t axis;
    int cnt = 0;
    const int64_t *ax = attr_ints(n, "axes", &cnt);
    if (ax) {
        if (cnt != 1) return false;
        axis = ax[0];
    } else {
        const tensor *t = n->n_in > 1 && n->in[1] >= 0 ? c->g->vals[n->in[1]].konst : NULL;
        if (!t || !t->data || t->dtype != AIT_I64 || tensor_numel(t) != 1) return false;
        axis = *(const int64_t *)t->data;
    }
    if (axis == -1) return true;
    tensor tmp;
    const tensor *s = fx_shape(c, x, &tmp);
    return s && axis == s->rank - 1;
}

/* The Add/Mul reading v with a constant on the other side: that constant. */
static int with_const(const fctx *c, int j, const char *op, int v)
{
    int side;
    if (j < 0 || !fx_is(c, j, op)) return -1;
    int o = fx_other(c, j, v, &side);
    return o >= 0 && fx_konst(c, o) ? o : -1;
}

static ait_status one_layernorm(fctx *c, int r1, ait_error *e)
{
    if (c->g->nodes[r1].n_in < 1) return AIT_OK;
    int x = c->g->nodes[r1].in[0];
    if (!mean_last(c, r1, x)) return AIT_OK;
    fmatch m = {0};
    fx_add(&m, r1);
    int d = -1;
    for (int k = c->coff[x]; k < c->coff[x + 1] && d < 0; k++) {
        int j = c->cons[k];
        const node *n = &c->g->nodes[j];
        if (fx_is(c, j, "Sub") && n->n_in == 2 && n->in[0] == x && n->in[1] == out0(c, r1)) d = j;
    }
    if (d < 0) return AIT_OK;
    fx_add(&m, d);
    int dv = out0(c, d), p = fx_reader(c, dv, "Pow");
    if (p >= 0 && !fx_with(c, p, "Pow", dv, 2.0f, false)) p = -1;
    if (p < 0) { /* d * d */
        p = fx_reader(c, dv, "Mul");
        const node *n = p >= 0 ? &c->g->nodes[p] : NULL;
        if (n && (n->n_in != 2 || n->in[0] != dv || n->in[1] != dv)) p = -1;
    }
    if (p < 0) return AIT_OK;
    fx_add(&m, p);
    int r2 = fx_reader(c, out0(c, p), "ReduceMean");
    if (r2 < 0 || !mean_last(c, r2, out0(c, p))) return AIT_OK;
    fx_add(&m, r2);
    int a = fx_reader(c, out0(c, r2), "Add"), side;
    float eps;
    if (a < 0 || !fx_scalar(c, fx_other(c, a, out0(c, r2), &side), &eps)) return AIT_OK;
    fx_add(&m, a);
    int sq = fx_reader(c, out0(c, a), "Sqrt");
    if (sq < 0) return AIT_OK;
    fx_add(&m, sq);
    int dv2 = fx_reader(c, out0(c, sq), "Div");
    const node *dn = dv2 >= 0 ? &c->g->nodes[dv2] : NULL;
    if (!dn || dn->n_in != 2 || dn->in[0] != dv || dn->in[1] != out0(c, sq) || out0(c, dv2) < 0)
        return AIT_OK;
    fx_add(&m, dv2);
    int out = out0(c, dv2);
    fusion f = {.kind = FK_LAYERNORM, .in = x, .eps = eps, .ln_scale = -1, .ln_bias = -1,
                .q = -1, .kt = -1, .v = -1, .mask = -1, .axis = -1};
    int mu = fx_only(c, out);
    f.ln_scale = with_const(c, mu, "Mul", out);
    if (f.ln_scale >= 0) {
        fx_add(&m, mu);
        out = out0(c, mu);
        int ad = fx_only(c, out);
        f.ln_bias = with_const(c, ad, "Add", out);
        if (f.ln_bias >= 0) {
            fx_add(&m, ad);
            out = out0(c, ad);
        }
    }
    if (!fx_closed(c, &m, out, -1)) return AIT_OK;
    f.out = out;
    return fx_record(c, &f, &m, e);
}

ait_status fx_layernorm(fctx *c, ait_error *e)
{
    for (int i = 0; i < c->g->n_nodes; i++) {
        if (!fx_is(c, i, "ReduceMean")) continue;
        ait_status s = one_layernorm(c, i, e);
        if (s != AIT_OK) return s;
    }
    return AIT_OK;
}

/* The live node computing v, or -1. */
static int made_by(const fctx *c, int v, const char *op)
{
    int p = v >= 0 ? c->g->vals[v].producer : -1;
    if (p < 0 || p >= c->g->n_nodes || !fx_is(c, p, op)) return -1;
    const node *n = &c->g->nodes[p];
    return n->n_out == 1 && n->n_in == 2 && n->in[0] >= 0 && n->in[1] >= 0 ? p : -1;
}

static ait_status one_attention(fctx *c, int sm, ait_error *e)
{
    const node *s = &c->g->nodes[sm];
    if (s->version < 13 || s->n_in != 1 || s->n_out != 1) return AIT_OK;
    int64_t axis = attr_int(s, "axis", -1);
    tensor tmp;
    const tensor *sh = fx_shape(c, s->in[0], &tmp);
    if (axis != -1 && !(sh && axis == sh->rank - 1)) return AIT_OK;
    fusion f = {.kind = FK_ATTENTION, .mask = -1, .scale = 1.0f, .ln_scale = -1, .ln_bias = -1,
                .in = -1, .axis = -1};
    fmatch m = {0};
    fx_add(&m, sm);
    int v = s->in[0], j;
    if ((j = made_by(c, v, "Add")) >= 0) { /* the mask, on either side */
        const node *a = &c->g->nodes[j];
        int k = made_by(c, a->in[0], "Div") >= 0 || made_by(c, a->in[0], "Mul") >= 0 ||
                        made_by(c, a->in[0], "MatMul") >= 0
                    ? 0
                    : 1;
        f.mask = a->in[1 - k];
        v = a->in[k];
        fx_add(&m, j);
    }
    float sc;
    if ((j = made_by(c, v, "Div")) >= 0 || (j = made_by(c, v, "Mul")) >= 0) {
        const node *d = &c->g->nodes[j];
        bool div = !strcmp(d->op, "Div");
        int side = made_by(c, d->in[0], "MatMul") >= 0 ? 0 : 1;
        if ((div && side) || !fx_scalar(c, d->in[1 - side], &sc) || (div && sc == 0)) return AIT_OK;
        f.scale = div ? 1.0f / sc : sc;
        v = d->in[side];
        fx_add(&m, j);
    }
    int q = made_by(c, v, "MatMul");
    if (q < 0) return AIT_OK;
    fx_add(&m, q);
    int o = fx_reader(c, out0(c, sm), "MatMul");
    if (o < 0 || c->g->nodes[o].n_in != 2 || c->g->nodes[o].in[0] != out0(c, sm)) return AIT_OK;
    fx_add(&m, o);
    f.q = c->g->nodes[q].in[0];
    f.kt = c->g->nodes[q].in[1];
    f.v = c->g->nodes[o].in[1];
    f.out = out0(c, o);
    if (f.out < 0) return AIT_OK;
    if (f.mask == f.q || !fx_closed(c, &m, f.out, -1)) return AIT_OK;
    f.in = f.q;
    return fx_record(c, &f, &m, e);
}

ait_status fx_attention(fctx *c, ait_error *e)
{
    for (int i = 0; i < c->g->n_nodes; i++) {
        if (!fx_is(c, i, "Softmax")) continue;
        ait_status s = one_attention(c, i, e);
        if (s != AIT_OK) return s;
    }
    return AIT_OK;
}
