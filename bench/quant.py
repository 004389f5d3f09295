#!/usr/bin/python3
"""Driver of `bench/run --quant` (which installs, builds and exports first):
issue 14's peers, side by side in one run. Per model (mlp, bert, resnet18,
mobilenetv2), one thread:
  ait     `ait tune --quant V` (strategy max-throughput, batch sizes 1,8) for
          each variant V of VARIANTS (the CNNs: int8dq and int8, static with
          activation scales calibrated on the tuning sample, the variants
          native's Conv has), and the float32 tune (f32); the CNNs with the
          whole-plan check, the whole model as one module among its plans;
  ort     ONNX Runtime on the float model (f32), and on the model quantised
          as onnxruntime's tools do it (bench/ort_quant.py): mlp and bert
          dynamic int8 (quantize_dynamic), the CNNs static QDQ int8
          (quantize_static, activations calibrated min/max on the bench's
          batch-8 samples by ONNX Runtime itself); per-tensor weights (int8,
          the tools' default) and per-channel (int8pc);
  torch   PyTorch 1.13 eager float32, torch.ao.quantization.quantize_dynamic
          (int8) and autocast bfloat16 (bf16) (bench/torch_runner.py).
Per batch every engine's outputs are compared with the float32 reference
(PyTorch's outputs written at export): largest absolute error, SQNR, and
top-1 agreement for a [batch, classes] output; then interleaved rounds
(models.interleave). The target: ait int8 (int8dq) at most 0.8x ORT int8's
latency with an error no larger (max abs error and SQNR).
Adds the section "quant" (mlp, bert) and "quant_cnn" (resnet18, mobilenetv2)
to OUT/results.json and their sections to OUT/RESULTS.md
(bench/report.write_section; other sections, and the other family's when only
one ran, are kept).

usage: /usr/bin/python3 bench/quant.py --out DIR --models-dir DIR --bin-dir DIR
         [--models mlp,bert,resnet18,mobilenetv2] [--batch 1,8] [--command CMD] [--reuse]
         [--engines ait:f32,ait:int8dq,ort:f32,...] [--cpu]
--cpu times each run by its process CPU time (every thread; the runners' `cpu N`) instead of
wall clock: on a shared machine a run's wall time includes the time other processes held the core.
--engines runs only those engines (and ort:int8, the yardstick), tuning only their ait variants.
--reuse takes the artifacts an earlier run left in build-bench/quant instead of tuning.
Exits 1 on broken plumbing (a tune, quantisation or runner that fails);
never because ait is slower or less accurate."""
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
import tuned  # noqa: E402
from runner import Runner, RunnerError  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
MODELS = ("mlp", "bert", "resnet18", "mobilenetv2")
CNNS = ("resnet18", "mobilenetv2")
THREADS = 1
VARIANTS = ("int8dq", "bf16", "int8wo", "int4wo")
# short profiles and no whole-plan check: five tunes per model on a shared 2-core machine
TUNE_ARGS = ["--batch-sizes", "1,8", "--threads", str(THREADS), "--warmup", "2", "--window", "5",
             "--cap", "15", "--no-whole", "--no-plan-check", "--no-cache"]
# the CNNs: the whole-plan check, with the `whole` candidate (the model as one module) beside the
# per-module plan, so that a plan wins by the whole model's time: resnet18 per module spent 11% of
# its int8 time changing layouts between modules and ran its stem float, where the whole model on
# native int8 keeps uint8 NHWC throughout (bench/RESULTS.md, q8cnn4 and q8cnn5); the whole-model
# candidates at batch 8 take over 60 s on a loaded machine
CNN_TUNE_ARGS = [a for a in TUNE_ARGS if a not in ("--no-whole", "--no-plan-check")] + ["--timeout", "300"]


def tune_args_of(name):
    return CNN_TUNE_ARGS if name in CNNS else TUNE_ARGS
# interleaving order: ait first, then the peers
ENGINES = (["ait:f32"] + [f"ait:{v}" for v in VARIANTS] +
           ["ort:f32", "ort:int8", "ort:int8pc", "torch:f32", "torch:int8", "torch:bf16"])
CNN_VARIANTS = ("int8dq", "int8")
CNN_ENGINES = ("ait:f32", "ait:int8dq", "ait:int8", "ort:f32", "ort:int8", "ort:int8pc", "torch:f32")


# --engines: the engines asked for (ort:int8, the yardstick, always), None for all
ONLY = None


def engines_of(name):
    es = CNN_ENGINES if name in CNNS else ENGINES
    return tuple(e for e in es if ONLY is None or e in ONLY or e == "ort:int8")


def variants_of(name):
    vs = CNN_VARIANTS if name in CNNS else VARIANTS
    return tuple(v for v in vs if f"ait:{v}" in engines_of(name))
TARGET = 0.8  # ait int8 / ORT int8 latency


def log(msg):
    print(msg, flush=True)


def errors(got, ref):
    """Per output both have: max abs error, SQNR dB, top-1 agreement of a [batch, classes] output;
    the worst over the outputs (None when an output is missing or its shape differs)."""
    worst = {"max_abs": 0.0, "sqnr_db": float("inf"), "top1": None}
    for name, w in ref.items():
        g = got.get(name)
        if g is None or g.shape != w.shape:
            return None
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        noise = float(((w64 - g64) ** 2).sum())
        sq = float("inf") if noise == 0 else 10 * np.log10(float((w64 ** 2).sum()) / noise)
        worst["max_abs"] = max(worst["max_abs"], float(np.abs(w64 - g64).max()) if w.size else 0.0)
        worst["sqnr_db"] = min(worst["sqnr_db"], sq)
        if w.ndim == 2 and w.shape[1] >= 2:
            agree = float((w.argmax(1) == g.argmax(1)).mean())
            worst["top1"] = agree if worst["top1"] is None else min(worst["top1"], agree)
    return worst


def calibrate(cfg, name):
    """Each activation's (min, max) that ort_quant.quantise_static quantises, from ONNX Runtime
    running the float model on the bench's batch-8 samples with those activations as outputs."""
    m = onnx.load(os.path.join(cfg["model_dir"], name + ".onnx"))
    ort_quant.fold_activations(m)
    names = ort_quant.activations(m)
    path = os.path.join(cfg["art_dir"], f"{name}.ort-calib.onnx")
    onnx.save(ort_quant.with_outputs(onnx.load(os.path.join(cfg["model_dir"], name + ".onnx")), names), path)
    work = os.path.join(cfg["work_dir"], f"calib.{name}")
    indir, _ = models.prepare_case(os.path.join(cfg["model_dir"], f"{name}.bench.b8"), work)
    r = Runner("ort:calib", ["node", os.path.join(BENCH, "ort_runner.js"), path, indir, str(THREADS)],
               models.engine_env("ort", cfg, THREADS), cfg["timeout"])
    odir = os.path.join(work, "out")
    os.makedirs(odir)
    try:
        r.outputs(odir)
    finally:
        r.close()
    o = models.load_dir(odir)
    ranges = {n: (float(o[f"cal{k}"].min()), float(o[f"cal{k}"].max())) for k, n in enumerate(names)}
    shutil.rmtree(work, ignore_errors=True)
    os.remove(path)
    return ranges


def quantise_ort(cfg, name):
    """NAME.ort-int8.onnx and NAME.ort-int8pc.onnx beside the model (dynamic; the CNNs static,
    calibrated); their records."""
    out = {}
    ranges = calibrate(cfg, name) if name in CNNS else None
    for label, pc in (("int8", False), ("int8pc", True)):
        path = os.path.join(cfg["art_dir"], f"{name}.ort-{label}.onnx")
        m = onnx.load(os.path.join(cfg["model_dir"], name + ".onnx"))
        if ranges is None:
            n = ort_quant.quantise(m, per_channel=pc)
        else:
            ort_quant.fold_activations(m)
            n = ort_quant.quantise_static(m, ranges, per_channel=pc)
        onnx.save(m, path)
        out[label] = {"path": path, "quantised": n, "bytes": os.path.getsize(path),
                      "kind": "dynamic" if ranges is None else "static"}
    return out


def quantised_of(tuning):
    """Per bucket ("1", "8"): how many modules of a tune's JSON chose a quantised candidate, or
    "whole model on CANDIDATE" where the plan is the whole model as one module."""
    out, whole = {}, {}
    for m in tuning.get("modules", []):
        b = str(m["batch"])
        if m.get("whole"):
            if m.get("chosen"):
                whole[b] = f"whole model on {m['chosen']}"
            continue
        q = any(c["chosen"] and c["variant"] in VARIANTS + CNN_VARIANTS + ("int4wo-64", "int4wo-128")
                for c in m["candidates"])
        out[b] = out.get(b, 0) + q
    out.update(whole)
    return out


def tune_all(cfg, name):
    """The ait artifacts: f32 and one per variant; each record with the tune's end-to-end
    accuracy figures and how many modules run quantised."""
    arts = {}
    for v in (("f32",) if "ait:f32" in engines_of(name) else ()) + variants_of(name):
        args = tune_args_of(name) + ([] if v == "f32" else ["--quant", v])
        path = os.path.join(cfg["art_dir"], f"{name}.q-{v}.ait")
        if cfg.get("reuse") and os.path.exists(path):  # --reuse: the artifact of an earlier run
            a = arts[v] = {"path": os.path.relpath(path, ROOT), "ok": True, "error": None,
                           "tune_s": 0, "reused": True, "bytes": os.path.getsize(path)}
        else:
            a = arts[v] = tuned.tune(cfg, name, f"q-{v}", "max-throughput", args)
        if a["ok"]:
            show = subprocess.run([cfg["ait"], "show", os.path.join(ROOT, a["path"]), "--json"],
                                  capture_output=True, text=True, timeout=600)
            tun = json.loads(show.stdout).get("tuning") or {}
            a["accuracy"] = tun.get("accuracy")
            a["quantised"] = quantised_of(tun)
            a["modules"] = len({m["path"] for m in tun.get("modules", []) if not m.get("whole")})
            a.pop("trials", None)  # every candidate of every module: in the artifact already
        log(f"  tune {name} {v}: " + (f"{a['tune_s']:.0f} s, {a['bytes'] / 1e6:.1f} MB, quantised modules "
                                      f"{a.get('quantised')}" if a["ok"] else f"FAILED: {a['error']}"))
    return arts


def argv_for(cfg, engine, name, indir, arts, ort):
    kind, v = engine.split(":")
    if kind == "ait":
        return [cfg["ait_runner"], os.path.join(ROOT, arts[v]["path"]), indir, str(THREADS)]
    if kind == "ort":
        model = os.path.join(cfg["model_dir"], name + ".onnx") if v == "f32" else ort[v]["path"]
        return ["node", os.path.join(BENCH, "ort_runner.js"), model, indir, str(THREADS)]
    return ["/usr/bin/python3", os.path.join(BENCH, "torch_runner.py"), name, indir, str(THREADS), v]


def open_checked(cfg, label, argv, kind, work, ref, info):
    """A runner for engine `label` (argv, the environment of engine kind) whose outputs were
    written under work and compared with the reference ref (errors() into info, ok set); (runner,
    outputs), or (None, None) with info["error"] said."""
    try:
        r = Runner(label, argv, models.engine_env(kind, cfg, THREADS), cfg["timeout"])
        odir = os.path.join(work, "out." + label.replace(":", "."))
        os.makedirs(odir)
        r.outputs(odir)
        outs = models.load_dir(odir)
        err = errors(outs, ref)
        if err is None:
            info["error"] = "outputs missing or of another shape than the reference's"
            r.close()
            return None, None
        info.update(err, ok=True)
        return r, outs
    except RunnerError as err:
        info["error"] = str(err)
        return None, None


def run_case(cfg, name, batch, arts, ort):
    tag = f"b{batch}"
    work = os.path.join(cfg["work_dir"], f"quant.{name}.{tag}")
    indir, ref = models.prepare_case(os.path.join(cfg["model_dir"], f"{name}.bench.{tag}"), work)
    row = {"name": name, "batch": batch, "engines": {}, "loadavg": sysinfo.loadavg()}
    runners = {}
    for e in engines_of(name):
        info = row["engines"][e] = {"ok": False, "error": None}
        kind, v = e.split(":")
        if kind == "ait" and not arts[v]["ok"]:
            info["error"] = f"no artifact: {arts[v]['error']}"
            continue
        r, _ = open_checked(cfg, e, argv_for(cfg, e, name, indir, arts, ort),
                            "torch" if kind == "torch" else kind, work, ref, info)
        if r:
            runners[e] = r
    models.time_and_close(cfg, runners, row["engines"])
    shutil.rmtree(work, ignore_errors=True)
    ort8 = row["engines"]["ort:int8"]
    for e, info in row["engines"].items():
        if "median_ms" in info and "median_ms" in ort8:
            info["vs_ort_int8"] = info["median_ms"] / ort8["median_ms"]
    log(f"  {name} b{batch}: " + ", ".join(
        f"{e} {i['median_ms']:.3f} ms {i['sqnr_db']:.1f} dB" if "median_ms" in i else f"{e} FAILED"
        for e, i in row["engines"].items()))
    return row


def verdict(row, art, v="int8dq"):
    """The target of the row: ait int8 variant v (its artifact's record art) against ORT int8
    (per-tensor, quantize_dynamic's default)."""
    a, o = row["engines"][f"ait:{v}"], row["engines"]["ort:int8"]
    if "median_ms" not in a or "median_ms" not in o:
        return "not measured"
    if not (art.get("quantised") or {}).get(str(row["batch"])):
        return (f"{a['median_ms'] / o['median_ms']:.2f}x ORT int8, but the {v} tune kept every "
                f"module on float32 (its {v} candidates were slower), so this row is ait float32 "
                "against ORT int8: target missed")
    r = a["median_ms"] / o["median_ms"]
    fast = r <= TARGET
    acc = a["max_abs"] <= o["max_abs"] and a["sqnr_db"] >= o["sqnr_db"]
    return (f"{r:.2f}x ORT int8: latency target (<= {TARGET}x) {'met' if fast else 'missed'}; "
            f"error {'no larger' if acc else 'LARGER'} (max abs {a['max_abs']:.3g} vs {o['max_abs']:.3g}, "
            f"SQNR {a['sqnr_db']:.1f} vs {o['sqnr_db']:.1f} dB)")


def engine_label(q, row, e):
    """Engine e's name in row's table; an ait variant whose tune put no module on the variant at
    the row's batch says so (its row is then a float32 plan, not the variant's figures)."""
    v = e[len("ait:"):] if e.startswith("ait:") else None
    art = q["artifacts"].get(row["name"], {}).get(v) if v and v != "f32" else None
    if art and art.get("ok") and art.get("quantised") is not None \
            and not art["quantised"].get(str(row["batch"])):
        return f"{e} (float32 plan: no module on {v})"
    return e


def fmt(v, f):
    return "-" if v is None else ("inf" if v == float("inf") else f.format(v))


# results.json key and RESULTS.md title per family: a run of one family leaves the other's section
SECTIONS = {"quant": "## Quantised models against ONNX Runtime int8 and PyTorch int8 (issue 14)",
            "quant_cnn": "## Quantised CNNs against ONNX Runtime static int8 (issue 14)"}


def family(name):
    return "quant_cnn" if name in CNNS else "quant"


def split(q, folder):
    """q's records per family (SECTIONS' keys) of the models it ran, each after the rows an
    earlier run left in folder/results.json for the family's other models (with their own date,
    command and load: `kept` names them)."""
    try:
        with open(os.path.join(folder, "results.json")) as f:
            old = json.load(f)
    except (OSError, ValueError):
        old = {}
    out = {}
    for name in q["artifacts"]:
        key = family(name)
        if key not in out:
            out[key] = f = dict(q, artifacts={}, ort={}, rows=[], kept=[])
            prev = old.get(key) or {}
            for other, arts in (prev.get("artifacts") or {}).items():
                if other in q["artifacts"] or family(other) != key:
                    continue
                f["artifacts"][other] = arts
                f["ort"][other] = prev["ort"][other]
                f["rows"] += [r for r in prev.get("rows", []) if r["name"] == other]
                f["kept"].append({"name": other, "date": prev.get("date"), "command": prev.get("command")})
        f = out[key]
        f["artifacts"][name] = q["artifacts"][name]
        f["ort"][name] = q["ort"][name]
        f["rows"] += [r for r in q["rows"] if r["name"] == name]
    return out


def section(q, key="quant"):
    lines = [SECTIONS[key], "",
             f"{q['date']}, `{q['command']}` ({q['elapsed_s']:.0f} s), one thread, load average "
             f"{q['loadavg_start']} at the start and {q['loadavg_end']} at the end (a shared 2-core "
             "machine: ratios from interleaved rounds in one run, not absolute times)" +
             ("; each run timed by its process CPU time (`--cpu`), not wall clock." if q.get("clock") == "cpu"
              else "."), "",
             "ait: `ait tune MODEL --data MODEL.bench.b1.in.npz " + " ".join(TUNE_ARGS) +
             " --strategy max-throughput --quant V` per variant (f32: no --quant; resnet18 and "
             "mobilenetv2: `" + " ".join(CNN_TUNE_ARGS) + "`, with the whole-plan check and the "
             "whole model as one module among its plans); the plan "
             "may keep a module on float32 where that is faster. ORT int8: the model quantised "
             "as onnxruntime's `quantize_dynamic` does (DynamicQuantizeLinear + MatMulInteger + "
             "scale Mul, symmetric int8 weights, per-tensor; int8pc per-channel; "
             "bench/ort_quant.py, which also quantises Gemm, left float by the tool); for "
             "resnet18 and mobilenetv2 static QDQ as `quantize_static` builds it (uint8 "
             "activations calibrated min/max on the batch-8 bench samples by ONNX Runtime, "
             "int8 weights, int32 biases, Relu/Clip after Conv or Add folded into the range; "
             "ait's int8dq Convs quantise each pixel row at run time instead (depthwise float32), "
             "its int8 Convs, depthwise ones too, each input at one scale calibrated min/max on "
             "the tuning sample, uint8 from one Conv to the next inside a module, float32 "
             "between modules and around other ops). PyTorch: "
             "`torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, qint8)` and autocast "
             "bfloat16 (the CNNs: float32 only, quantize_dynamic has no Conv). Error: against PyTorch's float32 outputs, the worst output: largest "
             "absolute error, SQNR, top-1 agreement of a [batch, classes] output.", ""]
    for k in q.get("kept", []):
        lines += [f"The rows of {k['name']} are from an earlier run ({k['date']}, `{k['command']}`).", ""]
    for name, arts in q["artifacts"].items():
        lines.append(f"ait artifacts of {name}: " + "; ".join(
            f"{v}: {a['bytes'] / 1e6:.2f} MB, {a.get('quantised')} of {a.get('modules')} modules quantised"
            if a["ok"] else f"{v}: FAILED ({a['error']})" for v, a in arts.items()) + ". ORT int8 models: " +
            "; ".join(f"{k}: {o.get('kind', 'dynamic')}, {o['quantised']} "
                      f"{'Conv/Gemm' if name in CNNS else 'MatMul/Gemm'}, {o['bytes'] / 1e6:.2f} MB"
                      for k, o in q["ort"][name].items()) + ".")
        lines.append("")
    for row in q["rows"]:
        lines += [f"### {row['name']}, batch {row['batch']} (load {row['loadavg']})", "",
                  "| engine | median " + ("CPU " if q.get("clock") == "cpu" else "") + "ms | / ORT int8 | max abs err | SQNR dB | top-1 agreement |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for e, i in row["engines"].items():
            if not i["ok"]:
                lines.append(f"| {e} | failed: {i['error']} | | | | |")
                continue
            lines.append(f"| {engine_label(q, row, e)} | {fmt(i.get('median_ms'), '{:.3f}')} | {fmt(i.get('vs_ort_int8'), '{:.2f}x')} | "
                         f"{fmt(i['max_abs'], '{:.3g}')} | {fmt(i['sqnr_db'], '{:.1f}')} | "
                         f"{fmt(None if i['top1'] is None else i['top1'] * 100, '{:.1f}%')} |")
        lines.append("")
        for v in (x for x in variants_of(row["name"]) if x.startswith("int8")):
            lines += [f"ait {v}: {verdict(row, q['artifacts'][row['name']][v], v)}.", ""]
    return lines


def main():
    global ONLY
    a, names, batches = models.batch_driver_args("bench --quant", MODELS, "bench/run --quant", reuse=True,
                                                 engines=sorted(set(ENGINES) | set(CNN_ENGINES)), cpu=True)
    ONLY = set(a.engines)
    cfg = models.driver_cfg("bench --quant", a.models_dir, a.bin_dir, "quant",
                            os.path.join(ROOT, "build", "ait"), warmup=3, round_s=0.2, row_s=8,
                            min_rounds=3, max_rounds=10, reuse=a.reuse, cmd="cpu" if a.cpu else "time")
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    q = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "command": a.command,
         "system": sysinfo.collect(ROOT, BENCH), "loadavg_start": sysinfo.loadavg(), "threads": THREADS,
         "clock": "cpu" if a.cpu else "wall", "tune_args": TUNE_ARGS, "cnn_tune_args": CNN_TUNE_ARGS, "artifacts": {}, "ort": {}, "rows": []}
    log(f"bench --quant: load {q['loadavg_start']}")
    problems = []
    for name in names:
        q["ort"][name] = quantise_ort(cfg, name)
        arts = q["artifacts"][name] = tune_all(cfg, name)
        problems += [f"tune {name} {v}: {x['error']}" for v, x in arts.items() if not x["ok"]]
        for b in batches:
            row = run_case(cfg, name, b, arts, q["ort"][name])
            q["rows"].append(row)
            problems += [f"{name} b{b} {e}: {i['error']}" for e, i in row["engines"].items()
                         if not i["ok"] and e != "torch:bf16"]
    models.driver_finish(a.out, "quant", "bench --quant", q, section, problems, t0, split)


if __name__ == "__main__":
    main()
