#!/usr/bin/python3
"""First run after loading, per bucket, over that bucket's steady median.

For each model, two artifacts tuned on the same samples (a decode-shaped and a
prefill-shaped one, `tools/test_data build-data` makes them): one by the ait
BEFORE (a binary of an older build) and one by AFTER. Each run is a fresh
process (`ait run NAME.ait --input SAMPLE.npz --repeat R`), which loads the
artifact (priming what it primes), then prints its first run's latency and
the median of the next R. Processes alternate before / after, bucket by
bucket, P times; the table gives the median over the processes of
first / median, and that ratio's spread (p25..p75).

usage: bench/first_run.py --before OLD_AIT --after NEW_AIT --data build-data/models \
           [--models gpt2,llama] [--procs 15] [--repeat 50] [--tune] [--one-artifact]
       bench/first_run.py --after AIT --artifact NAME.ait --samples DIR [--models-dir DIR --batches 1,4]
           [--before OLD_AIT] [--procs 15] [--repeat 50] [--paths binding,session] [--cpu-clock]
--tune makes the artifacts again (else only when missing): each binary tunes its
own (--batch-sizes 1,2, short profiling, --no-cache) into --work (default
/tmp/ait-first-run). --one-artifact runs both binaries on BEFORE's artifact, so
that two tunings' choices (which differ under a noisy machine) do not stand
between the two runtimes. Each cell also gives the medians of the first run and
of the steady median, in ms.

--artifact NAME.ait --samples DIR: one artifact tuned beforehand (the 12-layer
decoders of bench/decoder.py, every bucket they hold), run by --after (and by
BEFORE when given) on each .npz of DIR, one sample per bucket (its name says
which); with --models-dir, a folder with no .npz gets one per bucket of
bench/decoder.py's tune at each of --batches (decode at past 128, prefill of
128 tokens; drawn as bench/decoder.py draws its rows); each row also says
whether the bucket meets issue 16's target (first run at most 1.1x the steady
median, by the median over the processes). --paths runs --after both ways
`ait run` can run (each a column, processes alternated): `binding` (plain
`ait run`: through a binding whose outputs it reserves at load) and `session`
(`ait run --session-run`: ait_session_run, new output tensors each run, as
`ait run` ran before); default `binding`. --cpu-clock passes --cpu-clock to
--after's runs (the thread's CPU time, for a loaded machine; BEFORE is then
not allowed: older binaries lack the flag). Every process's first run is the
first request after the load: nothing runs before it but the load. Each cell
also gives the range over the processes of the first run's minor page faults
(the calling thread's, as `ait run` says them; left out for binaries that do not).
--gap S waits S seconds before each process: in a virtual machine whose guest
reports freed memory to its host (free page reporting, as on the Zen 5 guest
of bench/RESULTS.md), the gigabytes a process frees at exit are reported about
two seconds later, and the host's reclaim then made the next touch of every
page slower, in whatever process ran then: back to back, that lands in the
next process's load and first run. With a gap (6 s or more: the host took
longer at times), each process loads as a service on a quiet machine does;
without, as a restart right after another process. Each cell also gives the
largest first / median over the processes."""
import argparse, os, re, shutil, statistics, subprocess, sys, time

LAT = re.compile(r"latency first run ([0-9.]+) ms, median of \d+ runs ([0-9.]+) ms")
FLT = re.compile(r"faults first run (\d+) minor page faults")


def run(ait, art, sample, repeat, extra=()):
    time.sleep(run.gap)
    out = subprocess.run([ait, "run", art, "--input", sample, "--repeat", str(repeat)] + list(extra),
                         capture_output=True, text=True)
    m = LAT.search(out.stdout)
    if not m:
        sys.exit("%s run %s: %s" % (ait, art, out.stderr.strip() or out.stdout[-300:]))
    f = FLT.search(out.stdout)  # older binaries do not say
    run.faults = int(f.group(1)) if f else None
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before")
    ap.add_argument("--after", required=True)
    ap.add_argument("--data", help="folder of NAME.onnx and NAME.in.K.npz")
    ap.add_argument("--artifact", help="an artifact tuned beforehand, run on each sample of --samples")
    ap.add_argument("--samples", help="with --artifact: a folder of .npz, one per bucket")
    ap.add_argument("--models-dir", help="with --artifact: the decoders' folder, to write --samples")
    ap.add_argument("--batches", default="1,4", help="with --models-dir: the batches of the samples")
    ap.add_argument("--models", default="gpt2,llama")
    ap.add_argument("--procs", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--work", default="/tmp/ait-first-run")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--one-artifact", action="store_true")
    ap.add_argument("--paths", default="binding", help="with --artifact: binding,session (see above)")
    ap.add_argument("--cpu-clock", action="store_true", help="with --artifact: --after timed on CPU time")
    ap.add_argument("--gap", type=float, default=0,
                    help="seconds to wait before each process (see the docstring)")
    a = ap.parse_args()
    run.gap = a.gap
    if a.artifact:
        return one_artifact(a)
    if not a.before or not a.data:
        sys.exit("first_run.py: --before and --data are required without --artifact")
    os.makedirs(a.work, exist_ok=True)
    rows = []
    for m in a.models.split(","):
        samples = sorted(f for f in os.listdir(a.data) if re.fullmatch(r"%s\.in\.\d+\.npz" % m, f))
        sd = os.path.join(a.work, m + ".samples")
        os.makedirs(sd, exist_ok=True)
        for f in samples:
            shutil.copy(os.path.join(a.data, f), sd)
        arts = {}
        for tag, ait in (("before", a.before), ("after", a.after)):
            arts[tag] = os.path.join(a.work, "%s.%s.ait" % (m, tag))
            if a.tune or not os.path.exists(arts[tag]):
                # Batch buckets 1 and 2: the decode sample is at batch 1, the
                # prefill one at 2, so each runs in a bucket of its own batch.
                subprocess.run([ait, "tune", os.path.join(a.data, m + ".onnx"), "--data", sd,
                                "--batch-sizes", "1,2", "--warmup", "2", "--window", "5",
                                "--cap", "20", "--no-cache", "-o", arts[tag]], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for f in samples:
            r = {"before": [], "after": []}
            for _ in range(a.procs):  # interleaved: before, after, before, ...
                for tag, ait in (("before", a.before), ("after", a.after)):
                    art = arts["before" if a.one_artifact else tag]
                    r[tag].append(run(ait, art, os.path.join(sd, f), a.repeat))
            rows.append((m, f, r))
    print("load average at the end: %s" % open("/proc/loadavg").read().split()[:3])
    print("%-6s %-14s %38s %38s" % ("model", "sample", "before first/median [first, median ms]",
                                    "after first/median [first, median ms]"))
    for m, f, r in rows:
        cell = []
        for tag in ("before", "after"):
            ratio = [x / y for x, y in r[tag]]
            q = statistics.quantiles(ratio, n=4)
            cell.append("%.2fx (%.2f..%.2f) [%.3f, %.3f]" % (
                statistics.median(ratio), q[0], q[2], statistics.median(x for x, _ in r[tag]),
                statistics.median(y for _, y in r[tag])))
        print("%-6s %-14s %38s %38s" % (m, f, cell[0], cell[1]))


TARGET = 1.1  # issue 16: the first decode run after loading over the steady state


def write_samples(folder, models_dir, name, batches):
    """bBATCH_decode128.npz and bBATCH_prefill128.npz: the buckets of bench/decoder.py's tune."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import numpy as np
    import decoder
    shape = decoder.shapes(models_dir, name)
    for b in batches:
        for tag, new, past in (("decode128", 1, 128), ("prefill128", 128, 0)):
            tmp = os.path.join(folder, "tmp")
            decoder.write_inputs(tmp, shape, b, new, past, seed=b * 100003 + new * 1009 + past)
            np.savez(os.path.join(folder, "b%d_%s.npz" % (b, tag)),
                     **{f[:-4]: np.load(os.path.join(tmp, f)) for f in os.listdir(tmp)})
            shutil.rmtree(tmp)


def one_artifact(a):
    """Each sample of a.samples in fresh processes of each binary (before, after,
    before, ...): a row per sample with first / median, its spread and the target."""
    if not a.samples:
        sys.exit("first_run.py: --artifact needs --samples")
    if a.cpu_clock and a.before:
        sys.exit("first_run.py: --cpu-clock times --after only (older binaries lack the flag)")
    flags = {"binding": [], "session": ["--session-run"]}
    paths = [p for p in a.paths.split(",") if p]
    if not paths or any(p not in flags for p in paths):
        sys.exit("first_run.py: --paths takes binding and/or session")
    clock = ["--cpu-clock"] if a.cpu_clock else []
    # (tag, binary, extra arguments) per column
    cols = ([("before", a.before, [])] if a.before else []) + [
        ("after" if p == "binding" else "after --session-run", a.after, flags[p] + clock)
        for p in paths]
    tags = [c[0] for c in cols]
    os.makedirs(a.samples, exist_ok=True)
    if a.models_dir and not any(f.endswith(".npz") for f in os.listdir(a.samples)):
        write_samples(a.samples, a.models_dir, os.path.basename(a.artifact).split(".")[0],
                      [int(b) for b in a.batches.split(",") if b])
    samples = sorted(f for f in os.listdir(a.samples) if f.endswith(".npz"))
    rows = []
    for f in samples:
        r = {t: [] for t in tags}
        flt = {t: [] for t in tags}
        for _ in range(a.procs):
            for t, ait, extra in cols:
                r[t].append(run(ait, a.artifact, os.path.join(a.samples, f), a.repeat, extra))
                if run.faults is not None:
                    flt[t].append(run.faults)
        rows.append((f, r, flt))
        print("  %s: %s" % (f, ", ".join("%s %.2fx" % (t, statistics.median(x / y for x, y in r[t]))
                                         for t in tags)), flush=True)
    print("load average at the end: %s%s" % (open("/proc/loadavg").read().split()[:3],
                                             ", thread CPU time" if a.cpu_clock else ", wall clock"))
    print("| sample | %s |" % " | ".join("%s: first / median (p25..p75, max) [first, median ms] "
                                        "{first run's page faults, min..max} | target" % t
                                        for t in tags))
    print("| --- |%s" % (" --- | --- |" * len(tags)))
    for f, r, flt in rows:
        cells = []
        for t in tags:
            ratio = [x / y for x, y in r[t]]
            q = statistics.quantiles(ratio, n=4, method="inclusive") if len(ratio) > 1 else [ratio[0]] * 3
            med = statistics.median(ratio)
            faults = " {%d..%d}" % (min(flt[t]), max(flt[t])) if flt[t] else ""
            cells.append("%.2fx (%.2f..%.2f, %.2f) [%.3f, %.3f]%s | %s" % (
                med, q[0], q[2], max(ratio), statistics.median(x for x, _ in r[t]),
                statistics.median(y for _, y in r[t]), faults,
                "met" if med <= TARGET else "**missed**"))
        print("| %s | %s |" % (f[:-4], " | ".join(cells)))


if __name__ == "__main__":
    main()
