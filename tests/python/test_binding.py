"""The Python binding (python/ait) against the C library and PyTorch."""
import glob
import os

import numpy as np
import pytest

import ait
from conftest import run

FAST = dict(timeout=20, warmup=1, window=3, cap=5, cache=False)


def test_outputs_equal_the_c_commands(torch_model, ait_bin, tmp_path):
    path, _, x = torch_model
    np.save(tmp_path / "x.npy", x)
    r = run([ait_bin, "run", path, "--input", "x=%s" % (tmp_path / "x.npy"),
             "--output-dir", str(tmp_path / "out")])
    assert r.returncode == 0, r.stderr
    want = np.load(tmp_path / "out" / "y.npy")
    got = ait.load(path).run({"x": x})
    assert list(got) == ["y"]
    assert got["y"].dtype == want.dtype and got["y"].shape == want.shape
    assert np.array_equal(got["y"], want)  # one library, one backend: bit for bit


def test_outputs_of_a_bundled_model(tmp_path):
    data = os.environ.get("AIT_TEST_DATA", "")
    model = os.path.join(data, "models", "mlp.onnx")
    if not os.path.exists(model):
        pytest.skip("no %s (tools/test makes it: tools/export_models.py)" % model)
    ins = np.load(os.path.join(data, "models", "mlp.in.0.npz"))
    outs = np.load(os.path.join(data, "models", "mlp.out.0.npz"))
    got = ait.load(model).run({k: ins[k] for k in ins})
    for k in outs:
        assert np.abs(got[k] - outs[k]).max() <= 1e-4 * max(1.0, np.abs(outs[k]).max())


def _gpt2():
    """The bundled gpt2 decoder's path and its first sample's inputs (skips without them)."""
    data = os.environ.get("AIT_TEST_DATA", "")
    model = os.path.join(data, "models", "gpt2.onnx")
    if not os.path.exists(model):
        pytest.skip("no %s (tools/test makes it: tools/export_models.py)" % model)
    ins = np.load(os.path.join(data, "models", "gpt2.in.0.npz"))
    return model, {k: ins[k] for k in ins}


def test_outputs_written_into_caller_arrays():
    """run(feeds, out={...}) writes into the caller's arrays (bound buffers):
    bit for bit what run gives, in the caller's memory; too small or of the
    wrong dtype is refused naming the output."""
    model, feeds = _gpt2()
    s = ait.load(model)
    want = s.run(feeds)
    logits = np.empty(want["logits"].shape, np.float32)
    room = np.full(want["present_key_0"].size + 100, np.nan, np.float32)  # bigger, flat
    got = s.run(feeds, out={"logits": logits, "present_key_0": room})
    assert got["logits"] is logits
    assert np.array_equal(logits, want["logits"])
    assert got["present_key_0"].shape == want["present_key_0"].shape
    assert np.shares_memory(got["present_key_0"], room)
    assert np.array_equal(got["present_key_0"], want["present_key_0"])
    assert np.isnan(room[want["present_key_0"].size:]).all()  # nothing past the output
    for k in want:
        assert np.array_equal(got[k], want[k])
    with pytest.raises(ait.Error, match="output 'logits' needs shape .*; the tensor bound to it "
                       "holds 4 bytes") as e:
        s.run(feeds, out={"logits": np.empty(1, np.float32)})
    assert e.value.status == "AIT_E_SHAPE"
    with pytest.raises(ait.Error, match="output 'logits' is float32; the tensor given is int64"):
        s.run(feeds, out={"logits": np.empty(want["logits"].shape, np.int64)})
    with pytest.raises(ait.Error, match="unknown output 'nope'"):
        s.run(feeds, out={"nope": logits})


def test_cache_appended_in_place(tmp_path):
    """Binding.set_cache: one array per key and value bound as past and
    present, a greedy decode's steps appending to it; each step's logits and
    presents bit for bit those of a plain run given the past as arrays, the
    result's present the cache array itself; the tuned artifact (layers on
    native) appends every cache in place, the untuned model copies; reserve()
    gives the unbound logits storage on the artifact only."""
    model, feeds = _gpt2()
    art = str(tmp_path / "gpt2.ait")
    ait.tune(model, feeds, strategy="only:native", plan_check=False, whole=False, **FAST).save(art)
    pasts = [k for k in feeds if k.startswith("past")]
    P, steps = feeds[pasts[0]].shape[2], 3
    for path, in_place in ((model, 0), (art, len(pasts))):
        s = ait.load(path)
        b = ait.Binding(s)
        caches, past = {}, dict(feeds)
        for k in pasts:
            caches[k] = np.full(feeds[k].shape[:2] + (P + steps,) + feeds[k].shape[3:], np.nan,
                                np.float32)
            caches[k][:, :, :P] = feeds[k]
        ids = feeds["input_ids"]
        for step in range(steps):
            for k in pasts:
                b.set_cache(k, "present" + k[4:], caches[k], axis=2, length=P + step)
            b.set_input("input_ids", ids)
            if step == 0:  # logits unbound: reserved on the artifact, nothing untuned
                held = b.reserve()
                assert (held >= feeds["input_ids"].shape[0] * 1000 * 4) if path == art else held == 0
            got = b.run()
            want = s.run(dict(past, input_ids=ids))
            assert np.array_equal(got["logits"], want["logits"])
            for k in pasts:
                pk = "present" + k[4:]
                assert got[pk] is caches[k]
                assert np.array_equal(caches[k][:, :, :P + step + 1], want[pk])
                past[k] = want[pk]
            assert b.caches_in_place == in_place
            ids = np.argmax(want["logits"][:, -1:], axis=-1).astype(np.int64)
        with pytest.raises(ait.Error, match="a past of %d positions does not fit the cache "
                           "bound to it" % (P + steps + 1)) as e:
            b.set_cache(pasts[0], "present" + pasts[0][4:], caches[pasts[0]], axis=2,
                        length=P + steps + 1)
        assert e.value.status == "AIT_E_SHAPE"
        b.close()


def test_declared_inputs_and_outputs(torch_model):
    s = ait.load(torch_model[0])
    assert s.inputs == [{"name": "x", "dtype": "float32", "shape": ["batch", 32]}]
    assert s.outputs == [{"name": "y", "dtype": "float32", "shape": ["batch", 8]}]
    assert not s.model.tuned


def test_torch_module_tuned_saved_and_reloaded(torch_model, tmp_path):
    import torch
    path, net, x = torch_model
    rep = ait.tune(path, {"x": x}, strategy="min-latency", batch_sizes=(2,), **FAST)
    rows = rep.rows
    assert {r["module"] for r in rows} >= {"fc1", "fc2"}
    assert all(r["chosen"] and r["why"] for r in rows if r["module"])
    assert "fc1" in str(rep)
    art = rep.save(tmp_path / "net.ait")
    assert os.path.exists(art) and os.path.exists(tmp_path / "net_sha256_sums.txt")
    s = ait.load(art)
    assert s.model.tuned
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    got = s.run({"x": x})["y"]
    assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())
    # the same artifact mapped in place, hashed on the calling thread: the same outputs
    m = ait.Model(art, map_file=True, load_threads=1)
    assert m.tuned and np.array_equal(ait.Session(m).run({"x": x})["y"], got)
    with pytest.raises(ait.Error, match="load_threads is -1"):
        ait.Model(art, load_threads=-1)
    with pytest.raises(ait.Error, match="net.onnx"):
        ait.Model(path, map_file=True)  # an ONNX file is no artifact


def test_tune_selects_and_quantises(torch_model):
    path, _, x = torch_model
    rep = ait.tune(path, {"x": x}, select="fc1", plan_check=False, **FAST)
    assert [r["module"] for r in rep.rows] == ["fc1"]
    # quantised variants are tried when asked, each judged by its SQNR bound;
    # an unknown scheme is refused with ait's message
    rep = ait.tune(path, {"x": x}, select="fc1", plan_check=False, quant=["bf16", "int8dq"],
                   **FAST)
    assert [r["module"] for r in rep.rows] == ["fc1"]
    with pytest.raises(ait.Error, match="int9"):
        ait.tune(path, {"x": x}, quant="int9", **FAST)
    # the end-to-end budget reaches the library: a good one tunes, a bad one
    # is refused naming the term
    rep = ait.tune(path, {"x": x}, select="fc1", plan_check=False, quant="int8dq",
                   accuracy_budget="sqnr=1", **FAST)
    assert [r["module"] for r in rep.rows] == ["fc1"]
    with pytest.raises(ait.Error, match="accuracy budget 'sqnr=x': bad term 'sqnr=x'"):
        ait.tune(path, {"x": x}, quant="int8dq", accuracy_budget="sqnr=x", **FAST)
    with pytest.raises(ait.Error, match="nope"):
        ait.tune(path, {"x": x}, select="nope", **FAST)


def test_inspect(torch_model):
    path, _, x = torch_model
    insp = ait.inspect(path, {"x": x}, batch_sizes=(1, 2))
    mods = {m["path"]: m for m in insp.modules}
    assert {"", "fc1", "fc2"} <= set(mods)
    assert mods["fc1"]["params"] == 32 * 64 + 64
    assert 0 < mods["fc1"]["share"] <= 1
    doc = insp.json()
    assert doc["batch_sizes"] == [1, 2]
    assert {m["path"] for m in doc["modules"]} >= {"fc1", "fc2"}


def test_jit(torch_model, tmp_path):
    path, _, x = torch_model
    s = ait.load(path, jit=True, cache=False)
    y = s.run({"x": x})["y"]
    assert y.shape == (2, 8)
    assert s.note  # what JIT tuning did
    s.save(tmp_path / "jit.ait")
    assert ait.load(tmp_path / "jit.ait").model.tuned


@pytest.mark.parametrize("feeds, status, message", [
    ({"x": np.zeros((2, 32), np.float64)}, "AIT_E_DTYPE", "input 'x' must be float32, got float64"),
    ({"x": np.zeros((2, 31), np.float32)}, "AIT_E_SHAPE", "input 'x' must have shape"),
    ({"x": np.zeros((2, 32), np.complex64)}, "AIT_E_DTYPE", "complex64 has no ait type"),
    ({"z": np.zeros((2, 32), np.float32)}, "AIT_E_NOT_FOUND", "unknown input 'z': the model's inputs are x"),
    ({}, "AIT_E_NOT_FOUND", "input 'x' not given"),
])
def test_bad_inputs_raise_with_the_message(torch_model, feeds, status, message):
    s = ait.load(torch_model[0])
    with pytest.raises(ait.Error) as e:
        s.run(feeds)
    assert message in str(e.value)
    assert e.value.status == status
    s.run({"x": np.zeros((3, 32), np.float32)})  # the session still runs after a failure


def test_bad_models_raise(tmp_path):
    with pytest.raises(ait.Error, match="is a directory"):
        ait.load(tmp_path)
    with pytest.raises(ait.Error) as e:
        ait.load(tmp_path / "missing.onnx")
    assert "missing.onnx" in str(e.value)
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x07junk")
    with pytest.raises(ait.Error):
        ait.load(tmp_path / "junk.onnx")


def test_version():
    assert ait.version().count(".") == 2
