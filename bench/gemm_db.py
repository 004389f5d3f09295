#!/usr/bin/python3
"""Whole-model latency with and without a tuned GEMM database (docs/gemm.md).

For each model: `ait gemm capture` its GEMM shapes (batch 1), `ait gemm tune`
them into a database (--iters N timed runs per candidate, default 20), then
`ait tune --strategy only:native` twice (every top-level module on the native
backend, so the two plans differ only in the GEMM configs): without and with
`--gemm-db`. The two artifacts are then run
interleaved (A B A B ..., `ait run NAME.ait --repeat R`, each run's median),
and the median of those medians is compared: ratio = without / with (above 1:
the database helps).

usage: bench/gemm_db.py AIT MODELS_DIR WORKDIR [--rounds N] [--repeat R] [--iters N] [MODEL ...]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

DIMS = {"bert": ["--dim", "seq=32"], "gpt2": ["--dim", "seq=32"]}


def sh(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(args), r.stdout, r.stderr[-3000:]))
    return r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ait")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20, help="timed runs per candidate in the tune")
    ap.add_argument("names", nargs="*", default=["mlp", "bert", "resnet18"])
    a = ap.parse_intermixed_args()
    if a.iters < 1 or a.rounds < 1 or a.repeat < 1:
        ap.error("--iters, --rounds and --repeat take a count of at least 1")
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, AIT_CACHE_DIR=os.path.join(a.work, "cache"))
    rows = []
    for name in a.names:
        model = os.path.join(a.models, name + ".onnx")
        dims = DIMS.get(name, [])
        w = lambda s: os.path.join(a.work, name + s)
        sh([a.ait, "gemm", "capture", model, *dims, "-o", w(".untuned.csv")], env=env)
        if os.path.exists(w(".tuned.csv")):
            os.remove(w(".tuned.csv"))
        sh([a.ait, "gemm", "tune", w(".untuned.csv"), "-o", w(".tuned.csv"), "--iters", str(a.iters),
            "--warmup", "1", "--no-refs"], env=env)
        common = [a.ait, "tune", model, *dims, "--strategy", "only:native", "--no-whole",
                  "--no-plan-check", "--no-cache", "--warmup", "2", "--window", "5", "--cap", "10"]
        sh(common + ["-o", w(".plain.ait")], env=env)
        sh(common + ["--gemm-db", w(".tuned.csv"), "-o", w(".db.ait")], env=env)
        med = {"plain": [], "db": []}
        for _ in range(a.rounds):
            for side in ("plain", "db"):
                out = sh([a.ait, "run", w("." + side + ".ait"), *dims, "--repeat", str(a.repeat)], env=env)
                m = re.search(r"median of \d+ runs ([0-9.]+) ms", out)
                med[side].append(float(m.group(1)))
        p, d = statistics.median(med["plain"]), statistics.median(med["db"])
        tuned = sum(1 for l in open(w(".tuned.csv")) if ",failed," not in l) - 1
        shapes = sum(1 for _ in open(w(".untuned.csv"))) - 1
        rows.append((name, shapes, tuned, p, d, p / d))
        print("%-10s shapes %3d tuned %3d  without %8.3f ms  with %8.3f ms  ratio %.3f" % rows[-1], flush=True)
    print("\n| model | GEMM shapes | rows in db | without db ms | with db ms | without / with |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print("| %s | %d | %d | %.3f | %.3f | %.2fx |" % r)


if __name__ == "__main__":
    main()
