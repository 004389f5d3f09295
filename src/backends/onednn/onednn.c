/* `onednn`: float32 Conv, MatMul, Gemm, pooling, normalisations, Softmax,
 * element-wise and binary ops through oneDNN 2.x (Debian's libdnnl, C API),
 * with post-op fusion; every other node runs on the reference ops inside
 * the same module. See onednn.h for the steps a build makes.
 *
 * When steps are made: at build when every module input's shape is static
 * in the module graph, else at the first run, and again when a run's input
 * shapes differ from the scheduled ones (one schedule is kept, as the executor
 * keeps one). Weights are reordered into the primitives' layouts once per
 * schedule; save() hands them out as blobs named "w<node>.<layout hash>.<node
 * name>", and a build given cfg->prep uses them in place.
 *
 * Threads: Debian's libdnnl runs on OpenMP (libgomp), whose thread count is
 * the calling thread's setting: build and every run set it to the
 * candidate's count (omp_set_num_threads) before making or executing
 * primitives, so two built modules with different counts can run one after
 * the other in one process. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl_debug.h>

#include "backends/onednn/impls.h"
#include "backends/onednn/onednn.h"

/* ---- schedules ----------------------------------------------------------------------- */

static void sched_clear(built *bm)
{
    dn_sched *p = bm->p;
    for (int i = 0; i < p->n_steps; i++) {
        if (p->steps[i].prim) dnnl_primitive_destroy(p->steps[i].prim);
        free(p->steps[i].args);
    }
    for (int i = 0; i < p->n_mems; i++) dnnl_memory_destroy(p->mems[i]);
    for (int i = 0; i < p->n_bufs; i++) aligned_free(p->bufs[i]);
    for (int v = 0; p->vals && v < bm->g->n_vals; v++) {
        tensor_release(&p->vals[v].t);
        memset(&p->vals[v], 0, sizeof p->vals[v]);
    }
    p->n_steps = p->n_mems = p->n_bufs = p->n_binds = p->n_blobs = p->n_refused = p->n_fresh = 0;
    p->scheduled = false;
}

static void sched_destroy(built *bm, dn_sched *p)
{
    bm->p = p;
    sched_clear(bm);
    free(p->steps);
    free(p->binds);
    free(p->mems);
    free(p->bufs);
    free(p->fresh);
    free(p->fresh_bytes);
    free(p->blobs);
    free(p->vals);
    free(p->sig);
    exec_free(p->x);
    memset(p, 0, sizeof *p);
}

/* A slot for a new schedule (bm->p): a fresh one, else the oldest, cleared. */
static ait_status sched_slot(built *bm)
{
    if (bm->n_scheds < DN_MAX_SCHEDS) {
        dn_sched *p = &bm->schedules[bm->n_scheds];
        const graph *g = bm->g;
        p->vals = calloc((size_t)g->n_vals + 1, sizeof *p->vals);
        p->sig = calloc((size_t)(g->n_inputs + 1) * (AIT_MAX_RANK + 2), sizeof *p->sig);
        if (!p->vals || !p->sig) {
            sched_destroy(bm, p);
            return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
        }
        ait_status s = exec_create(g, NULL, bm->threads, &p->x, bm->err);
        if (s != AIT_OK) {
            sched_destroy(bm, p);
            return s;
        }
        bm->n_scheds++;
        bm->p = p;
        return AIT_OK;
    }
    bm->p = &bm->schedules[bm->next];
    bm->next = (bm->next + 1) % DN_MAX_SCHEDS;
    sched_clear(bm);
    return AIT_OK;
}

/* save()'s list: every schedule's blobs, once by name (a name holds the node
 * and the layout, so equal names are equal bytes). */
static ait_status saved_update(built *bm)
{
    int n = 0;
    for (int k = 0; k < bm->n_scheds; k++) n += bm->schedules[k].n_blobs;
    prep_blob *all = malloc(sizeof *all * (size_t)(n + 1));
    if (!all) { /* never leave a list pointing into cleared schedules */
        free(bm->saved);
        bm->saved = NULL;
        bm->n_saved = 0;
        return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
    }
    n = 0;
    for (int k = 0; k < bm->n_scheds; k++)
        for (int j = 0; bm->schedules[k].scheduled && j < bm->schedules[k].n_blobs; j++) {
            const prep_blob *b = &bm->schedules[k].blobs[j];
            bool seen = false;
            for (int i = 0; i < n && !seen; i++) seen = strcmp(all[i].name, b->name) == 0;
            if (!seen) all[n++] = *b;
        }
    free(bm->saved);
    bm->saved = all;
    bm->n_saved = n;
    return AIT_OK;
}

static void set_threads(const built *bm)
{
    if (omp_get_max_threads() != bm->threads) omp_set_num_threads(bm->threads);
}

/* A node left to its reference op: its inputs must exist as plain tensors. */
static ait_status sched_fallback(built *bm, int i)
{
    const node *n = &bm->g->nodes[i];
    /* Control flow and sequence ops set their outputs' shapes as they run,
     * and If and Loop bodies read values this schedule keeps in its own
     * layouts: the executor-based backends (reference, openblas) run them. */
    if (n->def && (n->def->flags & (OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES)))
        return dn_fail(bm, i, AIT_E_UNSUPPORTED, "%s runs on the reference and openblas backends "
                       "only (control flow and sequences are not scheduled by onednn)", n->op);
    for (int k = 0; k < n->n_in; k++) /* the reference op would read freed weights */
        if (n->in[k] >= 0 && dn_is_freed(bm, n->in[k]))
            return dn_fail(bm, i, AIT_E_UNSUPPORTED, "its weights '%s' were freed at load (the "
                           "artifact's prepared blob replaced them) and oneDNN does not take "
                           "the node at this shape: the reference op cannot run it",
                           bm->g->vals[n->in[k]].name);
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0) TRY(dn_ensure_plain(bm, n->in[k]));
    for (int k = 0; k < n->n_out; k++) {
        int o = n->out[k];
        if (o < 0) continue;
        dn_val *d = &bm->p->vals[o];
        d->plain = &d->t;
        d->done = true;
        const tensor *sh = dn_shape(bm, o);
        if (sh) { /* allocated now, so that primitives can read it (runs keep the buffer) */
            tensor_set_shape(&d->t, sh->dtype, sh->rank, sh->dims);
            TRY(tensor_alloc(&d->t, bm->err));
        }
    }
    return dn_step_add(bm, i, NULL, NULL, 0);
}

/* ---- shared buffers ---------------------------------------------------------------- */

/* A buffer of the schedule, the steps that touch it (first and last) and
 * whether it may share its storage: only when the first step to touch it
 * writes it whole and nothing reads it after the steps. */
typedef struct buf_use {
    char *p;
    size_t size;
    int first, last; /* steps, -1 before any */
    int busy;        /* as a host: the last step of the buffers placed on it */
    int host;        /* the buffer whose storage it uses (itself, else one placed before) */
    bool ok, placed;
} buf_use;

static int buf_find(const buf_use *u, int n, const void *h)
{
    const char *c = h;
    for (int k = 0; c && k < n; k++)
        if (c >= u[k].p && c < u[k].p + u[k].size) return k;
    return -1;
}

static void buf_touch(buf_use *u, int n, const void *h, int step, bool write)
{
    int k = buf_find(u, n, h);
    if (k < 0) return;
    if (u[k].first == -1) {
        u[k].first = step;
        u[k].ok = write;
    } else if (u[k].first == step && !write) {
        u[k].ok = false; /* read by its first step */
    }
    u[k].last = step;
}

/* Values live at different steps share storage: each buffer that a step
 * writes before anything reads it takes the storage of one that no step
 * after reads, when that one is big enough (the smallest such), so the
 * module's activations stay in fewer, warmer bytes. Buffers made for
 * weights, biases and module outputs keep their own. */
static ait_status sched_share(built *bm)
{
    dn_sched *p = bm->p;
    const graph *g = bm->g;
    int n = p->n_bufs;
    if (n < 2) return AIT_OK;
    buf_use *u = calloc((size_t)n, sizeof *u);
    if (!u) return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
    for (int k = 0; k < n; k++)
        u[k] = (buf_use){.p = p->bufs[k], .first = -1, .last = -1, .busy = -1, .host = k};
    /* Sizes from the memories made over each buffer. */
    for (int m = 0; m < p->n_mems; m++) {
        void *h = NULL;
        const dnnl_memory_desc_t *md;
        if (dnnl_memory_get_data_handle(p->mems[m], &h) != dnnl_success ||
            dnnl_memory_get_memory_desc(p->mems[m], &md) != dnnl_success)
            continue;
        size_t sz = dnnl_memory_desc_get_size(md);
        for (int k = 0; h && k < n; k++)
            if (h == u[k].p && sz > u[k].size) u[k].size = sz;
    }
    /* A memory starting inside a buffer (not at its start): it keeps its own. */
    for (int m = 0; m < p->n_mems; m++) {
        void *h = NULL;
        if (dnnl_memory_get_data_handle(p->mems[m], &h) != dnnl_success) continue;
        int k = buf_find(u, n, h);
        if (k >= 0 && (char *)h != u[k].p) u[k].first = -2;
    }
    for (int s = 0; s < p->n_steps; s++) {
        const dn_step *st = &p->steps[s];
        if (st->prim) {
            for (int a = 0; a < st->n_args; a++) {
                void *h = NULL;
                if (dnnl_memory_get_data_handle(st->args[a].memory, &h) != dnnl_success) continue;
                buf_touch(u, n, h, s, st->args[a].arg == DNNL_ARG_DST);
            }
            continue;
        }
        if (st->kern) {
            buf_touch(u, n, p->vals[st->kin].plain->data, s, false);
            buf_touch(u, n, p->vals[st->kout].t.data, s, true);
            continue;
        }
        const node *nd = &g->nodes[st->node];
        for (int k = 0; k < nd->n_in; k++) {
            const tensor *t = nd->in[k] >= 0 ? p->vals[nd->in[k]].plain : NULL;
            if (t) buf_touch(u, n, t->data, s, false);
        }
        for (int k = 0; k < nd->n_out; k++)
            if (nd->out[k] >= 0) buf_touch(u, n, p->vals[nd->out[k]].t.data, s, true);
    }
    for (int j = 0; j < g->n_outputs; j++) { /* read after the steps */
        const tensor *t = p->vals[g->outputs[j]].plain;
        int k = t ? buf_find(u, n, t->data) : -1;
        if (k >= 0) u[k].ok = false;
    }
    for (int k = 0; k < n; k++) u[k].ok &= u[k].first >= 0 && u[k].size > 0;
    /* In order of first use: take the smallest storage that fits and that
     * no step from this one on touches. */
    for (;;) {
        int x = -1, best = -1;
        for (int k = 0; k < n; k++)
            if (u[k].ok && !u[k].placed && (x < 0 || u[k].first < u[x].first)) x = k;
        if (x < 0) break;
        u[x].placed = true;
        for (int k = 0; k < n; k++)
            if (k != x && u[k].placed && u[k].host == k && u[k].busy < u[x].first &&
                u[k].size >= u[x].size && (best < 0 || u[k].size < u[best].size))
                best = k;
        if (best >= 0) u[x].host = best;
        u[best >= 0 ? best : x].busy = u[x].last;
    }
    ait_status st = AIT_OK;
    for (int m = 0; st == AIT_OK && m < p->n_mems; m++) {
        void *h = NULL;
        if (dnnl_memory_get_data_handle(p->mems[m], &h) != dnnl_success) continue;
        int k = buf_find(u, n, h);
        if (k >= 0 && u[k].host != k)
            st = dn_check(bm, -1, dnnl_memory_set_data_handle(p->mems[m], u[u[k].host].p +
                                                              ((char *)h - u[k].p)), "memory");
    }
    for (int v = 0; st == AIT_OK && v < g->n_vals; v++) { /* plain views of them */
        tensor *t = &p->vals[v].t;
        int k = t->data && !t->owned ? buf_find(u, n, t->data) : -1;
        if (k >= 0 && u[k].host != k) t->data = u[u[k].host].p + ((char *)t->data - u[k].p);
    }
    for (int k = 0; st == AIT_OK && k < n; k++)
        if (u[k].host != k) { /* its storage is another's now */
            aligned_free(p->bufs[k]);
            p->bufs[k] = NULL;
        }
    free(u);
    return st;
}

/* String tensors stay with the reference backend: this backend shares
 * buffers between values (plan_buffers), which owned strings cannot do.
 * Looks at every value whose dtype the schedule knows, and at Casts to
 * string (whose output a deferred shape may hide). */
static ait_status no_strings(built *bm)
{
    const graph *g = bm->g;
    bool str = false;
    for (int v = 0; v < g->n_vals && !str; v++) {
        const tensor *t = exec_scheduled(bm->p->x, v);
        str = (t && t->dtype == AIT_STRING) || g->vals[v].dtype == AIT_STRING;
    }
    for (int i = 0; i < g->n_nodes && !str; i++) {
        const attr *to = node_attr(&g->nodes[i], "to");
        str = to && to->type == ATTR_INT && to->i == AIT_STRING;
    }
    if (!str) return AIT_OK;
    return err_set(bm->err, AIT_E_UNSUPPORTED, "onednn: the module has string tensors, which "
                   "only the reference backend runs");
}

/* One DEBUG line per schedule: the implementations oneDNN runs it on, each
 * with how many primitives use it, the nodes left to the reference ops, and
 * the forms refused for a reference implementation. */
static void sched_log(const built *bm)
{
    if (!log_on(bm->log)) return;
    const dn_sched *p = bm->p;
    char buf[1536];
    size_t len = 0;
    int n_ref = 0;
    for (int i = 0; i < p->n_steps; i++) {
        n_ref += !p->steps[i].prim && !p->steps[i].kern;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = p->steps[j].prim && !strcmp(p->steps[j].impl, p->steps[i].impl);
        if (!p->steps[i].prim || seen) continue;
        int cnt = 0;
        for (int j = i; j < p->n_steps; j++)
            cnt += p->steps[j].prim && !strcmp(p->steps[j].impl, p->steps[i].impl);
        if (len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s x%d", len ? ", " : "",
                                    p->steps[i].impl, cnt);
    }
    log_msg(bm->log, AIT_LOG_DEBUG, "onednn: %s; %d node(s) on the reference ops; %d form(s) not "
            "taken for a reference implementation", len ? buf : "no primitives", n_ref,
            p->n_refused);
}

static ait_status sched_make(built *bm, tensor *const *inputs)
{
    const graph *g = bm->g;
    set_threads(bm);
    TRY(exec_schedule(bm->p->x, inputs, bm->err));
    TRY(no_strings(bm));
    for (int v = 0; v < g->n_vals; v++) {
        dn_val *d = &bm->p->vals[v];
        d->spec = exec_scheduled(bm->p->x, v);
        if (dn_is_const(bm, v)) {
            d->plain = (tensor *)d->spec; /* read only: primitives only read constants */
            d->done = true;
        }
    }
    for (int k = 0; k < g->n_inputs; k++) {
        bm->p->vals[g->inputs[k]].plain = inputs[k]; /* rebound at each run */
        bm->p->vals[g->inputs[k]].done = true;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (!exec_node_runs(bm->p->x, i)) continue;
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0) bm->p->vals[g->nodes[i].in[k]].uses++;
    }
    for (int j = 0; j < g->n_outputs; j++) bm->p->vals[g->outputs[j]].uses++;
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (!exec_node_runs(bm->p->x, i)) continue;
        bool swallowed = false;
        for (int k = 0; k < n->n_out; k++) swallowed |= n->out[k] >= 0 && bm->p->vals[n->out[k]].done;
        if (swallowed) continue; /* a post-op of an earlier primitive */
        bool taken = false;
        if (dn_op_known(n)) TRY(dn_node(bm, i, &taken));
        if (!taken) TRY(sched_fallback(bm, i));
    }
    for (int j = 0; j < g->n_outputs; j++) TRY(dn_ensure_plain(bm, g->outputs[j]));
    TRY(sched_share(bm));
    dn_zero_fresh(bm);
    /* The signature this schedule is for. */
    for (int k = 0; k < g->n_inputs; k++) {
        int64_t *s = &bm->p->sig[(size_t)k * (AIT_MAX_RANK + 2)];
        s[0] = inputs[k]->rank;
        s[1] = inputs[k]->dtype;
        memcpy(s + 2, inputs[k]->dims, sizeof(int64_t) * (size_t)inputs[k]->rank);
    }
    bm->p->scheduled = true;
    sched_log(bm);
    return AIT_OK;
}

/* Makes the schedule for these input shapes in a slot of its own. */
static ait_status schedule(built *bm, tensor *const *inputs)
{
    TRY(sched_slot(bm));
    ait_status s = sched_make(bm, inputs);
    if (s != AIT_OK) {
        sched_clear(bm);
        saved_update(bm); /* the slot may have held an older schedule's blobs */
        return s;
    }
    return saved_update(bm);
}

static bool same_sig(const dn_sched *p, const graph *g, tensor *const *inputs)
{
    if (!p->scheduled) return false;
    for (int k = 0; k < g->n_inputs; k++) {
        const int64_t *s = &p->sig[(size_t)k * (AIT_MAX_RANK + 2)];
        if (!inputs[k] || s[0] != inputs[k]->rank || s[1] != inputs[k]->dtype ||
            memcmp(s + 2, inputs[k]->dims, sizeof(int64_t) * (size_t)inputs[k]->rank) != 0)
            return false;
    }
    return true;
}

/* The schedule made for these input shapes, in bm->p; false when none is. */
static bool sched_find(built *bm, tensor *const *inputs)
{
    if (bm->p && same_sig(bm->p, bm->g, inputs)) return true;
    for (int k = 0; k < bm->n_scheds; k++)
        if (same_sig(&bm->schedules[k], bm->g, inputs)) {
            bm->p = &bm->schedules[k];
            return true;
        }
    return false;
}

/* ---- the backend ----------------------------------------------------------------- */

static void dn_free(built *bm)
{
    if (!bm) return;
    for (int k = 0; k < bm->n_scheds; k++) sched_destroy(bm, &bm->schedules[k]);
    free(bm->saved);
    if (bm->st) dnnl_stream_destroy(bm->st);
    if (bm->eng) dnnl_engine_destroy(bm->eng);
    free(bm);
}

/* True when every module input has a static shape (so the schedule is made now). */
static bool static_inputs(const graph *g)
{
    for (int k = 0; k < g->n_inputs; k++) {
        const value *d = &g->vals[g->inputs[k]];
        if (d->kind != VAL_TENSOR || d->dtype == AIT_UNDEFINED || d->rank < 0) return false;
        for (int i = 0; i < d->rank; i++)
            if (d->dims[i] < 0) return false;
    }
    return true;
}

static ait_status dn_build(const backend *b, const graph *module, const candidate_cfg *cfg,
                           built **out, ait_error *e)
{
    *out = NULL;
    built *bm = calloc(1, sizeof *bm);
    if (!bm) return err_set(e, AIT_E_NOMEM, "onednn: out of memory");
    bm->g = module;
    bm->err = e ? e : &bm->own_err;
    bm->threads = cfg && cfg->threads > 0 ? cfg->threads : 1;
    bm->log = cfg ? cfg->log : NULL;
    /* No blobs: nothing was saved (the module had not scheduled), prepare. */
    bm->prep = cfg && cfg->prep && cfg->prep->n > 0 ? cfg->prep : NULL;
    const char *var = cfg ? cfg->variant : "";
    bm->blocked = !strcmp(var, "blocked");
    if (*var && !bm->blocked) {
        free(bm);
        return err_set(e, AIT_E_INVALID_ARG, "backend '%s': unknown variant '%s' (known: blocked)",
                       b ? b->name : "onednn", var);
    }
    ait_status s = dn_check(bm, -1, dnnl_engine_create(&bm->eng, dnnl_cpu, 0), "engine");
    if (s == AIT_OK)
        s = dn_check(bm, -1, dnnl_stream_create(&bm->st, bm->eng, dnnl_stream_default_flags),
                     "stream");
    if (s == AIT_OK && static_inputs(module)) {
        tensor *in[64] = {0}, shapes[64];
        if (module->n_inputs > 64)
            s = err_set(e, AIT_E_UNSUPPORTED, "onednn: more than 64 module inputs");
        for (int k = 0; s == AIT_OK && k < module->n_inputs; k++) {
            const value *d = &module->vals[module->inputs[k]];
            memset(&shapes[k], 0, sizeof shapes[k]);
            tensor_set_shape(&shapes[k], d->dtype, d->rank, d->dims);
            in[k] = &shapes[k];
        }
        if (s == AIT_OK) s = schedule(bm, in);
        for (int k = 0; s == AIT_OK && k < module->n_inputs; k++)
            bm->p->vals[module->inputs[k]].plain = NULL; /* the shapes above are gone */
    }
    if (s != AIT_OK) {
        bm->err = &bm->own_err;
        dn_free(bm);
        if (e && b) err_prefix(e, "backend '%s': ", b->name);
        return s;
    }
    bm->err = &bm->own_err;
    bm->log = NULL; /* cfg's logger is for build only */
    *out = bm;
    return AIT_OK;
}

static ait_status dn_run(built *bm, tensor *const *inputs, tensor **outputs, ait_error *e)
{
    const graph *g = bm->g;
    bm->err = e ? e : &bm->own_err;
    TRY(backend_inputs_check(g, inputs, "onednn", e));
    if (!sched_find(bm, inputs)) TRY(schedule(bm, inputs));
    set_threads(bm);
    for (int k = 0; k < g->n_inputs; k++) bm->p->vals[g->inputs[k]].plain = inputs[k];
    for (int k = 0; k < bm->p->n_binds; k++) {
        const dn_bind *b = &bm->p->binds[k];
        TRY(dn_check(bm, -1, dnnl_memory_set_data_handle(b->mem, (char *)inputs[b->input]->data +
                                                          b->offset), "input"));
    }
    for (int i = 0; i < bm->p->n_steps; i++) {
        const dn_step *s = &bm->p->steps[i];
        if (s->prim) {
            TRY(dn_check(bm, s->node, dnnl_primitive_execute(s->prim, bm->st, s->n_args, s->args),
                         "execute"));
            continue;
        }
        if (s->kern) {
            TRY(s->kern(bm, s));
            continue;
        }
        const node *n = &g->nodes[s->node];
        tensor *in[64], *out[64];
        if (n->n_in > 64 || n->n_out > 64)
            return dn_fail(bm, s->node, AIT_E_UNSUPPORTED, "more than 64 inputs or outputs");
        for (int k = 0; k < n->n_in; k++) in[k] = n->in[k] >= 0 ? bm->p->vals[n->in[k]].plain : NULL;
        for (int k = 0; k < n->n_out; k++) out[k] = n->out[k] >= 0 ? &bm->p->vals[n->out[k]].t : NULL;
        ait_status st = exec_run_node(bm->p->x, s->node, in, out, e);
        if (st != AIT_OK) {
            err_prefix(e, "onednn: ");
            return st;
        }
    }
    TRY(dn_check(bm, -1, dnnl_stream_wait(bm->st), "stream"));
    for (int j = 0; j < g->n_outputs; j++) {
        outputs[j] = bm->p->vals[g->outputs[j]].plain;
        if (!outputs[j] || !outputs[j]->data)
            return err_set(e, AIT_E_INTERNAL, "onednn: output '%s' was not computed",
                           g->vals[g->outputs[j]].name);
    }
    bm->err = &bm->own_err;
    return AIT_OK;
}

int dn_impls(const built *bm, const char **out, int max)
{
    int n = 0;
    for (int i = 0; bm->p && i < bm->p->n_steps; i++) {
        if (!bm->p->steps[i].prim && !bm->p->steps[i].kern) continue;
        if (n < max) out[n] = bm->p->steps[i].impl;
        n++;
    }
    return n;
}

int dn_ref_nodes(const built *bm)
{
    int n = 0;
    for (int i = 0; bm->p && i < bm->p->n_steps; i++) n += !bm->p->steps[i].prim && !bm->p->steps[i].kern;
    return n;
}

/* Nothing is prepared before the first schedule (a module with dynamic input
 * shapes schedules at its first run): then there is nothing to save. */
static ait_status dn_save(const built *bm, prepared *out, ait_error *e)
{
    (void)e;
    out->n = bm->n_saved;
    out->blobs = bm->saved;
    return AIT_OK;
}

/* Float32 (or not yet known) in every declared input of a node we build. */
static const op_def *dn_op_for(const graph *g, const node *n)
{
    if (n->domain && n->domain[0]) return NULL;
    if (!dn_op_known(n)) return NULL;
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v >= 0 && v < g->n_vals && g->vals[v].dtype != AIT_UNDEFINED &&
            g->vals[v].dtype != AIT_F32)
            return NULL;
    }
    return n->def;
}

static int dn_variants(const graph *module, const char **out, int max)
{
    for (int i = 0; i < module->n_nodes && max > 0; i++) {
        const node *n = &module->nodes[i];
        if (n->dead || strcmp(n->op, "Conv") || (n->domain && n->domain[0]) || n->n_in < 2 ||
            n->in[1] < 0)
            continue;
        /* The input's shape may not be known before build; the weights' is:
         * [O, C/group, kH, kW]. */
        const value *w = &module->vals[n->in[1]];
        if (w->rank != 4 || w->dims[1] < 0) continue;
        int64_t x[4] = {1, w->dims[1] * attr_int(n, "group", 1), 1, 1};
        if (dn_conv_blocked(4, x)) {
            out[0] = "blocked";
            return 1;
        }
    }
    return 0;
}

static void dn_describe(char *buf, size_t n)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, n, "oneDNN %d.%d.%d (%s), CPU ISA %s, OpenMP", v->major, v->minor, v->patch,
             v->hash ? v->hash : "?", dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
}

/* oneDNN picks kernels, and so weight layouts, by its effective ISA; each
 * ISA is a bit mask that contains the ones below it. */
static void dn_cpu_needs(char *buf, size_t n)
{
    static const struct {
        dnnl_cpu_isa_t isa;
        const char *features;
    } isas[] = {
        {dnnl_cpu_isa_avx, "avx"},
        {dnnl_cpu_isa_avx2, "avx2,fma"},
        {dnnl_cpu_isa_avx2_vnni, "avxvnni"},
        {dnnl_cpu_isa_avx512_core, "avx512f,avx512dq,avx512cd,avx512bw,avx512vl"},
        {dnnl_cpu_isa_avx512_core_vnni, "avx512vnni"},
        {dnnl_cpu_isa_avx512_core_bf16, "avx512bf16"},
        {dnnl_cpu_isa_avx512_core_amx, "amx-tile,amx-int8,amx-bf16"},
    };
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    size_t len = 0;
    if (n) buf[0] = 0;
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
        if ((isa & (unsigned)isas[i].isa) == (unsigned)isas[i].isa && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", isas[i].features);
}

/* Whether every schedule of bm took node i's weights from a prepared blob
 * (dn_weights records each it uses as w<i>.*); before any schedule, whether
 * there is one to take (dn_weights takes it or refuses the node). */
static bool weights_from_blobs(const built *bm, int i)
{
    char prefix[16];
    int len = snprintf(prefix, sizeof prefix, "w%d.", i), seen = 0;
    for (int s = 0; s < bm->n_scheds; s++) {
        const dn_sched *d = &bm->schedules[s];
        if (!d->scheduled) continue;
        bool found = false;
        for (int j = 0; j < d->n_blobs && !found; j++)
            found = strncmp(d->blobs[j].name, prefix, (size_t)len) == 0;
        if (!found) return false;
        seen++;
    }
    return seen > 0 || backend_prep_has_node(bm->prep, i);
}

/* A Conv's, MatMul's or Gemm's weights (input 1) that every schedule took
 * from a prepared blob, used in place: a later schedule takes the blob of
 * its layout again (dn_is_const keeps the decisions made with the data) or
 * is refused (dn_weights; sched_fallback never hands such a node to the
 * reference op), so no run reads them. Biases and BatchNormalization
 * weights are read at each schedule (the fold): kept, as is a constant
 * any other node reads. */
static bool dn_releases(const built *bm, const graph *module, int v)
{
    return bm->prep && bm->g == module && backend_weights_from_blobs(bm, module, v, weights_from_blobs);
}

static bool dn_available(char *why, size_t n)
{
    const dnnl_version_t *v = dnnl_version();
    if (v->major != 2) {
        snprintf(why, n, "oneDNN %d.%d found; this backend uses the 2.x API", v->major, v->minor);
        return false;
    }
    return true;
}

const backend backend_onednn = {
    .name = "onednn",
    .summary = "float32 Conv, MatMul, Gemm, pooling, norms, Softmax and element-wise ops through "
               "oneDNN 2.x, with post-op fusion and blocked layouts inside the module",
    .available = dn_available,
    .describe = dn_describe,
    .op_for = dn_op_for,
    .build = dn_build,
    .run = dn_run,
    .free = dn_free,
    .save = dn_save,
    .variants = dn_variants,
    .cpu_needs = dn_cpu_needs,
    .releases = dn_releases,
};
