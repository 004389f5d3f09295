#!/usr/bin/python3
"""PyTorch CPU eager as a bench peer: rebuilds the model NAME exactly as
tools/export_models.py does (same seed, so the same weights) and speaks the
protocol of bench/c/ait_runner.c ("out DIR" -> "ok", "time N" -> "t MS ...",
"cpu N" -> each run's process CPU time, every thread, startup "ready",
failures "error MESSAGE"). Threads and BLAS settings come
from the environment bench/models.py sets (OMP_NUM_THREADS, OPENBLAS_CORETYPE,
OMP_WAIT_POLICY) and torch.set_num_threads.

MODE (default f32): int8 runs the model after
torch.ao.quantization.quantize_dynamic (every nn.Linear to dynamic int8,
fbgemm); bf16 runs it under torch.autocast("cpu", torch.bfloat16), outputs
written as float32.

usage: /usr/bin/python3 bench/torch_runner.py NAME INPUT_DIR THREADS [f32|int8|bf16]
"""
import contextlib
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import export_models  # noqa: E402


def fail(what, msg):
    print(f"error {what}: {msg}", flush=True)
    sys.exit(1)


def main():
    if len(sys.argv) not in (4, 5):
        fail("usage", "torch_runner.py NAME INPUT_DIR THREADS [f32|int8|bf16]")
    name, input_dir, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) == 5 else "f32"
    if mode not in ("f32", "int8", "bf16"):
        fail("mode", f"{mode}: not f32, int8 or bf16")
    if name not in export_models.MODELS:
        fail(name, "not a model of tools/export_models.py")
    torch.set_num_threads(threads)
    torch.manual_seed(0)  # as export_models.export does before building
    model, in_names, out_names, _, _ = export_models.MODELS[name][0]()
    model.eval()
    if mode == "int8":
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    ctx = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if mode == "bf16" \
        else contextlib.nullcontext
    inputs = []
    for n in in_names:
        path = os.path.join(input_dir, n + ".npy")
        try:
            inputs.append(torch.from_numpy(np.load(path)))
        except OSError as e:
            fail(path, e)
    print("ready", flush=True)
    with torch.inference_mode(), ctx():
        for line in sys.stdin:
            cmd = line.split()
            if len(cmd) == 2 and cmd[0] == "out":
                outs = model(*inputs)
                outs = [outs] if isinstance(outs, torch.Tensor) else outs
                for n, t in zip(out_names, outs):
                    np.save(os.path.join(cmd[1], n + ".npy"), t.float().numpy())
                print("ok", flush=True)
            elif len(cmd) == 2 and cmd[0] in ("time", "cpu") and cmd[1].isdigit() and int(cmd[1]) > 0:
                clock = time.perf_counter if cmd[0] == "time" else time.process_time
                times = []
                for _ in range(int(cmd[1])):
                    t0 = clock()
                    model(*inputs)
                    times.append((clock() - t0) * 1e3)
                print("t " + " ".join(f"{t:.4f}" for t in times), flush=True)
            else:
                fail("command", line.strip())


if __name__ == "__main__":
    main()
