#!/usr/bin/python3
"""Driver of `bench/run --decoder` (which installs, builds and exports first):
issue 16's decoder bench. Per decoder (tools/export_models.py's gpt2_small and
llama_small; --quick: the 2-layer gpt2), optionally `ait tune` on a decode and
a prefill sample, then per thread count, phase and batch one row: ait on the
untuned ONNX model and the tuned artifact (through a binding made once:
bench-ait-runner --bind), ONNX Runtime (outputs bound to preallocated buffers:
bench/ort_runner.js --bind) and PyTorch eager (the same
weights, rebuilt by bench/torch_runner.py), on the same inputs.

Phases: prefill S (S new tokens, empty past) and decode P (one new token
against a past of P positions). Inputs are drawn here with numpy (seed fixed
per row): token ids below the vocabulary size, past key/values standard
normal (random values are fine for timing). Each engine's outputs are compared
with ORT's first (max |diff|, and max |diff| / max |ORT| <= TOL, else the row
gets no timing for it: a wrong model cannot look fast); then warm-up and
interleaved rounds (models.interleave). Tokens/s = batch * new tokens / median.

Adds the section "decoder" to OUT/results.json (other sections kept, written
after every row) and its section of OUT/RESULTS.md (report.decoder_tables).

usage: /usr/bin/python3 bench/decoder.py --out DIR --models-dir DIR --bin-dir DIR
         [--quick] [--models LIST] [--batch 1,4] [--threads 1] [--no-tune | --reuse-tune]
         [--phases decode,prefill] [--lengths 128,512] [--quant int8wo,int4wo [--min-sqnr DB]] [--cache]
         [--quant-art SUFFIX] [--skip ait,torch] [--tune-batches 1,4]
       /usr/bin/python3 bench/decoder.py --list [--quick] [--models LIST]   (the models to export)
--quant LIST adds the engine `ait-quant`: a second artifact tuned the same way with
`--quant LIST` (weight-only int8/int4 candidates; --reuse-tune takes NAME.quant.ait), judged
against ORT by the SQNR of its logits (at least QUANT_MIN_SQNR dB, not TOL) and the greedy
token of each batch row (the argmax of the last position's logits), which the row also
compares with the float32 plan's.
--quant-art SUFFIX (with --reuse-tune) takes the quantised artifact from NAME.SUFFIX.ait instead of
NAME.quant.ait (an artifact tuned by hand: NAME.int8wo.ait, NAME.int4wo.ait).
--tune-batches LIST is the tune's --batch-sizes (default 1: batch-4 rows run the batch-1
plans); 1,4 tunes each phase at both batch buckets into the one artifact.
--skip LIST leaves engines out of every row (ait: the untuned model, whose prefill runs the
reference ops for minutes on a loaded machine; torch); their cells stay empty.
--cache runs ait's engines with bench-ait-runner --cache instead of --bind: each past/present
pair bound as one key/value cache (ait_binding_set_cache) whose buffer is the present's, so a
run appends the new positions after the past in place, as a decode loop does (`ait
generate`, examples/generate.c); ORT's row still writes the whole present into its bound
buffer. Outputs are compared with ORT's as before (the buffer reads as the dense present).

Exits 1 on broken plumbing (a runner or tune that fails) or an engine whose
outputs differ from ORT's; never because ait is slower."""
import datetime
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import limits  # noqa: E402
import models  # noqa: E402
import report  # noqa: E402
import sysinfo  # noqa: E402
import tuned  # noqa: E402
from runner import Runner, RunnerError  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
MODELS = ("gpt2_small", "llama_small")
QUICK = ("gpt2",)
# (phase, new tokens, past): issue 16's prefill at 128 and 512, decode at past 128, 512, 1024
# (in order of cost: on a shared machine a cut-short run keeps the cheap rows of every model)
CASES = [("decode", 1, 128), ("decode", 1, 512), ("decode", 1, 1024), ("prefill", 128, 0), ("prefill", 512, 0)]
QUICK_CASES = [("decode", 1, 128)]
TOL = 1e-4  # max |diff| / max |ORT| over every output
TARGET = {"decode": 1.25, "prefill": 1.1}  # issue 16: ait tokens/s over ORT's
TUNE_TIMEOUT = 300  # seconds per candidate (a 12-layer module's build and runs on a shared machine)
ENGINES = ("ait", "ait-tuned", "ait-quant", "ort", "torch")
QUANT_MIN_SQNR = 20.0  # dB, logits of the quantised artifact against ORT's


def sqnr_top1(got, ref):
    """(SQNR in dB of got's logits against ref's, the greedy tokens of got and of ref: the
    argmax of each batch row's last position)."""
    g, r = got.get("logits"), ref["logits"]
    if g is None or g.shape != r.shape:
        return float("-inf"), [], [int(t) for t in r[:, -1].argmax(-1)]
    err = float(np.sum((g.astype(np.float64) - r) ** 2))
    sq = float(10 * np.log10(float(np.sum(r.astype(np.float64) ** 2)) / err)) if err > 0 else float("inf")
    return sq, [int(t) for t in g[:, -1].argmax(-1)], [int(t) for t in r[:, -1].argmax(-1)]


def log(msg):
    print(msg, flush=True)


def shapes(models_dir, name):
    """(vocab, cache [heads, head_dim], layers) from the small case tools/export_models.py
    writes beside the model (NAME.in.0.npz, NAME.out.0.npz): no need to read the model."""
    with np.load(os.path.join(models_dir, f"{name}.in.0.npz")) as z:
        past = [k for k in z.files if k.startswith("past_")]
        heads, hd = z[past[0]].shape[1], z[past[0]].shape[3]
    with np.load(os.path.join(models_dir, f"{name}.out.0.npz")) as z:
        vocab = z["logits"].shape[-1]
    return vocab, (heads, hd), len(past) // 2


def write_inputs(folder, shape, batch, new, past, seed):
    """NAME.npy for every input of a decoder of `shape` (shapes()): ids [batch, new], and each
    layer's past key and value [batch, heads, past, head_dim]."""
    vocab, (heads, hd), layers = shape
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "input_ids.npy"), rng.integers(0, vocab, (batch, new), dtype=np.int64))
    for i in range(layers):
        for kv in ("key", "value"):
            np.save(os.path.join(folder, f"past_{kv}_{i}.npy"),
                    rng.standard_normal((batch, heads, past, hd), dtype=np.float32))


def tune_samples(folder, shape):
    """ait tune's --data: a decode sample (past 128) and a prefill sample (128 tokens), batch 1,
    as .npz files of one folder (decode first: today's tune times the first sample only)."""
    os.makedirs(folder, exist_ok=True)
    for k, (tag, new, past) in enumerate((("decode", 1, 128), ("prefill", 128, 0))):
        tmp = os.path.join(folder, tag)
        write_inputs(tmp, shape, 1, new, past, 100 + k)
        np.savez(os.path.join(folder, f"{k}_{tag}.npz"),
                 **{f[:-4]: np.load(os.path.join(tmp, f)) for f in os.listdir(tmp)})
        shutil.rmtree(tmp)


def compare(got, ref):
    """(max |got - ref|, that over max |ref|) over every output; inf on a missing output, a shape
    mismatch or a NaN."""
    worst_abs, worst_rel = 0.0, 0.0
    for name, r in ref.items():
        g = got.get(name)
        if g is None or g.shape != r.shape:
            return float("inf"), float("inf")
        if not r.size:
            continue
        d = float(np.max(np.abs(g.astype(np.float64) - r)))
        scale = float(np.max(np.abs(r)))
        if np.isnan(d):
            return float("inf"), float("inf")
        worst_abs = max(worst_abs, d)
        worst_rel = max(worst_rel, d / scale if scale > 0 else d)
    return worst_abs, worst_rel


def run_row(cfg, name, art, phase, new, past, batch, threads, qart=None):
    mdir = cfg["model_dir"]
    onnx = os.path.join(mdir, name + ".onnx")
    tag = f"{phase}{new if phase == 'prefill' else past}-b{batch}"
    work = os.path.join(cfg["work_dir"], f"decoder.{name}.{tag}.t{threads}")
    shutil.rmtree(work, ignore_errors=True)
    indir = os.path.join(work, "in")
    write_inputs(indir, cfg["shapes"][name], batch, new, past, seed=batch * 100003 + new * 1009 + past)
    row = {"model": name, "phase": phase, "new": new, "past": past, "batch": batch, "threads": threads,
           "tokens": batch * new, "engines": {}, "loadavg": sysinfo.loadavg()}
    bind = "--cache" if cfg.get("kv_cache") else "--bind"
    argv = {"ait": [cfg["ait_runner"], onnx, indir, str(threads), bind],
            "ait-tuned": [cfg["ait_runner"], art, indir, str(threads), bind] if art else None,
            "ait-quant": [cfg["ait_runner"], qart, indir, str(threads), bind] if qart else None,
            "ort": models.engine_argv("ort", cfg, name, onnx, indir, threads) + ["--bind"],
            "torch": models.engine_argv("torch", cfg, name, onnx, indir, threads)}
    for e in cfg["skip"]:
        argv[e] = None
    runners, outs = {}, {}
    for e in ENGINES:  # start each and write its outputs, before any timing
        info = row["engines"][e] = {"ok": False, "error": None}
        if argv[e] is None:
            info["error"] = "not asked" if e in cfg["skip"] or (e == "ait-quant" and not cfg.get("quant")) \
                else "no tuned artifact"
            continue
        try:
            runners[e] = Runner(e, argv[e], models.engine_env(e, cfg, threads),
                                cfg["timeout"])
            odir = os.path.join(work, "out." + e)
            os.makedirs(odir)
            runners[e].outputs(odir)
            outs[e] = models.load_dir(odir)
            shutil.rmtree(odir)
        except RunnerError as err:
            info["error"] = str(err)
            runners.pop(e, None)
    ref = outs.get("ort")
    for e in ENGINES:
        info = row["engines"][e]
        if e not in outs:
            continue
        if ref is None:
            info["ok"] = e == "ort"
            continue
        info["max_abs_diff"], info["rel_diff"] = compare(outs[e], ref)
        if e == "ait-quant":  # quantised: its own bound, and the greedy tokens of every row
            info["sqnr_db"], info["greedy"], info["greedy_ort"] = sqnr_top1(outs[e], ref)
            if "ait-tuned" in outs:
                info["greedy_f32_plan"] = sqnr_top1(outs["ait-tuned"], ref)[1]
            info["ok"] = info["sqnr_db"] >= QUANT_MIN_SQNR
            if not info["ok"]:
                info["error"] = f"logits' SQNR against ORT's {info['sqnr_db']:.1f} dB < {QUANT_MIN_SQNR:g}"
            continue
        info["ok"] = info["rel_diff"] <= TOL
        if not info["ok"]:
            info["error"] = f"outputs differ from ORT's: max |diff| {info['max_abs_diff']:.3g}, " \
                            f"relative {info['rel_diff']:.3g} > {TOL:g}"
    outs.clear()
    models.time_and_close(cfg, runners, row["engines"])
    for e, info in row["engines"].items():
        if "median_ms" in info:
            info["tokens_per_s"] = row["tokens"] / (info["median_ms"] / 1e3)
    a, o, t = (row["engines"][e].get("tokens_per_s") for e in ("ait", "ort", "torch"))
    at = row["engines"]["ait-tuned"].get("tokens_per_s")
    aq = row["engines"]["ait-quant"].get("tokens_per_s")
    row["vs"] = {"ait/ort": a / o if a and o else None, "ait/torch": a / t if a and t else None,
                 "tuned/ort": at / o if at and o else None, "tuned/torch": at / t if at and t else None,
                 "quant/ort": aq / o if aq and o else None, "quant/tuned": aq / at if aq and at else None}
    best = max([x for x in (row["vs"]["ait/ort"], row["vs"]["tuned/ort"]) if x] or [0]) or None
    row["target"] = TARGET[phase]
    row["target_met"] = None if best is None else best >= TARGET[phase]
    shutil.rmtree(work, ignore_errors=True)
    log(summary(row))
    return row


def summary(row):
    parts = []
    for e in ENGINES:
        i = row["engines"][e]
        if "median_ms" in i:
            parts.append(f"{e} {i['median_ms']:.2f} ms")
        elif i["error"] not in ("no tuned artifact", "not asked"):
            parts.append(f"{e} FAILED ({i['error']})")
    r = row["vs"]["ait/ort"]
    return (f"  {row['model']} {row['phase']} {row['new'] if row['phase'] == 'prefill' else row['past']:>4} "
            f"b{row['batch']} t{row['threads']}: " + ", ".join(parts) +
            (f"; ait/ORT tok/s {r:.2f}" if r else ""))


def problems(s):
    out = [f"{n}: tune: {a['error']}" for n, a in s["artifacts"].items() if not a.get("ok")]
    for row in s["rows"]:
        where = f"{row['model']} {row['phase']} new {row['new']} past {row['past']} b{row['batch']} t{row['threads']}"
        out += [f"{where}: {e}: {i['error']}" for e, i in row["engines"].items()
                if i["error"] and i["error"] not in ("no tuned artifact", "not asked")]
    return out


def save(out_dir, s):
    report.save_section(out_dir, "decoder", s, report.decoder_tables(s))


def main():
    ap = models.driver_args(__doc__)
    ap.add_argument("--no-tune", action="store_true", help="no tuned artifact (the untuned model only)")
    ap.add_argument("--reuse-tune", action="store_true",
                    help="use the artifact an earlier run tuned (build-bench/decoder/NAME.tuned.ait) where there is one")
    ap.add_argument("--phases", default="decode,prefill", help="the phases to run (decode, prefill or both)")
    ap.add_argument("--ait", default=os.path.join(ROOT, "build", "ait"), help="the ait that tunes")
    ap.add_argument("--quant", help="also an artifact tuned with --quant LIST (engine ait-quant)")
    ap.add_argument("--min-sqnr", help="the quantised tune's --min-sqnr (default: the candidates' own)")
    ap.add_argument("--lengths", help="only these lengths: decode past lengths and prefill token counts (e.g. 128,512)")
    ap.add_argument("--cache", action="store_true",
                    help="ait's engines bind each past/present pair as one key/value cache appended in place")
    ap.add_argument("--quant-art", default="quant",
                    help="with --reuse-tune: the quantised artifact is NAME.SUFFIX.ait (default quant)")
    ap.add_argument("--skip", default="", help="engines left out of every row: ait (untuned), torch")
    ap.add_argument("--tune-batches", default="1",
                    help="the tune's --batch-sizes (1,4: one artifact with a batch-4 plan of each phase too)")
    ap.add_argument("--command", default="bench/run --decoder")
    a = ap.parse_args()
    q = a.quick
    names = models.driver_models(a, "bench --decoder", MODELS + QUICK, QUICK if q else MODELS)
    if names is None:
        return
    batches = [int(b) for b in (a.batch or ("1" if q else "1,4")).split(",") if b]
    threads = [int(t) for t in (a.threads or "1").split(",") if t]
    if any(b < 1 for b in batches) or any(t < 1 for t in threads):
        sys.exit("bench --decoder: batch sizes and threads are >= 1")
    phases = [p for p in a.phases.split(",") if p]
    if any(p not in TARGET for p in phases):
        sys.exit("bench --decoder: --phases takes decode, prefill or both")
    skip = [e for e in a.skip.split(",") if e]
    if any(e not in ("ait", "torch") for e in skip):
        sys.exit("bench --decoder: --skip takes ait and torch")
    cases = [c for c in (QUICK_CASES if q else CASES) if c[0] in phases]
    if a.lengths:  # a shared machine's run in parts: decode past P, prefill S
        keep = {int(x) for x in a.lengths.split(",") if x}
        cases = [c for c in cases if (c[2] if c[0] == "decode" else c[1]) in keep]
    # the tune: both samples, batch 1, 1 thread, a short profile per candidate (batch 4 doubles a
    # tune that takes long already: its rows run the batch-1 plans, unless --tune-batches 1,4)
    tune_args = ["--batch-sizes", a.tune_batches, "--threads", "1", "--warmup", "2",
                 "--window", "5", "--cap", "10" if q else "15", "--timeout", str(TUNE_TIMEOUT)]
    scratch = os.path.dirname(os.path.abspath(a.models_dir))
    cfg = {"model_dir": a.models_dir, "work_dir": os.path.join(scratch, "work"), "bench_dir": BENCH,
           "art_dir": os.path.join(scratch, "decoder"), "cache_dir": os.path.join(scratch, "decoder", "cache"),
           "ait": a.ait, "ait_runner": os.path.join(a.bin_dir, "bench-ait-runner"), "timeout": 900,
           "warmup": 1, "round_s": 0.2 if q else 0.3, "row_s": 1.0 if q else 4,
           "min_rounds": 3 if q else 2, "max_rounds": 5 if q else 8,  # 2: a prefill run takes 10 s and more
           "quant": a.quant, "kv_cache": a.cache, "skip": skip}
    os.makedirs(cfg["cache_dir"], exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    try:
        cfg["coretype"] = limits.blas_info(a.bin_dir)["coretype"]
    except limits.LimitsError as e:
        sys.exit(f"bench --decoder: {e}")
    cfg["shapes"] = {n: shapes(a.models_dir, n) for n in names}
    t0 = time.time()
    s = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "command": a.command,
         "mode": "quick" if q else "full", "system": sysinfo.collect(ROOT, BENCH),
         "loadavg_start": sysinfo.loadavg(), "cpu_busy_start": sysinfo.cpu_busy(),
         "tune_args": None if a.no_tune else tune_args, "batches": batches, "threads": threads,
         "models": {n: {"vocab": int(v), "cache": [int(x) for x in c], "layers": int(nl),
                        "bytes": os.path.getsize(os.path.join(a.models_dir, n + ".onnx"))}
                    for n, (v, c, nl) in cfg["shapes"].items()},
         "cases": cases, "tol": TOL, "targets": TARGET,
         "settings": {k: cfg[k] for k in ("warmup", "round_s", "row_s", "min_rounds", "max_rounds")},
         "artifacts": {}, "rows": [], "quant": a.quant, "kv_cache": a.cache}
    log(f"bench --decoder: {s['system']['cpu_model']}, {s['system']['cores']} cores, load {s['loadavg_start']}, "
        f"other work {s['cpu_busy_start']}")
    arts, qarts = {}, {}
    quant_args = tune_args + ["--quant", a.quant] + (["--min-sqnr", a.min_sqnr] if a.min_sqnr else [])
    for name in names:
        arts[name] = qarts[name] = None
        qreuse = os.path.join(cfg["art_dir"], f"{name}.{a.quant_art}.ait")
        if a.quant and a.reuse_tune and os.path.exists(qreuse):
            s["artifacts"][name + " quant"] = {"ok": True, "reused": os.path.relpath(qreuse, ROOT), "tune_s": None}
            qarts[name] = qreuse
        elif a.quant and not a.no_tune:
            data = os.path.join(cfg["art_dir"], f"{name}.samples")
            tune_samples(data, cfg["shapes"][name])
            info = s["artifacts"][name + " quant"] = tuned.tune(cfg, name, "quant", "max-throughput", quant_args, data)
            info["loadavg"] = sysinfo.loadavg()
            log(f"  tune {name} --quant {a.quant}: {info['tune_s']:.0f} s" + ("" if info["ok"] else f", FAILED: {info['error']}"))
            qarts[name] = os.path.join(cfg["art_dir"], f"{name}.quant.ait") if info["ok"] else None
        reuse = os.path.join(cfg["art_dir"], f"{name}.tuned.ait")
        if a.reuse_tune and os.path.exists(reuse):
            s["artifacts"][name] = {"ok": True, "reused": os.path.relpath(reuse, ROOT), "tune_s": None}
            arts[name] = reuse
        elif not a.no_tune:
            data = os.path.join(cfg["art_dir"], f"{name}.samples")
            tune_samples(data, cfg["shapes"][name])
            info = s["artifacts"][name] = tuned.tune(cfg, name, "tuned", "max-throughput", tune_args, data)
            info["loadavg"] = sysinfo.loadavg()
            log(f"  tune {name}: {info['tune_s']:.0f} s" + ("" if info["ok"] else f", FAILED: {info['error']}"))
            arts[name] = os.path.join(cfg["art_dir"], f"{name}.tuned.ait") if info["ok"] else None
    for t in threads:  # cheap rows first (CASES), every model's
        for phase, new, past in cases:
            for b in batches:
                for name in names:
                    s["rows"].append(run_row(cfg, name, arts[name], phase, new, past, b, t, qarts[name]))
                    s["elapsed_s"] = round(time.time() - t0, 1)
                    s["loadavg_end"] = sysinfo.loadavg()
                    s["problems"] = problems(s)
                    save(a.out, s)
    s["cpu_busy_end"] = sysinfo.cpu_busy()
    s["problems"] = problems(s)
    save(a.out, s)
    log(f"bench --decoder: wrote {a.out}/RESULTS.md, results.json ({s['elapsed_s']:.0f} s)")
    for p in s["problems"]:
        log(f"bench --decoder: FAILED: {p}")
    sys.exit(1 if s["problems"] else 0)


if __name__ == "__main__":
    main()
