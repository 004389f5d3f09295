/* The skinny path's rows outer as one call (gemm_kern.h's gemm_rows_fn):
 * A's rows in groups, each group through every column of B, then the
 * next, all inside one function. The per-call loop (gemm.c's skinny, one
 * kernel call per group and width) paid each call's set-up (the epilogue's
 * copy and form, B's panel pointers, the masks, the bias vectors) and its
 * B prefetches again every few hundred FMAs: at K 16 to 32 that was a
 * quarter of a call's time. Here the form is chosen once per call, B is
 * read from L1 (K x N floats: the caller's condition) without prefetches,
 * and a row of C is written whole before the next group.
 *
 * N is cut into chunks of equal vectors (at most 4 zmm: 24 accumulators at
 * 6 rows), the rows per group from the chunk's vectors (12, 12, 8, 6 at 1
 * to 4): N = 144 as 3 chunks of 3 vectors over 8 rows, not 4 + 4 + 1 over
 * 6. A shorter last chunk keeps the group's rows. */
#include <immintrin.h>

#include "kernels/gemm_kern.h"

#define T512 __attribute__((target("avx512f,fma")))
#define UNROLL _Pragma("GCC unroll 32")

#include "kernels/gemm_fuse512.h"

/* One group of R rows (A's at ap, C's at cp) by one chunk of NV vectors
 * at column j of B's 32-wide panels (sb floats apart), the chunk's last
 * vector stored under mk. */
#define RT_TILE(R, NV, FORM)                                                                  \
    do {                                                                                      \
        __m512 r[R][NV];                                                                      \
        const float *bp[NV];                                                                  \
        UNROLL for (int v = 0; v < NV; v++) bp[v] = b + ((j + 16 * v) >> 5) * sb + ((j + 16 * v) & 31); \
        UNROLL for (int i = 0; i < R; i++) UNROLL for (int v = 0; v < NV; v++) r[i][v] = _mm512_setzero_ps(); \
        for (int64_t p = 0; p < k; p++) {                                                     \
            __m512 bv[NV];                                                                    \
            UNROLL for (int v = 0; v < NV; v++) bv[v] = _mm512_load_ps(bp[v] + p * 32);       \
            UNROLL for (int i = 0; i < R; i++) {                                              \
                __m512 av = _mm512_set1_ps(ap[i * rsa + p]);                                  \
                UNROLL for (int v = 0; v < NV; v++) r[i][v] = _mm512_fmadd_ps(av, bv[v], r[i][v]); \
            }                                                                                 \
        }                                                                                     \
        gemm_fuse fl = fb;                                                                    \
        if ((FORM) == GEMM_FORM_ANY) {                                                        \
            if (fl.brow) fl.brow += i0;                                                       \
            if (fl.bcol) fl.bcol += j;                                                        \
            if (fl.res) fl.res += i0 * fl.ldr + j;                                            \
        }                                                                                     \
        __m512 bc[NV];                                                                        \
        UNROLL for (int v = 0; v < NV; v++)                                                   \
            bc[v] = fb.bcol ? _mm512_maskz_loadu_ps(v == NV - 1 ? mk : 0xffff, fb.bcol + j + 16 * v) \
                            : _mm512_setzero_ps();                                            \
        UNROLL for (int i = 0; i < R; i++) UNROLL for (int v = 0; v < NV; v++) {              \
            __mmask16 m1 = v == NV - 1 ? mk : 0xffff;                                         \
            _mm512_mask_storeu_ps(cp + i * ldc + j + 16 * v, m1,                              \
                                  fuse512_f(r[i][v], FORM, &fl, bc[v], lo, hi, i, 16 * v, m1)); \
        }                                                                                     \
    } while (0)

/* The mask of a chunk's last vector, its columns [j, j + 16 nv) cut at n. */
static inline __mmask16 rows_mask(int64_t n, int64_t j, int nv)
{
    int64_t left = n - j - 16 * (nv - 1);
    return (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1);
}

/* Groups of R rows, chunks of NV vectors and a last chunk of tv (< NV) in
 * form FORM: the rows done (a multiple of R). */
#define RT_LOOP(R, NV, FORM)                                                                  \
    for (i0 = 0; i0 + R <= m; i0 += R) {                                                      \
        const float *ap = a + i0 * rsa;                                                       \
        float *cp = c + i0 * ldc;                                                             \
        int64_t j = 0;                                                                        \
        for (; j < nfull; j += 16 * NV) {                                                     \
            __mmask16 mk = rows_mask(n, j, NV);                                               \
            RT_TILE(R, NV, FORM);                                                             \
        }                                                                                     \
        if (tv) {                                                                             \
            __mmask16 mk = rows_mask(n, j, tv);                                               \
            switch (tv) {                                                                     \
            case 1: RT_TILE(R, 1, FORM); break;                                               \
            case 2: if (NV > 2) RT_TILE(R, 2, FORM); break;                                   \
            default: if (NV > 3) RT_TILE(R, 3, FORM); break;                                  \
            }                                                                                 \
        }                                                                                     \
    }

#define RT_FN(R, NV)                                                                          \
    T512 static int64_t rows512_##NV(int64_t k, int64_t m, int64_t n, const float *a, int64_t rsa, \
                                     const float *b, int64_t sb, float *c, int64_t ldc,       \
                                     const gemm_fuse *f, int64_t nfull, int tv)                \
    {                                                                                         \
        const gemm_fuse fb = f ? *f : (gemm_fuse){.scale = 1.0f};                             \
        const __m512 lo = _mm512_set1_ps(fb.lo), hi = _mm512_set1_ps(fb.hi);                  \
        int64_t i0 = 0;                                                                       \
        switch (gemm_fuse_form(f)) {                                                          \
        case GEMM_FORM_NONE: RT_LOOP(R, NV, GEMM_FORM_NONE) break;                            \
        case GEMM_FORM_BIAS: RT_LOOP(R, NV, GEMM_FORM_BIAS) break;                            \
        case GEMM_FORM_RELU: RT_LOOP(R, NV, GEMM_FORM_RELU) break;                            \
        case GEMM_FORM_CLIP: RT_LOOP(R, NV, GEMM_FORM_CLIP) break;                            \
        default: RT_LOOP(R, NV, GEMM_FORM_ANY) break;                                         \
        }                                                                                     \
        return i0;                                                                            \
    }

RT_FN(12, 1)
RT_FN(12, 2)
RT_FN(8, 3)
RT_FN(6, 4)

GEMM_ROWS(gemm_rows_avx512_32)
{
    int64_t vecs = (n + 15) / 16, chunks = (vecs + 3) / 4;
    int nv = (int)((vecs + chunks - 1) / chunks), tv = (int)(vecs % nv);
    int64_t nfull = vecs / nv * nv * 16; /* columns in chunks of nv vectors */
    switch (nv) {
    case 1: return rows512_1(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    case 2: return rows512_2(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    case 3: return rows512_3(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    default: return rows512_4(k, m, n, a, rsa, b, sb, c, ldc, f, nfull, tv);
    }
}
