/* qgemm's fp16 weight-only scheme (QG_FP16WO, qgemm.h): B stored as IEEE
 * half, A float32, fp32 sums, no scale. The panel is QG_NR = 16 halves a k
 * (32 bytes), so a GEMV streams half of float32's bytes: the gain is on
 * memory-bound shapes (skinny M, large N x K).
 *
 * Pack: each value rounded to nearest even (core/half.h); a finite value
 * beyond half's range (|x| > 65504) is clamped to +-65504 instead of
 * becoming infinity (an infinite weight would make every sum it enters
 * inf or NaN; a clamped one is an error the tuner's SQNR guard measures
 * and judges, as it judges int8's rounding), and values below half's
 * normal range round to its subnormals (to 0 under 2^-25). inf and NaN
 * stay inf and NaN, as float32's GEMM would carry them.
 *
 * Kernels: AVX-512 (vcvtph2ps on a panel's 16 halves, AVX512F) and AVX2
 * (F16C's vcvtph2ps on 8, two per k), up to 4 rows a call, the panel
 * streamed once for all of them; portable: core/half.h's conversion. All
 * read the same bytes. */
#include "core/cpu.h"
#include "core/half.h"
#include "kernels/qgemm_kern.h"

void qg_pack_f16(const qg_packed *v, const float *b, int64_t rsb, int64_t csb, uint16_t *w)
{
    for (int64_t j = 0; j < v->n; j++) {
        uint16_t *col = w + (j / QG_NR) * v->kp * QG_NR + j % QG_NR;
        for (int64_t p = 0; p < v->k; p++) {
            float x = b[p * rsb + j * csb];
            if (isfinite(x)) x = x > 65504.0f ? 65504.0f : x < -65504.0f ? -65504.0f : x;
            col[p * QG_NR] = f32_to_f16(x);
        }
    }
}

void qg_c_fp16wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t)
{
    const uint16_t *w = (const uint16_t *)qg_panel(b, p, 32);
    float acc[4][QG_NR] = {{0}};
    for (int64_t k = 0; k < b->k; k++) {
        float wf[QG_NR];
        for (int j = 0; j < QG_NR; j++) wf[j] = f16_to_f32(w[k * QG_NR + j]);
        for (int i = 0; i < mr; i++) {
            float a = x->a[(i0 + i) * x->lda + k];
            for (int j = 0; j < QG_NR; j++) acc[i][j] += a * wf[j];
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < QG_NR; j++) t[i * QG_NR + j] = acc[i][j];
}

bool qg_has_f16c(void)
{
    static int known; /* 0 unknown, 1 no, 2 yes: CPUID traps in a VM, asked once */
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!v) {
        v = cpu_has_all("f16c", NULL, 0) ? 2 : 1;
        __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    }
    return v == 2;
}

#if KISA_X86
#include <immintrin.h>

#define INL static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")
#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,fma")))
#define T256 __attribute__((target("avx2,fma,f16c")))

/* The AVX-512 body is int8wo's (qgemm_wo512.h), the weights widened by vcvtph2ps. */
#include "kernels/qgemm_wo512.h"

#define F16_512(M, ...) wo512_body(WO512_F16, M, __VA_ARGS__)
T512 static void k_fp16wo512(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                             float *t)
{
    QG_SWITCH4(F16_512, b, x, i0, p, t)
}

/* AVX2: a k's 16 columns in two ymm; one or two rows keep two accumulator
 * sets over k mod 2 (4 or 8 chains of FMAs), three or four rows one (6 or
 * 8): at most 8 accumulators, 2 weights and A's broadcast in 16 ymm. */
T256 INL void f16_body256(const int MR, const qg_packed *b, const qg_act *x, int64_t i0,
                          int64_t p, float *t)
{
    enum { NS = 2 }; /* accumulator sets for MR <= 2 */
    const int ns = MR <= 2 ? NS : 1;
    const uint16_t *w = (const uint16_t *)qg_panel(b, p, 32);
    const float *a = x->a + i0 * x->lda;
    __m256 acc[4][NS][2];
    UNROLL for (int i = 0; i < MR; i++)
        UNROLL for (int s = 0; s < NS; s++) acc[i][s][0] = acc[i][s][1] = _mm256_setzero_ps();
    for (int64_t k = 0; k < b->k; k++) {
        const int s = ns == 1 ? 0 : (int)(k & 1);
        if (!(k & 3)) _mm_prefetch((const char *)(w + k * 16 + 1024), _MM_HINT_T0);
        __m256 lo = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(w + k * 16)));
        __m256 hi = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(w + k * 16 + 8)));
        UNROLL for (int i = 0; i < MR; i++) {
            __m256 av = _mm256_broadcast_ss(a + i * x->lda + k);
            acc[i][s][0] = _mm256_fmadd_ps(av, lo, acc[i][s][0]);
            acc[i][s][1] = _mm256_fmadd_ps(av, hi, acc[i][s][1]);
        }
    }
    UNROLL for (int i = 0; i < MR; i++) {
        __m256 v0 = acc[i][0][0], v1 = acc[i][0][1];
        if (ns == NS) {
            v0 = _mm256_add_ps(v0, acc[i][1][0]);
            v1 = _mm256_add_ps(v1, acc[i][1][1]);
        }
        _mm256_store_ps(t + i * QG_NR, v0);
        _mm256_store_ps(t + i * QG_NR + 8, v1);
    }
}

#define F16_256(M, ...) f16_body256(M, __VA_ARGS__)
T256 static void k_fp16wo256(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                             float *t)
{
    QG_SWITCH4(F16_256, b, x, i0, p, t)
}

const qg_kern qg_avx512_fp16wo = {KISA_AVX512, "", "avx512", 4, k_fp16wo512};
const qg_kern qg_avx2_fp16wo = {KISA_AVX2, "f16c", "avx2-f16c", 4, k_fp16wo256};
#else
const qg_kern qg_avx512_fp16wo, qg_avx2_fp16wo;
#endif
