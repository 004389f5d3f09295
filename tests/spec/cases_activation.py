"""Activations of the newer opsets. Celu 28 adds float16, bfloat16 and
double: the spec's example (alpha 2) in float32 and float64."""
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
