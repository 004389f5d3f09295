"""RotaryEmbedding 23: the spec's examples (4-D and 3-D input, interleaved,
caches indexed by position_ids or given per token, partial rotation), then
float16 and a 3-D interleaved partial rotation. The reference follows the
algorithm in the operator's description: the head's first rotary_dim values
split in halves (or even/odd pairs when interleaved) and rotated by the
cos/sin rows of each token."""
import numpy as np
from onnx import helper

from spec_case import case

rng = np.random.RandomState(231)


def rotary(x, cos, sin, pos=None, interleaved=0, rotary_dim=0, num_heads=0):
    x = x.astype(np.float64)
    shape = x.shape
    if x.ndim == 4:
        x = x.transpose(0, 2, 1, 3)  # [b, s, h, d]
    else:
        x = x.reshape(shape[0], shape[1], num_heads, -1)
    rd = rotary_dim or x.shape[3]
    cos, sin = cos.astype(np.float64), sin.astype(np.float64)
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]
    rot = x[..., :rd]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :rd // 2], rot[..., rd // 2:]
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    if interleaved:
        rot = np.stack([real, imag], axis=-1).reshape(rot.shape)
    else:
        rot = np.concatenate([real, imag], axis=-1)
    y = np.concatenate([rot, x[..., rd:]], axis=-1)
    return y.transpose(0, 2, 1, 3) if len(shape) == 4 else y.reshape(shape)


def rope_case(name, x, cos, sin, pos=None, t=np.float32, **attrs):
    ins = ["input", "cos_cache", "sin_cache"] + (["position_ids"] if pos is not None else [])
    node = helper.make_node("RotaryEmbedding", ins, ["output"], **attrs)
    x, cos, sin = x.astype(t), cos.astype(t), sin.astype(t)
    y = rotary(x, cos, sin, pos, attrs.get("interleaved", 0), attrs.get("rotary_embedding_dim", 0),
               attrs.get("num_heads", 0))
    inputs = {"input": x, "cos_cache": cos, "sin_cache": sin, "position_ids": pos}
    case(name, node, inputs, {"output": y.astype(t)}, opset=23)


def pos():
    return rng.uniform(0, 50, (2, 3)).astype(np.int64)


rope_case("rotary_embedding", rng.rand(2, 4, 3, 8), rng.rand(50, 4), rng.rand(50, 4), pos())
rope_case("rotary_embedding_3d_input", rng.rand(2, 3, 32), rng.rand(50, 4), rng.rand(50, 4), pos(),
          num_heads=4)
rope_case("rotary_embedding_interleaved", rng.rand(2, 4, 3, 8), rng.rand(50, 4), rng.rand(50, 4),
          pos(), interleaved=1)
rope_case("rotary_embedding_no_position_ids", rng.rand(2, 4, 3, 8), rng.rand(2, 3, 4),
          rng.rand(2, 3, 4))
rope_case("rotary_embedding_no_position_ids_interleaved", rng.rand(2, 4, 3, 8), rng.rand(2, 3, 4),
          rng.rand(2, 3, 4), interleaved=1)
rope_case("rotary_embedding_no_position_ids_rotary_dim", rng.rand(2, 4, 3, 8), rng.rand(2, 3, 2),
          rng.rand(2, 3, 2), rotary_embedding_dim=4)
rope_case("rotary_embedding_with_interleaved_rotary_dim", rng.rand(2, 4, 3, 8), rng.rand(50, 2),
          rng.rand(50, 2), pos(), interleaved=1, rotary_embedding_dim=4)
rope_case("rotary_embedding_with_rotary_dim", rng.rand(2, 4, 3, 8), rng.rand(50, 2),
          rng.rand(50, 2), pos(), rotary_embedding_dim=4)
rope_case("rotary_embedding_x_fp16", rng.rand(2, 4, 3, 8), rng.rand(50, 4), rng.rand(50, 4), pos(),
          t=np.float16)
rope_case("rotary_embedding_x_3d_interleaved_rotary_dim", rng.rand(2, 3, 24), rng.rand(50, 2),
          rng.rand(50, 2), pos(), num_heads=2, interleaved=1, rotary_embedding_dim=4)
