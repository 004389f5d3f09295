/* ConvTranspose 2-D, NCHW, float32, on kernels/convt.h, with its bias and
 * the chain after it: a BatchNormalization folded into constant weights and
 * bias (DBNet's head: ConvTranspose, BatchNormalization, Relu), then the
 * epilogue's bias Add, activation and residual. Explicit pads only: auto_pad
 * and output_shape (pads derived from the output size) stay on the
 * reference op, as does anything whose output size disagrees with the
 * scheduled shape or does not fit int geometry. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/convt.h"

enum { T_N, T_CIN, T_H, T_W, T_COUT, T_GROUP, T_KH, T_KW, T_SH, T_SW, T_DH, T_DW, T_PT, T_PL, T_OH, T_OW };

/* A BatchNormalization y = x * s + t after node i folds into its weights
 * (w[ci][oc][tap] times s of output channel grp * cog + oc, grp = ci / cig)
 * and bias (b * s + t), made once into bm->packs[i] (not saved: the
 * weights stay in the artifact as they are). */
static ait_status bn_fold(built *bm, int i, int bn, int group)
{
    nat_pack *p = &bm->packs[i];
    if (p->wt) return AIT_OK;
    const node *n = &bm->g->nodes[i];
    const tensor *w = nat_shape(bm, n->in[1]);
    const float *wd = w->data, *bd = n->n_in > 2 && n->in[2] >= 0 ? nat_shape(bm, n->in[2])->data : NULL;
    const int64_t cin = w->dims[0], cog = w->dims[1], taps = w->dims[2] * w->dims[3];
    const int64_t cout = cog * group, cig = cin / group;
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
    for (int64_t ci = 0; ci < cin; ci++)
        for (int64_t oc = 0; oc < cog; oc++) {
            float sc = s[ci / cig * cog + oc];
            for (int64_t k = 0; k < taps; k++)
                p->wt[(ci * cog + oc) * taps + k] = wd[(ci * cog + oc) * taps + k] * sc;
        }
    free(s);
    free(t);
    return AIT_OK;
}

static ait_status convt_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = nat_shape(bm, n->in[0]), *w = nat_shape(bm, n->in[1]),
                 *y = nat_shape(bm, n->out[0]);
    *taken = false;
    if (!x || !w || !y || x->dtype != AIT_F32 || w->dtype != AIT_F32 || y->dtype != AIT_F32 ||
        x->rank != 4 || w->rank != 4 || y->rank != 4 || tensor_numel(y) == 0)
        return AIT_OK;
    int64_t group = attr_int(n, "group", 1), cout = w->dims[1] * group;
    if (group < 1 || x->dims[1] != w->dims[0] || x->dims[1] % group || y->dims[1] != cout ||
        y->dims[0] != x->dims[0])
        return AIT_OK;
    if (n->n_in > 2 && n->in[2] >= 0) {
        const tensor *b = nat_shape(bm, n->in[2]);
        if (!b || b->dtype != AIT_F32 || tensor_numel(b) != cout) return AIT_OK;
    }
    if (node_attr(n, "output_shape") || strcmp(attr_str(n, "auto_pad", "NOTSET"), "NOTSET"))
        return AIT_OK;
    op_ctx c = {.n = n, .err = bm->err};
    int64_t s[2], d[2], pads[4], op[2], k[2];
    if (ints_attr(&c, "kernel_shape", 2, 0, 0, INT64_MAX, k) ||
        (node_attr(n, "kernel_shape") && (k[0] != w->dims[2] || k[1] != w->dims[3])) ||
        ints_attr(&c, "strides", 2, 1, 1, INT_MAX, s) ||
        ints_attr(&c, "dilations", 2, 1, 1, INT_MAX, d) ||
        ints_attr(&c, "pads", 4, 0, 0, INT_MAX, pads) ||
        ints_attr(&c, "output_padding", 2, 0, 0, INT_MAX, op))
        return AIT_OK; /* the reference op reports it */
    for (int a = 0; a < 2; a++) {
        /* (in - 1) * s - pads + d * (k - 1) + out_pad + 1, in int64 without overflow */
        if (x->dims[2 + a] > INT_MAX || w->dims[2 + a] > INT_MAX) return AIT_OK;
        int64_t o = (x->dims[2 + a] - 1) * s[a] - pads[a] - pads[2 + a] +
                    d[a] * (w->dims[2 + a] - 1) + op[a] + 1;
        if (o != y->dims[2 + a]) return AIT_OK;
    }
    int64_t geo[16] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3], cout, group, w->dims[2],
                       w->dims[3], s[0], s[1], d[0], d[1], pads[0], pads[1], y->dims[2], y->dims[3]};
    for (int a = 0; a < 16; a++)
        if (geo[a] > INT_MAX) return AIT_OK; /* the kernel takes int geometry */
    memcpy(st->geo, geo, sizeof geo);
    const bool has_b = n->n_in > 2 && n->in[2] >= 0;
    if (nat_const(bm, n->in[1]) && (!has_b || nat_const(bm, n->in[2])))
        st->bn = nat_bn_after(bm, n->out[0], cout);
    if (st->bn >= 0) {
        TRY(bn_fold(bm, i, st->bn, (int)group));
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
    const int64_t *q = st->geo;
    kct_geom g = {(int)q[T_N],  (int)q[T_CIN], (int)q[T_H],  (int)q[T_W],  (int)q[T_COUT],
                  (int)q[T_GROUP], (int)q[T_KH], (int)q[T_KW], (int)q[T_SH], (int)q[T_SW],
                  (int)q[T_DH], (int)q[T_DW], (int)q[T_PT], (int)q[T_PL], (int)q[T_OH],
                  (int)q[T_OW]};
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
