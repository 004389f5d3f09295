#!/usr/bin/python3
"""Writes the small MLP unit_threads runs (many runs from many threads must
stay quick under ASan and TSan): 256 -> 512 -> 512 -> 128 with ReLU and a
softmax, node names scoped as PyTorch's exporter does (modules fc1, fc2, fc3).
usage: /usr/bin/python3 tests/unit/make_thread_model.py OUTDIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.RandomState(0)
sizes = [256, 512, 512, 128]
inits, nodes, x = [], [], "input"
for i in range(3):
    w = (rng.standard_normal((sizes[i + 1], sizes[i])) / np.sqrt(sizes[i])).astype(np.float32)
    b = (rng.standard_normal(sizes[i + 1]) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"fc{i + 1}.weight"),
              numpy_helper.from_array(b, f"fc{i + 1}.bias")]
    y = f"/fc{i + 1}/Gemm_output_0"
    nodes.append(helper.make_node("Gemm", [x, f"fc{i + 1}.weight", f"fc{i + 1}.bias"], [y],
                                  name=f"/fc{i + 1}/Gemm", transB=1))
    x = y
    if i < 2:
        nodes.append(helper.make_node("Relu", [x], [f"/act{i + 1}/Relu_output_0"],
                                      name=f"/act{i + 1}/Relu"))
        x = f"/act{i + 1}/Relu_output_0"
nodes.append(helper.make_node("Softmax", [x], ["output"], name="/head/Softmax", axis=-1))
g = helper.make_graph(nodes, "mlp_small",
                      [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 256])],
                      [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 128])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="ait-tests")
m.ir_version = 8
save(m, os.path.join(out, "mlp_small.onnx"))
