/* Resize 2-D (the last two axes of NCHW), float32, opset 11 on, on
 * kernels/resize.h: nearest (any nearest_mode) and linear, with the
 * half_pixel, pytorch_half_pixel, align_corners and asymmetric coordinate
 * transformations; scales (a constant float32 input) or sizes (the output
 * shape). Cubic, the other coordinate modes, antialias, axes, a kept aspect
 * ratio, Resize-10's rounding and align_corners over a fractional output
 * length (scale * in) stay on the reference op. */
#include <string.h>

#include "backends/kgeom.h"
#include "backends/native/native.h"

_Static_assert(sizeof(krz_geom) <= sizeof(((nat_step *)0)->geo), "krz_geom fits a step's geo");

static ait_status rz_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const bool has_s = n->n_in > 2 && n->in[2] >= 0;
    krz_geom g;
    *taken = n->out[0] >= 0 &&
             kgeom_resize(n, nat_shape(bm, n->in[0]), nat_shape(bm, n->out[0]),
                          has_s ? nat_shape(bm, n->in[2]) : NULL, has_s && nat_const(bm, n->in[2]), &g);
    if (has_s && !nat_shape(bm, n->in[2])) *taken = false; /* scales of unknown shape */
    if (*taken) memcpy(st->geo, &g, sizeof g);
    return AIT_OK;
}

static ait_status rz_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    krz_geom g;
    memcpy(&g, st->geo, sizeof g);
    if (kresize(&g, bm->vals[n->in[0]].cur->data, bm->vals[n->out[0]].t.data, bm->threads))
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for Resize's tables");
    return AIT_OK;
}

const nat_op nat_resize = {"Resize", rz_take, rz_run};
