/* Elementwise ops with numpy (multidirectional) broadcasting: arithmetic,
 * comparison, logic, bitwise, the variadic Max/Min/Sum/Mean, Where and PRelu.
 *
 * One driver (bcast_run) walks the broadcast output and calls a kernel on
 * the innermost run of elements, where each input advances by 1 or 0 (a
 * broadcast operand). Adjacent axes along which every operand is contiguous
 * are merged first, so same-shape inputs are one call, a scalar operand is
 * one call with stride 0, and a bias along the last axis is one call per row.
 * Kernels exist for float32/float64 and the integer types; float16 and
 * bfloat16 are converted to float32, computed, and converted back.
 *
 * Only opset >= 7 semantics: the legacy broadcast/axis attributes are
 * rejected when an axis is given (without one, legacy suffix broadcasting
 * is a special case of numpy broadcasting).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "ops/op.h"
#include "ops/strings.h"

#if defined(__GNUC__) && !defined(__clang__)
/* Elementwise loops have no loop-carried dependence even when the output is
 * an input (the in-place accumulation of Max/Min/Sum/Mean), which GCC's
 * overlap check would otherwise send down the scalar path. */
#define IVDEP _Pragma("GCC ivdep")
#else
#define IVDEP
#endif

/* ---- broadcasting driver ------------------------------------------------ */

/* Computes n output elements; input j's element i is at in[j] + i * st[j]
 * (st[j] is 1, or 0 for a broadcast operand). */
typedef void (*kern_fn)(void *out, const void *const *in, const int64_t *st, int64_t n);

#define MAX_OPERANDS 3
#define KT_SIZE (AIT_BF16 + 1) /* kernel tables are indexed by dtype */

typedef struct operand {
    const void *data;
    const tensor *shape; /* dims to broadcast from (data is not read) */
    size_t esz;
} operand;

/* Runs k over the output of shape oshape (element size oesz) with nin
 * operands broadcast to it. */
static void bcast_run(kern_fn k, void *out, size_t oesz, const tensor *oshape, int nin,
                      const operand *ops)
{
    int rank = oshape->rank;
    const int64_t *dims = oshape->dims;
    int64_t st[MAX_OPERANDS][AIT_MAX_RANK];
    for (int j = 0; j < nin; j++) bcast_strides(ops[j].shape, rank, dims, st[j]);

    /* Drop size-1 axes and merge axis i into the previous one when every
     * operand steps across the pair as across one axis. */
    int64_t cd[AIT_MAX_RANK], cs[MAX_OPERANDS][AIT_MAX_RANK];
    int cr = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue;
        bool merge = cr > 0;
        for (int j = 0; j < nin && merge; j++) merge = cs[j][cr - 1] == st[j][i] * dims[i];
        if (merge) {
            cd[cr - 1] *= dims[i];
            for (int j = 0; j < nin; j++) cs[j][cr - 1] = st[j][i];
        } else {
            cd[cr] = dims[i];
            for (int j = 0; j < nin; j++) cs[j][cr] = st[j][i];
            cr++;
        }
    }
    if (cr == 0) { /* a single element */
        cd[0] = 1;
        for (int j = 0; j < nin; j++) cs[j][0] = 0;
        cr = 1;
    }

    /* Row-major strides make the innermost stride 1 or 0. */
    int64_t inner = cd[cr - 1], ist[MAX_OPERANDS], off[MAX_OPERANDS] = {0};
    int64_t idx[AIT_MAX_RANK] = {0}, outer = 1;
    for (int j = 0; j < nin; j++) ist[j] = cs[j][cr - 1];
    for (int d = 0; d < cr - 1; d++) outer *= cd[d];
    const void *p[MAX_OPERANDS];
    char *o = out;
    for (int64_t r = 0; r < outer; r++, o += inner * (int64_t)oesz) {
        for (int j = 0; j < nin; j++) p[j] = (const char *)ops[j].data + off[j] * (int64_t)ops[j].esz;
        k(o, p, ist, inner);
        for (int d = cr - 2; d >= 0; d--) { /* odometer step over the outer axes */
            for (int j = 0; j < nin; j++) off[j] += cs[j][d];
            if (++idx[d] < cd[d]) break;
            for (int j = 0; j < nin; j++) off[j] -= cs[j][d] * cd[d];
            idx[d] = 0;
        }
    }
}

/* ---- kernels ------------------------------------------------------------- */

/* X(name, expr, S, T, U): S names the dtype (AIT_##S), T is its C type and U
 * an unsigned type at least as wide as int, for wrapping integer arithmetic
 * without signed overflow or promotion to int. */
#define FOR_FLT(X, N, E) X(N, E, F32, float, float) X(N, E, F64, double, double)
#define FOR_SINT(X, N, E)                                                                    \
    X(N, E, I8, int8_t, uint32_t) X(N, E, I16, int16_t, uint32_t)                            \
    X(N, E, I32, int32_t, uint32_t) X(N, E, I64, int64_t, uint64_t)
#define FOR_UINT(X, N, E)                                                                    \
    X(N, E, U8, uint8_t, uint32_t) X(N, E, U16, uint16_t, uint32_t)                          \
    X(N, E, U32, uint32_t, uint32_t) X(N, E, U64, uint64_t, uint64_t)
#define FOR_INT(X, N, E) FOR_SINT(X, N, E) FOR_UINT(X, N, E)
#define FOR_NUM(X, N, E) FOR_FLT(X, N, E) FOR_INT(X, N, E)

/* A binary kernel N_S computing OT o = E from `a` and `b` of type T; E may
 * name the types as ty and uty. The four loops let the compiler vectorise
 * the same-shape and scalar-operand cases. */
#define BIN_K(N, E, S, T, U, OT)                                                             \
    static void N##_##S(void *out, const void *const *in, const int64_t *st, int64_t n)      \
    {                                                                                        \
        typedef T ty;                                                                        \
        typedef U uty;                                                                       \
        const ty *pa = in[0], *pb = in[1];                                                   \
        OT *o = out;                                                                         \
        (void)sizeof(uty);                                                                   \
        if (st[0] && st[1]) {                                                                \
            IVDEP for (int64_t i = 0; i < n; i++) {                                          \
                ty a = pa[i], b = pb[i];                                                     \
                o[i] = (OT)(E);                                                              \
            }                                                                                \
        } else if (st[0]) {                                                                  \
            const ty b = pb[0];                                                              \
            IVDEP for (int64_t i = 0; i < n; i++) {                                                \
                ty a = pa[i];                                                                \
                o[i] = (OT)(E);                                                              \
            }                                                                                \
        } else if (st[1]) {                                                                  \
            const ty a = pa[0];                                                              \
            IVDEP for (int64_t i = 0; i < n; i++) {                                                \
                ty b = pb[i];                                                                \
                o[i] = (OT)(E);                                                              \
            }                                                                                \
        } else {                                                                             \
            const ty a = pa[0], b = pb[0];                                                   \
            const OT v = (OT)(E);                                                            \
            for (int64_t i = 0; i < n; i++) o[i] = v;                                        \
        }                                                                                    \
    }
#define SAME_K(N, E, S, T, U) BIN_K(N, E, S, T, U, T)
#define BOOL_K(N, E, S, T, U) BIN_K(N, E, S, T, U, uint8_t)
#define K_ENTRY(N, E, S, T, U) [AIT_##S] = N##_##S,

/* Python-style remainder (sign of the divisor), for Mod with fmod=0. */
static inline float pymod_f(float a, float b)
{
    float r = fmodf(a, b);
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
static inline double pymod_d(double a, double b)
{
    double r = fmod(a, b);
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
static inline int64_t pymod_i(int64_t a, int64_t b)
{
    if (b == -1) return 0; /* INT64_MIN % -1 traps */
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
#define PYMOD(a, b) _Generic((a), float: pymod_f, default: pymod_d)(a, b)
#define FMOD(a, b) _Generic((a), float: fmodf, default: fmod)(a, b)
#define POW(a, b) _Generic((a), float: powf, default: pow)(a, b)

/* Integer power with wrapping; a negative exponent gives the truncated
 * reciprocal (0 unless |a| == 1; 0 for a == 0). */
static int64_t ipow(int64_t a, int64_t b)
{
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a;
    for (; b; b >>= 1, x *= x)
        if (b & 1) r *= x;
    return (int64_t)r;
}

/* Integer Div and Mod check the divisor for zeros before running. */
FOR_NUM(SAME_K, add, (ty)((uty)a + (uty)b))
FOR_NUM(SAME_K, sub, (ty)((uty)a - (uty)b))
FOR_NUM(SAME_K, mul, (ty)((uty)a * (uty)b))
FOR_FLT(SAME_K, div, a / b)
FOR_SINT(SAME_K, div, b == -1 ? (ty)(0 - (uty)a) : (ty)(a / b)) /* MIN / -1 traps */
FOR_UINT(SAME_K, div, (ty)(a / b))
FOR_FLT(SAME_K, fmod, FMOD(a, b))
FOR_SINT(SAME_K, fmod, b == -1 ? 0 : (ty)(a % b))
FOR_UINT(SAME_K, fmod, (ty)(a % b))
FOR_FLT(SAME_K, pymod, PYMOD(a, b))
FOR_SINT(SAME_K, pymod, (ty)pymod_i(a, b))
FOR_UINT(SAME_K, pymod, (ty)(a % b))
FOR_FLT(SAME_K, max, (a > b || a != a) ? a : b) /* NaN propagates, as np.maximum */
FOR_INT(SAME_K, max, a > b ? a : b)
FOR_FLT(SAME_K, min, (a < b || a != a) ? a : b)
FOR_INT(SAME_K, min, a < b ? a : b)
FOR_FLT(SAME_K, prelu, a < 0 ? a * b : a)
FOR_SINT(SAME_K, prelu, a < 0 ? (ty)((uty)a * (uty)b) : a)
FOR_NUM(BOOL_K, eq, a == b)
BOOL_K(eq, a == b, BOOL, uint8_t, uint32_t)
FOR_NUM(BOOL_K, lt, a < b)
FOR_NUM(BOOL_K, le, a <= b)
FOR_NUM(BOOL_K, gt, a > b)
FOR_NUM(BOOL_K, ge, a >= b)
BOOL_K(and, (a != 0) & (b != 0), BOOL, uint8_t, uint32_t)
BOOL_K(or, (a != 0) | (b != 0), BOOL, uint8_t, uint32_t)
BOOL_K(xor, (a != 0) ^ (b != 0), BOOL, uint8_t, uint32_t)
FOR_INT(SAME_K, band, (ty)(a & b))
FOR_INT(SAME_K, bor, (ty)(a | b))
FOR_INT(SAME_K, bxor, (ty)(a ^ b))
/* Shifting by the bit width or more gives 0 (numpy's rule; UB in C). */
FOR_UINT(SAME_K, shl, (uint64_t)b >= 8 * sizeof(ty) ? 0 : (ty)((uty)a << b))
FOR_UINT(SAME_K, shr, (uint64_t)b >= 8 * sizeof(ty) ? 0 : (ty)(a >> b))
SAME_K(pow, POW(a, b), F64, double, double)
SAME_K(pow, ipow(a, b), I64, int64_t, uint64_t)

/* float32 Pow, with x^2 (x*x, as in decomposed LayerNorm) made cheap. */
static void pow_F32(void *out, const void *const *in, const int64_t *st, int64_t n)
{
    const float *pa = in[0], *pb = in[1];
    float *o = out;
    if (st[0] && !st[1] && pb[0] == 2.0f) {
        for (int64_t i = 0; i < n; i++) o[i] = pa[i] * pa[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) o[i] = powf(pa[i * st[0]], pb[i * st[1]]);
}

static const kern_fn add_k[KT_SIZE] = {FOR_NUM(K_ENTRY, add, _)};
static const kern_fn sub_k[KT_SIZE] = {FOR_NUM(K_ENTRY, sub, _)};
static const kern_fn mul_k[KT_SIZE] = {FOR_NUM(K_ENTRY, mul, _)};
static const kern_fn div_k[KT_SIZE] = {FOR_NUM(K_ENTRY, div, _)};
static const kern_fn fmod_k[KT_SIZE] = {FOR_NUM(K_ENTRY, fmod, _)};
static const kern_fn pymod_k[KT_SIZE] = {FOR_NUM(K_ENTRY, pymod, _)};
static const kern_fn max_k[KT_SIZE] = {FOR_NUM(K_ENTRY, max, _)};
static const kern_fn min_k[KT_SIZE] = {FOR_NUM(K_ENTRY, min, _)};
static const kern_fn prelu_k[KT_SIZE] = {FOR_FLT(K_ENTRY, prelu, _) FOR_SINT(K_ENTRY, prelu, _)};
static const kern_fn eq_k[KT_SIZE] = {FOR_NUM(K_ENTRY, eq, _)[AIT_BOOL] = eq_BOOL};
static const kern_fn lt_k[KT_SIZE] = {FOR_NUM(K_ENTRY, lt, _)};
static const kern_fn le_k[KT_SIZE] = {FOR_NUM(K_ENTRY, le, _)};
static const kern_fn gt_k[KT_SIZE] = {FOR_NUM(K_ENTRY, gt, _)};
static const kern_fn ge_k[KT_SIZE] = {FOR_NUM(K_ENTRY, ge, _)};
static const kern_fn and_k[KT_SIZE] = {[AIT_BOOL] = and_BOOL};
static const kern_fn or_k[KT_SIZE] = {[AIT_BOOL] = or_BOOL};
static const kern_fn xor_k[KT_SIZE] = {[AIT_BOOL] = xor_BOOL};
static const kern_fn band_k[KT_SIZE] = {FOR_INT(K_ENTRY, band, _)};
static const kern_fn bor_k[KT_SIZE] = {FOR_INT(K_ENTRY, bor, _)};
static const kern_fn bxor_k[KT_SIZE] = {FOR_INT(K_ENTRY, bxor, _)};
static const kern_fn shl_k[KT_SIZE] = {FOR_UINT(K_ENTRY, shl, _)};
static const kern_fn shr_k[KT_SIZE] = {FOR_UINT(K_ENTRY, shr, _)};

/* Type-blind kernels, by element size: Where, and copy (broadcast input 0). */
#define MOVE_K(B, T)                                                                         \
    static void where_##B(void *out, const void *const *in, const int64_t *st, int64_t n)    \
    {                                                                                        \
        const uint8_t *c = in[0];                                                            \
        const T *x = in[1], *y = in[2];                                                      \
        T *o = out;                                                                          \
        if (st[0] && st[1] && st[2]) { /* load both so the select is branch-free */      \
            for (int64_t i = 0; i < n; i++) {                                                \
                T xv = x[i], yv = y[i];                                                      \
                o[i] = c[i] ? xv : yv;                                                       \
            }                                                                                \
        } else {                                                                             \
            for (int64_t i = 0; i < n; i++) o[i] = c[i * st[0]] ? x[i * st[1]] : y[i * st[2]]; \
        }                                                                                    \
    }                                                                                        \
    static void copy_##B(void *out, const void *const *in, const int64_t *st, int64_t n)     \
    {                                                                                        \
        const T *x = in[0];                                                                  \
        T *o = out;                                                                          \
        if (st[0]) memcpy(o, x, (size_t)n * sizeof(T));                                      \
        else                                                                                 \
            for (int64_t i = 0; i < n; i++) o[i] = x[0];                                     \
    }
MOVE_K(1, uint8_t)
MOVE_K(2, uint16_t)
MOVE_K(4, uint32_t)
MOVE_K(8, uint64_t)

static kern_fn by_size(size_t esz, bool where)
{
    switch (esz) {
    case 1: return where ? where_1 : copy_1;
    case 2: return where ? where_2 : copy_2;
    case 4: return where ? where_4 : copy_4;
    case 8: return where ? where_8 : copy_8;
    default: return NULL;
    }
}

/* ---- conversion and scratch ---------------------------------------------- */

/* The dtype kernels compute in: float16 and bfloat16 go through float32. */
static ait_dtype compute_dtype(ait_dtype t) { return t == AIT_F16 || t == AIT_BF16 ? AIT_F32 : t; }

/* Runs k over the output with nin inputs seen as dtypes kin[] (converted in
 * scratch where they differ) and a kernel result of dtype kout (converted
 * to the output's dtype if different). */
static ait_status apply(op_ctx *c, kern_fn k, int nin, const ait_dtype *kin, ait_dtype kout)
{
    tensor *out = c->out[0];
    int64_t n = tensor_numel(out);
    if (n == 0) return AIT_OK;
    size_t bytes[MAX_OPERANDS + 1] = {0};
    void *s[MAX_OPERANDS + 1];
    for (int j = 0; j < nin; j++)
        if (c->in[j]->dtype != kin[j])
            bytes[j] = (size_t)tensor_numel(c->in[j]) * ait_dtype_size(kin[j]);
    if (out->dtype != kout) bytes[nin] = (size_t)n * ait_dtype_size(kout);
    TRY(op_scratch_parts(c, nin + 1, bytes, s));

    operand ops[MAX_OPERANDS];
    for (int j = 0; j < nin; j++) {
        const tensor *t = c->in[j];
        ops[j] = (operand){t->data, t, ait_dtype_size(kin[j])};
        if (t->dtype != kin[j]) {
            TRY(convert_elems(t->data, t->dtype, s[j], kin[j], tensor_numel(t), c->err));
            ops[j].data = s[j];
        }
    }
    void *o = out->dtype != kout ? s[nin] : out->data;
    bcast_run(k, o, ait_dtype_size(kout), out, nin, ops);
    if (out->dtype != kout) TRY(convert_elems(o, kout, out->data, out->dtype, n, c->err));
    return AIT_OK;
}

/* ---- shared checks --------------------------------------------------------- */

#define M(t) (1u << (t))
#define T_FLOAT (M(AIT_F32) | M(AIT_F64) | M(AIT_F16) | M(AIT_BF16))
#define T_UINT (M(AIT_U8) | M(AIT_U16) | M(AIT_U32) | M(AIT_U64))
#define T_INT (M(AIT_I8) | M(AIT_I16) | M(AIT_I32) | M(AIT_I64) | T_UINT)
#define T_NUM (T_FLOAT | T_INT)
#define T_BOOL M(AIT_BOOL)

static ait_status need_dtype(op_ctx *c, int i, unsigned mask)
{
    ait_dtype t = c->in[i]->dtype;
    if ((unsigned)t < 32 && (mask & M(t))) return AIT_OK;
    return err_set(c->err, AIT_E_DTYPE, "input %d has unsupported dtype %s", i,
                   ait_dtype_name(t));
}

/* Inputs from..to-1 present, of one dtype, allowed by mask. */
static ait_status same_dtypes(op_ctx *c, int from, int to, unsigned mask)
{
    for (int i = from; i < to; i++) {
        if (!has_in(c, i)) return err_set(c->err, AIT_E_INVALID_ARG, "input %d is missing", i);
        if (c->in[i]->dtype != c->in[from]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "input %d is %s but input %d is %s", i,
                           ait_dtype_name(c->in[i]->dtype), from,
                           ait_dtype_name(c->in[from]->dtype));
    }
    return need_dtype(c, from, mask);
}

/* Broadcast shape of inputs from..to-1 (present); also checks its size. */
static ait_status bcast_all(op_ctx *c, int from, int to, ait_dtype odt, int *rank,
                            int64_t *dims)
{
    tensor acc = *c->in[from];
    *rank = acc.rank;
    memcpy(dims, acc.dims, sizeof acc.dims);
    for (int i = from + 1; i < to; i++) {
        TRY(broadcast_shape(c, &acc, c->in[i], rank, dims));
        acc.rank = *rank;
        memcpy(acc.dims, dims, sizeof acc.dims);
    }
    int64_t n;
    return shape_numel(dims, *rank, odt, &n, "output", c->err);
}

/* Opsets < 7 broadcast B onto A from `axis`; only the numpy form is
 * supported, which matches legacy broadcasting when no axis is given. */
static ait_status no_legacy_axis(op_ctx *c)
{
    if (node_attr(c->n, "broadcast") && node_attr(c->n, "axis"))
        return err_set(c->err, AIT_E_UNSUPPORTED,
                       "legacy (opset < 7) broadcast with an 'axis' attribute is not supported");
    return AIT_OK;
}

static bool any_zero(const tensor *t)
{
    int64_t n = tensor_numel(t);
    switch (ait_dtype_size(t->dtype)) {
    case 1: for (int64_t i = 0; i < n; i++) if (!((const uint8_t *)t->data)[i]) return true; break;
    case 2: for (int64_t i = 0; i < n; i++) if (!((const uint16_t *)t->data)[i]) return true; break;
    case 4: for (int64_t i = 0; i < n; i++) if (!((const uint32_t *)t->data)[i]) return true; break;
    case 8: for (int64_t i = 0; i < n; i++) if (!((const uint64_t *)t->data)[i]) return true; break;
    }
    return false;
}

/* ---- two-input ops with one kernel table ----------------------------------- */

enum { V_NONE, V_MOD, V_SHIFT }; /* how an attribute picks the kernel table */

typedef struct binop {
    const char *name;
    unsigned types;
    bool to_bool, divides; /* output bool; integer zero divisor is an error */
    int variant;
    const kern_fn *k, *alt; /* alt: Mod fmod=0, BitShift RIGHT */
} binop;

static const binop binops[] = {
    {"Add", T_NUM, false, false, V_NONE, add_k, NULL},
    {"Sub", T_NUM, false, false, V_NONE, sub_k, NULL},
    {"Mul", T_NUM, false, false, V_NONE, mul_k, NULL},
    {"Div", T_NUM, false, true, V_NONE, div_k, NULL},
    {"Mod", T_NUM, false, true, V_MOD, fmod_k, pymod_k},
    {"Equal", T_NUM | T_BOOL | M(AIT_STRING), true, false, V_NONE, eq_k, NULL},
    {"Less", T_NUM, true, false, V_NONE, lt_k, NULL},
    {"LessOrEqual", T_NUM, true, false, V_NONE, le_k, NULL},
    {"Greater", T_NUM, true, false, V_NONE, gt_k, NULL},
    {"GreaterOrEqual", T_NUM, true, false, V_NONE, ge_k, NULL},
    {"And", T_BOOL, true, false, V_NONE, and_k, NULL},
    {"Or", T_BOOL, true, false, V_NONE, or_k, NULL},
    {"Xor", T_BOOL, true, false, V_NONE, xor_k, NULL},
    {"BitwiseAnd", T_INT, false, false, V_NONE, band_k, NULL},
    {"BitwiseOr", T_INT, false, false, V_NONE, bor_k, NULL},
    {"BitwiseXor", T_INT, false, false, V_NONE, bxor_k, NULL},
    {"BitShift", T_UINT, false, false, V_SHIFT, shl_k, shr_k},
};

static const binop *find_binop(const char *name)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (strcmp(binops[i].name, name) == 0) return &binops[i];
    return NULL;
}

/* The kernel table the node's attributes select; validates them. */
static ait_status pick_table(op_ctx *c, const binop *op, const kern_fn **tab)
{
    *tab = op->k;
    if (op->variant == V_MOD) {
        int64_t fm = attr_int(c->n, "fmod", 0);
        if (fm != 0 && fm != 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "fmod must be 0 or 1, not %lld",
                           (long long)fm);
        if (fm == 0) *tab = op->alt;
    } else if (op->variant == V_SHIFT) {
        const char *d = attr_str(c->n, "direction", NULL);
        if (!d || (strcmp(d, "LEFT") != 0 && strcmp(d, "RIGHT") != 0))
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "direction must be \"LEFT\" or \"RIGHT\", not %s%s%s", d ? "\"" : "",
                           d ? d : "missing", d ? "\"" : "");
        if (strcmp(d, "RIGHT") == 0) *tab = op->alt;
    }
    return AIT_OK;
}

static ait_status infer_bin(op_ctx *c)
{
    const binop *op = find_binop(c->n->op);
    if (!op) return err_set(c->err, AIT_E_INTERNAL, "no binary kernel for %s", c->n->op);
    const kern_fn *tab;
    TRY(no_legacy_axis(c));
    TRY(pick_table(c, op, &tab));
    TRY(same_dtypes(c, 0, 2, op->types));
    if (c->in[0]->dtype == AIT_STRING && c->n->version < 19)
        return err_set(c->err, AIT_E_DTYPE, "Equal takes strings from version 19 (this node "
                       "is version %d)", c->n->version);
    ait_dtype odt = op->to_bool ? AIT_BOOL : c->in[0]->dtype;
    int rank;
    int64_t dims[AIT_MAX_RANK];
    TRY(bcast_all(c, 0, 2, odt, &rank, dims));
    set_out(c, 0, odt, rank, dims);
    return AIT_OK;
}

static ait_status run_bin(op_ctx *c)
{
    const binop *op = find_binop(c->n->op);
    const kern_fn *tab;
    if (!op) return err_set(c->err, AIT_E_INTERNAL, "no binary kernel for %s", c->n->op);
    TRY(pick_table(c, op, &tab));
    if (c->in[0]->dtype == AIT_STRING) return str_equal(c); /* only Equal lets strings in */
    ait_dtype kd = compute_dtype(c->in[0]->dtype);
    kern_fn k = tab[kd];
    if (!k)
        return err_set(c->err, AIT_E_DTYPE, "unsupported dtype %s",
                       ait_dtype_name(c->in[0]->dtype));
    if (op->divides && dtype_is_int(kd) && tensor_numel(c->out[0]) > 0 && any_zero(c->in[1]))
        return err_set(c->err, AIT_E_INVALID_ARG, "integer division by zero (divisor has a 0)");
    ait_dtype kin[2] = {kd, kd};
    return apply(c, k, 2, kin, op->to_bool ? AIT_BOOL : kd);
}

/* ---- Pow: base and exponent of different dtypes ------------------------ */

static ait_status infer_pow(op_ctx *c)
{
    TRY(no_legacy_axis(c));
    TRY(need_dtype(c, 0, T_NUM));
    TRY(need_dtype(c, 1, T_NUM));
    int rank;
    int64_t dims[AIT_MAX_RANK];
    TRY(bcast_all(c, 0, 2, c->in[0]->dtype, &rank, dims));
    set_out(c, 0, c->in[0]->dtype, rank, dims);
    return AIT_OK;
}

/* A float base computes in float32 (float64 if either side is float64); an
 * integer base computes in int64, or in float64 with a float exponent and
 * is truncated back. */
static ait_status run_pow(op_ctx *c)
{
    ait_dtype bt = c->in[0]->dtype, et = c->in[1]->dtype, kd;
    if (dtype_is_float(bt)) kd = bt == AIT_F64 || et == AIT_F64 ? AIT_F64 : AIT_F32;
    else kd = dtype_is_float(et) ? AIT_F64 : AIT_I64;
    kern_fn k = kd == AIT_F32 ? pow_F32 : kd == AIT_F64 ? pow_F64 : pow_I64;
    ait_dtype kin[2] = {kd, kd};
    return apply(c, k, 2, kin, kd);
}

/* ---- PRelu: slope broadcasts to X ------------------------------------------ */

static ait_status infer_prelu(op_ctx *c)
{
    TRY(same_dtypes(c, 0, 2, T_NUM));
    int rank;
    int64_t dims[AIT_MAX_RANK];
    TRY(bcast_all(c, 0, 2, c->in[0]->dtype, &rank, dims));
    const tensor *x = c->in[0];
    if (rank != x->rank || memcmp(dims, x->dims, (size_t)rank * sizeof dims[0]) != 0) {
        char sx[128], ss[128];
        return err_set(c->err, AIT_E_SHAPE, "slope %s does not broadcast to X %s",
                       shape_str(c->in[1]->dims, c->in[1]->rank, ss, sizeof ss),
                       shape_str(x->dims, x->rank, sx, sizeof sx));
    }
    set_out(c, 0, x->dtype, x->rank, x->dims);
    return AIT_OK;
}

static ait_status run_prelu(op_ctx *c)
{
    const tensor *x = c->in[0];
    if (M(x->dtype) & T_UINT) { /* never negative: y = x */
        memcpy(c->out[0]->data, x->data, tensor_nbytes(x));
        return AIT_OK;
    }
    ait_dtype kd = compute_dtype(x->dtype);
    ait_dtype kin[2] = {kd, kd};
    return apply(c, prelu_k[kd], 2, kin, kd);
}

/* ---- Where ---------------------------------------------------------------- */

static ait_status infer_where(op_ctx *c)
{
    TRY(need_dtype(c, 0, T_BOOL));
    TRY(same_dtypes(c, 1, 3, T_NUM | T_BOOL | M(AIT_STRING)));
    int rank;
    int64_t dims[AIT_MAX_RANK];
    TRY(bcast_all(c, 0, 3, c->in[1]->dtype, &rank, dims));
    set_out(c, 0, c->in[1]->dtype, rank, dims);
    return AIT_OK;
}

static ait_status run_where(op_ctx *c)
{
    tensor *out = c->out[0];
    size_t esz = ait_dtype_size(out->dtype);
    operand ops[3];
    for (int j = 0; j < 3; j++)
        ops[j] = (operand){c->in[j]->data, c->in[j], ait_dtype_size(c->in[j]->dtype)};
    bcast_run(by_size(esz, true), out->data, esz, out, 3, ops);
    return AIT_OK;
}

/* ---- variadic Max, Min, Sum, Mean ------------------------------------------- */

static ait_status infer_var(op_ctx *c)
{
    bool mean = strcmp(c->n->op, "Mean") == 0;
    if (c->n_in < 1) return err_set(c->err, AIT_E_INVALID_ARG, "needs at least one input");
    TRY(same_dtypes(c, 0, c->n_in, mean ? T_FLOAT : T_NUM));
    int rank;
    int64_t dims[AIT_MAX_RANK];
    TRY(bcast_all(c, 0, c->n_in, c->in[0]->dtype, &rank, dims));
    set_out(c, 0, c->in[0]->dtype, rank, dims);
    return AIT_OK;
}

/* Folds the inputs into an accumulator of the output's shape (the output
 * itself unless it is float16/bfloat16, then a float32 buffer). */
static ait_status run_var(op_ctx *c)
{
    const char *name = c->n->op;
    bool mean = strcmp(name, "Mean") == 0;
    const kern_fn *tab = strcmp(name, "Max") == 0 ? max_k : strcmp(name, "Min") == 0 ? min_k : add_k;
    tensor *out = c->out[0];
    int64_t n = tensor_numel(out);
    if (n == 0) return AIT_OK;
    ait_dtype kd = compute_dtype(out->dtype);
    size_t esz = ait_dtype_size(kd);
    kern_fn k = tab[kd];
    if (!k) return err_set(c->err, AIT_E_DTYPE, "unsupported dtype %s", ait_dtype_name(kd));

    /* float16/bfloat16: the accumulator, then each converted input, in scratch */
    bool conv = out->dtype != kd;
    scratch_layout sp = {0};
    if (conv) { /* the sizing pass */
        scratch_take(&sp, n, esz);
        for (int i = 0; i < c->n_in; i++) scratch_take(&sp, tensor_numel(c->in[i]), esz);
        TRY(scratch_commit(c, &sp));
    }
    void *acc = conv ? scratch_take(&sp, n, esz) : out->data;

    operand ops[2] = {{acc, out, esz}, {0}};
    for (int i = 0; i < c->n_in; i++) {
        const tensor *t = c->in[i];
        operand x = {t->data, t, esz};
        if (conv) {
            void *buf = scratch_take(&sp, tensor_numel(t), esz);
            TRY(convert_elems(t->data, t->dtype, buf, kd, tensor_numel(t), c->err));
            x.data = buf;
        }
        if (i == 0 && c->n_in == 1) {
            bcast_run(by_size(esz, false), acc, esz, out, 1, &x);
        } else if (i == 0) {
            ops[0] = x; /* the first step combines inputs 0 and 1 */
        } else {
            ops[1] = x;
            bcast_run(k, acc, esz, out, 2, ops);
            ops[0] = (operand){acc, out, esz};
        }
    }
    if (mean) {
        if (kd == AIT_F32) {
            float *a = acc, d = (float)c->n_in;
            for (int64_t i = 0; i < n; i++) a[i] /= d;
        } else {
            double *a = acc;
            for (int64_t i = 0; i < n; i++) a[i] /= c->n_in;
        }
    }
    if (conv) TRY(convert_elems(acc, kd, out->data, out->dtype, n, c->err));
    return AIT_OK;
}

#define BIN(name) {name, 2, 2, 1, 1, 0, infer_bin, run_bin}
#define VAR(name) {name, 1, INT_MAX, 1, 1, OP_VARIADIC, infer_var, run_var}

OP_TABLE(binary, BIN("Add"), BIN("Sub"), BIN("Mul"), BIN("Div"), BIN("Mod"),
         {"Equal", 2, 2, 1, 1, OP_STR_OWNS, infer_bin, run_bin},
         BIN("Less"), BIN("LessOrEqual"), BIN("Greater"), BIN("GreaterOrEqual"), BIN("And"),
         BIN("Or"), BIN("Xor"), BIN("BitwiseAnd"), BIN("BitwiseOr"), BIN("BitwiseXor"),
         BIN("BitShift"), VAR("Max"), VAR("Min"), VAR("Sum"), VAR("Mean"),
         {"Pow", 2, 2, 1, 1, 0, infer_pow, run_pow},
         {"PRelu", 2, 2, 1, 1, 0, infer_prelu, run_prelu},
         {"Where", 3, 3, 1, 1, OP_STR_MOVES, infer_where, run_where});
