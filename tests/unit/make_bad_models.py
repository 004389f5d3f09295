#!/usr/bin/python3
"""Writes the small models and files the bad-input tests feed to ait.
usage: /usr/bin/python3 tests/unit/make_bad_models.py OUTDIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, TypeProto, helper, numpy_helper, save

from onnx_models import model, vi

out = sys.argv[1]
os.makedirs(os.path.join(out, "sub"), exist_ok=True)
F = TensorProto.FLOAT


def write(name, m):
    save(m, os.path.join(out, name))



# A good model: y = x + w, w an initializer; x is [2, 3].
w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
good = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", [2, 3])],
             [vi("y", [2, 3])], [w])
write("good.onnx", good)
raw = good.SerializeToString()
with open(os.path.join(out, "truncated.onnx"), "wb") as f:
    f.write(raw[: len(raw) // 2])
with open(os.path.join(out, "garbage.onnx"), "wb") as f:
    f.write(bytes((i * 37 + 11) % 256 for i in range(300)))
open(os.path.join(out, "empty.onnx"), "wb").close()

write("unknown_op.onnx", model([helper.make_node("FooBar", ["x"], ["y"], name="foo")],
                               [vi("x", [2])], [vi("y", [2])]))
write("unknown_domain.onnx", model(
    [helper.make_node("Foo", ["x"], ["y"], name="foo", domain="com.example")],
    [vi("x", [2])], [vi("y", [2])], extra_opsets=[("com.example", 1)]))
write("unused_domain.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                  [vi("x", [2])], [vi("y", [2])],
                                  extra_opsets=[("com.microsoft", 1), ("ai.onnx.ml", 3)]))
write("opset_too_new.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])],
                                  [vi("y", [2])], opset=99))

# Unsupported dtype: a complex64 initializer.
cplx = TensorProto(name="c", data_type=TensorProto.COMPLEX64, dims=[1], float_data=[1.0, 2.0])
write("bad_dtype.onnx", model([helper.make_node("Identity", ["c"], ["y"], name="id")], [],
                              [vi("y", [1])], [cplx]))

# Dims whose product overflows.
big = TensorProto(name="big", data_type=F, dims=[1 << 40, 1 << 40])
write("overflow.onnx", model([helper.make_node("Identity", ["big"], ["y"], name="id")], [],
                             [vi("y", None)], [big]))

# Raw data that does not match the shape.
short = TensorProto(name="s", data_type=F, dims=[4], raw_data=b"\0" * 8)
write("short_raw.onnx", model([helper.make_node("Identity", ["s"], ["y"])], [], [vi("y", [4])],
                              [short]))


def ext(location, length=24):
    t = TensorProto(name="e", data_type=F, dims=[2, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(length))):
        t.external_data.add(key=k, value=v)
    return model([helper.make_node("Add", ["x", "e"], ["y"], name="add")], [vi("x", [2, 3])],
                 [vi("y", [2, 3])], [t])


with open(os.path.join(out, "sub", "weights.bin"), "wb") as f:
    f.write(np.arange(6, dtype=np.float32).tobytes())
write("ext_ok.onnx", ext("sub/weights.bin"))
write("ext_escape.onnx", ext("../../../../etc/passwd"))
write("ext_escape_missing.onnx", ext("sub/../../no_such_folder/w.bin"))
write("ext_absolute.onnx", ext("/etc/passwd"))
write("ext_missing.onnx", ext("sub/nope.bin"))
write("ext_short.onnx", ext("sub/weights.bin", length=400))

# Two inputs sharing a symbolic dim; one is also an initializer (a default).
two = model([helper.make_node("Add", ["a", "b"], ["c"], name="add")],
            [vi("a", ["N", 3]), vi("b", ["N", 3])], [vi("c", ["N", 3])])
write("two_inputs.onnx", two)
write("input_is_initializer.onnx",
      model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
            [vi("x", [2, 3]), vi("w", [2, 3])], [vi("y", [2, 3])], [w]))

write("dangling_input.onnx", model([helper.make_node("Relu", ["nowhere"], ["y"], name="relu")],
                                   [vi("x", [2])], [vi("y", [2])]))
write("dangling_output.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                    [vi("x", [2])], [vi("z", [2])]))
write("wrong_arity.onnx", model([helper.make_node("Relu", ["x", "x"], ["y"], name="relu")],
                                [vi("x", [2])], [vi("y", [2])]))

# Run-time failures: an out-of-range Gather index, an impossible Reshape.
table = numpy_helper.from_array(np.zeros((4, 2), np.float32), "table")
write("gather_oob.onnx", model([helper.make_node("Gather", ["table", "idx"], ["y"], name="gather")],
                               [vi("idx", [1], TensorProto.INT64)], [vi("y", [1, 2])], [table]))
shape = numpy_helper.from_array(np.array([4, 4], np.int64), "shape")
write("bad_reshape.onnx", model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                                [vi("x", [2, 3])], [vi("y", [4, 4])], [shape]))

# Subgraphs nested 200 deep (If inside If ...): refused before unpacking.
leaf = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "leaf", [], [vi("o", [1])])
inner = leaf
for _ in range(200):
    n = helper.make_node("If", ["c"], ["o"], then_branch=inner, else_branch=leaf)
    inner = helper.make_graph([n], "g", [], [vi("o", [1])])
write("deep_nesting.onnx", model(inner.node, [vi("c", [], TensorProto.BOOL)], [vi("o", [1])]))

# Unscoped node names with two residual blocks, for the module fallback:
# a model this small stays one segment (seg.0).
relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
write("residual_unscoped.onnx", model(
    [relu("x", "a1", "r1"), relu("a1", "a2", "r2"), helper.make_node("Add", ["a2", "a1"], ["a3"], name="add1"),
     relu("a3", "b1", "r3"), relu("b1", "b2", "r4"), helper.make_node("Add", ["b2", "a3"], ["y"], name="add2")],
    [vi("x", [2])], [vi("y", [2])]))

# .npy files: good, truncated, bad magic, big-endian, Fortran order.
np.save(os.path.join(out, "good.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))
data = open(os.path.join(out, "good.npy"), "rb").read()
open(os.path.join(out, "truncated.npy"), "wb").write(data[:-5])
open(os.path.join(out, "badmagic.npy"), "wb").write(b"XNUMPY" + data[6:])
np.save(os.path.join(out, "bigendian.npy"), np.arange(3, dtype=">f4"))
np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(np.ones((2, 3), np.float32)))
np.savez(os.path.join(out, "good.npz"), x=np.ones((2, 3), np.float32))
np.savez_compressed(os.path.join(out, "compressed.npz"), x=np.full((2, 3), 2, np.float32))
z = open(os.path.join(out, "good.npz"), "rb").read()
open(os.path.join(out, "truncated.npz"), "wb").write(z[: len(z) // 2])

# Samples and batches (tests/unit/test_samples.c): token ids that index a
# table, a mask, and h with its batch axis in the middle.
table = numpy_helper.from_array(np.arange(200, dtype=np.float32).reshape(50, 4), "table")
axes2 = numpy_helper.from_array(np.array([2], np.int64), "axes2")
I64 = TensorProto.INT64
write("tokens.onnx", model(
    [helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed"),
     helper.make_node("Cast", ["attention_mask"], ["maskf"], to=F, name="cast"),
     helper.make_node("Unsqueeze", ["maskf", "axes2"], ["masku"], name="unsq"),
     helper.make_node("Mul", ["emb", "masku"], ["y"], name="mul"),
     helper.make_node("Relu", ["h"], ["h2"], name="relu")],
    [vi("ids", ["batch", "seq"], I64), vi("attention_mask", ["batch", "seq"], I64),
     vi("h", [2, "batch", 4])],
    [vi("y", ["batch", "seq", 4]), vi("h2", [2, "batch", 4])], [table, axes2]))

# Values without a type are valid ONNX (issue 12): an If whose branch outputs
# declare no type (one an empty TypeProto, one no type field at all), and a
# graph value_info with no type. z = (c ? x * 2 : x - 1) + x; the expected
# outputs are numpy's, for c true and false.
two = numpy_helper.from_array(np.array(2, np.float32), "two")
one = numpy_helper.from_array(np.array(1, np.float32), "one")
then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"], name="mul")], "then", [],
                           [helper.make_value_info("t", TypeProto())], initializer=[two])
else_g = helper.make_graph([helper.make_node("Sub", ["x", "one"], ["e"], name="sub")], "else", [],
                           [helper.make_empty_tensor_value_info("e")], initializer=[one])
untyped = model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
                 helper.make_node("Add", ["y", "x"], ["z"], name="add")],
                [vi("x", [2, 3]), vi("c", [], TensorProto.BOOL)], [vi("z", [2, 3])])
untyped.graph.value_info.append(helper.make_empty_tensor_value_info("y"))
untyped.graph.value_info.append(helper.make_value_info("y2", TypeProto()))
write("untyped_if.onnx", untyped)
xu = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
for tag, cu in (("then", True), ("else", False)):
    np.savez(os.path.join(out, "untyped_if.%s.in.npz" % tag), x=xu, c=np.array(cu))
    np.savez(os.path.join(out, "untyped_if.%s.out.npz" % tag),
             z=(xu * 2 if cu else xu - 1) + xu)

# Symbolic dims nobody sets (issue 12): a 3x3 Conv (no padding) on
# [batch, 3, height, width]: generated at 1x1 it fails ("kernel larger than
# padded input"); ait then says which dims were 1 and how to set them.
wc = numpy_helper.from_array(np.ones((2, 3, 3, 3), np.float32), "wc")
write("conv_symbolic.onnx", model([helper.make_node("Conv", ["x", "wc"], ["y"], name="conv")],
                                  [vi("x", ["batch", 3, "height", "width"])],
                                  [vi("y", ["batch", 2, "oh", "ow"])], [wc]))

# A module holding an If whose branches read values of the graph around it
# (unit_modules' test_extract_if): module 'blk' computes q = p + 1 and an If
# on c whose then branch reads q (made inside 'blk') and k (a constant of the
# main graph), and whose else branch holds a nested If on c that reads p
# (made by module 'pre') and q. Cut out, 'blk' must take p and c as inputs.
k3 = numpy_helper.from_array(np.array(3, np.float32), "k3")
inner = [helper.make_graph([helper.make_node("Sub", ["p", "q"], [o], name="/blk/in_" + o)], "in_" + o,
                           [], [vi(o, [2, 3])]) for o in ("w1", "w2")]
inner[1].node[0].op_type = "Add"
then_c = helper.make_graph([helper.make_node("Mul", ["q", "k3"], ["t"], name="/blk/then_mul")], "then",
                           [], [vi("t", [2, 3])])
else_c = helper.make_graph([helper.make_node("If", ["c"], ["w"], name="/blk/inner_if",
                                             then_branch=inner[0], else_branch=inner[1])], "else",
                           [], [vi("w", [2, 3])])
write("if_captures.onnx", model(
    [helper.make_node("Mul", ["x", "k3"], ["p"], name="/pre/Mul"),
     helper.make_node("Add", ["p", "one"], ["q"], name="/blk/Add"),
     helper.make_node("If", ["c"], ["y"], name="/blk/If", then_branch=then_c, else_branch=else_c),
     helper.make_node("Add", ["y", "p"], ["z"], name="/post/Add")],
    [vi("x", [2, 3]), vi("c", [], TensorProto.BOOL)], [vi("z", [2, 3])], [k3, one]))

# A module with more ports than a tuning trial passes (65 inputs and outputs):
# `ait tune` keeps its baseline without a trial and says why; `ait show`
# prints no times for it.
write("wide.onnx", model(
    [helper.make_node("Relu", ["x%d" % k], ["r%d" % k], name="/wide/Relu_%d" % k) for k in range(65)]
    + [helper.make_node("Sum", ["r%d" % k for k in range(65)], ["y"], name="/post/Sum")],
    [vi("x%d" % k, [2]) for k in range(65)], [vi("y", [2])]))
# Bad input to the opset 23-28 ops (attention, decoder, recurrent, BitCast,
# TensorScatter): one node on initializers each; test_errors checks the message.
def const_model(name, op, consts, attrs=None, opset=28, outs=1, domain=None):
    inits = [numpy_helper.from_array(np.asarray(v), "c%d" % i) if v is not None else None
             for i, v in enumerate(consts)]
    ins = ["c%d" % i if v is not None else "" for i, v in enumerate(consts)]
    node = helper.make_node(op, ins, ["y%d" % i for i in range(outs)], name="op", domain=domain,
                            **(attrs or {}))
    write(name, model([node], [], [vi("y%d" % i, None) for i in range(outs)],
                      [t for t in inits if t is not None], opset=opset,
                      extra_opsets=[(domain, 1)] if domain else ()))


def fz(*shape):
    return np.zeros(shape, np.float32)


const_model("bad_attn_heads.onnx", "Attention", [fz(1, 2, 12), fz(1, 2, 8), fz(1, 2, 8)],
            {"q_num_heads": 3, "kv_num_heads": 2})
const_model("bad_attn_no_heads.onnx", "Attention", [fz(1, 2, 12), fz(1, 2, 12), fz(1, 2, 12)])
const_model("bad_attn_cache.onnx", "Attention", [fz(1, 2, 3, 4), fz(1, 2, 3, 4), fz(1, 2, 3, 4),
                                                 None, fz(1, 2, 5, 4), fz(1, 2, 6, 4)], outs=3)
const_model("bad_attn_nonpad_23.onnx", "Attention",
            [fz(1, 1, 2, 4), fz(1, 1, 2, 4), fz(1, 1, 2, 4), None, None, None,
             np.array([2], np.int64)], opset=23)
const_model("bad_attn_mask.onnx", "Attention", [fz(1, 1, 2, 4), fz(1, 1, 3, 4), fz(1, 1, 3, 4),
                                                fz(2, 5)])
const_model("bad_rotary_odd.onnx", "RotaryEmbedding", [fz(1, 1, 2, 6), fz(2, 3, 1), fz(2, 3, 1)],
            {"rotary_embedding_dim": 3})
const_model("bad_rotary_pos.onnx", "RotaryEmbedding",
            [fz(1, 1, 2, 4), fz(8, 2), fz(8, 2), np.array([[0, 9]], np.int64)])
const_model("bad_bitcast_width.onnx", "BitCast", [fz(2, 3)], {"to": TensorProto.INT16})
const_model("bad_tscat_axis0.onnx", "TensorScatter", [fz(2, 4, 3), fz(2, 4, 3)], {"axis": 0})
const_model("bad_tscat_index.onnx", "TensorScatter",
            [fz(2, 4, 3), fz(2, 2, 3), np.array([1, 3], np.int64)], {"axis": 1})
const_model("bad_linattn_heads.onnx", "LinearAttention", [fz(1, 1, 12), fz(1, 1, 8), fz(1, 1, 8)],
            {"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"}, outs=2)
const_model("bad_linattn_decay.onnx", "LinearAttention", [fz(1, 1, 8), fz(1, 1, 8), fz(1, 1, 8)],
            {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated"}, outs=2)
const_model("bad_causalconv_weight.onnx", "CausalConvWithState", [fz(1, 2, 5), fz(2, 2, 3)],
            outs=2)
const_model("bad_swiglu_shape.onnx", "SwiGLU", [fz(2, 3), fz(3)])
const_model("bad_rms_scale.onnx", "RMSNormalization", [fz(2, 3), fz(4)])
# FlexAttention's score_mod must keep its input's shape: this one doubles the last axis.
grow = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["y"], axis=3)], "grow",
                         [vi("x", None)], [vi("y", None)])
const_model("bad_flex_mod.onnx", "FlexAttention", [fz(1, 1, 2, 4), fz(1, 1, 3, 4), fz(1, 1, 3, 4)],
            {"score_mod": grow}, opset=26, domain="ai.onnx.preview")
# ai.onnx.ml nodes with bad attributes (test_errors.c: test_ml_errors): one
# node 'bad' reading x [2,3]; each refused at load or at its first run with
# a message naming the problem, never a crash or a hang.
ML = "ai.onnx.ml"


def ml_bad(name, op, ml_opset=3, ins=("x",), inits=(), **attrs):
    n = helper.make_node(op, list(ins), ["y"] if op != "TreeEnsembleClassifier" else ["y", "z"],
                         name="bad", domain=ML, **attrs)
    outs = [vi("y", None)] + ([vi("z", None)] if op == "TreeEnsembleClassifier" else [])
    write(f"ml_{name}.onnx", model([n], [vi("x", [2, 3])], outs, list(inits), opset=17,
                                   extra_opsets=[(ML, ml_opset)] if ml_opset else []))


def legacy(modes, true, false, feats=None, ids=None, **extra):
    n = len(modes)
    a = dict(nodes_treeids=[0] * n, nodes_nodeids=ids or list(range(n)),
             nodes_featureids=feats or [0] * n, nodes_modes=modes, nodes_values=[0.5] * n,
             nodes_truenodeids=true, nodes_falsenodeids=false, n_targets=1)
    a.update(extra)
    return a


leaf_w = dict(target_treeids=[0], target_nodeids=[1], target_ids=[0], target_weights=[1.0])
ml_bad("tree_child_oob", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "LEAF"], [5, 0], [1, 0], **leaf_w))
ml_bad("tree_cycle", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "BRANCH_LEQ", "BRANCH_LEQ", "LEAF"], [1, 2, 1, 0], [3, 3, 3, 0],
                target_treeids=[0], target_nodeids=[3], target_ids=[0], target_weights=[1.0]))
ml_bad("tree_cycle_all", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "BRANCH_LEQ"], [1, 0], [1, 0]))
ml_bad("tree_dup_node", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], ids=[1, 1], **leaf_w))
ml_bad("tree_weight_not_leaf", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], target_treeids=[0], target_nodeids=[0],
                target_ids=[0], target_weights=[1.0]))
ml_bad("tree_target_oob", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], target_treeids=[0], target_nodeids=[1],
                target_ids=[3], target_weights=[1.0]))
ml_bad("tree_feature_oob", "TreeEnsembleRegressor",
       **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], feats=[9, 0], **leaf_w))
ml_bad("tree_bad_mode", "TreeEnsembleRegressor",
       **legacy(["BRANCH_SOMETIMES", "LEAF"], [1, 0], [1, 0], **leaf_w))
ml_bad("tree_removed", "TreeEnsembleRegressor", ml_opset=5,
       **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], **leaf_w))
cls_leaf = dict(class_treeids=[0], class_nodeids=[1], class_ids=[0], class_weights=[1.0])
ml_bad("tree_labels_both", "TreeEnsembleClassifier", classlabels_strings=["a", "b"],
       classlabels_int64s=[0, 1], **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], **cls_leaf))
ml_bad("tree_string_labels_one", "TreeEnsembleClassifier", classlabels_strings=["a"],
       **legacy(["BRANCH_LEQ", "LEAF"], [1, 0], [1, 0], **cls_leaf))


def te5(**over):
    a = dict(n_targets=1, tree_roots=[0], nodes_featureids=[0, 1],
             nodes_modes=helper.make_tensor("m", TensorProto.UINT8, (2,), [0, 0]),
             nodes_splits=numpy_helper.from_array(np.array([0.5, 0.5], np.float32), "s"),
             nodes_truenodeids=[1, 0], nodes_trueleafs=[0, 1],
             nodes_falsenodeids=[0, 1], nodes_falseleafs=[1, 1], leaf_targetids=[0, 0],
             leaf_weights=numpy_helper.from_array(np.array([1, 2], np.float32), "w"))
    a.update(over)
    return a


ml_bad("te5_ok", "TreeEnsemble", ml_opset=5, **te5())
ml_bad("te5_cycle", "TreeEnsemble", ml_opset=5, **te5(nodes_falsenodeids=[0, 0],
                                                      nodes_falseleafs=[1, 0]))
ml_bad("te5_leaf_oob", "TreeEnsemble", ml_opset=5, **te5(nodes_falsenodeids=[7, 1]))
ml_bad("te5_root_oob", "TreeEnsemble", ml_opset=5, **te5(tree_roots=[-1]))
ml_bad("te5_member_missing", "TreeEnsemble", ml_opset=5,
       **te5(nodes_modes=helper.make_tensor("m", TensorProto.UINT8, (2,), [0, 6])))
ml_bad("te5_bad_mode", "TreeEnsemble", ml_opset=5,
       **te5(nodes_modes=helper.make_tensor("m", TensorProto.UINT8, (2,), [0, 9])))
ml_bad("te5_lengths", "TreeEnsemble", ml_opset=5, **te5(nodes_trueleafs=[0]))
ml_bad("te5_aggregate", "TreeEnsemble", ml_opset=5, **te5(aggregate_function=7))
ml_bad("linear_coef_count", "LinearRegressor", coefficients=[1.0, 2.0, 3.0, 4.0])
ml_bad("linear_post", "LinearRegressor", coefficients=[1.0, 2.0, 3.0], post_transform="SQUASH")
ml_bad("linear_labels", "LinearClassifier", coefficients=[1.0] * 6, intercepts=[0.0, 0.0],
       classlabels_ints=[1, 2, 3])
ml_bad("svm_vectors", "SVMClassifier", vectors_per_class=[1, 1], support_vectors=[1.0] * 5,
       coefficients=[1.0, 1.0], rho=[0.0], classlabels_ints=[0, 1])
ml_bad("svm_kernel", "SVMRegressor", kernel_type="CUBIC", coefficients=[1.0] * 3, rho=[0.0])
ml_bad("no_import_binarizer", "Binarizer", ml_opset=0)
ml_bad("label_encoder_dtype", "LabelEncoder", ml_opset=2, keys_int64s=[1], values_int64s=[2])
ml_bad("label_encoder_strings_count", "LabelEncoder", ml_opset=2, keys_strings=["a", "b"],
       values_int64s=[2])
ml_bad("label_encoder_keys_both", "LabelEncoder", ml_opset=2, keys_strings=["a"], keys_int64s=[1],
       values_int64s=[2])
ml_bad("label_encoder_string_keys_float_x", "LabelEncoder", ml_opset=2, keys_strings=["a"],
       values_int64s=[2])
ml_bad("label_encoder_default_tensor", "LabelEncoder", ml_opset=4, keys_int64s=[1],
       values_strings=["a"], default_tensor=helper.make_tensor("d", TensorProto.INT64, (1,), [0]))
ml_bad("label_encoder_v1_float_x", "LabelEncoder", ml_opset=1, classes_strings=["a"])
ml_bad("array_feature_oob", "ArrayFeatureExtractor", ins=("x", "i"),
       inits=[numpy_helper.from_array(np.array([1, 5], np.int64), "i")])
ml_bad("category_mapper_count", "CategoryMapper", cats_int64s=[1], cats_strings=["a", "b"])
ml_bad("category_mapper_float_x", "CategoryMapper", cats_int64s=[1], cats_strings=["a"])
ml_bad("one_hot_cats_both", "OneHotEncoder", ml_opset=1, cats_int64s=[1], cats_strings=["a"])
ml_bad("one_hot_strings_float_x", "OneHotEncoder", ml_opset=1, cats_strings=["a"])
ml_bad("one_hot_not_category", "OneHotEncoder", ml_opset=1, ins=("s",), cats_strings=["red"],
       zeros=0, inits=[helper.make_tensor("s", TensorProto.STRING, (2,), [b"red", b"pink"])])
ml_bad("zipmap_labels_both", "ZipMap", classlabels_int64s=[0, 1, 2],
       classlabels_strings=["a", "b", "c"])
ml_bad("zipmap_label_count", "ZipMap", classlabels_int64s=[0, 1])
ml_bad("dictvectorizer_vocab_both", "DictVectorizer", string_vocabulary=["a"],
       int64_vocabulary=[1])
# CastMap reads int64 keys: here a map with string keys, the first row's of a
# ZipMap.
write("ml_castmap_string_keys.onnx", model(
    [helper.make_node("ZipMap", ["x"], ["zs"], domain=ML, classlabels_strings=["a", "b", "c"]),
     helper.make_node("SequenceAt", ["zs", "zero"], ["m"]),
     helper.make_node("CastMap", ["m"], ["y"], name="bad", domain=ML)],
    [vi("x", [2, 3])], [vi("y", None)], [numpy_helper.from_array(np.array(0, np.int64), "zero")],
    opset=17, extra_opsets=[(ML, 1)]))
ml_bad("scaler_count", "Scaler", offset=[1.0, 2.0], scale=[1.0])

# A module drawing unseeded random values (tests/cli/test_artifact_cli.sh):
# no candidate can be checked against the reference, so `ait tune` keeps its
# baseline and says why; module 'head' is tuned as usual.
write("random_module.onnx", model(
    [helper.make_node("RandomNormalLike", ["x"], ["n"], name="/noise/RandomNormalLike", scale=0.1),
     helper.make_node("Add", ["x", "n"], ["xn"], name="/noise/Add"),
     helper.make_node("Relu", ["xn"], ["y"], name="/head/Relu")],
    [vi("x", [2, 8])], [vi("y", [2, 8])], opset=22))
# ImageDecoder (opset 20) over a stream of any length (tests/unit/test_image.c),
# and one asking for a pixel_format the op lacks.
U8 = TensorProto.UINT8
for name, fmt in (("image_decoder.onnx", "RGB"), ("image_decoder_bad_format.onnx", "YUV")):
    write(name, model([helper.make_node("ImageDecoder", ["data"], ["image"], name="decode",
                                        pixel_format=fmt)],
                      [vi("data", ["n"], U8)], [vi("image", ["h", "w", "c"], U8)], opset=20,
                      ir_version=9))
