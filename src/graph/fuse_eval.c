/* The descriptors' reference semantics in plain loops: what a backend's
 * fused kernel must compute, and what the tests check the passes against
 * (the unfused graph's values). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fuse.h"

const char *fuse_fn_name(fuse_fn f)
{
    static const char *const names[FF_N] = {
        "none",       "relu",      "clip",      "sigmoid",  "tanh",      "exp",
        "hardsigmoid", "hardswish", "silu",      "gelu_erf", "gelu_tanh", "leaky_relu",
        "elu",        "softplus",  "mish"};
    return f >= 0 && f < FF_N ? names[f] : "?";
}

static float softplus(float v)
{
    return v > 20 ? v : log1pf(expf(v));
}

float fuse_fn_apply(fuse_fn f, float a, float b, float v)
{
    switch (f) {
    case FF_NONE: return v;
    case FF_RELU: return v > 0 ? v : 0;
    case FF_CLIP: return fminf(fmaxf(v, a), b);
    case FF_SIGMOID: return 1 / (1 + expf(-v));
    case FF_TANH: return tanhf(v);
    case FF_EXP: return expf(v);
    case FF_HARDSIGMOID: return fmaxf(0, fminf(1, a * v + b));
    case FF_HARDSWISH: return v * fmaxf(0, fminf(1, v / 6 + 0.5f));
    case FF_SILU: return v / (1 + expf(-v));
    case FF_GELU_ERF: return 0.5f * v * (1 + erff(v * 0.70710678f));
    case FF_GELU_TANH:
        return 0.5f * v * (1 + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    case FF_LEAKY_RELU: return v < 0 ? a * v : v;
    case FF_ELU: return v < 0 ? a * expm1f(v) : v;
    case FF_SOFTPLUS: return softplus(v);
    case FF_MISH: return v * tanhf(softplus(v));
    default: return v;
    }
}

static float bin(fuse_op op, float v, float o)
{
    switch (op) {
    case FO_ADD: return v + o;
    case FO_SUB: return v - o;
    case FO_RSUB: return o - v;
    case FO_MUL: return v * o;
    case FO_DIV: return v / o;
    case FO_RDIV: return o / v;
    case FO_MAX: return fmaxf(v, o);
    case FO_MIN: return fminf(v, o);
    default: return v;
    }
}

static ait_status shaped(tensor *out, const tensor *like, int rank, const int64_t *dims,
                         ait_error *e)
{
    (void)like;
    tensor_set_shape(out, AIT_F32, rank, dims);
    return tensor_alloc(out, e);
}

static bool f32(const tensor *t)
{
    return t && t->data && t->dtype == AIT_F32;
}

static ait_status eval_steps(const fusion *f, const tensor *const *vals, tensor *out, ait_error *e)
{
    const tensor *x = vals[f->in];
    if (!f32(x)) return err_set(e, AIT_E_DTYPE, "fusion input is not float32");
    int64_t n = tensor_numel(x), inner = 1, ch = 1;
    for (int k = 0; k < f->n_steps; k++)
        if (f->steps[k].src == FS_CHANNEL) {
            int a = f->axis < 0 ? x->rank - 1 : f->axis;
            if (a >= x->rank || x->dims[a] != f->steps[k].np)
                return err_set(e, AIT_E_SHAPE, "per-channel operand does not fit the output");
            ch = x->dims[a];
            inner = 1;
            for (int d = a + 1; d < x->rank; d++) inner *= x->dims[d];
        } else if (f->steps[k].src == FS_TENSOR &&
                   (!f32(vals[f->steps[k].v]) || tensor_numel(vals[f->steps[k].v]) != n))
            return err_set(e, AIT_E_SHAPE, "tensor operand does not fit the output");
    ait_status s = shaped(out, x, x->rank, x->dims, e);
    if (s != AIT_OK) return s;
    const float *xi = x->data;
    float *y = out->data;
    for (int64_t i = 0; i < n; i++) {
        float v = xi[i];
        for (int k = 0; k < f->n_steps; k++) {
            const fuse_step *st = &f->steps[k];
            if (st->op == FO_FUN) {
                v = fuse_fn_apply(st->f, st->a, st->b, v);
                continue;
            }
            float o = st->src == FS_SCALAR    ? st->a
                      : st->src == FS_CHANNEL ? st->p[(i / inner) % ch]
                      : st->src == FS_TENSOR  ? ((const float *)vals[st->v]->data)[i]
                                              : xi[i];
            v = bin(st->op, v, o);
        }
        y[i] = v;
    }
    return AIT_OK;
}

static ait_status eval_layernorm(const fusion *f, const tensor *const *vals, tensor *out,
                                 ait_error *e)
{
    const tensor *x = vals[f->in];
    const tensor *g = f->ln_scale >= 0 ? vals[f->ln_scale] : NULL;
    const tensor *b = f->ln_bias >= 0 ? vals[f->ln_bias] : NULL;
    if (!f32(x) || x->rank < 1) return err_set(e, AIT_E_SHAPE, "layernorm input");
    int64_t d = x->dims[x->rank - 1], rows = d ? tensor_numel(x) / d : 0;
    if ((g && (!f32(g) || tensor_numel(g) != d)) || (b && (!f32(b) || tensor_numel(b) != d)))
        return err_set(e, AIT_E_SHAPE, "layernorm scale or bias does not fit");
    ait_status s = shaped(out, x, x->rank, x->dims, e);
    if (s != AIT_OK) return s;
    for (int64_t r = 0; r < rows; r++) {
        const float *xi = (const float *)x->data + r * d;
        float *y = (float *)out->data + r * d;
        double mean = 0, var = 0;
        for (int64_t k = 0; k < d && !f->rms; k++) mean += xi[k];
        mean /= (double)d;
        for (int64_t k = 0; k < d; k++) var += (xi[k] - mean) * (xi[k] - mean);
        var /= (double)d;
        float inv = (float)(1 / sqrt(var + f->eps));
        for (int64_t k = 0; k < d; k++) {
            float v = (float)(xi[k] - mean) * inv;
            if (g) v *= ((const float *)g->data)[k];
            if (b) v += ((const float *)b->data)[k];
            y[k] = v;
        }
    }
    return AIT_OK;
}

/* Offset of element (batch index bi of batch dims bd, row i, col j) in a
 * tensor t that broadcasts to [bd..., rows, cols]. */
static int64_t bcast_at(const tensor *t, const int64_t *bd, int nb, int64_t bi, int64_t i,
                        int64_t j, int64_t rows, int64_t cols)
{
    int64_t idx[AIT_MAX_RANK + 2];
    int r = nb + 2;
    for (int k = nb - 1; k >= 0; k--) {
        idx[k] = bi % bd[k];
        bi /= bd[k];
    }
    idx[nb] = i;
    idx[nb + 1] = j;
    (void)rows;
    (void)cols;
    int64_t off = 0;
    for (int k = 0; k < t->rank; k++) {
        int64_t dim = t->dims[k], at = idx[r - t->rank + k];
        off = off * dim + (dim == 1 ? 0 : at);
    }
    return off;
}

/* View w's dims (operand dim i is its lay value's dim perm[i]) and the
 * element strides of each operand dim in w's buffer; false when its values
 * are missing or do not fit. */
static bool view_geom(const fuse_view *w, const tensor *const *vals, int64_t *dims, int64_t *st)
{
    const tensor *b = w->v >= 0 ? vals[w->v] : NULL, *l = w->lay >= 0 ? vals[w->lay] : NULL;
    if (!f32(b) || !l || l->rank != w->rank || tensor_numel(l) != tensor_numel(b)) return false;
    int64_t ls[AIT_MAX_RANK], n = 1;
    for (int d = l->rank - 1; d >= 0; d--) ls[d] = n, n *= l->dims[d];
    for (int i = 0; i < w->rank; i++) dims[i] = l->dims[w->perm[i]], st[i] = ls[w->perm[i]];
    return true;
}

/* Keys or values: the current view and the past one (optional) joined
 * along axis R-2 into [.., t, cols]: dims and strides of each part. */
typedef struct kv_geom {
    int64_t dims[AIT_MAX_RANK], st[AIT_MAX_RANK], pst[AIT_MAX_RANK], sp;
    const float *cur, *past;
} kv_geom;

static bool kv_geom_of(const fuse_view *w, const fuse_view *p, const tensor *const *vals,
                       kv_geom *k)
{
    int R = w->rank;
    if (!view_geom(w, vals, k->dims, k->st)) return false;
    k->cur = vals[w->v]->data;
    k->past = NULL;
    k->sp = 0;
    if (p->v < 0) return true;
    int64_t pd[AIT_MAX_RANK];
    if (!view_geom(p, vals, pd, k->pst)) return false;
    for (int i = 0; i < R; i++)
        if (i != R - 2 && pd[i] != k->dims[i]) return false;
    k->sp = pd[R - 2];
    k->dims[R - 2] += k->sp;
    k->past = vals[p->v]->data;
    return true;
}

/* Row j of head index idx (idx[R-2] ignored) of keys or values k. */
static const float *kv_row(const kv_geom *k, int R, int64_t *idx, int64_t j, int rep)
{
    int64_t off = 0, h = idx[R - 3];
    idx[R - 3] = h / rep;
    bool past = j < k->sp;
    idx[R - 2] = past ? j : j - k->sp;
    for (int i = 0; i < R - 1; i++) off += idx[i] * (past ? k->pst[i] : k->st[i]);
    idx[R - 3] = h;
    return (past ? k->past : k->cur) + off;
}

static ait_status eval_attention(const fusion *f, const tensor *const *vals, tensor *out,
                                 ait_error *e)
{
    const fuse_attn *a = &f->att;
    const int R = a->q.rank;
    const tensor *mk = a->mask >= 0 ? vals[a->mask] : NULL;
    const tensor *bm = a->bmask >= 0 ? vals[a->bmask] : NULL;
    int64_t qd[AIT_MAX_RANK], qs[AIT_MAX_RANK], yd[AIT_MAX_RANK], ys[AIT_MAX_RANK];
    kv_geom K, V;
    if (R < 3 || R > 4 || !view_geom(&a->q, vals, qd, qs) || !kv_geom_of(&a->k, &a->kp, vals, &K) ||
        !kv_geom_of(&a->v, &a->vp, vals, &V) || (mk && (!f32(mk) || mk->rank > R)) ||
        (bm && (bm->dtype != AIT_BOOL || bm->rank > R)) || a->kv_rep < 1)
        return err_set(e, AIT_E_SHAPE, "attention operands");
    int64_t sq = qd[R - 2], d = qd[R - 1], t = K.dims[R - 2], dv = V.dims[R - 1];
    if (K.dims[R - 1] != d || V.dims[R - 2] != t)
        return err_set(e, AIT_E_SHAPE, "attention shapes do not chain");
    for (int i = 0; i < R - 2; i++) {
        int64_t want = i == R - 3 ? qd[i] / a->kv_rep : qd[i];
        if (K.dims[i] != want || V.dims[i] != want || (i == R - 3 && qd[i] % a->kv_rep))
            return err_set(e, AIT_E_SHAPE, "attention batch dims differ");
    }
    /* the output: the attention [.., sq, dv] seen through y's view */
    memcpy(yd, qd, sizeof yd);
    yd[R - 1] = dv;
    int64_t ld[AIT_MAX_RANK], n = 1;
    for (int i = 0; i < R; i++) ld[a->y.perm[i]] = yd[i];
    for (int i = R - 1; i >= 0; i--) ys[i] = n, n *= ld[i];
    const tensor *yv = a->y.v != a->y.lay ? vals[a->y.v] : NULL; /* a Reshape's dims */
    if (yv && tensor_numel(yv) != n) return err_set(e, AIT_E_SHAPE, "attention output");
    ait_status st = shaped(out, vals[a->q.v], yv ? yv->rank : R, yv ? yv->dims : ld, e);
    if (st != AIT_OK) return st;
    float *p = malloc((size_t)(t ? t : 1) * sizeof *p);
    if (!p) return err_set(e, AIT_E_NOMEM, "out of memory");
    const float *Q = vals[a->q.v]->data;
    float *Y = out->data;
    int64_t nbat = 1, idx[AIT_MAX_RANK] = {0};
    for (int i = 0; i < R - 2; i++) nbat *= qd[i];
    for (int64_t b = 0; b < nbat; b++) {
        for (int64_t r = b, i = R - 3; i >= 0; i--) idx[i] = r % qd[i], r /= qd[i];
        for (int64_t i = 0; i < sq; i++) {
            int64_t qo = i * qs[R - 2], yo = i * ys[a->y.perm[R - 2]];
            for (int k = 0; k < R - 2; k++) qo += idx[k] * qs[k], yo += idx[k] * ys[a->y.perm[k]];
            float mx = -INFINITY;
            for (int64_t j = 0; j < t; j++) {
                const float *kj = kv_row(&K, R, idx, j, a->kv_rep);
                float acc = 0;
                for (int64_t k = 0; k < d; k++) acc += Q[qo + k * qs[R - 1]] * kj[k * K.st[R - 1]];
                acc *= a->scale;
                if (bm && (((const uint8_t *)bm->data)[bcast_at(bm, qd, R - 2, b, i, j, sq, t)] != 0) !=
                              (a->bkeep != 0))
                    acc = a->fill;
                if (mk) acc += ((const float *)mk->data)[bcast_at(mk, qd, R - 2, b, i, j, sq, t)];
                p[j] = acc;
                mx = fmaxf(mx, acc);
            }
            double sum = 0;
            for (int64_t j = 0; j < t; j++) sum += p[j] = mx == -INFINITY ? 0 : expf(p[j] - mx);
            for (int64_t c = 0; c < dv; c++) {
                double acc = 0;
                for (int64_t j = 0; j < t; j++)
                    if (p[j] != 0) acc += p[j] * kv_row(&V, R, idx, j, a->kv_rep)[c * V.st[R - 1]];
                Y[yo + c * ys[a->y.perm[R - 1]]] = sum > 0 ? (float)(acc / sum) : 0;
            }
        }
    }
    free(p);
    return AIT_OK;
}

/* FK_ROTARY: y = x * cos + concat(-x[h:], x[:h]) * sin per row, in double;
 * row r's angles are row r % s of cos and sin ([.., s, d]). */
static ait_status eval_rotary(const fusion *f, const tensor *const *vals, tensor *out, ait_error *e)
{
    const tensor *x = vals[f->in], *c = vals[f->rot_cos], *sn = vals[f->rot_sin];
    if (!f32(x) || x->rank < 2 || !f32(c) || !f32(sn)) return err_set(e, AIT_E_SHAPE, "rotary input");
    int64_t d = x->dims[x->rank - 1], s = x->dims[x->rank - 2], h = d / 2;
    if (d % 2 || tensor_numel(c) != s * d || tensor_numel(sn) != s * d)
        return err_set(e, AIT_E_SHAPE, "rotary angles do not fit");
    ait_status st = shaped(out, x, x->rank, x->dims, e);
    if (st != AIT_OK) return st;
    const float *X = x->data, *C = c->data, *S = sn->data;
    float *Y = out->data;
    for (int64_t r = 0, rows = d ? tensor_numel(x) / d : 0; r < rows; r++) {
        const float *xr = X + r * d, *cr = C + (r % s) * d, *sr = S + (r % s) * d;
        for (int64_t i = 0; i < d; i++) {
            double rot = i < h ? -(double)xr[i + h] : (double)xr[i - h];
            Y[r * d + i] = (float)((double)xr[i] * cr[i] + rot * sr[i]);
        }
    }
    return AIT_OK;
}

ait_status fuse_eval(const fusion *f, const graph *g, const tensor *const *vals, tensor *out,
                     ait_error *e)
{
    (void)g;
    switch (f->kind) {
    case FK_EPILOGUE:
    case FK_CHAIN: return eval_steps(f, vals, out, e);
    case FK_LAYERNORM: return eval_layernorm(f, vals, out, e);
    case FK_ATTENTION: return eval_attention(f, vals, out, e);
    case FK_ROTARY: return eval_rotary(f, vals, out, e);
    default: return err_set(e, AIT_E_INTERNAL, "unknown fusion kind");
    }
}
