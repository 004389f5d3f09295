/* Optimiser steps of the ai.onnx.preview.training domain: Adagrad, Momentum,
 * Adam. Each takes R (learning rate), T (step count), then groups of n
 * tensors (X, G, and the optimiser's state), and returns the updated X and
 * state. Computed in double, stored in the tensors' float type. */
#include <math.h>
#include <string.h>

#include "ops/op.h"

#define TRAINING "ai.onnx.preview.training"

/* Checks the grouping: (n_in - 2) = groups_in * n, n_out = groups_out * n. */
static ait_status opt_infer(op_ctx *c, int groups_in, int groups_out)
{
    int n = (c->n_in - 2) / groups_in;
    if (n < 1 || (c->n_in - 2) % groups_in || c->n_out != groups_out * n)
        return err_set(c->err, AIT_E_SHAPE, "%s takes R, T and %d groups of tensors and gives %d "
                       "groups; got %d inputs and %d outputs", c->n->op, groups_in, groups_out,
                       c->n_in, c->n_out);
    if (!has_in(c, 0) || !has_in(c, 1) || tensor_numel(c->in[0]) != 1 || tensor_numel(c->in[1]) != 1)
        return err_set(c->err, AIT_E_SHAPE, "R and T must be scalars");
    for (int g = 0; g < groups_in; g++)
        for (int i = 0; i < n; i++) {
            const tensor *x = c->in[2 + i], *t = c->in[2 + g * n + i];
            if (!dtype_is_float(t->dtype) || t->dtype != x->dtype || t->rank != x->rank ||
                tensor_numel(t) != tensor_numel(x))
                return err_set(c->err, AIT_E_SHAPE, "input %d must be a float tensor like X%d",
                               2 + g * n + i, i + 1);
        }
    for (int g = 0; g < groups_out; g++)
        for (int i = 0; i < n; i++) {
            const tensor *x = c->in[2 + (g == 0 ? 0 : g + 1) * n + i];
            set_out(c, g * n + i, x->dtype, x->rank, x->dims);
        }
    return AIT_OK;
}

static double get(const tensor *t, int64_t k) { return elem_get_f64(t->data, t->dtype, k); }
static void put(tensor *t, int64_t k, double v)
{
    if (t) elem_set_f64(t->data, t->dtype, k, v);
}

static ait_status adagrad_infer(op_ctx *c) { return opt_infer(c, 3, 2); }
static ait_status adagrad_run(op_ctx *c)
{
    int n = (c->n_in - 2) / 3;
    double r = get(c->in[0], 0), t = (double)elem_get_i64(c->in[1]->data, c->in[1]->dtype, 0);
    double decay = attr_float(c->n, "decay_factor", 0), eps = attr_float(c->n, "epsilon", 1e-6f);
    double norm = attr_float(c->n, "norm_coefficient", 0);
    r /= 1 + t * decay;
    for (int i = 0; i < n; i++) {
        const tensor *x = c->in[2 + i], *g = c->in[2 + n + i], *h = c->in[2 + 2 * n + i];
        for (int64_t k = 0, m = tensor_numel(x); k < m; k++) {
            double gr = norm * get(x, k) + get(g, k), hn = get(h, k) + gr * gr;
            put(c->out[i], k, get(x, k) - r * gr / (sqrt(hn) + eps));
            put(c->out[n + i], k, hn);
        }
    }
    return AIT_OK;
}

static ait_status momentum_infer(op_ctx *c) { return opt_infer(c, 3, 2); }
static ait_status momentum_run(op_ctx *c)
{
    int n = (c->n_in - 2) / 3;
    double r = get(c->in[0], 0);
    int64_t t = elem_get_i64(c->in[1]->data, c->in[1]->dtype, 0);
    double alpha = attr_float(c->n, "alpha", 0), beta = attr_float(c->n, "beta", 0);
    double norm = attr_float(c->n, "norm_coefficient", 0);
    const char *mode = attr_str(c->n, "mode", "standard");
    bool nesterov = strcmp(mode, "nesterov") == 0;
    if (!nesterov && strcmp(mode, "standard") != 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "mode '%s' is neither standard nor nesterov", mode);
    double b = t > 0 ? beta : 1;
    for (int i = 0; i < n; i++) {
        const tensor *x = c->in[2 + i], *g = c->in[2 + n + i], *v = c->in[2 + 2 * n + i];
        for (int64_t k = 0, m = tensor_numel(x); k < m; k++) {
            double gr = norm * get(x, k) + get(g, k), vn = alpha * get(v, k) + b * gr;
            put(c->out[i], k, get(x, k) - r * (nesterov ? gr + alpha * vn : vn));
            put(c->out[n + i], k, vn);
        }
    }
    return AIT_OK;
}

static ait_status adam_infer(op_ctx *c) { return opt_infer(c, 4, 3); }
static ait_status adam_run(op_ctx *c)
{
    int n = (c->n_in - 2) / 4;
    double r = get(c->in[0], 0), t = (double)elem_get_i64(c->in[1]->data, c->in[1]->dtype, 0);
    double alpha = attr_float(c->n, "alpha", 0.9f), beta = attr_float(c->n, "beta", 0.999f);
    double eps = attr_float(c->n, "epsilon", 1e-6f), norm = attr_float(c->n, "norm_coefficient", 0);
    double post = attr_float(c->n, "norm_coefficient_post", 0);
    if (t > 0) r *= sqrt(1 - pow(beta, t)) / (1 - pow(alpha, t));
    for (int i = 0; i < n; i++) {
        const tensor *x = c->in[2 + i], *g = c->in[2 + n + i], *v = c->in[2 + 2 * n + i],
                     *h = c->in[2 + 3 * n + i];
        for (int64_t k = 0, m = tensor_numel(x); k < m; k++) {
            double gr = norm * get(x, k) + get(g, k);
            double vn = alpha * get(v, k) + (1 - alpha) * gr;
            double hn = beta * get(h, k) + (1 - beta) * gr * gr;
            double xn = get(x, k) - r * vn / (sqrt(hn) + eps);
            put(c->out[i], k, (1 - post) * xn);
            put(c->out[n + i], k, vn);
            put(c->out[2 * n + i], k, hn);
        }
    }
    return AIT_OK;
}

OP_TABLE(training,
         {"Adagrad", 5, 512, 2, 512, OP_VARIADIC, adagrad_infer, adagrad_run, TRAINING},
         {"Momentum", 5, 512, 2, 512, OP_VARIADIC, momentum_infer, momentum_run, TRAINING},
         {"Adam", 6, 512, 3, 512, OP_VARIADIC, adam_infer, adam_run, TRAINING});
