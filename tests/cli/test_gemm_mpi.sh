#!/usr/bin/env bash
# `mpirun -n 2 ait gemm tune --mpi` (docs/gemm.md): both ranks tune, rank 0
# writes one CSV with the rows a one-process tune writes on the same shapes:
# the same header, the same keys (CPU, M, N, K, dtype, layout, epilogue) in
# the same order, and every row a native kernel that passed the float64
# check (error ratio 0). The chosen configs themselves are timings, free to
# differ where two candidates are within noise, so they are not compared.
# --cpu-clock reaches every rank (each row's clock column says cpu).
# A second run resumes (nothing left); --mpi with --mp is refused. ait
# execs ait-mpi (which links Open MPI) from its folder: ait-mpi is there and
# links libmpi (test_gemm_cli.sh checks that ait does not).
# usage: test_gemm_mpi.sh AIT MPIEXEC
set -u
ait=$1 mpiexec=$2
. "$(dirname "$0")/check.sh"
quick=(--iters 2 --warmup 1 --timeout 20)
# root in CI; --oversubscribe: more ranks than free cores is fine here
mpi=("$mpiexec" -n 2 --oversubscribe --allow-run-as-root)
# In a sanitizer build, LeakSanitizer reports what Open MPI's own plugins keep
# at exit (not ait's: its leaks show in the other tests, which run without MPI).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

check ait-mpi-links-mpi 0 "libmpi" ldd "$(dirname "$ait")/ait-mpi"
printf 'm,n,k,dtype,layout,epilogue,count\n8,64,64,f32,nn,none,1\n32,48,40,f32,np,bias,1\n3,100,17,f32,nt,none,2\n20,16,128,f32,tn,none,1\n1,24,24,f32,np,relu,1\n' >"$tmp/shapes.csv"
check one 0 "wrote .*one.csv" "$ait" gemm tune "$tmp/shapes.csv" -o "$tmp/one.csv" "${quick[@]}"
check mpi 0 "wrote .*mpi.csv: 5 shapes tuned on 2 ranks" "${mpi[@]}" "$ait" gemm tune "$tmp/shapes.csv" \
  -o "$tmp/mpi.csv" --mpi --cpu-clock "${quick[@]}"
check rank1-tuned 0 "rank 1/2: gemm M=" echo "$out"
check rank0-tuned 0 "rank 0/2: gemm M=" echo "$out"
# --cpu-clock reached every rank's candidates: each row timed by the thread's CPU time
check mpi-cpu-clock 0 "^5$" bash -c "grep -c ',cpu$' '$tmp/mpi.csv'"
check same-header 0 "^same$" bash -c "[ \"\$(head -1 '$tmp/one.csv')\" = \"\$(head -1 '$tmp/mpi.csv')\" ] && echo same"
# the rows' keys in file order, and whether each passed (a native kernel, error ratio 0)
rows() {
  /usr/bin/python3 - "$1" <<'PY'
import csv, sys
key = "vendor family model features m n k dtype layout epilogue".split()
for r in csv.DictReader(open(sys.argv[1])):
    ok = r["kernel"] not in ("failed", "") and float(r["err_ratio"]) == 0 and float(r["us"]) > 0
    print(",".join(r[c] for c in key), "passed" if ok else "FAILED")
PY
}
rows "$tmp/one.csv" >"$tmp/one.keys"
rows "$tmp/mpi.csv" >"$tmp/mpi.keys"
check same-keys 0 "^same$" bash -c "diff '$tmp/one.keys' '$tmp/mpi.keys' && echo same"
check five-passed 0 "^5$" grep -c "passed$" "$tmp/mpi.keys"
check mpi-resume 0 "5 shapes already tuned, 0 to go" "${mpi[@]}" "$ait" gemm tune "$tmp/shapes.csv" \
  -o "$tmp/mpi.csv" --mpi "${quick[@]}"
check mpi-mp 2 "--mpi and --mp" "$ait" gemm tune "$tmp/shapes.csv" -o "$tmp/x.csv" --mpi --mp 2
finish
