/* Tree ensembles of ai.onnx.ml: TreeEnsembleRegressor and
 * TreeEnsembleClassifier (versions 1 and 3; 3 adds the `_as_tensor`
 * doubles; both deprecated, i.e. removed, in ml opset 5) and TreeEnsemble 5
 * (interior nodes and leaves apart, set membership, int enums).
 *
 * Each run compiles the attributes into one form (ens: nodes with their
 * children as indices, leaves with their weights), checking every index an
 * attribute holds and that no tree has a cycle, then walks each row down
 * every tree. Computed in double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ml_common.h"

enum { B_LEQ, B_LT, B_GTE, B_GT, B_EQ, B_NEQ, B_MEMBER, B_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX }; /* TreeEnsemble's numbering */

typedef struct tnode {
    double split;
    int64_t feature;
    int32_t t, f;   /* children: node indices */
    int32_t w0, wn; /* a leaf's weights, a member node's set: [w0, w0 + wn) */
    uint8_t mode, nan_true;
} tnode;

typedef struct ens {
    tnode *nodes;
    int32_t n_nodes;
    int32_t *roots;
    int32_t n_roots;
    int32_t *wid; /* leaf weights: target or class, value */
    double *wval;
    int32_t n_w;
    double *sets;  /* member nodes' sets */
    int64_t n_out; /* targets or classes */
    int64_t max_feature;
    int agg, post;
    ml_vec base;
    double *s;   /* one row's scores: n_out + 2 */
    uint8_t *has; /* which of them a leaf gave */
} ens;

/* ---- checks common to both encodings ------------------------------------ */

/* Every node reachable from a root is visited once, depth first with an
 * explicit stack; reaching a node that is on the stack is a cycle. */
static ait_status check_acyclic(op_ctx *c, const ens *e, uint8_t *state, int32_t *stack,
                                uint8_t *side)
{
    memset(state, 0, (size_t)e->n_nodes);
    for (int32_t r = 0; r < e->n_roots; r++) {
        int32_t top = 0;
        if (state[e->roots[r]]) continue;
        stack[top] = e->roots[r];
        side[top++] = 0;
        state[e->roots[r]] = 1;
        while (top) {
            int32_t i = stack[top - 1];
            const tnode *nd = &e->nodes[i];
            if (nd->mode == B_LEAF || side[top - 1] == 2) {
                state[i] = 2;
                top--;
                continue;
            }
            int32_t next = side[top - 1]++ == 0 ? nd->t : nd->f;
            if (state[next] == 1)
                return err_set(c->err, AIT_E_INVALID_ARG, "the trees have a cycle through node "
                               "%d", (int)next);
            if (state[next] == 2) continue;
            state[next] = 1;
            stack[top] = next;
            side[top++] = 0;
        }
    }
    return AIT_OK;
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

/* ---- the legacy encoding (TreeEnsembleRegressor/Classifier 1, 3) --------- */

typedef struct legacy {
    ml_vec tree, id, feat, tru, fal, nan, vals, w_tree, w_node, w_id, w_val;
    const attr *modes;
    const char *prefix; /* "target" or "class" */
} legacy;

static ait_status legacy_attrs(op_ctx *c, legacy *L, const char *prefix)
{
    char a[64], b[64];
    L->prefix = prefix;
    ml_ints(c, "nodes_treeids", &L->tree);
    ml_ints(c, "nodes_nodeids", &L->id);
    ml_ints(c, "nodes_featureids", &L->feat);
    ml_ints(c, "nodes_truenodeids", &L->tru);
    ml_ints(c, "nodes_falsenodeids", &L->fal);
    ml_ints(c, "nodes_missing_value_tracks_true", &L->nan);
    TRY(ml_floats(c, "nodes_values", "nodes_values_as_tensor", &L->vals));
    L->modes = node_attr(c->n, "nodes_modes");
    int64_t n = L->id.n;
    if (!L->modes || L->modes->type != ATTR_STRINGS || L->modes->n != n)
        return err_set(c->err, AIT_E_INVALID_ARG, "nodes_modes must list one mode per node (%lld "
                       "nodes)", (long long)n);
    if (n < 1) return err_set(c->err, AIT_E_INVALID_ARG, "the ensemble has no nodes");
    if (n > INT32_MAX / 2) return err_set(c->err, AIT_E_UNSUPPORTED, "too many nodes");
    TRY(ml_len(c, &L->tree, n, "nodes_treeids"));
    TRY(ml_len(c, &L->feat, n, "nodes_featureids"));
    TRY(ml_len(c, &L->tru, n, "nodes_truenodeids"));
    TRY(ml_len(c, &L->fal, n, "nodes_falsenodeids"));
    TRY(ml_len(c, &L->vals, n, "nodes_values"));
    if (L->nan.n) TRY(ml_len(c, &L->nan, n, "nodes_missing_value_tracks_true"));
    snprintf(a, sizeof a, "%s_treeids", prefix);
    ml_ints(c, a, &L->w_tree);
    snprintf(a, sizeof a, "%s_nodeids", prefix);
    ml_ints(c, a, &L->w_node);
    snprintf(a, sizeof a, "%s_ids", prefix);
    ml_ints(c, a, &L->w_id);
    snprintf(a, sizeof a, "%s_weights", prefix);
    snprintf(b, sizeof b, "%s_weights_as_tensor", prefix);
    TRY(ml_floats(c, a, b, &L->w_val));
    int64_t w = L->w_val.n;
    if (w > INT32_MAX / 2) return err_set(c->err, AIT_E_UNSUPPORTED, "too many leaf weights");
    snprintf(a, sizeof a, "%s_treeids", prefix);
    TRY(ml_len(c, &L->w_tree, w, a));
    snprintf(a, sizeof a, "%s_nodeids", prefix);
    TRY(ml_len(c, &L->w_node, w, a));
    snprintf(a, sizeof a, "%s_ids", prefix);
    return ml_len(c, &L->w_id, w, a);
}

/* Nodes by (tree id, node id), for binary search. */
typedef struct nkey {
    int64_t tree, id;
    int32_t at;
} nkey;

static int by_tree_node(const void *pa, const void *pb)
{
    const nkey *a = pa, *b = pb;
    int r = cmp_i64(a->tree, b->tree);
    return r ? r : cmp_i64(a->id, b->id);
}

/* The index of node (tree, id), or -1. */
static int32_t find_node(const nkey *keys, int32_t n, int64_t tree, int64_t id)
{
    nkey q = {tree, id, 0};
    const nkey *k = bsearch(&q, keys, (size_t)n, sizeof q, by_tree_node);
    return k ? k->at : -1;
}

static ait_status legacy_mode(op_ctx *c, const char *s, int i, uint8_t *mode)
{
    static const char *const names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
                                        "BRANCH_EQ",  "BRANCH_NEQ", NULL,        "LEAF"};
    for (int k = 0; k < 8; k++)
        if (names[k] && strcmp(s, names[k]) == 0) {
            *mode = (uint8_t)k;
            return AIT_OK;
        }
    return err_set(c->err, AIT_E_INVALID_ARG, "node %d has mode '%s'; one of BRANCH_LEQ, "
                   "BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF", i, s);
}

/* Compiles the legacy attributes into e (n_out set by the caller). */
static ait_status legacy_compile(op_ctx *c, const char *prefix, ens *e)
{
    legacy L;
    TRY(legacy_attrs(c, &L, prefix));
    int32_t n = (int32_t)L.id.n, w = (int32_t)L.w_val.n;
    size_t sz[10] = {sizeof(tnode) * (size_t)n, sizeof(int32_t) * (size_t)n,
                     sizeof(int32_t) * (size_t)w, sizeof(double) * (size_t)w,
                     sizeof(nkey) * (size_t)n, (size_t)n, sizeof(int32_t) * (size_t)n,
                     (size_t)n, sizeof(double) * (size_t)(e->n_out + 2), (size_t)e->n_out + 2};
    void *p[10];
    TRY(op_scratch_parts(c, 10, sz, p));
    e->s = p[8];
    e->has = p[9];
    e->nodes = p[0];
    e->roots = p[1];
    e->wid = p[2];
    e->wval = p[3];
    nkey *keys = p[4];
    int32_t *stack = p[6];
    uint8_t *state = p[5], *side = p[7];
    e->n_nodes = n;
    for (int32_t i = 0; i < n; i++) keys[i] = (nkey){L.tree.i[i], L.id.i[i], i};
    qsort(keys, (size_t)n, sizeof *keys, by_tree_node);
    for (int32_t k = 1; k < n; k++)
        if (!by_tree_node(&keys[k], &keys[k - 1]))
            return err_set(c->err, AIT_E_INVALID_ARG, "node id %lld appears twice in tree %lld",
                           (long long)keys[k].id, (long long)keys[k].tree);
    memset(state, 0, sz[5]); /* 1: someone's child */
    e->max_feature = -1;
    for (int32_t i = 0; i < n; i++) {
        tnode *nd = &e->nodes[i];
        memset(nd, 0, sizeof *nd);
        TRY(legacy_mode(c, L.modes->strings[i], i, &nd->mode));
        nd->nan_true = L.nan.n && L.nan.i[i] != 0;
        if (nd->mode == B_LEAF) continue;
        nd->split = ml_at(&L.vals, i);
        nd->feature = L.feat.i[i];
        if (nd->feature < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "node %d reads feature %lld", (int)i,
                           (long long)nd->feature);
        if (nd->feature > e->max_feature) e->max_feature = nd->feature;
        int32_t t = find_node(keys, n, L.tree.i[i], L.tru.i[i]);
        int32_t f = find_node(keys, n, L.tree.i[i], L.fal.i[i]);
        if (t < 0 || f < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "node %d (tree %lld, id %lld): its %s branch "
                           "goes to node id %lld, which tree %lld does not have", (int)i,
                           (long long)L.tree.i[i], (long long)L.id.i[i], t < 0 ? "true" : "false",
                           (long long)(t < 0 ? L.tru.i[i] : L.fal.i[i]), (long long)L.tree.i[i]);
        nd->t = t;
        nd->f = f;
        state[t] = state[f] = 1;
    }
    e->n_roots = 0;
    for (int32_t i = 0; i < n; i++)
        if (!state[i]) e->roots[e->n_roots++] = i;
    if (!e->n_roots) return err_set(c->err, AIT_E_INVALID_ARG, "the trees have a cycle: every "
                                    "node is some node's child");
    /* Leaf weights, grouped by leaf in their given order. */
    for (int32_t k = 0; k < w; k++) {
        int32_t i = find_node(keys, n, L.w_tree.i[k], L.w_node.i[k]);
        if (i < 0 || e->nodes[i].mode != B_LEAF)
            return err_set(c->err, AIT_E_INVALID_ARG, "%s weight %d is for node id %lld of tree "
                           "%lld, which %s", prefix, (int)k, (long long)L.w_node.i[k],
                           (long long)L.w_tree.i[k], i < 0 ? "does not exist" : "is not a leaf");
        if (L.w_id.i[k] < 0 || L.w_id.i[k] >= e->n_out)
            return err_set(c->err, AIT_E_INVALID_ARG, "%s weight %d is for %s %lld; there are %lld",
                           prefix, (int)k, prefix, (long long)L.w_id.i[k], (long long)e->n_out);
        e->nodes[i].wn++;
    }
    int32_t off = 0;
    for (int32_t i = 0; i < n; i++) {
        e->nodes[i].w0 = off;
        off += e->nodes[i].wn;
        e->nodes[i].wn = 0;
    }
    e->n_w = w;
    for (int32_t k = 0; k < w; k++) {
        tnode *nd = &e->nodes[find_node(keys, n, L.w_tree.i[k], L.w_node.i[k])];
        int32_t at = nd->w0 + nd->wn++;
        e->wid[at] = (int32_t)L.w_id.i[k];
        e->wval[at] = ml_at(&L.w_val, k);
    }
    return check_acyclic(c, e, state, stack, side);
}

/* ---- TreeEnsemble 5 ------------------------------------------------------ */

static ait_status te5_compile(op_ctx *c, ens *e)
{
    ml_vec feat, tru, tleaf, fal, fleaf, nan, roots, tid, modes, splits, wts, members;
    ml_ints(c, "nodes_featureids", &feat);
    ml_ints(c, "nodes_truenodeids", &tru);
    ml_ints(c, "nodes_trueleafs", &tleaf);
    ml_ints(c, "nodes_falsenodeids", &fal);
    ml_ints(c, "nodes_falseleafs", &fleaf);
    ml_ints(c, "nodes_missing_value_tracks_true", &nan);
    ml_ints(c, "tree_roots", &roots);
    ml_ints(c, "leaf_targetids", &tid);
    TRY(ml_tensor(c, "nodes_modes", &modes, false));
    TRY(ml_tensor(c, "nodes_splits", &splits, false));
    TRY(ml_tensor(c, "leaf_weights", &wts, false));
    TRY(ml_tensor(c, "membership_values", &members, false));
    int64_t n = feat.n, l = tid.n;
    if (n < 1 || roots.n < 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "the ensemble needs nodes and tree_roots");
    if (n > INT32_MAX / 4 || l > INT32_MAX / 4 || members.n > INT32_MAX / 4)
        return err_set(c->err, AIT_E_UNSUPPORTED, "too many nodes or leaves");
    TRY(ml_len(c, &modes, n, "nodes_modes"));
    TRY(ml_len(c, &splits, n, "nodes_splits"));
    TRY(ml_len(c, &tru, n, "nodes_truenodeids"));
    TRY(ml_len(c, &tleaf, n, "nodes_trueleafs"));
    TRY(ml_len(c, &fal, n, "nodes_falsenodeids"));
    TRY(ml_len(c, &fleaf, n, "nodes_falseleafs"));
    if (nan.n) TRY(ml_len(c, &nan, n, "nodes_missing_value_tracks_true"));
    TRY(ml_len(c, &wts, l, "leaf_weights"));
    if (!dtype_is_int(modes.dt))
        return err_set(c->err, AIT_E_DTYPE, "nodes_modes must be a uint8 tensor");
    int32_t total = (int32_t)(n + l);
    size_t sz[10] = {sizeof(tnode) * (size_t)total, sizeof(int32_t) * (size_t)roots.n,
                     sizeof(int32_t) * (size_t)l, sizeof(double) * (size_t)l,
                     sizeof(double) * (size_t)members.n, (size_t)total,
                     sizeof(int32_t) * (size_t)total, (size_t)total,
                     sizeof(double) * (size_t)(e->n_out + 2), (size_t)e->n_out + 2};
    void *p[10];
    TRY(op_scratch_parts(c, 10, sz, p));
    e->s = p[8];
    e->has = p[9];
    e->nodes = p[0];
    e->roots = p[1];
    e->wid = p[2];
    e->wval = p[3];
    e->sets = p[4];
    e->n_nodes = total;
    e->n_roots = (int32_t)roots.n;
    e->n_w = (int32_t)l;
    e->max_feature = -1;
    int32_t set_at = 0;
    for (int32_t i = 0; i < (int32_t)n; i++) {
        tnode *nd = &e->nodes[i];
        memset(nd, 0, sizeof *nd);
        int64_t m = (int64_t)ml_at(&modes, i);
        if (m < B_LEQ || m > B_MEMBER)
            return err_set(c->err, AIT_E_INVALID_ARG, "node %d has mode %lld; 0 to 6 (BRANCH_LEQ "
                           "to BRANCH_MEMBER)", (int)i, (long long)m);
        nd->mode = (uint8_t)m;
        nd->nan_true = nan.n && nan.i[i] != 0;
        nd->split = ml_at(&splits, i);
        nd->feature = feat.i[i];
        if (nd->feature < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "node %d reads feature %lld", (int)i,
                           (long long)nd->feature);
        if (nd->feature > e->max_feature) e->max_feature = nd->feature;
        int64_t kid[2] = {tru.i[i], fal.i[i]}, leaf[2] = {tleaf.i[i], fleaf.i[i]};
        for (int s = 0; s < 2; s++) {
            int64_t lim = leaf[s] ? l : n;
            if (kid[s] < 0 || kid[s] >= lim)
                return err_set(c->err, AIT_E_INVALID_ARG, "node %d: its %s branch goes to %s %lld; "
                               "there are %lld", (int)i, s ? "false" : "true",
                               leaf[s] ? "leaf" : "node", (long long)kid[s], (long long)lim);
            int32_t to = (int32_t)(leaf[s] ? n + kid[s] : kid[s]);
            if (s) nd->f = to;
            else nd->t = to;
        }
    }
    /* Sets: the k-th member node takes the k-th NaN-delimited run. */
    int64_t j = 0;
    for (int32_t i = 0; i < (int32_t)n; i++) {
        tnode *nd = &e->nodes[i];
        if (nd->mode != B_MEMBER) continue;
        if (j >= members.n)
            return err_set(c->err, AIT_E_INVALID_ARG, "node %d is a BRANCH_MEMBER node but "
                           "membership_values has no set left for it", (int)i);
        nd->w0 = set_at;
        for (; j < members.n; j++) {
            double v = ml_at(&members, j);
            if (isnan(v)) {
                j++;
                break;
            }
            e->sets[set_at++] = v;
        }
        nd->wn = set_at - nd->w0;
    }
    for (int32_t k = 0; k < (int32_t)l; k++) {
        tnode *nd = &e->nodes[n + k];
        memset(nd, 0, sizeof *nd);
        nd->mode = B_LEAF;
        nd->w0 = k;
        nd->wn = 1;
        if (tid.i[k] < 0 || tid.i[k] >= e->n_out)
            return err_set(c->err, AIT_E_INVALID_ARG, "leaf %d is for target %lld; n_targets is "
                           "%lld", (int)k, (long long)tid.i[k], (long long)e->n_out);
        e->wid[k] = (int32_t)tid.i[k];
        e->wval[k] = ml_at(&wts, k);
    }
    for (int32_t r = 0; r < e->n_roots; r++) {
        if (roots.i[r] < 0 || roots.i[r] >= n)
            return err_set(c->err, AIT_E_INVALID_ARG, "tree_roots[%d] is %lld; there are %lld "
                           "nodes", (int)r, (long long)roots.i[r], (long long)n);
        e->roots[r] = (int32_t)roots.i[r];
    }
    return check_acyclic(c, e, p[5], p[6], p[7]);
}

/* ---- evaluation ---------------------------------------------------------- */

static bool goes_true(const ens *e, const tnode *nd, double x)
{
    if (isnan(x) && nd->nan_true) return true;
    switch (nd->mode) {
    case B_LEQ: return x <= nd->split;
    case B_LT: return x < nd->split;
    case B_GTE: return x >= nd->split;
    case B_GT: return x > nd->split;
    case B_EQ: return x == nd->split;
    case B_NEQ: return x != nd->split;
    default:
        for (int32_t k = 0; k < nd->wn; k++)
            if (x == e->sets[nd->w0 + k]) return true;
        return false;
    }
}

/* Aggregates the leaves row r reaches into s[n_out], has[n_out]. */
static void eval_row(const ens *e, const tensor *x, int64_t r, int64_t nf, double *s,
                     uint8_t *has)
{
    memset(s, 0, sizeof *s * (size_t)e->n_out);
    memset(has, 0, (size_t)e->n_out);
    for (int32_t t = 0; t < e->n_roots; t++) {
        const tnode *nd = &e->nodes[e->roots[t]];
        while (nd->mode != B_LEAF) {
            double v = elem_get_f64(x->data, x->dtype, r * nf + nd->feature);
            nd = &e->nodes[goes_true(e, nd, v) ? nd->t : nd->f];
        }
        for (int32_t k = 0; k < nd->wn; k++) {
            int32_t o = e->wid[nd->w0 + k];
            double w = e->wval[nd->w0 + k];
            if (!has[o] || e->agg == AGG_SUM || e->agg == AGG_AVERAGE)
                s[o] = has[o] ? s[o] + w : w;
            else if (e->agg == AGG_MIN ? w < s[o] : w > s[o])
                s[o] = w;
            has[o] = 1;
        }
    }
    if (e->agg == AGG_AVERAGE)
        for (int64_t o = 0; o < e->n_out; o++) s[o] /= e->n_roots;
}

/* X [N,F] (or [F]): checks it and that every node's feature is in it. */
static ait_status x_rows(op_ctx *c, const ens *e, int64_t *n, int64_t *nf)
{
    TRY(ml_rows(c, c->in[0], n, nf));
    if (e && e->max_feature >= *nf)
        return err_set(c->err, AIT_E_SHAPE, "a node reads feature %lld but X has %lld features",
                       (long long)e->max_feature, (long long)*nf);
    return AIT_OK;
}

/* ---- regressors ---------------------------------------------------------- */

static ait_status legacy_agg(op_ctx *c, int *agg)
{
    static const char *const names[] = {"AVERAGE", "SUM", "MIN", "MAX"};
    return ml_enum(c, "aggregate_function", "SUM", names, 4, agg);
}

/* The settings of a regressor, without compiling its trees. */
static ait_status reg_setup(op_ctx *c, ens *e)
{
    memset(e, 0, sizeof *e);
    TRY(ml_post_attr(c, &e->post));
    e->n_out = attr_int(c->n, "n_targets", c->n->version >= 5 ? 0 : 1);
    if (e->n_out < 1 || e->n_out > INT32_MAX / 2)
        return err_set(c->err, AIT_E_INVALID_ARG, "n_targets must be at least 1, not %lld",
                       (long long)e->n_out);
    if (strcmp(c->n->op, "TreeEnsemble") == 0) {
        e->agg = (int)attr_int(c->n, "aggregate_function", AGG_SUM);
        if (e->agg < AGG_AVERAGE || e->agg > AGG_MAX)
            return err_set(c->err, AIT_E_INVALID_ARG, "aggregate_function %d is not one of 0 "
                           "(AVERAGE), 1 (SUM), 2 (MIN), 3 (MAX)", e->agg);
        return AIT_OK;
    }
    TRY(legacy_agg(c, &e->agg));
    TRY(ml_floats(c, "base_values", "base_values_as_tensor", &e->base));
    if (e->base.n && e->base.n != e->n_out)
        return err_set(c->err, AIT_E_INVALID_ARG, "base_values has %lld values; n_targets is %lld",
                       (long long)e->base.n, (long long)e->n_out);
    return AIT_OK;
}

static ait_status reg_infer(op_ctx *c)
{
    ens e;
    int64_t n, nf;
    TRY(reg_setup(c, &e));
    TRY(x_rows(c, NULL, &n, &nf));
    bool te5 = strcmp(c->n->op, "TreeEnsemble") == 0;
    ml_set_out2(c, 0, te5 ? c->in[0]->dtype : AIT_F32, n, e.n_out);
    return AIT_OK;
}

static ait_status reg_run(op_ctx *c)
{
    ens e;
    int64_t n, nf;
    TRY(reg_setup(c, &e));
    if (strcmp(c->n->op, "TreeEnsemble") == 0) TRY(te5_compile(c, &e));
    else TRY(legacy_compile(c, "target", &e));
    TRY(x_rows(c, &e, &n, &nf));
    double *sc = e.s;
    tensor *y = c->out[0];
    for (int64_t r = 0; r < n; r++) {
        eval_row(&e, c->in[0], r, nf, sc, e.has);
        for (int64_t o = 0; o < e.n_out; o++) sc[o] += e.base.n ? ml_at(&e.base, o) : 0;
        int k = ml_post(sc, (int)e.n_out, e.post, -1);
        for (int64_t o = 0; o < k && o < e.n_out; o++)
            elem_set_f64(y->data, y->dtype, r * e.n_out + o, sc[o]);
    }
    return AIT_OK;
}

/* ---- classifier ---------------------------------------------------------- */

static ait_status cls_setup(op_ctx *c, ens *e, ml_labels *labels)
{
    memset(e, 0, sizeof *e);
    e->agg = AGG_SUM;
    TRY(ml_post_attr(c, &e->post));
    TRY(ml_labels_attr(c, "classlabels_int64s", labels));
    e->n_out = labels->n;
    if (e->n_out < 2 || e->n_out > INT32_MAX / 2)
        return err_set(c->err, AIT_E_INVALID_ARG, "%s must list 2 classes or more, not %lld",
                       labels->name, (long long)e->n_out);
    TRY(ml_floats(c, "base_values", "base_values_as_tensor", &e->base));
    if (e->base.n && e->base.n != e->n_out && !(e->n_out == 2 && e->base.n == 1))
        return err_set(c->err, AIT_E_INVALID_ARG, "base_values has %lld values; there are %lld "
                       "classes", (long long)e->base.n, (long long)e->n_out);
    return AIT_OK;
}

static ait_status cls_infer(op_ctx *c)
{
    ens e;
    ml_labels labels;
    int64_t n, nf;
    TRY(cls_setup(c, &e, &labels));
    TRY(x_rows(c, NULL, &n, &nf));
    ml_labels_out(c, &labels, n);
    ml_set_out2(c, 1, AIT_F32, n, e.n_out);
    return AIT_OK;
}

/* Two classes, as ONNX Runtime: the leaves may score only one class (the
 * other is its opposite), so the label and the second score come from that
 * one score: above 0.5 (all weights >= 0, probabilities) or above 0 (mixed
 * signs, margins) is the second label. With both classes scored the label
 * is the top class (ONNX Runtime takes the second class whenever its score
 * is above 0). Returns the label index; *m, *second as ml_post takes them. */
static int binary_label(const ens *e, double *s, const uint8_t *has, bool one_id, bool all_pos,
                        int *m, int *second)
{
    *m = 2;
    *second = -1;
    if (e->base.n == 2) {
        s[0] += ml_at(&e->base, 0);
        s[1] += ml_at(&e->base, 1);
    } else if (e->base.n == 1) {
        s[0] += ml_at(&e->base, 0);
        if (!has[1]) *m = 1;
    } else {
        *second = 3;
        if (!has[1]) *m = 1;
    }
    double pos = *m == 2 && has[1] ? s[1] : has[0] ? s[0] : 0;
    if (one_id) {
        bool up = all_pos ? pos > 0.5 : pos > 0;
        *second = (all_pos ? 0 : 2) + !up;
        return up;
    }
    if (*m == 2) return s[1] > s[0];
    return pos > 0;
}

static ait_status cls_run(op_ctx *c)
{
    ens e;
    ml_labels labels;
    int64_t n, nf;
    TRY(cls_setup(c, &e, &labels));
    TRY(legacy_compile(c, "class", &e));
    TRY(x_rows(c, &e, &n, &nf));
    bool one_id = true, all_pos = true;
    for (int32_t k = 0; k < e.n_w; k++) {
        one_id &= e.wid[k] == e.wid[0];
        all_pos &= e.wval[k] >= 0;
    }
    one_id &= e.n_out == 2 && e.n_w > 0;
    float *z = has_out(c, 1) ? c->out[1]->data : NULL;
    double *s = e.s;
    for (int64_t r = 0; r < n; r++) {
        eval_row(&e, c->in[0], r, nf, s, e.has);
        int best = 0, m = (int)e.n_out, second = -1;
        if (e.n_out > 2) {
            for (int64_t k = 0; k < e.base.n; k++) {
                s[k] += ml_at(&e.base, k);
                e.has[k] = 1;
            }
            int b = -1;
            for (int k = 0; k < m; k++)
                if (e.has[k] && (b < 0 || s[k] > s[b])) b = k;
            best = b < 0 ? 0 : b;
        } else {
            best = binary_label(&e, s, e.has, one_id, all_pos, &m, &second);
        }
        TRY(ml_label_put(c, &labels, r, best));
        m = ml_post(s, m, e.post, second);
        for (int64_t k = 0; z && k < e.n_out; k++) z[r * e.n_out + k] = k < m ? (float)s[k] : 0.f;
    }
    return AIT_OK;
}

OP_TABLE(ml_tree,
         {.name = "TreeEnsembleRegressor", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = reg_infer, .run = reg_run, .domain = ML_DOMAIN},
         {.name = "TreeEnsembleClassifier", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 2,
          .flags = OP_STR_OWNS, .infer = cls_infer, .run = cls_run, .domain = ML_DOMAIN},
         {.name = "TreeEnsemble", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = reg_infer, .run = reg_run, .domain = ML_DOMAIN}, );
