#include "graph/extract.h"

#include <stdlib.h>
#include <string.h>

int graph_control_node(const graph *g, const module_tree *t, int m)
{
    for (int i = 0; i < g->n_nodes; i++) {
        if (!module_contains(t, m, i)) continue;
        for (int a = 0; a < g->nodes[i].n_attr; a++)
            if (g->nodes[i].attrs[a].g) return i;
    }
    return -1;
}

ait_status graph_extract(const graph *g, const module_tree *t, int m, graph **out, ait_error *e)
{
    *out = NULL;
    int cf = graph_control_node(g, t, m);
    if (cf >= 0)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s' holds control flow (node '%s', %s); "
                       "it cannot be built on its own yet", g->path, t->mods[m].name,
                       g->nodes[cf].name, g->nodes[cf].op);
    int *ins = NULL, *outs = NULL, n_in = 0, n_out = 0;
    TRY(module_ports(g, t, m, &ins, &n_in, &outs, &n_out, e));
    graph *x = graph_new(NULL, g->opset, g->path);
    int *map = malloc(sizeof(int) * (size_t)(g->n_vals + 1)); /* g's value id -> x's, or -1 */
    ait_status s = x && map ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    if (x) x->borrowed = true;
    int count = 0;
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) count += module_contains(t, m, i);
    if (s == AIT_OK) {
        x->vals = calloc((size_t)g->n_vals + 1, sizeof *x->vals);
        x->nodes = calloc((size_t)count + 1, sizeof *x->nodes);
        x->inputs = malloc(sizeof(int) * (size_t)(n_in + 1));
        x->outputs = malloc(sizeof(int) * (size_t)(n_out + 1));
        if (!x->vals || !x->nodes || !x->inputs || !x->outputs)
            s = err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (int v = 0; s == AIT_OK && v < g->n_vals; v++) map[v] = -1;
    /* Values: the ports, then whatever the module's nodes touch. */
#define TAKE(v)                                                                                \
    do {                                                                                       \
        if (map[v] < 0) {                                                                      \
            map[v] = x->n_vals;                                                                \
            value *nv = &x->vals[x->n_vals++];                                                 \
            *nv = g->vals[v];                                                                  \
            nv->producer = -1;                                                                 \
            nv->outer = -1;                                                                    \
            nv->is_input = nv->is_output = false;                                              \
        }                                                                                      \
    } while (0)
    for (int k = 0; s == AIT_OK && k < n_in; k++) {
        TAKE(ins[k]);
        x->vals[map[ins[k]]].is_input = true;
        x->inputs[x->n_inputs++] = map[ins[k]];
    }
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) {
        if (!module_contains(t, m, i)) continue;
        const node *src = &g->nodes[i];
        node *n = &x->nodes[x->n_nodes];
        *n = *src;
        n->in = malloc(sizeof(int) * (size_t)(src->n_in + 1));
        n->out = malloc(sizeof(int) * (size_t)(src->n_out + 1));
        x->n_nodes++;
        if (!n->in || !n->out) {
            s = err_set(e, AIT_E_NOMEM, "out of memory");
            break;
        }
        for (int k = 0; k < src->n_in; k++) {
            int v = src->in[k];
            if (v >= 0) TAKE(v);
            n->in[k] = v >= 0 ? map[v] : -1;
        }
        for (int k = 0; k < src->n_out; k++) {
            int v = src->out[k];
            if (v >= 0) {
                TAKE(v);
                x->vals[map[v]].producer = x->n_nodes - 1;
            }
            n->out[k] = v >= 0 ? map[v] : -1;
        }
    }
#undef TAKE
    for (int k = 0; s == AIT_OK && k < n_out; k++) {
        x->vals[map[outs[k]]].is_output = true;
        x->outputs[x->n_outputs++] = map[outs[k]];
    }
    if (s == AIT_OK) x->cap_vals = x->n_vals, x->cap_nodes = x->n_nodes;
    free(map);
    free(ins);
    free(outs);
    if (s != AIT_OK) {
        graph_free(x);
        return s;
    }
    *out = x;
    return AIT_OK;
}
