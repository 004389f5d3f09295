/* The channel shuffle ShuffleNet exports, Reshape [n][g][c/g][h][w] ->
 * Transpose (0, 2, 1, 3, 4) -> Reshape [n][c][h][w] of a 4-D float32
 * NCHW value, as one step on kernels/shuffle.h: at its first Reshape (this
 * op), or, when a Concat over channels is what it shuffles, at the Concat
 * (concat.c), whose inputs are then copied straight to their shuffled
 * channels. Either way the two nodes after the first Reshape are the
 * step's (its epilogue's nodes): three or four copies become one. Its
 * input and output may each be channels-last (layout.c). Other Reshapes
 * stay on the reference op. */
#include <string.h>

#include "backends/native/native.h"
#include "kernels/chan_copy.h"

static bool is_op(const node *n, const char *op)
{
    return !(n->domain && n->domain[0]) && !strcmp(n->op, op) && n->n_out == 1 && n->out[0] >= 0;
}

/* The shuffle whose first Reshape is node r, reading x [n][c][h][w]:
 * its groups g (0: node r starts none), the Transpose and last Reshape
 * (each its predecessor's only reader) in after[]. */
static int64_t shuffle_chain(const built *bm, int r, const tensor *x, int after[2])
{
    static const int64_t perm[] = {0, 2, 1, 3, 4};
    const node *n = &bm->g->nodes[r];
    if (!is_op(n, "Reshape") || !x || x->rank != 4 || x->dtype != AIT_F32) return 0;
    const tensor *a = nat_shape(bm, n->out[0]);
    if (!a || a->rank != 5 || a->dtype != AIT_F32 || a->dims[0] != x->dims[0] || a->dims[1] < 1 ||
        a->dims[1] * a->dims[2] != x->dims[1] || a->dims[3] != x->dims[2] || a->dims[4] != x->dims[3])
        return 0;
    int t = nat_sole_consumer(bm, n->out[0]);
    if (t < 0 || !is_op(&bm->g->nodes[t], "Transpose") || bm->g->nodes[t].in[0] != n->out[0])
        return 0;
    int np = 0;
    const int64_t *p = attr_ints(&bm->g->nodes[t], "perm", &np);
    if (!p || np != 5 || memcmp(p, perm, sizeof perm)) return 0;
    int r2 = nat_sole_consumer(bm, bm->g->nodes[t].out[0]);
    if (r2 < 0 || !is_op(&bm->g->nodes[r2], "Reshape") ||
        bm->g->nodes[r2].in[0] != bm->g->nodes[t].out[0])
        return 0;
    const tensor *y = nat_shape(bm, bm->g->nodes[r2].out[0]);
    if (!y || y->rank != 4 || y->dtype != AIT_F32 ||
        memcmp(y->dims, x->dims, sizeof(int64_t) * 4))
        return 0;
    after[0] = t;
    after[1] = r2;
    return a->dims[1];
}

int64_t nat_shuffle_after(const built *bm, int v, nat_epi *ep)
{
    int r = nat_sole_consumer(bm, v), after[2];
    if (r < 0 || bm->g->nodes[r].in[0] != v) return 0;
    int64_t g = shuffle_chain(bm, r, nat_shape(bm, v), after);
    if (!g) return 0;
    ep->nodes[0] = r;
    ep->nodes[1] = after[0];
    ep->nodes[2] = after[1];
    ep->n_nodes = 3;
    ep->out = bm->g->nodes[after[1]].out[0];
    return g;
}

static ait_status sh_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    int after[2];
    *taken = false;
    int64_t g = n->n_in >= 1 && n->in[0] >= 0 ? shuffle_chain(bm, i, nat_shape(bm, n->in[0]), after) : 0;
    if (!g) return AIT_OK;
    st->epi.nodes[0] = after[0];
    st->epi.nodes[1] = after[1];
    st->epi.n_nodes = 2;
    st->epi.out = bm->g->nodes[after[1]].out[0];
    st->geo[0] = 0;
    st->geo[1] = g;
    st->can_nhwc = true;
    *taken = true;
    return AIT_OK;
}

ait_status nat_chan_run(built *bm, const nat_step *st)
{
    const nat_val *x = &bm->vals[bm->g->nodes[st->node].in[0]], *y = &bm->vals[st->epi.out];
    if (!x->cur || !x->cur->data)
        return nat_fail(bm, st->node, AIT_E_INTERNAL, "input was not computed");
    const int64_t *d = y->t.dims;
    kchan_geom g = {d[0], d[2] * d[3], x->cur->dims[1], st->geo[0], d[1], 0, st->geo[1],
                    x->nhwc, y->nhwc};
    kchan_copy(&g, x->cur->data, d[1], y->t.data, bm->threads);
    return AIT_OK;
}

const nat_op nat_shuffle = {"Reshape", sh_take, nat_chan_run, NULL};
