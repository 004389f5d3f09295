#!/usr/bin/python3
"""Driver of `bench/run --suite` (which installs, builds and exports first):
issue 13's model suite. Per model and thread count T, `ait tune` (strategy
max-throughput, --threads T: candidates at 1..T threads, at the batch sizes
asked: tuned.tune), then per batch that tuned artifact, ONNX Runtime and PyTorch on the same inputs
(models.run_case: outputs checked against PyTorch's reference first, a wrong
answer gets no timing, then warm-up and interleaved rounds, medians and
ratios). The figure the issue's target reads: the geometric mean over the
models of tuned ait / ORT at one thread, per batch. Adds the section "suite"
to OUT/results.json (other sections kept; rewritten after every model, so an
interrupted run keeps what it measured), merged with the earlier runs' (a
row this run measures replaces the earlier one of that model, batch and
thread count; the other rows stay, each naming its run), and rewrites its
section of OUT/RESULTS.md: one table per batch/threads setting.

usage: /usr/bin/python3 bench/suite.py --out DIR --models-dir DIR --bin-dir DIR
         [--quick] [--models LIST] [--batch 1,8] [--threads 1,2] [--cap N] [--window N]
       /usr/bin/python3 bench/suite.py --list [--quick] [--models LIST]   (the model names)
Exits 1 on broken plumbing (a tune or runner that fails) or a wrong ait
answer; never because ait is slower."""
import datetime
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import report  # noqa: E402
import sysinfo  # noqa: E402
import tuned  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
# issue 13's suite: torchvision's models, our detector, recogniser and ViT, and bench/run's four
MODELS = ("mobilenet_v3_small", "mobilenet_v3_large", "shufflenet_v2_x1_0", "squeezenet1_1", "densenet121",
          "efficientnet_b0", "resnet50", "regnet_y_400mf", "dbnet", "crnn", "vit_tiny",
          "resnet18", "mobilenetv2", "mlp", "bert")
QUICK = ("mobilenet_v3_small",)
TUNE_TIMEOUT = 300  # seconds per candidate


def log(msg):
    print(msg, flush=True)


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarise(rows):
    """Per batch/threads setting ("b1t1", ...): the geometric mean of tuned ait / ORT over its rows
    and the models above 1."""
    out = {}
    for b, t in sorted({(r["batch"], r["threads"]) for r in rows}, key=lambda bt: (bt[1], bt[0])):
        rs = [r for r in rows if r["batch"] == b and r["threads"] == t]
        ratios = {r["name"]: r["ait_vs"]["ort"]["ratio"] for r in rs}
        out[f"b{b}t{t}"] = {"batch": b, "threads": t, "geomean_ait_vs_ort": geomean(ratios.values()),
                            "models": len([x for x in ratios.values() if x]), "of": len(rs),
                            "above_1": sorted(n for n, x in ratios.items() if x and x > 1.0)}
    return out


def art_key(name, threads):
    """The key of a model's artifact in a run's "artifacts": the name (tuned at 1 thread), else
    NAME@tT (tuned with --threads T, for the rows at T threads)."""
    return name if threads == 1 else f"{name}@t{threads}"


RUN_KEYS = ("date", "command", "mode", "system", "loadavg_start", "loadavg_end", "cpu_busy_start",
            "cpu_busy_end", "elapsed_s", "tune_args", "strategy", "batches", "threads", "models_asked",
            "settings", "problems")


def earlier(out_dir):
    """The suite section of out_dir/results.json as merge() keeps it ({"runs", "rows"}); one of
    the older shape (one run, rows without a run) read as a single run."""
    try:
        with open(os.path.join(out_dir, "results.json")) as f:
            old = json.load(f).get("suite")
    except (OSError, ValueError):
        old = None
    if not old or not old.get("rows"):
        return {"runs": [], "rows": []}
    if "runs" in old:
        return old
    arts = old.get("artifacts", {})
    return {"runs": [{k: old.get(k) for k in RUN_KEYS}],
            "rows": [dict(r, run=0, tune=arts.get(r["name"], {})) for r in old["rows"]]}


def merge(out_dir, s):
    """This run's rows over the earlier runs' in out_dir: a row (model, batch, threads) this run
    measured replaces the earlier one; the others stay, with the runs they came from."""
    old = earlier(out_dir)
    runs = [r for r in old["runs"] if r["date"] != s["date"] or r["command"] != s["command"]]
    mine = {(r["name"], r["batch"], r["threads"]) for r in s["rows"]}
    keep = [r for r in old["rows"] if (r["name"], r["batch"], r["threads"]) not in mine
            and old["runs"][r["run"]] in runs]
    used = sorted({r["run"] for r in keep})
    renum = {k: j for j, k in enumerate(used)}
    out_runs = [old["runs"][k] for k in used] + [{k: s.get(k) for k in RUN_KEYS}]
    rows = [dict(r, run=renum[r["run"]]) for r in keep]
    rows += [dict(r, run=len(out_runs) - 1, tune=s["artifacts"].get(art_key(r["name"], r["threads"]), {}))
             for r in s["rows"]]
    order = {n: k for k, n in enumerate(MODELS)}
    rows.sort(key=lambda r: (r["threads"], r["batch"], order.get(r["name"], len(order))))
    return {"runs": out_runs, "rows": rows, "summary": summarise(rows)}


def problems(s):
    out = [f"{n}: tune: {a['error']}" for n, a in s["artifacts"].items() if not a["ok"]]
    for row in s["rows"]:
        where = f"{row['name']} {row['case']} t{row['threads']}"
        for e, info in row["engines"].items():
            if info["error"] and (e == "ait" or "reference" not in info["error"]) \
                    and not (e == "ait" and info["error"].startswith("no artifact")):
                out.append(f"{where}: {e}: {info['error']}")
        for peer, vs in row["ait_vs"].items():
            if row["engines"]["ait"]["ok"] and row["engines"][peer]["ok"] and vs["why"]:
                out.append(f"{where}: {vs['why']}")
    return out


def save(out_dir, s):
    m = merge(out_dir, s)
    report.save_section(out_dir, "suite", m, report.suite_tables(m))
    return m


def main():
    ap = models.driver_args(__doc__)
    ap.add_argument("--cap", type=int, default=None, help="ait tune --cap (default 30; --quick 10)")
    ap.add_argument("--window", type=int, default=None, help="ait tune --window (default 10; --quick 5)")
    ap.add_argument("--ait", default=os.path.join(ROOT, "build", "ait"), help="the ait that tunes")
    ap.add_argument("--command", default="bench/run --suite")
    a = ap.parse_args()
    q = a.quick
    names = models.driver_models(a, "bench --suite", MODELS, QUICK if q else MODELS)
    if names is None:
        return
    batches = [int(b) for b in (a.batch or ("1" if q else "1,8")).split(",") if b]
    threads = [int(t) for t in (a.threads or ("1" if q else "1,2")).split(",") if t]
    if any(b not in (1, 8) for b in batches) or any(t < 1 for t in threads):
        sys.exit("bench --suite: batch sizes are 1 and 8 (the exported bench cases), threads >= 1")
    cap, window = a.cap or (10 if q else 30), a.window or (5 if q else 10)
    # --timeout: ait tune's 60 s per candidate kills real candidates of the big models (a
    # DenseNet module's oneDNN build and runs) on a machine shared with other work
    tune_args = ["--batch-sizes", ",".join(map(str, batches)), "--threads", "1", "--warmup", "3",
                 "--window", str(window), "--cap", str(cap), "--timeout", str(TUNE_TIMEOUT)]
    cfg = models.driver_cfg("bench --suite", a.models_dir, a.bin_dir, "suite", a.ait,
                            warmup=2 if q else 3, round_s=0.1 if q else 0.3, row_s=1.5 if q else 10,
                            min_rounds=3, max_rounds=5 if q else 15)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    s = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "command": a.command,
         "mode": "quick" if q else "full", "system": sysinfo.collect(ROOT, BENCH),
         "loadavg_start": sysinfo.loadavg(), "cpu_busy_start": sysinfo.cpu_busy(),
         "tune_args": tune_args, "strategy": "max-throughput", "batches": batches, "threads": threads,
         "models_asked": names,
         "settings": {k: cfg[k] for k in ("warmup", "round_s", "row_s", "min_rounds", "max_rounds")},
         "artifacts": {}, "rows": []}
    log(f"bench --suite: {s['system']['cpu_model']}, {s['system']['cores']} cores, load {s['loadavg_start']}, "
        f"other work {s['cpu_busy_start']}")
    for name in names:
        for t in threads:  # an artifact per thread count: tuned with --threads T (candidates at 1..T)
            args = [str(t) if k > 0 and tune_args[k - 1] == "--threads" else x for k, x in enumerate(tune_args)]
            label = "tuned" if t == 1 else f"tuned-t{t}"
            art = s["artifacts"][art_key(name, t)] = tuned.tune(cfg, name, label, "max-throughput", args)
            art["loadavg"] = sysinfo.loadavg()
            log(f"  tune {name} --threads {t}: " + (f"{art['tune_s']:.0f} s, backends " + "; ".join(
                f"b{b}: " + ", ".join(f"{k}x{v}" for k, v in c.items()) for b, c in art["backends"].items())
                if art["ok"] else f"FAILED: {art['error']}"))
            ait_model = os.path.join(cfg["art_dir"], f"{name}.{label}.ait")
            for b in batches:
                row = models.run_case(cfg, name, name, f"b{b}", b, t, log, ait_model)
                if not art["ok"]:  # no artifact: the row ran the untuned model; say so, time nothing of it
                    row["engines"]["ait"].update(ok=False, error=f"no artifact: {art['error']}")
                    row["ait_vs"] = {p: {"ratio": None, "why": "no artifact"} for p in ("ort", "torch")}
                row["loadavg"] = sysinfo.loadavg()
                s["rows"].append(row)
        s["summary"] = summarise(s["rows"])
        s["elapsed_s"] = round(time.time() - t0, 1)
        s["loadavg_end"] = sysinfo.loadavg()
        s["problems"] = problems(s)
        save(a.out, s)
    s["cpu_busy_end"] = sysinfo.cpu_busy()
    save(a.out, s)
    for g in s["summary"].values():
        gm = g["geomean_ait_vs_ort"]
        log(f"bench --suite: batch {g['batch']}, {g['threads']} thread(s): tuned ait / ORT geometric mean "
            f"{'%.3f' % gm if gm else 'n/a'} over {g['models']} of {g['of']} models; above 1.0: "
            f"{', '.join(g['above_1']) or 'none'}")
    log(f"bench --suite: wrote {a.out}/RESULTS.md, results.json ({s['elapsed_s']:.0f} s)")
    for p in s["problems"]:
        log(f"bench --suite: FAILED: {p}")
    sys.exit(1 if s["problems"] else 0)


if __name__ == "__main__":
    main()
