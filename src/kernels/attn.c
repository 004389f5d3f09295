/* Attention: one instance of attn_tmpl.h per ISA, picked from a table;
 * threads split the (batch, head, query block) tasks. */
#include "kernels/attn.h"
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/gemm.h"
#include "kernels/isa.h"

/* Block sizes: ATT_QB queries share each key and value row they load;
 * ATT_KB keys' scores stay in registers and L1. From ATT_GEMM_MIN queries
 * on (prefill, encoders) blocks of up to ATT_GQB queries take the GEMM
 * path instead: their scores against every key by one GEMM, the softmax
 * rows, then the weighted sum by another (S [ATT_GQB][t] stays in L2); half
 * as many past 512 keys. Each block packs K and V again: at bert's 128
 * queries, one block of 128 rather than two of 64 packs them once per head
 * (bench/RESULTS.md, "bert int8dq: the attention's softmax in vectors"). */
#define ATT_QB 4
#define ATT_KB 64
#define ATT_GEMM_MIN 16
#define ATT_GQB 128
#define ATT_GQB_KEYS 512

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/attn_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/attn_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/attn_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*att_block_fn)(const katt_geom *, const float *, const float *, const float *,
                             const float *, const float *, float *, int, int, int, int, float *);
typedef void (*att_probs_fn)(const katt_geom *, float *, int, int, int, int, float, float *);
typedef struct att_impl {
    kisa isa;
    att_block_fn block;
    att_probs_fn probs;
    int qb;           /* queries per task, at most ATT_QB */
    const char *gemm; /* the GEMM kernel of the same ISA (gemm_table.c's name) */
} att_impl;
static const att_impl att_impls[] = {
#if KISA_X86
    {KISA_AVX512, att_block_avx512, att_probs_avx512, ATT_QB, "avx512"},
    {KISA_AVX2, att_block_avx2, att_probs_avx2, ATT_QB, "avx2"},
#endif
    {KISA_PORTABLE, att_block_portable, att_probs_portable, ATT_QB, "c"},
};

static const gemm_kernel *gemm_named(const char *name)
{
    for (int i = 0; i < gemm_kernel_count(); i++)
        if (!strcmp(gemm_kernel_name(gemm_kernel_at(i)), name)) return gemm_kernel_at(i);
    return NULL;
}

/* Queries [i0, i0 + nq) of head h in batch bi by two GEMMs each over the
 * past and the current keys; ws: nq * (t + dv) + nq floats. */
static int att_gemm(const att_impl *im, const gemm_kernel *gk, const katt_geom *g, const float *q,
                    const float *kp, const float *vp, const float *kc, const float *vc, float *y,
                    int bi, int h, int i0, int nq, float *ws)
{
    const int T = g->sp + g->sc, kvh = h / (g->hq / g->hkv);
    float *S = ws, *W = ws + (size_t)nq * T, *l = W + (size_t)nq * g->dv;
    const float scale = g->scale != 0 ? g->scale : 1.0f / sqrtf((float)g->d);
    const float *qh = q + bi * g->qs[0] + h * g->qs[1] + (size_t)i0 * g->qs[2];
    float *yh = y + bi * g->ys[0] + h * g->ys[1] + (size_t)i0 * g->ys[2];
    const float *parts[2][2] = {{kp ? kp + bi * g->kps[0] + kvh * g->kps[1] : NULL,
                                 vp ? vp + bi * g->vps[0] + kvh * g->vps[1] : NULL},
                                {kc + bi * g->kcs[0] + kvh * g->kcs[1],
                                 vc + bi * g->vcs[0] + kvh * g->vcs[1]}};
    const int len[2] = {g->sp, g->sc}, off[2] = {0, g->sp};
    /* A (Q's rows, then S's) read in place, B (K^T, V) packed whole: the skinny
     * path's kernel, not the five loops' packing of both */
    static const gemm_config in_place = {.pack_a = GEMM_PACKA_OFF};
    const size_t kr[2] = {g->kps[2], g->kcs[2]}, vr[2] = {g->vps[2], g->vcs[2]};
    for (int p = 0; p < 2; p++) { /* S = Q K^T, K read transposed in place */
        if (!len[p]) continue;
        gemm_args a = {.m = nq, .n = len[p], .k = g->d, .a = qh, .rsa = (int64_t)g->qs[2], .csa = 1,
                       .b = parts[p][0], .rsb = 1, .csb = (int64_t)kr[p], .c = S + off[p],
                       .ldc = T, .threads = 1, .kern = gk, .cfg = &in_place};
        if (gemm_f32(&a, NULL) != AIT_OK) return -1;
    }
    im->probs(g, S, nq, bi, h, i0, scale, l);
    if (!T) /* no keys: zero rows */
        for (int i = 0; i < nq; i++) memset(yh + (size_t)i * g->ys[2], 0, sizeof *yh * (size_t)g->dv);
    bool first = true;
    for (int p = 0; p < 2; p++) { /* Y = P V: the past's part in W, added to the current's */
        if (!len[p]) continue;
        bool last = p == 1 || !g->sc;
        gemm_args b = {.m = nq, .n = g->dv, .k = len[p], .a = S + off[p], .rsa = T, .csa = 1,
                       .b = parts[p][1], .rsb = (int64_t)vr[p], .csb = 1,
                       .c = last ? yh : W, .ldc = last ? (int64_t)g->ys[2] : g->dv,
                       .threads = 1, .kern = gk, .cfg = &in_place};
        if (!first) b.epi.res = W, b.epi.ldr = g->dv;
        if (gemm_f32(&b, NULL) != AIT_OK) return -1;
        first = false;
    }
    for (int i = 0; i < nq; i++) {
        float *r = yh + (size_t)i * g->ys[2], c = l[i] > 0 ? 1.0f / l[i] : 0.0f;
        for (int e = 0; e < g->dv; e++) r[e] *= c;
    }
    return 0;
}

/* s = the dense strides of [b][h][rows][cols] */
static void dense(size_t s[3], int h, int rows, int cols)
{
    s[2] = (size_t)cols;
    s[1] = (size_t)rows * cols;
    s[0] = s[1] * (size_t)h;
}

/* Per thread: the floats of one task's scratch (padded to 64 bytes). */
static size_t ws_floats(const katt_geom *g, const gemm_kernel *gk, int qb)
{
    size_t n = gk ? (size_t)qb * ((size_t)g->sp + g->sc + g->dv + 1) : (size_t)qb * g->dv;
    return (n + 1 + 15) & ~(size_t)15;
}

/* Queries per block of the GEMM path. */
static int att_gqb(const katt_geom *g)
{
    return g->sp + g->sc <= ATT_GQB_KEYS ? ATT_GQB : ATT_GQB / 2;
}

static const gemm_kernel *att_kernel(const katt_geom *g, const char *name)
{
    return g->sq >= ATT_GEMM_MIN ? gemm_named(name) : NULL;
}

size_t kattention_scratch(const katt_geom *g, int threads)
{
    __typeof__(att_impls[0]) *im = KISA_PICK(att_impls);
    const gemm_kernel *gk = att_kernel(g, im->gemm);
    return ws_floats(g, gk, gk ? att_gqb(g) : im->qb) * sizeof(float) * (size_t)(threads > 1 ? threads : 1);
}

int kattention(const katt_geom *gin, const float *q, const float *kp, const float *vp,
               const float *kc, const float *vc, float *y, int threads)
{
    __typeof__(att_impls[0]) *im = KISA_PICK(att_impls);
    katt_geom gd = *gin, *g = &gd;
    if (!g->strided) {
        dense(g->qs, g->hq, g->sq, g->d);
        dense(g->ys, g->hq, g->sq, g->dv);
        dense(g->kps, g->hkv, g->sp, g->d);
        dense(g->vps, g->hkv, g->sp, g->dv);
        dense(g->kcs, g->hkv, g->sc, g->d);
        dense(g->vcs, g->hkv, g->sc, g->dv);
    }
    const gemm_kernel *gk = att_kernel(g, im->gemm);
    const int qb = gk ? att_gqb(g) : im->qb, nqb = (g->sq + qb - 1) / qb;
    const long tasks = (long)g->b * g->hq * nqb;
    const size_t wsn = ws_floats(g, gk, qb);
    const bool given = g->ws && g->ws_bytes >= kattention_scratch(g, threads);
    int fail = 0;
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && tasks > 1)
    {
        float *ws = given ? (float *)g->ws + wsn * (size_t)omp_get_thread_num()
                          : malloc(wsn * sizeof *ws);
        if (!ws) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(static)
        for (long t = 0; t < tasks; t++) {
            if (!ws) continue;
            int blk = (int)(t % nqb), h = (int)(t / nqb % g->hq), bi = (int)(t / nqb / g->hq);
            int i0 = blk * qb, nq = g->sq - i0 < qb ? g->sq - i0 : qb;
            if (!gk) im->block(g, q, kp, vp, kc, vc, y, bi, h, i0, nq, ws);
            else if (att_gemm(im, gk, g, q, kp, vp, kc, vc, y, bi, h, i0, nq, ws)) {
#pragma omp atomic write
                fail = 1;
            }
        }
        if (!given) free(ws);
    }
    return fail ? -1 : 0;
}
