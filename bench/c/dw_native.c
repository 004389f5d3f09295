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
 * |ref|) before the ratios are printed.
 *
 * usage: bench-dw-native ROUNDS C:H:K:S:ACT[:N]...
 *   C channels, H x H input, K x K kernel, stride S, pads K / 2 on every
 *   side, ACT r (Relu), 6 (Relu6), h (HardSwish), s (SiLU) or n (none),
 *   N images (1)
 * Prints a Markdown table row per shape: median ms of each engine and the
 * ratio best oneDNN / native NHWC (above 1: native faster). */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/dwconv.h"
#include "kernels/nhwc.h"
#include "timer.h"

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
    int64_t n, c, h, k, s, p, oh;
    char act;
} shape;

typedef struct dn {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bia, dst;
    char impl[96];
} dn;

/* One reorder of memory `from` (desc fd) into `to` (desc td). */
static void dn_reorder(dn *d, const dnnl_memory_desc_t *fd, dnnl_memory_t from,
                       const dnnl_memory_desc_t *td, dnnl_memory_t to)
{
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t r;
    DN(dnnl_reorder_primitive_desc_create(&rpd, fd, d->eng, td, d->eng, NULL));
    DN(dnnl_primitive_create(&r, rpd));
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    DN(dnnl_primitive_execute(r, d->st, 2, a));
    DN(dnnl_stream_wait(d->st));
    dnnl_primitive_destroy(r);
    dnnl_primitive_desc_destroy(rpd);
}

/* oneDNN's depthwise convolution of s with bias and the activation, its
 * activations in format tag `tag` (any or nhwc), inputs reordered from x
 * (NHWC) and wt ([c][1][1][k][k], goihw). */
static void dn_make(dn *d, const shape *s, dnnl_format_tag_t tag, const float *x, const float *wt,
                    const float *bias)
{
    DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&d->st, d->eng, dnnl_stream_default_flags));
    dnnl_dims_t sd = {s->n, s->c, s->h, s->h}, wd = {s->c, 1, 1, s->k, s->k}, bd = {s->c},
                dd = {s->n, s->c, s->oh, s->oh}, st = {s->s, s->s}, dl = {0, 0}, pd = {s->p, s->p};
    dnnl_memory_desc_t smd, wmd, bmd, dmd, su, wu;
    DN(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag));
    DN(dnnl_memory_desc_init_by_tag(&wmd, 5, wd, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    DN(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag));
    DN(dnnl_memory_desc_init_by_tag(&su, 4, sd, dnnl_f32, dnnl_nhwc));
    DN(dnnl_memory_desc_init_by_tag(&wu, 5, wd, dnnl_f32, dnnl_goihw));
    dnnl_convolution_desc_t cd;
    DN(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                  &smd, &wmd, &bmd, &dmd, st, dl, pd, pd));
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    DN(dnnl_post_ops_create(&po));
    if (s->act == 'r') DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    if (s->act == '6') DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f));
    if (s->act == 'h') DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_hardswish, 0.0f, 0.0f));
    if (s->act == 's') DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_swish, 1.0f, 0.0f));
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
    dn_reorder(d, &su, ux, qs, d->src);
    dn_reorder(d, &wu, uw, qw, d->wei);
    dnnl_memory_destroy(ux);
    dnnl_memory_destroy(uw);
    const char *impl = NULL;
    dnnl_primitive_desc_query(pdsc, dnnl_query_impl_info_str, 0, &impl);
    snprintf(d->impl, sizeof d->impl, "%s", impl ? impl : "?");
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
    dnnl_dims_t dd = {s->n, s->c, s->oh, s->oh};
    dnnl_memory_desc_t du;
    DN(dnnl_memory_desc_init_by_tag(&du, 4, dd, dnnl_f32, dnnl_nhwc));
    const dnnl_memory_desc_t *qd;
    DN(dnnl_memory_get_memory_desc(d->dst, &qd));
    dnnl_memory_t uy;
    DN(dnnl_memory_create(&uy, &du, d->eng, y));
    dn_reorder(d, qd, d->dst, &du, uy);
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

enum { E_NHWC, E_NCHW, E_DN_ANY, E_DN_NHWC, E_N };

static void bench(const shape *s, int rounds)
{
    const int64_t C = s->c, hw = s->h * s->h, ohw = s->oh * s->oh, taps = s->k * s->k;
    const int64_t nx = s->n * hw * C, ny = s->n * ohw * C;
    float *x = xalloc(sizeof(float) * (size_t)nx), *xc = xalloc(sizeof(float) * (size_t)nx);
    float *wt = xalloc(sizeof(float) * (size_t)(C * taps));   /* [c][tap] */
    float *wtl = xalloc(sizeof(float) * (size_t)(C * taps));  /* [tap][c] */
    float *bias = xalloc(sizeof(float) * (size_t)C);
    srand(1);
    for (int64_t i = 0; i < nx; i++) x[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t i = 0; i < C * taps; i++) wt[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t i = 0; i < C; i++) bias[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t c = 0; c < C; c++)
        for (int64_t t = 0; t < taps; t++) wtl[t * C + c] = wt[c * taps + t];
    knhwc_to_nchw(x, s->n, C, hw, xc);
    float *y[E_N], *yc = xalloc(sizeof(float) * (size_t)ny);
    for (int e = 0; e < E_N; e++) y[e] = xalloc(sizeof(float) * (size_t)ny);
    const kact act = shape_act(s->act);
    knhwc_geom g = {s->h, s->h, C, 0, C, s->k, s->k, s->s, s->s, 1, 1, s->p, s->p, s->oh, s->oh};
    kdw_geom gc = {(int)s->n, (int)C, (int)s->h, (int)s->h, 1, (int)s->k, (int)s->k, (int)s->s, (int)s->s,
                   1, 1, (int)s->p, (int)s->p, (int)s->oh, (int)s->oh};
    dn da, dh;
    dn_make(&da, s, dnnl_format_tag_any, x, wt, bias);
    dn_make(&dh, s, dnnl_nhwc, x, wt, bias);
    double *t[E_N];
    for (int e = 0; e < E_N; e++) t[e] = calloc((size_t)rounds, sizeof(double));
    for (int it = -2; it < rounds; it++)
        for (int e = 0; e < E_N; e++) {
            double t0 = thread_cpu_s();
            if (e == E_NHWC) knhwc_dw(&g, s->n, x, wtl, bias, act, NULL, y[e], NULL, 1);
            else if (e == E_NCHW) kdw_run(&gc, xc, wt, bias, act, yc, 1);
            else dn_run(e == E_DN_ANY ? &da : &dh);
            if (it >= 0) t[e][it] = thread_cpu_s() - t0;
        }
    knhwc_from_nchw(yc, s->n, C, ohw, y[E_NCHW]);
    dn_out(&da, s, y[E_DN_ANY]);
    dn_out(&dh, s, y[E_DN_NHWC]);
    double ms[E_N], worst = 0;
    for (int e = 0; e < E_N; e++) {
        ms[e] = median(t[e], rounds) * 1e3;
        worst = fmax(worst, rel_diff(y[e], y[E_DN_ANY], ny));
    }
    const double best_dn = fmin(ms[E_DN_ANY], ms[E_DN_NHWC]);
    printf("| %lld | %lldx%lld | %lldx%lld | %lld | %c | %lld | %.4f | %.4f | %.4f | %.4f | **%.2f** | %.1e | %s |\n",
           (long long)C, (long long)s->h, (long long)s->h, (long long)s->k, (long long)s->k,
           (long long)s->s, s->act, (long long)s->n, ms[E_NHWC], ms[E_NCHW], ms[E_DN_ANY],
           ms[E_DN_NHWC], best_dn / ms[E_NHWC], worst, da.impl);
    fflush(stdout);
    if (worst > 1e-4) {
        fprintf(stderr, "outputs differ (%.1e)\n", worst);
        exit(1);
    }
    for (int e = 0; e < E_N; e++) {
        free(t[e]);
        aligned_free(y[e]);
    }
    aligned_free(yc);
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
    printf("| C | H x W | kernel | stride | act | N | native NHWC ms | native NCHW ms | oneDNN any ms | "
           "oneDNN NHWC ms | best oneDNN / native NHWC | max rel. diff | oneDNN (any) implementation |\n"
           "| ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
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
