/* The rotary position embedding from its decomposed export (graph/fuse.h's
 * FK_ROTARY): y = x * cos + concat(-x[h:], x[:h]) * sin over the last axis. */
#include <string.h>

#include "graph/fuse_ctx.h"

/* The live node computing v (its only output) with op `op`, or -1. */
static int made(const fctx *c, int v, const char *op)
{
    int p = v >= 0 ? c->g->vals[v].producer : -1;
    if (p < 0 || p >= c->g->n_nodes || !fx_is(c, p, op)) return -1;
    const node *n = &c->g->nodes[p];
    return n->n_out == 1 && n->out[0] == v && n->n_in >= 1 && n->in[0] >= 0 ? p : -1;
}

/* Value v as one known integer (a constant, or a value the shapes carry). */
static bool one_int(const fctx *c, int v, int64_t *out)
{
    tensor tmp;
    const tensor *t = fx_shape(c, v, &tmp);
    if (!t || !t->data || tensor_numel(t) != 1) return false;
    if (t->dtype == AIT_I64) *out = *(const int64_t *)t->data;
    else if (t->dtype == AIT_I32) *out = *(const int32_t *)t->data;
    else return false;
    return true;
}

/* Slice node i reads x over its last axis (of R, extent d) with step 1, from
 * lo to hi (clamped as the op clamps them). */
static bool slice_last(const fctx *c, int i, int x, int R, int64_t d, int64_t *lo, int64_t *hi)
{
    const node *n = &c->g->nodes[i];
    int64_t axis, step = 1;
    if (n->version < 10 || n->n_in < 4 || n->in[0] != x || !one_int(c, n->in[1], lo) ||
        !one_int(c, n->in[2], hi) || !one_int(c, n->in[3], &axis) || (axis != -1 && axis != R - 1) ||
        (n->n_in > 4 && n->in[4] >= 0 && (!one_int(c, n->in[4], &step) || step != 1)))
        return false;
    if (*lo < 0) *lo += d;
    if (*hi < 0) *hi += d;
    *lo = *lo < 0 ? 0 : *lo > d ? d : *lo;
    *hi = *hi < 0 ? 0 : *hi > d ? d : *hi;
    return true;
}

/* cos or sin: float32 [.., s, d], every axis before s of 1, s x's axis R - 2. */
static bool angles(const fctx *c, int v, const tensor *x)
{
    tensor tmp;
    const tensor *t = fx_shape(c, v, &tmp);
    int R = x->rank;
    if (!t || t->dtype != AIT_F32 || t->rank < 2 || t->rank > R || t->dims[t->rank - 1] != x->dims[R - 1] ||
        t->dims[t->rank - 2] != x->dims[R - 2])
        return false;
    for (int k = 0; k < t->rank - 2; k++)
        if (t->dims[k] != 1) return false;
    return true;
}

/* The pattern from its Concat k. */
static ait_status one_rotary(fctx *c, int k, ait_error *e)
{
    const node *cn = &c->g->nodes[k];
    if (cn->n_in != 2 || cn->n_out != 1 || cn->out[0] < 0) return AIT_OK;
    int ng = made(c, cn->in[0], "Neg"), s1 = made(c, cn->in[1], "Slice");
    int s2 = ng >= 0 ? made(c, c->g->nodes[ng].in[0], "Slice") : -1;
    if (s1 < 0 || s2 < 0 || fx_only(c, cn->in[0]) != k || fx_only(c, cn->in[1]) != k ||
        fx_only(c, c->g->nodes[ng].in[0]) != ng)
        return AIT_OK;
    int x = c->g->nodes[s1].in[0];
    tensor tx;
    const tensor *xs = fx_shape(c, x, &tx);
    if (!xs || xs->dtype != AIT_F32 || xs->rank < 2) return AIT_OK;
    const int R = xs->rank;
    const int64_t d = xs->dims[R - 1], h = d / 2;
    int64_t axis = attr_int(cn, "axis", 0), lo1, hi1, lo2, hi2;
    if (d < 2 || d % 2 || (axis != -1 && axis != R - 1) || !slice_last(c, s1, x, R, d, &lo1, &hi1) ||
        !slice_last(c, s2, x, R, d, &lo2, &hi2) || lo1 != 0 || hi1 != h || lo2 != h || hi2 != d)
        return AIT_OK;
    int side, m2 = fx_only(c, cn->out[0]);
    if (m2 < 0 || !fx_is(c, m2, "Mul")) return AIT_OK;
    int sin = fx_other(c, m2, cn->out[0], &side);
    int ad = fx_only(c, c->g->nodes[m2].out[0]);
    if (sin < 0 || ad < 0 || !fx_is(c, ad, "Add")) return AIT_OK;
    int p = fx_other(c, ad, c->g->nodes[m2].out[0], &side);
    int m1 = made(c, p, "Mul");
    if (m1 < 0 || fx_only(c, p) != ad || c->g->nodes[ad].out[0] < 0) return AIT_OK;
    int cos = fx_other(c, m1, x, &side);
    if (cos < 0 || !angles(c, cos, xs) || !angles(c, sin, xs)) return AIT_OK;
    tensor ty;
    const tensor *ys = fx_shape(c, c->g->nodes[ad].out[0], &ty);
    if (ys && (ys->rank != R || memcmp(ys->dims, xs->dims, sizeof(int64_t) * (size_t)R))) return AIT_OK;
    fmatch m = {0};
    const int nodes[] = {s1, s2, ng, k, m2, m1, ad};
    for (int j = 0; j < 7; j++) fx_add(&m, nodes[j]);
    if (!fx_closed(c, &m, c->g->nodes[ad].out[0], -1)) return AIT_OK;
    fusion f = {.kind = FK_ROTARY, .in = x, .out = c->g->nodes[ad].out[0], .ln_scale = -1, .ln_bias = -1,
                .axis = -1, .rot_cos = cos, .rot_sin = sin};
    return fx_record(c, &f, &m, e);
}

ait_status fx_rotary(fctx *c, ait_error *e)
{
    for (int i = 0; i < c->g->n_nodes; i++) {
        if (!fx_is(c, i, "Concat")) continue;
        ait_status s = one_rotary(c, i, e);
        if (s != AIT_OK) return s;
    }
    return AIT_OK;
}
