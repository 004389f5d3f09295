"""Col2Im 18 and CenterCropPad 18: the spec's examples, with expected
outputs from numpy ports of the spec's text (PyTorch's fold for Col2Im; a
centred window, rounded down, and padding with the odd pixel at the end for
CenterCropPad), plus other dtypes and a 3-D Col2Im with every attribute."""
import itertools

import numpy as np
from onnx import helper

from spec_case import case


def col2im(x, image, block, dilations=None, pads=None, strides=None):
    k = len(image)
    dil = dilations or [1] * k
    st = strides or [1] * k
    pd = pads or [0] * (2 * k)
    grid = [(image[i] + pd[i] + pd[k + i] - (dil[i] * (block[i] - 1) + 1)) // st[i] + 1
            for i in range(k)]
    N, CB, L = x.shape
    nb = int(np.prod(block))
    assert L == int(np.prod(grid)) and CB % nb == 0
    y = np.zeros([N, CB // nb] + list(image), np.float64)
    for bi, b in enumerate(itertools.product(*[range(v) for v in block])):
        for li, l in enumerate(itertools.product(*[range(v) for v in grid])):
            pos = [l[i] * st[i] - pd[i] + b[i] * dil[i] for i in range(k)]
            if all(0 <= pos[i] < image[i] for i in range(k)):
                y[(slice(None), slice(None)) + tuple(pos)] += x[:, bi::nb, li]
    return y


def c2i_node(**kw):
    return helper.make_node("Col2Im", ["input", "image_shape", "block_shape"], ["output"], **kw)


def c2i_case(name, x, image, block, **kw):
    y = col2im(x.astype(np.float64), image, block, kw.get("dilations"), kw.get("pads"),
               kw.get("strides")).astype(x.dtype)
    case(name, c2i_node(**kw), {"input": x, "image_shape": np.array(image, np.int64),
                                "block_shape": np.array(block, np.int64)}, {"output": y}, opset=18)


# the spec's examples (inputs as written there)
x = np.array([[[1, 6, 11, 16, 21], [2, 7, 12, 17, 22], [3, 8, 13, 18, 23], [4, 9, 14, 19, 24],
               [5, 0, 15, 20, 25]]], np.float32)
c2i_case("col2im", x, [5, 5], [1, 5])
x5 = np.array([np.arange(1, 61).reshape(12, 5).T, np.arange(61, 121).reshape(12, 5).T],
              np.float32).reshape(1, 10, 12)
c2i_case("col2im_5d", x5, [3, 4, 5], [1, 1, 5])
c2i_case("col2im_dilations", np.arange(1, 21, dtype=np.float32).reshape(1, 5, 4)
         .transpose(0, 2, 1).copy(), [6, 6], [2, 2], dilations=[1, 5])
c2i_case("col2im_pads", np.arange(1, 76, dtype=np.float32).reshape(1, 15, 5).transpose(0, 2, 1)
         .copy(), [5, 5], [1, 5], pads=[0, 1, 0, 1])
xs = np.zeros((1, 9, 4), np.float32)
xs[0, [1, 2, 3, 7]] = 1
c2i_case("col2im_strides", xs, [5, 5], [3, 3], strides=[2, 2])
# the spec's expected outputs, written out, check the port above
assert (col2im(x, [5, 5], [1, 5])[0, 0, 1] == [6, 7, 8, 9, 0]).all()
assert (col2im(xs, [5, 5], [3, 3], strides=[2, 2])[0, 0, 2] == [0, 2, 1, 2, 1]).all()
assert (col2im(np.arange(1, 76, dtype=np.float32).reshape(1, 15, 5).transpose(0, 2, 1), [5, 5],
               [1, 5], pads=[0, 1, 0, 1])[0, 0, 0] == [8, 21, 24, 27, 24]).all()

# every attribute at once, in 3-D, two images of two channels; other dtypes
rng = np.random.default_rng(18)
image, block, kw = [4, 5, 6], [2, 1, 3], dict(dilations=[1, 2, 2], pads=[1, 0, 2, 0, 1, 1],
                                               strides=[2, 1, 3])
L = 1
for i in range(3):
    L *= (image[i] + kw["pads"][i] + kw["pads"][3 + i] - (kw["dilations"][i] * (block[i] - 1) + 1)) \
        // kw["strides"][i] + 1
x3 = rng.standard_normal((2, 2 * 6, L))
c2i_case("col2im_3d_all_attributes", x3.astype(np.float32), image, block, **kw)
c2i_case("col2im_double", x3, image, block, **kw)
c2i_case("col2im_float16", x3.astype(np.float16), image, block, **kw)
c2i_case("col2im_int32", (x3 * 10).astype(np.int32), image, block, **kw)


def center_crop_pad(x, shape, axes=None):
    axes = [a % x.ndim for a in (axes if axes is not None else range(x.ndim))]
    y = x
    for a, t in zip(axes, shape):
        d = y.shape[a]
        if d >= t:
            s = (d - t) // 2
            y = np.take(y, range(s, s + t), axis=a)
        else:
            b = (t - d) // 2
            w = [(0, 0)] * y.ndim
            w[a] = (b, t - d - b)
            y = np.pad(y, w)
    return y


def ccp_case(name, x, shape, axes=None, stype=np.int64):
    kw = {} if axes is None else {"axes": axes}
    n = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], **kw)
    case(name, n, {"x": x, "shape": np.array(shape, stype)},
         {"y": center_crop_pad(x, shape, axes)}, opset=18)


rng = np.random.default_rng(1)
ccp_case("center_crop_pad_crop", rng.standard_normal((20, 10, 3)).astype(np.float32), [10, 7, 3])
ccp_case("center_crop_pad_crop_and_pad", rng.standard_normal((20, 8, 3)).astype(np.float32),
         [10, 10, 3])
ccp_case("center_crop_pad_crop_axes_chw", rng.standard_normal((3, 20, 8)).astype(np.float32),
         [10, 9], [1, 2])
ccp_case("center_crop_pad_crop_axes_hwc", rng.standard_normal((20, 8, 3)).astype(np.float32),
         [10, 9], [0, 1])
ccp_case("center_crop_pad_crop_negative_axes_hwc",
         rng.standard_normal((20, 8, 3)).astype(np.float32), [10, 9], [-3, -2])
ccp_case("center_crop_pad_pad", rng.standard_normal((10, 7, 3)).astype(np.float32), [20, 10, 3])
# the spec's slices check the port: crop [5:15, 1:8], pad into [5:15, 1:8]
xc = rng.standard_normal((20, 10, 3))
assert (center_crop_pad(xc, [10, 7, 3]) == xc[5:15, 1:8, :]).all()
assert (center_crop_pad(xc[:10, :7], [20, 10, 3])[5:15, 1:8] == xc[:10, :7]).all()
# other dtypes, int32 shape, padding on the last axis and a crop to 0
ccp_case("center_crop_pad_int8_int32_shape", rng.integers(-100, 100, (5, 4, 3)).astype(np.int8),
         [2, 7], [0, 2], stype=np.int32)
ccp_case("center_crop_pad_bool", rng.integers(0, 2, (4, 5)).astype(bool), [7, 2])
ccp_case("center_crop_pad_double_4d", rng.standard_normal((2, 3, 6, 5)), [3, 8], [-2, -1])
ccp_case("center_crop_pad_to_empty", rng.standard_normal((4, 5)).astype(np.float32), [0], [1])
