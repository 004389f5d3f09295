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
 *                            "blobs": [{"name": "conv1.w", "blob": "p/0/b1/conv1.w"}]}]}],
 *    "tuning": {...},       // the whole `ait tune --json` report (every candidate)
 *    "inspection": {...}}   // `ait inspect --json` of the tuned modules (graph specs)
 * Blobs of prepared state are named "p/MODULE/bBUCKET/NAME" (MODULE the index
 * in "modules", NAME the backend's); a blob with the same bytes as one
 * already saved for the module (the same weights prepared at another
 * bucket) is saved once and listed by each choice that uses it. */
#ifndef AIT_RUNTIME_PLAN_H
#define AIT_RUNTIME_PLAN_H
#include "backends/backend.h"
#include "io/json.h"
#include "io/json_read.h"

#define PLAN_MAX_BUCKETS 16
/* 2: models without scope names are cut into segments of comparable FLOPs;
 * a version-1 plan's "seg.K" modules would name other nodes now. */
#define PLAN_FORMAT_VERSION 2
#define PLAN_MODEL_BLOB "model.onnx" /* the ONNX file, as given to tune */

/* A model input's shape at a bucket (batch axes at the bucket's size,
 * dynamic axes at the largest size seen), for priming at load. */
typedef struct plan_shape {
    ait_dtype dtype;
    int rank;
    int64_t dims[AIT_MAX_RANK];
} plan_shape;

typedef struct plan_choice {
    int bucket;
    candidate_cfg cfg;     /* cfg.backend is the registry's name; cfg.prep set at load */
    char cand[64];         /* "openblas/t1" */
    prepared prep;         /* at load: the blobs of this candidate (into the mapping) */
    prep_blob *prep_store; /* owned array behind prep.blobs */
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

typedef struct plan {
    int n_buckets;
    int buckets[PLAN_MAX_BUCKETS]; /* ascending */
    int n_batch_axes;
    plan_batch_axis *batch_axes;
    int n_modules;
    plan_module *mods;
    int n_inputs;          /* the model's, when priming shapes are known, else 0 */
    plan_shape *inputs;    /* bucket k's: inputs[k * n_inputs + i] */
} plan;

void plan_free(plan *p); /* accepts NULL */

/* The batch of a run from its inputs' batch axes (1 when the plan knows
 * none), and the index of the bucket that serves it: the smallest bucket at
 * or above the batch, else the largest. */
int plan_bucket_index(const plan *p, tensor *const *inputs, int n_inputs);

/* The artifact's name for prepared blob `name` of module mi at bucket. */
ait_status plan_blob_name(int mi, int bucket, const char *name, char *out, size_t n,
                          ait_error *e);

/* Reads the plan from a parsed manifest; every value a run needs is
 * checked (backend known and available, bucket a power of two, names and
 * blobs present) and a refusal names `what` (the artifact) and the field.
 * The model's inputs give the batch axes' input indices; each choice's
 * prepared blobs are found in artifact a (which must outlive the plan; big
 * blobs are moved into memory of their own, artifact_blob_resident). */
struct artifact;
ait_status plan_parse(const json_val *manifest, const graph *g, struct artifact *a,
                      const char *what, plan **out, ait_error *e);


#endif
