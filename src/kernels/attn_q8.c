/* The attention's GEMMs on int8 (attn_q8.h): the packers, one instance of
 * attn_q8_tmpl.h per ISA picked from a table, and one block of queries. */
#include "kernels/attn_q8.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/isa.h"
#include "kernels/prefetch.h"
#include "kernels/qgemm_kern.h"

/* Key and value j of (batch bi, kv head kvh): the past's rows, then the
 * current ones. */
static inline const float *aq_key(const katt_geom *g, const float *kp, const float *kc, int bi,
                                  int kvh, int j)
{
    return j < g->sp ? kp + bi * g->kps[0] + kvh * g->kps[1] + (size_t)j * g->kps[2]
                     : kc + bi * g->kcs[0] + kvh * g->kcs[1] + (size_t)(j - g->sp) * g->kcs[2];
}
static inline const float *aq_value(const katt_geom *g, const float *vp, const float *vc, int bi,
                                    int kvh, int j)
{
    return j < g->sp ? vp + bi * g->vps[0] + kvh * g->vps[1] + (size_t)j * g->vps[2]
                     : vc + bi * g->vcs[0] + kvh * g->vcs[1] + (size_t)(j - g->sp) * g->vcs[2];
}

/* The symmetric scale of a row or column whose largest |x| is mx: mx / 127,
 * or 1 when that is not a normal float (all zeros, or values so small that
 * they quantise to 0 anyway) */
static inline float aq_scale(float mx)
{
    return mx >= 127.0f * FLT_MIN ? mx / 127.0f : 1.0f;
}

/* Keys and values are read in order of j, each row a head's width apart
 * (a [batch, seq, heads * d] projection's): fetched AQ_PF rows ahead. */
#define AQ_PF 8

#if KISA_X86
#include "kernels/vec_avx512.h"
#include "kernels/attn_q8_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/attn_q8_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/attn_q8_tmpl.h"
#include "kernels/vec_end.h"

typedef struct aq_impl {
    kisa isa;
    bool (*pack_k)(const katt_geom *, const float *, const float *, int, int, const qg_packed *,
                   uint8_t *);
    bool (*pack_v)(const katt_geom *, const float *, const float *, int, int, const qg_packed *,
                   float *, uint8_t *);
} aq_impl;
static const aq_impl aq_impls[] = {
#if KISA_X86
    {KISA_AVX512, aq_pack_k_avx512, aq_pack_v_avx512},
    {KISA_AVX2, aq_pack_k_avx2, aq_pack_v_avx2},
#endif
    {KISA_PORTABLE, aq_pack_k_portable, aq_pack_v_portable},
};

bool katt_q8_pack_k(const katt_geom *g, const float *kp, const float *kc, int bi, int kvh,
                    const qg_packed *b, uint8_t *tmp)
{
    const aq_impl *im = KISA_PICK(aq_impls);
    return im->pack_k(g, kp, kc, bi, kvh, b, tmp);
}

bool katt_q8_pack_v(const katt_geom *g, const float *vp, const float *vc, int bi, int kvh,
                    const qg_packed *b, float *rc, uint8_t *tmp)
{
    const aq_impl *im = KISA_PICK(aq_impls);
    return im->pack_v(g, vp, vc, bi, kvh, b, rc, tmp);
}

/* Keys and head sizes up to this: 255 * 127 * kp fits int32 (qgemm's
 * sums), 127 * d is exact in float (the keys' byte sums). */
#define AQ_MAX 32768

bool katt_q8_fits(const katt_geom *g)
{
    const int T = g->sp + g->sc;
    return g->q8 && T > 0 && T <= AQ_MAX && g->d > 0 && g->d <= AQ_MAX && g->dv > 0 &&
           g->dv <= AQ_MAX;
}

static size_t up64(size_t x) { return (x + 63) & ~(size_t)63; }

/* Where one task's scratch keeps its parts (byte offsets), and its size. */
typedef struct aq_ws {
    size_t kpk, vpk, tmpk, rc, tmpv, qa, s, pa, l, total;
} aq_ws;

static bool aq_layout(const katt_geom *g, int nq, aq_ws *w)
{
    const int64_t T = (int64_t)g->sp + g->sc, npv = ((int64_t)g->dv + QG_NR - 1) / QG_NR * QG_NR;
    const size_t kb = qg_pack_size(QG_INT8DQ, 0, g->d, T), vb = qg_pack_size(QG_INT8DQ, 0, T, g->dv);
    const size_t qa = qgemm_scratch(QG_INT8DQ, 0, g->d, nq), pa = qgemm_scratch(QG_INT8DQ, 0, T, nq);
    if (!kb || !vb || !qa || !pa || nq <= 0) return false;
    size_t off = 0;
    w->kpk = off, off += up64(kb);
    w->vpk = off, off += up64(vb);
    w->tmpk = off, off += KATT_Q8_KTMP(g->d);
    w->rc = off, off += up64((size_t)npv * sizeof(float));
    w->tmpv = off, off += up64(4 * (size_t)npv);
    w->qa = off, off += qa;
    w->s = off, off += up64((size_t)nq * (size_t)T * sizeof(float));
    w->pa = off, off += pa;
    w->l = off, off += up64(2 * (size_t)nq * sizeof(float));
    w->total = off;
    return true;
}

size_t katt_q8_scratch(const katt_geom *g, int nq)
{
    aq_ws w;
    return katt_q8_fits(g) && aq_layout(g, nq, &w) ? w.total : 0;
}

int katt_q8_block(const katt_geom *g, katt_probs_fn probs, const float *q, const float *kp,
                  const float *vp, const float *kc, const float *vc, float *y, int bi, int h,
                  int i0, int nq, void *ws)
{
    const int T = g->sp + g->sc, kvh = h / (g->hq / g->hkv);
    aq_ws w;
    if (!katt_q8_fits(g) || !aq_layout(g, nq, &w)) return 1;
    uint8_t *base = ws;
    qg_packed kb, vb;
    if (!qg_pack_begin(QG_INT8DQ, 0, g->d, T, base + w.kpk, &kb) ||
        !qg_pack_begin(QG_INT8DQ, 0, T, g->dv, base + w.vpk, &vb) ||
        !katt_q8_pack_k(g, kp, kc, bi, kvh, &kb, base + w.tmpk) ||
        !katt_q8_pack_v(g, vp, vc, bi, kvh, &vb, (float *)(base + w.rc), base + w.tmpv))
        return 1;
    const float *qh = q + bi * g->qs[0] + h * g->qs[1] + (size_t)i0 * g->qs[2];
    float *yh = y + bi * g->ys[0] + h * g->ys[1] + (size_t)i0 * g->ys[2];
    uint8_t *qq;
    float *sa, *S = (float *)(base + w.s), *l = (float *)(base + w.l), *mx = l + nq;
    int32_t *za;
    qg_quant_rows_u8(qh, (int64_t)g->qs[2], nq, g->d, NULL, NULL, base + w.qa, &qq, &sa, &za);
    /* S = Q K^T, scaled, with a float mask of one row per (batch, head) in
     * the epilogue, as attn.c's float path */
    const float scale = g->scale != 0 ? g->scale : 1.0f / sqrtf((float)g->d);
    const float *mrow = g->mask && !g->mi && !g->bmask ? g->mask + bi * g->mb + h * g->mh : NULL;
    const gemm_epi e = {.scaled = true, .scale = scale,
                        .bias_mode = mrow ? GEMM_BIAS_COL : GEMM_BIAS_NONE, .bias = mrow};
    qgemm_u8(&kb, qq, sa, za, nq, S, T, &e, 1);
    katt_geom gp = *g;
    if (mrow) gp.mask = NULL;
    probs(&gp, S, nq, bi, h, i0, 1.0f, l, T, mx);
    /* P's rows as qgemm_u8's A (qg_quant_rows_u8's layout: rows kpt apart,
     * zeros past T, then the scales and zero points); Y = P V with the rows'
     * 1 / sum in their scale */
    const size_t kpt = ((size_t)T + 3) / 4 * 4;
    uint8_t *pq = base + w.pa;
    float *ps = (float *)(pq + up64((size_t)nq * kpt));
    int32_t *pz = (int32_t *)(ps + nq);
    for (int i = 0; i < nq; i++) {
        qg_requant_u8(S + (size_t)i * T, T, KATT_Q8_PSCALE, 0, pq + (size_t)i * kpt);
        memset(pq + (size_t)i * kpt + T, 0, kpt - (size_t)T);
        ps[i] = l[i] > 0 ? KATT_Q8_PSCALE / l[i] : 0.0f;
        pz[i] = 0;
    }
    qgemm_u8(&vb, pq, ps, pz, nq, yh, (int64_t)g->ys[2], NULL, 1);
    return 0;
}
