/* 2-D pooling, NCHW, float32, on kernels/pool.h: MaxPool (one output, any
 * dilation), AveragePool (padding counted or not), and the global pools.
 * Geometry as the reference op reads it (window_out); the output size
 * must agree with the scheduled shape, and everything fit the kernel's int
 * geometry, else the node stays on the reference op. MaxPool and
 * AveragePool also run channels-last between convolutions (layout.c),
 * changing the layout of an NCHW input or output in the scratch; MaxPool
 * between static int8 Convs takes the max of their uint8 bytes. */
#include <limits.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/pool.h"

enum { P_N, P_C, P_H, P_W, P_KH, P_KW, P_SH, P_SW, P_DH, P_DW, P_PT, P_PL, P_PB, P_PR, P_INCL };

/* x and y of a float32 NCHW pool, or false. */
static bool pool_io(built *bm, const node *n, const tensor **x, const tensor **y)
{
    if (n->n_out != 1 || n->out[0] < 0) return false; /* MaxPool's Indices: reference */
    *x = nat_shape(bm, n->in[0]);
    *y = nat_shape(bm, n->out[0]);
    return *x && *y && (*x)->dtype == AIT_F32 && (*y)->dtype == AIT_F32 && (*x)->rank == 4 &&
           (*y)->rank == 4 && tensor_numel(*y) > 0;
}

bool nat_pool_geo(built *bm, int i, int64_t *geo_out)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x, *y;
    if (!pool_io(bm, n, &x, &y)) return false;
    bool avg = !strcmp(n->op, "AveragePool");
    op_ctx c = {.n = n, .err = bm->err};
    int mode;
    int64_t k[2], s[2], d[2], pads[4], pb[2], pe[2], out[2];
    int64_t ceil = attr_int(n, "ceil_mode", 0), incl = avg ? attr_int(n, "count_include_pad", 0) : 0;
    if (attr_int(n, "storage_order", 0) != 0 || (ceil != 0 && ceil != 1) || (incl != 0 && incl != 1))
        return false;
    if (auto_pad_attr(&c, &mode) != AIT_OK || ints_attr(&c, "kernel_shape", 2, 0, 1, INT_MAX, k) ||
        ints_attr(&c, "strides", 2, 1, 1, INT_MAX, s) ||
        ints_attr(&c, "dilations", 2, 1, 1, INT_MAX, d) ||
        ints_attr(&c, "pads", 4, 0, 0, INT_MAX, pads))
        return false; /* the reference op reports it */
    for (int a = 0; a < 2; a++) {
        pb[a] = mode == PAD_NOTSET ? pads[a] : 0;
        pe[a] = mode == PAD_NOTSET ? pads[2 + a] : 0;
        if (window_out(&c, a, x->dims[2 + a], s[a], (k[a] - 1) * d[a] + 1, mode, ceil, &pb[a],
                       &pe[a], &out[a]) != AIT_OK)
            return false;
    }
    if (out[0] != y->dims[2] || out[1] != y->dims[3] || x->dims[0] != y->dims[0] ||
        x->dims[1] != y->dims[1])
        return false;
    int64_t geo[] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3], k[0], k[1], s[0], s[1], d[0],
                     d[1], pb[0], pb[1], pe[0], pe[1], incl};
    for (size_t a = 0; a < sizeof geo / sizeof geo[0]; a++)
        if (geo[a] > INT_MAX) return false; /* the kernel takes int geometry */
    memcpy(geo_out, geo, sizeof geo);
    return true;
}

static ait_status pool_take(built *bm, int i, nat_step *st, bool *taken)
{
    *taken = st->can_nhwc = nat_pool_geo(bm, i, st->geo);
    return AIT_OK;
}

/* The kernel's geometry from a pool step's (nat_pool_geo checked that it
 * fits in int), oh x ow outputs an image. */
static kpool_geom pool_geom(const int64_t *q, int64_t oh, int64_t ow)
{
    return (kpool_geom){(int)q[P_N], (int)q[P_C], (int)q[P_H], (int)q[P_W], (int)q[P_KH], (int)q[P_KW],
                        (int)q[P_SH], (int)q[P_SW], (int)q[P_DH], (int)q[P_DW], (int)q[P_PT],
                        (int)q[P_PL], (int)q[P_PB], (int)q[P_PR], (int)oh, (int)ow, (int)q[P_INCL]};
}

void nat_avgpool_run(const built *bm, const int64_t *q, int64_t oh, int64_t ow, bool nhwc,
                     const float *x, float *y)
{
    kpool_geom g = pool_geom(q, oh, ow);
    (nhwc ? kpool_nhwc : kpool_run)(KPOOL_AVG, &g, x, y, bm->threads);
}

static ait_status pool_finish(built *bm, nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const tensor *y = nat_shape(bm, n->out[0]);
    const int64_t *q = st->geo;
    size_t f = 0;
    if (st->nhwc && !bm->vals[n->in[0]].nhwc) f += nat_floats(q[P_N] * q[P_C] * q[P_H] * q[P_W]);
    if (st->nhwc && !bm->vals[n->out[0]].nhwc) f += nat_floats((int64_t)tensor_numel(y));
    if (__builtin_mul_overflow(f, sizeof(float), &st->scratch))
        return nat_fail(bm, st->node, AIT_E_OVERFLOW, "scratch is too large");
    return AIT_OK;
}

static ait_status pool_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    const tensor *y = &bm->vals[n->out[0]].t;
    kpool_geom g = pool_geom(q, y->dims[2], y->dims[3]);
    const kpool_kind k = strcmp(n->op, "MaxPool") ? KPOOL_AVG : KPOOL_MAX;
    const float *x = bm->vals[n->in[0]].cur->data;
    if (!st->nhwc) {
        kpool_run(k, &g, x, y->data, bm->threads);
        return AIT_OK;
    }
    float *sp = bm->scratch;
    const int64_t hw = q[P_H] * q[P_W], ohw = y->dims[2] * y->dims[3];
    if (!bm->vals[n->in[0]].nhwc) {
        knhwc_from_nchw(x, q[P_N], q[P_C], hw, sp);
        x = sp;
        sp += nat_floats(q[P_N] * q[P_C] * hw);
    }
    if (bm->vals[n->in[0]].q8) { /* uint8 in, uint8 out at the same scale (layout.c) */
        kpool_nhwc_max_u8(&g, (const uint8_t *)x, (uint8_t *)y->data, bm->threads);
        return AIT_OK;
    }
    bool out_nhwc = bm->vals[n->out[0]].nhwc;
    kpool_nhwc(k, &g, x, out_nhwc ? y->data : sp, bm->threads);
    if (!out_nhwc) knhwc_to_nchw(sp, q[P_N], q[P_C], ohw, y->data);
    return AIT_OK;
}

extern const nat_op nat_maxpool, nat_avgpool;

bool nat_pool_band(const built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    if ((st->op != &nat_maxpool && st->op != &nat_avgpool) || !st->nhwc || bm->qstatic || n->n_out != 1 ||
        st->epi.out != n->out[0])
        return false;
    const int vs[] = {n->in[0], n->out[0]};
    for (size_t k = 0; k < sizeof vs / sizeof *vs; k++) {
        const nat_val *v = &bm->vals[vs[k]];
        if (!v->nhwc || v->q8 || v->view || v->in_cat) return false;
    }
    return true;
}

void nat_pool_dims(const built *bm, const nat_step *st, int64_t *n, int64_t *h, int64_t *oh)
{
    *n = st->geo[P_N];
    *h = st->geo[P_H];
    *oh = bm->vals[bm->g->nodes[st->node].out[0]].t.dims[2];
}

int64_t nat_pool_row_bytes(const built *bm, const nat_step *st, bool out)
{
    const int64_t *q = st->geo;
    return (int64_t)sizeof(float) * q[P_C] * (out ? bm->vals[bm->g->nodes[st->node].out[0]].t.dims[3] : q[P_W]);
}

void nat_pool_in_rows(const nat_step *st, int64_t oy0, int64_t oy1, int64_t *r0, int64_t *r1)
{
    const int64_t *q = st->geo;
    nat_window_rows(q[P_H], q[P_KH], q[P_SH], q[P_DH], q[P_PT], oy0, oy1, r0, r1);
}

ait_status nat_pool_rows(built *bm, const nat_step *st, int64_t im, int64_t oy0, int64_t oy1)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    const tensor *y = &bm->vals[n->out[0]].t;
    if (oy1 <= oy0) return AIT_OK;
    /* one image, its first output row the band's: the same windows, top pad
     * counted as before (pool_taps measures it from the window's start) */
    kpool_geom g = pool_geom(q, oy1 - oy0, y->dims[3]);
    g.n = 1;
    g.pt = (int)(q[P_PT] - oy0 * q[P_SH]);
    const int64_t row = q[P_C] * y->dims[3]; /* floats of an output row */
    kpool_nhwc(strcmp(n->op, "MaxPool") ? KPOOL_AVG : KPOOL_MAX, &g,
               (const float *)bm->vals[n->in[0]].cur->data + im * q[P_H] * q[P_W] * q[P_C],
               (float *)y->data + (im * y->dims[2] + oy0) * row, bm->threads);
    return AIT_OK;
}

static ait_status global_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x, *y;
    *taken = false;
    if (!pool_io(bm, n, &x, &y)) return AIT_OK;
    st->geo[0] = x->dims[0] * x->dims[1]; /* planes: numel checked at schedule */
    st->geo[1] = x->dims[2] * x->dims[3];
    *taken = st->geo[1] > 0;
    /* channels-last input as one window over the image (kpool_nhwc takes int
     * geometry); the output, [n][c][1][1], is the same bytes in both layouts */
    st->can_nhwc = x->dims[0] <= INT_MAX && x->dims[1] <= INT_MAX && x->dims[2] <= INT_MAX &&
                   x->dims[3] <= INT_MAX;
    return AIT_OK;
}

static ait_status global_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const kpool_kind k = strcmp(n->op, "GlobalMaxPool") ? KPOOL_AVG : KPOOL_MAX;
    const tensor *x = bm->vals[n->in[0]].cur;
    if (k == KPOOL_AVG && nat_dw_gap(bm, n->in[0], bm->vals[n->out[0]].t.data)) return AIT_OK;
    if (bm->vals[n->in[0]].nhwc) {
        const int h = (int)x->dims[2], w = (int)x->dims[3];
        kpool_geom g = {(int)x->dims[0], (int)x->dims[1], h, w, h, w, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1};
        kpool_nhwc(k, &g, x->data, bm->vals[n->out[0]].t.data, bm->threads);
        return AIT_OK;
    }
    kpool_global(k, (size_t)st->geo[0], (size_t)st->geo[1], x->data, bm->vals[n->out[0]].t.data,
                 bm->threads);
    return AIT_OK;
}

const nat_op nat_maxpool = {"MaxPool", pool_take, pool_run, pool_finish};

bool nat_pool_q8(const built *bm, const nat_step *st)
{
    return bm->qstatic && st->op == &nat_maxpool && st->can_nhwc;
}
const nat_op nat_avgpool = {"AveragePool", pool_take, pool_run, pool_finish};
const nat_op nat_gmaxpool = {"GlobalMaxPool", global_take, global_run};
const nat_op nat_gavgpool = {"GlobalAveragePool", global_take, global_run};
