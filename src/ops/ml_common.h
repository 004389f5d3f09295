/* What the ai.onnx.ml ops (ml_*.c) share: reading their attributes (float
 * lists or their `_as_tensor` doubles, class labels, enums by name), the
 * [N,F] input convention, and the score post-transforms.
 *
 * Where the spec is vague the ops follow ONNX Runtime (docs/runtime.md says
 * where they do not). Strings: ait has no string tensors yet, so every path
 * that would read or write one (string class labels, string keys/values)
 * is refused with ML_NO_STRINGS; a string path is one branch to add where
 * ml_labels_attr and the LabelEncoder's key/value readers refuse. */
#ifndef AIT_OPS_ML_COMMON_H
#define AIT_OPS_ML_COMMON_H
#include "ops/op.h"

#define ML_DOMAIN ONNX_ML_DOMAIN
#define ML_NO_STRINGS "which ait does not support yet"

/* Post transforms in TreeEnsemble-5's numbering (the string ops map names to it). */
enum { ML_NONE, ML_SOFTMAX, ML_LOGISTIC, ML_SOFTMAX_ZERO, ML_PROBIT };

/* A list of numbers from a float/int list attribute or a tensor attribute. */
typedef struct ml_vec {
    int64_t n;
    const float *f;   /* a floats attribute */
    const int64_t *i; /* an ints attribute */
    const void *t;    /* a tensor attribute's data, of dtype dt */
    ait_dtype dt;
    bool given; /* the attribute is there (perhaps empty) */
} ml_vec;
static inline double ml_at(const ml_vec *v, int64_t k)
{
    if (v->f) return v->f[k];
    if (v->i) return (double)v->i[k];
    if (!v->t) return 0; /* k < n never reaches here with t NULL */
    return elem_get_f64(v->t, v->dt, k);
}

/* Float list `name` or tensor attribute `tname` (NULL: none; a float tensor);
 * both given is an error, neither gives n = 0. */
ait_status ml_floats(op_ctx *c, const char *name, const char *tname, ml_vec *v);
/* Tensor attribute `name` (float or integer); absent: n = 0. */
ait_status ml_tensor(op_ctx *c, const char *name, ml_vec *v);
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

/* Integer class labels from ints attribute `ints` (classlabels_ints or
 * classlabels_int64s); string labels are refused. *n = 0 when neither. */
ait_status ml_labels_attr(op_ctx *c, const char *ints, const int64_t **labels, int64_t *n);

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
