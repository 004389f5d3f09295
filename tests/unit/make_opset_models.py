#!/usr/bin/python3
"""Writes the models unit_opsets loads: small nets stamped with recent opsets
(27, 28) and their inputs and outputs computed with numpy (never by ait),
an op version ait does not implement, an op used before its opset, an
ai.onnx.ml import, ml nodes of several ml opsets and an opset past the newest.
onnx 1.12's checker does not know opsets above 17: it is not called.
usage: /usr/bin/python3 tests/unit/make_opset_models.py OUTDIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

from onnx_models import model as _model
from onnx_models import vi


def model(nodes, inputs, outputs, inits=(), opset=27, extra_opsets=()):
    return _model(nodes, inputs, outputs, inits, opset, extra_opsets, ir_version=10)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
FLOAT8E4M3FN = 17  # TensorProto.FLOAT8E4M3FN from onnx 1.14; onnx 1.12 lacks the name
rng = np.random.default_rng(27)


def init(name, a):
    return numpy_helper.from_array(a, name)


def conv2d(x, w, b):
    """Conv with stride 1 and pads 1 (NCHW), by loops over the kernel."""
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd), np.float64)
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + h, j:j + wd]  # n c h w
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def net(opset, act):
    """x [1,2,5,5] -> Conv(3x3, pads 1) -> act -> Reshape [1,75] -> MatMul [75,4]
    -> Add b2 -> Add Range(0, 4, 1): y [1,4]. act is Relu or Celu (alpha 0.5)."""
    x = rng.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 3).astype(np.float32)
    w2 = rng.uniform(-1, 1, (75, 4)).astype(np.float32)
    b2 = rng.uniform(-1, 1, 4).astype(np.float32)
    shape = np.array([1, 75], np.int64)
    scalars = [init(n, np.array(v, np.float32)) for n, v in (("r0", 0), ("r1", 4), ("rd", 1))]
    if act == "Relu":
        act_node = helper.make_node("Relu", ["c"], ["a"], name="act")
    else:
        act_node = helper.make_node("Celu", ["c"], ["a"], name="act", alpha=0.5)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        act_node,
        helper.make_node("Reshape", ["a", "shape"], ["r"], name="reshape"),
        helper.make_node("MatMul", ["r", "w2"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "b2"], ["s"], name="add"),
        helper.make_node("Range", ["r0", "r1", "rd"], ["rg"], name="range"),
        helper.make_node("Add", ["s", "rg"], ["y"], name="add_range"),
    ]
    inits = [init("w", w), init("b", b), init("shape", shape), init("w2", w2), init("b2", b2)]
    m = model(nodes, [vi("x", [1, 2, 5, 5])], [vi("y", [1, 4])], inits + scalars, opset=opset)

    c = conv2d(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    if act == "Relu":
        a = np.maximum(c, 0)
    else:
        a = np.maximum(c, 0) + np.minimum(0, 0.5 * (np.exp(c / 0.5) - 1))
    y = a.reshape(1, 75) @ w2.astype(np.float64) + b2 + np.arange(0, 4, 1, dtype=np.float64)
    return m, x, y.astype(np.float32)


for opset, act in ((27, "Relu"), (28, "Celu")):
    m, x, y = net(opset, act)
    save(m, os.path.join(out, f"opset{opset}.onnx"))
    np.save(os.path.join(out, f"opset{opset}_x.npy"), x)
    np.save(os.path.join(out, f"opset{opset}_y.npy"), y)
    np.savez(os.path.join(out, f"opset{opset}_inputs.npz"), x=x)  # for `ait run --input`

# DequantizeLinear 21 and 23 (23 added the output_dtype attribute): both load.
xq = init("xq", np.array([0, 3, 7], np.uint8))
sc = init("sc", np.array(0.5, np.float32))
zp = init("zp", np.array(1, np.uint8))
for opset in (21, 23):
    save(model([helper.make_node("DequantizeLinear", ["xq", "sc", "zp"], ["y"], name="dq")],
               [], [vi("y", [3])], [xq, sc, zp], opset=opset),
         os.path.join(out, f"dequantize{opset}.onnx"))

# Gelu exists from opset 20: a model stamped 19 that uses it is refused.
save(model([helper.make_node("Gelu", ["x"], ["y"], name="gelu")], [vi("x", [2])], [vi("y", [2])],
           opset=19), os.path.join(out, "gelu19.onnx"))

# Cast to float8e4m3fn (Cast-25).
save(model([helper.make_node("Cast", ["x"], ["y"], name="to_f8", to=FLOAT8E4M3FN)],
           [vi("x", [2])], [vi("y", [2], FLOAT8E4M3FN)], opset=25),
     os.path.join(out, "cast_float8.onnx"))

# ai.onnx.ml imported (version 5, the newest), only default-domain nodes: loads.
save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [3])], [vi("y", [3])],
           opset=27, extra_opsets=[("ai.onnx.ml", 5)]), os.path.join(out, "ml_import.onnx"))
# ai.onnx.ml 6 does not exist (yet): refused.
save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [3])], [vi("y", [3])],
           opset=27, extra_opsets=[("ai.onnx.ml", 6)]), os.path.join(out, "ml6.onnx"))
# ml nodes resolve against the ml import: LabelEncoder (1, 2, 4) and the
# legacy TreeEnsembleRegressor (1, 3) stamped ml 1 to 4; Binarizer at ml 5.
for mlv in (1, 2, 3, 4):
    le = helper.make_node("LabelEncoder", ["x"], ["y"], name="le", domain="ai.onnx.ml",
                          keys_int64s=[1], values_int64s=[2])
    save(model([le], [vi("x", [3], TensorProto.INT64)], [vi("y", [3], TensorProto.INT64)],
               opset=27, extra_opsets=[("ai.onnx.ml", mlv)]),
         os.path.join(out, f"ml_label_encoder{mlv}.onnx"))
save(model([helper.make_node("Binarizer", ["x"], ["y"], name="bin", domain="ai.onnx.ml",
                             threshold=0.5)],
           [vi("x", [3])], [vi("y", [3])], opset=27, extra_opsets=[("ai.onnx.ml", 5)]),
     os.path.join(out, "ml_node.onnx"))

# Opsets past the newest (28) are refused; 28 itself loads.
for opset in (28, 29):
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [3])],
               [vi("y", [3])], opset=opset), os.path.join(out, f"relu{opset}.onnx"))
