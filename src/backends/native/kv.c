/* Key/value caches appended in place (backend.run_kv, core/kv.h): a past
 * input and its present output are views on one caller buffer. Where the
 * schedule reads the past only through fused attention (its past operand,
 * read with the cache's strides: attn.c) and makes the present by a
 * generic Concat(past, new) along the cache's axis that nothing else reads,
 * the Concat writes the new positions only and the past is never copied;
 * so does the ONNX Attention op run on the kernel when the pair is its
 * past_key (past_value) and present_key (present_value) and nothing else
 * reads them (attn.c, nat_attn_op_appends).
 * Any other schedule copies that cache: the past gathered into a dense
 * tensor of the module's, the present computed into native's own storage
 * and scattered into the buffer. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"

/* Whether n reads pv's or ov's data (Shape and Size read dims only). */
static bool reads(const node *n, int pv, int ov)
{
    if (onnx_domain_default(n->domain) && (!strcmp(n->op, "Shape") || !strcmp(n->op, "Size")))
        return false;
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && (n->in[k] == pv || n->in[k] == ov)) return true;
    return false;
}

/* A plain view of value v itself (no reshape, no transpose). */
static bool plain(const fuse_view *w, int v)
{
    if (w->v != v) return true; /* not this value's view */
    if (w->lay != v) return false;
    for (int i = 0; i < w->rank; i++)
        if (w->perm[i] != i) return false;
    return true;
}

/* Whether node n is the Concat(past pv, new) along axis making ov. */
static bool is_append(const built *bm, const node *n, int pv, int ov, int axis)
{
    if (strcmp(n->op, "Concat") || n->n_in != 2 || n->n_out != 1 || n->out[0] != ov ||
        n->in[0] != pv || n->in[1] < 0 || n->in[1] == pv)
        return false;
    const tensor *p = nat_shape(bm, pv), *x = nat_shape(bm, n->in[1]);
    int64_t a = attr_int(n, "axis", 0);
    if (!p || !x || x->dtype != p->dtype || x->rank != p->rank || bm->vals[n->in[1]].nhwc)
        return false;
    if (a < 0) a += p->rank;
    return a == axis;
}

/* Whether cache (pv, ov, axis) is appended in place by this schedule. */
static bool accept(const built *bm, int pv, int ov, int axis)
{
    const graph *g = bm->g;
    const tensor *p = nat_shape(bm, pv);
    if (pv == ov || !p || axis < 0 || axis >= p->rank || bm->vals[pv].nhwc || bm->vals[ov].nhwc)
        return false;
    for (int j = 0, seen = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == ov && ++seen > 1) return false;
    int appends = 0;
    for (int s = 0; s < bm->n_steps; s++) {
        const nat_step *st = &bm->steps[s];
        const node *n = &g->nodes[st->node];
        if (!st->op) {
            if (is_append(bm, n, pv, ov, axis)) appends++;
            else if (reads(n, pv, ov)) return false;
            continue;
        }
        for (int j = 0; j < st->epi.n_nodes; j++)
            if (reads(&g->nodes[st->epi.nodes[j]], pv, ov)) return false;
        if (st->op == &nat_attention && axis == 2 && nat_attn_op_appends(n, pv, ov)) {
            appends++; /* the op reads the past with the cache's strides */
            continue;
        }
        const fusion *f = st->fus >= 0 ? &bm->fus->f[st->fus] : NULL;
        if (f && (f->in == pv || f->in == ov || f->out == ov)) return false;
        if (!f || f->kind != FK_ATTENTION) {
            if (reads(n, pv, ov)) return false;
            for (int j = 0; f && j < f->n_nodes; j++)
                if (reads(&g->nodes[f->nodes[j]], pv, ov)) return false;
            continue;
        }
        /* the attention kernel reads its views only (its nodes may read
         * the present: the keys it reads as past and current parts) */
        const fuse_attn *a = &f->att;
        const int other[] = {a->q.v, a->k.v, a->v.v, a->mask, a->bmask, a->q.lay, a->k.lay,
                             a->v.lay, a->kp.lay == pv ? -1 : a->kp.lay,
                             a->vp.lay == pv ? -1 : a->vp.lay};
        for (size_t k = 0; k < sizeof other / sizeof *other; k++)
            if (other[k] >= 0 && (other[k] == pv || other[k] == ov)) return false;
        if (a->kp.v == ov || a->vp.v == ov || !plain(&a->kp, pv) || !plain(&a->vp, pv))
            return false;
    }
    return appends == 1;
}

bool nat_kv_append_step(const built *bm, const node *n)
{
    return n->n_out == 1 && n->out[0] >= 0 && bm->vals[n->out[0]].kv_cap > 0;
}

ait_status nat_kv_append(built *bm, int i, tensor *dest)
{
    const node *n = &bm->g->nodes[i];
    const nat_val *pd = &bm->vals[n->in[0]], *xd = &bm->vals[n->in[1]];
    nat_val *od = &bm->vals[n->out[0]];
    const tensor *p = pd->cur, *x = xd->cur;
    if (!dest || !p || !x || !x->data)
        return nat_fail(bm, i, AIT_E_INTERNAL, "a key/value cache's present has no buffer");
    const int axis = od->kv_axis, r = p->rank;
    int64_t dims[AIT_MAX_RANK], L = p->dims[axis], S = x->dims[axis];
    for (int d = 0; d < r; d++) {
        if (d != axis && x->dims[d] != p->dims[d])
            return nat_fail(bm, i, AIT_E_SHAPE, "inputs of other dims than along axis %d", axis);
        dims[d] = d == axis ? L + S : p->dims[d];
    }
    if (L + S > od->kv_cap) {
        char b[160];
        return nat_fail(bm, i, AIT_E_SHAPE, "output '%s' needs shape %s; the cache bound to it "
                        "holds %lld positions along axis %d", bm->g->vals[n->out[0]].name,
                        shape_str(dims, r, b, sizeof b), (long long)od->kv_cap, axis);
    }
    int64_t outer, inner;
    kv_split(dims, r, axis, &outer, &inner);
    kv_rows_copy(dest->data, od->kv_cap, L, x->data, S, 0, S, outer, inner,
                 ait_dtype_size(p->dtype));
    tensor_set_shape(dest, p->dtype, r, dims);
    od->cur = dest;
    return AIT_OK;
}

void nat_kv_free(built *bm)
{
    for (int k = 0; bm->kv_tmp && k < bm->g->n_inputs; k++) tensor_release(&bm->kv_tmp[k]);
    free(bm->kv_tmp);
    free(bm->kv_in);
    free(bm->kv_dest);
}

static void kv_clear(built *bm, const kv_view *kv, int n_kv)
{
    const graph *g = bm->g;
    for (int k = 0; k < n_kv; k++) {
        bm->vals[g->inputs[kv[k].in]].kv_cap = 0;
        bm->vals[g->outputs[kv[k].out]].kv_cap = 0;
    }
}

ait_status nat_run_kv(built *bm, tensor *const *inputs, tensor *const *dest, kv_view *kv,
                      int n_kv, tensor **outputs, ait_error *e)
{
    const graph *g = bm->g;
    if (!bm->kv_in) {
        bm->kv_in = calloc((size_t)g->n_inputs + 1, sizeof *bm->kv_in);
        bm->kv_dest = calloc((size_t)g->n_outputs + 1, sizeof *bm->kv_dest);
        bm->kv_tmp = calloc((size_t)g->n_inputs + 1, sizeof *bm->kv_tmp);
        if (!bm->kv_in || !bm->kv_dest || !bm->kv_tmp) {
            nat_kv_free(bm);
            bm->kv_in = bm->kv_dest = NULL, bm->kv_tmp = NULL;
            return err_set(e, AIT_E_NOMEM, "native: out of memory");
        }
    }
    bm->err = e ? e : &bm->own_err;
    TRY(nat_prepare(bm, inputs, e)); /* scheduled at these shapes: the run does not again */
    memcpy(bm->kv_in, inputs, sizeof *inputs * (size_t)g->n_inputs);
    for (int j = 0; j < g->n_outputs; j++) bm->kv_dest[j] = dest ? dest[j] : NULL;
    ait_status s = AIT_OK;
    for (int k = 0; s == AIT_OK && k < n_kv; k++) {
        kv_view *v = &kv[k];
        int pv = g->inputs[v->in], ov = g->outputs[v->out];
        const tensor *p = inputs[v->in];
        v->copied = !accept(bm, pv, ov, v->axis);
        if (!v->copied) {
            bm->vals[pv].kv_cap = bm->vals[ov].kv_cap = v->cap;
            bm->vals[pv].kv_axis = bm->vals[ov].kv_axis = v->axis;
            continue;
        }
        /* copied: the past into a dense tensor made once at the cache's size */
        tensor *t = &bm->kv_tmp[v->in];
        int64_t outer, inner;
        tensor_set_shape(t, p->dtype, p->rank, p->dims);
        t->dims[v->axis] = v->cap;
        s = tensor_alloc(t, e);
        t->dims[v->axis] = p->dims[v->axis];
        kv_split(p->dims, p->rank, v->axis, &outer, &inner);
        if (s == AIT_OK)
            kv_rows_copy(t->data, p->dims[v->axis], 0, p->data, v->cap, 0, p->dims[v->axis], outer,
                         inner, ait_dtype_size(p->dtype));
        bm->kv_in[v->in] = t;
        bm->kv_dest[v->out] = NULL;
    }
    if (s == AIT_OK) s = nat_run_into(bm, bm->kv_in, bm->kv_dest, outputs, e);
    kv_clear(bm, kv, n_kv);
    /* the copied presents scattered into their caches */
    for (int k = 0; s == AIT_OK && k < n_kv; k++) {
        const kv_view *v = &kv[k];
        if (bm->kv_dest[v->out]) continue; /* appended in place */
        const tensor *p = inputs[v->in], *o = outputs[v->out];
        tensor *d = dest[v->out];
        int64_t cdims[AIT_MAX_RANK], outer, inner, n;
        memcpy(cdims, p->dims, sizeof cdims);
        cdims[v->axis] = v->cap;
        s = kv_fits(o, cdims, p->rank, v->axis, g->vals[g->outputs[v->out]].name, e);
        if (s != AIT_OK) {
            err_prefix(e, "native: ");
            break;
        }
        n = o->dims[v->axis];
        kv_split(o->dims, o->rank, v->axis, &outer, &inner);
        kv_rows_copy(d->data, v->cap, 0, o->data, n, 0, n, outer, inner, ait_dtype_size(o->dtype));
        tensor_set_shape(d, o->dtype, o->rank, o->dims);
        outputs[v->out] = d;
    }
    if (s == AIT_OK) bm->err = &bm->own_err;
    return s;
}
