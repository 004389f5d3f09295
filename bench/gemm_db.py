#!/usr/bin/python3
"""Whole-model latency with and without a tuned GEMM database (docs/gemm.md).

For each model: `ait gemm capture` its GEMM shapes (batch 1), `ait gemm tune`
them into a database (--iters N timed runs per candidate, default 20), then
`ait tune --strategy only:native:default` twice (every top-level module on the
native backend's default variant, the best kernel without Winograd: the
variant the capture runs, so the plans run the captured GEMMs and differ only
in their configs): without and with `--gemm-db`. The two plans are then read
back (`ait show --json`) and any module whose choice differs is printed: with
--strategy only:native (any variant: another kernel, Winograd) each tune picks
its variants by timing, and the ratio is then partly those picks' (on the Zen 5
mlp's fc2 on native:avx2 in one artifact, native in the other). The two artifacts are then run
interleaved (A B A B ..., `ait run NAME.ait --repeat R`, each run's median),
and the median of those medians is compared: ratio = without / with (above 1:
the database helps).

--cpu-clock (for a shared machine, where the wall clock is the scheduler's):
the GEMM tune and both `ait tune`s time candidates by their thread's CPU time
(`--cpu-clock`), capture and tunes take the model's sample MODEL.in.0.npz
(`--data`), and the two artifacts are compared by CPU time per run: each run
by bench-ait-runner (beside AIT, in bench/), outputs checked against
MODEL.out.0.npz, then --rounds interleaved rounds (ab.py's cpu_rounds), the
median of the rounds' without / with ratios (their range beside it: the noise).
--control adds a second runner of the artifact without the database to the same
rounds: its ratio to the first (ideally 1) is the noise floor of that model's ratio.

Per model it also says what the database changed in the plan: the rows whose
config is not the default (a knob set, more than one thread, or another
kernel), each with the tune's default_us / us, and what those would save per
run by the tune's own times (each row's saving times its count in the
capture), as an expected ratio beside the measured one.

usage: bench/gemm_db.py AIT MODELS_DIR WORKDIR [--rounds N] [--repeat R] [--iters N] [--cpu-clock]
         [--control] [--strategy S] [MODEL ...]
"""
import argparse
import csv
import json
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


KNOBS = ("kc", "mc", "nc", "pack_a", "order", "skinny_nv")


def config_id(r):
    """As gemm_config_id (src/kernels/gemm.c) names it."""
    s = "%s.kc%s.mc%s.nc%s.pa%s.o%s.sk%d.t%s" % (r["kernel"], r["kc"], r["mc"], r["nc"], r["pack_a"], r["order"],
                                                max(1, int(r["splitk"])), r["threads"])
    return s + (".sv%s" % r["skinny_nv"] if int(r.get("skinny_nv") or 0) > 0 else "")


def changed_rows(untuned, tuned):
    """The tuned rows whose config is not the default, as (row, count in the capture); the
    default is every knob 0, split-K and threads at most 1, and the kernel the knob-free
    rows of that dtype and layout have (the tune writes the default's kernel there)."""
    key = lambda r: tuple(r[c] for c in ("m", "n", "k", "dtype", "layout", "epilogue"))
    count = {key(r): int(r["count"]) for r in csv.DictReader(open(untuned))}
    rows = [r for r in csv.DictReader(open(tuned)) if r["kernel"] != "failed"]
    plain = lambda r: all(int(r.get(c) or 0) == 0 for c in KNOBS) and int(r["splitk"]) <= 1 and int(r["threads"]) <= 1
    dflt = {(r["dtype"], r["layout"]): r["kernel"] for r in rows if plain(r)}
    return [(r, count.get(key(r), 1)) for r in rows
            if not plain(r) or r["kernel"] != dflt.get((r["dtype"], r["layout"]), r["kernel"])]


def plan_of(ait, art, env):
    """The artifact's plan: (module, bucket) -> the chosen candidate's name."""
    man = json.loads(sh([ait, "show", art, "--json"], env=env))
    return {(m["name"], p["bucket"]): p.get("chosen", "baseline") for m in man["modules"] for p in m.get("plans", [])}


def cpu_compare(a, name, w):
    """The two artifacts by CPU time per run, interleaved rounds; (plain ms, db ms, the
    rounds' lowest and highest ratio, the control's ratio or None) with plain / db the
    median of the rounds' ratios (plain ms the median, db ms from it)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ab  # noqa: E402
    import models  # noqa: E402
    from runner import Runner  # noqa: E402
    runner = os.path.join(os.path.dirname(os.path.abspath(a.ait)), "bench", "bench-ait-runner")
    indir, ref = models.prepare_case(os.path.join(a.models, name), w(".case"), ".0")
    env = models.engine_env("ait", {}, 1)
    runners = {}
    for side in ("plain", "db") + (("control",) if a.control else ()):
        art = w("." + ("plain" if side == "control" else side) + ".ait")
        runners[side] = Runner(side, [runner, art, indir, "1"], env, 600)
        odir = w(".out." + side)
        os.makedirs(odir, exist_ok=True)
        runners[side].outputs(odir)
        err = models.rel_err(models.load_dir(odir), ref)
        if err > models.TOL:
            sys.exit("%s %s: outputs off by %.2e" % (name, side, err))
    ms, _ = ab.cpu_rounds(runners, a.rounds)
    for r in runners.values():
        r.close()
    ratios = [p / d for p, d in zip(ms["plain"], ms["db"])]
    ctl = statistics.median(p / c for p, c in zip(ms["plain"], ms["control"])) if a.control else None
    p = statistics.median(ms["plain"])
    return p, p / statistics.median(ratios), min(ratios), max(ratios), ctl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ait")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20, help="timed runs per candidate in the tune")
    ap.add_argument("--cpu-clock", action="store_true", help="tune and compare by CPU time")
    ap.add_argument("--strategy", default="only:native:default",
                    help="both tunes' strategy (default only:native:default: one plan, GEMM configs apart)")
    ap.add_argument("--control", action="store_true",
                    help="with --cpu-clock: the artifact without the database against itself too")
    ap.add_argument("names", nargs="*", default=["mlp", "bert", "resnet18", "mobilenetv2"])
    a = ap.parse_intermixed_args()
    if a.iters < 1 or a.rounds < 1 or a.repeat < 1:
        ap.error("--iters, --rounds and --repeat take a count of at least 1")
    if a.control and not a.cpu_clock:
        ap.error("--control needs --cpu-clock")
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, AIT_CACHE_DIR=os.path.join(a.work, "cache"))
    rows, changes = [], []
    for name in a.names:
        model = os.path.join(a.models, name + ".onnx")
        dims = DIMS.get(name, [])
        clk = ["--cpu-clock"] if a.cpu_clock else []
        if a.cpu_clock:  # the runner's sample: the plans' buckets are the runs'
            dims = ["--data", os.path.join(a.models, name + ".in.0.npz")]
        w = lambda s: os.path.join(a.work, name + s)
        sh([a.ait, "gemm", "capture", model, *dims, "-o", w(".untuned.csv")], env=env)
        if os.path.exists(w(".tuned.csv")):
            os.remove(w(".tuned.csv"))
        sh([a.ait, "gemm", "tune", w(".untuned.csv"), "-o", w(".tuned.csv"), "--iters", str(a.iters),
            "--warmup", "1", "--no-refs", *clk], env=env)
        common = [a.ait, "tune", model, *dims, "--strategy", a.strategy, "--no-whole",
                  "--no-plan-check", "--no-cache", "--warmup", "2", "--window", "5", "--cap", "10", *clk]
        sh(common + ["-o", w(".plain.ait")], env=env)
        sh(common + ["--gemm-db", w(".tuned.csv"), "-o", w(".db.ait")], env=env)
        pp, pd = plan_of(a.ait, w(".plain.ait"), env), plan_of(a.ait, w(".db.ait"), env)
        for mod in sorted(set(pp) | set(pd)):
            if pp.get(mod) != pd.get(mod):
                changes.append("%s: module %s (bucket %d) on %s without the database, %s with it" % (
                    name, mod[0], mod[1], pp.get(mod, "-"), pd.get(mod, "-")))
        lo = hi = ctl = None
        if a.cpu_clock:
            p, d, lo, hi, ctl = cpu_compare(a, name, w)
        else:
            med = {"plain": [], "db": []}
            for _ in range(a.rounds):
                for side in ("plain", "db"):
                    out = sh([a.ait, "run", w("." + side + ".ait"), *dims, "--repeat", str(a.repeat)], env=env)
                    m = re.search(r"median of \d+ runs ([0-9.]+) ms", out)
                    med[side].append(float(m.group(1)))
            p, d = statistics.median(med["plain"]), statistics.median(med["db"])
        tuned = sum(1 for l in open(w(".tuned.csv")) if ",failed," not in l) - 1
        shapes = sum(1 for _ in open(w(".untuned.csv"))) - 1
        ch = changed_rows(w(".untuned.csv"), w(".tuned.csv"))
        save_ms = sum(c * (float(r["default_us"]) - float(r["us"])) for r, c in ch) / 1e3
        expect = p / (p - save_ms) if p > save_ms else float("inf")
        spread = "%.3f-%.3f" % (lo, hi) if lo is not None else "-"
        rows.append((name, shapes, tuned, len(ch), p, d, p / d, spread, expect,
                     "%.3fx" % ctl if ctl is not None else "-"))
        print("%-11s shapes %3d tuned %3d not default %3d  without %8.3f ms  with %8.3f ms  ratio %.3f "
              "(rounds %s)  the tune's expected %.3f  control %s" % rows[-1], flush=True)
        for r, c in ch:
            changes.append("%s: %sx%sx%s %s %s %s, count %d: %s, %s us against the default's %s (%.2fx)" % (
                name, r["m"], r["n"], r["k"], r["dtype"], r["layout"], r["epilogue"], c, config_id(r), r["us"],
                r["default_us"], float(r["default_us"]) / float(r["us"])))
    print("\nload average %s; %s" % (" ".join(open("/proc/loadavg").read().split()[:3]),
          "CPU ms per run (bench-ait-runner), ratio the median of the rounds' ratios" if a.cpu_clock
          else "wall ms, medians of `ait run` medians"))
    print("\n| model | GEMM shapes | rows in db | not default | without db ms | with db ms | without / with "
          "| rounds' range | the tune's expected | control (without / without) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print("| %s | %d | %d | %d | %.3f | %.3f | %.3fx | %s | %.3fx | %s |" % r)
    print("\nstrategy %s. Not the default (the tune's config, us, the default's us in the same tune), "
          "and modules whose choice differs between the two plans:" % a.strategy)
    for c in changes or ["none"]:
        print("- " + c)


if __name__ == "__main__":
    main()
