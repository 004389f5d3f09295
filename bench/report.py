#!/usr/bin/python3
"""RESULTS.md from a bench run's results (the dict bench.py writes as
results.json). Every figure comes from that dict.

usage: /usr/bin/python3 bench/report.py DIR   (rewrites DIR/RESULTS.md and
DIR/chart.svg from DIR/results.json, measuring nothing)"""
import json
import os
import sys

ENGINE_NAMES = {"ait": "ait", "native": "native", "ort": "ORT", "torch": "PyTorch", "openblas": "OpenBLAS", "onednn": "oneDNN"}


def ms(info):
    if "median_ms" not in info:
        return "—"
    return f"{info['median_ms']:.3g} ({info['min_ms']:.3g}–{info['max_ms']:.3g})"


def peak_of(res, threads):
    vals = [p["gflops"] for p in res["peak"] if p["threads"] == threads]
    return max(vals) if vals else None


def bandwidth_of(res, threads):
    vals = [s["gbs"] for s in res["stream"] if s["threads"] == threads and s["kernel"] == "triad"]
    return max(vals) if vals else None


def machine(res):
    s, ob = res["system"], res["openblas"]
    load = f"{res['loadavg_start']} at the start, {res['loadavg_end']} at the end (the bench's own load included)"
    busy_s = " / ".join("not measured" if res.get(k) is None else f"{100 * res[k]:.0f}%"
                        for k in ("cpu_busy_start", "cpu_busy_end"))
    return [
        "## Machine and versions", "",
        "| | |", "| --- | --- |",
        f"| CPU | {s['cpu_model']}, {s['cores']} cores |",
        f"| SIMD flags | {' '.join(s['simd_flags'])} |",
        f"| load average (1, 5, 15 min) | {load} |",
        f"| CPUs busy with other work, 2 s before / after | {busy_s} |",
        f"| kernel | {s['kernel']} |",
        f"| compiler | {s['gcc']} |",
        f"| ait | git {s['ait_git']}, reference backend (plain C kernels, src/ops/) |",
        f"| ONNX Runtime | onnxruntime-node {s['onnxruntime_node']} (node {s['node']}) |",
        f"| PyTorch | {s['torch']} (Debian python3-torch), numpy {s['numpy']}, {s['torch_onednn']} |",
        f"| OpenBLAS | {ob['config']} (Debian {s['openblas_pkg']}) |",
        f"| OpenBLAS core | detects `{ob['detected']}`; run with `OPENBLAS_CORETYPE={ob['coretype']}` "
        f"→ `{ob['used']}` |",
        f"| oneDNN | {ob['onednn']} (Debian libdnnl2 {s['onednn_pkg']}) |",
        "",
        "The full CPU flag list is in results.json (`system.flags`). Other work sharing the machine slows "
        "every engine; all engines of a row were measured in the same interleaved rounds, so ratios "
        "suffer less from it than absolute times.", ""]


def limits(res):
    out = ["## Limits of this machine", "",
           "Peak: a register-only loop of 12 independent FMA chains per thread (`bench/c/peak.c`; "
           "the ISA chosen at run time with `__builtin_cpu_supports`; `plain` is portable C "
           "multiply-add). Bandwidth: STREAM-like copy and triad over arrays of "
           f"{res['stream'][0]['mib_per_array']:.0f} MiB (`bench/c/stream.c`), best of the repetitions.", "",
           "| ISA | threads | peak GFLOP/s | per thread |", "| --- | --- | --- | --- |"]
    out += [f"| {p['isa']} | {p['threads']} | {p['gflops']:.1f} | {p['gflops'] / p['threads']:.1f} |"
            for p in res["peak"]]
    out += ["", "| kernel | threads | GB/s |", "| --- | --- | --- |"]
    out += [f"| {s['kernel']} | {s['threads']} | {s['gbs']:.1f} |" for s in res["stream"]]
    return out + [""]


def model_tables(res):
    st = res["settings"]
    out = ["## Models: ait against ONNX Runtime and PyTorch", "",
           "Latency in ms: median (min–max) of all timed runs. Each row: the three engines loaded the same "
           "inputs (`NAME.bench.CASE.in.npz` from `tools/export_models.py --bench`), their outputs were "
           "checked against PyTorch's reference outputs and ait's against each peer's (max |diff| / max "
           "|ref| ≤ 1e-4) before any timing; then "
           f"{st['warmup']} warm-up runs each, then {st['min_rounds']}–{st['max_rounds']} interleaved rounds "
           f"(ait, ORT, PyTorch, ait, ...), each a batch of runs lasting about {st['round_s']} s per "
           "engine. Ratio = ait median / peer median (below 1: ait faster). A failed check leaves the "
           "ratio empty and the last column says why.", "",
           "ONNX Runtime: graph optimisation level `all`, intra-op threads = threads, inter-op threads 1, "
           f"sequential. PyTorch: eager, `torch.inference_mode()`, `torch.set_num_threads`, "
           f"`OMP_NUM_THREADS` and `OPENBLAS_NUM_THREADS` = threads, "
           f"`OPENBLAS_CORETYPE={res['openblas']['coretype']}`, and **`OMP_WAIT_POLICY=PASSIVE` at 2 threads** "
           "(its OpenMP workers otherwise spin and steal the cores from the other engines between runs).", "",
           "| model | case | threads | ait ms | ORT ms | PyTorch ms | ait/ORT | ait/PyTorch | max rel. error "
           "ait, ORT, PyTorch | note |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in res["models"]:
        e, v = r["engines"], r["ait_vs"]
        errs = ", ".join(f"{e[k]['rel_err']:.1e}" if "rel_err" in e[k] else "—" for k in ("ait", "ort", "torch"))
        ratio = [f"**{v[p]['ratio']:.2f}**" if v[p]["ratio"] else "—" for p in ("ort", "torch")]
        why = "; ".join(x for x in (v["ort"]["why"], v["torch"]["why"]) if x)
        why = why.replace("|", "/")
        out.append(f"| {r['name']} | {r['case']} | {r['threads']} | {ms(e['ait'])} | {ms(e['ort'])} | "
                   f"{ms(e['torch'])} | {ratio[0]} | {ratio[1]} | {errs} | {why} |")
    return out + [""]


def gemm_cell(g, peak):
    if not g:
        return "—"
    if "skipped" in g:
        return f"skipped: {g['skipped']}"
    pct = f" ({100 * g['gflops'] / peak:.0f}%)" if peak else ""
    return f"{g['gflops']:.1f}{pct}"


ENGINES_GEMM = ("ait", "native", "openblas", "onednn")


def gemm_tables(res):
    gem = res["gemm"]
    idx = {(g["layout"], g["m"], g["n"], g["k"], g["threads"], g["engine"]): g for g in gem}
    out = ["## GEMM sweep", "",
           "C[M,N] = A[M,K]·B in float32, GFLOP/s (and % of the peak of the same thread count, best ISA). "
           "**ait** runs through its public API on a one-node model written by `bench/gemm_models.py` "
           "(layout KxN: `MatMul` with B an initializer; layout NxK: `Gemm transB=1`, as `nn.Linear` "
           "exports), so it includes ait's per-run overheads; **OpenBLAS** `cblas_sgemm` and **oneDNN** "
           "`dnnl_sgemm` run on the same A and B (`bench/c/gemm.c`); **native** is ait's own GEMM "
           "(`src/kernels/gemm.h`) called directly with B packed once, as the native backend packs weights. Engines are interleaved per shape; "
           "every engine's C is checked against OpenBLAS's (≤ 1e-4) first. `OMP_WAIT_POLICY=PASSIVE` is set "
           "for this program (oneDNN uses OpenMP). Each engine gets about "
           f"{res['settings']['gemm_budget_s']} s per shape (at least one timed run after one warm-up run); "
           f"a shape whose single run is predicted over {res['settings']['gemm_cap_s']} s is skipped and says "
           "so.", ""]
    threads = sorted({g["threads"] for g in gem})
    nbig = max(g["n"] for g in gem) if gem else 0
    for t in threads:
        peak, bw = peak_of(res, t), bandwidth_of(res, t)
        for lay, title in (("kn", "B as KxN (MatMul)"), ("nk", "B as NxK, transposed (Gemm transB=1)")):
            ms_ = sorted({g["m"] for g in gem if g["layout"] == lay and g["threads"] == t and g["n"] == nbig
                          and g["k"] == nbig})
            if not ms_:
                continue
            out += [f"### {title}, N = K = {nbig}, {t} thread(s); peak {peak:.0f} GFLOP/s", "",
                    "| M | ait | native | OpenBLAS | oneDNN | ait time / OpenBLAS | ait time / oneDNN | "
                    "native time / OpenBLAS | native time / oneDNN |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
            for m in ms_:
                gs = [idx.get((lay, m, nbig, nbig, t, e)) for e in ENGINES_GEMM]
                out.append(f"| {m} | " + " | ".join(gemm_cell(g, peak) for g in gs) + " | " +
                           " | ".join(ratio(x, o) for x in gs[:2] for o in gs[2:]) + " |")
            out += ["", f"Skinny rows (M ≤ 16) as GB/s of weight (B) traffic, against the measured "
                        f"triad bandwidth at {t} thread(s), {bw:.1f} GB/s:", "",
                    "| M | ait GB/s | native GB/s | OpenBLAS GB/s | oneDNN GB/s |",
                    "| --- | --- | --- | --- | --- |"]
            for m in ms_:
                if m > 16:
                    continue
                gs = [idx.get((lay, m, nbig, nbig, t, e)) for e in ENGINES_GEMM]
                out.append(f"| {m} | " + " | ".join(
                    f"{g['weight_gbs']:.1f} ({100 * g['weight_gbs'] / bw:.0f}%)" if g and "weight_gbs" in g
                    else "—" for g in gs) + " |")
            out.append("")
        sq = sorted({g["m"] for g in gem if g["layout"] == "kn" and g["threads"] == t
                     and g["m"] == g["n"] == g["k"]})
        if sq:
            out += [f"### Squares M = N = K, B as KxN, {t} thread(s)", "",
                    "| size | ait | native | OpenBLAS | oneDNN | ait time / OpenBLAS | ait time / oneDNN | "
                    "native time / OpenBLAS | native time / oneDNN |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
            for sz in sq:
                gs = [idx.get(("kn", sz, sz, sz, t, e)) for e in ENGINES_GEMM]
                out.append(f"| {sz} | " + " | ".join(gemm_cell(g, peak) for g in gs) + " | " +
                           " | ".join(ratio(x, o) for x in gs[:2] for o in gs[2:]) + " |")
            out.append("")
    return out


def ratio(a, o):
    if a and o and "median_ms" in a and "median_ms" in o:
        return f"{a['median_ms'] / o['median_ms']:.1f}"
    return "—"


def med(info):
    return f"{info['median_ms']:.3g}" if "median_ms" in info else "—"


def pmed(info):
    """A tuned-section time: the median over processes when there are several."""
    v = info.get("process_median_ms", info.get("median_ms"))
    return f"{v:.3g}" if v is not None else "—"


def backends_cell(counts):
    return ", ".join(f"{k}×{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) or "—"


def tuned_tables(t):
    """The section bench/tuned.py (`bench/run --tuned`) adds: issue 5's done-when as numbers."""
    s = t["system"]
    busy = " / ".join("not measured" if t.get(k) is None else f"{100 * t[k]:.0f}%"
                      for k in ("cpu_busy_start", "cpu_busy_end"))
    st = t["settings"]
    out = ["## Tuned artifacts against single backends (issue 5)", "",
           f"Written by `{t['command']}` on {t['date']} in {t['elapsed_s'] / 60:.1f} min, on {s['cpu_model']} "
           f"({s['cores']} cores), ait git {s['ait_git']}, {t['threads']} thread; load average "
           f"{t['loadavg_start']} at the start, {t['loadavg_end']} at the end; CPUs busy with other work 2 s "
           f"before / after: {busy} (raw data: `tuned` in [results.json](results.json)). "
           "This section is measured separately from the rest of this file; a full `bench/run` keeps it.", "",
           "Per model, `ait tune MODEL.onnx --data MODEL.bench.b1.in.npz " + " ".join(t["tune_args"]) +
           " --strategy S -o ...` makes three artifacts: **tuned** (`max-throughput`: the best candidate per "
           "module and batch bucket, so modules may mix backends; the reference baseline stays unless a "
           "candidate beats it by 1%), **oneDNN-only** (`only:onednn`) and **OpenBLAS-only** (`only:openblas`): "
           "every module on that backend's fastest valid candidate wherever the backend runs it, even where the "
           "reference is faster, which is the model on that backend alone (ops a backend lacks run on the "
           "reference inside its modules, and a module it runs none of stays on the reference). **reference** "
           "is the untuned model. Each runs in its own `bench-ait-runner` process (ONNX Runtime in "
           "`ort_runner.js`) on the inputs and reference outputs of `bench/run`; outputs are checked against "
           "PyTorch's (max |diff| / max |ref| ≤ 1e-4) before any timing, a wrong answer gets no time; then "
           f"{st['warmup']} warm-up runs each and {st['min_rounds']}–{st['max_rounds']} **interleaved** rounds "
           f"(tuned, oneDNN-only, OpenBLAS-only, reference, ORT, tuned, ...) of about {st['round_s']} s per "
           "engine. **ms** columns: the median over processes of each process's median: the long interleaved "
           f"process and the {t['first_procs']} fresh ones below (each process's median is in results.json). "
           "On this virtual machine a process keeps its memory placement, and the machine its load, for "
           "seconds at a time, which moves a process's median by up to 12% (tuned-notes.md), so **tuned / best, "
           f"paired** is the figure the done-when (≤ 1.03) is judged on: {t.get('pair_procs', '—')} to "
           f"{t.get('pair_procs_max', '—')} processes "
           "each load the tuned artifact and the best single backend by the ms columns (and any other within "
           f"{t.get('pair_within', '—')}× of it) and alternate them run by run, the order of loading rotated "
           f"from process to process, for about {t.get('pair_s', '—')} s; per process the ratio of the two "
           "medians; the median over processes, with its distribution-free 95% interval (more processes, 4 at "
           f"a time, while that interval is wider than ±{100 * t.get('pair_half_width', 0):.1f}%); the best is "
           "the single backend with the lowest median in these processes. **tuned / best, processes** divides the ms "
           "columns instead; \"same plan\" marks a row where the tuned artifact's plan for the bucket is the best "
           "single backend's, so the two are one program. **first run** = the first `time 1` of a fresh "
           f"process right after it loaded the artifact / the median of its next {t['first_steady']} runs; "
           f"{t['first_procs']} fresh processes per artifact and batch, interleaved; median over them (and max) "
           "(done-when: ≤ 1.10). **backends** = the backend each tuned module's plan uses in this batch bucket, "
           "counted over the artifact's modules (`ait show NAME.ait --json`: modules[].plans[].backend). "
           "Analysis: [tuned-notes.md](tuned-notes.md).", "",
           "| model | batch | tuned ms | oneDNN-only ms | OpenBLAS-only ms | reference ms | tuned / best, paired "
           "(best; 95% interval, processes) | tuned / best, processes | first run tuned: median (max) | tuned artifact's backends | "
           "mixed? | ORT ms | tuned/ORT | note |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in t["rows"]:
        e = r["engines"]
        art = t["artifacts"][r["name"]]["tuned"]
        counts = art.get("backends", {}).get(str(r["batch"]), {})
        mixed = ("**yes**" if len(counts) > 1 else "no") if counts else "—"
        pr = r.get("paired")
        pb = (f"**{r['tuned_vs_best_paired']:.3f}** ({pr['best']}; {pr['ratio_ci'][pr['best']][0]:.3f}–"
              f"{pr['ratio_ci'][pr['best']][1]:.3f}, {len(pr['procs'])} proc.)" + "".join(
                  f"; {x}: {pr['ratio'][x]:.3f}" for x in pr["singles"] if x != pr["best"])
              if "tuned_vs_best_paired" in r else r.get("paired_error", "—").replace("|", "/"))
        tb = (f"{r['tuned_vs_best']:.3f} ({r['best_single']}"
              f"{', same plan' if r.get('same_plan_as_best') else ''})" if "tuned_vs_best" in r else "—")
        fr = (f"{e['tuned']['first_ratio_median']:.2f} ({e['tuned']['first_ratio_max']:.2f})"
              if "first_ratio_median" in e["tuned"] else "—")
        to = f"{r['tuned_vs_ort']:.2f}" if "tuned_vs_ort" in r else "—"
        note = "; ".join(f"{k}: {v['error']}" for k, v in e.items() if v.get("error")).replace("|", "/")
        out.append(f"| {r['name']} | {r['batch']} | {pmed(e['tuned'])} | {pmed(e['onednn'])} | "
                   f"{pmed(e['openblas'])} | {pmed(e['reference'])} | {pb} | {tb} | {fr} | "
                   f"{backends_cell(counts)} | {mixed} | {pmed(e['ort'])} | {to} | {note} |")
    key = "tuned_vs_best_paired"
    rows = [r for r in t["rows"] if key in r]
    if rows:
        worst = max(rows, key=lambda r: r[key])
        over = [f"{r['name']} b{r['batch']} ({r[key]:.3f})" for r in rows if r[key] > 1.03]
        frs = [(r["engines"]["tuned"]["first_ratio_max"], r) for r in t["rows"]
               if "first_ratio_max" in r["engines"]["tuned"]]
        mixes = [f"{n} b{b}" for n, arts in t["artifacts"].items() if arts["tuned"].get("ok")
                 for b, m in arts["tuned"]["mixed"].items() if m]
        out += ["", f"Worst tuned / best, paired: {worst[key]:.3f} ({worst['name']} b{worst['batch']}); "
                f"rows over 1.03: {', '.join(over) or 'none'}. Tuned artifacts that mix backends across modules: "
                f"{', '.join(mixes) or 'none'}." + (
                    f" Worst first run (any fresh process of a tuned artifact): {max(frs, key=lambda x: x[0])[0]:.2f} "
                    f"({max(frs, key=lambda x: x[0])[1]['name']} b{max(frs, key=lambda x: x[0])[1]['batch']})."
                    if frs else "")]
    out += ["", "First run of every artifact (median (max) of the fresh processes), load time of the "
            "interleaved runner (s) and max relative error against PyTorch:", "",
            "| model | batch | tuned | oneDNN-only | OpenBLAS-only | load s: tuned, oneDNN, OpenBLAS, reference | "
            "rel. error: tuned, oneDNN, OpenBLAS, reference, ORT |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in t["rows"]:
        e = r["engines"]
        cells = [f"{e[k]['first_ratio_median']:.2f} ({e[k]['first_ratio_max']:.2f})" if "first_ratio_median" in e[k]
                 else "—" for k in ("tuned", "onednn", "openblas")]
        loads = ", ".join(f"{e[k]['load_s']:.2f}" if "load_s" in e[k] else "—"
                          for k in ("tuned", "onednn", "openblas", "reference"))
        errs = ", ".join(f"{e[k]['rel_err']:.1e}" if "rel_err" in e[k] else "—"
                         for k in ("tuned", "onednn", "openblas", "reference", "ort"))
        out.append(f"| {r['name']} | {r['batch']} | " + " | ".join(cells) + f" | {loads} | {errs} |")
    out += ["", "Tuning (with the results cache in `build-bench/tuned/cache`: a candidate already measured for "
            "another strategy is not run again, so the first strategy of a model pays most of the time):", "",
            "| model | artifact | strategy | tune s | MB | backends b1 | backends b8 | note |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, arts in t["artifacts"].items():
        for label, a in arts.items():
            if not a["ok"]:
                out.append(f"| {name} | {label} | `{a['strategy']}` | — | — | failed: "
                           f"{a['error'].replace('|', '/')} | | |")
                continue
            b = a.get("backends", {})
            out.append(f"| {name} | {label} | `{a['strategy']}` | {a['tune_s']:.0f} | {a['bytes'] / 1e6:.0f} | "
                       f"{backends_cell(b.get('1', {}))} | {backends_cell(b.get('8', {}))} | |")
    out += ["", "Whole model measured here against the sum of the chosen modules' medians that `ait tune` "
            "measured module by module (module boundaries, the untuned glue between modules and the load on "
            "the machine at tune time account for the difference), ms:", "",
            "| model | batch | tuned: measured / sum at tune | oneDNN-only | OpenBLAS-only |",
            "| --- | --- | --- | --- | --- |"]
    for r in t["rows"]:
        cells = []
        for k in ("tuned", "onednn", "openblas"):
            a = t["artifacts"][r["name"]][k]
            pl = a.get("plans", {}).get(str(r["batch"]), {})
            tot = sum(p["median_ms"] or 0 for p in pl.values())
            m = r["engines"][k]
            cells.append(f"{m['median_ms']:.3g} / {tot:.3g}" if "median_ms" in m and pl else "—")
        out.append(f"| {r['name']} | {r['batch']} | " + " | ".join(cells) + " |")
    rej = [(name, m, c) for name, arts in t["artifacts"].items() if arts["tuned"].get("ok")
           for m in arts["tuned"].get("trials", []) for c in m["candidates"] if c["status"] != "ok"]
    if rej:
        out += ["", "Candidates the tuner did not accept (from the tuned artifact's trials; an only:NAME "
                "artifact keeps the reference baseline for a module with no valid candidate of NAME):", "",
                "| model | module | batch | candidate | status | reason |", "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {n} | {m['path']} | {m['batch']} | {c['name']} | {c['status']} | "
                f"{(c['reason'] or '').replace('|', '/')} |" for n, m, c in rej]
    if t["problems"]:
        out += ["", "**This run found problems:**", ""] + [f"- {p}" for p in t["problems"]]
    return out + [""]


def markdown(res):
    s = res["system"]
    out = [f"# ait bench results ({res['mode']} run)", "",
           f"Written by `{res['command']}` on {res['date']} in {res['elapsed_s'] / 60:.1f} min, on "
           f"{s['cpu_model']} ({s['cores']} cores), ait git {s['ait_git']}. Every figure below comes from "
           "that run (raw data: [results.json](results.json)); rerun `bench/run` to measure again.", "",
           "What it measures: each bundled model run untuned by ait (the reference backend, plain C ops: "
           "the floor every tuned plan is judged against), by ONNX Runtime and by PyTorch, side by side "
           "on the same inputs; GEMM from ait's own kernels (`native`), OpenBLAS and oneDNN against this "
           "CPU's peak; and, when `bench/run --tuned` ran, the `.ait` artifacts `ait tune` makes (per "
           "module the fastest of reference, openblas, onednn and native) against the untuned model and "
           "each backend alone.", "",
           "![ait/ORT latency per model, and GEMM GFLOP/s against M with the peak](chart.svg)", ""]
    if res["problems"]:
        out += ["**This run found problems:**", ""] + [f"- {p}" for p in res["problems"]] + [""]
    busy = [b for b in (res.get("cpu_busy_start"), res.get("cpu_busy_end")) if b is not None]
    if busy and max(busy) > 0.1:
        out += [f"**Note:** other processes kept {100 * max(busy):.0f}% of the CPUs busy just before or after "
                "this run: absolute times (and 2-thread figures most) are pessimistic.", ""]
    out += machine(res) + limits(res) + model_tables(res) + gemm_tables(res)
    if res.get("tuned"):
        out += tuned_tables(res["tuned"])
    if res.get("suite"):
        out += suite_tables(res["suite"])
    if res.get("decoder"):
        out += decoder_tables(res["decoder"])
    return "\n".join(out) + "\n"


def tune_s(art):
    """A suite row's tune seconds, with the thread count it tuned at when above 1."""
    cmd = art.get("command", "").split()
    t = cmd[cmd.index("--threads") + 1] if "--threads" in cmd[:-1] else "1"
    return f"{art.get('tune_s', '—')}" + (f" (t{t})" if t != "1" else "")


def suite_setting_line(key, g):
    """The geometric mean line of one batch/threads setting (suite.summarise's entry)."""
    gm = g["geomean_ait_vs_ort"]
    head = (f"tuned ait / ORT, geometric mean over {g['models']} of {g['of']} models: "
            f"**{'%.3f' % gm if gm else 'n/a'}**")
    if g["threads"] != 1:  # the target reads the 1-thread rows
        return f"- {head}; above 1.0: {', '.join(g['above_1']) or 'none'}"
    met = gm is not None and gm <= 0.8 and not g["above_1"] and g["models"] == g["of"]
    return (f"- {head} (target ≤ 0.8, no model above 1.0: **{'met' if met else 'not met'}**; above 1.0: "
            f"{', '.join(g['above_1']) or 'none'})")


def suite_tables(s):
    """The section bench/suite.py (`bench/run --suite`) adds: issue 13's model suite, one table
    per batch/threads setting, each row from the latest run that measured it (s from
    suite.merge: `runs` and `rows`, each row naming its run)."""
    out = [SUITE_TITLE, "",
           "Models exported by `tools/export_models.py --bench` (random weights, seed 0: torchvision's with "
           "`weights=None`, and its `DbNet` at 640x640, `Crnn` at 48x320 and `Vit` tiny). Per model, "
           "`ait tune MODEL.onnx --data MODEL.bench.b1.in.npz TUNE_ARGS --strategy max-throughput -o "
           "MODEL.tuned.ait` (TUNE_ARGS: each run's, below, with `--threads T` for the rows at T threads; the "
           "tune cache lives in `build-bench/suite/cache`), then per batch and thread count the tuned artifact (`bench-ait-runner`), ONNX Runtime and PyTorch on "
           "the same inputs: outputs checked against PyTorch's reference and ait's against each peer's "
           "(max |diff| / max |ref| ≤ 1e-4) before any timing, then warm-up runs and interleaved rounds per "
           "engine (each run's settings below); ms = median of all timed runs; ratio = ait median / peer "
           "median, measured side by side in one process per row, so a loaded machine slows all three "
           "engines alike and the ratios hold better than the times. **backends** = how many of the "
           "artifact's modules each backend runs in this batch bucket (`ait show --json`); **tune s** = wall "
           "time of `ait tune` (all its batch sizes), marked `(tT)` when it tuned with `--threads T` (runs before "
           "2026-11-27 16:50 UTC ran the rows at 2 threads on the artifact tuned at 1 thread); **run** = the run below that measured the row (a run "
           "replaces only the rows it measures). Raw data: `suite` in [results.json](results.json). This "
           "section is measured separately from the rest of this file; a full `bench/run` keeps it.", ""]
    for k, r in enumerate(s["runs"]):
        sy, st = r["system"], r["settings"]
        busy = " / ".join("not measured" if r.get(x) is None else f"{100 * r[x]:.0f}%"
                          for x in ("cpu_busy_start", "cpu_busy_end"))
        out.append(f"- run {k + 1}: `{r['command']}` on {r['date']} in {r.get('elapsed_s', 0) / 60:.1f} min, on "
                   f"{sy['cpu_model']} ({sy['cores']} cores), ait git {sy['ait_git']}; load average "
                   f"{r['loadavg_start']} at the start, {r.get('loadavg_end')} at the end (each row's own in the "
                   f"table); CPUs busy with other work 2 s before / after: {busy}; TUNE_ARGS `"
                   + " ".join(r["tune_args"]) + f"`; {st['warmup']} warm-up runs, {st['min_rounds']}–"
                   f"{st['max_rounds']} rounds of about {st['round_s']} s per engine")
    for key, g in s.get("summary", {}).items():
        rows = [r for r in s["rows"] if f"b{r['batch']}t{r['threads']}" == key]
        out += ["", f"### batch {g['batch']}, {g['threads']} thread{'s' if g['threads'] > 1 else ''}", "",
                suite_setting_line(key, g), "",
                "| model | batch | threads | tuned ait ms | ORT ms | PyTorch ms | ait/ORT | ait/PyTorch | "
                "tune s | backends (this bucket) | max rel. error ait, ORT, PyTorch | load | run | note |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            e, art = r["engines"], r.get("tune", {})
            errs = ", ".join(f"{e[x]['rel_err']:.1e}" if "rel_err" in e[x] else "—" for x in ("ait", "ort", "torch"))
            note = "; ".join(v["why"] for v in r["ait_vs"].values() if v.get("why"))
            bk = backends_cell(art.get("backends", {}).get(str(r["batch"]), {})) if art.get("ok") else "—"
            rat = {p: (f"**{v['ratio']:.2f}**" if v["ratio"] else "—") for p, v in r["ait_vs"].items()}
            load = r.get("loadavg")
            out.append(f"| {r['name']} | {r['batch']} | {r['threads']} | {ms(e['ait'])} | {ms(e['ort'])} | "
                       f"{ms(e['torch'])} | {rat['ort']} | {rat['torch']} | {tune_s(art)} | {bk} | "
                       f"{errs} | {load[0] if load else '—'} | {r['run'] + 1} | {note.replace('|', '/')} |")
    probs = [(k, p) for k, r in enumerate(s["runs"]) for p in r.get("problems", [])]
    if probs:
        out += ["", "**Runs that found problems:**", ""] + [f"- run {k + 1}: {p}" for k, p in probs]
    return out + [""]


DECODER_TITLE = "## Decoders: prefill and decode against ONNX Runtime and PyTorch (issue 16)"
DECODER_ENGINES = (("ait", "ait (ONNX)"), ("ait-tuned", "ait (tuned)"), ("ort", "ORT (bound)"), ("torch", "PyTorch"))


def decoder_cell(info):
    """'ms median (p10–p90), tokens/s' of one engine in one row, or why it has none."""
    if "median_ms" not in info:
        return "—" if info.get("error") in ("no tuned artifact", "not asked") else f"failed: {info.get('error')}"
    ms = (lambda x: f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}")
    spread = f" ({ms(info['p10_ms'])}–{ms(info['p90_ms'])})" if "p10_ms" in info else ""
    tps = info["tokens_per_s"]
    return f"{ms(info['median_ms'])}{spread}, {tps:.3g}" if tps < 100 else f"{ms(info['median_ms'])}{spread}, {tps:,.0f}"


def decoder_tables(s):
    """The section bench/decoder.py (`bench/run --decoder`) adds: issue 16's decoders."""
    sy, st = s["system"], s["settings"]
    busy = " / ".join("not measured" if s.get(k) is None else f"{100 * s[k]:.0f}%"
                      for k in ("cpu_busy_start", "cpu_busy_end"))
    ratio = (lambda x: f"{x:.2f}" if x else "—")
    out = [DECODER_TITLE, "",
           f"Written by `{s['command']}` on {s['date']} in {s.get('elapsed_s', 0) / 60:.1f} min, on "
           f"{sy['cpu_model']} ({sy['cores']} cores), ait git {sy['ait_git']}; load average {s['loadavg_start']} "
           f"at the start, {s.get('loadavg_end')} at the end (each row's in the table); CPUs busy with other "
           f"work 2 s before / after: {busy}. Raw data: `decoder` in [results.json](results.json). "
           "This section is measured separately from the rest of this file; a full `bench/run` keeps it."
           + (f" **{s['note']}**" if s.get("note") else ""), "",
           "Models: `tools/export_models.py`'s decoders with past key/values (random weights, seed 0, opset 17, "
           "float32): " + "; ".join(
               f"`{n}` ({m['layers']} layers, vocab {m['vocab']}, cache {m['cache'][0]} heads x {m['cache'][1]}, "
               f"{m['bytes'] / 1e6:.0f} MB)" for n, m in s["models"].items()) +
           ". Per row the same inputs to every engine, drawn by bench/decoder.py (seeded): random token ids; "
           "**prefill S** = S new tokens, empty past; **decode P** = one new token against a past of P positions "
           "(random standard-normal past keys and values). Engines: `bench-ait-runner` on the ONNX model and on "
           "the tuned artifact (each run through an `ait_binding` made once, `bench-ait-runner --bind`: inputs bound, outputs kept by the binding from run to run, no output allocated per run" +
           ("; with `--cache`, each past/present pair bound as one key/value cache appended in place, as a decode loop does: "
            "a run writes the new positions only, after the past, into a buffer that reads as the dense present"
            if s.get("kv_cache") else "") + "); ONNX Runtime "
           "(onnxruntime-node, graph optimisation `all`, outputs bound to buffers allocated once: `session.run`'s "
           "fetches given preallocated tensors, which ORT writes in place, checked at startup; onnxruntime-node "
           "1.30 still returns each output as a fresh copy, so binding saves ORT's output allocation but not "
           "that copy); PyTorch eager, the "
           "same weights rebuilt in the process. Outputs (logits and every present key/value) compared with "
           f"ORT's before any timing (max |diff| / max |ORT| ≤ {s['tol']:g}, else no timing); then "
           f"{st['warmup']} warm-up run each and {st['min_rounds']}–{st['max_rounds']} interleaved rounds of "
           f"about {st['round_s']} s per engine. Cells: ms per step, median (p10–p90), then tokens/s "
           "(batch x new tokens / median). Ratios are tokens/s over the peer's (above 1: ait faster). "
           "Targets (issue 16, the better of untuned and tuned ait): decode ≥ "
           f"{s['targets']['decode']}x ORT at every past length, prefill ≥ {s['targets']['prefill']}x.", ""]
    if s.get("tune_args"):
        out.append("Tuned: `ait tune MODEL.onnx --data SAMPLES " + " ".join(s["tune_args"]) +
                   " --strategy max-throughput -o MODEL.tuned.ait`, SAMPLES a folder of a decode sample "
                   "(batch 1, past 128) and a prefill sample (batch 1, 128 tokens); cache in "
                   "`build-bench/decoder/cache`. " + "; ".join(
                       f"`{n}`: " + (f"reused `{a['reused']}` (tuned by an earlier run)" if a.get("reused") else
                                     f"{a['tune_s']:.0f} s (load {a.get('loadavg')})" if a.get("ok")
                                     else f"failed after {a.get('tune_s', 0):.0f} s: {a.get('error')}")
                       for n, a in s["artifacts"].items()) + ".")
        out.append("")
    for name in s["models"]:
        rows = [r for r in s["rows"] if r["model"] == name]
        if not rows:
            continue
        met = [r["target_met"] for r in rows]
        out += [f"**{name}**: targets met in {met.count(True)} of {len(rows)} rows"
                + (f" ({met.count(None)} without a figure)" if None in met else "") + ".", "",
                "| phase | batch | threads | " + " | ".join(f"{h} ms (p10–p90), tok/s" for _, h in DECODER_ENGINES) +
                " | ait/ORT | tuned/ORT | ait/PyTorch | tuned/PyTorch | max abs diff vs ORT: ait, tuned, PyTorch"
                " | target | load |",
                "|" + " --- |" * 15]
        for r in rows:
            e, v = r["engines"], r["vs"]
            diff = ", ".join(f"{e[k]['max_abs_diff']:.2g}" if "max_abs_diff" in e[k] else "—"
                             for k in ("ait", "ait-tuned", "torch"))
            goal = f"≥ {r['target']}x: " + {True: "met", False: "**missed**", None: "—"}[r["target_met"]]
            out.append(f"| {r['phase']} {r['new'] if r['phase'] == 'prefill' else r['past']} | {r['batch']} | "
                       f"{r['threads']} | " + " | ".join(decoder_cell(e[k]) for k, _ in DECODER_ENGINES) +
                       f" | {ratio(v['ait/ort'])} | {ratio(v['tuned/ort'])} | {ratio(v['ait/torch'])} | "
                       f"{ratio(v['tuned/torch'])} | {diff} | {goal} | {r['loadavg'][0] if r['loadavg'] else '?'} |")
        out.append("")
        qrows = [r for r in rows if "ait-quant" in r["engines"] and r["engines"]["ait-quant"].get("error") != "not asked"]
        if qrows:
            out += [f"**{name}, quantised** (`--quant {s.get('quant')}`, the artifact `{name}.quant.ait`; "
                    "its logits against ORT's by SQNR, and each batch row's greedy token, the argmax of the last "
                    "position, against ORT's and the float32 plan's):", "",
                    "| phase | batch | threads | ait (quant) ms (p10–p90), tok/s | quant/ORT | quant/tuned f32 | "
                    "logits SQNR vs ORT dB | greedy = ORT's | greedy = f32 plan's | load |", "|" + " --- |" * 10]
            for r in qrows:
                q, v = r["engines"]["ait-quant"], r["vs"]
                same = (lambda a, b: f"{sum(x == y for x, y in zip(a, b))}/{len(b)}" if a and b else "—")
                out.append(f"| {r['phase']} {r['new'] if r['phase'] == 'prefill' else r['past']} | {r['batch']} | "
                           f"{r['threads']} | {decoder_cell(q)} | {ratio(v.get('quant/ort'))} | "
                           f"{ratio(v.get('quant/tuned'))} | "
                           + (f"{q['sqnr_db']:.1f}" if q.get("sqnr_db") is not None else "—") +
                           f" | {same(q.get('greedy'), q.get('greedy_ort'))} | "
                           f"{same(q.get('greedy'), q.get('greedy_f32_plan'))} | "
                           f"{r['loadavg'][0] if r['loadavg'] else '?'} |")
            out.append("")
    if s.get("problems"):
        out += ["**This run found problems:**", ""] + [f"- {p}" for p in s["problems"]] + [""]
    return out


SUITE_TITLE = "## Model suite against ONNX Runtime and PyTorch (issue 13)"
# The sections markdown() writes; every other `## ` section of an existing RESULTS.md was
# measured by hand with programs bench/run does not drive (its text says the command), and a
# rewrite keeps it as it is, at the end.
GENERATED = ("## Machine and versions", "## Limits of this machine", "## Models: ait against",
             "## GEMM sweep", "## Tuned artifacts against single backends", SUITE_TITLE, DECODER_TITLE)


def kept_sections(path):
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        return ""
    out = ""
    for part in old.split("\n## ")[1:]:
        if not any(("## " + part).startswith(g) for g in GENERATED):
            out += "\n## " + part.rstrip("\n") + "\n"
    return out


def write(folder, res):
    """RESULTS.md in folder from res (the whole report when res holds a full run, else the
    sections res has), keeping the hand-measured sections of the file it replaces."""
    path = os.path.join(folder, "RESULTS.md")
    if "models" in res:
        text = markdown(res)
    else:
        text = "\n".join((tuned_tables(res["tuned"]) if res.get("tuned") else []) +
                          (suite_tables(res["suite"]) if res.get("suite") else []) +
                          (decoder_tables(res["decoder"]) if res.get("decoder") else [])) + "\n"
    kept = kept_sections(path)
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n" + kept)


def save_results(folder, key, data):
    """folder/results.json with its section `key` set to data (the others kept); returns it all."""
    path = os.path.join(folder, "results.json")
    res = {}
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError):
        pass
    res[key] = data
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    return res


def save_section(folder, key, data, lines):
    """Puts `data` under `key` in folder/results.json (save_results) and the section `lines`
    into folder/RESULTS.md (write_section): what the suite, quant and decoder benches write
    after every row or model."""
    save_results(folder, key, data)
    write_section(folder, lines)


def write_section(folder, lines):
    """Puts one generated section (lines[0] its `## ` title) into folder/RESULTS.md in place of
    the section of that title, or at the end, leaving the rest of the file as it is (a run of one
    section does not rewrite the others)."""
    path = os.path.join(folder, "RESULTS.md")
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        old = ""
    new = "\n".join(lines).rstrip("\n") + "\n"
    old = "\n" + old  # a title on the first line is found too
    i = old.find("\n" + lines[0] + "\n")
    if i < 0:
        text = (old.strip("\n") + "\n\n" if old.strip() else "") + new
    else:
        j = old.find("\n## ", i + 1)
        text = old[1:i + 1] + new + (old[j:] if j >= 0 else "")
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = os.path.join(sys.argv[1], "results.json")
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"report.py: {path}: {e}")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import svg
    with open(os.path.join(sys.argv[1], "chart.svg"), "w") as f:
        f.write(svg.chart(res))
    write(sys.argv[1], res)


if __name__ == "__main__":
    main()
