/* The library's static int8 Winograd F(2x2, 3x3) Conv (kwg_conv_u8, kernels/winograd.h) alone,
 * at given shapes: a uint8 NHWC image (random, half of it 0 as after a Relu), pads 1, M output
 * channels, bias and Relu, uint8 out (or a float residual, or float out), one thread.
 *
 * usage: bench-wq8 RUNS N:H:C:M[:R]...   (N images of H x H x C; R 1: a float residual,
 *        2: float out and a float residual; default 0: uint8 out, no residual)
 * Prints per shape the median of RUNS runs (this thread's CPU time, after 2 warm-up runs), the
 * time its 16 GEMMs' MACs take at 505 G MAC/s (the vpdpbusd peak of the Zen 5 host,
 * bench/RESULTS.md, r8) and a hash of the output, so that two builds run alternately can be
 * compared for speed and for the same bytes (bench/RESULTS.md, q8r). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/qgemm.h"
#include "kernels/winograd.h"
#include "timer.h"

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *zalloc(size_t n)
{
    void *p = aligned_zalloc(n);
    if (!p) {
        fprintf(stderr, "bench-wq8: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    const int runs = argc > 1 ? atoi(argv[1]) : 0;
    if (argc < 3 || runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: bench-wq8 RUNS N:H:C:M[:R]...\n");
        return 2;
    }
    for (int ai = 2; ai < argc; ai++) {
        int N, H, C, M, R = 0;
        if (sscanf(argv[ai], "%d:%d:%d:%d:%d", &N, &H, &C, &M, &R) < 4 || N < 1 || H < 1 || C < 1 || M < 1) {
            fprintf(stderr, "bench-wq8: bad shape %s\n", argv[ai]);
            return 2;
        }
        knhwc_geom g = {.h = H, .w = H, .cs = C, .c = C, .pt = 1, .pl = 1, .kh = 3, .kw = 3, .sh = 1, .sw = 1,
                        .dh = 1, .dw = 1, .oh = H, .ow = H};
        const size_t nx = (size_t)N * H * H * C, np = (size_t)N * H * H, nw = (size_t)9 * C * M;
        uint8_t *x = zalloc(nx);
        srand(1);
        for (size_t i = 0; i < nx; i++) x[i] = (uint8_t)(rand() % 256 > 128 ? rand() % 256 : 0);
        float *w = zalloc(sizeof(float) * nw), *u = zalloc(sizeof(float) * 16 * (size_t)C * M);
        for (size_t i = 0; i < nw; i++) w[i] = ((float)rand() / (float)RAND_MAX - 0.5f) * 0.1f;
        kwg_weights(KWG_F2, w, C, M, u);
        const size_t us = (qg_pack_size(QG_INT8DQ, 0, C, M) + 63) / 64 * 64;
        char *pk = zalloc(16 * us);
        for (int p = 0; p < 16; p++) qg_pack(QG_INT8DQ, 0, u + (size_t)p * C * M, M, 1, C, M, pk + p * us);
        float *bias = zalloc(sizeof(float) * (size_t)M), *res = zalloc(sizeof(float) * np * M);
        for (size_t i = 0; i < np * (size_t)M; i++) res[i] = (float)(i % 7) * 0.1f;
        uint8_t *y = zalloc(np * M);
        float *yf = zalloc(sizeof(float) * np * M);
        size_t sb;
        if (!kwg_scratch_u8(&g, N, M, 1, &sb)) return 1;
        void *s = zalloc(sb);
        gemm_epi e = {.act = GEMM_ACT_RELU, .bias_mode = GEMM_BIAS_COL, .bias = bias};
        if (R) e.res = res, e.ldr = M;
        ait_error er = {0};
        double *t = zalloc(sizeof(double) * (size_t)runs);
        for (int r = 0; r < runs + 2; r++) {
            const double t0 = thread_cpu_s();
            if (kwg_conv_u8(&g, N, x, 0.02f, 0, pk, us, M, R == 2 ? NULL : y, 0.05f, 0, R == 2 ? yf : NULL, M, &e,
                            NULL, s, 1, &er) != AIT_OK) {
                fprintf(stderr, "bench-wq8: %s\n", er.msg);
                return 1;
            }
            if (r >= 2) t[r - 2] = thread_cpu_s() - t0;
        }
        qsort(t, (size_t)runs, sizeof *t, cmpd);
        const double mac = (double)N * ((H + 1) / 2) * ((H + 1) / 2) * 16 * C * M;
        unsigned long h = 0;
        for (size_t i = 0; i < np * (size_t)M; i++) h = h * 31 + (R == 2 ? (unsigned)(yf[i] * 1000) : y[i]);
        printf("%s: %.3f ms (its GEMMs' MACs at 505 G MAC/s: %.3f ms) hash %lx\n", argv[ai], t[runs / 2] * 1e3,
               mac / 505e9 * 1e3, h);
        aligned_free(x), aligned_free(w), aligned_free(u), aligned_free(pk), aligned_free(bias), aligned_free(res);
        aligned_free(y), aligned_free(yf), aligned_free(s), aligned_free(t);
    }
    return 0;
}
