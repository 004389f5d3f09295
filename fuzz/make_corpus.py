"""Makes the seed corpora of fuzz/corpus/ (kept in git; re-run to refresh):
a small two-layer MLP tuned on the native backend (so its artifact has
prepared blobs), its artifact (artifact/), its recipe for fuzz_manifest.c
(manifest/), its manifest and tune cache entries (json/, cache/, with the
fuzz target's fixed key), small .npz files (npz/), and its GEMM shapes as
`ait gemm capture` and `ait gemm tune` write them (csv/: untuned, tuned, and
the tuned file with a failed row, a reference row and CRLF line ends), and
models with external data as fuzz_extdata.c reads them (extdata/: the
model's length in two bytes, the model, then data.bin's bytes).
usage: fuzz/make_corpus.py AIT"""
import glob, json, os, re, shutil, struct, subprocess, sys, tempfile, zipfile
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "cli"))
import artifact_edit as ae

ait, here = sys.argv[1], os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
KEY = "0123456789abcdef" * 4
t = tempfile.mkdtemp()
r = np.random.RandomState(0)
w1 = numpy_helper.from_array(r.randn(16, 16).astype(np.float32), "w1")
w2 = numpy_helper.from_array(r.randn(16, 8).astype(np.float32), "w2")
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
     helper.make_node("Relu", ["h"], ["r"], name="act"),
     helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2")], "mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])], [w1, w2])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), t + "/mlp.onnx")
env = dict(os.environ, AIT_CACHE_DIR=t + "/cache")
subprocess.run([ait, "tune", t + "/mlp.onnx", "--batch-sizes", "1,2", "--warmup", "1", "--window", "2",
                "--cap", "3", "--cv", "0.5", "--select", "seg.0=one-backend:native",
                "-o", t + "/mlp.ait"],
               env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
shutil.copy(t + "/mlp.ait", here + "/artifact/mlp.ait")
a = ae.load(t + "/mlp.ait")
man = json.dumps(a.manifest, indent=1).encode()
open(here + "/json/manifest.json", "wb").write(man)
def recipe(blobs, man):
    out = bytes([len(blobs)])
    for name, data in blobs:
        out += bytes([len(name)]) + name.encode() + struct.pack("<H", len(data)) + data
    return out + man
open(here + "/manifest/mlp", "wb").write(recipe(a.blobs, man))
# A manifest without the bulky reports: smaller, the parts a run reads.
small = {k: v for k, v in a.manifest.items() if k not in ("tuning", "inspection")}
open(here + "/manifest/mlp-small", "wb").write(recipe(a.blobs, json.dumps(small).encode()))
for i, p in enumerate(sorted(glob.glob(t + "/cache/*.json"))[:4]):
    d = json.load(open(p)); d["key"] = KEY; d["candidate"] = "native/t1"
    open("%s/cache/entry%d.json" % (here, i), "w").write(json.dumps(d, indent=1))
    if i == 0: open(here + "/json/entry.json", "w").write(json.dumps(d, indent=1))
open(here + "/json/small.json", "w").write('{"a": [1, -2.5e3, "\\u00e9\\ud83d\\ude00", true, null, {}]}')
x = np.arange(6, dtype=np.float32).reshape(2, 3)
np.savez(here + "/npz/stored.npz", x=x, y=np.array([1, 2], dtype=np.int64))
np.savez_compressed(here + "/npz/deflated.npz", x=x, s=np.float16(1.5))
subprocess.run([ait, "gemm", "capture", t + "/mlp.onnx", "--batch-sizes", "1,2", "-o", here + "/csv/untuned.csv"],
               env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
subprocess.run([ait, "gemm", "tune", here + "/csv/untuned.csv", "-o", t + "/tuned.csv", "--warmup", "0",
                "--iters", "1", "--timeout", "5", "--no-refs"],
               env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
tuned = open(t + "/tuned.csv").read()
open(here + "/csv/tuned.csv", "w").write(tuned)
head, first = tuned.splitlines()[:2]
cpu = first[:first.index('",') + 1]  # vendor,family,model,"features"
more = [cpu + ",3,8,16,f32,nt,,failed,0,0,0,0,0,0,0,0,0,0,1,0",
        cpu + ",4,8,16,f32,pn,bias,openblas,0,0,0,0,0,0,1,0.5,2,3,0,0.6"]
open(here + "/csv/tuned-more.csv", "wb").write(("\r\n".join(tuned.splitlines() + more) + "\r\n").encode())
# extdata/: Add(x, w) with w in data.bin (at an offset; with a length), and a
# uint8 Gather table from the same file.
os.makedirs(here + "/extdata", exist_ok=True)
def ext_seed(name, arr, offset, length, node, out_type):
    wt = numpy_helper.from_array(arr, "w")
    wt.ClearField("raw_data")
    wt.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "data.bin"), ("offset", str(offset))) + ((("length", str(length)),) if length else ()):
        e = wt.external_data.add(); e.key, e.value = k, v
    x_type = TensorProto.INT64 if node == "Gather" else TensorProto.FLOAT
    g = helper.make_graph([helper.make_node(node, ["w", "x"] if node == "Gather" else ["x", "w"], ["y"])], "ext",
                          [helper.make_tensor_value_info("x", x_type, [2])],
                          [helper.make_tensor_value_info("y", out_type, None)], [wt])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    open("%s/extdata/%s" % (here, name), "wb").write(struct.pack("<H", len(model)) + model +
                                                     bytes(offset) + arr.tobytes() + b"tail")
ext_seed("add", np.array([1.5, -2.0], dtype=np.float32), 0, 8, "Add", TensorProto.FLOAT)
ext_seed("add-offset", np.array([3.0, 4.0], dtype=np.float32), 16, 0, "Add", TensorProto.FLOAT)
ext_seed("gather-u8", np.arange(7, dtype=np.uint8), 3, 7, "Gather", TensorProto.UINT8)
shutil.rmtree(t)
