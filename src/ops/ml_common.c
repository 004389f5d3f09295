/* Attribute readers and post transforms of the ai.onnx.ml ops (ml_common.h). */
#include "ops/ml_common.h"

#include <math.h>
#include <string.h>

ait_status ml_floats(op_ctx *c, const char *name, const char *tname, ml_vec *v)
{
    memset(v, 0, sizeof *v);
    const attr *a = node_attr(c->n, name);
    const attr *t = tname ? node_attr(c->n, tname) : NULL;
    if (a && t)
        return err_set(c->err, AIT_E_INVALID_ARG, "attributes '%s' and '%s' are both given; "
                       "one at most", name, tname);
    if (a) {
        if (a->type != ATTR_FLOATS)
            return err_set(c->err, AIT_E_INVALID_ARG, "attribute '%s' must be a list of floats",
                           name);
        v->n = a->n;
        v->f = a->floats;
        v->given = true;
        return AIT_OK;
    }
    if (!t) return AIT_OK;
    TRY(ml_tensor(c, tname, v, false));
    if (!dtype_is_float(v->dt))
        return err_set(c->err, AIT_E_DTYPE, "attribute '%s' must be a float tensor, not %s", tname,
                       ait_dtype_name(v->dt));
    return AIT_OK;
}

ait_status ml_tensor(op_ctx *c, const char *name, ml_vec *v, bool strs)
{
    memset(v, 0, sizeof *v);
    const attr *a = node_attr(c->n, name);
    if (!a) return AIT_OK;
    if (a->type != ATTR_TENSOR || !a->t)
        return err_set(c->err, AIT_E_INVALID_ARG, "attribute '%s' must be a tensor", name);
    v->n = tensor_numel(a->t);
    v->dt = a->t->dtype;
    v->given = true;
    if (a->t->dtype == AIT_STRING) {
        if (!strs)
            return err_set(c->err, AIT_E_DTYPE, "attribute '%s' holds strings; numbers expected",
                           name);
        v->s = a->t->data;
        return AIT_OK;
    }
    if (!dtype_is_float(a->t->dtype) && !dtype_is_int(a->t->dtype))
        return err_set(c->err, AIT_E_DTYPE, "attribute '%s' has unsupported dtype %s", name,
                       ait_dtype_name(a->t->dtype));
    v->t = a->t->data;
    return AIT_OK;
}

ait_status ml_strs(op_ctx *c, const char *name, ml_vec *v)
{
    memset(v, 0, sizeof *v);
    const attr *a = node_attr(c->n, name);
    if (!a) return AIT_OK;
    if (a->type != ATTR_STRINGS)
        return err_set(c->err, AIT_E_INVALID_ARG, "attribute '%s' must be a list of strings", name);
    v->n = a->n;
    v->s = a->strings;
    v->dt = AIT_STRING;
    v->given = true;
    return AIT_OK;
}

void ml_ints(op_ctx *c, const char *name, ml_vec *v)
{
    memset(v, 0, sizeof *v);
    const attr *a = node_attr(c->n, name);
    int n = 0;
    v->i = attr_ints(c->n, name, &n);
    v->n = v->i ? n : 0;
    v->given = a != NULL;
}

ait_status ml_len(op_ctx *c, const ml_vec *v, int64_t n, const char *what)
{
    if (v->n != n)
        return err_set(c->err, AIT_E_INVALID_ARG, "attribute '%s' has %lld values; %lld expected",
                       what, (long long)v->n, (long long)n);
    return AIT_OK;
}

ait_status ml_enum(op_ctx *c, const char *name, const char *dflt, const char *const *names, int n,
                   int *out)
{
    const char *s = attr_str(c->n, name, dflt);
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return AIT_OK;
        }
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    return err_set(c->err, AIT_E_INVALID_ARG, "%s '%s' is not one of %s", name, s, list);
}

ait_status ml_post_attr(op_ctx *c, int *post)
{
    static const char *const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
    const attr *a = node_attr(c->n, "post_transform");
    if (a && a->type == ATTR_INT) {
        if (a->i < 0 || a->i > ML_PROBIT)
            return err_set(c->err, AIT_E_INVALID_ARG, "post_transform %lld is not one of 0 (NONE), "
                           "1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO), 4 (PROBIT)",
                           (long long)a->i);
        *post = (int)a->i;
        return AIT_OK;
    }
    return ml_enum(c, "post_transform", "NONE", names, 5, post);
}

ait_status ml_labels_attr(op_ctx *c, const char *ints, ml_labels *l)
{
    memset(l, 0, sizeof *l);
    ml_vec s;
    TRY(ml_strs(c, "classlabels_strings", &s));
    int k = 0;
    l->i = attr_ints(c->n, ints, &k);
    if (s.given && node_attr(c->n, ints))
        return err_set(c->err, AIT_E_INVALID_ARG, "attributes 'classlabels_strings' and '%s' are "
                       "both given; one at most", ints);
    l->n = s.given ? s.n : l->i ? k : 0;
    l->s = s.s;
    l->name = s.given ? "classlabels_strings" : ints;
    return AIT_OK;
}

void ml_labels_out(op_ctx *c, const ml_labels *l, int64_t rows)
{
    set_out(c, 0, l->s ? AIT_STRING : AIT_I64, 1, &rows);
}

ait_status ml_label_put(op_ctx *c, const ml_labels *l, int64_t r, int64_t k)
{
    if (!l->s) {
        ((int64_t *)c->out[0]->data)[r] = l->i[k];
        return AIT_OK;
    }
    const char *v = l->s[k] ? l->s[k] : "";
    return tensor_set_str(c->out[0], r, v, strlen(v), c->err);
}

ait_status ml_rows(op_ctx *c, const tensor *x, int64_t *n, int64_t *f)
{
    if (strcmp(c->n->op, "TreeEnsemble") == 0)
        TRY(check_dtype(c, x, "X", 3, AIT_F32, AIT_F64, AIT_F16));
    else
        TRY(check_dtype(c, x, "X", 4, AIT_F32, AIT_F64, AIT_I64, AIT_I32));
    if (x->rank != 1 && x->rank != 2)
        return err_set(c->err, AIT_E_SHAPE, "X must be [N,F] or [F], not rank %d", x->rank);
    *n = x->rank == 2 ? x->dims[0] : 1;
    *f = x->dims[x->rank - 1];
    return AIT_OK;
}

double ml_logistic(double v)
{
    double e = 1 / (1 + exp(-fabs(v)));
    return v < 0 ? 1 - e : e;
}

/* The inverse of erf: an initial guess (Winitzki's approximation) refined by
 * Newton steps on erf, to double precision. ONNX Runtime uses the
 * approximation alone (about 1e-3 apart). */
static double erfinv(double y)
{
    if (!(y > -1 && y < 1)) return y == 1 ? INFINITY : y == -1 ? -INFINITY : NAN;
    double l = log((1 - y) * (1 + y)), a = 0.147, t = 2 / (M_PI * a) + l / 2;
    double x = copysign(sqrt(sqrt(t * t - l / a) - t), y);
    for (int i = 0; i < 3; i++) x -= (erf(x) - y) / (2 / sqrt(M_PI) * exp(-x * x));
    return x;
}

static double probit(double v) { return M_SQRT2 * erfinv(2 * v - 1); }

int ml_post(double *s, int n, int post, int second)
{
    if (n >= 2) {
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < n; i++) mx = s[i] > mx ? s[i] : mx;
        switch (post) {
        case ML_PROBIT:
            for (int i = 0; i < n; i++) s[i] = probit(s[i]);
            break;
        case ML_LOGISTIC:
            for (int i = 0; i < n; i++) s[i] = ml_logistic(s[i]);
            break;
        case ML_SOFTMAX:
            for (int i = 0; i < n; i++) sum += s[i] = exp(s[i] - mx);
            for (int i = 0; i < n; i++) s[i] /= sum;
            break;
        case ML_SOFTMAX_ZERO: /* zeros stay zero: absent scores take no share */
            for (int i = 0; i < n; i++) {
                if (fabs(s[i]) > 1e-7) sum += s[i] = exp(s[i] - mx);
                else s[i] = 0;
            }
            for (int i = 0; sum > 0 && i < n; i++) s[i] /= sum;
            break;
        default: break;
        }
        return n;
    }
    if (n != 1) return n;
    if (post == ML_PROBIT) {
        s[0] = probit(s[0]);
        return 1;
    }
    switch (second) {
    case 0:
    case 1:
        s[1] = s[0];
        s[0] = 1 - s[0];
        return 2;
    case 2:
    case 3:
        if (post == ML_LOGISTIC) {
            s[1] = ml_logistic(s[0]);
            s[0] = ml_logistic(-s[0]);
        } else {
            s[1] = s[0];
            s[0] = -s[0];
        }
        return 2;
    default: return 1;
    }
}
