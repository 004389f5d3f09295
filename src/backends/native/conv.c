/* 2-D Conv (NCHW, float32) as GEMM per image and group: Y_g[M_g][OH*OW] =
 * W_g[M_g][C_g*kH*kW] x X_g, with the weights (A) packed once per group;
 * X_g is the input itself for 1x1 stride-1 unpadded kernels (packed by the
 * GEMM), else its im2col written straight into B's panels in the module's
 * scratch (one pass over memory instead of im2col and packing). The conv's bias and the chain after it
 * are the GEMM's epilogue (bias along rows: the output channels).
 * Depthwise convolutions (one input channel per group) run on kdw_run,
 * the chain's bias and activation fused, a residual added after; those
 * on planes narrower than DW_NCHW_OW or of at least DW_NHWC_C channels run
 * channels-last (knhwc_dw) even between NCHW values.
 * A step layout.c runs channels-last (NHWC) instead packs the weights as
 * B at finish and runs nhwc_run: Y[pixel][M] = A x B, A the input or its
 * NHWC im2col, or knhwc_dw for depthwise. In the int8dq variant a Conv of
 * one group runs that way on quantised weights (qconv.c). A step whose
 * output only a Concat reads writes into its channels of the Concat's
 * output instead (concat.c, st->cat): per image from channel cat_c0 in
 * NCHW, rows C apart in NHWC. A 1x1 Conv whose output only an
 * AveragePool reads (through a Pad of zeros, torch's export of it: the
 * identity nat_chain swallows) pools its input first (avg_first). A direct 1x1 Conv
 * whose input only it reads, made by a BatchNormalization (with its Relu
 * or Clip: DenseNet's, on a Concat's channels) or a Mul by factors per
 * channel (squeeze-excitation's, before the projection), folds that step
 * in (pro_take): channels-last, the GEMM maps A's columns as it reads
 * them (gemm_args.pro), or for factors alone where B is the smaller
 * operand scales B's packed panels per image (pro_on_b), so the scaled
 * tensor is never written; such a Conv runs channels-last (its input
 * changed in the scratch when NCHW). A channels-last im2col Conv of an
 * NCHW input with a few channels (a stem on its image) reads the planes
 * as it writes A (im2col_planes) instead of changing the input first; with
 * one group, no residual and at most KSTEM_TAPS taps it runs on the direct
 * kernel instead (kstem_conv: no A at all, B's packed panels its weights). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/conv_ig.h"
#include "kernels/dwconv.h"
#include "kernels/grpconv.h"
#include "kernels/im2col.h"
#include "kernels/nhwc.h"
#include "kernels/stem.h"
#include "kernels/winograd.h"

/* A depthwise conv between NCHW values runs on kdw_run (vectors along
 * the row) only on planes from DW_NCHW_OW wide and with fewer than
 * DW_NHWC_C channels; else channels-last (knhwc_dw), the layout changed in
 * its scratch. On the Zen 5 knhwc_dw took 0.16 to 0.88 of kdw_run's CPU
 * time on the 17 depthwise shapes from 32 wide of MobileNetV2/V3,
 * EfficientNet-B0 and DBNet (16 to 1152 channels), and their one-node
 * modules 0.16 to 0.85 of their time that way, the two layout changes
 * included, but one level (16 channels at 320x320, 1.07: bench/RESULTS.md,
 * branch c13); fewer channels than a vector were not measured. */
#define DW_NCHW_OW 32
#define DW_NHWC_C 16

/* G_DIRECT: how the GEMM reads X, or the depthwise kernel; CONV_IG is
 * CONV_IM2COL turned into an implicit GEMM at finish (conv_ig), CONV_WINO
 * into Winograd's F(4x4, 3x3) (conv_wino, the "wino" variants), CONV_WINO2
 * into its F(2x2, 3x3) (small planes in "wino-large"), CONV_GRP into the
 * direct grouped kernel (conv_grp), CONV_WQ8 (static int8) into Winograd's
 * F(2x2, 3x3) on uint8 (conv_wq8). */
enum { CONV_IM2COL, CONV_DIRECT, CONV_DW, CONV_IG, CONV_WINO, CONV_WINO2, CONV_GRP, CONV_WQ8 };
enum { G_N, G_M, G_GROUP, G_DIRECT, G_C, G_H, G_W, G_KH, G_KW, G_OH, G_OW, G_S0, G_S1, G_D0, G_D1, G_P0 };

typedef struct conv_arg {
    int64_t mg, kdim;
    const float *w;
} conv_arg;

static void fill_w(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)i;
    const conv_arg *c = arg;
    gemm_pack_a(bm->kern, c->w + grp * c->mg * c->kdim, c->kdim, 1, c->mg, c->kdim, dst);
}

/* A BatchNormalization after the conv folds into it: the weights of output
 * channel c times s[c] (made at finish, packed and saved), and the bias
 * b[c] * s[c] + t[c] (made here, from constants: not saved). */
static ait_status bn_bias(built *bm, int i, int bn, int64_t M, const tensor *b)
{
    nat_pack *p = &bm->packs[i];
    if (p->bias) return AIT_OK;
    float *s = malloc(sizeof(float) * (size_t)M), *t = malloc(sizeof(float) * (size_t)M);
    p->bias = aligned_zalloc(sizeof(float) * (size_t)M);
    if (!s || !t || !p->bias) {
        free(s);
        free(t);
        return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
    }
    nat_bn_fold(bm, bn, M, s, t);
    const float *bd = b ? b->data : NULL;
    for (int64_t c = 0; c < M; c++) p->bias[c] = (bd ? bd[c] * s[c] : 0) + t[c];
    free(s);
    free(t);
    return AIT_OK;
}

/* The weights with a folded BatchNormalization's scale (an owned copy, *own),
 * else w itself. */
static const float *bn_weights(built *bm, const nat_step *st, const float *w, int64_t M,
                               int64_t per, float **own)
{
    *own = NULL;
    if (st->bn < 0) return w;
    float *s = malloc(sizeof(float) * (size_t)M), *t = malloc(sizeof(float) * (size_t)M);
    float *f = malloc(sizeof(float) * (size_t)(M * per));
    if (!s || !t || !f) {
        free(s);
        free(t);
        free(f);
        return NULL;
    }
    nat_bn_fold(bm, st->bn, M, s, t);
    for (int64_t c = 0; c < M; c++)
        for (int64_t k = 0; k < per; k++) f[c * per + k] = w[c * per + k] * s[c];
    free(s);
    free(t);
    return *own = f;
}

/* An AveragePool alone reading a 1x1 stride-1 Conv's output after an
 * epilogue of per-channel scales and shifts only (a folded
 * BatchNormalization, a bias: no activation, no residual), unpadded, every
 * window inside the input: the pool commutes with the Conv, so the step
 * swallows it, pools its input first (st->avg) and runs the GEMM on the
 * pooled pixels (DenseNet's transitions: a 1x1 Conv then a 2x2
 * AveragePool, a quarter of the GEMM). */
static void avg_first(built *bm, nat_step *st, int64_t C)
{
    if (bm->qstatic || bm->quant >= 0 || st->epi.act != GEMM_ACT_NONE || st->epi.res >= 0 ||
        st->epi.n_nodes >= 8)
        return;
    int i = nat_sole_consumer(bm, st->epi.out);
    int64_t q[15];
    if (i < 0 || strcmp(bm->g->nodes[i].op, "AveragePool") || !nat_pool_geo(bm, i, q)) return;
    const tensor *y = nat_shape(bm, bm->g->nodes[i].out[0]);
    /* q: n, c, h, w, kh, kw, sh, sw, dh, dw, pads (4), count_include_pad */
    if (q[8] != 1 || q[9] != 1 || q[10] || q[11] || q[12] || q[13] ||
        (y->dims[2] - 1) * q[6] + q[4] > q[2] || (y->dims[3] - 1) * q[7] + q[5] > q[3])
        return;
    q[1] = C; /* the Conv's input channels */
    memcpy(st->avg, q, sizeof q);
    st->epi.nodes[st->epi.n_nodes++] = i;
    st->epi.out = bm->g->nodes[i].out[0];
    st->geo[G_H] = st->geo[G_OH] = y->dims[2];
    st->geo[G_W] = st->geo[G_OW] = y->dims[3];
}

/* Folds the step that writes x, the input of direct 1x1 Conv step st of
 * one group, into st as its prologue (see the header) when x has no other
 * reader and that step is a BatchNormalization or a per-channel Mul: the
 * folded step then runs nothing, and x gets no storage. Not with an
 * AveragePool run first (avg_first: the pool does not commute with a
 * Relu) nor for quantised Convs (their A is quantised, not read). */
static void pro_take(built *bm, nat_step *st, int x)
{
    if (bm->qstatic || nat_qconv(bm, 1) || st->avg[0] || bm->vals[x].uses != 1 ||
        nat_is_output(bm->g, x))
        return;
    for (int s = bm->n_steps - 1; s >= 0; s--) {
        nat_step *p = &bm->steps[s];
        if (p->epi.out != x) continue;
        if ((p->op != &nat_batchnorm && p->op != &nat_chan_mul) || p->folded) return;
        p->folded = true;
        st->pro = s + 1;
        bm->vals[x].placed = false;
        return;
    }
}

/* The per-channel map of step st's prologue (st->pro) for image im into f
 * (when not NULL), and the value it reads (the folded step's data input). */
static const nat_val *conv_pro(const built *bm, const nat_step *st, int64_t im, kaffine *f)
{
    const nat_step *p = &bm->steps[st->pro - 1];
    const node *n = &bm->g->nodes[p->node];
    if (!f) return &bm->vals[n->in[p->op == &nat_batchnorm ? 0 : p->geo[0]]];
    *f = (kaffine){NULL, NULL, -INFINITY, INFINITY};
    if (p->op == &nat_batchnorm) { /* s, then t (norm.c), and its Relu or Clip */
        const int64_t C = st->geo[G_C];
        f->s = bm->packs[p->node].wt;
        f->t = f->s + C;
        if (p->epi.act == GEMM_ACT_RELU) f->lo = 0;
        if (p->epi.act == GEMM_ACT_CLIP) f->lo = p->epi.lo, f->hi = p->epi.hi;
        return &bm->vals[n->in[0]];
    }
    f->s = (const float *)bm->vals[n->in[1 - p->geo[0]]].cur->data + im * p->geo[1]; /* chanmul.c */
    return &bm->vals[n->in[p->geo[0]]];
}

/* Whether step st's prologue, factors only (a Mul), scales B's packed
 * panels per image (kaffine_panels on a copy in the scratch) rather than
 * A as the GEMM reads it: when B's columns, in whole panels, are at most
 * half an image's pixels (2 round_up(N, NR) <= M: K x N_panels floats
 * against M x K). The GEMM with the prologue maps each block of A before
 * its calls read it, A's read from memory then not overlapping the FMAs;
 * bench-prologue measured B scaled 0.40x to 0.74x the separate pass at M
 * 784 to 12544 (A mapped 0.72x to 1.09x), 1.4x to 1.7x at M 49 and 0.9x
 * to 1.3x at M 196 (bench/RESULTS.md). */
static bool pro_on_b(const built *bm, const nat_step *st)
{
    const int64_t *q = st->geo, nr = gemm_kernel_nr(bm->kern);
    return st->pro && bm->steps[st->pro - 1].op == &nat_chan_mul &&
           2 * ((q[G_M] + nr - 1) / nr * nr) <= q[G_OH] * q[G_OW];
}

/* The channels between two pixels of a channels-last value: a view's
 * root's (concat.c), else its own. */
static int64_t nhwc_stride(const built *bm, const nat_val *v, int64_t c)
{
    return v->view ? bm->vals[v->view - 1].t.dims[1] : c;
}

static ait_status conv_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = nat_shape(bm, n->in[0]), *w = nat_shape(bm, n->in[1]),
                 *y = nat_shape(bm, n->out[0]);
    const tensor *b = n->n_in > 2 && n->in[2] >= 0 ? nat_shape(bm, n->in[2]) : NULL;
    *taken = false;
    if (!x || !w || !y || x->dtype != AIT_F32 || w->dtype != AIT_F32 || y->dtype != AIT_F32 ||
        x->rank != 4 || w->rank != 4 || !nat_const(bm, n->in[1]) || tensor_numel(y) == 0)
        return AIT_OK;
    if (n->n_in > 2 && n->in[2] >= 0 && (!b || b->dtype != AIT_F32 || !nat_const(bm, n->in[2])))
        return AIT_OK;
    int64_t group = attr_int(n, "group", 1);
    int64_t M = w->dims[0], cg = w->dims[1], kh = w->dims[2], kw = w->dims[3];
    if (group < 1 || M % group || cg * group != x->dims[1]) return AIT_OK;
    int64_t mg = M / group;
    bool dw = cg == 1 && group > 1;
    op_ctx c = {.n = n, .err = bm->err};
    int mode;
    int64_t s[2], d[2], pads[4], pb[2], pe[2], out[2];
    if (auto_pad_attr(&c, &mode) != AIT_OK || ints_attr(&c, "strides", 2, 1, 1, INT32_MAX, s) ||
        ints_attr(&c, "dilations", 2, 1, 1, INT32_MAX, d) ||
        ints_attr(&c, "pads", 4, 0, 0, INT32_MAX, pads))
        return AIT_OK; /* the reference op reports it */
    for (int k = 0; k < 2; k++) {
        pb[k] = mode == PAD_NOTSET ? pads[k] : 0;
        pe[k] = mode == PAD_NOTSET ? pads[2 + k] : 0;
        int64_t kk = k ? kw : kh;
        if (window_out(&c, k, x->dims[2 + k], s[k], (kk - 1) * d[k] + 1, mode, false, &pb[k], &pe[k],
                       &out[k]) != AIT_OK)
            return AIT_OK;
    }
    if (out[0] != y->dims[2] || out[1] != y->dims[3]) return AIT_OK;
    if (dw) {
        /* the kernel takes int geometry */
        const int64_t v[] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3], mg, kh, kw, s[0],
                             s[1], d[0], d[1], pb[0], pb[1], out[0], out[1], M};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            if (v[k] > INT_MAX) return AIT_OK;
        int64_t geo[16] = {x->dims[0], M, group, CONV_DW, cg, x->dims[2], x->dims[3], kh, kw,
                           out[0], out[1], s[0], s[1], d[0], d[1], pb[0] | (pb[1] << 32)};
        memcpy(st->geo, geo, sizeof geo);
        st->can_nhwc = mg == 1;
        nat_chain(bm, n->out[0], true, b == NULL, &st->epi);
        *taken = true;
        return AIT_OK;
    }
    int64_t kdim = cg * kh * kw;
    bool direct = kh == 1 && kw == 1 && s[0] == 1 && s[1] == 1 && !pb[0] && !pb[1] && !pe[0] &&
                  !pe[1];
    if (!gemm_pack_a_size(bm->kern, mg, kdim) || !gemm_pack_b_size(bm->kern, kdim, mg))
        return AIT_OK;
    int64_t geo[16] = {x->dims[0], M, group, direct, cg, x->dims[2], x->dims[3], kh, kw, out[0],
                       out[1], s[0], s[1], d[0], d[1], pb[0] | (pb[1] << 32)};
    if (pb[0] >= ((int64_t)1 << 31) || pb[1] >= ((int64_t)1 << 31)) return AIT_OK;
    memcpy(st->geo, geo, sizeof geo);
    st->can_nhwc = true;
    st->bn = nat_bn_after(bm, n->out[0], M);
    if (st->bn >= 0) {
        TRY(bn_bias(bm, i, st->bn, M, b));
        st->epi.nodes[st->epi.n_nodes++] = st->bn;
        nat_chain(bm, bm->g->nodes[st->bn].out[0], true, false, &st->epi);
    } else {
        nat_chain(bm, n->out[0], true, b == NULL, &st->epi);
    }
    nat_chain_act_last(bm, &st->epi);
    if (direct) avg_first(bm, st, x->dims[1]);
    if (direct && group == 1) pro_take(bm, st, n->in[0]);
    *taken = true;
    return AIT_OK;
}

/* Whether depthwise step st runs on int8 (the static variant, qconv.c):
 * channels-last (multiplier 1), no residual, few enough taps. */
static bool dw_q8(const built *bm, const nat_step *st)
{
    return bm->qstatic && st->geo[G_DIRECT] == CONV_DW && st->can_nhwc && st->epi.res < 0 &&
           st->geo[G_KH] * st->geo[G_KW] <= KDW_U8_TAPS;
}

/* Output pixels per im2col block: about 1 MB of the GEMM's A
 * (channels-last) or B (NCHW, a multiple of the kernel's nr columns), whole
 * images when small; a large image's column matrix (DBNet's head: 576 rows
 * of 160 x 160 pixels, 59 MB) never leaves the cache. */
static int64_t im2col_block(int64_t ohw, int64_t kdim, int64_t nr)
{
    int64_t p = ((int64_t)1 << 18) / (kdim > 0 ? kdim : 1);
    p = p < 64 ? 64 : p;
    p = p < nr ? nr : p / nr * nr;
    return p < ohw ? p : ohw;
}

/* Output rows per block of a static int8 Conv writing uint8 (nat_val.q8):
 * the float epilogue's rows, requantised from about 256 KB of scratch
 * that stays in L2, instead of the whole output in float (a direct 1x1
 * Conv's rows over all images; an im2col Conv's blocks are smaller). */
static int64_t q8_block(int64_t rows, int64_t m)
{
    int64_t b = ((int64_t)1 << 16) / (m > 0 ? m : 1);
    b = b < 64 ? 64 : b;
    return b < rows ? b : rows;
}

static void fill_wt(built *bm, int i, int grp, void *dst, const void *arg)
{
    const float *tmp = arg; /* [groups][kdim][mg], see finish_pack */
    const tensor *w = nat_shape(bm, bm->g->nodes[i].in[1]);
    int64_t M = w->dims[0], kdim = w->dims[1] * w->dims[2] * w->dims[3];
    int64_t group = attr_int(&bm->g->nodes[i], "group", 1), mg = M / group;
    gemm_pack_b(bm->kern, tmp + grp * kdim * mg, mg, 1, kdim, mg, dst);
}

/* Whether a GlobalAveragePool native takes reads value v (squeeze-excitation's
 * pool of a depthwise output): the depthwise step then sums its rows. */
static bool gap_reads(const built *bm, int v)
{
    for (int r = bm->reader_at[v]; r < bm->reader_at[v + 1]; r++) {
        int j = bm->readers[r];
        if (exec_node_runs(bm->x, j) && bm->op_of[j] && !strcmp(bm->g->nodes[j].op, "GlobalAveragePool"))
            return true;
    }
    return false;
}

/* A step's channels-last window over one image and group (c0 0). */
static knhwc_geom conv_kgeom(const int64_t *q)
{
    return (knhwc_geom){q[G_H], q[G_W], q[G_C] * q[G_GROUP], 0, q[G_C], q[G_KH], q[G_KW], q[G_S0],
                        q[G_S1], q[G_D0], q[G_D1], q[G_P0] & 0xffffffff, q[G_P0] >> 32, q[G_OH], q[G_OW]};
}

/* Whether depthwise step st, between NCHW values, runs by bands of output
 * rows (knhwc_dw_nchw: each band's input rows transposed into L2, the
 * kernel, the band's output rows back) instead of the whole input and
 * output transposed through the scratch: float, no residual, no folded
 * input step (sums: checked where it runs), an image's input of
 * DW_BANDS_BYTES or more. On the Zen 5 (bench/RESULTS.md, branch dw) the
 * suite's depthwise one-node modules of such images (112x112 to 320x320
 * planes, 80x80 of 88 and 96 channels) ran in 0.60 to 1.01 of their time
 * with the whole transposes (320x320 and 160x160: 0.60 to 0.73); in
 * bench-dw-native the bands were 0.83 to 1.14 on images of 1.5 to 1.8 MB
 * and level to 1.24 below 1 MB. */
#define DW_BANDS_BYTES (2 << 20)
static bool dw_bands(const built *bm, const nat_step *st)
{
    const int64_t *q = st->geo;
    const node *n = &bm->g->nodes[st->node];
    const nat_val *ov = &bm->vals[st->epi.out];
    return q[G_DIRECT] == CONV_DW && st->nhwc && !dw_q8(bm, st) && !st->pro && st->epi.res < 0 &&
           !bm->vals[n->in[0]].nhwc && !ov->nhwc && !ov->q8 && !bm->vals[n->in[0]].q8 &&
           q[G_H] * q[G_W] * q[G_C] * q[G_GROUP] * (int64_t)sizeof(float) >= DW_BANDS_BYTES;
}

/* A static int8 Conv of a few channels whose kernel rows are no whole
 * quads of bytes (the 3-channel stems: 7 x 3, 3 x 3): its channels padded
 * to the returned count, kw x that a multiple of 4, the pad channels'
 * weights 0, so that qgemm_u8_rows reads the image widened and padded
 * (knhwc_pad_u8) in place of its im2col (resnet18's 7x7 stem: 8.5% of its
 * int8 time was that im2col). K grows by at most a third; 0: not such a Conv. */
static int64_t q8_cpad(const built *bm, const nat_step *st)
{
    const int64_t *q = st->geo, c = q[G_C];
    if (!bm->qstatic || q[G_DIRECT] != CONV_IM2COL || !nat_qconv(bm, q[G_GROUP]) || st->pro ||
        (q[G_KW] * c) % 4 == 0)
        return 0;
    int64_t cp = c + 1;
    while ((q[G_KW] * cp) % 4) cp++;
    knhwc_geom kg = conv_kgeom(q);
    kg.c = kg.cs = cp;
    return 3 * cp <= 4 * c && knhwc_padded_u8(&kg, c, &(int64_t){0}) >= 0 ? cp : 0;
}

/* Input channels up to which a float Conv is a network's stem on its image
 * (3 channels, usually NCHW): an im2col Conv of an NCHW input reads its
 * planes (knhwc_im2col_nchw) rather than the input changed to NHWC in the
 * scratch first (the change and the tap-by-tap copies of 12 bytes were 18%
 * of mobilenet_v3_small's run, bench/RESULTS.md); a KxK one on wide rows
 * runs as an implicit GEMM (conv_ig). */
#define IM2COL_NCHW_C 4

/* Whether a float KxK Conv runs as an implicit GEMM (kernels/conv_ig.h)
 * rather than im2col + GEMM: when a run of taps (a kernel row of the
 * group's channels) is at least 32 rows of B and an output row at least
 * 24 pixels (the GEMM's rows per call: on 14 and 7 the blocks of im2col
 * rows run faster), or 14 pixels for at most 32 output channels (a row is
 * one tile of 14 pixels by two vectors, while im2col's GEMM on 32 columns
 * is narrow: DenseNet's 14x14 128 -> 32, 0.74x to 0.79x im2col's time; at
 * 7 im2col stays 0.9x). Measured on ResNet-50's, SqueezeNet's, DBNet's
 * and DenseNet's 3x3 Convs (bench-conv-native, bench/RESULTS.md). */
static bool conv_ig(const built *bm, const int64_t *q, bool quant)
{
    if (quant || bm->qstatic ||
        (q[G_DIRECT] != CONV_IM2COL && q[G_DIRECT] != CONV_IG && q[G_DIRECT] != CONV_WINO &&
         q[G_DIRECT] != CONV_WINO2))
        return false;
    knhwc_geom g = conv_kgeom(q);
    int64_t row0, rows;
    kig_run_rows(&g, 0, &row0, &rows);
    /* (kig_conv's epilogue tiles take int rows and columns) */
    const int64_t mg = q[G_M] / q[G_GROUP];
    /* a 7-wide kernel's shorter runs on a wide row too: ResNet's and DenseNet's stem
     * (7x7 stride 2 on 3 channels, 21 rows a run, 112 outputs a row), 2.76 ms against
     * im2col's 5.13 (oneDNN 2.48; bench-conv-native 5 3:224:224:64:7:2:3, bench/RESULTS.md) */
    const bool wide = q[G_KW] >= 7 && rows >= 16 && g.ow >= 24;
    /* a stem's 3x3 on its image too (9 rows a run): squeezenet1_1's 3x3 stride 2
     * on 224x224x3 took 0.72x to 0.78x of im2col's step time in the model (the
     * taps gathered from the planes, then 6-row GEMM calls over K = 27), the
     * model 0.90x at batch 1 (bench/RESULTS.md, branch sqz); a stem of at most
     * KSTEM_WIDE output channels that kstem_conv takes runs there instead
     * (nhwc_run): by CPU time, native whole, the direct kernel over the implicit
     * GEMM took mobilenet_v3_large (16) 0.95x, efficientnet_b0 and mobilenetv2
     * (32) 0.97 to 1.0x (bench/RESULTS.md, the eleventh session's merge), and
     * with its vectors of channels in groups (stem_tiles) squeezenet1_1's (64)
     * 0.76x in bench-conv-native (bench/RESULTS.md, branch sqz2) */
    const bool stem = q[G_C] * q[G_GROUP] <= IM2COL_NCHW_C && g.ow >= 24 && (mg > KSTEM_WIDE || !kstem_takes(&g));
    return (rows >= 32 || wide || stem) && (g.ow >= 24 || (g.ow >= 14 && mg <= 32)) && g.ow <= INT_MAX &&
           mg <= INT_MAX && kig_runs(&g) <= KIG_RUNS_MAX;
}

/* Output tiles (4x4) per image from which the "wino-large" variant runs a
 * Conv as Winograd: at batch 1 one thread Winograd took 0.60x and 0.70x
 * oneDNN's time on ResNet's 56x56 (196 tiles) and 28x28 (49) planes, but
 * 1.31x on 14x14 (16) and 1.19x on 7x7 (4), where its 36 transformed
 * weight matrices (4x the weights) are read for few tiles; at batch 8 it
 * won on all four (bench/RESULTS.md, branch wino). The rule is per image,
 * not per call: a built module's packs serve every batch it runs. In
 * "wino-large" the smaller planes run F(2x2, 3x3) instead, whose 16
 * transformed weight matrices are 16/9 of the weights, not 4x (branch r50b:
 * ResNet's 14x14 and 7x7 at batch 1). */
#define WINO_LARGE_TILES 36

static bool wino_large(int64_t oh, int64_t ow)
{
    const int64_t o = kwg_out(KWG_F4);
    return ((oh + o - 1) / o) * ((ow + o - 1) / o) >= WINO_LARGE_TILES;
}

/* Whether a float Conv runs as Winograd (kernels/winograd.h), and on which
 * tile (*tile): in the "wino" variants only (its error is not the direct
 * sum's: the tuner validates the variant and keeps it where it is faster),
 * a 3x3 stride-1 undilated Conv of one group, any padding; in "wino" on
 * F(4x4, 3x3), in "wino-large" on F(4x4) on planes of WINO_LARGE_TILES
 * tiles or more and on F(2x2) below. */
static bool conv_wino(const built *bm, const nat_step *st, bool quant, kwg_tile *tile)
{
    const int64_t *q = st->geo;
    if (!bm->wino || quant || bm->qstatic || st->pro || q[G_GROUP] != 1 ||
        (q[G_DIRECT] != CONV_IM2COL && q[G_DIRECT] != CONV_IG && q[G_DIRECT] != CONV_WINO &&
         q[G_DIRECT] != CONV_WINO2))
        return false;
    *tile = bm->wino == NAT_WINO_LARGE && !wino_large(q[G_OH], q[G_OW]) ? KWG_F2 : KWG_F4;
    knhwc_geom g = conv_kgeom(q);
    return kwg_fits(&g) && q[G_M] <= INT_MAX;
}

/* Input channels from which a static int8 3x3 stride-1 Conv runs as
 * Winograd F(2x2, 3x3) on uint8 (kwg_conv_u8): on resnet18's layers 2 to 4
 * (128 to 512 channels) it took 0.67 to 0.86 of the implicit GEMM's time,
 * on layer1's 64 channels 1.25x (bench-q8wino, bench/RESULTS.md, r8). */
#define WQ8_MIN_C 128

/* Whether static int8 Conv step st runs so (CONV_WQ8): one group, no
 * prologue, uint8 in (uint8 or float out), not into a Concat's channels,
 * kwg_fits. */
static bool conv_wq8(const built *bm, const nat_step *st, bool quant)
{
    const int64_t *q = st->geo;
    const node *n = &bm->g->nodes[st->node];
    if (!quant || !bm->qstatic || st->pro || st->cat >= 0 || q[G_GROUP] != 1 || q[G_C] < WQ8_MIN_C ||
        q[G_M] > INT_MAX || (q[G_DIRECT] != CONV_IM2COL && q[G_DIRECT] != CONV_WQ8) || st->epi.out < 0 ||
        !bm->vals[n->in[0]].q8)
        return false;
    knhwc_geom g = conv_kgeom(q);
    return kwg_fits(&g);
}

/* The tile of a Winograd step (CONV_WINO or CONV_WINO2). */
static kwg_tile wino_tile(const int64_t *q)
{
    return q[G_DIRECT] == CONV_WINO2 ? KWG_F2 : KWG_F4;
}

typedef struct wg_arg {
    const float *u; /* [kwg_pos][c][m] (kwg_weights) */
    int64_t c, m;
} wg_arg;

/* Whether every value of n's ints attribute `name` is 1 (or it is absent). */
static bool ones_attr(const node *n, const char *name)
{
    int k = 0;
    const int64_t *v = attr_ints(n, name, &k);
    for (int j = 0; v && j < k; j++)
        if (v[j] != 1) return false;
    return true;
}

/* Whether n is a Conv the "wino" variant would change (conv_wino on what
 * the graph says: float32 constant 3x3 weights of one group, strides and
 * dilations 1). */
static bool wino_node(const graph *module, const node *n)
{
    if ((n->domain && n->domain[0]) || strcmp(n->op, "Conv") != 0 || n->n_in < 2) return false;
    const value *w = n->in[1] >= 0 ? &module->vals[n->in[1]] : NULL;
    return w && w->konst && w->konst->dtype == AIT_F32 && w->konst->rank == 4 &&
           w->konst->dims[2] == 3 && w->konst->dims[3] == 3 && attr_int(n, "group", 1) == 1 &&
           ones_attr(n, "strides") && ones_attr(n, "dilations");
}

/* Whether the module has such a Conv, so that the variant is a candidate
 * there only. */
bool nat_wino_in(const graph *module)
{
    for (int i = 0; i < module->n_nodes; i++)
        if (wino_node(module, &module->nodes[i])) return true;
    return false;
}

/* Whether the module has such a Conv on a small plane, where "wino-large"
 * differs from "wino" (F(2x2) there, not F(4x4)). (A plane whose size the
 * graph does not know, as in a module cut from a model whose batch is
 * symbolic, may be either: the variant is offered.) */
bool nat_wino_small(const graph *module)
{
    for (int i = 0; i < module->n_nodes; i++) {
        const node *n = &module->nodes[i];
        if (!wino_node(module, n) || n->n_out < 1 || n->out[0] < 0) continue;
        const value *y = &module->vals[n->out[0]];
        if (y->rank != 4 || y->dims[2] <= 0 || y->dims[3] <= 0 || !wino_large(y->dims[2], y->dims[3]))
            return true;
    }
    return false;
}

/* U[pos] packed as B (grp the position). */
static void fill_wg(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)i;
    const wg_arg *a = arg;
    gemm_pack_b(bm->kern, a->u + grp * a->c * a->m, a->m, 1, a->c, a->m, dst);
}

/* Whether a float KxK (or strided) Conv of groups of at most KGRP_MAX_C
 * input and output channels runs on the direct grouped kernel
 * (kernels/grpconv.h) rather than an im2col and a GEMM per group, whose N
 * (the group's output channels) is a fraction of the kernel's vector:
 * regnet_y_400mf's 3x3 Convs of groups of 8 spent 35% of its native run in
 * im2col and its copies (bench/RESULTS.md, branch s4). No residual: the
 * kernel's epilogue is the bias and the activation. */
static bool conv_grp(const built *bm, const nat_step *st, bool quant)
{
    const int64_t *q = st->geo;
    const int64_t mg = q[G_M] / q[G_GROUP];
    return !quant && !bm->qstatic && (q[G_DIRECT] == CONV_IM2COL || q[G_DIRECT] == CONV_GRP) &&
           q[G_GROUP] > 1 && q[G_C] >= 2 && q[G_C] <= KGRP_MAX_C && mg <= KGRP_MAX_C && st->epi.res < 0 &&
           !st->pro && !st->pre && q[G_H] <= INT_MAX && q[G_W] <= INT_MAX && q[G_OW] <= INT_MAX &&
           kgrp_pack_size(q[G_GROUP], mg, q[G_C], q[G_KH] * q[G_KW]) > 0;
}

typedef struct grp_arg {
    const float *w; /* [M][cg][taps], a BatchNormalization after it folded in */
    int64_t groups, mg, cg, taps;
} grp_arg;

static void fill_grp(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)bm, (void)i, (void)grp;
    const grp_arg *a = arg;
    kgrp_pack(a->w, a->groups, a->mg, a->cg, a->taps, dst);
}

typedef struct ig_arg {
    const float *tmp; /* [groups][kdim][mg] */
    knhwc_geom g;
    int64_t mg;
} ig_arg;

/* B of group grp / runs, its run grp % runs (kig_run_rows). */
static void fill_ig(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)i;
    const ig_arg *a = arg;
    const int64_t runs = kig_runs(&a->g), kdim = a->g.c * a->g.kh * a->g.kw;
    int64_t row0, rows;
    kig_run_rows(&a->g, grp % runs, &row0, &rows);
    gemm_pack_b(bm->kern, a->tmp + ((grp / runs) * kdim + row0) * a->mg, a->mg, 1, rows, a->mg, dst);
}

static ait_status finish_pack(built *bm, nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    const int64_t M = q[G_M], group = q[G_GROUP], mg = M / group, cg = q[G_C];
    const int64_t taps = q[G_KH] * q[G_KW], kdim = cg * taps, ohw = q[G_OH] * q[G_OW];
    const int64_t xn = q[G_N] * cg * group * q[G_H] * q[G_W], yn = q[G_N] * M * ohw;
    const float *w = nat_shape(bm, n->in[1])->data;
    nat_pack *p;
    const bool quant = q[G_DIRECT] != CONV_DW && nat_qconv(bm, group), dwq = dw_q8(bm, st);
    kwg_tile wt = KWG_F4;
    const bool wino = conv_wino(bm, st, quant, &wt), wq8 = !wino && conv_wq8(bm, st, quant),
               ig = !wino && !wq8 && conv_ig(bm, q, quant), grp = !wino && !wq8 && !ig && conv_grp(bm, st, quant);
    st->geo[G_DIRECT] = wino ? (wt == KWG_F2 ? CONV_WINO2 : CONV_WINO)
                        : wq8 ? CONV_WQ8
                        : ig ? CONV_IG
                        : grp ? CONV_GRP
                        : q[G_DIRECT] == CONV_IG || q[G_DIRECT] == CONV_WINO || q[G_DIRECT] == CONV_WINO2 ||
                                q[G_DIRECT] == CONV_WQ8
                            ? CONV_IM2COL
                            : q[G_DIRECT];
    /* qgemm's B is the weights, knhwc_dw_u8 and the implicit GEMM: channels-last only
     * (the implicit GEMM reads an NCHW input as it pads it) */
    st->nhwc |= quant || dwq || ig || wino || grp || st->pro; /* a prologue: on A, the input */
    /* A depthwise conv on narrow planes or of whole vectors of channels runs
     * channels-last even between NCHW values (the layout changed in its
     * scratch): kdw_run's rows of under DW_NCHW_OW outputs are mostly its
     * scalar edges, and knhwc_dw is the faster kernel at DW_NHWC_C channels. */
    st->nhwc |= q[G_DIRECT] == CONV_DW && st->can_nhwc && (q[G_OW] < DW_NCHW_OW || M >= DW_NHWC_C);
    if (!st->nhwc) {
        if (q[G_DIRECT] == CONV_DW) return AIT_OK;
        int nr = gemm_kernel_nr(bm->kern);
        size_t cols = (size_t)((im2col_block(ohw, kdim, nr) + nr - 1) / nr * nr);
        if (!q[G_DIRECT] &&
            (__builtin_mul_overflow((size_t)kdim, cols * sizeof(float), &st->scratch) ||
             __builtin_add_overflow(st->scratch, cols * sizeof(float) + 64, &st->scratch)))
            return nat_fail(bm, st->node, AIT_E_OVERFLOW, "im2col is too large");
        if (bm->packs[st->node].data) return AIT_OK; /* packed at an earlier schedule */
        float *own = NULL;
        /* Prepared blobs: nat_pack_get takes the node's or fails, and reads no
         * weights, which the loader may have freed (nat_releases). */
        conv_arg arg = {mg, kdim, bm->prep ? NULL : bn_weights(bm, st, w, M, kdim, &own)};
        if (!arg.w && !bm->prep) return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
        ait_status s = nat_pack_get(bm, st->node, (int)group, gemm_pack_a_size(bm->kern, mg, kdim),
                                    fill_w, &arg, &p);
        free(own);
        return s;
    }
    /* channels-last: the layout changes the step makes, then A's block */
    size_t f = 0;
    const nat_val *ov = &bm->vals[st->epi.out], *rv = st->epi.res >= 0 ? &bm->vals[st->epi.res] : NULL;
    const nat_val *xin = st->pro ? conv_pro(bm, st, 0, NULL) : &bm->vals[n->in[0]]; /* what it reads */
    if (!xin->nhwc && !ig) f += nat_floats(xn);
    /* a uint8 residual or output: a block's float rows (q8_block), of a GEMM */
    const int64_t qrows = q8_block(q[G_DIRECT] == CONV_DIRECT ? q[G_N] * ohw : im2col_block(ohw, kdim, 1), M);
    const bool gemm = q[G_DIRECT] != CONV_DW;
    if (rv && (!rv->nhwc || rv->q8) && !(rv->q8 && wq8)) /* NCHW, or uint8, to float NHWC (CONV_WQ8: its tiles') */
        f += nat_floats(rv->q8 && gemm ? qrows * M : yn);
    if (wq8) { /* kwg_conv_u8's tiles */
        knhwc_geom g = conv_kgeom(q);
        size_t wb;
        if (!kwg_scratch_u8(&g, q[G_N], M, bm->threads, &wb) || wb > (size_t)INT64_MAX - 3)
            return nat_fail(bm, st->node, AIT_E_OVERFLOW, "Winograd tiles are too large");
        f += nat_floats((int64_t)((wb + 3) / 4));
    }
    if (!ov->nhwc || ov->q8) f += nat_floats(ov->q8 && gemm ? qrows * M : yn); /* float NHWC, then NCHW or uint8 */
    if (q[G_DIRECT] == CONV_IM2COL) f += nat_floats(im2col_block(ohw, kdim, 1) * kdim);
    const int64_t nr = gemm_kernel_nr(bm->kern);
    if (pro_on_b(bm, st)) f += nat_floats((mg + nr - 1) / nr * nr * kdim); /* B scaled per image */
    if (wino) { /* a zero row and each thread's transformed tiles */
        knhwc_geom g = conv_kgeom(q);
        size_t wf;
        if (!kwg_scratch(wt, &g, q[G_N], M, bm->threads, &wf) || wf > (size_t)INT64_MAX)
            return nat_fail(bm, st->node, AIT_E_OVERFLOW, "Winograd tiles are too large");
        f += nat_floats((int64_t)wf);
    }
    if (ig) { /* the padded input rows */
        knhwc_geom g = conv_kgeom(q);
        size_t pf;
        if (!kig_scratch(&g, !bm->vals[n->in[0]].nhwc, bm->threads, &pf) || pf > (size_t)INT64_MAX)
            return nat_fail(bm, st->node, AIT_E_OVERFLOW, "padded input rows are too large");
        f += nat_floats((int64_t)pf);
    }
    const int64_t cp = q8_cpad(bm, st), kq = cp ? cp * taps : kdim; /* qgemm's K */
    if (quant) { /* qgemm's quantised rows, after A's block */
        int64_t rows = q[G_DIRECT] == CONV_DIRECT ? q[G_N] * ohw : im2col_block(ohw, kdim, 1);
        size_t qb = qgemm_scratch(bm->quant, bm->qgroup, kq, rows);
        if (!qb) return nat_fail(bm, st->node, AIT_E_OVERFLOW, "quantised activations are too large");
        f += nat_floats((int64_t)(qb / sizeof(float)));
        if (bm->qstatic && q[G_DIRECT] == CONV_IM2COL) { /* an image quantised once, then im2col */
            f += nat_floats((xn / q[G_N] + 3) / 4);
            knhwc_geom kg = conv_kgeom(q); /* or read in place, padded (qgemm_u8_rows) */
            if (cp) kg.c = kg.cs = cp;
            int64_t ib = nat_qconv_ig_bytes(&kg, cg, rows);
            if (cp && ib < 0) /* B is laid out for the widened image: no im2col will do */
                return nat_fail(bm, st->node, AIT_E_OVERFLOW, "padded input rows are too large");
            f += ib >= 0 ? nat_floats((ib + 3) / 4) : 0;
        }
    }
    if (dwq) { /* the scales, the input quantised, a row per thread before uint8 */
        f += nat_floats(M);
        if (!bm->vals[n->in[0]].q8) f += nat_floats((xn + 3) / 4);
        if (ov->q8) f += nat_floats((bm->threads > 1 ? bm->threads : 1) * q[G_OW] * M);
    }
    if (dw_bands(bm, st)) { /* its bands, when more than the whole transposes */
        knhwc_geom g = conv_kgeom(q);
        int64_t bf = knhwc_dw_nchw_floats(&g, 0, bm->threads);
        if (bf < 0) return nat_fail(bm, st->node, AIT_E_OVERFLOW, "depthwise bands are too large");
        f = (size_t)bf > f ? (size_t)bf : f;
    }
    if (__builtin_mul_overflow(f, sizeof(float), &st->scratch))
        return nat_fail(bm, st->node, AIT_E_OVERFLOW, "scratch is too large");
    if (dwq) return bm->packs[st->node].data ? AIT_OK : nat_qdw_pack(bm, st->node, w, taps, M);
    if (q[G_DIRECT] == CONV_DW) { /* weights [tap][c], made here: not saved */
        p = &bm->packs[st->node];
        st->sums = gap_reads(bm, st->epi.out);
        if (st->sums && p->n_sums < (size_t)(q[G_N] * q[G_OH] * M)) { /* [n * oh][c] */
            aligned_free(p->sums);
            p->n_sums = (size_t)(q[G_N] * q[G_OH] * M);
            p->sums = aligned_zalloc(sizeof(float) * p->n_sums);
            if (!p->sums) {
                p->n_sums = 0;
                return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
            }
        }
        if (p->wt) return AIT_OK;
        p->wt = aligned_zalloc(sizeof(float) * (size_t)(taps * M));
        if (!p->wt) return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
        for (int64_t c = 0; c < M; c++)
            for (int64_t t = 0; t < taps; t++) p->wt[t * M + c] = w[c * taps + t];
        return AIT_OK;
    }
    /* B of group g: [kdim][mg], row (tap, ci) as im2col lays A's columns */
    if (bm->packs[st->node].data) return AIT_OK; /* packed at an earlier schedule */
    if (grp) { /* kgrp_pack's blocks of 8 output channels */
        const size_t gf = kgrp_pack_size(group, mg, cg, taps);
        if (!gf || gf > SIZE_MAX / sizeof(float))
            return nat_fail(bm, st->node, AIT_E_OVERFLOW, "grouped weights are too large");
        float *own = NULL;
        const grp_arg ga = {bm->prep ? NULL : bn_weights(bm, st, w, M, kdim, &own), group, mg, cg, taps};
        if (!ga.w && !bm->prep) return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
        bm->pack_raw = true; /* its own floats, no GEMM operand's header */
        ait_status s = nat_pack_get(bm, st->node, 1, gf * sizeof(float), fill_grp, &ga, &p);
        bm->pack_raw = false;
        free(own);
        return s;
    }
    if (wino) { /* U[pos] for each of the 36 (16) positions, [c][m], packed as B */
        const size_t ub = gemm_pack_b_size(bm->kern, cg, M);
        if (!ub) return nat_fail(bm, st->node, AIT_E_OVERFLOW, "Winograd weights are too large");
        if (bm->prep) return nat_pack_get(bm, st->node, kwg_pos(wt), ub, fill_wg, NULL, &p);
        float *own, *tmp = malloc(sizeof(float) * (size_t)(M * kdim)),
                    *u = malloc(sizeof(float) * (size_t)(kwg_pos(wt) * cg * M));
        w = tmp && u ? bn_weights(bm, st, w, M, kdim, &own) : NULL;
        if (!w) {
            free(tmp);
            free(u);
            return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
        }
        for (int64_t co = 0; co < M; co++) /* [tap * c + ci][co], conv_ig's B */
            for (int64_t ci = 0; ci < cg; ci++)
                for (int64_t t = 0; t < taps; t++) tmp[(t * cg + ci) * M + co] = w[(co * cg + ci) * taps + t];
        kwg_weights(wt, tmp, cg, M, u);
        const wg_arg wa = {u, cg, M};
        ait_status s = nat_pack_get(bm, st->node, kwg_pos(wt), ub, fill_wg, &wa, &p);
        free(tmp);
        free(u);
        free(own);
        return s;
    }
    ig_arg ia = {NULL, conv_kgeom(q), mg};
    int64_t row0, rows, runs = kig_runs(&ia.g);
    kig_run_rows(&ia.g, 0, &row0, &rows);
    if (ig && group * runs > INT_MAX)
        return nat_fail(bm, st->node, AIT_E_OVERFLOW, "too many runs of taps");
    if (bm->prep) /* the blob's, as above: no weights read */
        return wq8     ? nat_qwino_pack(bm, st->node, NULL, cg, M)
               : quant ? nat_qconv_pack(bm, st->node, NULL, kq, M)
               : ig  ? nat_pack_get(bm, st->node, (int)(group * runs),
                                    gemm_pack_b_size(bm->kern, rows, mg), fill_ig, NULL, &p)
                     : nat_pack_get(bm, st->node, (int)group, gemm_pack_b_size(bm->kern, kdim, mg),
                                    fill_wt, NULL, &p);
    float *own, *tmp = calloc((size_t)(M * kq), sizeof(float));
    w = tmp ? bn_weights(bm, st, w, M, kdim, &own) : NULL;
    if (!w) {
        free(tmp);
        return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
    }
    const int64_t cs = cp ? cp : cg; /* B's channels per tap (q8_cpad's pad ones 0) */
    for (int64_t gi = 0; gi < group; gi++)
        for (int64_t co = 0; co < mg; co++)
            for (int64_t ci = 0; ci < cg; ci++)
                for (int64_t t = 0; t < taps; t++)
                    tmp[(gi * kq + t * cs + ci) * mg + co] = w[((gi * mg + co) * cg + ci) * taps + t];
    ia.tmp = tmp;
    if (wq8) { /* U = G g G^T per position, from B's [9 c][M] */
        float *u = malloc(sizeof(float) * (size_t)(16 * cg * M));
        ait_status s = u ? (kwg_weights(KWG_F2, tmp, cg, M, u), nat_qwino_pack(bm, st->node, u, cg, M))
                         : nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory");
        free(u);
        free(tmp);
        free(own);
        return s;
    }
    ait_status s = quant ? nat_qconv_pack(bm, st->node, tmp, kq, M)
                   : ig  ? nat_pack_get(bm, st->node, (int)(group * runs),
                                        gemm_pack_b_size(bm->kern, rows, mg), fill_ig, &ia, &p)
                         : nat_pack_get(bm, st->node, (int)group, gemm_pack_b_size(bm->kern, kdim, mg),
                                        fill_wt, tmp, &p);
    free(tmp);
    free(own);
    return s;
}

/* The Conv's pooled input (avg_first), x's size at the pooled pixels:
 * floats at the end of the step's scratch. */
static int64_t avg_floats(const nat_step *st)
{
    const int64_t *q = st->geo;
    return st->avg[0] ? (int64_t)nat_floats(q[G_N] * q[G_C] * q[G_GROUP] * q[G_H] * q[G_W]) : 0;
}

static void pre_take(built *bm, nat_step *st);

static ait_status conv_finish(built *bm, nat_step *st)
{
    TRY(finish_pack(bm, st));
    pre_take(bm, st);
    if (__builtin_add_overflow(st->scratch, sizeof(float) * (size_t)avg_floats(st), &st->scratch))
        return nat_fail(bm, st->node, AIT_E_OVERFLOW, "scratch is too large");
    return AIT_OK;
}

/* Depthwise: y = act(conv + bias), then + residual (the chain puts an
 * activation only before a residual). */
static ait_status dw_run(built *bm, const nat_step *st, const float *x, const float *bias, float *y)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    kdw_geom g = {(int)q[G_N], (int)q[G_GROUP], (int)q[G_H], (int)q[G_W], (int)(q[G_M] / q[G_GROUP]),
                  (int)q[G_KH], (int)q[G_KW], (int)q[G_S0], (int)q[G_S1], (int)q[G_D0], (int)q[G_D1],
                  (int)(q[G_P0] & 0xffffffff), (int)(q[G_P0] >> 32), (int)q[G_OH], (int)q[G_OW]};
    kdw_run(&g, x, bm->vals[n->in[1]].cur->data, bias, nat_kact(&st->epi), y, bm->threads);
    nat_res_add(bm, st, y);
    return AIT_OK;
}

extern const nat_op nat_conv;

bool nat_conv_cat(const nat_step *st)
{
    return st->op == &nat_conv && st->geo[G_DIRECT] != CONV_DW && st->epi.res < 0;
}

bool nat_dw_gap(const built *bm, int v, float *y)
{
    const int p = bm->g->vals[v].producer, s = p >= 0 ? bm->step_of[p] : -1;
    const nat_step *st = s >= 0 ? &bm->steps[s] : NULL;
    if (!st || st->op != &nat_conv || !st->sums || !st->nhwc || st->epi.out != v) return false;
    const int64_t *q = st->geo, N = q[G_N], M = q[G_M], oh = q[G_OH];
    const float *sm = bm->packs[st->node].sums, k = 1.0f / (float)(oh * q[G_OW]);
    for (int64_t n = 0; n < N; n++) {
        float *yn = y + n * M;
        memcpy(yn, sm + n * oh * M, sizeof(float) * (size_t)M);
        for (int64_t r = 1; r < oh; r++)
            for (int64_t c = 0; c < M; c++) yn[c] += sm[(n * oh + r) * M + c];
        for (int64_t c = 0; c < M; c++) yn[c] *= k;
    }
    return true;
}

bool nat_conv_res_in_place(const built *bm, const nat_step *st)
{
    const int64_t *q = st->geo;
    if (st->op != &nat_conv || q[G_DIRECT] != CONV_DIRECT || q[G_GROUP] != 1 || st->pro || st->cat >= 0 ||
        bm->qstatic || nat_qconv(bm, 1) || st->epi.res < 0 || st->epi.out < 0 || !st->nhwc)
        return false;
    const nat_val *r = &bm->vals[st->epi.res], *o = &bm->vals[st->epi.out];
    if (!r->placed || !o->placed || !r->nhwc || !o->nhwc || r->q8 || o->q8 || r->view || o->view)
        return false;
    const gemm_epi e = {.act = st->epi.act};
    const nat_pack *p = &bm->packs[st->node];
    const gemm_kernel *kr = bm->kern ? bm->kern : p->views ? p->views[0].kern : NULL;
    return kr && gemm_epi_fusable(&e) &&
           gemm_skinny_default(kr, q[G_N] * q[G_OH] * q[G_OW], q[G_M], q[G_C], 1, bm->threads);
}

bool nat_conv_q8(const built *bm, const nat_step *st)
{
    return st->op == &nat_conv && bm->qstatic &&
           (st->geo[G_DIRECT] == CONV_DW ? dw_q8(bm, st) : nat_qconv(bm, st->geo[G_GROUP]));
}

/* Step st's bias: a folded BatchNormalization's, the node's, or an Add's. */
static const float *conv_bias(const built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    return st->bn >= 0                    ? bm->packs[st->node].bias
           : n->n_in > 2 && n->in[2] >= 0 ? bm->vals[n->in[2]].cur->data
           : st->epi.bias >= 0            ? bm->vals[st->epi.bias].cur->data
                                          : NULL;
}

static bool im2col_planes(const built *bm, const nat_step *st, const nat_val *xv);

/* Whether conv step st is a stem that nhwc_run gives the direct kernel
 * (kstem_conv on the planes of its NCHW image, no residual). */
static bool conv_stem(const built *bm, const nat_step *st)
{
    const int64_t *q = st->geo;
    const knhwc_geom kg = conv_kgeom(q);
    return q[G_GROUP] == 1 && st->epi.res < 0 &&
           im2col_planes(bm, st, &bm->vals[bm->g->nodes[st->node].in[0]]) && kstem_takes(&kg);
}

bool nat_conv_band(const built *bm, const nat_step *st, bool *dw)
{
    const int64_t *q = st->geo;
    if (st->op != &nat_conv || !st->nhwc || st->pro || st->pre || st->cat >= 0 || st->avg[0] || st->view ||
        st->folded || bm->qstatic || nat_qconv(bm, q[G_GROUP]) || bm->packs[st->node].qv.w || st->epi.out < 0)
        return false;
    *dw = q[G_DIRECT] == CONV_DW;
    const bool stem = !*dw && conv_stem(bm, st); /* its input the image's planes */
    if (!(q[G_DIRECT] == CONV_DIRECT && q[G_GROUP] == 1) && !(*dw && st->can_nhwc) && !stem) return false;
    const int vs[] = {stem ? -1 : bm->g->nodes[st->node].in[0], st->epi.out, st->epi.res};
    for (size_t k = 0; k < sizeof vs / sizeof *vs; k++) {
        const nat_val *v = vs[k] >= 0 ? &bm->vals[vs[k]] : NULL;
        if (v && (!v->nhwc || v->q8 || v->view || v->in_cat)) return false;
    }
    return true;
}

bool nat_conv_stem(const built *bm, const nat_step *st)
{
    bool dw;
    return nat_conv_band(bm, st, &dw) && !dw && conv_stem(bm, st);
}

void nat_window_rows(int64_t h, int64_t k, int64_t s, int64_t d, int64_t pt, int64_t oy0, int64_t oy1,
                     int64_t *r0, int64_t *r1)
{
    const int64_t a = oy0 * s - pt, b = (oy1 - 1) * s - pt + (k - 1) * d + 1;
    *r0 = a < 0 ? 0 : a > h ? h : a;
    *r1 = b > h ? h : b < *r0 ? *r0 : b;
}

void nat_conv_in_rows(const nat_step *st, int64_t oy0, int64_t oy1, int64_t *r0, int64_t *r1)
{
    const int64_t *q = st->geo;
    nat_window_rows(q[G_H], q[G_KH], q[G_S0], q[G_D0], q[G_P0] & 0xffffffff, oy0, oy1, r0, r1);
}

void nat_conv_dims(const nat_step *st, int64_t *n, int64_t *h, int64_t *oh)
{
    *n = st->geo[G_N];
    *h = st->geo[G_H];
    *oh = st->geo[G_OH];
}

int64_t nat_conv_row_bytes(const nat_step *st, bool out)
{
    const int64_t *q = st->geo;
    return (int64_t)sizeof(float) * (out ? q[G_OW] * q[G_M] : q[G_W] * q[G_C] * q[G_GROUP]);
}

ait_status nat_conv_rows(built *bm, const nat_step *st, int64_t im, int64_t oy0, int64_t oy1)
{
    const int64_t *q = st->geo, M = q[G_M], C = q[G_C] * q[G_GROUP], ow = q[G_OW];
    const float *x = bm->vals[bm->g->nodes[st->node].in[0]].cur->data, *bias = conv_bias(bm, st);
    const float *res = st->epi.res >= 0 ? bm->vals[st->epi.res].cur->data : NULL;
    float *y = bm->vals[st->epi.out].t.data;
    const int64_t p0 = (im * q[G_OH] + oy0) * ow; /* the band's first output pixel */
    if (oy1 <= oy0) return AIT_OK;
    if (q[G_DIRECT] != CONV_DIRECT && q[G_DIRECT] != CONV_DW) { /* a stem (conv_stem), on the planes */
        const gemm_packed *b = &bm->packs[st->node].views[0];
        knhwc_geom kg = conv_kgeom(q);
        kg.pt -= oy0 * kg.sh; /* its first row the band's */
        kg.oh = oy1 - oy0;
        kstem_conv(&kg, x + im * q[G_H] * q[G_W] * C, b->data, gemm_kernel_nr(b->kern), M, bias,
                   nat_kact(&st->epi), y + p0 * M, M, bm->threads);
        return AIT_OK;
    }
    if (q[G_DIRECT] == CONV_DW) { /* the window over the input rows the band reads */
        knhwc_geom kg = conv_kgeom(q);
        int64_t r0, r1;
        nat_conv_in_rows(st, oy0, oy1, &r0, &r1);
        kg.pt += r0 - oy0 * kg.sh;
        kg.h = r1 - r0;
        kg.oh = oy1 - oy0;
        knhwc_dw(&kg, 1, x + (im * q[G_H] + r0) * q[G_W] * C, bm->packs[st->node].wt, bias,
                 nat_kact(&st->epi), res ? res + p0 * M : NULL, y + p0 * M,
                 st->sums ? bm->packs[st->node].sums + (im * q[G_OH] + oy0) * M : NULL, bm->threads);
        return AIT_OK;
    }
    gemm_args g = {.m = (oy1 - oy0) * ow, .n = M, .k = C, .a = x + p0 * C, .rsa = C, .csa = 1,
                   .pb = &bm->packs[st->node].views[0], .c = y + p0 * M, .ldc = M,
                   .threads = bm->threads, .kern = bm->kern};
    g.epi.act = st->epi.act;
    g.epi.lo = st->epi.lo;
    g.epi.hi = st->epi.hi;
    if (res) {
        g.epi.res = res + p0 * M;
        g.epi.ldr = M;
        g.epi.res_after = st->epi.res_after;
    }
    if (bias) {
        g.epi.bias_mode = GEMM_BIAS_COL;
        g.epi.bias = bias;
    }
    return nat_gemm_f32(bm, &g);
}

/* Rows of a block of pre_take's pair: the block's output (m floats a row) in
 * about 512 KB, which stays in L2 from the first GEMM's stores to the
 * second's, whole calls of the skinny kernel's 6 rows. */
static int64_t pre_rows(int64_t m)
{
    int64_t r = ((int64_t)1 << 17) / (m > 0 ? m : 1) / 6 * 6;
    return r < 6 ? 6 : r;
}

/* A 1x1 Conv step st (channels-last, one group, float, stride 1 or a
 * strided 1x1 on im2col) whose residual r is the output of an earlier
 * direct 1x1 Conv P with its bias only (no activation, no residual), r read
 * by nothing else: ResNet's bottleneck, where the downsample adds conv3's
 * output (conv3 runs first in torch's export). P folds into st (st->pre):
 * per block of rows (pre_rows), P's GEMM writes the block of st's output,
 * then st's GEMM adds its product over it as its residual in place (the
 * skinny path's tiles read their residual before storing, as for
 * nat_conv_res_in_place), so r (3.2 MB at layer1's 56x56x256) is never
 * written to memory and read back. Decided at finish, after layout.c. */
static void pre_take(built *bm, nat_step *st)
{
    const int64_t *q = st->geo;
    const int me = (int)(st - bm->steps), r = st->epi.res;
    const bool one = q[G_KH] == 1 && q[G_KW] == 1 && !q[G_P0];
    const nat_pack *pk = &bm->packs[st->node];
    if (r < 0 || st->epi.res_after || !st->nhwc || q[G_GROUP] != 1 || st->pro || st->avg[0] ||
        st->cat >= 0 || bm->qstatic || nat_qconv(bm, 1) || pk->qv.w || !pk->views ||
        (q[G_DIRECT] != CONV_DIRECT && !(q[G_DIRECT] == CONV_IM2COL && one)))
        return;
    const nat_val *rv = &bm->vals[r], *ov = &bm->vals[st->epi.out];
    if (ov->q8 || !rv->placed || !rv->nhwc || rv->q8 || rv->view || rv->uses != 1 ||
        nat_is_output(bm->g, r))
        return;
    int s = me - 1;
    while (s >= 0 && bm->steps[s].epi.out != r) s--;
    nat_step *p = s >= 0 ? &bm->steps[s] : NULL;
    if (!p || p->op != &nat_conv || p->folded || !p->nhwc || p->geo[G_DIRECT] != CONV_DIRECT ||
        p->geo[G_GROUP] != 1 || p->pro || p->avg[0] || p->cat >= 0 || p->epi.act != GEMM_ACT_NONE ||
        p->epi.res >= 0 || !bm->packs[p->node].views || bm->packs[p->node].qv.w ||
        p->geo[G_N] * p->geo[G_OH] * p->geo[G_OW] != q[G_N] * q[G_OH] * q[G_OW] || p->geo[G_M] != q[G_M])
        return;
    const nat_val *hv = &bm->vals[bm->g->nodes[p->node].in[0]];
    const gemm_epi e = {.act = st->epi.act};
    const gemm_kernel *kr = bm->kern ? bm->kern : pk->views[0].kern;
    if (!hv->nhwc || hv->q8 || hv->view || !gemm_epi_fusable(&e) ||
        !gemm_skinny_default(kr, pre_rows(q[G_M]), q[G_M], q[G_C] * q[G_KH] * q[G_KW], 1, bm->threads))
        return;
    p->folded = true;
    st->pre = s + 1;
    bm->vals[r].placed = false;
}

/* Step st's GEMM g over rows r0 .. r0 + g->m of its output (all images'),
 * with its folded Conv (st->pre) first, per block of rows (pre_take). */
static ait_status pre_gemm(built *bm, const nat_step *st, const gemm_args *g, int64_t r0)
{
    const nat_step *p = &bm->steps[st->pre - 1];
    const int64_t kp = p->geo[G_C], blk = pre_rows(g->n);
    const float *h = bm->vals[bm->g->nodes[p->node].in[0]].cur->data, *pbias = conv_bias(bm, p);
    for (int64_t s0 = 0; s0 < g->m; s0 += blk) {
        const int64_t m = s0 + blk < g->m ? blk : g->m - s0;
        gemm_args a = {.m = m, .n = g->n, .k = kp, .a = h + (r0 + s0) * kp, .rsa = kp, .csa = 1,
                       .pb = &bm->packs[p->node].views[0], .c = g->c + s0 * g->ldc, .ldc = g->ldc,
                       .threads = g->threads, .kern = g->kern};
        if (pbias) a.epi = (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = pbias};
        TRY(nat_gemm_f32(bm, &a));
        gemm_args b = *g;
        b.m = m;
        b.a = g->a + s0 * g->rsa;
        b.c = a.c;
        b.epi.res = a.c;
        b.epi.ldr = g->ldc;
        b.epi.res_after = false;
        TRY(nat_gemm_f32(bm, &b));
    }
    return AIT_OK;
}

/* Where step st writes: its output value, or its channels of the Concat's
 * output (st->cat); *cy: the channels of an image there. */
static float *conv_dst(const built *bm, const nat_step *st, int64_t *cy)
{
    const int64_t *q = st->geo;
    *cy = q[G_M];
    if (st->cat < 0) return bm->vals[st->epi.out].t.data;
    const tensor *t = &bm->vals[st->cat].t;
    *cy = t->dims[1];
    return (float *)t->data + st->cat_c0 * (bm->vals[st->cat].nhwc ? 1 : q[G_OH] * q[G_OW]);
}

/* Output pixels per block of such an im2col: about 128 KB of A, which the
 * GEMM then reads from L2 (im2col_block's 1 MB blocks are written to
 * memory and read back). */
static int64_t planes_block(int64_t ohw, int64_t kdim)
{
    int64_t p = ((int64_t)1 << 15) / (kdim > 0 ? kdim : 1);
    p = p < 64 ? 64 : p;
    return p < ohw ? p : ohw;
}

/* Static int8 reading a float NCHW image (a stem's) in place of an im2col
 * with padding: its quantised, widened and padded bytes made from the planes
 * in one pass (knhwc_pad_u8_nchw), without the image's NHWC floats. */
static bool q8_pad_nchw(const built *bm, const nat_step *st, const nat_val *xv, bool xq8)
{
    const int64_t *q = st->geo, cp = q8_cpad(bm, st);
    const nat_pack *p = &bm->packs[st->node];
    if (xq8 || xv->nhwc || st->pro || !p->qv.w || !(p->qs > 0) || q[G_GROUP] != 1 ||
        q[G_DIRECT] != CONV_IM2COL)
        return false;
    knhwc_geom kg = conv_kgeom(q);
    if (cp) kg.c = kg.cs = cp;
    return knhwc_padded_u8(&kg, q[G_C], &(int64_t){0}) > 0;
}

static bool im2col_planes(const built *bm, const nat_step *st, const nat_val *xv)
{
    const int64_t *q = st->geo;
    return q[G_DIRECT] == CONV_IM2COL && !xv->nhwc && !st->pro && !bm->qstatic &&
           !bm->packs[st->node].qv.w && q[G_C] * q[G_GROUP] <= IM2COL_NCHW_C;
}

/* Channels-last: Y[pixel][M] = A[pixel][kdim] x B per image and group
 * (all images at once for the direct 1x1), A the input itself (1x1,
 * stride 1, no pads) or its NHWC im2col by blocks of pixels; bias along
 * the columns, the residual NHWC like Y. Inputs and outputs not kept NHWC
 * (layout.c) change layout in the scratch. Static int8 reads a uint8
 * input (nat_val.q8) as its quantised A, at the scale its writer used,
 * dequantises a uint8 residual into the scratch, and requantises each
 * block of a uint8 output from the float epilogue's rows in the scratch. */
static ait_status nhwc_run(built *bm, const nat_step *st, const float *x, const float *bias,
                           float *yout, int64_t cy)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    const int64_t N = q[G_N], M = q[G_M], group = q[G_GROUP], mg = M / group, cg = q[G_C];
    const int64_t C = cg * group, hw = q[G_H] * q[G_W], ohw = q[G_OH] * q[G_OW];
    const int64_t kdim = cg * q[G_KH] * q[G_KW];
    float *sp = bm->scratch;
    /* (a folded Conv's output is the residual: pre_gemm) */
    const float *res = st->epi.res >= 0 && !st->pre ? bm->vals[st->epi.res].cur->data : NULL;
    const nat_val *xv = &bm->vals[n->in[0]], *ov = &bm->vals[st->epi.out];
    kaffine pf;
    if (st->pro) { /* the folded step's input, mapped as the GEMM reads it */
        xv = conv_pro(bm, st, 0, &pf);
        x = xv->cur->data;
    }
    const nat_pack *xq8 = xv->q8 ? &bm->packs[xv->q8_node] : NULL; /* its scale */
    const nat_pack *oq8 = ov->q8 ? &bm->packs[ov->q8_node] : NULL;
    const bool ig = q[G_DIRECT] == CONV_IG; /* reads an NCHW input as it is */
    int64_t lda = C; /* x's pixels apart */
    const bool on_b = pro_on_b(bm, st);
    float *wb = NULL; /* B's panels scaled by the image's factors (on_b) */
    if (on_b) {
        wb = sp;
        sp += nat_floats((M + gemm_kernel_nr(bm->kern) - 1) / gemm_kernel_nr(bm->kern) *
                         gemm_kernel_nr(bm->kern) * kdim);
    }
    gemm_packed wv;
    if (dw_bands(bm, st) && !st->sums) { /* NCHW in and out by bands, no NHWC copies */
        knhwc_geom kg = conv_kgeom(q);
        knhwc_dw_nchw(&kg, N, x, bm->packs[st->node].wt, bias, nat_kact(&st->epi), yout, cy * ohw, 0, sp,
                      bm->threads);
        return AIT_OK;
    }
    const bool planes = im2col_planes(bm, st, xv), pad_nchw = q8_pad_nchw(bm, st, xv, xq8);
    if (!xv->nhwc && !ig && !planes && !pad_nchw) {
        knhwc_from_nchw(x, N, C, hw, sp);
        x = sp;
        sp += nat_floats(N * C * hw);
    } else if (st->pro) {
        lda = nhwc_stride(bm, xv, C);
    }
    const nat_pack *rq8 = res && bm->vals[st->epi.res].q8 ? &bm->packs[bm->vals[st->epi.res].q8_node] : NULL;
    const bool gemm = q[G_DIRECT] != CONV_DW;
    const int64_t qblk = q8_block(q[G_DIRECT] == CONV_DIRECT ? N * ohw : im2col_block(ohw, kdim, 1), M);
    float *rbuf = NULL; /* a uint8 residual's block in float (per GEMM block) */
    if (rq8 && gemm && q[G_DIRECT] != CONV_WQ8) {
        rbuf = sp;
        sp += nat_floats(qblk * M);
    } else if (rq8 && q[G_DIRECT] != CONV_WQ8) {
        qg_dequant_u8((const uint8_t *)res, N * M * ohw, rq8->qs, rq8->qz, sp);
        res = sp;
        sp += nat_floats(N * M * ohw);
    } else if (!rq8 && res && !bm->vals[st->epi.res].nhwc) { /* (CONV_WQ8's uint8 one: its tiles') */
        knhwc_from_nchw(res, N, M, ohw, sp);
        res = sp;
        sp += nat_floats(N * M * ohw);
    }
    bool out_nhwc = ov->nhwc && !oq8;
    float *y = out_nhwc ? yout : sp;
    const int64_t ldy = out_nhwc ? cy : M; /* y's rows (pixels) apart */
    if (!out_nhwc) sp += nat_floats(oq8 && gemm ? qblk * M : N * M * ohw);
    knhwc_geom kg = conv_kgeom(q);
    gemm_act act = st->epi.act;
    /* a stem on its image, no residual: the direct kernel, which writes no A */
    const bool stem = conv_stem(bm, st);
    if (dw_q8(bm, st)) { /* int8: uint8 in, float or uint8 out */
        const nat_pack *p = &bm->packs[st->node], *sc = xq8 ? xq8 : p;
        const float *wq = p->data, *ws = wq + q[G_KH] * q[G_KW] * M;
        float *scale = sp;
        sp += nat_floats(M);
        for (int64_t c = 0; c < M; c++) scale[c] = sc->qs * ws[c];
        const uint8_t *xb = (const uint8_t *)x;
        if (!xq8) {
            qg_quant_u8(x, N * hw * C, p->qs, p->qz, (uint8_t *)sp);
            xb = (const uint8_t *)sp;
            sp += nat_floats((N * hw * C + 3) / 4);
        }
        knhwc_dw_u8(&kg, N, xb, sc->qz, wq, scale, bias, nat_kact(&st->epi), oq8 ? sp : y,
                    oq8 ? (uint8_t *)yout : NULL, oq8 ? oq8->qs : 0, oq8 ? oq8->qz : 0, bm->threads);
    } else if (q[G_DIRECT] == CONV_WINO || q[G_DIRECT] == CONV_WINO2) { /* every image at once, one group */
        gemm_epi e = {.act = act, .lo = st->epi.lo, .hi = st->epi.hi, .ldr = M, .res = res,
                      .res_after = st->epi.res_after, .bias = bias,
                      .bias_mode = bias ? GEMM_BIAS_COL : GEMM_BIAS_NONE};
        TRY(kwg_conv(wino_tile(q), &kg, N, x, bm->packs[st->node].views, M, y, ldy, &e, sp, bm->threads,
                     bm->err));
    } else if (q[G_DIRECT] == CONV_WQ8) { /* static int8, uint8 in, uint8 or float out (conv_wq8) */
        if (!xq8) return nat_fail(bm, st->node, AIT_E_INVALID_ARG, "int8 Winograd: not a uint8 input");
        /* a uint8 residual read by the output transform (kwg_res8), not dequantised whole first */
        const kwg_res8 r8 = {rq8 ? (const uint8_t *)res : NULL, rq8 ? rq8->qs : 0, rq8 ? rq8->qz : 0};
        gemm_epi e = {.act = act, .lo = st->epi.lo, .hi = st->epi.hi, .ldr = M, .res = rq8 ? NULL : res,
                      .res_after = st->epi.res_after, .bias = bias,
                      .bias_mode = bias ? GEMM_BIAS_COL : GEMM_BIAS_NONE};
        TRY(kwg_conv_u8(&kg, N, (const uint8_t *)x, xq8->qs, xq8->qz, bm->packs[st->node].data,
                        nat_qwino_bytes(C, M), M, oq8 ? (uint8_t *)yout : NULL, oq8 ? oq8->qs : 0,
                        oq8 ? oq8->qz : 0, y, ldy, &e, rq8 ? &r8 : NULL, sp, bm->threads, bm->err));
    } else if (ig) { /* per image and group, B in runs of taps */
        const int64_t runs = kig_runs(&kg);
        gemm_epi e = {.act = act, .lo = st->epi.lo, .hi = st->epi.hi, .ldr = M,
                      .res_after = st->epi.res_after, .bias_mode = bias ? GEMM_BIAS_COL : GEMM_BIAS_NONE};
        for (int64_t im = 0; im < N; im++)
            for (int64_t gi = 0; gi < group; gi++) {
                kg.c0 = gi * cg;
                e.res = res ? res + im * ohw * M + gi * mg : NULL;
                e.bias = bias ? bias + gi * mg : NULL;
                TRY(kig_conv(&kg, !xv->nhwc, x + im * hw * C, bm->packs[st->node].views + gi * runs, mg,
                             y + im * ohw * ldy + gi * mg, ldy, &e, sp, bm->threads, bm->err));
            }
    } else if (q[G_DIRECT] == CONV_GRP) {
        kgrp_conv(&kg, N, group, mg, x, bm->packs[st->node].data, bias, nat_kact(&st->epi), y, ldy, bm->threads);
    } else if (q[G_DIRECT] == CONV_DW) {
        knhwc_dw(&kg, N, x, bm->packs[st->node].wt, bias, nat_kact(&st->epi), res, y,
                 st->sums ? bm->packs[st->node].sums : NULL, bm->threads);
    } else if (stem) { /* B's packed panels are its weights */
        const gemm_packed *b = &bm->packs[st->node].views[0];
        for (int64_t im = 0; im < N; im++)
            kstem_conv(&kg, x + im * hw * C, b->data, gemm_kernel_nr(b->kern), M, bias, nat_kact(&st->epi),
                       y + im * ohw * ldy, ldy, bm->threads);
    } else {
        const nat_pack *p = &bm->packs[st->node];
        const bool direct = q[G_DIRECT] == CONV_DIRECT;
        /* a direct conv's rows run over all images at once (im 0, p up to N * ohw), but
         * per image with factors per image in its prologue */
        const bool all = direct && !(st->pro && N > 1 && bm->steps[st->pro - 1].op == &nat_chan_mul &&
                                     bm->steps[st->pro - 1].geo[1]);
        const int64_t rows = all ? N * ohw : ohw;
        const int64_t blk = oq8 || rq8 ? qblk : direct ? rows : planes ? planes_block(ohw, kdim)
                                                                       : im2col_block(ohw, kdim, 1);
        /* static int8 reading its (padded) input in place of an im2col: its padded bytes,
         * the channels widened to cp when q8_cpad says so (B's K then kq) */
        const int64_t cp = q8_cpad(bm, st), kq = cp ? cp * q[G_KH] * q[G_KW] : kdim;
        knhwc_geom kgq = kg;
        if (cp) kgq.c = kgq.cs = cp;
        const int64_t ig_bytes = !direct && p->qv.w && p->qs > 0 ? nat_qconv_ig_bytes(&kgq, C, blk) : -1;
        if ((cp || pad_nchw) && ig_bytes < 0) /* (finish_pack refused it already) */
            return nat_fail(bm, st->node, AIT_E_OVERFLOW, "widened input rows are too large");
        qg_rows ar = {0};
        const uint8_t *const *rp = NULL;
        const nat_pack *su = NULL; /* static: every row of A at this scale (qgemm_u8_uni) */
        for (int64_t im = 0; im < (all ? 1 : N); im++)
            for (int64_t gi = 0; gi < group; gi++)
                for (int64_t p0 = 0; p0 < rows; p0 += blk) {
                    int64_t p1 = p0 + blk < rows ? p0 + blk : rows, off = (im * ohw + p0) * M + gi * mg;
                    uint8_t *y8 = oq8 ? (uint8_t *)yout + (im * ohw + p0) * M : NULL; /* uint8 out */
                    gemm_args g = {.m = p1 - p0, .n = mg, .k = kdim, .pb = &p->views[gi],
                                   .c = (oq8 ? y : y + (im * ohw + p0) * ldy) + gi * mg, .ldc = ldy,
                                   .threads = bm->threads, .kern = bm->kern};
                    if (direct) {
                        g.a = xq8 ? NULL : x + (im * ohw + p0) * lda + gi * cg;
                        g.rsa = lda;
                        if (st->pro) {
                            conv_pro(bm, st, im, &pf);
                            g.pro = &pf;
                        }
                        if (on_b) { /* B scaled instead, once per image (one group) */
                            const int nr = gemm_kernel_nr(bm->kern);
                            const int64_t panels = (M + nr - 1) / nr;
                            if (p0 == 0) {
                                memcpy(wb, p->views[0].data, sizeof(float) * (size_t)(panels * nr * kdim));
                                kaffine_panels(&pf, 0, nr, kdim, panels, wb, kdim * nr);
                            }
                            wv = p->views[0];
                            wv.data = wb;
                            g.pb = &wv;
                            g.pro = NULL;
                        }
                    } else if (p->qv.w && p->qs > 0) { /* static: the image quantised once */
                        uint8_t *qa = (uint8_t *)(sp + nat_floats(blk * kdim));
                        uint8_t *xq = qa + qgemm_scratch(bm->quant, bm->qgroup, kq, blk);
                        const nat_pack *sc = xq8 ? xq8 : p; /* the input's scale */
                        uint8_t *xpad = qa + qgemm_scratch(bm->quant, bm->qgroup, kq, blk) +
                                        (hw * C + 63) / 64 * 64; /* the padded image */
                        if (xq8)
                            xq = (uint8_t *)x + im * hw * C;
                        else if (pad_nchw && p0 == 0) /* quantised from the planes, padded */
                            knhwc_pad_u8_nchw(&kgq, x + im * hw * C, C, p->qs, p->qz,
                                              (uint8_t)p->qz, xpad);
                        else if (p0 == 0 && !pad_nchw)
                            qg_quant_u8(x + im * hw * C, hw * C, p->qs, p->qz, xq);
                        kg.c0 = 0;
                        if (ig_bytes >= 0) /* A's rows read in place (qgemm_u8_rows) */
                            rp = nat_qconv_ig_rows(&kgq, pad_nchw ? NULL : xq, C, (uint8_t)sc->qz,
                                                   p0, p1, xpad, &ar);
                        else
                            knhwc_im2col_u8(&kg, xq, (uint8_t)sc->qz, p0, p1, qa, p->qv.kp);
                        su = sc;
                        g.a = NULL;
                    } else if (p->qv.w) { /* quantised im2col rows (qconv.c) after A's block */
                        uint8_t *qa = (uint8_t *)(sp + nat_floats(blk * kdim));
                        float *sa = (float *)(qa + ((size_t)(blk * p->qv.kp) + 63) / 64 * 64);
                        kg.c0 = gi * cg;
                        nat_qconv_rows(p, &kg, x + im * hw * C, p0, p1, kdim, p->qv.kp, sp, qa,
                                       sa, (int32_t *)(sa + blk));
                        g.a = NULL;
                    } else {
                        kg.c0 = gi * cg;
                        if (planes) knhwc_im2col_nchw(&kg, x + im * hw * C, p0, p1, sp);
                        else knhwc_im2col(&kg, x + im * hw * C, p0, p1, sp);
                        g.a = sp;
                        g.rsa = kdim;
                    }
                    g.csa = 1;
                    g.epi.act = act;
                    g.epi.lo = st->epi.lo;
                    g.epi.hi = st->epi.hi;
                    if (rbuf) { /* this block's rows of the uint8 residual */
                        qg_dequant_u8((const uint8_t *)res + (im * ohw + p0) * M, g.m * M, rq8->qs,
                                      rq8->qz, rbuf);
                        g.epi.res = rbuf + gi * mg;
                        g.epi.ldr = M;
                        g.epi.res_after = st->epi.res_after;
                    } else if (res) {
                        g.epi.res = res + off;
                        g.epi.ldr = M;
                        g.epi.res_after = st->epi.res_after;
                    }
                    if (bias) {
                        g.epi.bias_mode = GEMM_BIAS_COL;
                        g.epi.bias = bias + gi * mg;
                    }
                    if (p->qv.w) g.threads = nat_qgemm_threads(bm, &p->qv, g.m, 0, &g.epi, g.threads);
                    if (p->qv.w && direct && p->qs > 0) { /* static int8: A at its fixed scale */
                        uint8_t *qa = (uint8_t *)sp;
                        const uint8_t *a8 = qa;
                        float *sa = (float *)(qa + ((size_t)(g.m * p->qv.kp) + 63) / 64 * 64);
                        const nat_pack *sc = xq8 ? xq8 : p; /* the input's scale */
                        if (xq8)
                            a8 = nat_qconv_direct_u8((const uint8_t *)x + p0 * C, C, g.m, kdim,
                                                     p->qv.kp, qa);
                        else
                            nat_qconv_direct(p, g.a, g.rsa, g.m, kdim, p->qv.kp, qa, sa,
                                             (int32_t *)(sa + g.m));
                        /* every row at sc's scale: no per-row scales made or compared; uint8 C
                         * requantised in the kernel's registers */
                        qgemm_u8_uni(&p->qv, a8, NULL, sc->qs, sc->qz, g.m, g.c, g.ldc, y8, M,
                                     oq8 ? oq8->qs : 0, oq8 ? oq8->qz : 0, &g.epi, g.threads);
                        continue;
                    } else if (p->qv.w && direct) /* quantised (qconv.c): one group, A's rows rsa apart */
                        TRY(qgemm_ws(&p->qv, g.a, g.rsa, g.m, g.c, g.ldc, &g.epi, g.threads, sp, bm->err));
                    else if (p->qv.w) {
                        const uint8_t *qa = (const uint8_t *)(sp + nat_floats(blk * kdim));
                        const float *sa = (const float *)(qa + ((size_t)(blk * p->qv.kp) + 63) / 64 * 64);
                        if (su) { /* one scale: no per-row scales made or compared */
                            qgemm_u8_uni(&p->qv, rp ? NULL : qa, rp ? &ar : NULL, su->qs, su->qz, g.m,
                                         g.c, g.ldc, y8, M, oq8 ? oq8->qs : 0, oq8 ? oq8->qz : 0,
                                         &g.epi, g.threads);
                            if (oq8) continue;
                        } else if (oq8) {
                            qgemm_u8_q8(&p->qv, qa, sa, (const int32_t *)(sa + blk), g.m, y8, M,
                                        oq8->qs, oq8->qz, &g.epi, g.threads);
                            continue;
                        }
                        else
                            qgemm_u8(&p->qv, qa, sa, (const int32_t *)(sa + blk), g.m, g.c, g.ldc,
                                     &g.epi, g.threads);
                    }
                    else if (st->pre)
                        TRY(pre_gemm(bm, st, &g, im * ohw + p0));
                    else
                        TRY(nat_gemm_f32(bm, &g));
                    if (oq8) /* the block's rows, M apart, requantised for the next Conv */
                        qg_requant_u8(g.c, g.m * M, oq8->qs, oq8->qz, y8);
                }
    }
    if (oq8) return AIT_OK;
    if (!out_nhwc && cy == M) knhwc_to_nchw(y, N, M, ohw, yout);
    for (int64_t im = 0; !out_nhwc && cy != M && im < N; im++) /* into a Concat's channels */
        knhwc_to_nchw(y + im * ohw * M, 1, M, ohw, yout + im * cy * ohw);
    return AIT_OK;
}

static ait_status conv_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *q = st->geo;
    const int64_t M = q[G_M], group = q[G_GROUP], mg = M / group, cg = q[G_C];
    const int64_t hw = q[G_H] * q[G_W], ohw = q[G_OH] * q[G_OW], kdim = cg * q[G_KH] * q[G_KW];
    conv2d_geom geo = {cg, q[G_H], q[G_W], q[G_KH], q[G_KW], q[G_OH], q[G_OW], q[G_S0], q[G_S1],
                       q[G_D0], q[G_D1], q[G_P0] & 0xffffffff, q[G_P0] >> 32};
    const float *x = bm->vals[n->in[0]].cur->data;
    if (st->avg[0]) { /* the AveragePool first, in x's layout (avg_first) */
        float *px = (float *)((char *)bm->scratch + st->scratch) - avg_floats(st);
        nat_avgpool_run(bm, st->avg, q[G_OH], q[G_OW], bm->vals[n->in[0]].nhwc, x, px);
        x = px;
    }
    int64_t cy;
    float *y = conv_dst(bm, st, &cy);
    const float *bias = conv_bias(bm, st);
    if (st->nhwc) return nhwc_run(bm, st, x, bias, y, cy);
    if (q[G_DIRECT] == CONV_DW) return dw_run(bm, st, x, bias, y);
    const nat_pack *p = &bm->packs[st->node];
    const int nr = gemm_kernel_nr(bm->kern);
    /* im2col by blocks of output pixels (the direct 1x1 reads x whole) */
    const int64_t blk = q[G_DIRECT] ? ohw : im2col_block(ohw, kdim, nr);
    for (int64_t im = 0; im < q[G_N]; im++)
        for (int64_t gi = 0; gi < group; gi++)
            for (int64_t p0 = 0; p0 < ohw; p0 += blk) {
                const float *xg = x + (im * group + gi) * cg * hw;
                const int64_t p1 = p0 + blk < ohw ? p0 + blk : ohw, off = (im * M + gi * mg) * ohw + p0;
                const int64_t coff = (im * cy + gi * mg) * ohw + p0; /* y's channels may be a Concat's */
                /* A direct conv has no im2col scratch: no row either (NULL + n is undefined). */
                float *col = bm->scratch, *row = col ? col + (blk + nr - 1) / nr * nr * kdim : NULL;
                gemm_packed pb = {.kern = bm->kern, .k = kdim, .mn = p1 - p0, .data = col};
                if (!q[G_DIRECT]) im2col_pack_f32(&geo, xg, p0, p1, nr, row, col);
                gemm_args g = {.m = mg, .n = p1 - p0, .k = kdim, .pa = &p->views[gi],
                               .b = xg, .rsb = ohw, .csb = 1, .pb = q[G_DIRECT] ? NULL : &pb,
                               .c = y + coff, .ldc = ohw, .threads = bm->threads, .kern = bm->kern};
                nat_gemm_epi(bm, &st->epi, off, ohw, &g.epi);
                if (bias) {
                    g.epi.bias_mode = GEMM_BIAS_ROW;
                    g.epi.bias = bias + gi * mg;
                }
                TRY(nat_gemm_f32(bm, &g));
            }
    return AIT_OK;
}

const nat_op nat_conv = {"Conv", conv_take, conv_run, conv_finish};
