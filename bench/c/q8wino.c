/* The prototype the library's kwg_conv_u8 (kernels/winograd.h) came from, kept as a
 * measurement of the form (its transforms are its own: V scaled per position from the image's
 * largest |V|, by vpmulhrsw; the library's by its bounds, a shift): a static int8 3x3 stride-1 Conv (pads 1) on a
 * uint8 channels-last image into uint8 with bias and Relu, as the native backend runs it
 * (the implicit GEMM: knhwc_pad_u8, row pointers, qgemm_u8_uni's VNNI kernel) against the same
 * Conv by Winograd's F(2x2, 3x3) in int8: each 4x4 tile's input transform B^T d B in int16
 * (d = q - z), requantised to int8 per position (16 scales, here the largest |V| of the image
 * itself, +128 to uint8: AVX-512BW `vpmulhrsw` and a saturating narrow), 16 GEMMs of K = C
 * (qgemm_u8_uni, the same kernel, B the transformed weights G g G^T quantised per column and
 * position, float C, a tile's 16 positions side by side), then the output transform A^T M A,
 * bias, Relu and the requantisation. What it says: how much of the direct Conv's time the
 * Winograd form would take at resnet18's 3x3 shapes (bench/RESULTS.md, branch r8); the accuracy
 * of the int8 transform on the whole model is bench/q8_wino_acc.py's. The transforms here are
 * plain (per tile, no sharing of the overlapping columns).
 *
 * usage: bench-q8wino ROUNDS N:H:C:M[:BLK]...   (N images of H x H x C, M output channels;
 *        BLK: tiles a block, default 8192 / M, each position's floats 32 KiB)
 * Prints per shape the Winograd floats' SQNR against the direct floats (bias, no Relu), the
 * medians of the direct and the Winograd runs (alternated, this thread's CPU time), their
 * ratio, and the Winograd's parts (input transform, GEMMs, output transform) on one run. Needs
 * AVX-512BW (the input transform); exits 0 with a note without it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>
#include "kernels/gemm.h"
#include "kernels/nhwc.h"
#include "kernels/qgemm.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
static void *al(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "bench-q8wino: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    memset(p, 0, (n + 63) / 64 * 64);
    return p;
}
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

typedef struct {
    int64_t N, H, C, M, T, th, blk;
    const uint8_t *x;
    float sin, ys, *bias;
    qg_packed U[16];
    float sp[16];     /* per position scale of V (in input quanta) */
    int32_t mul[16];  /* q15 multiplier 1 / sp */
    uint8_t *A;       /* [16][blk][kp] */
    float *Mb;        /* [16][blk][M] */
} wino;

/* tile t's 4x4 pixels' channels minus z (z outside), transformed in int16 and quantised
 * (vpmulhrsw by 32768 / scale, saturated to int8, + 128) into A[pos][r], 32 channels a step */
static const uint8_t zrow[4096];
__attribute__((target("avx512f,avx512bw"))) static void in_tile(wino *w, int64_t t, int64_t r, int32_t z)
{
    const int64_t C = w->C, th = w->th, kp = (C + 3) / 4 * 4;
    int64_t n = t / (th * th), ty = t / th % th, tx = t % th;
    const uint8_t *p[16];
    uint8_t *a[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int64_t iy = 2 * ty - 1 + i, ix = 2 * tx - 1 + j;
            p[i * 4 + j] = iy < 0 || ix < 0 || iy >= w->H || ix >= w->H ? zrow
                           : w->x + ((n * w->H + iy) * w->H + ix) * C;
            a[i * 4 + j] = w->A + (i * 4 + j) * (w->blk * kp + 192) + r * kp;
        }
    const __m512i zv = _mm512_set1_epi16((short)z);
    const __m256i x80 = _mm256_set1_epi8((char)0x80);
    for (int64_t c = 0; c < C; c += 32) {
        __m512i d[16], tm[16];
        for (int q = 0; q < 16; q++)
            d[q] = _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(p[q] + c))), zv);
        for (int j = 0; j < 4; j++) {
            tm[0 * 4 + j] = _mm512_sub_epi16(d[0 * 4 + j], d[2 * 4 + j]);
            tm[1 * 4 + j] = _mm512_add_epi16(d[1 * 4 + j], d[2 * 4 + j]);
            tm[2 * 4 + j] = _mm512_sub_epi16(d[2 * 4 + j], d[1 * 4 + j]);
            tm[3 * 4 + j] = _mm512_sub_epi16(d[1 * 4 + j], d[3 * 4 + j]);
        }
        for (int i = 0; i < 4; i++) {
            __m512i v[4] = {_mm512_sub_epi16(tm[i * 4], tm[i * 4 + 2]), _mm512_add_epi16(tm[i * 4 + 1], tm[i * 4 + 2]),
                            _mm512_sub_epi16(tm[i * 4 + 2], tm[i * 4 + 1]), _mm512_sub_epi16(tm[i * 4 + 1], tm[i * 4 + 3])};
            for (int j = 0; j < 4; j++) {
                __m512i q = _mm512_mulhrs_epi16(v[j], _mm512_set1_epi16((short)w->mul[i * 4 + j]));
                _mm256_storeu_si256((__m256i *)(a[i * 4 + j] + c), _mm256_xor_si256(_mm512_cvtsepi16_epi8(q), x80));
            }
        }
    }
}

__attribute__((target("avx512f,avx512bw"))) static void out_tile(wino *w, int64_t t, int64_t r, float *yf, uint8_t *y8, int32_t yz)
{
    const int64_t M = w->M, th = w->th;
    int64_t n = t / (th * th), ty = t / th % th, tx = t % th;
    const float *restrict m = w->Mb + r * 16 * M, *restrict bias = w->bias;
    int64_t at[4];
    for (int i = 0; i < 4; i++) {
        int64_t oy = 2 * ty + i / 2, ox = 2 * tx + i % 2;
        at[i] = oy < w->H && ox < w->H ? ((n * w->H + oy) * w->H + ox) * M : -1;
    }
    float ob[4][512];
    const float inv = 1.0f / w->ys, zf = (float)yz + 0.5f;
    for (int64_t c = 0; c < M; c++) { /* At rows [1 1 1 0], [0 1 -1 -1] */
#define MM(a, b) m[((a) * 4 + (b)) * M + c]
        float r00 = MM(0, 0) + MM(1, 0) + MM(2, 0), r01 = MM(0, 1) + MM(1, 1) + MM(2, 1),
              r02 = MM(0, 2) + MM(1, 2) + MM(2, 2), r03 = MM(0, 3) + MM(1, 3) + MM(2, 3);
        float r10 = MM(1, 0) - MM(2, 0) - MM(3, 0), r11 = MM(1, 1) - MM(2, 1) - MM(3, 1),
              r12 = MM(1, 2) - MM(2, 2) - MM(3, 2), r13 = MM(1, 3) - MM(2, 3) - MM(3, 3);
        float b = bias[c];
        ob[0][c] = r00 + r01 + r02 + b; ob[1][c] = r01 - r02 - r03 + b;
        ob[2][c] = r10 + r11 + r12 + b; ob[3][c] = r11 - r12 - r13 + b;
    }
    for (int i = 0; i < 4; i++) {
        if (at[i] < 0) continue;
        const float *restrict s = ob[i];
        if (yf) { memcpy(yf + at[i], s, 4 * M); continue; }
        uint8_t *restrict yo = y8 + at[i];
        for (int64_t c = 0; c < M; c++) { /* relu, then the zero point, rounded half up */
            float v = (s[c] > 0 ? s[c] : 0) * inv + zf;
            v = v < 255.0f ? v : 255.0f;
            yo[c] = (uint8_t)(int32_t)v;
        }
    }
}

static void wino_run(wino *w, float *yf, uint8_t *y8)
{
    const int64_t kp = (w->C + 3) / 4 * 4;
    for (int64_t t0 = 0; t0 < w->T; t0 += w->blk) {
        int64_t bt = w->T - t0 < w->blk ? w->T - t0 : w->blk;
        for (int64_t r = 0; r < bt; r++) in_tile(w, t0 + r, r, 0);
        for (int p = 0; p < 16; p++)
            qgemm_u8_uni(&w->U[p], w->A + p * (w->blk * kp + 192), NULL, w->sin * w->sp[p], 128, bt,
                         w->Mb + p * w->M, 16 * w->M, NULL, 0, 0, 0, NULL, 1);
        for (int64_t r = 0; r < bt; r++) out_tile(w, t0 + r, r, yf, y8, 0);
    }
}

static void shape(int64_t N, int64_t H, int64_t C, int64_t M, int64_t blk, int R)
{
    srand(1);
    uint8_t *x = al(N * H * H * C);
    for (int64_t i = 0; i < N * H * H * C; i++) x[i] = rand() % 4 ? rand() % 200 : 0; /* a relu's: zeros */
    float *wt = al(4 * 9 * C * M), *bias = al(4 * M); /* wt[ky][kx][c][m] (B: K x N) */
    for (int64_t i = 0; i < 9 * C * M; i++) wt[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.1f;
    for (int64_t i = 0; i < M; i++) bias[i] = (rand() / (float)RAND_MAX - 0.5f);
    const float sin = 0.02f, ys = 0.05f;
    /* direct: B K = 9C x M */
    size_t bs = qg_pack_size(QG_INT8DQ, 0, 9 * C, M);
    void *bd = al(bs);
    qg_pack(QG_INT8DQ, 0, wt, M, 1, 9 * C, M, bd);
    qg_packed Bd;
    qg_view(bd, bs, &Bd, NULL);
    knhwc_geom g = {.h = H, .w = H, .cs = C, .c0 = 0, .c = C, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1,
                    .dw = 1, .pt = 1, .pl = 1, .oh = H, .ow = H};
    int64_t wp, pb = knhwc_padded_u8(&g, C, &wp), hw = H * H;
    uint8_t *xp = al(pb);
    int64_t dblk = (65536 / M) < 64 ? 64 : 65536 / M;
    dblk = dblk < hw ? dblk : hw;
    const uint8_t **rp = al(sizeof(void *) * dblk);
    float *cf = al(4 * dblk * M), *yfd = al(4 * N * hw * M), *yfw = al(4 * N * hw * M);
    uint8_t *y8 = al(N * hw * M);
    gemm_epi e = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_RELU};
    gemm_epi eb = {.bias_mode = GEMM_BIAS_COL, .bias = bias};
    /* Winograd: U[p] = G g G^T per (c, m), K = C x M each */
    wino W = {.N = N, .H = H, .C = C, .M = M, .th = (H + 1) / 2, .x = x, .sin = sin, .ys = ys, .bias = bias};
    W.T = N * W.th * W.th;
    W.blk = blk > 0 ? blk : 8192 / M < 16 ? 16 : 8192 / M; /* tiles a block: 32 KiB of floats a position */
    W.blk = W.blk < W.T ? W.blk : W.T;
    float *u = al(4 * 16 * C * M);
    const float G[4][3] = {{1, 0, 0}, {.5f, .5f, .5f}, {.5f, -.5f, .5f}, {0, 0, 1}};
    for (int64_t c = 0; c < C; c++)
        for (int64_t m = 0; m < M; m++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    float s = 0;
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) s += G[i][a] * wt[((a * 3 + b) * C + c) * M + m] * G[j][b];
                    u[((i * 4 + j) * C + c) * M + m] = s;
                }
    size_t us = qg_pack_size(QG_INT8DQ, 0, C, M);
    void *ub[16];
    for (int p = 0; p < 16; p++) {
        ub[p] = al(us);
        qg_pack(QG_INT8DQ, 0, u + p * C * M, M, 1, C, M, ub[p]);
        qg_view(ub[p], us, &W.U[p], NULL);
    }
    /* V's scales: the max |V| per position over the image (calibrated on itself here) */
    {
        int32_t mx[16] = {0};
        for (int64_t t = 0; t < W.T; t++) {
            int64_t n = t / (W.th * W.th), ty = t / W.th % W.th, tx = t % W.th;
            for (int64_t c = 0; c < C; c++) {
                int32_t d[4][4], tm[4][4];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        int64_t iy = 2 * ty - 1 + i, ix = 2 * tx - 1 + j;
                        d[i][j] = iy < 0 || ix < 0 || iy >= H || ix >= H ? 0 : x[((n * H + iy) * H + ix) * C + c];
                    }
                for (int j = 0; j < 4; j++) {
                    tm[0][j] = d[0][j] - d[2][j]; tm[1][j] = d[1][j] + d[2][j];
                    tm[2][j] = d[2][j] - d[1][j]; tm[3][j] = d[1][j] - d[3][j];
                }
                for (int i = 0; i < 4; i++) {
                    int32_t v[4] = {tm[i][0] - tm[i][2], tm[i][1] + tm[i][2], tm[i][2] - tm[i][1], tm[i][1] - tm[i][3]};
                    for (int j = 0; j < 4; j++) mx[i * 4 + j] = abs(v[j]) > mx[i * 4 + j] ? abs(v[j]) : mx[i * 4 + j];
                }
            }
        }
        for (int p = 0; p < 16; p++) {
            W.sp[p] = mx[p] / 127.0f;
            W.sp[p] = W.sp[p] < 1.0f ? 1.0f : W.sp[p]; /* vpmulhrsw's multiplier at most 32767 */
            W.mul[p] = (int32_t)lrintf(32767.0f / W.sp[p]);
        }
    }
    W.A = al(16 * (W.blk * ((C + 3) / 4 * 4) + 192));
    W.Mb = al(4 * 16 * W.blk * M);
    /* check: float outputs (bias, no relu) */
    for (int64_t im = 0; im < N; im++) {
        knhwc_pad_u8(&g, x + im * hw * C, C, 0, xp);
        for (int64_t p0 = 0; p0 < hw; p0 += dblk) {
            int64_t p1 = p0 + dblk < hw ? p0 + dblk : hw;
            qg_rows ar = {.rp = rp, .runs = 3};
            knhwc_rows_u8(&g, xp, wp, p0, p1, rp, &ar.off);
            qgemm_u8_uni(&Bd, NULL, &ar, sin, 0, p1 - p0, yfd + (im * hw + p0) * M, M, NULL, 0, 0, 0, &eb, 1);
        }
    }
    wino_run(&W, yfw, NULL);
    double se = 0, ss = 0;
    for (int64_t i = 0; i < N * hw * M; i++) { double d = yfw[i] - yfd[i]; se += d * d; ss += (double)yfd[i] * yfd[i]; }
    printf("%ld:%ld:%ld:%ld: Winograd floats against the direct's: SQNR %.1f dB\n", (long)N, (long)H, (long)C,
           (long)M, 10 * log10(ss / se));
    double td[64], tw[64];
    for (int r = 0; r < R; r++) {
        double t = now();
        for (int64_t im = 0; im < N; im++) {
            knhwc_pad_u8(&g, x + im * hw * C, C, 0, xp);
            for (int64_t p0 = 0; p0 < hw; p0 += dblk) {
                int64_t p1 = p0 + dblk < hw ? p0 + dblk : hw;
                qg_rows ar = {.rp = rp, .runs = 3};
                knhwc_rows_u8(&g, xp, wp, p0, p1, rp, &ar.off);
                qgemm_u8_uni(&Bd, NULL, &ar, sin, 0, p1 - p0, cf, M, y8 + (im * hw + p0) * M, M, ys, 0, &e, 1);
            }
        }
        td[r] = now() - t;
        t = now();
        wino_run(&W, NULL, y8);
        tw[r] = now() - t;
    }
    qsort(td, R, sizeof(double), cmpd);
    qsort(tw, R, sizeof(double), cmpd);
    double mac = (double)N * hw * M * C * 9;
    printf("  direct %.3f ms (%.0f G MAC/s), winograd %.3f ms, winograd / direct %.3f\n", td[R / 2] * 1e3,
           mac / td[R / 2] / 1e9, tw[R / 2] * 1e3, tw[R / 2] / td[R / 2]);
    /* the Winograd's parts, once */
    {
        const int64_t kp = (C + 3) / 4 * 4;
        double ti = 0, tg = 0, to = 0;
        for (int rr = 0; rr < 3; rr++)
            for (int64_t t0 = 0; t0 < W.T; t0 += W.blk) {
                int64_t bt = W.T - t0 < W.blk ? W.T - t0 : W.blk;
                double a = now();
                for (int64_t r = 0; r < bt; r++) in_tile(&W, t0 + r, r, 0);
                double b = now();
                for (int p = 0; p < 16; p++)
                    qgemm_u8_uni(&W.U[p], W.A + p * (W.blk * kp + 192), NULL, W.sin * W.sp[p], 128, bt,
                                 W.Mb + p * W.M, 16 * W.M, NULL, 0, 0, 0, NULL, 1);
                double c2 = now();
                for (int64_t r = 0; r < bt; r++) out_tile(&W, t0 + r, r, NULL, y8, 0);
                to += now() - c2; tg += c2 - b; ti += b - a;
            }
        printf("  winograd parts: input transform %.3f ms, 16 GEMMs %.3f ms, output transform %.3f ms\n",
               ti / 3 * 1e3, tg / 3 * 1e3, to / 3 * 1e3);
    }
    free(x), free(wt), free(bias), free(bd), free(xp), free(rp), free(cf), free(yfd), free(yfw), free(y8);
    free(u), free(W.A), free(W.Mb);
    for (int p = 0; p < 16; p++) free(ub[p]);
}

int main(int argc, char **argv)
{
    int R = argc > 1 ? atoi(argv[1]) : 0;
    if (argc < 3 || R < 1 || R > 64) {
        fprintf(stderr, "usage: bench-q8wino ROUNDS (1..64) N:H:C:M...\n");
        return 2;
    }
    if (!__builtin_cpu_supports("avx512bw")) {
        printf("bench-q8wino: needs AVX-512BW (its input transform); nothing run\n");
        return 0;
    }
    for (int i = 2; i < argc; i++) {
        long n, h, c, m, blk = 0;
        if (sscanf(argv[i], "%ld:%ld:%ld:%ld:%ld", &n, &h, &c, &m, &blk) < 4 || blk < 0 || n < 1 || h < 2 || c < 32 || c > 512 ||
            c % 32 || m < 1 || m > 512) {
            fprintf(stderr, "bench-q8wino: %s: want N:H:C:M, C a multiple of 32 up to 512, M up to 512\n", argv[i]);
            return 2;
        }
        shape(n, h, c, m, blk, R);
    }
    return 0;
}
