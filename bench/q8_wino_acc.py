#!/usr/bin/env python3
"""Whether a static int8 Winograd for a CNN's 3x3 stride-1 Convs keeps the model's error: a
simulation on an exported ONNX model (Conv, Relu, Add, MaxPool, GlobalAveragePool, Flatten, Gemm,
Identity: resnet18's graph), in float64, against the bench case's float32 outputs.

Every Conv's input is quantised to uint8 per tensor (range [min(x, 0), max(x, 0)], calibrated on
--calib's first input, clamped on the case's), its weights to int8 per output channel
(symmetric); the products are exact. A Winograd mode runs the 3x3 stride-1 Convs as
F(2x2, 3x3) ("pos", "bound", "pc", "exact") or F(4x4, 3x3) (the same names ending in "4"):
the transformed input V = B^T d B of the integers d = q - z is requantised to int8, at

  pos    one scale per position of the tile (16 or 36): max |V| there, calibrated
  bound  one scale per position from the transform's bound (|B^T| row sums x max |q - z|):
         nothing to calibrate
  pc     one per position and channel, calibrated
  exact  not requantised (V exact, weights transformed from the int8 ones: equal to "none")

and the transformed weights G g G^T (from the float weights) to int8 per output channel and
position. A mode ending in "128" (pos128, bound128) uses Winograd only on Convs of at least 128
input channels. Modes "float" (no quantisation) and "none" (int8, every Conv direct) are the
yardsticks. Prints per mode the outputs' max abs error, SQNR (dB) and top-1 agreement.

usage: /usr/bin/python3 bench/q8_wino_acc.py MODEL.onnx CASE.in.npz CASE.out.npz MODES [--calib CAL.in.npz]
(bench/RESULTS.md, branch r8: resnet18 F(2x2) per position 37.4 dB, direct 37.2, F(4x4) 31.6)
"""
import argparse

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

D = torch.float64
TILES = {  # output tile: (B^T, G, A^T)
    2: (torch.tensor([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=D),
        torch.tensor([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]], dtype=D),
        torch.tensor([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=D)),
    4: (torch.tensor([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
                      [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], dtype=D),
        torch.tensor([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
                      [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], dtype=D),
        torch.tensor([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
                     dtype=D)),
}


class Quant:
    """Ranges by (Conv, what): recorded on the calibration run, then read (clamped)."""

    def __init__(self):
        self.cal, self.store, self.conv = {}, False, None

    def rng(self, what, lo, hi):
        key = (self.conv, what)
        if self.store:
            self.cal[key] = (lo, hi)
        return self.cal.get(key, (lo, hi))

    def u8(self, x):
        """(d = q - z, scale, z) of x quantised to uint8."""
        lo, hi = self.rng("x", min(x.min().item(), 0.0), max(x.max().item(), 0.0))
        s = (hi - lo) / 255 or 1.0
        z = round(-lo / s)
        return torch.clamp(torch.round(x / s) + z, 0, 255) - z, s, z

    def s8(self, x, dims, what=None):
        """(integers, scales) of x quantised to int8 symmetric, one scale over dims."""
        a = x.abs().amax(dim=dims, keepdim=True).clamp_min(1e-30) / 127
        if what is not None:
            a = self.rng(what, a, a)[1]
        return torch.clamp(torch.round(x / a), -127, 127), a


def conv(qz, x, w, b, st, pad, mode):
    d, s, z = qz.u8(x)
    wq, ws = qz.s8(w, (1, 2, 3))
    wide = mode.endswith("128")
    kind = mode[:-3] if wide else mode
    if kind == "none" or w.shape[2] != 3 or st != 1 or pad != 1 or (wide and w.shape[1] < 128):
        return F.conv2d(d, wq, None, st, pad) * s * ws.view(1, -1, 1, 1) + b.view(1, -1, 1, 1)
    o = 4 if kind.endswith("4") else 2
    kind = kind[:-1] if o == 4 else kind
    Bt, G, At = TILES[o]
    a = o + 2
    n, _, h, ww = d.shape
    th, tw = (h + o - 1) // o, (ww + o - 1) // o
    t = F.pad(d, (1, o * tw + 1 - ww, 1, o * th + 1 - h)).unfold(2, a, o).unfold(3, a, o)  # n c th tw a a
    V = Bt @ t @ Bt.T
    if kind == "exact":
        Vq, Vs = V, torch.ones(1, 1, 1, 1, a, a, dtype=D)
        Uq, Us = G @ (wq * ws) @ G.T, torch.ones(1, w.shape[0], 1, 1, a, a, dtype=D)
    else:
        if kind == "pc":
            Vq, Vs = qz.s8(V, (0, 2, 3), "v")  # 1 c 1 1 a a
        elif kind == "bound":
            rs = Bt.abs().sum(1)
            Vs = (torch.outer(rs, rs) * max(z, 255 - z) / 127).view(1, 1, 1, 1, a, a)
            Vq = torch.clamp(torch.round(V / Vs), -127, 127)
        else:
            Vq, Vs = qz.s8(V, (0, 1, 2, 3), "v")  # 1 1 1 1 a a
        Uq, Us = qz.s8(G @ w @ G.T, (1,))  # o 1 a a
        Us = Us.view(1, -1, 1, 1, a, a)
    if kind == "pc":
        Mm = torch.einsum("nctwij,ocij->notwij", Vq * Vs, Uq)
    else:
        Mm = torch.einsum("nctwij,ocij->notwij", Vq, Uq) * Vs.view(1, 1, 1, 1, a, a)
    Y = At @ (Mm * Us * s) @ At.T  # n o th tw o o
    Y = Y.permute(0, 1, 2, 4, 3, 5).reshape(n, -1, o * th, o * tw)[:, :, :h, :ww]
    return Y + b.view(1, -1, 1, 1)


def run(m, weights, x, mode, qz):
    v = {m.graph.input[0].name: x}
    for nd in m.graph.node:
        a = [v[i] if i in v else weights.get(i) for i in nd.input]
        at = {t.name: onnx.helper.get_attribute_value(t) for t in nd.attribute}
        op = nd.op_type
        if op == "Conv":
            qz.conv = nd.output[0]
            if mode == "float":
                y = F.conv2d(a[0], a[1], a[2], at["strides"][0], at["pads"][0])
            else:
                y = conv(qz, a[0], a[1], a[2], at["strides"][0], at["pads"][0], mode)
        elif op == "Relu":
            y = F.relu(a[0])
        elif op == "Add":
            y = a[0] + a[1]
        elif op == "MaxPool":
            y = F.max_pool2d(a[0], at["kernel_shape"], at["strides"], at["pads"][0])
        elif op == "GlobalAveragePool":
            y = a[0].mean((2, 3), keepdim=True)
        elif op == "Flatten":
            y = a[0].flatten(1)
        elif op == "Gemm":
            y = a[0] @ a[1].T + a[2]
        elif op == "Identity":
            y = a[0]
        else:
            raise SystemExit(f"q8_wino_acc: no {op} here")
        v[nd.output[0]] = y
    return v[m.graph.output[0].name]


def first(path):
    z = np.load(path)
    return torch.tensor(z[z.files[0]], dtype=D)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("case_in")
    ap.add_argument("case_out")
    ap.add_argument("modes", help="comma list: float, none, pos, bound, pc, exact (+4: F(4x4); +128)")
    ap.add_argument("--calib", help="calibrate on this .npz's first input (default: the case's own)")
    a = ap.parse_args()
    m = onnx.load(a.model)
    weights = {i.name: torch.tensor(numpy_helper.to_array(i), dtype=D) for i in m.graph.initializer}
    x, want = first(a.case_in), first(a.case_out)
    for mode in a.modes.split(","):
        qz = Quant()
        qz.store = True
        run(m, weights, first(a.calib) if a.calib else x, mode, qz)
        qz.store = False
        y = run(m, weights, x, mode, qz)
        e = y - want
        sq = 10 * torch.log10((want ** 2).sum() / (e ** 2).sum()).item()
        top1 = (y.argmax(1) == want.argmax(1)).double().mean().item()
        print(f"{mode:9s} max abs {e.abs().max().item():.4g}  SQNR {sq:.1f} dB  top-1 {top1:.3f}")


if __name__ == "__main__":
    main()
