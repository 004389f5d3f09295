"""The small element types of opsets 19 to 25 (float8 x4, float8e8m0,
float4e2m1, int4/uint4, int2/uint2) in Cast, CastLike, QuantizeLinear and
DequantizeLinear: the spec's examples at the version that added each type,
and edges they miss (saturate=0, Cast-19's inf in the FNUZ types, round_mode,
int32_data storage, odd packed counts, precision, output_dtype, blocks that
do not divide the axis).

Expected bits are computed here, never by ait: a code's value from its bit
fields; a value's code as the representable value nearest it (exact
fractions; a tie goes to the even code), overflow decided on that rounded
value as the spec's tables say ("[x] > FLT_MAX"). Integer types take the
value truncated toward zero and keep its low bits (the spec's Cast rules for
float to fixed point and fixed to fixed point)."""
import math
from fractions import Fraction

import numpy as np
from onnx import TensorProto, helper

from spec_case import case, raw

F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, UINT4, INT4, F4E2M1, F8E8M0, UINT2, INT2 = range(17, 27)
F8 = (F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ)
NAME = {F8E4M3FN: "FLOAT8E4M3FN", F8E4M3FNUZ: "FLOAT8E4M3FNUZ", F8E5M2: "FLOAT8E5M2",
        F8E5M2FNUZ: "FLOAT8E5M2FNUZ", UINT4: "UINT4", INT4: "INT4", F4E2M1: "FLOAT4E2M1",
        F8E8M0: "FLOAT8E8M0", UINT2: "UINT2", INT2: "INT2", TensorProto.FLOAT: "FLOAT",
        TensorProto.FLOAT16: "FLOAT16", TensorProto.UINT8: "UINT8", TensorProto.INT8: "INT8"}
BITS = {UINT4: 4, INT4: 4, F4E2M1: 4, UINT2: 2, INT2: 2}

# exponent bits, mantissa bits, bias, sign bit, no -0 and one NaN (0x80)
FMT = {F8E4M3FN: (4, 3, 7, 0x80, False), F8E4M3FNUZ: (4, 3, 8, 0x80, True),
       F8E5M2: (5, 2, 15, 0x80, False), F8E5M2FNUZ: (5, 2, 16, 0x80, True),
       F4E2M1: (2, 1, 1, 0x08, False)}


def decode(t, c):
    """The value of code c of a small float type."""
    if t == F8E8M0:
        return math.nan if c == 0xFF else 2.0 ** (c - 127)
    eb, mb, bias, sb, uz = FMT[t]
    if uz and c == 0x80:
        return math.nan
    neg, a = bool(c & sb), c & (sb - 1)
    e, m = a >> mb, a & ((1 << mb) - 1)
    top = (1 << eb) - 1
    if t == F8E5M2 and e == top:
        return math.nan if m else (-math.inf if neg else math.inf)
    if t == F8E4M3FN and e == top and m == (1 << mb) - 1:
        return math.nan
    v = (m / 2 ** mb) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2 ** mb) * 2.0 ** (e - bias)
    return -v if neg else v


def finite_codes(t):
    sb = FMT[t][3]
    return sorted((Fraction(decode(t, c)), c) for c in range(sb) if math.isfinite(decode(t, c)))


def encode(t, x, saturate=True, inf_nan=False):
    """Code of float x in float8 / float4e2m1 type t. inf_nan: Cast-19's table
    (inf to NaN in the FNUZ types even when saturating)."""
    eb, mb, bias, sb, uz = FMT[t]
    x = float(x)
    s = sb if math.copysign(1, x) < 0 else 0
    nan = {F8E4M3FN: 0x7F, F8E5M2: 0x7E}.get(t)
    pos = finite_codes(t)
    maxv, maxc = pos[-1]

    def overflow():
        if uz:
            return 0x80
        if t == F8E5M2:
            return s | 0x7C
        return s | nan if nan else s | maxc

    if math.isnan(x):
        return 0x80 if uz else (s | nan if nan else maxc)
    if math.isinf(x):
        if t == F4E2M1 or saturate:
            return 0x80 if inf_nan and uz else s | maxc
        return overflow()
    a = Fraction(abs(x))
    mid = maxv + (maxv - pos[-2][0]) / 2  # halfway to the next value the exponent would give
    if a > mid or (a == mid and maxc & 1):
        return s | maxc if saturate or t == F4E2M1 else overflow()
    if a >= maxv:
        return s | maxc
    v, c = min(pos, key=lambda vc: (abs(vc[0] - a), vc[1] & 1))
    if c == 0:
        return 0 if uz else s
    return s | c


def e8m0(x, saturate=True, mode="up"):
    """float8e8m0 code of x: a power of two 2^(code - 127), 0xFF NaN."""
    x = float(x)
    if math.isnan(x):
        return 0xFF
    a = abs(x)
    if math.isinf(a):
        return 0xFE if saturate else 0xFF
    if a == 0:
        return 0 if saturate else 0xFF
    A = Fraction(a)
    k = 0
    while Fraction(2) ** k > A:
        k -= 1
    while Fraction(2) ** (k + 1) <= A:
        k += 1
    lo, hi = Fraction(2) ** k, Fraction(2) ** (k + 1)
    r = {"down": k, "up": k if A == lo else k + 1, "nearest": k + 1 if A - lo >= hi - A else k}[mode]
    if r > 127:
        return 0xFE if saturate else 0xFF
    if r < -127:
        return 0 if saturate else 0xFF
    return r + 127


def wrap(t, k):
    """Low bits of integer k as int4/uint4/int2/uint2 (sign-extended)."""
    b = BITS[t]
    v = int(k) & ((1 << b) - 1)
    return v - (1 << b) if t in (INT4, INT2) and v >= 1 << (b - 1) else v


def codes(t, xs, **kw):
    if t in F8 or t == F4E2M1:
        return [encode(t, x, **kw) for x in xs]
    if t == F8E8M0:
        return [e8m0(x, **kw) for x in xs]
    return [wrap(t, math.trunc(float(x))) for x in xs]


def small(t, dims, cs):
    """A raw TensorProto of type t holding codes (or int values) cs, packed
    as ONNX stores the 4- and 2-bit types."""
    b = BITS.get(t, 8)
    per = 8 // b
    out = bytearray((len(cs) * b + 7) // 8)
    for i, c in enumerate(cs):
        out[i // per] |= (int(c) & ((1 << b) - 1)) << (b * (i % per))
    return raw(None, t, dims, out)


def values(t, cs):
    """The float32 values of codes cs."""
    if t in BITS and t != F4E2M1:
        return np.array(cs, np.float32)
    return np.array([decode(t, c) for c in cs], np.float32)


def cast(name, frm, to, inp, out, opset=25, **attrs):
    case(name, helper.make_node("Cast", ["input"], ["output"], to=to, **attrs), {"input": inp},
         {"output": out}, opset=opset)


# ---- Cast: float8 --------------------------------------------------------
F8_IN = np.array(["0.47892547", "0.48033667", "0.49968487", "0.81910545", "0.47031248",
                  "0.7229038", "1000000", "1e-7", "NaN", "INF", "+INF", "-INF", "-0.0000001",
                  "0.0000001", "-1000000"], dtype=np.float32)
for t in F8:
    for src, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        x = F8_IN.astype(np_t)
        xs = x.astype(np.float64).ravel()
        cast(f"cast_{NAME[src]}_to_{NAME[t]}", src, t, x.reshape(3, 5),
             small(t, [3, 5], codes(t, xs)))
        cast(f"cast_no_saturate_{NAME[src]}_to_{NAME[t]}", src, t, x.reshape(3, 5),
             small(t, [3, 5], codes(t, xs, saturate=False)), saturate=0)
    cs = codes(t, F8_IN.astype(np.float64))
    for dst, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        cast(f"cast_{NAME[t]}_to_{NAME[dst]}", t, dst, small(t, [3, 5], cs),
             values(t, cs).astype(np_t).reshape(3, 5))
# Cast-19 to 23: +-inf become NaN in the FNUZ types even when saturating.
for t in (F8E4M3FNUZ, F8E5M2FNUZ):
    xs = F8_IN.astype(np.float64)
    cast(f"cast_19_FLOAT_to_{NAME[t]}", TensorProto.FLOAT, t, F8_IN.reshape(3, 5),
         small(t, [3, 5], codes(t, xs, inf_nan=True)), opset=19)
# Edges: ties to even, the saturation boundary, subnormals, -0.
EDGE = {F8E4M3FN: [448, 464, 464.01, 479, 480, -500, 2 ** -9, 2 ** -10, 1.5 * 2 ** -10, -0.0,
                   0.0625 + 2 ** -8, 104, 100, 99.99],
        F8E5M2: [57344, 61440, 61439, 65536, -1e5, 2 ** -16, 2 ** -17, 3 * 2 ** -18, -0.0, 1.125,
                 1.375, 0.1],
        F8E4M3FNUZ: [240, 247, 248, 256, 2 ** -10, 2 ** -11, -0.0, -2 ** -12, 0.3],
        F8E5M2FNUZ: [57344, 61440, 2 ** -17, 2 ** -18, -0.0, -1e-9, 7.5]}
for t, xs in EDGE.items():
    x = np.array(xs, np.float32)
    for sat in (1, 0):
        cast(f"cast_edges_{'' if sat else 'no_saturate_'}FLOAT_to_{NAME[t]}", TensorProto.FLOAT, t,
             x, small(t, [len(xs)], codes(t, x.astype(np.float64), saturate=bool(sat))),
             saturate=sat)
# float8 to float8, and from double (no float32 rounding on the way).
cs = codes(F8E5M2, F8_IN.astype(np.float64))
cast("cast_FLOAT8E5M2_to_FLOAT8E4M3FN", F8E5M2, F8E4M3FN, small(F8E5M2, [3, 5], cs),
     small(F8E4M3FN, [3, 5], codes(F8E4M3FN, [decode(F8E5M2, c) for c in cs])))
xd = np.array([0.3, 1 + 2 ** -4 + 2 ** -40, 1 + 2 ** -4, 3.1e-3, -7.0e4], np.float64)
cast("cast_DOUBLE_to_FLOAT8E4M3FN", TensorProto.DOUBLE, F8E4M3FN, xd,
     small(F8E4M3FN, [5], codes(F8E4M3FN, xd)))

# ---- Cast: int4, uint4, int2, uint2 --------------------------------------
for t, lo, hi, shape in ((UINT4, -9, 16, [5, 5]), (INT4, -9, 16, [5, 5]),
                         (UINT2, -3, 4, [7, 1]), (INT2, -3, 4, [7, 1])):
    x = np.arange(lo, hi).astype(np.float32)
    cs = codes(t, x)
    for src, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        cast(f"cast_{NAME[src]}_to_{NAME[t]}", src, t, x.astype(np_t).reshape(shape),
             small(t, shape, cs))
        cast(f"cast_{NAME[t]}_to_{NAME[src]}", t, src, small(t, shape, cs),
             np.array(cs, np_t).reshape(shape))
    wide = TensorProto.INT8 if t in (INT4, INT2) else TensorProto.UINT8
    np_w = np.int8 if wide == TensorProto.INT8 else np.uint8
    cast(f"cast_{NAME[t]}_to_{NAME[wide]}", t, wide, small(t, shape, cs),
         np.array(cs).astype(np_w).reshape(shape))
# Integers keep their low bits; floats are truncated toward zero first.
xi = np.array([100, -100, 7, 8, -9, 255, 17], np.int32)
cast("cast_INT32_to_INT4", TensorProto.INT32, INT4, xi, small(INT4, [7], codes(INT4, xi)))
xf = np.array([2.7, -2.7, 7.9, -8.9, 0.5, -0.5, 15.5], np.float32)
for t in (INT4, UINT4, INT2):
    cast(f"cast_fractions_FLOAT_to_{NAME[t]}", TensorProto.FLOAT, t, xf,
         small(t, [7], codes(t, xf.astype(np.float64))))
cast("cast_INT4_to_FLOAT8E4M3FN", INT4, F8E4M3FN, small(INT4, [5], [-8, -1, 0, 3, 7]),
     small(F8E4M3FN, [5], codes(F8E4M3FN, [-8, -1, 0, 3, 7])))
cast("cast_BOOL_to_INT4", TensorProto.BOOL, INT4, np.array([True, False, True]),
     small(INT4, [3], [1, 0, 1]))

# ---- Cast: float4e2m1 ----------------------------------------------------
F4_IN = np.array(["0.48", "0.25", "1.05", "-3.5", "-8", "9", "1000000", "1e-7", "NaN", "INF",
                  "+INF", "-INF", "-4", "0.01", "-0.0"], dtype=np.float32)
cs = codes(F4E2M1, F4_IN.astype(np.float64))
for src, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
    cast(f"cast_{NAME[src]}_to_FLOAT4E2M1", src, F4E2M1, F4_IN.astype(np_t).reshape(3, 5),
         small(F4E2M1, [3, 5], codes(F4E2M1, F4_IN.astype(np_t).astype(np.float64))), opset=23)
    cast(f"cast_FLOAT4E2M1_to_{NAME[src]}", F4E2M1, src, small(F4E2M1, [3, 5], cs),
         values(F4E2M1, cs).astype(np_t).reshape(3, 5), opset=23)
x = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 5.01, -0.2, 7, -7], np.float32)
cast("cast_edges_FLOAT_to_FLOAT4E2M1", TensorProto.FLOAT, F4E2M1, x,
     small(F4E2M1, [11], codes(F4E2M1, x.astype(np.float64))), opset=25)

# ---- Cast: float8e8m0 (24) -----------------------------------------------
E8_IN = np.array(["0.0", "0.124", "0.25", "0.5", "1.1", "2.0", "4.0", "8.0"], dtype=np.float32)
for src, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
    x = E8_IN.astype(np_t)
    cast(f"cast_e8m0_{NAME[src]}_to_FLOAT8E8M0", src, F8E8M0, x.reshape(2, 4),
         small(F8E8M0, [2, 4], codes(F8E8M0, x.astype(np.float64))), opset=24, saturate=1,
         round_mode="up")
cs = codes(F8E8M0, E8_IN.astype(np.float64))
for dst, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
    cast(f"cast_e8m0_FLOAT8E8M0_to_{NAME[dst]}", F8E8M0, dst, small(F8E8M0, [2, 4], cs),
         values(F8E8M0, cs).astype(np_t).reshape(2, 4), opset=24)
x = np.array([0, 1, 1.4999, 1.5, 1.99, 3, 0.75, 6e-39, 1e-45, 3e38, np.inf, np.nan], np.float32)
for mode in ("up", "down", "nearest"):
    for sat in (1, 0):
        cast(f"cast_e8m0_{mode}_{'sat' if sat else 'no_sat'}", TensorProto.FLOAT, F8E8M0, x,
             small(F8E8M0, [12], codes(F8E8M0, x.astype(np.float64), saturate=bool(sat),
                                       mode=mode)), opset=25, saturate=sat, round_mode=mode)

# ---- Cast: reading int32_data (not raw) ----------------------------------
t8 = TensorProto(data_type=F8E4M3FN, dims=[3], int32_data=[0x38, 0xC0, 0x7F])
cast("cast_int32_data_FLOAT8E4M3FN_to_FLOAT", F8E4M3FN, TensorProto.FLOAT, t8,
     values(F8E4M3FN, [0x38, 0xC0, 0x7F]), opset=19)
t4 = TensorProto(data_type=INT4, dims=[3], int32_data=[0x9F, 0x07])  # -1, -7, 7
cast("cast_int32_data_INT4_to_INT8", INT4, TensorProto.INT8, t4,
     np.array([-1, -7, 7], np.int8), opset=21)

# ---- CastLike ------------------------------------------------------------
for t, opset in ((F8E4M3FN, 19), (F8E5M2FNUZ, 19), (INT4, 21), (F4E2M1, 23), (UINT2, 25)):
    x = F8_IN if t in F8 else np.array([-3, -1.5, 0, 1, 2.5, 5, 20], np.float32)
    like = small(t, [1], [0])
    xs = x.astype(np.float64)
    case(f"castlike_FLOAT_to_{NAME[t]}", helper.make_node("CastLike", ["input", "like"],
                                                          ["output"]),
         {"input": x, "like": like},
         {"output": small(t, [x.size], codes(t, xs, inf_nan=True) if t in F8 else codes(t, xs))},
         opset=opset)
case("castlike_no_saturate_FLOAT_to_FLOAT8E5M2",
     helper.make_node("CastLike", ["input", "like"], ["output"], saturate=0),
     {"input": F8_IN, "like": small(F8E5M2, [1], [0])},
     {"output": small(F8E5M2, [15], codes(F8E5M2, F8_IN.astype(np.float64), saturate=False))},
     opset=19)
case("castlike_e8m0_down", helper.make_node("CastLike", ["input", "like"], ["output"],
                                            round_mode="down"),
     {"input": E8_IN, "like": small(F8E8M0, [1], [127])},
     {"output": small(F8E8M0, [8], codes(F8E8M0, E8_IN.astype(np.float64), mode="down"))},
     opset=24)
cs = codes(F8E4M3FN, F8_IN.astype(np.float64))
case("castlike_FLOAT8E4M3FN_to_FLOAT", helper.make_node("CastLike", ["input", "like"],
                                                        ["output"]),
     {"input": small(F8E4M3FN, [15], cs), "like": np.zeros(1, np.float32)},
     {"output": values(F8E4M3FN, cs)}, opset=19)


# ---- QuantizeLinear ------------------------------------------------------
def ql_ref(x, scale, zp, t, axis=1, block=0, saturate=True, prec=np.float32, inf_nan=False):
    """y = saturate(x / scale + zp) with scale and zp expanded to x's shape,
    the division in `prec`."""
    def expand(v):
        v = np.asarray(v)
        if v.size == 1:
            return np.broadcast_to(v.reshape(()), x.shape)
        if block:
            return np.repeat(v, block, axis=axis).take(range(x.shape[axis]), axis=axis)
        shape = [1] * x.ndim
        shape[axis] = v.size
        return np.broadcast_to(v.reshape(shape), x.shape)
    q = (x.astype(prec) / expand(scale).astype(prec)).astype(np.float64)
    z = expand(zp).astype(np.float64)
    rng = {np.uint8: (0, 255), np.int8: (-128, 127), np.int16: (-32768, 32767),
           np.uint16: (0, 65535), UINT4: (0, 15), INT4: (-8, 7), UINT2: (0, 3), INT2: (-2, 1)}
    if t in rng:
        lo, hi = rng[t]
        y = np.clip(np.rint(q) + z, lo, hi)
        return y.astype(t) if not isinstance(t, int) else [int(v) for v in y.ravel()]
    return codes(t, (q + z).ravel(), saturate=saturate, inf_nan=inf_nan)


def ql(name, x, scale, zp, out, opset, **attrs):
    ins = ["x", "y_scale"] + (["y_zero_point"] if zp is not None else [])
    case(name, helper.make_node("QuantizeLinear", ins, ["y"], **attrs),
         {"x": x, "y_scale": scale, "y_zero_point": zp}, {"y": out}, opset=opset)


x = np.array([0.0, 1.0, 2.0, 100000.0, 200.0], np.float32)
for t, opset in ((F8E4M3FN, 19), (F8E5M2, 19), (F8E4M3FNUZ, 19), (F8E5M2FNUZ, 19),
                 (F8E4M3FN, 25)):
    ql(f"quantizelinear_{NAME[t].lower()[6:]}_{opset}", x, np.float32(2), small(t, [1], [0]),
       small(t, [5], ql_ref(x, np.float32(2), 0, t, inf_nan=opset < 24)), opset)
xs = np.array([0, 1000, -1000, np.inf, -np.inf, np.nan, 1e-6, 470], np.float32)
for t in F8:
    ql(f"quantizelinear_no_saturate_{NAME[t].lower()[6:]}", xs, np.float32(1),
       small(t, [1], [0]), small(t, [8], ql_ref(xs, np.float32(1), 0, t, saturate=False)), 19,
       saturate=0)
# the zero point is added before the conversion, as the formula says
ql("quantizelinear_e4m3fn_zero_point", x, np.float32(2), small(F8E4M3FN, [1], [0x38]),
   small(F8E4M3FN, [5], ql_ref(x, np.float32(2), 1.0, F8E4M3FN)), 19)
xi = np.array([[0.0, 2.5, 4.8, 8.6], [-30, -20, 6, 9], [12, 15, 16, 40]], np.float32)
sc3 = np.array([2.0, 3.0, 4.0], np.float32)
for t, opset in ((INT4, 21), (UINT4, 21), (INT4, 25)):
    ql(f"quantizelinear_{NAME[t].lower()}_{opset}", xi, sc3, small(t, [3], [1, 1, 1]),
       small(t, [3, 4], ql_ref(xi, sc3, np.ones(3), t, axis=0)), opset, axis=0)
x4 = np.array([[0.0, 2.5, 4.8, 8.6], [-30, -20, 6, 9], [-0.0, -2.5, -4.8, -8.6]], np.float32)
ql("quantizelinear_float4e2m1", x4, sc3, small(F4E2M1, [3], [0, 0, 0]),
   small(F4E2M1, [3, 4], ql_ref(x4, sc3, np.zeros(3), F4E2M1, axis=0)), 23, axis=0)
x2 = np.array([[0.0, 2.5, 4.8, 8.6], [-4.0, -3.0, 1.0, 2.0], [-0.0, -2.5, -4.8, -8.6]], np.float32)
ql("quantizelinear_int2", x2, sc3, small(INT2, [3], [0, 0, 0]),
   small(INT2, [3, 4], ql_ref(x2, sc3, np.zeros(3), INT2, axis=0)), 25, axis=0)
xu2 = np.array([[0.0, 2.5, 4.8, 8.6], [-2.0, -1.0, 1.0, 3.0], [4.0, 5.0, 6.0, 7.0]], np.float32)
ql("quantizelinear_uint2", xu2, sc3, small(UINT2, [3], [0, 0, 0]),
   small(UINT2, [3, 4], ql_ref(xu2, sc3, np.zeros(3), UINT2, axis=0)), 25, axis=0)
# an odd count: the last byte holds one 4-bit value
x5 = np.array([-9, -3.4, 0.5, 1.5, 40], np.float32)
ql("quantizelinear_int4_odd", x5, np.float32(1), small(INT4, [1], [0]),
   small(INT4, [5], ql_ref(x5, np.float32(1), 0, INT4)), 21)
# 16-bit outputs (21)
xw = np.array([0.0, -514.0, 3.0, -3.0, 2.9, -2.9, 3.1, -3.1, 65022.0, -66046.0, 65023.0,
               -66047.0, 65024.0, -66048.0, 70000.0, -70000.0], np.float32)
ql("quantizelinear_int16_21", xw, np.float32(2), np.int16(256),
   ql_ref(xw, np.float32(2), 256, np.int16), 21)
ql("quantizelinear_uint16_21", xw, np.float32(2), np.uint16(32767),
   ql_ref(xw, np.float32(2), 32767, np.uint16), 21)
# blocked (21): asymmetric, symmetric with output_dtype, a short last block
xb = np.array([[6.0, 12.0, 50.0, 5.0], [1.0, 8.0, 4.0, 5.0], [0.0, 20.0, 10.0, 4.0]], np.float32)
sb = np.array([[1.5, 2.5], [3.0, 4.9], [5.1, 6.9]], np.float32)
zb = np.array([[0, 1], [1, 0], [2, 3]], np.uint8)
ql("quantizelinear_blocked_asymmetric_21", xb, sb, zb,
   ql_ref(xb, sb, zb, np.uint8, axis=1, block=2), 21, axis=1, block_size=2)
xbs = np.array([[6.0, -8, -10, 5.0], [1.0, 8.0, 4.0, 5.0], [0.0, 20.0, 10.0, 4.0]], np.float32)
ql("quantizelinear_blocked_symmetric_21", xbs, sb, None,
   ql_ref(xbs, sb, 0, np.int16, axis=1, block=2), 21, axis=1, block_size=2,
   output_dtype=TensorProto.INT16)
xr = np.arange(15, dtype=np.float32).reshape(3, 5) - 7
sr = np.array([[1.0, 2.0], [0.5, 4.0], [3.0, 1.5]], np.float32)
ql("quantizelinear_blocked_remainder_int4", xr, sr, small(INT4, [3, 2], [0, 1, -1, 0, 2, 0]),
   small(INT4, [3, 5], ql_ref(xr, sr, np.array([[0, 1], [-1, 0], [2, 0]]), INT4, axis=1,
                              block=3)), 21, axis=1, block_size=3)
ql("quantizelinear_blocked_axis0_e4m3fn", xr, np.array([[1.0] * 5, [0.25] * 5], np.float32),
   None, small(F8E4M3FN, [3, 5], ql_ref(xr, np.array([[1.0] * 5, [0.25] * 5], np.float32), 0,
                                          F8E4M3FN, axis=0, block=2)), 21, axis=0, block_size=2,
   output_dtype=F8E4M3FN)
# 23: x and y_scale of different types; the division in y_scale's type or `precision`
xp = np.array([1000.7, -3.3, 20.49, 2049.0, 0.1], np.float32)
s16 = np.float16(3.0)
ql("quantizelinear_scale_float16_23", xp, s16, np.int16(0),
   ql_ref(xp, s16, 0, np.int16, prec=np.float16), 23)
ql("quantizelinear_precision_float_23", xp, s16, np.int16(0),
   ql_ref(xp, s16, 0, np.int16, prec=np.float32), 23, precision=TensorProto.FLOAT)
ql("quantizelinear_precision_float16_23", xp, np.float32(3.0), np.int16(0),
   ql_ref(xp, np.float32(3.0), 0, np.int16, prec=np.float16), 23, precision=TensorProto.FLOAT16)
# 24: a float8e8m0 scale (a power of two)
xe = np.array([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 50.0]], np.float32)
ql("quantizelinear_scale_e8m0", xe, small(F8E8M0, [2, 1], [127, 130]),
   small(F8E4M3FN, [2, 1], [0, 0]),
   small(F8E4M3FN, [2, 4], ql_ref(xe, np.array([[1.0], [8.0]], np.float32),
                                  np.zeros((2, 1)), F8E4M3FN, axis=1, block=4)), 24, axis=1,
   block_size=4)


# ---- DequantizeLinear ----------------------------------------------------
def dql(name, x, scale, zp, y, opset, **attrs):
    ins = ["x", "x_scale"] + (["x_zero_point"] if zp is not None else [])
    case(name, helper.make_node("DequantizeLinear", ins, ["y"], **attrs),
         {"x": x, "x_scale": scale, "x_zero_point": zp}, {"y": y}, opset=opset)


c5 = codes(F8E4M3FN, [0, 0.5, 1, 448, -104])
dql("dequantizelinear_e4m3fn_19", small(F8E4M3FN, [5], c5), np.float32(2), None,
    values(F8E4M3FN, c5) * 2, 19, axis=0)
dql("dequantizelinear_e4m3fn_float16_19", small(F8E4M3FN, [5], c5), np.float16(2), None,
    (values(F8E4M3FN, c5) * 2).astype(np.float16), 19, axis=0)
dql("dequantizelinear_e4m3fn_zero_point_19", small(F8E4M3FN, [5], c5), np.float32(2),
    small(F8E4M3FN, [1], [0x38]), (values(F8E4M3FN, c5) - 1) * 2, 19, axis=0)
c5 = codes(F8E5M2, [0, 0.5, 1, 49152, -96])
dql("dequantizelinear_e5m2_19", small(F8E5M2, [5], c5), np.float32(2), None,
    values(F8E5M2, c5) * 2, 19, axis=0)
for t in (F8E4M3FNUZ, F8E5M2FNUZ):
    cs = [0x00, 0x01, 0x7F, 0xFF, 0x80, 0x40]
    dql(f"dequantizelinear_{NAME[t].lower()[6:]}", small(t, [6], cs), np.float32(0.5), None,
        values(t, cs) * 0.5, 19)
for t, xv, zv, opset in ((INT4, [0, 1, 7, -4, -8], 1, 21), (UINT4, [0, 1, 7, 10, 15], 1, 21),
                         (INT2, [0, 1, -1, -2], 1, 25), (UINT2, [0, 1, 2, 3], 1, 25)):
    dql(f"dequantizelinear_{NAME[t].lower()}", small(t, [len(xv)], xv), np.float32(2),
        small(t, [1], [zv]), (np.array(xv, np.float32) - zv) * 2, opset, axis=0)
c5 = [encode(F4E2M1, v) for v in (0, 1, -1, 1.5, -4)]
dql("dequantizelinear_float4e2m1", small(F4E2M1, [5], c5), np.float32(2), small(F4E2M1, [1], [0]),
    values(F4E2M1, c5) * 2, 23, axis=0)
dql("dequantizelinear_int16_21", np.array([-300, -30, -1025, 1270], np.int16), np.float32(2),
    np.int16(-1024), np.array([1448.0, 1988.0, -2.0, 4588.0], np.float32), 21)
dql("dequantizelinear_uint16_21", np.array([30000, 31000, 32768, 33000], np.uint16),
    np.float32(2), np.uint16(32767), np.array([-5534.0, -3534.0, 2.0, 466.0], np.float32), 21)
xq = np.array([[[[3, 89], [34, 200], [74, 59]], [[5, 24], [24, 87], [32, 13]],
                [[5, 12], [12, 33], [65, 42]], [[245, 99], [4, 142], [121, 102]]]], np.uint8)
sq = np.array([[[[3.0, 2.0], [4.0, 1.0], [2.0, 2.0]], [[5.0, 2.0], [4.0, 3.0], [5.0, 2.0]]]],
              np.float32)
zq = np.array([[[[1, 0], [0, 1], [2, 20]], [[3, 2], [4, 3], [15, 2]]]], np.uint8)
dql("dequantizelinear_blocked_21", xq, sq, zq,
    (xq.astype(np.float32) - np.repeat(zq, 2, axis=1)) * np.repeat(sq, 2, axis=1), 21, axis=1,
    block_size=2)
# blocked int4 with a short last block along axis 1 (5 = 2 + 2 + 1)
xv = [[-8, 7, 3, -1, 0], [1, 2, 3, 4, 5]]
sv = np.array([[0.5, 2.0, 4.0], [1.0, 0.25, 8.0]], np.float32)
zv = [[0, 1, -1], [2, 0, 3]]
yv = (np.array(xv, np.float32) - np.repeat(np.array(zv), 2, axis=1)[:, :5]) * \
    np.repeat(sv, 2, axis=1)[:, :5]
yv = yv.astype(np.float32)
dql("dequantizelinear_blocked_remainder_int4", small(INT4, [2, 5], sum(xv, [])), sv,
    small(INT4, [2, 3], sum(zv, [])), yv, 21, axis=1, block_size=2)
# 23: output_dtype; 24: a float8e8m0 scale with output_dtype
x8 = np.array([-128, -3, 0, 5, 127], np.int8)
dql("dequantizelinear_output_dtype_float16", x8, np.float32(0.1), np.int8(1),
    ((x8.astype(np.float32) - 1) * np.float32(0.1)).astype(np.float16), 23,
    output_dtype=TensorProto.FLOAT16)
dql("dequantizelinear_output_dtype_float", x8, np.float16(0.1), None,
    x8.astype(np.float32) * np.float32(np.float16(0.1)), 23, output_dtype=TensorProto.FLOAT)
ce = codes(F4E2M1, [0, 0.5, -1, 6, -6, 3])
dql("dequantizelinear_scale_e8m0", small(F4E2M1, [2, 3], ce), small(F8E8M0, [2], [125, 131]),
    None, (values(F4E2M1, ce).reshape(2, 3) * np.array([[0.25], [16.0]])).astype(np.float32), 24,
    axis=0, output_dtype=TensorProto.FLOAT)


# ---- ops that move bytes: the small types where their type lists have them ----
def op_case(name, node, inputs, outputs, opset):
    case(name, node, inputs, outputs, opset=opset)


i4 = [-8, -1, 0, 3, 7]
op_case("identity_int4_odd", helper.make_node("Identity", ["x"], ["y"]),
        {"x": small(INT4, [5], i4)}, {"y": small(INT4, [5], i4)}, 21)
u4 = list(range(1, 7))
op_case("reshape_uint4", helper.make_node("Reshape", ["x", "s"], ["y"]),
        {"x": small(UINT4, [2, 3], u4), "s": np.array([3, 2], np.int64)},
        {"y": small(UINT4, [3, 2], u4)}, 21)
c6 = codes(F8E5M2, [1, -2, 0.5, 3, 1e5, -0.0])
op_case("transpose_float8e5m2", helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0]),
        {"x": small(F8E5M2, [2, 3], c6)},
        {"y": small(F8E5M2, [3, 2], np.array(c6).reshape(2, 3).T.ravel())}, 21)
f12 = codes(F4E2M1, [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.5, -1, -6, -0.0])
op_case("flatten_float4e2m1", helper.make_node("Flatten", ["x"], ["y"], axis=1),
        {"x": small(F4E2M1, [2, 2, 3], f12)}, {"y": small(F4E2M1, [2, 6], f12)}, 23)
i2 = [-2, -1, 0, 1, 1]
op_case("unsqueeze_int2", helper.make_node("Unsqueeze", ["x", "a"], ["y"]),
        {"x": small(INT2, [5], i2), "a": np.array([0], np.int64)},
        {"y": small(INT2, [1, 5], i2)}, 25)
op_case("squeeze_uint2", helper.make_node("Squeeze", ["x", "a"], ["y"]),
        {"x": small(UINT2, [1, 5], [3, 2, 1, 0, 3]), "a": np.array([0], np.int64)},
        {"y": small(UINT2, [5], [3, 2, 1, 0, 3])}, 25)
op_case("pad_int4", helper.make_node("Pad", ["x", "p", "v"], ["y"]),
        {"x": small(INT4, [3], [1, 2, 3]), "p": np.array([1, 2], np.int64),
         "v": small(INT4, [], [-3])}, {"y": small(INT4, [6], [-3, 1, 2, 3, -3, -3])}, 21)
op_case("shape_float8e4m3fnuz", helper.make_node("Shape", ["x"], ["y"]),
        {"x": small(F8E4M3FNUZ, [2, 3], [0] * 6)}, {"y": np.array([2, 3], np.int64)}, 19)
op_case("size_float8e8m0", helper.make_node("Size", ["x"], ["y"]),
        {"x": small(F8E8M0, [2, 3], [127] * 6)}, {"y": np.array(6, np.int64)}, 24)
op_case("constant_int4", helper.make_node("Constant", [], ["y"],
                                          value=small(INT4, [5], i4)),
        {}, {"y": small(INT4, [5], i4)}, 21)
op_case("constantofshape_float8e4m3fn",
        helper.make_node("ConstantOfShape", ["s"], ["y"], value=small(F8E4M3FN, [1], [0xb8])),
        {"s": np.array([2, 2], np.int64)}, {"y": small(F8E4M3FN, [2, 2], [0xb8] * 4)}, 21)
branches = {}
for b, vals in (("then", [1, 2, 3]), ("else", [-4, -5, -6])):
    branches[b] = helper.make_graph(
        [helper.make_node("Constant", [], ["r"], value=small(INT4, [3], vals))], b, [],
        [helper.make_tensor_value_info("r", INT4, [3])])
for cond, want in ((True, [1, 2, 3]), (False, [-4, -5, -6])):
    op_case(f"if_int4_{str(cond).lower()}",
            helper.make_node("If", ["c"], ["y"], then_branch=branches["then"],
                             else_branch=branches["else"]),
            {"c": np.array(cond)}, {"y": small(INT4, [3], want)}, 21)
# IsNaN / IsInf (20) and Dropout (22) take the float8 types.
cn = codes(F8E5M2, [1.0, np.nan, np.inf, -np.inf, 0], saturate=False)
op_case("isnan_float8e5m2", helper.make_node("IsNaN", ["x"], ["y"]), {"x": small(F8E5M2, [5], cn)},
        {"y": np.array([False, True, False, False, False])}, 20)
op_case("isinf_float8e5m2", helper.make_node("IsInf", ["x"], ["y"]), {"x": small(F8E5M2, [5], cn)},
        {"y": np.array([False, False, True, True, False])}, 20)
cn = [0x38, 0x7f, 0xff, 0x00]
op_case("isnan_float8e4m3fn", helper.make_node("IsNaN", ["x"], ["y"]),
        {"x": small(F8E4M3FN, [4], cn)}, {"y": np.array([False, True, True, False])}, 20)
op_case("dropout_float8e4m3fn", helper.make_node("Dropout", ["x"], ["y"]),
        {"x": small(F8E4M3FN, [4], cn)}, {"y": small(F8E4M3FN, [4], cn)}, 22)
# Loop carries an int4 tensor; Scan stacks float8e5m2 slices.
vi = helper.make_tensor_value_info
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["v_in"],
                                                                        ["v_out"])],
    "body", [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("v_in", INT4, [3])],
    [vi("c_out", TensorProto.BOOL, []), vi("v_out", INT4, [3])])
op_case("loop_int4", helper.make_node("Loop", ["m", "", "v"], ["y"], body=body),
        {"m": np.array(2, np.int64), "v": small(INT4, [3], [-8, 0, 7])},
        {"y": small(INT4, [3], [-8, 0, 7])}, 21)
sbody = helper.make_graph([helper.make_node("Identity", ["s_in"], ["s_out"])], "sbody",
                          [vi("s_in", F8E5M2, [3])], [vi("s_out", F8E5M2, [3])])
op_case("scan_float8e5m2", helper.make_node("Scan", ["x"], ["y"], body=sbody, num_scan_inputs=1),
        {"x": small(F8E5M2, [2, 3], c6)}, {"y": small(F8E5M2, [2, 3], c6)}, 21)
