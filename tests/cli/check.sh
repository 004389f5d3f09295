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

same_outputs() { # NAME OUT_DIR EXPECTED_NPZ [RTOL]: OUT_DIR/outputs.npz holds every expected array, close
  local name=$1 dir=$2 want=$3 rtol=${4:-1e-5} msg
  if msg=$(/usr/bin/python3 - "$dir/outputs.npz" "$want" "$rtol" 2>&1 <<'PY'
import sys
import numpy as np
got, want, rtol = np.load(sys.argv[1]), np.load(sys.argv[2]), float(sys.argv[3])
for k in want.files:
    assert k in got.files, "output %s missing (got %s)" % (k, got.files)
    a, b = got[k], want[k]
    assert a.shape == b.shape, "%s: shape %s, want %s" % (k, a.shape, b.shape)
    assert np.allclose(a, b, rtol=rtol, atol=rtol), "%s: max |diff| %g" % (k, np.abs(a - b).max())
PY
  ); then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: $msg"; fi
}
