/* Elementwise unary ops: one generic driver over a table of float kernels
 * (float32 and float64 generated from one expression; float16 and bfloat16
 * go through float32 in chunks), integer paths where the spec allows them,
 * plus Clip, Cast, CastLike, BitCast, Identity, Dropout, IsNaN, IsInf, Not and
 * BitwiseNot. */
#include <float.h>
#include <string.h>
#include <tgmath.h> /* exp(v) is expf for a float v: one expression, two kernels */
#include <time.h>

#include "ops/op.h"
#include "ops/strings.h"

/* Dtype classes an op accepts (F8: the four float8 types, which IsNaN,
 * IsInf and Dropout take from versions 20, 20 and 22). */
enum { FLT = 1, SINT = 2, UINT = 4, NUM = FLT | SINT | UINT, BOOL = 8, F8 = 16 };

static unsigned dtype_class(ait_dtype t)
{
    if (dtype_is_float(t)) return FLT;
    if (t >= AIT_F8E4M3FN && t <= AIT_F8E5M2FNUZ) return F8;
    if (dtype_is_int(t)) return dtype_is_signed(t) ? SINT : UINT;
    return t == AIT_BOOL ? BOOL : 0;
}

/* Output 0 gets input 0's shape, and dtype `dt` (AIT_UNDEFINED: input 0's). */
static ait_status same_shape(op_ctx *c, ait_dtype dt)
{
    if (!has_in(c, 0)) return err_set(c->err, AIT_E_INVALID_ARG, "input 0 is missing");
    if (dt == AIT_UNDEFINED) dt = c->in[0]->dtype;
    set_out(c, 0, dt, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status check_class(op_ctx *c, const tensor *t, const char *what, unsigned allowed)
{
    if (dtype_class(t->dtype) & allowed) return AIT_OK;
    return err_set(c->err, AIT_E_DTYPE, "%s has unsupported dtype %s", what,
                   ait_dtype_name(t->dtype));
}

/* A tensor that the spec wants to be a scalar: rank 0, or one element
 * (exporters often write shape [1]). */
static ait_status check_scalar(op_ctx *c, const tensor *t, const char *what)
{
    if (tensor_numel(t) == 1) return AIT_OK;
    char s[128];
    return err_set(c->err, AIT_E_SHAPE, "%s must be a scalar, got shape %s", what,
                   shape_str(t->dims, t->rank, s, sizeof s));
}

/* ---- float16 / bfloat16 staging through float32 ------------------------ */

enum { CHUNK = 1024 };

/* ---- float kernels ----------------------------------------------------- */

/* Parameters of a kernel: a and b are the op's attributes (alpha, beta...),
 * mode selects a variant (Gelu's tanh approximation). */
typedef struct uprm {
    double a, b;
    int mode;
} uprm;

typedef void (*kern_f32)(const float *x, float *y, int64_t n, const uprm *p);
typedef void (*kern_f64)(const double *x, double *y, int64_t n, const uprm *p);

/* Defines NAME_f32 and NAME_f64 computing y[i] = EXPR with v = x[i], T the
 * element type. x and y may be the same buffer. */
#define KERNEL_T(NAME, SFX, TY, EXPR)                                                    \
    static void NAME##_##SFX(const TY *x, TY *y, int64_t n, const uprm *p)               \
    {                                                                                    \
        typedef TY T;                                                                    \
        const T a = (T)p->a, b = (T)p->b;                                                \
        const int mode = p->mode;                                                        \
        (void)a, (void)b, (void)mode;                                                    \
        for (int64_t i = 0; i < n; i++) {                                                \
            const T v = x[i];                                                            \
            y[i] = (T)(EXPR);                                                            \
        }                                                                                \
    }
#define KERNEL(NAME, EXPR) KERNEL_T(NAME, f32, float, EXPR) KERNEL_T(NAME, f64, double, EXPR)

/* Clamps t to [lo, hi]; NaN stays NaN and lo > hi gives hi (as numpy.clip). */
#define CLAMP(t, lo, hi)                                                                 \
    ({                                                                                   \
        T t_ = (t);                                                                      \
        t_ = t_ < (T)(lo) ? (T)(lo) : t_;                                                \
        t_ > (T)(hi) ? (T)(hi) : t_;                                                     \
    })
/* log(1 + exp(v)) without overflow. */
#define SOFTPLUS(v) ((v) > 0 ? (v) + log1p(exp(-(v))) : log1p(exp(v)))
#define GELU_ERF(v) ((T)0.5 * (v) * (1 + erf((v) * (T)M_SQRT1_2)))
#define GELU_TANH(v)                                                                     \
    ((T)0.5 * (v) *                                                                      \
     (1 + tanh((T)0.7978845608028654 /* sqrt(2/pi) */ * ((v) + (T)0.044715 * (v) * (v) * (v)))))

struct urow;
/* Integer path of an op (NULL: float only). */
typedef ait_status (*int_fn)(op_ctx *c, const struct urow *r, const uprm *p);
static ait_status abs_int(op_ctx *c, const struct urow *r, const uprm *p);
static ait_status neg_int(op_ctx *c, const struct urow *r, const uprm *p);
static ait_status sign_int(op_ctx *c, const struct urow *r, const uprm *p);
static ait_status relu_int(op_ctx *c, const struct urow *r, const uprm *p);
static ait_status via_f64(op_ctx *c, const struct urow *r, const uprm *p);

/* The table: op, dtype classes, integer path, attribute a (name, default),
 * attribute b (name, default), y = f(v). */
#define UNARY_OPS(X)                                                                         \
    X(Abs, NUM, abs_int, 0, 0, 0, 0, fabs(v))                                                \
    X(Neg, FLT | SINT, neg_int, 0, 0, 0, 0, -v)                                              \
    X(Reciprocal, FLT, 0, 0, 0, 0, 0, 1 / v)                                                 \
    X(Sqrt, FLT, 0, 0, 0, 0, 0, sqrt(v))                                                     \
    X(Exp, FLT, 0, 0, 0, 0, 0, exp(v))                                                       \
    X(Log, FLT, 0, 0, 0, 0, 0, log(v))                                                       \
    X(Erf, NUM, via_f64, 0, 0, 0, 0, erf(v))                                                 \
    X(Sin, FLT, 0, 0, 0, 0, 0, sin(v))                                                       \
    X(Cos, FLT, 0, 0, 0, 0, 0, cos(v))                                                       \
    X(Tan, FLT, 0, 0, 0, 0, 0, tan(v))                                                       \
    X(Asin, FLT, 0, 0, 0, 0, 0, asin(v))                                                     \
    X(Acos, FLT, 0, 0, 0, 0, 0, acos(v))                                                     \
    X(Atan, FLT, 0, 0, 0, 0, 0, atan(v))                                                     \
    X(Sinh, FLT, 0, 0, 0, 0, 0, sinh(v))                                                     \
    X(Cosh, FLT, 0, 0, 0, 0, 0, cosh(v))                                                     \
    X(Asinh, FLT, 0, 0, 0, 0, 0, asinh(v))                                                   \
    X(Acosh, FLT, 0, 0, 0, 0, 0, acosh(v))                                                   \
    X(Atanh, FLT, 0, 0, 0, 0, 0, atanh(v))                                                   \
    X(Tanh, FLT, 0, 0, 0, 0, 0, tanh(v))                                                     \
    X(Sigmoid, FLT, 0, 0, 0, 0, 0, 1 / (1 + exp(-v)))                                        \
    X(HardSigmoid, FLT, 0, "alpha", 0.2, "beta", 0.5, CLAMP(a * v + b, 0, 1))                \
    X(HardSwish, FLT, 0, 0, 0, 0, 0, v * CLAMP(v * (T)(1.0 / 6) + (T)0.5, 0, 1))             \
    X(Relu, FLT | SINT, relu_int, 0, 0, 0, 0, v < 0 ? 0 : v)                                 \
    X(LeakyRelu, FLT, 0, "alpha", 0.01, 0, 0, v < 0 ? a * v : v)                             \
    X(Elu, FLT, 0, "alpha", 1.0, 0, 0, v < 0 ? a * expm1(v) : v)                             \
    X(Selu, FLT, 0, "alpha", 1.67326319217681884765625, "gamma", 1.05070102214813232421875, \
      v > 0 ? b * v : b * a * expm1(v))                                                      \
    X(Celu, FLT, 0, "alpha", 1.0, 0, 0, (v > 0 ? v : 0) + fmin((T)0, a * expm1(v / a)))      \
    X(Gelu, FLT, 0, 0, 0, 0, 0, mode ? GELU_TANH(v) : GELU_ERF(v))                           \
    X(Softplus, FLT, 0, 0, 0, 0, 0, SOFTPLUS(v))                                             \
    X(Softsign, FLT, 0, 0, 0, 0, 0, v / (1 + fabs(v)))                                       \
    X(ThresholdedRelu, FLT, 0, "alpha", 1.0, 0, 0, v > a ? v : 0)                            \
    X(Shrink, NUM, via_f64, "lambd", 0.5, "bias", 0.0, v < -a ? v + b : v > a ? v - b : 0)   \
    X(Mish, FLT, 0, 0, 0, 0, 0, v * tanh(SOFTPLUS(v)))                                       \
    X(Swish, FLT, 0, "alpha", 1.0, 0, 0, v / (1 + exp(-a * v)))                              \
    X(Floor, FLT, 0, 0, 0, 0, 0, floor(v))                                                   \
    X(Ceil, FLT, 0, 0, 0, 0, 0, ceil(v))                                                     \
    X(Round, FLT, 0, 0, 0, 0, 0, nearbyint(v)) /* default rounding: half to even */          \
    X(Sign, NUM, sign_int, 0, 0, 0, 0, v > 0 ? 1 : v < 0 ? -1 : v)

#define X_KERNEL(NAME, TYPES, INTS, AN, AD, BN, BD, EXPR) KERNEL(NAME, EXPR)
UNARY_OPS(X_KERNEL)
KERNEL(Clip, CLAMP(v, a, b))

typedef struct urow {
    const char *name;
    unsigned types;
    int_fn ints;
    const char *a_name, *b_name;
    double a_def, b_def;
    kern_f32 f32;
    kern_f64 f64;
} urow;

#define X_ROW(NAME, TYPES, INTS, AN, AD, BN, BD, EXPR)                                   \
    {#NAME, TYPES, INTS, AN, BN, AD, BD, NAME##_f32, NAME##_f64},
static const urow rows[] = {UNARY_OPS(X_ROW)};

static const urow *find_row(op_ctx *c)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].name, c->n->op) == 0) return &rows[i];
    err_set(c->err, AIT_E_INTERNAL, "no unary kernel for %s", c->n->op);
    return NULL;
}

/* y = f(x) for a float input, whatever its width. */
static void apply_float(op_ctx *c, kern_f32 f32, kern_f64 f64, const uprm *p)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t n = tensor_numel(x);
    switch (x->dtype) {
    case AIT_F32: f32(x->data, y->data, n, p); break;
    case AIT_F64: f64(x->data, y->data, n, p); break;
    default: { /* float16, bfloat16 */
        float buf[CHUNK];
        for (int64_t o = 0; o < n; o += CHUNK) {
            int64_t m = n - o < CHUNK ? n - o : CHUNK;
            convert_floats((const uint16_t *)x->data + o, x->dtype, buf, AIT_F32, m);
            f32(buf, buf, m, p);
            convert_floats(buf, AIT_F32, (uint16_t *)y->data + o, y->dtype, m);
        }
    }
    }
}

/* Integer inputs of float-defined ops (Erf, Shrink): compute in float64,
 * convert back (truncating, as Cast). */
static ait_status via_f64(op_ctx *c, const urow *r, const uprm *p)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    size_t es = ait_dtype_size(x->dtype);
    int64_t n = tensor_numel(x);
    double buf[CHUNK];
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t m = n - o < CHUNK ? n - o : CHUNK;
        TRY(convert_elems((const char *)x->data + o * es, x->dtype, buf, AIT_F64, m, c->err));
        r->f64(buf, buf, m, p);
        TRY(convert_elems(buf, AIT_F64, (char *)y->data + o * es, y->dtype, m, c->err));
    }
    return AIT_OK;
}

/* ---- integer kernels --------------------------------------------------- */

#define SIGNED_INTS(X, E)                                                                \
    X(AIT_I8, int8_t, INT8_MIN, INT8_MAX, E)                                             \
    X(AIT_I16, int16_t, INT16_MIN, INT16_MAX, E)                                         \
    X(AIT_I32, int32_t, INT32_MIN, INT32_MAX, E)                                         \
    X(AIT_I64, int64_t, INT64_MIN, INT64_MAX, E)
#define UNSIGNED_INTS(X, E)                                                              \
    X(AIT_U8, uint8_t, 0, UINT8_MAX, E)                                                  \
    X(AIT_U16, uint16_t, 0, UINT16_MAX, E)                                               \
    X(AIT_U32, uint32_t, 0, UINT32_MAX, E)                                               \
    X(AIT_U64, uint64_t, 0, UINT64_MAX, E)

/* A switch case computing y[i] = E with v = x[i] of type T. */
#define INT_MAP(DT, TY, MIN, MAX, E)                                                     \
    case DT: {                                                                           \
        typedef TY T;                                                                    \
        const T *x = c->in[0]->data;                                                     \
        T *y = c->out[0]->data;                                                          \
        for (int64_t i = 0; i < n; i++) {                                                \
            const T v = x[i];                                                            \
            y[i] = (T)(E);                                                               \
        }                                                                                \
        return AIT_OK;                                                                   \
    }
/* Negation wraps (two's complement) rather than overflowing. */
#define WRAP_NEG(v) ((T)(0 - (uint64_t)(v)))

static ait_status bad_int(op_ctx *c)
{
    return err_set(c->err, AIT_E_DTYPE, "%s does not support dtype %s", c->n->op,
                   ait_dtype_name(c->in[0]->dtype));
}

static ait_status abs_int(op_ctx *c, const urow *r, const uprm *p)
{
    int64_t n = tensor_numel(c->in[0]);
    switch (c->in[0]->dtype) {
        SIGNED_INTS(INT_MAP, v < 0 ? WRAP_NEG(v) : v)
        UNSIGNED_INTS(INT_MAP, v)
    default: return bad_int(c);
    }
}

static ait_status neg_int(op_ctx *c, const urow *r, const uprm *p)
{
    int64_t n = tensor_numel(c->in[0]);
    switch (c->in[0]->dtype) {
        SIGNED_INTS(INT_MAP, WRAP_NEG(v))
    default: return bad_int(c);
    }
}

static ait_status sign_int(op_ctx *c, const urow *r, const uprm *p)
{
    int64_t n = tensor_numel(c->in[0]);
    switch (c->in[0]->dtype) {
        SIGNED_INTS(INT_MAP, (v > 0) - (v < 0))
        UNSIGNED_INTS(INT_MAP, v != 0)
    default: return bad_int(c);
    }
}

static ait_status relu_int(op_ctx *c, const urow *r, const uprm *p)
{
    int64_t n = tensor_numel(c->in[0]);
    switch (c->in[0]->dtype) {
        SIGNED_INTS(INT_MAP, v < 0 ? 0 : v)
    default: return bad_int(c);
    }
}

/* ---- the table-driven ops ---------------------------------------------- */

static ait_status infer_unary(op_ctx *c)
{
    const urow *r = find_row(c);
    if (!r) return AIT_E_INTERNAL;
    TRY(same_shape(c, AIT_UNDEFINED));
    TRY(check_class(c, c->in[0], "input", r->types));
    const char *ap = attr_str(c->n, "approximate", "none");
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "approximate must be \"none\" or \"tanh\", not \"%s\"", ap);
    return AIT_OK;
}

static ait_status run_unary(op_ctx *c)
{
    const urow *r = find_row(c);
    if (!r) return AIT_E_INTERNAL;
    uprm p = {
        .a = r->a_name ? attr_float(c->n, r->a_name, (float)r->a_def) : 0,
        .b = r->b_name ? attr_float(c->n, r->b_name, (float)r->b_def) : 0,
        .mode = strcmp(attr_str(c->n, "approximate", "none"), "tanh") == 0,
    };
    if (!dtype_is_float(c->in[0]->dtype)) {
        if (!r->ints) return bad_int(c);
        return r->ints(c, r, &p);
    }
    apply_float(c, r->f32, r->f64, &p);
    return AIT_OK;
}

/* ---- Clip -------------------------------------------------------------- */

/* Before opset 11 min and max are attributes (float ops only); since then,
 * optional scalar inputs of the input's dtype (integers since opset 12). */
static ait_status infer_clip(op_ctx *c)
{
    TRY(same_shape(c, AIT_UNDEFINED));
    if (c->n->version < 11) {
        if (c->n_in > 1)
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "Clip before opset 11 takes min and max as attributes, not inputs");
        return check_class(c, c->in[0], "input", FLT);
    }
    TRY(check_class(c, c->in[0], "input", c->n->version >= 12 ? NUM : FLT));
    for (int i = 1; i < 3; i++) {
        if (!has_in(c, i)) continue;
        const char *what = i == 1 ? "min" : "max";
        if (c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but the input is %s", what,
                           ait_dtype_name(c->in[i]->dtype), ait_dtype_name(c->in[0]->dtype));
        TRY(check_scalar(c, c->in[i], what));
    }
    return AIT_OK;
}

#define INT_CLIP(DT, TY, MIN, MAX, E)                                                    \
    case DT: {                                                                           \
        const TY lo = has_in(c, 1) ? *(const TY *)c->in[1]->data : (TY)MIN;              \
        const TY hi = has_in(c, 2) ? *(const TY *)c->in[2]->data : (TY)MAX;              \
        const TY *x = c->in[0]->data;                                                    \
        TY *y = c->out[0]->data;                                                         \
        for (int64_t i = 0; i < n; i++) {                                                \
            TY t = x[i] < lo ? lo : x[i];                                                \
            y[i] = t > hi ? hi : t;                                                      \
        }                                                                                \
        return AIT_OK;                                                                   \
    }

static ait_status run_clip(op_ctx *c)
{
    const tensor *x = c->in[0];
    int64_t n = tensor_numel(x);
    switch (x->dtype) {
        SIGNED_INTS(INT_CLIP, _)
        UNSIGNED_INTS(INT_CLIP, _)
    default: break;
    }
    uprm p = {-INFINITY, INFINITY, 0};
    if (c->n->version < 11) {
        p.a = attr_float(c->n, "min", -FLT_MAX);
        p.b = attr_float(c->n, "max", FLT_MAX);
    } else {
        if (has_in(c, 1)) p.a = elem_get_f64(c->in[1]->data, c->in[1]->dtype, 0);
        if (has_in(c, 2)) p.b = elem_get_f64(c->in[2]->data, c->in[2]->dtype, 0);
    }
    apply_float(c, Clip_f32, Clip_f64, &p);
    return AIT_OK;
}

/* ---- IsNaN, IsInf, Not, BitwiseNot ------------------------------------- */

static ait_status infer_isclass(op_ctx *c)
{
    TRY(same_shape(c, AIT_BOOL));
    return check_class(c, c->in[0], "input", c->n->version >= 20 ? FLT | F8 : FLT);
}

/* out[i] = whether x[i] is NaN (nan) or an infinity of a detected sign. */
static void classify(op_ctx *c, bool nan, bool pos, bool neg)
{
    const tensor *x = c->in[0];
    uint8_t *y = c->out[0]->data;
    int64_t n = tensor_numel(x);
#define CLASSIFY(v) (nan ? isnan(v) : isinf(v) && ((v) > 0 ? pos : neg))
    if (x->dtype == AIT_F64) {
        const double *d = x->data;
        for (int64_t i = 0; i < n; i++) y[i] = CLASSIFY(d[i]);
        return;
    }
    if (x->dtype == AIT_F32) {
        const float *f = x->data;
        for (int64_t i = 0; i < n; i++) y[i] = CLASSIFY(f[i]);
        return;
    }
    float buf[CHUNK];
    size_t es = ait_dtype_size(x->dtype);
    for (int64_t o = 0; o < n; o += CHUNK) { /* float16, bfloat16, float8: exact in float32 */
        int64_t m = n - o < CHUNK ? n - o : CHUNK;
        convert_elems((const char *)x->data + o * es, x->dtype, buf, AIT_F32, m, NULL);
        for (int64_t i = 0; i < m; i++) y[o + i] = CLASSIFY(buf[i]);
    }
#undef CLASSIFY
}

static ait_status run_isnan(op_ctx *c)
{
    classify(c, true, false, false);
    return AIT_OK;
}

static ait_status run_isinf(op_ctx *c)
{
    classify(c, false, attr_int(c->n, "detect_positive", 1) != 0,
             attr_int(c->n, "detect_negative", 1) != 0);
    return AIT_OK;
}

static ait_status infer_not(op_ctx *c)
{
    TRY(same_shape(c, AIT_UNDEFINED));
    return check_class(c, c->in[0], "input", BOOL);
}

static ait_status run_not(op_ctx *c)
{
    const uint8_t *x = c->in[0]->data;
    uint8_t *y = c->out[0]->data;
    int64_t n = tensor_numel(c->in[0]);
    for (int64_t i = 0; i < n; i++) y[i] = !x[i];
    return AIT_OK;
}

static ait_status infer_bitwise_not(op_ctx *c)
{
    TRY(same_shape(c, AIT_UNDEFINED));
    return check_class(c, c->in[0], "input", SINT | UINT);
}

/* Complementing every byte complements every integer, whatever its width. */
static ait_status run_bitwise_not(op_ctx *c)
{
    const uint8_t *x = c->in[0]->data;
    uint8_t *y = c->out[0]->data;
    size_t nb = tensor_nbytes(c->in[0]);
    for (size_t i = 0; i < nb; i++) y[i] = (uint8_t)~x[i];
    return AIT_OK;
}

/* ---- Cast, CastLike, Identity ------------------------------------------ */

static ait_status check_cast(op_ctx *c, ait_dtype from, int64_t to)
{
    if (to <= 0 || to > AIT_I2 || !ait_dtype_size((ait_dtype)to))
        return err_set(c->err, AIT_E_UNSUPPORTED, "cast to ONNX data type %lld is not supported",
                       (long long)to);
    if (!ait_dtype_size(from))
        return err_set(c->err, AIT_E_UNSUPPORTED, "cast from %s is not supported",
                       ait_dtype_name(from));
    TRY(check_dtype_version(c, from, "the input"));
    return check_dtype_version(c, (ait_dtype)to, "the target type");
}

/* saturate (versions 19 on) and round_mode (24 on) for the small types;
 * versions before 24 turn +-inf into NaN in the FNUZ types (Cast-19's table). */
static ait_status cast_attrs(op_ctx *c, cast_mode *m)
{
    int v = c->n->version;
    int64_t sat = v >= 19 ? attr_int(c->n, "saturate", 1) : 1;
    if (sat != 0 && sat != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "saturate is %lld; it must be 0 or 1",
                       (long long)sat);
    const char *r = v >= 24 ? attr_str(c->n, "round_mode", "up") : "up";
    static const char *const modes[] = {[E8M0_UP] = "up", [E8M0_DOWN] = "down",
                                        [E8M0_NEAREST] = "nearest"};
    *m = (cast_mode){.no_saturate = !sat, .fnuz_inf_nan = v < 24, .e8m0_round = -1};
    for (int i = 0; i < 3; i++)
        if (strcmp(r, modes[i]) == 0) m->e8m0_round = i;
    if (m->e8m0_round < 0)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "round_mode '%s' is not one of 'up', 'down', 'nearest'", r);
    return AIT_OK;
}

static ait_status infer_cast(op_ctx *c)
{
    const attr *to = node_attr(c->n, "to");
    if (!to || to->type != ATTR_INT)
        return err_set(c->err, AIT_E_INVALID_ARG, "Cast needs an integer attribute 'to'");
    if (!has_in(c, 0)) return err_set(c->err, AIT_E_INVALID_ARG, "input 0 is missing");
    TRY(check_cast(c, c->in[0]->dtype, to->i));
    cast_mode m;
    TRY(cast_attrs(c, &m));
    return same_shape(c, (ait_dtype)to->i);
}

static ait_status infer_castlike(op_ctx *c)
{
    if (!has_in(c, 0) || !has_in(c, 1))
        return err_set(c->err, AIT_E_INVALID_ARG, "CastLike needs two inputs");
    TRY(check_cast(c, c->in[0]->dtype, c->in[1]->dtype));
    cast_mode m;
    TRY(cast_attrs(c, &m));
    return same_shape(c, c->in[1]->dtype);
}

static ait_status run_cast(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    if (x->dtype == AIT_STRING || y->dtype == AIT_STRING) return str_cast(c, x, y);
    if (dtype_is_small(x->dtype) || dtype_is_small(y->dtype)) {
        cast_mode m;
        TRY(cast_attrs(c, &m));
        return small_convert(x->data, x->dtype, y->data, y->dtype, tensor_numel(x), &m, c->err);
    }
    return convert_elems(x->data, x->dtype, y->data, y->dtype, tensor_numel(x), c->err);
}

/* BitCast: the same bytes read as another type of the same width. Packed
 * sub-byte types (int4, uint4, float4e2m1, int2, uint2) are refused: their
 * widths are not whole bytes. */
static bool bitcastable(ait_dtype t)
{
    return ait_dtype_size(t) > 0 && !(t >= 21 && t <= 23) && t != 25 && t != 26;
}

static ait_status infer_bitcast(op_ctx *c)
{
    const attr *to = node_attr(c->n, "to");
    if (!to || to->type != ATTR_INT)
        return err_set(c->err, AIT_E_INVALID_ARG, "BitCast needs an integer attribute 'to'");
    ait_dtype from = c->in[0]->dtype, dt = (ait_dtype)to->i;
    if (to->i < 0 || to->i > 64 || !bitcastable(dt))
        return err_set(c->err, AIT_E_UNSUPPORTED, "BitCast to ONNX data type %lld is not "
                       "supported", (long long)to->i);
    if (!bitcastable(from))
        return err_set(c->err, AIT_E_UNSUPPORTED, "BitCast from %s is not supported",
                       ait_dtype_name(from));
    if (ait_dtype_size(from) != ait_dtype_size(dt))
        return err_set(c->err, AIT_E_DTYPE, "BitCast from %s (%zu bits) to %s (%zu bits): the "
                       "widths must be equal", ait_dtype_name(from), 8 * ait_dtype_size(from),
                       ait_dtype_name(dt), 8 * ait_dtype_size(dt));
    return same_shape(c, dt);
}

static void copy_in0(op_ctx *c)
{
    if (c->out[0]->data != c->in[0]->data)
        memcpy(c->out[0]->data, c->in[0]->data, tensor_nbytes(c->in[0]));
}

static ait_status infer_identity(op_ctx *c)
{
    TRY(same_shape(c, AIT_UNDEFINED));
    if (!ait_dtype_size(c->in[0]->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "Identity of %s tensors is not supported",
                       ait_dtype_name(c->in[0]->dtype));
    return AIT_OK;
}

static ait_status run_bitcast(op_ctx *c)
{
    copy_in0(c);
    return AIT_OK;
}

static ait_status run_identity(op_ctx *c)
{
    if (c->in[0]->kind != VAL_TENSOR) return tensor_copy_into(c->out[0], c->in[0], c->err);
    copy_in0(c);
    return AIT_OK;
}

/* ---- Dropout ----------------------------------------------------------- */

/* Mersenne Twister MT19937 with numpy's legacy seeding and 53-bit doubles,
 * so that a seeded training-mode Dropout draws what
 * numpy.random.seed(seed); numpy.random.uniform(0, 1, shape) draws (the
 * ONNX reference implementation). */
typedef struct mt19937 {
    uint32_t s[624];
    int i;
} mt19937;

static void mt_seed(mt19937 *m, uint32_t seed)
{
    m->s[0] = seed;
    for (uint32_t k = 1; k < 624; k++)
        m->s[k] = 1812433253u * (m->s[k - 1] ^ (m->s[k - 1] >> 30)) + k;
    m->i = 624;
}

static uint32_t mt_next(mt19937 *m)
{
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->s[k] & 0x80000000u) | (m->s[(k + 1) % 624] & 0x7fffffffu);
            m->s[k] = m->s[(k + 397) % 624] ^ (y >> 1) ^ (y & 1u ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->s[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double mt_double(mt19937 *m)
{
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* Before opset 12 Dropout has only the data input (inference: identity);
 * since then optional ratio and training_mode inputs. The mask is bool since
 * opset 10, of the data's type before. */
static ait_status infer_dropout(op_ctx *c)
{
    TRY(same_shape(c, AIT_UNDEFINED));
    unsigned fl = c->n->version >= 22 ? FLT | F8 : FLT;
    TRY(check_class(c, c->in[0], "data", fl));
    if (c->n->version < 12 && c->n_in > 1)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "Dropout before opset 12 takes no ratio or training_mode inputs");
    if (has_in(c, 1)) {
        TRY(check_class(c, c->in[1], "ratio", fl));
        TRY(check_scalar(c, c->in[1], "ratio"));
    }
    if (has_in(c, 2)) {
        TRY(check_class(c, c->in[2], "training_mode", BOOL));
        TRY(check_scalar(c, c->in[2], "training_mode"));
    }
    set_out(c, 1, c->n->version >= 10 ? AIT_BOOL : c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status run_dropout(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *mask = has_out(c, 1) ? c->out[1] : NULL;
    int64_t n = tensor_numel(x);
    bool training = has_in(c, 2) && ((const uint8_t *)c->in[2]->data)[0] != 0;
    double ratio = has_in(c, 1) ? elem_get_f64(c->in[1]->data, c->in[1]->dtype, 0) : 0.5;
    if (training && !(ratio >= 0 && ratio < 1))
        return err_set(c->err, AIT_E_INVALID_ARG, "ratio %g is outside [0, 1)", ratio);

    if (!training || ratio == 0) { /* inference: identity, nothing dropped */
        copy_in0(c);
        if (mask) {
            size_t es = ait_dtype_size(mask->dtype);
            _Alignas(8) unsigned char one[8];
            elem_set_f64(one, mask->dtype, 0, 1.0);
            for (int64_t i = 0; i < n; i++) memcpy((char *)mask->data + i * es, one, es);
        }
        return AIT_OK;
    }

    static uint32_t unseeded; /* distinct streams for nodes without a seed */
    const attr *sa = node_attr(c->n, "seed");
    uint32_t seed = sa ? (uint32_t)sa->i
                       : (uint32_t)time(NULL) ^ __atomic_add_fetch(&unseeded, 0x9e3779b9u,
                                                                   __ATOMIC_RELAXED);
    mt19937 rng;
    mt_seed(&rng, seed);
    double scale = 1 / (1 - ratio), buf[CHUNK];
    size_t es = ait_dtype_size(x->dtype);
    uint8_t *m = mask ? mask->data : NULL;
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t len = n - o < CHUNK ? n - o : CHUNK;
        TRY(convert_elems((const char *)x->data + o * es, x->dtype, buf, AIT_F64, len, c->err));
        for (int64_t i = 0; i < len; i++) {
            bool keep = mt_double(&rng) >= ratio;
            buf[i] = keep ? buf[i] * scale : 0;
            if (m) m[o + i] = keep;
        }
        TRY(convert_elems(buf, AIT_F64, (char *)c->out[0]->data + o * es, x->dtype, len,
                          c->err));
    }
    return AIT_OK;
}

/* ---- registration ------------------------------------------------------ */

#define X_DEF(NAME, TYPES, INTS, AN, AD, BN, BD, EXPR)                                   \
    {#NAME, 1, 1, 1, 1, 0, infer_unary, run_unary},

OP_TABLE(unary, UNARY_OPS(X_DEF)
         {"Clip", 1, 3, 1, 1, 0, infer_clip, run_clip},
         {"IsNaN", 1, 1, 1, 1, 0, infer_isclass, run_isnan},
         {"IsInf", 1, 1, 1, 1, 0, infer_isclass, run_isinf},
         {"Not", 1, 1, 1, 1, 0, infer_not, run_not},
         {"BitwiseNot", 1, 1, 1, 1, 0, infer_bitwise_not, run_bitwise_not},
         {"Cast", 1, 1, 1, 1, OP_STR_OWNS, infer_cast, run_cast},
         {"CastLike", 2, 2, 1, 1, OP_STR_OWNS, infer_castlike, run_cast},
         {"BitCast", 1, 1, 1, 1, 0, infer_bitcast, run_bitcast},
         {"Identity", 1, 1, 1, 1, OP_TAKES_SEQUENCES | OP_STR_MOVES, infer_identity, run_identity},
         {"Dropout", 1, 3, 1, 2, OP_NONDETERMINISTIC, infer_dropout, run_dropout});
