/* LayerNormalization, RMSNorm and attention from their decomposed exports. */
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

/* A norm's end from value out: an optional Mul by a constant scale, then
 * an optional Add of a constant bias; recorded when closed. */
static ait_status norm_tail(fctx *c, fmatch *m, fusion *f, int out, ait_error *e)
{
    int mu = fx_only(c, out);
    f->ln_scale = with_const(c, mu, "Mul", out);
    if (f->ln_scale >= 0) {
        fx_add(m, mu);
        out = out0(c, mu);
        int ad = fx_only(c, out);
        f->ln_bias = with_const(c, ad, "Add", out);
        if (f->ln_bias >= 0) {
            fx_add(m, ad);
            out = out0(c, ad);
        }
    }
    if (out < 0 || !fx_closed(c, m, out, -1)) return AIT_OK;
    f->out = out;
    return fx_record(c, f, m, e);
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
    fusion f = {.kind = FK_LAYERNORM, .in = x, .eps = eps, .ln_scale = -1, .ln_bias = -1, .axis = -1};
    return norm_tail(c, &m, &f, out0(c, dv2), e);
}

/* RMSNorm from ReduceMean r of x^2 (fuse.h's FK_LAYERNORM, rms). */
static ait_status one_rmsnorm(fctx *c, int r, ait_error *e)
{
    int p = c->g->nodes[r].n_in >= 1 ? c->g->vals[c->g->nodes[r].in[0]].producer : -1;
    if (p < 0 || p >= c->g->n_nodes || c->g->nodes[p].n_in != 2 || out0(c, p) < 0 ||
        !mean_last(c, r, out0(c, p)))
        return AIT_OK;
    const node *pn = &c->g->nodes[p];
    int x = pn->in[0];
    if (x < 0 || !((fx_is(c, p, "Pow") && fx_with(c, p, "Pow", x, 2.0f, false)) ||
                   (fx_is(c, p, "Mul") && pn->in[1] == x)))
        return AIT_OK;
    fmatch m = {0};
    fx_add(&m, p);
    fx_add(&m, r);
    int a = fx_reader(c, out0(c, r), "Add"), side;
    float eps, one;
    if (a < 0 || !fx_scalar(c, fx_other(c, a, out0(c, r), &side), &eps)) return AIT_OK;
    fx_add(&m, a);
    int sq = fx_reader(c, out0(c, a), "Sqrt");
    if (sq < 0 || out0(c, sq) < 0) return AIT_OK;
    fx_add(&m, sq);
    int s = out0(c, sq), j = fx_only(c, s), out = -1;
    const node *n = j >= 0 ? &c->g->nodes[j] : NULL;
    if (!n || n->n_out < 1 || n->out[0] < 0) return AIT_OK;
    fx_add(&m, j);
    if (fx_is(c, j, "Div") && n->n_in == 2 && n->in[1] == s && n->in[0] == x) {
        out = n->out[0]; /* x / sqrt */
    } else if ((fx_is(c, j, "Reciprocal") && n->n_in == 1) ||
               (fx_is(c, j, "Div") && n->n_in == 2 && n->in[1] == s &&
                fx_scalar(c, n->in[0], &one) && one == 1.0f)) {
        int mu = fx_only(c, n->out[0]); /* x * (1 / sqrt) */
        if (mu < 0 || !fx_is(c, mu, "Mul") || fx_other(c, mu, n->out[0], &side) != x ||
            out0(c, mu) < 0)
            return AIT_OK;
        fx_add(&m, mu);
        out = out0(c, mu);
    } else {
        return AIT_OK;
    }
    fusion f = {.kind = FK_LAYERNORM, .in = x, .eps = eps, .ln_scale = -1, .ln_bias = -1, .axis = -1,
                .rms = true};
    return norm_tail(c, &m, &f, out, e);
}

ait_status fx_layernorm(fctx *c, ait_error *e)
{
    for (int i = 0; i < c->g->n_nodes; i++) {
        if (!fx_is(c, i, "ReduceMean")) continue;
        ait_status s = one_layernorm(c, i, e);
        if (s == AIT_OK && fx_is(c, i, "ReduceMean")) s = one_rmsnorm(c, i, e);
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

/* The live node `op` computing v as its only output from a data input 0,
 * whose only reader is `reader` (so the fusion may absorb it), or -1. */
static int feeds(const fctx *c, int v, const char *op, int reader)
{
    int p = v >= 0 ? c->g->vals[v].producer : -1;
    if (p < 0 || p >= c->g->n_nodes || !fx_is(c, p, op) || fx_only(c, v) != reader) return -1;
    const node *n = &c->g->nodes[p];
    return n->n_out == 1 && n->out[0] == v && n->n_in >= 1 && n->in[0] >= 0 ? p : -1;
}

static void view_init(fuse_view *w, int v, int rank)
{
    w->v = w->lay = v;
    w->rank = rank;
    for (int i = 0; i < AIT_MAX_RANK; i++) w->perm[i] = i;
}

static bool view_plain(const fuse_view *w)
{
    for (int i = 0; i < w->rank; i++)
        if (w->perm[i] != i) return false;
    return w->v == w->lay;
}

/* Transpose node p's perm over rank dims (stated: torch always states it). */
static bool perm_of(const fctx *c, int p, int rank, int *tp)
{
    int cnt = 0;
    const int64_t *a = attr_ints(&c->g->nodes[p], "perm", &cnt);
    if (!a || cnt != rank) return false;
    bool seen[AIT_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
        if (a[i] < 0 || a[i] >= rank || seen[a[i]]) return false;
        seen[a[i]] = true;
        tp[i] = (int)a[i];
    }
    return true;
}

/* Reads operand w through the producers of its value that only the match
 * reads (reader: the node reading it): Transposes, then Reshapes (a
 * Reshape reinterprets row-major data; a Transpose before it would not).
 * Returns the new reader. */
static int walk(const fctx *c, fmatch *m, fuse_view *w, int reader)
{
    for (;;) {
        int x = w->v, p, tp[AIT_MAX_RANK];
        if (w->lay == x && (p = feeds(c, x, "Transpose", reader)) >= 0 &&
            perm_of(c, p, w->rank, tp)) {
            for (int i = 0; i < w->rank; i++) w->perm[i] = tp[w->perm[i]];
            w->v = w->lay = c->g->nodes[p].in[0];
        } else if ((p = feeds(c, x, "Reshape", reader)) >= 0 &&
                   !(c->g->vals[c->g->nodes[p].in[0]].producer >= 0 &&
                     fx_is(c, c->g->vals[c->g->nodes[p].in[0]].producer, "Expand"))) {
            /* (not a repeat of kv heads: kv_repeat's) */
            w->v = c->g->nodes[p].in[0]; /* lay keeps the Reshape's dims */
        } else {
            return reader;
        }
        fx_add(m, p);
        reader = p;
    }
}

/* Grouped kv heads repeated for the queries, as exports write it:
 * Reshape(Expand(Unsqueeze(x) [.., hkv, 1, t, d]) [.., hkv, rep, t, d])
 * [.., hkv * rep, t, d], on plain operand w. w becomes x; returns rep (0:
 * none), *reader the Unsqueeze. Needs the shapes. */
static int kv_repeat(const fctx *c, fmatch *m, fuse_view *w, int *reader)
{
    int R = w->rank, H = R - 3, rs, ex, un;
    if (!view_plain(w) || (rs = feeds(c, w->v, "Reshape", *reader)) < 0 ||
        (ex = feeds(c, c->g->nodes[rs].in[0], "Expand", rs)) < 0 ||
        (un = feeds(c, c->g->nodes[ex].in[0], "Unsqueeze", ex)) < 0)
        return 0;
    int x = c->g->nodes[un].in[0];
    tensor t1, t2, t3, t4;
    const tensor *ys = fx_shape(c, w->v, &t1), *es = fx_shape(c, c->g->nodes[ex].out[0], &t2),
                 *us = fx_shape(c, c->g->nodes[un].out[0], &t3), *xs = fx_shape(c, x, &t4);
    if (!ys || !es || !us || !xs || ys->rank != R || xs->rank != R || es->rank != R + 1 ||
        us->rank != R + 1 || us->dims[H + 1] != 1)
        return 0;
    int64_t rep = es->dims[H + 1];
    for (int i = 0; i < R; i++) {
        int j = i <= H ? i : i + 1;
        if (es->dims[j] != xs->dims[i] || (j != H + 1 && us->dims[j] != xs->dims[i]) ||
            ys->dims[i] != (i == H ? xs->dims[i] * rep : xs->dims[i]))
            return 0;
    }
    if (rep < 1 || rep > 1 << 20) return 0;
    fx_add(m, rs), fx_add(m, ex), fx_add(m, un);
    w->v = w->lay = x;
    *reader = un;
    return (int)rep;
}

/* Plain operand w = Concat(past, current) along the sequence axis: w
 * becomes the current part, *past the past one. The Concat is absorbed
 * (and its parts read through) when only the match reads it; else it runs
 * (its output is the model's present key or value) and the fusion still
 * reads both parts where they lie. */
static void kv_concat(const fctx *c, fmatch *m, fuse_view *w, int reader, fuse_view *past)
{
    int p = w->v >= 0 ? c->g->vals[w->v].producer : -1;
    if (!view_plain(w) || p < 0 || !fx_is(c, p, "Concat")) return;
    const node *n = &c->g->nodes[p];
    int64_t ax = attr_int(n, "axis", 0);
    if (n->n_in != 2 || n->n_out != 1 || n->in[0] < 0 || n->in[1] < 0 ||
        (ax != -2 && ax != w->rank - 2))
        return;
    view_init(past, n->in[0], w->rank);
    view_init(w, n->in[1], w->rank);
    if (fx_only(c, n->out[0]) != reader) return;
    fx_add(m, p);
    walk(c, m, past, p);
    walk(c, m, w, p);
}

/* Keys or values from operand w (keys: seen through their transpose):
 * walked, then a repeat of kv heads, then a past Concat. */
static void kv_operand(const fctx *c, fmatch *m, fuse_view *w, fuse_view *past, int reader,
                       int *rep)
{
    reader = walk(c, m, w, reader);
    *rep = kv_repeat(c, m, w, &reader);
    if (*rep) reader = walk(c, m, w, reader);
    kv_concat(c, m, w, reader, past);
}

/* A Mul or Div of v by a scalar constant (v on the left of a Div), read
 * only by reader: absorbed, its factor into *scale; returns what it reads. */
static int scaled(const fctx *c, fmatch *m, int v, int reader, float *scale)
{
    int j;
    float sc;
    if ((j = made_by(c, v, "Div")) < 0 && (j = made_by(c, v, "Mul")) < 0) return v;
    if (fx_only(c, v) != reader) return v;
    const node *d = &c->g->nodes[j];
    bool div = !strcmp(d->op, "Div");
    int side = fx_scalar(c, d->in[1], &sc) ? 0 : 1;
    if ((div && side) || !fx_scalar(c, d->in[1 - side], &sc) || (div && sc == 0)) return v;
    *scale *= div ? 1.0f / sc : sc;
    fx_add(m, j);
    return d->in[side];
}

static bool in_nodes(const fmatch *m, int p)
{
    for (int k = 0; k < m->n; k++)
        if (m->nodes[k] == p) return true;
    return false;
}

static ait_status one_attention(fctx *c, int sm, ait_error *e)
{
    const node *s = &c->g->nodes[sm];
    if (s->version < 13 || s->n_in != 1 || s->n_out != 1) return AIT_OK;
    int64_t axis = attr_int(s, "axis", -1);
    tensor tmp;
    const tensor *sh = fx_shape(c, s->in[0], &tmp);
    if (!sh || sh->rank < 3 || sh->rank > 4 || (axis != -1 && axis != sh->rank - 1)) return AIT_OK;
    const int R = sh->rank;
    fusion f = {.kind = FK_ATTENTION, .ln_scale = -1, .ln_bias = -1, .in = -1, .axis = -1};
    fuse_attn *a = &f.att;
    a->mask = a->bmask = -1;
    a->scale = 1.0f;
    a->kv_rep = 1;
    fmatch m = {0};
    fx_add(&m, sm);
    int v = s->in[0], j;
    if ((j = made_by(c, v, "Add")) >= 0) { /* the float mask, on either side */
        const node *ad = &c->g->nodes[j];
        int k = made_by(c, ad->in[0], "Div") >= 0 || made_by(c, ad->in[0], "Mul") >= 0 ||
                        made_by(c, ad->in[0], "MatMul") >= 0 ||
                        (ad->in[0] >= 0 && c->g->vals[ad->in[0]].producer >= 0 &&
                         fx_is(c, c->g->vals[ad->in[0]].producer, "Where"))
                    ? 0
                    : 1;
        a->mask = ad->in[1 - k];
        v = ad->in[k];
        fx_add(&m, j);
    }
    j = v >= 0 ? c->g->vals[v].producer : -1;
    if (j >= 0 && fx_is(c, j, "Where")) { /* a boolean mask and a scalar fill */
        const node *w = &c->g->nodes[j];
        if (w->n_in != 3 || w->n_out != 1 || w->in[0] < 0 || w->in[1] < 0 || w->in[2] < 0)
            return AIT_OK;
        int side = fx_scalar(c, w->in[2], &a->fill) ? 1 : 2;
        if (side == 2 && !fx_scalar(c, w->in[1], &a->fill)) return AIT_OK;
        a->bmask = w->in[0];
        a->bkeep = side == 1;
        v = w->in[side];
        fx_add(&m, j);
    }
    v = scaled(c, &m, v, m.nodes[m.n - 1], &a->scale);
    int q = made_by(c, v, "MatMul");
    if (q < 0 || fx_only(c, v) != m.nodes[m.n - 1]) return AIT_OK;
    fx_add(&m, q);
    int o = fx_reader(c, out0(c, sm), "MatMul");
    if (o < 0 || c->g->nodes[o].n_in != 2 || c->g->nodes[o].in[0] != out0(c, sm) ||
        c->g->nodes[o].in[1] < 0 || out0(c, o) < 0)
        return AIT_OK;
    fx_add(&m, o);
    /* q and keys, each maybe scaled on its own */
    int n0 = m.n, qv = scaled(c, &m, c->g->nodes[q].in[0], q, &a->scale);
    int qr = m.n > n0 ? m.nodes[m.n - 1] : q;
    n0 = m.n;
    int kt = scaled(c, &m, c->g->nodes[q].in[1], q, &a->scale);
    int kr = m.n > n0 ? m.nodes[m.n - 1] : q;
    view_init(&a->q, qv, R);
    walk(c, &m, &a->q, qr);
    view_init(&a->k, kt, R);
    a->k.perm[R - 2] = R - 1, a->k.perm[R - 1] = R - 2; /* K from K^T */
    view_init(&a->kp, -1, R);
    view_init(&a->vp, -1, R);
    int rk, rv;
    kv_operand(c, &m, &a->k, &a->kp, kr, &rk);
    view_init(&a->v, c->g->nodes[o].in[1], R);
    kv_operand(c, &m, &a->v, &a->vp, o, &rv);
    if (rk != rv) return AIT_OK; /* keys and values repeat alike */
    a->kv_rep = rk ? rk : 1;
    /* the output: heads merged again by a Transpose keeping rows whole and
     * a Reshape */
    int out = out0(c, o), p, tp[AIT_MAX_RANK];
    view_init(&a->y, out, R);
    if ((p = fx_reader(c, out, "Transpose")) >= 0 && fx_only(c, out) == p &&
        perm_of(c, p, R, tp) && tp[R - 1] == R - 1 && out0(c, p) >= 0) {
        fx_add(&m, p);
        out = out0(c, p);
        for (int i = 0; i < R; i++) a->y.perm[tp[i]] = i; /* A's dim tp[i] is out's dim i */
        a->y.v = a->y.lay = out;
        if ((p = fx_reader(c, out, "Reshape")) >= 0 && fx_only(c, out) == p &&
            c->g->nodes[p].in[0] == out && out0(c, p) >= 0) {
            fx_add(&m, p);
            out = a->y.v = out0(c, p);
        }
    }
    f.out = out;
    /* what the fusion reads comes from outside it */
    const int ext[] = {a->q.v, a->k.v, a->kp.v, a->v.v, a->vp.v, a->mask, a->bmask};
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
        int pr = ext[k] >= 0 ? c->g->vals[ext[k]].producer : -1;
        if (pr >= 0 && in_nodes(&m, pr)) return AIT_OK;
    }
    if (m.n >= FUSE_MAX_NODES || !fx_closed(c, &m, f.out, -1)) return AIT_OK;
    f.in = a->q.v;
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
