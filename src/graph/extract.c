#include "graph/extract.h"

#include <stdlib.h>
#include <string.h>

/* A view of subgraph `sub` (an attribute of one of the module's nodes) for
 * the extracted graph: its values copied with their outer ids mapped to the
 * view's ids (map), its nodes' input and output arrays copied (graph_free
 * frees those of a borrowed graph), the rest borrowed. Nested subgraphs are
 * shared: their outer ids name values of `sub`, which keep their ids. */
static graph *sub_view(const graph *sub, graph *parent, const int *map)
{
    graph *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    *v = *sub;
    v->parent = parent;
    v->borrowed = true;
    v->vals = malloc(sizeof(value) * (size_t)(sub->n_vals + 1));
    v->nodes = calloc((size_t)sub->n_nodes + 1, sizeof(node));
    v->inputs = malloc(sizeof(int) * (size_t)(sub->n_inputs + 1));
    v->outputs = malloc(sizeof(int) * (size_t)(sub->n_outputs + 1));
    v->n_nodes = 0;
    bool ok = v->vals && v->nodes && v->inputs && v->outputs;
    if (ok) {
        memcpy(v->vals, sub->vals, sizeof(value) * (size_t)sub->n_vals);
        for (int i = 0; i < sub->n_vals; i++)
            if (v->vals[i].outer >= 0) v->vals[i].outer = map[v->vals[i].outer];
        memcpy(v->inputs, sub->inputs, sizeof(int) * (size_t)sub->n_inputs);
        memcpy(v->outputs, sub->outputs, sizeof(int) * (size_t)sub->n_outputs);
    }
    for (int i = 0; ok && i < sub->n_nodes; i++) {
        node *n = &v->nodes[v->n_nodes++];
        *n = sub->nodes[i];
        n->in = malloc(sizeof(int) * (size_t)(n->n_in + 1));
        n->out = malloc(sizeof(int) * (size_t)(n->n_out + 1));
        ok = n->in && n->out;
        if (n->in) memcpy(n->in, sub->nodes[i].in, sizeof(int) * (size_t)n->n_in);
        if (n->out) memcpy(n->out, sub->nodes[i].out, sizeof(int) * (size_t)n->n_out);
    }
    if (!ok) {
        graph_free(v);
        return NULL;
    }
    return v;
}

/* Gives node n of view x (a copy of src) its own attribute array, each
 * subgraph replaced by a view reading x's values. */
static ait_status view_subgraphs(graph *x, node *n, const node *src, const int *map, ait_error *e)
{
    attr *a = malloc(sizeof(attr) * (size_t)n->n_attr);
    bool ok = a != NULL;
    if (ok) memcpy(a, src->attrs, sizeof(attr) * (size_t)n->n_attr);
    for (int k = 0; ok && k < n->n_attr; k++)
        if (src->attrs[k].g) ok = (a[k].g = sub_view(src->attrs[k].g, x, map)) != NULL;
    if (!ok) {
        for (int k = 0; a && k < n->n_attr; k++)
            if (a[k].g != src->attrs[k].g) graph_free(a[k].g);
        free(a);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    n->attrs = a; /* graph_free frees it with the views */
    return AIT_OK;
}

static bool has_subgraph(const node *n)
{
    for (int a = 0; a < n->n_attr; a++)
        if (n->attrs[a].g) return true;
    return false;
}

ait_status graph_extract(const graph *g, const module_tree *t, int m, graph **out, ait_error *e)
{
    *out = NULL;
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
        if (has_subgraph(src)) { /* the values its subgraphs read (constants too) */
            int *cap, n_cap;
            s = node_captures(src, &cap, &n_cap, e);
            for (int k = 0; s == AIT_OK && k < n_cap; k++) TAKE(cap[k]);
            free(cap);
            if (s == AIT_OK) s = view_subgraphs(x, n, src, map, e);
            if (s != AIT_OK) break;
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
