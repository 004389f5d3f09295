#!/usr/bin/python3
"""Resident memory of models and their artifacts, side by side (issue 18).

For each file, `ait run FILE --repeat R` under /usr/bin/time gives the peak
(VmHWM: "Maximum resident set size", load included), and a second run with
--repeat 1000000 read from /proc after --steady-sec seconds gives the steady
resident memory (VmRSS), then is killed. Files are measured interleaved (A B C
A B C ...) for --rounds rounds; the table has medians (MB) and the ratio of
each to the first file of its group (the untuned model), and `ait run`'s
"weights" line (what the session still holds).

With --before AIT2 every file is also measured with a second build (the one
without a change), interleaved with the first, in rows marked "before".

usage: bench/memory.py [--ait build/ait] [--before OTHER/ait] [--rounds 3] [--steady-sec 6]
                       [--args "--dim seq=16"] MODEL.onnx A.ait [B.ait ...] [: MODEL2.onnx ...]
"""
import argparse, os, re, signal, statistics, subprocess, sys, time


def peak(ait, f, extra):
    r = subprocess.run(["/usr/bin/time", "-f", "peak %M", ait, "run", f, "--repeat", "3"] + extra,
                       capture_output=True, text=True)
    m = re.search(r"^peak (\d+)", r.stderr, re.M)
    w = re.search(r"weights ([0-9.]+) MiB", r.stdout)
    if r.returncode != 0 or not m:
        sys.exit("%s: ait run failed:\n%s%s" % (f, r.stdout[-2000:], r.stderr[-2000:]))
    return int(m.group(1)) / 1024, (float(w.group(1)) if w else float("nan"))


def steady(ait, f, extra, secs):
    p = subprocess.Popen([ait, "run", f, "--repeat", "1000000"] + extra,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(secs)
    kb = None
    try:
        for line in open("/proc/%d/status" % p.pid):
            if line.startswith("VmRSS:"):
                kb = int(line.split()[1])
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    if kb is None:
        sys.exit("%s: exited before %s s" % (f, secs))
    return kb / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ait", default="build/ait")
    ap.add_argument("--before", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steady-sec", type=float, default=6)
    ap.add_argument("--args", default="")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    groups, cur = [], []
    for f in a.files:
        if f == ":":  # a new group (argparse keeps "--" for itself)
            groups.append(cur)
            cur = []
        else:
            cur.append(f)
    groups.append(cur)
    bins = [("", a.ait)] + ([("before", a.before)] if a.before else [])
    runs = [(tag, b, f) for g in groups for f in g for tag, b in bins]
    extra = a.args.split()
    pk = {r: [] for r in runs}
    st = {r: [] for r in runs}
    wt = {}
    for _ in range(a.rounds):
        for r in runs:
            p, w = peak(r[1], r[2], extra)
            pk[r].append(p)
            wt[r] = w
            st[r].append(steady(r[1], r[2], extra, a.steady_sec))
    print("load average at the end: %s" % open("/proc/loadavg").read().strip())
    print("| file | build | peak MB | peak ratio | steady MB | steady ratio | weights held MiB |")
    print("|---|---|---|---|---|---|---|")
    for g in groups:
        for tag, b in bins:
            base = (tag, b, g[0])
            bp, bs = statistics.median(pk[base]), statistics.median(st[base])
            for f in g:
                r = (tag, b, f)
                p, s = statistics.median(pk[r]), statistics.median(st[r])
                print("| %s | %s | %.0f | %.2fx | %.0f | %.2fx | %.2f |" %
                      (os.path.basename(f), tag or "this", p, p / bp, s, s / bs, wt[r]))


if __name__ == "__main__":
    main()
