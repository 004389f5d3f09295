#!/usr/bin/python3
"""Writes the one-node models bench-gemm runs ait on, and their B matrices.

For each LAYOUT:N:K argument it writes into OUTDIR:
  LAYOUT_N_K.onnx   kn: MatMul(A[m,K], B[K,N]); nk: Gemm(A[m,K], B[N,K], transB=1)
                    (B an initializer, m a symbolic dim)
  LAYOUT_N_K.B.npy  the same B, for OpenBLAS and oneDNN
Existing files are kept.

usage: /usr/bin/python3 bench/gemm_models.py OUTDIR LAYOUT:N:K...
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write(outdir, layout, n, k):
    base = os.path.join(outdir, f"{layout}_{n}_{k}")
    if os.path.exists(base + ".onnx") and os.path.exists(base + ".B.npy"):
        return
    rng = np.random.default_rng(n * 7919 + k)
    b = rng.uniform(-1, 1, (k, n) if layout == "kn" else (n, k)).astype(np.float32)
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", k])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", n])
    if layout == "kn":
        node = helper.make_node("MatMul", ["A", "B"], ["Y"])
    else:
        node = helper.make_node("Gemm", ["A", "B"], ["Y"], transB=1)
    graph = helper.make_graph([node], f"gemm_{layout}", [a], [y], [numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, base + ".onnx.tmp")
    os.replace(base + ".onnx.tmp", base + ".onnx")
    np.save(base + ".B.tmp.npy", b)
    os.replace(base + ".B.tmp.npy", base + ".B.npy")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for arg in sys.argv[2:]:
        try:
            layout, n, k = arg.split(":")
            n, k = int(n), int(k)
            assert layout in ("kn", "nk") and n > 0 and k > 0
        except (ValueError, AssertionError):
            sys.exit(f"gemm_models.py: bad argument '{arg}' (want kn|nk:N:K)")
        write(sys.argv[1], layout, n, k)


if __name__ == "__main__":
    main()
