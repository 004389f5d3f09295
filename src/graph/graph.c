#include "graph/graph.h"

#include <stdio.h>
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
            node *n = &g->nodes[i];
            free(n->in);
            free(n->out);
            /* A node whose subgraphs are views (graph_extract) owns them
             * and its attribute array; other nodes share their graph's. */
            bool views = false;
            for (int a = 0; a < n->n_attr; a++)
                if (n->attrs[a].g && n->attrs[a].g->borrowed) {
                    graph_free(n->attrs[a].g);
                    views = true;
                }
            if (views) free(n->attrs);
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
        free(v->absent);
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

ait_status node_captures(const node *n, int **list, int *count, ait_error *e)
{
    *list = NULL;
    *count = 0;
    int cap = 0;
    for (int a = 0; a < n->n_attr; a++) {
        const graph *sub = n->attrs[a].g;
        for (int i = 0; sub && i < sub->n_vals; i++) {
            int o = sub->vals[i].outer, k = 0;
            if (o < 0) continue;
            while (k < *count && (*list)[k] != o) k++;
            if (k < *count) continue;
            if (*count + 1 >= cap) {
                cap = cap ? 2 * cap : 16;
                int *p = realloc(*list, sizeof(int) * (size_t)cap);
                if (!p) {
                    free(*list);
                    *list = NULL;
                    *count = 0;
                    return err_set(e, AIT_E_NOMEM, "out of memory");
                }
                *list = p;
            }
            (*list)[(*count)++] = o;
            (*list)[*count] = -1;
        }
    }
    return AIT_OK;
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

const char *graph_input_names(const graph *g, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "its input%s %s ", g->n_inputs == 1 ? "" : "s",
                                  g->n_inputs == 1 ? "is" : "are");
    for (int i = 0; i < g->n_inputs && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s'%s'", i ? ", " : "",
                                g->vals[g->inputs[i]].name);
    if (!g->n_inputs) snprintf(buf, n, "it has no inputs");
    return buf;
}
