"""Model latency: ait, ONNX Runtime and PyTorch on the same inputs and thread
count. Outputs are checked first (each engine against PyTorch's reference
written at export time, and ait against each peer); then warm-up, then
interleaved rounds (ait, ORT, torch, ait, ORT, torch ...), each a short batch
of runs. A wrong or failed engine gets no speed figure, and the row says why."""
import argparse
import os
import shutil
import statistics
import sys
import time

import numpy as np

import limits
import report
import sysinfo
from runner import Runner, RunnerError

TOL = 1e-4
ENGINES = ("ait", "ort", "torch")

# (bench name, exported model, case tag of tools/export_models.py BENCH_CASES, batch)
CASES = [
    ("resnet18", "resnet18", "b1", 1), ("resnet18", "resnet18", "b8", 8),
    ("mobilenetv2", "mobilenetv2", "b1", 1), ("mobilenetv2", "mobilenetv2", "b8", 8),
    ("mlp", "mlp", "b1", 1), ("mlp", "mlp", "b8", 8),
    ("bert", "bert", "b1", 1), ("bert", "bert", "b8", 8),
    ("gpt2-decode", "gpt2", "decode-b1", 1), ("gpt2-decode", "gpt2", "decode-b8", 8),
    ("gpt2-prefill", "gpt2", "prefill-b1", 1), ("gpt2-prefill", "gpt2", "prefill-b8", 8),
]
NAMES = sorted({c[0] for c in CASES})


def driver_args(doc):
    """The options bench/suite.py and bench/decoder.py share (bench/run passes them on)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the models asked for (bench/run exports them)")
    ap.add_argument("--out")
    ap.add_argument("--models-dir")
    ap.add_argument("--bin-dir")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default=None)
    ap.add_argument("--batch", default=None)
    ap.add_argument("--threads", default=None)
    return ap



def driver_models(a, label, known, default):
    """The models a driver_args driver is asked for (--models, else default), each one of known;
    None after printing them for --list; exits naming what is unknown or which folder is missing."""
    names = [n for n in a.models.split(",") if n] if a.models else list(default)
    bad = [n for n in names if n not in known]
    if bad:
        sys.exit(f"{label}: unknown model(s) {', '.join(bad)}; known: {', '.join(known)}")
    if a.list:
        print(" ".join(names))
        return None
    if not (a.out and a.models_dir and a.bin_dir):
        sys.exit(f"{label}: --out, --models-dir and --bin-dir are needed")
    return names

def batch_driver_args(label, known, command, reuse=False, engines=None, cpu=False):
    """The options of the drivers over the exported bench cases (bench/quant.py,
    bench/prequant.py): --out, --models-dir, --bin-dir, --models (of known), --batch (1 and 8),
    --command, with reuse --reuse, with engines (the driver's engine names) --engines, a subset
    of them (a.engines: a list, all by default), with cpu --cpu (time by CPU time); returns the
    parsed options, the models and the batch sizes, or exits naming what is wrong."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--models", default=",".join(known))
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--command", default=command)
    if reuse:
        ap.add_argument("--reuse", action="store_true", help="take the artifacts of an earlier run")
    if cpu:
        ap.add_argument("--cpu", action="store_true",
                        help="each run's process CPU time (the runners' `cpu N`) instead of wall clock")
    if engines:
        ap.add_argument("--engines", default=",".join(engines), help="the engines to run (comma list)")
    a = ap.parse_args()
    if engines:
        a.engines = [x for x in a.engines.split(",") if x]
        if any(x not in engines for x in a.engines):
            sys.exit(f"{label}: engines are {', '.join(engines)}")
    names = [n for n in a.models.split(",") if n]
    if any(n not in known for n in names):
        sys.exit(f"{label}: models are {', '.join(known)}")
    batches = [int(b) for b in a.batch.split(",") if b]
    if any(b not in (1, 8) for b in batches):
        sys.exit(f"{label}: batch sizes are 1 and 8 (the exported bench cases)")
    return a, names, batches


def driver_finish(folder, key, label, q, section, problems, t0, split=None):
    """The end of a driver run: q's end load, elapsed time and problems recorded, its section
    (section(q, key): the lines) saved under `key` into folder (report.save_section), or, with
    split(q, folder) giving {key: part}, each part as its own section; each problem logged;
    exits 1 when there were problems, else 0."""
    q["loadavg_end"] = sysinfo.loadavg()
    q["elapsed_s"] = round(time.time() - t0, 1)
    q["problems"] = problems
    for k, part in (split(q, folder) if split else {key: q}).items():
        report.save_section(folder, k, part, section(part, k) if split else section(part))
    print(f"{label}: wrote {folder}/RESULTS.md, results.json ({q['elapsed_s']:.0f} s)", flush=True)
    for p in problems:
        print(f"{label}: FAILED: {p}", flush=True)
    sys.exit(1 if problems else 0)


def rel_err(got, want):
    """max |got - want| / max |want| over the outputs both have; inf on a
    missing output, a shape mismatch or a NaN."""
    worst = 0.0
    for name, w in want.items():
        g = got.get(name)
        if g is None or g.shape != w.shape:
            return float("inf")
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        d = float(np.max(np.abs(g64 - w64))) if w.size else 0.0
        scale = float(np.max(np.abs(w64))) if w.size else 0.0
        e = d / scale if scale > 0 else d
        if np.isnan(e):
            return float("inf")
        worst = max(worst, e)
    return worst


def load_dir(folder):
    return {f[:-4]: np.load(os.path.join(folder, f)) for f in os.listdir(folder) if f.endswith(".npy")}


def engine_argv(engine, cfg, model, onnx, indir, threads):
    if engine == "ait":
        return [cfg["ait_runner"], onnx, indir, str(threads)]
    if engine == "ort":
        return ["node", os.path.join(cfg["bench_dir"], "ort_runner.js"), onnx, indir, str(threads)]
    return ["/usr/bin/python3", os.path.join(cfg["bench_dir"], "torch_runner.py"), model, indir, str(threads)]


def engine_env(engine, cfg, threads):
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)})
    if cfg.get("coretype"):
        env["OPENBLAS_CORETYPE"] = cfg["coretype"]
    if engine == "torch" and threads >= 2:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


def stats(times):
    """Median, min, max, and the 10th and 90th percentiles (from 2 runs on)."""
    out = {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
           "runs": len(times)}
    if len(times) >= 2:
        q = statistics.quantiles(times, n=10, method="inclusive")
        out.update(p10_ms=q[0], p90_ms=q[-1])
    return out


def prepare_case(base, work, sample=""):
    """A fresh folder `work` with BASE.in.npz unpacked into work/in/NAME.npy (what the runners
    read); returns that folder and the reference outputs of BASE.out.npz (BASE.in.0.npz and
    BASE.out.0.npz with sample ".0", as tools/export_models.py names a model's samples)."""
    shutil.rmtree(work, ignore_errors=True)
    indir = os.path.join(work, "in")
    os.makedirs(indir)
    with np.load(f"{base}.in{sample}.npz") as z:
        for k in z.files:
            np.save(os.path.join(indir, k + ".npy"), z[k])
    with np.load(f"{base}.out{sample}.npz") as z:
        ref = {k: z[k] for k in z.files}
    return indir, ref


def time_and_close(cfg, runners, info):
    """interleave() over the runners whose output check passed (info[label]["ok"]); when a runner
    fails while timing, each one left without a time is marked failed with the reason; then
    every runner is closed."""
    timed = {e: r for e, r in runners.items() if info[e]["ok"]}
    try:
        interleave(cfg, timed, info)
    except RunnerError as err:
        for e in timed:
            if "median_ms" not in info[e]:
                info[e]["ok"] = False
                info[e]["error"] = info[e]["error"] or f"while timing: {err}"
    for r in runners.values():
        r.close()


def interleave(cfg, timed, info):
    """Warm-up, then interleaved rounds over the runners in `timed` (label ->
    Runner, in that order); writes each one's stats into info[label]. With cfg["cmd"] "cpu" the
    rounds measure each run's process CPU time (the runners' `cpu N`) instead of wall clock."""
    est, per_round, all_times = {}, {}, {e: [] for e in timed}
    for e, r in timed.items():  # warm-up
        w = r.times(cfg["warmup"])
        est[e] = max(statistics.median(w) / 1e3, 1e-6)
        per_round[e] = max(1, min(50, round(cfg["round_s"] / est[e])))
    round_time = sum(per_round[e] * est[e] for e in timed) or 1e-6
    rounds = int(min(cfg["max_rounds"], max(cfg["min_rounds"], cfg["row_s"] // round_time)))
    for _ in range(rounds):  # interleaved rounds
        for e, r in timed.items():
            all_times[e] += r.times(per_round[e], est[e], cfg.get("cmd", "time"))
    for e in timed:
        info[e].update(stats(all_times[e]), per_round=per_round[e], rounds=rounds)


def run_case(cfg, name, model, tag, batch, threads, log, ait_model=None):
    """One row: ait (on NAME.onnx, or on `ait_model`, e.g. a tuned .ait), ORT and PyTorch
    checked, then interleaved."""
    mdir, work = cfg["model_dir"], os.path.join(cfg["work_dir"], f"{name}.{tag}.t{threads}")
    row = {"name": name, "model": model, "case": tag, "batch": batch, "threads": threads,
           "engines": {}, "ait_vs": {}}
    onnx = os.path.join(mdir, model + ".onnx")
    base = os.path.join(mdir, f"{model}.bench.{tag}")
    indir, ref = prepare_case(base, work)

    runners, outs = {}, {}
    for e in ENGINES:  # start, then the output check before any timing
        info = row["engines"][e] = {"ok": False, "error": None}
        try:
            runners[e] = Runner(e, engine_argv(e, cfg, model, ait_model if e == "ait" and ait_model else onnx,
                                               indir, threads),
                                engine_env(e, cfg, threads), cfg["timeout"])
            odir = os.path.join(work, "out." + e)
            os.makedirs(odir)
            runners[e].outputs(odir)
            outs[e] = load_dir(odir)
            info["rel_err"] = rel_err(outs[e], ref)
            info["ok"] = info["rel_err"] <= TOL
            if not info["ok"]:
                info["error"] = f"output differs from PyTorch's reference: {info['rel_err']:.3g} > {TOL:g}"
        except RunnerError as err:
            info["error"] = str(err)
            runners.pop(e, None)
    for peer in ("ort", "torch"):
        vs = row["ait_vs"][peer] = {"ratio": None}
        if "ait" in outs and peer in outs:
            vs["rel_err"] = rel_err(outs["ait"], outs[peer])
        why = [f"{e}: {row['engines'][e]['error']}" for e in ("ait", peer) if not row["engines"][e]["ok"]]
        if not why and vs.get("rel_err", float("inf")) > TOL:
            why.append(f"ait and {peer} differ by {vs['rel_err']:.3g} > {TOL:g}")
        vs["why"] = "; ".join(why) or None

    time_and_close(cfg, runners, row["engines"])
    for peer in ("ort", "torch"):
        a, p = row["engines"]["ait"], row["engines"][peer]
        if row["ait_vs"][peer]["why"] is None and "median_ms" in a and "median_ms" in p:
            row["ait_vs"][peer]["ratio"] = a["median_ms"] / p["median_ms"]
    shutil.rmtree(work, ignore_errors=True)
    log(summary(row))
    return row


def summary(row):
    parts = []
    for e in ENGINES:
        i = row["engines"][e]
        parts.append(f"{e} {i['median_ms']:.3f} ms" if "median_ms" in i else f"{e} FAILED")
    ratio = row["ait_vs"]["ort"]["ratio"]
    return (f"  {row['name']:13s} {row['case']:11s} t{row['threads']}: " + ", ".join(parts) +
            (f"; ait/ort {ratio:.2f}" if ratio else ""))


def selected(models, batches):
    out = []
    for name, model, tag, batch in CASES:
        if name in models or model in models:
            if batch in batches:
                out.append((name, model, tag, batch))
    return out


def run_all(cfg, models, batches, threads_list, log):
    rows = []
    for threads in threads_list:
        for name, model, tag, batch in selected(models, batches):
            rows.append(run_case(cfg, name, model, tag, batch, threads, log))
    return rows


def driver_cfg(label, models_dir, bin_dir, sub, ait, **settings):
    """The cfg of a bench driver (bench/tuned.py, suite.py, quant.py): its scratch folders beside
    the models folder (SUB for artifacts and their tune cache), the ait that tunes, the runner,
    OpenBLAS's info and core type, and the timing settings; exits naming `label` when OpenBLAS's info
    cannot be read."""
    scratch = os.path.dirname(os.path.abspath(models_dir))
    cfg = {"model_dir": models_dir, "work_dir": os.path.join(scratch, "work"),
           "bench_dir": os.path.dirname(os.path.abspath(__file__)),
           "art_dir": os.path.join(scratch, sub), "cache_dir": os.path.join(scratch, sub, "cache"),
           "ait": ait, "ait_runner": os.path.join(bin_dir, "bench-ait-runner"), "timeout": 600,
           **settings}
    os.makedirs(cfg["cache_dir"], exist_ok=True)
    try:
        cfg["openblas"] = limits.blas_info(bin_dir)
    except limits.LimitsError as e:
        sys.exit(f"{label}: {e}")
    cfg["coretype"] = cfg["openblas"]["coretype"]
    return cfg


