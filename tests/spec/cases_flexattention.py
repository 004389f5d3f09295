"""ai.onnx.preview FlexAttention 1: the spec's examples (default, scaled,
different V head size, double, float16, GQA, and the score_mod / prob_mod
subgraphs: causal mask, relative position bias, constant bias, soft cap,
scaled probabilities), written here as small ONNX graphs; then a float16
run with a score_mod and softmax_precision float16."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from spec_case import case

rng = np.random.RandomState(1)
PREVIEW = "ai.onnx.preview"


def flex(Q, K, V, scale=None, score_mod=None, prob_mod=None):
    Q, K, V = (a.astype(np.float64) for a in (Q, K, V))
    g = Q.shape[1] // K.shape[1]
    K, V = np.repeat(K, g, axis=1), np.repeat(V, g, axis=1)
    scale = 1 / np.sqrt(Q.shape[3]) if scale is None else scale
    s = np.einsum("bhle,bhse->bhls", Q, K) * scale
    if score_mod:
        s = score_mod(s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    if prob_mod:
        p = prob_mod(p)
    return np.einsum("bhls,bhsv->bhlv", p, V)


def mod_graph(nodes, consts, t=TensorProto.FLOAT):
    """One input x, one output y; consts: name -> numpy array."""
    inits = [numpy_helper.from_array(v, n) for n, v in consts.items()]
    return helper.make_graph(nodes, "mod", [helper.make_tensor_value_info("x", t, None)],
                             [helper.make_tensor_value_info("y", t, None)], initializer=inits)


def fcase(name, Q, K, V, t=np.float32, scale=None, score=None, prob=None, **attrs):
    """score / prob: (graph, numpy function) pairs."""
    kw = dict(attrs)
    if scale is not None:
        kw["scale"] = scale
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW, **kw)
    for attr, mod in (("score_mod", score), ("prob_mod", prob)):
        if mod:
            node.attribute.append(helper.make_attribute(attr, mod[0]))
    Q, K, V = Q.astype(t), K.astype(t), V.astype(t)
    y = flex(Q, K, V, scale, score and score[1], prob and prob[1])
    case(name, node, {"Q": Q, "K": K, "V": V}, {"Y": y.astype(t)}, opset=26,
         extra_opsets=[(PREVIEW, 1)])


def qkv(B, Hq, L, E, S, Ev, Hkv=None):
    return rng.rand(B, Hq, L, E), rng.rand(B, Hkv or Hq, S, E), rng.rand(B, Hkv or Hq, S, Ev)


fcase("flexattention", *qkv(2, 4, 8, 16, 6, 16))
causal = np.where(np.arange(4)[:, None] >= np.arange(4)[None, :], 0, -np.inf).astype(np.float32)
fcase("flexattention_causal_mask", *qkv(1, 2, 4, 8, 4, 8),
      score=(mod_graph([helper.make_node("Add", ["x", "m"], ["y"])], {"m": causal}),
             lambda s: s + causal))
fcase("flexattention_diff_head_sizes", *qkv(2, 4, 8, 16, 6, 32))
fcase("flexattention_double", *qkv(2, 4, 8, 16, 6, 16), t=np.float64)
fcase("flexattention_fp16", *qkv(2, 4, 8, 16, 6, 16), t=np.float16)
fcase("flexattention_gqa", *qkv(2, 8, 4, 16, 6, 16, Hkv=2))
half = np.array(0.5, np.float32)
fcase("flexattention_prob_mod", *qkv(1, 2, 3, 4, 3, 4),
      prob=(mod_graph([helper.make_node("Mul", ["x", "c"], ["y"])], {"c": half}),
            lambda p: p * 0.5))
rel = (np.arange(4)[:, None] - np.arange(4)[None, :]).astype(np.float32)
fcase("flexattention_relative_positional", *qkv(1, 2, 4, 8, 4, 8),
      score=(mod_graph([helper.make_node("Add", ["x", "r"], ["y"])], {"r": rel}),
             lambda s: s + rel))
fcase("flexattention_scaled", *qkv(2, 4, 8, 16, 6, 16), scale=0.1)
fcase("flexattention_score_mod", *qkv(1, 2, 3, 4, 3, 4),
      score=(mod_graph([helper.make_node("Add", ["x", "c"], ["y"])], {"c": half}),
             lambda s: s + 0.5))
cap = np.array(20.0, np.float32)
fcase("flexattention_soft_cap", *qkv(1, 2, 4, 8, 4, 8),
      score=(mod_graph([helper.make_node("Div", ["x", "c"], ["a"]),
                        helper.make_node("Tanh", ["a"], ["b"]),
                        helper.make_node("Mul", ["b", "c"], ["y"])], {"c": cap}),
             lambda s: np.tanh(s / 20.0) * 20.0))
h16 = np.array(3.0, np.float16)  # scores times 3: a change softmax does not undo
fcase("flexattention_x_fp16_precision_fp16_score_mod", *qkv(1, 2, 3, 4, 5, 4), t=np.float16,
      softmax_precision=10,
      score=(mod_graph([helper.make_node("Mul", ["x", "c"], ["y"])], {"c": h16},
                       TensorProto.FLOAT16),
             lambda s: s * 3.0))
