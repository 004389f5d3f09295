"""The limits of this machine (peak FMA throughput, memory bandwidth) and the
GEMM sweep of ait, OpenBLAS and oneDNN, by running the bench C programs."""
import json
import os
import subprocess


class LimitsError(Exception):
    pass


def run_json(argv, env=None, timeout=3600):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LimitsError(f"{os.path.basename(argv[0])}: {e}") from e
    if p.returncode != 0:
        raise LimitsError(f"{os.path.basename(argv[0])} exited {p.returncode}: {p.stderr.strip()[-500:]}")
    try:
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    except ValueError as e:
        raise LimitsError(f"{os.path.basename(argv[0])}: bad output ({e}): {p.stdout[:300]}") from e


def blas_info(bin_dir):
    """OpenBLAS's own choice of core, and the OPENBLAS_CORETYPE that fits the CPU."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    detected = run_json([os.path.join(bin_dir, "bench-blas-info")], env)[0]
    info = {"detected": detected["openblas_corename"], "config": detected["openblas_config"],
            "fit": detected["coretype_fit"], "onednn": detected["onednn"],
            "cpu_features": detected["cpu_features"], "coretype": detected["coretype_fit"] or None}
    if info["coretype"]:
        env["OPENBLAS_CORETYPE"] = info["coretype"]
        info["used"] = run_json([os.path.join(bin_dir, "bench-blas-info")], env)[0]["openblas_corename"]
    else:
        info["used"] = info["detected"]
    return info


def peak(bin_dir, seconds):
    return run_json([os.path.join(bin_dir, "bench-peak"), str(seconds)])


def stream(bin_dir, mib, reps):
    return run_json([os.path.join(bin_dir, "bench-stream"), str(mib), str(reps)])


def gemm_shapes(quick):
    if quick:
        n = k = 1024
        ms = [1, 16, 64]
        squares = [256]
    else:
        n = k = 4096
        ms = [2 ** i for i in range(13)]  # 1 .. 4096
        squares = [256, 512, 1024, 2048]  # 4096 is the kn sweep's M = 4096
    shapes = [f"{lay}:{m}:{n}:{k}" for lay in ("kn", "nk") for m in ms]
    shapes += [f"kn:{s}:{s}:{s}" for s in squares]
    return shapes


def gemm_budget(quick):
    """Seconds of timing per engine and shape, and the cap on one run."""
    return (0.05, 5) if quick else (0.5, 60)


def gemm(bin_dir, bench_dir, gemm_dir, threads_list, quick, coretype, log):
    shapes = gemm_shapes(quick)
    needed = sorted({":".join(s.split(":")[i] for i in (0, 2, 3)) for s in shapes})
    p = subprocess.run(["/usr/bin/python3", os.path.join(bench_dir, "gemm_models.py"), gemm_dir] + needed,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise LimitsError(f"gemm_models.py: {p.stderr.strip()[-500:]}")
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    budget, cap = gemm_budget(quick)
    rows = []
    for t in threads_list:
        log(f"  GEMM sweep, {t} thread(s): {len(shapes)} shapes x 3 engines")
        rows += run_json([os.path.join(bin_dir, "bench-gemm"), gemm_dir, str(t), str(budget), str(cap)] + shapes, env)
    return rows
