"""Range 27 (float16 and bfloat16 with stash_type): the spec's four
examples, then a range long enough that float16 arithmetic and float32
arithmetic differ (stash_type 1 against stash_type 10), and bfloat16 with
a negative delta."""
import numpy as np
from onnx import helper

from spec_case import bf16, bf16_round, case


def node(**kw):
    return helper.make_node("Range", ["start", "limit", "delta"], ["output"], **kw)


def io(start, limit, delta, out):
    return {"start": start, "limit": limit, "delta": delta}, {"output": out}


case("range_bfloat16_type_positive_delta", node(),
     *io(bf16(1.0), bf16(5.0), bf16(2.0), bf16(np.arange(1.0, 5.0, 2.0, dtype=np.float32))), opset=27)
case("range_float16_type_positive_delta", node(),
     *io(np.float16(1), np.float16(5), np.float16(2), np.arange(1, 5, 2, dtype=np.float16)), opset=27)
case("range_float_type_positive_delta", node(),
     *io(np.float32(1), np.float32(5), np.float32(2), np.arange(1, 5, 2, dtype=np.float32)), opset=27)
case("range_int32_type_negative_delta", node(),
     *io(np.int32(10), np.int32(6), np.int32(-3), np.arange(10, 6, -3, dtype=np.int32)), opset=27)

# 100 + i * 3.3 for 60 values: in float32 then rounded once (stash_type 1), or
# with i * delta and the sum each rounded to float16 (stash_type 10): 12 of the
# 60 values differ between the two.
s, lim, d = np.float16(100), np.float16(298), np.float16(3.3)
f = np.float32
n = int(np.ceil((f(lim) - f(s)) / f(d)))
i = np.arange(n, dtype=np.float32)
case("range_float16_stash_float", node(),
     *io(s, lim, d, (f(s) + i * f(d)).astype(np.float16)), opset=27)
n16 = int(np.ceil(f(np.float16(f(np.float16(f(lim) - f(s))) / f(d)))))
i = np.arange(n16, dtype=np.float32)
own = (f(s) + (i * f(d)).astype(np.float16).astype(f)).astype(np.float16)
case("range_float16_stash_own", node(stash_type=10), *io(s, lim, d, own), opset=27)
vals = bf16_round(np.float32(bf16_round(2.5)[()]) + np.arange(4, dtype=np.float32) * np.float32(bf16_round(-0.75)[()]))
case("range_bfloat16_negative_delta", node(),
     *io(bf16(2.5), bf16(-0.5), bf16(-0.75), bf16(vals)), opset=27)
