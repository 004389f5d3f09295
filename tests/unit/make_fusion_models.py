"""Small models for the fusion passes (tests/unit/test_fusion.c): each
pattern in the node layouts torch's exporter writes (opset 17), and negative
cases that must not fuse; and fpn_glue, a scoped FPN whose unscoped glue
joins its modules (tests/unit/test_plan.c). Usage: make_fusion_models.py OUTDIR."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

rng = np.random.default_rng(7)
F = TensorProto.FLOAT


class M:
    """A graph under construction: nodes, initializers, inputs, outputs."""

    def __init__(self):
        self.nodes, self.inits, self.ins, self.outs, self.n = [], [], [], [], 0

    def inp(self, name, shape):
        self.ins.append(h.make_tensor_value_info(name, F, shape))
        return name

    def const(self, arr, name=None):
        self.n += 1
        name = name or "c%d" % self.n
        self.inits.append(nh.from_array(np.asarray(arr, np.float32), name))
        return name

    def op(self, op, ins, **attrs):
        self.n += 1
        out = "%s_%d" % (op, self.n)
        self.nodes.append(h.make_node(op, ins, [out], name="/%s_%d" % (op, self.n), **attrs))
        return out

    def out(self, name):
        self.outs.append(h.make_tensor_value_info(name, F, None))

    def save(self, path, opset=17):
        g = h.make_graph(self.nodes, "g", self.ins, self.outs, self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8 if opset <= 17 else 11
        onnx.save(m, path)


def rand(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def conv(m, x, cin, cout, bias=True):
    ins = [x, m.const(rand(cout, cin, 3, 3))] + ([m.const(rand(cout))] if bias else [])
    return m.op("Conv", ins, pads=[1, 1, 1, 1])


def bn(m, x, c):
    return m.op("BatchNormalization", [x, m.const(rand(c) + 1.5), m.const(rand(c)),
                                       m.const(rand(c)), m.const(rand(c) + 1.5)], epsilon=1e-5)


def clip06(m, x):
    return m.op("Clip", [x, m.const(0.0), m.const(6.0)])


def hswish_div_last(m, x):  # x * clip(x + 3, 0, 6) / 6
    return m.op("Div", [m.op("Mul", [x, clip06(m, m.op("Add", [x, m.const(3.0)]))]),
                        m.const(6.0)])


def hsigmoid_div(m, x):  # clip(x + 3, 0, 6) / 6
    return m.op("Div", [clip06(m, m.op("Add", [x, m.const(3.0)])), m.const(6.0)])


def gelu_erf(m, x, order):
    e1 = m.op("Add", [m.op("Erf", [m.op("Div", [x, m.const(1.4142135)])]), m.const(1.0)])
    if order == 0:  # torch: (x * e1) * 0.5
        return m.op("Mul", [m.op("Mul", [x, e1]), m.const(0.5)])
    if order == 1:  # x * (e1 * 0.5)
        return m.op("Mul", [x, m.op("Mul", [e1, m.const(0.5)])])
    return m.op("Mul", [m.op("Mul", [x, m.const(0.5)]), e1])  # (x * 0.5) * e1


def gelu_tanh(m, x):
    p = m.op("Mul", [m.op("Pow", [x, m.const(3.0)]), m.const(0.044715)])
    t = m.op("Tanh", [m.op("Mul", [m.op("Add", [x, p]), m.const(0.7978845608)])])
    return m.op("Mul", [m.op("Mul", [x, m.const(0.5)]), m.op("Add", [t, m.const(1.0)])])


def models():
    out = {}
    # Conv + BN + ReLU + residual Add + ReLU (a ResNet block's end).
    m = M()
    x, r = m.inp("x", [1, 4, 6, 6]), m.inp("r", [1, 8, 6, 6])
    m.out(m.op("Relu", [m.op("Add", [m.op("Relu", [bn(m, conv(m, x, 4, 8), 8)]), r])]))
    out["conv_bn_relu_add"] = m
    # MatMul + bias Add (torch puts the bias first) + GELU; Gemm + ReLU;
    # MatMul + bias + tanh GELU.
    m = M()
    x, x2 = m.inp("x", [2, 3, 16]), m.inp("x2", [4, 16])
    mm = m.op("MatMul", [x, m.const(rand(16, 32))])
    m.out(gelu_erf(m, m.op("Add", [m.const(rand(32)), mm]), 0))
    m.out(m.op("Relu", [m.op("Gemm", [x2, m.const(rand(8, 16)), m.const(rand(8))], transB=1)]))
    mm = m.op("MatMul", [x, m.const(rand(16, 8))])
    m.out(gelu_tanh(m, m.op("Add", [mm, m.const(rand(8))])))
    out["matmul_bias_act"] = m
    # Conv + SiLU, Conv + HardSwish op, Conv (no bias) + per-channel Mul/Add
    # + relu6 + final scale, ConvTranspose + LeakyRelu.
    m = M()
    x = m.inp("x", [1, 4, 5, 5])
    c = conv(m, x, 4, 8)
    m.out(m.op("Mul", [c, m.op("Sigmoid", [c])]))
    m.out(m.op("HardSwish", [conv(m, x, 4, 8)]))
    c = m.op("Mul", [conv(m, x, 4, 6, False), m.const(rand(1, 6, 1, 1))])
    c = clip06(m, m.op("Add", [c, m.const(rand(6, 1, 1))]))
    m.out(m.op("Mul", [c, m.const(0.25)]))
    ct = m.op("ConvTranspose", [x, m.const(rand(4, 3, 2, 2)), m.const(rand(6))], group=2,
              strides=[2, 2])
    m.out(m.op("LeakyRelu", [ct], alpha=0.1))
    out["conv_acts"] = m
    # Activations written out over graph inputs: chains.
    m = M()
    x = m.inp("x", [2, 8, 3, 3])
    m.out(m.op("Mul", [x, m.op("Sigmoid", [x])]))                             # silu
    m.out(hswish_div_last(m, x))                                               # hardswish
    m.out(m.op("Mul", [x, m.op("HardSigmoid", [x], alpha=1 / 6, beta=0.5)]))   # hardswish
    m.out(m.op("Mul", [hsigmoid_div(m, x), x]))                                # hardswish
    m.out(hsigmoid_div(m, x))                                                  # hardsigmoid
    m.out(m.op("Mul", [x, m.op("Tanh", [m.op("Softplus", [x])])]))             # mish
    for order in range(3):
        m.out(gelu_erf(m, x, order))                                           # gelu_erf
    m.out(gelu_tanh(m, x))                                                     # gelu_tanh
    out["act_forms"] = m
    # A chain: per-channel Mul, scalar Add, Relu, same-shape Mul, Sub from 1.
    m = M()
    x, y = m.inp("x", [1, 8, 4, 4]), m.inp("y", [1, 8, 4, 4])
    c = m.op("Relu", [m.op("Add", [m.op("Mul", [x, m.const(rand(1, 8, 1, 1))]), m.const(0.5)])])
    m.out(m.op("Sub", [m.const(1.0), m.op("Mul", [c, y])]))
    out["chain"] = m
    # LayerNorm written out (torch's export of a hand-written layer norm).
    m = M()
    x = m.inp("x", [2, 5, 16])
    mu = m.op("ReduceMean", [x], axes=[-1])
    d = m.op("Sub", [x, mu])
    v = m.op("ReduceMean", [m.op("Pow", [d, m.const(2.0)])], axes=[-1])
    n = m.op("Div", [d, m.op("Sqrt", [m.op("Add", [v, m.const(1e-5)])])])
    m.out(m.op("Add", [m.op("Mul", [n, m.const(rand(16) + 1)]), m.const(rand(16))]))
    out["layernorm"] = m
    m = M()  # d * d for the square, a scale and no bias
    x = m.inp("x", [3, 16])
    d = m.op("Sub", [x, m.op("ReduceMean", [x], axes=[1])])
    v = m.op("ReduceMean", [m.op("Mul", [d, d])], axes=[1])
    n = m.op("Div", [d, m.op("Sqrt", [m.op("Add", [m.const(1e-6), v])])])
    m.out(m.op("Mul", [m.const(rand(16) + 1), n]))
    out["layernorm_mul"] = m
    # RMSNorm written out as torch exports x * rsqrt(x.pow(2).mean(-1) + eps) * w
    # (Llama's): Pow, ReduceMean, Add, Sqrt, Div of 1, Mul by x, Mul scale.
    m = M()
    x = m.inp("x", [2, 5, 16])
    v = m.op("ReduceMean", [m.op("Pow", [x, m.const(2.0)])], axes=[-1])
    r = m.op("Div", [m.const(1.0), m.op("Sqrt", [m.op("Add", [v, m.const(1e-6)])])])
    m.out(m.op("Mul", [m.op("Mul", [x, r]), m.const(rand(16) + 1)]))
    out["rmsnorm"] = m
    m = M()  # x * x, Reciprocal, the Mul's sides swapped, a scale and a bias
    x = m.inp("x", [3, 16])
    v = m.op("ReduceMean", [m.op("Mul", [x, x])], axes=[1])
    r = m.op("Reciprocal", [m.op("Sqrt", [m.op("Add", [m.const(1e-5), v])])])
    n = m.op("Mul", [m.const(rand(16) + 1), m.op("Mul", [r, x])])
    m.out(m.op("Add", [n, m.const(rand(16))]))
    out["rmsnorm_recip"] = m
    m = M()  # x / sqrt: no scale; then 2 / sqrt, which is no RMSNorm
    x = m.inp("x", [4, 8])
    v = m.op("ReduceMean", [m.op("Pow", [x, m.const(2.0)])], axes=[-1])
    m.out(m.op("Div", [x, m.op("Sqrt", [m.op("Add", [v, m.const(1e-6)])])]))
    y = m.inp("y", [4, 8])
    v = m.op("ReduceMean", [m.op("Pow", [y, m.const(2.0)])], axes=[-1])
    r = m.op("Div", [m.const(2.0), m.op("Sqrt", [m.op("Add", [v, m.const(1e-6)])])])
    m.out(m.op("Mul", [y, r]))
    out["rmsnorm_div"] = m
    # Attention: q k^T / sqrt(d) + mask, softmax, @ v.
    m = M()
    q, k = m.inp("q", [1, 2, 4, 8]), m.inp("k", [1, 2, 6, 8])
    v, mask = m.inp("v", [1, 2, 6, 8]), m.inp("mask", [1, 1, 1, 6])
    s = m.op("MatMul", [q, m.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = m.op("Add", [m.op("Div", [s, m.const(np.sqrt(8.0))]), mask])
    m.out(m.op("MatMul", [m.op("Softmax", [s], axis=-1), v]))
    out["attention"] = m
    m = M()  # scale by Mul, no mask
    q, kt, v = m.inp("q", [2, 3, 4]), m.inp("kt", [2, 4, 5]), m.inp("v", [2, 5, 6])
    s = m.op("Mul", [m.const(0.5), m.op("MatMul", [q, kt])])
    m.out(m.op("MatMul", [m.op("Softmax", [s], axis=-1), v]))
    out["attention_mul"] = m
    # The opset-23 Attention op with past keys and values in and present
    # ones out, causal, grouped kv heads, head size 20 (test_backends runs it
    # on native against the reference).
    m = M()
    m.opset = 23
    q, k, v = m.inp("q", [3, 4, 3, 20]), m.inp("k", [3, 2, 3, 20]), m.inp("v", [3, 2, 3, 20])
    pk, pv = m.inp("past_key", [3, 2, 5, 20]), m.inp("past_value", [3, 2, 5, 20])
    m.nodes.append(h.make_node("Attention", [q, k, v, "", pk, pv], ["y", "present_key",
                                                                     "present_value"],
                               name="/attn", is_causal=1))
    for o in ("y", "present_key", "present_value"):
        m.out(o)
    out["attention_op23"] = m
    # Negative cases.
    m = M()  # conv output is also a graph output: nothing after it fuses
    x = m.inp("x", [1, 4, 5, 5])
    c = conv(m, x, 4, 8)
    m.out(c)
    m.out(m.op("Relu", [c]))
    out["neg_output"] = m
    m = M()  # conv output read twice: no epilogue
    c = conv(m, m.inp("x", [1, 4, 5, 5]), 4, 8)
    m.out(m.op("Relu", [c]))
    m.out(m.op("Sigmoid", [c]))
    out["neg_two_readers"] = m
    m = M()  # constants that are not per-channel: full shape, and the last axis
    x = m.inp("x", [1, 4, 5, 5])
    m.out(m.op("Add", [conv(m, x, 4, 8), m.const(rand(1, 8, 5, 5))]))
    m.out(m.op("Mul", [conv(m, x, 4, 8), m.const(rand(1, 1, 1, 5))]))
    out["neg_not_channel"] = m
    m = M()  # a graph output in the middle: Conv + Relu fuse, the Add does not
    x = m.inp("x", [1, 4, 5, 5])
    r = m.op("Relu", [conv(m, x, 4, 8)])
    m.out(r)
    m.out(m.op("Add", [r, m.const(1.0)]))
    out["neg_middle_output"] = m
    m = M()  # sigmoid(x) also an output: no SiLU, no chain
    x = m.inp("x", [1, 8, 3, 3])
    s = m.op("Sigmoid", [x])
    m.out(s)
    m.out(m.op("Mul", [x, s]))
    out["neg_silu"] = m
    m = M()  # a "per-channel" constant that grows the tensor: no chain
    x = m.inp("x", [1, 1, 4, 4])
    m.out(m.op("Relu", [m.op("Mul", [x, m.const(rand(1, 8, 1, 1))])]))
    out["neg_grow"] = m
    out["fpn_glue"] = fpn_glue()
    return out


def fpn_glue():
    """DBNet's FPN in small, scoped like torch's export: two levels, a 1x1
    lateral each, the coarser upsampled by an unscoped nearest Resize and
    added to the finer lateral by an unscoped Add read by two modules
    (smooth, side), a ConvTranspose head with a Sigmoid."""
    m = M()
    nodes = []

    def node(name, op, ins, **attrs):
        nodes.append(h.make_node(op, ins, [name + "_out"], name=name, **attrs))
        return name + "_out"

    def cv(name, x, cin, cout, k, s=1):
        return node(name, "Conv", [x, m.const(rand(cout, cin, k, k)), m.const(rand(cout))],
                    kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4)

    x = m.inp("x", [1, 8, 16, 16])
    c1 = cv("/b1/Conv", x, 8, 8, 3)
    c2 = cv("/b2/Conv", c1, 8, 8, 3, 2)
    l1 = cv("/lat1/Conv", c1, 8, 6, 1)
    l2 = cv("/lat2/Conv", c2, 8, 6, 1)
    r = node("/Resize", "Resize", [l2, "", m.const([1, 1, 2, 2])], mode="nearest",
             coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    s = node("/Add", "Add", [l1, r])
    sm = cv("/smooth/Conv", s, 6, 4, 3)
    side = cv("/side/Conv", s, 6, 3, 1)
    t = node("/head/ConvTranspose", "ConvTranspose", [sm, m.const(rand(4, 2, 2, 2)), m.const(rand(2))],
             kernel_shape=[2, 2], strides=[2, 2])
    y = node("/head/Sigmoid", "Sigmoid", [t])
    m.nodes = nodes
    m.out(y)
    m.out(side)
    return m


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, m in models().items():
        m.save(os.path.join(d, name + ".onnx"), getattr(m, "opset", 17))


if __name__ == "__main__":
    main()
