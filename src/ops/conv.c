/* Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv.
 *
 * All share one geometry (conv_geometry: attributes, pads, output sizes).
 * All but DeformConv (its own sampling loop, below) share one set of
 * kernels (conv_tmpl.h: im2col + GEMM for Conv, transposed GEMM + col2im
 * for ConvTranspose), instantiated for float (float32, and float16/bfloat16
 * converted to float32), double, and int32 (the quantized ops, after
 * subtracting zero points). */
#include <math.h>
#include <string.h>

#include "ops/op.h"

#define CONV_MAX_SP (AIT_MAX_RANK - 2)
#define CONV_ATTR_MAX INT32_MAX /* bound on kernel, stride, dilation and pad values */

typedef struct conv_geom {
    int nd;                          /* spatial dims */
    int64_t n, c, m, group, cg, mg;  /* batch, in / out channels, groups, per group */
    int64_t in[CONV_MAX_SP], out[CONV_MAX_SP], k[CONV_MAX_SP];
    int64_t s[CONV_MAX_SP], d[CONV_MAX_SP], pb[CONV_MAX_SP], pe[CONV_MAX_SP];
    int64_t in_sp, out_sp, k_sp;     /* products of in, out, k */
    bool pointwise;                  /* Conv whose input is its own im2col */
} conv_geom;

#define CT float
#define CS f32
#include "conv_tmpl.h"
#define CT double
#define CS f64
#include "conv_tmpl.h"
#define CT int32_t
#define CS i32
#include "conv_tmpl.h"

/* ---- attributes and shapes --------------------------------------------- */

/* Splits a total padding between begin and end with floor division (the
 * total may be negative for ConvTranspose with an explicit output_shape). */
static void split_pad(int64_t total, bool extra_at_end, int64_t *pb, int64_t *pe)
{
    int64_t half = floor_div(total, 2);
    *pb = extra_at_end ? half : total - half;
    *pe = total - *pb;
}

/* Geometry of a Conv (transpose false) or ConvTranspose over x = in[xi] and
 * w = in[wi]; needs shapes only. */
static ait_status conv_geometry(op_ctx *c, int xi, int wi, bool transpose, conv_geom *g)
{
    const tensor *x = c->in[xi], *w = c->in[wi];
    char sx[96], sw[96];
    memset(g, 0, sizeof *g);
    if (x->rank < 3)
        return err_set(c->err, AIT_E_SHAPE, "input has shape %s; expected [N, C, spatial...]",
                       shape_str(x->dims, x->rank, sx, sizeof sx));
    if (w->rank != x->rank)
        return err_set(c->err, AIT_E_SHAPE, "weights %s and input %s differ in rank",
                       shape_str(w->dims, w->rank, sw, sizeof sw),
                       shape_str(x->dims, x->rank, sx, sizeof sx));
    const int nd = g->nd = x->rank - 2;
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->group = attr_int(c->n, "group", 1);
    if (g->group < 1 || g->group > CONV_ATTR_MAX)
        return err_set(c->err, AIT_E_INVALID_ARG, "group %lld must be positive",
                       (long long)g->group);
    if (!transpose) {
        if (g->c != w->dims[1] * g->group)
            return err_set(c->err, AIT_E_SHAPE,
                           "input has %lld channels but weights %s with group %lld expect %lld",
                           (long long)g->c, shape_str(w->dims, w->rank, sw, sizeof sw),
                           (long long)g->group, (long long)(w->dims[1] * g->group));
        g->m = w->dims[0];
    } else {
        if (g->c != w->dims[0])
            return err_set(c->err, AIT_E_SHAPE,
                           "input has %lld channels but weights %s expect %lld", (long long)g->c,
                           shape_str(w->dims, w->rank, sw, sizeof sw), (long long)w->dims[0]);
        g->m = w->dims[1] * g->group;
    }
    if (g->m % g->group || g->c % g->group)
        return err_set(c->err, AIT_E_SHAPE, "channels (%lld in, %lld out) are not divisible by "
                       "group %lld", (long long)g->c, (long long)g->m, (long long)g->group);
    g->cg = g->c / g->group;
    g->mg = g->m / g->group;

    int kc;
    const int64_t *ks = attr_ints(c->n, "kernel_shape", &kc);
    if (ks && kc != nd)
        return err_set(c->err, AIT_E_INVALID_ARG, "kernel_shape has %d values, expected %d", kc,
                       nd);
    for (int i = 0; i < nd; i++) {
        g->k[i] = w->dims[i + 2];
        g->in[i] = x->dims[i + 2];
        if (ks && ks[i] != g->k[i])
            return err_set(c->err, AIT_E_SHAPE, "kernel_shape[%d] = %lld but the weights have %lld",
                           i, (long long)ks[i], (long long)g->k[i]);
        if (g->k[i] < 1 || g->k[i] > CONV_ATTR_MAX)
            return err_set(c->err, AIT_E_SHAPE, "kernel dim %d is %lld", i, (long long)g->k[i]);
    }
    int mode = PAD_NOTSET;
    int64_t pads[2 * CONV_MAX_SP];
    TRY(auto_pad_attr(c, &mode));
    TRY(ints_attr(c, "strides", nd, 1, 1, CONV_ATTR_MAX, g->s));
    TRY(ints_attr(c, "dilations", nd, 1, 1, CONV_ATTR_MAX, g->d));
    TRY(ints_attr(c, "pads", 2 * nd, 0, 0, CONV_ATTR_MAX, pads));

    int64_t opad[CONV_MAX_SP] = {0}, oshape[AIT_MAX_RANK] = {0};
    int osc = 0;
    if (transpose) {
        TRY(ints_attr(c, "output_padding", nd, 0, 0, CONV_ATTR_MAX, opad));
        const int64_t *os = attr_ints(c->n, "output_shape", &osc);
        if (os && osc != nd && osc != nd + 2)
            return err_set(c->err, AIT_E_INVALID_ARG, "output_shape has %d values, expected %d",
                           osc, nd);
        for (int i = 0; i < nd && os; i++) {
            oshape[i] = os[osc - nd + i];
            if (oshape[i] < 0 || oshape[i] > INT64_MAX / 4)
                return err_set(c->err, AIT_E_INVALID_ARG, "output_shape[%d] = %lld is invalid",
                               osc - nd + i, (long long)oshape[i]);
        }
    }

    g->in_sp = g->out_sp = g->k_sp = 1;
    g->pointwise = !transpose;
    for (int i = 0; i < nd; i++) {
        const int64_t in = g->in[i], s = g->s[i], dk = (g->k[i] - 1) * g->d[i] + 1;
        int64_t out;
        if (in > INT64_MAX / 4 / s)
            return err_set(c->err, AIT_E_OVERFLOW, "spatial dim %d (%lld) is too large", i,
                           (long long)in);
        g->pb[i] = mode == PAD_NOTSET ? pads[i] : 0;
        g->pe[i] = mode == PAD_NOTSET ? pads[nd + i] : 0;
        if (!transpose) {
            TRY(window_out(c, i, in, s, dk, mode, false, &g->pb[i], &g->pe[i], &out));
        } else {
            /* output size without any padding removed */
            int64_t full = s * (in - 1) + opad[i] + dk;
            if (osc || mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
                out = osc ? oshape[i] : in * s;
                split_pad(full - out, mode == PAD_SAME_UPPER, &g->pb[i], &g->pe[i]);
            } else {
                out = full - g->pb[i] - g->pe[i];
            }
            if (out < 0)
                return err_set(c->err, AIT_E_SHAPE, "spatial dim %d: output size %lld is negative",
                               i, (long long)out);
        }
        g->out[i] = out;
        g->in_sp *= in;
        g->out_sp *= out;
        g->k_sp *= g->k[i];
        if (g->k[i] != 1 || s != 1 || g->pb[i] || g->pe[i]) g->pointwise = false;
    }
    int64_t od[AIT_MAX_RANK] = {g->n, g->m}, numel;
    memcpy(od + 2, g->out, (size_t)nd * sizeof od[0]);
    return shape_numel(od, nd + 2, AIT_F64, &numel, "output", c->err);
}

static void conv_out_dims(const conv_geom *g, int64_t *dims)
{
    dims[0] = g->n;
    dims[1] = g->m;
    memcpy(dims + 2, g->out, (size_t)g->nd * sizeof dims[0]);
}

/* ---- scratch and conversions ------------------------------------------- */

/* Columns per tile: keeps the rows x tile column buffer near 256 KiB of
 * floats while leaving the GEMM's inner loop long enough. */
static int64_t conv_tile(int64_t rows, int64_t walk)
{
    int64_t t = 65536 / (rows > 0 ? rows : 1);
    t = t < 64 ? 64 : (t + 15) & ~(int64_t)15;
    return walk < t ? (walk > 0 ? walk : 1) : t;
}

/* Kernel offsets (index * dilation) per kernel position and dim. */
static void fill_koff(const conv_geom *g, int64_t *koff)
{
    for (int64_t q = 0; q < g->k_sp; q++) {
        int64_t rest = q;
        for (int i = g->nd - 1; i >= 0; i--) {
            koff[q * g->nd + i] = (rest % g->k[i]) * g->d[i];
            rest /= g->k[i];
        }
    }
}

/* ---- Conv and ConvTranspose -------------------------------------------- */

static ait_status conv_check(op_ctx *c, bool transpose, conv_geom *g)
{
    const tensor *x = c->in[0], *w = c->in[1];
    TRY(check_dtype(c, x, "X", 4, AIT_F32, AIT_F64, AIT_F16, AIT_BF16));
    if (w->dtype != x->dtype)
        return err_set(c->err, AIT_E_DTYPE, "W is %s but X is %s", ait_dtype_name(w->dtype),
                       ait_dtype_name(x->dtype));
    TRY(conv_geometry(c, 0, 1, transpose, g));
    if (has_in(c, 2)) {
        const tensor *b = c->in[2];
        if (b->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "B is %s but X is %s", ait_dtype_name(b->dtype),
                           ait_dtype_name(x->dtype));
        if (b->rank != 1 || b->dims[0] != g->m)
            return err_set(c->err, AIT_E_SHAPE, "B must have shape [%lld]", (long long)g->m);
    }
    return AIT_OK;
}

static ait_status conv_infer_any(op_ctx *c, bool transpose)
{
    conv_geom g;
    int64_t dims[AIT_MAX_RANK];
    TRY(conv_check(c, transpose, &g));
    conv_out_dims(&g, dims);
    set_out(c, 0, c->in[0]->dtype, g.nd + 2, dims);
    return AIT_OK;
}

static ait_status conv_run_any(op_ctx *c, bool transpose)
{
    conv_geom g;
    TRY(conv_check(c, transpose, &g));
    const tensor *x = c->in[0], *w = c->in[1], *b = has_in(c, 2) ? c->in[2] : NULL;
    tensor *y = c->out[0];
    const ait_dtype dt = x->dtype;
    const bool half = dt == AIT_F16 || dt == AIT_BF16; /* computed in float32 buffers */
    const size_t es = dt == AIT_F64 ? 8 : 4;
    const int64_t rows = (transpose ? g.mg : g.cg) * g.k_sp;
    const int64_t tile = conv_tile(rows, transpose ? g.in_sp : g.out_sp);
    const int64_t nx = tensor_numel(x), nw = tensor_numel(w), ny = tensor_numel(y);
    size_t bytes[6] = {
        (size_t)(g.k_sp * g.nd) * sizeof(int64_t),
        g.pointwise ? 0 : (size_t)(rows * tile) * es,
        half ? (size_t)nx * 4 : 0,
        half ? (size_t)nw * 4 : 0,
        half && b ? (size_t)g.m * 4 : 0,
        half ? (size_t)ny * 4 : 0,
    };
    void *p[6];
    TRY(op_scratch_parts(c, 6, bytes, p));
    int64_t *koff = p[0];
    fill_koff(&g, koff);
    if (dt == AIT_F64) {
        const double *bd = b ? b->data : NULL;
        if (transpose) conv_bwd_f64(&g, x->data, w->data, bd, y->data, p[1], koff, tile);
        else conv_fwd_f64(&g, x->data, w->data, bd, y->data, p[1], koff, tile);
        return AIT_OK;
    }
    const float *xf = x->data, *wf = w->data, *bf = b ? b->data : NULL;
    float *yf = y->data;
    if (half) {
        convert_floats(x->data, dt, p[2], AIT_F32, nx);
        convert_floats(w->data, dt, p[3], AIT_F32, nw);
        if (b) convert_floats(b->data, dt, p[4], AIT_F32, g.m);
        xf = p[2], wf = p[3], bf = b ? p[4] : NULL, yf = p[5];
    }
    if (transpose) conv_bwd_f32(&g, xf, wf, bf, yf, p[1], koff, tile);
    else conv_fwd_f32(&g, xf, wf, bf, yf, p[1], koff, tile);
    if (half) convert_floats(yf, AIT_F32, y->data, dt, ny);
    return AIT_OK;
}

static ait_status conv_infer(op_ctx *c) { return conv_infer_any(c, false); }
static ait_status conv_run(op_ctx *c) { return conv_run_any(c, false); }
static ait_status convt_infer(op_ctx *c) { return conv_infer_any(c, true); }
static ait_status convt_run(op_ctx *c) { return conv_run_any(c, true); }

/* ---- ConvInteger and QLinearConv ---------------------------------------- */

/* Where the quantized ops keep their tensors: input indices (-1: none). */
typedef struct qconv_io {
    int x, xz, w, wz, bias;
} qconv_io;

static const qconv_io CONVINT_IO = {0, 2, 1, 3, -1};
static const qconv_io QLCONV_IO = {0, 2, 3, 5, 8};

static bool is_q8(ait_dtype t) { return t == AIT_U8 || t == AIT_I8; }

/* Checks a zero point: absent, or of `dt` with 1 (or `per_chan`) values. */
static ait_status check_zp(op_ctx *c, int i, ait_dtype dt, int64_t per_chan, const char *what)
{
    if (i < 0 || !has_in(c, i)) return AIT_OK;
    const tensor *z = c->in[i];
    if (z->dtype != dt)
        return err_set(c->err, AIT_E_DTYPE, "%s is %s, expected %s", what,
                       ait_dtype_name(z->dtype), ait_dtype_name(dt));
    int64_t n = tensor_numel(z);
    if (z->rank > 1 || (n != 1 && n != per_chan))
        return err_set(c->err, AIT_E_SHAPE, "%s must be a scalar%s", what,
                       per_chan > 1 ? " or have one value per output channel" : "");
    return AIT_OK;
}

static ait_status qconv_check(op_ctx *c, const qconv_io *io, conv_geom *g)
{
    const tensor *x = c->in[io->x], *w = c->in[io->w];
    if (!is_q8(x->dtype) || !is_q8(w->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "X (%s) and W (%s) must be int8 or uint8",
                       ait_dtype_name(x->dtype), ait_dtype_name(w->dtype));
    TRY(conv_geometry(c, io->x, io->w, false, g));
    TRY(check_zp(c, io->xz, x->dtype, 1, "x_zero_point"));
    TRY(check_zp(c, io->wz, w->dtype, g->m, "w_zero_point"));
    if (io->bias >= 0 && has_in(c, io->bias)) {
        const tensor *b = c->in[io->bias];
        if (b->dtype != AIT_I32 || b->rank != 1 || b->dims[0] != g->m)
            return err_set(c->err, AIT_E_SHAPE, "B must be int32 of shape [%lld]",
                           (long long)g->m);
    }
    return AIT_OK;
}

static int32_t zp_at(const op_ctx *c, int i, int64_t k)
{
    if (i < 0 || !has_in(c, i)) return 0;
    const tensor *z = c->in[i];
    return (int32_t)elem_get_i64(z->data, z->dtype, tensor_numel(z) == 1 ? 0 : k);
}

/* dst = src - zp as int32, src int8 or uint8. */
static void load_q8(const void *src, ait_dtype t, int64_t n, int32_t zp, int32_t *dst)
{
    if (t == AIT_U8)
        for (int64_t i = 0; i < n; i++) dst[i] = (int32_t)((const uint8_t *)src)[i] - zp;
    else
        for (int64_t i = 0; i < n; i++) dst[i] = (int32_t)((const int8_t *)src)[i] - zp;
}

/* Integer convolution of (x - x_zero_point) by (w - w_zero_point) plus the
 * int32 bias; accumulates into `out`, or into scratch when out is NULL. */
static ait_status qconv_acc(op_ctx *c, const qconv_io *io, const conv_geom *g, int32_t *out,
                            int32_t **acc)
{
    const tensor *x = c->in[io->x], *w = c->in[io->w];
    const int64_t rows = g->cg * g->k_sp, tile = conv_tile(rows, g->out_sp);
    const int64_t nx = tensor_numel(x), nw = tensor_numel(w);
    const int64_t ny = g->n * g->m * g->out_sp;
    size_t bytes[5] = {
        (size_t)(g->k_sp * g->nd) * sizeof(int64_t),
        g->pointwise ? 0 : (size_t)(rows * tile) * 4,
        (size_t)(nx ? nx : 1) * 4, /* at least one: an empty x is still offset (NULL + 0) */
        (size_t)(nw ? nw : 1) * 4,
        out ? 0 : (size_t)ny * 4,
    };
    void *p[5];
    TRY(op_scratch_parts(c, 5, bytes, p));
    int32_t *xi = p[2], *wi = p[3];
    fill_koff(g, p[0]);
    load_q8(x->data, x->dtype, nx, zp_at(c, io->xz, 0), xi);
    const int64_t per_m = g->cg * g->k_sp;
    for (int64_t m = 0; m < g->m; m++)
        load_q8((const char *)w->data + m * per_m, w->dtype, per_m, zp_at(c, io->wz, m),
                wi + m * per_m);
    const int32_t *bias = io->bias >= 0 && has_in(c, io->bias) ? c->in[io->bias]->data : NULL;
    *acc = out ? out : p[4];
    conv_fwd_i32(g, xi, wi, bias, *acc, p[1], p[0], tile);
    return AIT_OK;
}

static ait_status convint_infer(op_ctx *c)
{
    conv_geom g;
    int64_t dims[AIT_MAX_RANK];
    TRY(qconv_check(c, &CONVINT_IO, &g));
    conv_out_dims(&g, dims);
    set_out(c, 0, AIT_I32, g.nd + 2, dims);
    return AIT_OK;
}

static ait_status convint_run(op_ctx *c)
{
    conv_geom g;
    int32_t *acc;
    TRY(qconv_check(c, &CONVINT_IO, &g));
    return qconv_acc(c, &CONVINT_IO, &g, c->out[0]->data, &acc);
}

/* QLinearConv's scales: float32, x and y per tensor, w per tensor or per
 * output channel. */
static ait_status qlconv_scales(op_ctx *c, int64_t m)
{
    static const struct { int i; const char *name; } sc[] = {
        {1, "x_scale"}, {4, "w_scale"}, {6, "y_scale"}};
    for (int k = 0; k < 3; k++) {
        const tensor *t = c->in[sc[k].i];
        if (!t) return err_set(c->err, AIT_E_INVALID_ARG, "%s is missing", sc[k].name);
        int64_t n = tensor_numel(t);
        if (t->dtype != AIT_F32)
            return err_set(c->err, AIT_E_DTYPE, "%s must be float32", sc[k].name);
        if (t->rank > 1 || (n != 1 && !(sc[k].i == 4 && n == m)))
            return err_set(c->err, AIT_E_SHAPE, "%s has %lld values", sc[k].name, (long long)n);
    }
    return AIT_OK;
}

static ait_dtype qlconv_out_type(const op_ctx *c)
{
    return has_in(c, 7) ? c->in[7]->dtype : c->in[0]->dtype;
}

static ait_status qlconv_check(op_ctx *c, conv_geom *g)
{
    TRY(qconv_check(c, &QLCONV_IO, g));
    TRY(qlconv_scales(c, g->m));
    return check_zp(c, 7, qlconv_out_type(c), 1, "y_zero_point");
}

static ait_status qlconv_infer(op_ctx *c)
{
    conv_geom g;
    int64_t dims[AIT_MAX_RANK];
    TRY(qlconv_check(c, &g));
    conv_out_dims(&g, dims);
    set_out(c, 0, qlconv_out_type(c), g.nd + 2, dims);
    return AIT_OK;
}

static ait_status qlconv_run(op_ctx *c)
{
    conv_geom g;
    int32_t *acc;
    TRY(qlconv_check(c, &g));
    TRY(qconv_acc(c, &QLCONV_IO, &g, NULL, &acc));
    const tensor *ws = c->in[4];
    const float xs = *(const float *)c->in[1]->data, ys = *(const float *)c->in[6]->data;
    const bool per_chan = tensor_numel(ws) > 1;
    const int32_t yz = zp_at(c, 7, 0);
    const bool u8 = qlconv_out_type(c) == AIT_U8;
    const double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    if (!(xs > 0 && ys > 0 && isfinite(xs) && isfinite(ys)))
        return err_set(c->err, AIT_E_INVALID_ARG, "x_scale and y_scale must be positive and finite");
    for (int64_t m = 0; m < tensor_numel(ws); m++) {
        float w = ((const float *)ws->data)[m];
        if (!(w > 0 && isfinite(w)))
            return err_set(c->err, AIT_E_INVALID_ARG, "w_scale must be positive and finite");
    }
    void *y = c->out[0]->data;
    for (int64_t nm = 0; nm < g.n * g.m; nm++) {
        const int64_t m = nm % g.m;
        const double scale =
            (double)xs * ((const float *)ws->data)[per_chan ? m : 0] / (double)ys;
        const int32_t *a = acc + nm * g.out_sp;
        for (int64_t j = 0; j < g.out_sp; j++) {
            double v = nearbyint((double)a[j] * scale) + yz; /* half to even */
            v = v < lo ? lo : v > hi ? hi : v;
            if (u8) ((uint8_t *)y)[nm * g.out_sp + j] = (uint8_t)v;
            else ((int8_t *)y)[nm * g.out_sp + j] = (int8_t)v;
        }
    }
    return AIT_OK;
}

/* ---- DeformConv (19, 22) ----------------------------------------------- */

/* Conv whose kernel taps are moved by learnt offsets: tap q of output
 * position o samples x at o * s - pb + q * d + offset (linear interpolation,
 * zero outside the image), times the mask, for the channels of one offset
 * group. offset is (N, offset_group * k_sp * nd, out...) with the nd
 * coordinates of each tap in axis order, mask (N, offset_group * k_sp,
 * out...). Computed in double, one output position at a time: the sampled
 * column (C * k_sp values) then the per-group dot products with W. */
static ait_status dconv_check(op_ctx *c, conv_geom *g, int64_t *og)
{
    TRY(need_in(c, 2, "offset"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "X"));
    TRY(conv_geometry(c, 0, 1, false, g));
    *og = attr_int(c->n, "offset_group", 1);
    if (*og < 1 || g->c % *og)
        return err_set(c->err, AIT_E_INVALID_ARG, "offset_group %lld must be positive and divide "
                       "the %lld input channels", (long long)*og, (long long)g->c);
    static const char *const names[] = {"X", "W", "offset", "B", "mask"};
    for (int i = 1; i < 5; i++) {
        if (!has_in(c, i)) continue;
        const tensor *t = c->in[i];
        if (t->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but X is %s", names[i],
                           ait_dtype_name(t->dtype), ait_dtype_name(x->dtype));
        if (i < 2) continue;
        /* offset and mask: [N, channels, out...]; B: [M] */
        int64_t want[AIT_MAX_RANK] = {g->n, *og * g->k_sp * (i == 2 ? g->nd : 1)};
        int r = g->nd + 2;
        memcpy(want + 2, g->out, (size_t)g->nd * sizeof *want);
        if (i == 3) want[0] = g->m, r = 1;
        bool ok = t->rank == r;
        for (int d = 0; ok && d < r; d++) ok = t->dims[d] == want[d];
        if (!ok) {
            char got[96], exp[96];
            return err_set(c->err, AIT_E_SHAPE, "%s has shape %s; expected %s", names[i],
                           shape_str(t->dims, t->rank, got, sizeof got),
                           shape_str(want, r, exp, sizeof exp));
        }
    }
    return AIT_OK;
}

static ait_status dconv_infer(op_ctx *c)
{
    conv_geom g;
    int64_t og, dims[AIT_MAX_RANK];
    TRY(dconv_check(c, &g, &og));
    conv_out_dims(&g, dims);
    set_out(c, 0, c->in[0]->dtype, g.nd + 2, dims);
    return AIT_OK;
}

/* Linear interpolation of plane x (dims g->in) at position pos: up to 2^nd
 * corners; those outside the image count as zero. */
static double dconv_sample(const conv_geom *g, const double *x, const double *pos)
{
    int64_t lo[CONV_MAX_SP];
    double fr[CONV_MAX_SP];
    for (int i = 0; i < g->nd; i++) {
        if (!(pos[i] > -1 && pos[i] < (double)g->in[i])) return 0; /* NaN too */
        double f = floor(pos[i]);
        lo[i] = (int64_t)f, fr[i] = pos[i] - f;
    }
    double acc = 0;
    for (int corner = 0; corner < 1 << g->nd; corner++) {
        double wgt = 1;
        int64_t off = 0;
        bool in = true;
        for (int i = 0; i < g->nd && in; i++) {
            int hi = corner >> (g->nd - 1 - i) & 1;
            int64_t p = lo[i] + hi;
            in = p >= 0 && p < g->in[i];
            wgt *= hi ? fr[i] : 1 - fr[i];
            off = off * g->in[i] + p;
        }
        if (in && wgt != 0) acc += wgt * x[off];
    }
    return acc;
}

static ait_status dconv_run(op_ctx *c)
{
    conv_geom g;
    int64_t og;
    TRY(dconv_check(c, &g, &og));
    tensor *y = c->out[0];
    if (tensor_numel(y) == 0) return AIT_OK;
    const int nd = g.nd;
    const int64_t K = g.k_sp, cpo = g.c / og; /* channels per offset group */
    size_t bytes[7];
    for (int i = 0; i < 5; i++) bytes[i] = has_in(c, i) ? work_bytes(c->in[i], AIT_F64) : 0;
    bytes[5] = work_bytes(y, AIT_F64);
    bytes[6] = (size_t)(g.c * K) * sizeof(double) + (size_t)(K * nd) * sizeof(int64_t);
    void *p[7];
    TRY(op_scratch_parts(c, 7, bytes, p));
    const double *in[5] = {0};
    for (int i = 0; i < 5; i++)
        if (has_in(c, i)) TRY(work_in(c, c->in[i], AIT_F64, p[i], (const void **)&in[i]));
    double *yd = work_out(y, AIT_F64, p[5]), *col = p[6];
    int64_t *koff = (int64_t *)(col + g.c * K);
    fill_koff(&g, koff);
    const double *x = in[0], *w = in[1], *off = in[2], *bias = in[3], *mask = in[4];
    int64_t o[CONV_MAX_SP] = {0};
    for (int64_t n = 0; n < g.n; n++) {
        for (int64_t op = 0; op < g.out_sp; op++) {
            int64_t rest = op;
            for (int i = nd - 1; i >= 0; i--) o[i] = rest % g.out[i], rest /= g.out[i];
            for (int64_t gi = 0; gi < og; gi++)
                for (int64_t q = 0; q < K; q++) {
                    double pos[CONV_MAX_SP], m = 1;
                    for (int i = 0; i < nd; i++) {
                        int64_t ch = (gi * K + q) * nd + i;
                        pos[i] = (double)(o[i] * g.s[i] - g.pb[i] + koff[q * nd + i]) +
                                 off[(n * og * K * nd + ch) * g.out_sp + op];
                    }
                    if (mask) m = mask[(n * og * K + gi * K + q) * g.out_sp + op];
                    for (int64_t ci = gi * cpo; ci < (gi + 1) * cpo; ci++)
                        col[ci * K + q] =
                            m == 0 ? 0 : m * dconv_sample(&g, x + (n * g.c + ci) * g.in_sp, pos);
                }
            for (int64_t m = 0; m < g.m; m++) {
                const double *wm = w + m * g.cg * K, *cm = col + (m / g.mg) * g.cg * K;
                double acc = bias ? bias[m] : 0;
                for (int64_t j = 0; j < g.cg * K; j++) acc += wm[j] * cm[j];
                yd[(n * g.m + m) * g.out_sp + op] = acc;
            }
        }
    }
    return work_done(c, y, yd, AIT_F64);
}

OP_TABLE(conv,
         {"Conv", 2, 3, 1, 1, 0, conv_infer, conv_run},
         {"ConvTranspose", 2, 3, 1, 1, 0, convt_infer, convt_run},
         {"ConvInteger", 2, 4, 1, 1, 0, convint_infer, convint_run},
         {"QLinearConv", 8, 9, 1, 1, 0, qlconv_infer, qlconv_run},
         {"DeformConv", 3, 5, 1, 1, 0, dconv_infer, dconv_run});
