/* Backends: ways to run a module. A backend builds a module (a graph of its
 * own, see graph/extract.h) for the shapes it will see into something
 * runnable, and runs it. Backends are data: each file in src/backends/
 * defines one `backend`, listed with one line in registry.c, the way BLIS
 * registers kernels. A backend that cannot run on this machine (missing CPU
 * features or library) says so in `available` and is never offered.
 *
 * At a module's boundary tensors are plain row-major in the model's dtypes;
 * inside, a backend may use any layout. Nodes a backend does not implement
 * run on the reference ops inside the same module.
 *
 * Today's simple backends replace some nodes' ops (e.g. MatMul by a BLAS
 * call) and run the module on the executor; backend_exec_build() does that
 * for them. A backend that fuses or re-lays out (oneDNN) or runs elsewhere
 * (CUDA, later) implements build/run itself. */
#ifndef AIT_BACKENDS_BACKEND_H
#define AIT_BACKENDS_BACKEND_H
#include <string.h>

#include "core/kv.h"
#include "core/log.h"
#include "exec/exec.h"
#include "graph/graph.h"
#include "ops/op.h"

/* What a backend prepared for a built module (packed or reordered weights,
 * the layouts its primitives chose), as named byte blobs. The tuner saves
 * them into the artifact; at load they are handed back to build, which then
 * uses them in place (they live in the read-only mapping, 4096-aligned) and
 * does no packing and no search. */
typedef struct prep_blob {
    char name[64];      /* unique within the built module, e.g. "conv1.w" */
    const void *data;
    size_t size;
} prep_blob;

typedef struct prepared {
    int n;
    const prep_blob *blobs;
} prepared;

struct gemm_tuned; /* kernels/gemm_tuned.h */

/* A value's calibrated float range (tune --quant int8): what a static int8
 * variant fixes its activation scale and zero point from. */
typedef struct act_range {
    char *name; /* the value's name in the model */
    float lo, hi;
} act_range;

typedef struct act_ranges {
    int n;
    act_range *r;
    uint64_t hash; /* of every name and range: part of a candidate's cache key */
} act_ranges;

/* The range of value `name`, or NULL. */
static inline const act_range *act_range_find(const act_ranges *rs, const char *name)
{
    for (int i = 0; rs && name && i < rs->n; i++)
        if (strcmp(rs->r[i].name, name) == 0) return &rs->r[i];
    return NULL;
}
struct gemm_args;  /* kernels/gemm.h */

/* A candidate's configuration: which backend, and how. */
typedef struct candidate_cfg {
    const char *backend; /* "reference", "openblas", ... */
    int threads;         /* 1 or more */
    char variant[32];    /* backend-specific (kernel variant, quantisation); "" default */
    /* At load from an artifact: what save() gave when it was tuned, for build
     * to use instead of preparing anew (a backend checks that each blob still
     * fits, e.g. by size, and refuses with a message if not). NULL: prepare. */
    const prepared *prep;
    /* Where build says what it chose (AIT_LOG_DEBUG), during build only; NULL:
     * nowhere. Set by the tuner for a trial's build; never kept in a plan. */
    const logger *log;
    /* Per-shape GEMM configs (`ait gemm tune`'s, kernels/gemm_tuned.h) for
     * the native backend; NULL: its defaults. Not kept in a plan: native
     * saves the table as a prepared blob, which load hands back. */
    const struct gemm_tuned *gemm;
    /* Called before every GEMM native runs, with its layout, its dtype
     * ("f32", or the quantised kernel's: docs/gemm.md) and the config id it
     * takes ("" for the default): `ait gemm capture`. NULL: none. */
    void (*gemm_seen)(void *user, const struct gemm_args *g, const char *layout, const char *dtype,
                      const char *cfg);
    void *gemm_seen_user;
    /* The activation ranges calibrated on the tuning samples, for a static
     * int8 variant (native's "int8"); NULL: none. Not kept in a plan: the
     * variant saves the scales it took with its weights, which load hands
     * back (the tuning owns the table while it saves). */
    const act_ranges *ranges;
} candidate_cfg;

typedef struct built built; /* a backend's prepared module, opaque */

typedef struct backend {
    const char *name;
    const char *summary;
    /* True when this machine can run it; else a reason in why. NULL: always. */
    bool (*available)(char *why, size_t n);
    /* One line on how it runs here (library, CPU kernels it picked), for
     * summaries and test logs. NULL: nothing to say. */
    void (*describe)(char *buf, size_t n);
    /* The op this backend runs node n with, or NULL to leave it to the
     * reference op (used by backend_exec_build; NULL function: none). */
    const op_def *(*op_for)(const graph *g, const node *n);
    /* Builds module graph `module` (which must outlive the result). */
    ait_status (*build)(const struct backend *b, const graph *module, const candidate_cfg *cfg,
                        built **out, ait_error *e);
    /* Runs it: inputs[i] for module->inputs[i]; outputs[j] receive tensors
     * owned by the built module, valid until its next run. */
    ait_status (*run)(built *bm, tensor *const *inputs, tensor **outputs, ait_error *e);
    /* As run, where dest[j] (non-NULL) is caller memory output j may be
     * written into directly (its storage, no copy after): outputs[j] ==
     * dest[j] when it was. dest[j] overlaps no input and no other output.
     * NULL function: run, and the caller copies. */
    ait_status (*run_into)(built *bm, tensor *const *inputs, tensor *const *dest, tensor **outputs,
                           ait_error *e);
    /* As run_into, with n_kv key/value caches appended in place (core/kv.h,
     * ports the module's): inputs[kv[k].in] is a view (its data the cache,
     * strided with capacity kv[k].cap along kv[k].axis) and dest[kv[k].out]
     * a view on the same buffer, the present to be written there in that
     * layout, taking the present's shape. A backend that cannot append one
     * in place at this shape copies (past out, present back) and gives the
     * same results (and sets that kv[k].copied); a present longer than the capacity fails (AIT_E_SHAPE)
     * before it is written. NULL function: the plan runner never hands a
     * view to the backend (the binding copies). */
    ait_status (*run_kv)(built *bm, tensor *const *inputs, tensor *const *dest, kv_view *kv,
                         int n_kv, tensor **outputs, ait_error *e);
    void (*free)(built *bm);
    /* What bm prepared, to be saved in the artifact: out->blobs point into bm
     * and stay valid until free. NULL function, or n 0: nothing to save. */
    ait_status (*save)(const built *bm, prepared *out, ait_error *e);
    /* The variants (candidate_cfg.variant) worth trying on this module
     * besides the default "", each a candidate of its own: writes up to max
     * static names into out and returns how many. NULL: none. build refuses a
     * variant it does not know, naming it. */
    int (*variants)(const graph *module, const char **out, int max);
    /* The CPU features (core/cpu.h names, comma-separated) that what build
     * prepares on this machine assumes (kernels and the weight layouts they
     * chose), into buf[n]: an artifact using this backend needs them. NULL
     * function: none (it prepares nothing machine-specific). */
    void (*cpu_needs)(char *buf, size_t n);
    /* The quantised or low-precision variants build accepts for this
     * module (e.g. "bf16", "int8dq"), tried only when the user asks for
     * them (tune --quant): writes up to max static names into out and
     * returns how many. NULL: none. */
    int (*quant_variants)(const graph *module, const char **out, int max);
    /* A variant's own tolerance: the SQNR in dB its module outputs must
     * reach against the reference, judged instead of the outputs' float
     * tolerance; 0 for a variant that keeps the float tolerance. NULL: 0. */
    double (*min_sqnr)(const char *variant);
    /* Whether bm no longer reads constant `value` of `module` (a weight its
     * prepared blobs replace): neither its runs (at any shape) nor another
     * build of the same module with the same cfg read the data, only the
     * shape and dtype. Asked as soon as bm is built, before any run: a node
     * with a prepared blob (backend_prep_has_node) takes it at every
     * schedule or that schedule fails, so the answer needs no run. The
     * loader then frees the model's copy (plan_exec.h,
     * plan_exec_create_releasing). NULL: every constant is kept. */
    bool (*releases)(const built *bm, const graph *module, int value);
    /* The bytes bm holds for its values (intermediates, outputs) as of its
     * last schedule, counted with the executor's arena in
     * ait_session_memory's intermediates (plan_exec_arena_bytes). NULL:
     * not counted (the backend keeps its own). */
    size_t (*value_bytes)(const built *bm);
    /* Adds bm's schedules to *acc (exec/exec.h's sched_stats: its modules
     * scheduled from scratch or kept at new dims, its executors'), for
     * tests. NULL: none counted. */
    void (*sched_stats)(const built *bm, sched_stats *acc);
} backend;

/* The registry (registry.c, one line per backend). backend_find gives
 * NULL for a name it does not know. */
const backend *backend_find(const char *name);
int backend_count(void);
const backend *backend_at(int i);
/* How many of the module's nodes backend b implements itself (not counting
 * those left to the reference ops): op_for's non-NULL answers; the
 * reference backend answers every node with its own op. */
int backend_coverage(const backend *b, const graph *module);
/* Whether input k of node n is the weights of an ONNX Conv, MatMul or Gemm
 * (input 1): what a prepared blob "wI." replaces. */
bool backend_gemm_weights(const node *n, int k);
/* The rule `releases` implementations share: value v of module is read only
 * as the weights (input 1) of ONNX Conv, MatMul or Gemm nodes, at least one,
 * and from_blob(bm, node) says each such node's build took them from a
 * prepared blob. */
bool backend_weights_from_blobs(const built *bm, const graph *module, int v,
                                bool (*from_blob)(const built *bm, int node));
/* Whether prep (NULL: none) holds prepared weights of node `node` of the
 * module: a blob named "w<node>." and more, as native and oneDNN name them. */
bool backend_prep_has_node(const prepared *prep, int node);

/* Checks a run's inputs against g's: each present, a tensor with data, of
 * the declared dtype; the message names the backend who and the input. */
ait_status backend_inputs_check(const graph *g, tensor *const *inputs, const char *who, ait_error *e);
/* The variants to try b in on module: the default "" first, then those b
 * offers (backend.variants); up to max names into out; returns how many. */
int backend_variants(const backend *b, const graph *module, const char **out, int max);

/* For op-replacing backends: build = an executor over the module in which
 * each node runs b->op_for(node) when it gives one, with cfg->threads as
 * the ops' thread count (op_ctx.threads). The module must outlive the
 * result; free accepts NULL. Run errors name the backend, the module's
 * node and the reason. */
ait_status backend_exec_build(const backend *b, const graph *module, const candidate_cfg *cfg,
                              built **out, ait_error *e);
ait_status backend_exec_run(built *bm, tensor *const *inputs, tensor **outputs, ait_error *e);
void backend_exec_free(built *bm);

#endif
