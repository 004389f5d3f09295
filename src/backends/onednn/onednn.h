/* The onednn backend's private parts, shared by onednn.c (the vtable, build,
 * run, schedules), bookkeeping.c (errors, owned buffers, memories and steps,
 * values, prepared weights), ops.c (one primitive per op)
 * and fuse.c (post-op chains, BatchNormalization folding).
 *
 * A built module is a list of steps made once per input-shape signature (at
 * build when the module's input shapes are static, else at the first run
 * and again whenever the shapes change): oneDNN primitives with their
 * arguments bound, reorders between layouts, and nodes left to the
 * reference ops. Each value of the module has a native memory (the layout
 * the primitive that made it chose, blocked for Conv) and, when a reference
 * op, a module output or a primitive needing plain data reads it, a plain
 * row-major copy made by a reorder step right after it is computed. */
#ifndef AIT_BACKENDS_ONEDNN_H
#define AIT_BACKENDS_ONEDNN_H
#include <dnnl.h>

#include "backends/backend.h"
#include "exec/exec.h"

#define DN_MAX_POST 4 /* post-ops fused into one primitive */

typedef struct dn_step {
    int node;              /* the node it computes (for messages), -1 for a reorder */
    dnnl_primitive_t prim; /* NULL: node runs on its reference op */
    dnnl_exec_arg_t *args;
    int n_args;
    char impl[64]; /* "kind:implementation" oneDNN chose for prim (dn_impls) */
    /* prim NULL and kern set: one of ait's kernels runs the node (kern.c),
     * reading value kin's plain tensor and writing kout's, with its
     * geometry and weights in karg (owned by the schedule) */
    ait_status (*kern)(built *bm, const struct dn_step *s);
    const void *karg;
    int kin, kout;
} dn_step;

typedef struct dn_val {
    const tensor *spec;       /* its shape (and data for constants) as the executor scheduled it */
    tensor t;             /* plain storage owned here */
    tensor *plain;        /* the plain tensor when it exists (input, constant, &t) */
    dnnl_memory_t mem;    /* the native memory, or NULL */
    dnnl_memory_t pmem;   /* a plain memory over plain->data, or NULL */
    dnnl_memory_t alt;    /* the last copy reordered into another layout, or NULL */
    bool fused;           /* an intermediate a primitive's post-ops swallowed */
    bool done;            /* computed by the steps so far (scheduling) */
    int uses;             /* live consumer nodes, plus one for a module output */
} dn_val;

/* A memory over a module input's data: its handle is set at each run. */
typedef struct dn_bind {
    dnnl_memory_t mem;
    int input; /* index into the module's inputs */
    size_t offset;
} dn_bind;

/* The steps for one input-shape signature, with everything they own. */
typedef struct dn_sched {
    exec *x; /* scheduling (shapes, folding) and the reference ops, for this schedule */
    bool scheduled;
    int64_t *sig; /* the input shapes it is for */
    dn_val *vals;
    dn_step *steps;
    int n_steps, cap_steps;
    dn_bind *binds;
    int n_binds, cap_binds;
    dnnl_memory_t *mems; /* every memory made here, destroyed at free */
    int n_mems, cap_mems;
    void **bufs; /* every buffer allocated here (aligned_free) */
    int n_bufs, cap_bufs;
    /* The buffers of dn_mem_out, not zeroed yet: bufs[fresh[j]], of
     * fresh_bytes[j] bytes (dn_zero_fresh). */
    int *fresh;
    size_t *fresh_bytes;
    int n_fresh, cap_fresh;
    prep_blob *blobs; /* the weights it prepared */
    int n_blobs, cap_blobs;
    int n_refused; /* forms not taken: oneDNN had only a reference implementation */
} dn_sched;

#define DN_MAX_SCHEDS 8 /* signatures kept (batch buckets); the oldest goes first */

struct built {
    const graph *g;
    int threads;
    const prepared *prep; /* from cfg: prepared weights to use in place */
    bool blocked;         /* variant "blocked": see dn_conv_blocked */
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dn_sched schedules[DN_MAX_SCHEDS];
    int n_scheds, next; /* next: the slot a new signature replaces when full */
    dn_sched *p;        /* the schedule being made or run */
    prep_blob *saved;  /* every schedule's blobs, once by name, for save() */
    int n_saved;
    const logger *log;  /* cfg's, during build: what it chose, at AIT_LOG_DEBUG */
    ait_error *err;     /* where errors go: the caller's, or own_err */
    ait_error own_err;  /* for callers that pass no ait_error */
};

/* A post-op: an element-wise function, a binary op with another value
 * (constant or computed earlier), or the sum with another value. */
enum { DN_PO_ELT, DN_PO_BIN, DN_PO_SUM };
typedef struct dn_post {
    int node; /* the node it swallows */
    int kind;
    dnnl_alg_kind_t alg;
    float a, b;
    int other; /* value id of the other operand (BIN, SUM) */
    int out;   /* the node's output */
    int swallow[4]; /* values inside a pattern (GELU's Div, Erf, Add, Mul) */
    int n_swallow;
} dn_post;

typedef struct dn_chain {
    int n;
    dn_post p[DN_MAX_POST];
} dn_chain;

/* ---- bookkeeping.c ------------------------------------------------------------ */

/* dnnl_status_t check: on failure sets bm->err naming node i and what. */
ait_status dn_check(built *bm, int i, dnnl_status_t s, const char *what);
/* Error naming node i. */
ait_status dn_fail(built *bm, int i, ait_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A plain row-major md of rank dims (rank 0 is taken as [1]). */
void dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims);
/* v's plain memory with md (a view of its plain data, made plain by a
 * reorder step first when needed); NULL on error. */
dnnl_memory_t dn_view(built *bm, int v, const dnnl_memory_desc_t *md);
/* Makes v's plain tensor exist: a reorder step from its native memory. */
ait_status dn_ensure_plain(built *bm, int v);
/* v's plain memory with its own shape. */
dnnl_memory_t dn_plain(built *bm, int v);
/* v as memory of layout md: its native memory when it fits, else a reorder
 * step into a new memory. md NULL: the native memory, whatever it is. */
dnnl_memory_t dn_as(built *bm, int v, const dnnl_memory_desc_t *md);
/* A new memory of md (allocated here, zeroed, when data is NULL). */
dnnl_memory_t dn_mem_new(built *bm, const dnnl_memory_desc_t *md, void *data);
/* A new memory of md that only the steps write, at run time (a primitive's
 * dst, a reorder's copy of a value): its buffer is allocated untouched and
 * zeroed by dn_zero_fresh once the schedule's buffers are shared
 * (onednn.c, sched_share), so the buffers given up for another's never
 * take resident memory (mobilenetv2: 17 MB at the first schedule). */
dnnl_memory_t dn_mem_out(built *bm, const dnnl_memory_desc_t *md);
/* Zeroes the buffers dn_mem_out made that sched_share kept. */
void dn_zero_fresh(built *bm);
/* Appends a step (args copied); a reorder between two memories. */
ait_status dn_step_add(built *bm, int node, dnnl_primitive_t prim, const dnnl_exec_arg_t *args,
                       int n_args);
ait_status dn_reorder(built *bm, int node, dnnl_memory_t from, dnnl_memory_t to);
/* Makes the primitive of pd and appends it as a step of node i. */
ait_status dn_prim(built *bm, int i, dnnl_primitive_desc_t pd, const dnnl_exec_arg_t *args,
                   int n_args);
/* An aligned zeroed buffer owned by bm. */
void *dn_alloc(built *bm, size_t bytes);
/* Weights for node i in the layout `want`: from the prepared blobs when
 * given (checked by name and size), else reordered from the plain src (a
 * memory over the model's weights) and recorded as a blob for save(). */
dnnl_memory_t dn_weights(built *bm, int i, const dnnl_memory_desc_t *want, dnnl_memory_t src);
/* Value v's scheduled tensor, when its shape is known (dtype set). */
const tensor *dn_shape(const built *bm, int v);
/* Whether v is a constant: one with data, or one of the model whose data the
 * loader freed once the prepared blobs replaced it (dn_releases): the same
 * decisions (weights layout, BatchNormalization fold) as when it had data. */
bool dn_is_const(const built *bm, int v);
/* A constant whose data was freed: only a prepared blob stands for it. */
bool dn_is_freed(const built *bm, int v);

/* Counts a primitive form not taken because oneDNN would run it on a
 * reference implementation (for the schedule's DEBUG line). */
void dn_refused(built *bm);

/* ---- fuse.c ------------------------------------------------------------------- */

/* The one live node reading v (v has exactly one use and is no output), or -1. */
int dn_only_consumer(const built *bm, int v);

/* The post-ops that can follow value v (the anchor's output): each next
 * node the only consumer of the value before it. allow_sum: the anchor
 * takes a sum post-op (its dst can be pre-filled). */
void dn_chain_match(const built *bm, int anchor, int v, bool allow_sum, dn_chain *c);
/* A primitive desc for op desc `desc` with as many of c's post-ops as it
 * takes (all, else one fewer, down to none): *np says how many. pre_md /
 * pre_mem: a binary add to put before them (Gemm's C), or NULL. scale: an
 * output scale (Gemm's alpha), or NULL. The binary post-ops' arguments are
 * appended to args (*n_args grown); *sum_from gets the value to pre-fill dst
 * with (-1: none). The post-ops' dims are full_dims (full_rank, the values'
 * shape); a primitive of lower rank prim_rank (MatMul on [batch*M, K])
 * sees them with the leading dims merged. *pd NULL: not even without
 * post-ops (the node is left to the reference op). */
ait_status dn_pd_posts(built *bm, int anchor, const void *desc, const dn_chain *c, int full_rank,
                       const int64_t *full_dims, int prim_rank, const dnnl_memory_desc_t *pre_md,
                       dnnl_memory_t pre_mem, const float *scale, dnnl_primitive_desc_t *pd,
                       dnnl_exec_arg_t *args, int *n_args, int *np, int *sum_from);
/* pd's implementation name as oneDNN says it ("?" when it does not). */
const char *dn_impl(const_dnnl_primitive_desc_t pd);
/* Whether it is one of oneDNN's reference (unoptimised) implementations. */
bool dn_is_ref(const_dnnl_primitive_desc_t pd);
/* An eltwise op's oneDNN algorithm and parameters, when node i is one. */
bool dn_eltwise(const built *bm, int i, dnnl_alg_kind_t *alg, float *a, float *b);
/* Node i is Add, Sub, Mul or Div of a value and a constant scalar (one
 * element, not growing the value's rank; Div by it only): oneDNN's linear
 * a * x + b over *in (an eltwise primitive or post-op, which has optimised
 * kernels on every layout, where a binary op with a broadcast scalar on a
 * blocked layout runs on a reference implementation). */
bool dn_scalar_linear(const built *bm, int i, int *in, float *a, float *b);
/* The node after Conv node i whose output it is the only consumer of, when
 * it is an inference BatchNormalization with constant parameters: its
 * index, else -1. */
int dn_bn_after(const built *bm, int i);
/* Folds BN node b into conv weights w (rank-4 ONNX layout [O, ...]) and bias
 * (O floats; in: the conv's bias or zeros). w NULL: the bias only. */
ait_status dn_bn_fold(built *bm, int b, float *w, int64_t per_o, float *bias, int64_t o);

/* ---- ops.c ------------------------------------------------------------------ */

/* Tries to build node i (and the post-ops after it) as primitives: AIT_OK
 * with *taken true when done; *taken false to leave it to the reference
 * op (shape, dtype or attributes it does not handle). Errors are real. */
ait_status dn_node(built *bm, int i, bool *taken);
/* True when node n's op type is one this backend builds. */
bool dn_op_known(const node *n);

/* ---- kern.c ----------------------------------------------------------------- */

/* Resize and ConvTranspose on ait's kernels (kern.c), as dn_node's builds. */
ait_status dn_kresize(built *bm, int i, bool *taken);
ait_status dn_kconvt(built *bm, int i, bool *taken);
/* Variant "blocked": whether a Conv whose input has this shape asks oneDNN
 * for the nChw16c layout (2-D, 16 or more input channels) instead of
 * letting it choose (it chooses channels-last and its brgemm kernels; with
 * nChw16c it takes its jit 1x1 and depthwise ones, which run MobileNetV2
 * faster at batch 8 on AVX-512). The tuner tries both. */
bool dn_conv_blocked(int rank, const int64_t *dims);

#endif
