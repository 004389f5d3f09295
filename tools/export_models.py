#!/usr/bin/python3
"""Exports the bundled test models with Debian's python3-torch (random
weights, nothing downloaded) and writes PyTorch's own outputs beside them.

For each model NAME it writes, in the output folder:
  NAME.onnx            the model, opset 17, with dynamic batch (and seq/past) axes
  NAME.in.K.npz        inputs of case K (cases differ in batch and sequence sizes)
  NAME.out.K.npz       PyTorch's outputs for case K, named as the ONNX outputs
With --bench it also writes the cases bench/run measures (batch 1 and 8, the
GPT-2 decoder in decode and prefill), drawn from their own generator so that
the cases above stay as they are:
  NAME.bench.TAG.in.npz, NAME.bench.TAG.out.npz

usage: /usr/bin/python3 tools/export_models.py [--bench] OUTDIR [NAME ...]
(no NAME: every model but bench/run --suite's and --decoder's, which are exported only when named)
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision

OPSET = 17


class SelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.hd).transpose(1, 2)

    def forward(self, x, bias, past=None):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        if bias is not None:  # ViT attends to every patch: no mask
            att = att + bias
        ctx = torch.matmul(att.softmax(-1), v).transpose(1, 2)
        return ctx.reshape(x.shape[0], x.shape[1], -1), (k, v)


class Block(nn.Module):
    """A post-norm (BERT) or pre-norm (GPT-2) transformer layer."""

    def __init__(self, d, heads, pre_norm):
        super().__init__()
        self.pre_norm = pre_norm
        self.attention = SelfAttention(d, heads)
        self.output = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, 4 * d)
        self.ffn_out = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x, bias, past=None):
        if self.pre_norm:
            a, present = self.attention(self.ln1(x), bias, past)
            x = x + self.output(a)
            return x + self.ffn_out(nn.functional.gelu(self.intermediate(self.ln2(x)))), present
        a, present = self.attention(x, bias, past)
        x = self.ln1(x + self.output(a))
        return self.ln2(x + self.ffn_out(nn.functional.gelu(self.intermediate(x)))), present


class Bert(nn.Module):
    def __init__(self, vocab=1000, d=256, heads=4, layers=4, max_pos=512):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.emb_ln = nn.LayerNorm(d)
        self.layer = nn.ModuleList([Block(d, heads, False) for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.emb_ln(self.word_embeddings(input_ids) + self.position_embeddings(pos))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layer:
            x, _ = layer(x, bias)
        return x


class Gpt2(nn.Module):
    def __init__(self, vocab=1000, d=128, heads=4, layers=2, max_pos=512):
        super().__init__()
        self.layers, self.vocab = layers, vocab
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(max_pos, d)
        self.h = nn.ModuleList([Block(d, heads, True) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.cache_shape = (heads, 0, d // heads)

    def forward(self, input_ids, *past):
        seq, plen = input_ids.shape[1], past[0].shape[2]
        pos = torch.arange(plen, plen + seq).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        qpos = torch.arange(plen, plen + seq)[:, None]
        kpos = torch.arange(0, plen + seq)[None, :]
        bias = ((kpos > qpos).to(x.dtype) * -10000.0)[None, None]
        presents = []
        for i, block in enumerate(self.h):
            x, (k, v) = block(x, bias, (past[2 * i], past[2 * i + 1]))
            presents += [k, v]
        return (self.lm_head(self.ln_f(x)), *presents)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class LlamaAttention(nn.Module):
    """Grouped-query attention (kv_heads < heads) with rotary embeddings."""

    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv_heads, d // heads
        self.q_proj = nn.Linear(d, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, d, bias=False)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        rep, t = self.heads // self.kv, k.shape[2]
        kk = k[:, :, None].expand(b, self.kv, rep, t, self.hd).reshape(b, self.heads, t, self.hd)
        vv = v[:, :, None].expand(b, self.kv, rep, t, self.hd).reshape(b, self.heads, t, self.hd)
        att = torch.matmul(q, kk.transpose(-1, -2)) / math.sqrt(self.hd) + bias
        ctx = torch.matmul(att.softmax(-1), vv).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(ctx), k, v


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = LlamaAttention(d, heads, kv_heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.gate_proj = nn.Linear(d, ffn, bias=False)
        self.up_proj = nn.Linear(d, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        a, k, v = self.self_attn(self.input_layernorm(x), cos, sin, bias, past_k, past_v)
        x = x + a
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(nn.functional.silu(self.gate_proj(h)) * self.up_proj(h)), k, v


class Llama(nn.Module):
    """A Llama-style decoder: RMSNorm, rotary embeddings, SwiGLU, grouped-query
    attention, past key/values in and present ones out, and the LM head a
    parameter of the top module used in its forward, as a tied head is (so its
    MatMul has no scope; untied: random tied weights only repeat the last token)."""

    def __init__(self, vocab=1000, d=128, heads=4, kv_heads=2, layers=2, ffn=344):
        super().__init__()
        self.layers, self.vocab, self.kv, self.hd = layers, vocab, kv_heads, d // heads
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layer = nn.ModuleList([LlamaLayer(d, heads, kv_heads, ffn) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.head = nn.Parameter(torch.randn(d, vocab) / math.sqrt(d))
        self.cache_shape = (kv_heads, 0, self.hd)
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))

    def forward(self, input_ids, *past):
        seq, plen = input_ids.shape[1], past[0].shape[2]
        pos = torch.arange(plen, plen + seq).float()
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos(), emb.sin()
        qpos = torch.arange(plen, plen + seq)[:, None]
        kpos = torch.arange(0, plen + seq)[None, :]
        bias = ((kpos > qpos).to(torch.float32) * -1e9)[None, None]
        x = self.embed_tokens(input_ids)
        presents = []
        for i, layer in enumerate(self.layer):
            x, k, v = layer(x, cos, sin, bias, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (torch.matmul(self.norm(x), self.head), *presents)
class DbNet(nn.Module):
    """A DBNet-style text detector: torchvision's MobileNetV3-small features
    at strides 4, 8, 16 and 32, a small FPN neck (1x1 lateral convolutions,
    nearest Resize upsampling, Add, 3x3 smoothing, Concat at stride 4), and
    DBNet's head: a 3x3 convolution, two ConvTranspose x2 upsamplings back to
    the input size, and a sigmoid probability map."""

    TAPS = (1, 3, 8, 11)  # features index of the last block at strides 4, 8, 16, 32

    def __init__(self, inner=64, out=16):
        super().__init__()
        self.features = torchvision.models.mobilenet_v3_small(weights=None).features[:self.TAPS[-1] + 1]
        chans = (16, 24, 48, 96)
        self.lateral = nn.ModuleList([nn.Conv2d(c, inner, 1) for c in chans])
        self.smooth = nn.ModuleList([nn.Conv2d(inner, out, 3, padding=1) for _ in chans])
        self.head = nn.Sequential(
            nn.Conv2d(4 * out, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(),
            nn.ConvTranspose2d(out, out, 2, 2), nn.BatchNorm2d(out), nn.ReLU(),
            nn.ConvTranspose2d(out, 1, 2, 2), nn.Sigmoid())

    def forward(self, x):
        taps = []
        for i, layer in enumerate(self.features):
            x = layer(x)
            if i in self.TAPS:
                taps.append(x)
        lat = [conv(t) for conv, t in zip(self.lateral, taps)]
        for i in range(len(lat) - 2, -1, -1):  # top-down: upsample the coarser level and add
            lat[i] = lat[i] + nn.functional.interpolate(lat[i + 1], scale_factor=2.0, mode="nearest")
        maps = [nn.functional.interpolate(conv(t), scale_factor=float(2 ** i), mode="nearest") if i else conv(t)
                for i, (conv, t) in enumerate(zip(self.smooth, lat))]
        return self.head(torch.cat(maps, 1))


class SeBlock(nn.Module):
    """A MobileNetV3-style block: depthwise 3x3 (stride s), squeeze-excitation,
    pointwise projection, HardSwish."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                                nn.Hardswish())
        self.se = torchvision.ops.SqueezeExcitation(cin, max(8, cin // 4), scale_activation=nn.Hardsigmoid)
        self.pw = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.Hardswish())

    def forward(self, x):
        return self.pw(self.se(self.dw(x)))


class Crnn(nn.Module):
    """A CRNN-style text recogniser at 48x320: a small convolution stack
    (HardSwish, squeeze-excitation blocks; height 48 -> 3, width 320 -> 80),
    the height averaged away, a bidirectional LSTM over the 80 columns, a
    linear layer to 97 classes and log-softmax."""

    def __init__(self, classes=97):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.Hardswish())
        self.blocks = nn.Sequential(SeBlock(32, 64, (2, 1)), SeBlock(64, 128, (2, 2)), SeBlock(128, 128, (2, 1)),
                                    SeBlock(128, 128, 1))
        self.rnn = nn.LSTM(128, 64, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        y = self.blocks(self.stem(x)).mean(2).transpose(1, 2)  # [batch, width, channels]
        y, _ = self.rnn(y)
        return torch.log_softmax(self.fc(y), -1)


class Vit(nn.Module):
    """ViT-tiny (patch 16, dim 192, 12 pre-norm layers of 3 heads, MLP 768)
    at 224x224: torchvision 0.14 has no vit_tiny, so written here with the
    transformer layer above."""

    def __init__(self, d=192, heads=3, layers=12, patch=16, size=224, classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, d) * 0.02)
        self.layer = nn.ModuleList([Block(d, heads, True) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for layer in self.layer:
            x, _ = layer(x, None)
        return self.head(self.ln(x[:, 0]))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(1024, 4096), nn.Linear(4096, 4096), nn.Linear(4096, 1000)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class VadFrontend(nn.Module):
    """An If on the sample rate (a scalar input), then a projection."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor, sr: torch.Tensor) -> torch.Tensor:
        if bool(sr == 16000):
            y = x
        else:
            y = x * 2.0
        return torch.relu(self.enc(y))


class Vad(nn.Module):
    """A small voice-activity model in the style of Silero VAD: scripted
    (torch.jit.script) as Silero's is, so that the export keeps a real If,
    scoped in the frontend module; a GRU whose state is passed in and out."""

    def __init__(self):
        super().__init__()
        self.frontend = VadFrontend()
        self.rnn = nn.GRU(32, 32, batch_first=True)
        self.head = nn.Linear(32, 1)

    def forward(self, x: torch.Tensor, state: torch.Tensor, sr: torch.Tensor):
        y, state = self.rnn(self.frontend(x, sr).unsqueeze(1), state)
        return torch.sigmoid(self.head(y[:, 0])), state


def vad():
    dyn = {"input": {0: "batch"}, "state": {1: "batch"}, "output": {0: "batch"}, "stateN": {1: "batch"}}

    def inputs(b, sr, g):
        return [torch.randn(b, 64, generator=g), torch.randn(1, b, 32, generator=g),
                torch.tensor(sr, dtype=torch.int64)]
    return torch.jit.script(Vad().eval()), ["input", "state", "sr"], ["output", "stateN"], dyn, inputs


class Kws(nn.Module):
    """A small keyword-spotting model in the style of CRNN keyword spotters:
    MFCC frames [batch, frames, 40] through a convolution with batch norm, a
    depthwise-separable convolution, an LSTM whose state is passed in and out,
    and a softmax over 12 keywords of the mean over time."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(40, 64, 3, padding=1)
        self.bn = nn.BatchNorm1d(64)
        self.dw = nn.Conv1d(64, 64, 3, padding=1, groups=64)
        self.pw = nn.Conv1d(64, 64, 1)
        self.lstm = nn.LSTM(64, 48, batch_first=True)
        self.head = nn.Linear(48, 12)
        with torch.no_grad():  # statistics a trained model would have
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x, h, c):
        y = torch.relu(self.bn(self.conv(x.transpose(1, 2))))
        y = torch.relu(self.pw(self.dw(y)))
        y, (h, c) = self.lstm(y.transpose(1, 2), (h, c))
        return torch.softmax(self.head(y.mean(1)), -1), h, c


def kws():
    dyn = {"mfcc": {0: "batch", 1: "frames"}, "h": {1: "batch"}, "c": {1: "batch"},
           "probs": {0: "batch"}, "hN": {1: "batch"}, "cN": {1: "batch"}}

    def inputs(b, frames, g):
        return [torch.randn(b, frames, 40, generator=g), torch.randn(1, b, 48, generator=g),
                torch.randn(1, b, 48, generator=g)]
    return Kws(), ["mfcc", "h", "c"], ["probs", "hN", "cN"], dyn, inputs


def image_model(ctor, h=224, w=224, out="logits"):
    """A model of one image input [batch, 3, h, w]: a torchvision constructor
    (random weights: weights=None) or a class above."""
    def make():
        m = ctor(weights=None) if ctor.__module__.startswith("torchvision") else ctor()
        return m, ["input"], [out], {"input": {0: "batch"}, out: {0: "batch"}}, \
            lambda b, s, g: [torch.randn(b, 3, h, w, generator=g)]
    return make


def bert():
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
           "last_hidden_state": {0: "batch", 1: "seq"}}

    def inputs(b, s, g):
        ids = torch.randint(0, 1000, (b, s), generator=g)
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[:, s - s // 4:] = 0 if b > 1 else 1  # padding in batched cases
        return [ids, mask]
    return Bert(), ["input_ids", "attention_mask"], ["last_hidden_state"], dyn, inputs


def kv_decoder(m):
    """A decoder's inputs and outputs: token ids and past key/values per
    layer in, logits and present key/values out, cache [batch, heads, past,
    head_dim] (m.cache_shape with past 0), ids below m.vocab."""
    names = ["input_ids"] + [f"past_{kv}_{i}" for i in range(m.layers) for kv in ("key", "value")]
    outs = ["logits"] + [f"present_{kv}_{i}" for i in range(m.layers) for kv in ("key", "value")]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for n in names[1:]:
        dyn[n] = {0: "batch", 2: "past"}
    for n in outs[1:]:
        dyn[n] = {0: "batch", 2: "past_seq"}
    cache_heads, _, head_dim = m.cache_shape

    def inputs(b, s, g, past=None):
        ids = torch.randint(0, min(m.vocab, 1000), (b, s), generator=g)
        if past is None:  # the cases cover prefill-like and decode-like shapes
            past = 127 if s == 1 else s * 2
        return [ids] + [torch.randn(b, cache_heads, past, head_dim, generator=g) for _ in names[1:]]
    return m, names, outs, dyn, inputs


def gpt2(**size):
    return kv_decoder(Gpt2(**size))


def llama(**size):
    return kv_decoder(Llama(**size))


# Greedy generation in PyTorch for the decoders (what `ait generate` must
# give): the prompt, then GREEDY_NEW tokens, each run fed the present
# key/values of the one before. Written to NAME.greedy.txt as one line:
# "PROMPT_IDS TOKENS" (comma-separated lists).
GREEDY_PROMPT, GREEDY_NEW = [5, 17, 42, 7], 12


def save_greedy(model, in_names, path):
    ids = torch.tensor([GREEDY_PROMPT])
    past = [torch.zeros(1, *model.cache_shape) for _ in in_names[1:]]
    toks = []
    with torch.no_grad():
        for _ in range(GREEDY_NEW):
            logits, *past = model(ids, *past)
            top = logits[0, -1].topk(2).values
            # a near tie would make the test depend on rounding, not on ait
            assert float(top[0] - top[1]) > 1e-3 * float(top[0].abs()), "near tie in greedy"
            toks.append(int(logits[0, -1].argmax()))
            ids = torch.tensor([[toks[-1]]])
    with open(path, "w") as f:
        f.write(",".join(map(str, GREEDY_PROMPT)) + " " + ",".join(map(str, toks)) + "\n")


def mlp():
    return Mlp(), ["input"], ["logits"], {"input": {0: "batch"}, "logits": {0: "batch"}}, \
        lambda b, s, g: [torch.randn(b, 1024, generator=g)]


MODELS = {
    "resnet18": (image_model(torchvision.models.resnet18), [(1, 0), (2, 0)]),
    "mobilenetv2": (image_model(torchvision.models.mobilenet_v2), [(1, 0), (2, 0)]),
    "bert": (bert, [(1, 128), (2, 16)]),
    "gpt2": (gpt2, [(1, 1), (2, 8)]),
    "llama": (llama, [(1, 1), (2, 8)]),
    "mlp": (mlp, [(1, 0), (8, 0)]),
    "vad": (vad, [(1, 16000), (2, 8000)]),  # (batch, sample rate): both If branches
    "kws": (kws, [(1, 49), (2, 20)]),  # (batch, frames)
}
# bench/run --suite's models (issue 13): torchvision's with random weights and three of our own.
TV = torchvision.models
SUITE = {
    "mobilenet_v3_small": image_model(TV.mobilenet_v3_small),
    "mobilenet_v3_large": image_model(TV.mobilenet_v3_large),
    "shufflenet_v2_x1_0": image_model(TV.shufflenet_v2_x1_0),
    "squeezenet1_1": image_model(TV.squeezenet1_1),
    "densenet121": image_model(TV.densenet121),
    "efficientnet_b0": image_model(TV.efficientnet_b0),
    "resnet50": image_model(TV.resnet50),
    "regnet_y_400mf": image_model(TV.regnet_y_400mf),
    "dbnet": image_model(DbNet, 640, 640, "prob"),
    "crnn": image_model(Crnn, 48, 320, "logprobs"),
    "vit_tiny": image_model(Vit),
}
MODELS.update({n: (make, [(1, 0)]) for n, make in SUITE.items()})
# bench/run --decoder's decoders (issue 16), exported only when named: GPT-2 small's shape
# (positions to 2048: decode at past 1024 and beyond), and a Llama-style one of about its size.
DECODERS = {
    "gpt2_small": lambda: gpt2(vocab=50257, d=768, heads=12, layers=12, max_pos=2048),
    "llama_small": lambda: llama(vocab=32000, d=768, heads=12, kv_heads=4, layers=12, ffn=2048),
}
MODELS.update({n: (make, [(1, 4)]) for n, make in DECODERS.items()})


# bench/run's cases: NAME -> [(TAG, batch, seq, extra inputs arguments)].
BENCH_CASES = {
    "resnet18": [("b1", 1, 0, {}), ("b8", 8, 0, {})],
    "mobilenetv2": [("b1", 1, 0, {}), ("b8", 8, 0, {})],
    "mlp": [("b1", 1, 0, {}), ("b8", 8, 0, {})],
    "bert": [("b1", 1, 128, {}), ("b8", 8, 128, {})],
    "gpt2": [("decode-b1", 1, 1, {"past": 127}), ("decode-b8", 8, 1, {"past": 127}),
             ("prefill-b1", 1, 128, {"past": 0}), ("prefill-b8", 8, 128, {"past": 0})],
}
BENCH_CASES.update({n: [("b1", 1, 0, {}), ("b8", 8, 0, {})] for n in SUITE})


def save_case(model, in_names, out_names, inputs, in_path, out_path):
    with torch.no_grad():
        outs = model(*inputs)
    if isinstance(outs, torch.Tensor):
        outs = [outs]
    np.savez(in_path, **{n: t.numpy() for n, t in zip(in_names, inputs)})
    np.savez(out_path, **{n: t.numpy() for n, t in zip(out_names, outs)})


def export_bench(name, outdir, model, in_names, out_names, make_inputs):
    g = torch.Generator().manual_seed(2)
    for tag, b, s, extra in BENCH_CASES.get(name, []):  # (--decoder makes its own inputs)
        base = os.path.join(outdir, f"{name}.bench.{tag}")
        save_case(model, in_names, out_names, make_inputs(b, s, g, **extra),
                  base + ".in.npz", base + ".out.npz")


def export(name, outdir, bench=False):
    make, cases = MODELS[name]
    torch.manual_seed(0)
    model, in_names, out_names, dyn, make_inputs = make()
    model.eval()
    g = torch.Generator().manual_seed(1)
    sample = make_inputs(*cases[-1], g)
    path = os.path.join(outdir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(sample), path + ".tmp", input_names=in_names,
                          output_names=out_names, dynamic_axes=dyn, opset_version=OPSET,
                          do_constant_folding=True)
    os.replace(path + ".tmp", path)
    for k, case in enumerate(cases):
        save_case(model, in_names, out_names, make_inputs(*case, g),
                  os.path.join(outdir, f"{name}.in.{k}.npz"), os.path.join(outdir, f"{name}.out.{k}.npz"))
    if hasattr(model, "cache_shape") and name not in DECODERS:  # bench/run --decoder times, not tokens
        save_greedy(model, in_names, os.path.join(outdir, f"{name}.greedy.txt"))
    if bench:
        export_bench(name, outdir, model, in_names, out_names, make_inputs)
    print(f"exported {path} ({len(cases)} cases)")


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return
    bench = bool(args) and args[0] == "--bench"
    args = args[1:] if bench else args
    if not args or args[0].startswith("-"):
        sys.exit((f"export_models.py: unknown option '{args[0]}'\n" if args else "") + __doc__.strip())
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args[1:] or [n for n in MODELS if n not in SUITE and n not in DECODERS]:  # only when named
        if name not in MODELS:
            sys.exit(f"unknown model '{name}'; known: {', '.join(MODELS)}")
        export(name, outdir, bench)


if __name__ == "__main__":
    main()
