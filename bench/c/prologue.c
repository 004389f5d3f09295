/* The GEMM prologue (gemm_args.pro, kernels/chan_affine.h) against its
 * alternatives on the 1x1 Convs it serves (not in the test suite), 1 thread,
 * B prepacked as native packs a Conv's weights, A channels-last [M][K]:
 *   pass: the map as its own pass over A into a tensor (kaffine_rows, as
 *         kchan_scale ran BatchNormalization + Relu and squeeze-excitation's
 *         Mul before), then the GEMM on it;
 *   A:    the GEMM with the prologue (A mapped as it is read);
 *   W:    factors only (squeeze-excitation, per image): B's packed panels
 *         copied and scaled per K row (kaffine_panels), then the plain GEMM.
 * Interleaved rounds (pass A W pass A W ...), each the median of the calling
 * thread's CPU time over its rounds; ratios to pass.
 * usage: bench-prologue [ROUNDS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"
#include "kernels/chan_affine.h"
#include "kernels/gemm.h"
#include "kernels/gemm_pack.h"

static float *frand(size_t n, unsigned s)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    for (size_t i = 0; i < n; i++) s = s * 1664525u + 1013904223u, p[i] = (float)((s >> 9) & 0xffff) / 32768.0f - 1;
    return p;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    /* M x K x N: squeeze-excitation projections of mobilenet_v3_small/large and
     * efficientnet_b0 at batch 1, then DenseNet-121's bottleneck 1x1 Convs */
    static const struct {
        const char *what;
        int64_t m, k, n;
        int bn; /* shifts and Relu (BatchNormalization), else factors only */
    } sh[] = {
        {"mv3s se 56x56", 3136, 16, 16, 0}, {"mv3l se 28x28", 784, 120, 40, 0},
        {"mv3l se 14x14", 196, 672, 112, 0}, {"mv3l se 7x7", 49, 960, 160, 0},
        {"effb0 se 112x112", 12544, 32, 16, 0}, {"effb0 se 56x56", 3136, 144, 24, 0},
        {"effb0 se 14x14", 196, 480, 80, 0}, {"effb0 se 7x7", 49, 1152, 192, 0},
        {"dn121 56x56 c64", 3136, 64, 128, 1}, {"dn121 56x56 c256", 3136, 256, 128, 1},
        {"dn121 28x28 c512", 784, 512, 128, 1}, {"dn121 14x14 c1024", 196, 1024, 128, 1},
        {"dn121 7x7 c1024", 49, 1024, 128, 1},
    };
    const int rounds = argc > 1 ? atoi(argv[1]) : 15;
    const gemm_kernel *kr = gemm_kernel_best();
    gemm_ws ws = {0};
    printf("kernel %s, %d rounds, thread CPU time per call (median)\n", gemm_kernel_name(kr), rounds);
    printf("%-20s %6s %5s %4s %10s %10s %10s %7s %7s\n", "shape", "M", "K", "N", "pass us", "A us", "W us",
           "A/pass", "W/pass");
    for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++) {
        const int64_t m = sh[c].m, k = sh[c].k, n = sh[c].n;
        float *a = frand((size_t)(m * k), 1), *b = frand((size_t)(k * n), 2), *s = frand((size_t)k, 3);
        float *t = frand((size_t)k, 4), *tmp = frand((size_t)(m * k), 5), *y = frand((size_t)(m * n), 6);
        for (int64_t p = 0; p < k; p++) s[p] += 1.5f;
        const kaffine f = {s, sh[c].bn ? t : NULL, sh[c].bn ? 0.0f : -INFINITY, INFINITY};
        size_t bytes = gemm_pack_b_size(kr, k, n);
        char *pb = aligned_alloc(64, bytes), *pw = aligned_alloc(64, bytes);
        gemm_pack_b(kr, b, n, 1, k, n, pb);
        gemm_packed v, vw;
        if (gemm_packed_view(pb, bytes, &v, NULL) != AIT_OK) return 1;
        memcpy(pw, pb, bytes);
        if (gemm_packed_view(pw, bytes, &vw, NULL) != AIT_OK) return 1;
        double tm[3][64];
        const int rr = rounds < 64 ? rounds : 64, reps = (int)(2e7 / (double)(m * k * n)) + 1;
        for (int r = -1; r < rr; r++)
            for (int var = 0; var < 3; var++) {
                if (var == 2 && sh[c].bn) {
                    if (r >= 0) tm[var][r] = NAN;
                    continue;
                }
                double t0 = thread_cpu_s();
                for (int q = 0; q < reps; q++) {
                    gemm_args g = {.m = m, .n = n, .k = k, .a = a, .rsa = k, .csa = 1, .pb = &v, .c = y,
                                   .ldc = n, .threads = 1, .kern = kr, .ws = &ws};
                    if (var == 0) {
                        kaffine_rows(&f, 0, k, a, k, 1, m, tmp, k);
                        g.a = tmp;
                    } else if (var == 1) {
                        g.pro = &f;
                    } else {
                        memcpy(pw + GEMM_PACK_HDR, pb + GEMM_PACK_HDR, bytes - GEMM_PACK_HDR);
                        kaffine_panels(&f, 0, gemm_kernel_nr(kr), k, (n + gemm_kernel_nr(kr) - 1) / gemm_kernel_nr(kr),
                                       (float *)(pw + GEMM_PACK_HDR), k * gemm_kernel_nr(kr));
                        g.pb = &vw;
                    }
                    if (gemm_f32(&g, NULL) != AIT_OK) return 1;
                }
                if (r >= 0) tm[var][r] = (thread_cpu_s() - t0) / reps * 1e6;
            }
        double med[3];
        for (int var = 0; var < 3; var++) {
            qsort(tm[var], (size_t)rr, sizeof(double), cmp);
            med[var] = tm[var][rr / 2];
        }
        printf("%-20s %6lld %5lld %4lld %10.1f %10.1f %10.1f %7.2f %7.2f\n", sh[c].what, (long long)m,
               (long long)k, (long long)n, med[0], med[1], med[2], med[1] / med[0], med[2] / med[0]);
        free(a), free(b), free(s), free(t), free(tmp), free(y), free(pb), free(pw);
    }
    gemm_ws_free(&ws);
    return 0;
}
