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
# The bomb is refused without inflating it: its run's peak memory stays within
# 32 MiB of a good run's (the bomb holds 64 MiB), whatever the build's own
# footprint (ASan's is near 60 MB; ulimit -v would stop it, it reserves
# terabytes of shadow).
peak() { /usr/bin/time -f 'peak %M' "$ait" run "$good" --input "$@" 2>&1 | awk '/^peak/ { print $2 }'; }
base_kb=$(peak "x=$tmp/ok.npy")
within() { # WHAT KB MARGIN_KB: "small" when KB is under a good run's peak + MARGIN_KB, else both peaks
  [[ $2 =~ ^[0-9]+$ && $base_kb =~ ^[0-9]+$ ]] && [ $(($2 - base_kb)) -lt "$3" ] && echo small && return
  echo "$1 peak ${2:-?} KB, a good run ${base_kb:-?} KB"
}
check npz-bomb-small 0 "^small$" within bomb "$(peak "$tmp/bomb.npz")" 32768

# --max-input-mb: an array declaring more is refused from its header, naming
# the file (and entry), its declared size and the limit, before its data is
# read or allocated; one within the limit runs.
/usr/bin/python3 - "$tmp" <<'PY'
import struct, sys, zipfile
import numpy as np
d = sys.argv[1]
big = np.zeros((1024, 1024), dtype=np.float32)  # 4 MiB
np.save(d + "/big.npy", big)
np.savez(d + "/big.npz", x=big)
np.savez_compressed(d + "/big_deflated.npz", x=big)
# A header declaring 2^38 bytes and no data: refused by the limit, not read.
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 1048576), }"
h += b" " * (63 - (10 + len(h)) % 64) + b"\n"
open(d + "/liar.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h)
import os
os.makedirs(d + "/bigsamples/s0")
np.save(d + "/bigsamples/s0/x.npy", big)
PY
lim="the array declares 4194304 bytes \(float32, 1048576 elements\), more than the limit of 1048576 bytes \(1.0 MiB\) per input"
check max-input-npy 1 "big.npy: $lim" "$ait" run "$good" --input "x=$tmp/big.npy" --max-input-mb 1
check max-input-npz 1 "big.npz: array 'x': $lim" "$ait" run "$good" --input "$tmp/big.npz" --max-input-mb 1
check max-input-deflated 1 "big_deflated.npz: array 'x': $lim" \
  "$ait" run "$good" --input "$tmp/big_deflated.npz" --max-input-mb 1
check max-input-liar 1 "liar.npy: the array declares 274877906944 bytes .*limit of 1048576 bytes" \
  "$ait" run "$good" --input "x=$tmp/liar.npy" --max-input-mb 1
check max-input-liar-nolimit 1 "liar.npy: .npy data is truncated" "$ait" run "$good" --input "x=$tmp/liar.npy"
check max-input-ok 0 "max 10 " "$ait" run "$good" --input "x=$tmp/ok.npy" --max-input-mb 1
check max-input-tune 1 "s0/x.npy: $lim" "$ait" tune "$good" --data "$tmp/bigsamples" --max-input-mb 1 \
  --warmup 1 --window 2 --cap 3 --runs 1
check max-input-inspect 1 "big.npz: array 'x': $lim" "$ait" inspect "$good" --data "$tmp/big.npz" \
  --max-input-mb 1
check max-input-bad 2 "bad value for --max-input-mb: '0'" "$ait" run "$good" --max-input-mb 0
# Refused before the data is read: its 4 MiB would show in the peak, which
# stays within 2 MiB of a good run's (whatever the build's own footprint).
check max-input-peak 0 "^small$" within big.npy "$(peak "x=$tmp/big.npy" --max-input-mb 1)" 2048

# The .npz is read entry by entry, not whole: a stored 64 MiB entry over the
# limit is refused from its header without the archive being read (its
# 64 MiB would show in the peak). `ait gemm capture` takes the limit too.
/usr/bin/python3 -c "import numpy as np, sys; np.savez(sys.argv[1], x=np.zeros((4096, 4096), np.float32))" \
  "$tmp/huge.npz"
check max-input-npz-peak 0 "^small$" within huge.npz "$(peak "$tmp/huge.npz" --max-input-mb 1)" 32768
check max-input-capture 1 "big.npy: $lim" "$ait" gemm capture "$good" --input "x=$tmp/big.npy" \
  --max-input-mb 1 -o "$tmp/capture.csv"

# Outputs (--output-dir) are published as artifacts are: nothing but the
# outputs is left, and temporaries of a dead process are removed.
mkdir -p "$tmp/outs"
sh -c 'exit 0' & dead=$!; wait $dead
touch "$tmp/outs/y.npy.tmp.$dead" "$tmp/outs/outputs.npz.tmp.$dead"
check outdir-run 0 "output y" "$ait" run "$good" --input "x=$tmp/ok.npy" --output-dir "$tmp/outs"
check outdir-clean 0 "^outputs.npz y.npy $" bash -c "ls '$tmp/outs' | tr '\n' ' '"

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

# Hostile but consistent manifests: a real artifact (bert, two modules with
# native prepared weights) rewritten with every hash recomputed
# (tests/cli/artifact_edit.py), refused by what the manifest says. No whole
# candidate and no plan check: under load either could leave one module.
mkdir -p "$tmp/host"
bert=(--dim seq=16 --batch-sizes 1,2 --warmup 1 --window 2 --cap 3 --cv 0.5 --no-whole --no-plan-check)
check host-tune 0 "saved" "$ait" tune "$data/models/bert.onnx" "${bert[@]}" \
  --select 'layer.0=one-backend:native' --select 'layer.1=one-backend:native' -o "$tmp/host/ok.ait"
PYTHONPATH=$(dirname "$0") /usr/bin/python3 - "$tmp/host" <<'PY'
import sys, artifact_edit as ae
d = sys.argv[1]
def edit(name, f):
    a = ae.load(d + "/ok.ait"); f(a, a.manifest); a.save("%s/%s.ait" % (d, name))
edit("same", lambda a, m: None)  # the round trip alone loads
def huge(a, m): m["priming"][0][0]["shape"] = [1, 1 << 32]
edit("huge", huge)
def static(a, m): m["priming"][1][0]["shape"] = [3, 16]
edit("batch", static)
def rank(a, m): m["priming"][0][0]["shape"] = [1, 16, 1]
edit("rank", rank)
def bucket(a, m):
    m["buckets"] = [1, 1 << 29]
    for mod in m["modules"]: mod["plans"][1]["bucket"] = 1 << 29
edit("bucket", bucket)
def threads(a, m): m["modules"][1]["plans"][0]["threads"] = 100000
edit("threads", threads)
def swap(a, m):  # module 0's first blob entry and module 1's, which have the same size
    b0, b1 = m["modules"][0]["plans"][0]["blobs"][0], m["modules"][1]["plans"][0]["blobs"][0]
    for k in ("blob", "name", "node", "weights"): b0[k], b1[k] = b1[k], b0[k]
edit("swap", swap)
def renamed(a, m):  # module 1's blob renamed into module 0, with its node and weights
    b0, b1 = m["modules"][0]["plans"][0]["blobs"][0], m["modules"][1]["plans"][0]["blobs"][0]
    b0.update(b1, blob="p/0/b1/" + b1["name"])
    a.blobs.append([b0["blob"], a.blob(b1["blob"])[1]])
edit("renamed", renamed)
def digest(a, m): m["modules"][0]["plans"][0]["blobs"][0]["weights"][0]["sha256"] = "0" * 64
edit("digest", digest)
def node(a, m): m["modules"][0]["plans"][0]["blobs"][0]["node"] = "/layer.1/attention/query/MatMul"
edit("node", node)
def unbound(a, m):  # a node's blob passed off as the module's own (no node, no weights)
    m["modules"][0]["plans"][0]["blobs"][0].update(node="", weights=[])
edit("unbound", unbound)
PY
run=("$ait" run --dim seq=16 --repeat 1)
check host-same 0 "tuned  the artifact's plan" "${run[@]}" "$tmp/host/same.ait"
check host-sums 0 "same.ait: OK" bash -c "cd '$tmp/host' && sha256sum -c same_sha256_sums.txt"
check host-huge 1 "priming shape of input 'input_ids' at bucket 1 .* exceeds 1073741824 bytes" \
  $T "${run[@]}" "$tmp/host/huge.ait"
check host-batch 1 "priming shape of input 'input_ids' at bucket 2 disagrees" "${run[@]}" "$tmp/host/batch.ait"
check host-rank 1 "priming shape of input 'input_ids' at bucket 1 disagrees" "${run[@]}" "$tmp/host/rank.ait"
check host-bucket 1 "bucket.ait: the manifest's bucket 536870912 exceeds 65536" "${run[@]}" "$tmp/host/bucket.ait"
check host-threads 1 "module 'layer.1' asks for 100000 threads \(at most 1024\)" "${run[@]}" "$tmp/host/threads.ait"
check host-swap 1 "prepared blob 'p/1/b1/w0./layer.1/attention/query/MatMul' belongs to another module" \
  "${run[@]}" "$tmp/host/swap.ait"
check host-renamed 1 "was prepared for node '/layer.1/attention/query/MatMul', which is not that node of this module" \
  "${run[@]}" "$tmp/host/renamed.ait"
check host-digest 1 "was not prepared from weight '.*' of node '/layer.0/attention/query/MatMul' \(its sha256 differs\)" \
  "${run[@]}" "$tmp/host/digest.ait"
check host-node 1 "was not prepared from weight" "${run[@]}" "$tmp/host/node.ait"
check host-unbound 1 "was prepared for node '', which is not that node of this module \('/layer.0/" \
  "${run[@]}" "$tmp/host/unbound.ait"

# Signed artifacts: a forger can recompute hashes, not a signature.
check keygen 0 "wrote $tmp/host/k1.pem" "$ait" keygen -o "$tmp/host/k1"
check keygen-mode 0 "^600$" stat -c %a "$tmp/host/k1.pem"
"$ait" keygen -o "$tmp/host/k2" >/dev/null
check sign 0 "signed $tmp/host/same.ait" "$ait" sign "$tmp/host/same.ait" --key "$tmp/host/k1.pem"
check sign-keeps-sums 0 "same.ait: OK" bash -c "cd '$tmp/host' && sha256sum -c same_sha256_sums.txt"
check signed-runs 0 "tuned  the artifact's plan" "${run[@]}" "$tmp/host/same.ait" --trusted-key "$tmp/host/k1.pub"
check signed-wrong-key 1 "same.ait: signed by key [0-9a-f]{16}\.\.\., not by the trusted key" \
  "${run[@]}" "$tmp/host/same.ait" --trusted-key "$tmp/host/k2.pub"
check unsigned 1 "ok.ait: not signed \(no .*ok.ait.sig\), and a trusted key is required" \
  "${run[@]}" "$tmp/host/ok.ait" --trusted-key "$tmp/host/k1.pub" --fallback-untuned
check unsigned-model 1 "not an artifact, so not signed" "${run[@]}" "$data/models/bert.onnx" \
  --trusted-key "$tmp/host/k1.pub"
# One byte of the manifest changed and every hash recomputed, the signature kept.
PYTHONPATH=$(dirname "$0") /usr/bin/python3 - "$tmp/host" <<'PY'
import sys, artifact_edit as ae
d = sys.argv[1]
a = ae.load(d + "/same.ait")
a.manifest["modules"][0]["plans"][0]["why"] += "!"
a.save(d + "/forged.ait")
PY
cp "$tmp/host/same.ait.sig" "$tmp/host/forged.ait.sig"
check forged-hashes-ok 0 "tuned" "${run[@]}" "$tmp/host/forged.ait"
check forged 1 "forged.ait: the signature in .*forged.ait.sig does not match the artifact" \
  "${run[@]}" "$tmp/host/forged.ait" --trusted-key "$tmp/host/k1.pub" --fallback-untuned
# The fuzz seeds must be of the current formats, or the fuzzers stop at the
# version check (fuzz/make_corpus.py remakes them); the seed artifact runs on
# a CPU whose best GEMM kernel is another than the one its blobs were packed
# for, when that one runs here (native takes the blobs with their kernel).
check fuzz-seed-current 0 "tuned  the artifact's plan" \
  "$ait" run "$(dirname "$0")/../../fuzz/corpus/artifact/mlp.ait" --repeat 1
check fuzz-seed-csv-tuned 0 "wrote .*: 6 rows" \
  "$ait" gemm merge "$(dirname "$0")/../../fuzz/corpus/csv/tuned-more.csv" -o "$tmp/host/merged.csv"
check fuzz-seed-csv-untuned 0 "wrote .*: 4 rows" \
  "$ait" gemm merge "$(dirname "$0")/../../fuzz/corpus/csv/untuned.csv" -o "$tmp/host/merged.csv"
check sign-with-public 1 "k1.pub: not a PEM private key" "$ait" sign "$tmp/host/ok.ait" --key "$tmp/host/k1.pub"
# BatchNormalization folded into a Conv's packed weights (native): the blob
# lists the BatchNormalization's weights too; the artifact runs as the model
# does; a changed BN weight digest or a list without them is refused.
if /usr/bin/python3 "$(dirname "$0")/make_bn_model.py" "$tmp/host/bn.onnx" >/dev/null 2>&1; then
  check bn-tune 0 "saved" "$ait" tune "$tmp/host/bn.onnx" --strategy only:native --warmup 1 --window 2 \
    --cap 3 --runs 1 -o "$tmp/host/bn.ait"
  check bn-lists 0 "0.1.running_var" "$ait" show "$tmp/host/bn.ait" --json
  check bn-run 0 "output y" "$ait" run "$tmp/host/bn.ait" --repeat 1
  want=$(grep '^output' <<<"$out")
  held=$(sed -nE 's/.*weights .* MiB \(([0-9]+) bytes\).*/\1/p' <<<"$out")
  check bn-model 0 "output y" "$ait" run "$tmp/host/bn.onnx" --repeat 1
  full=$(sed -nE 's/.*weights .* MiB \(([0-9]+) bytes\).*/\1/p' <<<"$out")
  check bn-same 0 "" test "$want" = "$(grep '^output' <<<"$out")"
  # The session freed both Conv weights (13x3x3x3 and 7x13x1x1 floats: 1768
  # bytes; native's packs from the blobs replace them), and kept the bias
  # and the BatchNormalization weights its bias fold reads.
  check bn-conv-freed 0 "^freed 1768$" echo "freed $((full - held))"
  # The same on oneDNN (dn_releases): its weights blobs replace both Convs'.
  check bn-tune-onednn 0 "saved" "$ait" tune "$tmp/host/bn.onnx" --strategy only:onednn --warmup 1 \
    --window 2 --cap 3 --runs 1 -o "$tmp/host/bn-onednn.ait"
  check bn-run-onednn 0 "output y" "$ait" run "$tmp/host/bn-onednn.ait" --repeat 2
  held=$(sed -nE 's/.*weights .* MiB \(([0-9]+) bytes\).*/\1/p' <<<"$out")
  check bn-conv-freed-onednn 0 "^freed 1768$" echo "freed $((full - held))"
  PYTHONPATH=$(dirname "$0") /usr/bin/python3 - "$tmp/host" <<'PY'
import sys, artifact_edit as ae
d = sys.argv[1]
def edit(name, f):
    a = ae.load(d + "/bn.ait"); f(a, a.manifest); a.save("%s/%s.ait" % (d, name))
def bn_blob(m):  # the blob listing the BatchNormalization's weights, in whatever module and plan
    return [b for mod in m["modules"] for p in mod["plans"] for b in p.get("blobs", [])
            if any(w["name"] == "0.1.running_var" for w in b.get("weights", []))][0]
def var(a, m): [w for w in bn_blob(m)["weights"] if w["name"] == "0.1.running_var"][0]["sha256"] = "0" * 64
edit("bn-var", var)
def nobn(a, m):
    b = bn_blob(m)
    b["weights"] = [w for w in b["weights"] if not w["name"].startswith("0.1.")]
edit("bn-unbound", nobn)
PY
  check bn-var 1 "was not prepared from weight '0.1.running_var' of node '/0/0.0/Conv' \(its sha256 differs\)" \
    "$ait" run "$tmp/host/bn-var.ait" --repeat 1
  check bn-unbound 1 "is not bound to the weights of the BatchNormalization after node '/0/0.0/Conv'" \
    "$ait" run "$tmp/host/bn-unbound.ait" --repeat 1
else
  echo "skipped bn-*: torch cannot export the model"
fi
finish
