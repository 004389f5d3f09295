#!/usr/bin/env bash
# Runs examples/generate on MODEL with the prompt of GREEDY.txt (`PROMPT
# TOKENS`, PyTorch's greedy decode: tools/export_models.py) and checks that
# it prints PyTorch's tokens.
# usage: test_generate.sh GENERATE MODEL.onnx GREEDY.txt
set -uo pipefail
gen=$1 model=$2 greedy=$3
read -r prompt want <"$greedy" || { echo "FAILED: cannot read $greedy"; echo "0 passed, 1 failed"; exit 1; }
n=$(tr ',' '\n' <<<"$want" | wc -l)
got=$("$gen" "$model" "$prompt" "$n" 2>&1)
if [ "$got" = "tokens: ${want//,/ }" ]; then
  echo "ok: $(basename "$model"): $got"
  echo "1 passed, 0 failed"
else
  echo "FAILED: $(basename "$model"): got '$got', PyTorch's 'tokens: ${want//,/ }'"
  echo "0 passed, 1 failed"
  exit 1
fi
