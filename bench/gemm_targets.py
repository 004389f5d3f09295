#!/usr/bin/python3
"""Issue 15's GEMM targets from `ait gemm compare TUNED.csv --retime R --refs -v`
outputs (one or more files, e.g. one per tuned CSV): per size class of M, the
geometric mean of default / tuned (target: >= 1.15x overall) and the shapes
where the tuned native config is at least as fast as the faster of OpenBLAS
and oneDNN (target: 90%), as Markdown tables; then where native loses, by
class and by N (the lanes a 32-wide micro-kernel tile leaves empty).

A file may instead be `bench-gemm-native ROUNDS SHAPES..` output (CPU time:
the figure to read on a shared machine): each shape's native (the default
config; no tuned one, so tuned / default reads 1.00x) against the faster of
OpenBLAS and oneDNN.

With --issue13, each file is `bench-gemm-native` output instead, and the
table is issue 13's targets per shape: native's default kernel at least 90%
of the peak measured beside it from M = 17 on (M = N = K from 512 in the
issue), and at M of 1 to 4 at least 85% of the read bandwidth measured beside
it, where B (K x N floats) is larger than the last-level cache (--l3-mib,
32 by default: a B that fits is read from the cache, past the bandwidth; its
row says so and carries no target), with OpenBLAS and oneDNN beside.

usage: bench/gemm_targets.py COMPARE.txt [COMPARE.txt ...]
       bench/gemm_targets.py --issue13 [--l3-mib N] NATIVE.txt [NATIVE.txt ...]
"""
import math
import re
import sys

CLASSES = [("skinny (M<=16)", 16), ("small (M<=128)", 128), ("medium (M<=1024)", 1024), ("large (M>1024)", None)]
NATIVE_SHAPE = re.compile(r"^(?:kn|nk):(\d+):(\d+):(\d+) peak")
NATIVE_ENGINE = re.compile(r"^\s+(openblas|onednn|native:[\w-]+)\s+([\d.]+) GFLOP/s")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x\s+(\w+)\s+([\d.]+)\s+([\d.]+)x\s*$")


def size_class(m):
    for i, (_, hi) in enumerate(CLASSES):
        if hi is None or m <= hi:
            return i


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


NATIVE_ROW = re.compile(r"^\s+(openblas|onednn|native:\S+)\s+([\d.]+) GFLOP/s\s+([\d.]+)% of peak.*?([\d.]+) GB/s of B\s+([\d.]+)% of read")
NATIVE_HEAD = re.compile(r"^(kn|nk):(\d+):(\d+):(\d+) peak \(CPU time\) avx512 ([\d.]+) avx2 ([\d.]+) GFLOP/s, read ([\d.]+) GB/s")


def issue13(paths, l3_mib):
    """Issue 13's targets per shape from bench-gemm-native outputs (the first
    native engine of a shape is its default kernel)."""
    print("| shape | native | % of peak or of read | OpenBLAS | oneDNN | target | met |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path in paths:
        head, eng = None, {}
        lines = open(path).read().splitlines() + ["end"]
        for line in lines:
            h, r = NATIVE_HEAD.match(line), NATIVE_ROW.match(line)
            if r and head:
                name = "native" if r.group(1).startswith("native:") else r.group(1)
                eng.setdefault(name, tuple(float(r.group(i)) for i in (2, 3, 4, 5)))  # GFLOP/s, %, GB/s, %
                continue
            if head and "native" in eng:
                lay, m, n, k, peak, _, read = head
                nat, ob, dn = eng["native"], eng.get("openblas"), eng.get("onednn")
                b_mib = 4.0 * n * k / (1 << 20)
                if m <= 4:
                    cell = "%.1f GB/s of B, %.0f%% of read (%.1f GB/s)" % (nat[2], nat[3], read)
                    if b_mib <= l3_mib:
                        target, met = "none: B %.1f MiB in L3" % b_mib, "-"
                    else:
                        target, met = ">= 85% of read", "**met**" if nat[3] >= 85 else "**not met**"
                else:
                    cell = "%.1f%% of peak (%.1f)" % (nat[1], peak)
                    target, met = ">= 90% of peak", "**met**" if nat[1] >= 90 else "**not met**"
                lib = lambda e: "%.1f" % e[0] if e else "-"
                print("| %s:%d:%d:%d | %.1f GFLOP/s | %s | %s | %s | %s | %s |" %
                      (lay, m, n, k, nat[0], cell, lib(ob), lib(dn), target, met))
            if h:
                head = (h.group(1),) + tuple(int(h.group(i)) for i in (2, 3, 4)) + tuple(float(h.group(i)) for i in (5, 6, 7))
                eng = {}
            elif not r:
                head = None if line == "end" else head


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--issue13":
        args, l3 = sys.argv[2:], 32.0
        if len(args) >= 2 and args[0] == "--l3-mib":
            l3, args = float(args[1]), args[2:]
        if not args:
            sys.exit(__doc__)
        issue13(args, l3)
        return
    rows = []
    for path in sys.argv[1:]:
        shape, eng = None, {}
        for line in open(path) if any(NATIVE_SHAPE.match(x) for x in open(path)) else ():
            m, e = NATIVE_SHAPE.match(line), NATIVE_ENGINE.match(line)
            if m:
                shape, eng = tuple(int(m.group(i)) for i in (1, 2, 3)), {}
            elif e and shape:
                eng[e.group(1)] = 2e-3 * shape[0] * shape[1] * shape[2] / float(e.group(2))  # us
                if len(eng) == 3:  # openblas, onednn, then native's default
                    nat = [us for name, us in eng.items() if name.startswith("native:")][0]
                    lib = min(("openblas", "onednn"), key=lambda x: eng[x])
                    rows.append(shape + (nat, nat, lib, eng[lib]))
        for line in open(path):
            m = ROW.match(line)
            if m:
                M, N, K = (int(m.group(i)) for i in (1, 2, 3))
                dflt, tuned, lib, lib_us = float(m.group(5)), float(m.group(6)), m.group(8), float(m.group(9))
                rows.append((M, N, K, dflt, tuned, lib, lib_us))
    if not rows:
        sys.exit("no per-shape rows (run compare with --retime R --refs -v)")
    print("| size class | shapes | tuned / default: min | median | max | geomean | native >= faster library | geomean library / native |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for i, (name, _) in enumerate(CLASSES + [("all", None)]):
        rs = rows if name == "all" else [r for r in rows if size_class(r[0]) == i]
        if not rs:
            continue
        sp = sorted(r[3] / r[4] for r in rs)
        win = sum(r[4] <= r[6] for r in rs)
        med = sp[len(sp) // 2] if len(sp) % 2 else 0.5 * (sp[len(sp) // 2 - 1] + sp[len(sp) // 2])
        print("| %s | %d | %.2fx | %.2fx | %.2fx | **%.2fx** | %d (%.0f%%) | %.2fx |" %
              (name, len(rs), sp[0], med, sp[-1], geo(sp), win, 100.0 * win / len(rs),
               geo([r[6] / r[4] for r in rs])))
    print("\nWhere native loses to the faster library (library / native below 1), by N:\n")
    print("| N | shapes | native slower on | geomean library / native | faster library |")
    print("| --- | --- | --- | --- | --- |")
    for lo, hi in ((1, 64), (65, 192), (193, 512), (513, 1 << 30)):
        rs = [r for r in rows if lo <= r[1] <= hi]
        if not rs:
            continue
        lose = [r for r in rs if r[4] > r[6]]
        libs = sorted({r[5] for r in lose})
        print("| %d to %s | %d | %d | %.2fx | %s |" % (lo, hi if hi < 1 << 30 else "more", len(rs), len(lose),
                                                  geo([r[6] / r[4] for r in rs]), ", ".join(libs) or "-"))


if __name__ == "__main__":
    main()
