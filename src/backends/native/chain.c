/* Element-wise chains (graph/fuse.h's FK_CHAIN) as one kew_run pass over
 * memory: fuse_find's steps map one to one onto the kernel's program (the
 * enums share their order, test_fusion asserts it). A chain is taken at its
 * first node when every operand is ready by then, its output has its
 * input's shape and every function is one the kernel has; else its nodes
 * run one by one. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/eltwise.h"

static const tensor *chain_shape(void *ctx, int v) { return nat_shape(ctx, v); }

/* The class of the scheduled inputs: per input its rank, dtype and each
 * dim as 0, 1 or more (a broadcast or an empty past finds other fusions). */
static void input_class(const built *bm, int64_t *key)
{
    const graph *g = bm->g;
    for (int k = 0; k < g->n_inputs; k++) {
        const tensor *t = nat_shape(bm, g->inputs[k]);
        int64_t *s = key + (size_t)k * (AIT_MAX_RANK + 2);
        memset(s, 0, sizeof *s * (AIT_MAX_RANK + 2));
        s[0] = t ? t->rank : -1;
        s[1] = t ? (int64_t)t->dtype : -1;
        for (int d = 0; t && d < t->rank; d++) s[2 + d] = t->dims[d] < 2 ? t->dims[d] : 2;
    }
}

void nat_kept_free(built *bm)
{
    for (int k = 0; k < 4; k++) {
        fusion_set_free(bm->kept[k].set);
        free(bm->kept[k].of_node);
        free(bm->kept[k].key);
        memset(&bm->kept[k], 0, sizeof bm->kept[k]);
    }
    bm->fus = NULL;
}

/* The kept set of this schedule's input class, found now when none is. */
static ait_status kept_find(built *bm)
{
    const graph *g = bm->g;
    size_t kn = (size_t)(g->n_inputs + 1) * (AIT_MAX_RANK + 2);
    int64_t key[kn > 1024 ? 1 : kn];
    memset(key, 0, sizeof key); /* the slot past the last input too: memcmp reads it */
    if (kn <= 1024) {
        input_class(bm, key);
        for (int k = 0; k < 4; k++) {
            struct nat_kept *e = &bm->kept[k];
            if (!e->set || memcmp(e->key, key, sizeof *key * kn)) continue;
            memcpy(e->set->of_node, e->of_node, sizeof *e->of_node * (size_t)g->n_nodes);
            bm->fus = e->set;
            return AIT_OK;
        }
    }
    struct nat_kept *e = &bm->kept[bm->kept_next];
    bm->kept_next = (bm->kept_next + 1) % 4;
    fusion_set_free(e->set);
    e->set = NULL;
    bm->fus = NULL;
    if (!e->of_node) e->of_node = malloc(sizeof *e->of_node * ((size_t)g->n_nodes + 1));
    if (!e->key) e->key = calloc(kn, sizeof *e->key);
    if (!e->of_node || !e->key) return nat_fail(bm, -1, AIT_E_NOMEM, "out of memory");
    TRY(fuse_find(g, chain_shape, bm, &e->set, bm->err));
    memcpy(e->of_node, e->set->of_node, sizeof *e->of_node * (size_t)g->n_nodes);
    if (kn <= 1024) memcpy(e->key, key, sizeof *key * kn);
    else e->key[0] = -2; /* matches no class: too many inputs to key */
    bm->fus = e->set;
    return AIT_OK;
}

ait_status nat_fusions(built *bm)
{
    TRY(kept_find(bm));
    for (int fi = 0; fi < bm->fus->n; fi++) {
        const fusion *f = &bm->fus->f[fi];
        if ((f->kind != FK_ATTENTION || nat_attn_fusion(bm, fi)) &&
            (f->kind != FK_LAYERNORM || nat_ln_fusion(bm, fi)) &&
            (f->kind != FK_ROTARY || nat_rope_fusion(bm, fi)))
            continue;
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
