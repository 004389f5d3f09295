/* What the ai.onnx.ml ops (ml_*.c) share: reading their attributes (float
 * lists or their `_as_tensor` doubles, string lists, class labels, enums by
 * name), the [N,F] input convention, a classifier's label output and the
 * score post-transforms.
 *
 * Where the spec is vague the ops follow ONNX Runtime (docs/runtime.md says
 * where they do not). Ops reading or writing string tensors are flagged
 * OP_STR_OWNS and write strings with tensor_set_str only. */
#ifndef AIT_OPS_ML_COMMON_H
#define AIT_OPS_ML_COMMON_H
#include "ops/op.h"

#define ML_DOMAIN ONNX_ML_DOMAIN

/* Post transforms in TreeEnsemble-5's numbering (the string ops map names to it). */
enum { ML_NONE, ML_SOFTMAX, ML_LOGISTIC, ML_SOFTMAX_ZERO, ML_PROBIT };

/* A list of numbers or strings from a list attribute or a tensor attribute. */
typedef struct ml_vec {
    int64_t n;
    const float *f;   /* a floats attribute */
    const int64_t *i; /* an ints attribute */
    const void *t;    /* a numeric tensor attribute's data, of dtype dt */
    char *const *s;   /* a strings attribute or a string tensor's (NULL reads as "") */
    ait_dtype dt;     /* of t; AIT_STRING with s */
    bool given; /* the attribute is there (perhaps empty) */
} ml_vec;
static inline double ml_at(const ml_vec *v, int64_t k)
{
    if (v->f) return v->f[k];
    if (v->i) return (double)v->i[k];
    if (!v->t) return 0; /* k < n never reaches here with t NULL */
    return elem_get_f64(v->t, v->dt, k);
}

static inline const char *ml_str(const ml_vec *v, int64_t k) { return v->s[k] ? v->s[k] : ""; }

/* Float list `name` or tensor attribute `tname` (NULL: none; a float tensor);
 * both given is an error, neither gives n = 0. */
ait_status ml_floats(op_ctx *c, const char *name, const char *tname, ml_vec *v);
/* Tensor attribute `name` (float or integer; or, with strs, string); absent:
 * n = 0. */
ait_status ml_tensor(op_ctx *c, const char *name, ml_vec *v, bool strs);
/* Strings attribute `name` (absent: n = 0). */
ait_status ml_strs(op_ctx *c, const char *name, ml_vec *v);
/* Ints attribute `name` as a vector (absent: n = 0). */
void ml_ints(op_ctx *c, const char *name, ml_vec *v);
/* Fails unless v has n values (`what` names the attribute). */
ait_status ml_len(op_ctx *c, const ml_vec *v, int64_t n, const char *what);

/* The string attribute `name` (default dflt) as the index of one of the n
 * names; fails naming the choices. */
ait_status ml_enum(op_ctx *c, const char *name, const char *dflt, const char *const *names, int n,
                   int *out);
/* post_transform: a string (most ops) or, for TreeEnsemble, an int. */
ait_status ml_post_attr(op_ctx *c, int *post);

/* A classifier's class labels: classlabels_strings, or the ints attribute
 * `ints` (classlabels_ints or classlabels_int64s), one at most (n = 0 when
 * neither). Its label output Y (output 0) is a string tensor for the first,
 * int64 for the second. */
typedef struct ml_labels {
    int64_t n;
    const int64_t *i;
    char *const *s;
    const char *name; /* the attribute they come from, for messages */
} ml_labels;
ait_status ml_labels_attr(op_ctx *c, const char *ints, ml_labels *l);
/* Sets Y as `rows` labels. */
void ml_labels_out(op_ctx *c, const ml_labels *l, int64_t rows);
/* Y[r] = label k. */
ait_status ml_label_put(op_ctx *c, const ml_labels *l, int64_t r, int64_t k);

/* X as [N,F] rows: rank 2, or rank 1 as one row; a numeric dtype (float,
 * double, int64, int32; TreeEnsemble: float, double, float16). */
ait_status ml_rows(op_ctx *c, const tensor *x, int64_t *n, int64_t *f);

/* Applies post transform `post` to the n scores of one row in place, as
 * ONNX Runtime does: n >= 2 transforms them all; one score keeps only
 * PROBIT, or grows into two by `second` (0, 1: [1-s, s]; 2, 3: [-s, s], or
 * logistic(-s), logistic(s) under LOGISTIC; -1: stays one). s holds at
 * least 2. Returns how many scores the row now has. */
int ml_post(double *s, int n, int post, int second);
/* 1 / (1 + exp(-v)), without overflow. */
double ml_logistic(double v);

/* Fills *out with the op's one-output float Y of rows x cols. */
static inline void ml_set_out2(op_ctx *c, int i, ait_dtype dt, int64_t rows, int64_t cols)
{
    int64_t d[2] = {rows, cols};
    set_out(c, i, dt, 2, d);
}

#endif
