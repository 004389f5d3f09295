"""AffineGrid 20 and MaxRoiPool 1 and 22. AffineGrid: the spec's 2-D and
3-D examples, each with align_corners 0 and 1, the grid built from the
spec's text (positions over [-1, 1]: pixel centres, or corners with
align_corners=1; x along the last axis), then in double, float16 and
bfloat16. MaxRoiPool has no examples in the spec: cases from its text
(Fast R-CNN ROI pooling: coordinates scaled and rounded, bins floored and
ceiled, clipped to the image, empty bins 0), with ROIs partly outside the
image and a spatial_scale."""
import numpy as np
from onnx import helper

from spec_case import bf16, bf16_round, case


def positions(n, align):
    if align:
        return np.array([-1.0]) if n == 1 else np.linspace(-1, 1, n)
    return (2 * np.arange(n) + 1) / n - 1


def affine_grid(theta, size, align):
    sp = size[2:]
    axes = [positions(n, align) for n in sp]
    mesh = np.meshgrid(*axes, indexing="ij")  # (D,) H, W
    pts = np.stack(mesh[::-1] + [np.ones(sp)], axis=-1)  # (x, y[, z], 1)
    return np.einsum("nij,...j->n...i", theta.astype(np.float64), pts)


rng = np.random.default_rng(20)
theta_2d = np.array([[[1, 0, 0], [0, 1, 0]], [[0.6, -0.8, 0.2], [0.8, 0.6, -0.4]]])
theta_3d = np.concatenate([np.eye(3, 4)[None], rng.uniform(-1, 1, (1, 3, 4))])
for name, theta, size in (("2d", theta_2d, [2, 3, 5, 6]), ("3d", theta_3d, [2, 3, 4, 5, 6])):
    for align in (0, 1):
        node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
        tn = "affine_grid_" + name + ("_align_corners" if align else "")
        sz = np.array(size, np.int64)
        case(tn, node, {"theta": theta.astype(np.float32), "size": sz},
             {"grid": affine_grid(theta, size, align).astype(np.float32)}, opset=20)
        if name == "2d":
            case(tn + "_double", node, {"theta": theta, "size": sz},
                 {"grid": affine_grid(theta, size, align)}, opset=20)
            case(tn + "_float16", node, {"theta": theta.astype(np.float16), "size": sz},
                 {"grid": affine_grid(theta.astype(np.float16), size, align).astype(np.float16)},
                 opset=20)
            case(tn + "_bfloat16", node, {"theta": bf16(theta), "size": sz},
                 {"grid": bf16(affine_grid(bf16_round(theta), size, align))}, opset=20)
# sizes of one: a corner-aligned single pixel sits at -1, a centred one at 0
node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=1)
case("affine_grid_2d_size_one", node,
     {"theta": theta_2d.astype(np.float32), "size": np.array([2, 1, 1, 3], np.int64)},
     {"grid": affine_grid(theta_2d, [2, 1, 1, 3], 1).astype(np.float32)}, opset=20)


def max_roi_pool(x, rois, pooled, scale):
    R, (N, C, H, W) = len(rois), x.shape
    ph, pw = pooled
    y = np.zeros((R, C, ph, pw), np.float64)
    for k, r in enumerate(rois.astype(np.float64)):
        b = int(r[0])
        # C's round: half away from zero
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) + 0.5)) for v in r[1:] * scale)
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph):
            hs = min(max(int(np.floor(i * rh / ph)) + y1, 0), H)
            he = min(max(int(np.ceil((i + 1) * rh / ph)) + y1, 0), H)
            for j in range(pw):
                ws = min(max(int(np.floor(j * rw / pw)) + x1, 0), W)
                we = min(max(int(np.ceil((j + 1) * rw / pw)) + x1, 0), W)
                if he > hs and we > ws:
                    y[k, :, i, j] = x[b, :, hs:he, ws:we].max(axis=(1, 2))
    return y


x = rng.standard_normal((2, 3, 6, 7))
rois = np.array([[0, 0, 0, 6, 5], [1, 1, 2, 4, 4], [0, 2.4, 1.6, 2.4, 1.6],
                 [1, -3, -2, 3, 9], [0, 5, 4, 12, 10], [1, 8, 1, 10, 3]])
for opset in (1, 22):
    for pooled, scale in (([2, 2], 1.0), ([3, 4], 0.5), ([1, 1], 1.0)):
        node = helper.make_node("MaxRoiPool", ["X", "rois"], ["Y"], pooled_shape=pooled,
                                spatial_scale=scale)
        tn = "maxroipool_%dx%d_scale%g_v%d" % (pooled[0], pooled[1], scale, opset)
        case(tn.replace(".", "_"), node,
             {"X": x.astype(np.float32), "rois": rois.astype(np.float32)},
             {"Y": max_roi_pool(x, rois, pooled, scale).astype(np.float32)}, opset=opset)
node = helper.make_node("MaxRoiPool", ["X", "rois"], ["Y"], pooled_shape=[2, 3])
case("maxroipool_double", node, {"X": x, "rois": rois},
     {"Y": max_roi_pool(x, rois, [2, 3], 1.0)}, opset=22)
case("maxroipool_float16", node, {"X": x.astype(np.float16), "rois": rois.astype(np.float16)},
     {"Y": max_roi_pool(x.astype(np.float16), rois, [2, 3], 1.0).astype(np.float16)}, opset=22)
case("maxroipool_bfloat16", node, {"X": bf16(x), "rois": bf16(rois)},
     {"Y": bf16(max_roi_pool(bf16_round(x), bf16_round(rois), [2, 3], 1.0))}, opset=22)
