#!/usr/bin/python3
"""Attention modules on native's fused kernel against the best other
candidate (reference, openblas, onednn): per case, ROUNDS rounds of
`ait tune MODEL --select MODULE --no-cache --no-whole --dim ...`, each
round one process that times every candidate on the same generated inputs
(the tuner's profile: warm-up, then timed runs to a stable median); per
round the ratio native / best other (native: its fastest GEMM variant);
printed as a Markdown table of medians over the rounds, with the load
average before and after.

usage: /usr/bin/python3 bench/attn.py AIT MODELS_DIR [ROUNDS]"""
import re
import statistics
import subprocess
import sys
import tempfile

CASES = [  # label, model, module, dims
    ("bert encoder, seq 128", "bert", "layer.0.attention", {"seq": 128}),
    ("gpt2 decode, past 511 (its last position)", "gpt2", "h.0.attention",
     {"seq": 1, "past": 511}),
    ("gpt2 prefill 128", "gpt2", "h.0.attention", {"seq": 128, "past": 0}),
    ("llama decode, past 512", "llama", "layer.0.self_attn",
     {"seq": 1, "past": 512}),
    ("llama prefill 128", "llama", "layer.0.self_attn", {"seq": 128, "past": 0}),
]
ROW = re.compile(r"^\s+\*?\s*(reference|openblas|onednn|native)(\S*)\s+ok\s+([0-9.]+)")


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def one_round(ait, path, module, dims):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [ait, "tune", path, "--select", module, "--no-cache", "--no-whole",
               "-o", f"{tmp}/x.ait"]
        for k, v in dims.items():
            cmd += ["--dim", f"{k}={v}"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    best = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            b, ms = m.group(1), float(m.group(3))
            best[b] = min(best.get(b, ms), ms)
    others = {b: t for b, t in best.items() if b != "native"}
    who = min(others, key=others.get)
    return best["native"], others[who], who


def main():
    ait, models = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    print(f"load average before: {loadavg()}")
    print("| case | native ms | best other | its ms | native / best |")
    print("| --- | --- | --- | --- | --- |")
    for label, model, module, dims in CASES:
        res = [one_round(ait, f"{models}/{model}.onnx", module, dims) for _ in range(rounds)]
        nat = statistics.median(r[0] for r in res)
        oth = statistics.median(r[1] for r in res)
        who = statistics.mode(r[2] for r in res)
        ratio = statistics.median(r[0] / r[1] for r in res)
        print(f"| {label} | {nat:.3f} | {who} | {oth:.3f} | {ratio:.2f} |", flush=True)
    print(f"load average after: {loadavg()}")


if __name__ == "__main__":
    main()
