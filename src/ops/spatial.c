/* Spatial rearrangements: Col2Im (opset 18), the inverse of im2col (PyTorch's
 * fold), and CenterCropPad (18). Both need input values for their output
 * shape (image_shape and block_shape; shape) and defer until known. */
#include <string.h>

#include "ops/op.h"

#define MAX_SP (AIT_MAX_RANK - 2)

/* Steps an odometer idx over dims[0..n); false after the last. */
static bool odo_next(int64_t *idx, const int64_t *dims, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (++idx[i] < dims[i]) return true;
        idx[i] = 0;
    }
    return false;
}

/* ---- Col2Im --------------------------------------------------------------- */

typedef struct c2i_args {
    int k; /* spatial dims */
    int64_t img[MAX_SP], blk[MAX_SP], dil[MAX_SP], str[MAX_SP], pb[MAX_SP], pe[MAX_SP];
    int64_t grid[MAX_SP]; /* blocks along each axis */
    int64_t C, L, bsize;
} c2i_args;

static ait_status c2i_params(op_ctx *c, c2i_args *a)
{
    TRY(need_in(c, 0, "input"));
    TRY(need_in(c, 1, "image_shape"));
    TRY(need_in(c, 2, "block_shape"));
    const tensor *x = c->in[0];
    if (!dtype_is_float(x->dtype) && !dtype_is_int(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "input has unsupported dtype %s",
                       ait_dtype_name(x->dtype));
    if (x->rank != 3)
        return err_set(c->err, AIT_E_SHAPE, "input must be [N, C * prod(block_shape), L], not "
                       "rank %d", x->rank);
    for (int i = 1; i < 3; i++)
        if (c->in[i]->rank != 1)
            return err_set(c->err, AIT_E_SHAPE, "%s must be 1-D",
                           i == 1 ? "image_shape" : "block_shape");
    int ni, nb;
    TRY(in_ints(c, 1, a->img, MAX_SP, &ni));
    TRY(in_ints(c, 2, a->blk, MAX_SP, &nb));
    if (ni != nb || ni < 1)
        return err_set(c->err, AIT_E_SHAPE, "image_shape has %d values and block_shape %d: "
                       "they must have the same number (>= 1)", ni, nb);
    a->k = ni;
    int64_t pads[2 * MAX_SP];
    TRY(ints_attr(c, "dilations", ni, 1, 1, INT32_MAX, a->dil));
    TRY(ints_attr(c, "strides", ni, 1, 1, INT32_MAX, a->str));
    TRY(ints_attr(c, "pads", 2 * ni, 0, 0, INT32_MAX, pads));
    a->bsize = 1, a->L = 1;
    for (int i = 0; i < ni; i++) {
        a->pb[i] = pads[i], a->pe[i] = pads[ni + i];
        if (a->img[i] < 1 || a->img[i] > INT32_MAX || a->blk[i] < 1 || a->blk[i] > INT32_MAX)
            return err_set(c->err, AIT_E_INVALID_ARG, "image_shape and block_shape values must "
                           "be in [1, 2^31), not %lld and %lld at %d",
                           (long long)a->img[i], (long long)a->blk[i], i);
        int64_t ext = a->dil[i] * (a->blk[i] - 1) + 1, span = a->img[i] + a->pb[i] + a->pe[i];
        if (ext > span)
            return err_set(c->err, AIT_E_SHAPE, "the dilated block (%lld) is larger than the "
                           "padded image (%lld) along axis %d", (long long)ext, (long long)span, i);
        a->grid[i] = (span - ext) / a->str[i] + 1;
        if (a->bsize > INT64_MAX / a->blk[i] || a->L > INT64_MAX / a->grid[i])
            return err_set(c->err, AIT_E_OVERFLOW, "block or image sizes overflow");
        a->bsize *= a->blk[i], a->L *= a->grid[i];
    }
    if (x->dims[1] % a->bsize != 0)
        return err_set(c->err, AIT_E_SHAPE, "input dim 1 (%lld) is not a multiple of the "
                       "block size prod(block_shape) = %lld",
                       (long long)x->dims[1], (long long)a->bsize);
    if (x->dims[2] != a->L)
        return err_set(c->err, AIT_E_SHAPE, "input has %lld blocks (dim 2) but image_shape, "
                       "block_shape, dilations, pads and strides give %lld",
                       (long long)x->dims[2], (long long)a->L);
    a->C = x->dims[1] / a->bsize;
    return AIT_OK;
}

static ait_status c2i_infer(op_ctx *c)
{
    c2i_args a;
    TRY(c2i_params(c, &a));
    int64_t d[AIT_MAX_RANK] = {c->in[0]->dims[0], a.C};
    memcpy(d + 2, a.img, (size_t)a.k * sizeof *d);
    set_out(c, 0, c->in[0]->dtype, a.k + 2, d);
    return AIT_OK;
}

#define C2I_ADD(name, T)                                                                      \
    static void name(const T *x, T *y, const c2i_args *a, const int64_t *ystr)               \
    {                                                                                         \
        int64_t kb[MAX_SP] = {0};                                                             \
        do { /* each block position: one row of L values */                                   \
            int64_t l[MAX_SP] = {0}, li = 0;                                                  \
            do {                                                                              \
                int64_t o = 0;                                                                \
                bool in = true;                                                               \
                for (int i = 0; i < a->k && in; i++) {                                        \
                    int64_t p = l[i] * a->str[i] - a->pb[i] + kb[i] * a->dil[i];              \
                    in = p >= 0 && p < a->img[i];                                             \
                    o += p * ystr[i];                                                         \
                }                                                                             \
                if (in) y[o] += x[li];                                                        \
                li++;                                                                         \
            } while (odo_next(l, a->grid, a->k));                                             \
            x += a->L;                                                                        \
        } while (odo_next(kb, a->blk, a->k));                                                 \
    }
C2I_ADD(c2i_add_f32, float)
C2I_ADD(c2i_add_f64, double)

static ait_status c2i_run(op_ctx *c)
{
    c2i_args a;
    TRY(c2i_params(c, &a));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (tensor_numel(x) == 0 || tensor_numel(y) == 0) return AIT_OK;
    ait_dtype wt = x->dtype == AIT_F32 || x->dtype == AIT_F16 || x->dtype == AIT_BF16 ? AIT_F32
                                                                                      : AIT_F64;
    size_t bytes[2] = {work_bytes(x, wt), work_bytes(y, wt)};
    void *p[2];
    TRY(op_scratch_parts(c, 2, bytes, p));
    const void *xd;
    TRY(work_in(c, x, wt, p[0], &xd));
    void *yd = work_out(y, wt, p[1]);
    memset(yd, 0, (size_t)tensor_numel(y) * ait_dtype_size(wt)); /* sums start at 0 */
    int64_t ystr[MAX_SP], img = dims_prod(a.img, 0, a.k), per = a.bsize * a.L;
    row_strides(a.img, a.k, ystr);
    int64_t planes = x->dims[0] * a.C; /* (n, c) pairs */
    for (int64_t q = 0; q < planes; q++) {
        if (wt == AIT_F32)
            c2i_add_f32((const float *)xd + q * per, (float *)yd + q * img, &a, ystr);
        else
            c2i_add_f64((const double *)xd + q * per, (double *)yd + q * img, &a, ystr);
    }
    return work_done(c, y, yd, wt);
}

/* ---- CenterCropPad -------------------------------------------------------- */

/* Per axis: the output size and the input index of output index 0 (negative
 * when padded at the beginning). */
static ait_status ccp_params(op_ctx *c, int64_t *out, int64_t *shift)
{
    TRY(need_in(c, 0, "input_data"));
    TRY(need_in(c, 1, "shape"));
    const tensor *x = c->in[0], *s = c->in[1];
    if (!ait_dtype_size(x->dtype) || x->dtype == AIT_STRING)
        return err_set(c->err, AIT_E_UNSUPPORTED, "input_data has unsupported dtype %s",
                       ait_dtype_name(x->dtype));
    if (s->dtype != AIT_I32 && s->dtype != AIT_I64)
        return err_set(c->err, AIT_E_DTYPE, "shape must be int32 or int64, not %s",
                       ait_dtype_name(s->dtype));
    if (s->rank != 1) return err_set(c->err, AIT_E_SHAPE, "shape must be 1-D");
    int r = x->rank, na, ns;
    const int64_t *ax = attr_ints(c->n, "axes", &na);
    int axes[AIT_MAX_RANK];
    if (!ax) {
        na = r;
        for (int i = 0; i < r; i++) axes[i] = i;
    } else {
        if (na > r)
            return err_set(c->err, AIT_E_INVALID_ARG, "axes has %d values for rank %d", na, r);
        for (int i = 0; i < na; i++) {
            TRY(norm_axis(c, ax[i], r, &axes[i]));
            for (int j = 0; j < i; j++)
                if (axes[j] == axes[i])
                    return err_set(c->err, AIT_E_INVALID_ARG, "axis %d is repeated in axes",
                                   axes[i]);
        }
    }
    if (s->dims[0] != na)
        return err_set(c->err, AIT_E_SHAPE, "shape has %lld values for %d axes",
                       (long long)s->dims[0], na);
    int64_t want[AIT_MAX_RANK];
    TRY(in_ints(c, 1, want, AIT_MAX_RANK, &ns));
    for (int i = 0; i < r; i++) out[i] = x->dims[i], shift[i] = 0;
    for (int i = 0; i < na; i++) {
        int d = axes[i];
        if (want[i] < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "shape[%d] = %lld is negative", i,
                           (long long)want[i]);
        /* crop: the window starts (d - t) / 2 in, rounded down; pad: the
         * odd pixel goes to the end */
        out[d] = want[i];
        shift[d] = x->dims[d] >= want[i] ? (x->dims[d] - want[i]) / 2
                                         : -((want[i] - x->dims[d]) / 2);
    }
    return AIT_OK;
}

static ait_status ccp_infer(op_ctx *c)
{
    int64_t out[AIT_MAX_RANK], shift[AIT_MAX_RANK];
    TRY(ccp_params(c, out, shift));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, out);
    return AIT_OK;
}

/* Copies, row by row along the last axis, the part of each output row that
 * lies inside the input; the rest stays zero (OP_ZERO_OUTPUTS). */
static ait_status ccp_run(op_ctx *c)
{
    int64_t out[AIT_MAX_RANK], shift[AIT_MAX_RANK];
    TRY(ccp_params(c, out, shift));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    size_t es = ait_dtype_size(x->dtype);
    int r = x->rank;
    if (tensor_numel(y) == 0 || tensor_numel(x) == 0) return AIT_OK;
    if (r == 0) {
        memcpy(y->data, x->data, es);
        return AIT_OK;
    }
    int64_t xs[AIT_MAX_RANK], ys[AIT_MAX_RANK], idx[AIT_MAX_RANK] = {0};
    row_strides(x->dims, r, xs);
    row_strides(out, r, ys);
    int64_t last = r - 1, lo = shift[last] < 0 ? -shift[last] : 0;
    int64_t hi = x->dims[last] - shift[last];
    if (hi > out[last]) hi = out[last];
    if (hi <= lo) return AIT_OK;
    do {
        int64_t xo = 0, yo = 0;
        bool in = true;
        for (int i = 0; i < last && in; i++) {
            int64_t p = idx[i] + shift[i];
            in = p >= 0 && p < x->dims[i];
            xo += p * xs[i], yo += idx[i] * ys[i];
        }
        if (in)
            memcpy((char *)y->data + (size_t)(yo + lo) * es,
                   (const char *)x->data + (size_t)(xo + lo + shift[last]) * es,
                   (size_t)(hi - lo) * es);
    } while (odo_next(idx, out, (int)last));
    return AIT_OK;
}

OP_TABLE(spatial,
         OP_DEF("Col2Im", 3, 3, 1, 1, c2i_infer, c2i_run),
         /* pads with zeros by leaving them (OP_ZERO_OUTPUTS) */
         {.name = "CenterCropPad", .min_in = 2, .max_in = 2, .min_out = 1, .max_out = 1,
          .flags = OP_ZERO_OUTPUTS, .infer = ccp_infer, .run = ccp_run});
