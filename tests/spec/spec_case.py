"""Writes one node test in the layout of ONNX's own node tests, which
ait-node-tests runs: OUT/test_NAME/model.onnx and
OUT/test_NAME/test_data_set_0/{input,output}_N.pb.

The cases come from the Examples sections of the ONNX spec (Operators.md,
Operators-ml.md) for op versions newer than the generated onnx 1.12 tests
reach; each expected output is computed here with numpy, never by ait.
onnx 1.12's checker does not know opsets above 17 and is not called.

    case("rms_norm_axis_1", node, {"X": x, "S": s}, {"Y": y}, opset=23)

Inputs and outputs are numpy arrays, or TensorProtos made with `raw()` for
the element types numpy and onnx 1.12 lack (float8, int4, float4, ...)."""
import os

import numpy as np
from onnx import mapping, MapProto, SequenceProto, TensorProto, TypeProto, helper, numpy_helper

OUT = None  # set by gen.py
_names = set()


def raw(name_unused, elem_type, dims, data):
    """A TensorProto of any element type from its raw little-endian bytes
    (packed two 4-bit or four 2-bit values per byte, as ONNX stores them)."""
    t = TensorProto()
    t.data_type = elem_type
    t.dims.extend(dims)
    t.raw_data = bytes(data)
    return t


def bf16(a):
    """float values as a bfloat16 TensorProto (round to nearest even)."""
    b = np.asarray(a, np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return raw("", 16, list(np.shape(a)), b.tobytes())


def bf16_round(a):
    """The float32 values bfloat16 holds for a."""
    b = np.asarray(a, np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
    b = (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32)
    return b.view(np.float32).reshape(np.shape(a))


class Map:
    """A map value (ai.onnx.ml): keys, all int or all str, and their values
    as numpy dtype vt (np.float32, np.float64, np.int64 or object for str).
    Stored as ONNX's MapProto: the values one scalar tensor each."""

    def __init__(self, keys, values, vt=np.float32):
        self.keys, self.values, self.vt = list(keys), list(values), vt
        assert len(self.keys) == len(self.values)

    def proto(self, name):
        m = MapProto()
        m.name = name
        strs = bool(self.keys) and isinstance(self.keys[0], str)
        m.key_type = TensorProto.STRING if strs else TensorProto.INT64
        if strs:
            m.string_keys.extend(k.encode() for k in self.keys)
        else:
            m.keys.extend(int(k) for k in self.keys)
        m.values.elem_type = SequenceProto.TENSOR
        for v in self.values:
            m.values.tensor_values.append(numpy_helper.from_array(np.array(v, self.vt)))
        return m

    def type_proto(self):
        t = TypeProto()
        strs = bool(self.keys) and isinstance(self.keys[0], str)
        t.map_type.key_type = TensorProto.STRING if strs else TensorProto.INT64
        vt = TensorProto.STRING if self.vt is object else mapping.NP_TYPE_TO_TENSOR_TYPE[
            np.dtype(self.vt)]
        t.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(vt, None))
        return t


class MapSeq:
    """A sequence of maps (ZipMap's output); `like` gives the type when empty."""

    def __init__(self, maps, like=None):
        self.maps, self.like = list(maps), like or maps[0]

    def proto(self, name):
        q = SequenceProto()
        q.name = name
        q.elem_type = SequenceProto.MAP
        for m in self.maps:
            q.map_values.append(m.proto(""))
        return q

    def type_proto(self):
        t = TypeProto()
        t.sequence_type.elem_type.CopyFrom(self.like.type_proto())
        return t


def _proto(name, v):
    if isinstance(v, (Map, MapSeq)):
        return (name, v)
    if isinstance(v, TensorProto):
        t = TensorProto()
        t.CopyFrom(v)
        t.name = name
        return t
    return numpy_helper.from_array(np.asarray(v), name)


def _info(name, t):
    if isinstance(t, tuple):
        return helper.make_value_info(name, t[1].type_proto())
    return helper.make_tensor_value_info(name, t.data_type, list(t.dims))


def _name(t):
    return t[0] if isinstance(t, tuple) else t.name


def case(name, nodes, inputs, outputs, opset, extra_opsets=(), ir_version=10, inits=()):
    """Writes test_NAME. nodes: a node or a list; inputs, outputs: dicts from
    graph input/output name to value, in order (an input whose value is None
    is left out of the graph: an omitted optional input)."""
    assert OUT is not None, "spec_case.OUT is set by gen.py"
    assert name not in _names, "two cases named " + name
    _names.add(name)
    if not isinstance(nodes, (list, tuple)):
        nodes = [nodes]
    ins = [_proto(k, v) for k, v in inputs.items() if v is not None]
    outs = [_proto(k, v) for k, v in outputs.items()]
    g = helper.make_graph(list(nodes), "test_" + name, [_info(_name(t), t) for t in ins],
                          [_info(_name(t), t) for t in outs], initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="ait-spec-tests")
    m.ir_version = ir_version
    d = os.path.join(OUT, "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for kind, ts in (("input", ins), ("output", outs)):
        for i, t in enumerate(ts):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                t = t[1].proto(t[0]) if isinstance(t, tuple) else t
                f.write(t.SerializeToString())
