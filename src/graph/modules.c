/* The module tree (see modules.h for the naming rules and the fallback). */
#include "graph/modules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SEGMENT 2 /* fallback runs shorter than this join the run before */

static int add_module(module_tree *t, const char *name, int parent)
{
    module *m = realloc(t->mods, sizeof *m * (size_t)(t->n + 1));
    if (!m) return -1;
    t->mods = m;
    module *x = &t->mods[t->n];
    memset(x, 0, sizeof *x);
    x->name = strdup(name);
    if (!x->name) return -1;
    x->parent = parent;
    x->depth = parent < 0 ? 0 : t->mods[parent].depth + 1;
    if (parent >= 0) {
        module *p = &t->mods[parent];
        int *c = realloc(p->children, sizeof *c * (size_t)(p->n_children + 1));
        if (!c) return -1;
        p->children = c;
        p->children[p->n_children++] = t->n;
    }
    return t->n++;
}

int module_find(const module_tree *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->mods[i].name, name) == 0) return i;
    return -1;
}

/* The child of `parent` called `name`, created when new; -1 on no memory. */
static int child_named(module_tree *t, int parent, const char *name)
{
    const module *p = &t->mods[parent];
    for (int i = 0; i < p->n_children; i++)
        if (strcmp(t->mods[p->children[i]].name, name) == 0) return p->children[i];
    return add_module(t, name, parent);
}

/* The module of a scoped node name ("/a/a.0/conv/Conv"), creating the path;
 * 0 (the root) for unscoped names; -1 on no memory. */
static int module_of_name(module_tree *t, const char *node_name)
{
    if (node_name[0] != '/') return 0;
    const char *last = strrchr(node_name, '/');
    int cur = 0;
    char full[1024] = "", prev[512] = "";
    for (const char *p = node_name + 1; p < last;) {
        const char *end = memchr(p, '/', (size_t)(last - p) + 1);
        size_t len = (size_t)(end - p), pl = strlen(prev);
        if (len == 0) { /* "//": skip an empty segment */
            p = end + 1;
            continue;
        }
        char next[1024];
        /* A segment that extends the previous one ("layer1.0" after "layer1",
         * "conv.0" after "conv") names a child by its index; another
         * ("conv1") is an attribute of the module so far. */
        if (pl && len > pl && strncmp(p, prev, pl) == 0 && p[pl] == '.')
            snprintf(next, sizeof next, "%s%.*s", full, (int)(len - pl), p + pl);
        else if (full[0])
            snprintf(next, sizeof next, "%s.%.*s", full, (int)len, p);
        else
            snprintf(next, sizeof next, "%.*s", (int)len, p);
        snprintf(full, sizeof full, "%s", next);
        snprintf(prev, sizeof prev, "%.*s", (int)len, p);
        cur = child_named(t, cur, full);
        if (cur < 0) return -1;
        p = end + 1;
    }
    return cur;
}

static ait_status add_node(module_tree *t, int m, int n)
{
    module *x = &t->mods[m];
    int *p = realloc(x->nodes, sizeof *p * (size_t)(x->n_nodes + 1));
    if (!p) return AIT_E_NOMEM;
    x->nodes = p;
    x->nodes[x->n_nodes++] = n;
    t->node_module[n] = m;
    return AIT_OK;
}

/* Fallback: cut the node sequence where one computed value crosses. */
static ait_status build_segments(const graph *g, module_tree *t, ait_error *e)
{
    int nn = g->n_nodes, nv = g->n_vals;
    int *last_use = malloc(sizeof(int) * (size_t)(nv + 1));
    if (!last_use) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int v = 0; v < nv; v++) last_use[v] = -1;
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0) last_use[g->nodes[i].in[k]] = i;
    for (int j = 0; j < g->n_outputs; j++) last_use[g->outputs[j]] = nn; /* live to the end */
    /* live[i]: computed values (not constants, graph inputs count) produced at
     * or before node i and read after it. */
    int live = 0, seg = -1, seg_len = 0;
    ait_status s = AIT_OK;
    for (int v = 0; v < nv; v++)
        if (g->vals[v].is_input && last_use[v] >= 0) live++;
    for (int i = 0; i < nn && s == AIT_OK; i++) {
        if (seg < 0 || seg_len < 0) {
            char name[32];
            snprintf(name, sizeof name, "seg.%d", t->mods[0].n_children);
            seg = add_module(t, name, 0);
            if (seg < 0) s = err_set(e, AIT_E_NOMEM, "out of memory");
            seg_len = 0;
            if (s != AIT_OK) break;
        }
        s = add_node(t, seg, i);
        seg_len++;
        const node *n = &g->nodes[i];
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && last_use[n->out[k]] > i) live++;
        for (int v = 0; v < nv; v++) /* values whose last reader is node i die here */
            if (last_use[v] == i && !g->vals[v].konst && (g->vals[v].producer >= 0 || g->vals[v].is_input))
                live--;
        if (live == 1 && seg_len >= MIN_SEGMENT && i + 1 < nn) seg_len = -1; /* cut after i */
    }
    free(last_use);
    return s == AIT_OK ? AIT_OK : err_set(e, s, "out of memory");
}

ait_status modules_build(const graph *g, module_tree **out, ait_error *e)
{
    module_tree *t = calloc(1, sizeof *t);
    if (!t) return err_set(e, AIT_E_NOMEM, "out of memory");
    t->node_module = calloc((size_t)g->n_nodes + 1, sizeof(int));
    ait_status s = t->node_module && add_module(t, "", -1) == 0 ? AIT_OK : AIT_E_NOMEM;
    int scoped = 0;
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) {
        int m = module_of_name(t, g->nodes[i].name);
        if (m < 0) s = AIT_E_NOMEM;
        else s = add_node(t, m, i);
        scoped += m > 0;
    }
    t->from_scopes = scoped > 0;
    if (s == AIT_OK && !t->from_scopes) { /* start again with the fallback */
        free(t->mods[0].nodes);
        t->mods[0].nodes = NULL;
        t->mods[0].n_nodes = 0;
        s = build_segments(g, t, e);
    }
    if (s != AIT_OK) {
        modules_free(t);
        return e && e->code == s ? s : err_set(e, s, "out of memory building the module tree");
    }
    *out = t;
    return AIT_OK;
}

void modules_free(module_tree *t)
{
    if (!t) return;
    for (int i = 0; i < t->n; i++) {
        free(t->mods[i].name);
        free(t->mods[i].children);
        free(t->mods[i].nodes);
    }
    free(t->mods);
    free(t->node_module);
    free(t);
}

bool module_contains(const module_tree *t, int m, int n)
{
    for (int cur = t->node_module[n]; cur >= 0; cur = t->mods[cur].parent)
        if (cur == m) return true;
    return false;
}

ait_status module_ports(const graph *g, const module_tree *t, int m, int **ins, int *n_in,
                        int **outs, int *n_out, ait_error *e)
{
    int nv = g->n_vals;
    /* 1: read inside, 2: produced inside, 4: read outside or a graph output */
    unsigned char *f = calloc((size_t)nv + 1, 1);
    *ins = malloc(sizeof(int) * (size_t)(nv + 1));
    *outs = malloc(sizeof(int) * (size_t)(nv + 1));
    if (!f || !*ins || !*outs) {
        free(f);
        free(*ins);
        free(*outs);
        *ins = *outs = NULL;
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        bool inside = module_contains(t, m, i);
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) f[n->in[k]] |= inside ? 1 : 4;
        int *cap, n_cap; /* what its subgraphs read counts as read by the node */
        if (node_captures(n, &cap, &n_cap, e) != AIT_OK) {
            free(f);
            free(*ins);
            free(*outs);
            *ins = *outs = NULL;
            return AIT_E_NOMEM;
        }
        for (int k = 0; k < n_cap; k++) f[cap[k]] |= inside ? 1 : 4;
        free(cap);
        for (int k = 0; inside && k < n->n_out; k++)
            if (n->out[k] >= 0) f[n->out[k]] |= 2;
    }
    for (int j = 0; j < g->n_outputs; j++) f[g->outputs[j]] |= 4;
    *n_in = *n_out = 0;
    for (int v = 0; v < nv; v++) {
        if ((f[v] & 1) && !(f[v] & 2) && !g->vals[v].konst) (*ins)[(*n_in)++] = v;
        if ((f[v] & 2) && (f[v] & 4)) (*outs)[(*n_out)++] = v;
    }
    free(f);
    return AIT_OK;
}
