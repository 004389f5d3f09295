#!/usr/bin/python3
"""Decoder rows by CPU time: ait artifacts (each through its own build's
bench-ait-runner, so main's build and a branch's can run the same artifact)
against ONNX Runtime on the same inputs, each run timed by its process's CPU
time (user + system, every thread: the runners' `cpu N` command), so that a
shared machine's preemptions are not in the figures. Inputs as bench/decoder.py
draws its rows (same seeds); every engine's outputs checked against ORT's
first (max |diff| / max |ORT| <= bench/decoder.py's TOL). Then a warm-up run
each and ROUNDS rounds, each engine RUNS runs a round, the engines' order
rotating from round to round; prints per engine the median CPU ms per run
(p10-p90) and tokens/s, the ratios of the medians, and the load average.

usage: /usr/bin/python3 bench/prefill_cpu.py --models-dir DIR --model NAME
         [--phase prefill|decode] [--lengths 128,512] [--batch 1] [--rounds 7] [--runs 1]
         --ait LABEL=BIN_DIR:ARTIFACT [--ait ...] [--no-ort] [--json OUT.json]
  BIN_DIR: a build's bench folder holding bench-ait-runner (e.g. build/bench);
  ait runs with --cache (past/present appended in place), ORT with its outputs bound."""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder  # noqa: E402
import models  # noqa: E402
import sysinfo  # noqa: E402
from runner import Runner  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))


def pct(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def row(a, engines, length):
    shape = decoder.shapes(a.models_dir, a.model)
    new, past = (length, 0) if a.phase == "prefill" else (1, length)
    work = tempfile.mkdtemp(prefix="prefill_cpu.")
    indir = os.path.join(work, "in")
    decoder.write_inputs(indir, shape, a.batch, new, past, seed=a.batch * 100003 + new * 1009 + past)
    onnx = os.path.join(a.models_dir, a.model + ".onnx")
    runners, outs = {}, {}
    cfg = {"bench_dir": BENCH}
    try:
        for label, argv in engines:
            if label == "ort":
                argv = models.engine_argv("ort", cfg, a.model, onnx, indir, 1) + ["--bind"]
            else:
                argv = argv[:2] + [indir, "1", "--cache"]
            runners[label] = Runner(label, argv, models.engine_env(label, cfg, 1), 1800)
            odir = os.path.join(work, "out." + label)
            os.makedirs(odir)
            runners[label].outputs(odir)
            outs[label] = models.load_dir(odir)
        ref = outs.get("ort") or outs[engines[0][0]]
        diffs = {e: decoder.compare(o, ref) for e, o in outs.items()}
        for e, (ab, rel) in diffs.items():
            if rel > decoder.TOL:
                sys.exit(f"{e}: outputs differ from the reference: max |diff| {ab:.3g}, relative {rel:.3g}")
        outs.clear()
        times = {e: [] for e in runners}
        for r in runners.values():  # warm-up
            r.times(1, 5.0, "cpu")
        load = [sysinfo.loadavg()]
        labels = list(runners)
        for k in range(a.rounds):
            for j in range(len(labels)):
                e = labels[(k + j) % len(labels)]
                times[e] += runners[e].times(a.runs, 5.0, "cpu")
        load.append(sysinfo.loadavg())
    finally:
        for r in runners.values():
            r.close()
        shutil.rmtree(work, ignore_errors=True)
    tokens = a.batch * new
    res = {"model": a.model, "phase": a.phase, "length": length, "batch": a.batch, "load": load,
           "engines": {}}
    for e, t in times.items():
        m = statistics.median(t)
        res["engines"][e] = {"median_cpu_ms": m, "p10": pct(t, 0.1), "p90": pct(t, 0.9), "n": len(t),
                             "tokens_per_s": tokens / (m / 1e3), "max_abs_diff": diffs[e][0], "times": t}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--phase", default="prefill", choices=("prefill", "decode"))
    ap.add_argument("--lengths", default="128,512")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--ait", action="append", default=[], help="LABEL=BIN_DIR:ARTIFACT")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    engines = []
    for spec in a.ait:
        label, rest = spec.split("=", 1)
        bindir, art = rest.split(":", 1)
        engines.append((label, [os.path.join(bindir, "bench-ait-runner"), art]))
    if not a.no_ort:
        engines.append(("ort", None))
    if not engines:
        sys.exit("prefill_cpu: no engine")
    rows = []
    for length in [int(x) for x in a.lengths.split(",") if x]:
        r = row(a, engines, length)
        rows.append(r)
        es = r["engines"]
        cells = ", ".join(f"{e} {i['median_cpu_ms']:.1f} ms ({i['p10']:.1f}-{i['p90']:.1f}, n {i['n']})"
                          for e, i in es.items())
        ratios = []
        if "ort" in es:
            ratios += [f"{e}/ORT {es['ort']['median_cpu_ms'] / i['median_cpu_ms']:.3f}"
                       for e, i in es.items() if e != "ort"]
        ait = [e for e in es if e != "ort"]
        if len(ait) > 1:
            ratios += [f"{e}/{ait[0]} {es[ait[0]]['median_cpu_ms'] / es[e]['median_cpu_ms']:.3f}" for e in ait[1:]]
        print(f"{a.model} {a.phase} {length} b{a.batch}: {cells}; tokens/s ratios (CPU time): "
              f"{', '.join(ratios)}; load {r['load'][0][0]:.1f} -> {r['load'][1][0]:.1f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
