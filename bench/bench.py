#!/usr/bin/python3
"""Driver of bench/run (which installs, builds and exports first): measures
this machine's limits, the GEMM sweep and the models, then writes
results.json, RESULTS.md and chart.svg into OUT.

usage: /usr/bin/python3 bench/bench.py --out DIR --models-dir DIR --bin-dir DIR
         [--quick] [--models LIST] [--threads 1,2] [--batch 1,8]
Exits 1 on broken plumbing (a program or peer that fails) or a wrong ait
answer; never because ait is slower."""
import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import limits  # noqa: E402
import models  # noqa: E402
import report  # noqa: E402
import svg  # noqa: E402
import sysinfo  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)


def int_list(s):
    try:
        v = [int(x) for x in s.split(",") if x]
        assert v and all(x > 0 for x in v)
        return v
    except (ValueError, AssertionError):
        raise argparse.ArgumentTypeError(f"want a comma-separated list of positive integers, got '{s}'")


def log(msg):
    print(msg, flush=True)


def problems(res):
    """Broken plumbing or wrong ait answers: what fails the run."""
    out = []
    for row in res["models"]:
        where = f"{row['name']} {row['case']} t{row['threads']}"
        for e, info in row["engines"].items():
            if info["error"] and (e == "ait" or "reference" not in info["error"]):
                out.append(f"{where}: {e}: {info['error']}")
        for peer, vs in row["ait_vs"].items():
            if row["engines"]["ait"]["ok"] and row["engines"][peer]["ok"] and vs["why"]:
                out.append(f"{where}: {vs['why']}")
    for g in res["gemm"]:
        if g.get("rel_err", 0) > models.TOL:
            out.append(f"GEMM {g['layout']} M={g['m']} t{g['threads']}: {g['engine']} differs from "
                       f"OpenBLAS by {g['rel_err']:.3g}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default=None)
    ap.add_argument("--threads", type=int_list, default=None)
    ap.add_argument("--batch", type=int_list, default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--command", default="bench/run")
    a = ap.parse_args()
    q = a.quick
    names = a.models.split(",") if a.models else (["gpt2-decode"] if q else models.NAMES)
    bad = [n for n in names if n not in models.NAMES and n != "gpt2"]
    if bad:
        sys.exit(f"bench: unknown model(s) {', '.join(bad)}; known: {', '.join(models.NAMES)} (gpt2: both)")
    threads = a.threads or ([1] if q else [1, 2])
    batches = a.batch or ([1] if q else [1, 8])
    os.makedirs(a.out, exist_ok=True)
    work = os.path.join(os.path.dirname(os.path.abspath(a.models_dir)), "work")
    t0 = time.time()
    res = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
           "mode": "quick" if q else "full", "command": a.command,
           "system": sysinfo.collect(ROOT, BENCH), "loadavg_start": sysinfo.loadavg(),
           "cpu_busy_start": sysinfo.cpu_busy()}
    log(f"bench: {res['system']['cpu_model']}, {res['system']['cores']} cores, load {res['loadavg_start']}")
    try:
        res["openblas"] = limits.blas_info(a.bin_dir)
        log(f"bench: OpenBLAS detects '{res['openblas']['detected']}', runs with "
            f"OPENBLAS_CORETYPE={res['openblas']['coretype']} -> '{res['openblas']['used']}'")
        res["peak"] = limits.peak(a.bin_dir, 0.1 if q else 0.3)
        res["stream"] = limits.stream(a.bin_dir, 64 if q else 512, 2 if q else 5)
        for p in res["peak"]:
            log(f"  peak {p['isa']:6s} {p['threads']} thread(s): {p['gflops']:.1f} GFLOP/s")
        for s in res["stream"]:
            log(f"  {s['kernel']:5s} {s['threads']} thread(s): {s['gbs']:.1f} GB/s")
        cfg = {"model_dir": a.models_dir, "work_dir": work, "bench_dir": BENCH,
               "ait_runner": os.path.join(a.bin_dir, "bench-ait-runner"), "timeout": 600,
               "coretype": res["openblas"]["coretype"], "warmup": 2 if q else 3,
               "round_s": 0.1 if q else 0.3, "row_s": 1.5 if q else 12, "min_rounds": 3,
               "max_rounds": 5 if q else 15}
        res["settings"] = {k: cfg[k] for k in ("warmup", "round_s", "row_s", "min_rounds", "max_rounds")}
        res["settings"]["gemm_budget_s"], res["settings"]["gemm_cap_s"] = limits.gemm_budget(q)
        log("bench: models (ait, ONNX Runtime, PyTorch; interleaved)")
        res["models"] = models.run_all(cfg, names, batches, threads, log)
        log("bench: GEMM sweep (ait, OpenBLAS, oneDNN)")
        res["gemm"] = limits.gemm(a.bin_dir, BENCH, os.path.join(os.path.dirname(work), "gemm"), threads, q,
                                  res["openblas"]["coretype"], log)
    except limits.LimitsError as e:
        sys.exit(f"bench: {e}")
    res["loadavg_end"] = sysinfo.loadavg()
    res["cpu_busy_end"] = sysinfo.cpu_busy()
    res["elapsed_s"] = round(time.time() - t0, 1)
    res["problems"] = problems(res)
    try:  # the sections `bench/run --tuned`, `--suite` and `--decoder` add are measured separately: keep them
        with open(os.path.join(a.out, "results.json")) as f:
            old = json.load(f)
        for k in ("tuned", "suite", "decoder"):
            if old.get(k):
                res[k] = old[k]
    except (OSError, ValueError):
        pass
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(a.out, "chart.svg"), "w") as f:
        f.write(svg.chart(res))
    report.write(a.out, res)
    log(f"bench: wrote {a.out}/RESULTS.md, results.json, chart.svg ({res['elapsed_s']:.0f} s)")
    for p in res["problems"]:
        log(f"bench: FAILED: {p}")
    checks = [i["ok"] for r in res["models"] for i in r["engines"].values()]
    checks += [g.get("rel_err", 0) <= models.TOL for g in res["gemm"] if "skipped" not in g]
    peers_off = len(checks) - sum(checks) - len([p for p in res["problems"] if "differ" in p])
    if peers_off > 0:
        log(f"bench: {peers_off} peer output(s) or run(s) off; reported in RESULTS.md, not ait's failure")
    # the closing line counts output checks that passed, and problems
    log(f"bench: {sum(checks)} passed, {len(res['problems'])} failed")
    sys.exit(1 if res["problems"] else 0)


if __name__ == "__main__":
    main()
