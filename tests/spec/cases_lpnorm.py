"""LpNormalization 1 and 22 (22 adds bfloat16): the spec's examples in
float32, the default one at opset 1 too, and float16, double and bfloat16
variants with a zero norm (which gives zeros)."""
import numpy as np
from onnx import helper

from spec_case import bf16, bf16_round, case


def lp(x, axis, p):
    x64 = x.astype(np.float64)
    n = np.sum(np.abs(x64), axis=axis, keepdims=True) if p == 1 else \
        np.sqrt(np.sum(x64 ** 2, axis=axis, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n == 0, 0, x64 / n)


def node(**kw):
    return helper.make_node("LpNormalization", ["x"], ["y"], **kw)


x3 = np.array([[[1.0, 2.0, 2.0], [3.0, 4.0, 0.0]], [[0.0, 5.0, 5.0], [6.0, 8.0, 0.0]]],
              dtype=np.float32)
x2 = np.array([[3.0, 4.0], [6.0, 8.0]], dtype=np.float32)
examples = (
    ("lpnormalization_default", {}, x3),
    ("l1normalization_axis_0", {"axis": 0, "p": 1}, np.array([3.0, 4.0], dtype=np.float32)),
    ("l1normalization_axis_1", {"axis": 1, "p": 1}, x2),
    ("l1normalization_axis_last", {"axis": -1, "p": 1}, x3),
    ("l2normalization_axis_0", {"axis": 0, "p": 2}, x3),
    ("l2normalization_axis_1", {"axis": 1, "p": 2}, x2),
)
for name, kw, x in examples:
    y = lp(x, kw.get("axis", -1), kw.get("p", 2)).astype(np.float32)
    case(name, node(**kw), {"x": x}, {"y": y}, opset=22)
case("lpnormalization_default_v1", node(), {"x": x3},
     {"y": lp(x3, -1, 2).astype(np.float32)}, opset=1)

# other dtypes, a zero row (norm 0 gives 0) and a middle axis
xz = np.array([[[1.0, -2.0, 2.0], [0.0, 0.0, 0.0]], [[0.5, 5.0, -5.0], [6.0, 8.0, 0.25]]])
for p in (1, 2):
    for t, name in ((np.float64, "double"), (np.float16, "float16")):
        xt = xz.astype(t)
        case("lpnormalization_p%d_%s" % (p, name), node(p=p, axis=1), {"x": xt},
             {"y": lp(xt, 1, p).astype(t)}, opset=22)
    case("lpnormalization_p%d_bfloat16" % p, node(p=p), {"x": bf16(xz)},
         {"y": bf16(lp(bf16_round(xz), -1, p))}, opset=22)
