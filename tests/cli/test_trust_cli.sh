#!/usr/bin/env bash
# CLI tests of inputs that are not what they claim and of saving (issue 18;
# docs/reliability.md): hostile .npy/.npz (trailing data, an entry that
# inflates past its declared array, overflowing shapes), files that are not
# regular files (a FIFO, a folder) refused at once, 20 concurrent saves to one
# name leaving a matching artifact and sums pair, and no temporary behind.
# usage: test_trust_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"
good=$data/bad/good.onnx
T="timeout 20" # a FIFO that blocked would hang the test: fail it instead

/usr/bin/python3 - "$tmp" <<'PY'
import struct, sys, zipfile, zlib
import numpy as np
d = sys.argv[1]
x = np.arange(6, dtype=np.float32).reshape(2, 3)
np.save(d + "/ok.npy", x)
img = open(d + "/ok.npy", "rb").read()
open(d + "/trailing.npy", "wb").write(img + b"\0" * 16)
# A header whose shape overflows the byte size.
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }"
h += b" " * (63 - (10 + len(h)) % 64) + b"\n"
open(d + "/overflow.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h)
# A stored .npz entry with trailing bytes.
with zipfile.ZipFile(d + "/trailing.npz", "w") as z:
    z.writestr("x.npy", img + b"junk")
# A bomb: a (2,3) array followed by 64 MiB of zeros, deflated to ~64 KiB; the
# zip directory declares the whole size.
with zipfile.ZipFile(d + "/bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("x.npy", img + bytes(64 << 20))
# The same bomb whose zip directory declares only the array's size: the
# stream must be cut where the array ends.
b = bytearray(open(d + "/bomb.npz", "rb").read())
cd = b.rfind(b"PK\x01\x02")
b[cd + 24:cd + 28] = struct.pack("<I", len(img))
lo = struct.unpack("<I", b[cd + 42:cd + 46])[0]
b[lo + 22:lo + 26] = struct.pack("<I", len(img))
open(d + "/bomb_lies.npz", "wb").write(bytes(b))
PY

check npy-ok 0 "max 10 " "$ait" run "$good" --input "x=$tmp/ok.npy"
check npy-trailing 1 "trailing.npy: 16 unexpected bytes after the .npy data" \
  "$ait" run "$good" --input "x=$tmp/trailing.npy"
check npy-overflow 1 "overflow.npy: .*overflow" "$ait" run "$good" --input "x=$tmp/overflow.npy"
check npz-trailing 1 "trailing.npz: array 'x': 4 unexpected bytes after the .npy data" \
  "$ait" run "$good" --input "$tmp/trailing.npz"
check npz-bomb 1 "bomb.npz: array 'x': the zip entry declares [0-9]+ bytes, its .npy header 152" \
  $T "$ait" run "$good" --input "$tmp/bomb.npz"
check npz-bomb-lies 1 "bomb_lies.npz: array 'x': inflates past the 152 bytes its .npy header declares" \
  $T "$ait" run "$good" --input "$tmp/bomb_lies.npz"
# The bomb is refused without inflating it: peak memory far below its 64 MiB
# (ulimit -v would stop an ASan build, which reserves terabytes of shadow).
check npz-bomb-small 0 "^small$" bash -c "/usr/bin/time -f 'peak %M' '$ait' run '$good' \
  --input '$tmp/bomb.npz' 2>&1 | awk '/^peak/ { print \$2 < 60000 ? \"small\" : \"peak \" \$2 \" KB\" }'"

# Not regular files: refused before any read can block.
mkfifo "$tmp/fifo.onnx" "$tmp/fifo.npz" "$tmp/fifo.ait"
check fifo-model 1 "fifo.onnx: is a FIFO, not a regular file" $T "$ait" run "$tmp/fifo.onnx"
check fifo-artifact 1 "fifo.ait: is a FIFO, not a regular file" $T "$ait" run "$tmp/fifo.ait"
check fifo-input 1 "fifo.npz: is a FIFO, not a regular file" $T "$ait" run "$good" --input "$tmp/fifo.npz"
check fifo-npy 1 "fifo.npz: is a FIFO, not a regular file" $T "$ait" run "$good" --input "x=$tmp/fifo.npz"
mkdir -p "$tmp/samples" && cp "$data/bad/good.npz" "$tmp/samples/a.npz" && mkfifo "$tmp/samples/b.npz"
check fifo-sample 1 "b.npz: is a FIFO, not a regular file" $T "$ait" tune "$good" --data "$tmp/samples" \
  --warmup 1 --window 2 --cap 3 --runs 1
check dir-model 1 "is a directory, not a regular file" $T "$ait" run "$tmp/samples"
check dev-model 1 "/dev/zero: is a character device, not a regular file" $T "$ait" run /dev/zero

# 20 saves to one name at once: a matching pair, nothing left behind.
mkdir -p "$tmp/race"
for i in $(seq 20); do
  "$ait" tune "$good" --warmup 1 --window 2 --cap 3 --runs 1 -o "$tmp/race/same.ait" >/dev/null 2>&1 &
done
wait
check race-sums 0 "same.ait: OK" bash -c "cd '$tmp/race' && sha256sum -c same_sha256_sums.txt"
check race-no-tmp 1 "^0$" bash -c "ls '$tmp/race' | grep -c tmp"
check race-runs 0 "output y" "$ait" run "$tmp/race/same.ait"
# A temporary of a dead save (a kill between link and rename, or no O_TMPFILE):
# the next save removes it; one of a live process stays.
sh -c 'exit 0' & dead=$!; wait $dead
touch "$tmp/race/same.ait.tmp.$dead" "$tmp/race/same.ait.tmp.$$"
"$ait" tune "$good" --warmup 1 --window 2 --cap 3 --runs 1 -o "$tmp/race/same.ait" >/dev/null 2>&1
check stale-removed 0 "^same.ait.tmp.$$\$" bash -c "ls '$tmp/race' | grep tmp"
finish
