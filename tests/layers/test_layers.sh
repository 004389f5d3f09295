#!/usr/bin/env bash
# The layer check (tools/check_layers) passes on src/, and fails, naming the
# file and the rule, on copies of src/ with one wrong include each.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/tools/check_layers
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
no() { echo "FAILED: $1"; fail=$((fail + 1)); }

if "$check" "$root/src" >/dev/null; then ok "src/ follows the layer order"; else no "src/ breaks the layer order"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wrong() { # FILE INCLUDE EXPECTED-MESSAGE-PART
  rm -rf "$tmp/src" && cp -r "$root/src" "$tmp/src"
  sed -i "1i #include \"$2\"" "$tmp/src/$1"
  local out
  if out=$("$check" "$tmp/src" 2>&1); then
    no "$1 including $2 passed the check"
  elif grep -qF "$1:1 includes \"$2\": $3" <<<"$out"; then
    ok "$1 including $2 is refused"
  else
    no "$1 including $2: unexpected message: $out"
  fi
}
wrong io/npy.c tune/plan_build.h "io may include only folders below it"
wrong ops/control.c exec/exec.h "ops may include only folders below it"
wrong runtime/plan.c tune/tuner.h "runtime may include only folders below it"
wrong backends/openblas.c ops/matmul_ref.h "the reference ops' kernels are private to ops/"
wrong core/cpu.c graph/graph.h "core may include only folders below it"
mkdir -p "$tmp/src2/misc" && cp -r "$root/src/core" "$tmp/src2/" && echo '' >"$tmp/src2/misc/x.c"
out=$("$check" "$tmp/src2" 2>&1)
if [ $? -ne 0 ] && grep -q "misc/x.c: folder 'misc' is not in the layer order" <<<"$out"; then
  ok "a folder outside the order is refused"
else
  no "a folder outside the order passed"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
