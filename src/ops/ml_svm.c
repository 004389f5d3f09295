/* Support vector machines of ai.onnx.ml: SVMClassifier and SVMRegressor,
 * as ONNX Runtime evaluates them (libsvm's layout): support vectors grouped
 * by class, one-vs-one classifiers voting, Platt probabilities coupled by
 * libsvm's multiclass_probability when prob_a/prob_b are given; without
 * support vectors, a linear model (liblinear's layout). In double. */
#include <math.h>
#include <string.h>

#include "ops/ml_common.h"

enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };

typedef struct svm {
    int kernel, post;
    double gamma, coef0, degree;
    ml_vec sv, coef, rho;
    int64_t n_sv; /* 0: linear mode */
} svm;

static ait_status svm_common(op_ctx *c, svm *m)
{
    static const char *const kernels[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
    memset(m, 0, sizeof *m);
    TRY(ml_enum(c, "kernel_type", "LINEAR", kernels, 4, &m->kernel));
    TRY(ml_post_attr(c, &m->post));
    ml_vec kp;
    TRY(ml_floats(c, "kernel_params", NULL, &kp));
    if (kp.n && kp.n != 3)
        return err_set(c->err, AIT_E_INVALID_ARG, "kernel_params must be gamma, coef0 and degree "
                       "(3 values), not %lld values", (long long)kp.n);
    if (kp.n) {
        m->gamma = ml_at(&kp, 0);
        m->coef0 = ml_at(&kp, 1);
        m->degree = ml_at(&kp, 2);
    }
    TRY(ml_floats(c, "support_vectors", NULL, &m->sv));
    TRY(ml_floats(c, "coefficients", NULL, &m->coef));
    TRY(ml_floats(c, "rho", NULL, &m->rho));
    if (!m->coef.n) return err_set(c->err, AIT_E_INVALID_ARG, "coefficients are required");
    if (!m->rho.n) return err_set(c->err, AIT_E_INVALID_ARG, "rho is required");
    return AIT_OK;
}

/* The kernel of row r of x and vector v (`vec` from k * nf). Linear mode
 * always uses the dot product. */
static double kern(const svm *m, const tensor *x, int64_t r, int64_t nf, const ml_vec *vec,
                   int64_t k)
{
    double acc = 0;
    const void *d = x->data;
    if (m->kernel == K_RBF && m->n_sv) {
        for (int64_t f = 0; f < nf; f++) {
            double t = elem_get_f64(d, x->dtype, r * nf + f) - ml_at(vec, k * nf + f);
            acc += t * t;
        }
        return exp(-m->gamma * acc);
    }
    for (int64_t f = 0; f < nf; f++)
        acc += elem_get_f64(d, x->dtype, r * nf + f) * ml_at(vec, k * nf + f);
    if (!m->n_sv || m->kernel == K_LINEAR) return acc;
    acc = m->gamma * acc + m->coef0;
    return m->kernel == K_POLY ? pow(acc, m->degree) : tanh(acc);
}

/* ---- regressor ----------------------------------------------------------- */

static ait_status reg_setup(op_ctx *c, svm *m, int64_t *n, int64_t *nf)
{
    TRY(svm_common(c, m));
    TRY(ml_rows(c, c->in[0], n, nf));
    m->n_sv = attr_int(c->n, "n_supports", 0);
    if (m->n_sv < 0) return err_set(c->err, AIT_E_INVALID_ARG, "n_supports is negative");
    if (m->n_sv) {
        if (m->sv.n / m->n_sv != *nf || m->sv.n % m->n_sv)
            return err_set(c->err, AIT_E_SHAPE, "support_vectors has %lld values; %lld vectors x "
                           "%lld features expected", (long long)m->sv.n, (long long)m->n_sv,
                           (long long)*nf);
        return ml_len(c, &m->coef, m->n_sv, "coefficients");
    }
    return ml_len(c, &m->coef, *nf, "coefficients");
}

static ait_status svr_infer(op_ctx *c)
{
    svm m;
    int64_t n, nf;
    TRY(reg_setup(c, &m, &n, &nf));
    ml_set_out2(c, 0, AIT_F32, n, 1);
    return AIT_OK;
}

static ait_status svr_run(op_ctx *c)
{
    svm m;
    int64_t n, nf;
    TRY(reg_setup(c, &m, &n, &nf));
    bool one_class = attr_int(c->n, "one_class", 0) != 0;
    float *y = c->out[0]->data;
    for (int64_t r = 0; r < n; r++) {
        double s[2] = {ml_at(&m.rho, 0)};
        if (m.n_sv)
            for (int64_t k = 0; k < m.n_sv; k++)
                s[0] += ml_at(&m.coef, k) * kern(&m, c->in[0], r, nf, &m.sv, k);
        else
            s[0] += kern(&m, c->in[0], r, nf, &m.coef, 0);
        ml_post(s, 1, m.post, -1);
        y[r] = one_class ? (s[0] > 0 ? 1.f : -1.f) : (float)s[0];
    }
    return AIT_OK;
}

/* ---- classifier ---------------------------------------------------------- */

typedef struct svc {
    svm m;
    ml_labels labels;
    int64_t n_cls, n_pairs, cols;
    ml_vec per_class, pa, pb;
    bool proba, all_pos;
} svc;

static ait_status svc_setup(op_ctx *c, svc *s, int64_t *n, int64_t *nf)
{
    memset(s, 0, sizeof *s);
    TRY(svm_common(c, &s->m));
    TRY(ml_rows(c, c->in[0], n, nf));
    TRY(ml_labels_attr(c, "classlabels_ints", &s->labels));
    s->n_cls = s->labels.n;
    if (s->n_cls < 2 || s->n_cls > 1 << 15)
        return err_set(c->err, AIT_E_INVALID_ARG, "%s must list 2 classes or more, not %lld",
                       s->labels.name, (long long)s->n_cls);
    ml_ints(c, "vectors_per_class", &s->per_class);
    TRY(ml_floats(c, "prob_a", NULL, &s->pa));
    TRY(ml_floats(c, "prob_b", NULL, &s->pb));
    if (s->pa.n != s->pb.n)
        return err_set(c->err, AIT_E_INVALID_ARG, "prob_a has %lld values and prob_b %lld",
                       (long long)s->pa.n, (long long)s->pb.n);
    s->n_pairs = s->n_cls * (s->n_cls - 1) / 2;
    s->proba = s->pa.n > 0;
    s->all_pos = true;
    for (int64_t k = 0; k < s->m.coef.n; k++) s->all_pos &= ml_at(&s->m.coef, k) >= 0;
    if (s->per_class.n) { /* libsvm: vectors per class, (classes - 1) x vectors coefficients */
        TRY(ml_len(c, &s->per_class, s->n_cls, "vectors_per_class"));
        for (int64_t k = 0; k < s->n_cls; k++) {
            if (s->per_class.i[k] < 0 || s->per_class.i[k] > INT32_MAX)
                return err_set(c->err, AIT_E_INVALID_ARG, "vectors_per_class[%lld] is %lld",
                               (long long)k, (long long)s->per_class.i[k]);
            s->m.n_sv += s->per_class.i[k];
        }
        if (s->m.n_sv < 1 || s->m.sv.n / s->m.n_sv != *nf || s->m.sv.n % s->m.n_sv)
            return err_set(c->err, AIT_E_SHAPE, "support_vectors has %lld values; %lld vectors x "
                           "%lld features expected", (long long)s->m.sv.n, (long long)s->m.n_sv,
                           (long long)*nf);
        TRY(ml_len(c, &s->m.coef, (s->n_cls - 1) * s->m.n_sv, "coefficients"));
        TRY(ml_len(c, &s->m.rho, s->n_pairs, "rho"));
        if (s->proba) TRY(ml_len(c, &s->pa, s->n_pairs, "prob_a"));
        s->cols = s->proba ? s->n_cls : s->n_cls > 2 ? s->n_pairs : 2;
    } else { /* liblinear: one row of coefficients per class, rho[0] for all */
        TRY(ml_len(c, &s->m.coef, s->n_cls * *nf, "coefficients"));
        if (s->proba)
            return err_set(c->err, AIT_E_INVALID_ARG, "prob_a/prob_b need support vectors "
                           "(vectors_per_class)");
        s->cols = s->n_cls;
    }
    return AIT_OK;
}

static ait_status svc_infer(op_ctx *c)
{
    svc s;
    int64_t n, nf;
    TRY(svc_setup(c, &s, &n, &nf));
    ml_labels_out(c, &s.labels, n);
    ml_set_out2(c, 1, AIT_F32, n, s.cols);
    return AIT_OK;
}

/* libsvm's coupling of pairwise probabilities r (k x k) into p (k). */
static void coupling(int64_t k, const double *r, double *q, double *qp, double *p)
{
    for (int64_t i = 0; i < k; i++) {
        p[i] = 1.0 / (double)k;
        q[i * k + i] = 0;
        for (int64_t j = 0; j < i; j++) {
            q[i * k + i] += r[j * k + i] * r[j * k + i];
            q[i * k + j] = q[j * k + i];
        }
        for (int64_t j = i + 1; j < k; j++) {
            q[i * k + i] += r[j * k + i] * r[j * k + i];
            q[i * k + j] = -r[j * k + i] * r[i * k + j];
        }
    }
    double eps = 0.005 / (double)k;
    for (int it = 0; it < 100; it++) {
        double pqp = 0, max_err = 0;
        for (int64_t i = 0; i < k; i++) {
            qp[i] = 0;
            for (int64_t j = 0; j < k; j++) qp[i] += q[i * k + j] * p[j];
            pqp += p[i] * qp[i];
        }
        for (int64_t i = 0; i < k; i++) max_err = fmax(max_err, fabs(qp[i] - pqp));
        if (max_err < eps) break;
        for (int64_t i = 0; i < k; i++) {
            double diff = (-qp[i] + pqp) / q[i * k + i];
            p[i] += diff;
            pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
            for (int64_t j = 0; j < k; j++) {
                qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
                p[j] /= 1 + diff;
            }
        }
    }
}

static ait_status svc_run(op_ctx *c)
{
    svc s;
    int64_t n, nf;
    TRY(svc_setup(c, &s, &n, &nf));
    const svm *m = &s.m;
    int64_t k = s.n_cls, nsv = m->n_sv;
    /* scratch: kernels, start of each class's vectors, votes, scores, pair
     * probabilities and the coupling's work */
    size_t sz[7] = {sizeof(double) * (size_t)nsv, sizeof(int64_t) * (size_t)k,
                    sizeof(int64_t) * (size_t)k, sizeof(double) * (size_t)(s.n_pairs + k + 2),
                    sizeof(double) * (size_t)(k * k), sizeof(double) * (size_t)(k * k),
                    sizeof(double) * (size_t)k};
    void *p[7];
    TRY(op_scratch_parts(c, 7, sz, p));
    double *kv = p[0], *sc = p[3], *r2 = p[4], *q = p[5], *qp = p[6];
    int64_t *start = p[1], *votes = p[2];
    for (int64_t i = 0, at = 0; nsv && i < k; at += s.per_class.i[i++]) start[i] = at;
    float *z = has_out(c, 1) ? c->out[1]->data : NULL;
    for (int64_t r = 0; r < n; r++) {
        int best = 0, cnt = (int)s.cols, second = -1;
        double maxw = 0;
        if (nsv) {
            for (int64_t v = 0; v < nsv; v++) kv[v] = kern(m, c->in[0], r, nf, &m->sv, v);
            memset(votes, 0, sizeof *votes * (size_t)k);
            int64_t idx = 0;
            for (int64_t i = 0; i < k - 1; i++)
                for (int64_t j = i + 1; j < k; j++, idx++) {
                    double sum = ml_at(&m->rho, idx);
                    for (int64_t t = 0; t < s.per_class.i[i]; t++)
                        sum += ml_at(&m->coef, (j - 1) * nsv + start[i] + t) * kv[start[i] + t];
                    for (int64_t t = 0; t < s.per_class.i[j]; t++)
                        sum += ml_at(&m->coef, i * nsv + start[j] + t) * kv[start[j] + t];
                    sc[idx] = sum;
                    votes[sum > 0 ? i : j]++;
                }
            for (int64_t i = 1; i < k; i++)
                if (votes[i] > votes[best]) best = (int)i;
            if (s.proba) {
                idx = 0;
                for (int64_t i = 0; i < k; i++) r2[i * k + i] = 0;
                for (int64_t i = 0; i < k - 1; i++)
                    for (int64_t j = i + 1; j < k; j++, idx++) {
                        double v = 1 - ml_logistic(sc[idx] * ml_at(&s.pa, idx) + ml_at(&s.pb, idx));
                        v = fmin(fmax(v, 1e-7), 1 - 1e-7);
                        r2[i * k + j] = v;
                        r2[j * k + i] = 1 - v;
                    }
                coupling(k, r2, q, qp, sc);
            } else if (k == 2) {
                cnt = 1;
                second = m->post == ML_NONE ? 2 : 0;
            } else {
                cnt = (int)s.n_pairs;
            }
        } else {
            for (int64_t i = 0; i < k; i++)
                sc[i] = ml_at(&m->rho, 0) + kern(m, c->in[0], r, nf, &m->coef, i);
            for (int64_t i = 1; i < k; i++)
                if (sc[i] > sc[best]) best = (int)i;
            maxw = sc[best];
            if (k == 2 && ((s.all_pos && maxw >= 0.5) || (!s.all_pos && maxw > 0))) best = 1;
        }
        TRY(ml_label_put(c, &s.labels, r, best));
        cnt = ml_post(sc, cnt, m->post, second);
        for (int64_t o = 0; z && o < s.cols; o++) z[r * s.cols + o] = o < cnt ? (float)sc[o] : 0.f;
    }
    return AIT_OK;
}

OP_TABLE(ml_svm,
         {.name = "SVMClassifier", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 2,
          .flags = OP_STR_OWNS, .infer = svc_infer, .run = svc_run, .domain = ML_DOMAIN},
         {.name = "SVMRegressor", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = svr_infer, .run = svr_run, .domain = ML_DOMAIN}, );
