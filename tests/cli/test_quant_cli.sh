#!/usr/bin/env bash
# CLI tests of quantised candidates (tune --quant): on mlp, the native
# backend's bf16, int8dq, int8wo and int4wo MatMul/Gemm variants are built,
# judged by the SQNR of the module's outputs against their own bound and
# either chosen or rejected with the SQNR in the reason; a too-strict
# --min-sqnr rejects every one; the saved artifact reloads, runs the same
# twice and stays close to the float model; a float32 tune offers none.
# The lean artifact: an int8wo tune embeds the model without the float
# weights its blobs replace (well under the ONNX file's size), runs, and every
# path that would read those weights (inspect, tune, generate, the untuned fallback,
# the lean model run as a plain .onnx) refuses with a message.
# usage: test_quant_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/mlp.onnx
fast=(--warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-cache --runs 1)

# JSON report checks: every asked-for variant is a candidate of each module
# with a MatMul/Gemm, judged (valid, or a reason naming the SQNR bound), with
# its bound and its SQNR reported.
judge() { # JSON_FILE WANTED_VARIANTS BOUND|-
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2].split(",") if sys.argv[2] else []
bound = None if sys.argv[3] == "-" else float(sys.argv[3])
bad = []
for m in d["modules"]:
    names = {c["name"]: c for c in m["candidates"]}
    quant = [c for c in m["candidates"] if c["variant"] in ("bf16", "int8dq", "int8wo", "int4wo")]
    if not want:
        if quant: bad.append("%s offers %s" % (m["path"], quant[0]["name"]))
        continue
    for v in want:
        c = names.get("native:%s/t1" % v)
        if not c: bad.append("%s: no candidate %s" % (m["path"], v)); continue
        if "min_sqnr_db" not in c or c["sqnr_db"] is None: bad.append("%s: no SQNR" % c["name"]); continue
        b = bound if bound else (35 if v == "bf16" else 25)
        if c["min_sqnr_db"] != b: bad.append("%s: bound %s" % (c["name"], c["min_sqnr_db"]))
        if c["status"] == "ok" and not c["sqnr_db"] >= b: bad.append("%s: passed at %s dB" % (c["name"], c["sqnr_db"]))
        if c["status"] != "ok" and "SQNR" not in (c["reason"] or ""): bad.append("%s: %s" % (c["name"], c["reason"]))
print("\n".join(bad) if bad else "judged")
PY
}

"$ait" tune "$model" "${fast[@]}" --quant bf16,int8dq,int8wo,int4wo --json -o "$tmp/q.ait" \
  >"$tmp/q.json" 2>"$tmp/q.err"
check tune-quant 0 "^judged$" judge "$tmp/q.json" bf16,int8dq,int8wo,int4wo -
check some-chosen 0 "native:(bf16|int8dq|int8wo|int4wo)" \
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([c['name'] for m in d['modules'] for c in m['candidates'] if c['chosen']])" "$tmp/q.json"
"$ait" tune "$model" "${fast[@]}" --select fc1 --quant auto --min-sqnr 90 --json >"$tmp/strict.json" 2>/dev/null
check strict-rejects 0 "^judged$" judge "$tmp/strict.json" bf16,int8dq,int8wo,int4wo 90
check strict-none-ok 0 "^\[\]$" /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([c['name'] for m in d['modules'] for c in m['candidates'] if c['variant'] in ('bf16','int8dq','int8wo','int4wo') and c['status']=='ok'])" "$tmp/strict.json"
"$ait" tune "$model" "${fast[@]}" --select fc1 --json >"$tmp/f32.json" 2>/dev/null
check float-no-quant 0 "^judged$" judge "$tmp/f32.json" "" -
check bad-sqnr 2 "min-sqnr" "$ait" tune "$model" --min-sqnr -3
check bad-quant 1 "unknown scheme 'int3'" "$ait" tune "$model" --quant bf16,int3

# The artifact: reloads, same outputs on two runs, close to the float model.
mkdir -p "$tmp/a" "$tmp/b" "$tmp/p"
check run-a 0 "tuned  the artifact's plan" "$ait" run "$tmp/q.ait" --output-dir "$tmp/a" --repeat 1
check run-b 0 "wrote 1 outputs" "$ait" run "$tmp/q.ait" --output-dir "$tmp/b" --repeat 1
check run-plain 0 "wrote 1 outputs" "$ait" run "$model" --output-dir "$tmp/p" --repeat 1
check same-twice 0 "" cmp "$tmp/a/logits.npy" "$tmp/b/logits.npy"
check close-to-float 0 "^sqnr ok" /usr/bin/python3 -c "
import numpy as np, sys
r = np.load(sys.argv[1]).astype(np.float64); c = np.load(sys.argv[2]).astype(np.float64)
s = 10 * np.log10((r * r).sum() / max(((r - c) ** 2).sum(), 1e-300))
print('sqnr ok' if s >= 15 else 'sqnr %.1f dB' % s)" "$tmp/p/logits.npy" "$tmp/a/logits.npy"
# The lean artifact: no float weight left in it, so smaller than the ONNX file
# (0.25x, all three Gemms on int8wo; issue 14's 0.3x is measured in
# bench/RESULTS.md, not here). only:native:int8wo pins the variant: with
# only:native a float32 pack of fc1 or fc3 (16 MB) won by timing on a loaded
# machine and the size check failed (2026-11-28).
"$ait" tune "$model" "${fast[@]}" --quant int8wo --strategy only:native:int8wo -o "$tmp/q8.ait" >/dev/null 2>&1
check lean-size 0 "^lean ok" /usr/bin/python3 -c "
import os, sys
r = os.path.getsize(sys.argv[1]) / os.path.getsize(sys.argv[2])
print('lean ok' if r <= 0.3 else 'artifact is %.2fx the model' % r)" "$tmp/q8.ait" "$model"
check lean-manifest 0 "^model.lean.onnx 3$" /usr/bin/python3 -c "
import json, subprocess, sys
m = json.loads(subprocess.run([sys.argv[1], 'show', sys.argv[2], '--json'], capture_output=True, text=True).stdout)['model']
print(m['blob'], m.get('left_out'))" "$ait" "$tmp/q8.ait"
mkdir -p "$tmp/l"
check lean-run 0 "wrote 1 outputs" "$ait" run "$tmp/q8.ait" --output-dir "$tmp/l" --repeat 2
check lean-close 0 "^sqnr ok" /usr/bin/python3 -c "
import numpy as np, sys
r = np.load(sys.argv[1]).astype(np.float64); c = np.load(sys.argv[2]).astype(np.float64)
s = 10 * np.log10((r * r).sum() / max(((r - c) ** 2).sum(), 1e-300))
print('sqnr ok' if s >= 30 else 'sqnr %.1f dB' % s)" "$tmp/p/logits.npy" "$tmp/l/logits.npy"
check lean-inspect 1 "saved without 3 float weights" "$ait" inspect "$tmp/q8.ait"
check lean-tune 1 "saved without 3 float weights" "$ait" tune "$tmp/q8.ait" "${fast[@]}"
check lean-generate 1 "saved without 3 float weights" "$ait" generate "$tmp/q8.ait" --prompt-ids 1 --max-new 1
# A lean decoder: generate finds its cache in the manifest (the tune's inspection), not by
# running the lean model, and gives PyTorch's greedy tokens (tools/export_models.py). On a
# model this small float often wins by timing, so the strategy pins the int8wo variant.
"$ait" tune "$data/models/gpt2.onnx" "${fast[@]}" --quant int8wo --strategy only:native:int8wo \
  -o "$tmp/g8.ait" >/dev/null 2>&1
check lean-gpt2 0 '"left_out": [1-9]' "$ait" show "$tmp/g8.ait" --json
read -r prompt want <"$data/models/gpt2.greedy.txt"
check lean-generate-gpt2 0 "^tokens: ${want//,/ }\$" "$ait" generate "$tmp/g8.ait" \
  --prompt-ids "$prompt" --max-new "$(tr ',' '\n' <<<"$want" | wc -l)"
# a damaged manifest: no plan, and no untuned model to fall back on
cp "$tmp/q8.ait" "$tmp/bad.ait"
printf '\x01' | dd of="$tmp/bad.ait" bs=1 seek=600 conv=notrunc 2>/dev/null
check lean-no-fallback 1 "manifest sha256 mismatch.*no fallback: .*cannot run untuned" \
  "$ait" run "$tmp/bad.ait" --fallback-untuned
# the lean model taken out of the artifact is no model to run alone
/usr/bin/python3 - "$tmp/q8.ait" "$tmp/lean.onnx" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
tab, n = struct.unpack_from("<QQ", b, 400)
for i in range(n):
    e = tab + 256 * i
    name = b[e:e + 208].rstrip(b"\0").decode()
    off, ln = struct.unpack_from("<QQ", b, e + 208)
    if name == "model.lean.onnx":
        open(sys.argv[2], "wb").write(b[off:off + ln])
PY
check lean-onnx-refused 1 "its data was left out" "$ait" run "$tmp/lean.onnx"
finish
