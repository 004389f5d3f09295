#!/usr/bin/env bash
# CLI tests: `ait --help` teaches, `ait run` runs and writes outputs, and bad
# invocations fail with a message and exit code 2 (usage) or 1 (failure).
# usage: test_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"

check help 0 "commands:" "$ait" --help
check run-help 0 "--output-dir" "$ait" run --help
check unknown-command 2 "unknown command 'frobnicate'" "$ait" frobnicate
check run-no-model 2 "ait run: no MODEL given \(see ait run --help\)" "$ait" run
check run-bad-batch 2 "bad value for --batch" "$ait" run x.onnx --batch zero
check run-missing-file 1 "x-missing.onnx: cannot open" "$ait" run "$tmp/x-missing.onnx"
check run-corrupt 1 "truncated or corrupt" "$ait" run "$data/bad/truncated.onnx"
check run-good 0 "output y +float32 +\[2,3\]" "$ait" run "$data/bad/good.onnx"
check run-input-npy 0 "max 10 " "$ait" run "$data/bad/good.onnx" --input "x=$data/bad/good.npy"
check run-input-npz 0 "min 1 " "$ait" run "$data/bad/good.onnx" --input "$data/bad/good.npz"
check run-input-unknown 1 "'nope' is not an input of .*good.onnx \(its input is 'x'\)" "$ait" run "$data/bad/good.onnx" --input "nope=$data/bad/good.npy"
mkdir -p "$tmp/misnamed" && cp "$data/bad/good.npy" "$tmp/misnamed/nope.npy" # a sample folder
check inspect-data-unknown 1 "nope.npy: array 'nope' is not an input of .*good.onnx \(its input is 'x'\)" \
  "$ait" inspect "$data/bad/good.onnx" --data "$tmp/misnamed"
check run-input-badnpy 1 "truncated" "$ait" run "$data/bad/good.onnx" --input "x=$data/bad/truncated.npy"
check run-dim 0 "output c +float32 +\[5,3\]" "$ait" run "$data/bad/two_inputs.onnx" --dim N=5
check run-output-dir 0 "wrote 1 outputs" "$ait" run "$data/bad/good.onnx" --output-dir "$tmp/out"
if [ -f "$tmp/out/y.npy" ] && [ -f "$tmp/out/outputs.npz" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL output-files: $tmp/out/y.npy or outputs.npz missing"; fi
# Dims nobody set (issue 12): generated inputs take 1 for them; when that fails, the error
# says which dims, on which input, and how to set them; a --dim the model lacks is an error.
conv=$data/bad/conv_symbolic.onnx
check run-defaulted-dims 1 "kernel .* larger than the padded input .*dims nobody set were 1: input 'x' dim 2 \('height'\), dim 3 \('width'\); set them with --dim height=V --dim width=V; the smallest size for all of them that passes shape inference is 3: --dim height=3 --dim width=3\)" "$ait" run "$conv"
check run-defaulted-dim-smallest 1 "dims nobody set were 1: input 'x' dim 3 \('width'\); set them with --dim width=V; the smallest size for it that passes shape inference is 3: --dim width=3\)" "$ait" run "$conv" --dim height=7
check run-set-dims 0 "output y +float32 +\[1,2,3,2\]" "$ait" run "$conv" --dim height=5 --dim width=4
check run-unknown-dim 1 "--dim hieght=5: .* has no dim called 'hieght'; its inputs' dims are named: batch, height, width" "$ait" run "$conv" --dim hieght=5 --dim width=4
check run-unknown-dim-static 1 "--dim N=3: .* has no dim called 'N'" "$ait" run "$data/bad/good.onnx" --dim N=3
check tune-defaulted-dims 1 "ait tune: .*dims nobody set were 1: input 'x' dim 2 \('height'\), dim 3 \('width'\); set them with --dim height=V --dim width=V" "$ait" tune "$conv" --warmup 1 --window 2 --cap 3
check tune-unknown-dim 1 "--dim heigth=8: .* has no dim called 'heigth'; its inputs' dims are named: batch, height, width" "$ait" tune "$conv" --dim heigth=8
check tune-set-dims 0 "chosen: " "$ait" tune "$conv" --dim height=8 --dim width=8 --warmup 1 --window 2 --cap 3 --runs 1
# A model given its inputs in files needs no --dim, and gets no advice about generated dims.
check run-files-no-advice 0 "output z" "$ait" run "$data/bad/untyped_if.onnx" --input "$data/bad/untyped_if.then.in.npz"
# Values without a type (an If's branch outputs, a value_info) load and run as numpy says.
for c in then else; do
  check "run-untyped-if-$c" 0 "output z +float32 +\\[2,3\\]" "$ait" run "$data/bad/untyped_if.onnx" \
    --input "$data/bad/untyped_if.$c.in.npz" --output-dir "$tmp/untyped_$c"
  same_outputs "untyped-if-$c-values" "$tmp/untyped_$c" "$data/bad/untyped_if.$c.out.npz"
done
if [ -f "$data/models/bert.onnx" ]; then
  check run-bert 0 "last_hidden_state +float32 +\[2,16,256\]" "$ait" run "$data/models/bert.onnx" --batch 2 --dim seq=16 --repeat 1
fi
# ait inspect: the module table, its JSON, graph spec tables, selection
good=$data/bad/good.onnx
check inspect-help 0 "--batch-sizes 1,2,4" "$ait" inspect --help
check inspect-no-model 2 "no MODEL given" "$ait" inspect
check inspect-bad-batches 2 "bad value for --batch-sizes" "$ait" inspect "$good" --batch-sizes 1,x
check inspect-bad-share 2 "bad value for --min-share" "$ait" inspect "$good" --min-share 2
check inspect-run 0 "\(model\) +1 +6 +24 B +6 +float32" "$ait" inspect "$good" --runs 2
check inspect-static 0 "shapes: assumed static \(one batch size\)" "$ait" inspect "$good"
check inspect-coverage 0 "coverage: node times sum to .* model wall time" "$ait" inspect "$good"
if "$ait" inspect "$good" --json 2>/dev/null >"$tmp/i.json" && /usr/bin/python3 -m json.tool "$tmp/i.json" >/dev/null &&
  grep -q '"static_shapes": true' "$tmp/i.json"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL inspect-json: not valid JSON:"; head -20 "$tmp/i.json"; fi
check inspect-module 0 "Locator +Name +Shape +Min Shape +Max Shape +Dtype" "$ait" inspect "$good" --module "(model)"
check inspect-module-row 0 "inputs\[0\] +x +\[2,3\] +\[2,3\] +\[2,3\] +float32" "$ait" inspect "$good" --module "(model)"
check inspect-bad-module 1 "no module called 'nope'" "$ait" inspect "$good" --module nope
check inspect-bad-select 1 "--select nope: no module is called 'nope'" "$ait" inspect "$good" --select nope
check inspect-bad-strategy 2 "unknown strategy 'fastest'" "$ait" inspect "$good" --strategy fastest
check inspect-bad-data 1 "nope.npz" "$ait" inspect "$good" --data "$tmp/nope.npz"
check tune-help 0 "--dry-run" "$ait" tune --help
check tune-good 0 "chosen: reference/t1" "$ait" tune "$good" --warmup 1 --window 3 --cap 5 --runs 1
check tune-bad-cap 2 "--cap 2 is below --window 3" "$ait" tune "$good" --window 3 --cap 2
check tune-dry-run 0 "candidates +reference" "$ait" tune "$good" --dry-run
check tune-dry-run-no-whole 0 "whole +off \(--no-whole\)" "$ait" tune "$good" --dry-run --no-whole
check tune-dry-run-select-whole 0 "whole +off \(the tune is bounded by the selected modules" "$ait" tune "$good" --dry-run --select seg.0
check tune-dry-run-cache 0 "cache +$tmp/cache" env AIT_CACHE_DIR="$tmp/cache" "$ait" tune "$good" --dry-run
# The results cache: a second tune takes every result from it and runs nothing;
# corrupt entries are recomputed; --clear-cache empties it; an unusable folder
# (under a regular file, which stops root too) is a warning, not a failure.
tc=$tmp/tcache
tune_small() { env AIT_CACHE_DIR="$1" "$ait" tune "$good" --warmup 1 --window 3 --cap 5 --runs 1 "${@:2}"; }
check tune-cache-first 0 "cache: 0 candidates from the cache, [1-9][0-9]* run" tune_small "$tc"
check tune-cache-hit 0 "cache: [1-9][0-9]* candidates? from the cache, 0 run" tune_small "$tc"
check tune-cache-hit-line 0 "reference/t1: ok, .* \(cached\)" tune_small "$tc"
for f in "$tc"/tune-*.json; do echo '{"kind": "ait tune trial",' >"$f"; done
check tune-cache-corrupt 0 "corrupt entry .*tuning it anew" tune_small "$tc"
check tune-cache-rewritten 0 "cache: [1-9][0-9]* candidates? from the cache, 0 run" tune_small "$tc"
# --cpu-clock times candidates on another clock: says so, and takes nothing from
# the wall clock's cache entries (then its own on the second tune).
check tune-cpu-clock 0 "cache: 0 candidates from the cache, [1-9][0-9]* run" tune_small "$tc" --cpu-clock
if grep -q "timing candidates at one thread by their CPU time" <<<"$out"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL tune-cpu-clock-said: no line about the clock"; fi
check tune-cpu-clock-hit 0 "cache: [1-9][0-9]* candidates? from the cache, 0 run" tune_small "$tc" --cpu-clock
echo mine >"$tc/notes.txt"
check tune-clear-cache 0 "cleared [1-9][0-9]* entr" tune_small "$tc" --clear-cache --no-cache
if [ "$(ls -A "$tc")" = notes.txt ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL tune-clear-cache-files: left $(ls -A "$tc")"; fi
check tune-cache-unusable 0 "cannot use the folder .*Not a directory.*without a cache" tune_small "$good/sub"
check tune-no-cache 0 "cache: off" tune_small "$tc" --no-cache
check tune-bad-max-batches 2 "bad value for --max-batches-per-size" "$ait" tune "$good" --max-batches-per-size 0
check tune-summary 0 "summary" tune_small "$tc" --max-batches-per-size 1
# only:NAME takes the backend's candidate whatever the baseline's time; --margin
# is said in each choice, and must be a share below 1.
check tune-only 0 "chosen: onednn/t1\. onednn/t1 chosen: only:onednn" tune_small "$tc" --strategy only:onednn
check tune-margin 0 "(is not 50% above|margin 50%)" tune_small "$tc" --margin 50%
check tune-bad-margin 2 "bad value for --margin: '1'" "$ait" tune "$good" --margin 1
if tune_small "$tc" --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["modules"][0]["candidates"][0]; assert c["cached"] is True and c["status"] == "ok" and d["cache"]["trials"] == 0, d'; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL tune-json: not the report as JSON"; fi
# resnet18's inspections and tune: tests/cli/test_resnet_cli.sh (cli_resnet).
if [ -f "$data/models/bert.onnx" ]; then
  mkdir -p "$tmp/bert" && cp "$data"/models/bert.in.*.npz "$tmp/bert/" # two sequence lengths
  check inspect-bert-axes 0 "inputs\[0\] .*\[batch0,dim1,256\] +\[1,16,256\] +\[2,128,256\]" \
    "$ait" inspect "$data/models/bert.onnx" --runs 1 --data "$tmp/bert" --batch-sizes 1,2 --module layer.0
  # Two sequence lengths: every candidate is also validated at the min and max shapes.
  check tune-bert-max-shape 0 "min shape \(.*\[1,16,256\].* and max shape \(.*\[1,128,256\]" \
    "$ait" tune "$data/models/bert.onnx" --runs 1 --data "$tmp/bert" --select layer.0 --no-cache \
    --warmup 1 --window 3 --cap 5 --max-batches-per-size 1
fi
if [ -f "$data/models/gpt2.onnx" ]; then
  mkdir -p "$tmp/gpt2" && cp "$data"/models/gpt2.in.*.npz "$tmp/gpt2/" # decode and prefill shapes
  check inspect-gpt2-axes 0 "outputs\[0\] +present_key_0 +\[batch0,4,dim2,32\]" \
    "$ait" inspect "$data/models/gpt2.onnx" --runs 1 --data "$tmp/gpt2" --batch-sizes 1,2 --module h.0
  check inspect-gpt2-decoder 0 "decoder: sequence axis 1 of 'input_ids'; key/value cache of 4 inputs grown along their axis 2" \
    "$ait" inspect "$data/models/gpt2.onnx" --runs 1 --data "$tmp/gpt2" --batch-sizes 1,2
  check inspect-gpt2-decoder-json 0 '"kv_cache": \[' \
    "$ait" inspect "$data/models/gpt2.onnx" --runs 1 --data "$tmp/gpt2" --batch-sizes 1,2 --json
  check inspect-bert-no-decoder 0 '"decoder": null' "$ait" inspect "$data/models/bert.onnx" --runs 1 --json
  # Greedy generation: tokens decoded one at a time against the cache must be
  # the tokens a prefill of the prompt and the first ones gives (no cache).
  check generate-gpt2 0 "^tokens:( [0-9]+){6}$" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids 1,2,3 --max-new 6
  read -r _ t1 t2 t3 t4 t5 t6 <<<"$(grep '^tokens:' <<<"$out")"
  check generate-gpt2-same-without-cache 0 "^tokens: $t4 $t5 $t6$" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids "1,2,3,$t1,$t2,$t3" --max-new 3
  check generate-gpt2-eos 0 "^tokens: $t1 $t2$" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids 1,2,3 --max-new 6 --eos "$t2"
  check generate-gpt2-phases 0 "decode: +5 tokens in .* tokens/s" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids 1,2,3 --max-new 6
  for m in gpt2 llama; do # PyTorch's greedy tokens (tools/export_models.py)
    [ -f "$data/models/$m.greedy.txt" ] || continue
    read -r prompt want <<<"$(cat "$data/models/$m.greedy.txt")"
    check "generate-$m-as-pytorch" 0 "^tokens: ${want//,/ }$" \
      "$ait" generate "$data/models/$m.onnx" --prompt-ids "$prompt" --max-new 12
    # every layer on native (attention on its fused kernel, past read in place)
    mkdir -p "$tmp/native-$m" && cp "$data"/models/$m.in.*.npz "$tmp/native-$m/"
    layers=$([ $m = gpt2 ] && echo 'h.*' || echo 'layer.*')
    check "tune-$m-native" 0 "saved $tmp/native-$m.ait" \
      "$ait" tune "$data/models/$m.onnx" --data "$tmp/native-$m" --select "$layers=only:native" \
      --warmup 1 --window 2 --cap 3 --runs 1 --no-cache -o "$tmp/native-$m.ait"
    check "generate-$m-native-as-pytorch" 0 "^tokens: ${want//,/ }$" \
      "$ait" generate "$tmp/native-$m.ait" --prompt-ids "$prompt" --max-new 12
    # A batch: each row's tokens are those of the row run alone (and PyTorch's);
    # the untuned model copies its caches, the artifact appends in place.
    for src in "$data/models/$m.onnx" "$tmp/native-$m.ait"; do
      check "generate-$m-alone-$(basename "$src")" 0 "^tokens:( [0-9]+){12}$" \
        "$ait" generate "$src" --prompt-ids 1,2,3,4 --max-new 12
      alone=$(sed -n 's/^tokens: //p' <<<"$out")
      check "generate-$m-batch-$(basename "$src")" 0 "^tokens\[2\]: " \
        "$ait" generate "$src" --prompt-ids "$prompt" --prompt-ids 1,2,3,4 --prompt-ids "$prompt" \
        --max-new 12
      rows=$(sed -n 's/^tokens\[[0-9]*\]: //p' <<<"$out" | tr '\n' '|')
      if [ "$rows" = "${want//,/ }|$alone|${want//,/ }|" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL generate-$m-batch-rows: rows '$rows', alone '$alone'"
      fi
    done
    check "generate-$m-batch-of-one-prompt" 0 "^tokens\[1\]: ${want//,/ }$" \
      "$ait" generate "$tmp/native-$m.ait" --prompt-ids "$prompt" --batch 2 --max-new 12
  done
  if [ -f "$data/models/llama.greedy.txt" ]; then
    # The untied LM head written in forward has no scope: a module of its
    # own that --select reaches; the artifact gives PyTorch's tokens.
    mkdir -p "$tmp/llama" && cp "$data"/models/llama.in.*.npz "$tmp/llama/"
    check inspect-llama-unscoped 0 "^ +unscoped\.0 +1 " "$ait" inspect "$data/models/llama.onnx" --runs 1
    check tune-llama-unscoped 0 "saved $tmp/llama.ait" \
      "$ait" tune "$data/models/llama.onnx" --data "$tmp/llama" --select unscoped.0 --warmup 1 \
      --window 2 --cap 3 --runs 1 -o "$tmp/llama.ait"
    read -r prompt want <<<"$(cat "$data/models/llama.greedy.txt")"
    check generate-llama-artifact 0 "^tokens: ${want//,/ }$" \
      "$ait" generate "$tmp/llama.ait" --prompt-ids "$prompt" --max-new 12
  fi
  check generate-not-decoder 1 "bert.onnx: no key/value cache found" \
    "$ait" generate "$data/models/bert.onnx" --prompt-ids 1,2
  check generate-bad-ids 2 "bad value for --prompt-ids: '1,x'" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids 1,x
  check generate-no-ids 2 "--prompt-ids is required" "$ait" generate "$data/models/gpt2.onnx"
  check generate-rows-of-two-lengths 2 "bad value for --prompt-ids: '1,2,3'" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids 1,2 --prompt-ids 1,2,3
  check generate-batch-and-rows 2 "--batch 3 with 2 prompts" \
    "$ait" generate "$data/models/gpt2.onnx" --prompt-ids 1,2 --prompt-ids 1,3 --batch 3
fi
# Rough edges (issue 17): one line for a usage error, never the whole help; what was wrong named.
one_line() { # NAME PATTERN CMD...: exit 2, one line on stderr matching PATTERN
  local name=$1 pat=$2; shift 2
  check "$name" 2 "$pat" "$@"
  if [ "$(wc -l <<<"$out")" != 1 ]; then fail=$((fail + 1)); echo "FAIL $name-one-line: $out"; fi
}
one_line run-unknown-option "^ait run: unknown option '--bogus' \(see ait run --help\)$" "$ait" run "$good" --bogus
one_line tune-unknown-option "^ait tune: unknown option '--frobnicate' \(see ait tune --help\)$" "$ait" tune "$good" --frobnicate
one_line inspect-unknown-short "^ait inspect: unknown option '-z'" "$ait" inspect "$good" -z
one_line show-unknown-option "^ait show: unknown option '--nope'" "$ait" show x.ait --nope
one_line tune-missing-value "^ait tune: --timeout needs a value" "$ait" tune "$good" --timeout
one_line run-extra-arg "^ait run: unexpected argument 'extra.onnx': one MODEL only, and it is '.*good.onnx'" "$ait" run "$good" extra.onnx
one_line tune-extra-arg "^ait tune: unexpected argument 'more': one MODEL only" "$ait" tune "$good" more --dry-run
one_line show-extra-arg "^ait show: unexpected argument 'b.ait': one artifact only, and it is 'a.ait'" "$ait" show a.ait b.ait
one_line tune-bad-value "^ait tune: bad value for --timeout: '0' \(see ait tune --help\)$" "$ait" tune "$good" --timeout 0
# --timeout takes fractions of a second.
check tune-timeout-fraction 0 "chosen: " "$ait" tune "$good" --timeout 2.5 --warmup 1 --window 2 --cap 3 --runs 1 --no-cache
# A directory as the model says so.
check run-model-dir 1 "ait run: $tmp: is a directory" "$ait" run "$tmp"
check tune-model-dir 1 "ait tune: $tmp: is a directory" "$ait" tune "$tmp" --dry-run
# -o is checked before the tune starts: a missing folder or a directory is refused at once.
check tune-output-nofolder 1 "^ait tune: -o $tmp/no/such/x.ait: folder $tmp/no/such does not exist \(nothing was tuned\)$" \
  "$ait" tune "$good" -o "$tmp/no/such/x.ait"
check tune-output-dir 1 "^ait tune: -o $tmp: is a directory" "$ait" tune "$good" -o "$tmp"
# tune --dry-run --json: one JSON document on stdout, the modules and candidates the text lists.
if "$ait" tune "$good" --dry-run --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["dry_run"] and d["modules"] and d["modules"][0]["candidates"][0] == "reference/t1", d'; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL tune-dry-run-json: not JSON"; fi
# --threads on an untuned model (the reference ops: one thread) says so.
check run-threads-untuned 0 "note +untuned: the reference ops run on one thread, so --threads 4" "$ait" run "$good" --threads 4 --repeat 1
finish