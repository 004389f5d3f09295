"""RMSNormalization 23: the spec's examples (2-D, 3-D with epsilon 0.1, the
default axis, 4-D; every axis, positive and negative), then X and scale of
different types (Y takes the scale's), a scale broadcast over part of the
normalized shape, and double."""
import numpy as np
from onnx import helper

from spec_case import case

rng = np.random.RandomState(23)


def rms_norm(x, w, axis=-1, epsilon=1e-5):
    x = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    ms = np.mean(x * x, axis=axes, keepdims=True)
    return x / np.sqrt(ms + epsilon) * w.astype(np.float64)


def rms_case(name, x, w, axis=None, epsilon=None, yt=None):
    kw = {}
    if axis is not None:
        kw["axis"] = axis
    if epsilon is not None:
        kw["epsilon"] = epsilon
    y = rms_norm(x, w, -1 if axis is None else axis, 1e-5 if epsilon is None else epsilon)
    case(name, helper.make_node("RMSNormalization", ["X", "W"], ["Y"], **kw), {"X": x, "W": w},
         {"Y": y.astype(yt or w.dtype)}, opset=23)


def axes_cases(prefix, x, suffix="", epsilon=None):
    for i in range(x.ndim):
        for axis in (i, i - x.ndim):
            w = rng.randn(*x.shape[axis:]).astype(np.float32)
            tag = "axis%d" % axis if axis >= 0 else "axis_negative_%d" % -axis
            rms_case("rms_normalization_%s_%s%s" % (prefix, tag, suffix), x, w, axis, epsilon)


axes_cases("2d", rng.randn(3, 4).astype(np.float32))
axes_cases("3d", rng.randn(2, 3, 5).astype(np.float32), "_epsilon", 1e-1)
x4 = rng.randn(2, 3, 4, 5).astype(np.float32)
rms_case("rms_normalization_default_axis", x4, rng.randn(5).astype(np.float32))
axes_cases("4d", rng.randn(2, 3, 4, 5).astype(np.float32))
rms_case("rms_normalization_x_fp16_scale_float", rng.randn(3, 8).astype(np.float16),
         rng.randn(8).astype(np.float32))
rms_case("rms_normalization_x_scale_broadcast", x4, rng.randn(1, 5).astype(np.float32), axis=2)
rms_case("rms_normalization_x_double", rng.randn(4, 6), rng.randn(6), axis=-1)
