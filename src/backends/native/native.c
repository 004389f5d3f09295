/* `native`: ait's own kernels (src/kernels/). MatMul, Gemm and 2-D Conv in
 * float32 run as GEMMs with their constant weights packed once at build
 * (saved as artifact blobs, used in place at load) and the Relu, Clip,
 * bias and residual Add after them fused as the GEMM's epilogue; every
 * other node runs on its reference op inside the module. Runs of
 * convolutions keep their values channels-last (NHWC) between steps by a
 * fixed rule (layout.c), plain NCHW at the module's edges. See native.h
 * for the steps. Variants: the GEMM kernel (gemm_kernel_find's names), the
 * best this CPU runs by default. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"
#include "core/cpu.h"

const tensor *nat_shape(const built *bm, int v)
{
    const tensor *t = v >= 0 ? bm->vals[v].spec : NULL;
    return t && t->dtype != AIT_UNDEFINED && t->kind == VAL_TENSOR ? t : NULL;
}

bool nat_const(const built *bm, int v) { return v >= 0 && bm->vals[v].konst; }

bool nat_is_output(const graph *g, int v)
{
    for (int j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == v) return true;
    return false;
}

ait_status nat_fail(built *bm, int i, ait_status code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const node *n = i >= 0 ? &bm->g->nodes[i] : NULL;
    if (n) return err_set(bm->err, code, "native: node '%s' (%s): %s", n->name, n->op, msg);
    return err_set(bm->err, code, "native: %s", msg);
}

/* ---- prepared weights ----------------------------------------------------------- */

ait_status nat_stale(built *bm, ait_status s)
{
    err_append(bm->err, " (the artifact was tuned by another build of ait: re-tune the model)");
    return s;
}

static const prep_blob *blob_find(const built *bm, const char *name)
{
    for (int k = 0; bm->prep && k < bm->prep->n; k++)
        if (strcmp(bm->prep->blobs[k].name, name) == 0) return &bm->prep->blobs[k];
    return NULL;
}

ait_status nat_pack_get(built *bm, int i, int groups, size_t bytes,
                        void (*fill)(built *bm, int i, int grp, void *dst, const void *arg),
                        const void *arg, nat_pack **out)
{
    return nat_pack_get_sized(bm, i, groups, bytes, NULL, fill, arg, out);
}

ait_status nat_pack_get_sized(built *bm, int i, int groups, size_t bytes, const size_t *sizes,
                              void (*fill)(built *bm, int i, int grp, void *dst, const void *arg),
                              const void *arg, nat_pack **out)
{
    nat_pack *p = &bm->packs[i];
    *out = p;
    if (p->data) return AIT_OK; /* packed at an earlier schedule */
    for (int g = 0; sizes && g < groups; g++) bytes = sizes[g] > bytes ? sizes[g] : bytes;
    size_t stride = (bytes + 63) & ~(size_t)63, total;
    if (__builtin_mul_overflow(stride, (size_t)groups, &total))
        return nat_fail(bm, i, AIT_E_OVERFLOW, "packed weights are too large");
    snprintf(p->name, sizeof p->name, "w%d.%s", i, bm->g->nodes[i].name ? bm->g->nodes[i].name : "");
    free(p->views); /* from an attempt that failed */
    p->views = calloc((size_t)groups, sizeof *p->views);
    if (!p->views) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
    p->groups = groups;
    p->stride = stride;
    const prep_blob *b = blob_find(bm, p->name);
    if (bm->prep && !b)
        return nat_stale(bm, nat_fail(bm, i, AIT_E_INVALID_ARG,
                                      "prepared weights '%s' are missing from the artifact", p->name));
    if (b) {
        if (b->size != total)
            return nat_stale(bm, nat_fail(bm, i, AIT_E_INVALID_ARG,
                                          "prepared weights '%s' are %zu bytes; this build needs %zu "
                                          "(kernel %s)",
                                          p->name, b->size, total, gemm_kernel_name(bm->kern)));
        p->data = b->data;
    } else {
        aligned_free(p->own);
        p->own = aligned_zalloc(total);
        if (!p->own) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory for packed weights");
        for (int g = 0; g < groups; g++) fill(bm, i, g, (char *)p->own + (size_t)g * stride, arg);
        p->data = p->own;
    }
    p->size = total;
    if (bm->pack_raw) return AIT_OK; /* the op reads its own bytes */
    if (bm->pack_quant) { /* one group of qgemm's */
        ait_status s = bytes > bm->pack_tail ? qg_view(p->data, bytes - bm->pack_tail, &p->qv, bm->err)
                                             : err_set(bm->err, AIT_E_INVALID_ARG, "too short");
        if (s != AIT_OK) {
            p->data = NULL;
            return nat_stale(bm, err_prefix(bm->err, "native: node '%s': prepared weights '%s': ",
                                            bm->g->nodes[i].name, p->name));
        }
        return AIT_OK;
    }
    for (int g = 0; g < groups; g++) {
        ait_status s = gemm_packed_view((const char *)p->data + (size_t)g * stride,
                                        sizes ? sizes[g] : bytes, &p->views[g], bm->err);
        if (s == AIT_OK && p->views[g].kern != bm->kern)
            s = err_set(bm->err, AIT_E_INVALID_ARG, "packed for GEMM kernel %s, not %s",
                        gemm_kernel_name(p->views[g].kern), gemm_kernel_name(bm->kern));
        if (s != AIT_OK) {
            p->data = NULL; /* own stays for free */
            err_prefix(bm->err, "native: node '%s': prepared weights '%s': ", bm->g->nodes[i].name,
                       p->name);
            return nat_stale(bm, s);
        }
    }
    return AIT_OK;
}

static void packs_free(built *bm)
{
    for (int i = 0; bm->packs && i < bm->g->n_nodes; i++) {
        aligned_free(bm->packs[i].own);
        free(bm->packs[i].views);
        aligned_free(bm->packs[i].bias);
        aligned_free(bm->packs[i].wt);
        aligned_free(bm->packs[i].sums);
    }
    free(bm->packs);
}

/* save()'s list: every node's packed weights made here. */
static ait_status saved_update(built *bm)
{
    int n = bm->tuned_blob != NULL;
    for (int i = 0; i < bm->g->n_nodes; i++) n += bm->packs[i].data != NULL;
    if (bm->saved && n == bm->n_saved) return AIT_OK; /* packs are made once, never dropped */
    prep_blob *all = calloc((size_t)n + 1, sizeof *all);
    if (!all) return err_set(bm->err, AIT_E_NOMEM, "native: out of memory");
    n = 0;
    for (int i = 0; i < bm->g->n_nodes; i++) {
        const nat_pack *p = &bm->packs[i];
        if (!p->data) continue;
        snprintf(all[n].name, sizeof all[n].name, "%s", p->name);
        all[n].data = p->data;
        all[n].size = p->size;
        n++;
    }
    if (bm->tuned_blob) {
        snprintf(all[n].name, sizeof all[n].name, "%s", TUNED_BLOB);
        all[n].data = bm->tuned_blob;
        all[n].size = bm->tuned_blob_size;
        n++;
    }
    free(bm->saved);
    bm->saved = all;
    bm->n_saved = n;
    return AIT_OK;
}

/* ---- schedules ----------------------------------------------------------------- */

/* Forgets the schedule. Each value keeps the storage it owns (plain
 * tensor bytes, which tensor_alloc reuses when large enough), so a new
 * schedule at a shape no larger than earlier ones allocates nothing: a
 * decoder's steps within what priming or an earlier step met. */
static void sched_clear(built *bm)
{
    for (int v = 0; v < bm->g->n_vals; v++) {
        tensor *t = &bm->vals[v].t;
        bool keep = t->owned && t->data && t->kind == VAL_TENSOR && t->dtype != AIT_STRING;
        void *data = keep ? t->data : NULL;
        size_t cap = keep ? t->cap : 0;
        if (!keep) tensor_release(t);
        memset(&bm->vals[v], 0, sizeof bm->vals[v]);
        t->data = data;
        t->cap = cap;
        t->owned = keep;
    }
    bm->n_steps = 0;
    bm->scheduled = false;
    bm->fus = NULL;
}

static void vals_free(built *bm)
{
    for (int v = 0; bm->vals && v < bm->g->n_vals; v++) tensor_release(&bm->vals[v].t);
    free(bm->vals);
}

/* The step for node i: a native op's, else the reference op's. */
static ait_status sched_node(built *bm, int i)
{
    const node *n = &bm->g->nodes[i];
    nat_step *st = &bm->steps[bm->n_steps];
    memset(st, 0, sizeof *st);
    st->node = i;
    st->epi.bias = st->epi.res = -1;
    st->bn = st->fus = st->cat = -1;
    st->epi.out = n->n_out > 0 ? n->out[0] : -1;
    const nat_op *op = bm->op_of[i];
    bool taken = false;
    int fi = bm->fus ? bm->fus->of_node[i] : -1;
    if (fi >= 0 && bm->fus->f[fi].kind == FK_CHAIN && bm->fus->f[fi].node == i &&
        nat_chain_take(bm, fi, st)) {
        op = &nat_chain_op;
        taken = true;
    } else if (fi >= 0 && bm->fus->f[fi].kind == FK_ATTENTION) { /* at its last node */
        op = &nat_attn_fused;
        st->geo[0] = st->fus = fi;
        st->epi.out = bm->fus->f[fi].out;
        st->scratch = kattention_scratch(&bm->att[i], bm->threads);
        taken = true;
    } else if (fi >= 0 && (bm->fus->f[fi].kind == FK_LAYERNORM || bm->fus->f[fi].kind == FK_ROTARY)) {
        op = bm->fus->f[fi].kind == FK_ROTARY ? &nat_rope_fused : &nat_ln_fused; /* at its last node */
        st->geo[0] = st->fus = fi;
        st->epi.out = bm->fus->f[fi].out;
        taken = true;
    } else if (op) {
        TRY(op->take(bm, i, st, &taken));
    }
    if (taken) {
        st->op = op;
        if (st->scratch > bm->scratch_size) {
            aligned_free(bm->scratch);
            bm->scratch = aligned_zalloc(st->scratch);
            bm->scratch_size = bm->scratch ? st->scratch : 0;
            if (!bm->scratch) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory for scratch");
        }
        /* The swallowed nodes' values are computed by this step (out -1: a
         * step whose only reader packed its inputs, qlinear.c's dequantised
         * weights: no storage). */
        if (st->epi.out >= 0) {
            const tensor *sh = nat_shape(bm, st->epi.out);
            nat_val *d = &bm->vals[st->epi.out];
            tensor_set_shape(&d->t, sh->dtype, sh->rank, sh->dims); /* float32 but QLinearMatMul's */
            d->placed = true; /* its bytes: place_values, once every step is made */
            d->cur = &d->t;
            d->done = true;
        }
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0) bm->vals[n->out[k]].done = true;
        const fusion *f = st->fus >= 0 ? &bm->fus->f[st->fus] : NULL;
        for (int j = 0; j < (f ? f->n_nodes : st->epi.n_nodes); j++) {
            const node *w = &bm->g->nodes[f ? f->nodes[j] : st->epi.nodes[j]];
            for (int k = 0; k < w->n_out; k++)
                if (w->out[k] >= 0) bm->vals[w->out[k]].done = true;
        }
        bm->n_steps++;
        return AIT_OK;
    }
    memset(&st->epi, 0, sizeof st->epi);
    if (n->def && (n->def->flags & (OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES)))
        return nat_fail(bm, i, AIT_E_UNSUPPORTED, "%s runs on the reference and openblas backends "
                        "only (control flow and sequences are not scheduled by native)", n->op);
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0) {
            bm->vals[n->out[k]].cur = &bm->vals[n->out[k]].t;
            bm->vals[n->out[k]].done = true;
        }
    bm->n_steps++;
    return AIT_OK;
}

/* Value v (when placed) is touched at step s: written, or read. */
static void touch(built *bm, int v, int s)
{
    if (v >= 0 && bm->vals[v].view) v = bm->vals[v].view - 1; /* a view: its root's bytes */
    int a = v >= 0 ? bm->pl_slot[v] : -1;
    if (a < 0) return;
    place_item *p = &bm->pl_items[a];
    if (p->first < 0 || s < p->first) p->first = s;
    if (s > p->last) p->last = s;
}

/* Gives the values the native steps write (sched_node's: d->placed) their
 * bytes in bm->arena, each live from the first step touching it to the
 * last: the steps' nodes' inputs and outputs (with the nodes an epilogue
 * or a fusion swallowed: layout.c's step_of), a Concat's output from the
 * first conv writing its channels (concat.c), module outputs to the end.
 * Where each value kept storage of its own for the module's life, the
 * module now holds the peak of what is live at once (mobilenetv2's one
 * module: 24 MB of values, 9 MB at once). Allocates only when the arena
 * grows. */
static ait_status place_values(built *bm)
{
    const graph *g = bm->g;
    place_item *it = bm->pl_items;
    int n = 0;
    for (int v = 0; v < g->n_vals; v++) {
        nat_val *d = &bm->vals[v];
        bm->pl_slot[v] = -1;
        if (!d->placed) continue;
        int64_t numel;
        TRY(shape_numel(d->t.dims, d->t.rank, d->t.dtype, &numel, "value", bm->err));
        size_t b = (size_t)numel * (d->q8 ? 1 : ait_dtype_size(d->t.dtype)); /* uint8: a byte */
        if (b > SIZE_MAX - 64)
            return err_set(bm->err, AIT_E_OVERFLOW, "native: value '%s' is too large",
                           g->vals[v].name);
        it[n] = (place_item){v, -1, -1, b ? (b + 63) & ~(size_t)63 : 64, 0};
        bm->pl_slot[v] = n++;
    }
    if (!n) return AIT_OK;
    for (int i = 0; i < g->n_nodes; i++) {
        int s = bm->step_of[i];
        const node *nd = &g->nodes[i];
        for (int k = 0; s >= 0 && k < nd->n_in; k++) touch(bm, nd->in[k], s);
        for (int k = 0; s >= 0 && k < nd->n_out; k++) touch(bm, nd->out[k], s);
    }
    for (int s = 0; s < bm->n_steps; s++) {
        const nat_step *st = &bm->steps[s];
        touch(bm, st->cat, s);
        touch(bm, st->epi.out, s);
        touch(bm, st->epi.res, s);
        if (st->fus >= 0 && bm->fus->f[st->fus].kind == FK_ATTENTION) {
            /* its operands read through views, not through its nodes' inputs
             * (a key the present Concat also reads, which runs earlier): a
             * placed one (the rotary's output) lives until here */
            const fuse_attn *a = &bm->fus->f[st->fus].att;
            const int ops[] = {a->q.v, a->k.v, a->v.v, a->kp.v, a->vp.v, a->mask, a->bmask};
            for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) touch(bm, ops[k], s);
        }
        for (int f = 0; f < 2; f++) { /* a folded step's inputs are read here, not at its step */
            const int fs = f ? st->pre : st->pro;
            const node *pn = fs ? &g->nodes[bm->steps[fs - 1].node] : NULL;
            for (int k = 0; pn && k < pn->n_in; k++) touch(bm, pn->in[k], s);
        }
    }
    for (int s = 0; s < bm->n_steps; s++) { /* a block run by bands: its values live over it all */
        const int b = bm->steps[s].band;
        for (int i = 0; b && i < g->n_nodes; i++) { /* its steps' nodes, epilogues' included */
            const int t = bm->step_of[i];
            if (t < s || t >= s + b) continue;
            const node *nd = &g->nodes[i];
            const bool late = nat_band_out_late(bm, s, t); /* (so it may go over its residual) */
            for (int e = s; e < s + b; e += b - 1) {
                for (int k = 0; k < nd->n_in; k++) touch(bm, nd->in[k], e);
                for (int k = 0; k < nd->n_out && !late; k++) touch(bm, nd->out[k], e);
            }
        }
        for (int t = s; t < s + b; t++)
            for (int e = s; e < s + b; e += b - 1) {
                if (!nat_band_out_late(bm, s, t)) touch(bm, bm->steps[t].epi.out, e);
                touch(bm, bm->steps[t].epi.res, e);
            }
    }
    for (int j = 0; j < g->n_outputs; j++) touch(bm, g->outputs[j], bm->n_steps);
    for (int a = 0; a < n; a++)
        if (it[a].first < 0) it[a].first = 0, it[a].last = bm->n_steps; /* never: whole life */
    /* A 1x1 Conv whose residual is read last there writes its output over
     * the residual's bytes (nat_conv_res_in_place): each tile's residual is
     * the line its store goes to, so C's lines come in with the residual's
     * instead of being read again for ownership. The output's item moves
     * past the kept ones (not placed), the residual's lives on to the
     * output's last step, and the output's pl_slot is -2 - the value whose
     * bytes it takes (a chain of blocks: the first residual's). */
    int kept = n;
    for (int s = 0; s < bm->n_steps; s++) {
        const nat_step *st = &bm->steps[s];
        if (!nat_conv_res_in_place(bm, st)) continue;
        int rv = st->epi.res;
        while (bm->pl_slot[rv] <= -2) rv = -2 - bm->pl_slot[rv];
        int ra = bm->pl_slot[rv], oa = bm->pl_slot[st->epi.out];
        const node *nd = &g->nodes[st->node];
        for (int k = 0; k < nd->n_in && ra >= 0; k++) { /* not over an input it reads as A */
            int xv = nd->in[k];
            while (xv >= 0 && bm->pl_slot[xv] <= -2) xv = -2 - bm->pl_slot[xv];
            if (xv == rv) ra = -1;
        }
        if (ra < 0 || oa < 0 || ra == oa || it[ra].last != s || it[oa].first != s || it[ra].bytes != it[oa].bytes)
            continue;
        if (it[oa].last > it[ra].last) it[ra].last = it[oa].last;
        const place_item o = it[oa];
        it[oa] = it[--kept]; /* the last kept item into the output's place */
        bm->pl_slot[it[oa].v] = oa;
        it[kept] = o;
        it[kept].off = rv; /* (not placed: the value whose bytes it takes) */
        bm->pl_slot[o.v] = -2 - rv;
    }
    size_t need = place_items(it, kept, bm->pl_hit);
    if (need > bm->arena_cap) {
        aligned_free(bm->arena);
        bm->arena = aligned_zalloc(need);
        bm->arena_cap = bm->arena ? need : 0;
        if (!bm->arena)
            return err_set(bm->err, AIT_E_NOMEM, "native: out of memory (%zu bytes of values)",
                           need);
    }
    for (int a = 0; a < n; a++) {
        tensor *t = &bm->vals[it[a].v].t;
        if (t->owned) aligned_free(t->data); /* storage an earlier schedule gave it */
        t->data = bm->arena + (a < kept ? it[a].off : (int64_t)0);
        t->owned = false;
        t->cap = 0;
        t->room = it[a].bytes;
    }
    for (int a = kept; a < n; a++) /* in place: the residual's bytes */
        bm->vals[it[a].v].t.data = bm->vals[it[a].off].t.data;
    for (int v = 0; v < g->n_vals; v++) { /* a view's bytes are its root's (concat.c) */
        tensor *t = &bm->vals[v].t;
        if (!bm->vals[v].view) continue;
        if (t->owned) aligned_free(t->data);
        t->data = bm->vals[bm->vals[v].view - 1].t.data;
        t->owned = false;
        t->cap = t->room = 0;
    }
#if defined(__SANITIZE_ADDRESS__) || defined(AIT_POISON_OUTPUTS)
    memset(bm->arena, 0xff, need); /* as the executor's outputs: stale bytes are NaN */
#endif
    return AIT_OK;
}

/* The executor's schedule and running nodes, for relength to compare. */
static void shapes_note(built *bm)
{
    bm->sched_gen = exec_schedule_gen(bm->x);
    for (int i = 0; i < bm->g->n_nodes; i++) bm->ran[i] = exec_node_runs(bm->x, i);
}

static void sig_note(built *bm, tensor *const *inputs)
{
    for (int k = 0; k < bm->g->n_inputs; k++) {
        int64_t *s = &bm->sig[(size_t)k * (AIT_MAX_RANK + 2)];
        s[0] = inputs[k]->rank;
        s[1] = inputs[k]->dtype;
        memcpy(s + 2, inputs[k]->dims, sizeof(int64_t) * (size_t)inputs[k]->rank);
    }
}

static ait_status sched_make(built *bm, tensor *const *inputs)
{
    const graph *g = bm->g;
    TRY(exec_schedule(bm->x, inputs, bm->err));
    for (int k = 0; k < g->n_inputs; k++) bm->vals[g->inputs[k]].input = true;
    for (int v = 0; v < g->n_vals; v++) {
        nat_val *d = &bm->vals[v];
        d->spec = exec_scheduled(bm->x, v);
        /* A constant whose data the loader freed (nat_releases) is one still:
         * its node takes the prepared pack again. */
        if (!d->input && nat_shape(bm, v) && (d->spec->data || g->vals[v].konst)) {
            d->konst = d->done = true;
            d->cur = (tensor *)d->spec; /* read only */
        }
    }
    for (int k = 0; k < g->n_inputs; k++) {
        bm->vals[g->inputs[k]].cur = inputs[k];
        bm->vals[g->inputs[k]].done = true;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; exec_node_runs(bm->x, i) && k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0) bm->vals[g->nodes[i].in[k]].uses++;
    for (int j = 0; j < g->n_outputs; j++) bm->vals[g->outputs[j]].uses++;
    TRY(nat_fusions(bm));
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (!exec_node_runs(bm->x, i)) continue;
        bool done = false;
        for (int k = 0; k < n->n_out; k++) done |= n->out[k] >= 0 && bm->vals[n->out[k]].done;
        if (done) continue; /* swallowed by an earlier step's epilogue */
        int fi = bm->fus->of_node[i];
        if (fi >= 0 && bm->fus->f[fi].kind != FK_EPILOGUE && bm->fus->f[fi].kind != FK_CHAIN &&
            bm->fus->f[fi].last != i)
            continue; /* the attention, norm or rotary runs at its last node */
        TRY(sched_node(bm, i));
    }
    TRY(nat_layout(bm));
    nat_bands(bm);
    TRY(place_values(bm));
    sig_note(bm, inputs);
    shapes_note(bm);
    bm->scheduled = true;
    return saved_update(bm);
}

static ait_status schedule(built *bm, tensor *const *inputs)
{
    sched_clear(bm);
    bm->n_full++;
    ait_status s = sched_make(bm, inputs);
    if (s != AIT_OK) sched_clear(bm);
    return s;
}

/* Whether a value whose shape changed is touched by step s only where
 * that is allowed: a generic step (the reference op infers its shapes at
 * each run) or an attention, fused or the Attention op (its geometry is
 * made again). */
static bool step_follows(const built *bm, int s)
{
    return s < 0 || !bm->steps[s].op || bm->steps[s].op == &nat_attn_fused ||
           bm->steps[s].op == &nat_attention;
}

/* The schedule kept at new input dims of the same class (chain.c's: ranks,
 * dtypes, which dims are 0 or 1), as a decoder's next past length gives:
 * the executor schedules again (only what follows the changed dims,
 * exec.c), and when every value that changed (its shape, or a folded
 * constant's data: exec_changed_since) is neither placed nor laid out nor
 * touched by a native step but attentions, whose geometry is made again
 * here as sched_make makes it (nat_attn_fusion; the Attention op's take,
 * which also sizes its presents again), and every node runs
 * or not as before, the steps, their fusions, layouts and the arena stay as
 * they are (a native step never saw a changed value). *kept is false when
 * not (the caller schedules from scratch, as before). */
static ait_status relength(built *bm, tensor *const *inputs, bool *kept)
{
    const graph *g = bm->g;
    *kept = false;
    for (int k = 0; k < g->n_inputs; k++) {
        const int64_t *s = &bm->sig[(size_t)k * (AIT_MAX_RANK + 2)];
        if (!inputs[k] || s[0] != inputs[k]->rank || s[1] != inputs[k]->dtype) return AIT_OK;
        for (int d = 0; d < inputs[k]->rank; d++) {
            int64_t a = s[2 + d], b = inputs[k]->dims[d];
            if ((a < 2 ? a : 2) != (b < 2 ? b : 2)) return AIT_OK;
        }
    }
    TRY(exec_schedule(bm->x, inputs, bm->err));
    for (int i = 0; i < g->n_nodes; i++)
        if (exec_node_runs(bm->x, i) != bm->ran[i]) return AIT_OK;
    for (int v = 0; v < g->n_vals; v++) {
        const nat_val *d = &bm->vals[v];
        if (exec_scheduled(bm->x, v) != d->spec) return AIT_OK;
        if (!exec_changed_since(bm->x, v, bm->sched_gen)) continue;
        if (d->placed || d->nhwc || d->q8) return AIT_OK;
        int pr = g->vals[v].producer;
        if (pr >= 0 && !step_follows(bm, bm->step_of[pr])) return AIT_OK;
        for (int r = bm->reader_at[v]; r < bm->reader_at[v + 1]; r++)
            if (!step_follows(bm, bm->step_of[bm->readers[r]])) return AIT_OK;
    }
    for (int fi = 0; fi < bm->fus->n; fi++) {
        const fusion *f = &bm->fus->f[fi];
        if (f->kind != FK_ATTENTION) continue;
        if (nat_attn_fusion(bm, fi) != (bm->fus->of_node[f->last] == fi)) return AIT_OK;
    }
    for (int s = 0; s < bm->n_steps; s++) {
        nat_step *st = &bm->steps[s];
        if (st->op == &nat_attention) { /* its geometry and presents again, as sched_node */
            bool taken = false;
            TRY(nat_attention.take(bm, st->node, st, &taken));
            if (!taken) return AIT_OK;
        } else if (st->op == &nat_attn_fused) {
            st->scratch = kattention_scratch(&bm->att[st->node], bm->threads);
        } else {
            continue;
        }
        if (st->scratch > bm->scratch_size) return AIT_OK; /* sched_node grows it */
    }
    shapes_note(bm);
    sig_note(bm, inputs);
    bm->n_kept++;
    *kept = true;
    return AIT_OK;
}

static bool same_sig(const built *bm, tensor *const *inputs)
{
    if (!bm->scheduled) return false;
    for (int k = 0; k < bm->g->n_inputs; k++) {
        const int64_t *s = &bm->sig[(size_t)k * (AIT_MAX_RANK + 2)];
        if (!inputs[k] || s[0] != inputs[k]->rank || s[1] != inputs[k]->dtype ||
            memcmp(s + 2, inputs[k]->dims, sizeof(int64_t) * (size_t)inputs[k]->rank) != 0)
            return false;
    }
    return true;
}

/* ---- the backend --------------------------------------------------------------- */

static void nat_free(built *bm)
{
    if (!bm) return;
    vals_free(bm);
    nat_kv_free(bm);
    nat_kept_free(bm);
    packs_free(bm);
    nat_tuned_free(bm);
    free(bm->step_of);
    free(bm->op_of);
    free(bm->readers);
    free(bm->reader_at);
    free(bm->steps);
    free(bm->att);
    free(bm->sig);
    free(bm->saved);
    aligned_free(bm->scratch);
    aligned_free(bm->qa);
    aligned_free(bm->qr);
    aligned_free(bm->arena);
    free(bm->pl_items);
    free(bm->pl_hit);
    free(bm->pl_slot);
    free(bm->ran);
    exec_free(bm->x);
    free(bm);
}

/* bm->op_of and the readers of each value (native.h), for the schedules. */
static ait_status lookups_make(built *bm)
{
    const graph *g = bm->g;
    size_t n_reads = 0;
    for (int i = 0; i < g->n_nodes; i++) n_reads += (size_t)g->nodes[i].n_in;
    bm->op_of = calloc((size_t)g->n_nodes + 1, sizeof *bm->op_of);
    bm->reader_at = calloc((size_t)g->n_vals + 1, sizeof *bm->reader_at);
    bm->readers = malloc(sizeof *bm->readers * (n_reads + 1));
    int *next = malloc(sizeof *next * ((size_t)g->n_vals + 1));
    if (!bm->op_of || !bm->reader_at || !bm->readers || !next) {
        free(next);
        return err_set(bm->err, AIT_E_NOMEM, "native: out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        bm->op_of[i] = nat_op_find(&g->nodes[i]);
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0) bm->reader_at[g->nodes[i].in[k] + 1]++;
    }
    for (int v = 0; v < g->n_vals; v++) {
        bm->reader_at[v + 1] += bm->reader_at[v];
        next[v] = bm->reader_at[v];
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0) bm->readers[next[g->nodes[i].in[k]]++] = i;
    free(next);
    return AIT_OK;
}

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

static ait_status nat_build(const backend *b, const graph *module, const candidate_cfg *cfg,
                            built **out, ait_error *e)
{
    *out = NULL;
    const char *var = cfg && cfg->variant[0] ? cfg->variant : NULL;
    char why[200];
    int qgroup = 0, quant = var ? qg_scheme_find(var, &qgroup) : -1;
    /* the best kernel, Winograd convs (all, or on large planes only) */
    const int wino = !var                             ? 0
                     : strcmp(var, "wino") == 0       ? NAT_WINO_ALL
                     : strcmp(var, "wino-large") == 0 ? NAT_WINO_LARGE
                                                      : 0;
    const gemm_kernel *kern = var && quant < 0 && !wino ? gemm_kernel_find(var, why, sizeof why)
                                                        : gemm_kernel_best();
    if (!kern) return err_set(e, AIT_E_INVALID_ARG, "backend 'native': variant: %s", why);
    built *bm = calloc(1, sizeof *bm);
    if (!bm) return err_set(e, AIT_E_NOMEM, "native: out of memory");
    bm->g = module;
    bm->kern = kern;
    bm->quant = quant;
    bm->qgroup = qgroup;
    bm->qstatic = var && strcmp(var, "int8") == 0;
    bm->wino = wino;
    bm->ranges = cfg ? cfg->ranges : NULL;
    bm->err = e ? e : &bm->own_err;
    bm->threads = cfg && cfg->threads > 0 ? cfg->threads : 1;
    bm->prep = cfg && cfg->prep && cfg->prep->n > 0 ? cfg->prep : NULL;
    /* An artifact's weights packed for another kernel this CPU runs (saved
     * where another kernel is the best) are used as they are, with it. */
    for (int k = 0; (!var || wino) && bm->prep && k < bm->prep->n; k++) {
        const gemm_kernel *pk = gemm_packed_kernel(bm->prep->blobs[k].data, bm->prep->blobs[k].size);
        if (pk && gemm_kernel_available(pk)) {
            bm->kern = pk;
            break;
        }
    }
    bm->vals = calloc((size_t)module->n_vals + 1, sizeof *bm->vals);
    bm->steps = calloc((size_t)module->n_nodes + 1, sizeof *bm->steps);
    bm->packs = calloc((size_t)module->n_nodes + 1, sizeof *bm->packs);
    bm->att = calloc((size_t)module->n_nodes + 1, sizeof *bm->att);
    bm->sig = calloc((size_t)(module->n_inputs + 1) * (AIT_MAX_RANK + 2), sizeof *bm->sig);
    bm->step_of = calloc((size_t)module->n_nodes + 1, sizeof *bm->step_of);
    bm->pl_items = calloc((size_t)module->n_vals + 1, sizeof *bm->pl_items);
    bm->pl_hit = calloc((size_t)module->n_vals + 1, sizeof *bm->pl_hit);
    bm->pl_slot = calloc((size_t)module->n_vals + 1, sizeof *bm->pl_slot);
    bm->ran = calloc((size_t)module->n_nodes + 1, sizeof *bm->ran);
    ait_status s = AIT_OK;
    if (!bm->vals || !bm->steps || !bm->packs || !bm->sig || !bm->att || !bm->step_of ||
        !bm->pl_items || !bm->pl_hit || !bm->pl_slot || !bm->ran)
        s = err_set(e, AIT_E_NOMEM, "native: out of memory");
    if (s == AIT_OK) s = lookups_make(bm);
    if (s == AIT_OK) s = nat_tuned_setup(bm, cfg, e);
    if (s == AIT_OK) s = exec_create(module, NULL, bm->threads, &bm->x, e);
    if (s == AIT_OK && static_inputs(module)) {
        tensor *in[64] = {0}, shapes[64];
        if (module->n_inputs > 64)
            s = err_set(e, AIT_E_UNSUPPORTED, "native: more than 64 module inputs");
        for (int k = 0; s == AIT_OK && k < module->n_inputs; k++) {
            const value *d = &module->vals[module->inputs[k]];
            memset(&shapes[k], 0, sizeof shapes[k]);
            tensor_set_shape(&shapes[k], d->dtype, d->rank, d->dims);
            in[k] = &shapes[k];
        }
        if (s == AIT_OK) s = schedule(bm, in);
        for (int k = 0; s == AIT_OK && k < module->n_inputs; k++)
            bm->vals[module->inputs[k]].cur = NULL; /* the shapes above are gone */
    }
    if (s != AIT_OK) {
        bm->err = &bm->own_err;
        nat_free(bm);
        if (e && b) err_prefix(e, "backend '%s': ", b->name);
        return s;
    }
    bm->err = &bm->own_err;
    *out = bm;
    return AIT_OK;
}

tensor *nat_dest(const built *bm, int v)
{
    const graph *g = bm->g;
    for (int j = 0; bm->run_dest && j < g->n_outputs; j++)
        if (g->outputs[j] == v && bm->run_dest[j]) return bm->run_dest[j];
    return NULL;
}

/* Step st; a module output a generic step makes is written into its
 * destination (nat_dest) where given (the value's cur points there until
 * run_into resets). */
static ait_status run_step(built *bm, const nat_step *st, ait_error *e)
{
    const graph *g = bm->g;
    if (st->folded) return AIT_OK; /* a later Conv runs it (nat_step.pro, nat_step.pre) */
    if (st->op) return st->op->run(bm, st);
    const node *n = &g->nodes[st->node];
    tensor *in[64], *out[64];
    if (nat_kv_append_step(bm, n)) /* a cache's present: its new rows only */
        return nat_kv_append(bm, st->node, nat_dest(bm, n->out[0]));
    if (n->n_in > 64 || n->n_out > 64)
        return nat_fail(bm, st->node, AIT_E_UNSUPPORTED, "more than 64 inputs or outputs");
    for (int k = 0; k < n->n_in; k++) in[k] = n->in[k] >= 0 ? bm->vals[n->in[k]].cur : NULL;
    for (int k = 0; k < n->n_out; k++) {
        out[k] = n->out[k] >= 0 ? &bm->vals[n->out[k]].t : NULL;
        tensor *d = out[k] ? nat_dest(bm, n->out[k]) : NULL;
        if (d) out[k] = bm->vals[n->out[k]].cur = d;
    }
    ait_status s = exec_run_node(bm->x, st->node, in, out, e);
    if (s != AIT_OK) err_prefix(e, "native: ");
    return s;
}

/* The scheduled steps, with dest (backend.h, run_into) the destinations
 * nat_dest gives during them. */
static ait_status run_steps(built *bm, tensor *const *dest, ait_error *e)
{
    bm->run_dest = dest;
    bm->run_gen++;
    ait_status s = AIT_OK;
    for (int i = 0; s == AIT_OK && i < bm->n_steps; i++) {
        if (bm->steps[i].band) { /* a block by bands of rows (irb.c) */
            s = nat_band_run(bm, i);
            i += bm->steps[i].band - 1;
        } else
            s = run_step(bm, &bm->steps[i], e);
    }
    bm->run_dest = NULL;
    return s;
}

ait_status nat_prepare(built *bm, tensor *const *inputs, ait_error *e)
{
    TRY(backend_inputs_check(bm->g, inputs, "native", e));
    if (same_sig(bm, inputs)) return AIT_OK;
    bool kept = false;
    ait_status s = bm->scheduled ? relength(bm, inputs, &kept) : AIT_OK;
    if (s != AIT_OK) {
        sched_clear(bm); /* as a failed schedule leaves it */
        return s;
    }
    if (!kept) TRY(schedule(bm, inputs));
    return AIT_OK;
}

/* Whether module output j, a value a native step writes into the arena
 * (placed), plain float32 rows (no view, layout or cache), listed once,
 * can be written into dest, which has room for it: the step then writes
 * there (run_into swaps the value's bytes for dest's during the run), and
 * the plan runner copies nothing at the module's edge. */
static bool dest_takes(const built *bm, int j, const tensor *dest)
{
    const graph *g = bm->g;
    const int v = g->outputs[j];
    const nat_val *d = &bm->vals[v];
    if (!dest || !dest->data || dest == d->cur || !d->placed || d->nhwc || d->q8 || d->view ||
        d->kv_cap || d->t.dtype != AIT_F32 || (dest->owned ? dest->cap : dest->room) < tensor_nbytes(&d->t))
        return false;
    for (int k = 0; k < g->n_outputs; k++)
        if (k != j && g->outputs[k] == v) return false;
    for (int w = 0; w < g->n_vals; w++)
        if (bm->vals[w].view == v + 1) return false; /* a view reads its bytes (concat.c) */
    for (int k = 0; k < g->n_inputs; k++)
        if (dest == bm->vals[g->inputs[k]].cur) return false;
    return true;
}

ait_status nat_run_into(built *bm, tensor *const *inputs, tensor *const *dest, tensor **outputs,
                        ait_error *e)
{
    const graph *g = bm->g;
    bm->err = e ? e : &bm->own_err;
    TRY(nat_prepare(bm, inputs, e));
    for (int k = 0; k < g->n_inputs; k++) bm->vals[g->inputs[k]].cur = inputs[k];
    void *own[64]; /* the arena bytes of outputs written into dest */
    const int n_own = g->n_outputs < 64 ? g->n_outputs : 64;
    for (int j = 0; j < n_own; j++) {
        own[j] = NULL;
        if (!dest || !dest_takes(bm, j, dest[j])) continue;
        tensor *t = &bm->vals[g->outputs[j]].t;
        own[j] = t->data;
        t->data = dest[j]->data;
    }
    ait_status s = run_steps(bm, dest, e);
    for (int j = 0; j < n_own; j++) {
        if (!own[j]) continue;
        tensor *t = &bm->vals[g->outputs[j]].t;
        tensor_set_shape(dest[j], t->dtype, t->rank, t->dims);
        t->data = own[j];
        if (bm->vals[g->outputs[j]].cur == t) bm->vals[g->outputs[j]].cur = dest[j];
    }
    for (int j = 0; s == AIT_OK && j < g->n_outputs; j++) {
        outputs[j] = bm->vals[g->outputs[j]].cur;
        if (!outputs[j] || !outputs[j]->data)
            s = err_set(e, AIT_E_INTERNAL, "native: output '%s' was not computed",
                        g->vals[g->outputs[j]].name);
    }
    /* values written into dest point back at their own tensors: the
     * caller's memory is this run's only */
    for (int j = 0; dest && j < g->n_outputs; j++) {
        nat_val *d = &bm->vals[g->outputs[j]];
        if (dest[j] && d->cur == dest[j]) d->cur = &d->t;
    }
    if (s == AIT_OK) bm->err = &bm->own_err;
    return s;
}

static ait_status nat_run(built *bm, tensor *const *inputs, tensor **outputs, ait_error *e)
{
    return nat_run_into(bm, inputs, NULL, outputs, e);
}

static ait_status nat_save(const built *bm, prepared *out, ait_error *e)
{
    (void)e;
    out->n = bm->n_saved;
    out->blobs = bm->saved;
    return AIT_OK;
}

static const op_def *nat_op_for(const graph *g, const node *n)
{
    const nat_op *op = nat_op_find(n);
    if (!op) return NULL;
    /* the data input: others may be parameters of other types (Resize's
     * sizes); each op's take checks the rest */
    int v = n->n_in > 0 ? n->in[0] : -1;
    if (!op->int8_in && v >= 0 && v < g->n_vals && g->vals[v].dtype != AIT_UNDEFINED &&
        g->vals[v].dtype != AIT_F32)
        return NULL;
    return n->def;
}

/* The other GEMM kernels this CPU runs that the table marks worth trying,
 * and "wino" (3x3 stride-1 Convs as Winograd F(4x4, 3x3), conv.c) where
 * the module has such a Conv, "wino-large" (F(4x4) on large planes, F(2x2)
 * on small ones) where it has them on small planes. */
static int nat_variants(const graph *module, const char **out, int max)
{
    int n = 0;
    bool any = false;
    for (int i = 0; i < module->n_nodes && !any; i++) any = nat_op_find(&module->nodes[i]) != NULL;
    const gemm_kernel *best = gemm_kernel_best();
    for (int i = 0; any && i < gemm_kernel_count() && n < max; i++) {
        const gemm_kernel *k = gemm_kernel_at(i);
        if (k != best && gemm_kernel_available(k) && gemm_kernel_tried(k))
            out[n++] = gemm_kernel_name(k);
    }
    if (n < max && nat_wino_in(module)) out[n++] = "wino";
    if (n < max && nat_wino_small(module)) out[n++] = "wino-large";
    return n;
}

static void nat_describe(char *buf, size_t n) { gemm_kernel_describe(gemm_kernel_best(), buf, n); }

/* The weights are packed for the best kernel's panel shape (a variant's
 * kernel needs no more than it). */
static void nat_cpu_needs(char *buf, size_t n)
{
    snprintf(buf, n, "%s", gemm_kernel_needs(gemm_kernel_best()));
}

/* The quantised variants (kernels/qgemm.h) when the module has a MatMul or
 * Gemm with a constant float32 2-D B, the weights they quantise; int4 in
 * groups of 32, 64 (int4wo-64) and 128 (int4wo-128); fp16 (half weights,
 * float compute). A module with only
 * Convs of one group: int8dq (qconv.c), the one that pays on compute-bound
 * convolutions. Any module with such a Conv: int8, its static variant
 * (activation scales calibrated by the tuner; a MatMul or Gemm in the
 * same module runs int8dq's per-row scales). */
static int nat_quant_variants(const graph *module, const char **out, int max)
{
    static const char *const qs[] = {"bf16", "int8dq", "int8wo", "int4wo", "int4wo-64",
                                     "int4wo-128", "fp16"};
    bool any = false;
    for (int i = 0; i < module->n_nodes && !any; i++) {
        const node *n = &module->nodes[i];
        if (n->domain && n->domain[0]) continue;
        if (strcmp(n->op, "MatMul") != 0 && strcmp(n->op, "Gemm") != 0) continue;
        const value *b = n->n_in > 1 && n->in[1] >= 0 ? &module->vals[n->in[1]] : NULL;
        any = b && b->konst && b->konst->dtype == AIT_F32 && b->konst->rank == 2;
    }
    int k = 0;
    for (size_t i = 0; any && i < sizeof qs / sizeof qs[0] && k < max; i++) out[k++] = qs[i];
    if (!any && k < max && nat_qconv_in(module)) out[k++] = "int8dq"; /* Conv: qconv.c */
    if (k < max && nat_qconv_in(module)) out[k++] = "int8"; /* static, calibrated: qconv.c */
    return k;
}

/* SQNR bounds: bf16 keeps 8 significant bits (35 dB), int8 and int4 25 dB.
 * fp16 keeps 11 (rounding alone: about 68 dB on the weights, where bf16's
 * 8 give about 50): 45 dB keeps bf16's margin below that and more, and
 * catches what the rounding does not explain (weights clamped at half's
 * 65504, or a layer of weights small enough to lose bits as subnormals). */
static double nat_min_sqnr(const char *variant)
{
    int g;
    int s = qg_scheme_find(variant, &g);
    return s < 0 ? 0 : s == QG_BF16 ? 35.0 : s == QG_FP16WO ? 45.0 : 25.0;
}

/* A MatMul's or Gemm's B, or a Conv's weights (input 1), whose pack came
 * from the artifact: every later schedule takes that pack (nat_pack_get
 * keeps it; conv_finish reads the weights only to make a pack, in either
 * layout), so no run reads them again. A depthwise Conv has no pack (its
 * kernel reads the weights, or a copy made at each layout): kept. Every
 * other constant is kept: biases are small. Any other reader of the value
 * keeps it too. */
static bool nat_pack_from_blob(const built *bm, int i)
{
    const nat_pack *p = &bm->packs[i];
    /* not scheduled yet: the first schedule takes the node's blob or fails (nat_pack_get) */
    return p->data ? !p->own : backend_prep_has_node(bm->prep, i);
}

static bool nat_releases(const built *bm, const graph *module, int v)
{
    return bm->prep && bm->g == module &&
           backend_weights_from_blobs(bm, module, v, nat_pack_from_blob);
}

/* The arena and the storage values own (reference ops' outputs, a fused
 * attention's present keys and values, ...). */
static size_t nat_value_bytes(const built *bm)
{
    size_t n = bm->arena_cap;
    for (int v = 0; v < bm->g->n_vals; v++)
        if (bm->vals[v].t.owned) n += bm->vals[v].t.cap;
    return n;
}

static void nat_sched_stats(const built *bm, sched_stats *acc)
{
    acc->built_full += bm->n_full;
    acc->built_kept += bm->n_kept;
    exec_sched_stats(bm->x, acc);
}

const backend backend_native = {
    .name = "native",
    .summary = "ait's own kernels, float32: MatMul, Gemm and 2-D Conv as packed GEMMs with "
               "fused bias, activation and residual; depthwise Conv, ConvTranspose, pools, "
               "Resize, LayerNorm, RMSNorm, Softmax; attention (written out or the Attention "
               "op) as one tiled kernel reading past keys and values in place",
    .describe = nat_describe,
    .op_for = nat_op_for,
    .build = nat_build,
    .run = nat_run,
    .run_into = nat_run_into,
    .run_kv = nat_run_kv,
    .free = nat_free,
    .save = nat_save,
    .variants = nat_variants,
    .cpu_needs = nat_cpu_needs,
    .quant_variants = nat_quant_variants,
    .min_sqnr = nat_min_sqnr,
    .releases = nat_releases,
    .value_bytes = nat_value_bytes,
    .sched_stats = nat_sched_stats,
};
