#!/bin/bash
# ait generate with the key/value cache appended in place (the default)
# and with two swapped buffers (--no-append, the past copied each step),
# side by side, interleaved (append, copy, append, copy ...): per model and
# prompt length P the median over ROUNDS of each run's median decode ms per
# token (decode at past P to P + MAX_NEW - 1), and the in-place count.
# usage: generate_append.sh AIT MODEL[.ait|.onnx] "P1 P2 .." [MAX_NEW [ROUNDS]]
ait=$1 model=$2 lens=$3 max_new=${4:-32} rounds=${5:-5}
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for p in $lens; do
  prompt=$(seq -s, 1 "$p")
  : > /tmp/ga.$$.a; : > /tmp/ga.$$.c
  for i in $(seq "$rounds"); do
    for mode in a c; do
      flag=; [ $mode = c ] && flag=--no-append
      out=$("$ait" generate "$model" --prompt-ids "$prompt" --max-new "$max_new" $flag 2>/dev/null)
      echo "$out" | sed -n 's/.*median \([0-9.]*\) ms per token.*/\1/p' >> /tmp/ga.$$.$mode
      [ $mode = a ] && cache=$(echo "$out" | sed -n 's/^cache: *//p')
    done
  done
  a=$(med < /tmp/ga.$$.a) c=$(med < /tmp/ga.$$.c)
  echo "$(basename "$model") P=$p append=${a}ms copy=${c}ms copy/append=$(awk -v a="$a" -v c="$c" 'BEGIN{printf "%.2f", c/a}') [$cache] load $(cut -d' ' -f1 /proc/loadavg)"
done
rm -f /tmp/ga.$$.a /tmp/ga.$$.c
