/* AVX2 kernels of qgemm (qgemm.h) for CPUs without AVX512-VNNI: int8dq's
 * micro-kernel and the activation quantisers' two passes.
 *
 * int8dq without VNNI: vpmaddubsw would sum two u8 x s8 products into a
 * saturating int16, and 2 x 255 x 127 = 64770 does not fit (ONNX Runtime
 * meets it with 7-bit weights, `reduce_range`, 6 dB of the weights' SQNR).
 * Here the bytes are widened to int16 instead, so the int32 sums are exact
 * and equal to the VNNI kernel's, bit for bit, on the same packed weights
 * (no SQNR lost, and static int8's full 0..255 activations fit): the even
 * and odd bytes of each weight quad (k0 k2, k1 k3) sign-extended by shifts,
 * A's broadcast quad zero-extended the same way, and vpmaddwd adds two
 * exact products into each int32 lane. 4 vector ops per 32 products,
 * against vpmaddubsw's 3 (vpmaddubsw, vpmaddwd by ones, vpaddd).
 *
 * The tile is up to 4 rows by one 16-column panel (8 int32 accumulators,
 * the 4 widened weight vectors, A's two: 14 of the 16 ymm registers); a
 * call walks the np panels it is given, so skinny M streams the weights
 * once. */

#include "kernels/qgemm_kern.h"

#if KISA_X86
#include <immintrin.h>

#define INL static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 8")
#define T256 __attribute__((target("avx2,fma")))
#define MR 4

/* MR rows [i0, i0+MR) by panel s of column group g, dequantised
 * (sa[i] * sb[j] * (acc - za[i] * colsum[j])) and stored to c (C[i0][the
 * panel's first column]); columns past n are not written. */
T256 INL void i8_panel(const int R, const qg_packed *b, const qg_act *x, int64_t i0, int64_t g,
                       int s, float *c, int64_t ldc)
{
    const int64_t kq = b->kp / 4, step = (int64_t)qg_group_w(b, g) * 64, run = qg_run(b, x);
    const uint8_t *w = qg_group(b, g) + s * 64;
    const __m256i lo8 = _mm256_set1_epi16(0x00ff);
    __m256i acc[MR][2];
    UNROLL for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    for (int64_t q0 = 0; q0 < kq; q0 += run) { /* a stretch of A's quads (qg_run) */
        const uint32_t *a[MR] = {0};
        UNROLL for (int i = 0; i < R; i++) a[i] = qg_arow(b, x, i0 + i, q0);
        for (int64_t q = q0; q < q0 + run; q++) {
            const uint8_t *wq = w + q * step;
            _mm_prefetch((const char *)(wq + 32 * step), _MM_HINT_T0);
            const __m256i w0 = _mm256_load_si256((const __m256i *)wq),
                          w1 = _mm256_load_si256((const __m256i *)(wq + 32));
            const __m256i e0 = _mm256_srai_epi16(_mm256_slli_epi16(w0, 8), 8), o0 = _mm256_srai_epi16(w0, 8);
            const __m256i e1 = _mm256_srai_epi16(_mm256_slli_epi16(w1, 8), 8), o1 = _mm256_srai_epi16(w1, 8);
            UNROLL for (int i = 0; i < R; i++) {
                const __m256i av = _mm256_set1_epi32((int)a[i][q - q0]);
                const __m256i ae = _mm256_and_si256(av, lo8), ao = _mm256_srli_epi16(av, 8);
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(ae, e0));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(ae, e1));
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(ao, o0));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(ao, o1));
            }
        }
    }
    const int64_t j0 = (g * QG_GP + s) * QG_NR;
    UNROLL for (int h = 0; h < 2; h++) {
        const int64_t j = j0 + 8 * h, left = b->n - j;
        if (left <= 0) break;
        /* colsum and scale hold np (a multiple of 16) entries: whole loads */
        const __m256i cs = _mm256_loadu_si256((const __m256i *)(b->colsum + j));
        const __m256 sb = _mm256_loadu_ps(b->scale + j);
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 8 ? left : 8)),
                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        UNROLL for (int i = 0; i < R; i++) {
            __m256i zc = _mm256_mullo_epi32(_mm256_set1_epi32(qg_row_za(x, i0 + i)), cs);
            __m256 v = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc[i][h], zc));
            v = _mm256_mul_ps(v, _mm256_mul_ps(_mm256_set1_ps(qg_row_sa(x, i0 + i)), sb));
            float *cc = c + i * ldc + 8 * h;
            if (left >= 8)
                _mm256_storeu_ps(cc, v);
            else
                _mm256_maskstore_ps(cc, mask, v);
        }
    }
}

#define I8_CASE(R)                                                                            \
    case R:                                                                                   \
        for (int s = s0; s < s0 + np; s++)                                                    \
            i8_panel(R, b, x, i0, g, s, c + (s - s0) * QG_NR, ldc);                           \
        break;

/* qg_ukr8: the panels one at a time, each over all mr rows; the epilogue's
 * in-register part on the tile after (in L1). */
T256 static void k_int8dq(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int nt,
                          int64_t g, int s0, int np, float *c, int64_t ldc, const gemm_epi *in)
{
    if (nt > 1) { /* the tiles one by one */
        for (int t = 0; t < nt; t++)
            k_int8dq(b, x, i0 + t * mr, mr, 1, g, s0, np, c + t * mr * ldc, ldc, in);
        return;
    }
    switch (mr) {
        I8_CASE(1)
        I8_CASE(2)
        I8_CASE(3)
    default:
        I8_CASE(4)
    }
    if (in) {
        const int64_t j0 = (g * QG_GP + s0) * QG_NR;
        const int nr = b->n - j0 < np * QG_NR ? (int)(b->n - j0) : np * QG_NR;
        gemm_epi_tile(in, c, ldc, i0, j0, mr, nr);
    }
}

/* The quantisers' passes as the AVX-512 ones (qgemm_kern.h): vminps/vmaxps
 * return their second operand on a NaN (skipped); the division kept,
 * rounding to nearest even; the tail in scalar code of the same
 * arithmetic. */
T256 static void q2_minmax(const float *x, int64_t n, float *lo, float *hi)
{
    __m256 l = _mm256_set1_ps(*lo), h = _mm256_set1_ps(*hi);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        l = _mm256_min_ps(v, l);
        h = _mm256_max_ps(v, h);
    }
    float lv[8], hv[8];
    _mm256_storeu_ps(lv, l);
    _mm256_storeu_ps(hv, h);
    for (int k = 0; k < 8; k++) {
        *lo = lv[k] < *lo ? lv[k] : *lo;
        *hi = hv[k] > *hi ? hv[k] : *hi;
    }
    for (; i < n; i++) {
        *lo = x[i] < *lo ? x[i] : *lo;
        *hi = x[i] > *hi ? x[i] : *hi;
    }
}

T256 INL void q2_body(const float *x, int64_t n, float s, float z, uint8_t *y, bool div)
{
    const __m256 sv = _mm256_set1_ps(s), zv = _mm256_set1_ps(z), top = _mm256_set1_ps(255.0f),
                 zero = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i);
        __m256 v = div ? _mm256_div_ps(xv, sv) : _mm256_mul_ps(xv, sv);
        v = _mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zv);
        v = _mm256_min_ps(_mm256_max_ps(v, zero), top); /* NaN: 0 */
        __m256i q = _mm256_cvtps_epi32(v);
        __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(w, w));
    }
    for (; i < n; i++) {
        float q = __builtin_rintf(div ? x[i] / s : x[i] * s) + z;
        y[i] = (uint8_t)(q >= 255 ? 255 : q > 0 ? (int32_t)q : 0);
    }
}

T256 static void q2_quant(const float *x, int64_t n, float s, float z, uint8_t *y)
{
    q2_body(x, n, s, z, y, true);
}

T256 static void q2_requant(const float *x, int64_t n, float r, float z, uint8_t *y)
{
    q2_body(x, n, r, z, y, false);
}

const qg_kern qg_avx2_int8dq = {KISA_AVX2, "", "avx2", MR, NULL, k_int8dq, {0, MR, MR, MR, MR}};
/* qg_dequant_u8's (q - z) * s, 8 at a time */
T256 static void q2_dequant(const uint8_t *q, int64_t n, float s, int32_t z, float *y)
{
    const __m256 sv = _mm256_set1_ps(s);
    const __m256i zi = _mm256_set1_epi32(z);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(q + i)));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, zi)), sv));
    }
    for (; i < n; i++) y[i] = (float)((int32_t)q[i] - z) * s;
}

const qg_quantiser qg_avx2_quantiser = {KISA_AVX2, q2_minmax, q2_quant, q2_requant, q2_dequant};
#else
const qg_kern qg_avx2_int8dq;
const qg_quantiser qg_avx2_quantiser;
#endif
