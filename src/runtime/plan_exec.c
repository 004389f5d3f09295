/* The plan runner (see plan_exec.h).
 *
 * The composite graph is a view of the model's graph (graph.h `borrowed`)
 * with the same values; its nodes are the model's nodes outside the tuned
 * modules, in their order, and one node per tuned module ("Module", domain
 * "ai.ait") standing where the module's last node stood, reading the
 * module's input ports and writing its output ports. That place is right
 * when no outside node between the module's first and last nodes reads what
 * the module computes (exported scopes are contiguous, so this holds for
 * them); otherwise the module cannot be collapsed and creation fails. */
#include "runtime/plan_exec.h"

#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "graph/extract.h"
#include "exec/exec.h"
#include "exec/node_costs.h"
#include "graph/modules.h"

typedef struct pe_build {
    const backend *b;
    built *bm;
} pe_build;

/* Inputs or outputs of a collapsed module, at most. */
#define MODULE_MAX_PORTS 512

typedef struct pe_slot {
    int module;                      /* in the tree */
    /* Every bucket keeps the baseline: the module is not collapsed, its
     * nodes run on the reference ops in the composite graph, exactly as the
     * untuned model runs them (no build, no copies at its boundary). */
    bool inline_nodes;
    char *node_name;                 /* "module:layer1" */
    graph *sub;                      /* the module on its own, for the backends */
    pe_build builds[PLAN_MAX_BUCKETS]; /* per bucket index (the plan's choices) */
} pe_slot;

struct plan_exec {
    const plan *p;
    module_tree *tree;
    graph *comp;
    int n_slots;
    pe_slot *slots;
    int *slot_of_node;               /* per composite node: its slot, or -1 */
    /* Per bucket, the composite graph's executor: each keeps the schedule
     * and buffers of its bucket's shapes, so a run after another bucket's
     * does not schedule the model again (its modules' builds are per bucket
     * too). */
    exec *xs[PLAN_MAX_BUCKETS];
    int n_xs;
    int bucket;                      /* bucket index of the current run */
    gemm_report *rep;                /* the native backend's GEMMs are said there, or NULL */
    int primed;                      /* buckets whose priming run succeeded */
    size_t *out_bytes;               /* per bucket, per output: bytes its priming run gave */
    kv_view *kv;                     /* the caches of the coming runs (model ports), or NULL */
    int n_kv;
};

/* Caches one module call may append in place, at most. */
#define MODULE_MAX_KV 128

static ait_status module_infer(op_ctx *c)
{
    (void)c;
    return AIT_DEFER; /* shapes come from the run (OP_ALLOCS_OUTPUTS) */
}

static ait_status module_run(op_ctx *c)
{
    plan_exec *px = exec_user(c->x);
    int ni = (int)(c->n - c->g->nodes);
    const pe_slot *sl = &px->slots[px->slot_of_node[ni]];
    const pe_build *pb = &sl->builds[px->bucket];
    tensor *outs[MODULE_MAX_PORTS], *dest[MODULE_MAX_PORTS];
    bool into = false;
    /* outputs the caller bound (a decoder's present cache, its logits),
     * and the executor's tensors that hold storage from an earlier run:
     * written there by the backend that can (one that cannot at this shape
     * leaves them), not copied after */
    for (int j = 0; j < c->n_out; j++) {
        const tensor *o = c->out[j];
        dest[j] = o && (exec_output_bound(c->x, c->n->out[j]) ||
                        (pb->b->run_into && o->kind == VAL_TENSOR && o->data && o->owned))
                      ? c->out[j]
                      : NULL;
        into |= dest[j] != NULL;
    }
    /* the caches this module appends in place (plan_exec_kv_set checked
     * that it reads each past and writes its present, on a backend that can) */
    kv_view kv[MODULE_MAX_KV];
    int n_kv = 0;
    for (int k = 0; k < px->n_kv; k++) {
        int pv = px->comp->inputs[px->kv[k].in], ov = px->comp->outputs[px->kv[k].out], a = -1;
        for (int i = 0; i < c->n_in && a < 0; i++)
            if (c->n->in[i] == pv) a = i;
        if (a < 0) continue;
        kv[n_kv] = px->kv[k];
        kv[n_kv].in = a, kv[n_kv].out = -1, kv[n_kv].copied = false;
        for (int j = 0; j < c->n_out; j++)
            if (c->n->out[j] == ov && dest[j]) kv[n_kv].out = j;
        if (kv[n_kv].out < 0 || ++n_kv == MODULE_MAX_KV)
            return err_set(c->err, AIT_E_INTERNAL, "%s: a key/value cache it cannot append",
                           c->n->name);
    }
    if (n_kv) TRY(pb->b->run_kv(pb->bm, c->in, dest, kv, n_kv, outs, c->err));
    else if (into && pb->b->run_into) TRY(pb->b->run_into(pb->bm, c->in, dest, outs, c->err));
    else TRY(pb->b->run(pb->bm, c->in, outs, c->err));
    for (int k = 0, m = 0; k < px->n_kv && m < n_kv; k++) /* in kv's order */
        if (c->n->in[kv[m].in] == px->comp->inputs[px->kv[k].in]) px->kv[k].copied = kv[m++].copied;
    for (int j = 0; j < c->n_out; j++)
        if (c->out[j]) TRY(tensor_copy_into(c->out[j], outs[j], c->err));
    return AIT_OK;
}

static const op_def module_op = {.name = "Module", .domain = "ai.ait", .min_in = 0,
                                 .max_in = MODULE_MAX_PORTS, .min_out = 1,
                                 .max_out = MODULE_MAX_PORTS,
                                 .flags = OP_ALLOCS_OUTPUTS | OP_STR_OWNS,
                                 .infer = module_infer,
                                 .run = module_run};

void plan_exec_free(plan_exec *px)
{
    if (!px) return;
    for (int k = 0; k < px->n_xs; k++) exec_free(px->xs[k]);
    for (int i = 0; px->slots && i < px->n_slots; i++) {
        pe_slot *sl = &px->slots[i];
        for (int k = 0; k < PLAN_MAX_BUCKETS; k++)
            if (sl->builds[k].bm) sl->builds[k].b->free(sl->builds[k].bm);
        graph_free(sl->sub);
        free(sl->node_name);
    }
    graph_free(px->comp);
    free(px->slots);
    free(px->slot_of_node);
    free(px->out_bytes);
    modules_free(px->tree);
    free(px);
}

/* Builds the candidate of every bucket of slot i's module: one build per
 * bucket even when buckets chose the same candidate, since backends prepare
 * per input shape (and keep one): each build stays primed for its bucket.
 * Prepared blobs are shared: they are the same bytes in the mapping. */
static ait_status build_slot(plan_exec *px, const graph *g, int i, ait_error *e)
{
    const plan_module *pm = &px->p->mods[i];
    pe_slot *sl = &px->slots[i];
    if (sl->inline_nodes) return AIT_OK;
    TRY(graph_extract(g, px->tree, sl->module, &sl->sub, e));
    for (int k = 0; k < pm->n_choices; k++) {
        const plan_choice *c = &pm->choices[k];
        pe_build *pb = &sl->builds[k];
        for (int j = 0; c->prep_node && j < c->prep.n; j++) { /* bound to this module's node */
            const node *n = plan_blob_node(sl->sub, c->prep.blobs[j].name);
            bool own = !c->prep_node[j][0]; /* the module's own: it may not name a node */
            if (own ? n != NULL : !n || strcmp(n->name, c->prep_node[j]) != 0)
                return err_set(e, AIT_E_SECURITY, "module '%s', candidate %s: prepared blob '%s' "
                               "was prepared for node '%s', which is not that node of this "
                               "module ('%s')", pm->name, c->cand, c->prep.blobs[j].name,
                               c->prep_node[j], n ? n->name : "none");
            int ws[64]; /* a BatchNormalization the module may have folded into it is bound too */
            if (n && !c->prep_bn[j] && plan_blob_weights(sl->sub, n, true, ws, 64) >
                                           plan_blob_weights(sl->sub, n, false, ws, 64))
                return err_set(e, AIT_E_SECURITY, "module '%s', candidate %s: prepared blob '%s' "
                               "is not bound to the weights of the BatchNormalization after node "
                               "'%s'", pm->name, c->cand, c->prep.blobs[j].name, n->name);
        }
        pb->b = backend_find(c->cfg.backend);
        if (!pb->b)
            return err_set(e, AIT_E_UNSUPPORTED, "module '%s': no backend '%s'", pm->name,
                           c->cfg.backend);
        candidate_cfg cfg = c->cfg;
        if (px->rep) cfg.gemm_seen = gemm_report_seen, cfg.gemm_seen_user = px->rep;
        ait_status s = pb->b->build(pb->b, sl->sub, &cfg, &pb->bm, e);
        if (s != AIT_OK) {
            err_prefix(e, "module '%s', candidate %s: ", pm->name, c->cand);
            return s;
        }
    }
    return AIT_OK;
}

/* Whether an outside node between the module's first and last nodes reads
 * one of its values (or holds a subgraph, which might). */
static bool read_inside(const graph *g, const int *owner, int slot, int first, int last)
{
    for (int i = first + 1; i < last; i++) {
        const node *n = &g->nodes[i];
        if (owner[i] == slot) continue;
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g) return true;
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k], pr = v >= 0 ? g->vals[v].producer : -1;
            if (pr >= 0 && owner[pr] == slot) return true;
        }
    }
    return false;
}

static ait_status copy_ids(int **dst, const int *src, int n, ait_error *e)
{
    *dst = malloc(sizeof(int) * (size_t)(n + 1));
    if (!*dst) return err_set(e, AIT_E_NOMEM, "out of memory");
    if (n) memcpy(*dst, src, sizeof(int) * (size_t)n);
    return AIT_OK;
}

/* The composite graph; owner[i] is node i's slot or -1. */
static ait_status make_composite(plan_exec *px, const graph *g, const int *owner, ait_error *e)
{
    int np = px->n_slots, *last = malloc(sizeof(int) * (size_t)(np + 1));
    graph *x = graph_new(NULL, g->opset, g->path);
    if (!x || !last) {
        free(last);
        graph_free(x);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    x->borrowed = true;
    px->comp = x;
    for (int j = 0; j < np; j++) last[j] = -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (owner[i] >= 0) last[owner[i]] = i;
    for (int j = 0; j < np; j++) {
        if (px->slots[j].inline_nodes) continue;
        int first = -1;
        for (int i = 0; i < g->n_nodes && first < 0; i++)
            if (owner[i] == j) first = i;
        if (first < 0 || read_inside(g, owner, j, first, last[j])) {
            free(last);
            return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s' cannot be run as one piece: %s",
                           g->path, px->p->mods[j].name, first < 0 ? "it has no nodes"
                           : "nodes outside it, between its nodes, read what it computes");
        }
    }
    x->vals = calloc((size_t)g->n_vals + 1, sizeof *x->vals);
    x->nodes = calloc((size_t)g->n_nodes + 1, sizeof *x->nodes);
    px->slot_of_node = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    ait_status s = x->vals && x->nodes && px->slot_of_node ? AIT_OK
                 : err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK) {
        memcpy(x->vals, g->vals, sizeof *x->vals * (size_t)g->n_vals);
        x->n_vals = x->cap_vals = g->n_vals;
        s = copy_ids(&x->inputs, g->inputs, g->n_inputs, e);
    }
    if (s == AIT_OK) s = copy_ids(&x->outputs, g->outputs, g->n_outputs, e);
    if (s == AIT_OK) x->n_inputs = g->n_inputs, x->n_outputs = g->n_outputs;
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) {
        int sl = owner[i];
        if (sl >= 0 && last[sl] != i) continue;
        node *n = &x->nodes[x->n_nodes];
        px->slot_of_node[x->n_nodes] = sl;
        if (sl < 0) {
            *n = g->nodes[i];
            n->in = n->out = NULL;
            x->n_nodes++;
            s = copy_ids(&n->in, g->nodes[i].in, n->n_in, e);
            if (s == AIT_OK) s = copy_ids(&n->out, g->nodes[i].out, n->n_out, e);
        } else {
            int *ins = NULL, *outs = NULL, ni = 0, no = 0;
            s = module_ports(g, px->tree, px->slots[sl].module, &ins, &ni, &outs, &no, e);
            if (s != AIT_OK) break;
            memset(n, 0, sizeof *n);
            n->name = px->slots[sl].node_name;
            n->op = (char *)module_op.name;
            n->domain = (char *)module_op.domain;
            n->def = &module_op;
            n->in = ins;
            n->out = outs;
            n->n_in = ni;
            n->n_out = no;
            x->n_nodes++;
            if (ni > module_op.max_in || no > module_op.max_out)
                s = err_set(e, AIT_E_UNSUPPORTED, "module '%s' has more than %d inputs or outputs",
                            px->p->mods[sl].name, module_op.max_in);
        }
        for (int k = 0; s == AIT_OK && k < n->n_out; k++)
            if (n->out[k] >= 0) x->vals[n->out[k]].producer = x->n_nodes - 1;
    }
    x->cap_nodes = x->n_nodes;
    free(last);
    return s;
}

/* Runs the model once per bucket on zeros of the bucket's input shapes, so
 * that everything done once per shape (the executor's plans and buffers,
 * oneDNN's primitives) is done at load and the first real run is as fast
 * as the next. A failure here (zeros a model rejects) only means the first
 * run does that work instead. */
static void prime(plan_exec *px)
{
    const plan *p = px->p;
    int n = p->n_inputs, n_out = px->comp->n_outputs;
    if (!n || n != px->comp->n_inputs || n > MODULE_MAX_PORTS || n_out > MODULE_MAX_PORTS) return;
    px->out_bytes = calloc((size_t)p->n_buckets * (size_t)n_out + 1, sizeof *px->out_bytes);
    for (int k = 0; k < p->n_buckets; k++) {
        tensor *in = calloc((size_t)n, sizeof *in), *ins[MODULE_MAX_PORTS];
        tensor *outs[MODULE_MAX_PORTS];
        ait_status s = in ? AIT_OK : AIT_E_NOMEM;
        ait_error e = {0};
        for (int i = 0; s == AIT_OK && i < n; i++) {
            const plan_shape *sh = &p->inputs[k * n + i];
            tensor_set_shape(&in[i], sh->dtype, sh->rank, sh->dims);
            s = tensor_alloc(&in[i], &e);
            if (s == AIT_OK) memset(in[i].data, 0, tensor_nbytes(&in[i]));
            ins[i] = &in[i];
        }
        if (s == AIT_OK && plan_exec_run(px, ins, outs, &e) == AIT_OK) {
            px->primed++;
            for (int j = 0; px->out_bytes && j < n_out; j++)
                px->out_bytes[(size_t)k * (size_t)n_out + (size_t)j] =
                    outs[j] && outs[j]->kind == VAL_TENSOR && outs[j]->dtype != AIT_STRING
                        ? tensor_nbytes(outs[j]) : 0;
        }
        for (int i = 0; in && i < n; i++) tensor_release(&in[i]);
        free(in);
    }
}

static size_t release_data(const plan_exec *px, graph *g);

/* plan_exec_create, and with release (g itself) plan_exec_create_releasing. */
static ait_status create(const graph *g, graph *release, const plan *p, int threads,
                         gemm_report *rep, size_t *freed, plan_exec **out, ait_error *e)
{
    *out = NULL;
    plan_exec *px = calloc(1, sizeof *px);
    if (!px) return err_set(e, AIT_E_NOMEM, "out of memory");
    px->p = p;
    px->rep = rep;
    px->n_slots = p->n_modules;
    int *owner = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    px->slots = calloc((size_t)p->n_modules + 1, sizeof *px->slots);
    ait_status s = owner && px->slots ? modules_build(g, exec_node_costs, &px->tree, e)
                 : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) owner[i] = -1;
    for (int j = 0; s == AIT_OK && j < p->n_modules; j++) {
        pe_slot *sl = &px->slots[j];
        sl->module = module_find(px->tree, p->mods[j].name);
        if (sl->module < 0) {
            s = err_set(e, AIT_E_INVALID_ARG, "%s: the plan tunes module '%s', which the model "
                        "does not have", g->path, p->mods[j].name);
            break;
        }
        size_t len = strlen(p->mods[j].name) + 16;
        if (!(sl->node_name = malloc(len))) s = err_set(e, AIT_E_NOMEM, "out of memory");
        else snprintf(sl->node_name, len, "module:%s", p->mods[j].name[0] ? p->mods[j].name : "(model)");
        for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) {
            if (!module_contains(px->tree, sl->module, i)) continue;
            if (owner[i] >= 0)
                s = err_set(e, AIT_E_INVALID_ARG, "%s: the plan's modules '%s' and '%s' overlap",
                            g->path, p->mods[owner[i]].name, p->mods[j].name);
            owner[i] = j;
        }
        sl->inline_nodes = true;
        for (int k = 0; k < p->mods[j].n_choices; k++) {
            const candidate_cfg *c = &p->mods[j].choices[k].cfg;
            sl->inline_nodes &= !strcmp(c->backend, "reference") && !c->variant[0];
        }
    }
    /* Modules on the baseline leave their nodes to the composite graph
     * (the overlap check above has seen them). */
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++)
        if (owner[i] >= 0 && px->slots[owner[i]].inline_nodes) owner[i] = -1;
    if (s == AIT_OK) s = make_composite(px, g, owner, e);
    for (int j = 0; s == AIT_OK && j < p->n_modules; j++) {
        s = build_slot(px, g, j, e);
        /* A module not built yet keeps what it reads (no build says it releases it) */
        if (s == AIT_OK && release && !px->slots[j].inline_nodes) *freed += release_data(px, release);
    }
#ifdef __GLIBC__
    /* The freed weights' pages go back before the priming's buffers come:
     * small ones sat inside the heap, where free keeps their pages, and the
     * priming, reusing them, peaked that much higher (mobilenetv2: 8 MB).
     * Only here: a trim after the priming unmapped the free blocks the
     * first run's output copies then faulted in. */
    if (s == AIT_OK && release && *freed) (void)malloc_trim(0);
#endif
    /* The collapsed nodes' def is module_op, so the plain executor runs them. */
    px->n_xs = p->n_buckets > 1 ? p->n_buckets : 1;
    for (int k = 0; s == AIT_OK && k < px->n_xs; k++) {
        s = exec_create(px->comp, NULL, threads, &px->xs[k], e);
        if (s == AIT_OK) exec_set_user(px->xs[k], px);
    }
    if (s == AIT_OK) prime(px);
    free(owner);
    if (s != AIT_OK) {
        plan_exec_free(px);
        return s;
    }
    *out = px;
    return AIT_OK;
}

ait_status plan_exec_create(const graph *g, const plan *p, int threads, gemm_report *rep,
                            plan_exec **out, ait_error *e)
{
    return create(g, NULL, p, threads, rep, NULL, out, e);
}

ait_status plan_exec_create_releasing(graph *g, const plan *p, int threads, gemm_report *rep,
                                      size_t *freed, plan_exec **out, ait_error *e)
{
    *freed = 0;
    return create(g, g, p, threads, rep, freed, out, e);
}

/* Whether every build of slot `slot` no longer reads input k of g's node n,
 * the node at position pos of the slot's module (its index in the module
 * graph, which keeps g's order). */
typedef bool (*slot_releases_fn)(const void *ctx, int slot, int pos, const node *n, int k);

/* The rule both answers share (plan_exec_releasable, plan_release_replaced):
 * per value of g, whether it is a constant tensor that some node reads and
 * that every reader takes from a built module that releases it (rel); a
 * reader outside the slots (mod[j]: slot j's module in tree, -1 when its
 * nodes run inline), a graph output or a model with subgraphs keeps it. */
static bool *releasable(const graph *g, const module_tree *tree, const int *mod, int n_slots,
                        slot_releases_fn rel, const void *ctx)
{
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attr; a++)
            if (g->nodes[i].attrs[a].g) return NULL; /* outer-scope reads: not worth tracing */
    bool *keep = calloc((size_t)g->n_vals + 1, sizeof *keep);
    bool *read = calloc((size_t)g->n_vals + 1, sizeof *read);
    int *pos = calloc((size_t)n_slots + 1, sizeof *pos); /* next node of each module's view */
    if (!keep || !read || !pos) {
        free(keep);
        free(read);
        free(pos);
        return NULL;
    }
    for (int k = 0; k < g->n_outputs; k++) keep[g->outputs[k]] = true;
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        int sl = -1;
        for (int j = 0; j < n_slots && sl < 0; j++)
            if (mod[j] >= 0 && module_contains(tree, mod[j], i)) sl = j;
        int at = sl >= 0 ? pos[sl]++ : -1;
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            if (v >= 0) read[v] = true;
            if (v < 0 || keep[v]) continue;
            if (sl < 0 || !rel(ctx, sl, at, n, k)) keep[v] = true; /* run on the reference */
        }
    }
    for (int v = 0; v < g->n_vals; v++) {
        const tensor *t = g->vals[v].konst;
        /* read: a constant no node reads stays (a fold may have taken it) */
        keep[v] = keep[v] || !read[v] || !t || t->kind != VAL_TENSOR || t->dtype == AIT_STRING;
        keep[v] = !keep[v]; /* now: released */
    }
    free(read);
    free(pos);
    return keep;
}

typedef struct built_ctx {
    const plan_exec *px;
    const graph *g;
} built_ctx;

/* The builds' own answer (backend.releases), on the module's view of n. */
static bool built_releases(const void *ctx, int slot, int pos, const node *n, int k)
{
    const built_ctx *c = ctx;
    const pe_slot *sl = &c->px->slots[slot];
    const graph *sub = sl->sub;
    const node *sn = sub && pos < sub->n_nodes ? &sub->nodes[pos] : NULL;
    int v = n->in[k];
    if (!sn || sn->n_in != n->n_in || sn->in[k] < 0 ||
        sub->vals[sn->in[k]].konst != c->g->vals[v].konst)
        return false; /* a view not as expected */
    int built_ = 0;
    for (int b = 0; b < PLAN_MAX_BUCKETS; b++) {
        const pe_build *pb = &sl->builds[b];
        if (!pb->bm) continue;
        built_++;
        if (!(pb->b->releases && pb->b->releases(pb->bm, sub, sn->in[k]))) return false;
    }
    return built_ > 0;
}

bool *plan_exec_releasable(const plan_exec *px, const graph *g)
{
    int *mod = calloc((size_t)px->n_slots + 1, sizeof *mod);
    if (!mod) return NULL;
    for (int j = 0; j < px->n_slots; j++)
        mod[j] = px->slots[j].inline_nodes ? -1 : px->slots[j].module;
    built_ctx c = {px, g};
    bool *r = releasable(g, px->tree, mod, px->n_slots, built_releases, &c);
    free(mod);
    return r;
}

/* The answer a build will give, from the plan alone (before any build):
 * backend_weights_from_blobs for a backend with `releases`, whose builds
 * take a node's weights from its prepared blob "wI." (backend_prep_has_node)
 * at every schedule or fail: n's weights (input 1) of a Conv, MatMul or
 * Gemm with such a blob at every bucket. */
static bool plan_releases(const void *ctx, int slot, int pos, const node *n, int k)
{
    const plan_module *pm = &((const plan *)ctx)->mods[slot];
    if (!backend_gemm_weights(n, k) || pm->n_choices < 1) return false;
    for (int b = 0; b < pm->n_choices; b++) {
        const plan_choice *c = &pm->choices[b];
        const backend *be = backend_find(c->cfg.backend);
        if (!be || !be->releases || !backend_prep_has_node(&c->prep, pos)) return false;
    }
    return true;
}

/* Frees the data of the constants drop says (a malloc'd per-value answer,
 * freed here; NULL: none), trims the heap; the bytes freed. A constant
 * whose data is borrowed (an artifact's model blob: api/artifact.c) lets go
 * of it; its pages go with the blob's. */
static size_t drop_data(graph *g, bool *drop)
{
    if (!drop) return 0;
    size_t freed = 0;
    for (int v = 0; v < g->n_vals; v++) {
        tensor *t = g->vals[v].konst;
        if (!drop[v] || !t->data) continue;
        freed += tensor_nbytes(t);
        tensor_release(t); /* borrowed: data NULL, nothing freed */
    }
    free(drop);
    return freed;
}

size_t plan_release_replaced(graph *g, const plan *p)
{
    module_tree *tree = NULL;
    int *mod = calloc((size_t)p->n_modules + 1, sizeof *mod);
    bool *drop = NULL;
    if (mod && modules_build(g, exec_node_costs, &tree, NULL) == AIT_OK) {
        bool ok = true;
        for (int j = 0; j < p->n_modules && ok; j++) {
            bool inl = true; /* every bucket on the baseline: run inline, reads everything */
            for (int k = 0; k < p->mods[j].n_choices; k++)
                inl &= !strcmp(p->mods[j].choices[k].cfg.backend, "reference") &&
                       !p->mods[j].choices[k].cfg.variant[0];
            mod[j] = inl ? -1 : module_find(tree, p->mods[j].name);
            ok = inl || mod[j] >= 0; /* a module the model lacks: the session refuses it */
        }
        if (ok) drop = releasable(g, tree, mod, p->n_modules, plan_releases, p);
    }
    modules_free(tree);
    free(mod);
    size_t freed = drop_data(g, drop);
#ifdef __GLIBC__
    if (freed) (void)malloc_trim(0); /* small weights sat inside the heap */
#endif
    return freed;
}

/* Frees what plan_exec_releasable says (data still held); the bytes freed. */
static size_t release_data(const plan_exec *px, graph *g)
{
    return drop_data(g, plan_exec_releasable(px, g));
}

ait_status plan_exec_run(plan_exec *px, tensor *const *inputs, tensor **outputs, ait_error *e)
{
    px->bucket = plan_bucket_index(px->p, inputs, px->comp->n_inputs);
    return exec_run(px->xs[px->bucket < px->n_xs ? px->bucket : 0], inputs, outputs, e);
}

ait_status plan_exec_run_bound(plan_exec *px, tensor *const *inputs, tensor *const *bound,
                               tensor **outputs, ait_error *e)
{
    px->bucket = plan_bucket_index(px->p, inputs, px->comp->n_inputs);
    return exec_run_bound(px->xs[px->bucket < px->n_xs ? px->bucket : 0], inputs, bound, outputs, e);
}

/* A node that reads only its inputs' shapes (a view's are right). */
static bool shape_only(const node *n)
{
    return onnx_domain_default(n->domain) && (!strcmp(n->op, "Shape") || !strcmp(n->op, "Size"));
}

/* Whether cache k of kv can be appended in place: its past read by one
 * node only (besides Shape and Size), a collapsed module that writes its
 * present, which no node reads, on backends that take views
 * (backend.run_kv). */
static bool kv_ok(const plan_exec *px, const kv_view *kv)
{
    const graph *g = px->comp;
    if (kv->in < 0 || kv->in >= g->n_inputs || kv->out < 0 || kv->out >= g->n_outputs) return false;
    int pv = g->inputs[kv->in], ov = g->outputs[kv->out], reader = -1;
    for (int j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == pv || (j != kv->out && g->outputs[j] == ov)) return false;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; !shape_only(&g->nodes[i]) && k < g->nodes[i].n_in; k++) {
            int v = g->nodes[i].in[k];
            if (v == ov || (v == pv && reader >= 0 && reader != i)) return false;
            if (v == pv) reader = i;
        }
    if (reader < 0 || g->vals[ov].producer != reader || px->slot_of_node[reader] < 0) return false;
    const pe_slot *sl = &px->slots[px->slot_of_node[reader]];
    for (int b = 0; b < PLAN_MAX_BUCKETS; b++)
        if (sl->builds[b].bm && !sl->builds[b].b->run_kv) return false;
    return true;
}

bool plan_exec_kv_set(plan_exec *px, kv_view *kv, int n_kv)
{
    px->kv = NULL;
    px->n_kv = 0;
    for (int k = 0; k < n_kv; k++)
        if (!kv_ok(px, &kv[k])) return false;
    px->kv = kv;
    px->n_kv = kv ? n_kv : 0;
    return kv != NULL;
}

size_t plan_exec_arena_bytes(const plan_exec *px)
{
    size_t n = 0;
    for (int k = 0; k < px->n_xs; k++) n += exec_arena_bytes(px->xs[k]);
    for (int i = 0; i < px->n_slots; i++)
        for (int k = 0; k < PLAN_MAX_BUCKETS; k++) {
            const pe_build *pb = &px->slots[i].builds[k];
            if (pb->bm && pb->b->value_bytes) n += pb->b->value_bytes(pb->bm);
        }
    return n;
}
void plan_exec_sched_stats(const plan_exec *px, sched_stats *acc)
{
    for (int k = 0; k < px->n_xs; k++) exec_sched_stats(px->xs[k], acc);
    for (int i = 0; i < px->n_slots; i++)
        for (int k = 0; k < PLAN_MAX_BUCKETS; k++) {
            const pe_build *pb = &px->slots[i].builds[k];
            if (pb->bm && pb->b->sched_stats) pb->b->sched_stats(pb->bm, acc);
        }
}

int plan_exec_primed(const plan_exec *px) { return px->primed; }

size_t plan_exec_output_bytes(const plan_exec *px, int k, int j)
{
    int n_out = px->comp->n_outputs;
    if (!px->out_bytes || k < 0 || k >= px->p->n_buckets || j < 0 || j >= n_out) return 0;
    return px->out_bytes[(size_t)k * (size_t)n_out + (size_t)j];
}
const graph *plan_exec_module_graph(const plan_exec *px, int i)
{
    return i >= 0 && i < px->n_slots ? px->slots[i].sub : NULL;
}

ait_status plan_exec_prepared(plan_exec *px, int i, int k, prepared *out, ait_error *e)
{
    *out = (prepared){0};
    const pe_build *pb = &px->slots[i].builds[k];
    if (!pb->b || !pb->b->save) return AIT_OK; /* nothing built (baseline), or nothing to save */
    ait_status s = pb->b->save(pb->bm, out, e);
    if (s != AIT_OK)
        err_prefix(e, "module '%s', candidate %s: ", px->p->mods[i].name,
                   px->p->mods[i].choices[k].cand);
    return s;
}
