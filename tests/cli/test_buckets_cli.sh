#!/usr/bin/env bash
# A decoder's buckets from the command line (docs/tuning.md, "Decoders"):
# tuned on a decode-shaped and a prefill-shaped sample, gpt2 gets two
# (batch, seq, past) buckets, each with its plan; inspect and show list them,
# the artifact primes both, runs in each bucket give the reference outputs,
# user bucket lists are taken, and hostile manifests of the new key (priming
# shapes off the bucket, buckets out of order or range, a sequence input the
# model lacks, the older plan format) are refused. Tuned with --quant int8wo,
# the artifact's outputs in both buckets stay within an SQNR bound of the
# reference and give its greedy token.
# usage: test_buckets_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
m=$data/models/gpt2.onnx
mkdir -p "$tmp/s" "$tmp/host"
cp "$data/models/gpt2.in.0.npz" "$data/models/gpt2.in.1.npz" "$tmp/s/"
fast=(--warmup 1 --window 2 --cap 3 --cv 0.5 --no-plan-check --no-whole --no-cache --runs 1)

check inspect 0 "buckets: the samples fall in seq 1 past 128 \(decode\), seq 8 past 16" \
  "$ait" inspect "$m" --data "$tmp/s"
check inspect-json 0 '"buckets": \[\{"seq": 1, "past": 128\}, \{"seq": 8, "past": 16\}\]' \
  bash -c "'$ait' inspect '$m' --data '$tmp/s' --json 2>/dev/null | /usr/bin/python3 -c \
  'import json, sys; print(json.dumps(json.load(sys.stdin)[\"decoder\"]))'"
check tune 0 "saved" "$ait" tune "$m" --data "$tmp/s" "${fast[@]}" -o "$tmp/g.ait"
# Every module has a plan in each bucket: the summary's rows.
echo "$out" >"$tmp/tune.txt"
check tune-decode 0 "^ +h.0 +1/1/128 +[a-z]" cat "$tmp/tune.txt"
check tune-prefill 0 "^ +h.0 +1/8/16 +[a-z]" cat "$tmp/tune.txt"
check tune-json 0 "^\[\[1, 1, 128\], \[1, 8, 16\]\]$" bash -c "'$ait' tune '$m' --data '$tmp/s' \
  ${fast[*]} --json 2>/dev/null | /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)[\"modules\"]
print(sorted({(x[\"batch\"], x[\"seq\"], x[\"past\"]) for x in r if x[\"path\"] == \"h.0\"}))' \
  | tr '()' '[]'"
check show 0 "buckets +1/1/128 1/8/16 .*seq from input_ids\[axis 1\], past from past_key_0\[axis 2\]" \
  "$ait" show "$tmp/g.ait"
check show-primed 0 "primed +\[1,1\] \[1,4,128,32\] ...; \[1,8\] \[1,4,16,32\]" "$ait" show "$tmp/g.ait"
check show-plans 0 "h.0 +1/8/16 " "$ait" show "$tmp/g.ait"
# Each bucket's run gives the reference's outputs (the prefill sample is at
# batch 2, above the one batch bucket: the largest serves it).
for k in 0 1; do
  check run-$k 0 "tuned  the artifact's plan" "$ait" run "$tmp/g.ait" --repeat 1 \
    --input "$data/models/gpt2.in.$k.npz" --output-dir "$tmp/o$k"
  same_outputs run-$k-outputs "$tmp/o$k" "$data/models/gpt2.out.$k.npz" 1e-4
done
# Greedy decoding on the bucketed artifact (prefill at past 0, then decode at
# past 4..15) gives PyTorch's tokens (tools/export_models.py).
read -r prompt want <<<"$(cat "$data/models/gpt2.greedy.txt")"
check generate 0 "^tokens: ${want//,/ }\$" "$ait" generate "$tmp/g.ait" --prompt-ids "$prompt" \
  --max-new "$(tr ',' '\n' <<<"$want" | wc -l)"
# Batch buckets 1 and 2: both samples tuned at each batch, four plans in one
# artifact; greedy decoding of a batch of 2 runs the batch-2 plans (prefill,
# then decode), and each row gives PyTorch's tokens.
check tune-batches 0 "saved" "$ait" tune "$m" --data "$tmp/s" "${fast[@]}" --batch-sizes 1,2 \
  -o "$tmp/g12.ait"
check show-batches 0 "buckets +1/1/128 1/8/16 2/1/128 2/8/16 " "$ait" show "$tmp/g12.ait"
check generate-batch 0 "^tokens\[1\]: " "$ait" generate "$tmp/g12.ait" --prompt-ids "$prompt" \
  --batch 2 --max-new "$(tr ',' '\n' <<<"$want" | wc -l)"
rows=$(sed -n 's/^tokens\[[0-9]*\]: //p' <<<"$out" | tr '\n' '|')
if [ "$rows" = "${want//,/ }|${want//,/ }|" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL generate-batch-rows: rows '$rows', PyTorch's '${want//,/ }'"
fi
# Lists given: the prefill sample (seq 8, past 16) goes to seq 128, past 128.
check lists 0 "h.0 +1/128/128 " "$ait" tune "$m" --data "$tmp/s" "${fast[@]}" \
  --seq-buckets 1,128,512 --past-buckets 128,512,1024 --select h.0
check lists-order 2 "bad value for --seq-buckets: '128,1'" "$ait" tune "$m" --seq-buckets 128,1

PYTHONPATH=$(dirname "$0") /usr/bin/python3 - "$tmp" <<'PY'
import sys, artifact_edit as ae
d = sys.argv[1]
def edit(name, f):
    a = ae.load(d + "/g.ait"); f(a, a.manifest); a.save("%s/host/%s.ait" % (d, name))
edit("same", lambda a, m: None)
def seq(a, m): m["priming"][0][0]["shape"] = [1, 2]  # decode bucket primed at seq 2
edit("seq", seq)
def past(a, m): m["priming"][1][1]["shape"][2] = 17  # prefill bucket's past is 16
edit("past", past)
def big(a, m):
    m["buckets"][1]["seq"] = 1 << 20
    for mod in m["modules"]: mod["plans"][1]["seq"] = 1 << 20
edit("big", big)
def order(a, m):
    m["buckets"].reverse()
    for mod in m["modules"]: mod["plans"].reverse()
edit("order", order)
def plain(a, m): m["buckets"] = [1, 2]  # integer buckets with a "sequence"
edit("plain", plain)
def noinput(a, m): m["sequence"]["input"] = "attention_mask"
edit("noinput", noinput)
def dup(a, m): m["sequence"]["past"][1]["input"] = m["sequence"]["past"][0]["input"]
edit("dup", dup)
def plan(a, m):
    for mod in m["modules"]: mod["plans"][0]["past"] = 256
edit("plan", plan)
def old(a, m): m["version"] = 4
edit("old", old)
PY
run=("$ait" run --repeat 1 --input "$data/models/gpt2.in.0.npz")
check host-same 0 "tuned  the artifact's plan" "${run[@]}" "$tmp/host/same.ait"
check host-seq 1 "priming shape of input 'input_ids' at bucket batch 1, seq 1, past 128 disagrees" \
  "${run[@]}" "$tmp/host/seq.ait"
check host-past 1 "priming shape of input 'past_key_0' at bucket batch 1, seq 8, past 16 disagrees" \
  "${run[@]}" "$tmp/host/past.ait"
check host-big 1 "the manifest's buckets .* is missing or invalid" "${run[@]}" "$tmp/host/big.ait"
check host-order 1 "the manifest's buckets \(a decoder's: \{batch, seq, past\}, ascending\)" \
  "${run[@]}" "$tmp/host/order.ait"
check host-plain 1 "the manifest's buckets \(a decoder's" "${run[@]}" "$tmp/host/plain.ait"
check host-noinput 1 "the manifest's sequence is missing or invalid" "${run[@]}" "$tmp/host/noinput.ait"
check host-dup 1 "the manifest's sequence is missing or invalid" "${run[@]}" "$tmp/host/dup.ait"
check host-plan 1 "the manifest's bucket order of a module's plans is missing or invalid" \
  "${run[@]}" "$tmp/host/plan.ait"
check host-old 1 "plan format version 4; this ait reads version 5" "${run[@]}" "$tmp/host/old.ait"

# Weight-only int8 on both buckets: logits within 30 dB of the reference's
# and the same greedy token (the argmax of each row's last position).
check quant-tune 0 "saved" "$ait" tune "$m" --data "$tmp/s" "${fast[@]}" --quant int8wo -o "$tmp/q.ait"
for k in 0 1; do
  check quant-run-$k 0 "wrote" "$ait" run "$tmp/q.ait" --repeat 1 \
    --input "$data/models/gpt2.in.$k.npz" --output-dir "$tmp/q$k"
  check quant-close-$k 0 "^close" /usr/bin/python3 -c "
import numpy as np, sys
g = np.load(sys.argv[1])['logits'].astype(np.float64); r = np.load(sys.argv[2])['logits'].astype(np.float64)
s = 10 * np.log10((r * r).sum() / max(((g - r) ** 2).sum(), 1e-300))
same = (g[:, -1].argmax(-1) == r[:, -1].argmax(-1)).all()
print('close' if s >= 30 and same else 'sqnr %.1f dB, greedy same: %s' % (s, same))" \
    "$tmp/q$k/outputs.npz" "$data/models/gpt2.out.$k.npz"
done
finish
