/* Native KxK convolutions against oneDNN's, one thread, channels-last,
 * on a shared machine: per shape, native's im2col + GEMM (as the native
 * backend's NHWC step runs it: im2col by blocks of pixels into A, weights
 * packed as B), native's implicit GEMM (kernels/conv_ig.h, A read from the
 * padded input rows) and oneDNN's convolution primitive (every memory in
 * the format it picks, "any": its best case, reorders outside the timing),
 * all with bias and Relu fused, on one thread (OpenMP's count set to 1
 * for oneDNN), timed in interleaved rounds on this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time descheduled by
 * other work does not count. Outputs are checked against each other
 * (max |diff| / max |ref|, oneDNN's the reference).
 *
 * usage: bench-conv-native [--kernel NAME] ROUNDS C:H:W:M:K:S:P[:N]...
 *   --kernel  native's GEMM kernel (gemm_kernel_find's names), else the best
 *   C input channels, H x W input, M output channels, K x K kernel,
 *   stride S, pads P on every side, N images (1)
 * Prints per shape: median ms of each engine, GFLOP/s of each, and the
 * ratios im2col / oneDNN and implicit / oneDNN (below 1: native faster). */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tensor.h"
#include "kernels/conv_ig.h"
#include "kernels/gemm.h"
#include "kernels/nhwc.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xalloc(size_t bytes)
{
    void *p = aligned_zalloc(bytes ? bytes : 64);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

#define DN(call)                                                                           \
    do {                                                                                   \
        dnnl_status_t s_ = (call);                                                         \
        if (s_ != dnnl_success) {                                                          \
            fprintf(stderr, "oneDNN: %s failed (%d)\n", #call, (int)s_);                   \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

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

typedef struct dn {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bia, dst;
} dn;

/* oneDNN's convolution of s with bias and Relu; its inputs reordered from
 * x (NHWC), wt (OIHW), bias. */
static void dn_make(dn *d, const shape *s, const float *x, const float *wt, const float *bias)
{
    DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&d->st, d->eng, dnnl_stream_default_flags));
    dnnl_dims_t sd = {s->n, s->c, s->h, s->w}, wd = {s->m, s->c, s->k, s->k}, bd = {s->m},
                dd = {s->n, s->m, s->oh, s->ow}, st = {s->s, s->s}, dl = {0, 0}, pd = {s->p, s->p};
    dnnl_memory_desc_t smd, wmd, bmd, dmd, su, wu;
    DN(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    DN(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&su, 4, sd, dnnl_f32, dnnl_nhwc));
    DN(dnnl_memory_desc_init_by_tag(&wu, 4, wd, dnnl_f32, dnnl_oihw));
    dnnl_convolution_desc_t cd;
    DN(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                  &smd, &wmd, &bmd, &dmd, st, dl, pd, pd));
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    DN(dnnl_post_ops_create(&po));
    DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    DN(dnnl_primitive_attr_create(&attr));
    DN(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_primitive_desc_t pdsc;
    DN(dnnl_primitive_desc_create(&pdsc, &cd, attr, d->eng, NULL));
    const dnnl_memory_desc_t *qs = dnnl_primitive_desc_query_md(pdsc, dnnl_query_src_md, 0),
                             *qw = dnnl_primitive_desc_query_md(pdsc, dnnl_query_weights_md, 0),
                             *qd = dnnl_primitive_desc_query_md(pdsc, dnnl_query_dst_md, 0);
    DN(dnnl_memory_create(&d->src, qs, d->eng, DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&d->wei, qw, d->eng, DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&d->bia, &bmd, d->eng, (void *)bias));
    DN(dnnl_memory_create(&d->dst, qd, d->eng, DNNL_MEMORY_ALLOCATE));
    dnnl_memory_t ux, uw;
    DN(dnnl_memory_create(&ux, &su, d->eng, (void *)x));
    DN(dnnl_memory_create(&uw, &wu, d->eng, (void *)wt));
    dnnl_memory_t pairs[2][2] = {{ux, d->src}, {uw, d->wei}};
    for (int i = 0; i < 2; i++) {
        dnnl_primitive_desc_t rpd;
        dnnl_primitive_t r;
        DN(dnnl_reorder_primitive_desc_create(&rpd, i ? &wu : &su, d->eng,
                                              i ? qw : qs, d->eng, NULL));
        DN(dnnl_primitive_create(&r, rpd));
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, pairs[i][0]}, {DNNL_ARG_TO, pairs[i][1]}};
        DN(dnnl_primitive_execute(r, d->st, 2, a));
        DN(dnnl_stream_wait(d->st));
        dnnl_primitive_destroy(r);
        dnnl_primitive_desc_destroy(rpd);
    }
    dnnl_memory_destroy(ux);
    dnnl_memory_destroy(uw);
    const char *impl = NULL;
    dnnl_primitive_desc_query(pdsc, dnnl_query_impl_info_str, 0, &impl);
    printf("  oneDNN implementation: %s\n", impl ? impl : "?");
    DN(dnnl_primitive_create(&d->prim, pdsc));
    dnnl_primitive_desc_destroy(pdsc);
    dnnl_primitive_attr_destroy(attr);
    dnnl_post_ops_destroy(po);
}

static void dn_run(dn *d)
{
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, d->src}, {DNNL_ARG_WEIGHTS, d->wei},
                            {DNNL_ARG_BIAS, d->bia}, {DNNL_ARG_DST, d->dst}};
    DN(dnnl_primitive_execute(d->prim, d->st, 4, a));
    DN(dnnl_stream_wait(d->st));
}

/* oneDNN's output in NHWC. */
static void dn_out(dn *d, const shape *s, float *y)
{
    dnnl_dims_t dd = {s->n, s->m, s->oh, s->ow};
    dnnl_memory_desc_t du;
    DN(dnnl_memory_desc_init_by_tag(&du, 4, dd, dnnl_f32, dnnl_nhwc));
    const dnnl_memory_desc_t *qd;
    DN(dnnl_memory_get_memory_desc(d->dst, &qd));
    dnnl_memory_t uy;
    DN(dnnl_memory_create(&uy, &du, d->eng, y));
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t r;
    DN(dnnl_reorder_primitive_desc_create(&rpd, qd, d->eng, &du, d->eng, NULL));
    DN(dnnl_primitive_create(&r, rpd));
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, d->dst}, {DNNL_ARG_TO, uy}};
    DN(dnnl_primitive_execute(r, d->st, 2, a));
    DN(dnnl_stream_wait(d->st));
    dnnl_primitive_destroy(r);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_memory_destroy(uy);
}

static double rel_diff(const float *a, const float *b, int64_t n)
{
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0 ? d / m : d;
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
    for (int64_t i = 0; i < s->n * hw * s->c; i++) x[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t i = 0; i < s->m * kdim; i++) wt[i] = ((float)rand() / RAND_MAX - 0.5f) * 0.1f;
    for (int64_t i = 0; i < s->m; i++) bias[i] = (float)rand() / RAND_MAX - 0.5f;
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
    float *y[3];
    for (int e = 0; e < 3; e++) y[e] = xalloc(sizeof(float) * (size_t)(s->n * ohw * s->m));
    gemm_epi epi = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_RELU};
    dn d;
    dn_make(&d, s, x, wt, bias);
    double *t[3];
    for (int e = 0; e < 3; e++) t[e] = calloc((size_t)rounds, sizeof(double));
    for (int it = -1; it < rounds; it++)
        for (int e = 0; e < 3; e++) {
            double t0 = cpu_now();
            if (e == 0) {
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
            } else {
                dn_run(&d);
            }
            if (it >= 0) t[e][it] = cpu_now() - t0;
        }
    dn_out(&d, s, y[2]);
    const int64_t ny = s->n * ohw * s->m;
    double flop = 2.0 * (double)s->n * ohw * s->m * kdim, ms[3];
    for (int e = 0; e < 3; e++) ms[e] = median(t[e], rounds) * 1e3;
    printf("%lldx%lldx%lld -> %lld, %lldx%lld s%lld p%lld, n%lld: im2col %.3f ms (%.0f GF/s), implicit %.3f ms "
           "(%.0f GF/s), oneDNN %.3f ms (%.0f GF/s); im2col/oneDNN %.2f, implicit/oneDNN %.2f; "
           "diff im2col %.1e implicit %.1e\n",
           (long long)s->h, (long long)s->w, (long long)s->c, (long long)s->m, (long long)s->k,
           (long long)s->k, (long long)s->s, (long long)s->p, (long long)s->n, ms[0], flop / ms[0] * 1e-6,
           ms[1], flop / ms[1] * 1e-6, ms[2], flop / ms[2] * 1e-6, ms[0] / ms[2], ms[1] / ms[2],
           rel_diff(y[0], y[2], ny), rel_diff(y[1], y[2], ny));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-conv-native [--kernel NAME] ROUNDS C:H:W:M:K:S:P[:N]...\n");
        return 2;
    }
    omp_set_num_threads(1); /* oneDNN on this thread only, as native */
    kern = gemm_kernel_best();
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
