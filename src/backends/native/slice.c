/* Slice over the channels of a 4-D float32 value (axis 1 or -3, step 1,
 * starts, ends and axes constant at schedule: ShuffleNet's two halves of
 * each unit's input) on kernels/chan_copy.h, its input and output each
 * NCHW or channels-last (layout.c), so that a run of convolutions around
 * it keeps NHWC. Other Slices stay on the reference op. */
#include <string.h>

#include "backends/native/native.h"

/* Input k of node n as one constant integer, or false. */
static bool one_int(const built *bm, const node *n, int k, int64_t *out)
{
    if (n->n_in <= k || n->in[k] < 0 || !nat_const(bm, n->in[k])) return false;
    const tensor *t = nat_shape(bm, n->in[k]);
    if (!t || !t->data || tensor_numel(t) != 1) return false;
    if (t->dtype == AIT_I64) *out = *(const int64_t *)t->data;
    else if (t->dtype == AIT_I32) *out = *(const int32_t *)t->data;
    else return false;
    return true;
}

static ait_status sl_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    *taken = false;
    if (n->version < 10 || n->n_out != 1 || n->out[0] < 0) return AIT_OK;
    const tensor *x = nat_shape(bm, n->in[0]), *y = nat_shape(bm, n->out[0]);
    int64_t s, axis, step = 1;
    if (!x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank != 4 || y->rank != 4 ||
        !one_int(bm, n, 1, &s) || !one_int(bm, n, 3, &axis) || (axis != 1 && axis != -3) ||
        (n->n_in > 4 && n->in[4] >= 0 && (!one_int(bm, n, 4, &step) || step != 1)))
        return AIT_OK;
    const int64_t c = x->dims[1], ck = y->dims[1];
    if (s < 0) s += c;
    s = s < 0 ? 0 : s > c ? c : s; /* the reference's clamp, step 1 */
    if (ck < 1 || s + ck > c || y->dims[0] != x->dims[0] || y->dims[2] != x->dims[2] ||
        y->dims[3] != x->dims[3] || tensor_numel(y) == 0)
        return AIT_OK;
    st->geo[0] = s;
    st->geo[1] = 0; /* no shuffle */
    st->can_nhwc = true;
    *taken = true;
    return AIT_OK;
}

const nat_op nat_slice = {"Slice", sl_take, nat_chan_run, NULL};
