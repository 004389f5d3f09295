/* AVX2+FMA GEMM micro-kernels: 6x16 (12 accumulators of 16 registers), the
 * classic Haswell shape, and its skinny path. */
#include <immintrin.h>

#include "kernels/gemm_kern.h"
#include "kernels/gemm_pack.h"

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
    const __m256i all = _mm256_set1_epi32(-1);
    gemm_fuse fl = f ? *f : (gemm_fuse){.scale = 1.0f};
    __m256 bc[2] = {fuse256_bias(&fl, 0, all), fuse256_bias(&fl, 8, all)};
    __m256 lo = _mm256_set1_ps(fl.lo), hi = _mm256_set1_ps(fl.hi);
#define UKR256_STORE(FORM)                                                                    \
    UNROLL for (int i = 0; i < MR; i++) UNROLL for (int j = 0; j < 2; j++) {                  \
        float *o = c + i * ldc + 8 * j;                                                       \
        __m256 v = acc ? _mm256_add_ps(_mm256_loadu_ps(o), r[i][j]) : r[i][j];                \
        _mm256_storeu_ps(o, fuse256_f(v, FORM, &fl, bc[j], lo, hi, i, 8 * j, all));           \
    }
    FORM_SWITCH(gemm_fuse_form(f), UKR256_STORE)
}

/* Skinny: M rows of A read in place against NV vectors (8 columns each) of
 * one 16-wide packed panel, the last stored under a mask when nc ends in it.
 * At M 1 and 2, K in parts read side by side (GEMM_SK_SPLIT, 8 accumulators
 * at most): more streams from memory at once. */
#define SK256_STEP(NV, M, s, q)                                                               \
    do {                                                                                      \
        _mm_prefetch((const char *)(b + ((q) + 32) * 16), _MM_HINT_T0);                       \
        __m256 bv[NV];                                                                        \
        UNROLL for (int j = 0; j < NV; j++) bv[j] = _mm256_load_ps(b + (q) * 16 + 8 * j);     \
        UNROLL for (int i = 0; i < M; i++) {                                                  \
            __m256 av = _mm256_set1_ps(a[i * rsa + (q) * csa]);                               \
            UNROLL for (int j = 0; j < NV; j++) r[s][i][j] = _mm256_fmadd_ps(av, bv[j], r[s][i][j]); \
        }                                                                                     \
    } while (0)
#define SK256(NV, M)                                                                          \
    T256 static void sk256_##NV##_##M(int64_t k, int nc, const float *a, int64_t rsa,         \
                                      int64_t csa, const float *b, float *out, int64_t ldo,   \
                                      const gemm_fuse *f)                                     \
    {                                                                                         \
        enum { S = GEMM_SK_SPLIT(M, NV, 8) };                                                 \
        __m256 r[S][M][NV];                                                                   \
        UNROLL for (int s = 0; s < S; s++) UNROLL for (int i = 0; i < M; i++)                 \
            UNROLL for (int j = 0; j < NV; j++) r[s][i][j] = _mm256_setzero_ps();             \
        const int64_t kp = k / S; /* part s: k in [s kp, (s + 1) kp), the rest on part 0 */   \
        for (int64_t p = 0; p < kp; p++) UNROLL for (int s = 0; s < S; s++) SK256_STEP(NV, M, s, s * kp + p); \
        for (int64_t p = S * kp; p < k; p++) SK256_STEP(NV, M, 0, p);                         \
        UNROLL for (int s = 1; s < S; s++) UNROLL for (int i = 0; i < M; i++)                 \
            UNROLL for (int j = 0; j < NV; j++) r[0][i][j] = _mm256_add_ps(r[0][i][j], r[s][i][j]); \
        __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc - 8 * (NV - 1)),               \
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));         \
        enum { TM = M, TN = NV };                                                             \
        gemm_fuse fl = f ? *f : (gemm_fuse){.scale = 1.0f};                                   \
        __m256 bc[NV], lo = _mm256_set1_ps(fl.lo), hi = _mm256_set1_ps(fl.hi);                \
        UNROLL for (int j = 0; j < NV; j++)                                                   \
            bc[j] = fuse256_bias(&fl, 8 * j, j == NV - 1 ? tail : _mm256_set1_epi32(-1));     \
        FORM_SWITCH(gemm_fuse_form(f), SK256_STORE)                                           \
    }
#define SK256_STORE(FORM) /* TM x TN: the call's M x NV */                                    \
    UNROLL for (int i = 0; i < TM; i++) UNROLL for (int j = 0; j < TN; j++) {                 \
        __m256i mk = j == TN - 1 ? tail : _mm256_set1_epi32(-1);                              \
        __m256 v = fuse256_f(r[0][i][j], FORM, &fl, bc[j], lo, hi, i, 8 * j, mk);             \
        if (j == TN - 1) _mm256_maskstore_ps(out + i * ldo + 8 * j, mk, v);                   \
        else _mm256_storeu_ps(out + i * ldo + 8 * j, v);                                      \
    }

SK256(2, 1) SK256(2, 2) SK256(2, 3) SK256(2, 4) SK256(2, 5) SK256(2, 6)
SK256(1, 1) SK256(1, 2) SK256(1, 3) SK256(1, 4) SK256(1, 5) SK256(1, 6)
SK256(1, 7) SK256(1, 8) SK256(1, 9) SK256(1, 10) SK256(1, 11) SK256(1, 12)

typedef void (*sk_fn)(int64_t, int, const float *, int64_t, int64_t, const float *, float *, int64_t,
                      const gemm_fuse *);
static const sk_fn sk[2][12] = {
    {sk256_1_1, sk256_1_2, sk256_1_3, sk256_1_4, sk256_1_5, sk256_1_6, sk256_1_7, sk256_1_8,
     sk256_1_9, sk256_1_10, sk256_1_11, sk256_1_12},
    {sk256_2_1, sk256_2_2, sk256_2_3, sk256_2_4, sk256_2_5, sk256_2_6},
};

GEMM_SKINNY(gemm_skinny_avx2_16)
{
    (void)sb; /* one panel: nc <= 16 */
    sk[(nc + 7) / 8 - 1][m - 1](k, nc, a, rsa, csa, b, out, ldo, f);
}

/* The GEMV (gemm_gemv_fn): C 16-wide panels side by side, two ymm
 * accumulators each (12 at C 6 of 16 registers), B's vectors read by the
 * FMAs; each panel's loads a stream of its own. */
#define GV256(C)                                                                              \
    T256 static void gv256_##C(int64_t k, const float *a, int64_t csa, const float *b,        \
                               int64_t p0, int64_t per, int64_t n, float *out,                \
                               const gemm_fuse *f)                                            \
    {                                                                                         \
        __m256 r[C][2];                                                                       \
        const float *bp[C];                                                                   \
        UNROLL for (int c = 0; c < C; c++) {                                                  \
            bp[c] = b + (p0 + c * per) * k * 16;                                              \
            r[c][0] = r[c][1] = _mm256_setzero_ps();                                          \
        }                                                                                     \
        for (int64_t p = 0; p < k; p++) {                                                     \
            __m256 av = _mm256_set1_ps(a[p * csa]);                                           \
            UNROLL for (int c = 0; c < C; c++) UNROLL for (int v = 0; v < 2; v++)             \
                r[c][v] = _mm256_fmadd_ps(av, _mm256_load_ps(bp[c] + p * 16 + 8 * v), r[c][v]); \
        }                                                                                     \
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                       \
        UNROLL for (int c = 0; c < C; c++) {                                                  \
            int64_t j0 = (p0 + c * per) * 16;                                                 \
            gemm_fuse fp = f ? gemm_fuse_at_col(f, j0) : (gemm_fuse){0};                      \
            UNROLL for (int v = 0; v < 2; v++) {                                              \
                int64_t left = n - j0 - 8 * v;                                                \
                if (left <= 0) break;                                                         \
                __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(left >= 8 ? 8 : (int)left), lane); \
                __m256 x = f ? fuse256(r[c][v], &fp, 0, 8 * v, mk) : r[c][v];                 \
                _mm256_maskstore_ps(out + j0 + 8 * v, mk, x);                                 \
            }                                                                                 \
        }                                                                                     \
    }
GV256(1) GV256(2) GV256(3) GV256(4) GV256(5) GV256(6)
const gemm_gemv_fn gemm_gemv_avx2_16[GEMM_GEMV_NS256] = {gv256_1, gv256_2, gv256_3,
                                                         gv256_4, gv256_5, gv256_6};

GEMM_UKR(gemm_ukr_avx2_6x16) { ukr6x16(k, a, b, c, ldc, acc, f); }

/* Row-major A into MR-row panels (gemm_pack.h): 8 rows by 8 k transposed in
 * registers, each k's w values stored under a mask; the last kb % 8 k one by one. */
T256 void gemm_pack_rows_avx2(int w, const float *const *s, int64_t kb, float *d)
{
    int64_t p = 0;
    for (; p + 8 <= kb; p += 8)
        for (int g = 0; g < w; g += 8) {
            int n = w - g < 8 ? w - g : 8;
            __m256 r[8], t[8];
            UNROLL for (int i = 0; i < 8; i++) r[i] = i < n ? _mm256_loadu_ps(s[g + i] + p) : _mm256_setzero_ps();
            UNROLL for (int i = 0; i < 4; i++) {
                t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
                t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
            }
            UNROLL for (int i = 0; i < 2; i++) {
                r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
                r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
                r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
                r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
            }
            /* r[4i + j]'s 128-bit half h: column 4h + j of rows 4i..4i+3 */
            __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            UNROLL for (int j = 0; j < 4; j++) {
                _mm256_maskstore_ps(d + (p + j) * w + g, mk, _mm256_permute2f128_ps(r[j], r[4 + j], 0x20));
                _mm256_maskstore_ps(d + (p + 4 + j) * w + g, mk, _mm256_permute2f128_ps(r[j], r[4 + j], 0x31));
            }
        }
    for (; p < kb; p++)
        for (int i = 0; i < w; i++) d[p * w + i] = s[i][p];
}
