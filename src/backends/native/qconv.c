/* Quantised Conv, native's int8dq variant: a 2-D Conv of one group (not
 * depthwise, not grouped) runs channels-last (conv.c's nhwc_run) as qgemm
 * (kernels/qgemm.h) with the weights as B: Y[pixel][M] = A[pixel][kdim] x
 * W'[kdim][M], W' per output channel symmetric int8 (a BatchNormalization
 * folded first), packed once and saved like the float packs; A the input
 * itself (1x1, stride 1, no pads) or its NHWC im2col, each row (pixel)
 * quantised at run time to uint8 with its own scale and zero point (the
 * im2col a few pixels at a time, quantised while in cache: the float rows
 * never go to memory); the
 * conv's bias, activation and residual stay the float epilogue. Depthwise
 * and grouped convolutions stay float32 in the variant.
 *
 * The static variant, "int8", also runs depthwise Convs of multiplier 1
 * (without a residual) on int8 weights (knhwc_dw_u8), per channel
 * symmetric like the GEMM's, packed as nat_qdw_pack says.
 *
 * The static variant, "int8", packs the same weights but quantises the
 * Conv's input at one fixed scale and zero point, QuantizeLinear's
 * uint8 over the input's range calibrated on the tuning samples
 * (cfg.ranges, widened to hold 0): no min/max pass at run time. The scale
 * travels with the weights, in a trailer after qgemm's pack (QCAL_MAGIC,
 * scale, zero point), so an artifact reloads it bit for bit. */
#include <math.h>
#include <string.h>

#include "backends/native/native.h"
#include "kernels/nhwc.h"

bool nat_qconv(const built *bm, int64_t group) { return bm->quant == QG_INT8DQ && group == 1; }

#define QCAL_MAGIC "aitqcal1"
#define QCAL_BYTES 64 /* the trailer, a cache line */

typedef struct qcal {
    char magic[8];
    float scale;
    int32_t zp;
} qcal;
_Static_assert(sizeof(qcal) <= QCAL_BYTES, "trailer fits");

typedef struct qconv_arg {
    const float *w; /* [kdim][M] */
    int64_t kdim, m;
    size_t bytes;   /* qgemm's pack; the trailer after it (static int8) */
    qcal cal;
} qconv_arg;

static void fill_q(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)i;
    (void)grp;
    const qconv_arg *a = arg;
    qg_pack(bm->quant, bm->qgroup, a->w, a->m, 1, a->kdim, a->m, dst);
    if (bm->qstatic) memcpy((char *)dst + a->bytes, &a->cal, sizeof a->cal);
}

/* Static int8: node i's input scale and zero point from its calibrated
 * range (QuantizeLinear's uint8 parameters over [min(lo, 0), max(hi, 0)]). */
static ait_status calibrated(built *bm, int i, qcal *out)
{
    const node *n = &bm->g->nodes[i];
    const char *name = bm->g->vals[n->in[0]].name;
    const act_range *r = act_range_find(bm->ranges, name);
    if (!r)
        return nat_fail(bm, i, AIT_E_INVALID_ARG, "int8: no calibrated range for input '%s' "
                        "(the tuner calibrates it on the tuning samples)", name ? name : "?");
    float lo = r->lo < 0 ? r->lo : 0, hi = r->hi > 0 ? r->hi : 0;
    memcpy(out->magic, QCAL_MAGIC, 8);
    qg_u8_range(lo, hi, &out->scale, &out->zp);
    return AIT_OK;
}

/* Pack p's calibration trailer at byte `at` into p->qs, p->qz. */
static ait_status cal_take(built *bm, int i, nat_pack *p, size_t at)
{
    qcal c;
    memcpy(&c, (const char *)p->data + at, sizeof c);
    if (memcmp(c.magic, QCAL_MAGIC, 8) != 0 || !(c.scale > 0) || !isfinite(c.scale) || c.zp < 0 ||
        c.zp > 255) {
        p->qv.w = NULL;
        return nat_stale(bm, nat_fail(bm, i, AIT_E_INVALID_ARG, "prepared weights '%s': no valid "
                                      "int8 calibration after the weights", p->name));
    }
    p->qs = c.scale;
    p->qz = c.zp;
    return AIT_OK;
}

ait_status nat_qconv_pack(built *bm, int i, const float *wt, int64_t kdim, int64_t M)
{
    size_t bytes = qg_pack_size(bm->quant, bm->qgroup, kdim, M);
    if (!bytes) return nat_fail(bm, i, AIT_E_OVERFLOW, "quantised weights are too large");
    qconv_arg arg = {wt, kdim, M, bytes, {{0}, 0, 0}};
    if (bm->qstatic && !bm->prep) TRY(calibrated(bm, i, &arg.cal));
    nat_pack *p;
    bm->pack_quant = true;
    bm->pack_tail = bm->qstatic ? QCAL_BYTES : 0;
    ait_status s = nat_pack_get(bm, i, 1, bytes + bm->pack_tail, fill_q, &arg, &p);
    bm->pack_quant = false;
    bm->pack_tail = 0;
    if (s != AIT_OK || !bm->qstatic) return s;
    return cal_take(bm, i, p, bytes);
}

typedef struct qdw_arg {
    const float *w; /* [c][taps] */
    int64_t taps, c;
    qcal cal;
} qdw_arg;

static void fill_qdw(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)bm;
    (void)i;
    (void)grp;
    const qdw_arg *a = arg;
    float *wq = dst, *ws = wq + a->taps * a->c;
    for (int64_t c = 0; c < a->c; c++) {
        float m = 0;
        for (int64_t t = 0; t < a->taps; t++) m = fmaxf(m, fabsf(a->w[c * a->taps + t]));
        ws[c] = m > 0 && isfinite(m) ? m / 127.0f : 1.0f;
        for (int64_t t = 0; t < a->taps; t++) {
            float q = nearbyintf(a->w[c * a->taps + t] / ws[c]);
            wq[t * a->c + c] = q > 127 ? 127 : q < -127 ? -127 : q == q ? q : 0;
        }
    }
    memcpy(ws + a->c, &a->cal, sizeof a->cal);
}

ait_status nat_qdw_pack(built *bm, int i, const float *w, int64_t taps, int64_t c)
{
    size_t bytes; /* wq and ws, then the trailer */
    if (__builtin_mul_overflow((size_t)(taps + 1), (size_t)c * sizeof(float), &bytes))
        return nat_fail(bm, i, AIT_E_OVERFLOW, "quantised weights are too large");
    qdw_arg arg = {w, taps, c, {{0}, 0, 0}};
    if (!bm->prep) TRY(calibrated(bm, i, &arg.cal));
    nat_pack *p;
    bm->pack_raw = true;
    ait_status s = nat_pack_get(bm, i, 1, bytes + QCAL_BYTES, fill_qdw, &arg, &p);
    bm->pack_raw = false;
    return s != AIT_OK ? s : cal_take(bm, i, p, bytes);
}

typedef struct qwino_arg {
    const float *u; /* [16][c][m]: kwg_weights(KWG_F2)'s */
    int64_t c, m;
    size_t us;      /* one position's pack, rounded to 64 */
    qcal cal;
} qwino_arg;

static void fill_qwino(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)bm;
    (void)i;
    (void)grp;
    const qwino_arg *a = arg;
    for (int pos = 0; pos < 16; pos++)
        qg_pack(QG_INT8DQ, 0, a->u + pos * a->c * a->m, a->m, 1, a->c, a->m, (char *)dst + pos * a->us);
    memcpy((char *)dst + 16 * a->us, &a->cal, sizeof a->cal);
}

size_t nat_qwino_bytes(int64_t c, int64_t m) { return (qg_pack_size(QG_INT8DQ, 0, c, m) + 63) / 64 * 64; }

ait_status nat_qwino_pack(built *bm, int i, const float *u, int64_t c, int64_t m)
{
    const size_t us = nat_qwino_bytes(c, m);
    if (us <= 64 || us > (SIZE_MAX - QCAL_BYTES) / 16)
        return nat_fail(bm, i, AIT_E_OVERFLOW, "quantised weights are too large");
    qwino_arg arg = {u, c, m, us, {{0}, 0, 0}};
    if (!bm->prep) TRY(calibrated(bm, i, &arg.cal));
    nat_pack *p;
    bm->pack_raw = true;
    ait_status s = nat_pack_get(bm, i, 1, 16 * us + QCAL_BYTES, fill_qwino, &arg, &p);
    bm->pack_raw = false;
    return s != AIT_OK ? s : cal_take(bm, i, p, 16 * us);
}

bool nat_qconv_in(const graph *module)
{
    for (int i = 0; i < module->n_nodes; i++) {
        const node *n = &module->nodes[i];
        if ((n->domain && n->domain[0]) || strcmp(n->op, "Conv") != 0 || n->n_in < 2) continue;
        const value *w = n->in[1] >= 0 ? &module->vals[n->in[1]] : NULL;
        if (w && w->konst && w->konst->dtype == AIT_F32 && w->konst->rank == 4 &&
            attr_int(n, "group", 1) == 1)
            return true;
    }
    return false;
}

/* Pixels per float im2col chunk: a few rows of A, quantised from L1/L2. */
#define QCONV_CHUNK 16

/* Row r of qgemm_u8's A from a[kdim]: at pack p's static scale, or its own. */
static void quant_row(const nat_pack *pk, const float *a, int64_t kdim, int64_t kp, size_t r,
                      uint8_t *q, float *sa, int32_t *za)
{
    if (pk->qs > 0) {
        qg_quant_u8(a, kdim, pk->qs, pk->qz, q + r * (size_t)kp);
        sa[r] = pk->qs;
        za[r] = pk->qz;
    } else {
        qg_quant_row_u8(a, kdim, q + r * (size_t)kp, &sa[r], &za[r]);
    }
    memset(q + r * (size_t)kp + kdim, 0, (size_t)(kp - kdim));
}

void nat_qconv_rows(const nat_pack *pk, const knhwc_geom *kg, const float *x, int64_t p0,
                    int64_t p1, int64_t kdim, int64_t kp, float *tmp, uint8_t *q, float *sa,
                    int32_t *za)
{
    for (int64_t c0 = p0; c0 < p1; c0 += QCONV_CHUNK) {
        int64_t c1 = c0 + QCONV_CHUNK < p1 ? c0 + QCONV_CHUNK : p1;
        knhwc_im2col(kg, x, c0, c1, tmp);
        for (int64_t p = c0; p < c1; p++)
            quant_row(pk, tmp + (p - c0) * kdim, kdim, kp, (size_t)(p - p0), q, sa, za);
    }
}

void nat_qconv_direct(const nat_pack *p, const float *a, int64_t lda, int64_t m, int64_t kdim,
                      int64_t kp, uint8_t *q, float *sa, int32_t *za)
{
    for (int64_t r = 0; r < m; r++) quant_row(p, a + r * lda, kdim, kp, (size_t)r, q, sa, za);
}

const uint8_t *nat_qconv_direct_u8(const uint8_t *x, int64_t ldx, int64_t m, int64_t kdim,
                                   int64_t kp, uint8_t *q)
{
    if (ldx == kp && kdim == kp) return x; /* x's rows are qgemm_u8's as they are */
    for (int64_t r = 0; r < m; r++) {
        memcpy(q + r * kp, x + r * ldx, (size_t)kdim);
        memset(q + r * kp + kdim, 0, (size_t)(kp - kdim));
    }
    return q;
}

int64_t nat_qconv_ig_bytes(const knhwc_geom *kg, int64_t xc, int64_t blk)
{
    int64_t wp, pad = knhwc_padded_u8(kg, xc, &wp), ptrs;
    if (pad < 0 || kg->kh < 1 || __builtin_mul_overflow(blk, (int64_t)sizeof(void *), &ptrs) ||
        pad > INT64_MAX - 128 - ptrs)
        return -1;
    return (pad + 63) / 64 * 64 + ptrs;
}

const uint8_t *const *nat_qconv_ig_rows(const knhwc_geom *kg, const uint8_t *x, int64_t xc,
                                        uint8_t pad, int64_t p0, int64_t p1, uint8_t *ws, qg_rows *a)
{
    int64_t wp, bytes = knhwc_padded_u8(kg, xc, &wp);
    const uint8_t **rp = (const uint8_t **)(void *)(ws + (bytes + 63) / 64 * 64);
    if (bytes > 0 && p0 == 0 && x) knhwc_pad_u8(kg, x, xc, pad, ws);
    knhwc_rows_u8(kg, bytes > 0 ? ws : x, wp, p0, p1, rp, &a->off);
    a->rp = rp;
    a->runs = kg->kh;
    return rp;
}
