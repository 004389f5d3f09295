#!/usr/bin/env bash
# CLI test of the fp16 weight-only candidate (tune --quant fp16): on mlp the
# native backend offers native:fp16 for each module with a MatMul/Gemm, with
# its own 45 dB SQNR bound, judged valid (half's 11 bits give far more);
# `auto` offers it too; only:native:fp16 chooses it; the saved artifact
# reloads, runs the same twice and stays within the bound of the float model.
# usage: test_fp16_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/mlp.onnx
fast=(--warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-cache --runs 1)

offered() { # JSON_FILE: every module with a candidate native:fp16/t1, bound 45 dB, judged
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad, n = [], 0
for m in d["modules"]:
    c = {c["name"]: c for c in m["candidates"]}.get("native:fp16/t1")
    if not c: bad.append("%s: no native:fp16/t1" % m["path"]); continue
    n += 1
    if c.get("min_sqnr_db") != 45: bad.append("%s: bound %s" % (c["name"], c.get("min_sqnr_db")))
    if c["status"] != "ok": bad.append("%s: %s (%s)" % (c["name"], c["status"], c["reason"]))
    elif not c["sqnr_db"] >= 45: bad.append("%s: passed at %s dB" % (c["name"], c["sqnr_db"]))
print("\n".join(bad) if bad or not n else "offered %d" % n)
PY
}

"$ait" tune "$model" "${fast[@]}" --quant fp16 --strategy only:native:fp16 --json \
  -o "$tmp/h.ait" >"$tmp/h.json" 2>"$tmp/h.err"
check fp16-offered 0 "^offered [1-9]" offered "$tmp/h.json"
check fp16-chosen 0 "native:fp16" /usr/bin/python3 -c "
import json, sys; d = json.load(open(sys.argv[1]))
print([c['name'] for m in d['modules'] for c in m['candidates'] if c['chosen']])" "$tmp/h.json"
"$ait" tune "$model" "${fast[@]}" --select fc1 --quant auto --json >"$tmp/auto.json" 2>/dev/null
check fp16-in-auto 0 "^offered 1$" offered "$tmp/auto.json"
check fp16-help 0 "fp16 \(half weights" "$ait" tune --help

mkdir -p "$tmp/a" "$tmp/b" "$tmp/p"
check fp16-run 0 "wrote 1 outputs" "$ait" run "$tmp/h.ait" --output-dir "$tmp/a" --repeat 1
check fp16-plan 0 "fp16" "$ait" show "$tmp/h.ait"
check fp16-run-b 0 "wrote 1 outputs" "$ait" run "$tmp/h.ait" --output-dir "$tmp/b" --repeat 1
check fp16-plain 0 "wrote 1 outputs" "$ait" run "$model" --output-dir "$tmp/p" --repeat 1
check fp16-same-twice 0 "" cmp "$tmp/a/logits.npy" "$tmp/b/logits.npy"
check fp16-close 0 "^sqnr ok" /usr/bin/python3 -c "
import numpy as np, sys
r = np.load(sys.argv[1]).astype(np.float64); c = np.load(sys.argv[2]).astype(np.float64)
s = 10 * np.log10((r * r).sum() / max(((r - c) ** 2).sum(), 1e-300))
print('sqnr ok' if s >= 45 and (r != c).any() else 'sqnr %.1f dB' % s)" "$tmp/p/logits.npy" "$tmp/a/logits.npy"
finish
