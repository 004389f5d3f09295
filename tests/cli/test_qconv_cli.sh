#!/usr/bin/env bash
# CLI tests of native's int8dq and int8 (static, calibrated) Convs (tune
# --quant) on resnet18's layer1 (3x3 Convs, residual Adds): each variant is
# offered, judged by its module's SQNR against the int8 bound (25 dB) and
# passes it; int8's artifact (calibrated at the 99.9th percentile, int8
# pinned by the strategy) runs from its saved scales, and on layer3 (whose 3x3
# Convs run as int8 Winograd); with a too-strict --min-sqnr both are rejected
# with the SQNR in the reason and the tune still picks a float32 candidate
# and writes a plan that runs.
# usage: test_qconv_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/resnet18.onnx
fast=(--warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-plan-check --no-cache --select layer1 --runs 1)

cands() { # JSON_FILE: name status sqnr reason of each int8 candidate, and the chosen one
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["modules"]:
    for c in m["candidates"]:
        if c["variant"] in ("int8dq", "int8"):
            print(c["name"], c["status"], "bound", c.get("min_sqnr_db"), "sqnr", round(c["sqnr_db"] or -1), c["reason"] or "")
        if c["chosen"]:
            print("chosen", c["name"])
PY
}

# One tune offers both variants (every candidate is tried whatever the strategy);
# only:native:int8 makes static int8 the plan, so static-runs runs its saved scales.
"$ait" tune "$model" "${fast[@]}" --quant int8dq,int8 --calib-percentile 99.9 --strategy only:native:int8 \
  --json -o "$tmp/q8.ait" >"$tmp/q8.json" 2>"$tmp/q8.err"
check offered-ok 0 "^native:int8dq/t1 ok bound 25 sqnr (2[5-9]|[3-9][0-9])" cands "$tmp/q8.json"
check static-ok 0 "^native:int8/t1 ok bound 25 sqnr (2[5-9]|[3-9][0-9])" cands "$tmp/q8.json"
check static-chosen 0 "^chosen native:int8/t1$" cands "$tmp/q8.json"
mkdir -p "$tmp/o8"
check static-runs 0 "wrote 1 outputs" "$ait" run "$tmp/q8.ait" --output-dir "$tmp/o8" --repeat 1
# layer3's 3x3 Convs of 256 channels reading uint8 run static int8 Winograd F(2x2, 3x3)
# (conv.c's CONV_WQ8, kwg_conv_u8): its SQNR against the reference passes the same bound.
"$ait" tune "$model" "${fast[@]/layer1/layer3}" --quant int8 --strategy only:native:int8 \
  --json -o "$tmp/w8.ait" >"$tmp/w8.json" 2>"$tmp/w8.err"
check wino-static-ok 0 "^native:int8/t1 ok bound 25 sqnr (2[5-9]|[3-9][0-9])" cands "$tmp/w8.json"
check wino-static-chosen 0 "^chosen native:int8/t1$" cands "$tmp/w8.json"
mkdir -p "$tmp/w8o"
check wino-static-runs 0 "wrote 1 outputs" "$ait" run "$tmp/w8.ait" --output-dir "$tmp/w8o" --repeat 1
check bad-percentile 2 "calib-percentile" "$ait" tune "$model" --quant int8 --calib-percentile 40
"$ait" tune "$model" "${fast[@]}" --quant int8dq,int8 --min-sqnr 90 --json -o "$tmp/s.ait" >"$tmp/s.json" 2>"$tmp/s.err"
check strict-rejected 0 "^native:int8dq/t1 rejected bound 90 .*SQNR .* below the bound 90 dB" cands "$tmp/s.json"
check strict-rejected-static 0 "^native:int8/t1 rejected bound 90 .*SQNR .* below the bound 90 dB" cands "$tmp/s.json"
check strict-float 0 "^chosen (native|onednn|openblas)(:[a-z0-9-]+)?/t1$" cands "$tmp/s.json"
mkdir -p "$tmp/o"
check strict-runs 0 "wrote 1 outputs" "$ait" run "$tmp/s.ait" --output-dir "$tmp/o" --repeat 1
finish
