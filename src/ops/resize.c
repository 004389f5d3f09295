/* Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
 *
 * Every resized axis gets a table: for each output coordinate, the input
 * indices and weights that make it (one tap for nearest, two for linear,
 * four for cubic, more with antialias), or a mark that it lies outside the
 * crop (tf_crop_and_resize: extrapolation_value). Nearest gathers elements
 * of any dtype directly. Linear and cubic are separable: one pass per
 * resized axis over a [outer, in, inner] view, in float (double for float64
 * and wide integers), so bilinear, trilinear and N-linear are the same code.
 *
 * Coordinates follow the ONNX reference: the "output length" in
 * align_corners and tf_crop_and_resize is scale * input length, which is not
 * an integer when scales are given. Integer outputs of linear/cubic are
 * rounded to nearest and saturated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/op.h"

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { C_HALF_PIXEL, C_HALF_PIXEL_SYM, C_PYTORCH, C_ALIGN, C_ASYMMETRIC, C_TF_CROP, C_TF_NN };
enum { N_ROUND_FLOOR, N_ROUND_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };
enum { K_STRETCH, K_NOT_LARGER, K_NOT_SMALLER };

typedef struct rz_attrs {
    int mode, coord, nearest, keep;
    double cubic_a, extrap;
    bool exclude, antialias, upsample;
    int naxes;               /* axes that scales/sizes/roi describe */
    int axes[AIT_MAX_RANK];
    int scales_in, sizes_in, roi_in; /* input indices (-1: none) */
} rz_attrs;

typedef struct rz_geom {
    int rank;
    int64_t in[AIT_MAX_RANK], out[AIT_MAX_RANK];
    double scale[AIT_MAX_RANK]; /* output / input, as the coordinates use it */
    double outf[AIT_MAX_RANK];  /* scale * input length (not always whole) */
} rz_geom;

static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static ait_status bad_attr(op_ctx *c, const char *name, const char *v)
{
    return err_set(c->err, AIT_E_UNSUPPORTED, "unsupported %s '%s'", name, v);
}

static ait_status parse_attrs(op_ctx *c, int rank, rz_attrs *a)
{
    const node *n = c->n;
    memset(a, 0, sizeof *a);
    a->upsample = strcmp(n->op, "Upsample") == 0;
    const char *mode = attr_str(n, "mode", "nearest");
    if (strcmp(mode, "bilinear") == 0 || strcmp(mode, "trilinear") == 0) mode = "linear";
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    if ((a->mode = pick(mode, modes, 3)) < 0) return bad_attr(c, "mode", mode);
    a->roi_in = a->sizes_in = -1;
    a->naxes = rank;
    for (int i = 0; i < rank; i++) a->axes[i] = i;
    if (a->upsample || c->n->version < 11) {
        /* Upsample and Resize-10: (X, scales), asymmetric coordinates and
         * the nearest rounding of those versions (floor, ceil when
         * shrinking), as onnxruntime does. Upsample-7 has scales as an
         * attribute. */
        a->coord = C_ASYMMETRIC;
        a->nearest = N_SIMPLE;
        a->cubic_a = -0.75;
        a->scales_in = node_attr(n, "scales") ? -1 : 1;
        return AIT_OK;
    }
    a->roi_in = 1, a->scales_in = 2, a->sizes_in = 3;
    static const char *const coords[] = {"half_pixel",    "half_pixel_symmetric",
                                         "pytorch_half_pixel", "align_corners",
                                         "asymmetric",    "tf_crop_and_resize",
                                         "tf_half_pixel_for_nn"}; /* opset 11 only */
    const char *s = attr_str(n, "coordinate_transformation_mode", "half_pixel");
    if ((a->coord = pick(s, coords, 7)) < 0)
        return bad_attr(c, "coordinate_transformation_mode", s);
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};
    s = attr_str(n, "nearest_mode", "round_prefer_floor");
    if ((a->nearest = pick(s, nearests, 4)) < 0) return bad_attr(c, "nearest_mode", s);
    static const char *const keeps[] = {"stretch", "not_larger", "not_smaller"};
    s = attr_str(n, "keep_aspect_ratio_policy", "stretch");
    if ((a->keep = pick(s, keeps, 3)) < 0) return bad_attr(c, "keep_aspect_ratio_policy", s);
    a->cubic_a = attr_float(n, "cubic_coeff_a", -0.75f);
    a->extrap = attr_float(n, "extrapolation_value", 0.0f);
    a->exclude = attr_int(n, "exclude_outside", 0) != 0;
    a->antialias = attr_int(n, "antialias", 0) != 0;
    int na = 0;
    const int64_t *ax = attr_ints(n, "axes", &na);
    if (ax) {
        if (na > rank) return err_set(c->err, AIT_E_INVALID_ARG, "%d axes for rank %d", na, rank);
        bool seen[AIT_MAX_RANK] = {false};
        for (int i = 0; i < na; i++) {
            TRY(norm_axis(c, ax[i], rank, &a->axes[i]));
            if (seen[a->axes[i]])
                return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is listed twice",
                               (long long)ax[i]);
            seen[a->axes[i]] = true;
        }
        a->naxes = na;
    }
    return AIT_OK;
}

/* True when input i is given with at least one element. */
static bool nonempty_in(const op_ctx *c, int i)
{
    return i >= 0 && has_in(c, i) && tensor_numel(c->in[i]) > 0;
}

/* Reads the float input i (n values expected) into v; AIT_DEFER without data. */
static ait_status read_floats(op_ctx *c, int i, const char *what, int n, double *v)
{
    const tensor *t = c->in[i];
    if (!dtype_is_float(t->dtype))
        return err_set(c->err, AIT_E_DTYPE, "%s must be a float tensor, not %s", what,
                       ait_dtype_name(t->dtype));
    if (tensor_numel(t) != n)
        return err_set(c->err, AIT_E_SHAPE, "%s has %lld values, expected %d", what,
                       (long long)tensor_numel(t), n);
    if (!t->data) return AIT_DEFER;
    for (int k = 0; k < n; k++) v[k] = elem_get_f64(t->data, t->dtype, k);
    return AIT_OK;
}

/* Output shape and per-axis scales from scales or sizes. */
static ait_status rz_geom_make(op_ctx *c, const rz_attrs *a, rz_geom *p)
{
    const tensor *x = c->in[0];
    int r = x->rank, n = a->naxes;
    if (r < 1) return err_set(c->err, AIT_E_SHAPE, "%s needs an input of rank >= 1", c->n->op);
    p->rank = r;
    for (int d = 0; d < r; d++) {
        p->in[d] = p->out[d] = x->dims[d];
        p->scale[d] = 1;
        p->outf[d] = (double)x->dims[d];
    }
    double sc[AIT_MAX_RANK];
    bool have_scales = false, have_sizes = nonempty_in(c, a->sizes_in);
    if (a->scales_in < 0) { /* Upsample-7 attribute */
        int na = 0;
        const float *f = attr_floats(c->n, "scales", &na);
        if (na != r)
            return err_set(c->err, AIT_E_INVALID_ARG, "scales has %d values for rank %d", na, r);
        for (int i = 0; i < r; i++) sc[i] = f[i];
        have_scales = true;
    } else if (nonempty_in(c, a->scales_in)) {
        TRY(read_floats(c, a->scales_in, "scales", n, sc));
        have_scales = true;
    }
    if (have_scales && have_sizes)
        return err_set(c->err, AIT_E_INVALID_ARG, "only one of scales and sizes may be given");
    if (!have_scales && !have_sizes)
        return err_set(c->err, AIT_E_INVALID_ARG, "one of scales and sizes must be given");
    if (have_scales) {
        for (int i = 0; i < n; i++) {
            int d = a->axes[i];
            if (!(sc[i] > 0) || isinf(sc[i]))
                return err_set(c->err, AIT_E_INVALID_ARG, "scale %g must be positive", sc[i]);
            /* the product in float, as onnxruntime computes it: a scale of
             * 0.7f times 10 gives 7, not 6 */
            double o = floor((double)(float)(sc[i] * (double)p->in[d]));
            if (o > 0x1p62)
                return err_set(c->err, AIT_E_OVERFLOW, "scale %g makes axis %d too large", sc[i],
                               d);
            p->out[d] = (int64_t)o;
            p->scale[d] = (float)sc[i];
            p->outf[d] = p->scale[d] * (double)p->in[d];
        }
    } else {
        int64_t sz[AIT_MAX_RANK];
        int cnt = 0;
        if (tensor_numel(c->in[a->sizes_in]) != n)
            return err_set(c->err, AIT_E_SHAPE, "sizes has %lld values, expected %d",
                           (long long)tensor_numel(c->in[a->sizes_in]), n);
        TRY(in_ints(c, a->sizes_in, sz, AIT_MAX_RANK, &cnt));
        double ratio = a->keep == K_NOT_LARGER ? INFINITY : 0;
        for (int i = 0; i < n; i++) {
            int d = a->axes[i];
            if (sz[i] < 0)
                return err_set(c->err, AIT_E_INVALID_ARG, "size %lld is negative",
                               (long long)sz[i]);
            if (p->in[d] == 0 && sz[i] != 0)
                return err_set(c->err, AIT_E_SHAPE, "cannot resize empty axis %d to %lld", d,
                               (long long)sz[i]);
            double s = p->in[d] ? (double)sz[i] / (double)p->in[d] : 1;
            if (a->keep == K_NOT_LARGER) ratio = fmin(ratio, s);
            else ratio = fmax(ratio, s);
            p->out[d] = sz[i];
            p->scale[d] = s;
            p->outf[d] = (double)sz[i];
        }
        if (a->keep != K_STRETCH) { /* one scale for all listed axes */
            for (int i = 0; i < n; i++) {
                int d = a->axes[i];
                p->scale[d] = ratio;
                p->outf[d] = ratio * (double)p->in[d];
                p->out[d] = (int64_t)floor(p->outf[d] + 0.5);
            }
        }
    }
    for (int d = 0; d < r; d++)
        if (p->out[d] > 0 && p->in[d] == 0)
            return err_set(c->err, AIT_E_SHAPE, "cannot resize empty axis %d", d);
    int64_t numel;
    return shape_numel(p->out, r, x->dtype, &numel, "Resize output", c->err);
}

static ait_status resize_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    rz_attrs a;
    TRY(parse_attrs(c, x->rank, &a));
    if (a.mode != M_NEAREST && !dtype_is_float(x->dtype) && !dtype_is_int(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s mode %s does not support dtype %s",
                       c->n->op, a.mode == M_LINEAR ? "linear" : "cubic",
                       ait_dtype_name(x->dtype));
    if (!ait_dtype_size(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s does not support dtype %s", c->n->op,
                       ait_dtype_name(x->dtype));
    rz_geom p;
    TRY(rz_geom_make(c, &a, &p));
    set_out(c, 0, x->dtype, p.rank, p.out);
    return AIT_OK;
}

/* ---- per-axis tables ---------------------------------------------------- */

typedef struct rz_tab {
    int axis;
    int taps;
    int64_t *idx;  /* [out * taps] input indices, clamped */
    double *w;     /* [out * taps] weights */
    uint8_t *ext;  /* [out]: 1 where the output is extrapolation_value */
} rz_tab;

static double cubic_kernel(double x, double A)
{
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* Input coordinate of output coordinate x along axis d. */
static double src_coord(const rz_attrs *a, const rz_geom *p, int d, int64_t x, double lo,
                        double hi)
{
    double s = p->scale[d], in = (double)p->in[d], of = p->outf[d], xf = (double)x;
    switch (a->coord) {
    case C_HALF_PIXEL_SYM: {
        double adj = (double)p->out[d] / of, off = in / 2 * (1 - adj);
        return off + (xf + 0.5) / s - 0.5;
    }
    case C_PYTORCH: return p->out[d] > 1 ? (xf + 0.5) / s - 0.5 : 0;
    case C_ALIGN: return of == 1 || p->out[d] <= 1 ? 0 : xf * (in - 1) / (of - 1);
    case C_ASYMMETRIC: return xf / s;
    case C_TF_NN: return (xf + 0.5) / s;
    case C_TF_CROP:
        if (of == 1) return (lo + hi) / 2 * (in - 1);
        return lo * (in - 1) + xf * (hi - lo) * (in - 1) / (of - 1);
    default: return (xf + 0.5) / s - 0.5;
    }
}

static int64_t nearest_index(const rz_attrs *a, double xo, double scale)
{
    double f = floor(xo);
    if (xo == f) return (int64_t)f;
    double frac = xo - f;
    switch (a->nearest) {
    case N_ROUND_FLOOR: return (int64_t)(frac <= 0.5 ? f : f + 1);
    case N_ROUND_CEIL: return (int64_t)(frac < 0.5 ? f : f + 1);
    case N_FLOOR: return (int64_t)f;
    case N_CEIL: return (int64_t)(f + 1);
    default: return (int64_t)(scale < 1 ? ceil(xo) : trunc(xo)); /* N_SIMPLE */
    }
}

/* Taps per output for linear/cubic: the kernel's support (1 or 2) stretched
 * by 1/scale when antialiasing a shrinking axis. */
static int64_t tap_count(const rz_attrs *a, double scale, int64_t *start, double *ks)
{
    if (a->mode == M_NEAREST) {
        *start = 0, *ks = 1;
        return 1;
    }
    double support = a->mode == M_LINEAR ? 1 : 2;
    *ks = a->antialias && scale < 1 ? scale : 1;
    *start = (int64_t)floor(-support / *ks) + 1;
    return 2 - 2 * *start;
}

static void fill_tab(const rz_attrs *a, const rz_geom *p, const double *roi, rz_tab *t)
{
    int d = t->axis;
    int64_t in = p->in[d], start;
    double ks;
    int taps = (int)tap_count(a, p->scale[d], &start, &ks);
    double lo = roi ? roi[d] : 0, hi = roi ? roi[p->rank + d] : 1;
    for (int64_t x = 0; x < p->out[d]; x++) {
        int64_t *ix = t->idx + x * taps;
        double *w = t->w + x * taps;
        double xo = src_coord(a, p, d, x, lo, hi);
        t->ext[x] = 0;
        if (a->coord == C_TF_CROP && (xo < 0 || xo > (double)(in - 1))) {
            t->ext[x] = 1;
            for (int k = 0; k < taps; k++) ix[k] = 0, w[k] = 0;
            continue;
        }
        if (a->mode == M_NEAREST) {
            int64_t i = nearest_index(a, xo, p->scale[d]);
            ix[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
            w[0] = 1;
            continue;
        }
        /* base + k for k in [start, start + taps); the ratio lies in (0, 1] so
         * that a whole coordinate takes its weight from the left, as the
         * reference does */
        double base = ceil(xo) - 1, ratio = xo - base, sum = 0;
        for (int k = 0; k < taps; k++) {
            double off = ks * ((double)(start + k) - ratio);
            double v = a->mode == M_LINEAR ? fmax(0, 1 - fabs(off)) : cubic_kernel(off, a->cubic_a);
            int64_t i = (int64_t)base + start + k;
            if (a->exclude && (i < 0 || i >= in)) v = 0;
            ix[k] = i < 0 ? 0 : i >= in ? in - 1 : i;
            w[k] = v;
            sum += v;
        }
        if ((a->antialias || a->exclude) && sum != 0)
            for (int k = 0; k < taps; k++) w[k] /= sum;
    }
    t->taps = taps;
}

/* An axis whose table maps every output to the same input with weight 1. */
static bool tab_is_identity(const rz_geom *p, const rz_tab *t)
{
    int d = t->axis;
    if (p->in[d] != p->out[d]) return false;
    for (int64_t x = 0; x < p->out[d]; x++) {
        if (t->ext[x]) return false;
        for (int k = 0; k < t->taps; k++) {
            double w = t->w[x * t->taps + k];
            if (w != 0 && (w != 1 || t->idx[x * t->taps + k] != x)) return false;
        }
    }
    return true;
}

/* ---- nearest: a gather of whole elements -------------------------------- */

typedef struct gather_ctx {
    int rank;
    size_t esz;
    const int64_t *out;
    int64_t *off[AIT_MAX_RANK]; /* per axis: source element offset, -1: extrapolate */
    const char *src;
    char *dst;
    uint8_t fill[8]; /* extrapolation_value in the output dtype */
} gather_ctx;

static void fill_elems(char *dst, const uint8_t *v, size_t esz, int64_t n)
{
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * esz, v, esz);
}

#define GATHER_ROW(T)                                                                      \
    do {                                                                                   \
        const T *s_ = (const T *)(g->src + base * (int64_t)sizeof(T));                    \
        T *d_ = (T *)g->dst, f_;                                                           \
        memcpy(&f_, g->fill, sizeof(T));                                                   \
        for (int64_t i = 0; i < len; i++) d_[i] = off[i] < 0 ? f_ : s_[off[i]];            \
    } while (0)

/* Writes the block of axes d.. starting at source offset base. */
static void gather(gather_ctx *g, int d, int64_t base, int64_t block)
{
    const int64_t *off = g->off[d];
    int64_t len = g->out[d];
    if (d == g->rank - 1) {
        switch (g->esz) {
        case 1: GATHER_ROW(uint8_t); break;
        case 2: GATHER_ROW(uint16_t); break;
        case 4: GATHER_ROW(uint32_t); break;
        default: GATHER_ROW(uint64_t); break;
        }
        g->dst += len * (int64_t)g->esz;
        return;
    }
    int64_t sub = block / (len ? len : 1);
    for (int64_t i = 0; i < len; i++) {
        if (off[i] < 0) {
            fill_elems(g->dst, g->fill, g->esz, sub);
            g->dst += sub * (int64_t)g->esz;
        } else {
            gather(g, d + 1, base + off[i], sub);
        }
    }
}

/* ---- linear / cubic: separable passes ----------------------------------- */

/* One pass over [outer, n_in, inner] -> [outer, n_out, inner] along a table. */
#define DEF_PASS(T, SFX)                                                                   \
    static void pass_##SFX(const T *restrict src, T *restrict dst, int64_t outer,          \
                           int64_t n_in, int64_t n_out, int64_t inner, const rz_tab *t,     \
                           T extrap)                                                       \
    {                                                                                      \
        int taps = t->taps;                                                                \
        for (int64_t o = 0; o < outer; o++) {                                              \
            const T *s = src + o * n_in * inner;                                           \
            T *d = dst + o * n_out * inner;                                                \
            for (int64_t x = 0; x < n_out; x++) {                                          \
                T *dr = d + x * inner;                                                     \
                const int64_t *ix = t->idx + x * taps;                                     \
                const double *w = t->w + x * taps;                                         \
                if (t->ext[x]) {                                                           \
                    for (int64_t j = 0; j < inner; j++) dr[j] = extrap;                    \
                } else if (inner == 1) {                                                   \
                    double acc = 0;                                                        \
                    for (int k = 0; k < taps; k++) acc += w[k] * (double)s[ix[k]];         \
                    dr[0] = (T)acc;                                                        \
                } else {                                                                   \
                    const T *r0 = s + ix[0] * inner;                                       \
                    T w0 = (T)w[0];                                                        \
                    for (int64_t j = 0; j < inner; j++) dr[j] = w0 * r0[j];                \
                    for (int k = 1; k < taps; k++) {                                       \
                        if (w[k] == 0) continue;                                           \
                        const T *rk = s + ix[k] * inner;                                   \
                        T wk = (T)w[k];                                                    \
                        for (int64_t j = 0; j < inner; j++) dr[j] += wk * rk[j];           \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
DEF_PASS(float, f32)
DEF_PASS(double, f64)

/* Working type of linear/cubic: double where float would lose digits. */
static bool work_is_f64(ait_dtype dt)
{
    return dt == AIT_F64 || dt == AIT_I32 || dt == AIT_U32 || dt == AIT_I64 || dt == AIT_U64;
}

static void load_work(const tensor *x, void *dst, bool f64)
{
    int64_t n = tensor_numel(x);
    if (f64) {
        double *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = elem_get_f64(x->data, x->dtype, i);
        return;
    }
    float *d = dst;
    const void *s = x->data;
    if (convert_floats(s, x->dtype, dst, AIT_F32, n)) return;
    switch (x->dtype) {
    case AIT_U8:
        for (int64_t i = 0; i < n; i++) d[i] = ((const uint8_t *)s)[i];
        break;
    case AIT_I8:
        for (int64_t i = 0; i < n; i++) d[i] = ((const int8_t *)s)[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++) d[i] = (float)elem_get_f64(s, x->dtype, i);
        break;
    }
}

/* Stores v as element i of dt: floats as they are, integers rounded to
 * nearest and saturated. */
static void store_round(void *dst, ait_dtype dt, int64_t i, double v)
{
    elem_set_sat(dst, dt, i, dtype_is_float(dt) ? v : round(v));
}

static void store_work(const void *src, bool f64, tensor *y)
{
    int64_t n = tensor_numel(y);
    if (f64) {
        for (int64_t i = 0; i < n; i++) store_round(y->data, y->dtype, i, ((const double *)src)[i]);
        return;
    }
    const float *s = src;
    if (convert_floats(src, AIT_F32, y->data, y->dtype, n)) return;
    switch (y->dtype) {
    case AIT_U8: /* images: the common integer case, kept out of store_round */
        for (int64_t i = 0; i < n; i++) {
            float v = s[i];
            ((uint8_t *)y->data)[i] = !(v > 0) ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5f);
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++) store_round(y->data, y->dtype, i, s[i]);
        break;
    }
}

/* Whether axis u should be resized before axis v (see resize_run). */
static bool pass_before(const rz_geom *p, int u, int v)
{
    double ru = (double)p->out[u] * (double)p->in[v], rv = (double)p->out[v] * (double)p->in[u];
    if (ru != rv) return ru < rv;
    return p->out[u] < p->in[u] ? u < v : u > v;
}

static ait_status resize_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    rz_attrs a;
    TRY(parse_attrs(c, x->rank, &a));
    rz_geom p;
    TRY(rz_geom_make(c, &a, &p));
    int r = p.rank;
    int64_t nout = tensor_numel(y), nin = tensor_numel(x);
    if (nout == 0) return AIT_OK;

    double roi[2 * AIT_MAX_RANK];
    bool have_roi = false;
    if (a.coord == C_TF_CROP && nonempty_in(c, a.roi_in)) {
        double v[2 * AIT_MAX_RANK];
        TRY(read_floats(c, a.roi_in, "roi", 2 * a.naxes, v));
        for (int d = 0; d < r; d++) roi[d] = 0, roi[r + d] = 1;
        for (int i = 0; i < a.naxes; i++) {
            roi[a.axes[i]] = v[i];
            roi[r + a.axes[i]] = v[a.naxes + i];
        }
        have_roi = true;
    }

    /* Scratch: the tables, then (linear/cubic) the working buffers. */
    int64_t start;
    double ks;
    /* per axis: index and weight tables and the extrapolation flags */
    size_t bytes[3 * AIT_MAX_RANK + 3];
    void *parts[3 * AIT_MAX_RANK + 3];
    int64_t taps[AIT_MAX_RANK];
    for (int d = 0; d < r; d++) {
        taps[d] = tap_count(&a, p.scale[d], &start, &ks);
        bytes[3 * d] = bytes[3 * d + 1] = (size_t)(p.out[d] * taps[d]) * 8;
        bytes[3 * d + 2] = (size_t)p.out[d];
    }
    bool f64 = work_is_f64(x->dtype);
    size_t es = f64 ? 8 : 4;
    bool interp = a.mode != M_NEAREST;
    /* the order of passes: shrinking axes first keeps the later passes
     * small; among equal ratios, the last axis (whose pass, inner == 1, does
     * not vectorise) goes where the tensor is smaller: last when shrinking,
     * first when growing */
    int order[AIT_MAX_RANK];
    for (int d = 0; d < r; d++) order[d] = d;
    for (int i = 1; i < r; i++)
        for (int j = i; j > 0 && pass_before(&p, order[j], order[j - 1]); j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    int64_t biggest = 0, cur = nin;
    for (int i = 0; i < r; i++) {
        int d = order[i];
        cur = cur / p.in[d] * p.out[d];
        if (cur > biggest) biggest = cur;
    }
    bool conv_in = interp && !(x->dtype == AIT_F32 || x->dtype == AIT_F64);
    bytes[3 * r] = conv_in ? (size_t)nin * es : 0;
    bytes[3 * r + 1] = bytes[3 * r + 2] = interp ? (size_t)biggest * es : 0;
    TRY(op_scratch_parts(c, 3 * r + 3, bytes, parts));

    rz_tab tabs[AIT_MAX_RANK];
    for (int d = 0; d < r; d++) {
        rz_tab *t = &tabs[d];
        t->axis = d;
        t->idx = parts[3 * d];
        t->w = parts[3 * d + 1];
        t->ext = parts[3 * d + 2];
        fill_tab(&a, &p, have_roi ? roi : NULL, t);
    }

    if (!interp) {
        gather_ctx g = {.rank = r, .esz = ait_dtype_size(x->dtype), .out = p.out,
                        .src = x->data, .dst = y->data};
        int64_t str[AIT_MAX_RANK];
        row_strides(p.in, r, str);
        for (int d = 0; d < r; d++) { /* reuse the index table as offsets */
            int64_t *off = tabs[d].idx;
            for (int64_t i = 0; i < p.out[d]; i++)
                off[i] = tabs[d].ext[i] ? -1 : tabs[d].idx[i] * str[d];
            g.off[d] = off;
        }
        store_round(g.fill, x->dtype, 0, a.extrap);
        gather(&g, 0, 0, nout);
        return AIT_OK;
    }

    const void *src = x->data;
    if (conv_in) {
        load_work(x, parts[3 * r], f64);
        src = parts[3 * r];
    }
    void *buf[2] = {parts[3 * r + 1], parts[3 * r + 2]};
    int nb = 0, done = 0, todo = 0;
    bool skip[AIT_MAX_RANK];
    for (int d = 0; d < r; d++)
        if (!(skip[d] = tab_is_identity(&p, &tabs[d]))) todo++;
    int64_t dims[AIT_MAX_RANK];
    memcpy(dims, p.in, sizeof dims);
    bool direct = x->dtype == (f64 ? AIT_F64 : AIT_F32); /* last pass may write y */
    for (int i = 0; i < r; i++) {
        int d = order[i];
        if (skip[d]) continue;
        int64_t outer = 1, inner = 1;
        for (int k = 0; k < d; k++) outer *= dims[k];
        for (int k = d + 1; k < r; k++) inner *= dims[k];
        bool last = ++done == todo;
        void *dst = last && direct ? y->data : buf[nb];
        if (f64) pass_f64(src, dst, outer, p.in[d], p.out[d], inner, &tabs[d], a.extrap);
        else pass_f32(src, dst, outer, p.in[d], p.out[d], inner, &tabs[d], (float)a.extrap);
        dims[d] = p.out[d];
        src = dst;
        nb ^= 1;
    }
    if (src == y->data) return AIT_OK;
    if (direct) memcpy(y->data, src, (size_t)nout * es); /* nothing to resize */
    else store_work(src, f64, y);
    return AIT_OK;
}

OP_TABLE(resize,
         {.name = "Resize", .min_in = 1, .max_in = 4, .min_out = 1, .max_out = 1,
          .infer = resize_infer, .run = resize_run},
         {.name = "Upsample", .min_in = 1, .max_in = 2, .min_out = 1, .max_out = 1,
          .infer = resize_infer, .run = resize_run});
