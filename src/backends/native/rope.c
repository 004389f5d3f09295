/* The rotary position embedding written out (graph/fuse.h's FK_ROTARY) as
 * one pass of krope at the fusion's last node (its Add), instead of its
 * Slices, Neg, Concat, Muls and Add on the reference ops. */
#include <string.h>

#include "backends/native/native.h"
#include "kernels/rope.h"

/* Whether rotary fusion fi runs on krope at this schedule: x and y float32
 * of one shape (last axis d even), cos and sin float32 of s x d values (s
 * x's axis rank - 2), every node of it run. */
bool nat_rope_fusion(built *bm, int fi)
{
    const fusion *f = &bm->fus->f[fi];
    if (f->kind != FK_ROTARY) return false;
    const tensor *x = nat_shape(bm, f->in), *y = nat_shape(bm, f->out);
    if (!x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank < 2 || x->rank != y->rank ||
        memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank) || tensor_numel(x) == 0)
        return false;
    const int64_t d = x->dims[x->rank - 1], s = x->dims[x->rank - 2];
    const int ang[] = {f->rot_cos, f->rot_sin};
    for (int k = 0; k < 2; k++) {
        const tensor *t = nat_shape(bm, ang[k]);
        if (!t || t->dtype != AIT_F32 || tensor_numel(t) != s * d) return false;
    }
    for (int j = 0; j < f->n_nodes; j++)
        if (!exec_node_runs(bm->x, f->nodes[j])) return false;
    return d >= 2 && d % 2 == 0;
}

static ait_status rope_fused_run(built *bm, const nat_step *st)
{
    const fusion *f = &bm->fus->f[st->geo[0]];
    const tensor *y = &bm->vals[f->out].t;
    const nat_val *x = &bm->vals[f->in], *c = &bm->vals[f->rot_cos], *s = &bm->vals[f->rot_sin];
    if (!x->cur || !x->cur->data || !c->cur || !c->cur->data || !s->cur || !s->cur->data)
        return nat_fail(bm, st->node, AIT_E_INTERNAL, "rotary input was not computed");
    const int64_t d = y->dims[y->rank - 1];
    krope(x->cur->data, c->cur->data, s->cur->data, y->data, tensor_numel(y) / d, y->dims[y->rank - 2], d,
          bm->threads);
    return AIT_OK;
}

const nat_op nat_rope_fused = {"(rotary)", NULL, rope_fused_run, NULL};
