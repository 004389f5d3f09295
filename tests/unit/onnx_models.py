"""What the test-model scripts share: a model from nodes and value infos,
with the opset imports asked for (onnx's checker is not called: onnx 1.12
does not know opsets above 17)."""
from onnx import TensorProto, helper


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=(), ir_version=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="ait-tests")
    m.ir_version = ir_version
    return m


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)
