/* Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp
 * and ArgMax/ArgMin.
 *
 * One driver serves them all: the input is converted to a working type
 * (float for float32/float16/bfloat16, double for float64, int64 or uint64
 * for integers), its axes are collapsed to [outer, reduced, inner] and one
 * kernel reduces (one pass per group when the reduced axes are not adjacent:
 * axes [0, 2, 3] of NCHW reduce H*W, then N), and the result is converted
 * back.
 * Each reduction is "pre-op per element, combine, post-op on the result":
 * ReduceL2 is square / add / sqrt, ReduceLogSum is none / add / log, and so
 * on. An empty axes list with noop_with_empty_axes reduces every element on
 * its own, so ReduceSumSquare returns x*x and ReduceL1 returns |x| (as the
 * ONNX reference does). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/op.h"

enum rkind { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LSE };

static const struct rdesc {
    const char *name;
    enum rkind kind;
    int axes_input_since; /* opset where axes moved from attribute to input */
} rdescs[] = {
    {"ReduceSum", R_SUM, 13},       {"ReduceMean", R_MEAN, 18},
    {"ReduceMax", R_MAX, 18},       {"ReduceMin", R_MIN, 18},
    {"ReduceProd", R_PROD, 18},     {"ReduceL1", R_L1, 18},
    {"ReduceL2", R_L2, 18},         {"ReduceSumSquare", R_SUMSQ, 18},
    {"ReduceLogSum", R_LOGSUM, 18}, {"ReduceLogSumExp", R_LSE, 18},
};

static const struct rdesc *rdesc_of(const op_ctx *c)
{
    for (size_t i = 0; i < sizeof rdescs / sizeof rdescs[0]; i++)
        if (strcmp(rdescs[i].name, c->n->op) == 0) return &rdescs[i];
    return &rdescs[0];
}

/* Reductions whose result is not an integer even for integer input: these
 * run in double for integer dtypes and truncate at the end. */
static bool kind_floatish(enum rkind k) { return k == R_L2 || k == R_LOGSUM || k == R_LSE; }

/* ---- working types ------------------------------------------------------ */

typedef enum { W_F32, W_F64, W_I64, W_U64 } wtype;

static wtype work_type(ait_dtype dt, bool floatish)
{
    if (dt == AIT_F32 || dt == AIT_F16 || dt == AIT_BF16) return W_F32;
    if (dt == AIT_F64 || floatish) return W_F64;
    return dt == AIT_U64 ? W_U64 : W_I64;
}

static size_t wsize(wtype w) { return w == W_F32 ? 4 : 8; }

/* The working type equals the tensor's own: no conversion needed. */
static bool is_native(ait_dtype dt, wtype w)
{
    return (w == W_F32 && dt == AIT_F32) || (w == W_F64 && dt == AIT_F64) ||
           (w == W_I64 && dt == AIT_I64) || (w == W_U64 && dt == AIT_U64);
}

#define CONV_LOOP(ST, DT, EXPR)                                                            \
    do {                                                                                   \
        const ST *s_ = (const ST *)src;                                                    \
        DT *d_ = (DT *)dst;                                                                \
        for (int64_t i = 0; i < n; i++) {                                                  \
            ST v = s_[i];                                                                  \
            d_[i] = (DT)(EXPR);                                                            \
        }                                                                                  \
    } while (0)

/* Converts n elements of dtype st into working type w. */
static void to_work(const void *src, ait_dtype st, void *dst, wtype w, int64_t n)
{
    if (is_native(st, w)) {
        memcpy(dst, src, (size_t)n * wsize(w));
        return;
    }
    switch (w) {
    case W_F32: convert_floats(src, st, dst, AIT_F32, n); return;
    case W_F64: {
        double *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = elem_get_f64(src, st, i);
        return;
    }
    default: /* integers (and bool) into int64 */
        switch (st) {
        case AIT_I8: CONV_LOOP(int8_t, int64_t, v); break;
        case AIT_U8: CONV_LOOP(uint8_t, int64_t, v); break;
        case AIT_BOOL: CONV_LOOP(uint8_t, int64_t, v != 0); break;
        case AIT_I16: CONV_LOOP(int16_t, int64_t, v); break;
        case AIT_U16: CONV_LOOP(uint16_t, int64_t, v); break;
        case AIT_I32: CONV_LOOP(int32_t, int64_t, v); break;
        case AIT_U32: CONV_LOOP(uint32_t, int64_t, v); break;
        default: CONV_LOOP(uint64_t, uint64_t, v); break; /* int64 <-> uint64 bits */
        }
    }
}

/* Converts n working-type elements into dtype dt (ints wrap as in C, except
 * from double, which saturates). */
static void from_work(const void *src, wtype w, void *dst, ait_dtype dt, int64_t n)
{
    if (is_native(dt, w)) {
        memcpy(dst, src, (size_t)n * wsize(w));
        return;
    }
    switch (w) {
    case W_F32: convert_floats(src, AIT_F32, dst, dt, n); return;
    case W_F64:
        for (int64_t i = 0; i < n; i++) elem_set_sat(dst, dt, i, ((const double *)src)[i]);
        return;
    default:
        switch (dt) {
        case AIT_I8: CONV_LOOP(int64_t, int8_t, v); break;
        case AIT_U8: CONV_LOOP(int64_t, uint8_t, v); break;
        case AIT_BOOL: CONV_LOOP(int64_t, uint8_t, v != 0); break;
        case AIT_I16: CONV_LOOP(int64_t, int16_t, v); break;
        case AIT_U16: CONV_LOOP(int64_t, uint16_t, v); break;
        case AIT_I32: CONV_LOOP(int64_t, int32_t, v); break;
        case AIT_U32: CONV_LOOP(int64_t, uint32_t, v); break;
        default: CONV_LOOP(uint64_t, uint64_t, v); break;
        }
    }
}

/* ---- kernels ------------------------------------------------------------ */

/* Integer add/multiply wrap (through uint64) instead of overflowing. */
#define ADD_F(a, b) ((a) + (b))
#define MUL_F(a, b) ((a) * (b))
#define ADD_I(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define MUL_I(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define ABS_I(a) ((a) < 0 ? (int64_t)(0 - (uint64_t)(a)) : (a))
#define ABS_U(a) (a)
#define ABS_F32(a) fabsf(a)
#define ABS_F64(a) fabs(a)
/* NaN wins, as in numpy. */
#define MAX_OF(a, v) ((((v) > (a)) | ((v) != (v))) ? (v) : (a))
#define MIN_OF(a, v) ((((v) < (a)) | ((v) != (v))) ? (v) : (a))

/* Reduces xs ([R, inner], R >= 1) into ys ([inner]): ys = COMB over r of
 * PRE(x). COMB combines `a` (so far) and `v`; PRE maps `v`. A contiguous row
 * (inner == 1) is reduced in 8 independent lanes so that it vectorises. */
#define RED(T, PRE, COMB)                                                                  \
    do {                                                                                   \
        if (inner == 1 && R >= 16) {                                                       \
            T lane[8];                                                                     \
            int64_t n8 = R / 8;                                                            \
            for (int l = 0; l < 8; l++) {                                                  \
                T v = xs[l];                                                               \
                lane[l] = PRE;                                                             \
            }                                                                              \
            for (int64_t r = 1; r < n8; r++)                                               \
                for (int l = 0; l < 8; l++) {                                              \
                    T v = xs[r * 8 + l];                                                   \
                    v = PRE;                                                               \
                    T a = lane[l];                                                         \
                    lane[l] = COMB;                                                        \
                }                                                                          \
            T acc = lane[0];                                                               \
            for (int l = 1; l < 8; l++) {                                                  \
                T a = acc, v = lane[l];                                                    \
                acc = COMB;                                                                \
            }                                                                              \
            for (int64_t i = n8 * 8; i < R; i++) {                                         \
                T v = xs[i];                                                               \
                v = PRE;                                                                   \
                T a = acc;                                                                 \
                acc = COMB;                                                                \
            }                                                                              \
            ys[0] = acc;                                                                   \
        } else {                                                                           \
            for (int64_t j = 0; j < inner; j++) {                                          \
                T v = xs[j];                                                               \
                ys[j] = PRE;                                                               \
            }                                                                              \
            for (int64_t r = 1; r < R; r++) {                                              \
                const T *xr = xs + r * inner;                                              \
                for (int64_t j = 0; j < inner; j++) {                                      \
                    T v = xr[j];                                                           \
                    v = PRE;                                                               \
                    T a = ys[j];                                                           \
                    ys[j] = COMB;                                                          \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* reduce_<sfx>: x is [outer, R, inner] with R >= 1, y is [outer, inner];
 * tmp holds `inner` elements (ReduceLogSumExp). Only the combining kinds
 * come here (SUM, SUMSQ, L1, PROD, MAX, MIN, LSE); finish_<sfx> then turns
 * sums into means, L2 norms and logs. */
#define DEF_REDUCE(T, SFX, ADD, MUL, ABS, EXP, LOG, SQRT)                                  \
    static void reduce_##SFX(const T *restrict x, T *restrict y, int64_t outer, int64_t R,     \
                             int64_t inner, enum rkind k, T *restrict tmp)                 \
    {                                                                                      \
        for (int64_t o = 0; o < outer; o++) {                                              \
            const T *xs = x + o * R * inner;                                               \
            T *ys = y + o * inner;                                                         \
            switch (k) {                                                                   \
            case R_SUMSQ: RED(T, MUL(v, v), ADD(a, v)); break;                             \
            case R_L1: RED(T, ABS(v), ADD(a, v)); break;                                   \
            case R_PROD: RED(T, v, MUL(a, v)); break;                                      \
            case R_MAX: RED(T, v, MAX_OF(a, v)); break;                                    \
            case R_MIN: RED(T, v, MIN_OF(a, v)); break;                                    \
            case R_LSE:                                                                    \
                /* log(sum(exp(x - m))) + m with m the max (0 if not finite) */            \
                RED(T, v, MAX_OF(a, v));                                                   \
                for (int64_t j = 0; j < inner; j++) {                                      \
                    if (!isfinite((double)ys[j])) ys[j] = 0;                               \
                    tmp[j] = 0;                                                            \
                }                                                                          \
                for (int64_t r = 0; r < R; r++)                                            \
                    for (int64_t j = 0; j < inner; j++)                                    \
                        tmp[j] += (T)EXP(xs[r * inner + j] - ys[j]);                       \
                for (int64_t j = 0; j < inner; j++) ys[j] = (T)LOG(tmp[j]) + ys[j];        \
                break;                                                                     \
            default: RED(T, v, ADD(a, v)); break;                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void finish_##SFX(T *y, int64_t n, enum rkind k, int64_t R)                     \
    {                                                                                      \
        switch (k) {                                                                       \
        case R_MEAN:                                                                       \
            for (int64_t i = 0; i < n; i++) y[i] = (T)(y[i] / (T)R);                       \
            break;                                                                         \
        case R_L2:                                                                         \
            for (int64_t i = 0; i < n; i++) y[i] = (T)SQRT(y[i]);                          \
            break;                                                                         \
        case R_LOGSUM:                                                                     \
            for (int64_t i = 0; i < n; i++) y[i] = (T)LOG(y[i]);                           \
            break;                                                                         \
        default: break;                                                                    \
        }                                                                                  \
    }

/* Integer working types never see the floatish kinds (they run in double). */
static inline double no_math(double v) { return v; }
DEF_REDUCE(float, f32, ADD_F, MUL_F, ABS_F32, expf, logf, sqrtf)
DEF_REDUCE(double, f64, ADD_F, MUL_F, ABS_F64, exp, log, sqrt)
DEF_REDUCE(int64_t, i64, ADD_I, MUL_I, ABS_I, no_math, no_math, no_math)
DEF_REDUCE(uint64_t, u64, ADD_F, MUL_F, ABS_U, no_math, no_math, no_math)

static void reduce_work(wtype w, const void *x, void *y, int64_t outer, int64_t R, int64_t inner,
                        enum rkind k, void *tmp)
{
    switch (w) {
    case W_F32: reduce_f32(x, y, outer, R, inner, k, tmp); break;
    case W_F64: reduce_f64(x, y, outer, R, inner, k, tmp); break;
    case W_I64: reduce_i64(x, y, outer, R, inner, k, tmp); break;
    case W_U64: reduce_u64(x, y, outer, R, inner, k, tmp); break;
    }
}

static void finish_work(wtype w, void *y, int64_t n, enum rkind k, int64_t R)
{
    switch (w) {
    case W_F32: finish_f32(y, n, k, R); break;
    case W_F64: finish_f64(y, n, k, R); break;
    case W_I64: finish_i64(y, n, k, R); break;
    case W_U64: finish_u64(y, n, k, R); break;
    }
}

/* What a pass combines: the first pass applies the element-wise part
 * (square, abs), later passes over partial results just add; max, min,
 * prod and log-sum-exp combine partial results with themselves. */
static enum rkind pass_kind(enum rkind k, bool first)
{
    switch (k) {
    case R_MAX: case R_MIN: case R_PROD: case R_LSE: return k;
    case R_L1: return first ? R_L1 : R_SUM;
    case R_L2: case R_SUMSQ: return first ? R_SUMSQ : R_SUM;
    default: return R_SUM;
    }
}

/* arg_<sfx>: index of the max (or min) along R of [outer, R, inner] into y
 * ([outer, inner]); `best` holds `inner` values. NaN counts as the extreme,
 * as in numpy; `last` picks the last of equal candidates. */
#define DEF_ARG(T, SFX)                                                                    \
    static void arg_##SFX(const T *restrict x, int64_t *restrict y, int64_t outer, int64_t R, \
                          int64_t inner, bool is_max, bool last, T *restrict best)         \
    {                                                                                      \
        for (int64_t o = 0; o < outer; o++) {                                              \
            const T *xs = x + o * R * inner;                                               \
            int64_t *ys = y + o * inner;                                                   \
            for (int64_t j = 0; j < inner; j++) {                                          \
                best[j] = xs[j];                                                           \
                ys[j] = 0;                                                                 \
            }                                                                              \
            for (int64_t r = 1; r < R; r++) {                                              \
                const T *xr = xs + r * inner;                                              \
                for (int64_t j = 0; j < inner; j++) {                                      \
                    T v = xr[j], b = best[j];                                              \
                    bool nan_v = v != v, nan_b = b != b;                                   \
                    bool better = nan_v ? (!nan_b || last)                                 \
                                        : !nan_b && (is_max ? v > b : v < b);              \
                    if (last && !nan_b && v == b) better = true;                           \
                    if (better) {                                                          \
                        best[j] = v;                                                       \
                        ys[j] = r;                                                         \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
DEF_ARG(float, f32)
DEF_ARG(double, f64)
DEF_ARG(int64_t, i64)
DEF_ARG(uint64_t, u64)

/* ---- shape handling ----------------------------------------------------- */

/* Fills red[] with the axes to reduce. Axes come from the attribute (before
 * axes_input_since) or input 1 (from then on); either form is accepted in
 * any opset. An empty or absent list reduces everything, or nothing with
 * noop_with_empty_axes. */
static ait_status reduce_axes(op_ctx *c, int rank, bool *red)
{
    const struct rdesc *d = rdesc_of(c);
    int64_t ax[64];
    int n = 0;
    int na = 0;
    const int64_t *aa = attr_ints(c->n, "axes", &na);
    bool from_input = has_in(c, 1);
    if (aa && from_input)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "axes given both as attribute and as input (version %d takes %s)", c->n->version,
                       c->n->version >= d->axes_input_since ? "the input" : "the attribute");
    if (aa) {
        if (na > 64) return err_set(c->err, AIT_E_INVALID_ARG, "too many axes (%d)", na);
        memcpy(ax, aa, sizeof *ax * (size_t)na);
        n = na;
    } else if (from_input && tensor_numel(c->in[1]) > 0) {
        if (c->in[1]->rank > 1)
            return err_set(c->err, AIT_E_SHAPE, "axes must be 1-D, not rank %d", c->in[1]->rank);
        TRY(in_ints(c, 1, ax, 64, &n));
    }
    for (int i = 0; i < rank; i++) red[i] = false;
    if (n == 0) {
        if (attr_int(c->n, "noop_with_empty_axes", 0)) return AIT_OK;
        for (int i = 0; i < rank; i++) red[i] = true;
        return AIT_OK;
    }
    for (int i = 0; i < n; i++) {
        if (rank == 0) { /* a scalar: axis 0 / -1 name the element itself */
            if (ax[i] != 0 && ax[i] != -1)
                return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is out of range for a scalar",
                               (long long)ax[i]);
            continue;
        }
        int a;
        TRY(norm_axis(c, ax[i], rank, &a));
        if (red[a])
            return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is listed twice",
                           (long long)ax[i]);
        red[a] = true;
    }
    return AIT_OK;
}

static void out_shape(const tensor *x, const bool *red, bool keep, int *orank, int64_t *odims)
{
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!red[i]) odims[r++] = x->dims[i];
        else if (keep) odims[r++] = 1;
    }
    *orank = r;
}

static ait_status check_reduce_dtype(op_ctx *c, const tensor *x, enum rkind k)
{
    if (x->dtype == AIT_BOOL && (k == R_MAX || k == R_MIN)) return AIT_OK;
    if (dtype_is_float(x->dtype) || dtype_is_int(x->dtype)) return AIT_OK;
    return err_set(c->err, AIT_E_UNSUPPORTED, "%s does not support dtype %s", c->n->op,
                   ait_dtype_name(x->dtype));
}

static ait_status reduce_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    TRY(check_reduce_dtype(c, x, rdesc_of(c)->kind));
    bool red[AIT_MAX_RANK];
    TRY(reduce_axes(c, x->rank, red));
    int orank;
    int64_t odims[AIT_MAX_RANK];
    out_shape(x, red, attr_int(c->n, "keepdims", 1) != 0, &orank, odims);
    set_out(c, 0, x->dtype, orank, odims);
    return AIT_OK;
}

/* Fills n elements of dt with the reduction of an empty set. */
static void fill_empty(void *dst, ait_dtype dt, int64_t n, enum rkind k)
{
    double v;
    switch (k) {
    case R_PROD: v = 1; break;
    case R_MAX: v = -INFINITY; break;
    case R_MIN: v = INFINITY; break;
    case R_LOGSUM:
    case R_LSE: v = -INFINITY; break;
    case R_MEAN: v = dtype_is_float(dt) ? NAN : 0; break;
    default: v = 0; break;
    }
    for (int64_t i = 0; i < n; i++) elem_set_sat(dst, dt, i, v);
}

/* x's shape as alternating groups of kept and reduced axes: size-1 axes
 * dropped, neighbours of the same kind merged. */
static int group_axes(const tensor *x, const bool *red, int64_t *size, bool *gred)
{
    int m = 0;
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] == 1) continue;
        if (m > 0 && gred[m - 1] == red[i]) {
            size[m - 1] *= x->dims[i];
            continue;
        }
        size[m] = x->dims[i];
        gred[m++] = red[i];
    }
    return m;
}

/* Reduces in one pass per group of adjacent reduced axes, last group first,
 * each over an [outer, R, inner] view; partial results ping-pong through
 * scratch and the last pass writes y. */
static ait_status reduce_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    enum rkind k = rdesc_of(c)->kind;
    bool red[AIT_MAX_RANK];
    TRY(reduce_axes(c, x->rank, red));
    int64_t nout = tensor_numel(y), nin = tensor_numel(x);
    if (nout == 0) return AIT_OK;
    int64_t size[AIT_MAX_RANK], Rtot = 1;
    bool gred[AIT_MAX_RANK];
    int m = group_axes(x, red, size, gred), passes = 0;
    for (int g = 0; g < m; g++)
        if (gred[g]) Rtot *= size[g], passes++;
    if (Rtot == 0) {
        fill_empty(y->data, y->dtype, nout, k);
        return AIT_OK;
    }
    wtype w = work_type(x->dtype, kind_floatish(k));
    size_t es = wsize(w);
    bool conv_in = !is_native(x->dtype, w), conv_out = !is_native(y->dtype, w);
    /* the partial result after the first pass is the largest one */
    int64_t part = nout, inner_max = 1;
    for (int g = m - 1, seen = 0; g >= 0; g--) {
        if (!gred[g]) continue;
        if (!seen++ && passes > 1) part = nin / size[g];
    }
    for (int g = 0; g < m; g++) {
        int64_t in_ = 1;
        for (int h = g + 1; h < m; h++) in_ *= size[h];
        if (gred[g] && in_ > inner_max) inner_max = in_;
    }
    if (passes == 0) inner_max = nin;
    size_t b_part = passes > 1 ? (size_t)part * es : 0;
    size_t bytes[5] = {conv_in ? (size_t)nin * es : 0, b_part, b_part,
                       conv_out ? (size_t)nout * es : 0, (size_t)inner_max * es};
    void *s[5];
    TRY(op_scratch_parts(c, 5, bytes, s));
    const void *src = x->data;
    if (conv_in) {
        to_work(x->data, x->dtype, s[0], w, nin);
        src = s[0];
    }
    void *part_buf[2] = {s[1], s[2]};
    void *dst = conv_out ? s[3] : y->data;
    void *tmp = s[4];
    if (passes == 0) /* nothing reduced: every element on its own */
        reduce_work(w, src, dst, 1, 1, nin, pass_kind(k, true), tmp);
    for (int g = m - 1, done = 0; g >= 0; g--) {
        if (!gred[g]) continue;
        int64_t outer = 1, inner = 1;
        for (int h = 0; h < g; h++) outer *= size[h];
        for (int h = g + 1; h < m; h++) inner *= size[h];
        void *to = ++done == passes ? dst : part_buf[done & 1];
        reduce_work(w, src, to, outer, size[g], inner, pass_kind(k, done == 1), tmp);
        src = to;
        size[g] = 1;
    }
    finish_work(w, dst, nout, k, Rtot);
    if (conv_out) from_work(dst, w, y->data, y->dtype, nout);
    return AIT_OK;
}

/* ---- ArgMax / ArgMin ---------------------------------------------------- */

static ait_status arg_axis(op_ctx *c, const tensor *x, int *axis)
{
    if (!dtype_is_float(x->dtype) && !dtype_is_int(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s does not support dtype %s", c->n->op,
                       ait_dtype_name(x->dtype));
    if (x->rank == 0) return err_set(c->err, AIT_E_SHAPE, "%s needs rank >= 1", c->n->op);
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, axis));
    int64_t last = attr_int(c->n, "select_last_index", 0);
    if (last != 0 && last != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "select_last_index must be 0 or 1, not %lld",
                       (long long)last);
    return AIT_OK;
}

static ait_status arg_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    int axis;
    TRY(arg_axis(c, x, &axis));
    bool red[AIT_MAX_RANK] = {false};
    red[axis] = true;
    int orank;
    int64_t odims[AIT_MAX_RANK];
    out_shape(x, red, attr_int(c->n, "keepdims", 1) != 0, &orank, odims);
    set_out(c, 0, AIT_I64, orank, odims);
    return AIT_OK;
}

static ait_status arg_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    int axis;
    TRY(arg_axis(c, x, &axis));
    int64_t outer = 1, R = x->dims[axis], inner = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    if (outer * inner == 0) return AIT_OK;
    if (R == 0)
        return err_set(c->err, AIT_E_SHAPE, "%s over an empty axis %d has no answer", c->n->op,
                       axis);
    wtype w = work_type(x->dtype, false);
    size_t es = wsize(w);
    int64_t nin = tensor_numel(x);
    bool conv = !is_native(x->dtype, w);
    size_t bytes[2] = {conv ? (size_t)nin * es : 0, (size_t)inner * es};
    void *s[2];
    TRY(op_scratch_parts(c, 2, bytes, s));
    const void *src = x->data;
    if (conv) {
        to_work(x->data, x->dtype, s[0], w, nin);
        src = s[0];
    }
    bool is_max = strcmp(c->n->op, "ArgMax") == 0;
    bool last = attr_int(c->n, "select_last_index", 0) != 0;
    int64_t *y = c->out[0]->data;
    void *best = s[1];
    switch (w) {
    case W_F32: arg_f32(src, y, outer, R, inner, is_max, last, best); break;
    case W_F64: arg_f64(src, y, outer, R, inner, is_max, last, best); break;
    case W_I64: arg_i64(src, y, outer, R, inner, is_max, last, best); break;
    case W_U64: arg_u64(src, y, outer, R, inner, is_max, last, best); break;
    }
    return AIT_OK;
}

#define REDUCE_OP(nm) OP_DEF(nm, 1, 2, 1, 1, reduce_infer, reduce_run)
OP_TABLE(reduce, REDUCE_OP("ReduceSum"), REDUCE_OP("ReduceMean"), REDUCE_OP("ReduceMax"),
         REDUCE_OP("ReduceMin"), REDUCE_OP("ReduceProd"), REDUCE_OP("ReduceL1"),
         REDUCE_OP("ReduceL2"), REDUCE_OP("ReduceSumSquare"), REDUCE_OP("ReduceLogSum"),
         REDUCE_OP("ReduceLogSumExp"), OP_DEF("ArgMax", 1, 1, 1, 1, arg_infer, arg_run),
         OP_DEF("ArgMin", 1, 1, 1, 1, arg_infer, arg_run));
