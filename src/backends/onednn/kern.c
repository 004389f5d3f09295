/* Nodes oneDNN has no fast primitive for, run on ait's own kernels inside
 * the module, over plain tensors, instead of on the reference ops: Resize
 * (kernels/resize.h) and ConvTranspose (kernels/convt.h; oneDNN 2.6's
 * deconvolution ran DBNet's 2x2 stride-2 head 100 times slower, see
 * bench/RESULTS.md), a BatchNormalization after it folded into a copy of its
 * weights and bias and a Relu or Sigmoid after that run in the kernel. The
 * forms taken are kgeom.h's, as the native backend takes them. */
#include <stdio.h>
#include <string.h>

#include "backends/kgeom.h"
#include "backends/onednn/onednn.h"

typedef struct kstep {
    krz_geom rz;
    kct_geom ct;
    const float *w, *bias;
    kact act;
} kstep;

/* The output value's plain tensor, allocated now (runs keep the buffer). */
static ait_status out_plain(built *bm, int v)
{
    dn_val *d = &bm->p->vals[v];
    const tensor *sh = dn_shape(bm, v);
    if (!sh) return err_set(bm->err, AIT_E_INTERNAL, "onednn: value '%s' has no shape", bm->g->vals[v].name);
    d->plain = &d->t;
    d->done = true;
    tensor_set_shape(&d->t, sh->dtype, sh->rank, sh->dims);
    return tensor_alloc(&d->t, bm->err);
}

static ait_status kstep_add(built *bm, int i, ait_status (*run)(built *, const dn_step *),
                            const kstep *k, int in, int out, const char *impl)
{
    TRY(dn_ensure_plain(bm, in));
    TRY(out_plain(bm, out));
    TRY(dn_step_add(bm, i, NULL, NULL, 0));
    dn_step *s = &bm->p->steps[bm->p->n_steps - 1];
    s->kern = run;
    s->karg = k;
    s->kin = in;
    s->kout = out;
    snprintf(s->impl, sizeof s->impl, "%s", impl);
    return AIT_OK;
}

static ait_status rz_run(built *bm, const dn_step *s)
{
    const kstep *k = s->karg;
    if (kresize(&k->rz, bm->p->vals[s->kin].plain->data, bm->p->vals[s->kout].t.data, bm->threads))
        return dn_fail(bm, s->node, AIT_E_NOMEM, "out of memory for Resize's tables");
    return AIT_OK;
}

ait_status dn_kresize(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const bool has_s = n->n_in > 2 && n->in[2] >= 0;
    const tensor *sc = has_s ? dn_shape(bm, n->in[2]) : NULL;
    krz_geom g;
    *taken = false;
    if ((has_s && !sc) || !kgeom_resize(n, dn_shape(bm, n->in[0]), dn_shape(bm, n->out[0]), sc,
                                        has_s && dn_is_const(bm, n->in[2]), &g))
        return AIT_OK;
    kstep *k = dn_alloc(bm, sizeof *k);
    if (!k) return bm->err->code;
    k->rz = g;
    TRY(kstep_add(bm, i, rz_run, k, n->in[0], n->out[0], "resize:ait"));
    *taken = true;
    return AIT_OK;
}

static ait_status ct_run(built *bm, const dn_step *s)
{
    const kstep *k = s->karg;
    if (kconvt_run(&k->ct, bm->p->vals[s->kin].plain->data, k->w, k->bias, k->act,
                   bm->p->vals[s->kout].t.data, bm->threads))
        return dn_fail(bm, s->node, AIT_E_NOMEM, "out of memory for ConvTranspose's scratch");
    return AIT_OK;
}

/* A Relu or Sigmoid node j as the kernel's activation. */
static bool ct_act(const node *j, kact *act)
{
    if (j->domain && j->domain[0]) return false;
    if (!strcmp(j->op, "Relu")) *act = (kact){KF_RELU, 0, 0};
    else if (!strcmp(j->op, "Sigmoid")) *act = (kact){KF_SIGMOID, 0, 0};
    else return false;
    return true;
}

ait_status dn_kconvt(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const bool has_b = n->n_in > 2 && n->in[2] >= 0;
    *taken = false;
    /* constant weights and bias whose data is here (no blob replaces them) */
    if (!dn_is_const(bm, n->in[1]) || dn_is_freed(bm, n->in[1]) ||
        (has_b && (!dn_is_const(bm, n->in[2]) || dn_is_freed(bm, n->in[2]))))
        return AIT_OK;
    const tensor *w = dn_shape(bm, n->in[1]), *b = has_b ? dn_shape(bm, n->in[2]) : NULL;
    kct_geom g;
    if ((has_b && !b) || !w || !w->data ||
        !kgeom_convt(n, dn_shape(bm, n->in[0]), w, b, dn_shape(bm, n->out[0]), &g))
        return AIT_OK;
    kstep *k = dn_alloc(bm, sizeof *k);
    if (!k) return bm->err->code;
    k->ct = g;
    k->w = w->data;
    k->bias = b ? b->data : NULL;
    int out = n->out[0], bn = dn_bn_after(bm, i);
    if (bn >= 0) { /* y * s + t per output channel, into the weights and bias */
        const int64_t cout = g.cout;
        float *wf = dn_alloc(bm, sizeof(float) * (size_t)tensor_numel(w)),
              *bf = dn_alloc(bm, sizeof(float) * (size_t)cout), *s = dn_alloc(bm, sizeof(float) * (size_t)cout);
        if (!wf || !bf || !s) return bm->err->code;
        for (int64_t c = 0; c < cout; c++) s[c] = 1, bf[c] = k->bias ? k->bias[c] : 0;
        TRY(dn_bn_fold(bm, bn, s, 1, bf, cout));
        kconvt_scale_w(&g, k->w, s, wf);
        k->w = wf;
        k->bias = bf;
        bm->p->vals[out].done = bm->p->vals[out].fused = true;
        out = bm->g->nodes[bn].out[0];
    }
    int a = dn_only_consumer(bm, out);
    if (a >= 0 && bm->g->nodes[a].n_in >= 1 && bm->g->nodes[a].in[0] == out &&
        ct_act(&bm->g->nodes[a], &k->act)) {
        bm->p->vals[out].done = bm->p->vals[out].fused = true;
        out = bm->g->nodes[a].out[0];
    }
    TRY(kstep_add(bm, i, ct_run, k, n->in[0], out, "convtranspose:ait"));
    *taken = true;
    return AIT_OK;
}
