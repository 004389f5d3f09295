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
        for (int64_t k = 0; k < d; k++) mean += xi[k];
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

static ait_status eval_attention(const fusion *f, const tensor *const *vals, tensor *out,
                                 ait_error *e)
{
    const tensor *q = vals[f->q], *kt = vals[f->kt], *v = vals[f->v];
    const tensor *mk = f->mask >= 0 ? vals[f->mask] : NULL;
    if (!f32(q) || !f32(kt) || !f32(v) || (mk && !f32(mk)) || q->rank < 2 ||
        kt->rank != q->rank || v->rank != q->rank || (mk && mk->rank > q->rank))
        return err_set(e, AIT_E_SHAPE, "attention operands");
    int R = q->rank, nb = R - 2;
    int64_t s = q->dims[R - 2], d = q->dims[R - 1], t = kt->dims[R - 1], ev = v->dims[R - 1];
    if (kt->dims[R - 2] != d || v->dims[R - 2] != t)
        return err_set(e, AIT_E_SHAPE, "attention shapes do not chain");
    int64_t nbat = 1;
    for (int k = 0; k < nb; k++) {
        if (kt->dims[k] != q->dims[k] || v->dims[k] != q->dims[k])
            return err_set(e, AIT_E_SHAPE, "attention batch dims differ");
        nbat *= q->dims[k];
    }
    int64_t dims[AIT_MAX_RANK];
    memcpy(dims, q->dims, sizeof(int64_t) * (size_t)R);
    dims[R - 1] = ev;
    ait_status st = shaped(out, q, R, dims, e);
    if (st != AIT_OK) return st;
    float *p = malloc((size_t)(t ? t : 1) * sizeof *p);
    if (!p) return err_set(e, AIT_E_NOMEM, "out of memory");
    const float *Q = q->data, *K = kt->data, *V = v->data;
    float *Y = out->data;
    for (int64_t b = 0; b < nbat; b++)
        for (int64_t i = 0; i < s; i++) {
            float mx = -INFINITY;
            for (int64_t j = 0; j < t; j++) {
                float acc = 0;
                for (int64_t k = 0; k < d; k++)
                    acc += Q[(b * s + i) * d + k] * K[(b * d + k) * t + j];
                acc *= f->scale;
                if (mk) acc += ((const float *)mk->data)[bcast_at(mk, q->dims, nb, b, i, j, s, t)];
                p[j] = acc;
                mx = fmaxf(mx, acc);
            }
            double sum = 0;
            for (int64_t j = 0; j < t; j++) sum += p[j] = expf(p[j] - mx);
            for (int64_t c = 0; c < ev; c++) {
                double acc = 0;
                for (int64_t j = 0; j < t; j++) acc += p[j] * V[(b * t + j) * ev + c];
                Y[(b * s + i) * ev + c] = (float)(acc / sum);
            }
        }
    free(p);
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
    default: return err_set(e, AIT_E_INTERNAL, "unknown fusion kind");
    }
}
