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
# the cut falls after the first Add, where one value flows on.
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

# ImageDecoder (opset 20) over a stream of any length (tests/unit/test_image.c),
# and one asking for a pixel_format the op lacks.
U8 = TensorProto.UINT8
for name, fmt in (("image_decoder.onnx", "RGB"), ("image_decoder_bad_format.onnx", "YUV")):
    write(name, model([helper.make_node("ImageDecoder", ["data"], ["image"], name="decode",
                                        pixel_format=fmt)],
                      [vi("data", ["n"], U8)], [vi("image", ["h", "w", "c"], U8)], opset=20,
                      ir_version=9))
