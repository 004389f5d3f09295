/* An epilogue's fixed form: the steps folded into scale and shift per
 * channel, two activations around a residual Add, and a final scale, the
 * shape of a GEMM or convolution kernel's epilogue. */
#include <stdlib.h>
#include <string.h>

#include "graph/fuse_ctx.h"

void fx_fixed_free(fuse_fixed *x)
{
    free(x->scale);
    free(x->shift);
    x->scale = x->shift = NULL;
    x->ok = false;
}

/* y * s + t followed by the linear step st: s and t updated. */
static bool fold(const fuse_step *st, float *s, float *t, int64_t c)
{
    for (int64_t k = 0; k < c; k++) {
        float o = st->src == FS_CHANNEL ? st->p[k] : st->a;
        switch (st->op) {
        case FO_ADD: t[k] += o; break;
        case FO_SUB: t[k] -= o; break;
        case FO_RSUB: s[k] = -s[k], t[k] = o - t[k]; break;
        case FO_MUL: s[k] *= o, t[k] *= o; break;
        case FO_DIV: s[k] /= o, t[k] /= o; break;
        default: return false;
        }
    }
    return true;
}

bool fx_fixed(fusion *f)
{
    fuse_fixed *x = &f->fixed;
    memset(x, 0, sizeof *x);
    x->residual = -1;
    x->post = 1;
    x->act1 = x->act2 = (fuse_step){.op = FO_FUN, .f = FF_NONE, .v = -1};
    /* Phases in order: 0 linear, 1 act1, 2 residual, 3 act2, 4 post. */
    int phase = 0;
    for (int k = 0; k < f->n_steps; k++) {
        const fuse_step *st = &f->steps[k];
        bool lin = st->op <= FO_DIV && st->op != FO_RDIV &&
                   (st->src == FS_CHANNEL || st->src == FS_SCALAR);
        if (phase == 0 && lin) {
            if (f->channels <= 0) return true;
            if (!x->scale) {
                x->scale = malloc((size_t)f->channels * sizeof *x->scale);
                x->shift = calloc((size_t)f->channels, sizeof *x->shift);
                if (!x->scale || !x->shift) {
                    fx_fixed_free(x);
                    return false;
                }
                for (int64_t c = 0; c < f->channels; c++) x->scale[c] = 1;
            }
            if (!fold(st, x->scale, x->shift, f->channels)) goto nofit;
        } else if (st->op == FO_FUN && phase <= 1) {
            x->act1 = *st;
            phase = 2;
        } else if (st->op == FO_ADD && st->src == FS_TENSOR && phase <= 2) {
            x->residual = st->v;
            phase = 3;
        } else if (st->op == FO_FUN && phase == 3) {
            x->act2 = *st;
            phase = 4;
        } else if (st->src == FS_SCALAR && (st->op == FO_MUL || st->op == FO_DIV) && phase <= 4 &&
                   (st->op == FO_MUL || st->a != 0)) {
            x->post *= st->op == FO_MUL ? st->a : 1 / st->a;
            phase = 5;
        } else {
            goto nofit;
        }
    }
    x->ok = true;
    return true;
nofit:
    fx_fixed_free(x);
    return true;
}

ait_status fuse_eval_fixed(const fusion *f, const tensor *const *vals, tensor *out, ait_error *e)
{
    const fuse_fixed *x = &f->fixed;
    const tensor *in = vals[f->in], *r = x->residual >= 0 ? vals[x->residual] : NULL;
    if (!x->ok || !in || !in->data || in->dtype != AIT_F32)
        return err_set(e, AIT_E_DTYPE, "no fixed epilogue, or its input is not float32");
    int64_t n = tensor_numel(in), inner = 1, ch = 1;
    if (x->scale) {
        int a = f->axis < 0 ? in->rank - 1 : f->axis;
        if (a >= in->rank || in->dims[a] != f->channels)
            return err_set(e, AIT_E_SHAPE, "per-channel operand does not fit the output");
        ch = f->channels;
        for (int d = a + 1; d < in->rank; d++) inner *= in->dims[d];
    }
    if (r && (!r->data || r->dtype != AIT_F32 || tensor_numel(r) != n))
        return err_set(e, AIT_E_SHAPE, "residual does not fit the output");
    tensor_set_shape(out, AIT_F32, in->rank, in->dims);
    ait_status s = tensor_alloc(out, e);
    if (s != AIT_OK) return s;
    const float *xi = in->data;
    float *y = out->data;
    for (int64_t i = 0; i < n; i++) {
        float v = xi[i];
        if (x->scale) {
            int64_t c = (i / inner) % ch;
            v = v * x->scale[c] + x->shift[c];
        }
        v = fuse_fn_apply(x->act1.f, x->act1.a, x->act1.b, v);
        if (r) v += ((const float *)r->data)[i];
        v = fuse_fn_apply(x->act2.f, x->act2.a, x->act2.b, v);
        y[i] = v * x->post;
    }
    return AIT_OK;
}
