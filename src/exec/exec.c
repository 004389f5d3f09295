/* The executor. For each set of bound input shapes it makes a schedule once:
 * shape inference over the graph, constant folding (including Shape/Size
 * of values whose shapes are known, which folds the shape plumbing of
 * exported models; not quantised weights: keeps_quantised) and dead-node
 * removal. Runs then execute the schedule's
 * nodes with output buffers that are kept and reused across runs. */
#include "exec/exec.h"
#include "exec/place.h"

#include "core/timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IO 512 /* inputs or outputs of one node; the loader refuses more */
#define FOLD_MAX_BYTES ((size_t)64 << 20) /* larger results are computed at run time */


typedef struct sub_exec {
    const graph *g;
    exec *x;
} sub_exec;

struct exec {
    const graph *g;
    exec *outer;
    int threads;
    tensor *env;     /* per value: storage computed at run time (owned, reused) */
    tensor **cur;    /* per value: where its tensor is during this run */
    tensor **folded; /* per value: constants made by the schedule (in fstore), or NULL */
    tensor *fstore;  /* per value: storage of folded constants, kept across schedules */
    tensor *meta;    /* per value: shape while scheduling */
    bool *known;     /* per value: meta holds a known shape (scheduling) */
    bool *skip;      /* per node: folded or dead in the current schedule */
    bool *folds;     /* per node: folded by the current schedule (skip before pruning) */
    bool *need;      /* per value: schedule_prune's work array */
    bool *dirty;     /* per value: its shape or folded data changed (reschedule) */
    unsigned *stamp; /* per value: the schedule (gen) that last changed it, by reschedule */
    unsigned gen;    /* schedules made, full or not */
    unsigned full;   /* the last full one's gen (it changed every value) */
    sched_stats stats; /* full schedules and reschedules made (exec_sched_stats) */
    int **extra;     /* per node: outer values its subgraphs read (-1 terminated) */
    void **scratch;  /* per node */
    size_t *scratch_cap;
    int *bound;      /* values given at run time: graph inputs, then outer refs */
    int n_bound;
    int64_t *sig;    /* shapes of the bound values in the current schedule */
    bool scheduled;
    bool placed;     /* the current schedule has a memory plan (exec_schedule's has none) */
    sub_exec *subs;
    int n_subs;
    const node *cur_node; /* for scratch and subgraph calls */
    exec_profile *prof;   /* per-node timing, when inspecting */
    const op_def **defs;  /* per node: the op it runs (its own, or a backend's) */
    void *user;           /* the owner's, for its ops (exec_user) */
    /* The memory plan (plan_memory): per value, its place in the arena and
     * its bytes (-1: own storage), for the current schedule. */
    int64_t *off;
    size_t *vbytes;
    char *arena;
    size_t arena_cap, arena_need;
    /* plan_memory's work arrays, n_vals long: a schedule allocates nothing
     * (decoders schedule every step: the past grows). */
    place_item *pl_items;
    place_item **pl_hit;
    int *pl_slot;
    bool keep; /* exec_keep_values: no arena, every value kept to the run's end */
    /* exec_run_bound: per value, the caller's tensor that graph output is
     * written into during this run (NULL: none). */
    tensor **bind;
};


void exec_set_profile(exec *x, exec_profile *p) { x->prof = p; }

void exec_set_user(exec *x, void *user) { x->user = user; }

bool exec_output_bound(const exec *x, int v) { return v >= 0 && v < x->g->n_vals && x->bind[v]; }

void *exec_user(const exec *x) { return x->user; }

void exec_keep_values(exec *x)
{
    x->keep = true;
    x->scheduled = false; /* the next run plans again, without the arena */
}

size_t exec_arena_bytes(const exec *x)
{
    size_t b = x->arena_cap;
    for (int i = 0; i < x->n_subs; i++) b += exec_arena_bytes(x->subs[i].x);
    return b;
}

const tensor *exec_value(const exec *x, int v)
{
    return v >= 0 && v < x->g->n_vals ? x->cur[v] : NULL;
}

static ait_status node_err(const exec *x, const node *n, ait_error *e)
{
    return err_prefix(e, "%s: node '%s' (%s): ", x->g->path ? x->g->path : "model", n->name, n->op);
}

/* String tensors reach only the ops that say they handle them (op.h);
 * outputs are checked once inferred. */
static ait_status check_strings(const exec *x, const op_def *def, const op_ctx *c, bool outs,
                                ait_error *e)
{
    if (def->flags & (OP_STR_MOVES | OP_STR_OWNS)) return AIT_OK;
    for (int k = 0; k < c->n_in; k++)
        if (c->in[k] && c->in[k]->kind != VAL_NONE && c->in[k]->dtype == AIT_STRING) {
            err_set(e, AIT_E_DTYPE, "input %d is a string tensor; the op does not take strings", k);
            return node_err(x, c->n, e);
        }
    for (int k = 0; outs && k < c->n_out; k++)
        if (c->out[k] && c->out[k]->dtype == AIT_STRING) {
            err_set(e, AIT_E_DTYPE, "output %d would be a string tensor; the op does not make "
                    "strings", k);
            return node_err(x, c->n, e);
        }
    return AIT_OK;
}

/* Runs the op; the string outputs of an element-moving op get their own
 * copies of what it copied (or forget them when it failed). */
static ait_status run_def(const exec *x, const op_def *def, op_ctx *c, ait_error *e)
{
    ait_status s = def->run(c);
    for (int k = 0; (def->flags & OP_STR_MOVES) && k < c->n_out; k++) {
        if (!c->out[k]) continue;
        if (s == AIT_OK) s = tensor_own_strs(c->out[k], e);
        else tensor_drop_strs(c->out[k]);
    }
    return s == AIT_OK ? AIT_OK : node_err(x, c->n, e);
}

/* Outputs' storage is reused run to run and shared between values (the
 * arena), so ops get stale bytes (op.h). Sanitizer builds fill them with
 * 0xff (NaN, -1) instead, so that an op which reads or leaves an element it
 * did not write fails its tests there rather than pass on leftover zeros. */
#if defined(__SANITIZE_ADDRESS__) || defined(AIT_POISON_OUTPUTS)
#define POISON_OUTPUTS 1
#else
#define POISON_OUTPUTS 0
#endif

static void prepare_out(const op_def *def, tensor *t)
{
    if (t->dtype == AIT_STRING) return; /* tensor_alloc left every slot NULL */
    if (def->flags & OP_ZERO_OUTPUTS) memset(t->data, 0, tensor_nbytes(t));
    else if (POISON_OUTPUTS) memset(t->data, 0xff, tensor_nbytes(t));
}

/* A graph output bound to caller memory (exec_run_bound): its tensor is
 * pointed there before its node runs, so the op writes the caller's bytes
 * (tensor_alloc keeps a borrowed buffer with room for the shape). */
static void out_bind(exec *x, int v, tensor *t)
{
    const tensor *b = x->bind[v];
    if (!b) return;
    if (t->owned) tensor_release(t);
    t->data = b->data;
    t->room = b->owned ? b->cap : b->room;
}

/* The caller's tensor for graph output v fits what the run computes (the
 * output's dtype and shape in t). */
static ait_status bind_fits(const exec *x, int v, const tensor *t, ait_error *e)
{
    const tensor *b = x->bind[v];
    const char *name = x->g->vals[v].name;
    char s[160];
    if (t->kind != VAL_TENSOR || t->dtype == AIT_STRING)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: output '%s' is a %s; only numeric tensors can be "
                       "written into a bound tensor", x->g->path, name,
                       t->kind != VAL_TENSOR ? val_kind_name(t->kind) : "string tensor");
    if (t->dtype != b->dtype)
        return err_set(e, AIT_E_DTYPE, "%s: output '%s' is %s; the tensor bound to it is %s",
                       x->g->path, name, ait_dtype_name(t->dtype), ait_dtype_name(b->dtype));
    size_t room = b->owned ? b->cap : b->room, need = tensor_nbytes(t);
    if (need > room)
        return err_set(e, AIT_E_SHAPE, "%s: output '%s' needs shape %s (%zu bytes); the tensor "
                       "bound to it holds %zu bytes", x->g->path, name,
                       shape_str(t->dims, t->rank, s, sizeof s), need, room);
    return AIT_OK;
}

/* Infers node c->n's output shapes now that its inputs are known, and gives
 * each output storage of that shape: the caller's memory for a bound graph
 * output, its place in the arena when the memory plan has one of that size
 * (plan[k] >= 0, in bytes from the arena), else its own (tensor_alloc).
 * Zeroed only for ops that ask (OP_ZERO_OUTPUTS). */
static ait_status infer_alloc(const exec *x, const op_def *def, op_ctx *c, bool planned,
                              ait_error *e)
{
    const node *n = c->n;
    TRY(check_strings(x, def, c, false, e));
    if (def->infer(c) != AIT_OK) {
        if (e && e->code == AIT_OK)
            err_set(e, AIT_E_INTERNAL, "shape inference deferred with all inputs known");
        return node_err(x, n, e);
    }
    TRY(check_strings(x, def, c, true, e));
    for (int k = 0; k < n->n_out; k++) {
        tensor *t = c->out[k];
        if (!t) continue;
        int v = n->out[k];
        int64_t numel;
        if (x->bind[v]) TRY(bind_fits(x, v, t, e));
        /* An op that gave a value storage of its own keeps it (owned). */
        if (planned && !t->room && x->off[v] >= 0 && !t->owned && t->kind == VAL_TENSOR &&
            t->dtype != AIT_STRING &&
            shape_numel(t->dims, t->rank, t->dtype, &numel, "output", NULL) == AIT_OK &&
            (size_t)numel * ait_dtype_size(t->dtype) <= x->vbytes[v]) {
            t->data = x->arena + x->off[v];
        } else if (tensor_alloc(t, e) != AIT_OK) {
            return node_err(x, n, e);
        }
        prepare_out(def, t);
    }
    return AIT_OK;
}

ait_status exec_create(const graph *g, exec *outer, int threads, exec **out, ait_error *e)
{
    return exec_create_ops(g, outer, threads, NULL, out, e);
}

ait_status exec_create_ops(const graph *g, exec *outer, int threads, const op_def *const *ops,
                           exec **out, ait_error *e)
{
    exec *x = calloc(1, sizeof *x);
    if (!x) return err_set(e, AIT_E_NOMEM, "out of memory");
    x->g = g;
    x->outer = outer;
    x->threads = threads > 0 ? threads : 1;
    size_t nv = (size_t)g->n_vals + 1, nn = (size_t)g->n_nodes + 1;
    x->env = calloc(nv, sizeof *x->env);
    x->cur = calloc(nv, sizeof *x->cur);
    x->folded = calloc(nv, sizeof *x->folded);
    x->meta = calloc(nv, sizeof *x->meta);
    x->known = calloc(nv, sizeof *x->known);
    x->skip = calloc(nn, sizeof *x->skip);
    x->folds = calloc(nn, sizeof *x->folds);
    x->need = calloc(nv, sizeof *x->need);
    x->dirty = calloc(nv, sizeof *x->dirty);
    x->stamp = calloc(nv, sizeof *x->stamp);
    x->extra = calloc(nn, sizeof *x->extra);
    x->scratch = calloc(nn, sizeof *x->scratch);
    x->scratch_cap = calloc(nn, sizeof *x->scratch_cap);
    x->bound = calloc(nv, sizeof *x->bound);
    x->sig = calloc(nv * (AIT_MAX_RANK + 1), sizeof *x->sig);
    x->defs = calloc(nn, sizeof *x->defs);
    x->off = malloc(nv * sizeof *x->off);
    x->vbytes = calloc(nv, sizeof *x->vbytes);
    x->bind = calloc(nv, sizeof *x->bind);
    x->fstore = calloc(nv, sizeof *x->fstore);
    x->pl_items = calloc(nv, sizeof *x->pl_items);
    x->pl_hit = calloc(nv, sizeof *x->pl_hit);
    x->pl_slot = calloc(nv, sizeof *x->pl_slot);
    if (!x->bind || !x->fstore || !x->pl_items || !x->pl_hit || !x->pl_slot || !x->off ||
        !x->vbytes || !x->env || !x->cur || !x->folded || !x->meta || !x->known || !x->skip ||
        !x->extra || !x->defs || !x->scratch || !x->scratch_cap || !x->bound || !x->sig ||
        !x->folds || !x->need || !x->dirty || !x->stamp) {
        exec_free(x);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (size_t v = 0; v < nv; v++) x->off[v] = -1;
    for (int i = 0; i < g->n_nodes; i++) x->defs[i] = ops && ops[i] ? ops[i] : g->nodes[i].def;
    for (int i = 0; i < g->n_inputs; i++) x->bound[x->n_bound++] = g->inputs[i];
    for (int i = 0; i < g->n_vals; i++)
        if (g->vals[i].outer >= 0) x->bound[x->n_bound++] = i;
    for (int i = 0; i < g->n_nodes; i++) {
        int cnt;
        ait_status s = node_captures(&g->nodes[i], &x->extra[i], &cnt, e);
        if (s != AIT_OK) {
            exec_free(x);
            return s;
        }
    }
    *out = x;
    return AIT_OK;
}

/* Forgets the schedule's constants; their storage stays for the next. */
static void free_folded(exec *x)
{
    memset(x->folded, 0, sizeof *x->folded * (size_t)x->g->n_vals);
}

void exec_free(exec *x)
{
    if (!x) return;
    if (x->env)
        for (int i = 0; i < x->g->n_vals; i++) tensor_release(&x->env[i]);
    for (int i = 0; x->fstore && i < x->g->n_vals; i++) tensor_release(&x->fstore[i]);
    for (int i = 0; x->extra && i < x->g->n_nodes; i++) free(x->extra[i]);
    for (int i = 0; x->scratch && i < x->g->n_nodes; i++) aligned_free(x->scratch[i]);
    for (int i = 0; i < x->n_subs; i++) exec_free(x->subs[i].x);
    free(x->subs);
    free(x->env);
    free(x->cur);
    free(x->folded);
    free(x->meta);
    free(x->known);
    free(x->skip);
    free(x->folds);
    free(x->need);
    free(x->dirty);
    free(x->stamp);
    free(x->extra);
    free(x->scratch);
    free(x->scratch_cap);
    free(x->bound);
    free(x->sig);
    free(x->defs);
    free(x->off);
    free(x->vbytes);
    free(x->bind);
    free(x->fstore);
    free(x->pl_items);
    free(x->pl_hit);
    free(x->pl_slot);
    aligned_free(x->arena);
    free(x);
}

static void *exec_scratch(op_ctx *c, size_t bytes);
static ait_status exec_subgraph(op_ctx *c, const graph *sub, tensor *const *inputs, tensor **outs);
static const op_host exec_host = {.subgraph = exec_subgraph, .scratch = exec_scratch};

/* Fills a context for node n; in/out arrays are the caller's. */
static void ctx_init(exec *x, const node *n, op_ctx *c, tensor **in, tensor **out, ait_error *e)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->n_in = n->n_in;
    c->n_out = n->n_out;
    c->in = in;
    c->out = out;
    c->threads = x->threads;
    c->err = e;
    c->host = &exec_host;
    c->x = x;
    c->g = x->g;
}

static bool is_const(const exec *x, int v) { return x->g->vals[v].konst || x->folded[v]; }

static const tensor *const_of(const exec *x, int v)
{
    return x->folded[v] ? x->folded[v] : x->g->vals[v].konst;
}

/* What is known before any node: constants with their data, bound inputs
 * with their shapes (and data for constant outer values, which stay
 * foldable). */
static void schedule_seed(exec *x)
{
    const graph *g = x->g;
    for (int v = 0; v < g->n_vals; v++) {
        x->known[v] = false;
        memset(&x->meta[v], 0, sizeof x->meta[v]);
        const tensor *k = g->vals[v].konst;
        if (k) {
            x->meta[v] = *k;
            x->meta[v].owned = false;
            x->known[v] = true;
        }
    }
    for (int b = 0; b < x->n_bound; b++) {
        int v = x->bound[b];
        const tensor *t = x->cur[v];
        if (!t || t->kind != VAL_TENSOR) continue; /* unbound (folding), sequences, nones */
        tensor_set_shape(&x->meta[v], t->dtype, t->rank, t->dims);
        x->meta[v].data = NULL;
        x->known[v] = true;
        if (g->vals[v].outer >= 0 && x->outer && is_const(x->outer, g->vals[v].outer))
            x->meta[v].data = t->data;
    }
}

/* A DequantizeLinear of constant 2-D 8-bit or 4-bit integer weights whose
 * output only MatMul reads, as its B: not folded, so a backend can
 * multiply by the quantised weights (native: backends/native/qlinear.c)
 * rather than by a float32 copy four to eight times their size. */
static bool keeps_quantised(const exec *x, const node *n)
{
    const graph *g = x->g;
    if (strcmp(n->op, "DequantizeLinear") || (n->domain && n->domain[0]) || n->n_out != 1 ||
        n->out[0] < 0 || n->n_in < 1 || n->in[0] < 0)
        return false;
    const tensor *q = g->vals[n->in[0]].konst;
    if (!q || q->rank != 2 || !(q->dtype == AIT_I8 || q->dtype == AIT_U8 || q->dtype == AIT_I4 ||
                                q->dtype == AIT_U4))
        return false;
    int v = n->out[0];
    bool any = false;
    if (g->vals[v].is_output) return false;
    for (int j = 0; j < g->n_nodes; j++) {
        const node *c = &g->nodes[j];
        for (int k = 0; k < c->n_in; k++) {
            if (c->in[k] != v) continue;
            if (k != 1 || (c->domain && c->domain[0]) || strcmp(c->op, "MatMul"))
                return false;
            any = true;
        }
    }
    return any;
}

/* Node i at scheduling: its outputs' shapes when its inputs' are known
 * (infer), and its outputs computed now (folded, the node then skipped)
 * when every input is a constant, or it reads shapes only, and the outputs
 * are small enough. */
static ait_status schedule_node(exec *x, int i, ait_error *e)
{
    const node *n = &x->g->nodes[i];
    const op_def *def = x->defs[i];
    x->skip[i] = x->folds[i] = false;
    tensor *in[MAX_IO], *out[MAX_IO];
    bool all_known = true, all_data = true;
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        in[k] = v >= 0 ? &x->meta[v] : NULL;
        if (v < 0) continue;
        all_known &= x->known[v];
        all_data &= x->meta[v].data != NULL;
    }
    for (int k = 0; x->extra[i] && x->extra[i][k] >= 0; k++)
        all_data &= is_const(x, x->extra[i][k]);
    for (int k = 0; k < n->n_out; k++) {
        out[k] = n->out[k] >= 0 ? &x->meta[n->out[k]] : NULL;
        if (out[k]) memset(out[k], 0, sizeof *out[k]);
    }
    if (!all_known || (def->flags & OP_ALLOCS_OUTPUTS)) return AIT_OK;
    op_ctx c;
    ctx_init(x, n, &c, in, out, e);
    x->cur_node = n;
    TRY(check_strings(x, def, &c, false, e));
    ait_status s = def->infer(&c);
    if (s == AIT_DEFER) return AIT_OK;
    if (s != AIT_OK) return node_err(x, n, e);
    TRY(check_strings(x, def, &c, true, e));
    bool fold = !(def->flags & OP_NONDETERMINISTIC) && (all_data || (def->flags & OP_READS_SHAPE)) &&
                !keeps_quantised(x, n);
    size_t bytes = 0;
    for (int k = 0; k < n->n_out; k++) {
        if (!out[k]) continue;
        int64_t numel;
        if (shape_numel(out[k]->dims, out[k]->rank, out[k]->dtype, &numel, "output", e) != AIT_OK)
            return node_err(x, n, e);
        bytes += (size_t)numel * ait_dtype_size(out[k]->dtype);
        x->known[n->out[k]] = true;
    }
    if (!fold || bytes > FOLD_MAX_BYTES) return AIT_OK;
    for (int k = 0; k < n->n_out; k++) {
        if (!out[k]) continue;
        tensor *t = &x->fstore[n->out[k]];
        x->folded[n->out[k]] = t;
        tensor_set_shape(t, out[k]->dtype, out[k]->rank, out[k]->dims);
        TRY(tensor_alloc(t, e));
        out[k] = t;
    }
    TRY(run_def(x, def, &c, e));
    for (int k = 0; k < n->n_out; k++)
        if (out[k]) {
            x->meta[n->out[k]] = *out[k];
            x->meta[n->out[k]].owned = false;
        }
    x->skip[i] = x->folds[i] = true;
    return AIT_OK;
}

/* Dead-node removal: skips every node no graph output needs. */
static void schedule_prune(exec *x)
{
    const graph *g = x->g;
    bool *need = x->need;
    memcpy(x->skip, x->folds, sizeof(bool) * (size_t)g->n_nodes);
    memset(need, 0, sizeof(bool) * (size_t)g->n_vals);
    for (int j = 0; j < g->n_outputs; j++) need[g->outputs[j]] = true;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const node *n = &g->nodes[i];
        if (x->skip[i]) continue;
        bool used = false;
        for (int k = 0; k < n->n_out; k++) used |= n->out[k] >= 0 && need[n->out[k]];
        if (!used) {
            x->skip[i] = true;
            continue;
        }
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) need[n->in[k]] = true;
        for (int k = 0; x->extra[i] && x->extra[i][k] >= 0; k++) need[x->extra[i][k]] = true;
    }
}

/* The bytes of every output whose
 * shape the schedule knows, of a node that runs and gets its storage from
 * the executor; vbytes[v] = 0 for the rest (strings, sequences, shapes
 * known only when running, ops that allocate themselves). */
static void plan_sizes(exec *x)
{
    const graph *g = x->g;
    memset(x->vbytes, 0, sizeof *x->vbytes * (size_t)g->n_vals);
    for (int v = 0; v < g->n_vals; v++) x->off[v] = -1;
    if (x->keep) return;
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (x->folds[i] || (x->defs[i]->flags & (OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES)))
            continue;
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0 || !x->known[v]) continue;
            const tensor *m = &x->meta[v];
            int64_t numel;
            if (m->kind != VAL_TENSOR || m->dtype == AIT_UNDEFINED || m->dtype == AIT_STRING ||
                shape_numel(m->dims, m->rank, m->dtype, &numel, "", NULL) != AIT_OK)
                continue;
            size_t b = (size_t)numel * ait_dtype_size(m->dtype);
            x->vbytes[v] = b ? (b + 63) & ~(size_t)63 : 64;
        }
    }
}

/* The memory plan: each sized value's lifetime over the schedule's nodes
 * (graph outputs live to the end, values read by a subgraph to that node),
 * then places, largest first, each at the lowest offset clear of the values
 * placed whose lifetimes overlap its own (a node's inputs and outputs
 * overlap at that node, so an output never shares an input's bytes). */
static ait_status plan_memory(exec *x, ait_error *e)
{
    const graph *g = x->g;
    x->arena_need = 0;
    int n = 0;
    for (int v = 0; v < g->n_vals; v++) n += x->vbytes[v] > 0;
    if (!n) return AIT_OK;
    place_item *it = x->pl_items, **hit = x->pl_hit;
    int *slot = x->pl_slot;
    n = 0;
    for (int v = 0; v < g->n_vals; v++) {
        slot[v] = -1;
        if (x->vbytes[v]) it[n] = (place_item){v, -1, -1, x->vbytes[v], 0}, slot[v] = n++;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const node *nd = &g->nodes[i];
        if (x->skip[i]) continue;
        for (int k = 0; k < nd->n_out; k++)
            if (nd->out[k] >= 0 && slot[nd->out[k]] >= 0) {
                place_item *p = &it[slot[nd->out[k]]];
                p->first = i;
                if (p->last < i) p->last = i;
            }
        for (int k = 0; k < nd->n_in; k++)
            if (nd->in[k] >= 0 && slot[nd->in[k]] >= 0) it[slot[nd->in[k]]].last = i;
        for (int k = 0; x->extra[i] && x->extra[i][k] >= 0; k++)
            if (slot[x->extra[i][k]] >= 0) it[slot[x->extra[i][k]]].last = i;
    }
    for (int j = 0; j < g->n_outputs; j++)
        if (slot[g->outputs[j]] >= 0) it[slot[g->outputs[j]]].last = g->n_nodes;
    int live = 0; /* dead nodes' values take no room */
    for (int a = 0; a < n; a++)
        if (it[a].first >= 0) it[live++] = it[a];
    n = live;
    x->arena_need = place_items(it, n, hit);
    for (int a = 0; a < n; a++) x->off[it[a].v] = it[a].off;
    return AIT_OK;
}

/* Schedules for the shapes now bound in cur[]: infer, fold, remove dead
 * nodes, and (place) plan the memory. A backend that runs the nodes itself
 * (exec_schedule) needs no memory plan: at every new shape of a decoder's
 * step, the plan's sorts and overlap search would be work thrown away. */
static ait_status schedule(exec *x, bool place, ait_error *e)
{
    free_folded(x);
    memset(x->dirty, 0, sizeof(bool) * (size_t)x->g->n_vals);
    x->full = ++x->gen;
    x->stats.full++;
    schedule_seed(x);
    for (int i = 0; i < x->g->n_nodes; i++) TRY(schedule_node(x, i, e));
    if (place) plan_sizes(x);
    schedule_prune(x);
    if (place) TRY(plan_memory(x, e));
    x->scheduled = true;
    x->placed = place;
    return AIT_OK;
}

/* Whether output k of node n (scheduled again) differs from what it was:
 * folded before or now (its data may have changed), or another shape. */
static bool out_changed(const exec *x, int v, bool was_known, bool was_folded, const tensor *was)
{
    const tensor *m = &x->meta[v];
    if (was_folded || x->folded[v] || was_known != x->known[v]) return true;
    return was_known && (m->dtype != was->dtype || m->rank != was->rank ||
                         memcmp(m->dims, was->dims, sizeof(int64_t) * (size_t)m->rank) != 0);
}

/* The schedule again after bound inputs changed dims only (dirty[] marks
 * them; a decoder's past growing by a position): only the nodes that read
 * a changed value are scheduled again, and a node whose outputs come out
 * as before (same shapes, not folded) changes nothing after it. The rest
 * keeps its shapes and folded constants, which a full schedule would make
 * the same from the same inputs. The memory plan is made again only when a
 * value's bytes or the set of running nodes changed. A decoder's steps
 * change the few nodes that follow the past's length (its Shape, the
 * position ids, the mask) and no more. */
static ait_status reschedule(exec *x, bool place, ait_error *e)
{
    const graph *g = x->g;
    bool replan = false;
    x->gen++;
    x->stats.partial++;
    x->stats.nodes_of += (unsigned long)g->n_nodes;
    for (int b = 0; b < x->n_bound; b++) {
        int v = x->bound[b];
        if (!x->dirty[v]) continue;
        x->stamp[v] = x->gen;
        const tensor *t = x->cur[v];
        tensor_set_shape(&x->meta[v], t->dtype, t->rank, t->dims);
        x->meta[v].data = NULL;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        bool d = false;
        for (int k = 0; k < n->n_in && !d; k++) d = n->in[k] >= 0 && x->dirty[n->in[k]];
        for (int k = 0; x->extra[i] && x->extra[i][k] >= 0 && !d; k++) d = x->dirty[x->extra[i][k]];
        if (!d) continue;
        x->stats.nodes++;
        tensor was[n->n_out + 1];
        bool was_known[n->n_out + 1], was_folded[n->n_out + 1], was_skip = x->folds[i];
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            was[k] = x->meta[v];
            was_known[k] = x->known[v];
            was_folded[k] = x->folded[v] != NULL;
            x->folded[v] = NULL;
            x->known[v] = false;
        }
        TRY(schedule_node(x, i, e));
        replan |= was_skip != x->folds[i]; /* (pruning follows the folds alone) */
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0 || !out_changed(x, v, was_known[k], was_folded[k], &was[k])) continue;
            x->dirty[v] = true;
            x->stamp[v] = x->gen;
            replan = true; /* (a known shape that changed: its bytes may have) */
        }
    }
    memset(x->dirty, 0, sizeof(bool) * (size_t)g->n_vals);
    schedule_prune(x);
    if (place && replan) {
        plan_sizes(x);
        TRY(plan_memory(x, e));
    }
    return AIT_OK;
}

/* The arena for the current plan, grown when a schedule needs more (the
 * values in it are written before they are read: no zeroing per run). */
static ait_status arena_ready(exec *x, ait_error *e)
{
    if (x->arena_need <= x->arena_cap) return AIT_OK;
    aligned_free(x->arena);
    x->arena = aligned_zalloc(x->arena_need);
    x->arena_cap = x->arena ? x->arena_need : 0;
    if (!x->arena)
        return err_set(e, AIT_E_NOMEM, "%s: out of memory (%zu bytes of intermediates)", x->g->path,
                       x->arena_need);
    return AIT_OK;
}

/* Checks a run-time input against the declared type; symbolic dims bind. */
static ait_status check_input(const exec *x, int v, const tensor *t, ait_error *e)
{
    const value *d = &x->g->vals[v];
    char a[128], b[128];
    if (!t || (t->kind == VAL_TENSOR && !t->data))
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is missing", x->g->path, d->name);
    if (t->kind == VAL_NONE) {
        if (d->optional) return AIT_OK;
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is none but not optional", x->g->path,
                       d->name);
    }
    if (t->kind != d->kind)
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' must be a %s, got a %s", x->g->path,
                       d->name, val_kind_name(d->kind), val_kind_name(t->kind));
    if (t->kind == VAL_MAP) {
        if (d->dtype != AIT_UNDEFINED && t->dtype != d->dtype)
            return err_set(e, AIT_E_DTYPE, "%s: input '%s' must be a map to %s, got one to %s",
                           x->g->path, d->name, ait_dtype_name(d->dtype),
                           ait_dtype_name(t->dtype));
        return AIT_OK;
    }
    if (t->kind == VAL_SEQUENCE) {
        for (int i = 0; i < t->n_items; i++)
            if (d->dtype != AIT_UNDEFINED && t->items[i].dtype != d->dtype)
                return err_set(e, AIT_E_DTYPE, "%s: input '%s' item %d must be %s, got %s",
                               x->g->path, d->name, i, ait_dtype_name(d->dtype),
                               ait_dtype_name(t->items[i].dtype));
        return AIT_OK;
    }
    if (d->dtype != AIT_UNDEFINED && t->dtype != d->dtype)
        return err_set(e, AIT_E_DTYPE, "%s: input '%s' must be %s, got %s", x->g->path, d->name,
                       ait_dtype_name(d->dtype), ait_dtype_name(t->dtype));
    bool bad = d->rank >= 0 && t->rank != d->rank;
    for (int i = 0; !bad && d->rank >= 0 && i < d->rank; i++)
        bad = d->dims[i] != DIM_UNKNOWN && d->dims[i] != t->dims[i];
    if (bad) {
        int k = 0;
        a[0] = '[';
        for (int i = 0; i < d->rank && k < 120; i++) {
            k++;
            if (d->dims[i] >= 0) k += snprintf(a + k, sizeof a - (size_t)k, "%lld", (long long)d->dims[i]);
            else k += snprintf(a + k, sizeof a - (size_t)k, "%s", d->sym[i] ? d->sym[i] : "?");
            a[k] = i + 1 < d->rank ? ',' : 0;
        }
        snprintf(a + k, sizeof a - (size_t)k, "]");
        return err_set(e, AIT_E_SHAPE, "%s: input '%s' must have shape %s, got %s", x->g->path,
                       d->name, a, shape_str(t->dims, t->rank, b, sizeof b));
    }
    int64_t numel;
    return shape_numel(t->dims, t->rank, t->dtype, &numel, d->name, e);
}

/* Symbolic dims with the same name must agree across inputs. */
static ait_status check_symbols(const exec *x, ait_error *e)
{
    const graph *g = x->g;
    for (int i = 0; i < g->n_inputs; i++) {
        const value *a = &g->vals[g->inputs[i]];
        for (int d = 0; a->rank > 0 && d < a->rank; d++) {
            if (!a->sym[d]) continue;
            for (int j = 0; j <= i; j++) {
                const value *b = &g->vals[g->inputs[j]];
                for (int k = 0; b->rank > 0 && k < b->rank; k++) {
                    if (!b->sym[k] || strcmp(a->sym[d], b->sym[k]) != 0) continue;
                    int64_t da = x->cur[g->inputs[i]]->dims[d], db = x->cur[g->inputs[j]]->dims[k];
                    if (da != db)
                        return err_set(e, AIT_E_SHAPE, "%s: dimension '%s' is %lld in input '%s' "
                                       "but %lld in input '%s'", g->path, a->sym[d], (long long)da,
                                       a->name, (long long)db, b->name);
                }
            }
        }
    }
    return AIT_OK;
}

/* The bound values' shapes against the current schedule's: SIG_SAME, or
 * SIG_DIMS when only dims of tensors changed (dirty[] marks those values;
 * a top-level graph only: a subgraph's outer constants seed data), else
 * SIG_NEW. The signature is updated to the current shapes. */
enum { SIG_SAME, SIG_DIMS, SIG_NEW };

static int signature(exec *x)
{
    int r = x->scheduled ? SIG_SAME : SIG_NEW;
    for (int b = 0; b < x->n_bound; b++) {
        const tensor *t = x->cur[x->bound[b]];
        int64_t *s = &x->sig[(size_t)b * (AIT_MAX_RANK + 1)];
        int64_t key = (int64_t)t->rank | ((int64_t)t->dtype << 8) | ((int64_t)t->kind << 16) |
                      ((int64_t)t->n_items << 20);
        bool dims = false;
        if (s[0] != key) r = SIG_NEW;
        s[0] = key;
        for (int i = 0; i < t->rank; i++) {
            dims |= s[i + 1] != t->dims[i];
            s[i + 1] = t->dims[i];
        }
        if (!dims) continue;
        if (r == SIG_SAME) r = SIG_DIMS;
        if (t->kind != VAL_TENSOR || x->outer) r = SIG_NEW;
        x->dirty[x->bound[b]] = true;
    }
    if (r == SIG_NEW) memset(x->dirty, 0, sizeof(bool) * (size_t)x->g->n_vals);
    return r;
}

static ait_status run_nodes(exec *x, tensor *const *inputs, ait_error *e)
{
    const graph *g = x->g;
    for (int v = 0; v < g->n_vals; v++) x->cur[v] = (tensor *)const_of(x, v);
    for (int i = 0; i < g->n_inputs; i++) {
        TRY(check_input(x, g->inputs[i], inputs[i], e));
        x->cur[g->inputs[i]] = inputs[i];
    }
    for (int v = 0; v < g->n_vals; v++) {
        int o = g->vals[v].outer;
        if (o < 0) continue;
        if (!x->outer || !x->outer->cur[o])
            return err_set(e, AIT_E_INTERNAL, "%s: outer value '%s' is not available", g->path,
                           g->vals[v].name);
        x->cur[v] = x->outer->cur[o];
    }
    TRY(check_symbols(x, e));
    int sig = signature(x);
    if (sig != SIG_SAME || !x->placed) { /* or scheduled by exec_schedule, unplaced */
        ait_status s = sig == SIG_DIMS && x->placed ? reschedule(x, true, e)
                                                      : schedule(x, true, e);
        if (s != AIT_OK) {
            x->scheduled = false;
            memset(x->dirty, 0, sizeof(bool) * (size_t)g->n_vals);
            return s;
        }
        for (int v = 0; v < g->n_vals; v++)
            if (x->folded[v]) x->cur[v] = x->folded[v];
    }
    TRY(arena_ready(x, e));
    for (int i = 0; i < g->n_nodes; i++) {
        if (x->skip[i]) continue;
        const node *n = &g->nodes[i];
        const op_def *def = x->defs[i];
        tensor *in[MAX_IO], *out[MAX_IO];
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            in[k] = v >= 0 ? x->cur[v] : NULL;
            if (v >= 0 && in[k] && in[k] == g->vals[v].konst && in[k]->kind == VAL_TENSOR &&
                !in[k]->data)
                return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s' (%s) reads weight '%s', "
                               "which the artifact's prepared blobs replace (freed at load, or "
                               "saved without it): only the artifact's plan runs this model",
                               g->path, n->name, n->op, g->vals[v].name);
            if (v >= 0 && (!in[k] || (in[k]->kind == VAL_TENSOR && !in[k]->data)))
                return err_set(e, AIT_E_INTERNAL, "%s: node '%s' (%s): input '%s' has no data",
                               g->path, n->name, n->op, g->vals[v].name);
            if (in[k] && in[k]->kind != VAL_TENSOR && !(def->flags & OP_TAKES_SEQUENCES))
                return err_set(e, AIT_E_INVALID_ARG, "%s: node '%s' (%s): input '%s' is a %s; "
                               "the op takes tensors", g->path, n->name, n->op, g->vals[v].name,
                               val_kind_name(in[k]->kind));
        }
        for (int k = 0; k < n->n_out; k++) {
            out[k] = n->out[k] >= 0 ? &x->env[n->out[k]] : NULL;
            if (out[k]) out_bind(x, n->out[k], out[k]);
        }
        op_ctx c;
        ctx_init(x, n, &c, in, out, e);
        x->cur_node = n;
        double t0 = x->prof ? now_sec() : 0;
        bool self_alloc = def->flags & OP_ALLOCS_OUTPUTS;
        for (int k = 0; k < n->n_in; k++) self_alloc |= in[k] && in[k]->kind != VAL_TENSOR;
        if (!self_alloc) TRY(infer_alloc(x, def, &c, true, e));
        else TRY(check_strings(x, def, &c, false, e));
        TRY(run_def(x, def, &c, e));
        for (int k = 0; k < n->n_out; k++)
            if (out[k]) x->cur[n->out[k]] = out[k];
        if (x->prof) {
            x->prof->node_sec[i] += now_sec() - t0;
            x->prof->node_calls[i]++;
        }
    }
    return AIT_OK;
}

/* Graph output j into the caller's tensor b: in place already when its
 * node wrote there; else (an input or constant passed through, an output
 * listed twice, an op that allocates its outputs and did not keep the
 * caller's buffer) copied. b takes the output's shape. */
static ait_status bind_finish(exec *x, int j, tensor *b, ait_error *e)
{
    int v = x->g->outputs[j];
    const tensor *t = x->cur[v];
    if (!t || (t->kind == VAL_TENSOR && !t->data))
        return err_set(e, AIT_E_INTERNAL, "%s: output '%s' was not computed", x->g->path,
                       x->g->vals[v].name);
    TRY(bind_fits(x, v, t, e));
    if (t->data != b->data) memmove(b->data, t->data, tensor_nbytes(t));
    tensor_set_shape(b, t->dtype, t->rank, t->dims);
    return AIT_OK;
}

ait_status exec_run_bound(exec *x, tensor *const *inputs, tensor *const *bound, tensor **outputs,
                          ait_error *e)
{
    const graph *g = x->g;
    for (int j = 0; bound && j < g->n_outputs; j++)
        if (bound[j] && !x->bind[g->outputs[j]]) x->bind[g->outputs[j]] = bound[j];
    ait_status s = run_nodes(x, inputs, e);
    for (int j = 0; s == AIT_OK && j < g->n_outputs; j++) {
        if (bound && bound[j]) {
            x->bind[g->outputs[j]] = bound[j]; /* an output listed twice: each its own */
            s = bind_finish(x, j, bound[j], e);
            outputs[j] = bound[j];
            continue;
        }
        outputs[j] = x->cur[g->outputs[j]];
        if (!outputs[j] || (outputs[j]->kind == VAL_TENSOR && !outputs[j]->data))
            s = err_set(e, AIT_E_INTERNAL, "%s: output '%s' was not computed", g->path,
                        g->vals[g->outputs[j]].name);
    }
    /* The caller's memory is used by this run only. */
    for (int j = 0; bound && j < g->n_outputs; j++) {
        int v = g->outputs[j];
        if (!x->bind[v]) continue;
        x->bind[v] = NULL;
        if (!x->env[v].owned) x->env[v].data = NULL, x->env[v].room = 0;
    }
    return s;
}

ait_status exec_run(exec *x, tensor *const *inputs, tensor **outputs, ait_error *e)
{
    return exec_run_bound(x, inputs, NULL, outputs, e);
}

ait_status exec_schedule(exec *x, tensor *const *inputs, ait_error *e)
{
    const graph *g = x->g;
    for (int v = 0; v < g->n_vals; v++) x->cur[v] = (tensor *)const_of(x, v);
    for (int i = 0; i < g->n_inputs; i++) {
        if (!inputs[i])
            return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is missing", g->path,
                           g->vals[g->inputs[i]].name);
        x->cur[g->inputs[i]] = inputs[i];
    }
    for (int b = 0; b < x->n_bound; b++)
        if (!x->cur[x->bound[b]])
            return err_set(e, AIT_E_UNSUPPORTED, "%s: value '%s' comes from an enclosing graph",
                           g->path, g->vals[x->bound[b]].name);
    TRY(check_symbols(x, e));
    int sig = signature(x);
    if (sig == SIG_SAME) return AIT_OK;
    ait_status s = sig == SIG_DIMS && !x->placed ? reschedule(x, false, e) : schedule(x, false, e);
    if (s != AIT_OK) {
        x->scheduled = false;
        memset(x->dirty, 0, sizeof(bool) * (size_t)g->n_vals);
    }
    return s;
}

unsigned exec_schedule_gen(const exec *x) { return x->gen; }

void exec_sched_stats(const exec *x, sched_stats *acc)
{
    acc->full += x->stats.full;
    acc->partial += x->stats.partial;
    acc->nodes += x->stats.nodes;
    acc->nodes_of += x->stats.nodes_of;
    for (int i = 0; i < x->n_subs; i++) exec_sched_stats(x->subs[i].x, acc);
}

bool exec_changed_since(const exec *x, int v, unsigned gen)
{
    return x->full > gen || x->stamp[v] > gen;
}

const tensor *exec_scheduled(const exec *x, int v)
{
    if (v < 0 || v >= x->g->n_vals) return NULL;
    if (x->folded[v]) return x->folded[v];
    if (x->g->vals[v].konst) return x->g->vals[v].konst;
    return &x->meta[v];
}

bool exec_node_runs(const exec *x, int i)
{
    return x->scheduled && i >= 0 && i < x->g->n_nodes && !x->skip[i];
}

ait_status exec_run_node(exec *x, int i, tensor *const *in, tensor *const *out, ait_error *e)
{
    const node *n = &x->g->nodes[i];
    const op_def *def = x->defs[i];
    op_ctx c;
    ctx_init(x, n, &c, (tensor **)in, (tensor **)out, e);
    x->cur_node = n;
    if (def->flags & (OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES))
        return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s' (%s): not runnable alone", x->g->path,
                       n->name, n->op);
    TRY(infer_alloc(x, def, &c, false, e));
    return run_def(x, def, &c, e);
}

ait_status exec_fold_constants(exec *x, tensor **folded, ait_error *e)
{
    for (int v = 0; v < x->g->n_vals; v++) x->cur[v] = (tensor *)x->g->vals[v].konst;
    ait_status s = schedule(x, false, e);
    x->scheduled = false; /* the first real run schedules again with its inputs */
    for (int v = 0; v < x->g->n_vals; v++) {
        folded[v] = NULL;
        if (s != AIT_OK || !x->folded[v]) continue;
        if (!(folded[v] = malloc(sizeof *folded[v]))) {
            s = err_set(e, AIT_E_NOMEM, "out of memory");
            continue;
        }
        *folded[v] = *x->folded[v]; /* handed over: the storage moves */
        memset(x->folded[v], 0, sizeof *x->folded[v]);
        x->folded[v] = NULL;
    }
    return s;
}

static void *exec_scratch(op_ctx *c, size_t bytes)
{
    exec *x = c->x;
    int i = (int)(c->n - x->g->nodes);
    if (i < 0 || i >= x->g->n_nodes) { /* not a node of this graph */
        err_set(c->err, AIT_E_INTERNAL, "scratch requested outside a node");
        return NULL;
    }
    if (x->scratch_cap[i] < bytes) {
        aligned_free(x->scratch[i]);
        x->scratch[i] = aligned_zalloc(bytes);
        x->scratch_cap[i] = x->scratch[i] ? bytes : 0;
        if (!x->scratch[i]) err_set(c->err, AIT_E_NOMEM, "out of memory (%zu bytes scratch)", bytes);
    }
    return x->scratch[i];
}

static ait_status exec_subgraph(op_ctx *c, const graph *sub, tensor *const *inputs, tensor **outs)
{
    exec *x = c->x, *child = NULL;
    for (int i = 0; i < x->n_subs; i++)
        if (x->subs[i].g == sub) child = x->subs[i].x;
    if (!child) {
        sub_exec *s = realloc(x->subs, sizeof *s * (size_t)(x->n_subs + 1));
        if (!s) return err_set(c->err, AIT_E_NOMEM, "out of memory");
        x->subs = s;
        TRY(exec_create(sub, x, x->threads, &child, c->err));
        x->subs[x->n_subs++] = (sub_exec){sub, child};
    }
    tensor *res[MAX_IO];
    if (sub->n_outputs > MAX_IO) return err_set(c->err, AIT_E_UNSUPPORTED, "too many subgraph outputs");
    TRY(exec_run(child, inputs, res, c->err));
    for (int j = 0; j < sub->n_outputs; j++)
        if (outs[j]) TRY(tensor_copy_into(outs[j], res[j], c->err));
    return AIT_OK;
}
