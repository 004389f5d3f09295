/* Vision ops: GridSample (opsets 16, 20), AffineGrid (20), which makes its
 * grids, RoiAlign (10, 16), MaxRoiPool (1, 22) and NonMaxSuppression (10,
 * 11).
 *
 * GridSample and RoiAlign gather from the input in a work type: float32
 * data (and float16/bfloat16, widened into scratch) in float, float64 and
 * integer data in double. Sample positions and weights are computed once
 * per output point (GridSample) or per ROI (RoiAlign) and shared by all
 * channels. Both follow the ONNX reference, which follows PyTorch's
 * grid_sample and onnxruntime's RoiAlign, including RoiAlign's max mode
 * (the max of the weighted corners, not of the interpolated values). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

/* ---- helpers ------------------------------------------------------------ */

static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* The dtype data of dtype t is gathered in. */
static ait_dtype work_dtype(ait_dtype t)
{
    return t == AIT_F32 || t == AIT_F16 || t == AIT_BF16 ? AIT_F32 : AIT_F64;
}

/* ---- GridSample --------------------------------------------------------- */

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };
#define GS_MAX_TAPS 64 /* 4^3: cubic in 3 dims, linear in up to 6 */

typedef struct gs_args {
    int mode, pad, k; /* k spatial dims */
    bool align;
} gs_args;

static ait_status gs_params(op_ctx *c, gs_args *a)
{
    TRY(need_in(c, 0, "X"));
    TRY(need_in(c, 1, "grid"));
    const tensor *x = c->in[0], *g = c->in[1];
    if (!dtype_is_float(x->dtype) && !dtype_is_int(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "X has unsupported dtype %s",
                       ait_dtype_name(x->dtype));
    TRY(check_float(c, g, "grid"));
    int r = x->rank;
    if (r < 3 || (c->n->version < 20 && r != 4))
        return err_set(c->err, AIT_E_SHAPE, "X must have rank %s, not %d",
                       c->n->version < 20 ? "4" : ">= 3", r);
    a->k = r - 2;
    for (int i = 2; i < r; i++)
        if (x->dims[i] < 1) return err_set(c->err, AIT_E_SHAPE, "X has an empty spatial axis");
    if (g->rank != r || g->dims[0] != x->dims[0] || g->dims[r - 1] != a->k)
        return err_set(c->err, AIT_E_SHAPE, "grid must be [N, ..., %d] of rank %d with N = %lld",
                       a->k, r, (long long)x->dims[0]);
    /* opset 16 spells the modes bilinear / bicubic, opset 20 linear / cubic;
     * both spellings are accepted */
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear", "bicubic"};
    const char *m = attr_str(c->n, "mode", c->n->version < 20 ? "bilinear" : "linear");
    int mi = pick(m, modes, 5);
    if (mi < 0) return err_set(c->err, AIT_E_UNSUPPORTED, "unsupported mode '%s'", m);
    a->mode = mi == 3 ? GS_LINEAR : mi == 4 ? GS_CUBIC : mi;
    static const char *const pads[] = {"zeros", "border", "reflection"};
    const char *p = attr_str(c->n, "padding_mode", "zeros");
    if ((a->pad = pick(p, pads, 3)) < 0)
        return err_set(c->err, AIT_E_UNSUPPORTED, "unsupported padding_mode '%s'", p);
    a->align = attr_int(c->n, "align_corners", 0) != 0;
    int taps = a->mode == GS_NEAREST ? 1 : 1 << ((a->mode == GS_CUBIC ? 2 : 1) * a->k);
    if (a->k > 6 || taps > GS_MAX_TAPS)
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s sampling in %d dimensions", m, a->k);
    return AIT_OK;
}

static ait_status gs_infer(op_ctx *c)
{
    gs_args a;
    TRY(gs_params(c, &a));
    const tensor *x = c->in[0], *g = c->in[1];
    int64_t d[AIT_MAX_RANK] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < a.k; i++) d[2 + i] = g->dims[1 + i];
    set_out(c, 0, x->dtype, x->rank, d);
    return AIT_OK;
}

/* Folds x into [lo, hi] by mirroring at the borders. */
static double reflect(double x, double lo, double hi)
{
    double rng = hi - lo;
    if (!(rng > 0)) return lo;
    if (x >= lo && x <= hi) return x;
    double dx = x < lo ? lo - x : x - hi;
    double n = floor(dx / rng), r = dx - n * rng;
    bool even = fmod(n, 2.0) == 0;
    if (x < lo) return even ? lo + r : hi - r;
    return even ? hi - r : lo + r;
}

static void cubic_coeffs(double t, double *w)
{
    const double A = -0.75;
    double x = t + 1;
    w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    x = 1 - t;
    w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x = 2 - t;
    w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

/* Taps along one axis of length d for normalised coordinate gv: element
 * indices and weights (weight 0 for zero padding). Returns the tap count. */
static int gs_axis_taps(const gs_args *a, double gv, int64_t d, bool f32, int64_t *idx, double *w)
{
    double x = a->align ? (gv + 1) / 2 * (double)(d - 1) : ((gv + 1) * (double)d - 1) / 2;
    if (f32) x = (float)x; /* the reference computes coordinates in float32 */
    double lo = a->align ? 0 : -0.5, hi = a->align ? (double)(d - 1) : (double)d - 0.5;
    int n = a->mode == GS_NEAREST ? 1 : a->mode == GS_LINEAR ? 2 : 4;
    if (a->mode == GS_NEAREST) /* PyTorch: nearbyint in 2-D, round half away in 3-D */
        x = a->k == 3 ? round(x) : nearbyint(x);
    if (!isfinite(x)) { /* no meaningful sample: contributes zero */
        for (int i = 0; i < n; i++) idx[i] = 0, w[i] = 0;
        return n;
    }
    if (x < lo || x > hi) {
        if (a->pad == PAD_BORDER) x = fmin(fmax(x, 0), (double)(d - 1));
        else if (a->pad == PAD_REFLECTION) x = reflect(x, lo, hi);
        else if (x < lo - 4 || x > hi + 4) { /* no tap reaches the input */
            for (int i = 0; i < n; i++) idx[i] = 0, w[i] = 0;
            return n;
        }
    }
    double x0 = floor(x), t = x - x0;
    int64_t first = (int64_t)x0;
    if (a->mode == GS_NEAREST) w[0] = 1;
    else if (a->mode == GS_LINEAR) w[0] = 1 - t, w[1] = t;
    else {
        cubic_coeffs(t, w);
        first -= 1;
    }
    for (int i = 0; i < n; i++) {
        int64_t j = first + i;
        if (j < 0 || j >= d) {
            if (a->pad == PAD_ZEROS) j = 0, w[i] = 0;
            else if (a->pad == PAD_BORDER) j = j < 0 ? 0 : d - 1;
            else j = (int64_t)reflect((double)j, lo, hi);
            if (j < 0) j = 0; /* float rounding at the borders */
            if (j >= d) j = d - 1;
        }
        idx[i] = j;
    }
    return n;
}

#define GS_GATHER(name, T)                                                                   \
    static void name(const T *x, int64_t xcs, T *y, int64_t ycs, int64_t C,                 \
                     const int64_t *off, const double *w, int nt)                           \
    {                                                                                        \
        for (int64_t ch = 0; ch < C; ch++) {                                                 \
            const T *xc = x + ch * xcs;                                                      \
            double acc = 0;                                                                  \
            for (int t = 0; t < nt; t++) acc += w[t] * (double)xc[off[t]];                  \
            y[ch * ycs] = (T)acc;                                                            \
        }                                                                                    \
    }
GS_GATHER(gs_gather_f32, float)
GS_GATHER(gs_gather_f64, double)

static ait_status gs_run(op_ctx *c)
{
    gs_args a;
    TRY(gs_params(c, &a));
    const tensor *x = c->in[0], *g = c->in[1];
    tensor *y = c->out[0];
    if (tensor_numel(y) == 0) return AIT_OK;
    ait_dtype wt = work_dtype(x->dtype);
    size_t bytes[2] = {work_bytes(x, wt), work_bytes(y, wt)};
    void *p[2];
    TRY(op_scratch_parts(c, 2, bytes, p));
    const void *xd;
    TRY(work_in(c, x, wt, p[0], &xd));
    void *yd = work_out(y, wt, p[1]);
    int k = a.k;
    int64_t N = x->dims[0], C = x->dims[1], in_sp = 1, out_sp = 1, xstr[AIT_MAX_RANK];
    for (int i = 0; i < k; i++) in_sp *= x->dims[2 + i], out_sp *= g->dims[1 + i];
    row_strides(x->dims + 2, k, xstr);
    bool f32 = g->dtype != AIT_F64;
    int64_t idx[AIT_MAX_RANK][4], off[GS_MAX_TAPS];
    double w[AIT_MAX_RANK][4], wt_all[GS_MAX_TAPS];
    int nt[AIT_MAX_RANK];
    for (int64_t n = 0; n < N; n++) {
        for (int64_t p = 0; p < out_sp; p++) {
            int64_t gb = (n * out_sp + p) * k;
            /* grid holds (x, y, z...): its last component indexes the first spatial axis */
            for (int i = 0; i < k; i++)
                nt[i] = gs_axis_taps(&a, elem_get_f64(g->data, g->dtype, gb + k - 1 - i), x->dims[2 + i],
                                     f32, idx[i], w[i]);
            /* the product of the per-axis taps */
            int total = 1, cnt[AIT_MAX_RANK] = {0};
            for (int i = 0; i < k; i++) total *= nt[i];
            for (int t = 0; t < total; t++) {
                int64_t o = 0;
                double ww = 1;
                for (int i = 0; i < k; i++) o += idx[i][cnt[i]] * xstr[i], ww *= w[i][cnt[i]];
                off[t] = o, wt_all[t] = ww;
                for (int i = k - 1; i >= 0; i--) {
                    if (++cnt[i] < nt[i]) break;
                    cnt[i] = 0;
                }
            }
            int64_t xo = n * C * in_sp, yo = n * C * out_sp + p;
            if (wt == AIT_F32)
                gs_gather_f32((const float *)xd + xo, in_sp, (float *)yd + yo, out_sp, C, off,
                              wt_all, total);
            else
                gs_gather_f64((const double *)xd + xo, in_sp, (double *)yd + yo, out_sp, C, off,
                              wt_all, total);
        }
    }
    return work_done(c, y, yd, wt);
}

/* ---- AffineGrid ----------------------------------------------------------- */

/* The grid of theta (N, k, k+1) applied to the homogeneous positions
 * (x, y[, z], 1) of an evenly spaced grid over [-1, 1] of size (N, C, [D,]
 * H, W); x runs along the last axis. Computed in double. */
static ait_status ag_params(op_ctx *c, int64_t *size, int *k)
{
    TRY(need_in(c, 0, "theta"));
    TRY(need_in(c, 1, "size"));
    const tensor *th = c->in[0], *sz = c->in[1];
    TRY(check_float(c, th, "theta"));
    if (sz->dtype != AIT_I64)
        return err_set(c->err, AIT_E_DTYPE, "size must be int64, not %s",
                       ait_dtype_name(sz->dtype));
    if (sz->rank != 1 || (sz->dims[0] != 4 && sz->dims[0] != 5))
        return err_set(c->err, AIT_E_SHAPE, "size must hold 4 values (N, C, H, W) or 5 (N, C, D, "
                       "H, W)");
    int n;
    TRY(in_ints(c, 1, size, 5, &n));
    *k = n - 2;
    if (th->rank != 3 || th->dims[1] != *k || th->dims[2] != *k + 1)
        return err_set(c->err, AIT_E_SHAPE, "theta must be (N, %d, %d) for a %dD size", *k, *k + 1,
                       *k);
    if (th->dims[0] != size[0])
        return err_set(c->err, AIT_E_SHAPE, "theta has %lld matrices but size says N = %lld",
                       (long long)th->dims[0], (long long)size[0]);
    for (int i = 2; i < n; i++)
        if (size[i] < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "size[%d] = %lld is negative", i,
                           (long long)size[i]);
    return AIT_OK;
}

static ait_status ag_infer(op_ctx *c)
{
    int64_t size[5], d[5];
    int k;
    TRY(ag_params(c, size, &k));
    d[0] = size[0];
    for (int i = 0; i < k; i++) d[1 + i] = size[2 + i];
    d[k + 1] = k;
    set_out(c, 0, c->in[0]->dtype, k + 2, d);
    return AIT_OK;
}

/* Position i of n along one axis: the pixel centres (align_corners=0) or
 * corners (1) over [-1, 1]; a single corner-aligned pixel sits at -1. */
static double ag_pos(int64_t i, int64_t n, bool align)
{
    if (align) return n > 1 ? -1 + 2.0 * (double)i / (double)(n - 1) : -1;
    return -1 + (2.0 * (double)i + 1) / (double)n;
}

static ait_status ag_run(op_ctx *c)
{
    int64_t size[5];
    int k;
    TRY(ag_params(c, size, &k));
    const tensor *th = c->in[0];
    tensor *y = c->out[0];
    bool align = attr_int(c->n, "align_corners", 0) != 0;
    int64_t sp[3] = {1, 1, 1}, pts; /* (D,) H, W */
    for (int i = 0; i < k; i++) sp[3 - k + i] = size[2 + i];
    pts = sp[0] * sp[1] * sp[2];
    for (int64_t n = 0; n < size[0]; n++) {
        double m[12];
        for (int i = 0; i < k * (k + 1); i++)
            m[i] = elem_get_f64(th->data, th->dtype, n * k * (k + 1) + i);
        for (int64_t p = 0; p < pts; p++) {
            /* homogeneous position (x, y[, z], 1): x along W, y along H, z along D */
            double v[4] = {ag_pos(p % sp[2], sp[2], align), ag_pos(p / sp[2] % sp[1], sp[1], align),
                           ag_pos(p / (sp[1] * sp[2]), sp[0], align), 0};
            v[k] = 1;
            for (int r = 0; r < k; r++) {
                double acc = 0;
                for (int j = 0; j <= k; j++) acc += m[r * (k + 1) + j] * v[j];
                elem_set_f64(y->data, y->dtype, (n * pts + p) * k + r, acc);
            }
        }
    }
    return AIT_OK;
}

/* ---- RoiAlign ----------------------------------------------------------- */

typedef struct ra_args {
    int64_t oh, ow, ratio;
    double scale;
    bool max, half_pixel;
} ra_args;

static ait_status ra_params(op_ctx *c, ra_args *a)
{
    TRY(need_in(c, 0, "X"));
    TRY(need_in(c, 1, "rois"));
    TRY(need_in(c, 2, "batch_indices"));
    const tensor *x = c->in[0], *rois = c->in[1], *bi = c->in[2];
    TRY(check_float(c, x, "X"));
    TRY(check_float(c, rois, "rois"));
    if (!dtype_is_int(bi->dtype))
        return err_set(c->err, AIT_E_DTYPE, "batch_indices must be integers, not %s",
                       ait_dtype_name(bi->dtype));
    if (x->rank != 4 || x->dims[2] < 1 || x->dims[3] < 1)
        return err_set(c->err, AIT_E_SHAPE, "X must be [N, C, H, W] with H, W >= 1");
    if (rois->rank != 2 || rois->dims[1] != 4)
        return err_set(c->err, AIT_E_SHAPE, "rois must be [num_rois, 4]");
    if (bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return err_set(c->err, AIT_E_SHAPE, "batch_indices must be [num_rois]");
    static const char *const modes[] = {"avg", "max"};
    const char *m = attr_str(c->n, "mode", "avg");
    int mi = pick(m, modes, 2);
    if (mi < 0) return err_set(c->err, AIT_E_UNSUPPORTED, "unsupported mode '%s'", m);
    a->max = mi == 1;
    /* opset 10 has no coordinate_transformation_mode and behaves as
     * output_half_pixel; 16 defaults to half_pixel */
    a->half_pixel = false;
    if (c->n->version >= 16) {
        static const char *const ctms[] = {"output_half_pixel", "half_pixel"};
        const char *s = attr_str(c->n, "coordinate_transformation_mode", "half_pixel");
        int ci = pick(s, ctms, 2);
        if (ci < 0)
            return err_set(c->err, AIT_E_UNSUPPORTED,
                           "unsupported coordinate_transformation_mode '%s'", s);
        a->half_pixel = ci == 1;
    }
    a->oh = attr_int(c->n, "output_height", 1);
    a->ow = attr_int(c->n, "output_width", 1);
    a->ratio = attr_int(c->n, "sampling_ratio", 0);
    a->scale = attr_float(c->n, "spatial_scale", 1.0f);
    if (a->oh < 1 || a->ow < 1 || a->oh > (1 << 24) || a->ow > (1 << 24))
        return err_set(c->err, AIT_E_INVALID_ARG, "output_height and output_width must be positive");
    if (a->ratio < 0 || a->ratio > 1024)
        return err_set(c->err, AIT_E_INVALID_ARG, "sampling_ratio %lld is out of range",
                       (long long)a->ratio);
    return AIT_OK;
}

static ait_status ra_infer(op_ctx *c)
{
    ra_args a;
    TRY(ra_params(c, &a));
    int64_t d[4] = {c->in[1]->dims[0], c->in[0]->dims[1], a.oh, a.ow};
    set_out(c, 0, c->in[0]->dtype, 4, d);
    return AIT_OK;
}

/* One bilinear sample: four element offsets and weights. */
typedef struct ra_tap {
    int64_t pos[4];
    double w[4];
} ra_tap;

typedef struct ra_roi {
    double y0, x0, bh, bw; /* start and bin size */
    int64_t gh, gw;        /* samples per bin */
} ra_roi;

static ait_status ra_roi_geom(op_ctx *c, const ra_args *a, int64_t r, ra_roi *g)
{
    const tensor *rois = c->in[1];
    double off = a->half_pixel ? 0.5 : 0.0, b[4];
    for (int i = 0; i < 4; i++) b[i] = elem_get_f64(rois->data, rois->dtype, r * 4 + i) * a->scale - off;
    double rw = b[2] - b[0], rh = b[3] - b[1];
    if (!a->half_pixel) rw = fmax(rw, 1.0), rh = fmax(rh, 1.0); /* malformed ROIs become 1x1 */
    if (!isfinite(rw) || !isfinite(rh) || !isfinite(b[0]) || !isfinite(b[1]))
        return err_set(c->err, AIT_E_INVALID_ARG, "roi %lld is not finite", (long long)r);
    g->x0 = b[0], g->y0 = b[1];
    g->bh = rh / (double)a->oh, g->bw = rw / (double)a->ow;
    double gh = a->ratio > 0 ? (double)a->ratio : ceil(rh / (double)a->oh);
    double gw = a->ratio > 0 ? (double)a->ratio : ceil(rw / (double)a->ow);
    if (gh > 65536 || gw > 65536)
        return err_set(c->err, AIT_E_INVALID_ARG, "roi %lld is too large to sample", (long long)r);
    g->gh = gh > 0 ? (int64_t)gh : 0, g->gw = gw > 0 ? (int64_t)gw : 0;
    return AIT_OK;
}

static void ra_taps(const ra_args *a, const ra_roi *g, int64_t H, int64_t W, ra_tap *taps)
{
    ra_tap *t = taps;
    for (int64_t ph = 0; ph < a->oh; ph++)
        for (int64_t pw = 0; pw < a->ow; pw++)
            for (int64_t iy = 0; iy < g->gh; iy++) {
                double y = g->y0 + (double)ph * g->bh + ((double)iy + 0.5) * g->bh / (double)g->gh;
                for (int64_t ix = 0; ix < g->gw; ix++, t++) {
                    double x =
                        g->x0 + (double)pw * g->bw + ((double)ix + 0.5) * g->bw / (double)g->gw;
                    memset(t, 0, sizeof *t);
                    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) continue;
                    y = fmax(y, 0), x = fmax(x, 0);
                    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
                    if (yl >= H - 1) yh = yl = H - 1, y = (double)yl;
                    else yh = yl + 1;
                    if (xl >= W - 1) xh = xl = W - 1, x = (double)xl;
                    else xh = xl + 1;
                    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
                    t->pos[0] = yl * W + xl, t->pos[1] = yl * W + xh;
                    t->pos[2] = yh * W + xl, t->pos[3] = yh * W + xh;
                    t->w[0] = hy * hx, t->w[1] = hy * lx, t->w[2] = ly * hx, t->w[3] = ly * lx;
                }
            }
}

#define RA_POOL(name, T)                                                                     \
    static void name(const T *x, T *y, int64_t bins, int64_t per_bin, const ra_tap *taps,   \
                     bool max)                                                               \
    {                                                                                        \
        for (int64_t b = 0; b < bins; b++) {                                                 \
            const ra_tap *t = taps + b * per_bin;                                            \
            double acc = 0;                                                                  \
            for (int64_t s = 0; s < per_bin; s++) {                                          \
                double v0 = t[s].w[0] * (double)x[t[s].pos[0]],                              \
                       v1 = t[s].w[1] * (double)x[t[s].pos[1]],                              \
                       v2 = t[s].w[2] * (double)x[t[s].pos[2]],                              \
                       v3 = t[s].w[3] * (double)x[t[s].pos[3]];                              \
                if (!max) acc += v0 + v1 + v2 + v3;                                          \
                else {                                                                       \
                    double v = fmax(fmax(v0, v1), fmax(v2, v3));                             \
                    acc = s == 0 ? v : fmax(acc, v);                                         \
                }                                                                            \
            }                                                                                \
            if (!max) acc /= (double)(per_bin > 1 ? per_bin : 1);                            \
            y[b] = (T)acc;                                                                   \
        }                                                                                    \
    }
RA_POOL(ra_pool_f32, float)
RA_POOL(ra_pool_f64, double)

static ait_status ra_run(op_ctx *c)
{
    ra_args a;
    TRY(ra_params(c, &a));
    const tensor *x = c->in[0], *bi = c->in[2];
    tensor *y = c->out[0];
    int64_t R = c->in[1]->dims[0], N = x->dims[0], C = x->dims[1], H = x->dims[2],
            W = x->dims[3], bins = a.oh * a.ow;
    if (tensor_numel(y) == 0) return AIT_OK;
    /* the largest tap table any ROI needs */
    int64_t most = 1;
    for (int64_t r = 0; r < R; r++) {
        ra_roi g;
        TRY(ra_roi_geom(c, &a, r, &g));
        int64_t b = elem_get_i64(bi->data, bi->dtype, r);
        if (b < 0 || b >= N)
            return err_set(c->err, AIT_E_INVALID_ARG, "batch index %lld of roi %lld is out of [0, %lld)",
                           (long long)b, (long long)r, (long long)N);
        if (g.gh * g.gw > most) most = g.gh * g.gw;
    }
    if (bins > (INT64_C(1) << 40) / most)
        return err_set(c->err, AIT_E_OVERFLOW, "RoiAlign sampling table is too large");
    ait_dtype wt = work_dtype(x->dtype);
    size_t bytes[3] = {work_bytes(x, wt), work_bytes(y, wt), (size_t)(bins * most) * sizeof(ra_tap)};
    void *p[3];
    TRY(op_scratch_parts(c, 3, bytes, p));
    const void *xd;
    TRY(work_in(c, x, wt, p[0], &xd));
    void *yd = work_out(y, wt, p[1]);
    ra_tap *taps = p[2];
    for (int64_t r = 0; r < R; r++) {
        ra_roi g;
        TRY(ra_roi_geom(c, &a, r, &g));
        int64_t b = elem_get_i64(bi->data, bi->dtype, r), per_bin = g.gh * g.gw;
        ra_taps(&a, &g, H, W, taps);
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t xo = (b * C + ch) * H * W, yo = (r * C + ch) * bins;
            if (wt == AIT_F32)
                ra_pool_f32((const float *)xd + xo, (float *)yd + yo, bins, per_bin, taps, a.max);
            else
                ra_pool_f64((const double *)xd + xo, (double *)yd + yo, bins, per_bin, taps, a.max);
        }
    }
    return work_done(c, y, yd, wt);
}

/* ---- MaxRoiPool ------------------------------------------------------------ */

/* Fast R-CNN's ROI pooling: the ROI [batch, x1, y1, x2, y2] is scaled and
 * rounded to whole pixels (at least 1x1), cut into pooled_shape bins
 * (floor of each start, ceil of each end) clipped to the image, and each
 * bin's max taken; an empty bin gives 0. */
static ait_status mrp_params(op_ctx *c, int64_t *ph, int64_t *pw)
{
    TRY(need_in(c, 0, "X"));
    TRY(need_in(c, 1, "rois"));
    const tensor *x = c->in[0], *r = c->in[1];
    TRY(check_float(c, x, "X"));
    TRY(check_float(c, r, "rois"));
    if (x->rank != 4)
        return err_set(c->err, AIT_E_SHAPE, "X must be [N, C, H, W], not rank %d", x->rank);
    if (r->rank != 2 || r->dims[1] != 5)
        return err_set(c->err, AIT_E_SHAPE,
                       "rois must be [num_rois, 5] ([batch_id, x1, y1, x2, y2])");
    int n;
    const int64_t *ps = attr_ints(c->n, "pooled_shape", &n);
    if (!ps || n != 2 || ps[0] < 1 || ps[1] < 1 || ps[0] > INT32_MAX || ps[1] > INT32_MAX)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "pooled_shape must be two positive ints (height, width)");
    *ph = ps[0], *pw = ps[1];
    return AIT_OK;
}

static ait_status mrp_infer(op_ctx *c)
{
    int64_t ph, pw;
    TRY(mrp_params(c, &ph, &pw));
    int64_t d[4] = {c->in[1]->dims[0], c->in[0]->dims[1], ph, pw};
    set_out(c, 0, c->in[0]->dtype, 4, d);
    return AIT_OK;
}

/* Start and end (clipped to [0, n)) of bin i of `bins` over a span of
 * `len` pixels from `from`. */
static void mrp_bin(int64_t i, int64_t bins, int64_t len, int64_t from, int64_t n, int64_t *s,
                    int64_t *e)
{
    double size = (double)len / (double)bins;
    int64_t a = (int64_t)floor((double)i * size) + from;
    int64_t b = (int64_t)ceil((double)(i + 1) * size) + from;
    *s = a < 0 ? 0 : a > n ? n : a;
    *e = b < 0 ? 0 : b > n ? n : b;
}

static ait_status mrp_run(op_ctx *c)
{
    int64_t ph, pw;
    TRY(mrp_params(c, &ph, &pw));
    const tensor *x = c->in[0], *r = c->in[1];
    tensor *y = c->out[0];
    int64_t R = r->dims[0], N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    double scale = attr_float(c->n, "spatial_scale", 1.0f);
    for (int64_t k = 0; k < R; k++) {
        double v[5];
        for (int i = 0; i < 5; i++) v[i] = elem_get_f64(r->data, r->dtype, k * 5 + i);
        for (int i = 1; i < 5; i++) {
            v[i] = round(v[i] * scale);
            if (!(fabs(v[i]) < 1e9))
                return err_set(c->err, AIT_E_INVALID_ARG, "roi %lld has a coordinate out of range",
                               (long long)k);
        }
        if (!(v[0] >= 0 && v[0] < (double)N))
            return err_set(c->err, AIT_E_INVALID_ARG, "batch_id %g of roi %lld is out of [0, %lld)",
                           v[0], (long long)k, (long long)N);
        int64_t b = (int64_t)v[0], x1 = (int64_t)v[1], y1 = (int64_t)v[2];
        int64_t rw = (int64_t)v[3] - x1 + 1, rh = (int64_t)v[4] - y1 + 1;
        if (rw < 1) rw = 1;
        if (rh < 1) rh = 1;
        for (int64_t i = 0; i < ph; i++) {
            int64_t hs, he;
            mrp_bin(i, ph, rh, y1, H, &hs, &he);
            for (int64_t j = 0; j < pw; j++) {
                int64_t ws, we;
                mrp_bin(j, pw, rw, x1, W, &ws, &we);
                for (int64_t ch = 0; ch < C; ch++) {
                    double m = 0;
                    const int64_t base = (b * C + ch) * H * W;
                    for (int64_t h = hs; h < he; h++)
                        for (int64_t w = ws; w < we; w++) {
                            double e = elem_get_f64(x->data, x->dtype, base + h * W + w);
                            if ((h == hs && w == ws) || e > m) m = e;
                        }
                    elem_set_f64(y->data, y->dtype, ((k * C + ch) * ph + i) * pw + j, m);
                }
            }
        }
    }
    return AIT_OK;
}

/* ---- NonMaxSuppression -------------------------------------------------- */

/* The selection is computed in infer (the output's length depends on it)
 * and kept in the node's scratch for run, which the executor calls right
 * after infer. Scratch layout: count, then the selected triples, then the
 * work arrays. */
typedef struct nms_args {
    int64_t B, C, N, max_out;
    double iou, score;
    bool has_score, center;
} nms_args;

typedef struct nms_cand {
    double score;
    int64_t idx;
} nms_cand;

static ait_status nms_params(op_ctx *c, nms_args *a, bool *deferred)
{
    TRY(need_in(c, 0, "boxes"));
    TRY(need_in(c, 1, "scores"));
    const tensor *bx = c->in[0], *sc = c->in[1];
    TRY(check_float(c, bx, "boxes"));
    TRY(check_float(c, sc, "scores"));
    if (bx->rank != 3 || bx->dims[2] != 4)
        return err_set(c->err, AIT_E_SHAPE, "boxes must be [num_batches, spatial_dimension, 4]");
    if (sc->rank != 3 || sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1])
        return err_set(c->err, AIT_E_SHAPE,
                       "scores must be [num_batches, num_classes, spatial_dimension]");
    int64_t cpb = attr_int(c->n, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "center_point_box must be 0 or 1");
    a->center = cpb == 1;
    a->B = bx->dims[0], a->C = sc->dims[1], a->N = bx->dims[1];
    a->max_out = 0, a->iou = 0, a->score = 0, a->has_score = false;
    *deferred = false;
    /* optional scalars; an empty tensor counts as absent */
    for (int i = 2; i < 5; i++) {
        if (!has_in(c, i) || tensor_numel(c->in[i]) == 0) continue;
        const tensor *t = c->in[i];
        if (tensor_numel(t) != 1)
            return err_set(c->err, AIT_E_SHAPE, "input %d must hold one value", i);
        if (i == 2 ? !dtype_is_int(t->dtype) : !dtype_is_float(t->dtype))
            return err_set(c->err, AIT_E_DTYPE, "input %d has unsupported dtype %s", i,
                           ait_dtype_name(t->dtype));
        if (!t->data) {
            *deferred = true;
            continue;
        }
        if (i == 2) a->max_out = elem_get_i64(t->data, t->dtype, 0);
        else if (i == 3) a->iou = elem_get_f64(t->data, t->dtype, 0);
        else a->score = elem_get_f64(t->data, t->dtype, 0), a->has_score = true;
    }
    if (!*deferred && !(a->iou >= 0 && a->iou <= 1))
        return err_set(c->err, AIT_E_INVALID_ARG, "iou_threshold %g must be in [0, 1]", a->iou);
    if (a->max_out < 0) a->max_out = 0;
    return AIT_OK;
}

/* The scratch layout (the same in infer and run, which reads what infer
 * left): count, selected triples, candidates, kept, box geometry. */
enum { NMS_PARTS = 5 };
static ait_status nms_scratch(op_ctx *c, const nms_args *a, int64_t per, void **p)
{
    size_t bytes[NMS_PARTS] = {sizeof(int64_t), (size_t)(a->B * a->C * per) * 3 * sizeof(int64_t),
                               (size_t)a->N * sizeof(nms_cand), (size_t)per * sizeof(int64_t),
                               (size_t)a->N * 5 * sizeof(double)};
    return op_scratch_parts(c, NMS_PARTS, bytes, p);
}

static int cand_cmp(const void *pa, const void *pb)
{
    const nms_cand *a = pa, *b = pb;
    bool an = isnan(a->score), bn = isnan(b->score);
    if (an != bn) return an ? 1 : -1; /* NaN scores last */
    if (!an && a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* True when boxes i and j (rows of [x1, x2, y1, y2, area]) overlap by more
 * than the threshold. */
static bool nms_suppress(const double *bi, const double *bj, double thr)
{
    double ix1 = fmax(bi[0], bj[0]), ix2 = fmin(bi[1], bj[1]);
    if (!(ix2 > ix1)) return false;
    double iy1 = fmax(bi[2], bj[2]), iy2 = fmin(bi[3], bj[3]);
    if (!(iy2 > iy1)) return false;
    double inter = (ix2 - ix1) * (iy2 - iy1), uni = bi[4] + bj[4] - inter;
    if (!(inter > 0) || !(bi[4] > 0) || !(bj[4] > 0) || !(uni > 0)) return false;
    return inter / uni > thr;
}

static ait_status nms_infer(op_ctx *c)
{
    nms_args a;
    bool deferred;
    TRY(nms_params(c, &a, &deferred));
    int64_t shape[2] = {0, 3};
    bool none = !has_in(c, 2) || tensor_numel(c->in[2]) == 0; /* no boxes kept */
    if (!none && (deferred || !c->in[0]->data || !c->in[1]->data)) return AIT_DEFER;
    if (none || a.max_out == 0 || a.N == 0 || a.B * a.C == 0) {
        set_out(c, 0, AIT_I64, 2, shape);
        return AIT_OK;
    }
    int64_t per = a.max_out < a.N ? a.max_out : a.N;
    void *p[NMS_PARTS];
    TRY(nms_scratch(c, &a, per, p));
    int64_t *count = p[0], *sel = p[1], *kept = p[3];
    nms_cand *cand = p[2];
    double *geo = p[4];
    const tensor *bx = c->in[0], *sc = c->in[1];
    int64_t total = 0;
    for (int64_t b = 0; b < a.B; b++) {
        for (int64_t i = 0; i < a.N; i++) {
            double v[4], *g = geo + i * 5;
            for (int j = 0; j < 4; j++) v[j] = elem_get_f64(bx->data, bx->dtype, (b * a.N + i) * 4 + j);
            if (a.center) { /* [x_center, y_center, width, height] */
                g[0] = v[0] - v[2] / 2, g[1] = v[0] + v[2] / 2;
                g[2] = v[1] - v[3] / 2, g[3] = v[1] + v[3] / 2;
            } else { /* [y1, x1, y2, x2], corners in either order */
                g[0] = fmin(v[1], v[3]), g[1] = fmax(v[1], v[3]);
                g[2] = fmin(v[0], v[2]), g[3] = fmax(v[0], v[2]);
            }
            g[4] = (g[1] - g[0]) * (g[3] - g[2]);
        }
        for (int64_t cl = 0; cl < a.C; cl++) {
            int64_t nc = 0, nk = 0, sb = (b * a.C + cl) * a.N;
            for (int64_t i = 0; i < a.N; i++) {
                double s = elem_get_f64(sc->data, sc->dtype, sb + i);
                if (!a.has_score || s > a.score) cand[nc].score = s, cand[nc++].idx = i;
            }
            qsort(cand, (size_t)nc, sizeof *cand, cand_cmp);
            for (int64_t i = 0; i < nc && nk < per; i++) {
                const double *gi = geo + cand[i].idx * 5;
                bool keep = true;
                for (int64_t j = 0; j < nk && keep; j++)
                    keep = !nms_suppress(gi, geo + kept[j] * 5, a.iou);
                if (!keep) continue;
                kept[nk++] = cand[i].idx;
                sel[total * 3] = b, sel[total * 3 + 1] = cl, sel[total * 3 + 2] = cand[i].idx;
                total++;
            }
        }
    }
    *count = total;
    shape[0] = total;
    set_out(c, 0, AIT_I64, 2, shape);
    return AIT_OK;
}

static ait_status nms_run(op_ctx *c)
{
    tensor *y = c->out[0];
    int64_t n = y->dims[0];
    if (n == 0) return AIT_OK;
    nms_args a;
    bool deferred;
    TRY(nms_params(c, &a, &deferred));
    int64_t per = a.max_out < a.N ? a.max_out : a.N;
    void *p[NMS_PARTS];
    TRY(nms_scratch(c, &a, per, p)); /* the block infer filled */
    const int64_t *count = p[0], *sel = p[1];
    if (*count != n)
        return err_set(c->err, AIT_E_INTERNAL, "output was sized for a different selection");
    memcpy(y->data, sel, (size_t)n * 3 * sizeof(int64_t));
    return AIT_OK;
}

/* Designated initializers: op_def fields not named here stay zero. */

OP_TABLE(vision,
         OP_DEF("AffineGrid", 2, 2, 1, 1, ag_infer, ag_run),
         OP_DEF("GridSample", 2, 2, 1, 1, gs_infer, gs_run),
         OP_DEF("RoiAlign", 3, 3, 1, 1, ra_infer, ra_run),
         OP_DEF("MaxRoiPool", 2, 2, 1, 1, mrp_infer, mrp_run),
         OP_DEF("NonMaxSuppression", 2, 5, 1, 1, nms_infer, nms_run));
