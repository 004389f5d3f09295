#!/usr/bin/python3
"""Dynamic int8 quantisation of an ONNX model the way onnxruntime's
`quantize_dynamic` does it (its Python tool is not installed here, so this
builds the same graph with python3-onnx): every MatMul whose B is a constant
float matrix becomes

    A -> DynamicQuantizeLinear -> (A_q uint8, A_scale, A_zp)
    MatMulInteger(A_q, W_q int8, A_zp, W_zp) -> int32 -> Cast(float)
    Mul(A_scale, W_scale) -> scale;  Mul(cast, scale) -> the MatMul's output

with W quantised symmetric int8 (zero point 0, scale max|W| / 127), one scale
for the whole tensor (`per_channel=False`, the tool's default) or one per
output column (`per_channel=True`). ONNX Runtime's graph optimiser fuses the
chain into its DynamicQuantizeMatMul kernel. Unlike the tool, which leaves
Gemm in float (its dynamic registry has MatMul, Conv, Attention, LSTM), a
Gemm with constant B (alpha = beta = 1, transA = 0) is quantised too, as the
same chain plus an Add of its C: otherwise an MLP exported with Gemm would
run in float and the comparison would not be int8 against int8.

usage: /usr/bin/python3 bench/ort_quant.py IN.onnx OUT.onnx [--per-channel]
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantise_weight(w, per_channel):
    """w (K, N) float -> (int8 (K, N), scale, zero point) as ORT's symmetric QInt8."""
    absmax = np.abs(w).max(axis=0) if per_channel else np.abs(w).max()
    scale = np.where(absmax > 0, absmax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    zp = np.zeros(scale.shape, dtype=np.int8)
    return q, scale, zp


def quantise(model, per_channel=False):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    used = {}
    for n in g.node:
        for i in n.input:
            used[i] = used.get(i, 0) + 1
    nodes, new_inits, drop, count = [], [], set(), 0
    for n in g.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        b = n.input[1] if len(n.input) > 1 else None
        w = numpy_helper.to_array(inits[b]) if b in inits else None
        gemm_ok = n.op_type == "Gemm" and attrs.get("alpha", 1.0) == 1.0 and \
            attrs.get("beta", 1.0) == 1.0 and not attrs.get("transA", 0)
        if w is None or w.dtype != np.float32 or w.ndim != 2 or \
                not (n.op_type == "MatMul" or gemm_ok):
            nodes.append(n)
            continue
        if n.op_type == "Gemm" and attrs.get("transB", 0):
            w = w.T
        count += 1
        p = f"q{count}_"
        q, scale, zp = quantise_weight(np.ascontiguousarray(w), per_channel)
        new_inits += [numpy_helper.from_array(q, p + "W_q"), numpy_helper.from_array(scale, p + "W_scale"),
                      numpy_helper.from_array(zp, p + "W_zp")]
        # node names in the replaced node's scope (as the tool names them after the node), so a
        # scoped model's modules keep their nodes together
        nm = (n.name or f"q{count}") + "_quant_"
        out = n.output[0]
        mm_out = p + "Y" if n.op_type == "Gemm" and len(n.input) > 2 and n.input[2] else out
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [n.input[0]], [p + "A_q", p + "A_scale", p + "A_zp"],
                             name=nm + "DynamicQuantizeLinear"),
            helper.make_node("MatMulInteger", [p + "A_q", p + "W_q", p + "A_zp", p + "W_zp"], [p + "Y_i32"],
                             name=nm + "MatMulInteger"),
            helper.make_node("Cast", [p + "Y_i32"], [p + "Y_f"], to=TensorProto.FLOAT, name=nm + "Cast"),
            helper.make_node("Mul", [p + "A_scale", p + "W_scale"], [p + "scale"], name=nm + "MulScales"),
            helper.make_node("Mul", [p + "Y_f", p + "scale"], [mm_out], name=nm + "Mul"),
        ]
        if mm_out != out:
            nodes.append(helper.make_node("Add", [mm_out, n.input[2]], [out], name=nm + "AddBias"))
        used[b] -= 1
        if used[b] == 0:
            drop.add(b)
    del g.node[:]
    g.node.extend(nodes)
    keep = [t for t in g.initializer if t.name not in drop]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    # MatMulInteger and DynamicQuantizeLinear are opset 10 and 11
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version < 11:
            o.version = 11
    return count


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit("usage: ort_quant.py IN.onnx OUT.onnx [--per-channel]")
    m = onnx.load(args[0])
    n = quantise(m, "--per-channel" in sys.argv)
    onnx.checker.check_model(m)
    onnx.save(m, args[1])
    print(f"{args[1]}: {n} MatMul/Gemm quantised")


if __name__ == "__main__":
    main()
