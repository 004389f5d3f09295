/* The op interface. Every op family (src/ops/<family>.c) exports a table of
 * op_def, registered with one line in src/ops/registry.c.
 *
 * An op has two functions:
 *   infer: sets each output's dtype, rank and dims from the inputs' dtypes
 *          and shapes. An input's data may be NULL (only its shape is known,
 *          at planning time); an op whose output shape depends on input
 *          *values* (Reshape's shape, NonZero, Range...) reads them when
 *          present and returns AIT_DEFER when they are not. It also checks
 *          what it can (dtype allowed, ranks compatible, attributes valid)
 *          and fails with a message naming the problem. It must not touch
 *          output data.
 *   run:   computes the outputs. The executor has already called infer with
 *          all input data present and allocated each output (zeroed) to the
 *          inferred shape. Ops flagged OP_ALLOCS_OUTPUTS (If) get outputs
 *          with no storage and set shape and storage themselves.
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

typedef struct op_ctx {
    const node *n;
    int n_in, n_out; /* as the node has them */
    tensor **in;     /* in[i] == NULL: optional input omitted */
    tensor **out;    /* out[i] == NULL: optional output omitted */
    int opset;       /* the model's default-domain opset */
    int threads;     /* threads the op may use (reference ops use 1) */
    ait_error *err;
    struct exec *x;  /* the executor (subgraphs, scratch) */
    const graph *g;  /* the graph the node is in */
} op_ctx;

enum {
    OP_ALLOCS_OUTPUTS = 1, /* run sets output shapes and storage itself */
    OP_READS_SHAPE = 2,    /* output depends only on input shapes (Shape, Size):
                              fold when shapes are known */
    OP_NONDETERMINISTIC = 4, /* random ops: never constant-folded */
    OP_TAKES_SEQUENCES = 8,  /* inputs may be sequences or none (others get tensors only);
                                given one, run sets its outputs itself, as with
                                OP_ALLOCS_OUTPUTS */
};

typedef struct op_def {
    const char *name;    /* ONNX op_type */
    int min_in, max_in;  /* input count range */
    int min_out, max_out;
    unsigned flags;
    ait_status (*infer)(op_ctx *c);
    ait_status (*run)(op_ctx *c);
    const char *domain; /* NULL: the default ONNX domain */
} op_def;

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
 * reused across runs. NULL on failure (message set). */
void *op_scratch(op_ctx *c, size_t bytes);

/* Element strides of a row-major shape, and strides of an input broadcast
 * to `rank` dims (0 along broadcast axes). */
void row_strides(const int64_t *dims, int rank, int64_t *strides);
void bcast_strides(const tensor *t, int rank, const int64_t *dims, int64_t *strides);

#endif
