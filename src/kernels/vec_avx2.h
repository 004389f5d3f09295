/* AVX2+FMA vector primitives for the kernel templates (see vec_avx512.h). */
#include <immintrin.h>
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#define KSUF avx2
#define KISA_HERE KISA_AVX2
#define V __m256
#define VL 8
static inline __m256i kmask_avx2(size_t r)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256 vloadn_avx2(const float *p, size_t r)
{
    return r == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, kmask_avx2(r));
}
static inline void vstoren_avx2(float *p, __m256 v, size_t r)
{
    if (r == 8) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, kmask_avx2(r), v);
}
#define vload(p) _mm256_loadu_ps(p)
#define vstore(p, v) _mm256_storeu_ps(p, v)
#define vloadn vloadn_avx2
#define vstoren vstoren_avx2
#define vset1(x) _mm256_set1_ps(x)
#define vzero() _mm256_setzero_ps()
#define vadd _mm256_add_ps
#define vsub _mm256_sub_ps
#define vmul _mm256_mul_ps
#define vdiv _mm256_div_ps
#define vrcp(a) _mm256_div_ps(_mm256_set1_ps(1.0f), a)
#define vfma(a, b, c) _mm256_fmadd_ps(a, b, c)
/* VL uint8 p[0 .. VL) as floats */
#define vload_u8(p) _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p))))
/* r <= VL integer-valued floats in [0, 255] v to uint8 p[0 .. r) */
static inline void vstoren_u8_avx2(uint8_t *p, __m256 v, size_t r)
{
    __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(_mm256_cvtps_epi32(v)),
                                 _mm256_extracti128_si256(_mm256_cvtps_epi32(v), 1));
    w = _mm_packus_epi16(w, w);
    if (r == 8) _mm_storel_epi64((__m128i *)p, w);
    else {
        uint8_t t[16];
        _mm_storeu_si128((__m128i *)t, w);
        memcpy(p, t, r);
    }
}
#define vstoren_u8 vstoren_u8_avx2
/* VB: a register of VBN uint8 (the uint8 MaxPool's channels); p unaligned */
#define VB __m256i
#define VBN 32
#define vb_zero() _mm256_setzero_si256()
#define vb_load(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define vb_max _mm256_max_epu8
#define vb_store(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define vmax _mm256_max_ps
#define vmin _mm256_min_ps
#define vabs(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a)
#define vcopysign(m, s) _mm256_or_ps(vabs(m), _mm256_and_ps(s, _mm256_set1_ps(-0.0f)))
#define vround(a) _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define vpow2i(n)                                                                          \
    _mm256_castsi256_ps(                                                                   \
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
/* p * 2^n for whole n in [-127, 127] (2^-127 read as 0) */
#define vscalef(p, n) _mm256_mul_ps(p, vpow2i(n))
static inline float vhsum_avx2(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vhmax_avx2(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#define vhsum vhsum_avx2
#define vhmax vhmax_avx2
static inline __m256 vloads_avx2(const float *p, int s)
{
    if (s == 1) return _mm256_loadu_ps(p);
    if (s == 2) {
        __m256 lo = _mm256_loadu_ps(p), hi = _mm256_maskload_ps(p + 8, kmask_avx2(7));
        __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    }
    __m256i ix = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s));
    return _mm256_i32gather_ps(p, ix, 4);
}
#define vloads vloads_avx2
static inline __m256 vloadsn_avx2(const float *p, int s, size_t r)
{
    if (r == 8) return vloads_avx2(p, s);
    __m256i m = kmask_avx2(r);
    if (s == 1) return _mm256_maskload_ps(p, m);
    if (s == 2) { /* p[0 .. 2r - 2] in two masked loads, the even ones kept */
        size_t n = 2 * r - 1;
        __m256 lo = _mm256_maskload_ps(p, kmask_avx2(n < 8 ? n : 8));
        __m256 hi = n > 8 ? _mm256_maskload_ps(p + 8, kmask_avx2(n - 8)) : _mm256_setzero_ps();
        __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    }
    __m256i ix = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s));
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, ix, _mm256_castsi256_ps(m), 4);
}
#define vloadsn vloadsn_avx2
static inline __m256 vgathern_avx2(const float *p, const int32_t *idx, size_t r)
{
    __m256i m = kmask_avx2(r);
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, _mm256_maskload_epi32(idx, m),
                                    _mm256_castsi256_ps(m), 4);
}
#define vgathern vgathern_avx2
/* lo, hi: a and b interleaved (a0 b0 a1 b1 ...), the first and second VL */
#define vzip(a, b, lo, hi)                                                                  \
    ((lo) = _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x20), \
     (hi) = _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x31))
#include "kernels/vec_math.h"
