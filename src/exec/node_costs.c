/* Node costs at the declared input shapes (see node_costs.h). */
#include "exec/node_costs.h"

#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "graph/cost.h"

#define MAX_IO 512 /* a node with more inputs or outputs counts 0 */

/* A scheduled value's tensor when its shape is known, else NULL. */
static const tensor *known(const exec *x, int v)
{
    const tensor *t = v >= 0 ? exec_scheduled(x, v) : NULL;
    return t && t->kind == VAL_TENSOR && t->dtype != AIT_UNDEFINED ? t : NULL;
}

ait_status exec_node_costs(const graph *g, double *cost, ait_error *e)
{
    int ni = g->n_inputs;
    for (int i = 0; i < g->n_nodes; i++) cost[i] = 0;
    for (int i = 0; i < ni; i++) {
        const value *v = &g->vals[g->inputs[i]];
        if (v->rank < 0 || v->kind != VAL_TENSOR)
            return err_set(e, AIT_E_UNSUPPORTED, "input '%s' has no declared shape", v->name);
    }
    tensor *t = calloc((size_t)ni + 1, sizeof *t), **in = calloc((size_t)ni + 1, sizeof *in);
    exec *x = NULL;
    ait_status s = t && in ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; s == AIT_OK && i < ni; i++) {
        const value *v = &g->vals[g->inputs[i]];
        int64_t dims[AIT_MAX_RANK];
        for (int d = 0; d < v->rank; d++) dims[d] = v->dims[d] >= 0 ? v->dims[d] : 1;
        tensor_set_shape(&t[i], v->dtype != AIT_UNDEFINED ? v->dtype : AIT_F32, v->rank, dims);
        in[i] = &t[i];
    }
    if (s == AIT_OK) s = exec_create(g, NULL, 1, &x, e);
    if (s == AIT_OK) s = exec_schedule(x, in, e);
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (!exec_node_runs(x, i) || n->n_in > MAX_IO || n->n_out > MAX_IO) continue;
        const tensor *ti[MAX_IO], *to[MAX_IO];
        for (int k = 0; k < n->n_in; k++) ti[k] = known(x, n->in[k]);
        for (int k = 0; k < n->n_out; k++) to[k] = known(x, n->out[k]);
        node_cost c;
        node_cost_of(g, i, ti, to, &c);
        cost[i] = c.flops;
    }
    exec_free(x);
    free(t);
    free(in);
    return s;
}
