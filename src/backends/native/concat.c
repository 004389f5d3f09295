/* Concat along the channels of 4-D float32 values (axis 1), with no copy
 * where it can: an input that only this Concat reads and that a Conv step
 * computes (as a GEMM, no residual: nat_conv_cat; or a nearest Resize step
 * without an Add: nat_rz_cat) is written by that step
 * straight into its channels of the Concat's output (nat_step.cat and
 * cat_c0), so the Concat copies only its other inputs, image by image. A
 * SqueezeNet Fire module's two expand convolutions so cost no copy. When
 * every input is written so, the Concat runs channels-last too (layout.c):
 * its inputs are then NHWC with it, each conv's rows C apart. A Concat
 * that a channel shuffle alone reads (shuffle.c: ShuffleNet's units) is
 * one step with it instead: each input copied once, image by image, to its
 * shuffled channels (geo[15] then -g, g the shuffle's groups), each input
 * and the output in its own layout (layout.c). Any other Concat over
 * channels copies its inputs (the first 15 may be written in place), each
 * from its own layout, so that DenseNet's Concats of every earlier layer's
 * output keep its dense blocks channels-last; but one that copies every
 * input into a module output stays on the reference op. */
#include <string.h>

#include "backends/native/native.h"
#include "kernels/chan_copy.h"

/* The conv step (before step `before`) that writes value v, when v has no
 * other reader and the step can write into a Concat's channels, else NULL. */
static nat_step *cat_writer(built *bm, int before, int v)
{
    const nat_val *d = &bm->vals[v];
    if (d->input || d->konst || d->uses != 1) return NULL;
    for (int s = before - 1; s >= 0; s--) {
        nat_step *st = &bm->steps[s];
        if (st->epi.out == v) return st->cat < 0 && (nat_conv_cat(st) || nat_rz_cat(st)) ? st : NULL;
    }
    return NULL;
}

static ait_status cat_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *y = nat_shape(bm, n->out[0]);
    *taken = false;
    if (!y || y->dtype != AIT_F32 || y->rank != 4 || n->n_in < 1) return AIT_OK;
    int64_t axis = attr_int(n, "axis", 0);
    if (axis != 1 && axis != -3) return AIT_OK;
    nat_step *w[15];
    int64_t c0 = 0;
    for (int k = 0; k < n->n_in; k++) {
        const tensor *x = nat_shape(bm, n->in[k]);
        if (!x || x->dtype != AIT_F32 || x->rank != 4 || x->dims[0] != y->dims[0] ||
            x->dims[2] != y->dims[2] || x->dims[3] != y->dims[3])
            return AIT_OK;
        if (k < 15) {
            /* the same value twice has two uses: never written in place */
            w[k] = cat_writer(bm, bm->n_steps, n->in[k]);
            st->geo[k] = c0; /* input k's first channel */
        }
        c0 += x->dims[1];
    }
    if (c0 != y->dims[1]) return AIT_OK;
    int64_t g = n->n_in <= 15 ? nat_shuffle_after(bm, n->out[0], &st->epi) : 0;
    if (g > 0) {
        st->geo[15] = -g;
        st->can_nhwc = st->nhwc_ins = true;
        *taken = true;
        return AIT_OK;
    }
    st->geo[15] = 0; /* which inputs are written in place, a bit each */
    for (int k = 0; k < n->n_in && k < 15; k++) {
        if (!w[k]) continue;
        w[k]->cat = n->out[0];
        w[k]->cat_c0 = st->geo[k];
        st->geo[15] |= (int64_t)1 << k;
    }
    /* Copies only, of a module output: left to the reference op, as before
     * (a decoder's present keys, Concat(past, new), are appended in place
     * there: kv.c). */
    if (!st->geo[15] && nat_is_output(bm->g, n->out[0])) return AIT_OK;
    st->can_nhwc = st->nhwc_ins = true; /* the others copied from their own layouts */
    *taken = true;
    return AIT_OK;
}

/* A member of a view group (nat_cat_views): copies its inputs [cp0, cp1)
 * that no conv writes there into the root's channels. */
static ait_status view_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const tensor *r = &bm->vals[st->view - 1].t;
    const int64_t N = r->dims[0], C = r->dims[1], hw = r->dims[2] * r->dims[3];
    int64_t c0 = 0; /* input k's first channel */
    for (int k = 0; k < st->cp1; k++) {
        const nat_val *d = &bm->vals[n->in[k]];
        const int64_t ck = nat_shape(bm, n->in[k])->dims[1];
        c0 += ck;
        if (k < st->cp0 || d->in_cat) continue;
        if (!d->cur || !d->cur->data)
            return nat_fail(bm, st->node, AIT_E_INTERNAL, "input %d was not computed", k);
        kchan_geom g = {N, hw, ck, 0, C, c0 - ck, 0, d->nhwc, true};
        kchan_copy(&g, d->cur->data, ck, r->data, bm->threads);
    }
    return AIT_OK;
}

/* Copies the inputs no conv wrote in place (the output is then NCHW), or
 * every input to its shuffled channels. */
static ait_status cat_run(built *bm, const nat_step *st)
{
    if (st->view) return view_run(bm, st);
    const node *n = &bm->g->nodes[st->node];
    const nat_val *yv = &bm->vals[st->epi.out];
    const tensor *y = &yv->t;
    const int64_t N = y->dims[0], C = y->dims[1], hw = y->dims[2] * y->dims[3];
    if (st->geo[15] == -2 && n->n_in == 2 && yv->nhwc) { /* ShuffleNet's: two halves, NHWC */
        const nat_val *a = &bm->vals[n->in[0]], *b = &bm->vals[n->in[1]];
        if (a->nhwc && b->nhwc && a->cur && b->cur && a->cur->dims[1] == C / 2 &&
            b->cur->dims[1] == C / 2) {
            kchan_interleave2(a->cur->data, b->cur->data, N * hw, C / 2, y->data, bm->threads);
            return AIT_OK;
        }
    }
    int64_t c0 = 0; /* input k's first channel */
    for (int k = 0; k < n->n_in; k++) {
        const nat_val *d = &bm->vals[n->in[k]];
        const tensor *xs = nat_shape(bm, n->in[k]);
        const int64_t ck = xs->dims[1];
        c0 += ck;
        if (k < 15 && st->geo[15] > 0 && (st->geo[15] >> k & 1)) continue; /* written in place */
        if (!d->cur || !d->cur->data)
            return nat_fail(bm, st->node, AIT_E_INTERNAL, "input %d was not computed", k);
        if (st->geo[15] < 0 || d->nhwc || yv->nhwc) {
            kchan_geom g = {N, hw, ck, 0, C, c0 - ck, st->geo[15] < 0 ? -st->geo[15] : 0, d->nhwc,
                            yv->nhwc};
            kchan_copy(&g, d->cur->data, ck, y->data, bm->threads);
            continue;
        }
        for (int64_t im = 0; im < N; im++)
            memcpy((float *)y->data + (im * C + c0 - ck) * hw,
                   (const float *)d->cur->data + im * ck * hw, sizeof(float) * (size_t)(ck * hw));
    }
    return AIT_OK;
}

const nat_op nat_concat = {"Concat", cat_take, cat_run, NULL};

/* Whether step s is a channels-last Concat over channels (not a shuffle's)
 * that no view group holds, whose output is no module output. */
static bool cat_plain(const built *bm, int s)
{
    const nat_step *st = &bm->steps[s];
    return st->op == &nat_concat && !st->view && st->geo[15] >= 0 && bm->vals[st->epi.out].nhwc &&
           !bm->vals[st->epi.out].q8 && !nat_is_output(bm->g, st->epi.out);
}

/* Whether every reader of v is a BatchNormalization step reading it as its
 * data input (norm.c reads a view's strided rows). */
static bool view_readers(const built *bm, int v)
{
    int n = 0;
    for (int r = bm->reader_at[v]; r < bm->reader_at[v + 1]; r++) {
        int i = bm->readers[r], s = bm->step_of[i];
        if (!exec_node_runs(bm->x, i)) continue;
        if (s < 0 || bm->steps[s].op != &nat_batchnorm || bm->steps[s].node != i ||
            bm->g->nodes[i].in[0] != v)
            return false;
        for (int k = 1; k < bm->g->nodes[i].n_in; k++)
            if (bm->g->nodes[i].in[k] == v) return false;
        n++;
    }
    return n > 0 && n == bm->vals[v].uses;
}

/* The conv (or Resize) step writing value v, when it can write into a
 * Concat's channels channels-last, else NULL. */
static nat_step *view_writer(built *bm, int v, int root)
{
    for (int s = 0; s < bm->n_steps; s++) {
        nat_step *st = &bm->steps[s];
        if (st->epi.out != v) continue;
        return (st->cat < 0 || st->cat == root) && (nat_conv_cat(st) || nat_rz_cat(st)) &&
                       bm->vals[v].nhwc && !bm->vals[v].q8 ? st : NULL;
    }
    return NULL;
}

void nat_cat_views(built *bm)
{
    const graph *g = bm->g;
    if (bm->qstatic) return;
    for (int r = bm->n_steps - 1; r >= 0; r--) {
        if (!cat_plain(bm, r)) continue;
        nat_step *rs = &bm->steps[r];
        const node *rn = &g->nodes[rs->node];
        bool dup = false;
        for (int k = 0; k < rn->n_in && !dup; k++)
            for (int j = 0; j < k; j++) dup |= rn->in[j] == rn->in[k];
        if (dup) continue;
        /* members: earlier Concats over a prefix of rn's inputs, longer in step order */
        int mem[64], n_mem = 0, last = 0;
        for (int s = 0; s < r && n_mem < 63; s++) {
            const node *sn = &g->nodes[bm->steps[s].node];
            if (!cat_plain(bm, s) || bm->steps[s].geo[15] != 0 || sn->n_in >= rn->n_in ||
                sn->n_in <= last || !view_readers(bm, bm->steps[s].epi.out))
                continue;
            bool prefix = true;
            for (int k = 0; k < sn->n_in && prefix; k++) prefix = sn->in[k] == rn->in[k];
            if (!prefix) continue;
            mem[n_mem++] = s;
            last = sn->n_in;
        }
        if (!n_mem) continue;
        mem[n_mem++] = r;
        /* the convs whose outputs only the group reads write into rn's channels */
        int64_t c0 = 0;
        for (int k = 0; k < rn->n_in; k++) {
            int v = rn->in[k], cnt = 0;
            for (int m = 0; m < n_mem; m++) cnt += g->nodes[bm->steps[mem[m]].node].n_in > k;
            nat_step *w = bm->vals[v].uses == cnt ? view_writer(bm, v, rs->epi.out) : NULL;
            if (w) {
                w->cat = rs->epi.out;
                w->cat_c0 = c0;
                bm->vals[v].in_cat = true;
            }
            c0 += nat_shape(bm, v)->dims[1];
        }
        int from = 0;
        for (int m = 0; m < n_mem; m++) {
            nat_step *ms = &bm->steps[mem[m]];
            ms->view = 1 + rs->epi.out;
            ms->cp0 = from;
            ms->cp1 = from = g->nodes[ms->node].n_in;
            if (mem[m] == r) continue;
            nat_val *d = &bm->vals[ms->epi.out];
            d->view = 1 + rs->epi.out;
            d->placed = false;
        }
    }
}
