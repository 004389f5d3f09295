"""Ops whose versions 22 to 24 only added bfloat16 (docs/runtime.md's table),
run in bfloat16: TopK 24 (largest and smallest, with the indices), and
SplitToSequence 24 followed by ConcatFromSequence to give a tensor back."""
import numpy as np
from onnx import helper

from spec_case import bf16, bf16_round, case

x = bf16_round(np.array([[0.5, -1.25, 3.0, 2.0], [7.5, 0.25, -3.0, 1.0]], np.float32))
for largest in (1, 0):
    idx = np.argsort(-x if largest else x, axis=1, kind="stable")[:, :2]
    case("topk_bfloat16_largest%d" % largest,
         helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1, largest=largest),
         {"x": bf16(x), "k": np.array([2], np.int64)},
         {"values": bf16(np.take_along_axis(x, idx, 1)), "indices": idx.astype(np.int64)}, opset=24)

case("split_to_sequence_bfloat16",
     [helper.make_node("SplitToSequence", ["x"], ["seq"], axis=1),
      helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)],
     {"x": bf16(x)}, {"y": bf16(np.concatenate(np.split(x, 4, axis=1), axis=0))}, opset=24)
