/* ConvTranspose 2-D, NCHW, float32, on kernels/convt.h, with its bias and
 * the chain after it: a BatchNormalization folded into constant weights and
 * bias (DBNet's head: ConvTranspose, BatchNormalization, Relu), then the
 * epilogue's bias Add, activation and residual. Explicit pads only: auto_pad
 * and output_shape (pads derived from the output size) stay on the
 * reference op, as does anything whose output size disagrees with the
 * scheduled shape or does not fit int geometry. */
#include <stdlib.h>
#include <string.h>

#include "backends/kgeom.h"
#include "backends/native/native.h"

_Static_assert(sizeof(kct_geom) <= sizeof(((nat_step *)0)->geo), "kct_geom fits a step's geo");

/* A BatchNormalization y = x * s + t after node i (geometry g) folds into
 * its weights (kconvt_scale_w) and bias (b * s + t), made once into
 * bm->packs[i] (not saved: the weights stay in the artifact as they are). */
static ait_status bn_fold(built *bm, int i, int bn, const kct_geom *g)
{
    nat_pack *p = &bm->packs[i];
    if (p->wt) return AIT_OK;
    const node *n = &bm->g->nodes[i];
    const tensor *w = nat_shape(bm, n->in[1]);
    const float *wd = w->data, *bd = n->n_in > 2 && n->in[2] >= 0 ? nat_shape(bm, n->in[2])->data : NULL;
    const int64_t cout = g->cout;
    float *s = malloc(sizeof(float) * (size_t)cout), *t = malloc(sizeof(float) * (size_t)cout);
    p->bias = aligned_zalloc(sizeof(float) * (size_t)cout);
    p->wt = aligned_zalloc(sizeof(float) * (size_t)tensor_numel(w));
    if (!s || !t || !p->bias || !p->wt) {
        free(s);
        free(t);
        aligned_free(p->bias);
        aligned_free(p->wt);
        p->bias = p->wt = NULL;
        return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
    }
    nat_bn_fold(bm, bn, cout, s, t);
    for (int64_t c = 0; c < cout; c++) p->bias[c] = (bd ? bd[c] * s[c] : 0) + t[c];
    kconvt_scale_w(g, wd, s, p->wt);
    free(s);
    free(t);
    return AIT_OK;
}

static ait_status convt_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const bool has_b = n->n_in > 2 && n->in[2] >= 0;
    const tensor *b = has_b ? nat_shape(bm, n->in[2]) : NULL;
    kct_geom g;
    *taken = false;
    if ((has_b && !b) || !kgeom_convt(n, nat_shape(bm, n->in[0]), nat_shape(bm, n->in[1]), b,
                                      nat_shape(bm, n->out[0]), &g))
        return AIT_OK;
    memcpy(st->geo, &g, sizeof g);
    const int64_t cout = g.cout;
    if (nat_const(bm, n->in[1]) && (!has_b || nat_const(bm, n->in[2])))
        st->bn = nat_bn_after(bm, n->out[0], cout);
    if (st->bn >= 0) {
        TRY(bn_fold(bm, i, st->bn, &g));
        st->epi.nodes[st->epi.n_nodes++] = st->bn;
        nat_chain(bm, bm->g->nodes[st->bn].out[0], true, false, &st->epi);
    } else {
        nat_chain(bm, n->out[0], true, !has_b, &st->epi);
    }
    *taken = true;
    return AIT_OK;
}

static ait_status convt_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    kct_geom g;
    memcpy(&g, st->geo, sizeof g);
    const nat_pack *p = &bm->packs[st->node];
    const float *bias = st->bn >= 0                    ? p->bias
                        : n->n_in > 2 && n->in[2] >= 0 ? bm->vals[n->in[2]].cur->data
                        : st->epi.bias >= 0            ? bm->vals[st->epi.bias].cur->data
                                                       : NULL;
    const float *w = st->bn >= 0 ? p->wt : bm->vals[n->in[1]].cur->data;
    float *y = bm->vals[st->epi.out].t.data;
    if (kconvt_run(&g, bm->vals[n->in[0]].cur->data, w, bias, nat_kact(&st->epi), y, bm->threads))
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for ConvTranspose's scratch");
    nat_res_add(bm, st, y);
    return AIT_OK;
}

const nat_op nat_convt = {"ConvTranspose", convt_take, convt_run};
