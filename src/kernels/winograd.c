/* Winograd F(4x4, 3x3) and F(2x2, 3x3) convolutions (winograd.h): per block
 * of tiles, the input transform into V (winograd_tmpl.h, one instance per
 * ISA and tile), the 36 (16) GEMMs against the packed U (gemm_f32, A read in
 * place), then the output transform with the epilogue. Blocks run on the
 * threads, each with its own V and M in the scratch. */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/status.h"
#include "kernels/isa.h"
#include "kernels/prefetch.h"
#include "kernels/qgemm.h"
#include "kernels/winograd.h"

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/winograd_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/winograd_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/winograd_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*kwg_in_fn)(const float *const *p, int64_t c, float *v, int64_t vs);
typedef void (*kwg_in_u8_fn)(const uint8_t *const *p, int64_t c, int32_t z, const int16_t *zp, uint8_t *a,
                             int64_t as);

/* kwg_conv_u8's input transform, in whole numbers: d = x - z (p[k] a row of z
 * outside the image), V = B^T d B (|V| <= 1020), then each position k's
 * uint8 V / 4 rounded half to even ((V + 1 + (V >> 2 & 1)) >> 2: rounded half
 * up, the ties' bias cost resnet18 3 dB) plus its zero point zp[k] (4:
 * kwg_vrange_u8's scale), saturated to [0, 255], into a[k * as + ci].
 * Computed as B^T x B - 4 z at position 5 only (B^T's row sums are 0, 2, 0,
 * 0: the same V, one subtraction instead of 16) and (V' + (V' >> 2 & 1) +
 * 1 + 4 zp[k]) >> 2 (V' = V; a multiple of 4 added before the shift is its
 * zp after it): the same bytes in 5 operations a position instead of 7.
 * The same bytes at every ISA: int16 vectors of 32 (AVX-512) or 16 (AVX2)
 * channels, one at a time on the portable path. u8_in_consts makes cz. */
static void u8_in_consts(int32_t z, const int16_t *zp, int16_t *cz)
{
    for (int k = 0; k < 16; k++) cz[k] = (int16_t)(1 + 4 * zp[k] - (k == 5 ? 4 * z : 0));
}

static void in_u8_portable(const uint8_t *const *p, int64_t c, int32_t z, const int16_t *zp, uint8_t *a,
                           int64_t as)
{
    int16_t cz[16];
    u8_in_consts(z, zp, cz);
    for (int64_t ci = 0; ci < c; ci++) {
        int32_t d[16], t[16];
        for (int k = 0; k < 16; k++) d[k] = p[k][ci];
        for (int j = 0; j < 4; j++) {
            t[j] = d[j] - d[8 + j];
            t[4 + j] = d[4 + j] + d[8 + j];
            t[8 + j] = d[8 + j] - d[4 + j];
            t[12 + j] = d[4 + j] - d[12 + j];
        }
        for (int i = 0; i < 4; i++) {
            const int32_t *r = t + 4 * i, v[4] = {r[0] - r[2], r[1] + r[2], r[2] - r[1], r[1] - r[3]};
            for (int j = 0; j < 4; j++) {
                int32_t q = (v[j] + ((v[j] >> 2) & 1) + cz[4 * i + j]) >> 2;
                a[(4 * i + j) * as + ci] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
            }
        }
    }
}

#if KISA_X86
#include <immintrin.h>
#define IN_U8_BODY(VEC, LOAD, ADD, SUB, SRAI, AND, SET1, STORE)                                 \
    {                                                                                           \
        VEC t[16]; /* a column's four pixels at a time: 16 + 4 vectors live, not 32 */          \
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {                                   \
            const VEC d0 = LOAD(p[j] + ci), d1 = LOAD(p[4 + j] + ci), d2 = LOAD(p[8 + j] + ci),  \
                      d3 = LOAD(p[12 + j] + ci);                                                \
            t[j] = SUB(d0, d2);                                                                 \
            t[4 + j] = ADD(d1, d2);                                                             \
            t[8 + j] = SUB(d2, d1);                                                             \
            t[12 + j] = SUB(d1, d3);                                                            \
        }                                                                                       \
        _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {                                   \
            const VEC *r = t + 4 * i;                                                           \
            const VEC v[4] = {SUB(r[0], r[2]), ADD(r[1], r[2]), SUB(r[2], r[1]), SUB(r[1], r[3])}; \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                                 \
                STORE(a + (4 * i + j) * as + ci,                                                \
                      SRAI(ADD(ADD(v[j], AND(SRAI(v[j], 2), one)), SET1(cz[4 * i + j])), 2));     \
        }                                                                                       \
    }

__attribute__((target("avx512f,avx512bw,avx512vl"))) static void in_u8_avx512(const uint8_t *const *p, int64_t c,
                                                                     int32_t z, const int16_t *zp,
                                                                     uint8_t *a, int64_t as)
{
    const __m512i one = _mm512_set1_epi16(1), lanes = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    int16_t cz[16];
    u8_in_consts(z, zp, cz);
    int64_t ci = 0;
    __mmask32 m = ~(__mmask32)0;
#define L512(q) _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, q))
/* packed with signed saturation to bytes, each 128-bit lane's 8 put side by side: vpmovuswb
 * to memory, what GCC made of max(v, 0) and a saturating narrow, took a third of the
 * transform's samples here (Zen 5) */
#define S512(q, v)                                                                              \
    do {                                                                                        \
        const __m256i b8 = _mm512_castsi512_si256(_mm512_permutexvar_epi64(lanes, _mm512_packus_epi16(v, v))); \
        if (m == (__mmask32)~0u) _mm256_storeu_si256((__m256i *)(q), b8);                        \
        else _mm256_mask_storeu_epi8(q, m, b8);                                                 \
    } while (0)
#define SET512(x) _mm512_set1_epi16(x)
    for (; ci < c; ci += 32) {
        if (c - ci < 32) m = (__mmask32)((1u << (c - ci)) - 1);
        IN_U8_BODY(__m512i, L512, _mm512_add_epi16, _mm512_sub_epi16, _mm512_srai_epi16, _mm512_and_si512, SET512,
                   S512)
    }
#undef L512
#undef S512
#undef SET512
}

__attribute__((target("avx2"))) static void in_u8_avx2(const uint8_t *const *p, int64_t c, int32_t z,
                                                      const int16_t *zp, uint8_t *a, int64_t as)
{
    const __m256i one = _mm256_set1_epi16(1);
    int16_t cz[16];
    u8_in_consts(z, zp, cz);
    const int64_t whole = c / 16 * 16;
#define L256(q) _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(q)))
#define S256(q, v)                                                                               \
    _mm_storeu_si128((__m128i *)(q),                                                             \
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0xd8)))
#define SET256(x) _mm256_set1_epi16(x)
    for (int64_t ci = 0; ci < whole; ci += 16)
        IN_U8_BODY(__m256i, L256, _mm256_add_epi16, _mm256_sub_epi16, _mm256_srai_epi16, _mm256_and_si256, SET256,
                   S256)
#undef L256
#undef S256
#undef SET256
    if (whole < c) { /* the last channels, one at a time */
        const uint8_t *q[16];
        for (int k = 0; k < 16; k++) q[k] = p[k] + whole;
        in_u8_portable(q, c - whole, z, zp, a + whole, as);
    }
}
#undef IN_U8_BODY
#endif
typedef void (*kwg_out_fn)(const float *m, int64_t ms, int64_t n, float *const *out, const int64_t *pix,
                           const gemm_epi *e, bool quick);
typedef struct kwg_impl {
    kisa isa;
    kwg_in_fn in, in2;    /* F(4x4)'s and F(2x2)'s */
    kwg_out_fn out, out2;
    kwg_in_u8_fn in2u8;   /* F(2x2)'s on uint8 (kwg_conv_u8) */
} kwg_impl;
static const kwg_impl kwg_impls[] = {
#if KISA_X86
    {KISA_AVX512, kwg_in_avx512, kwg2_in_avx512, kwg_out_avx512, kwg2_out_avx512, in_u8_avx512},
    {KISA_AVX2, kwg_in_avx2, kwg2_in_avx2, kwg_out_avx2, kwg2_out_avx2, in_u8_avx2},
#endif
    {KISA_PORTABLE, kwg_in_portable, kwg2_in_portable, kwg_out_portable, kwg2_out_portable, in_u8_portable},
};

int kwg_pos(kwg_tile t) { return t == KWG_F2 ? 16 : 36; }
int kwg_out(kwg_tile t) { return t == KWG_F2 ? 2 : 4; }

/* The interpolation points: 0, 1, -1, 1/2, -2 (and infinity) rather than
 * Lavin's 0, 1, -1, 2, -2. A float32 simulation of 400 tiles of 256
 * channels (ReLU'd normal inputs, He-scaled weights) gave the largest error
 * over the largest output 4.3e-6 against 1.04e-5 (512 channels: 5.2e-6
 * against 1.2e-5): under the tuner's float32 atol of 1e-5 of the output's
 * largest magnitude (tune/validate.h), which Lavin's points sat at (Barabasz
 * et al. 2020 found the same points). The matrices: winograd_tmpl.h and G
 * below, from the Toom-Cook construction on those points. */

/* A block's V and M (36 x tiles x (c + n) floats) about this many floats,
 * so that the GEMMs read them from L2; at least KWG_MIN_TILES tiles (the
 * GEMMs' rows), at most KWG_MAX_TILES. F(2x2) takes twice as many (16 x
 * tiles x (c + n) about KWG2_BLOCK_FLOATS): it runs on small planes, whose
 * few tiles should make one block, so that each U is read once (14x14 at
 * 256 channels: 49 tiles, 1.6 MB of V and M). */
#define KWG_BLOCK_FLOATS ((int64_t)1 << 18)
#define KWG2_BLOCK_FLOATS ((int64_t)1 << 19)
#define KWG_MIN_TILES 8
#define KWG_MAX_TILES 128

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

bool kwg_fits(const knhwc_geom *g)
{
    return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 &&
           g->oh > 0 && g->ow > 0 && g->c > 0;
}

void kwg_weights(kwg_tile tt, const float *w, int64_t c, int64_t n, float *u)
{
    static const double G4[6][3] = {{1, 0, 0},
                                    {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                    {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                    {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                    {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                    {0, 0, 1}};
    static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    const int T = tt == KWG_F2 ? 4 : 6;
    const double(*G)[3] = tt == KWG_F2 ? G2 : G4;
    for (int64_t ci = 0; ci < c; ci++)
        for (int64_t co = 0; co < n; co++) {
            double g[3][3], t[6][3];
            for (int k = 0; k < 9; k++) g[k / 3][k % 3] = w[(k * c + ci) * n + co];
            for (int i = 0; i < T; i++)
                for (int j = 0; j < 3; j++) t[i][j] = G[i][0] * g[0][j] + G[i][1] * g[1][j] + G[i][2] * g[2][j];
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    u[((T * i + j) * c + ci) * n + co] =
                        (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
        }
}

/* Tiles in all (images x tile rows x tile columns) and per block. */
static int64_t tiles_all(kwg_tile t, const knhwc_geom *g, int64_t images)
{
    const int o = kwg_out(t);
    return images * ((g->oh + o - 1) / o) * ((g->ow + o - 1) / o);
}

static int64_t tiles_block(kwg_tile t, const knhwc_geom *g, int64_t images, int64_t n)
{
    int64_t tb = (t == KWG_F2 ? KWG2_BLOCK_FLOATS : KWG_BLOCK_FLOATS) / (kwg_pos(t) * (g->c + n));
    tb = tb < KWG_MIN_TILES ? KWG_MIN_TILES : tb > KWG_MAX_TILES ? KWG_MAX_TILES : tb;
    const int64_t all = tiles_all(t, g, images);
    return tb < all ? tb : all > 0 ? all : 1;
}

/* The zero row (c floats, rounded to 16) and one thread's V and M. */
static bool thread_floats(kwg_tile t, const knhwc_geom *g, int64_t images, int64_t n, size_t *zero,
                          size_t *per)
{
    int64_t p, cn;
    if (__builtin_add_overflow(g->c, n, &cn) ||
        __builtin_mul_overflow(tiles_block(t, g, images, n), (int64_t)kwg_pos(t), &p) ||
        __builtin_mul_overflow(p, cn, &p) || __builtin_add_overflow(p, 15, &p) ||
        g->c > INT64_MAX - 15)
        return false;
    *zero = (size_t)((g->c + 15) / 16 * 16);
    *per = (size_t)(p / 16 * 16);
    return true;
}

bool kwg_scratch(kwg_tile t, const knhwc_geom *g, int64_t images, int64_t n, int threads,
                 size_t *floats)
{
    size_t zero, per, all;
    *floats = 0;
    if (!thread_floats(t, g, images, n, &zero, &per) ||
        __builtin_mul_overflow(per, (size_t)(threads > 1 ? threads : 1), &all) ||
        __builtin_add_overflow(all, zero, floats))
        return false;
    return true;
}

ait_status kwg_conv(kwg_tile tt, const knhwc_geom *g, int64_t images, const float *x,
                    const gemm_packed *u, int64_t n, float *y, int64_t ldy, const gemm_epi *epi,
                    float *scratch, int threads, ait_error *e)
{
    static const gemm_config in_place_a = {.pack_a = GEMM_PACKA_OFF, .threads = 1};
    size_t zf, per;
    if (!kwg_fits(g) || !thread_floats(tt, g, images, n, &zf, &per))
        return err_set(e, AIT_E_UNSUPPORTED, "winograd: not a 3x3 stride-1 convolution");
    const kwg_impl *im = KISA_PICK(kwg_impls);
    const kwg_in_fn tin = tt == KWG_F2 ? im->in2 : im->in;
    const kwg_out_fn tout = tt == KWG_F2 ? im->out2 : im->out;
    const int P = kwg_pos(tt), O = kwg_out(tt), T = O + 2; /* positions, outputs and inputs per axis */
    const int t = threads > 1 ? threads : 1;
    const int64_t tw = (g->ow + O - 1) / O, th = (g->oh + O - 1) / O;
    const int64_t per_img = tw * th, all = tiles_all(tt, g, images), tb = tiles_block(tt, g, images, n);
    const int64_t nb = (all + tb - 1) / tb, c = g->c, ohw = g->oh * g->ow;
    /* the common epilogue forms in the output transform, else gemm_epi_tile after it */
    const bool quick = !epi->scaled && epi->bias_mode != GEMM_BIAS_ROW && !epi->rlo &&
                       (epi->act == GEMM_ACT_NONE || epi->act == GEMM_ACT_RELU ||
                        epi->act == GEMM_ACT_CLIP);
    float *zero = scratch;
    memset(zero, 0, sizeof(float) * (size_t)c);
    ait_status st = AIT_OK;
#pragma omp parallel for num_threads(t) if (t > 1 && nb > 1) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        float *v = scratch + zf + (size_t)omp_get_thread_num() * per, *m = v + P * tb * c;
        const int64_t t0 = b * tb, nt = min64(tb, all - t0);
        const float *p[KWG_POS];
        for (int64_t i = 0; i < nt; i++) { /* the input transform, tile by tile */
            const int64_t tile = t0 + i, ii = tile / per_img, ty = tile % per_img / tw, tx = tile % tw;
            const float *xi = x + ii * g->h * g->w * g->cs + g->c0;
            for (int r = 0; r < T; r++)
                for (int q = 0; q < T; q++) {
                    const int64_t iy = ty * O - g->pt + r, ix = tx * O - g->pl + q;
                    p[T * r + q] = iy >= 0 && iy < g->h && ix >= 0 && ix < g->w ? xi + (iy * g->w + ix) * g->cs : zero;
                }
            tin(p, c, v + i * c, tb * c);
        }
        ait_status s = AIT_OK;
        for (int pos = 0; pos < P && s == AIT_OK; pos++) {
            gemm_args a = {.m = nt, .n = n, .k = c, .a = v + pos * tb * c, .rsa = c, .csa = 1,
                           .pb = &u[pos], .c = m + pos * tb * n, .ldc = n, .threads = 1,
                           .cfg = &in_place_a};
            s = gemm_f32(&a, e);
        }
        for (int64_t i = 0; i < nt && s == AIT_OK; i++) { /* the output transform */
            const int64_t tile = t0 + i, ii = tile / per_img, ty = tile % per_img / tw, tx = tile % tw;
            float *out[16];
            int64_t pix[16];
            for (int r = 0; r < O; r++)
                for (int q = 0; q < O; q++) {
                    const int64_t oy = ty * O + r, ox = tx * O + q;
                    pix[O * r + q] = ii * ohw + oy * g->ow + ox;
                    out[O * r + q] = oy < g->oh && ox < g->ow ? y + pix[O * r + q] * ldy : NULL;
                }
            tout(m + i * n, tb * n, n, out, pix, epi, quick);
            for (int r = 0; !quick && r < O && ty * O + r < g->oh; r++)
                gemm_epi_tile(epi, out[O * r], ldy, pix[O * r], 0, (int)min64(O, g->ow - tx * O), (int)n);
        }
        if (s != AIT_OK) {
#pragma omp critical
            st = s;
        }
    }
    return st;
}

/* Floats between kwg_conv_u8's positions of M past their tb x n: the
 * output transform reads a tile's 16 rows, one from each position; tb x n
 * floats apart (64 KiB at resnet18's layers 2 to 4) they all fell in one
 * set of L1 (and of L2). */
#define U8_MPAD 16

/* kwg_conv_u8's scratch: the zero point's row (c bytes), then per thread a
 * block's 16 uint8 matrices (tiles x kp bytes each, 64 apart), its M
 * (16 x (tiles x n + U8_MPAD) floats), one tile's four output rows (4 x n floats) and
 * its four rows of a uint8 residual in float (4 x n floats). */
static bool u8_sizes(const knhwc_geom *g, int64_t images, int64_t n, size_t *zero, size_t *a, size_t *per)
{
    const int64_t tb = tiles_block(KWG_F2, g, images, n);
    int64_t mat, ab, mb, ob, total;
    if (g->c > INT64_MAX - 64 || n < 1 || __builtin_mul_overflow((g->c + 3) / 4 * 4, tb, &ab) ||
        __builtin_add_overflow(ab, 127, &ab))
        return false;
    mat = ab = ab / 64 * 64; /* a matrix: tb rows of kp bytes, 64 more, to 64 */
    if (__builtin_mul_overflow(mat, (int64_t)16, &total) || __builtin_mul_overflow(tb, n, &mb) ||
        __builtin_add_overflow(mb, (int64_t)U8_MPAD, &mb) || /* a position's M, U8_MPAD more */
        __builtin_mul_overflow(mb, (int64_t)(16 * sizeof(float)), &mb) || __builtin_add_overflow(total, mb, &total) ||
        __builtin_mul_overflow(n, (int64_t)(8 * sizeof(float)), &ob) || __builtin_add_overflow(total, ob, &total) ||
        total > INT64_MAX - 128)
        return false;
    *zero = (size_t)((g->c + 63) / 64 * 64);
    *a = (size_t)ab;
    *per = (size_t)((total + 63) / 64 * 64);
    return true;
}

bool kwg_scratch_u8(const knhwc_geom *g, int64_t images, int64_t n, int threads, size_t *bytes)
{
    size_t zero, a, per, all;
    *bytes = 0;
    return u8_sizes(g, images, n, &zero, &a, &per) &&
           !__builtin_mul_overflow(per, (size_t)(threads > 1 ? threads : 1), &all) &&
           !__builtin_add_overflow(all, zero + 64, bytes);
}

void kwg_vrange_u8(int32_t z, float *scale, int32_t *zp)
{
    static const int bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
    const int lo = -z, hi = 255 - z; /* x - z */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int vlo = 0; /* V's least: each coefficient times lo or hi; its range is 4 x 255 wide */
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) {
                    const int c = bt[i][a] * bt[j][b];
                    vlo += c > 0 ? c * lo : c * hi;
                }
            scale[4 * i + j] = 4.0f;
            zp[4 * i + j] = (-vlo) >> 2; /* V = vlo to about 0, its largest to about 255 */
        }
}

/* Tiles ahead whose new pixels kwg_conv_u8's input transform prefetches:
 * its loads waited for them (a half of its samples at resnet18's layer2 at
 * batch 8, whose input leaves L2 while a block's M is written). */
#define U8_AHEAD 2

/* Tile `tile`'s two right columns of its four rows (the pixels the tile
 * after it in the row does not have yet) into L1. */
static void prefetch_new(const knhwc_geom *g, const uint8_t *x, int64_t tile, int64_t per_img, int64_t tw)
{
    const int64_t ii = tile / per_img, ty = tile % per_img / tw, tx = tile % tw;
    const int64_t ix0 = tx * 2 - g->pl + 2, ix1 = ix0 + 1 < g->w ? ix0 + 1 : ix0;
    if (ix0 < 0 || ix0 >= g->w) return;
    const uint8_t *xi = x + ii * g->h * g->w * g->cs + g->c0;
    for (int r = 0; r < 4; r++) {
        const int64_t iy = ty * 2 - g->pt + r;
        if (iy >= 0 && iy < g->h) kprefetch_run(xi + (iy * g->w + ix0) * g->cs, (ix1 - ix0) * g->cs + g->c, false);
    }
}

ait_status kwg_conv_u8(const knhwc_geom *g, int64_t images, const uint8_t *x, float xs, int32_t xz,
                       const void *u, size_t us, int64_t n, uint8_t *y, float ys, int32_t yz, float *yf,
                       int64_t ldy, const gemm_epi *epi, const kwg_res8 *res8, void *scratch, int threads,
                       ait_error *e)
{
    size_t zb, ab, per;
    if (!kwg_fits(g) || !u8_sizes(g, images, n, &zb, &ab, &per) || n > INT_MAX)
        return err_set(e, AIT_E_UNSUPPORTED, "winograd: not a 3x3 stride-1 convolution");
    if (res8 && (epi->res || epi->rlo || epi->bias_mode == GEMM_BIAS_ROW)) /* rows of its own (pix below) */
        return err_set(e, AIT_E_INVALID_ARG, "winograd: a uint8 residual with a float one, rows' ranges or row biases");
    qg_packed uv[16];
    for (int pos = 0; pos < 16; pos++) {
        TRY(qg_view((const char *)u + (size_t)pos * us, us, &uv[pos], e));
        if (uv[pos].scheme != QG_INT8DQ || uv[pos].k != g->c || uv[pos].n != n)
            return err_set(e, AIT_E_INVALID_ARG, "winograd: packed weights of another shape");
    }
    const kwg_impl *im = KISA_PICK(kwg_impls);
    const int t = threads > 1 ? threads : 1;
    const int64_t tw = (g->ow + 1) / 2, th = (g->oh + 1) / 2, per_img = tw * th;
    const int64_t all = tiles_all(KWG_F2, g, images), tb = tiles_block(KWG_F2, g, images, n);
    const int64_t nb = (all + tb - 1) / tb, c = g->c, kp = (c + 3) / 4 * 4, ohw = g->oh * g->ow;
    float sv[16];
    int32_t zv[16];
    int16_t zs[16];
    kwg_vrange_u8(xz, sv, zv);
    for (int k = 0; k < 16; k++) zs[k] = (int16_t)zv[k];
    const bool quick = !epi->scaled && epi->bias_mode != GEMM_BIAS_ROW && !epi->rlo &&
                       (epi->act == GEMM_ACT_NONE || epi->act == GEMM_ACT_RELU ||
                        epi->act == GEMM_ACT_CLIP);
    static const int64_t pix4[4] = {0, 1, 2, 3}; /* a tile's residual rows in rb */
    uint8_t *zero = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    memset(zero, (int)xz, (size_t)c);
    bool ok = true;
#pragma omp parallel for num_threads(t) if (t > 1 && nb > 1) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        uint8_t *a = zero + zb + (size_t)omp_get_thread_num() * per;
        const int64_t mp = tb * n + U8_MPAD; /* M's positions apart */
        float *m = (float *)(a + 16 * ab), *o = m + 16 * mp, *rb = o + 4 * n;
        gemm_epi er = *epi; /* with res8: the residual from rb, the tile's pixel k its row k */
        if (res8) er.res = rb, er.ldr = n;
        const int64_t t0 = b * tb, nt = min64(tb, all - t0);
        const uint8_t *p[16];
        for (int64_t i = 0; i < nt; i++) { /* the input transform, tile by tile */
            const int64_t tile = t0 + i, ii = tile / per_img, ty = tile % per_img / tw, tx = tile % tw;
            const uint8_t *xi = x + ii * g->h * g->w * g->cs + g->c0;
            if (tile + U8_AHEAD < all) /* the pixels a later tile does not share with the one before */
                prefetch_new(g, x, tile + U8_AHEAD, per_img, tw);
            for (int r = 0; r < 4; r++)
                for (int q = 0; q < 4; q++) {
                    const int64_t iy = ty * 2 - g->pt + r, ix = tx * 2 - g->pl + q;
                    p[4 * r + q] = iy >= 0 && iy < g->h && ix >= 0 && ix < g->w ? xi + (iy * g->w + ix) * g->cs : zero;
                }
            im->in2u8(p, c, xz, zs, a + i * kp, ab);
        }
        bool good = true; /* V at scale xs * sv, zero point zv: M[pos][tile][co] in float */
        for (int pos = 0; pos < 16 && good; pos++)
            good = qgemm_u8_uni(&uv[pos], a + pos * ab, NULL, xs * sv[pos], zv[pos], nt, m + pos * mp, n, NULL,
                                0, 0, 0, NULL, 1);
        for (int64_t i = 0; i < nt && good; i++) { /* the output transform, then uint8 */
            const int64_t tile = t0 + i, ii = tile / per_img, ty = tile % per_img / tw, tx = tile % tw;
            float *out[4];
            int64_t pix[4];
            for (int r = 0; r < 2; r++)
                for (int q = 0; q < 2; q++) {
                    const int64_t oy = ty * 2 + r, ox = tx * 2 + q;
                    pix[2 * r + q] = ii * ohw + oy * g->ow + ox;
                    out[2 * r + q] = oy >= g->oh || ox >= g->ow ? NULL
                                     : y                    ? o + (2 * r + q) * n
                                                            : yf + pix[2 * r + q] * ldy;
                }
            for (int k = 0; res8 && k < 4; k++)
                if (out[k]) qg_dequant_u8(res8->q + pix[k] * n, n, res8->s, res8->z, rb + k * n);
            const int64_t *pr = res8 ? pix4 : pix;
            im->out2(m + i * n, mp, n, out, pr, &er, quick);
            for (int r = 0; !quick && r < 2 && ty * 2 + r < g->oh; r++)
                gemm_epi_tile(&er, out[2 * r], y ? n : ldy, pr[2 * r], 0, (int)min64(2, g->ow - tx * 2), (int)n);
            for (int k = 0; y && k < 4; k++)
                if (out[k]) qg_requant_u8(out[k], n, ys, yz, y + pix[k] * n);
        }
        if (!good) {
#pragma omp critical
            ok = false;
        }
    }
    return ok ? AIT_OK : err_set(e, AIT_E_INVALID_ARG, "winograd: the int8 GEMM refused its operands");
}
