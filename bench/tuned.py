#!/usr/bin/python3
"""Driver of `bench/run --tuned` (which installs, builds and exports first):
issue 5's done-when as numbers. Per model, `ait tune` makes three artifacts
at batch sizes 1,8 and one thread -- strategy max-throughput (the tuned one,
free to mix backends across modules), only:onednn and only:openblas (every
module on that backend wherever it runs it, even where the reference is
faster: the model on one backend) -- and, per batch, each artifact, the
untuned model (reference backend) and ONNX Runtime run in their own runner
process (bench/c/ait_runner.c, bench/ort_runner.js): outputs checked
against PyTorch's reference first (models.TOL; a wrong answer gets no
timing), then interleaved rounds (models.interleave, as bench/run). Then
the first run after loading: fresh processes, the first `time 1` after
"ready" against the median of the next 20 runs. Then the claim itself:
PAIR_PROCS processes that each hold the tuned artifact and the best single
backend (and any within PAIR_WITHIN of it) and alternate them run by run;
tuned / best is the median over those processes of the ratio of medians.
Adds the section "tuned" to OUT/results.json (other sections are kept) and
rewrites OUT/RESULTS.md.

usage: /usr/bin/python3 bench/tuned.py --out DIR --models-dir DIR --bin-dir DIR
         [--models resnet18,mobilenetv2,mlp,bert] [--batch 1,8] [--command CMD]
Exits 1 on broken plumbing (a tune or runner that fails) or a wrong ait
answer; never because ait is slower."""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import report  # noqa: E402
import sysinfo  # noqa: E402
from runner import Runner, RunnerError  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
MODELS = ("resnet18", "mobilenetv2", "mlp", "bert")
THREADS = 1
# label -> ait tune --strategy; "reference" is the untuned .onnx
ARTIFACTS = (("tuned", "max-throughput"), ("onednn", "only:onednn"),
             ("openblas", "only:openblas"))
SINGLE = ("onednn", "openblas", "reference")  # the single-backend contenders
ENGINES = ("tuned", "onednn", "openblas", "reference", "ort")  # interleaving order
TUNE_ARGS = ["--batch-sizes", "1,8", "--threads", str(THREADS), "--warmup", "3", "--window", "10",
             "--cap", "30"]
FIRST_PROCS = 11  # fresh processes per engine and batch: the first-run figure, and 11 of the 12
                  # per-process medians the ms columns take the median of
FIRST_STEADY = 20  # runs after the first one that make the steady state
PAIR_PROCS = 8     # processes that hold the tuned artifact and its closest single backends together,
PAIR_PROCS_MAX = 24  # then 4 more at a time while the 95% interval of the median ratio is wider
PAIR_HALF_WIDTH = 0.015  # than +-1.5% (memory-bound models need more: placement moves them most)
PAIR_S = 3.0       # seconds of alternating rounds per such process (at least PAIR_MIN_ROUNDS)
PAIR_MIN_ROUNDS = 8
PAIR_WITHIN = 1.25  # singles within this factor of the best single backend are paired too


def log(msg):
    print(msg, flush=True)


def tune(cfg, name, label, strategy, args=TUNE_ARGS, data=None):
    """`ait tune` of model NAME at `strategy` with `args` on the samples `data` (default: the
    bench case NAME.bench.b1.in.npz) into cfg["art_dir"]/NAME.LABEL.ait (cache in
    cfg["cache_dir"]); returns its record: command, tune_s, and from `ait show --json` each
    module's trials, the plan per bucket and the backends it uses (bench/suite.py and
    bench/decoder.py use it too)."""
    onnx = os.path.join(cfg["model_dir"], name + ".onnx")
    data = data or os.path.join(cfg["model_dir"], f"{name}.bench.b1.in.npz")
    path = os.path.join(cfg["art_dir"], f"{name}.{label}.ait")
    if os.path.exists(path):
        os.remove(path)
    argv = [cfg["ait"], "tune", onnx, "--data", data, *args, "--cpu-clock", "--strategy", strategy,
            "-o", path]
    env = dict(os.environ, AIT_CACHE_DIR=cfg["cache_dir"], OMP_NUM_THREADS=str(THREADS),
               OPENBLAS_NUM_THREADS=str(THREADS))
    if cfg.get("coretype"):
        env["OPENBLAS_CORETYPE"] = cfg["coretype"]
    info = {"strategy": strategy, "path": os.path.relpath(path, ROOT),
            "command": " ".join(["build/ait", "tune", os.path.relpath(onnx, ROOT), "--data",
                                 os.path.relpath(data, ROOT), *args, "--cpu-clock", "--strategy",
                                 strategy, "-o",
                                 os.path.relpath(path, ROOT)]), "ok": False, "error": None}
    t0 = time.time()
    with open(os.path.join(cfg["art_dir"], f"{name}.{label}.tune.log"), "w") as lf:
        p = subprocess.run(argv, stdout=lf, stderr=subprocess.STDOUT, env=env, timeout=3600)
    info["tune_s"] = round(time.time() - t0, 1)
    if p.returncode != 0 or not os.path.exists(path):
        with open(os.path.join(cfg["art_dir"], f"{name}.{label}.tune.log")) as lf:
            tail = lf.read().strip().splitlines()[-3:]
        info["error"] = f"ait tune exited {p.returncode}: {' | '.join(tail)}"
        return info
    info["bytes"] = os.path.getsize(path)
    show = subprocess.run([cfg["ait"], "show", path, "--json"], capture_output=True, text=True, timeout=600)
    try:
        man = json.loads(show.stdout)
    except ValueError:
        info["error"] = f"ait show --json failed: {show.stderr.strip()[-300:]}"
        return info
    info["ok"] = True
    info["buckets"] = man.get("buckets")
    # every module's trials: candidate, status (a rejected one says why)
    info["trials"] = [{"path": m["path"], "batch": m["batch"], "candidates": [
        {k: c.get(k) for k in ("name", "backend", "status", "reason", "median_ms", "cv", "max_rel_err", "chosen")}
        for c in m.get("candidates", [])]} for m in (man.get("tuning") or {}).get("modules", [])]
    # per bucket: module -> chosen candidate; backends used across the tuned modules
    plans = {}
    for m in man.get("modules", []):
        for pl in m.get("plans", []):
            plans.setdefault(str(pl["bucket"]), {})[m["name"]] = {
                "backend": pl["backend"], "chosen": pl["chosen"], "median_ms": pl.get("median_ms"),
                "baseline_ms": pl.get("baseline_ms")}
    info["plans"] = plans
    info["backends"] = {b: count_backends(mods) for b, mods in plans.items()}
    info["mixed"] = {b: len(c) > 1 for b, c in info["backends"].items()}
    return info


def count_backends(mods):
    out = {}
    for p in mods.values():
        out[p["backend"]] = out.get(p["backend"], 0) + 1
    return out


def model_path(cfg, label, name):
    return (os.path.join(cfg["model_dir"], name + ".onnx") if label == "reference"
            else os.path.join(cfg["art_dir"], f"{name}.{label}.ait"))


def argv_for(cfg, label, name, indir, more=()):
    """The runner of engine `label`; with `more`, ait labels it also loads (the `alt` command)."""
    if label == "ort":
        return models.engine_argv("ort", cfg, name, os.path.join(cfg["model_dir"], name + ".onnx"), indir,
                                  THREADS)
    return [cfg["ait_runner"], model_path(cfg, label, name), indir, str(THREADS),
            *(model_path(cfg, x, name) for x in more)]


def median_ci(xs):
    """The median of xs and a distribution-free interval of at least ~95% for it: the order
    statistics of ranks j and n + 1 - j, j = floor(n/2 - 0.98 sqrt(n)) (at least 1)."""
    v = sorted(xs)
    n = len(v)
    j = max(1, int(n / 2 - 0.98 * n ** 0.5))
    return statistics.median(v), v[j - 1], v[n - j]


def paired(cfg, name, indir, labels, est_ms, enough=None):
    """Processes that each hold every engine of `labels` (ait ones; labels[0] the tuned one) and
    run them alternately, one run each per round (bench-ait-runner's `alt`), so that whatever
    slows the machine for a while slows all of them alike. Process i loads them in an order
    rotated by i, so no engine is always the first allocated. PAIR_PROCS of them, then 4 more at
    a time up to PAIR_PROCS_MAX until enough(procs) says so. Returns, per process, label ->
    median ms, and the rounds per process."""
    round_ms = sum(est_ms[x] for x in labels)
    rounds = max(PAIR_MIN_ROUNDS, min(200, round(PAIR_S * 1e3 / max(round_ms, 1e-3))))
    procs = []
    for i in range(PAIR_PROCS_MAX):
        if i >= PAIR_PROCS and i % 4 == 0 and (enough is None or enough(procs)):
            break
        order = labels[i % len(labels):] + labels[:i % len(labels)]
        r = Runner("paired " + "+".join(order), argv_for(cfg, order[0], name, indir, order[1:]),
                   env_for(cfg, "tuned"), cfg["timeout"])
        try:
            r.send("alt 2")  # warm-up
            r.line(cfg["timeout"] + 2 * round_ms * 3e-3)
            r.send(f"alt {rounds}")
            text = r.line(cfg["timeout"] + rounds * round_ms * 3e-3).split()
        finally:
            r.close()
        k = len(order)
        if text[:1] != ["t"] or len(text) != 1 + rounds * k:
            raise RunnerError(f"paired {'+'.join(order)}: bad answer to 'alt {rounds}'")
        t = [float(x) for x in text[1:]]
        procs.append({x: statistics.median(t[j::k]) for j, x in enumerate(order)})
    return procs, rounds


def env_for(cfg, label):
    return models.engine_env("ort" if label == "ort" else "ait", cfg, THREADS)


def run_case(cfg, name, batch, arts):
    tag = f"b{batch}"
    work = os.path.join(cfg["work_dir"], f"tuned.{name}.{tag}")
    row = {"name": name, "case": tag, "batch": batch, "threads": THREADS, "engines": {},
           "loadavg": sysinfo.loadavg()}
    base = os.path.join(cfg["model_dir"], f"{name}.bench.{tag}")
    indir, ref = models.prepare_case(base, work)

    runners = {}
    for e in ENGINES:  # start, then the output check before any timing
        info = row["engines"][e] = {"ok": False, "error": None}
        if e in arts and not arts[e]["ok"]:
            info["error"] = f"no artifact: {arts[e]['error']}"
            continue
        try:
            t0 = time.monotonic()
            r = Runner(e, argv_for(cfg, e, name, indir), env_for(cfg, e), cfg["timeout"])
            info["load_s"] = round(time.monotonic() - t0, 3)
            runners[e] = r
            odir = os.path.join(work, "out." + e)
            os.makedirs(odir)
            r.outputs(odir)
            info["rel_err"] = models.rel_err(models.load_dir(odir), ref)
            info["ok"] = info["rel_err"] <= models.TOL
            if not info["ok"]:
                info["error"] = f"output differs from PyTorch's reference: {info['rel_err']:.3g} > {models.TOL:g}"
        except RunnerError as err:
            info["error"] = str(err)
            runners.pop(e, None)
    models.time_and_close(cfg, runners, row["engines"])

    # the first run after loading: fresh processes, interleaved across artifacts
    # (and the untuned model, whose steady medians also count below)
    first = {e: [] for e in (*(a for a, _ in ARTIFACTS), "reference") if row["engines"][e]["ok"]}
    for _ in range(FIRST_PROCS):
        for e in first:
            try:
                r = Runner(e, argv_for(cfg, e, name, indir), env_for(cfg, e), cfg["timeout"])
                t1 = r.times(1)[0]
                rest = r.times(FIRST_STEADY, t1 / 1e3)
                r.close()
                first[e].append({"first_ms": t1, "steady_median_ms": statistics.median(rest),
                                 "ratio": t1 / statistics.median(rest)})
            except RunnerError as err:
                row["engines"][e]["first_error"] = str(err)
    for e, runs in first.items():
        row["engines"][e]["first_run"] = runs
        if runs:
            row["engines"][e]["first_ratio_median"] = statistics.median(x["ratio"] for x in runs)
            row["engines"][e]["first_ratio_max"] = max(x["ratio"] for x in runs)

    eng = row["engines"]
    # A process keeps its memory placement for life, and on this machine that alone moves its
    # median by several percent (two artifacts with the same plan differed by 8% in one
    # process each). So the comparison uses the median over processes of each process's
    # median: the long interleaved one and the fresh ones above.
    for e in first:
        if "median_ms" in eng[e]:
            procs = [eng[e]["median_ms"]] + [x["steady_median_ms"] for x in eng[e].get("first_run", [])]
            eng[e]["process_medians_ms"] = procs
            eng[e]["process_median_ms"] = statistics.median(procs)
    key = lambda e: eng[e].get("process_median_ms", eng[e]["median_ms"])  # noqa: E731
    singles = [e for e in SINGLE if "median_ms" in eng[e]]
    if singles:
        best = min(singles, key=key)
        row["best_single"] = best
        if "median_ms" in eng["tuned"]:
            row["tuned_vs_best"] = key("tuned") / key(best)
        # The same plan as the best single backend: the same program, so the ratio is noise.
        plans = {e: arts[e]["plans"].get(str(batch)) for e in ("tuned", best)
                 if e in arts and arts[e].get("ok")}
        if len(plans) == 2 and plans["tuned"] is not None:
            row["same_plan_as_best"] = all(plans["tuned"][m]["chosen"] == plans[best].get(m, {}).get("chosen")
                                           for m in plans["tuned"])
        # The claim: tuned against the best single backend in the same processes, run by run
        # (and against any other single backend within PAIR_WITHIN of it, in case noise
        # picked the wrong best). Per process the ratio of medians; the median over processes.
        near = [e for e in singles if key(e) <= PAIR_WITHIN * key(best)]
        if "median_ms" in eng["tuned"]:
            try:
                def best_of(procs):
                    return min(near, key=lambda e: statistics.median(p[e] for p in procs))

                def enough(procs):
                    _, lo, hi = median_ci([p["tuned"] / p[best_of(procs)] for p in procs])
                    return (hi - lo) / 2 <= PAIR_HALF_WIDTH

                procs, rounds = paired(cfg, name, indir, ["tuned", *near],
                                       {e: eng[e]["median_ms"] for e in ["tuned", *near]}, enough)
                ratios = {e: [p["tuned"] / p[e] for p in procs] for e in near}
                row["paired"] = {"singles": near, "procs": procs, "rounds": rounds,
                                 "ratio": {e: statistics.median(v) for e, v in ratios.items()},
                                 "ratio_ci": {e: median_ci(v)[1:] for e, v in ratios.items()},
                                 "ratio_min": {e: min(v) for e, v in ratios.items()},
                                 "ratio_max": {e: max(v) for e, v in ratios.items()}}
                pb = best_of(procs)
                row["paired"]["best"] = pb
                row["tuned_vs_best_paired"] = row["paired"]["ratio"][pb]
            except RunnerError as err:
                row["paired_error"] = str(err)
    if "median_ms" in eng["tuned"] and "median_ms" in eng["ort"]:
        row["tuned_vs_ort"] = eng["tuned"]["median_ms"] / eng["ort"]["median_ms"]
    shutil.rmtree(work, ignore_errors=True)
    log(summary(row))
    return row


def summary(row):
    e = row["engines"]
    parts = [f"{k} {e[k].get('process_median_ms', e[k]['median_ms']):.3f} ms" if "median_ms" in e[k]
             else f"{k} FAILED" for k in ENGINES]
    tail = ""
    if "tuned_vs_best" in row:
        tail += f"; tuned/best ({row['best_single']}) {row['tuned_vs_best']:.3f}"
        tail += " (same plan)" if row.get("same_plan_as_best") else ""
    if "tuned_vs_best_paired" in row:
        pr = row["paired"]
        lo, hi = pr["ratio_ci"][pr["best"]]
        tail += (f"; paired: tuned/{pr['best']} {row['tuned_vs_best_paired']:.3f} "
                 f"(95% {lo:.3f}-{hi:.3f}, {len(pr['procs'])} processes)")
    if "first_ratio_max" in e["tuned"]:
        tail += f"; first-run (tuned) {e['tuned']['first_ratio_median']:.2f} (max {e['tuned']['first_ratio_max']:.2f})"
    return f"  {row['name']:12s} {row['case']:3s}: " + ", ".join(parts) + tail


def problems(t):
    out = []
    for name, arts in t["artifacts"].items():
        for label, a in arts.items():
            if not a["ok"]:
                out.append(f"{name} {label}: {a['error']}")
    for row in t["rows"]:
        for e, info in row["engines"].items():
            if info["error"] and not info["error"].startswith("no artifact") and \
                    (e != "ort" or "reference" not in info["error"]):
                out.append(f"{row['name']} {row['case']}: {e}: {info['error']}")
            if info.get("first_error"):
                out.append(f"{row['name']} {row['case']}: {e}: first run: {info['first_error']}")
        if row.get("paired_error"):
            out.append(f"{row['name']} {row['case']}: paired: {row['paired_error']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--command", default="bench/run --tuned")
    a = ap.parse_args()
    names = [n for n in a.models.split(",") if n]
    bad = [n for n in names if n not in MODELS]
    if bad:
        sys.exit(f"bench --tuned: unknown model(s) {', '.join(bad)}; known: {', '.join(MODELS)}")
    batches = [int(b) for b in a.batch.split(",") if b]
    if any(b not in (1, 8) for b in batches):
        sys.exit("bench --tuned: batch sizes are 1 and 8 (the exported bench cases)")
    cfg = models.driver_cfg("bench --tuned", a.models_dir, a.bin_dir, "tuned",
                            os.path.join(ROOT, "build", "ait"), warmup=3, round_s=0.3, row_s=12,
                            min_rounds=3, max_rounds=15)
    os.makedirs(a.out, exist_ok=True)
    ob = cfg["openblas"]
    t0 = time.time()
    t = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "command": a.command,
         "system": sysinfo.collect(ROOT, BENCH), "loadavg_start": sysinfo.loadavg(),
         "cpu_busy_start": sysinfo.cpu_busy(), "threads": THREADS, "tune_args": TUNE_ARGS,
         "settings": {k: cfg[k] for k in ("warmup", "round_s", "row_s", "min_rounds", "max_rounds")},
         "first_procs": FIRST_PROCS, "first_steady": FIRST_STEADY, "pair_procs": PAIR_PROCS,
         "pair_procs_max": PAIR_PROCS_MAX, "pair_half_width": PAIR_HALF_WIDTH, "pair_s": PAIR_S, "pair_within": PAIR_WITHIN, "openblas": ob,
         "artifacts": {}, "rows": []}
    log(f"bench --tuned: {t['system']['cpu_model']}, {t['system']['cores']} cores, load {t['loadavg_start']}, "
        f"other work {t['cpu_busy_start']}")
    for name in names:
        arts = t["artifacts"][name] = {}
        for label, strategy in ARTIFACTS:
            arts[label] = tune(cfg, name, label, strategy)
            a_ = arts[label]
            log(f"  tune {name} {strategy}: " + (
                f"{a_['tune_s']:.0f} s, backends " + "; ".join(
                    f"b{b}: " + ", ".join(f"{k}x{v}" for k, v in c.items()) for b, c in a_["backends"].items())
                if a_["ok"] else f"FAILED: {a_['error']}"))
        for b in batches:
            t["rows"].append(run_case(cfg, name, b, arts))
    t["loadavg_end"] = sysinfo.loadavg()
    t["cpu_busy_end"] = sysinfo.cpu_busy()
    t["elapsed_s"] = round(time.time() - t0, 1)
    t["problems"] = problems(t)
    report.write(a.out, report.save_results(a.out, "tuned", t))
    log(f"bench --tuned: wrote {a.out}/RESULTS.md, results.json ({t['elapsed_s']:.0f} s)")
    for p in t["problems"]:
        log(f"bench --tuned: FAILED: {p}")
    sys.exit(1 if t["problems"] else 0)


if __name__ == "__main__":
    main()
