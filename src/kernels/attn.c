/* Attention: one instance of attn_tmpl.h per ISA, picked from a table;
 * threads split the (batch, head, query block) tasks. */
#include "kernels/attn.h"
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/attn_q8.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"

/* Block sizes: ATT_QB queries share each key and value row they load;
 * ATT_KB keys' scores stay in registers and L1. From ATT_GEMM_MIN queries
 * on (prefill, encoders) blocks of up to ATT_GQB queries take the GEMM
 * path instead: their scores against every key by one GEMM, the softmax
 * rows, then the weighted sum by another (S [ATT_GQB][t] stays in L2); half
 * as many past 512 keys. Each block packs K and V again: at bert's 128
 * queries, one block of 128 rather than two of 64 packs them once per head
 * (bench/RESULTS.md, "bert int8dq: the attention's softmax in vectors").
 * Up to ATT_GQB_ONE queries against as many keys or fewer, every query of a
 * head is one block (S at most 256 x 256 floats, in L2), on one thread or
 * when the heads share the threads evenly: ViT-tiny's 197 tokens as 128 +
 * 69 packed K and V twice per head and ran a 69-row tail, 0.86x the time
 * as one block (bench/RESULTS.md, "vit_tiny and bert"). */
#define ATT_QB 4
#define ATT_KB 64
#define ATT_GEMM_MIN 16
#define ATT_GQB 128
#define ATT_GQB_KEYS 512
#define ATT_GQB_ONE 256
/* The GEMM path skips the keys no query of a block sees (a causal
 * decoder's masked half): those past the causal limit, and the trailing
 * keys of a float mask at or below ATT_FAR (a decoder's -10000 or -1e9, or
 * -inf). A finite mask value only masks when the score plus it is below
 * the row's max by more than exp's range (exp(x) of float32 is 0 below
 * -103.97): checked per row by Cauchy-Schwarz (|q.k| <= |q| |k|) against
 * ATT_UNDERFLOW, else the block computes every key as before. */
#define ATT_FAR (-1000.0f)
#define ATT_GQB_SKIP 64 /* queries per block then: the last keys of more blocks skipped */
#define ATT_UNDERFLOW (-110.0f)

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
typedef katt_probs_fn att_probs_fn;
typedef void (*att_scale_fn)(float *, const float *, float, int);
typedef struct att_impl {
    kisa isa;
    att_block_fn block;
    att_probs_fn probs;
    att_scale_fn scale; /* y = o * c, the rows' 1 / sum after P V */
    int qb;           /* queries per task, at most ATT_QB */
    const char *gemm; /* the GEMM kernel of the same ISA (gemm_table.c's name) */
} att_impl;
static const att_impl att_impls[] = {
#if KISA_X86
    {KISA_AVX512, att_block_avx512, att_probs_avx512, att_scale_avx512, ATT_QB, "avx512"},
    {KISA_AVX2, att_block_avx2, att_probs_avx2, att_scale_avx2, ATT_QB, "avx2"},
#endif
    {KISA_PORTABLE, att_block_portable, att_probs_portable, att_scale_portable, ATT_QB, "c"},
};

static const gemm_kernel *gemm_named(const char *name)
{
    for (int i = 0; i < gemm_kernel_count(); i++)
        if (!strcmp(gemm_kernel_name(gemm_kernel_at(i)), name)) return gemm_kernel_at(i);
    return NULL;
}

/* What the GEMM path may skip (NULL when nothing: a boolean mask, a mask
 * per batch or head, no mask and not causal): per query row i, vis[i] the
 * keys up to the last one it sees (the causal limit, then the float mask's
 * trailing run at or below ATT_FAR cut off) and far[i] the largest mask
 * value of that run (-inf when none); knorm[kh * T + j] the norm of key j of
 * (batch, kv head) kh, when a finite far value needs the check. */
typedef struct att_skip {
    const int *vis;
    const float *far;
    const float *knorm;
} att_skip;

static void att_skip_make(const katt_geom *g, const float *kp, const float *kc, float *buf,
                          att_skip *sk)
{
    const int T = g->sp + g->sc;
    int *vis = (int *)buf;
    float *far = buf + g->sq, *kn = buf + 2 * (size_t)g->sq;
    bool finite = false, cut = false;
    memset(sk, 0, sizeof *sk);
    if (g->bmask || (!g->causal && !g->mask) || (g->mask && (g->mb || g->mh))) return;
    for (int i = 0; i < g->sq; i++) {
        int v = g->causal && i + g->sp + 1 < T ? i + g->sp + 1 : T;
        float f = -INFINITY;
        const float *m = g->mask ? g->mask + (size_t)i * g->mi : NULL;
        for (; m && v > 0 && m[v - 1] <= ATT_FAR; v--) f = m[v - 1] > f ? m[v - 1] : f;
        vis[i] = v, far[i] = f;
        finite |= f > -INFINITY;
        cut |= v < T;
    }
    if (!cut) return;
    sk->vis = vis, sk->far = far;
    if (!finite) return;
    for (int bi = 0; bi < g->b; bi++) /* the keys' norms, for the check */
        for (int kh = 0; kh < g->hkv; kh++)
            for (int j = 0; j < T; j++) {
                const float *k = j < g->sp ? kp + bi * g->kps[0] + kh * g->kps[1] + (size_t)j * g->kps[2]
                                           : kc + bi * g->kcs[0] + kh * g->kcs[1] + (size_t)(j - g->sp) * g->kcs[2];
                float a[8] = {0};
                int e = 0;
                for (; e + 8 <= g->d; e += 8)
                    for (int u = 0; u < 8; u++) a[u] += k[e + u] * k[e + u];
                for (; e < g->d; e++) a[0] += k[e] * k[e];
                kn[((size_t)bi * g->hkv + kh) * T + j] = sqrtf(a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]);
            }
    sk->knorm = kn;
}

/* Floats att_skip_make's buffer takes. */
static size_t att_skip_floats(const katt_geom *g)
{
    return ((2 * (size_t)g->sq + (size_t)g->b * g->hkv * ((size_t)g->sp + g->sc)) + 15) & ~(size_t)15;
}

/* Whether the keys [n, T) of rows [i0, i0 + nq) of head h, skipped, give
 * exactly 0 (below ATT_UNDERFLOW from the row's max mx[i]): a finite far
 * value with the largest |scale| |q| |k| of those keys. */
static bool att_skip_exact(const katt_geom *g, const att_skip *sk, const float *qh, int bi, int h,
                           int i0, int nq, int n, float scale, const float *mx)
{
    const int T = g->sp + g->sc, kvh = h / (g->hq / g->hkv);
    float kmax = 0;
    bool finite = false;
    for (int i = 0; i < nq; i++) finite |= sk->far[i0 + i] > -INFINITY;
    if (!finite) return true; /* causal or -inf: masked exactly */
    const float *kn = sk->knorm + ((size_t)bi * g->hkv + kvh) * T;
    for (int j = n; j < T; j++) kmax = kn[j] > kmax ? kn[j] : kmax;
    for (int i = 0; i < nq; i++) {
        float f = sk->far[i0 + i], qq = 0;
        if (f == -INFINITY) continue;
        const float *q = qh + (size_t)i * g->qs[2];
        for (int e = 0; e < g->d; e++) qq += q[e] * q[e];
        if (!(fabsf(scale) * sqrtf(qq) * kmax + f - mx[i] < ATT_UNDERFLOW)) return false;
    }
    return true;
}

/* Queries [i0, i0 + nq) of head h in batch bi by two GEMMs each over the
 * past and the current keys, up to the last key a query of the block sees
 * (sk); ws: nq * (t + dv + 2) floats. */
static int att_gemm(const att_impl *im, const gemm_kernel *gk, const katt_geom *g, const float *q,
                    const float *kp, const float *vp, const float *kc, const float *vc, float *y,
                    int bi, int h, int i0, int nq, const att_skip *sk, float *ws)
{
    const int T = g->sp + g->sc, kvh = h / (g->hq / g->hkv);
    float *S = ws, *W = ws + (size_t)nq * T, *l = W + (size_t)nq * g->dv, *mx = l + nq;
    const float scale = g->scale != 0 ? g->scale : 1.0f / sqrtf((float)g->d);
    const float *qh = q + bi * g->qs[0] + h * g->qs[1] + (size_t)i0 * g->qs[2];
    float *yh = y + bi * g->ys[0] + h * g->ys[1] + (size_t)i0 * g->ys[2];
    const float *parts[2][2] = {{kp ? kp + bi * g->kps[0] + kvh * g->kps[1] : NULL,
                                 vp ? vp + bi * g->vps[0] + kvh * g->vps[1] : NULL},
                                {kc + bi * g->kcs[0] + kvh * g->kcs[1],
                                 vc + bi * g->vcs[0] + kvh * g->vcs[1]}};
    int n = T; /* the keys computed */
    if (sk->vis) {
        n = 0;
        for (int i = 0; i < nq; i++) n = sk->vis[i0 + i] > n ? sk->vis[i0 + i] : n;
        if (n == 0) n = T;
    }
    /* A (Q's rows, then S's) read in place, B (K^T, V) packed whole: the skinny
     * path's kernel, not the five loops' packing of both */
    static const gemm_config in_place = {.pack_a = GEMM_PACKA_OFF};
    /* The scale, and a float mask that is one row for every query (bert's
     * [b][1][1][T] padding mask: mi 0) when no boolean mask replaces scores,
     * in S's epilogue (in registers): the softmax then reads S's rows without
     * scaling and storing them again (probs at scale 1, gp without the mask) */
    const float *mrow = g->mask && !g->mi && !g->bmask ? g->mask + bi * g->mb + h * g->mh : NULL;
    katt_geom gp = *g;
    if (mrow) gp.mask = NULL;
    const size_t kr[2] = {g->kps[2], g->kcs[2]}, vr[2] = {g->vps[2], g->vcs[2]};
    int len[2], off[2] = {0, g->sp};
    for (;;) {
        len[0] = g->sp < n ? g->sp : n, len[1] = n - len[0];
        for (int p = 0; p < 2; p++) { /* S = Q K^T, K read transposed in place */
            if (!len[p]) continue;
            gemm_args a = {.m = nq, .n = len[p], .k = g->d, .a = qh, .rsa = (int64_t)g->qs[2], .csa = 1,
                           .b = parts[p][0], .rsb = 1, .csb = (int64_t)kr[p], .c = S + off[p],
                           .ldc = n, .threads = 1, .kern = gk, .cfg = &in_place,
                           .epi = {.scaled = true, .scale = scale, .bias_mode = mrow ? GEMM_BIAS_COL : GEMM_BIAS_NONE,
                                   .bias = mrow ? mrow + off[p] : NULL}};
            if (gemm_f32(&a, NULL) != AIT_OK) return -1;
        }
        im->probs(&gp, S, nq, bi, h, i0, 1.0f, l, n, mx);
        if (n == T || att_skip_exact(g, sk, qh, bi, h, i0, nq, n, scale, mx)) break;
        n = T; /* a finite mask that does not underflow: every key */
    }
    if (!T) /* no keys: zero rows */
        for (int i = 0; i < nq; i++) memset(yh + (size_t)i * g->ys[2], 0, sizeof *yh * (size_t)g->dv);
    bool first = true;
    for (int p = 0; p < 2; p++) { /* Y = P V: the past's part in W, added to the current's */
        if (!len[p]) continue;
        bool last = p == 1 || !len[1];
        gemm_args b = {.m = nq, .n = g->dv, .k = len[p], .a = S + off[p], .rsa = n, .csa = 1,
                       .b = parts[p][1], .rsb = (int64_t)vr[p], .csb = 1,
                       .c = last ? yh : W, .ldc = last ? (int64_t)g->ys[2] : g->dv,
                       .threads = 1, .kern = gk, .cfg = &in_place};
        if (!first) b.epi.res = W, b.epi.ldr = g->dv;
        if (gemm_f32(&b, NULL) != AIT_OK) return -1;
        first = false;
    }
    for (int i = 0; i < nq; i++) { /* in the ISA's vectors (the compiler's SSE loop here cost
                                      * bert's attention half as much as its K^T packing) */
        float *r = yh + (size_t)i * g->ys[2];
        im->scale(r, r, l[i] > 0 ? 1.0f / l[i] : 0.0f, g->dv);
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

/* Per thread: the floats of one task's scratch (padded to 64 bytes); on
 * int8 the float path's (a block whose keys or values are not finite takes
 * it), then attn_q8.c's. */
static size_t ws_floats(const katt_geom *g, const gemm_kernel *gk, int qb)
{
    size_t n = gk ? (size_t)qb * ((size_t)g->sp + g->sc + g->dv + 2) : (size_t)qb * g->dv;
    n = (n + 1 + 15) & ~(size_t)15;
    return n + (gk && katt_q8_fits(g) ? katt_q8_scratch(g, qb) / sizeof(float) : 0);
}

/* Where a thread's int8 scratch starts in its ws (after the float path's). */
static void *ws_q8(const katt_geom *g, int qb, float *ws)
{
    size_t n = (size_t)qb * ((size_t)g->sp + g->sc + g->dv + 2);
    return ws + ((n + 1 + 15) & ~(size_t)15);
}

/* Queries per block of the GEMM path on `threads` threads. */
static int att_gqb(const katt_geom *g, int threads)
{
    if (g->sq <= ATT_GQB_ONE && g->sp + g->sc <= ATT_GQB_ONE &&
        (threads <= 1 || ((long)g->b * g->hq) % threads == 0))
        return g->sq;
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
    return (ws_floats(g, gk, gk ? att_gqb(g, threads) : im->qb) * (size_t)(threads > 1 ? threads : 1) +
            (gk ? att_skip_floats(g) : 0)) * sizeof(float);
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
    const bool given = g->ws && g->ws_bytes >= kattention_scratch(g, threads);
    att_skip sk = {0};
    float *skbuf = NULL; /* after the threads' scratch (kattention_scratch's) when given */
    if (gk) {
        skbuf = given ? (float *)g->ws + ws_floats(g, gk, att_gqb(g, threads)) * (size_t)(threads > 1 ? threads : 1)
                      : malloc(att_skip_floats(g) * sizeof *skbuf);
        if (!skbuf) return -1;
        att_skip_make(g, kp, kc, skbuf, &sk);
    }
    /* blocks of ATT_GQB_SKIP queries when keys are skipped (fewer per block) */
    const int gqb = gk ? att_gqb(g, threads) : 0;
    const int qb = !gk ? im->qb : sk.vis && gqb > ATT_GQB_SKIP ? ATT_GQB_SKIP : gqb;
    const int nqb = (g->sq + qb - 1) / qb;
    const long tasks = (long)g->b * g->hq * nqb;
    const size_t wsn = ws_floats(g, gk, qb);
    const bool q8 = gk && katt_q8_fits(g);
    int fail = 0;
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && tasks > 1)
    {
        float *ws = given ? (float *)g->ws + wsn * (size_t)omp_get_thread_num()
                          : aligned_alloc(64, wsn * sizeof *ws); /* a multiple of 64 bytes */
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
            else if (q8 && !katt_q8_block(g, im->probs, q, kp, vp, kc, vc, y, bi, h, i0, nq,
                                          ws_q8(g, qb, ws)))
                continue;
            else if (att_gemm(im, gk, g, q, kp, vp, kc, vc, y, bi, h, i0, nq, &sk, ws)) {
#pragma omp atomic write
                fail = 1;
            }
        }
        if (!given) free(ws);
    }
    if (!given) free(skbuf);
    return fail ? -1 : 0;
}
