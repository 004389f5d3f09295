#!/bin/bash
# ait generate of two builds side by side, interleaved (A B A B ...): the
# decode median ms per token on the bundled gpt2 and llama, 7 rounds.
# usage: generate_bound.sh AIT_A AIT_B MODELS_DIR
for i in 1 2 3 4 5 6 7; do
  for b in "$1" "$2"; do
    for m in gpt2 llama; do
      r=$($b generate "$3"/$m.onnx --prompt-ids 5,17,42,7 --max-new 64 | sed -n 's/.*median \([0-9.]*\) ms per token.*/\1/p')
      echo "$b $m $r"
    done
  done
done
