/* AVX-512 GEMM micro-kernels: C rows broadcast from packed A, NR columns
 * as NV vectors from packed B. In zmm: 14x32 keeps 28 accumulators (of 32
 * registers), 28x16 as many with one B load per k; in ymm with VL's 32
 * registers (at the end): 12x16 and 6x32. Zen 4 runs each 512-bit FMA as
 * two 256-bit halves, so which wins is measured (gemm_table.c). */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm_kern.h"
#include "kernels/gemm_pack.h"

#define T512 __attribute__((target("avx512f,fma")))
#define UNROLL _Pragma("GCC unroll 32")

#include "kernels/gemm_fuse512.h"

/* The packed path's zmm micro-kernels. Every line of the C tile is
 * prefetched before the loop (NV lines a row, not the first one only) and
 * B's micro-panel 16 k ahead: each jr step brings a new B micro-panel and C
 * strip from L2 or L3; measured 1.02x to 1.13x on the packed path (A packed,
 * 512^3 to 2048^3 and ResNet's 3136x64x576, 784x128x1152; bench/RESULTS.md,
 * "Native GEMM: prefetch on the packed path, and the captured shapes on CPU
 * time"). */
#define UKR512(MR, NV)                                                                        \
    T512 static void ukr512_##MR##x##NV(int64_t k, const float *a, const float *b, float *c,  \
                                        int64_t ldc, int acc, const gemm_fuse *f)             \
    {                                                                                         \
        __m512 r[MR][NV];                                                                     \
        UNROLL for (int i = 0; i < MR; i++) UNROLL for (int j = 0; j < NV; j++) r[i][j] =     \
            _mm512_setzero_ps();                                                              \
        UNROLL for (int i = 0; i < MR; i++) UNROLL for (int j = 0; j < NV; j++)               \
            _mm_prefetch((const char *)(c + i * ldc + 16 * j), _MM_HINT_T0);                  \
        for (int64_t p = 0; p < k; p++) {                                                     \
            __m512 bv[NV];                                                                    \
            UNROLL for (int j = 0; j < NV; j++) {                                             \
                _mm_prefetch((const char *)(b + (p + 16) * NV * 16 + 16 * j), _MM_HINT_T0);   \
                bv[j] = _mm512_load_ps(b + p * NV * 16 + 16 * j);                             \
            }                                                                                 \
            UNROLL for (int i = 0; i < MR; i++) {                                             \
                __m512 av = _mm512_set1_ps(a[p * MR + i]);                                    \
                UNROLL for (int j = 0; j < NV; j++) r[i][j] = _mm512_fmadd_ps(av, bv[j], r[i][j]); \
            }                                                                                 \
        }                                                                                     \
        enum { TM = MR, TN = NV };                                                            \
        gemm_fuse fl = f ? *f : (gemm_fuse){.scale = 1.0f};                                   \
        __m512 bc[NV], lo = _mm512_set1_ps(fl.lo), hi = _mm512_set1_ps(fl.hi);                \
        UNROLL for (int j = 0; j < NV; j++) bc[j] = fuse512_bias(&fl, 16 * j, 0xffff);        \
        FORM_SWITCH(gemm_fuse_form(f), UKR512_STORE)                                          \
    }
#define UKR512_STORE(FORM) /* TM x TN: the tile's MR x NV */                                  \
    UNROLL for (int i = 0; i < TM; i++) UNROLL for (int j = 0; j < TN; j++) {                 \
        float *o = c + i * ldc + 16 * j;                                                      \
        __m512 v = acc ? _mm512_add_ps(_mm512_loadu_ps(o), r[i][j]) : r[i][j];                \
        _mm512_storeu_ps(o, fuse512_f(v, FORM, &fl, bc[j], lo, hi, i, 16 * j, 0xffff));        \
    }

UKR512(14, 2)
UKR512(28, 1)

/* Skinny: M rows of A read in place against NV vectors of B's columns,
 * vector j from the packed panel (NR wide) that holds columns 16j..16j+15,
 * its last vector stored under a mask when nc ends inside it. B's lines are
 * prefetched 32 rows ahead past M = 2; at M 1 and 2 a prefetch per line
 * nearly doubles the load port's work per FMA and measured slower
 * (1x256x256 1.15x to 1.2x without, B from memory unchanged). There, B
 * streaming from memory, K is instead cut in up to 4 parts read side by
 * side (GEMM_SK_SPLIT, 16 accumulators at most, summed at the end): one
 * core's read bandwidth grows with the streams the hardware prefetcher follows at
 * once (a vector sum over 1 GiB on Ice Lake-SP: 11.4 GB/s as one stream,
 * 14.0 as four, 15.1 as eight), and a GEMV from 2 panels (2 streams) to 4
 * parts of them (8) read 1.1x the bytes per second (bench/RESULTS.md,
 * "Decoders: the float32 GEMV's streams"). Past M = 2 a call may also
 * prefetch its share of the next width's B into L2 (gemm_fuse.pf, one line
 * per 4 k: gemm.c's skinny says which). */
#define SK_STEP(NR, NV, M, s, q)                                                                       \
    do {                                                                                      \
        __m512 bv[NV];                                                                        \
        UNROLL for (int j = 0; j < NV; j++) { /* each 64-byte line of B's row */             \
            if (M > 2) _mm_prefetch((const char *)(bp[j] + ((q) + 32) * NR), _MM_HINT_T0);    \
            bv[j] = _mm512_load_ps(bp[j] + (q) * NR);                                         \
        }                                                                                     \
        UNROLL for (int i = 0; i < M; i++) {                                                  \
            __m512 av = _mm512_set1_ps(a[i * rsa + (q) * csa]);                               \
            UNROLL for (int j = 0; j < NV; j++) r[s][i][j] = _mm512_fmadd_ps(av, bv[j], r[s][i][j]); \
        }                                                                                     \
    } while (0)
#define SK512(NR, NV, M)                                                                      \
    T512 static void sk512_##NR##_##NV##_##M(int64_t k, int nc, const float *a, int64_t rsa,  \
                                             int64_t csa, const float *b, int64_t sb,         \
                                             float *out, int64_t ldo, const gemm_fuse *f)     \
    {                                                                                         \
        enum { S = GEMM_SK_SPLIT(M, NV, 16) };                                                         \
        __m512 r[S][M][NV];                                                                   \
        const float *bp[NV];                                                                  \
        UNROLL for (int j = 0; j < NV; j++) bp[j] = b + (16 * j / NR) * sb + (16 * j) % NR;   \
        UNROLL for (int s = 0; s < S; s++) UNROLL for (int i = 0; i < M; i++)                 \
            UNROLL for (int j = 0; j < NV; j++) r[s][i][j] = _mm512_setzero_ps();             \
        const int64_t kp = k / S; /* part s: k in [s kp, (s + 1) kp), the rest on part 0 */   \
        const char *pf = f && S == 1 ? f->pf : NULL; /* the next width's lines into L2 */      \
        const int64_t npf = pf ? f->npf : 0;                                                  \
        for (int64_t p = 0; p < kp; p++) {                                                    \
            if (S == 1 && (p & 3) == 0 && (p >> 2) < npf) _mm_prefetch(pf + (p >> 2) * 64, _MM_HINT_T1); \
            UNROLL for (int s = 0; s < S; s++) SK_STEP(NR, NV, M, s, s * kp + p);             \
        }                                                                                     \
        for (int64_t p = S * kp; p < k; p++) SK_STEP(NR, NV, M, 0, p);                                   \
        UNROLL for (int s = 1; s < S; s++) UNROLL for (int i = 0; i < M; i++)                 \
            UNROLL for (int j = 0; j < NV; j++) r[0][i][j] = _mm512_add_ps(r[0][i][j], r[s][i][j]); \
        __mmask16 tail = (__mmask16)(nc >= 16 * NV ? 0xffff : (1u << (nc - 16 * (NV - 1))) - 1); \
        enum { TM = M, TN = NV };                                                             \
        gemm_fuse fl = f ? *f : (gemm_fuse){.scale = 1.0f};                                   \
        __m512 bc[NV], lo = _mm512_set1_ps(fl.lo), hi = _mm512_set1_ps(fl.hi);                \
        UNROLL for (int j = 0; j < NV; j++) bc[j] = fuse512_bias(&fl, 16 * j, j == NV - 1 ? tail : 0xffff); \
        FORM_SWITCH(gemm_fuse_form(f), SK512_STORE)                                           \
    }
#define SK512_STORE(FORM) /* TM x TN: the call's M x NV */                                     \
    UNROLL for (int i = 0; i < TM; i++) UNROLL for (int j = 0; j < TN; j++) {                 \
        __mmask16 mk = j == TN - 1 ? tail : 0xffff;                                           \
        _mm512_mask_storeu_ps(out + i * ldo + 16 * j, mk,                                     \
                              fuse512_f(r[0][i][j], FORM, &fl, bc[j], lo, hi, i, 16 * j, mk)); \
    }

/* Skinny at one vector of columns (N <= 16) with A's rows contiguous (csa
 * 1): the other kernels load one A value per FMA, so two loads (A and a
 * share of B) per FMA leave the FMA ports idle. Here one 64-bit load
 * broadcasts the pair a[i][p], a[i][p+1] to the lanes (even, odd), and B's
 * rows p and p+1 are interleaved to match (cols 0-7 in lo, 8-15 in hi),
 * so each load feeds two FMAs; the lane pairs are summed at the end. M up
 * to 12 rows (24 accumulators). */
#define SKP512(M)                                                                             \
    T512 static void skp512_##M(int64_t k, int nc, const float *a, int64_t rsa, const float *b, \
                                int64_t nr, float *out, int64_t ldo, const gemm_fuse *f)      \
    {                                                                                         \
        const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23); \
        const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31); \
        __m512 lo[M], hi[M];                                                                  \
        UNROLL for (int i = 0; i < M; i++) lo[i] = hi[i] = _mm512_setzero_ps();               \
        int64_t p = 0;                                                                        \
        for (; p + 2 <= k; p += 2) {                                                          \
            _mm_prefetch((const char *)(b + (p + 32) * nr), _MM_HINT_T0);                     \
            _mm_prefetch((const char *)(b + (p + 33) * nr), _MM_HINT_T0);                     \
            __m512 b0 = _mm512_load_ps(b + p * nr), b1 = _mm512_load_ps(b + (p + 1) * nr);   \
            __m512 bl = _mm512_permutex2var_ps(b0, ilo, b1), bh = _mm512_permutex2var_ps(b0, ihi, b1); \
            UNROLL for (int i = 0; i < M; i++) {                                              \
                double d;                                                                     \
                memcpy(&d, a + i * rsa + p, sizeof d);                                        \
                __m512 av = _mm512_castpd_ps(_mm512_set1_pd(d));                              \
                lo[i] = _mm512_fmadd_ps(av, bl, lo[i]);                                       \
                hi[i] = _mm512_fmadd_ps(av, bh, hi[i]);                                       \
            }                                                                                 \
        }                                                                                     \
        if (p < k) { /* the last k alone: B's row p + 1 as zeros */                           \
            __m512 b0 = _mm512_load_ps(b + p * nr), z = _mm512_setzero_ps();                  \
            __m512 bl = _mm512_permutex2var_ps(b0, ilo, z), bh = _mm512_permutex2var_ps(b0, ihi, z); \
            UNROLL for (int i = 0; i < M; i++) {                                              \
                __m512 av = _mm512_set1_ps(a[i * rsa + p]);                                   \
                lo[i] = _mm512_fmadd_ps(av, bl, lo[i]);                                       \
                hi[i] = _mm512_fmadd_ps(av, bh, hi[i]);                                       \
            }                                                                                 \
        }                                                                                     \
        const __m512i iev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); \
        const __m512i iod = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31); \
        __mmask16 mk = (__mmask16)(nc >= 16 ? 0xffff : (1u << nc) - 1);                       \
        enum { TM = M };                                                                      \
        gemm_fuse fl = f ? *f : (gemm_fuse){.scale = 1.0f};                                   \
        __m512 bc = fuse512_bias(&fl, 0, mk), vlo = _mm512_set1_ps(fl.lo), vhi = _mm512_set1_ps(fl.hi); \
        FORM_SWITCH(gemm_fuse_form(f), SKP512_STORE)                                          \
    }

#define SKP512_STORE(FORM) /* TM: the call's M */                                              \
    UNROLL for (int i = 0; i < TM; i++) {                                                     \
        __m512 v = _mm512_add_ps(_mm512_permutex2var_ps(lo[i], iev, hi[i]),                   \
                                 _mm512_permutex2var_ps(lo[i], iod, hi[i]));                  \
        _mm512_mask_storeu_ps(out + i * ldo, mk, fuse512_f(v, FORM, &fl, bc, vlo, vhi, i, 0, mk)); \
    }

SKP512(1) SKP512(2) SKP512(3) SKP512(4) SKP512(5) SKP512(6)
SKP512(7) SKP512(8) SKP512(9) SKP512(10) SKP512(11) SKP512(12)

typedef void (*skp_fn)(int64_t, int, const float *, int64_t, const float *, int64_t, float *, int64_t,
                       const gemm_fuse *);
static const skp_fn skp[12] = {skp512_1, skp512_2, skp512_3, skp512_4,  skp512_5,  skp512_6,
                               skp512_7, skp512_8, skp512_9, skp512_10, skp512_11, skp512_12};

/* Rows per call at 1 to 4 vectors: 16, 12, 8 and 6 (16 to 24 accumulators). */
#define SK_1TO6(X, NR, NV) X(NR, NV, 1) X(NR, NV, 2) X(NR, NV, 3) X(NR, NV, 4) X(NR, NV, 5) X(NR, NV, 6)
#define SK_1TO8(X, NR, NV) SK_1TO6(X, NR, NV) X(NR, NV, 7) X(NR, NV, 8)
#define SK_1TO12(X, NR, NV) SK_1TO8(X, NR, NV) X(NR, NV, 9) X(NR, NV, 10) X(NR, NV, 11) X(NR, NV, 12)
#define SK_1TO16(X, NR, NV) SK_1TO12(X, NR, NV) X(NR, NV, 13) X(NR, NV, 14) X(NR, NV, 15) X(NR, NV, 16)
#define SK_ALL(X, NR) SK_1TO16(X, NR, 1) SK_1TO12(X, NR, 2) SK_1TO8(X, NR, 3) SK_1TO6(X, NR, 4)
#define SK_DEF(NR, NV, M) SK512(NR, NV, M)
#define SK_PTR(NR, NV, M) [NV - 1][M - 1] = sk512_##NR##_##NV##_##M,
SK_ALL(SK_DEF, 32)
SK_ALL(SK_DEF, 16)

typedef void (*sk_fn)(int64_t, int, const float *, int64_t, int64_t, const float *, int64_t, float *,
                      int64_t, const gemm_fuse *);
static const sk_fn sk32[4][16] = {SK_ALL(SK_PTR, 32)};
static const sk_fn sk16[4][16] = {SK_ALL(SK_PTR, 16)};

GEMM_SKINNY(gemm_skinny_avx512_32)
{
    if (nc <= 16 && csa == 1 && m <= 12) skp[m - 1](k, nc, a, rsa, b, 32, out, ldo, f);
    else sk32[(nc + 15) / 16 - 1][m - 1](k, nc, a, rsa, csa, b, sb, out, ldo, f);
}

GEMM_SKINNY(gemm_skinny_avx512_16)
{
    if (nc <= 16 && csa == 1 && m <= 12) skp[m - 1](k, nc, a, rsa, b, 16, out, ldo, f);
    else sk16[(nc + 15) / 16 - 1][m - 1](k, nc, a, rsa, csa, b, sb, out, ldo, f);
}

/* A row's whole N in one call at 5 and 6 vectors (N 65 to 96) by
 * GEMM_WIDE_ACC / NV = 4 rows (20 and 24 accumulators): the skinny kernel
 * with more vectors, for rows outer at small K (gemm_config.order 4),
 * where a row in calls of 4 vectors left its last call a vector or two of
 * columns (N = 96: 6 x 64 then 6 x 32, 12 accumulators). At 7 to 12
 * vectors (3 and 2 rows a call) it measured 0.52x to 0.71x the calls of 4
 * (bench/RESULTS.md, issue 15, branch gdb3), so the table stops at 6. */
#define SKW_4(X, NV) X(32, NV, 1) X(32, NV, 2) X(32, NV, 3) X(32, NV, 4)
#define SKW_ALL(X) SKW_4(X, 5) SKW_4(X, 6)
#define SKW_PTR(NR, NV, M) [NV - 5][M - 1] = sk512_##NR##_##NV##_##M,
SKW_ALL(SK_DEF)
static const sk_fn skw32[2][4] = {SKW_ALL(SKW_PTR)};

GEMM_SKINNY(gemm_skinny_wide_avx512_32)
{
    skw32[(nc + 15) / 16 - 5][m - 1](k, nc, a, rsa, csa, b, sb, out, ldo, f);
}

/* The GEMV (gemm_gemv_fn): C panels of NR / 16 vectors side by side, one
 * accumulator per vector (24 at C 12 of 32-wide panels: at one row B comes
 * from memory with an FMA per 64-byte line, so latency chains do not
 * matter), each panel's loads a stream of its own. The epilogue per
 * panel, its pointers moved to the panel's first column. 12 runs read
 * 1.02x to 1.03x the bytes per second of 8 (bench/RESULTS.md). */
#define GV512(NR, C)                                                                          \
    T512 static void gv512_##NR##_##C(int64_t k, const float *a, int64_t csa, const float *b, \
                                      int64_t p0, int64_t per, int64_t n, float *out,         \
                                      const gemm_fuse *f)                                     \
    {                                                                                         \
        enum { NV = NR / 16 };                                                                \
        __m512 r[C][NV];                                                                      \
        const float *bp[C];                                                                   \
        UNROLL for (int c = 0; c < C; c++) {                                                  \
            bp[c] = b + (p0 + c * per) * k * NR;                                              \
            UNROLL for (int v = 0; v < NV; v++) r[c][v] = _mm512_setzero_ps();                \
        }                                                                                     \
        for (int64_t p = 0; p < k; p++) {                                                     \
            __m512 av = _mm512_set1_ps(a[p * csa]);                                           \
            UNROLL for (int c = 0; c < C; c++) UNROLL for (int v = 0; v < NV; v++)            \
                r[c][v] = _mm512_fmadd_ps(av, _mm512_load_ps(bp[c] + p * NR + 16 * v), r[c][v]); \
        }                                                                                     \
        UNROLL for (int c = 0; c < C; c++) {                                                  \
            int64_t j0 = (p0 + c * per) * NR;                                                 \
            gemm_fuse fp = f ? gemm_fuse_at_col(f, j0) : (gemm_fuse){0};                      \
            UNROLL for (int v = 0; v < NV; v++) {                                             \
                int64_t left = n - j0 - 16 * v;                                               \
                if (left <= 0) break;                                                         \
                __mmask16 mk = (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1);           \
                __m512 x = f ? fuse512(r[c][v], &fp, 0, 16 * v, mk) : r[c][v];                \
                _mm512_mask_storeu_ps(out + j0 + 16 * v, mk, x);                              \
            }                                                                                 \
        }                                                                                     \
    }
#define GV512_ALL(NR) GV512(NR, 1) GV512(NR, 2) GV512(NR, 3) GV512(NR, 4) GV512(NR, 5) \
    GV512(NR, 6) GV512(NR, 7) GV512(NR, 8) GV512(NR, 9) GV512(NR, 10) GV512(NR, 11) GV512(NR, 12)
GV512_ALL(32)
GV512_ALL(16)
const gemm_gemv_fn gemm_gemv_avx512_32[GEMM_GEMV_NS512] = {gv512_32_1, gv512_32_2, gv512_32_3, gv512_32_4,
                                                           gv512_32_5, gv512_32_6, gv512_32_7, gv512_32_8, gv512_32_9, gv512_32_10, gv512_32_11, gv512_32_12};
const gemm_gemv_fn gemm_gemv_avx512_16[GEMM_GEMV_NS512] = {gv512_16_1, gv512_16_2, gv512_16_3, gv512_16_4,
                                                           gv512_16_5, gv512_16_6, gv512_16_7, gv512_16_8, gv512_16_9, gv512_16_10, gv512_16_11, gv512_16_12};

GEMM_UKR(gemm_ukr_avx512_14x32) { ukr512_14x2(k, a, b, c, ldc, acc, f); }
GEMM_UKR(gemm_ukr_avx512_28x16) { ukr512_28x1(k, a, b, c, ldc, acc, f); }

/* 256-bit vectors with AVX-512VL's 32 registers: Zen 4 splits 512-bit ops
 * in two anyway, so twice the accumulators of the AVX2 kernel in ymm. */
#define TVL __attribute__((target("avx512f,avx512vl,fma")))
#define FUSE256 fuse256vl
#define FUSE256_TARGET TVL
#include "kernels/gemm_fuse256.h"

#define UKRVL(MR, NV)                                                                         \
    TVL static void ukrvl_##MR##x##NV(int64_t k, const float *a, const float *b, float *c,    \
                                      int64_t ldc, int acc, const gemm_fuse *f)               \
    {                                                                                         \
        __m256 r[MR][NV];                                                                     \
        UNROLL for (int i = 0; i < MR; i++) UNROLL for (int j = 0; j < NV; j++) r[i][j] =     \
            _mm256_setzero_ps();                                                              \
        UNROLL for (int i = 0; i < MR; i++) _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0); \
        for (int64_t p = 0; p < k; p++) {                                                     \
            __m256 bv[NV];                                                                    \
            UNROLL for (int j = 0; j < NV; j++) bv[j] = _mm256_load_ps(b + p * NV * 8 + 8 * j); \
            UNROLL for (int i = 0; i < MR; i++) {                                             \
                __m256 av = _mm256_broadcast_ss(a + p * MR + i);                              \
                UNROLL for (int j = 0; j < NV; j++) r[i][j] = _mm256_fmadd_ps(av, bv[j], r[i][j]); \
            }                                                                                 \
        }                                                                                     \
        enum { TM = MR, TN = NV };                                                            \
        const __m256i all = _mm256_set1_epi32(-1);                                            \
        gemm_fuse fl = f ? *f : (gemm_fuse){.scale = 1.0f};                                   \
        __m256 bc[NV], lo = _mm256_set1_ps(fl.lo), hi = _mm256_set1_ps(fl.hi);                \
        UNROLL for (int j = 0; j < NV; j++) bc[j] = fuse256vl_bias(&fl, 8 * j, all);          \
        FORM_SWITCH(gemm_fuse_form(f), UKRVL_STORE)                                           \
    }
#define UKRVL_STORE(FORM) /* TM x TN: the tile's MR x NV */                                   \
    UNROLL for (int i = 0; i < TM; i++) UNROLL for (int j = 0; j < TN; j++) {                 \
        float *o = c + i * ldc + 8 * j;                                                       \
        __m256 v = acc ? _mm256_add_ps(_mm256_loadu_ps(o), r[i][j]) : r[i][j];                \
        _mm256_storeu_ps(o, fuse256vl_f(v, FORM, &fl, bc[j], lo, hi, i, 8 * j, all));         \
    }

UKRVL(12, 2)
UKRVL(6, 4)
GEMM_UKR(gemm_ukr_avx512vl_12x16) { ukrvl_12x2(k, a, b, c, ldc, acc, f); }
GEMM_UKR(gemm_ukr_avx512vl_6x32) { ukrvl_6x4(k, a, b, c, ldc, acc, f); }

/* Row-major A into MR-row panels (gemm_pack.h): 16 rows by 16 k loaded,
 * transposed in registers (unpack, shuffle, then 128-bit lanes), each k's
 * w values stored under a mask; the last kb % 16 k one by one. */
T512 static inline void tr16x16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    /* r[4i + j]'s 128-bit lane L: column 4L + j of rows 4i..4i+3 */
    for (int j = 0; j < 4; j++) {
        __m512 x0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), x1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
        __m512 y0 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88),
               y1 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
        t[j] = _mm512_shuffle_f32x4(x0, y0, 0x88);
        t[8 + j] = _mm512_shuffle_f32x4(x0, y0, 0xdd);
        t[4 + j] = _mm512_shuffle_f32x4(x1, y1, 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(x1, y1, 0xdd);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}

T512 void gemm_pack_rows_avx512(int w, const float *const *s, int64_t kb, float *d)
{
    int64_t p = 0;
    for (; p + 16 <= kb; p += 16)
        for (int g = 0; g < w; g += 16) {
            int n = w - g < 16 ? w - g : 16;
            __m512 r[16];
            UNROLL for (int i = 0; i < 16; i++) r[i] = i < n ? _mm512_loadu_ps(s[g + i] + p) : _mm512_setzero_ps();
            tr16x16(r);
            __mmask16 mk = (__mmask16)((1u << n) - 1);
            UNROLL for (int q = 0; q < 16; q++) _mm512_mask_storeu_ps(d + (p + q) * w + g, mk, r[q]);
        }
    for (; p < kb; p++)
        for (int i = 0; i < w; i++) d[p * w + i] = s[i][p];
}
