#!/usr/bin/env bash
# CLI tests of the artifact: `ait tune -o` writes NAME.ait and its sums file
# (which sha256sum -c accepts), `ait show` prints the plan, `ait run NAME.ait`
# runs it and matches the untuned model, a changed byte or a cut file is
# refused (and --fallback-untuned runs the model untuned), and
# `ait run --jit --save` tunes on the first run and saves. (A missing CPU
# feature and another model's hash are crafted in tests/unit/test_plan.c.)
# usage: test_artifact_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/bert.onnx
small=(--dim seq=16 --batch-sizes 1,2 --warmup 1 --window 2 --cap 3 --cv 0.5 --runs 1)

# The first line of an output's statistics, for comparing two runs.
stats() { grep '^output' <<<"$1" | sed -E 's/ +/ /g'; }

check tune-help 0 "-o, --output NAME.ait" "$ait" tune --help
check show-help 0 "usage: ait show" "$ait" show --help
check show-missing 1 "nope.ait: cannot open" "$ait" show "$tmp/nope.ait"
check tune-save 0 "saved $tmp/bert.ait" "$ait" tune "$model" "${small[@]}" \
  --select 'layer.0=one-backend:openblas' --select layer.1 -o "$tmp/bert.ait"
check sums 0 "bert.ait: OK" bash -c "cd '$tmp' && sha256sum -c bert_sha256_sums.txt"
check show 0 "layer.0 +1 +(openblas|reference)/t1" "$ait" show "$tmp/bert.ait"
check show-json 0 "\"format\": \"ait-plan\"" "$ait" show "$tmp/bert.ait" --json
# An artifact needs the CPU features of the backends its plan uses, not all of
# the tuning machine's: on the reference alone, none.
check tune-portable 0 "saved" "$ait" tune "$model" "${small[@]}" --select layer.1=only:reference \
  -o "$tmp/portable.ait"
check show-portable 0 "runs here  yes \(needs no particular CPU feature\)" "$ait" show "$tmp/portable.ait"
check run-tuned 0 "tuned  the artifact's plan" "$ait" run "$tmp/bert.ait" --dim seq=16 --batch 2 --repeat 1
tuned=$(stats "$out")
"$ait" run "$model" --dim seq=16 --batch 2 --repeat 1 >"$tmp/plain.txt" 2>&1
# Same inputs (same seed), so the statistics agree to the printed digits but
# for rounding: compare the shapes and the leading digits of min and max.
if [ "$(sed -E 's/(min -?[0-9]\.[0-9]{3})[0-9]*/\1/; s/(max -?[0-9]\.[0-9]{3})[0-9]*/\1/; s/ mean.*//' <<<"$tuned")" = \
     "$(stats "$(cat "$tmp/plain.txt")" | sed -E 's/(min -?[0-9]\.[0-9]{3})[0-9]*/\1/; s/(max -?[0-9]\.[0-9]{3})[0-9]*/\1/; s/ mean.*//')" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL tuned-matches: '$tuned' vs '$(stats "$(cat "$tmp/plain.txt")")'"
fi

# A byte changed in the middle: refused, naming the file; the fallback runs untuned
# when the damage is outside the embedded model (here the first byte of the manifest).
cp "$tmp/bert.ait" "$tmp/bad.ait"
printf 'X' | dd of="$tmp/bad.ait" bs=1 seek=512 conv=notrunc status=none
check refuse-corrupt 1 "bad.ait: manifest sha256 mismatch" "$ait" run "$tmp/bad.ait" --dim seq=16
check fallback 0 "warning: running untuned: .*manifest sha256 mismatch" \
  "$ait" run "$tmp/bad.ait" --dim seq=16 --repeat 1 --fallback-untuned
check show-corrupt 1 "sha256 mismatch" "$ait" show "$tmp/bad.ait"
head -c 100000 "$tmp/bert.ait" >"$tmp/short.ait"
check refuse-truncated 1 "short.ait: truncated" "$ait" run "$tmp/short.ait"
check save-external 1 "cannot embed the model in the artifact: 1 of its tensors are in external data" \
  "$ait" tune "$data/bad/ext_ok.onnx" --warmup 1 --window 2 --cap 3 -o "$tmp/ext.ait"
check save-unwritable 1 "-o $tmp/no/such/dir/x.ait: folder $tmp/no/such/dir does not exist \\(nothing was tuned\\)" "$ait" tune "$model" "${small[@]}" \
  --select layer.1 -o "$tmp/no/such/dir/x.ait"

# An artifact whose modules are all native frees the weights its prepared blobs replace (its
# outputs those of the untuned model); with --fallback-untuned too, since the plan loads and
# nothing falls back; the untuned model keeps them (docs/reliability.md, Memory).
mlp=$data/models/mlp.onnx
check tune-native-mlp 0 "saved $tmp/mlp.ait" "$ait" tune "$mlp" --batch-sizes 1 \
  --strategy only:native --warmup 1 --window 2 --cap 3 --cv 0.5 -o "$tmp/mlp.ait"
check run-native-frees 0 "weights 0\.0[0-9] MiB" "$ait" run "$tmp/mlp.ait" --repeat 1 \
  --input "$data/models/mlp.in.0.npz" --output-dir "$tmp/mlp-out"
same_outputs native-frees-outputs "$tmp/mlp-out" "$data/models/mlp.out.0.npz" 1e-4
# The same artifact mapped in place (--map): the same outputs; a damaged or cut file refused
# as the copy refuses it.
check run-map 0 "the file mapped in place" "$ait" run "$tmp/mlp.ait" --repeat 1 --map \
  --input "$data/models/mlp.in.0.npz" --output-dir "$tmp/mlp-map"
same_outputs map-outputs "$tmp/mlp-map" "$data/models/mlp.out.0.npz" 1e-4
cmp -s "$tmp/mlp-map/outputs.npz" "$tmp/mlp-out/outputs.npz" ||
  { fail=$((fail + 1)); echo "FAIL map-bitwise: outputs differ from the copy's"; }
check refuse-corrupt-map 1 "bad.ait: manifest sha256 mismatch" "$ait" run "$tmp/bad.ait" --dim seq=16 --map
check refuse-truncated-map 1 "short.ait: truncated" "$ait" run "$tmp/short.ait" --map
check run-native-frees-fallback 0 "weights 0\.0[0-9] MiB" "$ait" run "$tmp/mlp.ait" --repeat 1 \
  --fallback-untuned
check run-untuned-keeps 0 "weights 95\.[0-9]+ MiB" "$ait" run "$mlp" --repeat 1

check jit 0 "JIT: tuned [0-9]+ modules" "$ait" run "$model" --dim seq=16 --jit --save "$tmp/jit.ait" --repeat 1
check jit-env 0 "JIT: tuned" env AIT_JIT=1 "$ait" run "$model" --dim seq=16 --repeat 1
check jit-saved 0 "tuned  the artifact's plan" "$ait" run "$tmp/jit.ait" --dim seq=16 --repeat 1
check save-needs-jit 1 "--save needs --jit" "$ait" run "$model" --dim seq=16 --save "$tmp/x.ait"

# Control flow in a module (issue 12): the voice-activity model (tools/export_models.py:
# a scripted If on the sample rate in module 'frontend', a GRU with its state in and out)
# tunes with 'frontend' cut out with its If (its branches read the module's input): the
# executor-based backends run it, onednn says it does not; the artifact saves, and running
# it gives PyTorch's outputs on both If branches (case 0: 16 kHz, batch 1; case 1: 8 kHz,
# batch 2).
vad=$data/models/vad.onnx
mkdir -p "$tmp/vad_samples" && cp "$data/models/vad.in.0.npz" "$data/models/vad.in.1.npz" "$tmp/vad_samples/"
check tune-control-flow 0 "frontend +1 +(reference|openblas)/t1 " \
  "$ait" tune "$vad" --data "$tmp/vad_samples" --batch-sizes 1,2 --warmup 1 --window 2 --cap 3 \
  -o "$tmp/vad.ait"
check tune-control-flow-saved 0 "saved $tmp/vad.ait" echo "$out"
check tune-control-flow-candidates 0 "\\* (reference|openblas)/t1 +ok" echo "$out"
check tune-control-flow-onednn 0 "onednn/t1 +failed .*node '/frontend/If' \\(If\\): If runs on the reference and openblas backends only" echo "$out"
check tune-control-flow-others 0 "head +2 +[a-z]+(:[a-z0-9-]+)?/t1 " echo "$out"
# The check runs around the control-flow module; on a slow machine it may
# find every other plan over 2x the tuned one and skip for that reason only.
check tune-control-flow-plan-check 0 "== whole-plan check at batch 2: (kept|switched|failed|skipped)" echo "$out"
check tune-control-flow-plan-check-why 0 "^ok$" bash -c 'grep -A1 "whole-plan check at batch 2: skipped" <<<"$1" |
  grep -qvE "skipped|nothing to compare with" && echo "skipped for another reason" || echo ok' _ "$out"
check show-control-flow 0 "frontend +1 +(reference|openblas)/t1 " "$ait" show "$tmp/vad.ait"
for k in 0 1; do
  check "run-control-flow-$k" 0 "tuned  the artifact's plan" "$ait" run "$tmp/vad.ait" \
    --input "$data/models/vad.in.$k.npz" --output-dir "$tmp/vad$k"
  same_outputs "run-control-flow-$k-values" "$tmp/vad$k" "$data/models/vad.out.$k.npz" 1e-4
done
# A keyword-spotting-style model (tools/export_models.py: convolutions, an LSTM with its state
# in and out, a symbolic frame count): tuned on its two samples (49 and 20 frames), the
# artifact gives PyTorch's outputs on both. Its LSTM (state in and out) runs on native's LSTM.
mkdir -p "$tmp/kws_samples" && cp "$data/models/kws.in.0.npz" "$data/models/kws.in.1.npz" "$tmp/kws_samples/"
check tune-kws 0 "lstm +1 +native[a-z0-9:]*/t1 .*chosen: the highest throughput" \
  "$ait" tune "$data/models/kws.onnx" --data "$tmp/kws_samples" --batch-sizes 1,2 --warmup 1 \
  --window 2 --cap 3 -o "$tmp/kws.ait"
check tune-kws-saved 0 "saved $tmp/kws.ait" echo "$out"
for k in 0 1; do
  check "run-kws-$k" 0 "tuned  the artifact's plan" "$ait" run "$tmp/kws.ait" \
    --input "$data/models/kws.in.$k.npz" --output-dir "$tmp/kws$k"
  same_outputs "run-kws-$k-values" "$tmp/kws$k" "$data/models/kws.out.$k.npz" 1e-4
done

# A module with more ports than a trial passes keeps its baseline untried and says why; the
# tune goes on, the artifact runs, and `ait show` prints no times for what was never timed.
check tune-wide 0 "wide +1 +reference/t1 +- +- +kept the baseline: it has 65 inputs and 65 outputs; a trial passes at most 64" \
  "$ait" tune "$data/bad/wide.onnx" --warmup 1 --window 2 --cap 3 -o "$tmp/wide.ait"
check show-wide 0 "wide +1 +reference/t1 +- +- +- +kept the baseline: it has 65 inputs" "$ait" show "$tmp/wide.ait"
check run-wide 0 "output y +float32 +\\[2\\]" "$ait" run "$tmp/wide.ait"

# A module drawing unseeded random values cannot be checked: it keeps its baseline and says
# why, the other module is tuned, the artifact runs.
check tune-random 0 "noise +1 +reference/t1 +- +- +kept the baseline: node '/noise/RandomNormalLike' \\(RandomNormalLike\\) draws new random values on every run" \
  "$ait" tune "$data/bad/random_module.onnx" --warmup 1 --window 2 --cap 3 -o "$tmp/rnd.ait"
check tune-random-others 0 "head +1 +[a-z]+/t1 +[0-9.]+ " echo "$out"
check run-random 0 "output y +float32 +\\[2,8\\]" "$ait" run "$tmp/rnd.ait"

# The sample rate is a scalar the If branches on: never generated (issue 12), it is asked for
# by name; given on the command line it runs the 8 kHz branch as PyTorch does.
check scalar-param-run 1 "input 'sr' is a single value that decides If '/frontend/If', not data: ait cannot guess it; give it, e.g. --input sr=VALUE" \
  "$ait" run "$vad"
check scalar-param-tune 1 "input 'sr' is a single value that decides If" "$ait" tune "$vad" --dry-run
/usr/bin/python3 -c "import numpy as np, sys; z = np.load(sys.argv[1]); [np.save(sys.argv[2] + '/' + k + '.npy', z[k]) for k in ('input', 'state')]" \
  "$data/models/vad.in.1.npz" "$tmp"
check scalar-param-literal 0 "output output" "$ait" run "$vad" --input "input=$tmp/input.npy" \
  --input "state=$tmp/state.npy" --input sr=8000 --output-dir "$tmp/vad_lit"
same_outputs scalar-param-literal-values "$tmp/vad_lit" "$data/models/vad.out.1.npz" 1e-4
check scalar-param-literal-shape 1 "--input state=3: a value on the command line is for an input of one element; 'state' is declared with more" \
  "$ait" run "$vad" --input state=3 --input sr=8000

# A latency budget nothing meets keeps the baseline, and says so: the tune goes on.
check tune-unmet-budget 0 "reference/t1 .*kept the baseline: latency-budget:1e-06: nothing fits the budget" \
  "$ait" tune "$data/bad/good.onnx" --strategy latency-budget:0.000001 --warmup 1 --window 2 --cap 3 \
  -o "$tmp/budget.ait"
check tune-unmet-budget-saved 0 "saved $tmp/budget.ait" echo "$out"

finish
