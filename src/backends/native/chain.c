/* Element-wise chains (graph/fuse.h's FK_CHAIN) as one kew_run pass over
 * memory: fuse_find's steps map one to one onto the kernel's program (the
 * enums share their order, test_fusion asserts it). A chain is taken at its
 * first node when every operand is ready by then, its output has its
 * input's shape and every function is one the kernel has; else its nodes
 * run one by one. */
#include <string.h>

#include "backends/native/native.h"
#include "kernels/eltwise.h"

static const tensor *chain_shape(void *ctx, int v) { return nat_shape(ctx, v); }

ait_status nat_fusions(built *bm)
{
    fusion_set_free(bm->fus);
    bm->fus = NULL;
    TRY(fuse_find(bm->g, chain_shape, bm, &bm->fus, bm->err));
    for (int fi = 0; fi < bm->fus->n; fi++) {
        const fusion *f = &bm->fus->f[fi];
        if (f->kind != FK_ATTENTION || nat_attn_fusion(bm, fi)) continue;
        for (int j = 0; j < f->n_nodes; j++) bm->fus->of_node[f->nodes[j]] = -1;
        bm->fus->of_node[f->node] = -1;
    }
    return AIT_OK;
}

static bool same_shape(const tensor *a, const tensor *b)
{
    return a && b && a->rank == b->rank &&
           !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

bool nat_chain_take(built *bm, int fi, nat_step *st)
{
    const fusion *f = &bm->fus->f[fi];
    const tensor *x = nat_shape(bm, f->in), *y = nat_shape(bm, f->out);
    if (f->kind != FK_CHAIN || f->n_steps > KEW_MAX_STEPS || !bm->vals[f->in].done ||
        !same_shape(x, y) || x->dtype != AIT_F32 || y->dtype != AIT_F32 || tensor_numel(y) == 0)
        return false;
    for (int j = 0; j < f->n_nodes; j++) {
        const node *n = &bm->g->nodes[f->nodes[j]];
        if (!exec_node_runs(bm->x, f->nodes[j])) return false;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && bm->vals[n->out[k]].done) return false; /* taken already */
    }
    int64_t inner = 1;
    for (int s = 0; s < f->n_steps; s++) {
        const fuse_step *p = &f->steps[s];
        if (p->op == FO_FUN && (int)p->f >= (int)KF_N) return false; /* no kernel function yet */
        if (p->src == FS_TENSOR) {
            const tensor *t = nat_shape(bm, p->v);
            if (!bm->vals[p->v].done || !same_shape(t, y) || t->dtype != AIT_F32) return false;
        }
        if (p->src == FS_CHANNEL) {
            int a = f->axis < 0 ? y->rank - 1 : f->axis;
            if (a >= y->rank || y->dims[a] != f->channels || p->np != f->channels) return false;
            inner = 1;
            for (int d = a + 1; d < y->rank; d++) inner *= y->dims[d];
        }
    }
    st->geo[0] = fi;
    st->fus = fi;
    st->geo[1] = inner;
    st->epi.out = f->out;
    return true;
}

static ait_status chain_run(built *bm, const nat_step *st)
{
    const fusion *f = &bm->fus->f[st->geo[0]];
    kew_prog p = {.n = f->n_steps, .channels = (size_t)f->channels, .inner = (size_t)st->geo[1]};
    for (int s = 0; s < f->n_steps; s++) {
        const fuse_step *q = &f->steps[s];
        p.s[s] = (kew_step){(kew_op)q->op, (kew_src)q->src, (kfun)q->f, q->a, q->b, q->p};
        if (q->src == FS_TENSOR) p.s[s].p = bm->vals[q->v].cur->data;
    }
    tensor *y = &bm->vals[f->out].t;
    kew_run(&p, bm->vals[f->in].cur->data, y->data, (size_t)tensor_numel(y), bm->threads);
    return AIT_OK;
}

const nat_op nat_chain_op = {"(element-wise chain)", NULL, chain_run};
