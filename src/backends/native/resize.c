/* Resize 2-D (the last two axes of NCHW), float32, opset 11 on, on
 * kernels/resize.h: nearest (any nearest_mode) and linear, with the
 * half_pixel, pytorch_half_pixel, align_corners and asymmetric coordinate
 * transformations; scales (a constant float32 input) or sizes (the output
 * shape). Cubic, the other coordinate modes, antialias, axes, a kept aspect
 * ratio, Resize-10's rounding and align_corners over a fractional output
 * length (scale * in) stay on the reference op. */
#include <limits.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/resize.h"

enum { Z_PLANES, Z_H, Z_W, Z_OH, Z_OW, Z_LINEAR, Z_COORD, Z_NEAREST, Z_SH, Z_SW };

static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static ait_status rz_take(built *bm, int i, nat_step *st, bool *taken)
{
    static const char *const modes[] = {"nearest", "linear", "bilinear"};
    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                         "asymmetric"}; /* krz_coord's order */
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};     /* krz_nearest's order */
    const node *n = &bm->g->nodes[i];
    *taken = false;
    if (n->version < 11 || n->out[0] < 0) return AIT_OK;
    const tensor *x = nat_shape(bm, n->in[0]), *y = nat_shape(bm, n->out[0]);
    if (!x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank != 4 || y->rank != 4 ||
        tensor_numel(y) == 0 || tensor_numel(x) == 0 || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1])
        return AIT_OK;
    int mode = pick(attr_str(n, "mode", "nearest"), modes, 3),
        coord = pick(attr_str(n, "coordinate_transformation_mode", "half_pixel"), coords, 4),
        near = pick(attr_str(n, "nearest_mode", "round_prefer_floor"), nearests, 4);
    if (mode < 0 || coord < 0 || near < 0 || attr_int(n, "antialias", 0) || node_attr(n, "axes") ||
        strcmp(attr_str(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
        return AIT_OK;
    double sh = 0, sw = 0; /* 0: oh / h, as sizes give */
    if (n->n_in > 2 && n->in[2] >= 0) {
        const tensor *s = nat_shape(bm, n->in[2]);
        if (!s || tensor_numel(s) != 0) {
            if (!s || !nat_const(bm, n->in[2]) || s->dtype != AIT_F32 || tensor_numel(s) != 4)
                return AIT_OK;
            const float *f = s->data;
            if (f[0] != 1 || f[1] != 1 || !(f[2] > 0) || !(f[3] > 0)) return AIT_OK;
            sh = f[2], sw = f[3];
            /* align_corners over scale * in when that is no whole number:
             * the reference's length, not the kernel's output size */
            if (coord == KRZ_ALIGN_CORNERS &&
                (sh * (double)x->dims[2] != (double)y->dims[2] ||
                 sw * (double)x->dims[3] != (double)y->dims[3]))
                return AIT_OK;
        }
    }
    int64_t geo[] = {x->dims[0] * x->dims[1], x->dims[2], x->dims[3], y->dims[2], y->dims[3]};
    for (int a = 0; a < 5; a++)
        if (geo[a] > INT_MAX) return AIT_OK; /* the kernel takes int geometry */
    memcpy(st->geo, geo, sizeof geo);
    st->geo[Z_LINEAR] = mode > 0;
    st->geo[Z_COORD] = coord;
    st->geo[Z_NEAREST] = near;
    memcpy(&st->geo[Z_SH], &sh, sizeof sh);
    memcpy(&st->geo[Z_SW], &sw, sizeof sw);
    *taken = true;
    return AIT_OK;
}

static ait_status rz_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    krz_geom g = {(int)q[Z_PLANES], (int)q[Z_H], (int)q[Z_W], (int)q[Z_OH], (int)q[Z_OW], 0, 0,
                  (int)q[Z_LINEAR], (krz_coord)q[Z_COORD], (krz_nearest)q[Z_NEAREST]};
    memcpy(&g.scale_h, &q[Z_SH], sizeof g.scale_h);
    memcpy(&g.scale_w, &q[Z_SW], sizeof g.scale_w);
    if (kresize(&g, bm->vals[n->in[0]].cur->data, bm->vals[n->out[0]].t.data, bm->threads))
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for Resize's tables");
    return AIT_OK;
}

const nat_op nat_resize = {"Resize", rz_take, rz_run};
