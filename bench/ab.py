#!/usr/bin/python3
"""Two ait builds side by side with ONNX Runtime on one model: each build's
tuned artifact run by its own bench-ait-runner, ORT by ort_runner.js, on
MODEL.in.0.npz (tools/export_models.py's sample), outputs checked against
MODEL.out.0.npz first, then warm-up and interleaved rounds (models.interleave);
prints the medians and 10th percentiles, their ratios and the load average. For measuring a change
against its base on this shared machine.

usage: /usr/bin/python3 bench/ab.py MODELS_DIR MODEL BASE_BIN BASE.ait NEW_BIN NEW.ait [THREADS]
         [--ort ORT.onnx --case CASE] [--cpu ROUNDS]
  BASE_BIN, NEW_BIN: the build folders holding bench-ait-runner
  --ort: ONNX Runtime runs ORT.onnx instead of MODEL.onnx (bench/quant.py's static int8 QDQ
  model, build-bench/quant/MODEL.ort-int8.onnx); --case: the sample MODELS_DIR/CASE.in.npz
  and its reference CASE.out.npz (MODEL.bench.b8) instead of MODEL.in.0.npz. With --ort the
  outputs are not held to the float tolerance: each engine's max abs error and SQNR against
  the reference (bench/quant.py's errors) are printed instead.
  --cpu ROUNDS: CPU time instead of wall clock (on a loaded machine a run's wall time is mostly
  waiting): ROUNDS interleaved rounds (base, new, ORT) of about 0.3 s of runs each (at least 5), a round's CPU
  time per run from the runners' `cpu N` (each run's process CPU time, every thread); medians of the rounds and
  the median of the rounds' new/base and new/ORT ratios."""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from runner import Runner  # noqa: E402


def cpu_rounds(runners, rounds):
    """Warm-up, then `rounds` interleaved rounds: per runner, each round's CPU ms per run."""
    per, out = {}, {e: [] for e in runners}
    for e, r in runners.items():
        w = r.times(3)
        per[e] = max(5, min(50, round(0.3 / max(statistics.median(w) / 1e3, 1e-6))))
    for _ in range(rounds):
        for e, r in runners.items():
            ts = r.times(per[e], cmd="cpu")  # each run's process CPU time (the runners' `cpu N`)
            out[e].append(sum(ts) / len(ts))
    return out, per


def report_cpu(name, runners, rounds, load0):
    ms, per = cpu_rounds(runners, rounds)
    load1 = open("/proc/loadavg").read().split()[:3]
    med = {e: statistics.median(v) for e, v in ms.items()}
    nb = statistics.median(n / b for n, b in zip(ms["new"], ms["base"]))
    no = statistics.median(n / o for n, o in zip(ms["new"], ms["ort"]))
    bo = statistics.median(b / o for b, o in zip(ms["base"], ms["ort"]))
    print(f"{name}: CPU ms per run, medians of {rounds} rounds ({per} runs per round): base "
          f"{med['base']:.3f}, new {med['new']:.3f}, ORT {med['ort']:.3f}; base/ORT "
          f"{med['base'] / med['ort']:.3f}, new/ORT {med['new'] / med['ort']:.3f}, new/base "
          f"{med['new'] / med['base']:.3f}; per-round ratios' medians: new/base {nb:.3f}, new/ORT "
          f"{no:.3f}, base/ORT {bo:.3f}; load {' '.join(load0)} -> {' '.join(load1)}")
    for e in ms:
        print(f"  {e}: " + " ".join(f"{v:.2f}" for v in ms[e]))
    for r in runners.values():
        r.close()


def main():
    args, opt = [], {}
    it = iter(sys.argv[1:])
    for a in it:
        if a in ("--ort", "--case", "--cpu"):
            opt[a[2:]] = next(it)
        else:
            args.append(a)
    mdir, name, bbin, bart, nbin, nart = args[:6]
    threads = int(args[6]) if len(args) > 6 else 1
    bench = os.path.dirname(os.path.abspath(__file__))
    cfg = {"warmup": 3, "round_s": 0.3, "min_rounds": 5, "max_rounds": 15, "row_s": 20}
    work = tempfile.mkdtemp(prefix="ab.")
    case = os.path.join(mdir, opt["case"]) if "case" in opt else os.path.join(mdir, name)
    indir, ref = models.prepare_case(case, os.path.join(work, "case"), "" if "case" in opt else ".0")
    env = models.engine_env("ait", {}, threads)
    argv = {"base": [os.path.join(bbin, "bench", "bench-ait-runner"), bart, indir, str(threads)],
            "new": [os.path.join(nbin, "bench", "bench-ait-runner"), nart, indir, str(threads)],
            "ort": ["node", os.path.join(bench, "ort_runner.js"),
                    opt.get("ort", os.path.join(mdir, name + ".onnx")), indir, str(threads)]}
    runners, info = {}, {}
    load0 = open("/proc/loadavg").read().split()[:3]
    for e, a in argv.items():
        runners[e] = Runner(e, a, env, 600)
        odir = os.path.join(work, "out." + e)
        os.makedirs(odir)
        runners[e].outputs(odir)
        if "ort" in opt:  # quantised: the error reported, not held to the float tolerance
            import quant  # noqa: E402 (onnx, only for this)
            got = quant.errors(models.load_dir(odir), ref)
            if got is None:
                sys.exit(f"{e}: outputs missing or of another shape than the reference's")
            info[e] = {"ok": True, "error": None}
            print(f"{e}: max abs error {got['max_abs']:.3g}, SQNR {got['sqnr_db']:.1f} dB, "
                  f"top-1 agreement {got['top1']}")
            continue
        err = models.rel_err(models.load_dir(odir), ref)
        info[e] = {"ok": err <= models.TOL, "rel_err": err, "error": None}
        if not info[e]["ok"]:
            sys.exit(f"{e}: outputs off by {err:.2e}")
    if "cpu" in opt:
        report_cpu(name, runners, int(opt["cpu"]), load0)
        return
    models.time_and_close(cfg, runners, info)
    load1 = open("/proc/loadavg").read().split()[:3]
    med = {e: info[e]["median_ms"] for e in info}
    print(f"{name}: base {med['base']:.3f} ms, new {med['new']:.3f} ms, ORT {med['ort']:.3f} ms; "
          f"base/ORT {med['base'] / med['ort']:.2f}, new/ORT {med['new'] / med['ort']:.2f}, "
          f"new/base {med['new'] / med['base']:.2f}; rounds {info['new']['rounds']}; "
          f"load {' '.join(load0)} -> {' '.join(load1)}")
    # on a loaded machine a run's time is its own work plus whatever preempted it: the 10th
    # percentile (runs that met the least of it) compares the work more steadily than the median
    p10 = {e: info[e].get("p10_ms", info[e]["min_ms"]) for e in info}
    print(f"{name}: 10th percentiles: base {p10['base']:.3f} ms, new {p10['new']:.3f} ms, ORT {p10['ort']:.3f} ms; "
          f"base/ORT {p10['base'] / p10['ort']:.2f}, new/ORT {p10['new'] / p10['ort']:.2f}, "
          f"new/base {p10['new'] / p10['base']:.2f}")


if __name__ == "__main__":
    main()
