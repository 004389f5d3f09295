/* Activations reading a value: the ONNX ops (Relu, Clip, HardSwish, ...)
 * and the forms exporters write them in (x * sigmoid(x); HardSwish as
 * x * clip(x + 3, 0, 6) / 6 in either order, or x * hardsigmoid(x);
 * HardSigmoid as clip(x + 3, 0, 6) / 6; GELU as 0.5 x (1 + erf(x / sqrt 2))
 * in the orders torch and others write; GELU's tanh form; Mish). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "graph/fuse_ctx.h"

typedef struct act_row {
    const char *op;
    fuse_fn f;
    float a, b;
    const char *attr_a, *attr_b;
} act_row;

static const act_row acts[] = {
    {"Relu", FF_RELU, 0, 0, NULL, NULL},
    {"LeakyRelu", FF_LEAKY_RELU, 0.01f, 0, "alpha", NULL},
    {"Sigmoid", FF_SIGMOID, 0, 0, NULL, NULL},
    {"Tanh", FF_TANH, 0, 0, NULL, NULL},
    {"Exp", FF_EXP, 0, 0, NULL, NULL},
    {"HardSigmoid", FF_HARDSIGMOID, 0.2f, 0.5f, "alpha", "beta"},
    {"HardSwish", FF_HARDSWISH, 0, 0, NULL, NULL},
    {"Elu", FF_ELU, 1.0f, 0, "alpha", NULL},
    {"Softplus", FF_SOFTPLUS, 0, 0, NULL, NULL},
    {"Mish", FF_MISH, 0, 0, NULL, NULL},
};

/* Clip's bound from input k (version 11 on) or attribute `name`. */
static bool clip_bound(const fctx *c, const node *n, int k, const char *name, float *v)
{
    if (n->version < 11) {
        *v = attr_float(n, name, *v);
        return true;
    }
    if (k >= n->n_in || n->in[k] < 0) return true;
    return fx_scalar(c, n->in[k], v);
}

/* Node i is a single-op activation of x: its function. */
static bool single(const fctx *c, int i, int x, fuse_step *st)
{
    const node *n = &c->g->nodes[i];
    if (n->n_in < 1 || n->in[0] != x || n->n_out != 1 || n->out[0] < 0) return false;
    st->a = st->b = 0;
    if (fx_is(c, i, "Clip")) {
        st->f = FF_CLIP;
        st->a = -FLT_MAX;
        st->b = FLT_MAX;
        return clip_bound(c, n, 1, "min", &st->a) && clip_bound(c, n, 2, "max", &st->b) &&
               st->a <= st->b;
    }
    if (fx_is(c, i, "Gelu")) {
        const char *ap = attr_str(n, "approximate", "none");
        st->f = !strcmp(ap, "tanh") ? FF_GELU_TANH : FF_GELU_ERF;
        return !strcmp(ap, "tanh") || !strcmp(ap, "none");
    }
    for (size_t r = 0; r < sizeof acts / sizeof acts[0]; r++) {
        if (!fx_is(c, i, acts[r].op)) continue;
        st->f = acts[r].f;
        st->a = acts[r].attr_a ? attr_float(n, acts[r].attr_a, acts[r].a) : acts[r].a;
        st->b = acts[r].attr_b ? attr_float(n, acts[r].attr_b, acts[r].b) : acts[r].b;
        return n->n_in == 1;
    }
    return false;
}

static bool near(float f, float want)
{
    return fabsf(f - want) <= 1e-4f * fabsf(want);
}

/* The Mul reading both x and v (either order), or -1. */
static int mul_of(const fctx *c, int v, int x)
{
    if (v < 0) return -1;
    for (int k = c->coff[v]; k < c->coff[v + 1]; k++) {
        int j = c->cons[k], side;
        if (fx_is(c, j, "Mul") && fx_other(c, j, v, &side) == x) return j;
    }
    return -1;
}

/* Node j is v / 6 or v * (1 / 6). */
static bool by6(const fctx *c, int j, int v)
{
    return fx_with(c, j, "Div", v, 6.0f, false) || fx_with(c, j, "Mul", v, 1.0f / 6, true);
}

/* Node j's first output, -1 when it has none. */
static int out0(const fctx *c, int j)
{
    const node *n = &c->g->nodes[j];
    return n->n_out > 0 ? n->out[0] : -1;
}

/* relu6(x + 3), as Add(x, 3) (node a) then Clip(0, 6): the Clip, or -1. */
static int relu6_x3(const fctx *c, int a, int x, fmatch *m)
{
    if (!fx_with(c, a, "Add", x, 3.0f, true)) return -1;
    int cl = fx_reader(c, out0(c, a), "Clip");
    fuse_step st;
    if (cl < 0 || !single(c, cl, out0(c, a), &st) || st.a != 0 || st.b != 6) return -1;
    fx_add(m, a);
    fx_add(m, cl);
    return cl;
}

/* HardSwish and HardSigmoid forms starting at node h. */
static bool hard(const fctx *c, int h, int x, fuse_step *st, fmatch *m, int *out)
{
    /* x * HardSigmoid(x) with HardSwish's constants. */
    if (fx_is(c, h, "HardSigmoid") && single(c, h, x, st) && near(st->a, 1.0f / 6) &&
        near(st->b, 0.5f)) {
        int mu = mul_of(c, out0(c, h), x);
        if (mu >= 0) {
            fx_add(m, h);
            fx_add(m, mu);
            st->f = FF_HARDSWISH;
            *out = out0(c, mu);
            return true;
        }
    }
    fmatch r = {0};
    int cl = relu6_x3(c, h, x, &r);
    if (cl < 0) return false;
    *m = r;
    int v = out0(c, cl), d = -1, mu;
    if (v < 0) return false;
    for (int k = c->coff[v]; k < c->coff[v + 1] && d < 0; k++)
        if (by6(c, c->cons[k], v)) d = c->cons[k];
    if (d >= 0) { /* clip(x + 3, 0, 6) / 6, then maybe x * that */
        fx_add(m, d);
        mu = mul_of(c, out0(c, d), x);
        if (mu >= 0) fx_add(m, mu);
        *st = mu >= 0 ? (fuse_step){.op = FO_FUN, .f = FF_HARDSWISH, .v = -1}
                      : (fuse_step){.op = FO_FUN, .f = FF_HARDSIGMOID, .a = 1.0f / 6, .b = 0.5f,
                                    .v = -1};
        *out = out0(c, mu >= 0 ? mu : d);
        return true;
    }
    mu = mul_of(c, v, x); /* x * clip(x + 3, 0, 6), then / 6 */
    if (mu < 0) return false;
    int v2 = out0(c, mu);
    if (v2 < 0) return false;
    for (int k = c->coff[v2]; k < c->coff[v2 + 1] && d < 0; k++)
        if (by6(c, c->cons[k], v2)) d = c->cons[k];
    if (d < 0) return false;
    fx_add(m, mu);
    fx_add(m, d);
    *st = (fuse_step){.op = FO_FUN, .f = FF_HARDSWISH, .v = -1};
    *out = out0(c, d);
    return true;
}

/* GELU's tail after e1 = 1 + erf(..) (or 1 + tanh(..)): x * e1 * 0.5 in
 * the three orders. */
static bool gelu_tail(const fctx *c, int x, int e1, fmatch *m, int *out)
{
    int m1 = mul_of(c, e1, x), m2;
    if (m1 >= 0) { /* (x * e1) * 0.5 */
        m2 = fx_reader(c, out0(c, m1), "Mul");
        if (m2 < 0 || !fx_with(c, m2, "Mul", out0(c, m1), 0.5f, true)) return false;
    } else {
        m1 = fx_reader(c, e1, "Mul");
        if (m1 >= 0 && fx_with(c, m1, "Mul", e1, 0.5f, true)) { /* x * (e1 * 0.5) */
            m2 = mul_of(c, out0(c, m1), x);
        } else { /* (x * 0.5) * e1 */
            m2 = -1;
            for (int k = c->coff[x]; k < c->coff[x + 1] && m2 < 0; k++) {
                m1 = c->cons[k];
                if (fx_with(c, m1, "Mul", x, 0.5f, true)) m2 = mul_of(c, e1, out0(c, m1));
            }
        }
        if (m2 < 0) return false;
    }
    fx_add(m, m1);
    fx_add(m, m2);
    *out = out0(c, m2);
    return true;
}

/* 1 + f(v), f a unary op reading v (Erf, Tanh): the Add's output, or -1. */
static int one_plus(const fctx *c, int v, const char *f, fmatch *m)
{
    int u = fx_reader(c, v, f);
    if (u < 0) return -1;
    int a = fx_reader(c, out0(c, u), "Add");
    if (a < 0 || !fx_with(c, a, "Add", out0(c, u), 1.0f, true)) return -1;
    fx_add(m, u);
    fx_add(m, a);
    return out0(c, a);
}

static bool gelu_erf(const fctx *c, int d, int x, fmatch *m, int *out)
{
    if (!fx_with(c, d, "Div", x, 1.41421356f, false) && !fx_with(c, d, "Mul", x, 0.70710678f, true))
        return false;
    fmatch r = {0};
    fx_add(&r, d);
    int e1 = one_plus(c, out0(c, d), "Erf", &r);
    if (e1 < 0 || !gelu_tail(c, x, e1, &r, out)) return false;
    *m = r;
    return true;
}

/* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), x^3 as Pow(x, 3). */
static bool gelu_tanh(const fctx *c, int p, int x, fmatch *m, int *out)
{
    if (!fx_with(c, p, "Pow", x, 3.0f, false)) return false;
    fmatch r = {0};
    fx_add(&r, p);
    int k1 = fx_reader(c, out0(c, p), "Mul");
    if (k1 < 0 || !fx_with(c, k1, "Mul", out0(c, p), 0.044715f, true)) return false;
    fx_add(&r, k1);
    int a = fx_reader(c, out0(c, k1), "Add"), side;
    if (a < 0 || fx_other(c, a, out0(c, k1), &side) != x) return false;
    fx_add(&r, a);
    int k2 = fx_reader(c, out0(c, a), "Mul");
    if (k2 < 0 || !fx_with(c, k2, "Mul", out0(c, a), 0.7978845608f, true)) return false;
    fx_add(&r, k2);
    int e1 = one_plus(c, out0(c, k2), "Tanh", &r);
    if (e1 < 0 || !gelu_tail(c, x, e1, &r, out)) return false;
    *m = r;
    return true;
}

/* x * sigmoid(x), x * tanh(softplus(x)), from the Sigmoid or Softplus s. */
static bool gated(const fctx *c, int s, int x, fuse_step *st, fmatch *m, int *out)
{
    bool one = c->g->nodes[s].n_in == 1 && c->g->nodes[s].in[0] == x;
    int mu = one && fx_is(c, s, "Sigmoid") ? mul_of(c, out0(c, s), x) : -1;
    if (mu >= 0) {
        fx_add(m, s);
        fx_add(m, mu);
        st->f = FF_SILU;
        *out = out0(c, mu);
        return true;
    }
    int sp = one && fx_is(c, s, "Softplus") ? s : -1;
    int t = sp >= 0 ? fx_reader(c, out0(c, sp), "Tanh") : -1;
    mu = t >= 0 ? mul_of(c, out0(c, t), x) : -1;
    if (mu < 0) return false;
    fx_add(m, sp);
    fx_add(m, t);
    fx_add(m, mu);
    st->f = FF_MISH;
    *out = out0(c, mu);
    return true;
}

static bool has(const fmatch *m, int i)
{
    for (int k = 0; k < m->n; k++)
        if (m->nodes[k] == i) return true;
    return false;
}

bool fx_act(const fctx *c, int x, bool absorbed, int need, fuse_step *st, fmatch *m, int *out)
{
    if (x < 0) return false;
    typedef bool (*form)(const fctx *, int, int, fmatch *, int *);
    static const struct {
        form f;
        fuse_fn fn;
    } gelus[] = {{gelu_erf, FF_GELU_ERF}, {gelu_tanh, FF_GELU_TANH}};
    int cx = absorbed ? x : -1;
    /* Each reader of x as the form's first node; compound forms first:
     * their first node alone (Sigmoid) would match as a single op. */
    for (int pass = 0; pass < 2; pass++)
        for (int k = c->coff[x]; k < c->coff[x + 1]; k++) {
            int j = c->cons[k];
            fmatch r = {0};
            fuse_step s = {.op = FO_FUN, .v = -1};
            bool ok = false;
            if (pass == 0) {
                for (size_t g = 0; g < sizeof gelus / sizeof gelus[0] && !ok; g++) {
                    r.n = 0;
                    ok = gelus[g].f(c, j, x, &r, out);
                    s.f = gelus[g].fn;
                }
                if (!ok) {
                    r.n = 0;
                    ok = hard(c, j, x, &s, &r, out);
                }
                if (!ok) {
                    r.n = 0;
                    s = (fuse_step){.op = FO_FUN, .v = -1};
                    ok = gated(c, j, x, &s, &r, out);
                }
            } else if (single(c, j, x, &s)) {
                fx_add(&r, j);
                *out = out0(c, j);
                ok = true;
            }
            if (!ok || !fx_closed(c, &r, *out, cx) || (need >= 0 && !has(&r, need))) continue;
            s.op = FO_FUN;
            s.v = -1;
            *m = r;
            *st = s;
            return true;
        }
    return false;
}
