/* Linear quantization: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearMatMul.
 *
 * Scales and zero points are per tensor, per axis (1-D along `axis`) or,
 * from version 21, blocked (x's rank, `block_size` elements of `axis` sharing
 * one value). Into an integer type, x / scale is rounded to nearest even
 * (rint in the default rounding mode), the zero point added and the result
 * saturated; into a float type (float8, from 19; float4e2m1, from 23),
 * x / scale + zero point is converted as Cast does, with its `saturate`. */
#include <math.h>
#include <string.h>

#include "ops/matmul_ref.h"

/* Saturation range of an integer quantized type. */
static bool q_range(ait_dtype t, int32_t *lo, int32_t *hi)
{
    switch (t) {
    case AIT_U8: *lo = 0; *hi = 255; return true;
    case AIT_I8: *lo = -128; *hi = 127; return true;
    case AIT_U16: *lo = 0; *hi = 65535; return true;
    case AIT_I16: *lo = -32768; *hi = 32767; return true;
    case AIT_U4: *lo = 0; *hi = 15; return true;
    case AIT_I4: *lo = -8; *hi = 7; return true;
    case AIT_U2: *lo = 0; *hi = 3; return true;
    case AIT_I2: *lo = -2; *hi = 1; return true;
    default: return false;
    }
}

/* Stores an in-range value (int4/int2 are held in an int8, uint4/uint2 in a uint8). */
static inline void q_store(void *y, ait_dtype t, int64_t i, int32_t v)
{
    switch (t) {
    case AIT_U8: case AIT_U4: case AIT_U2: ((uint8_t *)y)[i] = (uint8_t)v; break;
    case AIT_I8: case AIT_I4: case AIT_I2: ((int8_t *)y)[i] = (int8_t)v; break;
    case AIT_U16: ((uint16_t *)y)[i] = (uint16_t)v; break;
    case AIT_I16: ((int16_t *)y)[i] = (int16_t)v; break;
    default: break;
    }
}

/* round-half-even(v) + zp, saturated to [lo, hi]; NaN gives 0. */
static inline int32_t q_sat(double r, int32_t lo, int32_t hi)
{
    if (r != r) return 0;
    return r < lo ? lo : r > hi ? hi : (int32_t)r;
}

/* A quantized type (QuantizeLinear's y, DequantizeLinear's x) the node's
 * version takes: 8-bit integers always, int32 for dequantizing, 16-bit
 * integers from 21, the small types from the opset that added them. */
static ait_status q_type_ok(op_ctx *c, ait_dtype t, const char *what, bool dq)
{
    bool ok = t == AIT_U8 || t == AIT_I8 || (dq && t == AIT_I32) ||
              ((t == AIT_U16 || t == AIT_I16) && c->n->version >= 21) ||
              (dtype_is_small(t) && t != AIT_F8E8M0);
    if (!ok)
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s of type %s is not supported%s", what,
                       ait_dtype_name(t),
                       t == AIT_U16 || t == AIT_I16 ? " before version 21" : "");
    return check_dtype_version(c, t, what);
}

/* ---- granularity ---------------------------------------------------------
 * x is viewed as [outer][D][inner] around `axis`; the scale of element
 * (o, a, i) is scale[o*so + (a/bs)*sa + i*si]. */
typedef struct qgran {
    int64_t outer, D, inner, so, sa, si, bs, count; /* count: scale elements */
} qgran;

static bool same_shape(const tensor *a, const tensor *b)
{
    if (tensor_numel(a) == 1 && tensor_numel(b) == 1 && a->rank <= 1 && b->rank <= 1) return true;
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static ait_status q_granularity(op_ctx *c, const tensor *x, const tensor *s, const tensor *zp,
                                qgran *g)
{
    int64_t bs = c->n->version >= 21 ? attr_int(c->n, "block_size", 0) : 0;
    if (bs < 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "block_size %lld is negative", (long long)bs);
    if (zp && !same_shape(s, zp)) {
        char ss[128], sz[128];
        return err_set(c->err, AIT_E_SHAPE, "scale %s and zero point %s differ in shape",
                       shape_str(s->dims, s->rank, ss, sizeof ss),
                       shape_str(zp->dims, zp->rank, sz, sizeof sz));
    }
    memset(g, 0, sizeof *g);
    g->bs = 1;
    g->count = tensor_numel(s);
    if (bs == 0 && s->rank <= 1 && g->count == 1) { /* per tensor */
        g->outer = g->D = 1;
        g->inner = tensor_numel(x);
        return AIT_OK;
    }
    if (x->rank == 0) return err_set(c->err, AIT_E_SHAPE, "a scalar input needs a scalar scale");
    int axis;
    TRY(norm_axis(c, attr_int(c->n, "axis", 1), x->rank, &axis));
    g->outer = g->inner = 1;
    for (int d = 0; d < axis; d++) g->outer *= x->dims[d];
    for (int d = axis + 1; d < x->rank; d++) g->inner *= x->dims[d];
    g->D = x->dims[axis];
    char sx[128], ss[128];
    if (bs == 0) { /* per axis */
        if (s->rank != 1 || s->dims[0] != g->D)
            return err_set(c->err, AIT_E_SHAPE,
                           "scale %s fits neither per tensor nor axis %d of %s",
                           shape_str(s->dims, s->rank, ss, sizeof ss), axis,
                           shape_str(x->dims, x->rank, sx, sizeof sx));
        g->sa = 1;
        return AIT_OK;
    }
    /* blocked: the scale has x's shape with ceil(D / bs) along the axis (the
     * last block may be short, as the spec's accepted range of block_size allows) */
    bool ok = s->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++)
        ok = s->dims[d] == (d == axis ? (x->dims[d] + bs - 1) / bs : x->dims[d]);
    if (!ok)
        return err_set(c->err, AIT_E_SHAPE,
                       "scale %s does not fit blocks of %lld along axis %d of %s",
                       shape_str(s->dims, s->rank, ss, sizeof ss), (long long)bs, axis,
                       shape_str(x->dims, x->rank, sx, sizeof sx));
    g->bs = bs;
    g->si = 1;
    g->sa = g->inner;
    g->so = s->dims[axis] * g->inner;
    return AIT_OK;
}

/* Scales and zero points as double (0 when absent; small types decoded),
 * from scratch. */
static void q_params(const tensor *s, const tensor *zp, int64_t n, double *sc, double *z)
{
    for (int64_t i = 0; i < n; i++) {
        sc[i] = elem_get_f64(s->data, s->dtype, i);
        z[i] = zp ? elem_get_f64(zp->data, zp->dtype, i) : 0;
    }
}

/* v rounded to float16 or bfloat16 when the arithmetic's type p is one of them. */
static inline float round_to(ait_dtype p, float v)
{
    if (p == AIT_F16) return f16_to_f32(f32_to_f16(v));
    if (p == AIT_BF16) return bf16_to_f32(f32_to_bf16(v));
    return v;
}

/* ---- QuantizeLinear ----------------------------------------------------- */

static ait_status ql_out_dtype(op_ctx *c, ait_dtype *t)
{
    int64_t od = c->n->version >= 21 ? attr_int(c->n, "output_dtype", 0) : 0;
    const tensor *zp = has_in(c, 2) ? c->in[2] : NULL;
    *t = zp ? zp->dtype : od ? (ait_dtype)od : AIT_U8;
    if (zp && od && od != zp->dtype)
        return err_set(c->err, AIT_E_DTYPE, "output_dtype %lld differs from the zero point's %s",
                       (long long)od, ait_dtype_name(zp->dtype));
    return q_type_ok(c, *t, "the output", false);
}

/* The type x / y_scale is computed in: from version 23 the `precision`
 * attribute, else y_scale's type (int32 divides as the reference does, in
 * float64; float8e8m0 scales, powers of two, in float32); before 23 numpy's
 * promotion of x and y_scale, as the reference computes. */
static ait_status ql_precision(op_ctx *c, const tensor *x, const tensor *s, ait_dtype *p)
{
    if (c->n->version < 23) {
        bool dbl = x->dtype == AIT_I32 || x->dtype == AIT_F64 || s->dtype == AIT_F64;
        *p = dbl ? AIT_F64 : x->dtype == s->dtype ? x->dtype : AIT_F32;
        return AIT_OK;
    }
    int64_t pr = attr_int(c->n, "precision", 0);
    if (pr && pr != AIT_F32 && pr != AIT_F16 && pr != AIT_BF16 && pr != AIT_F64)
        return err_set(c->err, AIT_E_UNSUPPORTED, "precision %lld (%s) is not supported: it "
                       "must be float, float16, bfloat16 or double", (long long)pr,
                       ait_dtype_name((ait_dtype)pr));
    *p = pr ? (ait_dtype)pr : s->dtype;
    if (*p == AIT_I32) *p = AIT_F64;
    if (*p == AIT_F8E8M0) *p = AIT_F32;
    return AIT_OK;
}

static ait_status quantize_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *s = c->in[1], *zp = has_in(c, 2) ? c->in[2] : NULL;
    int v = c->n->version;
    TRY(check_dtype(c, x, "x", 5, AIT_F32, AIT_F16, AIT_BF16, AIT_F64, AIT_I32));
    /* y_scale: x's types (int32 too from 21), float8e8m0 from 24 */
    if (!(v >= 24 && s->dtype == AIT_F8E8M0) && !(v >= 21 && s->dtype == AIT_I32))
        TRY(check_dtype(c, s, "y_scale", 4, AIT_F32, AIT_F16, AIT_BF16, AIT_F64));
    if (v >= 19) {
        int64_t sat = attr_int(c->n, "saturate", 1);
        if (sat != 0 && sat != 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "saturate is %lld; it must be 0 or 1",
                           (long long)sat);
    }
    ait_dtype t, p;
    TRY(ql_out_dtype(c, &t));
    TRY(ql_precision(c, x, s, &p));
    qgran g;
    TRY(q_granularity(c, x, s, zp, &g));
    set_out(c, 0, t, x->rank, x->dims);
    return AIT_OK;
}

static ait_status quantize_run(op_ctx *c)
{
    const tensor *x = c->in[0], *s = c->in[1], *zp = has_in(c, 2) ? c->in[2] : NULL;
    tensor *y = c->out[0];
    qgran g;
    TRY(q_granularity(c, x, s, zp, &g));
    ait_dtype p;
    TRY(ql_precision(c, x, s, &p));
    int32_t lo = 0, hi = 0;
    bool to_int = q_range(y->dtype, &lo, &hi), dbl = p == AIT_F64;
    cast_mode mode = {.no_saturate = c->n->version >= 19 && !attr_int(c->n, "saturate", 1),
                      .fnuz_inf_nan = c->n->version < 24};
    int64_t n = tensor_numel(x);
    ait_dtype wt = dbl ? AIT_F64 : AIT_F32;
    bool conv = x->dtype != wt;
    scratch_layout bp = {0};
    double *sc, *z;
    void *xv;
    for (int pass = 0;; pass++) {
        sc = scratch_take(&bp, g.count, sizeof *sc);
        z = scratch_take(&bp, g.count, sizeof *z);
        xv = conv ? scratch_take(&bp, n, dbl ? 8 : 4) : x->data;
        if (pass) break;
        TRY(scratch_commit(c, &bp));
    }
    q_params(s, zp, g.count, sc, z);
    if (conv) TRY(convert_elems(x->data, x->dtype, xv, wt, n, c->err));
    const float *xf = xv;
    const double *xd = xv;
    int64_t e = 0;
    for (int64_t o = 0; o < g.outer; o++)
        for (int64_t a = 0; a < g.D; a++) {
            int64_t base = o * g.so + (a / g.bs) * g.sa;
            for (int64_t i = 0; i < g.inner; i++, e++) {
                int64_t k = base + i * g.si;
                double q = dbl ? xd[e] / sc[k]
                               : round_to(p, round_to(p, xf[e]) / round_to(p, (float)sc[k]));
                if (to_int) q_store(y->data, y->dtype, e, q_sat(rint(q) + z[k], lo, hi));
                else ((uint8_t *)y->data)[e] = small_from_f64(y->dtype, q + z[k], &mode);
            }
        }
    return AIT_OK;
}

/* ---- DequantizeLinear --------------------------------------------------- */

/* The output type: from version 23 `output_dtype` when given, else x_scale's. */
static ait_status dq_out_dtype(op_ctx *c, const tensor *s, ait_dtype *t)
{
    int64_t od = c->n->version >= 23 ? attr_int(c->n, "output_dtype", 0) : 0;
    if (od && od != AIT_F32 && od != AIT_F16 && od != AIT_BF16)
        return err_set(c->err, AIT_E_UNSUPPORTED, "output_dtype %lld (%s) is not supported: it "
                       "must be float, float16 or bfloat16", (long long)od,
                       ait_dtype_name((ait_dtype)od));
    *t = od ? (ait_dtype)od : s->dtype;
    if (*t == AIT_F8E8M0)
        return err_set(c->err, AIT_E_DTYPE, "x_scale is float8e8m0: output_dtype must say the "
                       "output's type (float, float16 or bfloat16)");
    return AIT_OK;
}

static ait_status dequantize_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *s = c->in[1], *zp = has_in(c, 2) ? c->in[2] : NULL;
    TRY(q_type_ok(c, x->dtype, "x", true));
    if (!(c->n->version >= 24 && s->dtype == AIT_F8E8M0))
        TRY(check_dtype(c, s, "x_scale", 4, AIT_F32, AIT_F16, AIT_BF16, AIT_F64));
    if (zp && zp->dtype != x->dtype)
        return err_set(c->err, AIT_E_DTYPE, "x_zero_point is %s but x is %s",
                       ait_dtype_name(zp->dtype), ait_dtype_name(x->dtype));
    ait_dtype t;
    TRY(dq_out_dtype(c, s, &t));
    qgran g;
    TRY(q_granularity(c, x, s, zp, &g));
    set_out(c, 0, t, x->rank, x->dims);
    return AIT_OK;
}

/* (x - zero point) exactly in double (every quantized type's values and
 * differences fit), times the scale in the output's precision: float64, or
 * float32 rounded once more to float16 / bfloat16. */
static ait_status dequantize_run(op_ctx *c)
{
    const tensor *x = c->in[0], *s = c->in[1], *zp = has_in(c, 2) ? c->in[2] : NULL;
    tensor *y = c->out[0];
    qgran g;
    TRY(q_granularity(c, x, s, zp, &g));
    int64_t n = tensor_numel(x);
    bool f64 = y->dtype == AIT_F64, direct = y->dtype == AIT_F32 || f64;
    scratch_layout bp = {0};
    double *sc, *z, *xd;
    void *yv;
    for (int pass = 0;; pass++) {
        sc = scratch_take(&bp, g.count, sizeof *sc);
        z = scratch_take(&bp, g.count, sizeof *z);
        xd = scratch_take(&bp, n, sizeof *xd);
        yv = direct ? y->data : scratch_take(&bp, n, 4);
        if (pass) break;
        TRY(scratch_commit(c, &bp));
    }
    q_params(s, zp, g.count, sc, z);
    TRY(convert_elems(x->data, x->dtype, xd, AIT_F64, n, c->err));
    float *yf = yv;
    double *yd = yv;
    int64_t e = 0;
    for (int64_t o = 0; o < g.outer; o++)
        for (int64_t a = 0; a < g.D; a++) {
            int64_t base = o * g.so + (a / g.bs) * g.sa;
            for (int64_t i = 0; i < g.inner; i++, e++) {
                int64_t k = base + i * g.si;
                double v = xd[e] - z[k];
                if (f64) yd[e] = v * sc[k];
                else yf[e] = (float)v * (float)sc[k];
            }
        }
    if (!direct) mm_store(yv, y->data, y->dtype, n);
    return AIT_OK;
}

/* ---- DynamicQuantizeLinear ---------------------------------------------- */

static ait_status dynq_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    TRY(check_dtype(c, x, "x", 1, AIT_F32));
    set_out(c, 0, AIT_U8, x->rank, x->dims);
    set_out(c, 1, AIT_F32, 0, NULL);
    set_out(c, 2, AIT_U8, 0, NULL);
    return AIT_OK;
}

/* uint8 over [min(x,0), max(x,0)]; the float32 steps follow the reference. */
static ait_status dynq_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    const float *xf = x->data;
    int64_t n = tensor_numel(x);
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        lo = xf[i] < lo ? xf[i] : lo;
        hi = xf[i] > hi ? xf[i] : hi;
    }
    float scale = (float)((double)(hi - lo) / 255.0);
    int32_t zp = scale == 0 ? 0 : q_sat(rintf(0 - lo / scale), 0, 255);
    uint8_t *y = c->out[0]->data;
    for (int64_t i = 0; i < n; i++)
        y[i] = scale == 0 ? (uint8_t)zp : (uint8_t)q_sat((double)rintf(xf[i] / scale) + zp, 0, 255);
    if (has_out(c, 1)) *(float *)c->out[1]->data = scale;
    if (has_out(c, 2)) *(uint8_t *)c->out[2]->data = (uint8_t)zp;
    return AIT_OK;
}

/* ---- QLinearMatMul ------------------------------------------------------- */

enum { QA, QA_SCALE, QA_ZP, QB, QB_SCALE, QB_ZP, QY_SCALE, QY_ZP };

static ait_status qlmm_check(op_ctx *c, mm_shape *s)
{
    for (int i = 0; i < 8; i++)
        if (!has_in(c, i)) return err_set(c->err, AIT_E_INVALID_ARG, "input %d is missing", i);
    const tensor *a = c->in[QA], *b = c->in[QB];
    TRY(check_dtype(c, a, "a", 2, AIT_U8, AIT_I8));
    TRY(check_dtype(c, b, "b", 2, AIT_U8, AIT_I8));
    TRY(check_dtype(c, c->in[QY_ZP], "y_zero_point", 2, AIT_U8, AIT_I8));
    static const char *const names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale",
                                        "b_zero_point", "y_scale", "y_zero_point"};
    for (int i = QA_SCALE; i <= QY_SCALE; i += 3)
        TRY(check_dtype(c, c->in[i], names[i], 3, AIT_F32, AIT_F16, AIT_BF16));
    if (c->in[QA_ZP]->dtype != a->dtype || c->in[QB_ZP]->dtype != b->dtype)
        return err_set(c->err, AIT_E_DTYPE, "a zero point's dtype differs from its input's");
    if (tensor_numel(c->in[QY_SCALE]) != 1 || tensor_numel(c->in[QY_ZP]) != 1)
        return err_set(c->err, AIT_E_SHAPE, "y_scale and y_zero_point must be per tensor");
    TRY(mm_shape_make(c, a, b, s));
    int sr;
    int64_t sd[AIT_MAX_RANK], ps[AIT_MAX_RANK];
    for (int i = QA_SCALE; i <= QB_ZP; i++) {
        if (i == QB) continue;
        bool is_a = i < QB;
        TRY(mm_qparam_check(c, is_a ? a : b, c->in[i], is_a, names[i], &sr, sd, ps));
    }
    return AIT_OK;
}

static ait_status qlmm_infer(op_ctx *c)
{
    mm_shape s;
    TRY(qlmm_check(c, &s));
    set_out(c, 0, c->in[QY_ZP]->dtype, s.rank, s.dims);
    return AIT_OK;
}

/* Scale and zero point of each row of a (is_a) or column of b. */
static void qlmm_params(op_ctx *c, bool is_a, int64_t *idx, float *sc, int32_t *zp)
{
    const tensor *x = c->in[is_a ? QA : QB];
    for (int k = 0; k < 2; k++) {
        const tensor *p = c->in[(is_a ? QA_SCALE : QB_SCALE) + k];
        int sr;
        int64_t sd[AIT_MAX_RANK], ps[AIT_MAX_RANK];
        mm_qparam_check(c, x, p, is_a, "", &sr, sd, ps);
        mm_qparam_index(sr, sd, ps, idx);
        int64_t n = mm_qparam_count(x, is_a);
        for (int64_t r = 0; r < n; r++) {
            if (k == 0) sc[r] = (float)elem_get_f64(p->data, p->dtype, idx[r]);
            else zp[r] = (int32_t)elem_get_i64(p->data, p->dtype, idx[r]);
        }
    }
}

static ait_status qlmm_run(op_ctx *c)
{
    const tensor *a = c->in[QA], *b = c->in[QB], *yzt = c->in[QY_ZP], *yst = c->in[QY_SCALE];
    tensor *y = c->out[0];
    mm_shape s;
    TRY(qlmm_check(c, &s));
    int64_t ra = mm_qparam_count(a, true), cb = mm_qparam_count(b, false);
    int64_t na = tensor_numel(a), nb = tensor_numel(b), ny = tensor_numel(y);
    scratch_layout bp = {0};
    int64_t *idx;
    float *sa, *sb;
    int32_t *za, *zb, *pa, *pb, *acc;
    for (int pass = 0;; pass++) {
        idx = scratch_take(&bp, ra > cb ? ra : cb, 8);
        sa = scratch_take(&bp, ra, 4);
        za = scratch_take(&bp, ra, 4);
        sb = scratch_take(&bp, cb, 4);
        zb = scratch_take(&bp, cb, 4);
        pa = scratch_take(&bp, na, 4);
        pb = scratch_take(&bp, nb, 4);
        acc = scratch_take(&bp, ny, 4);
        if (pass) break;
        TRY(scratch_commit(c, &bp));
    }
    qlmm_params(c, true, idx, sa, za);
    qlmm_params(c, false, idx, sb, zb);
    mm_sub_zp(a, true, za, pa);
    mm_sub_zp(b, false, zb, pb);
    mm_run(MD_U32, &s, pa, pb, acc);

    float ys = (float)elem_get_f64(yst->data, yst->dtype, 0);
    int32_t yz = (int32_t)elem_get_i64(yzt->data, yzt->dtype, 0), lo = 0, hi = 0;
    q_range(y->dtype, &lo, &hi);
    /* like the reference: the multiplier in float32, the product in double */
    for (int64_t bi = 0, e = 0; bi < s.batch; bi++) {
        int64_t ia, ib;
        mm_batch_index(&s, bi, &ia, &ib);
        for (int64_t m = 0; m < s.M; m++) {
            float as = sa[ia * s.M + m];
            for (int64_t j = 0; j < s.N; j++, e++) {
                float mult = as * sb[ib * s.N + j] / ys;
                double v = rint((double)acc[e] * (double)mult) + yz;
                q_store(y->data, y->dtype, e, q_sat(v, lo, hi));
            }
        }
    }
    return AIT_OK;
}

OP_TABLE(quant,
         OP_DEF("QuantizeLinear", 2, 3, 1, 1, quantize_infer, quantize_run),
         OP_DEF("DequantizeLinear", 2, 3, 1, 1, dequantize_infer, dequantize_run),
         OP_DEF("DynamicQuantizeLinear", 1, 1, 3, 3, dynq_infer, dynq_run),
         OP_DEF("QLinearMatMul", 8, 8, 1, 1, qlmm_infer, qlmm_run));
