/* AVX-512 kernels of qgemm (qgemm.h): one 16-column panel by up to MR rows,
 * an accumulator register per row. bf16: vdpbf16ps on pairs of k (needs
 * AVX512-BF16); int8dq: vpdpbusd on quads of k (AVX512-VNNI); the
 * weight-only ones widen int8/uint4 to float in registers (AVX512F) and
 * stream the panel once for all the rows. Each body is inlined per row
 * count, so the row loops unroll. */
#include "kernels/qgemm_kern.h"

#if KISA_X86
#include <immintrin.h>

#define INL static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")
#define TBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define TVNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,fma")))

/* Row counts 1..12 dispatched to a body specialised for each. */
#define SWITCH12(F, ...)                                                                      \
    switch (mr) {                                                                             \
    case 1: F(1, __VA_ARGS__); break;   case 2: F(2, __VA_ARGS__); break;                     \
    case 3: F(3, __VA_ARGS__); break;   case 4: F(4, __VA_ARGS__); break;                     \
    case 5: F(5, __VA_ARGS__); break;   case 6: F(6, __VA_ARGS__); break;                     \
    case 7: F(7, __VA_ARGS__); break;   case 8: F(8, __VA_ARGS__); break;                     \
    case 9: F(9, __VA_ARGS__); break;   case 10: F(10, __VA_ARGS__); break;                   \
    case 11: F(11, __VA_ARGS__); break; default: F(12, __VA_ARGS__); break;                   \
    }

TBF INL void bf16_body(const int MR, const qg_packed *b, const qg_act *x, int64_t i0, int64_t p,
                       float *t)
{
    const uint16_t *w = (const uint16_t *)qg_panel(b, p, 32);
    const uint32_t *a = (const uint32_t *)(x->h + (size_t)i0 * b->kp);
    const int64_t kh = b->kp / 2; /* pairs per row */
    __m512 acc[12];
    UNROLL for (int i = 0; i < MR; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < kh; kk++) {
        __m512bh bv = (__m512bh)_mm512_load_si512(w + kk * 32);
        UNROLL for (int i = 0; i < MR; i++) {
            __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i * kh + kk]);
            acc[i] = _mm512_dpbf16_ps(acc[i], av, bv);
        }
    }
    UNROLL for (int i = 0; i < MR; i++) _mm512_store_ps(t + i * QG_NR, acc[i]);
}

#define BF16_CALL(M, ...) bf16_body(M, __VA_ARGS__)
TBF static void k_bf16(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t)
{
    SWITCH12(BF16_CALL, b, x, i0, p, t)
}

/* acc + the u8 x s8 quad products of a and b (vpdpbusd), accumulated in
 * place: through _mm512_dpbusd_epi32, GCC 12 copies every accumulator to
 * another register once per k step, twice the loop's instructions (the
 * int8dq GEMM at M = 8 ran 1.7x its M = 1 time on the same weights). */
TVNNI INL __m512i dpbusd(__m512i acc, __m512i a, __m512i b)
{
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
}

TVNNI INL void int8dq_body(const int MR, const qg_packed *b, const qg_act *x, int64_t i0,
                           int64_t p, float *t)
{
    const uint8_t *w = qg_panel(b, p, 16);
    const int64_t kq = b->kp / 4;
    const uint32_t *a = (const uint32_t *)(x->q + (size_t)i0 * b->kp);
    __m512i acc[12];
    UNROLL for (int i = 0; i < MR; i++) acc[i] = _mm512_setzero_si512();
    for (int64_t q = 0; q < kq; q++) {
        /* 32 quads ahead: 14-31% less CPU time at 8 x 4096 x 4096 (weights
         * streamed from memory; bench/RESULTS.md, 2026-11-27) */
        _mm_prefetch((const char *)(w + q * 64 + 2048), _MM_HINT_T0);
        __m512i bv = _mm512_load_si512(w + q * 64);
        UNROLL for (int i = 0; i < MR; i++)
            acc[i] = dpbusd(acc[i], _mm512_set1_epi32((int)a[i * kq + q]), bv);
    }
    __m512i cs = _mm512_loadu_si512(b->colsum + p * QG_NR);
    __m512 sb = _mm512_loadu_ps(b->scale + p * QG_NR);
    UNROLL for (int i = 0; i < MR; i++) {
        __m512i v = _mm512_sub_epi32(acc[i], _mm512_mullo_epi32(_mm512_set1_epi32(x->za[i0 + i]), cs));
        __m512 s = _mm512_mul_ps(_mm512_set1_ps(x->sa[i0 + i]), sb);
        _mm512_store_ps(t + i * QG_NR, _mm512_mul_ps(_mm512_cvtepi32_ps(v), s));
    }
}

#define INT8DQ_CALL(M, ...) int8dq_body(M, __VA_ARGS__)
TVNNI static void k_int8dq(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                           float *t)
{
    SWITCH12(INT8DQ_CALL, b, x, i0, p, t)
}

/* Weight-only: 4 rows at most (skinny M); two accumulators per row over
 * even and odd k hide the FMA latency. */
T512 INL void int8wo_body(const int MR, const qg_packed *b, const qg_act *x, int64_t i0, int64_t p,
                          float *t)
{
    const int8_t *w = (const int8_t *)qg_panel(b, p, 16);
    const float *a = x->a + i0 * x->lda;
    __m512 acc[4][2];
    UNROLL for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= b->k; k += 2) {
        _mm_prefetch((const char *)(w + k * 16 + 1024), _MM_HINT_T0);
        __m512 w0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128((const __m128i *)(w + k * 16))));
        __m512 w1 = _mm512_cvtepi32_ps(
            _mm512_cvtepi8_epi32(_mm_load_si128((const __m128i *)(w + k * 16 + 16))));
        UNROLL for (int i = 0; i < MR; i++) {
            acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k]), w0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k + 1]), w1, acc[i][1]);
        }
    }
    if (k < b->k) {
        __m512 w0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128((const __m128i *)(w + k * 16))));
        UNROLL for (int i = 0; i < MR; i++)
            acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k]), w0, acc[i][0]);
    }
    __m512 sb = _mm512_loadu_ps(b->scale + p * QG_NR);
    UNROLL for (int i = 0; i < MR; i++)
        _mm512_store_ps(t + i * QG_NR, _mm512_mul_ps(_mm512_add_ps(acc[i][0], acc[i][1]), sb));
}

T512 INL void int4wo_body(const int MR, const qg_packed *b, const qg_act *x, int64_t i0, int64_t p,
                          float *t)
{
    const uint8_t *w = qg_panel(b, p, 8);
    const float *a = x->a + i0 * x->lda;
    const int64_t G = b->group, ng = b->kp / G;
    const __m512i m15 = _mm512_set1_epi32(15);
    __m512 out[4];
    UNROLL for (int i = 0; i < MR; i++) out[i] = _mm512_setzero_ps();
    for (int64_t g = 0; g < ng; g++) {
        __m512 acc[4][2];
        UNROLL for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
        int64_t k1 = (g + 1) * G < b->k ? (g + 1) * G : b->k, k = g * G;
        for (; k + 2 <= k1; k += 2) {
            _mm_prefetch((const char *)(w + k * 8 + 1024), _MM_HINT_T0);
            __m512i q = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)(w + k * 8)));
            __m512 lo = _mm512_cvtepi32_ps(_mm512_and_si512(q, m15));
            __m512 hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(q, 4));
            UNROLL for (int i = 0; i < MR; i++) {
                acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k]), lo, acc[i][0]);
                acc[i][1] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k + 1]), hi, acc[i][1]);
            }
        }
        if (k < k1) { /* the last k, odd: its low nibble */
            __m512i q = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)(w + k * 8)));
            __m512 lo = _mm512_cvtepi32_ps(_mm512_and_si512(q, m15));
            UNROLL for (int i = 0; i < MR; i++)
                acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k]), lo, acc[i][0]);
        }
        __m512 s = _mm512_loadu_ps(b->scale + g * b->np + p * QG_NR);
        __m512 z = _mm512_loadu_ps(b->zero + g * b->np + p * QG_NR);
        UNROLL for (int i = 0; i < MR; i++) {
            __m512 v = _mm512_add_ps(acc[i][0], acc[i][1]);
            v = _mm512_fnmadd_ps(z, _mm512_set1_ps(x->gsum[(i0 + i) * ng + g]), v);
            out[i] = _mm512_fmadd_ps(s, v, out[i]);
        }
    }
    UNROLL for (int i = 0; i < MR; i++) _mm512_store_ps(t + i * QG_NR, out[i]);
}

#define SWITCH4(F, ...)                                                                       \
    switch (mr) {                                                                             \
    case 1: F(1, __VA_ARGS__); break;                                                         \
    case 2: F(2, __VA_ARGS__); break;                                                         \
    case 3: F(3, __VA_ARGS__); break;                                                         \
    default: F(4, __VA_ARGS__); break;                                                        \
    }
#define INT8WO_CALL(M, ...) int8wo_body(M, __VA_ARGS__)
#define INT4WO_CALL(M, ...) int4wo_body(M, __VA_ARGS__)
T512 static void k_int8wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                          float *t)
{
    SWITCH4(INT8WO_CALL, b, x, i0, p, t)
}
T512 static void k_int4wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                          float *t)
{
    SWITCH4(INT4WO_CALL, b, x, i0, p, t)
}

/* The activation quantisers' two passes (qg_quant_row_u8, qg_dynq_u8): vminps/vmaxps return their
 * second operand when the first is NaN, as the scalar code skips NaN; the
 * division is kept (a reciprocal would round differently) and rounding is
 * to nearest even, as rintf. */
T512 static void dq_minmax(const float *x, int64_t n, float *lo, float *hi)
{
    __m512 l = _mm512_set1_ps(*lo), h = _mm512_set1_ps(*hi);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        l = _mm512_min_ps(v, l);
        h = _mm512_max_ps(v, h);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        l = _mm512_mask_min_ps(l, m, v, l);
        h = _mm512_mask_max_ps(h, m, v, h);
    }
    *lo = _mm512_reduce_min_ps(l);
    *hi = _mm512_reduce_max_ps(h);
}

/* x / s (div), or x * s (s the reciprocal), rounded, + z, saturated to uint8. */
T512 INL void quant_body(const float *x, int64_t n, float s, float z, uint8_t *y, bool div)
{
    const __m512 sv = _mm512_set1_ps(s), zv = _mm512_set1_ps(z), top = _mm512_set1_ps(255.0f),
                 zero = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
        __m512 v = div ? _mm512_div_ps(xv, sv) : _mm512_mul_ps(xv, sv);
        v = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zv);
        v = _mm512_min_ps(_mm512_max_ps(v, zero), top); /* NaN: 0 */
        _mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_cvtps_epi32(v));
    }
}

T512 static void dq_quant(const float *x, int64_t n, float s, float z, uint8_t *y)
{
    quant_body(x, n, s, z, y, true);
}

T512 static void dq_requant(const float *x, int64_t n, float r, float z, uint8_t *y)
{
    quant_body(x, n, r, z, y, false);
}

void (*const qg_avx512_minmax)(const float *, int64_t, float *, float *) = dq_minmax;
void (*const qg_avx512_quant)(const float *, int64_t, float, float, uint8_t *) = dq_quant;
void (*const qg_avx512_requant)(const float *, int64_t, float, float, uint8_t *) = dq_requant;

const qg_kern qg_avx512_bf16 = {KISA_AVX512, "avx512bf16", "avx512-bf16", 12, k_bf16};
const qg_kern qg_avx512_int8dq = {KISA_AVX512, "avx512vnni", "avx512-vnni", 12, k_int8dq};
const qg_kern qg_avx512_int8wo = {KISA_AVX512, "", "avx512", 4, k_int8wo};
const qg_kern qg_avx512_int4wo = {KISA_AVX512, "", "avx512", 4, k_int4wo};
#else
const qg_kern qg_avx512_bf16, qg_avx512_int8dq, qg_avx512_int8wo, qg_avx512_int4wo;
void (*const qg_avx512_minmax)(const float *, int64_t, float *, float *) = NULL;
void (*const qg_avx512_quant)(const float *, int64_t, float, float, uint8_t *) = NULL;
void (*const qg_avx512_requant)(const float *, int64_t, float, float, uint8_t *) = NULL;
#endif
