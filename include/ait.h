/* ait: ahead-of-time inference tuner. The one public header.
 *
 * Conventions: every fallible call returns an ait_status (AIT_OK == 0); the
 * message of a failure (naming the file, node, op and reason) is written
 * into the caller's `ait_error` buffer when one is given, or, for calls on a
 * handle that take none, read from the handle: ait_session_error(),
 * ait_inspection_error().
 * Every create has a free, and every free accepts NULL.
 *
 * The library prints nothing and reads no environment variable: messages
 * and progress go to the log callback of the options (see ait_log_fn), and
 * what the environment would set is the caller's to read, with
 * ait_options_from_env() when it wants ait's variables honoured.
 *
 * Option structs (ait_*_options) start with `size`, which the caller sets
 * to sizeof the struct (`{.size = sizeof(ait_tune_options), ...}`): a
 * program built against an older, shorter struct keeps working with a newer
 * library, which takes the defaults for the fields it did not know. A size
 * of 0 or one larger than the library's struct is refused with
 * AIT_E_INVALID_ARG. Passing NULL options means every default.
 *
 * Threads: each group below says what may be called from several threads
 * at once. In short: functions without a handle are thread-safe; models
 * and artifacts are read-only once loaded (any threads may read one and run
 * sessions on it); one session may be run from many threads at once;
 * tensors, inspections and tunings are not thread-safe on the same handle
 * (reading one tensor from several threads is fine; writing it is not).
 * No free may race with other calls on the same handle. Tuning (ait_tune,
 * a JIT session's first run) runs candidates in forked child processes:
 * have no other thread inside ait while it does.
 */
#ifndef AIT_H
#define AIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions libait exports; everything else in the library is
 * hidden (built with -fvisibility=hidden). */
#if defined(AIT_BUILDING) && defined(__GNUC__)
#define AIT_API __attribute__((visibility("default")))
#else
#define AIT_API
#endif

/* The one place the version is set: CMakeLists.txt reads these three for
 * the project, the soname (libait.so.MAJOR) and the installed packages. */
#define AIT_VERSION_MAJOR 0
#define AIT_VERSION_MINOR 1
#define AIT_VERSION_PATCH 0
#define AIT_VERSION_STR_(x) #x
#define AIT_VERSION_XSTR_(x) AIT_VERSION_STR_(x)
#define AIT_VERSION_STRING AIT_VERSION_XSTR_(AIT_VERSION_MAJOR) "." \
    AIT_VERSION_XSTR_(AIT_VERSION_MINOR) "." AIT_VERSION_XSTR_(AIT_VERSION_PATCH)

/* The version of the library linked at run time ("0.1.0"), which may differ
 * from the AIT_VERSION_* of the header a program was compiled with.
 * Thread-safe. */
AIT_API const char *ait_version(void);

/* ---- status ------------------------------------------------------------ */
typedef enum ait_status {
    AIT_OK = 0,
    AIT_E_INVALID_ARG,  /* a caller passed something that cannot be right  */
    AIT_E_IO,           /* a file could not be opened, read or written       */
    AIT_E_PARSE,        /* a file is truncated or corrupt                    */
    AIT_E_UNSUPPORTED,  /* an op, domain, dtype or attribute ait lacks       */
    AIT_E_SHAPE,        /* shapes do not fit together                        */
    AIT_E_DTYPE,        /* a tensor has the wrong element type               */
    AIT_E_OVERFLOW,     /* a size computed from input does not fit           */
    AIT_E_NOMEM,        /* an allocation failed                              */
    AIT_E_NOT_FOUND,    /* a named input, output or file does not exist      */
    AIT_E_SECURITY,     /* a path leaves the folder it must stay in          */
    AIT_E_INTERNAL,     /* a bug in ait: please report it                    */
    AIT_STATUS_COUNT
} ait_status;

/* A short constant name for a status ("AIT_E_PARSE"); never NULL.
 * Thread-safe. */
AIT_API const char *ait_status_string(ait_status s);

/* A caller-owned buffer that receives the message of a failure. */
typedef struct ait_error {
    ait_status code;
    char msg[1024];
} ait_error;

/* ---- messages and progress --------------------------------------------- */
typedef enum ait_log_level {
    AIT_LOG_ERROR = 0, /* a failure the call reports besides its ait_status (none yet:
                        * a failure that ends a call is its status and message) */
    AIT_LOG_WARN,      /* something went on without what it wanted (an unusable
                        * cache; JIT tuning that failed, so the session runs untuned) */
    AIT_LOG_INFO,      /* what runs: inspection passes, generated samples, the
                        * whole-plan check's outcome */
    AIT_LOG_DEBUG,     /* detail: every tuning candidate's result, one line each */
    AIT_LOG_PROGRESS,  /* where a long call is now ("tune [####....] module 2/9 ...
                        * openblas/t1 (2/4) 12s"): each replaces the last, for a
                        * status line redrawn in place, and an empty one ends it;
                        * nothing is lost by dropping them */
} ait_log_level;

/* Receives each message (one line, no newline; valid during the call only)
 * from the thread that made the call it reports on. There is no verbosity
 * switch: the callback gets every level and keeps what it wants. `ait`
 * itself, on a terminal, redraws PROGRESS as a bar and prints ERROR to INFO;
 * elsewhere it prints ERROR to DEBUG as lines and drops PROGRESS. A NULL
 * callback (the default): nothing is reported anywhere. */
typedef void (*ait_log_fn)(void *user, ait_log_level level, const char *msg);

/* ---- element types (numbered as ONNX TensorProto.DataType) ------------- */
typedef enum ait_dtype {
    AIT_UNDEFINED = 0,
    AIT_F32 = 1,
    AIT_U8 = 2,
    AIT_I8 = 3,
    AIT_U16 = 4,
    AIT_I16 = 5,
    AIT_I32 = 6,
    AIT_I64 = 7,
    AIT_STRING = 8,
    AIT_BOOL = 9,
    AIT_F16 = 10,
    AIT_F64 = 11,
    AIT_U32 = 12,
    AIT_U64 = 13,
    AIT_BF16 = 16,
    /* The small types of opsets 19 to 25. Each takes ONE BYTE per element in
     * memory (ait_dtype_size is 1; ONNX files pack the 4- and 2-bit ones, the
     * reader unpacks them): the float8 types hold their 8-bit code, float4e2m1
     * its 4-bit code in the low bits, int4/int2 their value sign-extended in an
     * int8, uint4/uint2 theirs in a uint8. */
    AIT_F8E4M3FN = 17,
    AIT_F8E4M3FNUZ = 18,
    AIT_F8E5M2 = 19,
    AIT_F8E5M2FNUZ = 20,
    AIT_U4 = 21,
    AIT_I4 = 22,
    AIT_F4E2M1 = 23,
    AIT_F8E8M0 = 24,
    AIT_U2 = 25,
    AIT_I2 = 26,
} ait_dtype;

/* "float32", "int64", ...; "undefined" for unknown values. Thread-safe,
 * as is ait_dtype_size. */
AIT_API const char *ait_dtype_name(ait_dtype t);
/* Bytes per element (sizeof(char *) for AIT_STRING); 0 for undefined. */
AIT_API size_t ait_dtype_size(ait_dtype t);

#define AIT_MAX_RANK 8

/* ---- tensors ----------------------------------------------------------- */
/* A dense row-major tensor. Not thread-safe on the same tensor, except
 * that several threads may read one at once (the accessors, or passing it
 * as an input to concurrent runs) while none writes it. Different tensors:
 * any threads. */
typedef struct ait_tensor ait_tensor;

/* A new tensor owning zeroed storage; NULL on a bad shape or no memory. */
AIT_API ait_tensor *ait_tensor_create(ait_dtype t, int rank, const int64_t *dims);
/* A tensor over caller-owned memory (`data` must hold the whole tensor and
 * outlive the tensor). */
AIT_API ait_tensor *ait_tensor_wrap(ait_dtype t, int rank, const int64_t *dims, void *data);
AIT_API void ait_tensor_free(ait_tensor *t);
AIT_API ait_dtype ait_tensor_dtype(const ait_tensor *t);
AIT_API int ait_tensor_rank(const ait_tensor *t);
AIT_API const int64_t *ait_tensor_dims(const ait_tensor *t);
AIT_API int64_t ait_tensor_numel(const ait_tensor *t);
AIT_API size_t ait_tensor_nbytes(const ait_tensor *t);
AIT_API void *ait_tensor_data(ait_tensor *t);
/* Bytes a tensor may hold: its storage for a tensor ait allocated, the
 * bytes of the shape it was wrapped with for ait_tensor_wrap; 0 for a
 * string tensor, a sequence, a map or a none. A bound output's shape may
 * grow up to it (see bound buffers). */
AIT_API size_t ait_tensor_capacity(const ait_tensor *t);
/* Gives t another shape (its dtype and data stay): AIT_E_SHAPE when the
 * new shape's bytes exceed ait_tensor_capacity(t), AIT_E_INVALID_ARG for a
 * bad rank, NULL dims, or a tensor that is not a numeric tensor. */
AIT_API ait_status ait_tensor_reshape(ait_tensor *t, int rank, const int64_t *dims);

/* String tensors (AIT_STRING): the data is an array of numel `char *`, each
 * NULL (the empty string) or a NUL-terminated UTF-8 string; ait_tensor_data
 * gives that `char **`. A tensor from ait_tensor_create (or a run's output)
 * owns its strings, all NULL at first: set them with ait_tensor_set_string,
 * which copies, never by storing pointers into its data; ait_tensor_free
 * frees them. A wrapped tensor's array and strings stay the caller's. */
AIT_API ait_status ait_tensor_set_string(ait_tensor *t, int64_t i, const char *s);
/* Element i of a string tensor ("" for NULL), owned by the tensor; NULL
 * when t is not a string tensor or i is out of range. */
AIT_API const char *ait_tensor_string(const ait_tensor *t, int64_t i);

/* ONNX sequence values (ordered lists of tensors of one element type) and
 * empty optionals travel as ait_tensor too. A sequence owns copies of its
 * items; ait_tensor_free frees them. Tensor accessors on a sequence or a
 * none report rank 0, no elements and no data. */
AIT_API ait_tensor *ait_sequence_create(ait_dtype elem);
/* Appends a copy of item (a tensor of the sequence's element type, or a
 * map whose values are of that type). */
AIT_API ait_status ait_sequence_append(ait_tensor *seq, const ait_tensor *item);
AIT_API int ait_tensor_is_sequence(const ait_tensor *t);
AIT_API int ait_sequence_length(const ait_tensor *t);
/* Item i of a sequence, owned by it; NULL when out of range. */
AIT_API const ait_tensor *ait_sequence_item(const ait_tensor *t, int i);
/* ONNX maps (ai.onnx.ml's ZipMap outputs a sequence of them; DictVectorizer
 * and CastMap read one) travel as ait_tensor too: a map holds copies of a
 * 1-D keys tensor (int64 or string) and a 1-D values tensor of the same
 * length, entry i mapping keys[i] to values[i]. ait_tensor_dtype of a map
 * is its values' type; a sequence of maps holds maps as items (appended with
 * ait_sequence_append like tensors). Tensor accessors on a map report rank
 * 0, no elements and no data. ait_map_create copies keys and values; NULL
 * when they are not 1-D tensors of one length with int64 or string keys. */
AIT_API ait_tensor *ait_map_create(const ait_tensor *keys, const ait_tensor *values);
AIT_API int ait_tensor_is_map(const ait_tensor *t);
/* A map's keys and values, owned by it; NULL when t is not a map. */
AIT_API const ait_tensor *ait_map_keys(const ait_tensor *t);
AIT_API const ait_tensor *ait_map_values(const ait_tensor *t);
/* An empty ONNX optional, and the test for one. */
AIT_API ait_tensor *ait_tensor_none(void);
AIT_API int ait_tensor_is_none(const ait_tensor *t);

/* .npy files: read a whole tensor; write one (atomically: temp + rename).
 * Thread-safe (writers of one path race as two processes would). */
AIT_API ait_status ait_tensor_load_npy(const char *path, ait_tensor **out, ait_error *err);
/* The same with a memory limit: a file whose array declares more than
 * max_bytes of data (0: no limit) is refused (AIT_E_OVERFLOW) from its
 * header, before its data is read or anything that size allocated; the
 * message names the file, the declared size and the limit. */
AIT_API ait_status ait_tensor_load_npy_max(const char *path, size_t max_bytes, ait_tensor **out,
                                           ait_error *err);
AIT_API ait_status ait_tensor_save_npy(const char *path, const ait_tensor *t, ait_error *err);

/* ---- models ------------------------------------------------------------ */
typedef struct ait_model ait_model;

/* Models are read-only once loaded: loading is thread-safe, and every
 * function taking a const ait_model may be called from any threads at once,
 * also while sessions on the model run; ait_model_free only once nothing
 * uses the model. */
/* Loads an ONNX file (and its external data, which must lie in the model's
 * folder). On failure *out is NULL and `err` (may be NULL) says why. */
AIT_API ait_status ait_model_load(const char *path, ait_model **out, ait_error *err);
/* Loads a serialised ONNX model from memory (copied; `data` may be freed
 * after). `name` labels it in messages (may be NULL). External data is
 * refused, since there is no folder to find it in. */
AIT_API ait_status ait_model_load_memory(const void *data, size_t len, const char *name,
                                         ait_model **out, ait_error *err);
AIT_API void ait_model_free(ait_model *m);

/* A graph input or output as declared by the model: each dim is either a
 * number (>= 0) or symbolic, in which case dims[i] == -1 and sym[i] names
 * it ("batch", "seq") or is NULL when the model left it unnamed. */
typedef struct ait_value_info {
    const char *name;
    ait_dtype dtype;
    int rank;
    int64_t dims[AIT_MAX_RANK];
    const char *sym[AIT_MAX_RANK];
} ait_value_info;

AIT_API int ait_model_input_count(const ait_model *m);
AIT_API int ait_model_output_count(const ait_model *m);
/* Info of input / output i; the strings belong to the model. */
AIT_API ait_status ait_model_input(const ait_model *m, int i, ait_value_info *out);
AIT_API ait_status ait_model_output(const ait_model *m, int i, ait_value_info *out);
/* Number of nodes and the ONNX default-domain opset the model imports. */
AIT_API int ait_model_node_count(const ait_model *m);
AIT_API int ait_model_opset(const ait_model *m);

/* ---- sessions ---------------------------------------------------------- */
typedef struct ait_session ait_session;

typedef struct ait_session_options {
    size_t size; /* sizeof(ait_session_options) */
    /* The session's thread count, its own (not the process's): another
     * session in the process may use another count at the same time. An
     * untuned model runs on the reference ops, which use one thread
     * whatever this says; a tuned model's modules run at the thread count
     * each chosen candidate was tuned at (openblas/t2: 2), and JIT tuning
     * tries candidates of 1..threads threads. The openblas backend's count
     * is process-wide in OpenBLAS: ait sets it for each call, and calls that
     * need another count than the one inside OpenBLAS wait until it is free
     * (calls at one count run at once). onednn's is per calling thread
     * (OpenMP) and needs no lock. 0: 1. */
    int threads;
    /* JIT tuning: the first run tunes the model's top-level modules on that
     * run's inputs (strategy min-latency, short profiles, results cached in
     * cache_dir), then this and every later run use the chosen candidates.
     * If tuning fails the session runs untuned and ait_session_note() says
     * why. Nothing is saved unless ait_session_save() is called. Ignored for
     * a model that is already tuned (a .ait). Runs from other threads that
     * arrive while the first run tunes wait for it, then run tuned. The
     * library does not read AIT_JIT itself: a program honours it by calling
     * ait_options_from_env() (the `ait` command does). */
    int jit;
    /* JIT tuning's results cache folder (created when missing; copied at
     * create); NULL: no cache, every JIT session tunes from scratch. */
    const char *cache_dir;
    /* JIT tuning's messages and progress (see ait_log_fn), during the first
     * ait_session_run; and (DEBUG) each GEMM shape the native backend runs,
     * once per session, with the config it takes: "gemm M=1 N=4096 K=1024
     * f32 np bias+relu: default config (not tuned)" or "... tuned config ID"
     * (docs/gemm.md), from create on (it primes the plan). log_user must
     * live as long as the session. NULL: none. */
    ait_log_fn log;
    void *log_user;
    /* Execution contexts (each run takes one for itself) made at create
     * (0: 1). A run that finds every context in use makes another, as
     * create does, and keeps it for later runs: give the number of threads
     * that will run the session at once to have none made during runs. */
    int contexts;
    /* ait_session_run's outputs come from memory an artifact's session
     * makes and touches at create (a block per output of each bucket, for
     * each context made then; at most 256 MiB), so that no run faults in
     * the pages of its outputs, the first after loading included; a block
     * goes back to the session when its tensor is freed. 1: none made, for
     * a program that runs through bindings only (ait_session_run_bound),
     * which would hold that memory for nothing. 0: made. */
    int no_output_blocks;
} ait_session_options;

/* A session runs a model; the model must outlive it. `opts` may be NULL.
 *
 * Threads: ait_session_run, _error, _note and _save may be called on one
 * session from several threads at once (create is thread-safe too; free
 * must not race with any call on the session). Each run takes an execution
 * context of its own from the session's pool (options.contexts), so
 * concurrent runs give exactly what they give one at a time. No backend
 * needs a session-wide lock; openblas calls at different thread counts
 * wait for each other (see threads above). */
AIT_API ait_status ait_session_create(const ait_model *m, const ait_session_options *opts,
                                      ait_session **out, ait_error *err);
AIT_API void ait_session_free(ait_session *s);

/* Runs the model. `inputs[i]` is the tensor for model input i, in declared
 * order (caller-owned). On success `outputs[j]` receives a new tensor for
 * model output j that the caller frees with ait_tensor_free(), from any
 * thread, before or after ait_session_free(s). An artifact's session keeps
 * memory for its buckets' outputs (touched at create, so a first run is as
 * fast as later ones): an output's data may be such a block, given back to
 * the session when the tensor is freed (ait_tensor_capacity: the block's
 * bytes). */
AIT_API ait_status ait_session_run(ait_session *s, ait_tensor *const *inputs, int n_inputs,
                                   ait_tensor **outputs, int n_outputs);
/* ---- bound buffers ------------------------------------------------------ */
/* A binding (ONNX Runtime users know it as IoBinding) says which tensors a
 * run of a session reads and where it writes its outputs, so that a
 * program runs a model on memory it owns, with no allocation and no output
 * copy per run: a decoder's key/value cache, say, in one preallocated
 * buffer per cache pair, each run appending its new positions after the
 * past (ait_binding_set_cache below, examples/generate.c).
 *
 * Ownership: a binding holds pointers only. Bound tensors stay the
 * caller's and must live (and keep their data) until they are unbound or
 * the binding's last run returns; ait never frees or reallocates them.
 *
 * Outputs: a bound output tensor (ait_tensor_wrap over the caller's memory,
 * or ait_tensor_create) is written where it lies: the node computing the
 * output writes into it, up to the tensor's capacity (ait_tensor_capacity:
 * the bytes of the shape it was wrapped with), whatever shape it has when
 * bound. After a run it has the output's dtype-checked, actual shape
 * (ait_tensor_rank/_dims), and can be bound as the next run's input as it
 * is. A copy is made only where no node writes the output in place: an
 * input or constant the model passes through, an output listed twice, an
 * output computed by a tuned module on a backend that cannot write into
 * caller memory (copied once, from the backend's buffer into the caller's;
 * `native` writes a decoder's present key/values in place). An output the
 * caller leaves unbound is copied into a tensor the binding keeps (reused
 * run to run; ait_binding_output).
 *
 * Refusals, each with a message naming the input or output: a tensor of
 * another dtype than the model declares (AIT_E_DTYPE, when bound), a
 * sequence or map (AIT_E_UNSUPPORTED), a string output (leave it unbound);
 * at the run, an unbound input (AIT_E_INVALID_ARG), an output whose shape
 * needs more than the bound tensor's capacity (AIT_E_SHAPE, naming the
 * shape needed and the bytes bound; the run stops before that output is
 * written, but outputs computed earlier may be), and a bound output whose
 * memory overlaps an input or another bound output (AIT_E_INVALID_ARG: a
 * run never reads and writes one buffer, so present cannot be written
 * where past lives: bind the pair with ait_binding_set_cache, or use two
 * buffers).
 *
 * Threads: one binding is used by one thread at a time (setting, running,
 * reading its outputs); several bindings of one session may run from
 * several threads at once, as ait_session_run may. */
typedef struct ait_binding ait_binding;

/* A binding for session s, every input and output unbound; s must outlive
 * it. */
AIT_API ait_status ait_binding_create(ait_session *s, ait_binding **out, ait_error *err);
AIT_API void ait_binding_free(ait_binding *b);
/* Binds model input i (declared order) to t, which runs read only; NULL
 * unbinds. Allocation-free, as are the two below. */
AIT_API ait_status ait_binding_set_input(ait_binding *b, int i, const ait_tensor *t,
                                         ait_error *err);
/* Binds model output j to t (see above); NULL unbinds it. */
AIT_API ait_status ait_binding_set_output(ait_binding *b, int j, ait_tensor *t, ait_error *err);
/* A key/value cache appended in place: `cache` (a tensor of the past's
 * dtype and rank whose dims[axis] is its capacity, in positions along the
 * past-length axis `axis`) is bound as both input i, the past (its first
 * len positions along axis), and output j, the present (the past and the
 * new positions after it, written into the same buffer). A decode loop so
 * keeps one max-length buffer per key and value, rebinds it each step with
 * len grown by the tokens run (allocation-free), and no run copies the
 * past. The buffer's layout stays that of its own dims (positions past the
 * present unwritten); ait_binding_output(b, j) gives cache itself, its
 * dims unchanged. Where the run cannot append in place (an untuned model,
 * a backend that cannot, a model whose present is not Concat(past, new)
 * along axis), the past is copied out and the present copied back: same
 * results, slower. Setting input i or output j otherwise, or cache NULL,
 * removes the pair. Refused: len above the capacity (AIT_E_SHAPE) and, at
 * the run, a present longer than the capacity or of other dims than the
 * cache's but along axis (AIT_E_SHAPE, naming the output and both shapes;
 * the run may have stopped after some outputs were written). */
AIT_API ait_status ait_binding_set_cache(ait_binding *b, int i, int j, ait_tensor *cache,
                                         int axis, int64_t len, ait_error *err);
/* How many of b's cache pairs its last run appended in place (the others
 * it copied); 0 before a run. */
AIT_API int ait_binding_caches_in_place(const ait_binding *b);
/* Output j of the last successful run: the bound tensor, or the binding's
 * own for an unbound output (valid until the next run or the free; empty
 * before a run). NULL for a bad index. */
AIT_API ait_tensor *ait_binding_output(ait_binding *b, int j);
/* Gives each output b leaves unbound (and not a cache pair's) its storage
 * now, before the first run, zeroed so that its pages are mapped: the
 * first run then copies its unbound outputs into memory already touched,
 * as every later run does, instead of growing the binding's tensors (on a
 * decoder at batch 4, tens of MB faulted in by the first request). Per
 * bucket: when every input is bound (a cache pair's input as its past),
 * the room is that of the bucket of the session's plan a run on them falls
 * in (its priming run at load says how many bytes each output takes), so
 * a service that runs one bucket holds that bucket's outputs only; bind a
 * sample of each bucket you will run and call it for each (the storage
 * grows to the largest of them, never shrinks). With an input unbound, the
 * room is the most each output takes in any bucket of the plan. Call it at
 * load, after binding what you bind. *bytes (may be NULL): what the
 * binding's own output tensors hold now, which they keep until the
 * binding is freed. An untuned model (no buckets, nothing primed) reserves
 * nothing (AIT_OK, 0 bytes more). A run whose output needs more (a bucket
 * not reserved, a run past its bucket's priming shape) grows it as before.
 * AIT_E_NOMEM when the memory cannot be had. Not thread-safe with runs of
 * b. */
AIT_API ait_status ait_binding_reserve(ait_binding *b, size_t *bytes, ait_error *err);
/* Runs s on what b binds (b must be s's). Failures as ait_session_run's,
 * the message from ait_session_error(s). On an untuned model, once runs
 * have met each shape (or a larger one), a run allocates nothing on the
 * heap; a tuned model's native modules still do (docs/runtime.md, "Bound
 * buffers", says what is counted and what is left). */
AIT_API ait_status ait_session_run_bound(ait_session *s, ait_binding *b);

/* Memory of s: *arena, the bytes of the largest arena of intermediates its
 * runs have used so far (the executor places each run's intermediates in
 * one arena by liveness: the peak of that plan; per execution context;
 * with the values of a tuned model's native modules, placed the same way;
 * other backends keep their own and are not counted), *weights the
 * bytes of the model's constants still held: an artifact's first session
 * frees those its prepared blobs replace (the backends' copies are not
 * counted). Either pointer may be NULL. */
AIT_API void ait_session_memory(ait_session *s, size_t *arena, size_t *weights);
/* When the calling thread's last ait_session_run was on s: that run's
 * message ("" if it succeeded). Otherwise (a thread that has not run s,
 * or ran another session since): the message of s's last failed run from
 * any thread ("" if none). The string is the calling thread's copy, valid
 * until its next ait_session_run or ait_session_error call (on any
 * session): other threads' runs neither change nor tear it. */
AIT_API const char *ait_session_error(const ait_session *s);
/* What JIT tuning did ("tuned 9 modules on the first run (batch 1)", or why
 * it failed and the session runs untuned); "" when it has not run. The
 * string never changes once returned. */
AIT_API const char *ait_session_note(const ait_session *s);
/* Saves a JIT-tuned session's model and plan as a .ait artifact (as
 * ait_tuning_save does); fails when the session has not tuned yet. */
AIT_API ait_status ait_session_save(ait_session *s, const char *path, ait_error *err);

/* ---- inspection and selection ------------------------------------------ */
/* An inspection runs samples through a model at one or more batch sizes and
 * describes its module tree (named subgraphs from the exporter's scopes):
 * per module its size, work, time share and graph spec. Selection picks the
 * modules to tune, each with a strategy. The model must outlive it.
 * Not thread-safe on the same inspection (nor ait_tune on it); different
 * inspections, of one model too, may be made and used in parallel. */
typedef struct ait_inspection ait_inspection;

typedef struct ait_inspect_options {
    size_t size;              /* sizeof(ait_inspect_options) */
    const char *data_path;    /* .npz, folder of .npz, or folder of sample folders;
                                 NULL: one sample generated from the declared dims */
    int n_dims;               /* sizes of symbolic dims of generated samples */
    const char *const *dim_names;
    const int64_t *dim_values;
    int n_batch_sizes;        /* 0: {1}; two or more find batch and dynamic axes */
    const int *batch_sizes;   /* at most 16 */
    int runs;                 /* timed runs per batch size (0: 5) */
    int warmup;               /* untimed runs per batch size (0: 1) */
    int threads;              /* 0: 1 */
    /* Messages: what each pass runs (INFO), what was generated (INFO);
     * see ait_log_fn. NULL: none. */
    ait_log_fn log;
    void *log_user;
    /* The most bytes one array read from data_path may declare (each .npy,
     * each .npz entry); a bigger one is refused before it is allocated or
     * inflated, naming the file, the entry, its size and the limit. 0: no
     * limit. */
    size_t max_input_bytes;
} ait_inspect_options;

/* Inspects model m (`opts` may be NULL). On failure *out is NULL and err
 * says why (the sample file and input, for bad samples; a dim name that no
 * input has, listing the names they have; for generated samples that fail,
 * which dims nobody set and the smallest size that passes shape inference;
 * a one-element input the model branches on, which is never generated). */
AIT_API ait_status ait_inspect(const ait_model *m, const ait_inspect_options *opts,
                               ait_inspection **out, ait_error *err);
AIT_API void ait_inspection_free(ait_inspection *r);
/* The message of the last failed call on r ("" if none). */
AIT_API const char *ait_inspection_error(const ait_inspection *r);

/* Modules, in tree order from 0, the whole model (path ""). */
AIT_API int ait_inspection_module_count(const ait_inspection *r);
/* Index of the module with this path, or -1. */
AIT_API int ait_inspection_find(const ait_inspection *r, const char *path);
/* Whether shapes are assumed static (one batch size, nothing changed). */
AIT_API int ait_inspection_static_shapes(const ait_inspection *r);

typedef struct ait_module_info {
    const char *path;         /* dotted ("layer1.0.conv1"); "" for the model */
    int depth, parent;        /* parent: module index, -1 for the model */
    int nodes;                /* in the module and the modules inside it */
    int64_t params, param_bytes;
    double flops;             /* per sample */
    const char *precisions;   /* "float32", "float16,float32" */
    int64_t calls;
    double total_sec, mean_sec;
    double share;             /* of the model's time, 0..1 */
    int n_inputs, n_outputs;  /* ports of its graph spec */
} ait_module_info;

/* Strings belong to the inspection. */
AIT_API ait_status ait_inspection_module(const ait_inspection *r, int module, ait_module_info *out);

typedef enum ait_axis_kind { AIT_AXIS_STATIC = 0, AIT_AXIS_BATCH, AIT_AXIS_DYNAMIC } ait_axis_kind;

/* One input or output of a module, with each axis classified. */
typedef struct ait_port_info {
    const char *locator;      /* "inputs[0]", "outputs[1]" */
    const char *name;         /* the tensor's name in the model */
    int is_output;
    ait_dtype dtype;
    int rank;
    ait_axis_kind kind[AIT_MAX_RANK];
    const char *axis_name[AIT_MAX_RANK]; /* "batch0", "dim1"; "" when static */
    int64_t multiple[AIT_MAX_RANK];      /* batch axes: size = multiple x batch */
    int64_t min[AIT_MAX_RANK], max[AIT_MAX_RANK];
} ait_port_info;

/* Port `port` of a module: inputs 0..n_inputs-1, then outputs. */
AIT_API ait_status ait_inspection_port(const ait_inspection *r, int module, int port,
                                       ait_port_info *out);

/* A decoder's key/value cache, as the inspection found it from the shapes
 * it saw: a "past" input that comes back as a "present" output longer
 * along one axis, in every run by the size of one axis of another input
 * (the sequence: token ids). Returns the number of cache pairs (0: not a
 * decoder) and, when there are some, the sequence axis as a port of the
 * model (module 0) and its axis. */
AIT_API int ait_inspection_decoder(const ait_inspection *r, int *seq_port, int *seq_axis);
/* Cache pair k (0 .. count-1): the past input's and the present output's
 * ports of module 0, and the axis along which the cache grows. */
AIT_API ait_status ait_inspection_kv(const ait_inspection *r, int k, int *past_port,
                                     int *present_port, int *axis);

/* The whole inspection (and selection) as a JSON document; the caller
 * frees it with free(). NULL on failure (see ait_inspection_error). */
AIT_API char *ait_inspection_json(ait_inspection *r);

/* Strategies: "first-wins", "one-backend:NAME", "max-throughput",
 * "min-latency", "latency-budget:MS", "only:NAME" (NAME's fastest valid
 * candidate even where the baseline is faster: the model on one backend,
 * to compare with); NULL means "max-throughput".
 * Selected modules never overlap: selecting one inside (or around) a
 * module already selected fails. */
/* Selects module `pattern`, or the outermost modules whose path starts with
 * it when it ends in '*' ("encoder.layer.*"). */
AIT_API ait_status ait_select_path(ait_inspection *r, const char *pattern, const char *strategy);
/* Selects, among the modules at `depth` (and leaves above it), those with
 * at least `min_share` of the time, at most `top` of them (0: no limit),
 * biggest first, passing over ones that overlap the selection. */
AIT_API ait_status ait_select_by_share(ait_inspection *r, int depth, double min_share, int top,
                                       const char *strategy);
AIT_API int ait_selection_count(const ait_inspection *r);
/* Selected item i: its module index and strategy (owned by r). */
AIT_API ait_status ait_selection_item(const ait_inspection *r, int i, int *module,
                                      const char **strategy);
AIT_API void ait_selection_clear(ait_inspection *r);

/* ---- tuning and artifacts --------------------------------------------- */
/* Tuning tries, for each selected module of an inspection (every top-level
 * module when none is selected) and each batch bucket (the powers of two at
 * or above the inspection's batch sizes), every candidate: each backend that
 * runs some of the module's nodes, at 1..max_threads threads. Each runs in a
 * child process with a time limit, is validated against the reference
 * backend on the samples and profiled; the module's strategy picks one, or
 * keeps the baseline (reference, one thread).
 * Threads: ait_tune forks (see the top); a tuning's accessors and
 * ait_tuning_save may be called from several threads at once (they only
 * read it), not while it is freed. */
typedef struct ait_tuning ait_tuning;

typedef struct ait_tune_options {
    size_t size;       /* sizeof(ait_tune_options) */
    int max_threads;   /* candidates use 1..max_threads threads (0: 1) */
    double timeout;    /* seconds per candidate (0: 60) */
    int warmup;        /* profiling: untimed runs (0: 10) */
    int window;        /* timed runs the coefficient of variation is taken over (0: 20) */
    double cv;         /* stop when the CV over the window is under this (0: 0.10) */
    int cap;           /* at most this many timed runs (0: 100) */
    /* A candidate replaces the baseline only when faster by this fraction
     * (0: 0.01; negative: by anything; at most 0.99). */
    double margin;
    /* Keep the per-module choices as they are: do not run the whole model on
     * them against each backend alone (the whole-plan check, docs/tuning.md). */
    int skip_plan_check;
    /* The results cache folder (docs/tuning.md; created when missing): a
     * trial already there is not run again. NULL: no cache. An unusable
     * folder is a warning, never a failure. ait_options_from_env() sets
     * the usual one ($AIT_CACHE_DIR, else ~/.cache/ait). */
    const char *cache_dir;
    /* Progress and messages: the candidate running now (PROGRESS), each
     * candidate's result (DEBUG), the whole-plan check (INFO), cache
     * warnings (WARN); see ait_log_fn. NULL: none. */
    ait_log_fn log;
    void *log_user;
    /* Do not try the `whole` candidate: the whole model as one module on one
     * backend, tuned beside the selected modules and run in the whole-plan
     * check (docs/tuning.md). */
    int skip_whole;
    /* A tuned GEMM CSV (`ait gemm tune`, docs/gemm.md): native candidates
     * run each GEMM shape with its tuned config (exact M, else the nearest
     * M), and the artifact embeds the configs, so loading never reads the
     * file. Rows of another CPU are skipped with a warning. NULL: none. */
    const char *gemm_db;
    /* Quantised candidates to try besides float32: "bf16", "int8dq" (int8
     * dynamic), "int8" (int8 static: each Conv's input at a scale
     * calibrated on the samples, see calib_percentile), "int8wo", "int4wo"
     * (weight-only; "int4wo-64", "int4wo-128" for other group sizes),
     * "fp16" (half weights, float compute), comma-separated, or "auto" for all; NULL or "none": float32 only.
     * Each is judged by the SQNR of its module's
     * outputs against the reference: at least min_sqnr dB (0: the
     * variant's own bound, 35 for bf16, 45 for fp16, 25 for int8 and int4). A plan with
     * a quantised choice is saved lean: without the float weights its
     * prepared blobs replace, so it runs only on its plan (no untuned
     * fallback, no inspection). */
    const char *quant;
    double min_sqnr;
    /* The end-to-end accuracy budget of the plan: "sqnr=DB" (every float
     * output's SQNR over all samples at least DB), "top1=SHARE" (at most
     * this share of a classifier output's rows with another top-1 class,
     * "0.01" or "1%"), "abs=X" (largest absolute error), comma-separated;
     * NULL or "none": no bound. With quant or a budget, each bucket's plan
     * runs whole on every sample against the float32 reference (figures in
     * the tuning's report); a plan that misses the budget is walked back,
     * the quantised module with the lowest SQNR first, to float32 until it
     * fits. Fewer than 16 sample rows: a warning (log). */
    const char *accuracy_budget;
    /* A decoder's buckets (a model whose inspection found a key/value cache
     * and a sequence axis, ait_inspection_decoder): plans are keyed by
     * (batch, sequence, past length) and each sample is tuned in its own
     * bucket: the smallest of these at or above its length, else the
     * largest. Ascending, at most 16 each; NULL or 0: from the samples
     * (sequence 1 is the decode bucket, other lengths go to the power of
     * two at or above). Ignored for other models (batch buckets only). */
    const int *seq_buckets;
    int n_seq_buckets;
    const int *past_buckets;
    int n_past_buckets;
    /* int8's calibration: 0 each activation's min and max over the
     * samples, else its P-th percentile range (50 < P <= 100, averaged
     * over the sample batches), which outliers stretch less. */
    double calib_percentile;
    /* Nonzero: time candidates at one thread by their thread's CPU time,
     * not the wall clock, so a tune on a machine that other processes keep
     * busy picks what is fastest rather than what was preempted least
     * (candidates at more threads stay on the wall clock). Timings in the
     * tuning's report are then CPU time for those candidates. */
    int cpu_clock;
} ait_tune_options;

/* What ait's environment variables ask for, for programs that want them
 * honoured (the library reads the environment only here): sets so->jit to
 * 1 when AIT_JIT=1, and the cache folder of both (so->cache_dir,
 * to->cache_dir) to $AIT_CACHE_DIR when set and not empty, else
 * $HOME/.cache/ait, else NULL (no cache). Either pointer may be NULL.
 * Set each struct's size first: only fields within it are written, other
 * fields are left alone, and a size ait_session_create / ait_tune would
 * refuse is refused here (AIT_E_INVALID_ARG; err may be NULL). The folder
 * string points into the environment, or for the HOME default into memory
 * the library keeps for the process (HOME as at the first call that needed
 * it). A program that never calls it ignores AIT_JIT and AIT_CACHE_DIR:
 * there is no other way to turn JIT tuning on from outside a program. */
AIT_API ait_status ait_options_from_env(ait_session_options *so, ait_tune_options *to,
                                        ait_error *err);

/* Tunes what r selects (opts may be NULL). The inspection and its model
 * must outlive the result. */
AIT_API ait_status ait_tune(ait_inspection *r, const ait_tune_options *opts, ait_tuning **out,
                            ait_error *err);
AIT_API void ait_tuning_free(ait_tuning *t);
/* The tuning's rows (one per module and bucket, and the whole model's where the
 * plan is the `whole` candidate: module "") and what was chosen. */
AIT_API int ait_tuning_count(const ait_tuning *t);
typedef struct ait_tuning_row {
    const char *module;     /* path; "" for the whole model */
    int bucket;             /* batch bucket */
    const char *chosen;     /* candidate, e.g. "openblas/t1" */
    double median_sec;      /* of the chosen candidate */
    double speedup;         /* over the baseline */
    const char *why;
    int seq, past;          /* a decoder's sequence and past buckets; seq 0: none */
} ait_tuning_row;
AIT_API ait_status ait_tuning_row_at(const ait_tuning *t, int i, ait_tuning_row *out);
/* Saves the tuned model as one .ait artifact at path (temporary file, then
 * rename) with NAME_sha256_sums.txt beside it. */
AIT_API ait_status ait_tuning_save(const ait_tuning *t, const char *path, ait_error *err);

typedef struct ait_artifact_options {
    size_t size; /* sizeof(ait_artifact_options) */
    /* When the plan cannot be used here (CPU features missing, a backend not
     * available, a damaged plan or prepared blob) but the embedded model is
     * intact, load the model untuned instead of failing; ait_model_note()
     * then says why. A lean artifact (a quantised plan) has no such model:
     * its load then fails with both reasons. */
    int fallback_untuned;
    /* Path of an Ed25519 public key (PEM, as `ait keygen` writes it): refuse
     * the artifact unless NAME.ait.sig beside it holds a signature of it by
     * that key (`ait sign`); no fallback then. NULL: signatures not checked. */
    const char *trusted_key;
    /* Keep the float weights the prepared blobs replace until the first
     * session frees them, so that the model can be inspected (ait_inspect)
     * before; ait_model_load() keeps them. 0 (the default): they are freed
     * as the plan is read, before the prepared blobs are, so the load never
     * holds both (its peak is then about the untuned model's); ait_inspect
     * of such a model is refused. */
    int keep_weights;
    /* Use the file's pages in place (a read-only mapping, the page cache
     * shared) instead of reading the whole file into memory of the process:
     * the same checks (every hash, on the mapping), no copy and no new memory
     * for the prepared blobs, so a load from the page cache is faster. But
     * the loaded model then depends on the file: the file truncated while
     * sessions run raises SIGBUS, and a file changed in place changes what
     * they run (replace artifacts by rename, never `cp` over a live one).
     * 0 (the default): the copy, which nothing done to the file affects. */
    int map_file;
    /* Threads the load may use to check the blobs' sha256 (each blob whole on
     * one thread; only when they hold 16 MiB or more): 0 (the default), up to
     * 4 of the machine's online CPUs; 1, the calling thread alone; N, at most
     * N (4 at most). The threads end before the load returns. */
    int load_threads;
} ait_artifact_options;

/* Loads a .ait artifact: maps it, checks every hash, the CPU features it
 * needs and the model it holds, and returns the model with its plan, which
 * sessions then run (each module on its chosen candidate for the batch's
 * bucket, built from the prepared blobs: no packing, no search). opts may
 * be NULL. ait_model_load() also accepts an artifact (default options).
 * Thread-safe; the result is a model like any other (see models). */
AIT_API ait_status ait_artifact_load(const char *path, const ait_artifact_options *opts,
                                     ait_model **out, ait_error *err);
/* Whether m runs a tuned plan; and why an artifact's plan is not used (a
 * fallback), or "". */
AIT_API int ait_model_is_tuned(const ait_model *m);
AIT_API const char *ait_model_note(const ait_model *m);

#ifdef __cplusplus
}
#endif
#endif /* AIT_H */
