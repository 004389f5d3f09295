/* The small element types' values and conversions. Sources: the ONNX spec's
 * Cast section (the float8 saturation tables, float8e8m0's round_mode) and
 * onnx's technical notes on float8, float4 and int4/int2 (bit layouts and
 * packing). Encoding rounds by arithmetic on doubles: a value is scaled by a
 * power of two so that one unit is the target's last mantissa bit, rint
 * rounds it to nearest even, and overflow is decided on the rounded value
 * (the spec's "[x] > FLT_MAX"). */
#include "core/small_types.h"

#include <math.h>
#include <string.h>

#include "core/tensor.h"

/* A float8 or float4 format: mantissa bits, exponent bias, the sign bit, the
 * code of the largest finite value, of +inf and of +NaN (0: none). The FNUZ
 * types (uz) have no -0 and one NaN, 0x80. */
typedef struct mini_fmt {
    int mbits, bias;
    uint8_t sign, max, inf, nan;
    bool uz;
} mini_fmt;

static const mini_fmt *fmt_of(ait_dtype t)
{
    static const mini_fmt e4m3fn = {3, 7, 0x80, 0x7e, 0, 0x7f, false};
    static const mini_fmt e4m3fnuz = {3, 8, 0x80, 0x7f, 0, 0x80, true};
    static const mini_fmt e5m2 = {2, 15, 0x80, 0x7b, 0x7c, 0x7e, false};
    static const mini_fmt e5m2fnuz = {2, 16, 0x80, 0x7f, 0, 0x80, true};
    static const mini_fmt e2m1 = {1, 1, 0x08, 0x07, 0, 0, false};
    switch (t) {
    case AIT_F8E4M3FN: return &e4m3fn;
    case AIT_F8E4M3FNUZ: return &e4m3fnuz;
    case AIT_F8E5M2: return &e5m2;
    case AIT_F8E5M2FNUZ: return &e5m2fnuz;
    case AIT_F4E2M1: return &e2m1;
    default: return NULL;
    }
}

int dtype_since_opset(ait_dtype t)
{
    switch (t) {
    case AIT_F8E4M3FN: case AIT_F8E4M3FNUZ: case AIT_F8E5M2: case AIT_F8E5M2FNUZ: return 19;
    case AIT_U4: case AIT_I4: return 21;
    case AIT_F4E2M1: return 23;
    case AIT_F8E8M0: return 24;
    case AIT_U2: case AIT_I2: return 25;
    default: return 0;
    }
}

int dtype_bits(ait_dtype t)
{
    if (t == AIT_U4 || t == AIT_I4 || t == AIT_F4E2M1) return 4;
    if (t == AIT_U2 || t == AIT_I2) return 2;
    return 8 * (int)ait_dtype_size(t);
}

void small_unpack(ait_dtype t, uint8_t *buf, int64_t n)
{
    int bits = dtype_bits(t);
    if (bits != 4 && bits != 2) return;
    int per = 8 / bits;
    uint8_t mask = (uint8_t)((1u << bits) - 1);
    bool sign = t == AIT_I4 || t == AIT_I2;
    /* Backwards: element i comes from byte i / per <= i, which no later
     * (smaller) i has overwritten yet. */
    for (int64_t i = n - 1; i >= 0; i--) {
        uint8_t v = (uint8_t)((buf[i / per] >> (bits * (int)(i % per))) & mask);
        buf[i] = sign ? small_wrap(t, v) : v;
    }
}

uint8_t small_wrap(ait_dtype t, int64_t k)
{
    int bits = dtype_bits(t);
    uint64_t mask = (1u << bits) - 1, v = (uint64_t)k & mask;
    if (t == AIT_I4 || t == AIT_I2) {
        uint64_t half = 1u << (bits - 1);
        return (uint8_t)(int8_t)((int64_t)(v ^ half) - (int64_t)half);
    }
    return (uint8_t)v;
}

static double mini_decode(const mini_fmt *f, uint8_t c)
{
    if (f->uz && c == 0x80) return NAN;
    uint8_t a = c & (uint8_t)(f->sign - 1);
    double s = (c & f->sign) ? -1 : 1;
    if (f->inf && a == f->inf) return s * INFINITY;
    if (f->nan && !f->uz && a > f->max) return NAN;
    int e = a >> f->mbits, m = a & ((1 << f->mbits) - 1);
    if (e == 0) return s * ldexp(m, 1 - f->bias - f->mbits); /* subnormal */
    return s * ldexp(m + (1 << f->mbits), e - f->bias - f->mbits);
}

/* What a value too large becomes without saturation: inf where the type has
 * one, else NaN; float4e2m1 has neither and always saturates. */
static uint8_t mini_overflow(const mini_fmt *f, uint8_t s)
{
    if (f->uz) return 0x80;
    if (f->inf) return s | f->inf;
    if (f->nan) return s | f->nan;
    return s | f->max;
}

static uint8_t mini_encode(const mini_fmt *f, double v, bool sat, bool inf_nan)
{
    uint8_t s = signbit(v) ? f->sign : 0;
    if (isnan(v)) /* float4e2m1 has no NaN: the largest value, as onnx's table says */
        return f->uz ? 0x80 : f->nan ? (uint8_t)(s | f->nan) : f->max;
    double a = fabs(v);
    if (isinf(a)) {
        if (!sat) return mini_overflow(f, s);
        return inf_nan && f->uz ? 0x80 : (uint8_t)(s | f->max);
    }
    int emin = 1 - f->bias, e = 0;
    frexp(a, &e); /* a = [0.5, 1) x 2^e: its exponent is e - 1 */
    int ex = a == 0 || e - 1 < emin ? emin : e - 1;
    double q = ldexp(1.0, ex - f->mbits); /* the last mantissa bit at a's exponent */
    double r = rint(a / q) * q;
    if (r > mini_decode(f, f->max)) return sat ? (uint8_t)(s | f->max) : mini_overflow(f, s);
    if (r == 0) return f->uz ? 0 : s;
    frexp(r, &e);
    ex = e - 1;
    int code;
    if (ex < emin) /* subnormal: exponent field 0 */
        code = (int)(r / ldexp(1.0, emin - f->mbits));
    else
        code = ((ex + f->bias) << f->mbits) | ((int)ldexp(r, f->mbits - ex) - (1 << f->mbits));
    return (uint8_t)(s | code);
}

/* float8e8m0: 2^(code - 127), 0xff NaN; no sign and no zero. The sign of a
 * negative input (undefined by the spec) is dropped. */
static uint8_t e8m0_encode(double v, bool sat, int round)
{
    if (isnan(v)) return 0xff;
    double a = fabs(v);
    if (isinf(a)) return sat ? 0xfe : 0xff;
    if (a == 0) return sat ? 0x00 : 0xff;
    int e;
    double m = 2 * frexp(a, &e); /* a = m x 2^(e-1), m in [1, 2) */
    int k = e - 1;
    if ((round == E8M0_UP && m > 1) || (round == E8M0_NEAREST && m >= 1.5)) k++;
    if (k > 127) return sat ? 0xfe : 0xff;
    if (k < -127) return sat ? 0x00 : 0xff;
    return (uint8_t)(k + 127);
}

double small_to_f64(ait_dtype t, uint8_t c)
{
    switch (t) {
    case AIT_I4: case AIT_I2: return (int8_t)c;
    case AIT_U4: case AIT_U2: return c;
    case AIT_F8E8M0: return c == 0xff ? NAN : ldexp(1.0, c - 127);
    default: {
        const mini_fmt *f = fmt_of(t);
        return f ? mini_decode(f, c) : 0;
    }
    }
}

/* Truncated toward zero into int64, saturating; NaN gives 0. */
static int64_t trunc_i64(double v)
{
    if (v != v) return 0;
    return v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
}

uint8_t small_from_f64(ait_dtype t, double v, const cast_mode *m)
{
    static const cast_mode dflt = {0};
    if (!m) m = &dflt;
    if (dtype_is_small_int(t)) return small_wrap(t, trunc_i64(v));
    if (t == AIT_F8E8M0) return e8m0_encode(v, !m->no_saturate, m->e8m0_round);
    const mini_fmt *f = fmt_of(t);
    if (!f) return 0;
    /* saturate applies to the float8 types only: float4e2m1 always saturates */
    return mini_encode(f, v, t == AIT_F4E2M1 || !m->no_saturate, m->fnuz_inf_nan);
}

#define CHUNK 256

ait_status small_convert(const void *src, ait_dtype st, void *dst, ait_dtype dt, int64_t n,
                         const cast_mode *m, ait_error *e)
{
    if (st == dt) {
        memcpy(dst, src, (size_t)n);
        return AIT_OK;
    }
    uint8_t *d8 = dst;
    if (dtype_is_small_int(dt)) { /* every integer type wraps; floats truncate first */
        for (int64_t i = 0; i < n; i++) d8[i] = small_wrap(dt, elem_get_i64(src, st, i));
        return AIT_OK;
    }
    if (dtype_is_small(dt)) {
        for (int64_t i = 0; i < n; i++) d8[i] = small_from_f64(dt, elem_get_f64(src, st, i), m);
        return AIT_OK;
    }
    /* From a small type to a standard one: its values (exact in int64 or
     * double), then the standard conversion. */
    const uint8_t *s8 = src;
    size_t ds = ait_dtype_size(dt);
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t len = n - o < CHUNK ? n - o : CHUNK;
        if (dtype_is_small_int(st)) {
            int64_t buf[CHUNK];
            for (int64_t i = 0; i < len; i++) buf[i] = (int64_t)small_to_f64(st, s8[o + i]);
            TRY(convert_elems(buf, AIT_I64, d8 + o * ds, dt, len, e));
        } else {
            double buf[CHUNK];
            for (int64_t i = 0; i < len; i++) buf[i] = small_to_f64(st, s8[o + i]);
            TRY(convert_elems(buf, AIT_F64, d8 + o * ds, dt, len, e));
        }
    }
    return AIT_OK;
}
