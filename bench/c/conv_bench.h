/* Helpers the convolution benches against oneDNN share (conv_native.c,
 * dw_native.c): medians, aligned buffers, oneDNN's status checks, the
 * relative difference of two outputs, and oneDNN's forward convolution
 * with bias and one eltwise post-op, its inputs reordered from NHWC x and
 * plain weights. */
#ifndef AIT_BENCH_CONV_BENCH_H
#define AIT_BENCH_CONV_BENCH_H
#include <dnnl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/tensor.h"

static inline int cmpd(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline void *xalloc(size_t bytes)
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

/* max |a - b| / max |b|. */
static inline double rel_diff(const float *a, const float *b, int64_t n)
{
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0 ? d / m : d;
}

/* Each of n engines' median time in ms (t[e]: rounds timings in seconds)
 * into ms[e]; returns the worst rel_diff of y[e] against y[ref] (ny
 * values), after exiting when it is above 1e-4 (a wrong kernel is not
 * timed). */
static inline double engines_ms(double *const *t, float *const *y, int n, int ref, int rounds, int64_t ny,
                                double *ms)
{
    double worst = 0;
    for (int e = 0; e < n; e++) {
        ms[e] = median(t[e], rounds) * 1e3;
        worst = fmax(worst, rel_diff(y[e], y[ref], ny));
    }
    if (worst > 1e-4) {
        fprintf(stderr, "outputs differ (%.1e)\n", worst);
        exit(1);
    }
    return worst;
}

typedef struct dn {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bia, dst;
    char impl[96]; /* the implementation oneDNN picked */
} dn;

/* One reorder of memory `from` (desc fd) into `to` (desc td). */
static inline void dn_reorder(dn *d, const dnnl_memory_desc_t *fd, dnnl_memory_t from,
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

/* The primitive of op desc `cd` (a convolution's or deconvolution's, on
 * memory descs oneDNN may pick: format any), eltwise post-op `alg` (alpha,
 * beta; none when alg is dnnl_alg_kind_undef) appended; its memories made
 * in the formats it picked, x (desc su) and wt (desc wu) reordered into
 * them, bias (desc bmd) used in place, its implementation's name kept. */
static inline void dn_finish(dn *d, const void *cd, const dnnl_memory_desc_t *su, const float *x,
                             const dnnl_memory_desc_t *wu, const float *wt,
                             const dnnl_memory_desc_t *bmd, const float *bias, dnnl_alg_kind_t alg,
                             float alpha, float beta)
{
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    DN(dnnl_post_ops_create(&po));
    if (alg != dnnl_alg_kind_undef) DN(dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, beta));
    DN(dnnl_primitive_attr_create(&attr));
    DN(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_primitive_desc_t pdsc;
    DN(dnnl_primitive_desc_create(&pdsc, cd, attr, d->eng, NULL));
    const dnnl_memory_desc_t *qs = dnnl_primitive_desc_query_md(pdsc, dnnl_query_src_md, 0),
                             *qw = dnnl_primitive_desc_query_md(pdsc, dnnl_query_weights_md, 0),
                             *qd = dnnl_primitive_desc_query_md(pdsc, dnnl_query_dst_md, 0);
    DN(dnnl_memory_create(&d->src, qs, d->eng, DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&d->wei, qw, d->eng, DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&d->bia, bmd, d->eng, (void *)bias));
    DN(dnnl_memory_create(&d->dst, qd, d->eng, DNNL_MEMORY_ALLOCATE));
    dnnl_memory_t ux, uw;
    DN(dnnl_memory_create(&ux, su, d->eng, (void *)x));
    DN(dnnl_memory_create(&uw, wu, d->eng, (void *)wt));
    dn_reorder(d, su, ux, qs, d->src);
    dn_reorder(d, wu, uw, qw, d->wei);
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

/* The convolution of source dims sd (n, c, h, w) into dd by weights of
 * wrank dims wd in plain format wtag (oihw, or goihw for groups), square
 * stride and pads, bias, then eltwise post-op `alg` (alpha, beta; none
 * when alg is dnnl_alg_kind_undef); activations in format tag `tag` (any:
 * oneDNN's pick), weights in its pick; x (NHWC), wt and bias copied in. */
static inline void dn_make(dn *d, const dnnl_dims_t sd, int wrank, const dnnl_dims_t wd,
                           dnnl_format_tag_t wtag, const dnnl_dims_t dd, int64_t stride, int64_t pad,
                           dnnl_format_tag_t tag, dnnl_alg_kind_t alg, float alpha, float beta,
                           const float *x, const float *wt, const float *bias)
{
    DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&d->st, d->eng, dnnl_stream_default_flags));
    dnnl_dims_t bd = {dd[1]}, st = {stride, stride}, dl = {0, 0}, pd = {pad, pad};
    dnnl_memory_desc_t smd, wmd, bmd, dmd, su, wu;
    DN(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag));
    DN(dnnl_memory_desc_init_by_tag(&wmd, wrank, wd, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
    DN(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag));
    DN(dnnl_memory_desc_init_by_tag(&su, 4, sd, dnnl_f32, dnnl_nhwc));
    DN(dnnl_memory_desc_init_by_tag(&wu, wrank, wd, dnnl_f32, wtag));
    dnnl_convolution_desc_t cd;
    DN(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                  &smd, &wmd, &bmd, &dmd, st, dl, pd, pd));
    dn_finish(d, &cd, &su, x, &wu, wt, &bmd, bias, alg, alpha, beta);
}

static inline void dn_run(dn *d)
{
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, d->src}, {DNNL_ARG_WEIGHTS, d->wei},
                            {DNNL_ARG_BIAS, d->bia}, {DNNL_ARG_DST, d->dst}};
    DN(dnnl_primitive_execute(d->prim, d->st, 4, a));
    DN(dnnl_stream_wait(d->st));
}

/* oneDNN's output (dims dd) in NHWC. */
static inline void dn_out(dn *d, const dnnl_dims_t dd, float *y)
{
    dnnl_memory_desc_t du;
    DN(dnnl_memory_desc_init_by_tag(&du, 4, dd, dnnl_f32, dnnl_nhwc));
    const dnnl_memory_desc_t *qd;
    DN(dnnl_memory_get_memory_desc(d->dst, &qd));
    dnnl_memory_t uy;
    DN(dnnl_memory_create(&uy, &du, d->eng, y));
    dn_reorder(d, qd, d->dst, &du, uy);
    dnnl_memory_destroy(uy);
}
#endif
