/* AVX2+FMA GEMM micro-kernels: 6x16 (12 accumulators of 16 registers), the
 * classic Haswell shape, and its skinny path. */
#include <immintrin.h>

#include "kernels/gemm_kern.h"

#define T256 __attribute__((target("avx2,fma")))
#define UNROLL _Pragma("GCC unroll 32")
#define MR 6

#define FUSE256 fuse256
#define FUSE256_TARGET T256
#include "kernels/gemm_fuse256.h"

T256 static void ukr6x16(int64_t k, const float *a, const float *b, float *c, int64_t ldc, int acc,
                         const gemm_fuse *f)
{
    __m256 r[MR][2];
    UNROLL for (int i = 0; i < MR; i++) r[i][0] = r[i][1] = _mm256_setzero_ps();
    UNROLL for (int i = 0; i < MR; i++) _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    for (int64_t p = 0; p < k; p++) {
        __m256 b0 = _mm256_load_ps(b + p * 16), b1 = _mm256_load_ps(b + p * 16 + 8);
        UNROLL for (int i = 0; i < MR; i++) {
            __m256 av = _mm256_broadcast_ss(a + p * MR + i);
            r[i][0] = _mm256_fmadd_ps(av, b0, r[i][0]);
            r[i][1] = _mm256_fmadd_ps(av, b1, r[i][1]);
        }
    }
    UNROLL for (int i = 0; i < MR; i++) UNROLL for (int j = 0; j < 2; j++) {
        float *o = c + i * ldc + 8 * j;
        __m256 v = acc ? _mm256_add_ps(_mm256_loadu_ps(o), r[i][j]) : r[i][j];
        _mm256_storeu_ps(o, f ? fuse256(v, f, i, 8 * j) : v);
    }
}

#define SK256(M)                                                                              \
    T256 static void sk256_##M(int64_t k, const float *a, int64_t rsa, int64_t csa,           \
                               const float *b, float *out)                                    \
    {                                                                                         \
        __m256 r[M][2];                                                                       \
        UNROLL for (int i = 0; i < M; i++) r[i][0] = r[i][1] = _mm256_setzero_ps();           \
        for (int64_t p = 0; p < k; p++) {                                                     \
            _mm_prefetch((const char *)(b + (p + 32) * 16), _MM_HINT_T0);                     \
            __m256 b0 = _mm256_load_ps(b + p * 16), b1 = _mm256_load_ps(b + p * 16 + 8);     \
            UNROLL for (int i = 0; i < M; i++) {                                              \
                __m256 av = _mm256_set1_ps(a[i * rsa + p * csa]);                             \
                r[i][0] = _mm256_fmadd_ps(av, b0, r[i][0]);                                   \
                r[i][1] = _mm256_fmadd_ps(av, b1, r[i][1]);                                   \
            }                                                                                 \
        }                                                                                     \
        UNROLL for (int i = 0; i < M; i++) {                                                  \
            _mm256_storeu_ps(out + i * 16, r[i][0]);                                          \
            _mm256_storeu_ps(out + i * 16 + 8, r[i][1]);                                      \
        }                                                                                     \
    }

SK256(1) SK256(2) SK256(3) SK256(4) SK256(5) SK256(6)

typedef void (*sk_fn)(int64_t, const float *, int64_t, int64_t, const float *, float *);
static const sk_fn sk[] = {sk256_1, sk256_2, sk256_3, sk256_4, sk256_5, sk256_6};

GEMM_SKINNY(gemm_skinny_avx2_16)
{
    sk[m - 1](k, a, rsa, csa, b, out);
}

GEMM_UKR(gemm_ukr_avx2_6x16) { ukr6x16(k, a, b, c, ldc, acc, f); }
