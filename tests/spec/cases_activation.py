"""Activations of the newer opsets. Celu 28 adds float16, bfloat16 and
double: the spec's example (alpha 2) in float32 and float64. Swish 24 and
SwiGLU 28: their examples, then other dtypes and alphas."""
import numpy as np
from onnx import helper

from spec_case import case


def celu(x, alpha):
    return np.maximum(0, x) + np.minimum(0, alpha * (np.exp(x / alpha) - 1))


x = np.array([[[[0.8439683], [0.5665144], [0.05836735]], [[0.02916367], [0.12964272], [0.5060197]],
               [[0.79538304], [0.9411346], [0.9546573]]],
              [[[0.17730942], [0.46192095], [0.26480448]], [[0.6746842], [0.01665257], [0.62473077]],
               [[0.9240844], [0.9722341], [0.11965699]]],
              [[[0.41356155], [0.9129373], [0.59330076]], [[0.81929934], [0.7862604], [0.11799799]],
               [[0.69248444], [0.54119414], [0.07513223]]]])
x = np.concatenate([x, -x])  # the negative side too
for t, name in ((np.float32, "celu_28"), (np.float64, "celu_28_double")):
    xt = x.astype(t)
    case(name, helper.make_node("Celu", ["X"], ["Y"], alpha=2.0), {"X": xt},
         {"Y": celu(xt.astype(np.float64), 2.0).astype(t)}, opset=28)


# Swish 24: x * sigmoid(alpha * x); the spec's example, then other alphas and dtypes.
def swish(x, alpha):
    return x / (1 + np.exp(-alpha * x))


xs = np.array([3, 4, 5], dtype=np.float32)
case("swish", helper.make_node("Swish", ["x"], ["y"], alpha=1.0), {"x": xs},
     {"y": swish(xs.astype(np.float64), 1.0).astype(np.float32)}, opset=24)
xw = np.linspace(-8, 8, 25).reshape(5, 5)
for t, name, alpha in ((np.float32, "swish_x_default_alpha", None), (np.float16, "swish_x_fp16", 0.5),
                       (np.float64, "swish_x_double", 1.702)):
    xt = xw.astype(t)
    kw = {} if alpha is None else {"alpha": alpha}
    case(name, helper.make_node("Swish", ["x"], ["y"], **kw), {"x": xt},
         {"y": swish(xt.astype(np.float64), 1.0 if alpha is None else alpha).astype(t)}, opset=24)


# SwiGLU 28: Swish_alpha(A) * B; the spec's three examples, then double.
def swiglu(a, b, alpha):
    return swish(a.astype(np.float64), alpha) * b.astype(np.float64)


ga = [[1.0, -2.0, 3.0, 4.0], [-1.0, 2.0, -3.0, 0.5]]
gb = [[0.5, 1.0, -1.0, 2.0], [2.0, -1.0, 0.5, 1.0]]
for name, t, kw in (("swiglu_alpha", np.float32, {"alpha": 0.5}), ("swiglu_float16", np.float16, {}),
                    ("swiglu", np.float32, {}), ("swiglu_x_double", np.float64, {"alpha": 1.5})):
    a, b = np.array(ga, t), np.array(gb, t)
    case(name, helper.make_node("SwiGLU", ["a", "b"], ["y"], **kw), {"a": a, "b": b},
         {"y": swiglu(a, b, kw.get("alpha", 1.0)).astype(t)}, opset=28)
