/* Native KxK convolutions against oneDNN's, one thread, channels-last,
 * on a shared machine: per shape, native's im2col + GEMM (as the native
 * backend's NHWC step runs it: im2col by blocks of pixels into A, weights
 * packed as B), native's implicit GEMM (kernels/conv_ig.h, A read from the
 * padded input rows), native's Winograd F(4x4, 3x3) (kernels/winograd.h, on
 * 3x3 stride-1 shapes: the native "wino" variant's kernel, every image in one
 * call; and its F(2x2, 3x3), "wino-large"'s on small planes) and oneDNN's convolution primitive (every memory in
 * the format it picks, "any": its best case, reorders outside the timing),
 * and, for a stem (C * K * K at most KSTEM_TAPS), on an NCHW copy of the
 * image as the backend runs a stem on its planes: the direct kernel
 * (kernels/stem.h, kstem_conv) and the implicit GEMM reading the planes,
 * all with bias and Relu fused, on one thread (OpenMP's count set to 1
 * for oneDNN), timed in interleaved rounds on this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time descheduled by
 * other work does not count. Outputs are checked against each other
 * (max |diff| / max |ref|, oneDNN's the reference).
 *
 * usage: bench-conv-native [--isa NAME] [--kernel NAME] ROUNDS C:H:W:M:K:S:P[:N]...
 *   --isa     cap native's kernels at this ISA (portable, avx2, avx512)
 *   --kernel  native's GEMM kernel (gemm_kernel_find's names), else the best
 *   C input channels, H x W input, M output channels, K x K kernel,
 *   stride S, pads P on every side, N images (1)
 * Prints per shape: median ms of each engine, GFLOP/s of each, and the
 * ratios im2col / oneDNN and implicit / oneDNN (below 1: native faster),
 * of the medians and of the 10th percentiles; then Winograd's line where it
 * applies (F(4x4), then F(2x2)), and the stem's line where it applies. */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conv_bench.h"
#include "core/tensor.h"
#include "kernels/conv_ig.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"
#include "kernels/nhwc.h"
#include "kernels/stem.h"
#include "kernels/winograd.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct shape {
    int64_t n, c, h, w, m, k, s, p, oh, ow;
} shape;

/* The native im2col step's pixels per block (conv.c's im2col_block, nr 1). */
static int64_t im2col_block(int64_t ohw, int64_t kdim)
{
    int64_t p = ((int64_t)1 << 18) / kdim;
    p = p < 64 ? 64 : p;
    return p < ohw ? p : ohw;
}

static const gemm_kernel *kern; /* --kernel, or the best */

static void bench(const shape *s, int rounds)
{
    const gemm_kernel *kr = kern;
    const int64_t kdim = s->c * s->k * s->k, ohw = s->oh * s->ow, hw = s->h * s->w;
    float *x = xalloc(sizeof(float) * (size_t)(s->n * hw * s->c));
    float *wt = xalloc(sizeof(float) * (size_t)(s->m * kdim)); /* OIHW */
    float *wk = xalloc(sizeof(float) * (size_t)(s->m * kdim)); /* [(tap*c + ci)][m] */
    float *bias = xalloc(sizeof(float) * (size_t)s->m);
    srand(1);
    for (int64_t i = 0; i < s->n * hw * s->c; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int64_t i = 0; i < s->m * kdim; i++) wt[i] = ((float)rand() / (float)RAND_MAX - 0.5f) * 0.1f;
    for (int64_t i = 0; i < s->m; i++) bias[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    const int64_t taps = s->k * s->k;
    for (int64_t co = 0; co < s->m; co++)
        for (int64_t ci = 0; ci < s->c; ci++)
            for (int64_t t = 0; t < taps; t++) wk[(t * s->c + ci) * s->m + co] = wt[(co * s->c + ci) * taps + t];
    /* native im2col: B whole */
    size_t bb = gemm_pack_b_size(kr, kdim, s->m);
    void *pbw = xalloc(bb);
    gemm_pack_b(kr, wk, s->m, 1, kdim, s->m, pbw);
    gemm_packed pbv;
    ait_error err = {0};
    if (gemm_packed_view(pbw, bb, &pbv, &err) != AIT_OK) exit(1);
    const int64_t blk = im2col_block(ohw, kdim);
    float *col = xalloc(sizeof(float) * (size_t)(blk * kdim));
    /* implicit GEMM: B per run */
    knhwc_geom g = {s->h, s->w, s->c, 0, s->c, s->k, s->k, s->s, s->s, 1, 1, s->p, s->p, s->oh, s->ow};
    const int64_t nr = kig_runs(&g);
    gemm_packed *runs = calloc((size_t)nr, sizeof *runs);
    void **rb = calloc((size_t)nr, sizeof *rb);
    for (int64_t r = 0; r < nr; r++) {
        int64_t r0, rows;
        kig_run_rows(&g, r, &r0, &rows);
        size_t sz = gemm_pack_b_size(kr, rows, s->m);
        rb[r] = xalloc(sz);
        gemm_pack_b(kr, wk + r0 * s->m, s->m, 1, rows, s->m, rb[r]);
        if (gemm_packed_view(rb[r], sz, &runs[r], &err) != AIT_OK) exit(1);
    }
    size_t scr;
    if (!kig_scratch(&g, false, 1, &scr)) exit(1);
    float *scratch = xalloc(sizeof(float) * (scr + 16));
    /* Winograd: the 36 (F(4x4)) and 16 (F(2x2)) transforms packed as B */
    const bool wg = kwg_fits(&g);
    gemm_packed wgv[2][KWG_POS];
    float *wgs[2] = {NULL, NULL};
    for (int tl = 0; wg && tl < 2; tl++) {
        const kwg_tile tt = tl ? KWG_F2 : KWG_F4;
        float *u = xalloc(sizeof(float) * (size_t)(kwg_pos(tt) * s->c * s->m));
        kwg_weights(tt, wk, s->c, s->m, u);
        size_t sz = gemm_pack_b_size(kr, s->c, s->m), wf;
        for (int pos = 0; pos < kwg_pos(tt); pos++) {
            void *buf = xalloc(sz);
            gemm_pack_b(kr, u + pos * s->c * s->m, s->m, 1, s->c, s->m, buf);
            if (gemm_packed_view(buf, sz, &wgv[tl][pos], &err) != AIT_OK) exit(1);
        }
        if (!kwg_scratch(tt, &g, s->n, s->m, 1, &wf)) exit(1);
        wgs[tl] = xalloc(sizeof(float) * (wf + 16));
    }
    /* a stem: the image's planes (NCHW), the direct kernel and the implicit GEMM on them */
    const bool st = kstem_takes(&g);
    float *xp = xalloc(sizeof(float) * (size_t)(s->n * hw * s->c)), *scr2 = NULL;
    for (int64_t im = 0; im < s->n; im++)
        for (int64_t p = 0; p < hw; p++)
            for (int64_t c = 0; c < s->c; c++) xp[(im * s->c + c) * hw + p] = x[(im * hw + p) * s->c + c];
    if (st) {
        if (!kig_scratch(&g, true, 1, &scr)) exit(1);
        scr2 = xalloc(sizeof(float) * (scr + 16));
    }
    const kact kre = {KF_RELU, 0, 0};
    float *y[7];
    for (int e = 0; e < 7; e++) y[e] = xalloc(sizeof(float) * (size_t)(s->n * ohw * s->m));
    gemm_epi epi = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_RELU};
    dn d;
    dnnl_dims_t sd = {s->n, s->c, s->h, s->w}, wd = {s->m, s->c, s->k, s->k}, dd = {s->n, s->m, s->oh, s->ow};
    dn_make(&d, sd, 4, wd, dnnl_oihw, dd, s->s, s->p, dnnl_format_tag_any, dnnl_eltwise_relu, 0, 0, x, wt, bias);
    printf("  oneDNN implementation: %s\n", d.impl);
    double *t[7];
    for (int e = 0; e < 7; e++) t[e] = calloc((size_t)rounds, sizeof(double));
    for (int it = -1; it < rounds; it++)
        for (int e = 0; e < 7; e++) {
            if ((e >= 3 && e < 5 && !wg) || (e >= 5 && !st)) continue;
            double t0 = cpu_now();
            if (e == 5) {
                for (int64_t im = 0; im < s->n; im++)
                    kstem_conv(&g, xp + im * hw * s->c, pbv.data, gemm_kernel_nr(kr), s->m, bias, kre,
                               y[5] + im * ohw * s->m, s->m, 1);
            } else if (e == 6) {
                for (int64_t im = 0; im < s->n; im++)
                    if (kig_conv(&g, true, xp + im * hw * s->c, runs, s->m, y[6] + im * ohw * s->m, s->m, &epi,
                                 scr2, 1, &err) != AIT_OK)
                        exit(1);
            } else if (e == 0) {
                for (int64_t im = 0; im < s->n; im++)
                    for (int64_t p0 = 0; p0 < ohw; p0 += blk) {
                        int64_t p1 = p0 + blk < ohw ? p0 + blk : ohw;
                        knhwc_im2col(&g, x + im * hw * s->c, p0, p1, col);
                        gemm_args ga = {.m = p1 - p0, .n = s->m, .k = kdim, .a = col, .rsa = kdim, .csa = 1,
                                        .pb = &pbv, .c = y[0] + (im * ohw + p0) * s->m, .ldc = s->m, .epi = epi,
                                        .threads = 1, .kern = kr};
                        if (gemm_f32(&ga, &err) != AIT_OK) exit(1);
                    }
            } else if (e == 1) {
                for (int64_t im = 0; im < s->n; im++)
                    if (kig_conv(&g, false, x + im * hw * s->c, runs, s->m, y[1] + im * ohw * s->m, s->m, &epi,
                                 scratch, 1, &err) != AIT_OK)
                        exit(1);
            } else if (e >= 3) {
                if (kwg_conv(e == 4 ? KWG_F2 : KWG_F4, &g, s->n, x, wgv[e - 3], s->m, y[e], s->m, &epi,
                             wgs[e - 3], 1, &err) != AIT_OK)
                    exit(1);
            } else {
                dn_run(&d);
            }
            if (it >= 0) t[e][it] = cpu_now() - t0;
        }
    dn_out(&d, dd, y[2]);
    const int64_t ny = s->n * ohw * s->m;
    double flop = 2.0 * (double)s->n * ohw * s->m * kdim, ms[7];
    double p10[7]; /* the 10th percentile (median sorts t[e]): less of other work's noise */
    for (int e = 0; e < 7; e++) {
        if ((e >= 3 && e < 5 && !wg) || (e >= 5 && !st)) continue;
        ms[e] = median(t[e], rounds) * 1e3;
        p10[e] = t[e][rounds / 10] * 1e3;
    }
    printf("%lldx%lldx%lld -> %lld, %lldx%lld s%lld p%lld, n%lld: im2col %.3f ms (%.0f GF/s), implicit %.3f ms "
           "(%.0f GF/s), oneDNN %.3f ms (%.0f GF/s); im2col/oneDNN %.2f, implicit/oneDNN %.2f; "
           "p10 im2col/oneDNN %.2f implicit/oneDNN %.2f; diff im2col %.1e implicit %.1e\n",
           (long long)s->h, (long long)s->w, (long long)s->c, (long long)s->m, (long long)s->k,
           (long long)s->k, (long long)s->s, (long long)s->p, (long long)s->n, ms[0], flop / ms[0] * 1e-6,
           ms[1], flop / ms[1] * 1e-6, ms[2], flop / ms[2] * 1e-6, ms[0] / ms[2], ms[1] / ms[2], p10[0] / p10[2],
           p10[1] / p10[2],
           rel_diff(y[0], y[2], ny), rel_diff(y[1], y[2], ny));
    for (int e = 3; wg && e < 5; e++) /* GF/s of the direct convolution's FLOPs */
        printf("  winograd %s %.3f ms (%.0f GF/s eq.); winograd/oneDNN %.2f, winograd/implicit %.2f, "
               "winograd/im2col %.2f; p10 winograd/oneDNN %.2f winograd/implicit %.2f; diff winograd %.1e\n",
               e == 4 ? "F(2x2)" : "F(4x4)", ms[e], flop / ms[e] * 1e-6, ms[e] / ms[2], ms[e] / ms[1],
               ms[e] / ms[0], p10[e] / p10[2], p10[e] / p10[1], rel_diff(y[e], y[2], ny));
    if (st) /* both on the image's planes */
        printf("  stem on NCHW: direct %.3f ms (%.0f GF/s), implicit %.3f ms (%.0f GF/s); direct/oneDNN %.2f, "
               "direct/implicit %.2f; p10 direct/oneDNN %.2f direct/implicit %.2f; diff direct %.1e implicit %.1e\n",
               ms[5], flop / ms[5] * 1e-6, ms[6], flop / ms[6] * 1e-6, ms[5] / ms[2], ms[5] / ms[6], p10[5] / p10[2],
               p10[5] / p10[6], rel_diff(y[5], y[2], ny), rel_diff(y[6], y[2], ny));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-conv-native [--isa NAME] [--kernel NAME] ROUNDS C:H:W:M:K:S:P[:N]...\n");
        return 2;
    }
    omp_set_num_threads(1); /* oneDNN on this thread only, as native */
    kern = gemm_kernel_best();
    if (argc > 3 && strcmp(argv[1], "--isa") == 0) { /* the kernels' ISA capped (kisa_force) */
        kisa i = KISA_N;
        for (int k = 0; k < KISA_N; k++)
            if (strcmp(argv[2], kisa_name((kisa)k)) == 0) i = (kisa)k;
        if (i == KISA_N || !kisa_force(i)) {
            fprintf(stderr, "--isa %s: not an ISA this CPU runs\n", argv[2]);
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    if (argc > 3 && strcmp(argv[1], "--kernel") == 0) {
        char why[160];
        if (!(kern = gemm_kernel_find(argv[2], why, sizeof why))) {
            fprintf(stderr, "%s\n", why);
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    int rounds = atoi(argv[1]);
    if (rounds < 1) rounds = 1;
    for (int i = 2; i < argc; i++) {
        long long v[8] = {0, 0, 0, 0, 0, 1, 0, 1};
        int got = sscanf(argv[i], "%lld:%lld:%lld:%lld:%lld:%lld:%lld:%lld", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5], &v[6], &v[7]);
        if (got < 7) {
            fprintf(stderr, "bad shape %s\n", argv[i]);
            return 2;
        }
        shape s = {v[7], v[0], v[1], v[2], v[3], v[4], v[5], v[6], 0, 0};
        s.oh = (s.h + 2 * s.p - s.k) / s.s + 1;
        s.ow = (s.w + 2 * s.p - s.k) / s.s + 1;
        bench(&s, rounds);
    }
    return 0;
}
