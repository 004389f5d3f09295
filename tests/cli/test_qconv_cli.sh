#!/usr/bin/env bash
# CLI tests of native's int8dq Conv (tune --quant int8dq) on resnet18's
# layer1 (3x3 Convs, residual Adds): the variant is offered, judged by its
# module's SQNR against the int8 bound (25 dB) and passes it; with a
# too-strict --min-sqnr it is rejected with the SQNR in the reason and the
# tune still picks a float32 candidate and writes a plan that runs.
# usage: test_qconv_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/resnet18.onnx
fast=(--warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-plan-check --no-cache --select layer1)

cands() { # JSON_FILE: name status sqnr reason of each int8dq candidate, and the chosen one
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["modules"]:
    for c in m["candidates"]:
        if c["variant"] == "int8dq":
            print(c["name"], c["status"], "bound", c.get("min_sqnr_db"), "sqnr", round(c["sqnr_db"] or -1), c["reason"] or "")
        if c["chosen"]:
            print("chosen", c["name"])
PY
}

"$ait" tune "$model" "${fast[@]}" --quant int8dq --json >"$tmp/q.json" 2>"$tmp/q.err"
check offered-ok 0 "^native:int8dq/t1 ok bound 25 sqnr (2[5-9]|[3-9][0-9])" cands "$tmp/q.json"
"$ait" tune "$model" "${fast[@]}" --quant int8dq --min-sqnr 90 --json -o "$tmp/s.ait" >"$tmp/s.json" 2>"$tmp/s.err"
check strict-rejected 0 "^native:int8dq/t1 rejected bound 90 .*SQNR .* below the bound 90 dB" cands "$tmp/s.json"
check strict-float 0 "^chosen (native|onednn|openblas)(:[a-z0-9]+)?/t1$" cands "$tmp/s.json"
mkdir -p "$tmp/o"
check strict-runs 0 "wrote 1 outputs" "$ait" run "$tmp/s.ait" --output-dir "$tmp/o" --repeat 1
finish
