"""chart.svg from a bench run's results, written by hand (no plotting
library): ait/ORT latency ratio per model row, and GEMM GFLOP/s against M
(N = K fixed, 1 thread) with the measured peak."""
import math
from xml.sax.saxutils import escape

COLORS = {"ait": "#d62728", "openblas": "#1f77b4", "onednn": "#2ca02c"}


def text(x, y, s, size=11, anchor="start", color="#222", weight="normal"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" '
            f'font-weight="{weight}">{escape(str(s))}</text>')


def line(x1, y1, x2, y2, color="#999", width=1, dash=None):
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" stroke-width="{width}"{d}/>'


def ratio_panel(res, x0, y0, w):
    rows = [r for r in res["models"]]
    out = [text(x0, y0, "ait latency / ONNX Runtime latency (log scale; < 1: ait faster)", 13, weight="bold")]
    if not rows:
        return out, y0 + 20
    vals = [r["ait_vs"]["ort"]["ratio"] for r in rows if r["ait_vs"]["ort"]["ratio"]]
    lo = min([0.5] + vals) / 1.2
    hi = max([2.0] + vals) * 1.2
    label_w, bar_h = 170, 16
    px0, px1 = x0 + label_w, x0 + w - 50

    def px(v):
        return px0 + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (px1 - px0)
    top = y0 + 14
    bottom = top + len(rows) * (bar_h + 4)
    for p in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** p
            if lo <= v <= hi:
                out.append(line(px(v), top, px(v), bottom, "#ddd"))
                out.append(text(px(v), bottom + 12, f"{v:g}", 10, "middle", "#666"))
    for i, r in enumerate(rows):
        y = top + i * (bar_h + 4)
        out.append(text(x0 + label_w - 6, y + bar_h - 4, f"{r['name']} {r['case']} t{r['threads']}", 10, "end"))
        v = r["ait_vs"]["ort"]["ratio"]
        if v is None:
            out.append(text(px(1) + 4, y + bar_h - 4, "no ratio: " + (r["ait_vs"]["ort"]["why"] or "")[:60],
                            10, color="#a00"))
            continue
        a, b = sorted((px(1), px(v)))
        color = "#2ca02c" if v < 1 else "#d62728"
        out.append(f'<rect x="{a:.1f}" y="{y:.1f}" width="{max(b - a, 1):.1f}" height="{bar_h}" fill="{color}" '
                   'fill-opacity="0.75"/>')
        out.append(text(b + 3 if v >= 1 else a - 3, y + bar_h - 4, f"{v:.2f}", 10, "start" if v >= 1 else "end"))
    out.append(line(px(1), top - 2, px(1), bottom, "#000", 1.5))
    return out, bottom + 20


def gemm_panel(res, x0, y0, w, h):
    gem = [g for g in res["gemm"] if g["threads"] == 1 and "gflops" in g]
    nbig = max((g["n"] for g in gem), default=0)
    gem = [g for g in gem if g["n"] == nbig and g["k"] == nbig]
    peak = max((p["gflops"] for p in res["peak"] if p["threads"] == 1), default=0)
    out = [text(x0, y0, f"GEMM, 1 thread: GFLOP/s against M (N = K = {nbig}); solid B KxN, dashed B NxK",
                13, weight="bold")]
    if not gem or not peak:
        return out
    ms = sorted({g["m"] for g in gem})
    top, bottom, left, right = y0 + 20, y0 + h - 30, x0 + 45, x0 + w - 10
    ymax = peak * 1.1
    lx = [math.log2(m) for m in ms]

    def px(m):
        return left + (math.log2(m) - lx[0]) / max(lx[-1] - lx[0], 1) * (right - left)

    def py(v):
        return bottom - v / ymax * (bottom - top)
    out.append(line(left, bottom, right, bottom, "#444"))
    out.append(line(left, top, left, bottom, "#444"))
    step = 10 ** math.floor(math.log10(ymax / 2)) * (2 if ymax / 10 ** math.floor(math.log10(ymax)) < 4 else 5)
    v = 0
    while v <= ymax:
        out += [line(left, py(v), right, py(v), "#eee"), text(left - 4, py(v) + 4, f"{v:g}", 10, "end", "#666")]
        v += step
    for m in ms:
        out.append(text(px(m), bottom + 13, str(m), 9, "middle", "#666"))
    out.append(text((left + right) / 2, bottom + 26, "M", 11, "middle"))
    out.append(line(left, py(peak), right, py(peak), "#000", 1.5, "6,3"))
    isa = max((p for p in res["peak"] if p["threads"] == 1), key=lambda p: p["gflops"])["isa"]
    out.append(text(right, py(peak) - 4, f"peak {peak:.0f} GFLOP/s ({isa} FMA loop, 1 core)", 10, "end"))
    for eng, color in COLORS.items():
        for lay, dash in (("kn", None), ("nk", "5,3")):
            pts = sorted((g["m"], g["gflops"]) for g in gem if g["engine"] == eng and g["layout"] == lay)
            if len(pts) > 1:
                d = " ".join(f"{px(m):.1f},{py(v):.1f}" for m, v in pts)
                extra = f' stroke-dasharray="{dash}"' if dash else ""
                out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{extra}/>')
    for i, (eng, color) in enumerate(COLORS.items()):
        ly = py(peak) + 16 + i * 15
        out.append(line(left + 10, ly, left + 30, ly, color, 2))
        out.append(text(left + 35, ly + 4, {"ait": "ait (reference backend)", "openblas": "OpenBLAS",
                                                     "onednn": "oneDNN"}[eng], 10))
    return out


def chart(res):
    w = 1000
    parts, y = ratio_panel(res, 20, 24, w - 40)
    parts += gemm_panel(res, 20, y + 10, w - 40, 320)
    h = y + 10 + 320 + 10
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n' +
            "\n".join(parts) + "\n</svg>\n")
