#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

graph *graph_new(graph *parent, int opset, const char *path)
{
    graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->parent = parent;
    g->opset = opset;
    g->path = path;
    return g;
}

static void attr_clear(attr *a)
{
    free(a->name);
    free(a->s);
    if (a->t) {
        tensor_release(a->t);
        free(a->t);
    }
    graph_free(a->g);
    free(a->floats);
    free(a->ints);
    for (int i = 0; a->strings && i < a->n; i++) free(a->strings[i]);
    free(a->strings);
}

void node_clear(node *n)
{
    free(n->name);
    free(n->op);
    free(n->domain);
    free(n->in);
    free(n->out);
    for (int k = 0; k < n->n_attr; k++) attr_clear(&n->attrs[k]);
    free(n->attrs);
}

void graph_free(graph *g)
{
    if (!g) return;
    if (g->borrowed) { /* only the arrays the view made itself */
        for (int i = 0; i < g->n_nodes; i++) {
            free(g->nodes[i].in);
            free(g->nodes[i].out);
        }
        free(g->vals);
        free(g->nodes);
        free(g->inputs);
        free(g->outputs);
        free(g);
        return;
    }
    for (int i = 0; i < g->n_vals; i++) {
        value *v = &g->vals[i];
        free(v->name);
        for (int k = 0; k < AIT_MAX_RANK; k++) free(v->sym[k]);
        if (v->konst) {
            tensor_release(v->konst);
            free(v->konst);
        }
    }
    for (int i = 0; i < g->n_nodes; i++) node_clear(&g->nodes[i]);
    free(g->vals);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g);
}

int graph_add_value(graph *g, const char *name)
{
    if (g->n_vals == g->cap_vals) {
        int cap = g->cap_vals ? g->cap_vals * 2 : 64;
        value *v = realloc(g->vals, (size_t)cap * sizeof *v);
        if (!v) return -1;
        g->vals = v;
        g->cap_vals = cap;
    }
    value *v = &g->vals[g->n_vals];
    memset(v, 0, sizeof *v);
    v->name = strdup(name ? name : "");
    if (!v->name) return -1;
    v->rank = -1;
    v->producer = -1;
    v->outer = -1;
    return g->n_vals++;
}

int graph_find_value(const graph *g, const char *name)
{
    for (int i = g->n_vals - 1; i >= 0; i--)
        if (strcmp(g->vals[i].name, name) == 0) return i;
    return -1;
}

const attr *node_attr(const node *n, const char *name)
{
    for (int i = 0; i < n->n_attr; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t attr_int(const node *n, const char *name, int64_t dflt)
{
    const attr *a = node_attr(n, name);
    return a && a->type == ATTR_INT ? a->i : dflt;
}

float attr_float(const node *n, const char *name, float dflt)
{
    const attr *a = node_attr(n, name);
    if (!a) return dflt;
    if (a->type == ATTR_FLOAT) return a->f;
    if (a->type == ATTR_INT) return (float)a->i;
    return dflt;
}

const char *attr_str(const node *n, const char *name, const char *dflt)
{
    const attr *a = node_attr(n, name);
    return a && a->type == ATTR_STRING ? a->s : dflt;
}

const int64_t *attr_ints(const node *n, const char *name, int *count)
{
    const attr *a = node_attr(n, name);
    if (!a || a->type != ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    static const int64_t none[1];
    *count = a->n;
    return a->ints ? a->ints : none; /* present but empty is not absent */
}

const float *attr_floats(const node *n, const char *name, int *count)
{
    const attr *a = node_attr(n, name);
    if (!a || a->type != ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    static const float none[1];
    *count = a->n;
    return a->floats ? a->floats : none;
}
