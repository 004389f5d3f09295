# Shared by the CLI test scripts (sourced): a temp folder removed on exit,
# the tuning cache inside it (never ~/.cache), and check(), which runs a
# command and counts it passed when its exit code and output are as wanted.
# After sourcing: $tmp; check ... ; then `finish` prints "N passed, N failed".
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AIT_CACHE_DIR=$tmp/cache-default

check() { # NAME EXPECTED_RC PATTERN CMD...  (leaves the output in $out)
  local name=$1 want=$2 pat=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && grep -qE -- "$pat" <<<"$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $name: exit $rc (want $want), output:"; echo "$out" | tail -20
  fi
}

finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}
