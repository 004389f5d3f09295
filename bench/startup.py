#!/usr/bin/python3
"""Start-up time of ait commands, side by side: `A --version` and `B --version`
(or any arguments after --) run interleaved (A B A B ...), each run timed from
fork to exit; prints each side's median, p10 and p90 and the ratio of the
medians, with the load average before and after. Each run's CPU time (user +
system, from wait4) too: on a loaded machine it moves far less than the wall
time.

usage: bench/startup.py A B [--runs N] [-- ARGS ...]   (ARGS default: --version)
"""
import argparse
import statistics
import os
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("args", nargs="*", default=["--version"])
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs takes a count of at least 1")
    load0 = open("/proc/loadavg").read().split()[:3]
    exes = (a.a, a.b)
    wall, cpu = ([], []), ([], [])
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(a.runs):
        for i, exe in enumerate(exes):
            t0 = time.perf_counter()
            p = subprocess.Popen([exe, *a.args], stdout=devnull)
            _, status, ru = os.wait4(p.pid, 0)
            wall[i].append((time.perf_counter() - t0) * 1e3)
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode:
                raise SystemExit("%s %s: exit %d" % (exe, " ".join(a.args), p.returncode))
            cpu[i].append((ru.ru_utime + ru.ru_stime) * 1e3)
    load1 = open("/proc/loadavg").read().split()[:3]
    for what, t in (("wall", wall), ("cpu", cpu)):
        for i, exe in enumerate(exes):
            q = statistics.quantiles(t[i], n=10)
            print("%-4s %-36s median %7.2f ms  p10 %7.2f  p90 %7.2f  (%d runs)" %
                  (what, exe, statistics.median(t[i]), q[0], q[-1], a.runs))
        print("%-4s ratio of medians A / B: %.2f" % (what, statistics.median(t[0]) / statistics.median(t[1])))
    print("load average before %s, after %s" % (" ".join(load0), " ".join(load1)))

if __name__ == "__main__":
    main()
