/* One-node graphs for op tests (test_graph.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_graph.h"
#include "testutil.h"

graph *tg_node(const char *op, int opset, const tg_in *ins, int n_in, const tg_attr *as,
               int n_attr)
{
    graph *g = graph_new(NULL, opset, "one-node");
    assert_non_null(g);
    g->nodes = calloc(1, sizeof *g->nodes);
    g->inputs = calloc((size_t)n_in + 1, sizeof *g->inputs);
    g->outputs = calloc(1, sizeof *g->outputs);
    assert_true(g->nodes && g->inputs && g->outputs);
    node *n = &g->nodes[0];
    g->n_nodes = g->cap_nodes = 1;
    n->name = strdup("n0");
    n->op = strdup(op);
    n->domain = strdup("");
    test_node_def(n, op, opset);
    n->n_in = n_in;
    n->n_out = 1;
    n->in = calloc((size_t)n_in + 1, sizeof(int));
    n->out = calloc(1, sizeof(int));
    n->attrs = calloc((size_t)n_attr + 1, sizeof *n->attrs);
    assert_true(n->in && n->out && n->attrs);
    for (int k = 0; k < n_in; k++) {
        if (ins[k].omit) {
            n->in[k] = -1;
            continue;
        }
        char name[16];
        snprintf(name, sizeof name, "x%d", k);
        int v = graph_add_value(g, name);
        assert_true(v >= 0);
        value *d = &g->vals[v];
        d->dtype = ins[k].dt;
        d->rank = ins[k].rank;
        memcpy(d->dims, ins[k].dims, sizeof(int64_t) * (size_t)ins[k].rank);
        if (ins[k].data) {
            tensor *t = calloc(1, sizeof *t);
            ait_error e = {0};
            assert_non_null(t);
            tensor_set_shape(t, ins[k].dt, ins[k].rank, ins[k].dims);
            if (tensor_alloc(t, &e) != AIT_OK) fail_msg("%s", e.msg);
            memcpy(t->data, ins[k].data, tensor_nbytes(t));
            d->konst = t;
        } else {
            d->is_input = true;
            g->inputs[g->n_inputs++] = v;
        }
        n->in[k] = v;
    }
    int y = graph_add_value(g, "y");
    assert_true(y >= 0);
    g->vals[y].producer = 0;
    g->vals[y].is_output = true;
    g->outputs[g->n_outputs++] = y;
    n->out[0] = y;
    for (int a = 0; a < n_attr; a++) {
        attr *t = &n->attrs[n->n_attr++];
        t->name = strdup(as[a].name);
        t->type = as[a].type;
        t->i = as[a].i;
        t->f = as[a].f;
        if (as[a].type == ATTR_STRING) {
            t->s = strdup(as[a].s);
            assert_non_null(t->s);
        }
        if (as[a].type == ATTR_INTS) {
            t->n = as[a].n;
            t->ints = malloc(sizeof(int64_t) * (size_t)(as[a].n + 1));
            assert_non_null(t->ints);
            memcpy(t->ints, as[a].ints, sizeof(int64_t) * (size_t)as[a].n);
        }
    }
    return g;
}

exec *tg_exec(const graph *g)
{
    exec *x = NULL;
    ait_error e = {0};
    if (exec_create(g, NULL, 1, &x, &e) != AIT_OK) fail_msg("exec_create: %s", e.msg);
    return x;
}

ait_status tg_run(exec *x, tensor *const *feed, tensor **out, ait_error *e)
{
    *out = NULL;
    return exec_run(x, feed, out, e);
}
