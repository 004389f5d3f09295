#!/usr/bin/env bash
# CLI tests of the end-to-end accuracy guard (tune --accuracy-budget): on
# mlp at batch 1, every module on native (only:native) with int8dq and
# int4wo offered, so the plan holds quantised modules that each passed
# their own SQNR bound. A generous budget keeps them, with the whole
# model's figures (max abs/rel error, SQNR, top-1 agreement of the logits)
# in the JSON; a budget the quantised plan misses (80 dB: float32 is far
# above it) walks modules back, the lowest module SQNR first, each saying
# so, until the plan fits; the page of `ait report` shows the figures; a
# bad budget is one line ending "(see ait tune --help)".
# usage: test_accuracy_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/mlp.onnx
fast=(--warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-plan-check --no-cache --runs 1
      --strategy only:native --quant int8dq,int4wo)

# Sane figures: one bucket, the budget as given, one output (logits, a
# classifier: [batch, 1000]) with finite errors, SQNR, agreement in [0, 1].
sane() { # JSON_FILE WANT_MIN_SQNR
  /usr/bin/python3 - "$@" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
a, bad = d["accuracy"], []
if a["budget"]["min_sqnr_db"] != float(sys.argv[2]): bad.append("budget %s" % a["budget"])
if len(a["buckets"]) != 1: bad.append("%d buckets" % len(a["buckets"]))
for b in a["buckets"]:
    if b["rows"] != b["sample_batches"] * b["batch"] or b["rows"] < 1: bad.append("rows %s" % b["rows"])
    for key in ("as_tuned", "final"):
        outs = b[key]
        if [o["output"] for o in outs] != ["logits"]: bad.append("%s outputs %s" % (key, outs)); continue
        o = outs[0]
        if not (o["classifier"] and 0 <= o["top1_agreement"] <= 1 and o["rows"] == b["rows"]):
            bad.append("%s top-1 %s" % (key, o))
        if not (0 <= o["max_abs_err"] < 1e3 and 0 <= o["max_rel_err"] and o["nonfinite"] == 0):
            bad.append("%s errors %s" % (key, o))
        s = o["sqnr_db"]
        if not (s == "inf" or (isinstance(s, (int, float)) and 0 < s < 400)): bad.append("%s sqnr %s" % (key, s))
print("\n".join(bad) if bad else "sane")
PY
}

# Quantised choices of the plan, as "module=candidate" (walked-back ones too).
chosen() { /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(' '.join('%s=%s%s' % (m['path'], m['chosen'], '(walked)' if m['walked_back'] else '') for m in d['modules']))" "$1"; }

"$ait" tune "$model" "${fast[@]}" --accuracy-budget sqnr=1 -o "$tmp/l.ait" >"$tmp/loose.txt" 2>"$tmp/loose.err"
/usr/bin/python3 -c "import json,sys; json.dump(json.load(sys.stdin)['tuning'], open(sys.argv[1], 'w'))" \
  "$tmp/loose.json" < <("$ait" show "$tmp/l.ait" --json)
check loose-ran 0 "" test -s "$tmp/loose.json"
check text-figures 0 "end-to-end accuracy at batch 1 against the float32 reference \(1 sample batch, 1 row; budget: SQNR >= 1 dB\)" cat "$tmp/loose.txt"
check text-fits 0 "the plan as tuned meets the budget" cat "$tmp/loose.txt"
check loose-sane 0 "^sane$" sane "$tmp/loose.json" 1
check loose-keeps 0 "^ok$" /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); b = d['accuracy']['buckets'][0]
q = [m for m in d['modules'] if ':int' in m['chosen']]
assert q, 'no quantised module chosen: %s' % [m['chosen'] for m in d['modules']]
assert b['fits'] and b['walked_back'] == 0 and not any(m['walked_back'] for m in d['modules']), b
assert b['final'] == b['as_tuned'] and 'meets the budget' in b['note'], b
print('ok')" "$tmp/loose.json"
check few-samples-warned 0 "1 tuning sample row: the end-to-end accuracy" cat "$tmp/loose.err"

# 80 dB: each quantised module passed its own bound (25 dB) but the whole
# model is far below; float32 (native against the reference) is far above.
"$ait" tune "$model" "${fast[@]}" --accuracy-budget sqnr=80 --json -o "$tmp/t.ait" >"$tmp/tight.json" 2>"$tmp/tight.err"
check tight-sane 0 "^sane$" sane "$tmp/tight.json" 80
check tight-walks-back 0 "^ok$" /usr/bin/python3 -c "
import json, re, sys
d = json.load(open(sys.argv[1])); b = d['accuracy']['buckets'][0]
s0, s1 = b['as_tuned'][0]['sqnr_db'], b['final'][0]['sqnr_db']
assert isinstance(s0, float) and s0 < 80, ('as tuned', s0)
assert s1 == 'inf' or s1 >= 80, ('final', s1)
assert b['fits'] and b['walked_back'] >= 1 and 'now meets the budget' in b['note'], b
walked = [m for m in d['modules'] if m['walked_back']]
assert len(walked) == b['walked_back'], (len(walked), b['walked_back'])
first = None
for m in walked:
    w = re.match(r'walked back to float32 \((\S+), from (\S+)\): end-to-end SQNR ([0-9.]+) dB < budget 80 dB', m['why'])
    assert w, m['why']
    assert ':int' not in w.group(1) and w.group(1) == m['chosen'], (w.group(1), m['chosen'])
    was = [c for c in m['candidates'] if c['name'] == w.group(2)][0]
    assert was['status'] == 'ok' and was['sqnr_db'] >= was['min_sqnr_db'], was  # passed alone
    if abs(float(w.group(3)) - s0) < 0.051: first = (m, was['sqnr_db'])
# the first walked back (its note has the plan's SQNR as tuned) had the
# largest module error of the quantised modules
assert first, 'no module walked back at the as-tuned SQNR %s' % s0
quant = [c['sqnr_db'] for m in d['modules'] for c in m['candidates'] if c['chosen'] and ':int' in c['name']]
assert all(first[1] <= q for q in quant), (first[1], quant)
print('ok')" "$tmp/tight.json"
check tight-logged 0 "walked back to float32" cat "$tmp/tight.err"

# The page of the walked-back plan.
check report 0 "wrote" "$ait" report "$tmp/t.ait" -o "$tmp/t.html"
check report-accuracy 0 "End-to-end accuracy" cat "$tmp/t.html"
check report-walked 0 "data-figures=\"final\"" cat "$tmp/t.html"
check report-note 0 "walked back [0-9]+ modules? to float32; the plan now meets the budget" cat "$tmp/t.html"

# Without --quant or a budget the guard does not run.
"$ait" tune "$model" --warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-plan-check --no-cache \
  --select fc3 --json >"$tmp/f32.json" 2>/dev/null
check float-no-guard 0 "^None$" /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['accuracy'])" "$tmp/f32.json"

# Bad budgets: one line, ending with the pointer to the help.
for spec in junk sqnr=abc top1=2 sqnr=30,sqnr=40 abs=-1 sqnr= none,sqnr=3; do
  check "bad-budget[$spec]" 2 "^ait tune: --accuracy-budget .*\(see ait tune --help\)$" \
    "$ait" tune "$model" --accuracy-budget "$spec"
  check "bad-budget-one-line[$spec]" 0 "^1$" bash -c '"$@" 2>&1 | wc -l' _ "$ait" tune "$model" --accuracy-budget "$spec"
done
check help-budget 0 "accuracy-budget SPEC" "$ait" tune --help
finish
