/* One ISA's vector primitives for the kernel templates (*_tmpl.h): V, VL and
 * v* operations, with the ISA as the functions' target. Include it, then a
 * template, then vec_end.h. See vec_math.h for what is built on them. */
#include <immintrin.h>
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,fma")
#endif
#define KSUF avx512
#define KISA_HERE KISA_AVX512
#define V __m512
#define VL 16
static inline __mmask16 kmask_avx512(size_t r)
{
    return (__mmask16)((1u << r) - 1);
}
#define vload(p) _mm512_loadu_ps(p)
#define vstore(p, v) _mm512_storeu_ps(p, v)
#define vloadn(p, r) _mm512_maskz_loadu_ps(kmask_avx512(r), p)
#define vstoren(p, v, r) _mm512_mask_storeu_ps(p, kmask_avx512(r), v)
#define vset1(x) _mm512_set1_ps(x)
#define vzero() _mm512_setzero_ps()
#define vadd _mm512_add_ps
#define vsub _mm512_sub_ps
#define vmul _mm512_mul_ps
#define vdiv _mm512_div_ps
/* 1 / a: rcp14 and one Newton step (relative error near 1e-7, a tenth of
 * vdiv's cost: vdivps zmm takes port 0 for 10 cycles here) */
static inline __m512 vrcp_avx512(__m512 a)
{
    __m512 r = _mm512_rcp14_ps(a);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(a, r, _mm512_set1_ps(2.0f)));
}
#define vrcp vrcp_avx512
#define vfma(a, b, c) _mm512_fmadd_ps(a, b, c)
#define vmax _mm512_max_ps
#define vmin _mm512_min_ps
#define vabs(a) _mm512_abs_ps(a)
#define vcopysign(m, s) _mm512_or_ps(vabs(m), _mm512_and_ps(s, _mm512_set1_ps(-0.0f)))
#define vround(a) _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* 2^n for whole n in [-126, 127] */
#define vpow2i(n)                                                                          \
    _mm512_castsi512_ps(                                                                   \
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))
/* p * 2^n for whole n, any n (0 below the denormals, inf above 2^127) */
#define vscalef(p, n) _mm512_scalef_ps(p, n)
#define KVEC_SCALEF_ANY
#define vhsum(v) _mm512_reduce_add_ps(v)
#define vhmax(v) _mm512_reduce_max_ps(v)
/* VL floats p[0], p[s], ..., p[(VL-1)*s]; reads nothing past the last */
static inline __m512 vloads_avx512(const float *p, int s)
{
    if (s == 1) return _mm512_loadu_ps(p);
    if (s == 2) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                               26, 28, 30);
        return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even,
                                      _mm512_maskz_loadu_ps(0x7fff, p + 16));
    }
    __m512i ix = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(s));
    return _mm512_i32gather_ps(ix, p, 4);
}
#define vloads vloads_avx512
/* VL uint8 p[0 .. VL) as floats */
#define vload_u8(p) _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p))))
/* r <= VL integer-valued floats in [0, 255] v to uint8 p[0 .. r) */
#define vstoren_u8(p, v, r) _mm512_mask_cvtepi32_storeu_epi8(p, kmask_avx512(r), _mm512_cvtps_epi32(v))
/* VB: a register of VBN uint8 (the uint8 MaxPool's channels); p unaligned */
#define VB __m512i
#define VBN 64
#define vb_zero() _mm512_setzero_si512()
#define vb_load(p) _mm512_loadu_si512((const void *)(p))
#define vb_max _mm512_max_epu8
#define vb_store(p, v) _mm512_storeu_si512((void *)(p), v)
/* the first r (<= VL) of those, the other lanes 0 */
static inline __m512 vloadsn_avx512(const float *p, int s, size_t r)
{
    if (r == 16) return vloads_avx512(p, s);
    __mmask16 m = kmask_avx512(r);
    if (s == 1) return _mm512_maskz_loadu_ps(m, p);
    if (s == 2) { /* p[0 .. 2r - 2] in two masked loads, the even ones kept */
        uint32_t k = (uint32_t)((1ull << (2 * r - 1)) - 1);
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                               26, 28, 30);
        return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)k, p), even,
                                      _mm512_maskz_loadu_ps((__mmask16)(k >> 16), p + 16));
    }
    __m512i ix = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(s));
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, ix, p, 4);
}
#define vloadsn vloadsn_avx512
/* p[idx[0]], ..., p[idx[r-1]] (r <= VL; the other lanes 0) */
static inline __m512 vgathern_avx512(const float *p, const int32_t *idx, size_t r)
{
    __mmask16 m = kmask_avx512(r);
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_maskz_loadu_epi32(m, idx), p,
                                    4);
}
#define vgathern vgathern_avx512
/* lo, hi: a and b interleaved (a0 b0 a1 b1 ...), the first and second VL */
#define vzip(a, b, lo, hi)                                                                  \
    ((lo) = _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b), \
     (hi) = _mm512_permutex2var_ps(a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b))
#include "kernels/vec_math.h"
