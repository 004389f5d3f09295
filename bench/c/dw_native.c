/* Native depthwise convolutions against oneDNN's, one thread, per shape,
 * on a shared machine: native's channels-last kernel (kernels/nhwc.h,
 * knhwc_dw, as the native backend's NHWC step runs it inside a model),
 * native's NCHW kernel (kernels/dwconv.h, kdw_run, the step between NCHW
 * values on planes from 32 wide), and oneDNN's depthwise convolution
 * (groups = channels) twice: every memory in the format it picks ("any":
 * its best case, reorders outside the timing) and every memory NHWC. All
 * with bias and the activation fused (oneDNN's as an eltwise post-op), on
 * one thread (OpenMP's count set to 1 for oneDNN), timed in interleaved
 * rounds (A B C D A B C D ...) on this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so time descheduled by other work does not
 * count. Outputs are checked against oneDNN's "any" (max |diff| / max
 * |ref|) before the ratios are printed. Two more engines in the same
 * rounds: native's module between NCHW values twice, by bands
 * (knhwc_dw_nchw: each band's input rows transposed into L2, the kernel,
 * the band's output rows back) and by whole transposes (the input
 * transposed to NHWC, knhwc_dw, the output back), and the floor: one vector pass reading the input and
 * writing the output once (no kernel of one Conv moves fewer bytes).
 * Each engine's input is read once, untimed, before it runs, and each
 * round starts from the next engine: all start with the input warm in
 * the caches, none always after the same other (on the largest planes
 * the engines' buffers together pass the L3, and the one after the floor
 * ran up to 1.6x faster than the one after the NCHW engines). Its GB/s (input + output + weights
 * bytes over the time) is the roofline the kernels' GB/s are read
 * against.
 *
 * usage: bench-dw-native ROUNDS C:H:K:S:ACT[:N]...
 *   C channels, H x H input, K x K kernel, stride S, pads K / 2 on every
 *   side, ACT r (Relu), 6 (Relu6), h (HardSwish), s (SiLU) or n (none),
 *   N images (1)
 * Prints a Markdown table row per shape: median ms of each engine, the
 * ratio best oneDNN / native NHWC (above 1: native faster), the MB moved
 * and the GB/s of native NHWC, best oneDNN and the floor. */
#include <dnnl.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_bench.h"
#include "core/tensor.h"
#include "kernels/dwconv.h"
#include "kernels/nhwc.h"
#include "timer.h"

typedef struct shape {
    int64_t n, c, h, k, s, p, oh;
    char act;
} shape;

/* oneDNN's depthwise convolution of s (groups = channels, weights
 * [c][1][1][k][k]), its activations in format `tag`, s's activation as a
 * post-op. */
static void dw_make(dn *d, const shape *s, dnnl_format_tag_t tag, const float *x, const float *wt,
                    const float *bias)
{
    dnnl_dims_t sd = {s->n, s->c, s->h, s->h}, wd = {s->c, 1, 1, s->k, s->k}, dd = {s->n, s->c, s->oh, s->oh};
    dnnl_alg_kind_t alg = s->act == 'r'   ? dnnl_eltwise_relu
                          : s->act == '6' ? dnnl_eltwise_clip
                          : s->act == 'h' ? dnnl_eltwise_hardswish
                          : s->act == 's' ? dnnl_eltwise_swish
                                          : dnnl_alg_kind_undef;
    dn_make(d, sd, 5, wd, dnnl_goihw, dd, s->s, s->p, tag, alg, s->act == 's' ? 1.0f : 0.0f,
            s->act == '6' ? 6.0f : 0.0f, x, wt, bias);
}

static kact shape_act(char a)
{
    switch (a) {
    case 'r': return (kact){KF_RELU, 0, 0};
    case '6': return (kact){KF_CLIP, 0, 6};
    case 'h': return (kact){KF_HARDSWISH, 0, 0};
    case 's': return (kact){KF_SILU, 0, 0};
    default: return (kact){KF_NONE, 0, 0};
    }
}

enum { E_NHWC, E_NCHW, E_DN_ANY, E_DN_NHWC, E_MOD, E_MOD2, E_N, E_FLOOR = E_N };

/* The floor: x's nx floats read and y's ny written, once each, by whole
 * vectors (four chains), the sum stored so that the reads are not dropped. */
__attribute__((target("avx512f"))) static void floor_avx512(const float *x, int64_t nx, float *y,
                                                            int64_t ny)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 64 <= nx; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(x + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(x + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(x + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(x + i + 48));
    }
    float t = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    for (; i < nx; i++) t += x[i];
    const __m512 v = _mm512_set1_ps(t);
    for (i = 0; i + 16 <= ny; i += 16) _mm512_store_ps(y + i, v);
    for (; i < ny; i++) y[i] = t;
}

static void floor_pass(const float *x, int64_t nx, float *y, int64_t ny)
{
    if (__builtin_cpu_supports("avx512f")) {
        floor_avx512(x, nx, y, ny);
        return;
    }
    float t = 0;
    for (int64_t i = 0; i < nx; i++) t += x[i];
    for (int64_t i = 0; i < ny; i++) y[i] = t;
}

static void bench(const shape *s, int rounds)
{
    const int64_t C = s->c, hw = s->h * s->h, ohw = s->oh * s->oh, taps = s->k * s->k;
    const int64_t nx = s->n * hw * C, ny = s->n * ohw * C;
    float *x = xalloc(sizeof(float) * (size_t)nx), *xc = xalloc(sizeof(float) * (size_t)nx);
    float *wt = xalloc(sizeof(float) * (size_t)(C * taps));   /* [c][tap] */
    float *wtl = xalloc(sizeof(float) * (size_t)(C * taps));  /* [tap][c] */
    float *bias = xalloc(sizeof(float) * (size_t)C);
    srand(1);
    for (int64_t i = 0; i < nx; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int64_t i = 0; i < C * taps; i++) wt[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int64_t i = 0; i < C; i++) bias[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int64_t c = 0; c < C; c++)
        for (int64_t t = 0; t < taps; t++) wtl[t * C + c] = wt[c * taps + t];
    knhwc_to_nchw(x, s->n, C, hw, xc);
    float *y[E_N], *yc = xalloc(sizeof(float) * (size_t)ny), *ym = xalloc(sizeof(float) * (size_t)ny);
    float *ym2 = xalloc(sizeof(float) * (size_t)ny);
    float *xs = xalloc(sizeof(float) * (size_t)(nx + ny + 64)), *ys = xalloc(sizeof(float) * (size_t)ny);
    float *yf = xalloc(sizeof(float) * (size_t)ny);
    for (int e = 0; e < E_N; e++) y[e] = xalloc(sizeof(float) * (size_t)ny);
    const kact act = shape_act(s->act);
    knhwc_geom g = {s->h, s->h, C, 0, C, s->k, s->k, s->s, s->s, 1, 1, s->p, s->p, s->oh, s->oh};
    kdw_geom gc = {(int)s->n, (int)C, (int)s->h, (int)s->h, 1, (int)s->k, (int)s->k, (int)s->s, (int)s->s,
                   1, 1, (int)s->p, (int)s->p, (int)s->oh, (int)s->oh};
    dn da, dh;
    dw_make(&da, s, dnnl_format_tag_any, x, wt, bias);
    dw_make(&dh, s, dnnl_nhwc, x, wt, bias);
    double *t[E_N + 1];
    for (int e = 0; e <= E_N; e++) t[e] = calloc((size_t)rounds, sizeof(double));
    /* the engines' order rotated from round to round, and each engine's input read once
     * before it runs (untimed): every engine starts from the same state, its input warm in the caches as a model's previous step leaves it, not
     * from what the engine before it evicted (the buffers of all engines together pass
     * the 32 MiB L3 on the largest planes) */
    void *dsrc = NULL;
    DN(dnnl_memory_get_data_handle(da.src, &dsrc));
    for (int it = -2; it < rounds; it++)
        for (int k = 0; k <= E_N; k++) {
            const int e = (k + it + 2) % (E_N + 1); /* each round from the next engine */
            const bool nchw = e == E_NCHW || e == E_MOD || e == E_MOD2;
            if (e == E_DN_ANY) floor_pass(dsrc, nx, yf, 0);
            else floor_pass(nchw ? xc : x, nx, yf, 0);
            double t0 = thread_cpu_s();
            if (e == E_NHWC) knhwc_dw(&g, s->n, x, wtl, bias, act, NULL, y[e], NULL, 1);
            else if (e == E_NCHW) kdw_run(&gc, xc, wt, bias, act, yc, 1);
            else if (e == E_MOD) /* NCHW in and out, as at a module's edges */
                knhwc_dw_nchw(&g, s->n, xc, wtl, bias, act, ym, C * ohw, 0, xs, 1);
            else if (e == E_MOD2) {
                knhwc_from_nchw(xc, s->n, C, hw, xs);
                knhwc_dw(&g, s->n, xs, wtl, bias, act, NULL, ys, NULL, 1);
                knhwc_to_nchw(ys, s->n, C, ohw, ym2);
            } else if (e == E_FLOOR) floor_pass(x, nx, yf, ny);
            else dn_run(e == E_DN_ANY ? &da : &dh);
            if (it >= 0) t[e][it] = thread_cpu_s() - t0;
        }
    knhwc_from_nchw(yc, s->n, C, ohw, y[E_NCHW]);
    knhwc_from_nchw(ym, s->n, C, ohw, y[E_MOD]);
    knhwc_from_nchw(ym2, s->n, C, ohw, y[E_MOD2]);
    dnnl_dims_t dd = {s->n, C, s->oh, s->oh};
    dn_out(&da, dd, y[E_DN_ANY]);
    dn_out(&dh, dd, y[E_DN_NHWC]);
    double ms[E_N + 1];
    const double worst = engines_ms(t, y, E_N, E_DN_ANY, rounds, ny, ms);
    ms[E_FLOOR] = median(t[E_FLOOR], rounds) * 1e3;
    const double best_dn = fmin(ms[E_DN_ANY], ms[E_DN_NHWC]);
    const double mb = 4.0 * (double)(nx + ny + C * taps + C) / 1e6; /* x, y, weights, bias */
    printf("| %lld | %lldx%lld | %lldx%lld | %lld | %c | %lld | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | **%.2f** "
           "| %.2f | %.1f | %.1f | %.1f | %.2f | %.1e | %s |\n",
           (long long)C, (long long)s->h, (long long)s->h, (long long)s->k, (long long)s->k,
           (long long)s->s, s->act, (long long)s->n, ms[E_NHWC], ms[E_NCHW], ms[E_MOD], ms[E_MOD2], ms[E_DN_ANY],
           ms[E_DN_NHWC], ms[E_FLOOR], best_dn / ms[E_NHWC], mb, mb / ms[E_NHWC], mb / best_dn,
           mb / ms[E_FLOOR], ms[E_FLOOR] / best_dn, worst, da.impl);
    fflush(stdout);
    for (int e = 0; e < E_N; e++) {
        free(t[e]);
        aligned_free(y[e]);
    }
    free(t[E_FLOOR]);
    aligned_free(yc);
    aligned_free(ym);
    aligned_free(ym2);
    aligned_free(xs);
    aligned_free(ys);
    aligned_free(yf);
    aligned_free(x);
    aligned_free(xc);
    aligned_free(wt);
    aligned_free(wtl);
    aligned_free(bias); /* (the oneDNN objects live to the end) */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-dw-native ROUNDS C:H:K:S:ACT[:N]...\n");
        return 2;
    }
    omp_set_num_threads(1); /* oneDNN on this thread only, as native */
    int rounds = atoi(argv[1]);
    if (rounds < 1) rounds = 1;
    printf("| C | H x W | kernel | stride | act | N | native NHWC ms | native NCHW ms | native module "
           "NCHW by bands ms | native module NCHW, whole transposes ms | oneDNN any ms | oneDNN NHWC ms | floor ms | best oneDNN / native NHWC | MB | "
           "native GB/s | oneDNN GB/s | floor GB/s | floor / oneDNN | max rel. diff | oneDNN (any) "
           "implementation |\n"
           "| ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (int i = 2; i < argc; i++) {
        long long v[4] = {0}, n = 1;
        char a = 'n';
        int got = sscanf(argv[i], "%lld:%lld:%lld:%lld:%c:%lld", &v[0], &v[1], &v[2], &v[3], &a, &n);
        if (got < 4 || v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1 || n < 1) {
            fprintf(stderr, "bad shape %s\n", argv[i]);
            return 2;
        }
        shape s = {n, v[0], v[1], v[2], v[3], v[2] / 2, 0, a};
        s.oh = (s.h + 2 * s.p - s.k) / s.s + 1;
        bench(&s, rounds);
    }
    return 0;
}
