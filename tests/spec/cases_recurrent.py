"""LinearAttention 27 and CausalConvWithState 27: the spec's examples (same
names, shapes, attributes; seeded random data), then bfloat16-free extras:
a float32 state with float16 activations, GQA with per-head decay and the
linear rule, and a convolution with silu, bias and past in float16.

References written from the operators' descriptions: the recurrences run
token by token over each KV head's (d_k, d_v) state (query head h reads KV
head h // (Hq / Hkv)); the convolution pads the sequence on the left with the
past state (zeros without one) and keeps the last k - 1 padded values."""
import numpy as np
from onnx import helper

from spec_case import case

rng = np.random.RandomState(27)


def l2_normalize(x, h):
    b, t, hd = x.shape
    y = x.astype(np.float64).reshape(b, t, h, hd // h)
    y = y / np.linalg.norm(y, axis=-1, keepdims=True)
    return y.reshape(b, t, hd).astype(x.dtype)


def linear_attention(q, k, v, past=None, decay=None, beta=None, q_num_heads=1, kv_num_heads=1,
                     update_rule="gated_delta", scale=0.0):
    f = lambda a: None if a is None else a.astype(np.float64)  # noqa: E731
    q, k, v, past, decay, beta = map(f, (q, k, v, past, decay, beta))
    b, t, _ = q.shape
    hq, hkv = q_num_heads, kv_num_heads
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    scale = scale or 1 / np.sqrt(dk)
    q, k, v = q.reshape(b, t, hq, dk), k.reshape(b, t, hkv, dk), v.reshape(b, t, hkv, dv)
    S = np.zeros((b, hkv, dk, dv)) if past is None else past.copy()
    out = np.zeros((b, t, hq, dv))
    for i in range(t):
        kt, vt = k[:, i], v[:, i]  # (b, hkv, d)
        if update_rule in ("gated", "gated_delta"):
            g = decay[:, i].reshape(b, hkv, -1)  # (b, hkv, dk) or (b, hkv, 1)
            S = np.exp(g)[..., None] * S
        if update_rule in ("delta", "gated_delta"):
            bt = beta[:, i]
            bt = np.broadcast_to(bt, (b, hkv)) if bt.shape[-1] == 1 else bt
            pred = np.einsum("bhkv,bhk->bhv", S, kt)
            upd = bt[..., None] * (vt - pred)
        else:
            upd = vt
        S = S + kt[..., :, None] * upd[..., None, :]
        Sq = np.repeat(S, hq // hkv, axis=1)
        out[:, i] = scale * np.einsum("bhk,bhkv->bhv", q[:, i], Sq)
    return out.reshape(b, t, hq * dv), S


LA_INS = ["query", "key", "value", "past_state", "decay", "beta"]


def la_case(name, ins, t=np.float32, st=None, **kw):
    names = [n if ins.get(n) is not None else "" for n in LA_INS]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("LinearAttention", names, ["output", "present_state"], **kw)
    ins = {n: None if ins.get(n) is None else ins[n].astype(st if n == "past_state" and st else t)
           for n in LA_INS}
    y, s = linear_attention(ins["query"], ins["key"], ins["value"], ins["past_state"],
                            ins["decay"], ins["beta"], **kw)
    st = st or t
    case(name, node, ins, {"output": y.astype(t), "present_state": s.astype(st)}, opset=27)


def la_inputs(b, t, hq, hkv, dk, dv, past=False, decay="key", beta="head", norm=True,
              dt=np.float32):
    q = rng.randn(b, t, hq * dk).astype(dt)
    k = rng.randn(b, t, hkv * dk).astype(dt)
    ins = {"query": q, "key": l2_normalize(k, hkv) if norm else k,
           "value": rng.randn(b, t, hkv * dv).astype(dt)}
    if past:
        ins["past_state"] = (rng.randn(b, hkv, dk, dv) * 0.1).astype(np.float32)
    if decay:
        n = hkv * dk if decay == "key" else hkv
        ins["decay"] = (-np.abs(rng.randn(b, t, n)) * 0.1).astype(dt)
    if beta:
        ins["beta"] = rng.rand(b, t, hkv if beta == "head" else 1).astype(dt)
    return ins


H4 = dict(q_num_heads=4, kv_num_heads=4)
la_case("linear_attention_decode_step", la_inputs(2, 1, 4, 4, 8, 8, past=True), **H4)
la_case("linear_attention_delta", la_inputs(2, 4, 4, 4, 8, 8, decay=None), update_rule="delta",
        **H4)
la_case("linear_attention_explicit_scale", la_inputs(2, 4, 4, 4, 8, 8), scale=0.25, **H4)
la_case("linear_attention_fp16", la_inputs(2, 4, 8, 4, 8, 8, dt=np.float16), t=np.float16,
        q_num_heads=8, kv_num_heads=4)
la_case("linear_attention_gated", la_inputs(2, 4, 4, 4, 8, 8, beta=None, norm=False),
        update_rule="gated", **H4)
la_case("linear_attention_gated_delta", la_inputs(2, 4, 4, 4, 8, 8), **H4)
la_case("linear_attention_gated_delta_beta_scalar", la_inputs(2, 4, 4, 4, 8, 8, beta="one"), **H4)
la_case("linear_attention_gated_delta_gqa", la_inputs(2, 4, 8, 4, 8, 8), q_num_heads=8,
        kv_num_heads=4)
la_case("linear_attention_gated_delta_mqa", la_inputs(2, 4, 8, 1, 8, 8), q_num_heads=8,
        kv_num_heads=1)
la_case("linear_attention_gated_per_head_decay",
        la_inputs(2, 4, 4, 4, 8, 8, decay="head", beta=None, norm=False), update_rule="gated", **H4)
la_case("linear_attention_linear", la_inputs(2, 4, 4, 4, 8, 8, decay=None, beta=None, norm=False),
        update_rule="linear", **H4)
la_case("linear_attention_linear_t1_no_past",
        la_inputs(2, 1, 4, 4, 8, 8, decay=None, beta=None, norm=False), update_rule="linear", **H4)
zi = la_inputs(2, 4, 4, 4, 8, 8)
zi["past_state"] = np.zeros((2, 4, 8, 8), np.float32)
la_case("linear_attention_no_past_explicit_zeros", zi, **H4)
la_case("linear_attention_prefill_with_past", la_inputs(2, 4, 4, 4, 8, 8, past=True), **H4)
la_case("linear_attention_x_fp16_float32_state", la_inputs(1, 3, 2, 2, 4, 6, past=True,
                                                           dt=np.float16),
        t=np.float16, st=np.float32, q_num_heads=2, kv_num_heads=2)
la_case("linear_attention_x_linear_gqa_dk_ne_dv",
        la_inputs(2, 3, 6, 2, 4, 5, decay=None, beta=None, norm=False), update_rule="linear",
        q_num_heads=6, kv_num_heads=2)
la_case("linear_attention_x_delta_beta_scalar_past",
        la_inputs(1, 5, 2, 1, 4, 4, past=True, decay=None, beta="one"), update_rule="delta",
        q_num_heads=2, kv_num_heads=1)


def causal_conv(x, w, bias=None, past=None, activation="none"):
    x, w = x.astype(np.float64), w.astype(np.float64)
    b, c, n = x.shape
    k = w.shape[2]
    past = np.zeros((b, c, k - 1)) if past is None else past.astype(np.float64)
    pad = np.concatenate([past, x], axis=2)
    y = sum(w[None, :, 0, i:i + 1] * pad[:, :, i:i + n] for i in range(k))
    if bias is not None:
        y = y + bias.astype(np.float64)[None, :, None]
    if activation in ("silu", "swish"):
        y = y / (1 + np.exp(-y))
    return y, pad[:, :, n:]


def cc_case(name, b, c, n, k, bias=False, past=False, t=np.float32, rand=np.random.randn, **kw):
    x = rng.randn(b, c, n) if rand is np.random.randn else rng.rand(b, c, n)
    w = rng.randn(c, 1, k) if rand is np.random.randn else rng.rand(c, 1, k)
    ins = {"input": x.astype(t), "weight": w.astype(t),
           "bias": rng.randn(c).astype(t) if bias else None,
           "past_state": rng.randn(b, c, k - 1).astype(t) if past else None}
    names = [n_ if ins[n_] is not None else "" for n_ in ins]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("CausalConvWithState", names, ["output", "present_state"], **kw)
    y, s = causal_conv(ins["input"], ins["weight"], ins["bias"], ins["past_state"],
                       kw.get("activation", "none"))
    case(name, node, ins, {"output": y.astype(t), "present_state": s.astype(t)}, opset=27)


cc_case("causal_conv_with_state_b1_c1_degenerate", 1, 1, 6, 4)
cc_case("causal_conv_with_state_basic", 2, 4, 8, 4)
cc_case("causal_conv_with_state_decode_step", 2, 4, 1, 4, bias=True, past=True)
cc_case("causal_conv_with_state_fp16", 2, 4, 8, 4, t=np.float16, rand=np.random.rand)
cc_case("causal_conv_with_state_kernel_size_one", 2, 4, 8, 1)
cc_case("causal_conv_with_state_short_input_no_past_state", 2, 4, 2, 5)
cc_case("causal_conv_with_state_silu", 2, 4, 8, 4, activation="silu")
cc_case("causal_conv_with_state_silu_fp16", 2, 4, 8, 4, t=np.float16, rand=np.random.rand,
        activation="silu")
cc_case("causal_conv_with_state_silu_with_past_state", 2, 4, 8, 4, past=True, activation="silu")
cc_case("causal_conv_with_state_swish_alias", 2, 4, 8, 4, activation="swish")
cc_case("causal_conv_with_state_with_bias", 2, 4, 8, 4, bias=True)
cc_case("causal_conv_with_state_with_bias_and_past_state", 2, 4, 8, 4, bias=True, past=True)
cc_case("causal_conv_with_state_with_past_state", 2, 4, 8, 4, past=True)
cc_case("causal_conv_with_state_x_short_input_with_past_fp16", 1, 3, 2, 5, bias=True, past=True,
        t=np.float16, activation="silu")
