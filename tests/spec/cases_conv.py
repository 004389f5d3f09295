"""DeformConv 19 and 22 (22 adds bfloat16): the spec's examples (with and
without padding, with mask and bias, with two offset groups) at both
versions, and more cases (strides, dilations, groups, 1-D and 3-D, other
dtypes) whose expected outputs come from a numpy port of the spec's text:
tap q of output o samples X at o * stride - pad_begin + q * dilation +
offset, by linear interpolation (zero outside the image), times the mask."""
import itertools

import numpy as np
from onnx import helper

from spec_case import bf16, bf16_round, case


def sample(img, pos):
    lo = np.floor(pos).astype(int)
    fr = pos - lo
    acc = 0.0
    for corner in itertools.product((0, 1), repeat=len(pos)):
        p = lo + np.array(corner)
        if all(0 <= p[i] < img.shape[i] for i in range(len(pos))):
            wgt = np.prod([fr[i] if corner[i] else 1 - fr[i] for i in range(len(pos))])
            acc += wgt * img[tuple(p)]
    return acc


def deform_conv(X, W, offset, B=None, mask=None, strides=None, dilations=None, pads=None,
                group=1, offset_group=1):
    X, W, offset = (a.astype(np.float64) for a in (X, W, offset))
    N, C = X.shape[:2]
    M, cg = W.shape[:2]
    ks = W.shape[2:]
    nd = len(ks)
    st, dl = strides or [1] * nd, dilations or [1] * nd
    pd = pads or [0] * (2 * nd)
    out = [(X.shape[2 + i] + pd[i] + pd[nd + i] - (dl[i] * (ks[i] - 1) + 1)) // st[i] + 1
           for i in range(nd)]
    K = int(np.prod(ks))
    cpo = C // offset_group
    Y = np.zeros([N, M] + out)
    for n in range(N):
        for o in itertools.product(*[range(v) for v in out]):
            col = np.zeros((C, K))
            for gi in range(offset_group):
                for q, kq in enumerate(itertools.product(*[range(v) for v in ks])):
                    pos = np.array([o[i] * st[i] - pd[i] + kq[i] * dl[i] +
                                    offset[(n, (gi * K + q) * nd + i) + o] for i in range(nd)])
                    m = 1.0 if mask is None else float(mask[(n, gi * K + q) + o])
                    for ci in range(gi * cpo, (gi + 1) * cpo):
                        col[ci, q] = m * sample(X[n, ci], pos)
            for mo in range(M):
                g = mo // (M // group)
                Y[(n, mo) + o] = np.sum(W[mo].reshape(cg, K) * col[g * cg:(g + 1) * cg]) + \
                    (0 if B is None else B[mo])
    return Y


def node(ins, **kw):
    return helper.make_node("DeformConv", ins, ["Y"], **kw)


X = np.arange(9).astype(np.float32).reshape(1, 1, 3, 3)
W = np.ones((1, 1, 2, 2), dtype=np.float32)
off_pad = np.zeros((1, 8, 4, 4), dtype=np.float32)
off_pad[0, 0, 0, 0] = 0.5
off_pad[0, 5, 1, 2] = -0.1
off = np.zeros((1, 8, 2, 2), dtype=np.float32)
off[0, 0, 0, 0] = 0.5
off[0, 5, 0, 1] = -0.1
B = np.ones((1,), dtype=np.float32)
mask = np.ones((1, 4, 2, 2), dtype=np.float32)
mask[0, 2, 1, 1] = 0.2
X2 = np.zeros((1, 2, 3, 3), dtype=np.float32)
X2[0, 0] = np.arange(9).reshape(3, 3)
X2[0, 1] = np.arange(8, -1, -1).reshape(3, 3)
W2 = np.ones((1, 2, 2, 2), dtype=np.float32)
off2 = np.zeros((1, 16, 2, 2), dtype=np.float32)
off2[0, 0, 0, 0] = 0.5
off2[0, 13, 0, 1] = -0.1
# the spec's expected outputs check the port
spec_y = {
    "basic_deform_conv_with_padding": np.array([[0, 1, 3, 2], [3, 8, 11.9, 7], [9, 20, 24, 13],
                                                [6, 13, 15, 8]]),
    "basic_deform_conv_without_padding": np.array([[9.5, 11.9], [20, 24]]),
    "deform_conv_with_mask_bias": np.array([[10.5, 12.9], [21, 19.4]]),
    "deform_conv_with_multiple_offset_groups": np.array([[33.5, 32.1], [32, 32]]),
}
examples = (
    ("basic_deform_conv_with_padding", {"X": X, "W": W, "offset": off_pad}, dict(pads=[1, 1, 1, 1])),
    ("basic_deform_conv_without_padding", {"X": X, "W": W, "offset": off}, dict(pads=[0, 0, 0, 0])),
    ("deform_conv_with_mask_bias", {"X": X, "W": W, "offset": off, "B": B, "mask": mask}, {}),
    ("deform_conv_with_multiple_offset_groups", {"X": X2, "W": W2, "offset": off2},
     dict(offset_group=2)),
)
for name, ins, kw in examples:
    y = deform_conv(*ins.values(), **kw)
    assert np.allclose(y[0, 0], spec_y[name]), name
    for opset in (19, 22):
        case(name + ("" if opset == 22 else "_v19"), node(list(ins), kernel_shape=[2, 2], **kw),
             ins, {"Y": y.astype(np.float32)}, opset=opset)

# strides, dilations, groups and two offset groups with a mask and a bias
rng = np.random.default_rng(19)
X = rng.standard_normal((2, 4, 7, 6))
W = rng.standard_normal((6, 2, 3, 2))
kw = dict(strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1], group=2, offset_group=2)
oh, ow = (7 + 3 - 3) // 2 + 1, (6 + 1 - 3) // 1 + 1
off = rng.uniform(-2, 2, (2, 2 * 6 * 2, oh, ow))
mask = rng.uniform(0, 1, (2, 2 * 6, oh, ow))
B = rng.standard_normal(6)
ins = {"X": X, "W": W, "offset": off, "B": B, "mask": mask}
y = deform_conv(*ins.values(), **kw)
case("deform_conv_strides_dilations_groups", node(list(ins), **kw),
     {k: v.astype(np.float32) for k, v in ins.items()}, {"Y": y.astype(np.float32)}, opset=22)
case("deform_conv_double", node(list(ins), **kw), ins, {"Y": y}, opset=22)
ins16 = {k: v.astype(np.float16) for k, v in ins.items()}
case("deform_conv_float16", node(list(ins), **kw), ins16,
     {"Y": deform_conv(*ins16.values(), **kw).astype(np.float16)}, opset=22)
# bfloat16: inputs whose products and sums bfloat16 holds exactly (offsets
# in quarters, small integers), so the expected values round alike
Xb = rng.integers(-4, 5, (1, 2, 4, 4)).astype(np.float64)
Wb = rng.integers(-2, 3, (2, 2, 2, 2)).astype(np.float64)
offb = rng.integers(-4, 5, (1, 8, 3, 3)) / 4.0
insb = {"X": Xb, "W": Wb, "offset": offb}
case("deform_conv_bfloat16", node(list(insb)), {k: bf16(v) for k, v in insb.items()},
     {"Y": bf16(deform_conv(*[bf16_round(v) for v in insb.values()]))}, opset=22)
# 1-D and 3-D, the mask given without a bias (B omitted)
X1 = rng.standard_normal((1, 2, 9))
W1 = rng.standard_normal((3, 2, 3))
off1 = rng.uniform(-1.5, 1.5, (1, 3, 4))
m1 = rng.uniform(0, 1, (1, 3, 4))
case("deform_conv_1d_mask_no_bias", node(["X", "W", "offset", "", "mask"], strides=[2]),
     {"X": X1.astype(np.float32), "W": W1.astype(np.float32), "offset": off1.astype(np.float32),
      "B": None, "mask": m1.astype(np.float32)},
     {"Y": deform_conv(X1, W1, off1, None, m1, strides=[2]).astype(np.float32)}, opset=22)
X3 = rng.standard_normal((1, 1, 3, 4, 4))
W3 = rng.standard_normal((2, 1, 2, 2, 2))
off3 = rng.uniform(-1, 1, (1, 8 * 3, 2, 3, 3))
case("deform_conv_3d", node(["X", "W", "offset"]),
     {"X": X3.astype(np.float32), "W": W3.astype(np.float32), "offset": off3.astype(np.float32)},
     {"Y": deform_conv(X3, W3, off3).astype(np.float32)}, opset=22)
