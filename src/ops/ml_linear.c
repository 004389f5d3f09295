/* Linear models of ai.onnx.ml: LinearClassifier and LinearRegressor.
 * scores = X . coefficients^T + intercepts, in double; then the post
 * transform and, for the classifier, the top class, as ONNX Runtime does
 * (ml_common.h). */
#include <string.h>

#include "ops/ml_common.h"

typedef struct lin {
    ml_vec coef, icpt;
    int64_t n_out; /* classes or targets */
    int post;
} lin;

/* coefficients [n_out, F]; intercepts n_out values or none. n_out comes from
 * `targets` (regressor) or the intercepts (classifier; without them, from
 * the coefficients and F). */
static ait_status lin_setup(op_ctx *c, lin *m, int64_t nf, int64_t targets)
{
    memset(m, 0, sizeof *m);
    TRY(ml_post_attr(c, &m->post));
    TRY(ml_floats(c, "coefficients", NULL, &m->coef));
    TRY(ml_floats(c, "intercepts", NULL, &m->icpt));
    if (!m->coef.n) return err_set(c->err, AIT_E_INVALID_ARG, "coefficients are required");
    m->n_out = targets ? targets : m->icpt.n ? m->icpt.n : nf ? m->coef.n / nf : 0;
    if (m->n_out < 1 || m->n_out > INT32_MAX / 2)
        return err_set(c->err, AIT_E_INVALID_ARG, "%s must be at least 1", targets ? "targets" :
                       "the number of classes (intercepts)");
    if (nf < 1 || m->coef.n / m->n_out != nf || m->coef.n % m->n_out)
        return err_set(c->err, AIT_E_SHAPE, "coefficients has %lld values; %lld %s x %lld "
                       "features expected", (long long)m->coef.n, (long long)m->n_out,
                       targets ? "targets" : "classes", (long long)nf);
    if (m->icpt.n && m->icpt.n != m->n_out)
        return err_set(c->err, AIT_E_INVALID_ARG, "intercepts has %lld values; %lld expected",
                       (long long)m->icpt.n, (long long)m->n_out);
    return AIT_OK;
}

/* Row r's n_out scores into s. */
static void lin_row(const lin *m, const tensor *x, int64_t r, int64_t nf, double *s)
{
    for (int64_t o = 0; o < m->n_out; o++) {
        double acc = m->icpt.n ? ml_at(&m->icpt, o) : 0;
        for (int64_t f = 0; f < nf; f++)
            acc += elem_get_f64(x->data, x->dtype, r * nf + f) * ml_at(&m->coef, o * nf + f);
        s[o] = acc;
    }
}

static ait_status reg_setup(op_ctx *c, lin *m, int64_t *n, int64_t *nf)
{
    TRY(ml_rows(c, c->in[0], n, nf));
    int64_t t = attr_int(c->n, "targets", 1);
    if (t < 1) return err_set(c->err, AIT_E_INVALID_ARG, "targets must be at least 1, not %lld",
                              (long long)t);
    return lin_setup(c, m, *nf, t);
}

static ait_status linreg_infer(op_ctx *c)
{
    lin m;
    int64_t n, nf;
    TRY(reg_setup(c, &m, &n, &nf));
    ml_set_out2(c, 0, AIT_F32, n, m.n_out);
    return AIT_OK;
}

static ait_status linreg_run(op_ctx *c)
{
    lin m;
    int64_t n, nf;
    TRY(reg_setup(c, &m, &n, &nf));
    double *s = op_scratch(c, sizeof(double) * (size_t)(m.n_out + 2));
    if (!s) return c->err->code;
    float *y = c->out[0]->data;
    for (int64_t r = 0; r < n; r++) {
        lin_row(&m, c->in[0], r, nf, s);
        int k = ml_post(s, (int)m.n_out, m.post, -1);
        for (int64_t o = 0; o < m.n_out; o++) y[r * m.n_out + o] = o < k ? (float)s[o] : 0.f;
    }
    return AIT_OK;
}

/* The classifier: one score per class, or one score for two labels (binary:
 * the label is the second when the score is above 0, and the scores become
 * [1 - s, s] as in ONNX Runtime). */
static ait_status cls_setup(op_ctx *c, lin *m, ml_labels *labels, int64_t *n, int64_t *nf)
{
    TRY(ml_rows(c, c->in[0], n, nf));
    TRY(lin_setup(c, m, *nf, 0));
    TRY(ml_labels_attr(c, "classlabels_ints", labels));
    int64_t nl = labels->n;
    if (nl != m->n_out && !(m->n_out == 1 && nl == 2))
        return err_set(c->err, AIT_E_INVALID_ARG, "%s has %lld labels for %lld classes "
                       "(intercepts)", labels->name, (long long)nl, (long long)m->n_out);
    return AIT_OK;
}

static ait_status lincls_infer(op_ctx *c)
{
    lin m;
    ml_labels labels;
    int64_t n, nf;
    TRY(cls_setup(c, &m, &labels, &n, &nf));
    ml_labels_out(c, &labels, n);
    ml_set_out2(c, 1, AIT_F32, n, m.n_out == 1 ? labels.n : m.n_out);
    return AIT_OK;
}

static ait_status lincls_run(op_ctx *c)
{
    lin m;
    ml_labels labels;
    int64_t n, nf;
    TRY(cls_setup(c, &m, &labels, &n, &nf));
    int64_t nl = labels.n;
    double *s = op_scratch(c, sizeof(double) * (size_t)(m.n_out + 2));
    if (!s) return c->err->code;
    int64_t cols = m.n_out == 1 ? nl : m.n_out;
    float *z = has_out(c, 1) ? c->out[1]->data : NULL;
    for (int64_t r = 0; r < n; r++) {
        lin_row(&m, c->in[0], r, nf, s);
        int best = 0;
        if (m.n_out == 1) {
            best = nl == 2 && s[0] > 0;
        } else {
            for (int k = 1; k < m.n_out; k++)
                if (s[k] > s[best]) best = k;
        }
        TRY(ml_label_put(c, &labels, r, best));
        int k = ml_post(s, (int)m.n_out, m.post, m.n_out == 1 && nl == 2 ? 1 : -1);
        for (int64_t o = 0; z && o < cols; o++) z[r * cols + o] = o < k ? (float)s[o] : 0.f;
    }
    return AIT_OK;
}

OP_TABLE(ml_linear,
         {.name = "LinearClassifier", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 2,
          .flags = OP_STR_OWNS, .infer = lincls_infer, .run = lincls_run, .domain = ML_DOMAIN},
         {.name = "LinearRegressor", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = linreg_infer, .run = linreg_run, .domain = ML_DOMAIN}, );
