"""ait from Python: a ctypes binding over libait.so, numpy arrays in and out.

    import ait, numpy as np
    s = ait.load("models/mlp.onnx")             # an ONNX model or a .ait artifact
    out = s.run({"x": np.ones((1, 64), np.float32)})
    r = ait.tune("models/mlp.onnx", {"x": x}, strategy="min-latency")
    r.save("mlp.ait")

Every failure raises ait.Error with ait's own message (and .status, the
AIT_E_* name). libait.so is found at $AIT_LIBRARY, next to this package, or
in the build/ folder of the source tree it sits in.
"""
import ctypes as C
import json
import os
import tempfile

import numpy as np

from . import _lib

_L, _libc = _lib.load()

__all__ = ["Error", "Model", "Session", "Binding", "Inspection", "TuneReport", "load", "inspect",
           "tune", "version"]

# ait_dtype numbers (ONNX's) <-> numpy; the others (strings, bfloat16, the
# small float types) have no numpy equivalent here and are refused by name.
_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
       7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_AIT = {np.dtype(v): k for k, v in _NP.items()}
_STATUS = ["AIT_OK", "AIT_E_INVALID_ARG", "AIT_E_IO", "AIT_E_PARSE", "AIT_E_UNSUPPORTED",
           "AIT_E_SHAPE", "AIT_E_DTYPE", "AIT_E_OVERFLOW", "AIT_E_NOMEM", "AIT_E_NOT_FOUND",
           "AIT_E_SECURITY", "AIT_E_INTERNAL"]


class Error(Exception):
    """A failure in ait: str(e) is ait's message; e.status its AIT_E_* name."""

    def __init__(self, msg, status="AIT_E_INVALID_ARG"):
        super().__init__(msg)
        self.status = status


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def _check(rc, err=None, msg=None):
    if rc != 0:
        text = msg if msg is not None else _s(err.msg) if err is not None else ""
        raise Error(text or _s(_L.ait_status_string(rc)), _STATUS[rc] if rc < len(_STATUS) else str(rc))


def version():
    """The version of the libait.so in use ("0.1.0")."""
    return _s(_L.ait_version())


def _dtype_name(t):
    return _s(_L.ait_dtype_name(t))


class Model:
    """A loaded model: ONNX or a .ait artifact (tuned).

    An artifact's load options (ait_artifact_options; giving any of them
    makes path an artifact): fallback_untuned runs the embedded model untuned
    when the plan cannot be used here (note says why); trusted_key, a public
    key's PEM path, refuses the artifact unless NAME.ait.sig is its
    signature by that key; map_file uses the file's pages in place instead of
    a copy (the file must then be replaced by rename only); load_threads caps
    the threads that check the blobs' hashes (0: the library picks, 1: the
    calling thread alone)."""

    def __init__(self, path, fallback_untuned=None, trusted_key=None, map_file=None,
                 load_threads=None):
        path = os.fspath(path)
        if os.path.isdir(path):
            raise Error("%s: is a directory, not a model (give an .onnx or .ait file)" % path,
                        "AIT_E_IO")
        self.path = path
        self._h = C.c_void_p()
        err = _lib.Error_()
        asked = (fallback_untuned, trusted_key, map_file, load_threads)
        if all(a is None for a in asked):
            _check(_L.ait_model_load(path.encode(), C.byref(self._h), C.byref(err)), err)
            return
        key = os.fspath(trusted_key).encode() if trusted_key is not None else None
        ao = _lib.ArtifactOptions(size=C.sizeof(_lib.ArtifactOptions),
                                  fallback_untuned=1 if fallback_untuned else 0, trusted_key=key,
                                  map_file=1 if map_file else 0,
                                  load_threads=int(load_threads or 0))
        _check(_L.ait_artifact_load(path.encode(), C.byref(ao), C.byref(self._h), C.byref(err)),
               err)

    def _infos(self, count, get):
        out = []
        for i in range(count(self._h)):
            vi = _lib.ValueInfo()
            _check(get(self._h, i, C.byref(vi)))
            dims = [int(vi.dims[k]) if vi.dims[k] >= 0 else (_s(vi.sym[k]) or None)
                    for k in range(vi.rank)]
            out.append({"name": _s(vi.name), "dtype": _dtype_name(vi.dtype), "shape": dims,
                        "_dtype": vi.dtype})
        return out

    @property
    def inputs(self):
        """Declared inputs: [{"name", "dtype", "shape"}], a symbolic dim by its name."""
        return self._infos(_L.ait_model_input_count, _L.ait_model_input)

    @property
    def outputs(self):
        return self._infos(_L.ait_model_output_count, _L.ait_model_output)

    @property
    def tuned(self):
        return bool(_L.ait_model_is_tuned(self._h))

    @property
    def note(self):
        """Why an artifact's plan is not used (a fallback), or ""."""
        return _s(_L.ait_model_note(self._h))

    def __del__(self):
        if getattr(self, "_h", None):
            _L.ait_model_free(self._h)
            self._h = None


def _as_model(model):
    return model if isinstance(model, Model) else Model(model)


def _env_cache():
    """The cache folder `ait` uses ($AIT_CACHE_DIR, else ~/.cache/ait)."""
    to = _lib.TuneOptions(size=C.sizeof(_lib.TuneOptions))
    _L.ait_options_from_env(None, C.byref(to), None)
    return to.cache_dir


class Session:
    """Runs a model: run({"name": array, ...}) -> {"output": array, ...}."""

    def __init__(self, model, threads=1, jit=False, cache=True):
        self.model = _as_model(model)  # the model must outlive the session
        self._inputs = self.model.inputs
        self._outputs = self.model.outputs
        so = _lib.SessionOptions(size=C.sizeof(_lib.SessionOptions), threads=threads,
                                 jit=1 if jit else 0)
        if jit and cache:
            so.cache_dir = _env_cache()
        self._h = C.c_void_p()
        err = _lib.Error_()
        _check(_L.ait_session_create(self.model._h, C.byref(so), C.byref(self._h), C.byref(err)), err)

    @property
    def inputs(self):
        return [{k: v for k, v in i.items() if k[0] != "_"} for i in self._inputs]

    @property
    def outputs(self):
        return [{k: v for k, v in o.items() if k[0] != "_"} for o in self._outputs]

    @property
    def note(self):
        """What JIT tuning did, or ""."""
        return _s(_L.ait_session_note(self._h))

    def _tensor(self, decl, a):
        """A tensor over array a's memory for declared input decl."""
        name = decl["name"]
        if not isinstance(a, np.ndarray):
            a = np.asarray(a)
        if a.dtype not in _AIT:
            raise Error("input '%s': numpy dtype %s has no ait type (the model wants %s)"
                        % (name, a.dtype, decl["dtype"]), "AIT_E_DTYPE")
        if a.ndim > _lib.MAX_RANK:
            raise Error("input '%s': rank %d is over ait's %d" % (name, a.ndim, _lib.MAX_RANK),
                        "AIT_E_SHAPE")
        a = np.ascontiguousarray(a)
        dims = (C.c_int64 * max(a.ndim, 1))(*a.shape)
        t = _L.ait_tensor_wrap(_AIT[a.dtype], a.ndim, dims, a.ctypes.data_as(C.c_void_p))
        if not t:
            raise Error("input '%s': cannot wrap an array of shape %s" % (name, a.shape),
                        "AIT_E_SHAPE")
        return t, a

    def run(self, feeds, out=None):
        """Runs the model on feeds (a dict: input name -> numpy array, every
        declared input given) and returns {output name: numpy array}.

        out (a dict: output name -> numpy array) has outputs written into
        the caller's arrays (C-contiguous, writeable, of the output's dtype,
        with room for at least its elements: ait_binding in C). The result
        then holds, for each, a view of that array's memory with the
        output's actual shape (the array itself when it had that shape);
        the other outputs are copies as without out."""
        if out:
            return self._run_bound(feeds, out)
        names = [i["name"] for i in self._inputs]
        unknown = [k for k in feeds if k not in names]
        if unknown:
            raise Error("unknown input '%s': the model's inputs are %s"
                        % (unknown[0], ", ".join(names)), "AIT_E_NOT_FOUND")
        missing = [n for n in names if n not in feeds]
        if missing:
            raise Error("input '%s' not given (the model's inputs are %s)"
                        % (missing[0], ", ".join(names)), "AIT_E_NOT_FOUND")
        n_in, n_out = len(names), len(self._outputs)
        ins = (C.c_void_p * max(n_in, 1))()
        outs = (C.c_void_p * max(n_out, 1))()
        keep = []
        try:
            for i, decl in enumerate(self._inputs):
                ins[i], arr = self._tensor(decl, feeds[decl["name"]])
                keep.append(arr)
            rc = _L.ait_session_run(self._h, ins, n_in, outs, n_out)
            if rc != 0:
                _check(rc, msg=_s(_L.ait_session_error(self._h)))
            return {o["name"]: _to_numpy(outs[j], o["name"]) for j, o in enumerate(self._outputs)}
        finally:
            for t in list(ins) + list(outs):
                if t:
                    _L.ait_tensor_free(t)

    def _run_bound(self, feeds, out):
        outs = [o["name"] for o in self._outputs]
        unknown = [k for k in out if k not in outs]
        if unknown:
            raise Error("unknown output '%s': the model's outputs are %s"
                        % (unknown[0], ", ".join(outs)), "AIT_E_NOT_FOUND")
        names = [i["name"] for i in self._inputs]
        missing = [n for n in names if n not in feeds]
        if missing or any(k not in names for k in feeds):
            return self.run(feeds)  # the same messages as an unbound run
        b = Binding(self)
        try:
            for name in names:
                b.set_input(name, feeds[name])
            for name in outs:
                if out.get(name) is not None:
                    b.set_output(name, out[name])
            return b.run()
        finally:
            b.close()

    def save(self, path):
        """Saves a JIT-tuned session (after its first run) as a .ait artifact."""
        err = _lib.Error_()
        _check(_L.ait_session_save(self._h, os.fspath(path).encode(), C.byref(err)), err)

    def __del__(self):
        if getattr(self, "_h", None):
            _L.ait_session_free(self._h)
            self._h = None


class Binding:
    """Inputs, outputs and key/value caches bound to numpy arrays, kept from
    run to run (ait_binding in C): a decode loop binds its cache once and
    each run appends to it in place.

        b = ait.Binding(session)
        cache = np.zeros((1, heads, max_len, head_dim), np.float32)
        b.set_cache("past_key_0", "present_key_0", cache, axis=2, length=0)
        b.set_input("input_ids", ids)
        res = b.run()                         # {output name: array}
        b.set_cache("past_key_0", "present_key_0", cache, axis=2, length=ids.shape[1])

    The arrays stay the caller's: they must be C-contiguous (outputs and
    caches writeable) and live while bound; the binding keeps a reference.
    An array given to set_output needs room for the output's elements; the
    result holds a view of it with the output's shape. A cache array has its
    full capacity along `axis`: input `past` reads its first `length`
    positions and output `present` is written after them (the result holds
    the cache array itself). Setting that input or output otherwise removes
    the pair."""

    def __init__(self, session):
        self.session = session  # the session must outlive the binding
        self._h = C.c_void_p()
        self._tensors = {}  # ("in", i) or ("out", j): (tensor, array), a cache in both
        err = _lib.Error_()
        _check(_L.ait_binding_create(session._h, C.byref(self._h), C.byref(err)), err)

    def _index(self, decls, name, what):
        for k, d in enumerate(decls):
            if d["name"] == name:
                return k
        raise Error("unknown %s '%s': the model's %ss are %s" % (what, name, what, ", ".join(
            d["name"] for d in decls)), "AIT_E_NOT_FOUND")

    def _put(self, keys, t, a):
        """Tensor t (over array a; None: nothing) now in the slots keys; the
        tensors no slot holds any more are freed."""
        old = [self._tensors.pop(k)[0] for k in keys if k in self._tensors]
        for k in keys:
            if t is not None:
                self._tensors[k] = (t, a)
        held = [v[0] for v in self._tensors.values()]
        for o in old:
            if o not in held:
                _L.ait_tensor_free(o)

    def _drop_cache_of(self, key):
        """A cache bound to slot key leaves its other slot too (the C binding
        removes the pair when either is set otherwise)."""
        t = self._tensors.get(key, (None,))[0]
        for k in [k for k, v in self._tensors.items() if v[0] == t and k != key]:
            self._put([k], None, None)

    def _set(self, fn, key, t, a):
        """ait_binding_set_input or _output (fn) of slot key to tensor t over
        array a; t is freed when refused."""
        err = _lib.Error_()
        rc = fn(self._h, key[1], t, C.byref(err))
        if rc != 0:
            _L.ait_tensor_free(t)
            _check(rc, err)
        self._drop_cache_of(key)
        self._put([key], t, a)

    def _wrap_out(self, what, a):
        if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or not a.flags.writeable:
            raise Error("%s must be a C-contiguous, writeable numpy array" % what)
        if a.dtype not in _AIT:
            raise Error("%s: numpy dtype %s has no ait type" % (what, a.dtype), "AIT_E_DTYPE")
        return a

    def set_input(self, name, a):
        """Binds input `name` to array a (read only, not copied)."""
        i = self._index(self.session._inputs, name, "input")
        t, arr = self.session._tensor(self.session._inputs[i], a)
        self._set(_L.ait_binding_set_input, ("in", i), t, arr)

    def set_output(self, name, a):
        """Has output `name` written into array a (room for its elements)."""
        j = self._index(self.session._outputs, name, "output")
        a = self._wrap_out("out['%s']" % name, a)
        flat = (C.c_int64 * 1)(a.size)
        t = _L.ait_tensor_wrap(_AIT[a.dtype], 1, flat, a.ctypes.data_as(C.c_void_p))
        if not t:
            raise Error("out['%s']: cannot wrap the array" % name)
        self._set(_L.ait_binding_set_output, ("out", j), t, a)

    def set_cache(self, past, present, cache, axis, length):
        """Binds array `cache` as both input `past` (its first `length`
        positions along `axis`) and output `present` (written after them):
        ait_binding_set_cache. Call again with the new length after each run."""
        i = self._index(self.session._inputs, past, "input")
        j = self._index(self.session._outputs, present, "output")
        a = self._wrap_out("cache for '%s'" % past, cache)
        if a.ndim > _lib.MAX_RANK:
            raise Error("cache for '%s': rank %d is over ait's %d" % (past, a.ndim, _lib.MAX_RANK),
                        "AIT_E_SHAPE")
        t = self._tensors.get(("in", i), (None,))[0]
        if t is None or self._tensors.get(("out", j), (None,))[0] != t or \
                self._tensors[("in", i)][1] is not a:
            dims = (C.c_int64 * max(a.ndim, 1))(*a.shape)
            t = _L.ait_tensor_wrap(_AIT[a.dtype], a.ndim, dims, a.ctypes.data_as(C.c_void_p))
            if not t:
                raise Error("cache for '%s': cannot wrap an array of shape %s" % (past, a.shape),
                            "AIT_E_SHAPE")
        err = _lib.Error_()
        rc = _L.ait_binding_set_cache(self._h, i, j, t, int(axis), int(length), C.byref(err))
        if rc != 0:
            if t not in [v[0] for v in self._tensors.values()]:
                _L.ait_tensor_free(t)
            _check(rc, err)
        self._drop_cache_of(("in", i))
        self._drop_cache_of(("out", j))
        self._put([("in", i), ("out", j)], t, a)

    @property
    def caches_in_place(self):
        """How many cache pairs the last run appended in place (the others it copied)."""
        return _L.ait_binding_caches_in_place(self._h)

    def reserve(self):
        """Gives each output left unbound its storage now (ait_binding_reserve):
        room for the bytes it takes in the bucket of a tuned artifact that
        the bound inputs fall in (every input bound; else the most over its
        buckets), zeroed, so that the first run faults none of it in. Call it
        after binding what you bind (once per bucket you will run); returns
        the bytes the binding's own outputs hold (nothing is reserved for an
        untuned model)."""
        n = C.c_size_t()
        err = _lib.Error_()
        _check(_L.ait_binding_reserve(self._h, C.byref(n), C.byref(err)), err)
        return n.value

    def run(self):
        """Runs the session on what is bound; returns {output name: array}:
        views of the caller's arrays for bound outputs (the cache array
        itself for a cache), copies for the rest."""
        rc = _L.ait_session_run_bound(self.session._h, self._h)
        if rc != 0:
            _check(rc, msg=_s(_L.ait_session_error(self.session._h)))
        res = {}
        for j, o in enumerate(self.session._outputs):
            name, t = o["name"], _L.ait_binding_output(self._h, j)
            bound = self._tensors.get(("out", j))
            if bound is None:
                res[name] = _to_numpy(t, name)
                continue
            a = bound[1]
            if any(k[0] == "in" and v[0] == bound[0] for k, v in self._tensors.items()):
                res[name] = a  # a cache: the array itself, its dims unchanged
                continue
            dims = _L.ait_tensor_dims(t)
            shape = tuple(dims[k] for k in range(_L.ait_tensor_rank(t)))
            res[name] = a if a.shape == shape else \
                a.reshape(-1)[:int(np.prod(shape, dtype=np.int64))].reshape(shape)
        return res

    def close(self):
        """Frees the binding (the arrays stay the caller's)."""
        if getattr(self, "_h", None):
            _L.ait_binding_free(self._h)
            self._h = None
        for t in {v[0] for v in getattr(self, "_tensors", {}).values()}:
            _L.ait_tensor_free(t)
        self._tensors = {}

    def __del__(self):
        self.close()


def _to_numpy(t, name):
    """A copy of output tensor t as a numpy array."""
    if _L.ait_tensor_is_sequence(t) or _L.ait_tensor_is_map(t) or _L.ait_tensor_is_none(t):
        raise Error("output '%s': sequences, maps and optionals are not supported by the Python "
                    "binding yet" % name, "AIT_E_UNSUPPORTED")
    dt = _L.ait_tensor_dtype(t)
    if dt not in _NP:
        raise Error("output '%s': element type %s has no numpy type here" % (name, _dtype_name(dt)),
                    "AIT_E_UNSUPPORTED")
    rank = _L.ait_tensor_rank(t)
    dims = _L.ait_tensor_dims(t)
    shape = tuple(dims[k] for k in range(rank))
    out = np.empty(shape, _NP[dt])
    n = _L.ait_tensor_nbytes(t)
    if n:
        C.memmove(out.ctypes.data, _L.ait_tensor_data(t), n)
    return out


def load(path, jit=False, threads=1, cache=True):
    """Loads an ONNX model or a .ait artifact and returns a Session.
    jit=True tunes on the first run's inputs (results cached in
    $AIT_CACHE_DIR or ~/.cache/ait unless cache=False)."""
    return Session(path, threads=threads, jit=jit, cache=cache)


def _samples_path(samples, keep):
    """A path ait reads samples from: a path as is, or a dict of arrays (one
    sample) / a list of them written to a temporary folder of .npz files
    (kept alive in `keep`)."""
    if samples is None or isinstance(samples, (str, os.PathLike)):
        return os.fspath(samples) if samples is not None else None
    if isinstance(samples, dict):
        samples = [samples]
    d = tempfile.TemporaryDirectory(prefix="ait-samples-")
    keep.append(d)
    for i, s in enumerate(samples):
        np.savez(os.path.join(d.name, "sample%03d.npz" % i), **s)
    return d.name if len(samples) > 1 else os.path.join(d.name, "sample000.npz")


class Inspection:
    """The module tree of a model with time shares (ait inspect)."""

    def __init__(self, model, samples=None, batch_sizes=(1,), dims=None, runs=0, threads=1):
        self.model = _as_model(model)
        self._keep = []
        data = _samples_path(samples, self._keep)
        o = _lib.InspectOptions(size=C.sizeof(_lib.InspectOptions), runs=runs, threads=threads)
        if data:
            o.data_path = data.encode()
        bs = list(batch_sizes or [1])
        arr = (C.c_int * len(bs))(*bs)
        o.n_batch_sizes, o.batch_sizes = len(bs), arr
        dims = dict(dims or {})
        names = (C.c_char_p * max(len(dims), 1))(*[k.encode() for k in dims])
        vals = (C.c_int64 * max(len(dims), 1))(*dims.values())
        o.n_dims, o.dim_names, o.dim_values = len(dims), names, vals
        self._h = C.c_void_p()
        err = _lib.Error_()
        _check(_L.ait_inspect(self.model._h, C.byref(o), C.byref(self._h), C.byref(err)), err)

    @property
    def modules(self):
        """One dict per module, in tree order; the model first (path "")."""
        out = []
        for i in range(_L.ait_inspection_module_count(self._h)):
            mi = _lib.ModuleInfo()
            _check(_L.ait_inspection_module(self._h, i, C.byref(mi)))
            out.append({"path": _s(mi.path), "depth": mi.depth, "parent": mi.parent,
                        "nodes": mi.nodes, "params": mi.params, "flops": mi.flops,
                        "precisions": _s(mi.precisions), "calls": mi.calls,
                        "mean_sec": mi.mean_sec, "share": mi.share})
        return out

    def json(self):
        """The whole inspection (and selection) as `ait inspect --json` gives it."""
        p = _L.ait_inspection_json(self._h)
        if not p:
            raise Error(_s(_L.ait_inspection_error(self._h)))
        try:
            return json.loads(C.string_at(p).decode())
        finally:
            _libc.free(p)

    def select(self, pattern, strategy=None):
        """Selects module `pattern` (a trailing '*' matches a prefix) for tuning."""
        st = strategy.encode() if strategy else None
        if _L.ait_select_path(self._h, pattern.encode(), st) != 0:
            raise Error(_s(_L.ait_inspection_error(self._h)))

    def select_by_share(self, depth=1, min_share=0.0, top=0, strategy=None):
        st = strategy.encode() if strategy else None
        if _L.ait_select_by_share(self._h, depth, min_share, top, st) != 0:
            raise Error(_s(_L.ait_inspection_error(self._h)))

    def tune(self, threads=1, timeout=60.0, cache=True, plan_check=True, whole=True, log=None,
             warmup=0, window=0, cap=0, quant=None, min_sqnr=0.0, gemm_db=None,
             accuracy_budget=None):
        """Tunes the selection (every top-level module when none) -> TuneReport.
        warmup, window, cap: profiling as `ait tune --warmup --window --cap`
        (0: ait's defaults); quant, min_sqnr, gemm_db, accuracy_budget: as
        ait.tune's."""
        return TuneReport(self, threads, timeout, cache, plan_check, whole, log,
                          dict(warmup=warmup, window=window, cap=cap, min_sqnr=float(min_sqnr),
                               quant=quant.encode() if quant else None,
                               accuracy_budget=accuracy_budget.encode() if accuracy_budget
                               else None,
                               gemm_db=os.fsencode(gemm_db) if gemm_db else None))

    def __del__(self):
        if getattr(self, "_h", None):
            _L.ait_inspection_free(self._h)
            self._h = None


_LEVELS = ["error", "warn", "info", "debug", "progress"]


class TuneReport:
    """What tuning chose: .rows (one dict per module and bucket), .save(path)."""

    def __init__(self, insp, threads, timeout, cache, plan_check, whole, log, prof):
        self.inspection = insp  # the inspection and model must outlive the tuning
        to = _lib.TuneOptions(size=C.sizeof(_lib.TuneOptions), max_threads=threads,
                              timeout=float(timeout), skip_plan_check=0 if plan_check else 1,
                              skip_whole=0 if whole else 1, **prof)
        if cache:
            to.cache_dir = _env_cache()
        if log:
            self._log = _lib.LOG_FN(lambda u, lvl, m: log(_LEVELS[lvl] if lvl < 5 else str(lvl),
                                                          _s(m)))
            to.log = self._log
        self._h = C.c_void_p()
        err = _lib.Error_()
        _check(_L.ait_tune(insp._h, C.byref(to), C.byref(self._h), C.byref(err)), err)

    @property
    def rows(self):
        out = []
        for i in range(_L.ait_tuning_count(self._h)):
            r = _lib.TuningRow()
            _check(_L.ait_tuning_row_at(self._h, i, C.byref(r)))
            out.append({"module": _s(r.module), "bucket": r.bucket, "chosen": _s(r.chosen),
                        "median_ms": r.median_sec * 1e3, "speedup": r.speedup, "why": _s(r.why),
                        "seq": r.seq, "past": r.past})
        return out

    def save(self, path):
        """Saves the tuned model as one .ait artifact (with NAME_sha256_sums.txt)."""
        err = _lib.Error_()
        _check(_L.ait_tuning_save(self._h, os.fspath(path).encode(), C.byref(err)), err)
        return os.fspath(path)

    def __str__(self):
        lines = ["%-24s %6s  %-18s %10s %8s  %s" % ("module", "batch", "chosen", "median ms",
                                                   "speedup", "why")]
        for r in self.rows:
            lines.append("%-24s %6d  %-18s %10.3f %7.2fx  %s" % (
                r["module"] or "(whole model)", r["bucket"], r["chosen"], r["median_ms"],
                r["speedup"], r["why"]))
        return "\n".join(lines)

    def __del__(self):
        if getattr(self, "_h", None):
            _L.ait_tuning_free(self._h)
            self._h = None


def inspect(model, samples=None, batch_sizes=(1,), dims=None, runs=0, threads=1):
    """Inspects a model (path or Model) on samples: a .npz path, a folder of
    them, a dict of arrays (one sample), a list of such dicts, or None
    (generated from the declared dims) -> Inspection."""
    return Inspection(model, samples, batch_sizes, dims, runs, threads)


def tune(model, samples=None, strategy=None, select=None, quant=None, batch_sizes=(1,),
         dims=None, threads=1, timeout=60.0, cache=True, plan_check=True, whole=None, log=None,
         warmup=0, window=0, cap=0, min_sqnr=0.0, gemm_db=None, accuracy_budget=None):
    """Inspects and tunes a model -> TuneReport (.rows, .save("m.ait")).
    select: a module path or a list of them (a trailing '*' matches a
    prefix); None: every top-level module. strategy: as `ait tune
    --strategy` ("max-throughput" when None). quant: quantised variants to
    try besides float32, as `ait tune --quant` ("bf16,int8dq", "auto"; a list
    is joined), each judged by SQNR of at least min_sqnr dB (0: the
    variant's own bound). accuracy_budget: the plan's end-to-end bound, as
    `ait tune --accuracy-budget` ("sqnr=30,top1=1%"). gemm_db: a tuned GEMM
    CSV (`ait gemm tune`). log(level, message): progress."""
    if quant is not None and not isinstance(quant, str):
        quant = ",".join(quant)
    insp = inspect(model, samples, batch_sizes, dims, 0, 1)
    if select:
        for p in [select] if isinstance(select, str) else select:
            insp.select(p, strategy)
    else:
        insp.select_by_share(1, 0.0, 0, strategy)
    if whole is None:  # modules picked by the user bound the tune, as in `ait tune`
        whole = not select
    return insp.tune(threads, timeout, cache, plan_check, whole, log, warmup, window, cap,
                     quant=quant, min_sqnr=min_sqnr, gemm_db=gemm_db,
                     accuracy_budget=accuracy_budget)
