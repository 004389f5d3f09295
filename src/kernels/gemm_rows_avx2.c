/* The skinny path's rows outer as one call (gemm_kern.h's gemm_rows_fn)
 * for AVX2's 6x16 (16-wide panels, ymm, FMA3): gemm_rows_avx512.c's loop
 * in 16 registers. A's rows in groups, each group through every column of
 * B, then the next, in one function: the form chosen once per call, B read
 * from L1 without prefetches, a row of C written whole before the next
 * group.
 *
 * N is cut into chunks of equal vectors (at most 3 ymm), the rows per
 * group from the chunk's vectors so that the accumulators, the chunk's B
 * vectors and one broadcast of A fit the 16 registers: 12, 6 and 4 rows at
 * 1 to 3 vectors (14, 15 and 16 registers). N = 32 as 2 chunks of 2 over 6
 * rows, N = 96 as 4 chunks of 3 over 4 rows. A shorter last chunk keeps
 * the group's rows. */
#include <immintrin.h>

#include "kernels/gemm_kern.h"

#define T256 __attribute__((target("avx2,fma")))
#define UNROLL _Pragma("GCC unroll 32")

#define FUSE256 fuse256r
#define FUSE256_TARGET T256
#include "kernels/gemm_fuse256.h"

/* One group of R rows (A's at ap, C's at cp) by one chunk of NV vectors
 * at column j of B's 16-wide panels (sb floats apart), the chunk's last
 * vector stored under mk when part (fewer than 8 columns left). */
#define RT2_TILE(R, NV, FORM)                                                                 \
    do {                                                                                      \
        __m256 r[R][NV];                                                                      \
        const float *bp[NV];                                                                  \
        UNROLL for (int v = 0; v < NV; v++) bp[v] = b + ((j + 8 * v) >> 4) * sb + ((j + 8 * v) & 15); \
        UNROLL for (int i = 0; i < R; i++) UNROLL for (int v = 0; v < NV; v++) r[i][v] = _mm256_setzero_ps(); \
        for (int64_t p = 0; p < k; p++) {                                                     \
            __m256 bv[NV];                                                                    \
            UNROLL for (int v = 0; v < NV; v++) bv[v] = _mm256_load_ps(bp[v] + p * 16);       \
            UNROLL for (int i = 0; i < R; i++) {                                              \
                __m256 av = _mm256_broadcast_ss(ap + i * rsa + p);                            \
                UNROLL for (int v = 0; v < NV; v++) r[i][v] = _mm256_fmadd_ps(av, bv[v], r[i][v]); \
            }                                                                                 \
        }                                                                                     \
        gemm_fuse fl = fb;                                                                    \
        if ((FORM) == GEMM_FORM_ANY) {                                                        \
            if (fl.brow) fl.brow += i0;                                                       \
            if (fl.bcol) fl.bcol += j;                                                        \
            if (fl.res) fl.res += i0 * fl.ldr + j;                                            \
        }                                                                                     \
        __m256 bc[NV];                                                                        \
        UNROLL for (int v = 0; v < NV; v++)                                                   \
            bc[v] = fb.bcol ? _mm256_maskload_ps(fb.bcol + j + 8 * v, v == NV - 1 ? mk : all) \
                            : _mm256_setzero_ps();                                            \
        UNROLL for (int i = 0; i < R; i++) UNROLL for (int v = 0; v < NV; v++) {              \
            __m256i m1 = v == NV - 1 ? mk : all;                                              \
            __m256 x = fuse256r_f(r[i][v], FORM, &fl, bc[v], lo, hi, i, 8 * v, m1);           \
            if (v == NV - 1 && part) _mm256_maskstore_ps(cp + i * ldc + j + 8 * v, m1, x);    \
            else _mm256_storeu_ps(cp + i * ldc + j + 8 * v, x);                               \
        }                                                                                     \
    } while (0)

/* The mask of a chunk's last vector, its columns [j, j + 8 nv) cut at n,
 * and whether it is cut. */
T256 static inline __m256i rows_mask2(int64_t n, int64_t j, int nv, int *part)
{
    int64_t left = n - j - 8 * (nv - 1);
    *part = left < 8;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(left >= 8 ? 8 : (int)left),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Groups of R rows, chunks of NV vectors and a last chunk of tv (< NV) in
 * form FORM: the rows done (a multiple of R). */
#define RT2_LOOP(R, NV, FORM)                                                                 \
    for (i0 = 0; i0 + R <= m; i0 += R) {                                                      \
        const float *ap = a + i0 * rsa;                                                       \
        float *cp = c + i0 * ldc;                                                             \
        int64_t j = 0;                                                                        \
        int part;                                                                             \
        for (; j < nfull; j += 8 * NV) {                                                      \
            __m256i mk = rows_mask2(n, j, NV, &part);                                         \
            RT2_TILE(R, NV, FORM);                                                            \
        }                                                                                     \
        if (tv) {                                                                             \
            __m256i mk = rows_mask2(n, j, tv, &part);                                         \
            if (tv == 1) RT2_TILE(R, 1, FORM);                                                \
            else if (NV > 2) RT2_TILE(R, 2, FORM);                                            \
        }                                                                                     \
    }

#define RT2_FN(R, NV)                                                                         \
    T256 static int64_t rows256_##NV(int64_t k, int64_t m, int64_t n, const float *a, int64_t rsa, \
                                     const float *b, int64_t sb, float *c, int64_t ldc,       \
                                     const gemm_fuse *f, int64_t nfull, int tv)                \
    {                                                                                         \
        const gemm_fuse fb = f ? *f : (gemm_fuse){.scale = 1.0f};                             \
        const __m256 lo = _mm256_set1_ps(fb.lo), hi = _mm256_set1_ps(fb.hi);                  \
        const __m256i all = _mm256_set1_epi32(-1);                                            \
        int64_t i0 = 0;                                                                       \
        switch (gemm_fuse_form(f)) {                                                          \
        case GEMM_FORM_NONE: RT2_LOOP(R, NV, GEMM_FORM_NONE) break;                           \
        case GEMM_FORM_BIAS: RT2_LOOP(R, NV, GEMM_FORM_BIAS) break;                           \
        case GEMM_FORM_RELU: RT2_LOOP(R, NV, GEMM_FORM_RELU) break;                           \
        case GEMM_FORM_CLIP: RT2_LOOP(R, NV, GEMM_FORM_CLIP) break;                           \
        default: RT2_LOOP(R, NV, GEMM_FORM_ANY) break;                                        \
        }                                                                                     \
        return i0;                                                                            \
    }

RT2_FN(12, 1)
RT2_FN(6, 2)
RT2_FN(4, 3)

GEMM_ROWS(gemm_rows_avx2_16)
{
    int64_t vecs = (n + 7) / 8, chunks = (vecs + 2) / 3;
    int nv = (int)((vecs + chunks - 1) / chunks), tv = (int)(vecs % nv);
    int64_t nfull = vecs / nv * nv * 8; /* columns in chunks of nv vectors */
    switch (nv) {
    case 1: return rows256_1(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    case 2: return rows256_2(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    default: return rows256_3(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    }
}
