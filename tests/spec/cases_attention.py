"""Attention 23, 24, 25: every example of the spec's Attention section (same
names, shapes, attributes and masks; random data from a seeded generator),
then cases the examples miss (bfloat16, double, V of another type than Q,
softmax_precision narrower than the inputs, a right-only window, present
outputs left out while past is given, raw qk output with a soft cap, 3-D
GQA decode with past, a mask whose last axis is 1).

The reference below is written from the operator's description: heads
split from 3-D inputs, the cache concatenated, query heads grouped over
KV heads (head h reads KV head h // (Hq / Hkv)), Q.K^T * scale, soft cap,
then the allowed set (bottom-right causal frontier from the cache offset,
windows, nonpad bound, bool mask) and the additive float mask (a mask's
last axis shorter than the keys, even of length 1, is padded as masked, as
onnx's reference pads it), softmax with fully masked rows giving zeros, and
the weighted sum of V. Computed in float64, rounded to the outputs' types."""
import numpy as np
from onnx import helper

from spec_case import case, raw

rng = np.random.RandomState(2025)
NP_OF = {1: np.float32, 10: np.float16, 11: np.float64}


def bf16(a):
    """float32 values rounded to bfloat16 (nearest even), as uint16 bits."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def bf16_val(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def as_type(x, t):
    if t == "bf16":
        return bf16_val(bf16(x.astype(np.float32)))
    return x.astype(t).astype(np.float64)


def split_heads(x, h):
    b, s, hid = x.shape
    return x.reshape(b, s, h, hid // h).transpose(0, 2, 1, 3)


def attention(Q, K, V, mask=None, pk=None, pv=None, nonpad=None, scale=None, is_causal=0,
              q_num_heads=None, kv_num_heads=None, softcap=0.0, qk_matmul_output_mode=0,
              softmax_precision=None, left_window_size=-1, right_window_size=-1):
    """Y, present_key, present_value, qk_matmul_output in float64."""
    packed = Q.ndim == 3
    Q, K, V = (np.asarray(a, np.float64) for a in (Q, K, V))
    if packed:
        Q, K, V = split_heads(Q, q_num_heads), split_heads(K, kv_num_heads), \
            split_heads(V, kv_num_heads)
    if pk is not None:
        K = np.concatenate([np.asarray(pk, np.float64), K], axis=2)
        V = np.concatenate([np.asarray(pv, np.float64), V], axis=2)
    B, Hq, Sq, D = Q.shape
    Hkv, T = K.shape[1], K.shape[2]
    if scale is None:
        scale = 1 / np.sqrt(D)
    Kr, Vr = np.repeat(K, Hq // Hkv, axis=1), np.repeat(V, Hq // Hkv, axis=1)
    s = Q @ Kr.transpose(0, 1, 3, 2) * scale
    raw_qk = s
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    capped = s
    if pk is not None:
        off = np.full(B, pk.shape[2])
    elif nonpad is not None:
        off = np.asarray(nonpad) - Sq
    else:
        off = np.zeros(B, np.int64)
    pos = off[:, None, None, None] + np.arange(Sq)[None, None, :, None]
    j = np.arange(T)[None, None, None, :]
    allowed = np.ones((B, 1, Sq, T), bool)
    if is_causal:
        allowed &= j <= pos
    if left_window_size >= 0:
        allowed &= j >= pos - left_window_size
    if right_window_size >= 0:
        allowed &= j <= pos + right_window_size
    if nonpad is not None:
        allowed &= j < np.asarray(nonpad)[:, None, None, None]
    bias = np.zeros((1, 1, 1, 1))
    if mask is not None:
        m = np.asarray(mask)
        short = T - m.shape[-1]  # a shorter last axis (even 1) is padded, not broadcast
        if short > 0:
            pad = [(0, 0)] * (m.ndim - 1) + [(0, short)]
            m = np.pad(m, pad, constant_values=False if m.dtype == bool else -np.inf)
        if m.dtype == bool:
            allowed = allowed & m
        else:
            bias = m.astype(np.float64)
    s = np.where(allowed, s + bias, -np.inf)
    with_bias = s
    sm_t = NP_OF.get(softmax_precision) if softmax_precision is not None else None
    if softmax_precision == 16:
        sm_t = "bf16"
    if sm_t is not None:
        s = as_type(s, sm_t)
    mx = s.max(axis=-1, keepdims=True)
    empty = mx == -np.inf
    e = np.exp(s - np.where(empty, 0, mx))
    tot = e.sum(axis=-1, keepdims=True)
    p = np.where(empty, 0, e / np.where(empty, 1, tot))
    if sm_t is not None:
        p = as_type(p, sm_t)
    Y = p @ Vr
    if packed:
        Y = Y.transpose(0, 2, 1, 3).reshape(B, Sq, -1)
    qk = [raw_qk, capped, with_bias, p][qk_matmul_output_mode]
    return Y, K, V, qk


def value(x, t):
    """A graph value of float64 data x in type t (numpy type or 'bf16')."""
    if t == "bf16":
        return raw("", 16, x.shape, bf16(x.astype(np.float32)).tobytes())
    return x.astype(t)


IN_NAMES = ["Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"]
OUT_NAMES = ["Y", "present_key", "present_value", "qk_matmul_output"]


def run(name, opset, Q, K, V, mask=None, pk=None, pv=None, nonpad=None, outs=("Y",), t=np.float32,
        vt=None, **attrs):
    """Writes one case. Q, K, V, past in float64 already rounded to their
    types t (Q, K, past_key, the mask when float) and vt (V, past_value)."""
    vt = vt or t
    given = [Q, K, V, mask, pk, pv, nonpad]
    last = max(i for i, g in enumerate(given) if g is not None)
    ins = [IN_NAMES[i] if given[i] is not None else "" for i in range(last + 1)]
    node_outs = [n if n in outs else "" for n in OUT_NAMES]
    while node_outs[-1] == "":
        node_outs.pop()
    node = helper.make_node("Attention", ins, node_outs, **attrs)
    Y, PK, PV, QK = attention(Q, K, V, mask, pk, pv, nonpad, **attrs)
    mask_v = mask
    if mask is not None and mask.dtype != bool:
        mask_v = value(mask, t)
    types = [t, t, vt, None, t, vt, None]
    inputs = {}
    for i, n in enumerate(IN_NAMES):
        g = given[i]
        inputs[n] = None if g is None else (mask_v if i == 3 else g if types[i] is None
                                            else value(g, types[i]))
    res = {"Y": (Y, t), "present_key": (PK, t), "present_value": (PV, vt),
           "qk_matmul_output": (QK, t)}
    outputs = {n: value(res[n][0], res[n][1]) for n in OUT_NAMES if n in outs}
    case(name, node, inputs, outputs, opset=opset)


def r(*shape, t=np.float32):
    return as_type(rng.rand(*shape), t)


def rb(*shape):
    return rng.rand(*shape) > 0.3


PAST = ("Y", "present_key", "present_value")
PASTQK = PAST + ("qk_matmul_output",)
QK = ("Y", "qk_matmul_output")
H3 = dict(q_num_heads=3, kv_num_heads=3)
G3 = dict(q_num_heads=9, kv_num_heads=3)

# ---- the spec's examples, in its order ----------------------------------
run("attention_4d", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8))
fm = np.array([[False, False], [True, True]])
run("attention_23_boolmask_fullymasked_row_nan_robustness", 23, r(1, 2, 2, 8), r(1, 2, 2, 8),
    r(1, 2, 2, 8), mask=fm)
run("attention_23_fullymasked_qk_matmul_output_mode3_zero", 23, r(1, 2, 2, 8), r(1, 2, 2, 8),
    r(1, 2, 2, 8), mask=fm, outs=QK, qk_matmul_output_mode=3)
run("attention_24_fullymasked_qk_matmul_output_mode3_zero", 24, r(1, 2, 2, 8), r(1, 2, 2, 8),
    r(1, 2, 2, 8), mask=fm, outs=QK, qk_matmul_output_mode=3)
h = np.float16
run("attention_24_qk_matmul_output_mode3_softmax_precision", 24, r(1, 2, 2, 8, t=h),
    r(1, 2, 2, 8, t=h), r(1, 2, 2, 8, t=h), mask=fm, outs=QK, t=h, qk_matmul_output_mode=3,
    softmax_precision=1)
for nm, vh in (("3d", 24), ("3d_diff_heads_sizes", 30)):
    run("attention_" + nm, 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, vh), **H3)
    run("attention_%s_attn_mask" % nm, 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, vh),
        mask=r(4, 6), **H3)
    run("attention_%s_causal" % nm, 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, vh), is_causal=1, **H3)
    run("attention_%s_scaled" % nm, 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, vh), scale=1e-2, **H3)
    run("attention_%s_softcap" % nm, 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, vh), softcap=3.0,
        **H3)
run("attention_3d_diff_heads_with_past_and_present", 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, 30),
    mask=r(4, 18), pk=r(2, 3, 12, 8), pv=r(2, 3, 12, 10), outs=PAST, **H3)
run("attention_3d_gqa", 23, r(2, 4, 72), r(2, 6, 24), r(2, 6, 24), **G3)
run("attention_3d_gqa_attn_mask", 23, r(2, 4, 72), r(2, 6, 24), r(2, 6, 24), mask=r(4, 6), **G3)
run("attention_3d_gqa_causal", 23, r(2, 4, 72), r(2, 6, 24), r(2, 6, 24), is_causal=1, **G3)
run("attention_3d_gqa_scaled", 23, r(2, 4, 72), r(2, 6, 24), r(2, 6, 24), scale=1e-2, **G3)
run("attention_3d_gqa_softcap", 23, r(2, 4, 72), r(2, 6, 24), r(2, 6, 24), softcap=3.0, **G3)
run("attention_3d_gqa_with_past_and_present", 23, r(2, 4, 72), r(2, 6, 24), r(2, 6, 24),
    mask=r(4, 18), pk=r(2, 3, 12, 8), pv=r(2, 3, 12, 8), outs=PAST, **G3)
run("attention_3d_local_window", 25, r(2, 4, 32), r(2, 6, 8), r(2, 6, 6), q_num_heads=4,
    kv_num_heads=1, is_causal=1, left_window_size=2)
qt = np.zeros((1, 2, 12))
for hd in range(3):
    qt[0, :, hd * 4:(hd + 1) * 4] = hd + 1
run("attention_3d_transpose_verification", 23, qt, as_type(np.full((1, 2, 12), 0.1), np.float32),
    as_type(np.full((1, 2, 12), 0.1), np.float32), **H3)
for sfx, outs, extra in (("", PAST, {}), ("_qk_matmul", PASTQK, {}),
                         ("_qk_matmul_bias", PASTQK, {"qk_matmul_output_mode": 2}),
                         ("_qk_matmul_softcap", PASTQK, {"softcap": 2.0,
                                                         "qk_matmul_output_mode": 1}),
                         ("_qk_matmul_softmax", PASTQK, {"qk_matmul_output_mode": 3})):
    run("attention_3d_with_past_and_present" + sfx, 23, r(2, 4, 24), r(2, 6, 24), r(2, 6, 24),
        mask=r(4, 18), pk=r(2, 3, 12, 8), pv=r(2, 3, 12, 8), outs=outs, **H3, **extra)
comp = np.array([[[[True, True, True, False, False, False],
                   [True, True, True, True, False, False],
                   [True, False, True, True, True, False]]],
                 [[[True, True, True, True, False, False],
                   [True, True, True, True, True, False],
                   [True, True, False, True, True, True]]]])
run("attention_4d_causal_nonpad_attn_mask_composition", 24, r(2, 2, 3, 8), r(2, 2, 6, 8),
    r(2, 2, 6, 8), mask=comp, nonpad=np.array([4, 5], np.int64), is_causal=1)
run("attention_4d_causal_nonpad_batch_prefill", 24, r(3, 2, 2, 8), r(3, 2, 6, 8), r(3, 2, 6, 8),
    nonpad=np.array([4, 5, 6], np.int64), is_causal=1)
run("attention_4d_causal_nonpad_continued_prefill", 24, r(1, 2, 2, 8), r(1, 2, 4, 8),
    r(1, 2, 4, 8), nonpad=np.array([4], np.int64), is_causal=1)
run("attention_4d_causal_nonpad_negative_offset_structural_empty", 24, r(1, 2, 4, 8),
    r(1, 2, 4, 8), r(1, 2, 4, 8), nonpad=np.array([2], np.int64), is_causal=1)
run("attention_4d_causal_with_past_and_present", 24, r(2, 3, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8),
    pk=r(2, 3, 3, 8), pv=r(2, 3, 3, 8), outs=PAST, is_causal=1)
run("attention_4d_diff_heads_mask4d_padded_kv", 24, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10),
    mask=r(2, 3, 4, 4), nonpad=np.array([3, 4], np.int64))
run("attention_4d_gqa_causal_nonpad_decode", 24, r(2, 4, 1, 8), r(2, 2, 8, 8), r(2, 2, 8, 8),
    nonpad=np.array([8, 5], np.int64), is_causal=1)
run("attention_4d_gqa_causal_nonpad_decode_fp16", 24, r(2, 4, 1, 8, t=h), r(2, 2, 8, 8, t=h),
    r(2, 2, 8, 8, t=h), nonpad=np.array([8, 5], np.int64), t=h, is_causal=1)
run("attention_4d_attn_mask_3d", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(2, 1, 4, 6))
run("attention_4d_attn_mask_3d_causal", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(2, 1, 4, 6), is_causal=1)
run("attention_4d_attn_mask_4d", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(2, 3, 4, 6))
run("attention_4d_attn_mask_4d_causal", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(2, 3, 4, 6), is_causal=1)
run("attention_4d_attn_mask", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), mask=r(4, 6))
run("attention_4d_attn_mask_bool", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), mask=rb(4, 6))
run("attention_4d_attn_mask_bool_4d", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=rb(2, 3, 4, 6))
run("attention_bidirectional_window", 25, np.zeros((1, 1, 5, 1)), np.zeros((1, 1, 5, 1)),
    np.arange(5.0).reshape(1, 1, 5, 1), left_window_size=1, right_window_size=2)
run("attention_4d_causal", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), is_causal=1)
run("attention_causal_boolmask_nan_robustness", 24, r(1, 2, 2, 8), r(1, 2, 2, 8), r(1, 2, 2, 8),
    mask=np.array([[True, False], [False, False]]), is_causal=1)
run("attention_4d_diff_heads_sizes", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10))
run("attention_4d_diff_heads_sizes_attn_mask", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10),
    mask=r(4, 6))
run("attention_4d_diff_heads_sizes_causal", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10),
    is_causal=1)
run("attention_4d_diff_heads_sizes_scaled", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10),
    scale=1e-2)
run("attention_4d_diff_heads_sizes_softcap", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10),
    softcap=2.0)
for sfx, mshape in (("", (4, 18)), ("_mask3d", (2, 1, 4, 18)), ("_mask4d", (2, 3, 4, 18))):
    run("attention_4d_diff_heads_with_past_and_present" + sfx, 23, r(2, 3, 4, 8), r(2, 3, 6, 8),
        r(2, 3, 6, 10), mask=r(*mshape), pk=r(2, 3, 12, 8), pv=r(2, 3, 12, 10), outs=PAST)
run("attention_4d_fp16", 23, r(2, 3, 4, 8, t=h), r(2, 3, 6, 8, t=h), r(2, 3, 6, 8, t=h), t=h)
run("attention_4d_gqa", 23, r(2, 9, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8))
run("attention_4d_gqa_attn_mask", 23, r(2, 9, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), mask=r(4, 6))
run("attention_4d_gqa_causal", 23, r(2, 9, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), is_causal=1)
run("attention_4d_gqa_scaled", 23, r(2, 9, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), scale=1e-2)
run("attention_4d_gqa_softcap", 23, r(2, 9, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), softcap=2.0)
run("attention_4d_gqa_with_past_and_present", 23, r(2, 9, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(4, 18), pk=r(2, 3, 12, 8), pv=r(2, 3, 12, 8), outs=PAST)
run("attention_4d_gqa_with_past_and_present_fp16", 23, r(2, 9, 4, 8, t=h), r(2, 3, 6, 8, t=h),
    r(2, 3, 6, 8, t=h), mask=r(4, 18, t=h), pk=r(2, 3, 12, 8, t=h), pv=r(2, 3, 12, 8, t=h),
    outs=PAST, t=h)
run("attention_local_window", 25, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), is_causal=1,
    left_window_size=2)
run("attention_local_window_default", 25, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    left_window_size=-1, right_window_size=-1)
ext = np.array([6, 7], np.int64)
run("attention_local_window_ext_cache_float16_mask", 25, np.zeros((2, 3, 4, 8)),
    np.zeros((2, 3, 8, 8)), np.ones((2, 3, 8, 8)), mask=np.zeros((1, 8)), nonpad=ext, t=h,
    is_causal=1, left_window_size=2)
for sfx, mshape in (("rank2_mask", (1, 8)), ("rank3_head_mask", (3, 4, 8)),
                    ("rank4_batch_mask", (2, 1, 4, 8))):
    run("attention_local_window_ext_cache_" + sfx, 25, r(2, 3, 4, 8), r(2, 3, 8, 8),
        r(2, 3, 8, 8), mask=r(*mshape), nonpad=ext, is_causal=1, left_window_size=2)
gm = np.ones((2, 4, 4, 6), bool)
gm[:, :, 0, :] = False
run("attention_local_window_gqa_rank4_mask", 25, r(2, 4, 4, 8), r(2, 2, 6, 8), r(2, 2, 6, 6),
    mask=gm, outs=QK, is_causal=1, left_window_size=2, softcap=2.0, softmax_precision=11,
    qk_matmul_output_mode=3)
run("attention_local_window_rank1_boolean_mask", 25, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=np.array([True, True, True, True, False, False]), is_causal=1, left_window_size=2)
run("attention_local_window_with_past", 25, r(2, 3, 4, 8), r(2, 3, 2, 8), r(2, 3, 2, 8),
    pk=r(2, 3, 8, 8), pv=r(2, 3, 8, 8), outs=PAST, is_causal=1, left_window_size=2)
run("attention_4d_scaled", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), scale=1e-2)
run("attention_4d_softcap", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), softcap=2.0)
ninf = np.zeros((4, 6))
ninf[:, 4:] = -np.inf
run("attention_4d_softcap_neginf_mask", 23, r(1, 1, 4, 8), r(1, 1, 6, 8), r(1, 1, 6, 8),
    mask=ninf, softcap=0.5)
vp = r(1, 1, 6, 8)
vp[:, :, 4:, :] = 1000.0
run("attention_4d_softcap_neginf_mask_poison", 23, r(1, 1, 4, 8), r(1, 1, 6, 8), vp, mask=ninf,
    softcap=0.5)
for sfx, outs, mshape, extra in (
        ("", PAST, (4, 18), {}), ("_qk_matmul", PASTQK, (4, 18), {}),
        ("_qk_matmul_bias", PASTQK, (4, 18), {"qk_matmul_output_mode": 2}),
        ("_qk_matmul_bias_3d_mask", PASTQK, (2, 1, 4, 18), {"qk_matmul_output_mode": 2}),
        ("_qk_matmul_bias_3d_mask_causal", PASTQK, (2, 1, 4, 18),
         {"qk_matmul_output_mode": 2, "is_causal": 1}),
        ("_qk_matmul_bias_4d_mask", PASTQK, (2, 3, 4, 18), {"qk_matmul_output_mode": 2}),
        ("_qk_matmul_bias_4d_mask_causal", PASTQK, (2, 3, 4, 18),
         {"qk_matmul_output_mode": 2, "is_causal": 1})):
    run("attention_4d_with_past_and_present" + sfx, 23, r(2, 3, 4, 8), r(2, 3, 6, 8),
        r(2, 3, 6, 8), mask=r(*mshape), pk=r(2, 3, 12, 8), pv=r(2, 3, 12, 8), outs=outs, **extra)
run("attention_4d_with_qk_matmul", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), outs=QK)
run("attention_4d_with_qk_matmul_bias", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(4, 6), outs=QK, qk_matmul_output_mode=2)
run("attention_4d_with_qk_matmul_softcap", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(4, 6), outs=QK, softcap=2.0, qk_matmul_output_mode=1)
run("attention_4d_with_qk_matmul_softmax", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
    mask=r(4, 6), outs=QK, qk_matmul_output_mode=3)

# ---- beyond the examples -----------------------------------------------
b = "bf16"
run("attention_x_bf16_gqa_causal_past", 24, r(2, 4, 3, 8, t=b), r(2, 2, 3, 8, t=b),
    r(2, 2, 3, 8, t=b), pk=r(2, 2, 5, 8, t=b), pv=r(2, 2, 5, 8, t=b), outs=PAST, t=b, is_causal=1)
d = np.float64
run("attention_x_double_3d_mqa_mask", 23, r(2, 3, 16, t=d), r(2, 5, 4, t=d), r(2, 5, 6, t=d),
    mask=r(2, 1, 3, 5, t=d), t=d, q_num_heads=4, kv_num_heads=1)
run("attention_x_v_float16_q_float32", 23, r(1, 2, 3, 8), r(1, 2, 4, 8), r(1, 2, 4, 4, t=h),
    pk=r(1, 2, 2, 8), pv=r(1, 2, 2, 4, t=h), outs=PAST, vt=h)
run("attention_x_softmax_precision_float16", 23, r(1, 2, 3, 8), r(1, 2, 4, 8), r(1, 2, 4, 8),
    outs=QK, softmax_precision=10, qk_matmul_output_mode=3)
run("attention_x_right_window_only", 25, r(1, 2, 5, 4), r(1, 2, 5, 4), r(1, 2, 5, 4),
    right_window_size=1)
run("attention_x_past_without_present", 23, r(1, 3, 2, 8), r(1, 3, 2, 8), r(1, 3, 2, 8),
    pk=r(1, 3, 4, 8), pv=r(1, 3, 4, 8), is_causal=1)
run("attention_x_qk_raw_with_softcap", 23, r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), outs=QK,
    softcap=1.5)
run("attention_x_gqa_decode_with_past_3d", 24, r(2, 1, 32), r(2, 1, 16), r(2, 1, 16),
    pk=r(2, 2, 6, 8), pv=r(2, 2, 6, 8), outs=PAST, is_causal=1, q_num_heads=4, kv_num_heads=2)
run("attention_x_mask_last_axis_1_padded", 24, r(1, 2, 3, 4), r(1, 2, 4, 4), r(1, 2, 4, 4),
    mask=r(3, 1))
