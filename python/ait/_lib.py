"""The ctypes declarations of include/ait.h that the binding uses, and where
libait.so is found. Struct layouts mirror ait.h field for field: a change
there must be made here too (each options struct's `size` lets an older
layout keep working, but a field read here must exist there)."""
import ctypes as C
import os

MAX_RANK = 8


class Error_(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 1024)]


class ValueInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("dtype", C.c_int), ("rank", C.c_int),
                ("dims", C.c_int64 * MAX_RANK), ("sym", C.c_char_p * MAX_RANK)]


LOG_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_int, C.c_char_p)


class SessionOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("threads", C.c_int), ("jit", C.c_int),
                ("cache_dir", C.c_char_p), ("log", LOG_FN), ("log_user", C.c_void_p),
                ("contexts", C.c_int)]


class ArtifactOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("fallback_untuned", C.c_int), ("trusted_key", C.c_char_p),
                ("keep_weights", C.c_int), ("map_file", C.c_int), ("load_threads", C.c_int)]


class InspectOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("data_path", C.c_char_p), ("n_dims", C.c_int),
                ("dim_names", C.POINTER(C.c_char_p)), ("dim_values", C.POINTER(C.c_int64)),
                ("n_batch_sizes", C.c_int), ("batch_sizes", C.POINTER(C.c_int)),
                ("runs", C.c_int), ("warmup", C.c_int), ("threads", C.c_int),
                ("log", LOG_FN), ("log_user", C.c_void_p)]


class ModuleInfo(C.Structure):
    _fields_ = [("path", C.c_char_p), ("depth", C.c_int), ("parent", C.c_int),
                ("nodes", C.c_int), ("params", C.c_int64), ("param_bytes", C.c_int64),
                ("flops", C.c_double), ("precisions", C.c_char_p), ("calls", C.c_int64),
                ("total_sec", C.c_double), ("mean_sec", C.c_double), ("share", C.c_double),
                ("n_inputs", C.c_int), ("n_outputs", C.c_int)]


class TuneOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("max_threads", C.c_int), ("timeout", C.c_double),
                ("warmup", C.c_int), ("window", C.c_int), ("cv", C.c_double), ("cap", C.c_int),
                ("margin", C.c_double), ("skip_plan_check", C.c_int), ("cache_dir", C.c_char_p),
                ("log", LOG_FN), ("log_user", C.c_void_p), ("skip_whole", C.c_int),
                ("gemm_db", C.c_char_p), ("quant", C.c_char_p), ("min_sqnr", C.c_double),
                ("accuracy_budget", C.c_char_p),
                ("seq_buckets", C.POINTER(C.c_int)), ("n_seq_buckets", C.c_int),
                ("past_buckets", C.POINTER(C.c_int)), ("n_past_buckets", C.c_int)]


class TuningRow(C.Structure):
    _fields_ = [("module", C.c_char_p), ("bucket", C.c_int), ("chosen", C.c_char_p),
                ("median_sec", C.c_double), ("speedup", C.c_double), ("why", C.c_char_p),
                ("seq", C.c_int), ("past", C.c_int)]


P = C.c_void_p
ERR = C.POINTER(Error_)
# name: (restype, argtypes)
_PROTOS = {
    "ait_version": (C.c_char_p, []),
    "ait_status_string": (C.c_char_p, [C.c_int]),
    "ait_dtype_name": (C.c_char_p, [C.c_int]),
    "ait_tensor_wrap": (P, [C.c_int, C.c_int, C.POINTER(C.c_int64), P]),
    "ait_tensor_free": (None, [P]),
    "ait_tensor_dtype": (C.c_int, [P]),
    "ait_tensor_rank": (C.c_int, [P]),
    "ait_tensor_dims": (C.POINTER(C.c_int64), [P]),
    "ait_tensor_nbytes": (C.c_size_t, [P]),
    "ait_tensor_data": (P, [P]),
    "ait_tensor_is_sequence": (C.c_int, [P]),
    "ait_tensor_is_map": (C.c_int, [P]),
    "ait_tensor_is_none": (C.c_int, [P]),
    "ait_model_load": (C.c_int, [C.c_char_p, C.POINTER(P), ERR]),
    "ait_artifact_load": (C.c_int, [C.c_char_p, C.POINTER(ArtifactOptions), C.POINTER(P), ERR]),
    "ait_model_free": (None, [P]),
    "ait_model_input_count": (C.c_int, [P]),
    "ait_model_output_count": (C.c_int, [P]),
    "ait_model_input": (C.c_int, [P, C.c_int, C.POINTER(ValueInfo)]),
    "ait_model_output": (C.c_int, [P, C.c_int, C.POINTER(ValueInfo)]),
    "ait_model_is_tuned": (C.c_int, [P]),
    "ait_model_note": (C.c_char_p, [P]),
    "ait_session_create": (C.c_int, [P, C.POINTER(SessionOptions), C.POINTER(P), ERR]),
    "ait_session_free": (None, [P]),
    "ait_session_run": (C.c_int, [P, C.POINTER(P), C.c_int, C.POINTER(P), C.c_int]),
    "ait_session_error": (C.c_char_p, [P]),
    "ait_binding_create": (C.c_int, [P, C.POINTER(P), ERR]),
    "ait_binding_free": (None, [P]),
    "ait_binding_set_input": (C.c_int, [P, C.c_int, P, ERR]),
    "ait_binding_set_output": (C.c_int, [P, C.c_int, P, ERR]),
    "ait_binding_output": (P, [P, C.c_int]),
    "ait_binding_set_cache": (C.c_int, [P, C.c_int, C.c_int, P, C.c_int, C.c_int64, ERR]),
    "ait_binding_caches_in_place": (C.c_int, [P]),
    "ait_binding_reserve": (C.c_int, [P, C.POINTER(C.c_size_t), ERR]),
    "ait_session_run_bound": (C.c_int, [P, P]),
    "ait_session_note": (C.c_char_p, [P]),
    "ait_session_save": (C.c_int, [P, C.c_char_p, ERR]),
    "ait_options_from_env": (C.c_int, [C.POINTER(SessionOptions), C.POINTER(TuneOptions), ERR]),
    "ait_inspect": (C.c_int, [P, C.POINTER(InspectOptions), C.POINTER(P), ERR]),
    "ait_inspection_free": (None, [P]),
    "ait_inspection_error": (C.c_char_p, [P]),
    "ait_inspection_module_count": (C.c_int, [P]),
    "ait_inspection_module": (C.c_int, [P, C.c_int, C.POINTER(ModuleInfo)]),
    "ait_inspection_json": (P, [P]),  # a malloc'd char *: freed with libc free
    "ait_select_path": (C.c_int, [P, C.c_char_p, C.c_char_p]),
    "ait_select_by_share": (C.c_int, [P, C.c_int, C.c_double, C.c_int, C.c_char_p]),
    "ait_selection_count": (C.c_int, [P]),
    "ait_tune": (C.c_int, [P, C.POINTER(TuneOptions), C.POINTER(P), ERR]),
    "ait_tuning_free": (None, [P]),
    "ait_tuning_count": (C.c_int, [P]),
    "ait_tuning_row_at": (C.c_int, [P, C.c_int, C.POINTER(TuningRow)]),
    "ait_tuning_save": (C.c_int, [P, C.c_char_p, ERR]),
}


def _candidates():
    """Where libait.so may be, first found wins: $AIT_LIBRARY, next to this
    package (an installed copy), the build folder of the source tree this
    package sits in (python/ait -> build/), then the system's."""
    env = os.environ.get("AIT_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.dirname(os.path.dirname(here))
    return [os.path.join(here, "libait.so"), os.path.join(tree, "build", "libait.so"),
            "libait.so.0", "libait.so"]


def load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = C.CDLL(path)
            break
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    else:
        raise ImportError("ait: libait.so not found; build it (cmake --build build) or set "
                          "AIT_LIBRARY to its path. Tried: " + "; ".join(tried))
    for name, (res, args) in _PROTOS.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    libc = C.CDLL(None)
    libc.free.argtypes, libc.free.restype = [P], None
    return lib, libc
