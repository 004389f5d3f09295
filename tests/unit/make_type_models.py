#!/usr/bin/python3
"""Writes the bad models of the small element types that unit_small_types
feeds to ait: each must fail with the message test_small_types.c expects.
No graph inputs: every value is an initializer.
usage: /usr/bin/python3 tests/unit/make_type_models.py OUTDIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

from onnx_models import model, vi

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F8E4M3FN, INT4, F4E2M1, F8E8M0 = 17, 22, 23, 24


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def small(name, t, dims, data):
    return TensorProto(name=name, data_type=t, dims=dims, raw_data=bytes(data))


def write(name, nodes, inits, y_type, opset):
    save(model(nodes, [], [vi("y", None, y_type)], inits, opset=opset, ir_version=10),
         os.path.join(out, name + ".onnx"))


x = init("x", np.arange(12, dtype=np.float32).reshape(3, 4))
# Cast to float4e2m1 came with Cast-23.
write("cast_f4_at_21", [helper.make_node("Cast", ["x"], ["y"], to=F4E2M1)], [x], F4E2M1, 21)
write("cast_round_mode", [helper.make_node("Cast", ["x"], ["y"], to=F8E8M0, round_mode="sideways")],
      [x], F8E8M0, 25)
write("cast_saturate_2", [helper.make_node("Cast", ["x"], ["y"], to=F8E4M3FN, saturate=2)],
      [x], F8E4M3FN, 19)
# Blocked quantization: the scale must be [3, ceil(4 / 2)] = [3, 2].
write("q_block_scale", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1,
                                         block_size=2)],
      [x, init("s", np.ones((3, 3), np.float32))], TensorProto.UINT8, 21)
write("q_block_negative", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], block_size=-1)],
      [x, init("s", np.ones((3, 2), np.float32))], TensorProto.UINT8, 21)
write("dq_zp_shape", [helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["y"], axis=1)],
      [init("xq", np.zeros((3, 4), np.uint8)), init("s", np.ones(4, np.float32)),
       init("z", np.zeros(3, np.uint8))], TensorProto.FLOAT, 21)
write("dq_scale_axis", [helper.make_node("DequantizeLinear", ["xq", "s"], ["y"], axis=0)],
      [small("xq", INT4, [3, 4], [0] * 6), init("s", np.ones(4, np.float32))],
      TensorProto.FLOAT, 21)
# int4 came with version 21.
write("q_int4_at_19", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
      [x, init("s", np.float32(1)), small("z", INT4, [], [0])], INT4, 19)
write("q_precision_int8", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"],
                                            precision=TensorProto.INT8)],
      [x, init("s", np.float32(1))], TensorProto.UINT8, 23)
# A float8e8m0 scale says nothing of the output's type.
write("dq_e8m0_no_output_dtype", [helper.make_node("DequantizeLinear", ["xq", "s"], ["y"])],
      [init("xq", np.zeros(4, np.int8)), small("s", F8E8M0, [], [127])], TensorProto.FLOAT, 24)
write("dq_x_e8m0", [helper.make_node("DequantizeLinear", ["xq", "s"], ["y"])],
      [small("xq", F8E8M0, [4], [127] * 4), init("s", np.float32(1))], TensorProto.FLOAT, 24)
# Packed storage of the wrong size: 5 int4 values take 3 bytes.
write("int4_short_raw", [helper.make_node("Identity", ["v"], ["y"])],
      [small("v", INT4, [5], [0x21, 0x43])], INT4, 21)
write("int4_int32_data", [helper.make_node("Identity", ["v"], ["y"])],
      [TensorProto(name="v", data_type=INT4, dims=[4], int32_data=[1, 2, 3])], INT4, 21)
# IsNaN takes float8 from version 20 only.
write("isnan_f8_at_13", [helper.make_node("IsNaN", ["v"], ["y"])],
      [small("v", F8E4M3FN, [2], [0, 0x7f])], TensorProto.BOOL, 13)
