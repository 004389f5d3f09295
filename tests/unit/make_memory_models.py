"""Small models for the executor's memory plan (tests/unit/test_memory.c):
intermediates that share the arena, outputs written early, a zero-padding op
after values that leave garbage behind, and dynamic shapes.
Usage: make_memory_models.py OUTDIR."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

F = TensorProto.FLOAT


def save(path, nodes, ins, outs, inits=()):
    g = h.make_graph(nodes, os.path.basename(path)[:-5], ins, outs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.save(m, path)


def chain(out):
    """x[2,64]: an element-wise chain whose values die one after the other, so
    later ones take earlier ones' bytes; 'early' (an output) is written first
    and must survive every intermediate after it; 'late' is the chain's end."""
    n = [h.make_node("Sigmoid", ["x"], ["early"]),
         h.make_node("Relu", ["x"], ["t1"]),
         h.make_node("Neg", ["t1"], ["t2"]),
         h.make_node("Abs", ["t2"], ["t3"]),
         h.make_node("Add", ["t3", "x"], ["t4"]),
         h.make_node("Mul", ["t4", "t4"], ["t5"]),
         h.make_node("Exp", ["t5"], ["t6"]),
         h.make_node("Neg", ["t6"], ["t7"]),
         h.make_node("Add", ["t7", "early"], ["t8"]),
         h.make_node("Tanh", ["t8"], ["late"])]
    save(os.path.join(out, "chain.onnx"), n, [h.make_tensor_value_info("x", F, [2, 64])],
         [h.make_tensor_value_info("early", F, [2, 64]),
          h.make_tensor_value_info("late", F, [2, 64])])


def pad(out):
    """x[4,4]: big intermediates (sum(x)*1000 over [64,64], reduced), then
    CenterCropPad to [8,8], which leaves its padding as the zeros it is
    given (OP_ZERO_OUTPUTS): stale arena bytes there would show."""
    big = nh.from_array(np.full([64, 64], 1000.0, np.float32), "big")
    shape = nh.from_array(np.array([8, 8], np.int64), "shape")
    axes = nh.from_array(np.array([0], np.int64), "axes")
    n = [h.make_node("ReduceSum", ["x"], ["x0"], keepdims=0),
         h.make_node("Mul", ["big", "x0"], ["b1"]),
         h.make_node("Add", ["b1", "big"], ["b2"]),
         h.make_node("ReduceSum", ["b2", "axes"], ["r"], keepdims=1),
         h.make_node("Slice", ["r", "s0", "s1", "s2"], ["rs"]),
         h.make_node("Add", ["x", "rs"], ["xr"]),
         h.make_node("CenterCropPad", ["xr", "shape"], ["y"])]
    inits = [big, shape, axes,
             nh.from_array(np.array([0, 0], np.int64), "s0"),
             nh.from_array(np.array([1, 4], np.int64), "s1"),
             nh.from_array(np.array([0, 1], np.int64), "s2")]
    save(os.path.join(out, "pad.onnx"), n,
         [h.make_tensor_value_info("x", F, [4, 4])],
         [h.make_tensor_value_info("y", F, [8, 8])], inits)


def dynamic(out):
    """x[n,16]: MatMul, Softmax, Concat with itself and a Reshape through
    Shape: every intermediate's size follows n, so a run at another n plans
    again."""
    w = nh.from_array(np.linspace(-1, 1, 16 * 16, dtype=np.float32).reshape(16, 16), "w")
    n = [h.make_node("MatMul", ["x", "w"], ["m"]),
         h.make_node("Softmax", ["m"], ["s"], axis=1),
         h.make_node("Relu", ["m"], ["r"]),
         h.make_node("Concat", ["s", "r"], ["c"], axis=1),
         h.make_node("Shape", ["x"], ["sh"]),
         h.make_node("Reshape", ["c", "flat"], ["f"]),
         h.make_node("Sigmoid", ["f"], ["y"])]
    save(os.path.join(out, "dynamic.onnx"), n,
         [h.make_tensor_value_info("x", F, ["n", 16])],
         [h.make_tensor_value_info("y", F, None), h.make_tensor_value_info("sh", TensorProto.INT64, [2])],
         [w, nh.from_array(np.array([-1], np.int64), "flat")])


if __name__ == "__main__":
    os.makedirs(sys.argv[1], exist_ok=True)
    chain(sys.argv[1])
    pad(sys.argv[1])
    dynamic(sys.argv[1])
