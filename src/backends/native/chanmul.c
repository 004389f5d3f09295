/* Mul of a 4-D float32 value by one factor per channel ([N or 1][C][1][1],
 * computed in the module: squeeze-excitation's x * sigmoid(fc2(...)) in
 * EfficientNet and MobileNetV3) on kernels/chan_copy.h's kchan_scale,
 * its data input and output each NCHW or channels-last (layout.c), so that
 * the convolutions around it keep NHWC. Before, the reference op ran it
 * and each side of it changed layout. Other Muls stay on the reference op
 * (or an element-wise chain's fusion). */
#include <math.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/chan_copy.h"

/* Whether s is [n or 1][c][1][1] for a value of shape x. */
static bool per_channel(const tensor *s, const tensor *x)
{
    return s->rank == 4 && (s->dims[0] == x->dims[0] || s->dims[0] == 1) && s->dims[1] == x->dims[1] &&
           s->dims[2] == 1 && s->dims[3] == 1;
}

static ait_status cm_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    *taken = false;
    if (n->n_in != 2 || n->in[0] < 0 || n->in[1] < 0 || n->n_out != 1 || n->out[0] < 0) return AIT_OK;
    const tensor *a = nat_shape(bm, n->in[0]), *b = nat_shape(bm, n->in[1]), *y = nat_shape(bm, n->out[0]);
    if (!a || !b || !y || a->dtype != AIT_F32 || b->dtype != AIT_F32 || y->dtype != AIT_F32 ||
        y->rank != 4 || tensor_numel(y) == 0)
        return AIT_OK;
    bool a_data = a->rank == 4 && !memcmp(a->dims, y->dims, sizeof a->dims[0] * 4);
    bool b_data = b->rank == 4 && !memcmp(b->dims, y->dims, sizeof b->dims[0] * 4);
    int xk = a_data && per_channel(b, y) && !b_data ? 0 : b_data && per_channel(a, y) && !a_data ? 1 : -1;
    if (xk < 0) return AIT_OK;
    const tensor *s = xk ? a : b;
    st->geo[0] = xk;                                   /* the data input */
    st->geo[1] = s->dims[0] == y->dims[0] && y->dims[0] > 1 ? y->dims[1] : 0; /* factors per image */
    st->can_nhwc = true;
    st->nhwc_ins = true; /* the factors, [n][c][1][1], are the same bytes in either layout */
    *taken = true;
    return AIT_OK;
}

static ait_status cm_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const nat_val *x = &bm->vals[n->in[st->geo[0]]], *s = &bm->vals[n->in[1 - st->geo[0]]];
    nat_val *y = &bm->vals[st->epi.out];
    if (!x->cur || !x->cur->data || !s->cur || !s->cur->data)
        return nat_fail(bm, st->node, AIT_E_INTERNAL, "input was not computed");
    const int64_t *d = y->t.dims;
    kchan_geom g = {d[0], d[2] * d[3], d[1], 0, d[1], 0, 0, x->nhwc, y->nhwc};
    kchan_scale(&g, x->cur->data, s->cur->data, st->geo[1], NULL, -INFINITY, INFINITY, y->t.data,
                bm->threads);
    return AIT_OK;
}

const nat_op nat_chan_mul = {"Mul", cm_take, cm_run, NULL};
