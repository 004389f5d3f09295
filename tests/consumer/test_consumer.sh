#!/usr/bin/env bash
# ait as other programs get it: installs the build into a temporary prefix,
# checks what is installed, then builds consumer.c (outside the build tree,
# with the system's cc and cmake, seeing only the installed files) with
# pkg-config (shared, and --static) and with find_package(ait) (ait::ait and
# ait::ait_static), and runs each on MODEL: run, tune, save, load the .ait, run.
# usage: test_consumer.sh BUILD_DIR MODEL.onnx
# CONSUMER_FLAGS: extra compile and link flags (the sanitizer build's).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 model=$2
flags=${CONSUMER_FLAGS:-}
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
no() { echo "FAILED: $1"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
if cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  ok "cmake --install into a temporary prefix"
else
  no "cmake --install: $(tail -3 "$tmp/install.log")"; finish
fi
for f in include/ait.h lib/libait.so lib/libait.so.0 lib/libait.a lib/pkgconfig/ait.pc \
         lib/cmake/ait/aitConfig.cmake lib/cmake/ait/aitConfigVersion.cmake bin/ait; do
  if [ -e "$prefix/$f" ]; then ok "installed $f"; else no "$f not installed"; fi
done
so=$(readlink -f "$prefix/lib/libait.so")
[ "$(readlink "$prefix/lib/libait.so.0")" = "$(basename "$so")" ] && [ -f "$so" ] \
  && ok "libait.so.0 links to $(basename "$so")" || no "libait.so.0 does not link to the library"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libait.so.0 ] && ok "soname libait.so.0" || no "soname is '$soname'"
extra=$(cd "$prefix" && find . -type f | grep -v -E '^\./(include/ait\.h|lib/libait\.(so\.[0-9.]+|a)|lib/pkgconfig/ait\.pc|lib/cmake/ait/.*\.cmake|bin/ait|bin/ait-mpi)$')
[ -z "$extra" ] && ok "nothing else installed (no private headers or libraries)" || no "also installed: $extra"
"$prefix/bin/ait" --version >/dev/null 2>&1 && ok "the installed ait command runs" || no "bin/ait --version fails"
# ait-mpi (the command built with Open MPI, which `ait gemm tune --mpi` execs
# from ait's folder) is installed beside ait when the build made it
if [ -x "$build/ait-mpi" ]; then
  "$prefix/bin/ait-mpi" --version >/dev/null 2>&1 && ok "ait-mpi installed beside ait" || no "bin/ait-mpi missing or fails"
fi

# Every build runs in its own folder, tunes into its own cache.
export AIT_CACHE_DIR=$tmp/cache
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
version=$(pkg-config --modversion ait)
[ -n "$version" ] && ok "pkg-config finds ait $version" || no "pkg-config does not find ait"
src=$tmp/src   # a copy: nothing of the build tree or the source tree is seen
mkdir -p "$src" && cp "$here/consumer.c" "$here/CMakeLists.txt" "$src/"

run_consumer() { # NAME PROGRAM
  local out=$tmp/run-$1
  mkdir -p "$out"
  if "$2" "$model" "$out" >"$out.log" 2>&1; then
    ok "$1: $(grep -c '^ok:' "$out.log") checks pass"
  else
    no "$1: $(grep -E 'FAILED|rror' "$out.log" | head -5 | tr '\n' ' ')"
  fi
}
built() { # NAME LOG
  no "$1 does not build: $(grep -E 'error|undefined' "$2" | head -5 | tr '\n' ' ')"
}

# pkg-config, shared: the program finds libait.so.0 through its rpath.
libdir=$(pkg-config --variable=libdir ait)
if cc -Wall -Wextra -Werror $flags "$src/consumer.c" -o "$tmp/pc_shared" \
     $(pkg-config --cflags --libs ait) -lm -Wl,-rpath,"$libdir" >"$tmp/pc_shared.log" 2>&1; then
  ok "pkg-config --cflags --libs ait: built"
  readelf -d "$tmp/pc_shared" | grep -q 'NEEDED.*\[libait\.so\.0\]' \
    && ok "pkg-config shared: the program needs libait.so.0" || no "pkg-config shared: no libait.so.0 in NEEDED"
  run_consumer pkg-config-shared "$tmp/pc_shared"
else
  built "pkg-config shared" "$tmp/pc_shared.log"
fi

# pkg-config --static: libait.a by name (-l:libait.a), then what it needs.
if cc -Wall -Wextra -Werror $flags "$src/consumer.c" -o "$tmp/pc_static" \
     $(pkg-config --static --cflags --libs ait | sed 's/-lait\b/-l:libait.a/') -lm \
     >"$tmp/pc_static.log" 2>&1; then
  ok "pkg-config --static: built"
  ! readelf -d "$tmp/pc_static" | grep -q 'libait' \
    && ok "pkg-config --static: the program does not need libait.so" || no "pkg-config --static: linked libait.so"
  run_consumer pkg-config-static "$tmp/pc_static"
else
  built "pkg-config --static" "$tmp/pc_static.log"
fi

# find_package(ait VERSION EXACT): ait::ait and ait::ait_static.
if cmake -S "$src" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DAIT_VERSION="$version" \
     -DCMAKE_C_FLAGS="-Wall -Wextra -Werror $flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
     >"$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1; then
  ok "find_package(ait $version EXACT): built"
  run_consumer find_package-ait::ait "$tmp/cm/consumer"
  run_consumer find_package-ait::ait_static "$tmp/cm/consumer_static"
else
  built "find_package(ait)" "$tmp/cm.log"
fi
# A version the package does not have is refused.
if cmake -S "$src" -B "$tmp/cm-bad" -DCMAKE_PREFIX_PATH="$prefix" -DAIT_VERSION=99.0 \
     >"$tmp/cm-bad.log" 2>&1; then
  no "find_package(ait 99.0 EXACT) was accepted"
else
  ok "find_package(ait 99.0 EXACT) is refused"
fi
finish
