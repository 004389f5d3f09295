#!/usr/bin/env bash
# Prepared blobs with the same bytes under different names (issue 18's
# follow-up, src/tune/plan_build.c add_prepared): a model whose three MatMuls
# read one weight matrix (two through the same initializer, one through a
# copy), tuned on native at batch buckets 1 and 2. Native names each packed
# weight by its node, so one module prepares three byte-identical blobs per
# bucket under three names. The artifact must keep one blob per name (the load
# binds each blob to its name: stored under another name's blob, it refused
# "prepared blob ... belongs to another module, bucket or name") and share it
# between the buckets where the bytes agree; it loads, runs at both batch sizes against numpy, and
# frees nothing it needs.
# usage: test_shared_blobs_cli.sh AIT
set -u
ait=$1
. "$(dirname "$0")/check.sh"

/usr/bin/python3 - "$tmp" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
rng = np.random.RandomState(3)
w = (rng.randn(64, 64) / 8).astype(np.float32)
nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm0"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("MatMul", ["r", "w"], ["h2"], name="mm1"),
         helper.make_node("MatMul", ["h2", "w_copy"], ["y"], name="mm2")]
g = helper.make_graph(nodes, "tied",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w.copy(), "w_copy")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, d + "/tied.onnx")
for n in (1, 2):
    x = rng.randn(n, 64).astype(np.float32)
    np.savez("%s/in%d.npz" % (d, n), x=x)
    np.savez("%s/want%d.npz" % (d, n), y=np.maximum(x @ w, 0) @ w @ w)
PY

check tune 0 "saved" "$ait" tune "$tmp/tied.onnx" --strategy only:native --batch-sizes 1,2 --runs 1 \
  --no-whole --no-plan-check -o "$tmp/tied.ait"
check show 0 "buckets +1 2" "$ait" show "$tmp/tied.ait"
# Each bucket lists its three names, each bound to a blob of its own name (bucket
# 2 may share bucket 1's: native's packing can differ by batch, or not).
check blobs 0 "^ok$" bash -c "'$ait' show '$tmp/tied.ait' --json | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)
plans = m[\"modules\"][0][\"plans\"]
assert [p[\"bucket\"] for p in plans] == [1, 2] and all(p[\"backend\"] == \"native\" for p in plans), plans
for p in plans:
    got = sorted((b[\"name\"], b[\"blob\"]) for b in p[\"blobs\"])
    assert [n for n, _ in got] == [\"w0.mm0\", \"w2.mm1\", \"w3.mm2\"], got
    assert all(b in (\"p/0/b1/\" + n, \"p/0/b%d/\" % p[\"bucket\"] + n) for n, b in got), got
print(\"ok\")'"
for n in 1 2; do
  check "run-batch$n" 0 "" "$ait" run "$tmp/tied.ait" --input "$tmp/in$n.npz" --output-dir "$tmp/out$n"
  same_outputs "outputs-batch$n" "$tmp/out$n" "$tmp/want$n.npz" 1e-4
done
finish
