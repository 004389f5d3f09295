/* The AVX-512 weight-only GEMV body that int8wo (qgemm_avx512.c) and fp16
 * (qgemm_f16.c) share: up to 4 rows of float A against one panel of
 * QG_NR columns, the panel streamed once for all of them, each k's 16
 * weights widened to floats in a register. Four accumulators per row over
 * k mod 4: with two, one row's chain of FMAs (4 cycles each) held the loop
 * below its issue rate, and a GEMV below this host's read bandwidth.
 * Included after T512, INL and UNROLL are defined. */
#ifndef AIT_KERNELS_QGEMM_WO512_H
#define AIT_KERNELS_QGEMM_WO512_H
#include <immintrin.h>

#include "kernels/qgemm_kern.h"

/* How a panel's weights are stored: int8 times the column's scale, or IEEE half. */
enum { WO512_INT8 = 1, WO512_F16 = 2 }; /* = bytes per weight */

/* Weights q .. q + 15 of panel w (stored as WB says) as floats. */
T512 INL __m512 wo512_widen(const int WB, const void *w, int64_t q)
{
    if (WB == WO512_F16)
        return _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)((const uint16_t *)w + q)));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128((const __m128i *)((const int8_t *)w + q))));
}

/* Rows i0 .. i0 + MR - 1 of A by panel p into t (MR rows of QG_NR floats). */
T512 INL void wo512_body(const int WB, const int MR, const qg_packed *b, const qg_act *x, int64_t i0,
                         int64_t p, float *t)
{
    const uint8_t *w = qg_panel(b, p, 16 * WB);
    const float *a = x->a + i0 * x->lda;
    __m512 acc[4][4];
    UNROLL for (int i = 0; i < MR; i++)
        acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 4 <= b->k; k += 4) {
        _mm_prefetch((const char *)(w + (k * 16 + 1024) * WB), _MM_HINT_T0);
        __m512 w0 = wo512_widen(WB, w, k * 16), w1 = wo512_widen(WB, w, k * 16 + 16);
        __m512 w2 = wo512_widen(WB, w, k * 16 + 32), w3 = wo512_widen(WB, w, k * 16 + 48);
        UNROLL for (int i = 0; i < MR; i++) {
            const float *ai = a + i * x->lda + k;
            acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(ai[0]), w0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(_mm512_set1_ps(ai[1]), w1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_ps(_mm512_set1_ps(ai[2]), w2, acc[i][2]);
            acc[i][3] = _mm512_fmadd_ps(_mm512_set1_ps(ai[3]), w3, acc[i][3]);
        }
    }
    for (; k < b->k; k++) { /* the last k mod 4 */
        __m512 w0 = wo512_widen(WB, w, k * 16);
        UNROLL for (int i = 0; i < MR; i++)
            acc[i][k & 3] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k]), w0, acc[i][k & 3]);
    }
    __m512 sb = WB == WO512_INT8 ? _mm512_loadu_ps(b->scale + p * QG_NR) : _mm512_set1_ps(1.0f);
    UNROLL for (int i = 0; i < MR; i++) {
        __m512 v = _mm512_add_ps(_mm512_add_ps(acc[i][0], acc[i][1]), _mm512_add_ps(acc[i][2], acc[i][3]));
        _mm512_store_ps(t + i * QG_NR, WB == WO512_INT8 ? _mm512_mul_ps(v, sb) : v);
    }
}
#endif
