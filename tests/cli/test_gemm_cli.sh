#!/usr/bin/env bash
# CLI tests of `ait gemm` (docs/gemm.md): capture mlp's GEMMs (each shape
# reported once with -v), sweep M, tune two shapes with few iterations and a
# timeout, kill a tune and resume it from its rows, merge, compare, bad CSVs
# refused naming file:line and column, `ait tune --gemm-db` whose
# artifact embeds the configs and runs without the CSV, saying at run time
# (-v) which shapes take a tuned config and which the default, once each;
# compare's SVG chart; capture --data from samples (a bad sample named);
# a quantised MatMul captured as u8s8, quantised rows tuned on qgemm and
# taken by the runtime per dtype; ait itself never links libmpi, and --mpi without
# ait-mpi beside it says what is missing.
# usage: test_gemm_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
model=$data/models/mlp.onnx
quick=(--iters 2 --warmup 1 --timeout 20 --no-refs)

check help 0 "ait gemm capture" "$ait" gemm --help
check capture-help 0 "--m-sweep SPEC" "$ait" gemm capture --help
check tune-help 0 "--err-ratio F" "$ait" gemm tune --help
check merge-help 0 "usage: ait gemm merge" "$ait" gemm merge --help
check compare-help 0 "size class" "$ait" gemm compare --help
check unknown 2 "unknown subcommand 'nope'" "$ait" gemm nope
check capture-no-o 2 "-o untuned.csv is required" "$ait" gemm capture "$model"
check capture 0 "gemm M=1 N=4096 K=1024 f32 np bias\+relu: default config \(not tuned\)" \
  "$ait" gemm capture "$model" -o "$tmp/mlp.csv" -v
check capture-once 0 "^1$" bash -c "grep -c 'M=1 N=4096 K=1024' <<<'$out'"
check capture-rows 0 "^1,1000,4096,f32,np,bias,1$" cat "$tmp/mlp.csv"
check sweep 0 "wrote .*: 12 GEMM shapes \(3 captured, M swept\)" \
  "$ait" gemm capture "$model" -o "$tmp/sweep.csv" --m-sweep 1,4,16,64
check sweep-bad 1 "--m-sweep 'pow2:9-3'" "$ait" gemm capture "$model" -o "$tmp/x.csv" --m-sweep pow2:9-3

# two small shapes; the tune is killed after its first row, then resumed
{ head -1 "$tmp/mlp.csv"; grep -E '^(1,1000,4096|1,4096,1024),' "$tmp/mlp.csv"; } >"$tmp/two.csv"
"$ait" gemm tune "$tmp/two.csv" -o "$tmp/tuned.csv" "${quick[@]}" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
  [ -f "$tmp/tuned.csv" ] && [ "$(wc -l <"$tmp/tuned.csv")" -ge 2 ] && break
  sleep 0.05
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
check resume 0 "already tuned" "$ait" gemm tune "$tmp/two.csv" -o "$tmp/tuned.csv" "${quick[@]}"
check tuned-rows 0 "^3$" bash -c "wc -l <'$tmp/tuned.csv'"
check tuned-row 0 ",1,1000,4096,f32,np,bias,avx|,1,1000,4096,f32,np,bias,c," cat "$tmp/tuned.csv"
check tune-again 0 "2 shapes already tuned, 0 to go" "$ait" gemm tune "$tmp/two.csv" -o "$tmp/tuned.csv" "${quick[@]}"
check mp 0 "wrote .*mp.csv" "$ait" gemm tune "$tmp/two.csv" -o "$tmp/mp.csv" --mp 2 "${quick[@]}"
check mp-same-shapes 0 "all +2 " "$ait" gemm compare "$tmp/tuned.csv" "$tmp/mp.csv"
# --cpu-clock (through --mp's processes to each candidate's child): every row says it was timed
# by the thread's CPU time in its clock column, a tune without it the wall clock; such a CSV
# merges, compares, re-times by CPU time, and feeds --gemm-db (below)
check tune-cpu 0 "wrote .*cpu.csv" "$ait" gemm tune "$tmp/two.csv" -o "$tmp/cpu.csv" --mp 2 --cpu-clock "${quick[@]}"
check tune-cpu-header 0 ",skinny_nv,clock$" head -1 "$tmp/cpu.csv"
check tune-cpu-rows 0 "^2$" bash -c "grep -c ',cpu$' '$tmp/cpu.csv'"
check tune-wall-rows 0 "^2$" bash -c "grep -c ',wall$' '$tmp/tuned.csv'"
check cpu-merge 0 "wrote .*: 2 rows" "$ait" gemm merge "$tmp/cpu.csv" "$tmp/tuned.csv" -o "$tmp/cpuwall.csv"
check cpu-compare 0 "all +2 " "$ait" gemm compare "$tmp/tuned.csv" "$tmp/cpu.csv"
check cpu-retime 0 "skinny \(M<=16\) +2 " "$ait" gemm compare "$tmp/cpu.csv" --retime 1 --cpu-clock
check cpu-retime-needs 2 "--cpu-clock times again: it needs --retime R" "$ait" gemm compare "$tmp/cpu.csv" --cpu-clock
check cpu-db 0 "gemm M=1 N=4096 K=1024 f32 np bias\+relu: tuned config" \
  "$ait" gemm capture "$model" -o "$tmp/x.csv" -v --gemm-db "$tmp/cpu.csv"
check compare 0 "skinny \(M<=16\) +2 " "$ait" gemm compare "$tmp/tuned.csv"
check compare-two 0 "all +2 .*1.00x" "$ait" gemm compare "$tmp/tuned.csv" "$tmp/tuned.csv"
check compare-chart 0 "wrote .*chart.svg" "$ait" gemm compare "$tmp/tuned.csv" "$tmp/mp.csv" -o "$tmp/chart.svg"
# well-formed SVG: a row per class (skinny: both shapes, median bar with a whisker), a row per shape, the 1.0x line
check chart-svg 0 "^ok$" /usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
texts = [t.text for t in root.iter(ns + "text")]
assert "skinny (M<=16): 2 shapes" in texts, texts
assert "large (M>1024): 0 shapes" in texts, texts
assert "M=1 N=1000 K=4096 np bias" in texts and "M=1 N=4096 K=1024 np bias+relu" in texts, texts
bars = [r for r in root.iter(ns + "rect") if "bar" in r.get("class", "")]
assert len(bars) == 3, len(bars)
lines = [l.get("class") for l in root.iter(ns + "line")]
assert "ref" in lines and "whisk" in lines, lines
print("ok")' "$tmp/chart.svg"
# --refs: OpenBLAS and oneDNN re-timed beside both configs; per shape the faster, its time over tuned's
check compare-refs 0 "skinny \(M<=16\) +2 +[0-2] \( *[0-9]+%\) +[0-9.]+x" \
  "$ait" gemm compare "$tmp/mp.csv" --retime 1 --refs -v
check compare-refs-title 0 "tuned native against the faster of OpenBLAS and oneDNN" echo "$out"
printf '%s\n' "$out" >"$tmp/refs.txt"
check compare-refs-rows 0 "^2 rows ok$" /usr/bin/python3 -c '
import re, sys
rows = [l.split() for l in open(sys.argv[1]) if re.match(r" +1 +(1000|4096) ", l)]
for r in rows:  # M N K layout before after speedup lib lib_us lib/after
    after, lib_us, ratio = float(r[5]), float(r[8]), float(r[9].rstrip("x"))
    assert r[7] in ("openblas", "onednn"), r
    assert after > 0 and lib_us > 0 and abs(lib_us / after - ratio) <= 0.01 * ratio + 0.006, r
print(len(rows), "rows ok")' "$tmp/refs.txt"
check compare-refs-no-retime 2 "--refs times the libraries again: it needs --retime R" \
  "$ait" gemm compare "$tmp/mp.csv" --refs
check compare-retime-bad 2 "--retime '0': a count of rounds from 1 to 64" "$ait" gemm compare "$tmp/mp.csv" --retime 0
check compare-retime-two 2 "--retime takes one CSV" "$ait" gemm compare "$tmp/mp.csv" "$tmp/mp.csv" --retime 1
check compare-chart-bad 1 "nodir/chart.svg" "$ait" gemm compare "$tmp/tuned.csv" -o "$tmp/nodir/chart.svg"
check merge 0 "wrote .*: 2 rows" "$ait" gemm merge "$tmp/tuned.csv" "$tmp/tuned.csv" -o "$tmp/merged.csv"
check merge-untuned 0 "wrote .*: 12 rows" "$ait" gemm merge "$tmp/mlp.csv" "$tmp/sweep.csv" -o "$tmp/um.csv"
check merge-mixed 1 "is untuned but" "$ait" gemm merge "$tmp/tuned.csv" "$tmp/mlp.csv" -o "$tmp/bad.csv"

# bad CSVs: line and column named
printf 'm,n,dtype,layout\n1,2,f32,nn\n' >"$tmp/nok.csv"
check bad-header 1 "nok.csv:1: no column 'k'" "$ait" gemm tune "$tmp/nok.csv" -o "$tmp/o.csv"
printf 'm,n,k,dtype,layout,epilogue,count\n4,5,6,f32,nn,none,1\n4,-5,6,f32,nn,none,1\n' >"$tmp/neg.csv"
check bad-size 1 "neg.csv:3: column n: '-5' is out of range" "$ait" gemm tune "$tmp/neg.csv" -o "$tmp/o.csv"
printf 'm,n,k,dtype,layout,epilogue,count\n4,5,6,int4,nn,none,1\n' >"$tmp/dt.csv"
check bad-dtype 1 "dt.csv:2: column dtype: 'int4'" "$ait" gemm tune "$tmp/dt.csv" -o "$tmp/o.csv"
printf 'm,n,k,dtype,layout,epilogue,count\n4,5,6,f32,nn,none,1\n4,5,6,f32,nn,none,1\n' >"$tmp/dup.csv"
check bad-dup 1 "dup.csv:3: the same shape as line 2" "$ait" gemm tune "$tmp/dup.csv" -o "$tmp/o.csv"
sed 's/^AuthenticAMD\|^GenuineIntel/OtherVendor/' "$tmp/tuned.csv" >"$tmp/alien.csv"
check alien 0 "2 rows of another CPU skipped" "$ait" gemm capture "$model" -o "$tmp/x.csv" --gemm-db "$tmp/alien.csv"

# --data: the inputs from samples (bert at seq 7, not a generated 1): M = 7 at batch 1, 14 at 2
bert=$data/models/bert.onnx
/usr/bin/python3 -c 'import sys, numpy as np
np.savez(sys.argv[1], input_ids=np.arange(7, dtype=np.int64).reshape(1, 7), attention_mask=np.ones((1, 7), np.int64))
np.savez(sys.argv[2], input_ids=np.arange(7, dtype=np.int64).reshape(1, 7))' "$tmp/s7.npz" "$tmp/half.npz"
check capture-data 0 "wrote .*: 8 GEMM shapes" "$ait" gemm capture "$bert" --data "$tmp/s7.npz" --batch-sizes 1,2 -o "$tmp/data.csv"
check capture-data-m7 0 "^7,1024,256,f32,np,bias\+gelu,4$" cat "$tmp/data.csv"
check capture-data-m14 0 "^14,256,1024,f32,np,bias\+res,4$" cat "$tmp/data.csv"
check capture-data-missing 1 "half.npz.*attention_mask" "$ait" gemm capture "$bert" --data "$tmp/half.npz" -o "$tmp/x.csv"
check capture-data-dim 2 "--data gives every input: not with --input or --dim" \
  "$ait" gemm capture "$bert" --data "$tmp/s7.npz" --dim seq=3 -o "$tmp/x.csv"

# quantised GEMMs: a dynamically quantised MatMul (MatMulInteger, as ORT's
# quantize_dynamic writes it) is captured as u8s8; quantised rows tune on qgemm
# (checked against float64 within the dtype's quantisation bound), the float
# GEMM's default timed beside
/usr/bin/python3 - "$tmp/q.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
w = nh.from_array((np.arange(64 * 48) % 17 - 8).astype(np.int8).reshape(64, 48), "w")
g = h.make_graph([h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
                  h.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["yi"]),
                  h.make_node("Cast", ["yi"], ["yf"], to=T.FLOAT),
                  h.make_node("Mul", ["xs", "ws"], ["s"]), h.make_node("Mul", ["yf", "s"], ["y"])], "q",
                 [h.make_tensor_value_info("x", T.FLOAT, ["batch", 64])],
                 [h.make_tensor_value_info("y", T.FLOAT, ["batch", 48])],
                 [w, nh.from_array(np.array(0, np.int8), "wz"), nh.from_array(np.array(0.01, np.float32), "ws")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 21)]), sys.argv[1])
PY
check capture-quant 0 "gemm M=3 N=48 K=64 u8s8 np none: default config \(not tuned\)" \
  "$ait" gemm capture "$tmp/q.onnx" --batch-sizes 3 -o "$tmp/q.csv" -v
check capture-quant-row 0 "^3,48,64,u8s8,np,none,1$" cat "$tmp/q.csv"
printf '1,96,64,int8dq,np,none,1\n2,64,128,int4wo-64,np,none,1\n' >>"$tmp/q.csv"
check tune-quant 0 "gemm M=3 N=48 K=64 u8s8 np: (default|u8s8.t1) .*f32 default" \
  "$ait" gemm tune "$tmp/q.csv" -o "$tmp/qt.csv" "${quick[@]}"
check tune-quant-rows 0 "^3$" bash -c "grep -cE ',(u8s8|int8dq|int4wo-64),np,none,[a-z0-9-]+,0,0,0,0,0,0,[01],[0-9.]+,[0-9.]+,[0-9.]+,0,[0-9.]+,0,wall$' '$tmp/qt.csv'"
# the runtime takes quantised rows by dtype: u8s8 at M 5 takes M 3's (the
# nearest M), whose one knob is qgemm's threads, 1 here (said in its id);
# rows of another CPU, or tuned on a kernel qgemm does not pick here, are not used
check quant-db 0 "3 tuned GEMM shapes for this CPU \(0 f32, 3 quantised\)" \
  "$ait" gemm capture "$tmp/q.onnx" --batch-sizes 5 -o "$tmp/x.csv" -v --gemm-db "$tmp/qt.csv"
check quant-db-tuned 0 "gemm M=5 N=48 K=64 u8s8 np none: tuned config u8s8\.[a-z0-9-]+\.t[01]$" echo "$out"
# set column $2 of the u8s8 rows of $1 to $3 (the features column is quoted, with commas)
qset() { /usr/bin/python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["dtype"] == "u8s8": r[sys.argv[2]] = sys.argv[3]
w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0].keys()), lineterminator="\n")
w.writeheader(); w.writerows(rows)' "$@"; }
qset "$tmp/qt.csv" threads 1 >"$tmp/qt1.csv"
check quant-db-t1 0 "gemm M=5 N=48 K=64 u8s8 np none: tuned config u8s8\.[a-z0-9-]+\.t1$" \
  "$ait" gemm capture "$tmp/q.onnx" --batch-sizes 5 -o "$tmp/x.csv" -v --gemm-db "$tmp/qt1.csv"
# an artifact keeps the quantised rows: run without the CSV, the u8s8 GEMM takes its row
check quant-tune-db 0 "saved $tmp/q.ait" "$ait" tune "$tmp/q.onnx" --batch-sizes 3 --strategy only:native \
  --no-whole --no-plan-check --no-cache --warmup 1 --window 2 --cap 3 --gemm-db "$tmp/qt1.csv" -o "$tmp/q.ait"
mv "$tmp/qt1.csv" "$tmp/qt1.kept.csv"
check quant-run-db 0 "gemm M=3 N=48 K=64 u8s8 np none: tuned config u8s8\.[a-z0-9-]+\.t1$" \
  "$ait" run "$tmp/q.ait" --batch 3 --repeat 1 -v
sed 's/^AuthenticAMD\|^GenuineIntel/OtherVendor/' "$tmp/qt.csv" >"$tmp/qalien.csv"
check quant-db-alien 0 "3 rows of another CPU skipped" \
  "$ait" gemm capture "$tmp/q.onnx" --batch-sizes 5 -o "$tmp/x.csv" -v --gemm-db "$tmp/qalien.csv"
check quant-db-alien-default 0 "gemm M=5 N=48 K=64 u8s8 np none: default config \(not tuned\)" echo "$out"
qset "$tmp/qt.csv" kernel avx999 >"$tmp/qother.csv"
check quant-db-kernel 0 "1 quantised row tuned on a kernel qgemm does not pick here" \
  "$ait" gemm capture "$tmp/q.onnx" --batch-sizes 5 -o "$tmp/x.csv" -v --gemm-db "$tmp/qother.csv"
check quant-db-kernel-default 0 "gemm M=5 N=48 K=64 u8s8 np none: default config \(not tuned\)" echo "$out"

# the runtime: -v says which shapes the database covers; an artifact keeps the configs
check capture-tuned 0 "gemm M=1 N=1000 K=4096 f32 np bias: tuned config" \
  "$ait" gemm capture "$model" -o "$tmp/x.csv" -v --gemm-db "$tmp/tuned.csv"
check capture-miss 0 "M=1 N=4096 K=4096 f32 np bias\+relu: default config \(not tuned\)" echo "$out"
check tune-db 0 "saved $tmp/mlp.ait" "$ait" tune "$model" --batch-sizes 1 --select fc1=only:native \
  --select fc2=only:native --select fc3=only:native --gemm-db "$tmp/tuned.csv" --warmup 1 --window 2 \
  --cap 3 --cv 0.5 --no-plan-check -o "$tmp/mlp.ait"
check embedded 0 "^[1-9]" bash -c "grep -c AITGEMM2 '$tmp/mlp.ait'"
rm -f "$tmp/tuned.csv"
check run-without-csv 0 "tuned  the artifact's plan" "$ait" run "$tmp/mlp.ait" --batch 1 --repeat 1
# at run time (the session's log, -v): each shape once, tuned (fc3's, in the database) or not (fc2's)
check run-log-tuned 0 "gemm M=1 N=1000 K=4096 f32 np [a-z+]+: tuned config [a-z0-9-]+\.kc" \
  "$ait" run "$tmp/mlp.ait" --batch 1 --repeat 3 -v
check run-log-default 0 "gemm M=1 N=4096 K=4096 f32 np [a-z+]+: default config \(not tuned\)" echo "$out"
printf '%s\n' "$out" >"$tmp/run.log"
check run-log-once 0 "^1$" grep -c "gemm M=1 N=1000 K=4096" "$tmp/run.log"
# --mpi execs ait-mpi from ait's folder (only ait-mpi links Open MPI): an ait
# alone in a folder says so; ait never loads libmpi (nor any MPI library)
mkdir "$tmp/alone" && cp "$ait" "$tmp/alone/ait"
check mpi-missing 1 "--mpi runs $tmp/alone/ait-mpi, which is not there" \
  "$tmp/alone/ait" gemm tune "$tmp/two.csv" -o "$tmp/mpi-none.csv" --mpi
check mpi-missing-nothing-written 0 "^absent$" bash -c "[ -e '$tmp/mpi-none.csv' ] || echo absent"
check no-libmpi 0 "^0$" bash -c "l=\$(ldd '$ait') && grep -ci 'libmpi\|libopen-rte\|libopen-pal\|libpmix' <<<\"\$l\" || true"
finish
