/* The module tree (see modules.h for the naming rules and the fallback). */
#include "graph/modules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The fallback's sizes (modules.h). A node's fixed cost, in FLOPs, makes
 * element-wise glue count for something; a model whose segments would come
 * out smaller than MIN_SEG_FLOPS (or MIN_SEG_NODES nodes when costs are
 * unknown) gets fewer, down to one; a segment under MIN_FRAC of the target
 * is penalised so that glue joins a neighbour. */
#define NODE_FLOPS 1e4
#define MIN_SEG_FLOPS 2e7
#define MIN_SEG_NODES 8
#define MAX_SEGS 32
#define MIN_FRAC 0.25

/* Ops a backend fuses into the node before them (an activation after a
 * Conv, BatchNormalization folded into it): no cut falls before one. */
static const char *const fused_into_producer[] = {
    "Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu",
    "Selu", "Celu", "Gelu", "Softplus", "Mish", "ThresholdedRelu", "BatchNormalization", NULL};

static bool fuses_into_producer(const node *n)
{
    if (!onnx_domain_default(n->domain)) return false;
    for (int i = 0; fused_into_producer[i]; i++)
        if (!strcmp(n->op, fused_into_producer[i])) return true;
    return false;
}

/* cut[i]: whether the sequence may be cut after node i: a single computed
 * value (graph inputs count, constants do not) is live across, and the next
 * node does not fuse into its producer. */
static ait_status cut_points(const graph *g, bool *cut, ait_error *e)
{
    int nn = g->n_nodes, nv = g->n_vals;
    int *last = malloc(sizeof(int) * (size_t)(nv + 1));
    if (!last) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int v = 0; v < nv; v++) last[v] = -1;
    for (int i = 0; i < nn; i++) {
        const node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) last[n->in[k]] = i;
        int *cap, n_cap; /* what its subgraphs read is read by the node */
        if (node_captures(n, &cap, &n_cap, e) != AIT_OK) {
            free(last);
            return AIT_E_NOMEM;
        }
        for (int k = 0; k < n_cap; k++) last[cap[k]] = i;
        free(cap);
    }
    for (int j = 0; j < g->n_outputs; j++) last[g->outputs[j]] = nn; /* live to the end */
#define COUNTS(v) (!g->vals[v].konst && (g->vals[v].producer >= 0 || g->vals[v].is_input))
    int live = 0;
    for (int v = 0; v < nv; v++)
        if (g->vals[v].is_input && last[v] >= 0 && COUNTS(v)) live++;
    for (int i = 0; i < nn; i++) {
        const node *n = &g->nodes[i];
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && last[n->out[k]] > i) live++;
        /* values whose last reader is node i die here (once each) */
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            if (v >= 0 && last[v] == i && COUNTS(v)) live--, last[v] = -2;
        }
        int *cap, n_cap;
        if (node_captures(n, &cap, &n_cap, e) != AIT_OK) {
            free(last);
            return AIT_E_NOMEM;
        }
        for (int k = 0; k < n_cap; k++)
            if (last[cap[k]] == i && COUNTS(cap[k])) live--, last[cap[k]] = -2;
        free(cap);
        cut[i] = live == 1 && i + 1 < nn && !fuses_into_producer(&g->nodes[i + 1]);
    }
#undef COUNTS
    free(last);
    return AIT_OK;
}

/* A segment's penalty for cost r times the target: its squared distance,
 * and more when it is glue-sized. */
static double seg_penalty(double r) { return (r - 1) * (r - 1) + (r < MIN_FRAC ? 10 : 0); }

/* Fallback: cut the node sequence at cut points into segments of about
 * equal cost (modules.h), by dynamic programming over the cut points. */
static ait_status build_segments(const graph *g, modules_cost_fn cost_fn, module_tree *t,
                                 ait_error *e)
{
    int nn = g->n_nodes;
    if (nn == 0) return AIT_OK;
    bool *cut = calloc((size_t)nn, sizeof *cut);
    double *pre = calloc((size_t)nn + 1, sizeof *pre);  /* pre[i]: cost of nodes before i */
    int *pos = malloc(sizeof(int) * (size_t)(nn + 1)), *from = malloc(sizeof(int) * (size_t)(nn + 1));
    double *best = malloc(sizeof(double) * (size_t)(nn + 1));
    ait_status s = cut && pre && pos && from && best ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK) s = cut_points(g, cut, e);
    /* Costs: FLOPs when the graph's shapes give them, else node counts. */
    ait_error ce = {0};
    bool costed = s == AIT_OK && cost_fn && cost_fn(g, pre + 1, &ce) == AIT_OK;
    for (int i = 0; s == AIT_OK && i < nn; i++)
        pre[i + 1] = pre[i] + (costed ? pre[i + 1] + NODE_FLOPS : 1);
    int n_seg = 0;
    if (s == AIT_OK) {
        double total = pre[nn];
        int want = (int)lround(sqrt((double)nn));
        int cap = costed ? (int)(total / MIN_SEG_FLOPS) : nn / MIN_SEG_NODES;
        if (want > MAX_SEGS) want = MAX_SEGS;
        if (want > cap) want = cap;
        double target = total / (want > 1 ? want : 1);
        /* pos[0..np): the cut points, then the end; best[j]: least penalty
         * of segments ending at pos[j]; from[j]: the segment's start (-1:
         * the first node). One segment when the model is too small. */
        int np = 0;
        for (int i = 0; i + 1 < nn && want > 1; i++)
            if (cut[i]) pos[np++] = i;
        pos[np++] = nn - 1;
        for (int j = 0; j < np; j++) {
            best[j] = seg_penalty(pre[pos[j] + 1] / target);
            from[j] = -1;
            for (int m = 0; m < j; m++) {
                double p = best[m] + seg_penalty((pre[pos[j] + 1] - pre[pos[m] + 1]) / target);
                if (p < best[j]) best[j] = p, from[j] = m;
            }
        }
        /* Back from the end: the segments' last nodes, reversed into cut[]. */
        for (int i = 0; i < nn; i++) cut[i] = false;
        for (int j = np - 1; j >= 0; j = from[j]) cut[pos[j]] = true;
        int seg = -1;
        for (int i = 0; i < nn && s == AIT_OK; i++) {
            if (seg < 0) {
                char name[32];
                snprintf(name, sizeof name, "seg.%d", n_seg++);
                seg = add_module(t, name, 0);
                if (seg < 0) {
                    s = err_set(e, AIT_E_NOMEM, "out of memory");
                    break;
                }
            }
            s = add_node(t, seg, i);
            if (cut[i]) seg = -1;
        }
    }
    free(cut);
    free(pre);
    free(pos);
    free(from);
    free(best);
    return s == AIT_OK ? AIT_OK : e && e->code == s ? s : err_set(e, s, "out of memory");
}

/* Nodes with no scope in a scoped model (a tied LM head written in the
 * top module's forward, a final projection) run between the modules; a
 * run of them consecutive in the node order (so a convex subgraph) that
 * does real work becomes a module "unscoped.K" of its own, which the tuner
 * can select (modules.h). Needs costs; without them nothing moves. */
#define UNSCOPED_MIN_FLOPS 1e5
#define UNSCOPED_MIN_SHARE 0.01

static ait_status group_unscoped(const graph *g, modules_cost_fn cost_fn, module_tree *t,
                                 ait_error *e)
{
    int nn = g->n_nodes, n_root = t->mods[0].n_nodes;
    if (!cost_fn || n_root == 0) return AIT_OK;
    double *cost = calloc((size_t)nn + 1, sizeof *cost);
    int *keep = malloc(sizeof(int) * (size_t)n_root);
    if (!cost || !keep) {
        free(cost);
        free(keep);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    ait_error ce = {0};
    ait_status s = AIT_OK;
    if (cost_fn(g, cost, &ce) == AIT_OK) {
        double total = 0;
        for (int i = 0; i < nn; i++) total += cost[i];
        int *rn = t->mods[0].nodes, n_keep = 0, k = 0;
        for (int a = 0; a < n_root && s == AIT_OK;) {
            int b = a + 1; /* rn[a..b): consecutive node indices */
            while (b < n_root && rn[b] == rn[b - 1] + 1) b++;
            double work = 0;
            for (int i = a; i < b; i++) work += cost[rn[i]];
            char name[32];
            snprintf(name, sizeof name, "unscoped.%d", k);
            if (work >= UNSCOPED_MIN_FLOPS && work >= UNSCOPED_MIN_SHARE * total &&
                module_find(t, name) < 0) {
                int m = add_module(t, name, 0);
                k++;
                for (int i = a; i < b && s == AIT_OK; i++) s = m < 0 ? AIT_E_NOMEM : add_node(t, m, rn[i]);
            } else {
                for (int i = a; i < b; i++) keep[n_keep++] = rn[i];
            }
            a = b;
        }
        memcpy(t->mods[0].nodes, keep, sizeof(int) * (size_t)n_keep);
        t->mods[0].n_nodes = n_keep;
    }
    free(cost);
    free(keep);
    return s == AIT_OK ? AIT_OK : err_set(e, s, "out of memory");
}

/* Glue a scoped model leaves at the root (a Transpose or ReduceMean
 * between two modules, a LogSoftmax after the last) joins the module next
 * to it (modules.h): cheap data movement and element-wise ops only (a
 * table), never a node with subgraphs. */
static const char *const glue_ops[] = {
    "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
    "Gather", "Shape", "Size", "ConstantOfShape", "Expand", "ReduceMean", "ReduceSum", "ReduceMax",
    "Softmax", "LogSoftmax", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Clip",
    "HardSigmoid", "HardSwish", "Resize", NULL};

static bool is_glue(const node *n)
{
    if (!onnx_domain_default(n->domain)) return false;
    for (int a = 0; a < n->n_attr; a++)
        if (n->attrs[a].g) return false;
    for (int i = 0; glue_ops[i]; i++)
        if (!strcmp(n->op, glue_ops[i])) return true;
    return false;
}

/* The one module (not the root) holding every node that reads one of node
 * i's outputs (readers), or every node computing one of its inputs
 * (!readers); -1 when there are none, several, or one is the root or a
 * graph input/output stands in between. */
static int glue_side(const graph *g, const module_tree *t, int i, bool readers)
{
    const node *n = &g->nodes[i];
    int m = -1;
    if (readers) {
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            for (int j = 0; j < g->n_outputs; j++)
                if (g->outputs[j] == v) return -1;
            for (int r = i + 1; r < g->n_nodes; r++) {
                const node *x = &g->nodes[r];
                bool reads = false;
                for (int q = 0; q < x->n_in && !reads; q++) reads = x->in[q] == v;
                if (!reads) continue;
                int rm = t->node_module[r];
                if (rm == 0 || (m >= 0 && rm != m)) return -1;
                m = rm;
            }
        }
        return m;
    }
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v < 0 || g->vals[v].konst) continue;
        int p = g->vals[v].producer;
        if (p < 0) return -1; /* a graph input */
        int pm = t->node_module[p];
        if (pm == 0 || (m >= 0 && pm != m)) return -1;
        m = pm;
    }
    return m;
}

/* Moves root node i to module m, keeping both lists in node order. */
static ait_status glue_move(module_tree *t, int i, int m)
{
    module *r = &t->mods[0];
    for (int k = 0; k < r->n_nodes; k++)
        if (r->nodes[k] == i) {
            memmove(&r->nodes[k], &r->nodes[k + 1], sizeof(int) * (size_t)(r->n_nodes - k - 1));
            r->n_nodes--;
            break;
        }
    TRY(add_node(t, m, i));
    module *x = &t->mods[m];
    for (int k = x->n_nodes - 1; k > 0 && x->nodes[k - 1] > i; k--)
        x->nodes[k] = x->nodes[k - 1], x->nodes[k - 1] = i;
    return AIT_OK;
}

/* Whether module m (and each module above it but the root) still collapses
 * into one node at its last node's place once node i joins it: no node
 * outside it between its first node and its last (i or after) reads a value
 * it or i computes. */
static bool collapses_at(const graph *g, const module_tree *t, int m, int i)
{
    for (int a = m; a > 0; a = t->mods[a].parent) {
        int first = -1, last = i;
        for (int j = 0; j < g->n_nodes; j++)
            if (module_contains(t, a, j)) {
                if (first < 0) first = j;
                if (j > last) last = j;
            }
        for (int j = first + 1; first >= 0 && j < last; j++) {
            if (j == i || module_contains(t, a, j)) continue;
            const node *x = &g->nodes[j];
            for (int k = 0; k < x->n_attr; k++)
                if (x->attrs[k].g) return false; /* what its subgraphs read: not looked into */
            for (int q = 0; q < x->n_in; q++) {
                int v = x->in[q], p = v >= 0 ? g->vals[v].producer : -1;
                if (p == i || (p >= 0 && module_contains(t, a, p))) return false;
            }
        }
    }
    return true;
}

/* Glue whose inputs several modules compute (an FPN's top-down Add of a
 * lateral Conv's output and the coarser level upsampled): the module that
 * computes an input read by nothing else, so that its backend takes the
 * glue into that node's epilogue (the Conv's residual Add) instead of
 * the reference ops running it between modules; only where that module
 * still collapses at the glue's place. -1: none. */
static int glue_feeder(const graph *g, const module_tree *t, int i)
{
    const node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v < 0 || g->vals[v].konst || g->vals[v].producer < 0) continue;
        int m = t->node_module[g->vals[v].producer], readers = 0;
        if (m <= 0) continue;
        for (int j = 0; j < g->n_outputs; j++) readers += g->outputs[j] == v;
        for (int r = 0; r < g->n_nodes && readers < 2; r++)
            for (int q = 0; q < g->nodes[r].n_in; q++) readers += g->nodes[r].in[q] == v;
        if (readers == 1 && collapses_at(g, t, m, i)) return m;
    }
    return -1;
}

/* First, from the last node back, glue whose outputs only one module reads
 * and that stands right before a node of it; then, forward, glue that
 * reads only one module's values and stands right after a node of it, or
 * else whose input only it reads comes from a module that still collapses
 * with it (glue_feeder). The neighbour in the node order keeps the module
 * contiguous, so it is still cut out and collapsed as one piece; the
 * feeder's check keeps it collapsible around the nodes in between. */
static ait_status join_glue(const graph *g, module_tree *t)
{
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < g->n_nodes; s++) {
            int i = pass == 0 ? g->n_nodes - 1 - s : s, nb = pass == 0 ? i + 1 : i - 1;
            if (t->node_module[i] != 0 || nb < 0 || nb >= g->n_nodes || !is_glue(&g->nodes[i]))
                continue;
            int m = glue_side(g, t, i, pass == 0);
            if (m <= 0 || t->node_module[nb] != m) m = pass == 1 ? glue_feeder(g, t, i) : -1;
            if (m > 0) TRY(glue_move(t, i, m));
        }
    return AIT_OK;
}

ait_status modules_build(const graph *g, modules_cost_fn cost, module_tree **out, ait_error *e)
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
        s = build_segments(g, cost, t, e);
    } else if (s == AIT_OK) {
        s = group_unscoped(g, cost, t, e);
        if (s == AIT_OK) s = join_glue(g, t);
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
