/* ONNX's small element types (opsets 19 to 25): the four float8 types,
 * float8e8m0, float4e2m1, int4/uint4 and int2/uint2. In memory each takes one
 * byte per element (ait.h says how); here are their values, Cast's rounding
 * and saturation into them, and the unpacking of ONNX's packed storage. */
#ifndef AIT_CORE_SMALL_TYPES_H
#define AIT_CORE_SMALL_TYPES_H
#include <stdbool.h>
#include <stdint.h>

#include "ait.h"
#include "core/status.h"

static inline bool dtype_is_small(ait_dtype t) { return t >= AIT_F8E4M3FN && t <= AIT_I2; }
static inline bool dtype_is_small_int(ait_dtype t)
{
    return t == AIT_U4 || t == AIT_I4 || t == AIT_U2 || t == AIT_I2;
}
/* The float8 types, float8e8m0 and float4e2m1: codes, not values. */
static inline bool dtype_is_small_float(ait_dtype t)
{
    return dtype_is_small(t) && !dtype_is_small_int(t);
}
/* The opset whose op versions (Cast, QuantizeLinear, DequantizeLinear...)
 * first take t: 19 for float8, 21 int4/uint4, 23 float4e2m1, 24 float8e8m0,
 * 25 int2/uint2; 0 for the other types. */
int dtype_since_opset(ait_dtype t);
/* Bits per element in ONNX's storage: 4 or 2 for the packed types, else 8 x size. */
int dtype_bits(ait_dtype t);
/* Bytes ONNX stores n (>= 0) elements of t in: ceil(n * bits / 8), without
 * overflowing for any n whose byte size in memory fits. */
static inline uint64_t dtype_stored_bytes(ait_dtype t, int64_t n)
{
    int b = dtype_bits(t);
    if (b == 0 || b >= 8) return (uint64_t)n * (uint64_t)(b / 8);
    uint64_t per = (uint64_t)(8 / b);
    return ((uint64_t)n + per - 1) / per;
}
/* Unpacks n elements of t (4- or 2-bit, lowest bits first, as ONNX packs
 * them) from the first dtype_stored_bytes(t, n) bytes of buf into one byte
 * each, in place (buf holds n bytes); int4 and int2 are sign-extended. */
void small_unpack(ait_dtype t, uint8_t *buf, int64_t n);

/* How a conversion into a small float type rounds and saturates (Cast's and
 * QuantizeLinear's attributes). Zeroed: the defaults of Cast 24 and later. */
enum { E8M0_UP = 0, E8M0_DOWN, E8M0_NEAREST };
typedef struct cast_mode {
    bool no_saturate;  /* saturate=0: out of range gives inf or NaN (float8 types, e8m0) */
    bool fnuz_inf_nan; /* Cast 19 to 23: +-inf gives NaN in the FNUZ types when saturating */
    int e8m0_round;    /* round_mode for float8e8m0 */
} cast_mode;

/* The value of one element (NaN for NaN codes; int4/int2 as they are). */
double small_to_f64(ait_dtype t, uint8_t code);
/* The element nearest v (round to nearest even; float8e8m0 by m->e8m0_round),
 * with Cast's saturation (m NULL: the defaults). int4/uint4/int2/uint2: v
 * truncated toward zero, then its low bits kept, as Cast does for every
 * integer type. */
uint8_t small_from_f64(ait_dtype t, double v, const cast_mode *m);
/* Keeps the low bits of k as int4/uint4/int2/uint2 (sign-extended for the signed). */
uint8_t small_wrap(ait_dtype t, int64_t k);
/* convert_elems for conversions from or to a small type, with mode m. */
ait_status small_convert(const void *src, ait_dtype st, void *dst, ait_dtype dt, int64_t n,
                         const cast_mode *m, ait_error *e);

#endif
