#!/usr/bin/python3
"""Models that arrive quantised (issue 14): ait tuned against ONNX Runtime on
the SAME int8 model. Per model (mlp, bert) the float model is quantised as
onnxruntime's quantize_dynamic does (bench/ort_quant.py: DynamicQuantizeLinear
+ MatMulInteger + Cast + scale Mul, symmetric int8 weights per tensor), ait
tunes that ONNX file (max-throughput, one thread, batch sizes 1,8; native runs
the MatMulInteger chains on its VNNI int8 kernel: src/backends/native/qlinear.c),
then per batch (1, 8) the artifact and ORT on the quantised model are checked
against PyTorch's float32 outputs (max abs error, SQNR) and against each other,
and timed in interleaved rounds (models.interleave). Writes the section
"prequant" into OUT/results.json and OUT/RESULTS.md.

usage: /usr/bin/python3 bench/prequant.py --out DIR --models-dir DIR --bin-dir DIR
         [--models mlp,bert] [--batch 1,8] [--reuse]
--reuse takes the artifacts an earlier run left in build-bench/prequant.
Exits 1 on broken plumbing, never because ait is slower."""
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import ort_quant  # noqa: E402
import sysinfo  # noqa: E402
from quant import fmt, open_checked  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
MODELS = ("mlp", "bert")
THREADS = 1
TUNE_ARGS = ["--batch-sizes", "1,8", "--threads", str(THREADS), "--warmup", "2", "--window", "5",
             "--cap", "15", "--no-whole", "--no-plan-check", "--no-cache", "--strategy",
             "max-throughput"]
ENGINES = ("ait:int8", "ort:int8")


def log(msg):
    print(msg, flush=True)


def prepare(cfg, name, reuse):
    """The quantised ONNX file and ait's artifact of it; their records."""
    q = os.path.join(cfg["art_dir"], f"{name}.ort-int8.onnx")
    art = os.path.join(cfg["art_dir"], f"{name}.ort-int8.ait")
    m = onnx.load(os.path.join(cfg["model_dir"], name + ".onnx"))
    n = ort_quant.quantise(m, per_channel=False)
    onnx.save(m, q)
    rec = {"onnx": os.path.relpath(q, ROOT), "quantised": n, "onnx_bytes": os.path.getsize(q),
           "artifact": os.path.relpath(art, ROOT), "tune_s": 0, "ok": True, "error": None}
    if not (reuse and os.path.exists(art)):
        data = []
        for b in (1, 8):
            data += ["--data", os.path.join(cfg["model_dir"], f"{name}.bench.b{b}.in.npz")]
        argv = [cfg["ait"], "tune", q] + data + TUNE_ARGS + ["-o", art]
        rec["tune_command"] = " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a
                                       for a in argv)
        t0 = time.time()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        rec["tune_s"] = round(time.time() - t0, 1)
        if p.returncode:
            rec.update(ok=False, error=(p.stderr.strip().splitlines() or ["?"])[-1])
            return rec
    show = subprocess.run([cfg["ait"], "show", art, "--json"], capture_output=True, text=True,
                          timeout=600)
    tun = json.loads(show.stdout).get("tuning") or {}
    rec["bytes"] = os.path.getsize(art)
    rec["chosen"] = sorted({f"{m['path']}@{m['batch']}: {c['backend']}{':' + c['variant'] if c.get('variant') else ''}"
                            for m in tun.get("modules", []) if not m.get("whole")
                            for c in m["candidates"] if c["chosen"]})
    return rec


def run_case(cfg, name, batch, rec):
    work = os.path.join(cfg["work_dir"], f"prequant.{name}.b{batch}")
    indir, ref = models.prepare_case(os.path.join(cfg["model_dir"], f"{name}.bench.b{batch}"), work)
    row = {"name": name, "batch": batch, "engines": {}, "loadavg": sysinfo.loadavg()}
    argv = {"ait:int8": [cfg["ait_runner"], os.path.join(ROOT, rec["artifact"]), indir, str(THREADS)],
            "ort:int8": ["node", os.path.join(BENCH, "ort_runner.js"), os.path.join(ROOT, rec["onnx"]),
                         indir, str(THREADS)]}
    runners, outs = {}, {}
    for e in ENGINES:
        info = row["engines"][e] = {"ok": False, "error": None}
        r, o = open_checked(cfg, e, argv[e], e.split(":")[0], work, ref, info)
        if r:
            runners[e], outs[e] = r, o
    if len(outs) == 2:  # ait against ORT on the same quantised model
        row["ait_vs_ort_max_abs"] = max(float(np.abs(outs["ait:int8"][k].astype(np.float64) -
                                                     outs["ort:int8"][k]).max())
                                        for k in ref if k in outs["ait:int8"] and k in outs["ort:int8"])
    models.time_and_close(cfg, runners, row["engines"])
    shutil.rmtree(work, ignore_errors=True)
    a, o = row["engines"]["ait:int8"], row["engines"]["ort:int8"]
    if "median_ms" in a and "median_ms" in o:
        row["ratio"] = a["median_ms"] / o["median_ms"]
    log(f"  {name} b{batch}: " + ", ".join(
        f"{e} {i['median_ms']:.3f} ms" if "median_ms" in i else f"{e} FAILED"
        for e, i in row["engines"].items()) + (f", ait/ORT {row['ratio']:.2f}x" if "ratio" in row else ""))
    return row


def section(q):
    lines = ["## Pre-quantised models: ait tuned against ONNX Runtime on the same int8 model (issue 14)", "",
             f"{q['date']}, `{q['command']}` ({q['elapsed_s']:.0f} s), one thread, load average "
             f"{q['loadavg_start']} at the start and {q['loadavg_end']} at the end (a shared 2-core "
             "machine: ratios from interleaved rounds in one run, not absolute times).", "",
             "Both engines run the same ONNX file: the float model quantised as onnxruntime's "
             "`quantize_dynamic` does (bench/ort_quant.py: DynamicQuantizeLinear + MatMulInteger + "
             "Cast + scale Mul, symmetric int8 weights per tensor). ait: `ait tune Q.onnx --data "
             "NAME.bench.b1.in.npz --data NAME.bench.b8.in.npz " + " ".join(TUNE_ARGS) + "`, run from "
             "its artifact; native runs each MatMulInteger chain on its VNNI int8 kernel, equal to "
             "the reference ops bit for bit (src/backends/native/qlinear.c). Error: against "
             "PyTorch's float32 outputs (worst output: max abs error, SQNR); `ait - ORT`: largest "
             "absolute difference between the two engines' outputs.", ""]
    for name, rec in q["models"].items():
        if not rec["ok"]:
            lines += [f"{name}: tune FAILED ({rec['error']})", ""]
            continue
        lines += [f"{name}: {rec['quantised']} MatMul/Gemm quantised, ONNX {rec['onnx_bytes'] / 1e6:.2f} MB, "
                  f"artifact {rec['bytes'] / 1e6:.2f} MB, tune {rec['tune_s']:.0f} s; chosen: "
                  + "; ".join(rec["chosen"]) + ".", ""]
    lines += ["| model | batch | load | ait ms | ORT ms | ait / ORT | ait SQNR dB | ORT SQNR dB | "
              "ait max abs | ORT max abs | ait - ORT |",
              "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in q["rows"]:
        a, o = row["engines"]["ait:int8"], row["engines"]["ort:int8"]
        lines.append(f"| {row['name']} | {row['batch']} | {row['loadavg']} | {fmt(a.get('median_ms'), '{:.3f}')} | "
                     f"{fmt(o.get('median_ms'), '{:.3f}')} | {fmt(row.get('ratio'), '{:.2f}x')} | "
                     f"{fmt(a.get('sqnr_db'), '{:.1f}')} | {fmt(o.get('sqnr_db'), '{:.1f}')} | "
                     f"{fmt(a.get('max_abs'), '{:.3g}')} | {fmt(o.get('max_abs'), '{:.3g}')} | "
                     f"{fmt(row.get('ait_vs_ort_max_abs'), '{:.3g}')} |")
    return lines + [""]


def main():
    a, names, batches = models.batch_driver_args("bench prequant", MODELS, "bench/prequant.py",
                                                 reuse=True)
    cfg = models.driver_cfg("bench prequant", a.models_dir, a.bin_dir, "prequant",
                            os.path.join(ROOT, "build", "ait"), warmup=3, round_s=0.2, row_s=8,
                            min_rounds=3, max_rounds=10)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    q = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "command": a.command,
         "system": sysinfo.collect(ROOT, BENCH), "loadavg_start": sysinfo.loadavg(), "threads": THREADS,
         "tune_args": TUNE_ARGS, "models": {}, "rows": []}
    log(f"bench prequant: load {q['loadavg_start']}")
    problems = []
    for name in names:
        rec = q["models"][name] = prepare(cfg, name, a.reuse)
        log(f"  {name}: " + (f"tuned in {rec['tune_s']:.0f} s: {rec['chosen']}" if rec["ok"]
                             else f"tune FAILED: {rec['error']}"))
        if not rec["ok"]:
            problems.append(f"tune {name}: {rec['error']}")
            continue
        for b in batches:
            row = run_case(cfg, name, b, rec)
            q["rows"].append(row)
            problems += [f"{name} b{b} {e}: {i['error']}" for e, i in row["engines"].items() if not i["ok"]]
    models.driver_finish(a.out, "prequant", "bench prequant", q, section, problems, t0)


if __name__ == "__main__":
    main()
