/* Fusion passes: patterns found in a graph and recorded, not rewritten.
 *
 * fuse_find reads a graph and returns a fusion_set: per fusion, the nodes it
 * absorbs and a descriptor of what they compute together. The graph is left
 * as it is (valid ONNX-semantics IR), so a backend that ignores the set runs
 * it unchanged, and one that uses a fusion runs its nodes as one operation
 * placed where its LAST node stands (every operand, a residual included, is
 * computed by then; no value inside it is read outside it).
 *
 * Kinds:
 * - FK_EPILOGUE: a producer (Conv, ConvTranspose, MatMul, Gemm) and what
 *   follows it: steps applied to its output in the same pass (a folded
 *   BatchNormalization as a per-channel multiply and add, a bias, Add/Mul/
 *   Sub/Div by a scalar or per-channel constant, activations, a residual Add
 *   of a tensor of the output's shape, a final scale);
 * - FK_CHAIN: a run of element-wise nodes over one tensor (with scalar,
 *   per-channel or same-shape operands, or the chain's input again), as one
 *   pass over memory;
 * - FK_LAYERNORM: LayerNormalization written out (ReduceMean, Sub, Pow,
 *   ReduceMean, Add eps, Sqrt, Div, Mul scale, Add bias) over the last axis;
 *   with rms set, RMSNorm written out (Pow 2 or x * x, ReduceMean, Add eps,
 *   Sqrt, then Div of x, or Reciprocal or Div of 1 and a Mul by x; Mul
 *   scale, Add bias), as Llama's exports write x * rsqrt(mean(x^2) + eps) * w;
 * - FK_ATTENTION: softmax(Q K^T * scale + mask) V written out: MatMul, Div
 *   or Mul by a scalar (or on Q and K^T apart), an optional Where with a
 *   boolean mask and a scalar fill, an optional Add of a float mask,
 *   Softmax over the last axis, MatMul; each operand read where it lies
 *   (fuse_view): through the Transposes and Reshapes that split heads, a
 *   Concat of past and current keys or values along the sequence axis, and
 *   the repeat of grouped kv heads (Unsqueeze, Expand, Reshape); the output
 *   through the Transpose and Reshape that merge heads again;
 * - FK_ROTARY: the rotary position embedding written out, as Llama's exports
 *   write it: Add(Mul(x, cos), Mul(Concat(Neg(Slice(x, h:)), Slice(x, :h)),
 *   sin)) over the last axis (d even, h = d / 2; each Mul and the Add either
 *   way round), the Slices' starts and ends known (constants, or values the
 *   shapes given carry); cos and sin [.., s, d] with every axis before s of
 *   1, s x's axis rank - 2 (so the angles repeat over the heads and batch).
 *
 * Steps (fuse_step) have the layout of the element-wise kernel's program
 * (kernels/eltwise.h: fuse_op, fuse_src and the first FF_ functions are in
 * kew_op's, kew_src's and kfun's order), so a backend copies them over; the
 * functions past FF_LEAKY_RELU are ones that kernel does not have yet.
 * Compound activations exporters write out (x * sigmoid(x), the HardSwish and
 * HardSigmoid forms, GELU's erf and tanh forms, x * tanh(softplus(x))) are
 * found and become one FO_FUN step.
 *
 * What is fused: float32 values only (a chain's input must be known to be
 * float32: from the shapes given, or declared); an intermediate value is absorbed only
 * when every reader is inside the fusion and it is no graph output; a
 * per-channel constant must vary along the channel axis only (Conv family:
 * axis 1, so shape [C,1,..,1] or [1,C,1,..,1]; MatMul and Gemm: the last
 * axis, [C] or [1,..,C]) and have C elements; a same-shape operand needs
 * both shapes known and equal (fuse_find's shapes, else the declared ones). */
#ifndef AIT_GRAPH_FUSE_H
#define AIT_GRAPH_FUSE_H
#include "graph/graph.h"

/* Element functions f(v; a, b). The first twelve are kfun's, in its order. */
typedef enum fuse_fn {
    FF_NONE,        /* identity */
    FF_RELU,
    FF_CLIP,        /* min(max(v, a), b): relu6 is a = 0, b = 6 */
    FF_SIGMOID,
    FF_TANH,
    FF_EXP,
    FF_HARDSIGMOID, /* max(0, min(1, a v + b)) */
    FF_HARDSWISH,   /* v * max(0, min(1, v / 6 + 1 / 2)) */
    FF_SILU,        /* v * sigmoid(v) */
    FF_GELU_ERF,
    FF_GELU_TANH,
    FF_LEAKY_RELU,  /* v < 0 ? a v : v */
    FF_ELU,         /* v < 0 ? a (exp(v) - 1) : v */
    FF_SOFTPLUS,    /* log(1 + exp(v)) */
    FF_MISH,        /* v * tanh(softplus(v)) */
    FF_N
} fuse_fn;

/* kew_op's order. */
typedef enum fuse_op {
    FO_ADD,  /* v + o */
    FO_SUB,  /* v - o */
    FO_RSUB, /* o - v */
    FO_MUL,
    FO_DIV,  /* v / o */
    FO_RDIV, /* o / v */
    FO_MAX,
    FO_MIN,
    FO_FUN   /* f(v; a, b) */
} fuse_op;

/* kew_src's order: where o comes from. */
typedef enum fuse_src {
    FS_SCALAR,  /* o = a */
    FS_CHANNEL, /* o = p[c], c the index along the fusion's channel axis */
    FS_TENSOR,  /* o = value v's element i (same shape as the output) */
    FS_INPUT    /* o = the fusion's input's element i */
} fuse_src;

typedef struct fuse_step {
    fuse_op op;
    fuse_src src;
    fuse_fn f;   /* FO_FUN */
    float a, b;  /* the scalar, or f's parameters */
    float *p;    /* FS_CHANNEL: np values, owned (a BatchNormalization's
                    folded scale or shift, or the constant's copy) */
    int64_t np;
    int v;       /* FS_TENSOR: value id (a residual); else -1 */
} fuse_step;

#define FUSE_MAX_STEPS 16 /* KEW_MAX_STEPS */
#define FUSE_MAX_NODES 64

/* An epilogue in the fixed order GEMM and convolution kernels take:
 * y = post * act2(act1(y * scale[c] + shift[c]) + residual), each part
 * optional. Made from the steps when they fit (BatchNormalization, biases
 * and per-channel or scalar Mul/Add/Sub/Div fold into scale and shift). */
typedef struct fuse_fixed {
    bool ok;              /* the steps fit this form */
    float *scale, *shift; /* the fusion's channels values each (owned), or
                             NULL when there is no linear part */
    fuse_step act1, act2; /* FO_FUN steps, f = FF_NONE when absent */
    int residual;         /* value id, or -1 */
    float post;           /* 1 when absent */
} fuse_fixed;

/* An attention operand read where it lies: value v's buffer, row-major with
 * the dims of value lay (v itself, or the output of Reshapes the fusion
 * absorbed), seen through a transpose: the operand's dim i is lay's dim
 * perm[i] (identity: none). The output's view says where the fusion writes
 * attention element (.., i, e) in its output value. */
typedef struct fuse_view {
    int v, lay;
    int rank;
    int perm[AIT_MAX_RANK];
} fuse_view;

/* FK_ATTENTION over operands of rank 3 or 4 (heads on axis rank - 3):
 * out = softmax(where(bmask == bkeep, q k^T * scale, fill) + mask) v, q
 * [.., sq, d], keys [.., t, d] = concat(kp, k) along axis rank - 2 (kp.v
 * -1: k alone), values [.., t, dv] likewise; kv_rep > 1: the keys and values
 * hold 1/kv_rep of q's heads, each serving kv_rep consecutive query heads;
 * mask, bmask -1 when absent. */
typedef struct fuse_attn {
    fuse_view q, k, kp, v, vp, y;
    int kv_rep;
    int mask, bmask, bkeep;
    float scale, fill;
} fuse_attn;

typedef enum fuse_kind { FK_EPILOGUE, FK_CHAIN, FK_LAYERNORM, FK_ATTENTION, FK_ROTARY, FK_N } fuse_kind;

typedef struct fusion {
    fuse_kind kind;
    int node;     /* FK_EPILOGUE: the producer; else the first absorbed node */
    int last;     /* the last absorbed node (where it runs) */
    int in;       /* the value the steps start from: the producer's output,
                     the chain's input, LayerNorm's x */
    int out;      /* the value the fusion computes */
    int n_nodes;  /* absorbed nodes in graph order (an epilogue's producer
                     not among them) */
    int *nodes;
    /* FK_EPILOGUE, FK_CHAIN: y = steps applied in order to in. */
    int n_steps;
    fuse_step steps[FUSE_MAX_STEPS];
    int axis;          /* channel axis of FS_CHANNEL steps: >= 0 from the
                          front, -1 the last; channels its extent */
    int64_t channels;
    fuse_fixed fixed;  /* FK_EPILOGUE */
    /* FK_LAYERNORM: over the last axis; scale and bias value ids or -1;
       rms: no mean taken out (x / sqrt(mean(x^2) + eps)). */
    int ln_scale, ln_bias;
    float eps;
    bool rms;
    fuse_attn att; /* FK_ATTENTION */
    int rot_cos, rot_sin; /* FK_ROTARY: the angles' value ids (in: x) */
} fusion;

typedef struct fusion_set {
    int n;
    fusion *f;
    int *of_node; /* per node: the fusion that absorbs it (its producer
                     too), or -1 */
} fusion_set;

/* Value shapes for the checks: returns value v's tensor (dtype and dims
 * read; data unused) or NULL when unknown. exec_scheduled fits. */
typedef const tensor *(*fuse_shape_fn)(void *ctx, int v);

/* Finds every pattern in g's top-level nodes (attention, LayerNorm and the rotary
 * embedding first, then epilogues, then chains; a node joins one fusion at most).
 * shape may be NULL (declared shapes only: fewer per-channel and residual
 * matches). The caller frees the set. */
ait_status fuse_find(const graph *g, fuse_shape_fn shape, void *ctx, fusion_set **out,
                     ait_error *e);
void fusion_set_free(fusion_set *s);
/* How many fusions of kind k the set holds. */
int fuse_count(const fusion_set *s, fuse_kind k);
/* "epilogue", "chain", "layernorm", "attention", "rotary". */
const char *fuse_kind_name(fuse_kind k);
const char *fuse_fn_name(fuse_fn f);

/* Reference semantics (plain loops, for tests and for backends without a
 * kernel): f(v; a, b). */
float fuse_fn_apply(fuse_fn f, float a, float b, float v);
/* Computes fusion f's output into out (shaped and allocated here) from the
 * values it reads: vals[v] is value v's tensor (float32): the epilogue's
 * producer output, the chain's input, residuals, LayerNorm's, the rotary's and
 * attention's inputs (and, for attention's views, their lay values, whose
 * dims are read). */
ait_status fuse_eval(const fusion *f, const graph *g, const tensor *const *vals, tensor *out,
                     ait_error *e);
/* The same through an epilogue's fixed form (f->fixed.ok). */
ait_status fuse_eval_fixed(const fusion *f, const tensor *const *vals, tensor *out, ait_error *e);

#endif
