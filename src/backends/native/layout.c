/* Channels-last (NHWC) inside a native module. After the steps are made
 * (in NCHW, as each op took its node), one pass picks the values that stay
 * NHWC between steps:
 *   a value is NHWC when a step that can run channels-last (st->can_nhwc:
 *   Conv as GEMM, depthwise Conv of multiplier 1, MaxPool, AveragePool, a
 *   Concat over channels (its inputs' convs writing in place, the others
 *   copied from their own layouts), a Slice over channels, a channel
 *   shuffle alone or with its Concat, a Mul by per-channel factors, a
 *   BatchNormalization with its Relu, a nearest Resize with the Add after it
 *   (resize.c); a global pool reads it) writes it, it is not a
 *   module output, and every node reading it belongs to such a step and
 *   reads it as that conv's data input (any input of a shuffle's Concat,
 *   st->nhwc_ins) or as its epilogue's residual;
 *   a step runs NHWC when its data input, residual or output is NHWC.
 * So a run of convolutions (1x1, k x k, depthwise, with their fused bias,
 * activation and residual Add) keeps NHWC from one to the next, and the
 * layout changes only at the run's ends (the step changes its NCHW input
 * or output in its scratch): at the module's inputs and outputs and around
 * the nodes other steps or the reference ops run. A Concat whose inputs
 * the convs write in place (concat.c) gives them its layout. In the
 * static int8 variant an NHWC value goes further, uint8 (nat_val.q8),
 * when a static int8 Conv's epilogue writes it and every reader is such a
 * Conv reading it as its data input or residual, one at least as its data
 * input: the writer requantises at that reader's calibrated scale and zero
 * point (its pack's qs, qz), the data readers take the bytes as they are,
 * a residual is dequantised. A MaxPool between such Convs (ResNet's stem)
 * takes the max of the bytes (max commutes with the monotone
 * quantisation): its output is uint8 at its input's scale, and the Conv
 * before it requantises at the scale of the first Conv after it. Then each step's op finishes (packs weights
 * for its layout, sizes its scratch). */
#include <stdlib.h>

#include "backends/native/native.h"

/* Whether every reader of v takes it channels-last (see above), and with
 * q8 each is also a static int8 Conv (nat_conv_q8) or a MaxPool on bytes
 * (nat_pool_q8) whose output's readers are so in turn: the first Conv
 * reading v (or a MaxPool's output) as its data input (-1: none), or -2
 * when some reader does not. */
static int data_reader(const built *bm, const int *step_of, int v, bool q8)
{
    const graph *g = bm->g;
    int first = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!exec_node_runs(bm->x, i)) continue;
        const node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++) {
            if (n->in[k] != v) continue;
            const nat_step *t = step_of[i] >= 0 ? &bm->steps[step_of[i]] : NULL;
            if (!t || !t->can_nhwc) return -2;
            bool data = i == t->node && (k == 0 || t->nhwc_ins), res = i != t->node && t->epi.res == v;
            if (!data && !res) return -2;
            if (q8 && data && nat_pool_q8(bm, t)) { /* passes the bytes on: its readers decide */
                int w = t->epi.out;
                int r = bm->vals[w].nhwc && !nat_is_output(g, w) ? data_reader(bm, step_of, w, true) : -2;
                if (r < -1) return -2;
                if (first < 0) first = r;
                continue;
            }
            if (q8 && !nat_conv_q8(bm, t)) return -2;
            if (data && first < 0) first = i;
        }
    }
    return first;
}

ait_status nat_layout(built *bm)
{
    const graph *g = bm->g;
    int *step_of = bm->step_of;
    for (int i = 0; i < g->n_nodes; i++) step_of[i] = -1;
    for (int s = 0; s < bm->n_steps; s++) {
        const nat_step *st = &bm->steps[s];
        step_of[st->node] = s;
        if (st->fus >= 0) {
            const fusion *f = &bm->fus->f[st->fus];
            for (int j = 0; j < f->n_nodes; j++) step_of[f->nodes[j]] = s;
        } else if (st->op) {
            for (int j = 0; j < st->epi.n_nodes; j++) step_of[st->epi.nodes[j]] = s;
        }
    }
    for (int s = 0; s < bm->n_steps; s++) {
        const nat_step *st = &bm->steps[s];
        int v = st->epi.out;
        if (st->op && st->can_nhwc && v >= 0 && !nat_is_output(g, v))
            bm->vals[v].nhwc = data_reader(bm, step_of, v, false) >= -1;
    }
    /* a conv writing into a Concat's channels (concat.c) writes its layout */
    for (int s = 0; s < bm->n_steps; s++)
        if (bm->steps[s].cat >= 0) bm->vals[bm->steps[s].epi.out].nhwc = bm->vals[bm->steps[s].cat].nhwc;
    nat_cat_views(bm); /* channels-last Concats as views of a longer one's (concat.c) */
    for (int s = 0; s < bm->n_steps; s++) {
        const nat_step *st = &bm->steps[s];
        int v = st->epi.out;
        if (st->cat < 0 && v >= 0 && bm->vals[v].nhwc && nat_conv_q8(bm, st)) {
            bm->vals[v].q8_node = data_reader(bm, step_of, v, true);
            bm->vals[v].q8 = bm->vals[v].q8_node >= 0;
        } else if (nat_pool_q8(bm, st) && bm->vals[g->nodes[st->node].in[0]].q8) {
            bm->vals[v].q8 = true; /* its input's bytes, at their scale (data_reader) */
            bm->vals[v].q8_node = bm->vals[g->nodes[st->node].in[0]].q8_node;
        }
    }
    for (int s = 0; s < bm->n_steps; s++) {
        nat_step *st = &bm->steps[s];
        if (!st->op) continue;
        int x = g->nodes[st->node].in[0];
        st->nhwc = st->can_nhwc && (bm->vals[x].nhwc || bm->vals[st->epi.out].nhwc ||
                                    (st->epi.res >= 0 && bm->vals[st->epi.res].nhwc));
        if (st->op->finish) TRY(st->op->finish(bm, st));
        if (st->scratch > bm->scratch_size) {
            aligned_free(bm->scratch);
            bm->scratch = aligned_zalloc(st->scratch);
            bm->scratch_size = bm->scratch ? st->scratch : 0;
            if (!bm->scratch) return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for scratch");
        }
    }
    return AIT_OK;
}
