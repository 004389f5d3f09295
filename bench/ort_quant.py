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

Static int8 (QDQ), as onnxruntime's `quantize_static` builds it for CNNs
(`quantise_static`, calibrated by the caller: bench/quant.py runs the float
model in ONNX Runtime on the bench samples with every activation as an
output and takes each one's min/max, the tool's default MinMax): every float
activation (the graph input, every node output but the graph's outputs)
goes through QuantizeLinear -> DequantizeLinear, uint8 with the range made
to hold 0 (scale (max - min) / 255, zero point round(-min / scale)); Conv
and Gemm weights are DequantizeLinear of symmetric int8 (per tensor, or per
output channel), biases DequantizeLinear of int32 at scale input scale x
weight scale. A Relu or Clip after a Conv or Add that is its only reader is
removed first, its output's range doing the clamp (the tool's removable
activations). ONNX Runtime fuses DQ -> Conv -> Q into QLinearConv, DQ -> Add
-> Q into QLinearAdd and so on.

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


def fold_activations(model):
    """Removes each Relu, and Clip to [0, x], whose input is a Conv's or Add's output read by it
    alone: the producer writes the activation's output instead; and each Constant node (Clip's
    bounds) and Identity of an initializer (as PyTorch exports shared weights), its output made an
    initializer. Returns how many activations."""
    g = model.graph
    for n in [n for n in g.node if n.op_type == "Constant" and len(n.attribute) == 1 and
              n.attribute[0].name == "value"]:
        t = onnx.TensorProto()
        t.CopyFrom(n.attribute[0].t)
        t.name = n.output[0]
        g.initializer.append(t)
        g.node.remove(n)
    inits = {t.name: t for t in g.initializer}
    for n in [n for n in g.node if n.op_type == "Identity" and n.input[0] in inits]:
        t = onnx.TensorProto()
        t.CopyFrom(inits[n.input[0]])
        t.name = n.output[0]
        g.initializer.append(t)
        g.node.remove(n)
    readers, inits = {}, {t.name: t for t in g.initializer}
    for n in g.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    producer = {o: n for n in g.node for o in n.output}
    outs = {o.name for o in g.output}
    keep, count = [], 0
    for n in g.node:
        src = producer.get(n.input[0]) if n.input else None
        ok = n.op_type == "Relu"
        if n.op_type == "Clip" and len(n.input) >= 2 and n.input[1] in inits:
            ok = float(numpy_helper.to_array(inits[n.input[1]])) == 0.0
        if ok and src is not None and src.op_type in ("Conv", "Add") and readers[n.input[0]] == 1 \
                and n.input[0] not in outs:
            src.output[0] = n.output[0]
            count += 1
            continue
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    return count


def activations(model):
    """The float activations quantise_static puts through QDQ: the graph inputs and every node
    output but the graph's outputs (after fold_activations)."""
    g = model.graph
    outs = {o.name for o in g.output}
    names = [i.name for i in g.input if i.name not in {t.name for t in g.initializer}]
    names += [o for n in g.node for o in n.output if o and o not in outs]
    return names


def with_outputs(model, names):
    """A copy of model whose outputs are the tensors of names, as cal0, cal1, ... (file-safe
    names, for calibration)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    for k, n in enumerate(names):
        m.graph.node.append(helper.make_node("Identity", [n], [f"cal{k}"], name=f"cal{k}"))
        m.graph.output.append(helper.make_tensor_value_info(f"cal{k}", TensorProto.FLOAT, None))
    return m


def act_qparams(lo, hi):
    """uint8 scale and zero point of a calibrated range, made to hold 0 (ORT's compute_scale_zp)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


def quantise_static(model, ranges, per_channel=False):
    """model (after fold_activations) as a QDQ model; ranges: activation name -> (min, max).
    Returns how many Conv/Gemm nodes were quantised."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    new_inits, drop, nodes = [], set(), []
    qp = {}
    for name in activations(model):
        if name not in ranges:
            continue
        s, z = act_qparams(*ranges[name])
        p = f"qa_{len(qp)}_"
        qp[name] = (s, p)
        new_inits += [numpy_helper.from_array(np.array(s, np.float32), p + "s"),
                      numpy_helper.from_array(np.array(z, np.uint8), p + "z")]

    def qdq(name):  # Q -> DQ after the tensor's producer; readers take p + "dq"
        s, p = qp[name]
        return [helper.make_node("QuantizeLinear", [name, p + "s", p + "z"], [p + "q"], name=p + "Q"),
                helper.make_node("DequantizeLinear", [p + "q", p + "s", p + "z"], [p + "dq"], name=p + "DQ")]

    def reads(name):
        return qp[name][1] + "dq" if name in qp else name

    for i in g.input:
        if i.name in qp:
            nodes += qdq(i.name)
    count = 0
    for n in g.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        wname = n.input[1] if len(n.input) > 1 else None
        w = numpy_helper.to_array(inits[wname]) if wname in inits else None
        quant = n.op_type in ("Conv", "Gemm") and w is not None and w.dtype == np.float32 and \
            n.input[0] in qp and not attrs.get("transA", 0) and attrs.get("alpha", 1.0) == 1.0 and \
            attrs.get("beta", 1.0) == 1.0
        ins = [reads(x) for x in n.input]
        if quant:
            count += 1
            p = f"qw_{count}_"
            axis = 1 if n.op_type == "Gemm" and not attrs.get("transB", 0) else 0
            red = tuple(k for k in range(w.ndim) if k != axis)
            absmax = np.abs(w).max(axis=red) if per_channel else np.abs(w).max()
            ws = np.where(absmax > 0, absmax / 127.0, 1.0).astype(np.float32)
            shape = [1] * w.ndim
            if per_channel:
                shape[axis] = -1
            wq = np.clip(np.rint(w / ws.reshape(shape)), -127, 127).astype(np.int8)
            new_inits += [numpy_helper.from_array(wq, p + "w"), numpy_helper.from_array(ws, p + "ws"),
                          numpy_helper.from_array(np.zeros(ws.shape, np.int8), p + "wz")]
            dqa = {"axis": axis} if per_channel else {}
            nodes.append(helper.make_node("DequantizeLinear", [p + "w", p + "ws", p + "wz"], [p + "wdq"],
                                          name=p + "DQw", **dqa))
            ins[1] = p + "wdq"
            drop.add(wname)
            if len(n.input) > 2 and n.input[2] in inits:
                b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
                bs = (qp[n.input[0]][0] * ws.astype(np.float64)).astype(np.float32)
                bq = np.rint(b / np.broadcast_to(bs, b.shape)).astype(np.int32)
                new_inits += [numpy_helper.from_array(bq, p + "b"), numpy_helper.from_array(bs, p + "bs"),
                              numpy_helper.from_array(np.zeros(bs.shape, np.int32), p + "bz")]
                nodes.append(helper.make_node("DequantizeLinear", [p + "b", p + "bs", p + "bz"], [p + "bdq"],
                                              name=p + "DQb", **({"axis": 0} if per_channel else {})))
                ins[2] = p + "bdq"
                drop.add(n.input[2])
        del n.input[:]
        n.input.extend(ins)
        nodes.append(n)
        for o in n.output:
            if o in qp:
                nodes += qdq(o)
    used = {x for n in nodes for x in n.input}
    del g.node[:]
    g.node.extend(nodes)
    keep = [t for t in g.initializer if t.name not in drop or t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    for o in model.opset_import:  # DequantizeLinear's axis: opset 13
        if o.domain in ("", "ai.onnx") and o.version < 13:
            o.version = 13
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
