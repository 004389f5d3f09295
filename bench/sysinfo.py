"""What machine and which software versions a bench run measured."""
import json
import os
import platform
import subprocess
import time


def sh(argv, cwd=None):
    try:
        return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cpuinfo():
    model, flags, ident = "", [], {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip() == "model name" and not model:
                    model = val.strip()
                elif key.strip() in ("cpu family", "model", "stepping") and val.strip():
                    ident.setdefault(key.strip(), val.strip())
                elif key.strip() == "flags" and not flags:
                    flags = val.split()
    except OSError:
        pass
    if ident:
        model += " (" + ", ".join(f"{k} {v}" for k, v in ident.items()) + ")"
    return model, flags


def cpu_busy(seconds=2.0):
    """Fraction of all CPUs that other processes kept busy over `seconds`
    (read from /proc/stat while the bench itself sleeps); None if unknown."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    try:
        t0, i0 = snap()
        time.sleep(seconds)
        t1, i1 = snap()
    except (OSError, ValueError, IndexError):
        return None
    return round(1 - (i1 - i0) / max(t1 - t0, 1), 3)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return []


def collect(root, bench_dir):
    model, flags = cpuinfo()
    ort = ""
    try:
        with open(os.path.join(bench_dir, "node_modules", "onnxruntime-node", "package.json")) as f:
            ort = json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        pass
    torch = sh(["/usr/bin/python3", "-c", "import torch, numpy; print(torch.__version__, numpy.__version__); "
                "print([l.strip() for l in torch.__config__.show().splitlines() if 'DNN' in l][0])"])
    tlines = torch.splitlines()
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root)
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "flags": flags,
        "simd_flags": [f for f in flags if f.startswith(("avx", "fma", "sse4", "amx"))],
        "kernel": platform.release(),
        "gcc": sh(["gcc", "--version"]).splitlines()[0] if sh(["gcc", "--version"]) else "",
        "ait_git": sh(["git", "rev-parse", "--short=12", "HEAD"], cwd=root) + ("+dirty" if dirty else ""),
        "node": sh(["node", "--version"]),
        "onnxruntime_node": ort,
        "torch": tlines[0].split()[0] if tlines else "",
        "numpy": tlines[0].split()[1] if tlines and len(tlines[0].split()) > 1 else "",
        "torch_onednn": tlines[1].lstrip("- ") if len(tlines) > 1 else "",
        "openblas_pkg": sh(["dpkg-query", "-W", "-f=${Version}", "libopenblas0-pthread"]),
        "onednn_pkg": sh(["dpkg-query", "-W", "-f=${Version}", "libdnnl2"]),
    }
