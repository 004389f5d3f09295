/* Kernel geometry from a node (kgeom.h). */
#include "backends/kgeom.h"

#include <limits.h>
#include <string.h>

#include "ops/op.h"

static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

bool kgeom_resize(const node *n, const tensor *x, const tensor *y, const tensor *scales,
                  bool konst, krz_geom *g)
{
    static const char *const modes[] = {"nearest", "linear", "bilinear"};
    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                         "asymmetric"}; /* krz_coord's order */
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};     /* krz_nearest's order */
    if (n->version < 11 || !x || !y || x->dtype != AIT_F32 || y->dtype != AIT_F32 || x->rank != 4 ||
        y->rank != 4 || tensor_numel(y) == 0 || tensor_numel(x) == 0 || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1])
        return false;
    int mode = pick(attr_str(n, "mode", "nearest"), modes, 3),
        coord = pick(attr_str(n, "coordinate_transformation_mode", "half_pixel"), coords, 4),
        near = pick(attr_str(n, "nearest_mode", "round_prefer_floor"), nearests, 4);
    if (mode < 0 || coord < 0 || near < 0 || attr_int(n, "antialias", 0) || node_attr(n, "axes") ||
        strcmp(attr_str(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
        return false;
    double sh = 0, sw = 0; /* 0: oh / h, as sizes give */
    if (scales && tensor_numel(scales) != 0) {
        if (!konst || scales->dtype != AIT_F32 || tensor_numel(scales) != 4 || !scales->data)
            return false;
        const float *f = scales->data;
        if (f[0] != 1 || f[1] != 1 || !(f[2] > 0) || !(f[3] > 0)) return false;
        sh = f[2], sw = f[3];
        /* align_corners over scale * in when that is no whole number: the
         * reference's length, not the kernel's output size */
        if (coord == KRZ_ALIGN_CORNERS &&
            (sh * (double)x->dims[2] != (double)y->dims[2] || sw * (double)x->dims[3] != (double)y->dims[3]))
            return false;
    }
    const int64_t geo[] = {x->dims[0] * x->dims[1], x->dims[2], x->dims[3], y->dims[2], y->dims[3]};
    for (int a = 0; a < 5; a++)
        if (geo[a] > INT_MAX) return false; /* the kernel takes int geometry */
    *g = (krz_geom){(int)geo[0], (int)geo[1], (int)geo[2], (int)geo[3], (int)geo[4], sh, sw,
                    mode > 0, (krz_coord)coord, (krz_nearest)near};
    return true;
}

bool kgeom_convt(const node *n, const tensor *x, const tensor *w, const tensor *b, const tensor *y,
                 kct_geom *g)
{
    if (!x || !w || !y || x->dtype != AIT_F32 || w->dtype != AIT_F32 || y->dtype != AIT_F32 ||
        x->rank != 4 || w->rank != 4 || y->rank != 4 || tensor_numel(y) == 0)
        return false;
    int64_t group = attr_int(n, "group", 1), cout = w->dims[1] * group;
    if (group < 1 || x->dims[1] != w->dims[0] || x->dims[1] % group || y->dims[1] != cout ||
        y->dims[0] != x->dims[0])
        return false;
    if (b && (b->dtype != AIT_F32 || tensor_numel(b) != cout)) return false;
    if (node_attr(n, "output_shape") || strcmp(attr_str(n, "auto_pad", "NOTSET"), "NOTSET"))
        return false;
    op_ctx c = {.n = n}; /* no error kept: the reference op reports bad attributes */
    int64_t s[2], d[2], pads[4], op[2], k[2];
    if (ints_attr(&c, "kernel_shape", 2, 0, 0, INT64_MAX, k) ||
        (node_attr(n, "kernel_shape") && (k[0] != w->dims[2] || k[1] != w->dims[3])) ||
        ints_attr(&c, "strides", 2, 1, 1, INT_MAX, s) || ints_attr(&c, "dilations", 2, 1, 1, INT_MAX, d) ||
        ints_attr(&c, "pads", 4, 0, 0, INT_MAX, pads) ||
        ints_attr(&c, "output_padding", 2, 0, 0, INT_MAX, op))
        return false;
    for (int a = 0; a < 2; a++) {
        /* (in - 1) * s - pads + d * (k - 1) + out_pad + 1, in int64 without overflow */
        if (x->dims[2 + a] > INT_MAX || w->dims[2 + a] > INT_MAX) return false;
        int64_t o = (x->dims[2 + a] - 1) * s[a] - pads[a] - pads[2 + a] + d[a] * (w->dims[2 + a] - 1) +
                    op[a] + 1;
        if (o != y->dims[2 + a]) return false;
    }
    const int64_t geo[16] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3], cout, group, w->dims[2],
                             w->dims[3], s[0], s[1], d[0], d[1], pads[0], pads[1], y->dims[2], y->dims[3]};
    for (int a = 0; a < 16; a++)
        if (geo[a] > INT_MAX) return false; /* the kernel takes int geometry */
    *g = (kct_geom){(int)geo[0],  (int)geo[1],  (int)geo[2],  (int)geo[3],  (int)geo[4],  (int)geo[5],
                    (int)geo[6],  (int)geo[7],  (int)geo[8],  (int)geo[9],  (int)geo[10], (int)geo[11],
                    (int)geo[12], (int)geo[13], (int)geo[14], (int)geo[15]};
    return true;
}
