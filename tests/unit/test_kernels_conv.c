/* The native backend's kernels (src/kernels/), part 2: depthwise
 * convolution (float and static int8), the channels-last im2col (float and uint8) and
 * static int8's implicit GEMM reading its padded input in place, the
 * implicit-GEMM convolution (on every GEMM kernel this CPU runs), the direct stem
 * convolution (kstem_conv), the direct grouped convolution (kgrp_conv), ConvTranspose, pooling (and uint8 MaxPool) and Resize, at every ISA this CPU has
 * and on the portable path, with 1 and 2 threads, against loops in double
 * written here; odd channel counts and sizes, every epilogue and mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/tensor.h"
#include "kernels/conv_ig.h"
#include "kernels/convt.h"
#include "kernels/dwconv.h"
#include "kernels/gemm.h"
#include "kernels/grpconv.h"
#include "kernels/nhwc.h"
#include "kernels/pool.h"
#include "kernels/qgemm.h"
#include "kernels/resize.h"
#include "kernels/stem.h"
#include "kernels_check.h"

static void dw_want(const kdw_geom *g, const float *x, const float *w, const float *bias, kact a,
                    double *want)
{
    int oc = g->c * g->mult;
    for (int n = 0; n < g->n; n++)
        for (int o = 0; o < oc; o++)
            for (int oy = 0; oy < g->oh; oy++)
                for (int ox = 0; ox < g->ow; ox++) {
                    double s = bias ? bias[o] : 0;
                    const float *xp = x + ((size_t)n * g->c + o / g->mult) * g->h * g->w;
                    for (int ky = 0; ky < g->kh; ky++)
                        for (int kx = 0; kx < g->kw; kx++) {
                            int iy = oy * g->sh - g->pt + ky * g->dh;
                            int ix = ox * g->sw - g->pl + kx * g->dw;
                            if (iy >= 0 && iy < g->h && ix >= 0 && ix < g->w)
                                s += (double)xp[iy * g->w + ix] *
                                     w[((size_t)o * g->kh + ky) * g->kw + kx];
                        }
                    want[(((size_t)n * oc + o) * g->oh + oy) * g->ow + ox] = kc_fun(a.f, s, a.a, a.b);
                }
}

/* The channels-last depthwise kernel (knhwc_dw) on the same case: x and
 * the weights changed to NHWC and [tap][c], a residual added after the
 * activation, the output changed back. */
/* knhwc_dw_nchw (between NCHW values) by bands of 1, 2 and 3 output rows
 * and the default, images ohw * c + 5 apart (a Concat's), against want. */
static void nhwc_dw_nchw_check(const knhwc_geom *kg, int64_t n, const float *x, const float *wt,
                               const float *b, kact a, float *y, const double *want, double tol,
                               int kc_threads)
{
    const int64_t ohw = kg->oh * kg->ow, ys = ohw * kg->cs + 5, ny = n * ohw * kg->cs;
    for (int64_t rows = 0; rows <= 3; rows++) {
        float *yn = malloc((size_t)(n * ys) * sizeof *yn);
        float *sc = malloc((size_t)knhwc_dw_nchw_floats(kg, rows, kc_threads) * sizeof *sc);
        for (int64_t i = 0; i < n * ys; i++) yn[i] = NAN;
        knhwc_dw_nchw(kg, n, x, wt, b, a, yn, ys, rows, sc, kc_threads);
        for (int64_t i = 0; i < n; i++) memcpy(y + i * ohw * kg->cs, yn + i * ys, (size_t)(ohw * kg->cs) * sizeof *y);
        if (!kc_close("depthwise NCHW by bands", y, want, (size_t)ny, tol, 1e-5))
            fail_msg("knhwc_dw_nchw, bands of %lld rows [isa %s] %d threads", (long long)rows,
                     kisa_name(kisa_active()), kc_threads);
        free(yn);
        free(sc);
    }
}

static void nhwc_dw_check(const kdw_geom *g, const float *x, const float *w, const float *b,
                          kact a, const double *want, double tol)
{
    size_t hw = (size_t)g->h * g->w, ohw = (size_t)g->oh * g->ow, taps = (size_t)g->kh * g->kw;
    size_t nx = (size_t)g->n * g->c * hw, ny = (size_t)g->n * g->c * ohw;
    float *xt = malloc(nx * sizeof *xt), *wt = malloc(taps * g->c * sizeof *wt);
    float *res = kc_rand(ny, 7, -1, 1), *yt = malloc(ny * sizeof *yt), *y = malloc(ny * sizeof *y);
    double *want2 = malloc(ny * sizeof *want2);
    knhwc_from_nchw(x, g->n, g->c, (int64_t)hw, xt);
    for (int c = 0; c < g->c; c++)
        for (size_t t = 0; t < taps; t++) wt[t * g->c + c] = w[c * taps + t];
    float *rt = malloc(ny * sizeof *rt);
    knhwc_from_nchw(res, g->n, g->c, (int64_t)ohw, rt);
    for (size_t k = 0; k < ny; k++) want2[k] = want[k] + res[k];
    knhwc_geom kg = {g->h, g->w, g->c, 0, g->c, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw, g->pt,
                     g->pl, g->oh, g->ow};
    /* each output row's channel sums (the SE pool's), from want2 */
    size_t ns = (size_t)g->n * g->oh * g->c;
    float *sums = malloc(ns * sizeof *sums);
    double *wsum = calloc(ns, sizeof *wsum);
    for (int n = 0; n < g->n; n++)
        for (int c = 0; c < g->c; c++)
            for (int oy = 0; oy < g->oh; oy++)
                for (int ox = 0; ox < g->ow; ox++)
                    wsum[((size_t)n * g->oh + oy) * g->c + c] +=
                        want2[(((size_t)n * g->c + c) * g->oh + oy) * g->ow + ox];
    KC_EACH_ISA({
        memset(yt, 0, ny * sizeof *yt);
        knhwc_dw(&kg, g->n, xt, wt, b, a, rt, yt, NULL, kc_threads);
        knhwc_to_nchw(yt, g->n, g->c, (int64_t)ohw, y);
        assert_true(kc_close("depthwise NHWC", y, want2, ny, tol, 1e-5));
        memset(yt, 0, ny * sizeof *yt);
        knhwc_dw(&kg, g->n, xt, wt, b, a, rt, yt, sums, kc_threads);
        knhwc_to_nchw(yt, g->n, g->c, (int64_t)ohw, y);
        assert_true(kc_close("depthwise NHWC with sums", y, want2, ny, tol, 1e-5));
        assert_true(kc_close("depthwise NHWC row sums", sums, wsum, ns, tol * g->ow, 1e-5));
        nhwc_dw_nchw_check(&kg, g->n, x, wt, b, a, y, want, tol, kc_threads);
    });
    free(xt), free(wt), free(res), free(yt), free(y), free(want2), free(rt), free(sums), free(wsum);
}

/* The static int8 depthwise kernel (knhwc_dw_u8) on the same geometry:
 * uint8 x at a zero point, int8 weights [tap][c], per-channel scales and
 * the bias; the float output against the exact integer sums in double,
 * and the uint8 output qg_requant_u8's of that float output at a scale and
 * zero point, byte for byte, each within one step of QuantizeLinear's
 * (qg_quant_u8). */
static void nhwc_dwq_check(const kdw_geom *g, const float *b, kact a, int seed)
{
    size_t hw = (size_t)g->h * g->w, ohw = (size_t)g->oh * g->ow, taps = (size_t)g->kh * g->kw;
    size_t nx = (size_t)g->n * g->c * hw, ny = (size_t)g->n * g->c * ohw, row = (size_t)g->ow * g->c;
    float *xr = kc_rand(nx, seed, 0, 255.99f), *wr = kc_rand(taps * g->c, seed + 1, -127.49f, 127.49f);
    float *sc = kc_rand((size_t)g->c, seed + 2, 1e-4f, 2e-3f), *y = malloc(ny * sizeof *y);
    float *rows = malloc(2 * row * sizeof *rows);
    uint8_t *x = malloc(nx), *yq = malloc(ny), *yw = malloc(ny);
    double *want = malloc(ny * sizeof *want);
    const int32_t xz = seed % 256, yz = (seed * 7) % 200;
    for (size_t i = 0; i < nx; i++) x[i] = (uint8_t)xr[i];
    for (size_t i = 0; i < taps * (size_t)g->c; i++) wr[i] = nearbyintf(wr[i]);
    for (int n = 0; n < g->n; n++)
        for (int oy = 0; oy < g->oh; oy++)
            for (int ox = 0; ox < g->ow; ox++)
                for (int c = 0; c < g->c; c++) {
                    int64_t s = 0;
                    for (int ky = 0; ky < g->kh; ky++)
                        for (int kx = 0; kx < g->kw; kx++) {
                            int iy = oy * g->sh - g->pt + ky * g->dh, ix = ox * g->sw - g->pl + kx * g->dw;
                            if (iy >= 0 && iy < g->h && ix >= 0 && ix < g->w)
                                s += ((int64_t)x[((size_t)n * hw + (size_t)iy * g->w + ix) * g->c + c] - xz) *
                                     (int64_t)wr[(size_t)(ky * g->kw + kx) * g->c + c];
                        }
                    double v = (double)s * sc[c] + (b ? b[c] : 0);
                    want[(((size_t)n * g->oh + oy) * g->ow + ox) * g->c + c] = kc_fun(a.f, v, a.a, a.b);
                }
    knhwc_geom kg = {g->h, g->w, g->c, 0, g->c, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw, g->pt,
                     g->pl, g->oh, g->ow};
    KC_EACH_ISA({
        knhwc_dw_u8(&kg, g->n, x, xz, wr, sc, b, a, y, NULL, 0, 0, kc_threads);
        assert_true(kc_close("depthwise int8", y, want, ny, 1e-5, 1e-5));
        qg_quant_u8(y, (int64_t)ny, 0.02f, yz, yw);
        for (size_t i = 0; i < ny; i++) yq[i] = yw[i]; /* QuantizeLinear's */
        qg_requant_u8(y, (int64_t)ny, 0.02f, yz, yw);
        for (size_t i = 0; i < ny; i++) assert_true(abs((int)yq[i] - (int)yw[i]) <= 1);
        memset(yq, 0, ny);
        knhwc_dw_u8(&kg, g->n, x, xz, wr, sc, b, a, rows, yq, 0.02f, yz, kc_threads);
        assert_memory_equal(yq, yw, ny);
    });
    free(xr), free(wr), free(sc), free(y), free(rows), free(x), free(yq), free(yw), free(want);
}

/* The channels-last im2col of uint8 activations (static int8's) and of
 * floats: every element where the geometry puts it, the padding the
 * given zero point, rows kp apart zero after K. */
static void im2col_u8_check(knhwc_geom g)
{
    g.oh = (g.h + 2 * g.pt - g.dh * (g.kh - 1) - 1) / g.sh + 1;
    g.ow = (g.w + 2 * g.pl - g.dw * (g.kw - 1) - 1) / g.sw + 1;
    const int64_t hw = g.h * g.w, k = g.kh * g.kw * g.c, kp = k + 3, p0 = 3, p1 = g.oh * g.ow - 1;
    float *x = malloc(sizeof(float) * (size_t)(hw * g.cs)), *a = malloc(sizeof(float) * (size_t)(p1 * k));
    uint8_t *xq = malloc((size_t)(hw * g.cs)), *q = malloc((size_t)(p1 * kp));
    for (int64_t i = 0; i < hw * g.cs; i++) {
        xq[i] = (uint8_t)(i * 37 % 251 + 1);
        x[i] = xq[i];
    }
    assert_true(p1 > p0);
    knhwc_im2col(&g, x, p0, p1, a);
    memset(q, 0xee, (size_t)(p1 * kp));
    knhwc_im2col_u8(&g, xq, 0, p0, p1, q, kp);
    for (int64_t r = 0; r < p1 - p0; r++)
        for (int64_t j = 0; j < kp; j++) {
            int want = 0; /* from the geometry: tap (ky, kx), channel ci */
            if (j < k) {
                int64_t p = p0 + r, tap = j / g.c, ci = j % g.c, ky = tap / g.kw, kx = tap % g.kw;
                int64_t iy = p / g.ow * g.sh - g.pt + ky * g.dh, ix = p % g.ow * g.sw - g.pl + kx * g.dw;
                if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) want = xq[(iy * g.w + ix) * g.cs + g.c0 + ci];
                assert_int_equal((int)a[r * k + j], want);
            }
            assert_int_equal(q[r * kp + j], want);
        }
    knhwc_im2col_u8(&g, xq, 200, p0, p1, q, kp); /* the padding is the zero point */
    int pads = 0;
    for (int64_t r = 0; r < p1 - p0; r++)
        for (int64_t j = 0; j < k; j++) {
            pads += a[r * k + j] == 0;
            assert_int_equal(q[r * kp + j], a[r * k + j] == 0 ? 200 : (int)a[r * k + j]);
        }
    assert_true(pads > 0);
    free(x), free(a), free(xq), free(q);
}

/* ... and all the channels of the image with adjacent taps (a row's taps
 * inside copied as one run): a 7x7 stride-2 stem of 3 channels, 3x3 with
 * pads of 1 and 5 channels, at stride 1 and 2. */
static void test_im2col_u8(void **state)
{
    (void)state;
    im2col_u8_check((knhwc_geom){.h = 7, .w = 6, .cs = 11, .c0 = 2, .c = 5, .kh = 3, .kw = 2,
                                 .sh = 2, .sw = 1, .dh = 1, .dw = 2, .pt = 1, .pl = 2});
    im2col_u8_check((knhwc_geom){.h = 7, .w = 6, .cs = 3, .c = 3, .kh = 7, .kw = 7, .sh = 2,
                                 .sw = 2, .dh = 1, .dw = 1, .pt = 3, .pl = 3});
    im2col_u8_check((knhwc_geom){.h = 5, .w = 7, .cs = 5, .c = 5, .kh = 3, .kw = 3, .sh = 1,
                                 .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1});
    im2col_u8_check((knhwc_geom){.h = 6, .w = 5, .cs = 5, .c = 5, .kh = 3, .kw = 3, .sh = 2,
                                 .sw = 2, .dh = 2, .dw = 1, .pt = 2, .pl = 1});
}

/* Static int8's implicit GEMM (knhwc_padded_u8, knhwc_pad_u8,
 * knhwc_rows_u8, qgemm_u8_rows) on n images: C against the conv in double
 * of the integers (weights integer already, each column reaching 127: a
 * weight scale of 1, quantised exactly), and C and its uint8 requantised
 * bytes the same as qgemm_u8's and qgemm_u8_q8's on the im2col. */
static void implicit_u8_check(knhwc_geom g, int64_t xc, int64_t n, int64_t m, bool in_place)
{
    g.oh = (g.h + 2 * g.pt - g.dh * (g.kh - 1) - 1) / g.sh + 1;
    g.ow = (g.w + 2 * g.pl - (g.kw - 1) - 1) / g.sw + 1;
    const int64_t hw = g.h * g.w, ohw = g.oh * g.ow, k = g.kh * g.kw * g.c, xz = 97;
    const float sa = 0.03f, ys = 0.5f;
    size_t pb = qg_pack_size(QG_INT8DQ, 0, k, m);
    int64_t wp, bytes = knhwc_padded_u8(&g, xc, &wp);
    assert_true(in_place ? bytes == 0 : bytes > 0);
    float *w = malloc(sizeof(float) * (size_t)(k * m)), *bias = kc_rand((size_t)m, 7, -20, 20);
    float *sv = malloc(sizeof(float) * (size_t)ohw), *c = malloc(sizeof(float) * (size_t)(ohw * m));
    float *c2 = malloc(sizeof(float) * (size_t)(ohw * m));
    int32_t *zv = malloc(sizeof(int32_t) * (size_t)ohw);
    uint8_t *x = malloc((size_t)(n * hw * xc)), *xp = malloc((size_t)bytes + 1);
    uint8_t *xw = malloc((size_t)(hw * g.c)); /* an image widened to c channels by hand */
    uint8_t *a = malloc((size_t)(ohw * k)), *y = malloc((size_t)(ohw * m)), *y2 = malloc((size_t)(ohw * m));
    const uint8_t **rp = malloc(sizeof(void *) * (size_t)ohw);
    void *pk = aligned_zalloc(pb);
    double *want = malloc(sizeof(double) * (size_t)(ohw * m));
    for (int64_t i = 0; i < k * m; i++) w[i] = (float)((i * 7919 % 255) - 127);
    for (int64_t j = 0; j < m; j++) w[(j * 5 % k) * m + j] = j % 2 ? 127.0f : -127.0f;
    for (int64_t i = 0; i < n * hw * xc; i++) x[i] = (uint8_t)((i * 2654435761u) >> 13);
    for (int64_t i = 0; i < ohw; i++) sv[i] = sa, zv[i] = (int32_t)xz;
    qg_pack(QG_INT8DQ, 0, w, m, 1, k, m, pk);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(pk, pb, &v, &e), AIT_OK);
    gemm_epi ep = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_RELU};
    for (int64_t im = 0; im < n; im++) {
        const uint8_t *xi = x + im * hw * xc;
        for (int64_t i = 0; i < hw * g.c; i++) xw[i] = i % g.c < xc ? xi[i / g.c * xc + i % g.c] : (uint8_t)xz;
        for (int64_t p = 0; p < ohw; p++)
            for (int64_t j = 0; j < m; j++) {
                double s = 0;
                for (int64_t ky = 0; ky < g.kh; ky++)
                    for (int64_t kx = 0; kx < g.kw; kx++)
                        for (int64_t ci = 0; ci < g.c; ci++) {
                            int64_t iy = p / g.ow * g.sh - g.pt + ky * g.dh, ix = p % g.ow * g.sw - g.pl + kx;
                            int xv = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w && ci < xc
                                         ? xi[(iy * g.w + ix) * xc + ci] : (int)xz;
                            s += (double)(xv - xz) * w[((ky * g.kw + kx) * g.c + ci) * m + j];
                        }
                s = s * sa + bias[j];
                want[p * m + j] = s > 0 ? s : 0;
            }
        knhwc_im2col_u8(&g, xw, (uint8_t)xz, 0, ohw, a, k);
        qg_rows ar0;
        ar0.rp = rp;
        ar0.runs = g.kh;
        KC_EACH_ISA({
            qg_rows ar = ar0;
            if (bytes) knhwc_pad_u8(&g, xi, xc, (uint8_t)xz, xp);
            /* two blocks of pixels, the second's rows from its own first */
            knhwc_rows_u8(&g, bytes ? xp : xi, wp, 0, ohw / 2, rp, &ar.off);
            knhwc_rows_u8(&g, bytes ? xp : xi, wp, ohw / 2, ohw, rp + ohw / 2, &ar.off);
            memset(c, 0xff, sizeof(float) * (size_t)(ohw * m));
            assert_true(qgemm_u8_rows(&v, &ar, sv, zv, ohw, c, m, NULL, 0, 0, 0, &ep, kc_threads));
            if (!kc_close("implicit u8 conv", c, want, (size_t)(ohw * m), 1e-3, 1e-5)) fail();
            qgemm_u8(&v, a, sv, zv, ohw, c2, m, &ep, kc_threads);
            assert_memory_equal(c, c2, sizeof(float) * (size_t)(ohw * m));
            assert_true(qgemm_u8_rows(&v, &ar, sv, zv, ohw, NULL, 0, y, m, ys, 3, &ep, kc_threads));
            qgemm_u8_q8(&v, a, sv, zv, ohw, y2, m, ys, 3, &ep, kc_threads);
            assert_memory_equal(y, y2, (size_t)(ohw * m));
            /* the one scale and zero point given alone (qgemm_u8_uni): the same floats and bytes */
            memset(c, 0xff, sizeof(float) * (size_t)(ohw * m));
            assert_true(qgemm_u8_uni(&v, NULL, &ar, sa, (int32_t)xz, ohw, c, m, NULL, 0, 0, 0, &ep,
                                     kc_threads));
            assert_memory_equal(c, c2, sizeof(float) * (size_t)(ohw * m));
            memset(y, 0x5a, (size_t)(ohw * m));
            assert_true(qgemm_u8_uni(&v, NULL, &ar, sa, (int32_t)xz, ohw, NULL, 0, y, m, ys, 3, &ep,
                                     kc_threads));
            assert_memory_equal(y, y2, (size_t)(ohw * m));
            ar.runs = 5; /* runs that do not split K in quads: refused */
            assert_false(qgemm_u8_rows(&v, &ar, sv, zv, ohw, c, m, NULL, 0, 0, 0, &ep, kc_threads));
            assert_false(qgemm_u8_uni(&v, NULL, &ar, sa, (int32_t)xz, ohw, c, m, NULL, 0, 0, 0, &ep,
                                      kc_threads));
        });
    }
    free(w), free(bias), free(sv), free(c), free(c2), free(zv), free(x), free(xp), free(xw), free(a), free(y);
    free(y2), free(rp), aligned_free(pk), free(want);
}

/* knhwc_pad_u8_nchw on n float NCHW images of g (xc planes, widened to
 * g.c): byte for byte knhwc_pad_u8 of qg_quant_u8 of knhwc_from_nchw, at
 * every ISA, with NaN, infinities and values past the uint8 range. */
static void pad_nchw_check(knhwc_geom g, int64_t xc, int64_t n)
{
    g.oh = (g.h + 2 * g.pt - g.dh * (g.kh - 1) - 1) / g.sh + 1;
    g.ow = (g.w + 2 * g.pl - (g.kw - 1) - 1) / g.sw + 1;
    const int64_t hw = g.h * g.w;
    const float s = 0.021f;
    const int32_t z = 113;
    int64_t wp, bytes = knhwc_padded_u8(&g, xc, &wp);
    assert_true(bytes > 0);
    float *x = kc_rand((size_t)(n * xc * hw), 11, -4, 4), *xt = malloc(sizeof(float) * (size_t)(xc * hw));
    x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = 1e9f, x[4] = -1e9f, x[5] = 0.5f * s;
    uint8_t *xq = malloc((size_t)(xc * hw)), *want = malloc((size_t)bytes),
            *got = malloc((size_t)bytes);
    KC_EACH_ISA({
        for (int64_t im = 0; im < n; im++) {
            knhwc_from_nchw(x + im * xc * hw, 1, xc, hw, xt);
            qg_quant_u8(xt, xc * hw, s, z, xq);
            knhwc_pad_u8(&g, xq, xc, (uint8_t)z, want);
            memset(got, 0x5a, (size_t)bytes);
            knhwc_pad_u8_nchw(&g, x + im * xc * hw, xc, s, z, (uint8_t)z, got);
            if (memcmp(got, want, (size_t)bytes) != 0)
                fail_msg("knhwc_pad_u8_nchw %lldx%lld, %lld of %lld channels, image %lld (%s): "
                         "not knhwc_pad_u8's bytes", (long long)g.h, (long long)g.w,
                         (long long)xc, (long long)g.c, (long long)im, kisa_name(kisa_active()));
        }
    });
    free(x), free(xt), free(xq), free(want), free(got);
}

/* The stems' geometries: 3 planes widened to 4 (3x3 stride 2 pads 1, 7x7 stride 2 pads 3),
 * a row past the 256 columns quantised at a time, and as many planes as channels (pads at
 * the top and left only). */
static void test_pad_u8_nchw(void **state)
{
    (void)state;
    pad_nchw_check((knhwc_geom){.h = 9, .w = 10, .cs = 4, .c = 4, .kh = 3, .kw = 3, .sh = 2,
                                .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 3, 2);
    pad_nchw_check((knhwc_geom){.h = 13, .w = 11, .cs = 4, .c = 4, .kh = 7, .kw = 7, .sh = 2,
                                .sw = 2, .dh = 1, .dw = 1, .pt = 3, .pl = 3}, 3, 1);
    pad_nchw_check((knhwc_geom){.h = 3, .w = 300, .cs = 4, .c = 4, .kh = 3, .kw = 3, .sh = 1,
                                .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 3, 1);
    pad_nchw_check((knhwc_geom){.h = 6, .w = 7, .cs = 8, .c = 8, .kh = 3, .kw = 3, .sh = 1,
                                .sw = 1, .dh = 1, .dw = 1, .pt = 2, .pl = 1}, 8, 2);
}

/* 3x3 pads 1 at stride 1 and 2 (8 and 12 channels, 37 and 70 outputs:
 * no multiple of 16), dilation along y, a pad only at the top and left
 * (the window past the bottom and right), and a 1x1 of stride 2 read in
 * place; an im2col-only geometry (dilation along x, a channel slice) said so. */
static void test_implicit_u8(void **state)
{
    (void)state;
    implicit_u8_check((knhwc_geom){.h = 7, .w = 9, .cs = 8, .c = 8, .kh = 3, .kw = 3, .sh = 1,
                                   .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 8, 3, 37, false);
    implicit_u8_check((knhwc_geom){.h = 9, .w = 6, .cs = 12, .c = 12, .kh = 3, .kw = 3, .sh = 2,
                                   .sw = 2, .dh = 2, .dw = 1, .pt = 2, .pl = 1}, 12, 1, 70, false);
    implicit_u8_check((knhwc_geom){.h = 7, .w = 5, .cs = 4, .c = 4, .kh = 1, .kw = 1, .sh = 2,
                                   .sw = 2, .dh = 1, .dw = 1}, 4, 2, 19, true);
    /* the 3-channel stems widened to 4 (knhwc_pad_u8's pad channel): 7x7 stride 2 pads 3,
     * 3x3 stride 2 pads 1, and a 1x1 that is in place at 4 channels but not at 3 */
    implicit_u8_check((knhwc_geom){.h = 13, .w = 11, .cs = 4, .c = 4, .kh = 7, .kw = 7, .sh = 2,
                                   .sw = 2, .dh = 1, .dw = 1, .pt = 3, .pl = 3}, 3, 2, 21, false);
    implicit_u8_check((knhwc_geom){.h = 9, .w = 10, .cs = 4, .c = 4, .kh = 3, .kw = 3, .sh = 2,
                                   .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 3, 1, 32, false);
    implicit_u8_check((knhwc_geom){.h = 5, .w = 6, .cs = 4, .c = 4, .kh = 1, .kw = 1, .sh = 1,
                                   .sw = 1, .dh = 1, .dw = 1}, 3, 1, 16, false);
    int64_t wp;
    assert_int_equal(knhwc_padded_u8(&(knhwc_geom){.h = 5, .w = 5, .cs = 8, .c = 8, .kh = 3, .kw = 3,
                                                   .sh = 1, .sw = 1, .dh = 1, .dw = 2, .oh = 1, .ow = 1},
                                     8, &wp), -1);
    assert_int_equal(knhwc_padded_u8(&(knhwc_geom){.h = 5, .w = 5, .cs = 8, .c0 = 4, .c = 4, .kh = 3,
                                                   .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                                                   .oh = 3, .ow = 3},
                                     4, &wp), -1);
    assert_int_equal(knhwc_padded_u8(&(knhwc_geom){.h = 5, .w = 5, .cs = 3, .c = 3, .kh = 7, .kw = 7,
                                                   .sh = 2, .sw = 2, .dh = 1, .dw = 1, .oh = 3, .ow = 3},
                                     3, &wp), -1);
    /* more channels in the image than in the window: refused */
    assert_int_equal(knhwc_padded_u8(&(knhwc_geom){.h = 5, .w = 5, .cs = 4, .c = 4, .kh = 3, .kw = 3,
                                                   .sh = 1, .sw = 1, .dh = 1, .dw = 1, .oh = 3, .ow = 3},
                                     5, &wp), -1);
}

/* The float channels-last im2col against a loop over every tap: kernel
 * rows copied as one run (no dilation along x, whole pixels: the stem's
 * 3 channels, odd channels, a pad wider than the kernel) and tap by tap
 * (a channel slice of a wider image, dilation), the same from the NCHW
 * planes (knhwc_im2col_nchw) at each ISA; and the NCHW <-> NHWC
 * changes around it, a few channels (an image's 3) and many. */
static void test_im2col_f32(void **state)
{
    (void)state;
    static const knhwc_geom gs[] = {
        {.h = 9, .w = 8, .cs = 3, .c = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1},
        {.h = 7, .w = 6, .cs = 11, .c0 = 2, .c = 5, .kh = 3, .kw = 2, .sh = 2, .sw = 1, .dh = 1, .dw = 2, .pt = 1, .pl = 2},
        {.h = 5, .w = 5, .cs = 17, .c = 17, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 1, .pt = 1, .pl = 1},
        {.h = 4, .w = 5, .cs = 2, .c = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 3, .pl = 3},
        {.h = 6, .w = 7, .cs = 70, .c = 70, .kh = 1, .kw = 3, .sh = 1, .sw = 3, .dh = 1, .dw = 1, .pt = 0, .pl = 1},
        {.h = 6, .w = 5, .cs = 31, .c0 = 1, .c = 30, .kh = 3, .kw = 3, .sh = 1, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 0},
    };
    for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
        knhwc_geom g = gs[gi];
        g.oh = (g.h + 2 * g.pt - g.dh * (g.kh - 1) - 1) / g.sh + 1;
        g.ow = (g.w + 2 * g.pl - g.dw * (g.kw - 1) - 1) / g.sw + 1;
        const int64_t k = g.kh * g.kw * g.c, np = g.oh * g.ow, p0 = gi % 2, p1 = np - (gi % 3 == 0);
        float *x = test_malloc(sizeof(float) * (size_t)(g.h * g.w * g.cs));
        float *a = test_malloc(sizeof(float) * (size_t)(np * k));
        for (int64_t i = 0; i < g.h * g.w * g.cs; i++) x[i] = (float)(i % 97 + 1);
        memset(a, 0xee, sizeof(float) * (size_t)(np * k));
        knhwc_im2col(&g, x, p0, p1, a);
        for (int64_t p = p0; p < p1; p++)
            for (int64_t ky = 0; ky < g.kh; ky++)
                for (int64_t kx = 0; kx < g.kw; kx++)
                    for (int64_t ci = 0; ci < g.c; ci++) {
                        int64_t iy = p / g.ow * g.sh - g.pt + ky * g.dh, ix = p % g.ow * g.sw - g.pl + kx * g.dw;
                        float want = iy < 0 || iy >= g.h || ix < 0 || ix >= g.w
                                         ? 0.0f : x[(iy * g.w + ix) * g.cs + g.c0 + ci];
                        float got = a[(p - p0) * k + (ky * g.kw + kx) * g.c + ci];
                        if (got != want)
                            fail_msg("im2col geometry %zu: pixel %lld tap (%lld, %lld) channel %lld: %g, want %g",
                                     gi, (long long)p, (long long)ky, (long long)kx, (long long)ci,
                                     (double)got, (double)want);
                    }
        /* the same rows from x's NCHW planes (a stem's im2col, knhwc_im2col_nchw), each ISA:
         * windows inside the image gathered, the others element by element */
        float *xp = test_malloc(sizeof(float) * (size_t)(g.h * g.w * g.cs));
        float *b = test_malloc(sizeof(float) * (size_t)(np * k));
        for (int64_t i = 0; i < g.h * g.w; i++)
            for (int64_t c = 0; c < g.cs; c++) xp[c * g.h * g.w + i] = x[i * g.cs + c];
        KC_EACH_ISA({
            memset(b, 0xee, sizeof(float) * (size_t)(np * k));
            knhwc_im2col_nchw(&g, xp, p0, p1, b);
            for (int64_t j = 0; j < (p1 - p0) * k; j++)
                if (b[j] != a[j])
                    fail_msg("im2col from planes, geometry %zu, ISA %d: element %lld of A: %g, want %g", gi,
                             kc_i, (long long)j, (double)b[j], (double)a[j]);
        });
        test_free(xp);
        test_free(b);
        test_free(x);
        test_free(a);
    }
    static const int64_t shapes[][3] = {{2, 3, 37}, {1, 1, 5}, {2, 4, 17}, {1, 21, 35}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int64_t n = shapes[si][0], c = shapes[si][1], hw = shapes[si][2], all = n * c * hw;
        float *x = test_malloc(sizeof(float) * (size_t)all), *y = test_malloc(sizeof(float) * (size_t)all),
              *z = test_malloc(sizeof(float) * (size_t)all);
        for (int64_t i = 0; i < all; i++) x[i] = (float)i;
        knhwc_from_nchw(x, n, c, hw, y);
        for (int64_t b = 0; b < n; b++)
            for (int64_t ci = 0; ci < c; ci++)
                for (int64_t q = 0; q < hw; q++)
                    assert_true(y[(b * hw + q) * c + ci] == x[(b * c + ci) * hw + q]);
        knhwc_to_nchw(y, n, c, hw, z);
        assert_memory_equal(x, z, sizeof(float) * (size_t)all);
        test_free(x);
        test_free(y);
        test_free(z);
    }
}

/* The implicit-GEMM convolution (kernels/conv_ig.h) against a loop in
 * double, on every GEMM kernel this CPU runs (the portable one included),
 * at every ISA of its register tiles (for the first kernel of each panel
 * width; the others at this CPU's), 1 and 2 threads: NHWC and NCHW
 * inputs, a group's channels of a wider input, stride 2, dilation 2 (a run
 * per tap), uneven pads, none (the input read in place, at stride 1 and
 * 2), odd channel counts, output rows wider than the output channels,
 * tiles spanning output rows with columns past four vectors (70), the
 * 45 channels of a 50-channel NCHW input, 16 output channels and fewer (a
 * GEMM per run of taps instead of the tiles), and each
 * epilogue form: bias and Relu (in the registers), a residual before a
 * Clip, a bias and Sigmoid (after the store), HardSwish with the residual
 * after, none, a scaled Leaky Relu (after the store), HardSigmoid, a bias
 * and Clip (bias and Relu, none and this one: the tiles' quick store). */
/* kstem_conv (a stem on its NCHW image, channels-last out) against a loop
 * in double: the stems' 3x3 stride 2 on 3 channels (padded and not, rows of
 * 11 and 30 outputs) and other windows
 * (1 to 4 channels, strides, dilations, pads wider than the kernel, a
 * channel slice c0 of wider planes), output channels m around the vector
 * widths, weights in packed panels of nr 8 to 64 (24: vectors that would
 * cross a panel), output rows ldy > m apart, every activation, with and
 * without a bias, at every ISA and on the portable path, 1 and 2 threads. */
static void test_stem(void **state)
{
    (void)state;
    static const knhwc_geom gs[] = {
        {.h = 23, .w = 21, .cs = 3, .c = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1},
        {.h = 19, .w = 30, .cs = 3, .c = 3, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1},
        {.h = 9, .w = 13, .cs = 4, .c0 = 1, .c = 2, .kh = 3, .kw = 5, .sh = 2, .sw = 1, .dh = 1, .dw = 2, .pt = 2, .pl = 3},
        {.h = 6, .w = 7, .cs = 1, .c = 1, .kh = 5, .kw = 5, .sh = 1, .sw = 2, .dh = 1, .dw = 1, .pt = 6, .pl = 2},
        {.h = 11, .w = 17, .cs = 4, .c = 4, .kh = 2, .kw = 3, .sh = 3, .sw = 2, .dh = 2, .dw = 1, .pt = 0, .pl = 0},
        {.h = 7, .w = 61, .cs = 3, .c = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 0, .pl = 0},
    };
    /* m of 2 to 4 whole vectors (and more) in groups: stem_tiles, 12, 8, 6 or 3 pixels a tile */
    static const struct {
        int nr;
        int64_t m;
    } ms[] = {{16, 16}, {64, 32}, {32, 40}, {24, 37}, {8, 3}, {16, 1}, {32, 64}, {16, 48}, {32, 72}, {32, 96}};
    static const kact acts[] = {{KF_NONE, 0, 0}, {KF_RELU, 0, 0}, {KF_CLIP, 0, 6},
                                {KF_HARDSWISH, 0, 0}, {KF_SILU, 0, 0}, {KF_HARDSIGMOID, 0.2f, 0.5f},
                                {KF_SIGMOID, 0, 0}, {KF_TANH, 0, 0}, {KF_GELU_ERF, 0, 0},
                                {KF_GELU_TANH, 0, 0}, {KF_LEAKY_RELU, 0.1f, 0}, {KF_EXP, 0, 0}};
    for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
        knhwc_geom g = gs[gi];
        g.oh = (g.h + 2 * g.pt - g.dh * (g.kh - 1) - 1) / g.sh + 1;
        g.ow = (g.w + 2 * g.pl - g.dw * (g.kw - 1) - 1) / g.sw + 1;
        assert_true(kstem_takes(&g));
        const int64_t kdim = g.kh * g.kw * g.c, np = g.oh * g.ow;
        float *x = kc_rand((size_t)(g.cs * g.h * g.w), (unsigned)gi + 1, -2, 2);
        for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
            const int nr = ms[mi].nr;
            const int64_t m = ms[mi].m, panels = (m + nr - 1) / nr, ldy = m + (int64_t)mi % 3;
            float *w = kc_rand((size_t)(kdim * m), 40 + (unsigned)mi, -0.5f, 0.5f); /* [k][co] */
            float *bias = kc_rand((size_t)m, 50 + (unsigned)mi, -1, 1);
            float *wp = calloc((size_t)(panels * kdim * nr), sizeof *wp);
            for (int64_t k = 0; k < kdim; k++)
                for (int64_t co = 0; co < m; co++) wp[(co / nr) * kdim * nr + k * nr + co % nr] = w[k * m + co];
            double *sum = malloc(sizeof *sum * (size_t)(np * m)), *want = malloc(sizeof *want * (size_t)(np * ldy));
            float *y = malloc(sizeof *y * (size_t)(np * ldy));
            for (int64_t p = 0; p < np; p++)
                for (int64_t co = 0; co < m; co++) {
                    double a = 0;
                    for (int64_t ky = 0; ky < g.kh; ky++)
                        for (int64_t kx = 0; kx < g.kw; kx++)
                            for (int64_t ci = 0; ci < g.c; ci++) {
                                int64_t iy = p / g.ow * g.sh - g.pt + ky * g.dh, ix = p % g.ow * g.sw - g.pl + kx * g.dw;
                                if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
                                    a += (double)x[(g.c0 + ci) * g.h * g.w + iy * g.w + ix] *
                                         w[((ky * g.kw + kx) * g.c + ci) * m + co];
                            }
                    sum[p * m + co] = a;
                }
            for (size_t ai = 0; ai < sizeof acts / sizeof *acts; ai++)
                for (int bi = 0; bi < 2; bi++) {
                    const kact act = acts[ai];
                    for (int64_t p = 0; p < np; p++)
                        for (int64_t j = 0; j < ldy; j++)
                            want[p * ldy + j] = j < m ? kc_fun(act.f, sum[p * m + j] + (bi ? bias[j] : 0), act.a, act.b)
                                                      : 1234.5; /* between rows: untouched */
                    KC_EACH_ISA({
                        for (int64_t j = 0; j < np * ldy; j++) y[j] = 1234.5f;
                        kstem_conv(&g, x, wp, nr, m, bi ? bias : NULL, act, y, ldy, kc_threads);
                        char what[96];
                        snprintf(what, sizeof what, "stem geometry %zu, m %lld nr %d, act %d, bias %d", gi,
                                 (long long)m, nr, (int)act.f, bi);
                        if (!kc_close(what, y, want, (size_t)(np * ldy), 1e-5, 1e-5)) fail();
                    });
                }
            free(w);
            free(bias);
            free(wp);
            free(sum);
            free(want);
            free(y);
        }
        free(x);
    }
}

static void test_conv_ig(void **state)
{
    (void)state;
    static const struct {
        knhwc_geom g;
        int64_t pb, pr, n; /* bottom and right pads, output channels */
        bool nchw;
    } cs[] = {
        {{.h = 9, .w = 11, .cs = 19, .c = 19, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 1, 1, 17, false},
        {{.h = 10, .w = 9, .cs = 45, .c0 = 7, .c = 21, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 0}, 0, 1, 33, false},
        {{.h = 8, .w = 8, .cs = 16, .c = 16, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 2, .pt = 2, .pl = 2}, 2, 2, 5, false},
        {{.h = 7, .w = 6, .cs = 13, .c = 13, .kh = 5, .kw = 5, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 2, .pl = 2}, 2, 2, 40, true},
        {{.h = 9, .w = 10, .cs = 24, .c = 24, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1}, 0, 0, 16, false},
        {{.h = 11, .w = 5, .cs = 30, .c0 = 3, .c = 9, .kh = 3, .kw = 1, .sh = 2, .sw = 1, .dh = 1, .dw = 1, .pt = 1}, 1, 0, 64, true},
        {{.h = 12, .w = 13, .cs = 7, .c = 7, .kh = 2, .kw = 4, .sh = 2, .sw = 3, .dh = 1, .dw = 1, .pt = 0, .pl = 3}, 1, 2, 18, false},
        {{.h = 14, .w = 21, .cs = 16, .c = 16, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 1, 1, 70, false},
        {{.h = 13, .w = 15, .cs = 11, .c = 11, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1}, 0, 0, 23, false},
        {{.h = 6, .w = 8, .cs = 50, .c0 = 2, .c = 45, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 1, 1, 40, true},
        {{.h = 7, .w = 9, .cs = 45, .c = 45, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 2, .pt = 1, .pl = 2}, 1, 2, 40, false},
        /* a stem on its NCHW image (conv.c's conv_ig takes 3x3s of 3 channels on wide
         * rows): squeezenet1_1's unpadded 3x3 stride 2, and a padded one (mobilenets') */
        {{.h = 13, .w = 29, .cs = 3, .c = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1}, 0, 0, 64, true},
        {{.h = 10, .w = 31, .cs = 3, .c = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 1, 1, 37, true},
    };
    static const gemm_act acts[] = {GEMM_ACT_RELU,      GEMM_ACT_CLIP, GEMM_ACT_SIGMOID, GEMM_ACT_HARDSWISH,
                                    GEMM_ACT_NONE,      GEMM_ACT_LEAKY, GEMM_ACT_HARDSIGMOID, GEMM_ACT_CLIP};
    for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
        knhwc_geom g = cs[ci].g;
        const int64_t n = cs[ci].n, ldy = n + 3;
        g.oh = (g.h + g.pt + cs[ci].pb - g.dh * (g.kh - 1) - 1) / g.sh + 1;
        g.ow = (g.w + g.pl + cs[ci].pr - g.dw * (g.kw - 1) - 1) / g.sw + 1;
        const int64_t taps = g.kh * g.kw, kdim = taps * g.c, np = g.oh * g.ow, nx = g.h * g.w * g.cs;
        float *x = kc_rand((size_t)nx, 3 + (unsigned)ci, -1, 1);
        float *w = kc_rand((size_t)(kdim * n), 7 + (unsigned)ci, -0.5f, 0.5f); /* [tap*c + ci][n] */
        float *bias = kc_rand((size_t)n, 11, -1, 1), *res = kc_rand((size_t)(np * n), 13, -1, 1);
        float *y = malloc(sizeof(float) * (size_t)(np * ldy));
        double *sum = malloc(sizeof(double) * (size_t)(np * n)), *want = malloc(sizeof(double) * (size_t)(np * n));
        float *got = malloc(sizeof(float) * (size_t)(np * n));
        for (int64_t p = 0; p < np; p++)
            for (int64_t j = 0; j < n; j++) {
                double v = 0;
                for (int64_t ky = 0; ky < g.kh; ky++)
                    for (int64_t kx = 0; kx < g.kw; kx++) {
                        int64_t iy = p / g.ow * g.sh - g.pt + ky * g.dh, ix = p % g.ow * g.sw - g.pl + kx * g.dw;
                        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                        for (int64_t c = 0; c < g.c; c++) {
                            double xv = cs[ci].nchw ? x[((g.c0 + c) * g.h + iy) * g.w + ix]
                                                    : x[(iy * g.w + ix) * g.cs + g.c0 + c];
                            v += xv * w[((ky * g.kw + kx) * g.c + c) * n + j];
                        }
                    }
                sum[p * n + j] = v;
            }
        const int64_t runs = kig_runs(&g);
        int nr_seen = 0; /* panel widths run at every ISA (the tiles depend on the kernel's NR only) */
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            gemm_packed *views = calloc((size_t)runs, sizeof *views);
            void **bufs = calloc((size_t)runs, sizeof *bufs);
            ait_error e = {0};
            for (int64_t r = 0; r < runs; r++) {
                int64_t row0, rows;
                kig_run_rows(&g, r, &row0, &rows);
                size_t sz = gemm_pack_b_size(kr, rows, n);
                bufs[r] = aligned_zalloc(sz);
                gemm_pack_b(kr, w + row0 * n, n, 1, rows, n, bufs[r]);
                assert_int_equal(gemm_packed_view(bufs[r], sz, &views[r], &e), AIT_OK);
            }
            const int nrk = gemm_kernel_nr(kr), first = !(nr_seen & nrk);
            nr_seen |= nrk;
            for (int isa = first ? KISA_PORTABLE : (int)kisa_cpu(); isa <= (int)kisa_cpu(); isa++)
                for (int t = 1; t <= 2; t++) {
                assert_true(kisa_force((kisa)isa));
                for (size_t ai = 0; ai < sizeof acts / sizeof *acts; ai++) {
                    gemm_epi ep = {.act = acts[ai], .lo = -0.25f, .hi = 0.75f};
                    if (ai != 1 && ai != 4) ep = (gemm_epi){.act = acts[ai], .bias_mode = GEMM_BIAS_COL, .bias = bias};
                    if (ai == 5) ep = (gemm_epi){.act = acts[ai], .scaled = true, .scale = 0.5f, .lo = 0.1f};
                    if (ai == 6) ep.lo = 0.2f, ep.hi = 0.5f;
                    if (ai == 7) ep.lo = -0.25f, ep.hi = 0.75f; /* a bias and Clip: the tiles' quick store */
                    if (ai == 1 || ai == 3) {
                        ep.res = res;
                        ep.ldr = n;
                        ep.res_after = ai == 3;
                    }
                    for (int64_t p = 0; p < np; p++)
                        for (int64_t j = 0; j < n; j++) {
                            double v = sum[p * n + j] * (ep.scaled ? ep.scale : 1) + (ep.bias ? bias[j] : 0),
                                   r = ep.res ? res[p * n + j] : 0;
                            if (!ep.res_after) v += r;
                            kfun f = acts[ai] == GEMM_ACT_NONE ? KF_NONE : gemm_act_fun(acts[ai]);
                            v = kc_fun(f, v, ep.lo, ep.hi);
                            want[p * n + j] = v + (ep.res_after ? r : 0);
                        }
                    size_t sf;
                    assert_true(kig_scratch(&g, cs[ci].nchw, t, &sf));
                    float *scratch = malloc(sizeof(float) * (sf + 1));
                    for (int64_t i = 0; i < np * ldy; i++) y[i] = NAN;
                    assert_int_equal(kig_conv(&g, cs[ci].nchw, x, views, n, y, ldy, &ep, scratch, t, &e), AIT_OK);
                    for (int64_t p = 0; p < np; p++) memcpy(got + p * n, y + p * ldy, sizeof(float) * (size_t)n);
                    if (!kc_close("implicit-GEMM conv", got, want, (size_t)(np * n), 1e-4, 1e-4))
                        fail_msg("conv_ig case %zu, kernel %s, [isa %s] %d threads, epilogue %zu", ci,
                                 gemm_kernel_name(kr), kisa_name(kisa_active()), t, ai);
                    free(scratch);
                }
                kisa_force(KISA_N);
            }
            for (int64_t r = 0; r < runs; r++) aligned_free(bufs[r]);
            free(bufs);
            free(views);
        }
        free(x);
        free(w);
        free(bias);
        free(res);
        free(y);
        free(sum);
        free(want);
        free(got);
    }
}

/* The direct grouped convolution (kgrp_conv) against the sum in double:
 * groups of 2 to 16 input and output channels (8 and 16 whole blocks of
 * the kernel's vectors, 3, 5 and 11 a tail), pads, strides, dilation, a
 * 1-pixel and rows longer than a tile, 1 and 2 images, output pixels
 * wider than the channels (a Concat's), with and without a bias, every
 * activation kind the epilogue takes. */
static void test_grouped(void **state)
{
    (void)state;
    static const struct {
        knhwc_geom g;
        int64_t groups, mg, pb, pr, n;
    } cs[] = {
        {{.h = 9, .w = 30, .c = 8, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 6, 8, 1, 1, 1},
        {{.h = 14, .w = 27, .c = 8, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 3, 8, 1, 1, 2},
        {{.h = 7, .w = 7, .c = 8, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 5, 8, 1, 1, 1},
        {{.h = 6, .w = 19, .c = 3, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 4, 5, 1, 1, 1},
        {{.h = 5, .w = 33, .c = 16, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 2, .pt = 2, .pl = 2}, 2, 16, 2, 2, 1},
        {{.h = 8, .w = 17, .c = 4, .kh = 5, .kw = 5, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 2, .pl = 2}, 3, 11, 2, 2, 2},
        {{.h = 1, .w = 1, .c = 2, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1}, 7, 2, 1, 1, 1},
        {{.h = 10, .w = 25, .c = 6, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1}, 2, 7, 0, 0, 1},
        {{.h = 11, .w = 23, .c = 8, .kh = 3, .kw = 3, .sh = 2, .sw = 3, .dh = 1, .dw = 1, .pt = 0, .pl = 2}, 2, 9, 1, 0, 1},
    };
    static const kact acts[] = {{KF_RELU, 0, 0}, {KF_NONE, 0, 0}, {KF_CLIP, -0.25f, 0.75f}, {KF_SILU, 0, 0},
                                {KF_HARDSWISH, 0, 0}};
    for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
        knhwc_geom g = cs[ci].g;
        const int64_t groups = cs[ci].groups, mg = cs[ci].mg, cg = g.c, n = cs[ci].n, M = groups * mg;
        g.cs = groups * cg;
        g.oh = kwin_out((int)g.h, (int)g.kh, (int)g.sh, (int)g.dh, (int)g.pt, (int)cs[ci].pb, 0);
        g.ow = kwin_out((int)g.w, (int)g.kw, (int)g.sw, (int)g.dw, (int)g.pl, (int)cs[ci].pr, 0);
        assert_true(g.oh > 0 && g.ow > 0);
        const int64_t taps = g.kh * g.kw, np = g.oh * g.ow, nx = n * g.h * g.w * g.cs;
        const int64_t ldy = ci % 2 ? M + 5 : M;
        float *x = kc_rand((size_t)nx, 21 + (unsigned)ci, -1, 1);
        float *w = kc_rand((size_t)(M * cg * taps), 23 + (unsigned)ci, -0.5f, 0.5f); /* ONNX's [M][cg][kh][kw] */
        float *bias = ci % 3 == 2 ? NULL : kc_rand((size_t)M, 25 + (unsigned)ci, -1, 1);
        const size_t pf = kgrp_pack_size(groups, mg, cg, taps);
        assert_true(pf > 0);
        float *wp = malloc(sizeof(float) * pf), *y = malloc(sizeof(float) * (size_t)(n * np * ldy));
        float *got = malloc(sizeof(float) * (size_t)(n * np * M));
        double *want = malloc(sizeof(double) * (size_t)(n * np * M));
        kgrp_pack(w, groups, mg, cg, taps, wp);
        const kact a = acts[ci % (sizeof acts / sizeof *acts)];
        for (int64_t im = 0; im < n; im++)
            for (int64_t p = 0; p < np; p++)
                for (int64_t m = 0; m < M; m++) {
                    const int64_t gi = m / mg;
                    double v = bias ? bias[m] : 0;
                    for (int64_t ky = 0; ky < g.kh; ky++)
                        for (int64_t kx = 0; kx < g.kw; kx++) {
                            int64_t iy = p / g.ow * g.sh - g.pt + ky * g.dh, ix = p % g.ow * g.sw - g.pl + kx * g.dw;
                            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                            for (int64_t j = 0; j < cg; j++)
                                v += (double)x[((im * g.h + iy) * g.w + ix) * g.cs + gi * cg + j] *
                                     w[(m * cg + j) * taps + ky * g.kw + kx];
                        }
                    want[(im * np + p) * M + m] = kc_fun(a.f, v, a.a, a.b);
                }
        KC_EACH_ISA({
            for (int64_t i = 0; i < n * np * ldy; i++) y[i] = NAN;
            kgrp_conv(&g, n, groups, mg, x, wp, bias, a, y, ldy, kc_threads);
            for (int64_t p = 0; p < n * np; p++) memcpy(got + p * M, y + p * ldy, sizeof(float) * (size_t)M);
            if (!kc_close("grouped conv", got, want, (size_t)(n * np * M), 1e-5 * (double)(1 + taps * cg), 1e-5))
                fail_msg("grouped conv case %zu [isa %s] %d threads", ci, kisa_name(kisa_active()), kc_threads);
        });
        free(x), free(w), free(bias), free(wp), free(y), free(got), free(want);
    }
}

static void test_depthwise(void **state)
{
    (void)state;
    static const int chans[] = {1, 3, 17, 64}, sizes[] = {1, 7, 13, 14, 15, 32, 70};
    static const struct {
        int kh, kw, s, d, pt, pl, pb, pr, mult;
    } ks[] = {
        {3, 3, 1, 1, 1, 1, 1, 1, 1}, {3, 3, 2, 1, 1, 1, 1, 1, 1}, {5, 5, 1, 1, 2, 2, 2, 2, 1},
        {5, 5, 2, 1, 2, 2, 1, 1, 1}, {3, 3, 1, 2, 2, 2, 2, 2, 1}, {2, 4, 1, 1, 0, 1, 1, 2, 1},
        {3, 3, 3, 1, 0, 0, 0, 0, 1}, {3, 3, 1, 1, 1, 1, 1, 1, 2}, {1, 1, 1, 1, 0, 0, 0, 0, 3},
        {5, 5, 2, 2, 4, 3, 4, 3, 2}, {5, 5, 1, 1, 1, 0, 3, 4, 1},
        /* the sliding rows (3x3 stride 1, 5x5 stride 2, 3x3 stride 2 on rows of at most 8)
         * with pads uneven and wider than the window's half */
        {3, 3, 1, 1, 0, 2, 2, 0, 1}, {5, 5, 2, 1, 1, 3, 3, 0, 1}, {3, 3, 2, 1, 0, 2, 2, 0, 1},
    };
    static const kact acts[] = {{KF_NONE, 0, 0},      {KF_RELU, 0, 0}, {KF_CLIP, 0, 6},
                                {KF_HARDSWISH, 0, 0}, {KF_SILU, 0, 0}, {KF_SIGMOID, 0, 0}};
    int run = 0;
    for (int ci = 0; ci < 4; ci++)
        for (int si = 0; si < 7; si++) /* 70: rows of several vectors */
            for (size_t k = 0; k < sizeof ks / sizeof *ks; k++, run++) {
                int c = chans[ci], hw = sizes[si];
                kdw_geom g = {.n = 1 + (run % 3 == 0), .c = c, .h = hw, .w = hw + (run % 2) * 3,
                              .mult = ks[k].mult, .kh = ks[k].kh, .kw = ks[k].kw, .sh = ks[k].s,
                              .sw = ks[k].s, .dh = ks[k].d, .dw = ks[k].d, .pt = ks[k].pt,
                              .pl = ks[k].pl};
                g.oh = kwin_out(g.h, g.kh, g.sh, g.dh, ks[k].pt, ks[k].pb, 0);
                g.ow = kwin_out(g.w, g.kw, g.sw, g.dw, ks[k].pl, ks[k].pr, 0);
                if (!g.oh || !g.ow) continue;
                int oc = c * g.mult;
                size_t nx = (size_t)g.n * c * g.h * g.w, ny = (size_t)g.n * oc * g.oh * g.ow;
                float *x = kc_rand(nx, run, -2, 2), *w = kc_rand((size_t)oc * g.kh * g.kw, run + 1, -1, 1);
                float *b = run % 4 ? kc_rand(oc, run + 2, -1, 1) : NULL, *y = malloc(ny * sizeof *y);
                kact a = acts[run % 6];
                double *want = malloc(ny * sizeof *want);
                dw_want(&g, x, w, b, a, want);
                double tol = 1e-6 * (1 + g.kh * g.kw);
                KC_EACH_ISA({
                    kdw_run(&g, x, w, b, a, y, kc_threads);
                    assert_true(kc_close("depthwise", y, want, ny, tol, 1e-5));
                });
                if (g.mult == 1) {
                    nhwc_dw_check(&g, x, w, b, a, want, tol);
                    nhwc_dwq_check(&g, b, a, run);
                }
                free(x), free(w), free(b), free(y), free(want);
            }
    /* int8, batch 3: 3x3 at stride 1 and 2 with pads, 19 and 35 channels (a full block and a
     * tail), rows wide enough for the four-pixel blocks with pixels left over */
    for (int s = 1; s <= 2; s++)
        for (int c = 19; c <= 35; c += 16) {
            kdw_geom g = {.n = 3, .c = c, .h = 9, .w = 23, .mult = 1, .kh = 3, .kw = 3, .sh = s,
                          .sw = s, .dh = 1, .dw = 1, .pt = 1, .pl = 1};
            g.oh = kwin_out(g.h, 3, s, 1, 1, 1, 0);
            g.ow = kwin_out(g.w, 3, s, 1, 1, 0, 0);
            float *b = kc_rand((size_t)c, s + c, -1, 1);
            nhwc_dwq_check(&g, b, acts[s], 40 + s + c);
            free(b);
        }
}

static void ct_want(const kct_geom *g, const float *x, const float *w, const float *bias,
                    double *want)
{
    int cig = g->cin / g->group, cog = g->cout / g->group;
    size_t ohw = (size_t)g->oh * g->ow;
    for (int n = 0; n < g->n; n++)
        for (int o = 0; o < g->cout; o++)
            for (size_t i = 0; i < ohw; i++) want[((size_t)n * g->cout + o) * ohw + i] = bias ? bias[o] : 0;
    for (int n = 0; n < g->n; n++)
        for (int ci = 0; ci < g->cin; ci++)
            for (int iy = 0; iy < g->h; iy++)
                for (int ix = 0; ix < g->w; ix++) {
                    double v = x[(((size_t)n * g->cin + ci) * g->h + iy) * g->w + ix];
                    int grp = ci / cig;
                    for (int oc = 0; oc < cog; oc++)
                        for (int ky = 0; ky < g->kh; ky++)
                            for (int kx = 0; kx < g->kw; kx++) {
                                int oy = iy * g->sh - g->pt + ky * g->dh;
                                int ox = ix * g->sw - g->pl + kx * g->dw;
                                if (oy < 0 || oy >= g->oh || ox < 0 || ox >= g->ow) continue;
                                int o = grp * cog + oc;
                                want[((size_t)n * g->cout + o) * ohw + (size_t)oy * g->ow + ox] +=
                                    v * w[(((size_t)ci * cog + oc) * g->kh + ky) * g->kw + kx];
                            }
                }
}

static void test_convtranspose(void **state)
{
    (void)state;
    static const struct {
        int cin, cout, group, kh, kw, s, d, pt, pl, pb, pr, opad;
    } cs[] = {
        {3, 2, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0},  {4, 6, 2, 4, 4, 2, 1, 1, 1, 1, 1, 0},
        {17, 5, 1, 3, 3, 2, 1, 1, 1, 1, 1, 1}, {8, 8, 8, 2, 2, 2, 1, 0, 0, 0, 0, 0},
        {64, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, {6, 9, 3, 2, 3, 3, 2, 0, 1, 2, 0, 2},
        {1, 1, 1, 5, 5, 1, 1, 2, 2, 2, 2, 0},  {5, 4, 1, 3, 3, 2, 2, 0, 0, 0, 0, 1},
        {16, 5, 1, 2, 2, 2, 1, 0, 0, 0, 0, 0}, /* stride = kernel: the direct kernel (also 8 and 64 above) */
        {6, 12, 2, 2, 2, 2, 1, 0, 0, 0, 0, 0}, /* direct, 6 planes a group: passes of 4 and 2 */
    };
    static const int sizes[] = {1, 7, 13, 21}; /* rows of 3 to 23: under and over a vector */
    /* the fused epilogue's activation after col2im (DBNet's Relu, Sigmoid) */
    static const kact acts[] = {{KF_NONE, 0, 0}, {KF_RELU, 0, 0}, {KF_SIGMOID, 0, 0},
                                {KF_CLIP, -0.5f, 0.5f}};
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++)
        for (int si = 0; si < 4; si++) {
            int hw = sizes[si];
            kct_geom g = {.n = 1 + (int)(k % 2), .cin = cs[k].cin, .h = hw, .w = hw + 2,
                          .cout = cs[k].cout, .group = cs[k].group, .kh = cs[k].kh,
                          .kw = cs[k].kw, .sh = cs[k].s, .sw = cs[k].s, .dh = cs[k].d,
                          .dw = cs[k].d, .pt = cs[k].pt, .pl = cs[k].pl};
            g.oh = (g.h - 1) * g.sh - cs[k].pt - cs[k].pb + g.dh * (g.kh - 1) + cs[k].opad + 1;
            g.ow = (g.w - 1) * g.sw - cs[k].pl - cs[k].pr + g.dw * (g.kw - 1) + cs[k].opad + 1;
            if (g.oh <= 0 || g.ow <= 0) continue;
            size_t nx = (size_t)g.n * g.cin * g.h * g.w, ny = (size_t)g.n * g.cout * g.oh * g.ow;
            size_t nw = (size_t)g.cin * (g.cout / g.group) * g.kh * g.kw;
            float *x = kc_rand(nx, (unsigned)k, -1, 1), *w = kc_rand(nw, (unsigned)k + 5, -1, 1);
            float *b = k % 3 ? kc_rand(g.cout, 3, -1, 1) : NULL, *y = malloc(ny * sizeof *y);
            double *want = malloc(ny * sizeof *want);
            ct_want(&g, x, w, b, want);
            double tol = 1e-6 * (1 + g.cin / g.group * g.kh * g.kw / 4.0);
            kact a = acts[(k + (size_t)si) % 4];
            for (size_t i = 0; i < ny; i++) want[i] = kc_fun(a.f, want[i], a.a, a.b);
            KC_EACH_ISA({
                assert_int_equal(kconvt_run(&g, x, w, b, a, y, kc_threads), 0);
                assert_true(kc_close("convtranspose", y, want, ny, tol, 1e-5));
            });
            free(x), free(w), free(b), free(y), free(want);
        }
}

static void pool_want(kpool_kind kind, const kpool_geom *g, const float *x, double *want)
{
    for (int p = 0; p < g->n * g->c; p++)
        for (int oy = 0; oy < g->oh; oy++)
            for (int ox = 0; ox < g->ow; ox++) {
                double acc = kind == KPOOL_MAX ? -INFINITY : 0;
                int cnt = 0, pcnt = 0;
                for (int ky = 0; ky < g->kh; ky++)
                    for (int kx = 0; kx < g->kw; kx++) {
                        int iy = oy * g->sh - g->pt + ky * g->dh, ix = ox * g->sw - g->pl + kx * g->dw;
                        if (iy < g->h + g->pb && ix < g->w + g->pr) pcnt++;
                        if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) continue;
                        double v = x[((size_t)p * g->h + iy) * g->w + ix];
                        acc = kind == KPOOL_MAX ? fmax(acc, v) : acc + v;
                        cnt++;
                    }
                if (kind == KPOOL_AVG) {
                    int dv = g->include_pad ? pcnt : cnt;
                    acc = dv ? acc / dv : 0;
                }
                want[((size_t)p * g->oh + oy) * g->ow + ox] = acc;
            }
}

/* Pooling windows: size, stride, dilation, pads at the start and the end. */
typedef struct pool_win {
    int k, s, d, pt, pb;
} pool_win;
static const pool_win pool_wins[] = {{3, 2, 1, 1, 1}, {2, 2, 1, 0, 0}, {3, 1, 1, 1, 1},
                                     {3, 2, 2, 2, 1}, {5, 3, 1, 2, 0}, {1, 1, 1, 0, 0}};

static void test_pool(void **state)
{
    (void)state;
    const pool_win *ws = pool_wins;
    static const int chans[] = {1, 3, 17, 64}, sizes[] = {1, 7, 13, 32};
    for (size_t k = 0; k < sizeof pool_wins / sizeof *pool_wins; k++)
        for (int si = 0; si < 4; si++)
            for (int kind = 0; kind < 2; kind++)
                for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++)
                    for (int inc = 0; inc < 2; inc++) {
                        if (kind == KPOOL_MAX && inc) continue;
                        if (kind == KPOOL_AVG && ws[k].d > 1 && inc) continue;
                        int hw = sizes[si];
                        kpool_geom g = {.n = 1, .c = chans[(k + si) % 4], .h = hw, .w = hw + 1,
                                        .kh = ws[k].k, .kw = ws[k].k, .sh = ws[k].s, .sw = ws[k].s,
                                        .dh = ws[k].d, .dw = ws[k].d, .pt = ws[k].pt, .pl = ws[k].pt,
                                        .pb = ws[k].pb, .pr = ws[k].pb, .include_pad = inc};
                        g.oh = kwin_out(g.h, g.kh, g.sh, g.dh, g.pt, g.pb, ceil_mode);
                        g.ow = kwin_out(g.w, g.kw, g.sw, g.dw, g.pl, g.pr, ceil_mode);
                        if (!g.oh || !g.ow) continue;
                        size_t nx = (size_t)g.c * g.h * g.w, ny = (size_t)g.c * g.oh * g.ow;
                        float *x = kc_rand(nx, (unsigned)(k + si), -3, 3), *y = malloc(ny * sizeof *y);
                        double *want = malloc(ny * sizeof *want);
                        pool_want((kpool_kind)kind, &g, x, want);
                        KC_EACH_ISA({
                            kpool_run((kpool_kind)kind, &g, x, y, kc_threads);
                            assert_true(kc_close(kind ? "avgpool" : "maxpool", y, want, ny,
                                                 1e-6 * (1 + g.kh * g.kw), 1e-5));
                        });
                        free(x), free(y), free(want);
                    }
}

/* The float channels-last pools (kpool_nhwc) against pool_want on the
 * same values in NCHW: the windows above, both kinds, ceil mode or not,
 * channel counts around the 4-vector blocks and the vector widths, two
 * images; and a 9x9 window (81 taps: more than one list of taps). */
static void test_pool_nhwc(void **state)
{
    (void)state;
    static const pool_win big = {9, 1, 1, 4, 4};
    static const int chans[] = {1, 3, 17, 64, 67, 130}, sizes[] = {1, 7, 12};
    for (size_t k = 0; k <= sizeof pool_wins / sizeof *pool_wins; k++)
        for (int ci = 0; ci < 6; ci++)
            for (int si = 0; si < 3; si++)
                for (int kind = 0; kind < 2; kind++) {
                    const pool_win *w = k < sizeof pool_wins / sizeof *pool_wins ? &pool_wins[k] : &big;
                    int hw = sizes[si], inc = kind == KPOOL_AVG && w->d == 1 && (ci + si) % 2;
                    kpool_geom g = {.n = 2, .c = chans[ci], .h = hw, .w = hw + 2, .kh = w->k, .kw = w->k,
                                    .sh = w->s, .sw = w->s, .dh = w->d, .dw = w->d, .pt = w->pt,
                                    .pl = w->pt, .pb = w->pb, .pr = w->pb, .include_pad = inc};
                    g.oh = kwin_out(g.h, g.kh, g.sh, g.dh, g.pt, g.pb, (int)(k + ci) % 2);
                    g.ow = kwin_out(g.w, g.kw, g.sw, g.dw, g.pl, g.pr, (int)(k + ci) % 2);
                    if (!g.oh || !g.ow) continue;
                    const size_t hw1 = (size_t)g.h * g.w, ohw = (size_t)g.oh * g.ow;
                    size_t nx = g.n * hw1 * g.c, ny = g.n * ohw * g.c;
                    float *x = kc_rand(nx, (unsigned)(k * 7 + ci), -3, 3), *xt = malloc(nx * sizeof *xt);
                    float *y = malloc(ny * sizeof *y);
                    double *want = malloc(ny * sizeof *want), *wt = malloc(ny * sizeof *wt);
                    for (int n = 0; n < g.n; n++) /* x is [n][h][w][c]: pool_want reads [n][c][h][w] */
                        for (size_t p = 0; p < hw1; p++)
                            for (int c = 0; c < g.c; c++)
                                xt[((size_t)n * g.c + c) * hw1 + p] = x[((size_t)n * hw1 + p) * g.c + c];
                    pool_want((kpool_kind)kind, &g, xt, wt);
                    for (int n = 0; n < g.n; n++)
                        for (size_t p = 0; p < ohw; p++)
                            for (int c = 0; c < g.c; c++)
                                want[((size_t)n * ohw + p) * g.c + c] = wt[((size_t)n * g.c + c) * ohw + p];
                    KC_EACH_ISA({
                        kpool_nhwc((kpool_kind)kind, &g, x, y, kc_threads);
                        assert_true(kc_close(kind ? "avgpool nhwc" : "maxpool nhwc", y, want, ny,
                                             1e-6 * (1 + g.kh * g.kw), 1e-5));
                    });
                    free(x), free(xt), free(y), free(want), free(wt);
                }
}

/* The uint8 channels-last MaxPool (static int8's kept activations) against
 * the max of the bytes written out here, exactly, on the windows above and
 * channel counts around the vector widths (a window with no tap inside gives 0). */
static void test_pool_u8(void **state)
{
    (void)state;
    const pool_win *ws = pool_wins;
    static const int chans[] = {1, 3, 17, 64, 67, 130}, sizes[] = {1, 7, 13};
    for (size_t k = 0; k < sizeof pool_wins / sizeof *pool_wins; k++)
        for (int ci = 0; ci < 6; ci++)
            for (int si = 0; si < 3; si++) {
                int hw = sizes[si];
                kpool_geom g = {.n = 2, .c = chans[ci], .h = hw, .w = hw + 2, .kh = ws[k].k,
                                .kw = ws[k].k, .sh = ws[k].s, .sw = ws[k].s, .dh = ws[k].d,
                                .dw = ws[k].d, .pt = ws[k].pt, .pl = ws[k].pt, .pb = ws[k].pb,
                                .pr = ws[k].pb};
                g.oh = kwin_out(g.h, g.kh, g.sh, g.dh, g.pt, g.pb, (int)(k + ci) % 2);
                g.ow = kwin_out(g.w, g.kw, g.sw, g.dw, g.pl, g.pr, (int)(k + ci) % 2);
                if (!g.oh || !g.ow) continue;
                size_t nx = (size_t)g.n * g.h * g.w * g.c, ny = (size_t)g.n * g.oh * g.ow * g.c;
                uint8_t *x = malloc(nx), *y = malloc(ny), *want = malloc(ny);
                for (size_t i = 0; i < nx; i++) x[i] = (uint8_t)((i * 2654435761u + k * 97 + (size_t)si) >> 11);
                for (int n = 0; n < g.n; n++)
                    for (int oy = 0; oy < g.oh; oy++)
                        for (int ox = 0; ox < g.ow; ox++)
                            for (int c = 0; c < g.c; c++) {
                                int m = 0;
                                for (int ky = 0; ky < g.kh; ky++)
                                    for (int kx = 0; kx < g.kw; kx++) {
                                        int iy = oy * g.sh - g.pt + ky * g.dh, ix = ox * g.sw - g.pl + kx * g.dw;
                                        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                                        int v = x[(((size_t)n * g.h + iy) * g.w + ix) * g.c + c];
                                        m = v > m ? v : m;
                                    }
                                want[(((size_t)n * g.oh + oy) * g.ow + ox) * g.c + c] = (uint8_t)m;
                            }
                KC_EACH_ISA({
                    memset(y, 0xa5, ny);
                    kpool_nhwc_max_u8(&g, x, y, kc_threads);
                    for (size_t i = 0; i < ny; i++)
                        if (y[i] != want[i])
                            fail_msg("maxpool u8 [isa %s] case %zu c %d hw %d: element %zu is %d, want %d",
                                     kisa_name(kisa_active()), k, g.c, hw, i, y[i], want[i]);
                });
                free(x), free(y), free(want);
            }
}

static void test_global_pool(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 7, 49, 169, 1024};
    for (int si = 0; si < 5; si++)
        for (int kind = 0; kind < 2; kind++) {
            size_t planes = 17, n = sizes[si];
            float *x = kc_rand(planes * n, (unsigned)si, -5, 5), y[17];
            double want[17];
            for (size_t p = 0; p < planes; p++) {
                double acc = kind == KPOOL_MAX ? -INFINITY : 0;
                for (size_t i = 0; i < n; i++)
                    acc = kind == KPOOL_MAX ? fmax(acc, x[p * n + i]) : acc + x[p * n + i];
                want[p] = kind == KPOOL_MAX ? acc : acc / (double)n;
            }
            KC_EACH_ISA({
                kpool_global((kpool_kind)kind, planes, n, x, y, kc_threads);
                assert_true(kc_close("global pool", y, want, planes, 1e-6 * (1 + n / 64.0), 1e-5));
            });
            free(x);
        }
}

/* The source coordinate and taps of one axis, written from the ONNX spec. */
static double rz_coord(krz_coord m, double x, double s, int in, int out)
{
    switch (m) {
    case KRZ_ALIGN_CORNERS: return out == 1 ? 0 : x * (in - 1) / (out - 1);
    case KRZ_ASYMMETRIC: return x / s;
    case KRZ_PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5) / s - 0.5 : 0;
    default: return (x + 0.5) / s - 0.5;
    }
}

static int rz_clamp(double i, int in)
{
    return i < 0 ? 0 : i > in - 1 ? in - 1 : (int)i;
}

static void rz_taps(const krz_geom *g, int x, int in, int out, double s, int *i0, int *i1,
                    double *w)
{
    double c = rz_coord(g->coord, x, s > 0 ? s : (double)out / in, in, out);
    if (!g->linear) {
        double f = floor(c), fr = c - f, r = f;
        if (g->nearest == KRZ_ROUND_PREFER_FLOOR) r = fr <= 0.5 ? f : f + 1;
        if (g->nearest == KRZ_ROUND_PREFER_CEIL) r = fr < 0.5 ? f : f + 1;
        if (g->nearest == KRZ_CEIL) r = ceil(c);
        *i0 = *i1 = rz_clamp(r, in), *w = 0;
        return;
    }
    c = fmin(fmax(c, 0), in - 1); /* the edge value beyond the input */
    double f = floor(c);
    *i0 = rz_clamp(f, in), *i1 = rz_clamp(f + 1, in), *w = c - f;
}

/* knhwc_from_nchw and knhwc_to_nchw (the tiles in registers at each ISA,
 * the rows and columns left by the next narrower tile, then element by
 * element) against the index arithmetic, exactly:
 * channels and pixels on and off the vectors' multiples, a few channels
 * (the image's pass), batches. */
static void test_transpose(void **state)
{
    (void)state;
    static const int64_t sh[][3] = {{1, 3, 50}, {2, 17, 33}, {1, 16, 32}, {1, 64, 100}, {3, 24, 17},
                                    {1, 5, 1},  {1, 40, 16}, {2, 8, 9},   {1, 1, 7},    {1, 33, 47},
                                    /* 16-wide tiles, then 8-wide, then element by element on both axes */
                                    {2, 72, 90}, {1, 29, 45}};
    for (size_t t = 0; t < sizeof sh / sizeof sh[0]; t++) {
        const int64_t n = sh[t][0], c = sh[t][1], hw = sh[t][2];
        const size_t all = (size_t)(n * c * hw);
        float *x = kc_rand(all, (unsigned)t, -1, 1), *y = malloc(all * sizeof *y), *z = malloc(all * sizeof *z);
        KC_EACH_ISA({
            memset(y, 0, all * sizeof *y);
            knhwc_from_nchw(x, n, c, hw, y);
            for (int64_t b = 0; b < n; b++)
                for (int64_t ch = 0; ch < c; ch++)
                    for (int64_t p = 0; p < hw; p++)
                        if (y[(b * hw + p) * c + ch] != x[(b * c + ch) * hw + p])
                            fail_msg("from_nchw %zu: image %lld channel %lld pixel %lld", t, (long long)b,
                                     (long long)ch, (long long)p);
            memset(z, 0, all * sizeof *z);
            knhwc_to_nchw(y, n, c, hw, z);
            if (memcmp(z, x, all * sizeof *z)) fail_msg("to_nchw %zu: not the input back", t);
        });
        free(x), free(y), free(z);
    }
}

/* kresize_nhwc on g's planes as the channels of one image and as images
 * of one channel, without and with a residual, against want (g's NCHW
 * result) */
static void rz_nhwc_check(const krz_geom *g, const float *x, const double *want)
{
    const int P = g->planes;
    const size_t hw = (size_t)g->h * g->w, ohw = (size_t)g->oh * g->ow, ny = (size_t)P * ohw;
    float *xh = malloc((size_t)P * hw * sizeof *xh), *y = malloc(ny * sizeof *y);
    float *r = kc_rand(ny, 7, -1, 1);
    double *wh = malloc(ny * sizeof *wh);
    for (int cl = 0; cl < 2; cl++) { /* cl: P channels in one image, else P images */
        krz_geom gh = *g;
        gh.planes = cl ? 1 : P;
        const int64_t c = cl ? P : 1;
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < hw; i++) xh[cl ? i * P + p : p * hw + i] = x[p * hw + i];
        for (int with = 0; with < 2; with++) {
            for (int p = 0; p < P; p++)
                for (size_t i = 0; i < ohw; i++) {
                    size_t o = cl ? i * P + p : p * ohw + i;
                    wh[o] = want[p * ohw + i] + (with ? r[o] : 0);
                }
            KC_EACH_ISA({
                memset(y, 0, ny * sizeof *y);
                assert_int_equal(kresize_nhwc(&gh, c, xh, with ? r : NULL, y, c, kc_threads), 0);
                assert_true(kc_close("resize nhwc", y, wh, ny, 1e-6, 1e-5));
            });
            if (with || !cl) continue;
            /* into channels [2, 2 + c) of pixels c + 3 apart (a Concat's) */
            const int64_t ld = c + 3;
            float *yc = malloc(ohw * (size_t)ld * sizeof *yc);
            double *wc = calloc(ohw * (size_t)ld, sizeof *wc);
            for (size_t i = 0; i < ohw; i++)
                for (int p = 0; p < P; p++) wc[i * ld + 2 + p] = wh[i * P + p];
            KC_EACH_ISA({
                memset(yc, 0, ohw * (size_t)ld * sizeof *yc);
                assert_int_equal(kresize_nhwc(&gh, c, xh, NULL, yc + 2, ld, kc_threads), 0);
                assert_true(kc_close("resize nhwc into a concat", yc, wc, ohw * (size_t)ld, 1e-6, 1e-5));
            });
            free(yc);
            free(wc);
        }
    }
    free(xh), free(y), free(r), free(wh);
}

static void test_resize(void **state)
{
    (void)state;
    /* whole factors 2, 4 and 8 (repeated in registers, rows copied) at odd widths */
    static const int sizes[][4] = {{7, 13, 14, 26}, {13, 7, 7, 3}, {1, 1, 5, 3}, {32, 32, 64, 64},
                                   {5, 7, 1, 1},    {3, 3, 13, 13}, {5, 3, 20, 24}, {9, 17, 18, 68}};
    for (int si = 0; si < 8; si++)
        for (int lin = 0; lin < 2; lin++)
            for (int coord = 0; coord < 4; coord++)
                for (int nm = 0; nm < (lin ? 1 : 4); nm++) {
                    krz_geom g = {.planes = 1 + si % 3 * 8, .h = sizes[si][0], .w = sizes[si][1],
                                  .oh = sizes[si][2], .ow = sizes[si][3], .linear = lin,
                                  .coord = (krz_coord)coord, .nearest = (krz_nearest)nm};
                    if (si == 3) g.scale_h = g.scale_w = 2.0; /* given, not derived */
                    size_t nx = (size_t)g.planes * g.h * g.w, ny = (size_t)g.planes * g.oh * g.ow;
                    float *x = kc_rand(nx, (unsigned)si, -1, 1), *y = malloc(ny * sizeof *y);
                    double *want = malloc(ny * sizeof *want);
                    for (int p = 0; p < g.planes; p++)
                        for (int oy = 0; oy < g.oh; oy++)
                            for (int ox = 0; ox < g.ow; ox++) {
                                int y0, y1, x0, x1;
                                double wy, wx;
                                rz_taps(&g, oy, g.h, g.oh, g.scale_h, &y0, &y1, &wy);
                                rz_taps(&g, ox, g.w, g.ow, g.scale_w, &x0, &x1, &wx);
                                const float *xp = x + (size_t)p * g.h * g.w;
                                double a = xp[y0 * g.w + x0] * (1 - wx) + xp[y0 * g.w + x1] * wx;
                                double b = xp[y1 * g.w + x0] * (1 - wx) + xp[y1 * g.w + x1] * wx;
                                want[((size_t)p * g.oh + oy) * g.ow + ox] = a * (1 - wy) + b * wy;
                            }
                    KC_EACH_ISA({
                        assert_int_equal(kresize(&g, x, y, kc_threads), 0);
                        assert_true(kc_close("resize", y, want, ny, 1e-6, 1e-5));
                    });
                    if (lin) { /* channels-last is nearest only */
                        krz_geom gl = g;
                        gl.planes = 1;
                        assert_int_equal(kresize_nhwc(&gl, 1, x, NULL, y, 1, 1), -1);
                    } else {
                        rz_nhwc_check(&g, x, want);
                    }
                    free(x), free(y), free(want);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_im2col_u8),   cmocka_unit_test(test_implicit_u8),
        cmocka_unit_test(test_pad_u8_nchw),
        cmocka_unit_test(test_im2col_f32),
        cmocka_unit_test(test_stem),
        cmocka_unit_test(test_conv_ig),
        cmocka_unit_test(test_grouped),
        cmocka_unit_test(test_depthwise),   cmocka_unit_test(test_convtranspose),
        cmocka_unit_test(test_pool),        cmocka_unit_test(test_pool_u8),
        cmocka_unit_test(test_pool_nhwc),
        cmocka_unit_test(test_global_pool),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
