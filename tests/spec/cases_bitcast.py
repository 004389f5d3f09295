"""BitCast 26: the spec's examples (numpy's view gives the expected bits),
then float16 and bfloat16 to int16 and back, uint64 to double, and
int32 to uint32."""
import numpy as np
from onnx import TensorProto, helper

from spec_case import case, raw


def bc_case(name, x, to, y):
    case(name, helper.make_node("BitCast", ["x"], ["y"], to=to), {"x": x}, {"y": y}, opset=26)


def view(name, x, to, npt):
    bc_case(name, x, to, x.view(npt))


view("bitcast_2d_float32_to_int32", np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32),
     TensorProto.INT32, np.int32)
view("bitcast_bool_to_uint8", np.array([True, False, True, False]), TensorProto.UINT8, np.uint8)
view("bitcast_float32_to_int32", np.array([1.0, -2.5, 3.75], np.float32), TensorProto.INT32,
     np.int32)
view("bitcast_float64_to_int64", np.array([1.0, -2.5, 3.75]), TensorProto.INT64, np.int64)
view("bitcast_int32_to_float32", np.array([1065353216, -1071644672, 1081081856], np.int32),
     TensorProto.FLOAT, np.float32)
view("bitcast_int64_to_float64",
     np.array([4607182418800017408, -4611686018427387904, 4614256656552045184], np.int64),
     TensorProto.DOUBLE, np.float64)
view("bitcast_int8_to_uint8", np.array([-1, -128, 127, 0], np.int8), TensorProto.UINT8, np.uint8)
view("bitcast_scalar_float32_to_int32", np.array(1.0, np.float32), TensorProto.INT32, np.int32)
view("bitcast_uint16_to_int16", np.array([1, 32768, 65535], np.uint16), TensorProto.INT16, np.int16)
view("bitcast_uint32_to_int32", np.array([4294967295, 2147483648, 2147483647], np.uint32),
     TensorProto.INT32, np.int32)
view("bitcast_x_fp16_to_int16", np.array([[1.0, -2.0], [65504.0, 0.0]], np.float16),
     TensorProto.INT16, np.int16)
view("bitcast_x_uint64_to_double", np.array([0x3FF0000000000000, 0xC000000000000000], np.uint64),
     TensorProto.DOUBLE, np.float64)
view("bitcast_x_int32_to_uint32", np.array([-1, 0, 7], np.int32), TensorProto.UINT32, np.uint32)
bits = np.array([0x3F80, 0xC040, 0x7F80], np.uint16)  # 1.0, -3.0, inf in bfloat16
bc_case("bitcast_x_bf16_to_uint16", raw("", 16, [3], bits.tobytes()), TensorProto.UINT16, bits)
bc_case("bitcast_x_int16_to_bf16", bits.view(np.int16), 16, raw("", 16, [3], bits.tobytes()))
