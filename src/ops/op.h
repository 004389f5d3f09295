/* The op interface. Every op family (src/ops/<family>.c) exports a table of
 * op_def, registered with one line in src/ops/registry.c.
 *
 * An op has two functions:
 *   infer: sets each output's dtype, rank and dims from the inputs' dtypes
 *          and shapes. An input's data may be NULL (only its shape is known,
 *          at scheduling time); an op whose output shape depends on input
 *          *values* (Reshape's shape, NonZero, Range...) reads them when
 *          present and returns AIT_DEFER when they are not. It also checks
 *          what it can (dtype allowed, ranks compatible, attributes valid)
 *          and fails with a message naming the problem. It must not touch
 *          output data.
 *   run:   computes the outputs. The executor has already called infer with
 *          all input data present and allocated each output to the inferred
 *          shape. The storage holds whatever was there (it is reused run to
 *          run and shared with other values): run writes every element,
 *          unless flagged OP_ZERO_OUTPUTS (it accumulates or leaves
 *          elements untouched), which gets its outputs zeroed. Ops flagged
 *          OP_ALLOCS_OUTPUTS (If) get outputs with no storage and set shape
 *          and storage themselves.
 * Errors: return err_set(c->err, AIT_E_..., "reason") with the reason only:
 * the executor prefixes the file, node name and op type.
 */
#ifndef AIT_OPS_OP_H
#define AIT_OPS_OP_H
#include "core/status.h"
#include "core/tensor.h"
#include "graph/graph.h"

/* Not an error: infer needs input values that are not known yet. */
#define AIT_DEFER ((ait_status)1000)

struct exec;
struct op_host;

typedef struct op_ctx {
    const node *n;
    int n_in, n_out; /* as the node has them */
    tensor **in;     /* in[i] == NULL: optional input omitted */
    tensor **out;    /* out[i] == NULL: optional output omitted */
    int threads;     /* threads the op may use (reference ops use 1) */
    ait_error *err;
    const struct op_host *host; /* what the executor running the node offers */
    struct exec *x;  /* that executor: opaque to ops (the host's functions and ops
                        defined above ops/, such as the plan runner's, use it) */
    const graph *g;  /* the graph the node is in */
} op_ctx;

/* The executor's services to ops, filled in by the executor (exec/exec.c):
 * ops never include it. */
typedef struct op_host {
    /* Runs subgraph `sub` of the current node with inputs[i] bound to
     * sub->inputs[i] (NULL when it has none; values of enclosing graphs are
     * seen by name) and copies its outputs into outs[] (each gets its own
     * storage; outs[j] may be NULL to drop output j). */
    ait_status (*subgraph)(op_ctx *c, const graph *sub, tensor *const *inputs, tensor **outs);
    /* The node's scratch block (op_scratch). */
    void *(*scratch)(op_ctx *c, size_t bytes);
} op_host;

static inline ait_status op_subgraph(op_ctx *c, const graph *sub, tensor *const *inputs,
                                     tensor **outs)
{
    return c->host->subgraph(c, sub, inputs, outs);
}

enum {
    OP_ALLOCS_OUTPUTS = 1, /* run sets output shapes and storage itself */
    OP_READS_SHAPE = 2,    /* output depends only on input shapes (Shape, Size):
                              fold when shapes are known */
    OP_NONDETERMINISTIC = 4, /* random ops: never constant-folded */
    OP_TAKES_SEQUENCES = 8,  /* inputs may be sequences, maps or none (others get tensors only);
                                given one, run sets its outputs itself, as with
                                OP_ALLOCS_OUTPUTS */
    OP_VARIADIC = 16,        /* every input given must be present (Concat, Sum...) */
    OP_LEADING_OPTIONAL = 32, /* inputs below min_in may be omitted (Loop's M and cond) */
    /* String tensors (core/tensor.h) reach only ops with one of these two
     * flags; the executor refuses them, as inputs or outputs, to the others. */
    OP_STR_MOVES = 64, /* moves elements as bytes (memcpy of the pointers): after a
                          successful run the executor gives each string output its
                          own copies (tensor_own_strs), after a failed one it forgets
                          them; the op must not compare or compute on elements */
    OP_STR_OWNS = 128, /* writes strings itself, owned (tensor_set_str, elems_copy,
                          tensor_copy_into) */
    OP_ZERO_OUTPUTS = 256, /* run needs its outputs zeroed (it accumulates into them or
                              writes only some elements); others get stale bytes */
};
/* Which inputs may be omitted with an empty name: by default those at index
 * >= min_in; none with OP_VARIADIC; any with OP_LEADING_OPTIONAL. The loader
 * enforces this, so run sees NULL only where the op allows it. */

typedef struct op_def {
    const char *name;    /* ONNX op_type */
    int min_in, max_in;  /* input count range */
    int min_out, max_out;
    unsigned flags;
    ait_status (*infer)(op_ctx *c);
    ait_status (*run)(op_ctx *c);
    const char *domain; /* NULL: the default ONNX domain */
} op_def;

/* One table row with designated fields (flags and domain left zero). */
#define OP_DEF(nm, in_lo, in_hi, out_lo, out_hi, inf, rn)                                     \
    {.name = nm, .min_in = in_lo, .max_in = in_hi, .min_out = out_lo, .max_out = out_hi,         \
     .infer = inf, .run = rn}

/* A family's table. */
typedef struct op_table {
    const op_def *ops;
    int count;
} op_table;
#define OP_TABLE(family, ...)                                                                \
    static const op_def family##_defs[] = {__VA_ARGS__};                                     \
    const op_table ops_##family = {family##_defs,                                            \
                                   (int)(sizeof family##_defs / sizeof family##_defs[0])}

/* The op named `name` in `domain` ("" and "ai.onnx" name the default), or NULL. */
const op_def *op_find(const char *domain, const char *name);
/* Calls fn for every registered op (for listings and tests). */
void op_foreach(void (*fn)(const op_def *d, void *arg), void *arg);

/* The versions of one op (src/ops/versions.c, from the ONNX Changelog). */
#define OP_MAX_VERSIONS 12
#define OP_VERSION_BASE 21 /* ops implement every version up to this opset's */
typedef struct op_versions {
    const char *domain; /* NULL: the default ONNX domain */
    const char *name;
    int since[OP_MAX_VERSIONS]; /* since_versions, ascending, 0 after the last */
    int upto; /* highest version ait implements; 0: op_version_upto's default */
    int removed; /* the opset that deprecated (removed) the op; 0: none */
} op_versions;
/* The row of op `name` in `domain` ("" and "ai.onnx" name the default), or NULL. */
const op_versions *op_versions_find(const char *domain, const char *name);
/* The version a node of this op runs in a model of `opset` (its domain's): the
 * highest since_version <= opset; 0 when the op is newer than the opset. */
int op_version_resolve(const op_versions *v, int opset);
/* The highest version ait implements: .upto, or by default the version
 * resolved at OP_VERSION_BASE. */
int op_version_upto(const op_versions *v);

/* ---- helpers for op implementations (src/ops/op_util.c) ---------------- */

/* Reads input i, which must be present and hold data, as int64 values
 * (any integer dtype); fails on a float dtype. Sets *count. */
ait_status in_ints(op_ctx *c, int i, int64_t *vals, int max, int *count);
/* True when input i is given (not omitted). */
static inline bool has_in(const op_ctx *c, int i) { return i < c->n_in && c->in[i] != NULL; }
static inline bool has_out(const op_ctx *c, int i) { return i < c->n_out && c->out[i] != NULL; }
/* Normalises an axis in [-rank, rank) to [0, rank); fails with a message. */
ait_status norm_axis(op_ctx *c, int64_t axis, int rank, int *out);
/* Numpy broadcasting of two shapes into out (rank = max). */
ait_status broadcast_shape(op_ctx *c, const tensor *a, const tensor *b, int *rank,
                           int64_t *dims);
/* Fails unless t's dtype is one of the n listed. */
ait_status check_dtype(op_ctx *c, const tensor *t, const char *what, int n, ...);
/* Sets output i to dtype and shape. */
void set_out(op_ctx *c, int i, ait_dtype dt, int rank, const int64_t *dims);
/* Scratch memory for this node that lives until the next run of the node;
 * reused across runs. NULL on failure (message set). A second call reuses
 * the same buffer, so ops carve all their temporaries from one call: */
void *op_scratch(op_ctx *c, size_t bytes);
/* n parts of bytes[i] each, 64-byte aligned, from one op_scratch block
 * (none when all are 0); fails on overflow. A part is never NULL, an empty
 * one (0 bytes) included: an op may offset it by 0 for an empty tensor. */
ait_status op_scratch_parts(op_ctx *c, int n, const size_t *bytes, void **parts);
/* The same for temporaries found as the op goes (einsum): a first pass
 * sizes them (scratch_take returns NULL while base is NULL), scratch_commit
 * allocates and rewinds, and a second pass takes the same sequence. */
typedef struct scratch_layout {
    char *base;
    size_t off;
    bool overflow;
} scratch_layout;
void *scratch_take(scratch_layout *p, int64_t count, size_t esize);
ait_status scratch_commit(op_ctx *c, scratch_layout *p);

/* Data computed in a working dtype wt (float32 or float64): work_bytes is
 * the scratch t needs (0 when t already is wt); work_in sets *data to t's
 * data as wt (t->data, or buf filled with a converted copy); work_out gives
 * where to compute output t (t->data or buf) and work_done converts that
 * back into t. Conversions as convert_elems. */
size_t work_bytes(const tensor *t, ait_dtype wt);
ait_status work_in(op_ctx *c, const tensor *t, ait_dtype wt, void *buf, const void **data);
void *work_out(tensor *t, ait_dtype wt, void *buf);
ait_status work_done(op_ctx *c, tensor *t, const void *w, ait_dtype wt);

/* Fails unless t is float32, float64, float16 or bfloat16. */
ait_status check_float(op_ctx *c, const tensor *t, const char *what);
/* Fails when dtype t (of `what`) is a small type newer than the node's op
 * version (dtype_since_opset: Cast, CastLike, QuantizeLinear and
 * DequantizeLinear gained each in a version of that number). */
ait_status check_dtype_version(op_ctx *c, ait_dtype t, const char *what);
/* Fails unless input i is given, naming it `what`. */
ait_status need_in(op_ctx *c, int i, const char *what);
/* Product of dims[from..to). */
int64_t dims_prod(const int64_t *dims, int from, int to);

/* Integer division rounding toward -inf / +inf (b > 0). */
static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q * b > a ? q - 1 : q;
}
static inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* The auto_pad attribute of convolutions and pools as a PAD_* mode. */
enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };
ait_status auto_pad_attr(op_ctx *c, int *mode);
/* Output size of one spatial axis of a sliding window (Conv, pooling): input
 * size `in`, stride s, dilated kernel extent dk, auto_pad `mode`. With
 * NOTSET, *pb / *pe hold the given pads; with SAME_* they are set (the odd
 * one at the end for SAME_UPPER). ceil_mode rounds up, keeping the last
 * window starting inside the input or its begin padding. Fails with a
 * message naming axis i when the kernel does not fit. */
ait_status window_out(op_ctx *c, int i, int64_t in, int64_t s, int64_t dk, int mode,
                      bool ceil_mode, int64_t *pb, int64_t *pe, int64_t *out);
/* Ints attribute `name` of exactly n values into out (dflt each when
 * absent); fails unless every value lies in [lo, hi]. */
ait_status ints_attr(op_ctx *c, const char *name, int n, int64_t dflt, int64_t lo, int64_t hi,
                     int64_t *out);

/* Looking strings up among n given ones (s[i] NULL reads as ""): strs_order
 * sorts their indices into order[n] by byte order, equal strings by index;
 * strs_find then gives the first (or, with last, the last) index i with
 * s[i] equal to v, or -1. */
void strs_order(char *const *s, int64_t n, int64_t *order);
int64_t strs_find(char *const *s, const int64_t *order, int64_t n, const char *v, bool last);

/* Element strides of a row-major shape, and strides of an input broadcast
 * to `rank` dims (0 along broadcast axes). */
void row_strides(const int64_t *dims, int rank, int64_t *strides);
void bcast_strides(const tensor *t, int rank, const int64_t *dims, int64_t *strides);

#endif
