/* Native ConvTranspose (kernels/convt.h, kconvt_run: NCHW, as both the
 * native backend and oneDNN's backend run it) against oneDNN's own
 * deconvolution primitive, one thread, per shape: oneDNN with every memory
 * in the format it picks ("any": its best case, reorders outside the
 * timing) and with plain NCHW memories. All with bias and the activation
 * fused (oneDNN's as an eltwise post-op), on one thread (OpenMP's count
 * set to 1), timed in interleaved rounds (A B C A B C ...) on this
 * thread's CPU time; outputs checked against native's before the ratios
 * are printed. Issue 13's "native ConvTranspose module at least 2x the best
 * library": oneDNN's backend does not use the primitive (it runs
 * kconvt_run), so this is the library's own code on the same shapes.
 *
 * usage: bench-convt-native ROUNDS CIN:COUT:H:K:S:ACT[:N]...
 *   CIN -> COUT channels, H x H input, K x K kernel, stride S, no pads or
 *   output padding, ACT r (Relu), g (Sigmoid) or n (none), N images (1)
 * Prints a Markdown table row per shape: median ms of each engine and the
 * ratio best oneDNN / native (above 1: native faster). */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_bench.h"
#include "core/tensor.h"
#include "kernels/convt.h"
#include "kernels/nhwc.h"
#include "timer.h"

typedef struct shape {
    int64_t n, cin, cout, h, k, s, oh;
    char act;
} shape;

/* oneDNN's deconvolution of s (weights ONNX's [cin][cout][k][k], oneDNN's
 * (oc, ic, kh, kw) read as iohw), activations in format `tag`, s's
 * activation as a post-op; x is NHWC. */
static void ct_make(dn *d, const shape *s, dnnl_format_tag_t tag, const float *x, const float *wt,
                    const float *bias)
{
    DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&d->st, d->eng, dnnl_stream_default_flags));
    dnnl_dims_t sd = {s->n, s->cin, s->h, s->h}, wd = {s->cout, s->cin, s->k, s->k};
    dnnl_dims_t dd = {s->n, s->cout, s->oh, s->oh}, bd = {s->cout}, st = {s->s, s->s}, pd = {0, 0};
    dnnl_memory_desc_t smd, wmd, bmd, dmd, su, wu;
    DN(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag));
    DN(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    DN(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag));
    DN(dnnl_memory_desc_init_by_tag(&su, 4, sd, dnnl_f32, dnnl_nhwc));
    DN(dnnl_memory_desc_init_by_tag(&wu, 4, wd, dnnl_f32, dnnl_iohw));
    dnnl_deconvolution_desc_t cd;
    DN(dnnl_deconvolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_deconvolution_direct, &smd,
                                            &wmd, &bmd, &dmd, st, pd, pd));
    dn_finish(d, &cd, &su, x, &wu, wt, &bmd, bias,
              s->act == 'r'   ? dnnl_eltwise_relu
              : s->act == 'g' ? dnnl_eltwise_logistic
                              : dnnl_alg_kind_undef,
              0.0f, 0.0f);
}

enum { E_NAT, E_DN_ANY, E_DN_NCHW, E_N };

static void bench(const shape *s, int rounds)
{
    const int64_t hw = s->h * s->h, ohw = s->oh * s->oh, nw = s->cin * s->cout * s->k * s->k;
    const int64_t nx = s->n * s->cin * hw, ny = s->n * s->cout * ohw;
    float *x = xalloc(sizeof(float) * (size_t)nx), *xc = xalloc(sizeof(float) * (size_t)nx);
    float *wt = xalloc(sizeof(float) * (size_t)nw), *bias = xalloc(sizeof(float) * (size_t)s->cout);
    srand(1);
    for (int64_t i = 0; i < nx; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f; /* NHWC */
    for (int64_t i = 0; i < nw; i++) wt[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int64_t i = 0; i < s->cout; i++) bias[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    knhwc_to_nchw(x, s->n, s->cin, hw, xc);
    float *y[E_N], *yc = xalloc(sizeof(float) * (size_t)ny);
    for (int e = 0; e < E_N; e++) y[e] = xalloc(sizeof(float) * (size_t)ny);
    const kact act = {s->act == 'r' ? KF_RELU : s->act == 'g' ? KF_SIGMOID : KF_NONE, 0, 0};
    const kct_geom g = {(int)s->n, (int)s->cin, (int)s->h, (int)s->h, (int)s->cout, 1, (int)s->k, (int)s->k,
                        (int)s->s, (int)s->s, 1, 1, 0, 0, (int)s->oh, (int)s->oh};
    dn da, dc;
    ct_make(&da, s, dnnl_format_tag_any, x, wt, bias);
    ct_make(&dc, s, dnnl_nchw, x, wt, bias);
    double *t[E_N];
    for (int e = 0; e < E_N; e++) t[e] = calloc((size_t)rounds, sizeof(double));
    for (int it = -2; it < rounds; it++)
        for (int e = 0; e < E_N; e++) {
            double t0 = thread_cpu_s();
            if (e == E_NAT) {
                if (kconvt_run(&g, xc, wt, bias, act, yc, 1)) {
                    fprintf(stderr, "out of memory\n");
                    exit(1);
                }
            } else dn_run(e == E_DN_ANY ? &da : &dc);
            if (it >= 0) t[e][it] = thread_cpu_s() - t0;
        }
    knhwc_from_nchw(yc, s->n, s->cout, ohw, y[E_NAT]);
    dnnl_dims_t dd = {s->n, s->cout, s->oh, s->oh};
    dn_out(&da, dd, y[E_DN_ANY]);
    dn_out(&dc, dd, y[E_DN_NCHW]);
    double ms[E_N];
    const double worst = engines_ms(t, y, E_N, E_NAT, rounds, ny, ms);
    const double best_dn = fmin(ms[E_DN_ANY], ms[E_DN_NCHW]);
    printf("| %lld -> %lld | %lldx%lld | %lldx%lld | %lld | %c | %lld | %.4f | %.4f | %.4f | **%.2f** | %.1e | %s |\n",
           (long long)s->cin, (long long)s->cout, (long long)s->h, (long long)s->h, (long long)s->k,
           (long long)s->k, (long long)s->s, s->act, (long long)s->n, ms[E_NAT], ms[E_DN_ANY], ms[E_DN_NCHW],
           best_dn / ms[E_NAT], worst, da.impl);
    fflush(stdout);
    for (int e = 0; e < E_N; e++) {
        free(t[e]);
        aligned_free(y[e]);
    }
    aligned_free(yc);
    aligned_free(x);
    aligned_free(xc);
    aligned_free(wt);
    aligned_free(bias); /* (the oneDNN objects live to the end) */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-convt-native ROUNDS CIN:COUT:H:K:S:ACT[:N]...\n");
        return 2;
    }
    omp_set_num_threads(1); /* oneDNN on this thread only, as native */
    int rounds = atoi(argv[1]);
    if (rounds < 1) rounds = 1;
    printf("| channels | H x W | kernel | stride | act | N | native ms | oneDNN any ms | oneDNN NCHW ms | "
           "best oneDNN / native | max rel. diff | oneDNN (any) implementation |\n"
           "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (int i = 2; i < argc; i++) {
        long long v[5] = {0}, n = 1;
        char a = 'n';
        int got = sscanf(argv[i], "%lld:%lld:%lld:%lld:%lld:%c:%lld", &v[0], &v[1], &v[2], &v[3], &v[4], &a, &n);
        if (got < 5 || v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[4] < 1 || n < 1) {
            fprintf(stderr, "bad shape %s\n", argv[i]);
            return 2;
        }
        shape s = {n, v[0], v[1], v[2], v[3], v[4], 0, a};
        s.oh = (s.h - 1) * s.s + s.k;
        bench(&s, rounds);
    }
    return 0;
}
