#!/usr/bin/python3
"""The first run after loading against one later run, over fresh processes (issue 16).

Each process is `bench-first-steps ART SAMPLE 10 [ARGS]` (bench/c/first_steps.c):
the load, then 10 runs on the thread's CPU time. Per process: the first run
and the 5th, each over the median of the other later runs (2-4, 6-10). A
first run that only shares the noise of the machine reads like the 5th; one
that pays for something (lazy work, a cold state, what follows the load)
reads above it. Also: the machine's steal ticks during each of the two runs
(a host running something else on this guest's CPUs) and a check that the
first run faulted no page.

usage: bench/first_steps.py --bin build/bench/bench-first-steps --artifact M.tuned.ait \
           --sample M/b4_decode128.npz [--procs 15] [-- ARGS...]
ARGS go to bench-first-steps (`session`, `wait 4000`, `busy 4000`, ...)."""
import argparse, statistics, subprocess, sys, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--procs", type=int, default=15)
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    load = lambda: " ".join(open("/proc/loadavg").read().split()[:3])
    print("load %s at %s UTC; %s %s %s" % (load(), time.strftime("%H:%M:%S", time.gmtime()),
                                            a.artifact, a.sample, " ".join(a.args)), flush=True)
    first, fifth, st0, st5 = [], [], [], []
    for _ in range(a.procs):
        out = subprocess.run([a.bin, a.artifact, a.sample, "10"] + a.args, capture_output=True,
                             text=True)
        rows = [l.split() for l in out.stdout.splitlines() if l and not l.startswith("#")]
        if out.returncode != 0 or len(rows) != 10:
            sys.exit("first_steps.py: %s" % (out.stderr.strip() or out.stdout[-300:]))
        cpu = [float(r[3]) for r in rows]
        if int(rows[0][8]):
            print("  (a first run faulted %s pages)" % rows[0][8])
        med = statistics.median(cpu[1:5] + cpu[6:])
        first.append(cpu[0] / med)
        fifth.append(cpu[5] / med)
        st0.append(int(rows[0][12]))
        st5.append(int(rows[5][12]))

    def q(v):
        p = statistics.quantiles(v, n=4, method="inclusive")
        return "%.2fx (p25..p75 %.2f..%.2f, max %.2f)" % (statistics.median(v), p[0], p[2], max(v))

    print("first run / median: %s; steal in %d of its runs" % (q(first), sum(s > 0 for s in st0)))
    print("5th run   / median: %s; steal in %d of its runs" % (q(fifth), sum(s > 0 for s in st5)))
    print("per process, first: %s" % " ".join("%.2f%s" % (x, "(steal %d)" % s if s else "")
                                              for x, s in zip(first, st0)))
    print("per process, 5th:   %s" % " ".join("%.2f" % x for x in fifth))
    print("load %s at %s UTC" % (load(), time.strftime("%H:%M:%S", time.gmtime())))


if __name__ == "__main__":
    main()
