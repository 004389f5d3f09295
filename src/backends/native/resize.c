/* Resize 2-D (the last two axes of NCHW), float32, opset 11 on, on
 * kernels/resize.h: nearest (any nearest_mode) and linear, with the
 * half_pixel, pytorch_half_pixel, align_corners and asymmetric coordinate
 * transformations; scales (a constant float32 input) or sizes (the output
 * shape). Cubic, the other coordinate modes, antialias, axes, a kept aspect
 * ratio, Resize-10's rounding and align_corners over a fractional output
 * length (scale * in) stay on the reference op.
 * A nearest Resize of a 4-D tensor runs channels-last too (layout.c), and
 * the Add that alone reads its output, adding a value of its shape ready by
 * then, runs in its pass (an FPN's top-down join: upsample, add the lateral
 * Conv's output): the value between the Convs stays channels-last and no
 * Add runs on the reference op. Without an Add, a Resize whose output only
 * a Concat reads writes into the Concat's channels (concat.c,
 * nat_step.cat), as a Conv does: the FPN's upsampled maps cost no copy. An
 * input, residual or output kept NCHW while the step runs channels-last
 * changes layout in the scratch. */
#include <string.h>

#include "backends/kgeom.h"
#include "backends/native/native.h"

_Static_assert(sizeof(krz_geom) <= sizeof(((nat_step *)0)->geo), "krz_geom fits a step's geo");

extern const nat_op nat_resize;

static ait_status rz_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const bool has_s = n->n_in > 2 && n->in[2] >= 0;
    krz_geom g;
    *taken = n->out[0] >= 0 &&
             kgeom_resize(n, nat_shape(bm, n->in[0]), nat_shape(bm, n->out[0]),
                          has_s ? nat_shape(bm, n->in[2]) : NULL, has_s && nat_const(bm, n->in[2]), &g);
    if (has_s && !nat_shape(bm, n->in[2])) *taken = false; /* scales of unknown shape */
    if (!*taken) return AIT_OK;
    memcpy(st->geo, &g, sizeof g);
    st->can_nhwc = !g.linear && nat_shape(bm, n->in[0])->rank == 4;
    /* the Add after it, as a residual: an activation in the chain is not
     * this kernel's, so a chain with one is not taken */
    nat_epi ep = st->epi;
    nat_chain(bm, n->out[0], true, false, &ep);
    if (ep.res >= 0 && ep.act == GEMM_ACT_NONE && ep.bias < 0 && ep.n_nodes == 1) st->epi = ep;
    return AIT_OK;
}

/* The scratch floats a channels-last run needs for the layouts it changes:
 * its NCHW input, its NCHW residual, its output before it goes NCHW. */
static ait_status rz_finish(built *bm, nat_step *st)
{
    if (!st->nhwc) return AIT_OK;
    const node *n = &bm->g->nodes[st->node];
    const int64_t in = tensor_numel(nat_shape(bm, n->in[0])), out = tensor_numel(nat_shape(bm, st->epi.out));
    size_t f = 0;
    if (!bm->vals[n->in[0]].nhwc) f += nat_floats(in);
    if (st->epi.res >= 0 && !bm->vals[st->epi.res].nhwc) f += nat_floats(out);
    if (!bm->vals[st->epi.out].nhwc) f += nat_floats(out);
    st->scratch = f * sizeof(float);
    return AIT_OK;
}

bool nat_rz_cat(const nat_step *st)
{
    return st->op == &nat_resize && st->can_nhwc && st->epi.res < 0;
}

static ait_status rz_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    krz_geom g;
    memcpy(&g, st->geo, sizeof g);
    const float *x = bm->vals[n->in[0]].cur->data;
    const int64_t *d = nat_shape(bm, n->in[0])->dims, N = d[0], C = d[1], hw = d[2] * d[3];
    const int64_t ohw = (int64_t)g.oh * g.ow;
    /* where it writes: its output, or its channels of a Concat's (cy an image's) */
    const tensor *cat = st->cat >= 0 ? &bm->vals[st->cat].t : NULL;
    const int64_t cy = cat ? cat->dims[1] : C;
    float *y = cat ? (float *)cat->data + st->cat_c0 * (bm->vals[st->cat].nhwc ? 1 : ohw)
                   : bm->vals[st->epi.out].t.data;
    if (!st->nhwc) {
        if (cy != C) g.planes = (int)C; /* image by image into the Concat's */
        for (int64_t im = 0; im < (cy != C ? N : 1); im++)
            if (kresize(&g, x + im * C * hw, y + im * cy * ohw, bm->threads))
                return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for Resize's tables");
        nat_res_add(bm, st, y);
        return AIT_OK;
    }
    float *sp = bm->scratch;
    const float *res = st->epi.res >= 0 ? bm->vals[st->epi.res].cur->data : NULL;
    if (!bm->vals[n->in[0]].nhwc) {
        knhwc_from_nchw(x, N, C, hw, sp);
        x = sp;
        sp += nat_floats(N * C * hw);
    }
    if (res && !bm->vals[st->epi.res].nhwc) {
        knhwc_from_nchw(res, N, C, ohw, sp);
        res = sp;
        sp += nat_floats(N * C * ohw);
    }
    const bool out_nhwc = bm->vals[st->epi.out].nhwc;
    g.planes = (int)N;
    if (kresize_nhwc(&g, C, x, res, out_nhwc ? y : sp, out_nhwc ? cy : C, bm->threads))
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for Resize's tables");
    for (int64_t im = 0; !out_nhwc && im < N; im++)
        knhwc_to_nchw(sp + im * ohw * C, 1, C, ohw, y + im * cy * ohw);
    return AIT_OK;
}

const nat_op nat_resize = {"Resize", rz_take, rz_run, rz_finish};
