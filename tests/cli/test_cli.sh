#!/usr/bin/env bash
# CLI tests: `ait --help` teaches, `ait run` runs and writes outputs, and bad
# invocations fail with a message and exit code 2 (usage) or 1 (failure).
# usage: test_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # NAME EXPECTED_RC PATTERN CMD...
  local name=$1 want=$2 pat=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && grep -qE -- "$pat" <<<"$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $name: exit $rc (want $want), output:"; echo "$out" | head -20
  fi
}

check help 0 "commands:" "$ait" --help
check run-help 0 "--output-dir" "$ait" run --help
check unknown-command 2 "unknown command 'frobnicate'" "$ait" frobnicate
check run-no-model 2 "usage: ait run" "$ait" run
check run-bad-batch 2 "bad value for --batch" "$ait" run x.onnx --batch zero
check run-missing-file 1 "x-missing.onnx: cannot open" "$ait" run "$tmp/x-missing.onnx"
check run-corrupt 1 "truncated or corrupt" "$ait" run "$data/bad/truncated.onnx"
check run-good 0 "output y +float32 +\[2,3\]" "$ait" run "$data/bad/good.onnx"
check run-input-npy 0 "max 10 " "$ait" run "$data/bad/good.onnx" --input "x=$data/bad/good.npy"
check run-input-npz 0 "min 1 " "$ait" run "$data/bad/good.onnx" --input "$data/bad/good.npz"
check run-input-unknown 1 "'nope' is not an input" "$ait" run "$data/bad/good.onnx" --input "nope=$data/bad/good.npy"
check run-input-badnpy 1 "truncated" "$ait" run "$data/bad/good.onnx" --input "x=$data/bad/truncated.npy"
check run-dim 0 "output c +float32 +\[5,3\]" "$ait" run "$data/bad/two_inputs.onnx" --dim N=5
check run-output-dir 0 "wrote 1 outputs" "$ait" run "$data/bad/good.onnx" --output-dir "$tmp/out"
if [ -f "$tmp/out/y.npy" ] && [ -f "$tmp/out/outputs.npz" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL output-files: $tmp/out/y.npy or outputs.npz missing"; fi
if [ -f "$data/models/bert.onnx" ]; then
  check run-bert 0 "last_hidden_state +float32 +\[2,16,256\]" "$ait" run "$data/models/bert.onnx" --batch 2 --dim seq=16 --repeat 1
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
