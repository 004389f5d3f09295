#!/usr/bin/env bash
# libait.so and libait.a give programs only ait_ names (tools/check_symbols),
# exactly the functions include/ait.h declares; and the check fails, naming
# the symbol, on libraries that leak another one.
# usage: test_symbols.sh LIBAIT.so LIBAIT.a
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/tools/check_symbols
so=$1 ar=$2
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
no() { echo "FAILED: $1"; fail=$((fail + 1)); }

for lib in "$so" "$ar"; do
  if out=$("$check" "$lib" 2>&1); then ok "$(basename "$lib"): only ait_ names"; else no "$out"; fi
done

# Exactly the header's functions, in both.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tr '\n' ' ' <"$root/include/ait.h" | grep -o 'AIT_API [^;(]*(' | grep -o 'ait_[a-z0-9_]*($' \
  | tr -d '(' | sort -u >"$tmp/header"
nm -D --defined-only "$so" | awk '{print $3}' | sort -u >"$tmp/so"
nm --defined-only "$ar" | awk 'NF == 3 && $2 ~ /^[A-Z]$/ {print $3}' | sort -u >"$tmp/ar"
n=$(wc -l <"$tmp/header")
for lib in so ar; do
  if [ "$n" -gt 0 ] && diff "$tmp/header" "$tmp/$lib" >"$tmp/diff"; then
    ok "$lib: the $n functions ait.h declares AIT_API, no more, no fewer"
  else
    no "$lib: not the header's $n functions: $(head -8 "$tmp/diff" | tr '\n' ' ')"
  fi
done

# The check refuses leaks (cc -fPIC: a shared library and an archive with a
# json_parse beside ait_ok, and a weak onnx__ name) and accepts ait_ names.
cat >"$tmp/leak.c" <<'C'
int ait_ok(void) { return 0; }
int json_parse(void) { return 1; }
__attribute__((weak)) int onnx__model_proto__descriptor;
static int local_helper(void) { return 2; }
int ait_ok2(void) { return local_helper(); }
C
cat >"$tmp/clean.c" <<'C'
int ait_ok(void) { return 0; }
static int local_helper(void) { return 2; }
int ait_ok2(void) { return local_helper(); }
C
cc -fPIC -shared -o "$tmp/libleak.so" "$tmp/leak.c" && cc -fPIC -c -o "$tmp/leak.o" "$tmp/leak.c" \
  && ar rcs "$tmp/libleak.a" "$tmp/leak.o" && cc -fPIC -shared -o "$tmp/libclean.so" "$tmp/clean.c" \
  && cc -fPIC -c -o "$tmp/clean.o" "$tmp/clean.c" && ar rcs "$tmp/libclean.a" "$tmp/clean.o" \
  || no "cannot build the test libraries"
for lib in libleak.so libleak.a; do
  if out=$("$check" "$tmp/$lib" 2>&1); then
    no "$lib passed the check"
  elif grep -q '^  json_parse$' <<<"$out" && grep -q '^  onnx__model_proto__descriptor$' <<<"$out" \
       && ! grep -q 'ait_ok\|local_helper' <<<"$out"; then
    ok "$lib is refused, naming json_parse and onnx__model_proto__descriptor"
  else
    no "$lib: unexpected message: $out"
  fi
done
for lib in libclean.so libclean.a; do
  if out=$("$check" "$tmp/$lib" 2>&1); then ok "$lib passes"; else no "$lib refused: $out"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
