/* The plan: per tuned module and batch bucket, the candidate to run it on.
 * It is the contract between the tuner, which builds and saves it
 * (tune/plan_build.h), and the runtime, which reads it from a manifest and
 * runs it (runtime/plan_exec.h): it carries what a run needs, the manifest
 * also the measurements that justified it.
 *
 * Manifest (JSON, the artifact's; plan_save writes it, plan_parse reads the
 * parts a run needs and ignores the rest):
 *   {"format": "ait-plan", "version": 1, "ait_version": "...",
 *    "model": {"name": "resnet18.onnx", "sha256": "...", "blob": "model.onnx", "bytes": N},
 *    "cpu": {"name": "...", "features": "avx2,fma,..."},
 *    "batch_axes": [{"input": "x", "axis": 0, "multiple": 1}],   // model inputs with one
 *    "buckets": [1, 8],
 *    "priming": [[{"dtype": 1, "shape": [1, 3, 224, 224]}], [...]],  // per bucket
 *    "modules": [{"name": "layer1", "nodes": 12,
 *                 "plans": [{"bucket": 1, "strategy": "max-throughput",
 *                            "chosen": "openblas/t1", "backend": "openblas", "threads": 1,
 *                            "variant": "", "why": "...", "median_ms": ..., "baseline_ms": ...,
 *                            "speedup": ...,
 *                            "blobs": [{"name": "w3.conv1", "blob": "p/0/b1/w3.conv1",
 *                                       "node": "conv1", "weights": [{"name": "conv1.weight",
 *                                       "sha256": "..."}]}]}]}],
 *    "tuning": {...},       // the whole `ait tune --json` report (every candidate)
 *    "inspection": {...}}   // `ait inspect --json` of the tuned modules (graph specs)
 * A decoder (a model with a sequence axis and a key/value cache, tune/phases.h)
 * is planned per (batch, sequence, past length) bucket instead: the manifest
 * says where those are read from, and each bucket and plan names all three:
 *    "sequence": {"input": "input_ids", "axis": 1,
 *                 "past": [{"input": "past_key_0", "axis": 2}, ...]},
 *    "buckets": [{"batch": 1, "seq": 1, "past": 128}, {"batch": 1, "seq": 8, "past": 16}],
 *    "plans": [{"bucket": 1, "seq": 1, "past": 128, ...}, ...]
 * A model without a "sequence" has integer buckets (batch only), as above.
 * Blobs of prepared state are named "p/MODULE/bBUCKET/NAME" (MODULE the index
 * in "modules", NAME the backend's; BUCKET "B", or "B.sS.pP" for a decoder's
 * bucket); a blob with the same bytes as one
 * already saved for the module (the same weights prepared at another
 * bucket) is saved once and listed by each choice that uses it.
 *
 * A prepared blob is bound to what it was prepared from: its artifact name
 * must be "p/MI/bB/NAME" for the module MI that lists it, a bucket B of the
 * plan and its own NAME; "node" names the model's node (the backend's NAME
 * starts "wI." with I the node's index in the module graph, which the load
 * checks against the extracted module), and "weights" every constant input
 * of that node with the sha256 of its bytes in the embedded model. So a blob
 * moved to another module, node or model is refused at load. A blob of the
 * whole module that no weight went into (native's GEMM configs, "gemm.cfg")
 * has "node" "" and no weights, and its NAME must not name a node.
 *
 * Bounds a manifest cannot pass, whatever its hashes: buckets (batch,
 * sequence and past) at most PLAN_BUCKET_MAX, threads at most
 * PLAN_THREADS_MAX (and at most this machine's CPUs at run), priming shapes
 * of the model's rank and dtype, its static dims, bucket x multiple on batch
 * axes, the bucket's sequence and past length on those axes, and at most
 * PLAN_PRIME_MAX bytes per input. */
#ifndef AIT_RUNTIME_PLAN_H
#define AIT_RUNTIME_PLAN_H
#include "backends/backend.h"
#include "io/json.h"
#include "io/json_read.h"

#define PLAN_MAX_BUCKETS 16
/* 2: models without scope names are cut into segments of comparable FLOPs;
 * a version-1 plan's "seg.K" modules would name other nodes now. */
/* 3: blobs name their node and weights; 4: and its BN's; 5: decoders' buckets
 * are (batch, sequence, past) */
#define PLAN_FORMAT_VERSION 5
#define PLAN_BUCKET_MAX 65536
#define PLAN_THREADS_MAX 1024
#define PLAN_PRIME_MAX (1LL << 30) /* bytes of one priming input */
#define PLAN_MODEL_BLOB "model.onnx" /* the ONNX file, as given to tune */
/* Instead of it: the lean model, the ONNX file without the data of the
 * weights every reader takes from prepared blobs (io/onnx.h,
 * ONNX_ABSENT_LOCATION), which no untuned run can use; the header's model
 * hash stays the ONNX file's. */
#define PLAN_MODEL_LEAN_BLOB "model.lean.onnx"

/* A model input's shape at a bucket (batch axes at the bucket's size,
 * dynamic axes at the largest size seen), for priming at load. */
typedef struct plan_shape {
    ait_dtype dtype;
    int rank;
    int64_t dims[AIT_MAX_RANK];
} plan_shape;

/* A bucket: the batch bucket, and for a decoder the sequence and past-length
 * buckets (seq 0: the model has no sequence axis, batch alone keys plans). */
typedef struct plan_key {
    int batch, seq, past;
} plan_key;

typedef struct plan_choice {
    plan_key bucket;
    candidate_cfg cfg;     /* cfg.backend is the registry's name; cfg.prep set at load */
    char cand[64];         /* "openblas/t1" */
    prepared prep;         /* at load: the blobs of this candidate (into the mapping) */
    prep_blob *prep_store; /* owned array behind prep.blobs */
    char **prep_node;      /* owned, per prep blob: the node it was prepared for */
    bool *prep_bn;         /* owned, per prep blob: its weights list its node's BatchNormalization's */
    const struct artifact_blob **prep_src; /* owned, per prep blob: the artifact's blob */
} plan_choice;

typedef struct plan_module {
    char *name;            /* module path ("" for the whole model) */
    int n_choices;
    plan_choice choices[PLAN_MAX_BUCKETS]; /* one per bucket, in bucket order */
} plan_module;

typedef struct plan_batch_axis {
    int input;             /* model input index */
    int axis;
    int64_t multiple;      /* size = multiple x batch */
} plan_batch_axis;

typedef struct plan_axis {
    int input, axis;       /* model input index, its axis */
} plan_axis;

typedef struct plan {
    int n_buckets;
    plan_key buckets[PLAN_MAX_BUCKETS]; /* ascending by batch, then seq, then past */
    int n_batch_axes;
    plan_batch_axis *batch_axes;
    /* A decoder's: where a run's sequence length is read (input -1: no
     * sequence axis, and every bucket's seq is 0), and the cache inputs' past
     * axes, the first of which gives a run's past length. */
    plan_axis seq;
    int n_past;
    plan_axis *past;
    int n_modules;
    plan_module *mods;
    int n_inputs;          /* the model's, when priming shapes are known, else 0 */
    plan_shape *inputs;    /* bucket k's: inputs[k * n_inputs + i] */
} plan;

void plan_free(plan *p); /* accepts NULL */

/* The index of v's bucket among the n ascending values of list (n > 0):
 * the smallest at or above v, else the largest. */
int plan_pick(const int *list, int n, int64_t v);

/* The bucket of a run from its inputs: its batch from the batch axes (1
 * when the plan knows none), and for a decoder its sequence and past length,
 * each picked by plan_pick among the buckets in that order (the batch
 * bucket first, then the sequence bucket among the batch bucket's, then the
 * past bucket among those). Returns its index. */
int plan_bucket_index(const plan *p, tensor *const *inputs, int n_inputs);

/* The artifact's name for prepared blob `name` of module mi at bucket. */
ait_status plan_blob_name(int mi, plan_key bucket, const char *name, char *out, size_t n,
                          ait_error *e);
/* Orders buckets by batch, then seq, then past (<0, 0, >0). */
int plan_key_cmp(plan_key a, plan_key b);
/* "batch 4" or "batch 1, seq 8, past 16": a bucket in messages. */
const char *plan_key_str(plan_key k, char *buf, size_t n);

/* The node of module graph sub that prepared blob `name` is for (backends
 * name a node's prepared weights "wI...", I its index in the module graph),
 * or NULL when the name says none or I is out of range. */
const node *plan_blob_node(const graph *sub, const char *name);
/* The weights (value ids of g, at most max, the count returned) a prepared
 * blob of node n is bound to: n's constant inputs, then (with_bn) those of
 * each BatchNormalization reading n's first output (a backend may fold it
 * into n's weights: native, onednn). The manifest lists each with its
 * digest; those of a BatchNormalization in n's module graph must be listed
 * (the load checks it against the module, plan_exec.c). */
int plan_blob_weights(const graph *g, const node *n, bool with_bn, int *vals, int max);
/* The hex sha256 of constant t's bytes, into hex[SHA256_HEX]: the digest that
 * binds a prepared blob to the weight it was prepared from. */
void plan_weight_digest(const tensor *t, char *hex);

/* Reads the plan from a parsed manifest; every value a run needs is
 * checked (backend known and available, bucket a power of two, names and
 * blobs present) and a refusal names `what` (the artifact) and the field.
 * The model's inputs give the batch axes' input indices; each choice's
 * prepared blobs are found in artifact a (which must outlive the plan; their
 * bytes are used in place) and bound to their source weights (digests
 * checked against g's data). A blob not read yet (an open with
 * defer_blob_read) is bound by name only: its data comes with
 * plan_bind_blobs once it is read and checked. */
struct artifact;
ait_status plan_parse(const json_val *manifest, const graph *g, struct artifact *a,
                      const char *what, plan **out, ait_error *e);
/* Gives every prepared blob of p its data from the artifact p was parsed
 * with, whose blobs must all be read by now (artifact_blob_read_rest). */
ait_status plan_bind_blobs(plan *p, ait_error *e);


#endif
