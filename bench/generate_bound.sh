#!/bin/bash
# ait generate of two builds side by side, interleaved (A B A B ...): the
# decode median ms per token on the bundled gpt2 and llama, 7 rounds.
# usage: generate_bound.sh AIT_A AIT_B MODELS_DIR [PROMPT_LEN [EXT [MAX_NEW]]]
#   PROMPT_LEN: a prompt of ids 1..PROMPT_LEN (default: the 4 ids 5,17,42,7),
#   so decode runs at past PROMPT_LEN and up; EXT: .onnx (default) or .ait
#   (MODELS_DIR/gpt2.ait, llama.ait: tuned artifacts); MAX_NEW: default 64.
prompt=5,17,42,7
[ -n "$4" ] && prompt=$(seq -s, 1 "$4")
ext=${5:-.onnx} max_new=${6:-64}
for i in 1 2 3 4 5 6 7; do
  for b in "$1" "$2"; do
    for m in gpt2 llama; do
      r=$($b generate "$3"/$m$ext --prompt-ids "$prompt" --max-new "$max_new" 2>/dev/null | sed -n 's/.*median \([0-9.]*\) ms per token.*/\1/p')
      echo "$b $m $r"
    done
  done
done
