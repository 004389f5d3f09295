"""CumProd 26 and TensorScatter 24: the spec's examples, expected values
computed here (np.cumprod; the TensorScatter pseudocode of the operator's
description), then cases the examples miss: CumProd in float16 and int64,
reverse over a middle axis; TensorScatter without write_indices, on int8
data, with axis -1 and circular wrap-around."""
import numpy as np
from onnx import helper

from spec_case import case


def cumprod(x, axis, exclusive=0, reverse=0):
    x = x.astype(np.float64) if x.dtype.kind == "f" else x
    if reverse:
        x = np.flip(x, axis)
    y = np.cumprod(x, axis=axis)
    if exclusive:
        y = np.concatenate([np.ones_like(np.take(y, [0], axis)),
                            np.take(y, range(y.shape[axis] - 1), axis)], axis)
    return np.flip(y, axis) if reverse else y


def cp_case(name, x, axis, **kw):
    node = helper.make_node("CumProd", ["x", "axis"], ["y"], **kw)
    y = cumprod(x, axis, kw.get("exclusive", 0), kw.get("reverse", 0)).astype(x.dtype)
    case(name, node, {"x": x, "axis": np.array(axis, np.int32)}, {"y": y}, opset=26)


x1 = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
cp_case("cumprod_1d", x1, 0)
cp_case("cumprod_1d_exclusive", x1, 0, exclusive=1)
cp_case("cumprod_1d_int32_exclusive", np.array([1, 2, 3, 4, 5], np.int32), 0, exclusive=1)
cp_case("cumprod_1d_reverse", x1, 0, reverse=1)
cp_case("cumprod_1d_reverse_exclusive", x1, 0, reverse=1, exclusive=1)
x2 = np.arange(1.0, 7.0).reshape(2, 3)
cp_case("cumprod_2d_axis_0", x2, 0)
cp_case("cumprod_2d_axis_1", x2, 1)
cp_case("cumprod_2d_int32", np.arange(1, 7, dtype=np.int32).reshape(2, 3), 0)
cp_case("cumprod_2d_negative_axis", x2, -1)
cp_case("cumprod_x_fp16", np.linspace(0.5, 1.5, 12).astype(np.float16).reshape(3, 4), 1)
cp_case("cumprod_x_int64_reverse_middle_axis",
        np.arange(-6, 18, dtype=np.int64).reshape(2, 3, 4), 1, reverse=1)
cp_case("cumprod_x_float32_3d_exclusive", np.linspace(-2, 2, 24).astype(np.float32).reshape(2, 3, 4),
        2, exclusive=1)


def tensor_scatter(past, update, write_indices=None, axis=-2, mode="linear"):
    axis %= past.ndim
    out = past.copy()
    wi = np.zeros(past.shape[0], np.int64) if write_indices is None else write_indices
    for prefix in np.ndindex(past.shape[:axis]):
        for s in range(update.shape[axis]):
            at = wi[prefix[0]] + s
            if mode == "circular":
                at %= past.shape[axis]
            out[prefix + (at,)] = update[prefix + (s,)]
    return out


def ts_case(name, past, update, wi=None, **kw):
    ins = ["past_cache", "update"] + (["write_indices"] if wi is not None else [])
    node = helper.make_node("TensorScatter", ins, ["present_cache"], **kw)
    y = tensor_scatter(past, update, wi, kw.get("axis", -2), kw.get("mode", "linear"))
    case(name, node, {"past_cache": past, "update": update, "write_indices": wi},
         {"present_cache": y}, opset=24)


row = [[1, 2, 3, 4, 5], [5, 6, 7, 8, 9], [8, 7, 6, 5, 4], [4, 3, 2, 1, 0]]
p4 = np.array([[row], [row]], np.float32)
ts_case("tensorscatter", p4, np.array([[[[5] * 5]], [[[1] * 5]]], np.float32),
        np.array([1, 2], np.int64), mode="linear")
row3 = [[1, 2, 3, 4, 5], [5, 6, 7, 8, 9], [8, 7, 6, 5, 4], [5, 4, 3, 2, 1]]
ts_case("tensorscatter_3d", np.array([row3] * 3, np.float32),
        np.array([[[4] * 5, [5] * 5], [[6] * 5, [7] * 5], [[2] * 5, [3] * 5]], np.float32),
        np.array([1, 2, 0], np.int64))
ts_case("tensorscatter_circular", p4,
        np.array([[[[5] * 5, [6] * 5]], [[[1] * 5, [2] * 5]]], np.float32),
        np.array([1, 3], np.int64), mode="circular")
rng = np.random.RandomState(24)
ts_case("tensorscatter_x_no_write_indices", rng.rand(2, 3, 6, 4).astype(np.float32),
        rng.rand(2, 3, 2, 4).astype(np.float32))
ts_case("tensorscatter_x_int8_axis_last", rng.randint(-100, 100, (3, 2, 5)).astype(np.int8),
        rng.randint(-100, 100, (3, 2, 2)).astype(np.int8), np.array([0, 3, 1], np.int64), axis=-1)
ts_case("tensorscatter_x_circular_wrap_fp16", rng.rand(2, 5, 3).astype(np.float16),
        rng.rand(2, 4, 3).astype(np.float16), np.array([3, 9], np.int64), mode="circular", axis=1)
