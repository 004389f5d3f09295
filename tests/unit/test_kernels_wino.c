/* The Winograd F(4x4, 3x3) and F(2x2, 3x3) convolutions (kernels/winograd.h)
 * against the direct convolution in double, on every GEMM kernel this CPU runs (U
 * packed for each), at every ISA of its transforms and the portable path,
 * with 1 and 2 threads: sizes not multiples of the 4x4 tile, channel counts
 * not multiples of 16, pads 0, 1, uneven and 2, a group's channels of a
 * wider input, two images, several blocks of tiles, a 1x1 output, and
 * every epilogue form (the output transform's own and gemm_epi_tile's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/tensor.h"
#include "kernels/gemm.h"
#include "kernels/qgemm.h"
#include "kernels/winograd.h"
#include "kernels_check.h"

static void test_winograd(void **state)
{
    (void)state;
    static const struct {
        knhwc_geom g;
        int64_t pb, pr, n, images; /* bottom and right pads, output channels, images */
    } cs[] = {
        {{.h = 9, .w = 11, .cs = 19, .c = 19, .pt = 1, .pl = 1}, 1, 1, 17, 1},
        {{.h = 10, .w = 9, .cs = 45, .c0 = 7, .c = 21, .pt = 1, .pl = 0}, 0, 1, 33, 2},
        {{.h = 6, .w = 7, .cs = 13, .c = 13}, 0, 0, 40, 1},
        {{.h = 19, .w = 23, .cs = 70, .c = 70, .pt = 1, .pl = 1}, 1, 1, 90, 2},
        {{.h = 5, .w = 5, .cs = 3, .c = 3, .pt = 2, .pl = 2}, 2, 2, 5, 1},
        {{.h = 3, .w = 3, .cs = 16, .c = 16}, 0, 0, 16, 3},
    };
    static const gemm_act acts[] = {GEMM_ACT_RELU,      GEMM_ACT_CLIP, GEMM_ACT_SIGMOID, GEMM_ACT_HARDSWISH,
                                    GEMM_ACT_NONE,      GEMM_ACT_LEAKY, GEMM_ACT_HARDSIGMOID, GEMM_ACT_CLIP};
    for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
        knhwc_geom g = cs[ci].g;
        g.kh = g.kw = 3;
        g.sh = g.sw = g.dh = g.dw = 1;
        g.oh = g.h + g.pt + cs[ci].pb - 2;
        g.ow = g.w + g.pl + cs[ci].pr - 2;
        assert_true(kwg_fits(&g));
        const int64_t n = cs[ci].n, ldy = n + 3, ni = cs[ci].images, ohw = g.oh * g.ow;
        const int64_t np = ni * ohw, nx = ni * g.h * g.w * g.cs;
        float *x = kc_rand((size_t)nx, 3 + (unsigned)ci, -1, 1);
        float *w = kc_rand((size_t)(9 * g.c * n), 7 + (unsigned)ci, -0.5f, 0.5f); /* [tap*c + ci][n] */
        float *bias = kc_rand((size_t)n, 11, -1, 1), *res = kc_rand((size_t)(np * n), 13, -1, 1);
        float *u = malloc(sizeof(float) * (size_t)(KWG_POS * g.c * n));
        float *y = malloc(sizeof(float) * (size_t)(np * ldy)), *got = malloc(sizeof(float) * (size_t)(np * n));
        double *sum = malloc(sizeof(double) * (size_t)(np * n)), *want = malloc(sizeof(double) * (size_t)(np * n));
        for (int64_t p = 0; p < np; p++)
            for (int64_t j = 0; j < n; j++) {
                const int64_t im = p / ohw, oy = p % ohw / g.ow, ox = p % g.ow;
                double v = 0;
                for (int64_t ky = 0; ky < 3; ky++)
                    for (int64_t kx = 0; kx < 3; kx++) {
                        const int64_t iy = oy - g.pt + ky, ix = ox - g.pl + kx;
                        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                        for (int64_t c = 0; c < g.c; c++)
                            v += (double)x[((im * g.h + iy) * g.w + ix) * g.cs + g.c0 + c] *
                                 w[((ky * 3 + kx) * g.c + c) * n + j];
                    }
                sum[p * n + j] = v;
            }
        for (int tl = 0; tl < 2; tl++)
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const kwg_tile tt = tl ? KWG_F2 : KWG_F4;
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            gemm_packed views[KWG_POS];
            void *bufs[KWG_POS];
            ait_error e = {0};
            kwg_weights(tt, w, g.c, n, u);
            for (int pos = 0; pos < kwg_pos(tt); pos++) {
                size_t sz = gemm_pack_b_size(kr, g.c, n);
                bufs[pos] = aligned_zalloc(sz);
                gemm_pack_b(kr, u + pos * g.c * n, n, 1, g.c, n, bufs[pos]);
                assert_int_equal(gemm_packed_view(bufs[pos], sz, &views[pos], &e), AIT_OK);
            }
            for (int isa = KISA_PORTABLE; isa <= (int)kisa_cpu(); isa++)
                for (int kc_threads = 1; kc_threads <= 2; kc_threads++) {
                assert_true(kisa_force((kisa)isa));
                for (size_t ai = 0; ai < sizeof acts / sizeof *acts; ai++) {
                    gemm_epi ep = {.act = acts[ai], .lo = -0.25f, .hi = 0.75f};
                    if (ai != 1 && ai != 4) ep = (gemm_epi){.act = acts[ai], .bias_mode = GEMM_BIAS_COL, .bias = bias};
                    if (ai == 5) ep = (gemm_epi){.act = acts[ai], .scaled = true, .scale = 0.5f, .lo = 0.1f};
                    if (ai == 6) ep.lo = 0.2f, ep.hi = 0.5f;
                    if (ai == 7) ep.lo = -0.25f, ep.hi = 0.75f;
                    if (ai == 1 || ai == 3 || ai == 0) {
                        ep.res = res;
                        ep.ldr = n;
                        ep.res_after = ai != 1;
                        ep.res_scale = ai == 0 ? 0.5f : 0;
                    }
                    for (int64_t p = 0; p < np * n; p++) {
                        const int64_t j = p % n;
                        double v = sum[p] * (ep.scaled ? ep.scale : 1) + (ep.bias ? bias[j] : 0),
                               r = ep.res ? res[p] * (ep.res_scale != 0 ? ep.res_scale : 1) : 0;
                        if (!ep.res_after) v += r;
                        kfun f = acts[ai] == GEMM_ACT_NONE ? KF_NONE : gemm_act_fun(acts[ai]);
                        v = kc_fun(f, v, ep.lo, ep.hi);
                        want[p] = v + (ep.res_after ? r : 0);
                    }
                    size_t sf;
                    assert_true(kwg_scratch(tt, &g, ni, n, kc_threads, &sf));
                    float *scratch = malloc(sizeof(float) * (sf + 1));
                    for (int64_t i = 0; i < np * ldy; i++) y[i] = NAN;
                    assert_int_equal(kwg_conv(tt, &g, ni, x, views, n, y, ldy, &ep, scratch, kc_threads, &e),
                                     AIT_OK);
                    for (int64_t p = 0; p < np; p++) {
                        memcpy(got + p * n, y + p * ldy, sizeof(float) * (size_t)n);
                        for (int64_t j = n; j < ldy; j++) assert_true(isnan(y[p * ldy + j]));
                    }
                    /* F(4x4, 3x3)'s error grows with the terms summed: atol scaled by the
                     * largest magnitude, as the tuner's validation scales it (tune/validate.h) */
                    double top = 1;
                    for (int64_t p = 0; p < np * n; p++) top = fmax(top, fmax(fabs(want[p]), fabs(sum[p])));
                    if (!kc_close("winograd conv", got, want, (size_t)(np * n), 3e-5 * top, 1e-4))
                        fail_msg("winograd F(%dx%d) case %zu, kernel %s, [isa %s] %d threads, epilogue %zu",
                                 kwg_out(tt), kwg_out(tt), ci, gemm_kernel_name(kr), kisa_name(kisa_active()),
                                 kc_threads, ai);
                    free(scratch);
                }
                kisa_force(KISA_N);
            }
            for (int pos = 0; pos < kwg_pos(tt); pos++) aligned_free(bufs[pos]);
        }
        free(x);
        free(w);
        free(bias);
        free(res);
        free(u);
        free(y);
        free(got);
        free(sum);
        free(want);
    }
}

/* Its error against the direct sum: the largest over a 28x28x64 -> 64 conv
 * under 5e-6 of the output's largest magnitude, half the tuner's float32
 * atol (tune/validate.h). On Lavin's points (0, 1, -1, 2, -2) it was
 * 6.2e-6; on winograd.c's (0, 1, -1, 1/2, -2) 2.4e-6. F(2x2) under 2e-6. */
static void winograd_error(kwg_tile tt, double bound)
{
    knhwc_geom g = {.h = 28, .w = 28, .cs = 64, .c = 64, .kh = 3, .kw = 3, .sh = 1, .sw = 1,
                    .dh = 1, .dw = 1, .pt = 1, .pl = 1, .oh = 28, .ow = 28};
    const int64_t n = 64, np = g.oh * g.ow;
    float *x = kc_rand((size_t)(np * g.c), 5, -1, 1), *w = kc_rand((size_t)(9 * g.c * n), 9, -0.1f, 0.1f);
    float *u = malloc(sizeof(float) * (size_t)(KWG_POS * g.c * n)), *y = malloc(sizeof(float) * (size_t)(np * n));
    const gemm_kernel *kr = gemm_kernel_best();
    gemm_packed views[KWG_POS];
    void *bufs[KWG_POS];
    ait_error e = {0};
    kwg_weights(tt, w, g.c, n, u);
    for (int pos = 0; pos < kwg_pos(tt); pos++) {
        size_t sz = gemm_pack_b_size(kr, g.c, n);
        bufs[pos] = aligned_zalloc(sz);
        gemm_pack_b(kr, u + pos * g.c * n, n, 1, g.c, n, bufs[pos]);
        assert_int_equal(gemm_packed_view(bufs[pos], sz, &views[pos], &e), AIT_OK);
    }
    size_t sf;
    assert_true(kwg_scratch(tt, &g, 1, n, 1, &sf));
    float *scratch = malloc(sizeof(float) * sf);
    gemm_epi ep = {0};
    assert_int_equal(kwg_conv(tt, &g, 1, x, views, n, y, n, &ep, scratch, 1, &e), AIT_OK);
    double top = 0, err = 0;
    for (int64_t p = 0; p < np; p++)
        for (int64_t j = 0; j < n; j++) {
            double v = 0;
            for (int64_t k = 0; k < 9; k++) {
                const int64_t iy = p / g.ow - 1 + k / 3, ix = p % g.ow - 1 + k % 3;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                for (int64_t c = 0; c < g.c; c++) v += (double)x[(iy * g.w + ix) * g.c + c] * w[(k * g.c + c) * n + j];
            }
            top = fmax(top, fabs(v));
            err = fmax(err, fabs(v - y[p * n + j]));
        }
    print_message("winograd F(%dx%d) 28x28x64 -> 64: max error %.3g of max |y| %.3g (%.3g)\n", kwg_out(tt),
                  kwg_out(tt), err, top, err / top);
    assert_true(err <= bound * top);
    for (int pos = 0; pos < kwg_pos(tt); pos++) aligned_free(bufs[pos]);
    free(x);
    free(w);
    free(u);
    free(y);
    free(scratch);
}

static void test_winograd_error(void **state)
{
    (void)state;
    winograd_error(KWG_F4, 5e-6);
    winograd_error(KWG_F2, 2e-6);
}


/* Static int8 F(2x2, 3x3) on uint8 (kwg_conv_u8) against the float Conv in
 * double of the dequantised input (x - z) * xs and the float weights, at
 * every ISA and the portable path, 1 and 2 threads: odd planes and channel
 * counts, a group's channels of a wider input, no padding, two images and
 * several blocks of tiles, zero points 0, 3 and 130, the epilogue's quick
 * forms (bias and Relu, a residual, Clip) and gemm_epi_tile's (Sigmoid);
 * the floats within 3% of the largest sum before the activation and at
 * least 33 dB SQNR but after Clip (the requantised V and U: 1.2 to 1.6%
 * and 36 to 40 dB on these, the same at every ISA), and the uint8 output
 * qg_requant_u8's bytes of the float one, the same bytes at every ISA and
 * thread count as the portable path's at one. The residual is a uint8 one's
 * floats: given as uint8 (kwg_res8) instead, the floats and bytes are the
 * float residual's, bit for bit. */
static void test_winograd_u8(void **state)
{
    (void)state;
    static const struct {
        knhwc_geom g;
        int64_t pb, pr, n, images;
        int32_t z;
    } cs[] = {
        {{.h = 9, .w = 11, .cs = 19, .c = 19, .pt = 1, .pl = 1}, 1, 1, 17, 1, 3},
        {{.h = 7, .w = 7, .cs = 44, .c0 = 4, .c = 36, .pt = 1, .pl = 1}, 1, 1, 40, 2, 0},
        {{.h = 6, .w = 5, .cs = 64, .c = 64}, 0, 0, 33, 1, 130},
        {{.h = 20, .w = 19, .cs = 128, .c = 128, .pt = 1, .pl = 1}, 1, 1, 64, 2, 0},
    };
    for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
        knhwc_geom g = cs[ci].g;
        g.kh = g.kw = 3;
        g.sh = g.sw = g.dh = g.dw = 1;
        g.oh = g.h + g.pt + cs[ci].pb - 2;
        g.ow = g.w + g.pl + cs[ci].pr - 2;
        const int64_t n = cs[ci].n, ldy = n + 3, ni = cs[ci].images, np = ni * g.oh * g.ow;
        const int64_t nx = ni * g.h * g.w * g.cs;
        const int32_t z = cs[ci].z;
        const float xs = 0.02f, ys = 0.03f;
        float *xf = kc_rand((size_t)nx, 5 + (unsigned)ci, 0, 255);
        uint8_t *x = malloc((size_t)nx);
        for (int64_t i = 0; i < nx; i++) x[i] = (uint8_t)xf[i];
        float *w = kc_rand((size_t)(9 * g.c * n), 9 + (unsigned)ci, -0.5f, 0.5f); /* [tap*c + ci][n] */
        float *bias = kc_rand((size_t)n, 11, -1, 1), *res = kc_rand((size_t)(np * n), 13, 0, 255);
        uint8_t *r8 = malloc((size_t)(np * n)); /* the residual as uint8, and its floats */
        const kwg_res8 rq = {r8, 0.008f, 100};
        for (int64_t i = 0; i < np * n; i++) r8[i] = (uint8_t)res[i];
        qg_dequant_u8(r8, np * n, rq.s, rq.z, res);
        float *got8 = malloc(sizeof(float) * (size_t)(np * ldy));
        uint8_t *y88 = malloc((size_t)(np * n)), *port8 = malloc((size_t)(4 * np * n)); /* the portable bytes */
        float *u = malloc(sizeof(float) * (size_t)(16 * g.c * n)), *y = malloc(sizeof(float) * (size_t)(np * ldy));
        float *got = malloc(sizeof(float) * (size_t)(np * n));
        uint8_t *y8 = malloc((size_t)(np * n)), *want8 = malloc((size_t)n);
        double *sum = malloc(sizeof(double) * (size_t)(np * n)), *want = malloc(sizeof(double) * (size_t)(np * n));
        for (int64_t p = 0; p < np; p++)
            for (int64_t j = 0; j < n; j++) {
                const int64_t im = p / (g.oh * g.ow), oy = p % (g.oh * g.ow) / g.ow, ox = p % g.ow;
                double v = 0;
                for (int64_t ky = 0; ky < 3; ky++)
                    for (int64_t kx = 0; kx < 3; kx++) {
                        const int64_t iy = oy - g.pt + ky, ix = ox - g.pl + kx;
                        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                        for (int64_t c = 0; c < g.c; c++)
                            v += ((double)x[((im * g.h + iy) * g.w + ix) * g.cs + g.c0 + c] - z) * xs *
                                 w[((ky * 3 + kx) * g.c + c) * n + j];
                    }
                sum[p * n + j] = v;
            }
        kwg_weights(KWG_F2, w, g.c, n, u);
        const size_t us = (qg_pack_size(QG_INT8DQ, 0, g.c, n) + 63) / 64 * 64;
        char *pk = aligned_zalloc(16 * us);
        for (int pos = 0; pos < 16; pos++) qg_pack(QG_INT8DQ, 0, u + pos * g.c * n, n, 1, g.c, n, pk + pos * us);
        for (int isa = KISA_PORTABLE; isa <= (int)kisa_cpu(); isa++)
            for (int th = 1; th <= 2; th++)
                for (int ai = 0; ai < 4; ai++) {
                    assert_true(kisa_force((kisa)isa));
                    gemm_epi ep = {.act = GEMM_ACT_RELU, .bias_mode = GEMM_BIAS_COL, .bias = bias};
                    if (ai == 1) ep = (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias, .res = res, .ldr = n};
                    if (ai == 2) ep = (gemm_epi){.act = GEMM_ACT_CLIP, .lo = -0.25f, .hi = 0.75f};
                    if (ai == 3) ep = (gemm_epi){.act = GEMM_ACT_SIGMOID, .res = res, .ldr = n, .res_after = true};
                    double top = 1e-3, err = 0, se = 0, ss = 0;
                    for (int64_t p = 0; p < np * n; p++) {
                        double v = sum[p] + (ep.bias ? bias[p % n] : 0), r = ep.res ? res[p] : 0;
                        if (!ep.res_after) v += r;
                        top = fmax(top, fabs(v)); /* before the activation: Clip's range is small */
                        v = ai == 3 ? 1 / (1 + exp(-v)) : ai == 2 ? fmin(0.75, fmax(-0.25, v)) : ai == 0 ? fmax(v, 0) : v;
                        want[p] = v + (ep.res_after ? r : 0);
                    }
                    size_t sb;
                    ait_error e = {0};
                    assert_true(kwg_scratch_u8(&g, ni, n, th, &sb));
                    void *scratch = malloc(sb);
                    for (int64_t i = 0; i < np * ldy; i++) y[i] = NAN;
                    assert_int_equal(kwg_conv_u8(&g, ni, x, xs, z, pk, us, n, NULL, 0, 0, y, ldy, &ep, NULL, scratch, th, &e),
                                     AIT_OK);
                    for (int64_t p = 0; p < np; p++) {
                        memcpy(got + p * n, y + p * ldy, sizeof(float) * (size_t)n);
                        for (int64_t j = n; j < ldy; j++) assert_true(isnan(y[p * ldy + j]));
                    }
                    for (int64_t p = 0; p < np * n; p++) {
                        const double d = got[p] - want[p];
                        err = fmax(err, fabs(d));
                        se += d * d;
                        ss += want[p] * want[p];
                    }
                    if (!(err <= 0.03 * top) || (ai != 2 && !(ss >= 2000 * se))) /* 33 dB */
                        fail_msg("int8 winograd case %zu [isa %s] %d threads, epilogue %d: max error %g, %g of the "
                                 "largest sum; SQNR %.1f dB", ci, kisa_name(kisa_active()), th, ai, err, err / top,
                                 10 * log10(ss / se));
                    assert_int_equal(kwg_conv_u8(&g, ni, x, xs, z, pk, us, n, y8, ys, 7, NULL, 0, &ep, NULL, scratch, th, &e),
                                     AIT_OK);
                    if (isa == KISA_PORTABLE && th == 1) memcpy(port8 + ai * np * n, y8, (size_t)(np * n));
                    else if (memcmp(port8 + ai * np * n, y8, (size_t)(np * n)))
                        fail_msg("int8 winograd case %zu [isa %s] %d threads, epilogue %d: not the portable path's "
                                 "bytes", ci, kisa_name(kisa_active()), th, ai);
                    for (int64_t p = 0; p < np; p++) {
                        qg_requant_u8(got + p * n, n, ys, 7, want8);
                        if (memcmp(y8 + p * n, want8, (size_t)n))
                            fail_msg("int8 winograd case %zu [isa %s] epilogue %d: pixel %lld's uint8 is not the "
                                     "floats' requantised", ci, kisa_name(kisa_active()), ai, (long long)p);
                    }
                    if (ep.res) { /* the same residual as uint8: the same floats and bytes */
                        gemm_epi ep8 = ep;
                        ep8.res = NULL;
                        for (int64_t i = 0; i < np * ldy; i++) got8[i] = NAN;
                        assert_int_equal(kwg_conv_u8(&g, ni, x, xs, z, pk, us, n, NULL, 0, 0, got8, ldy, &ep8, &rq,
                                                     scratch, th, &e), AIT_OK);
                        assert_int_equal(kwg_conv_u8(&g, ni, x, xs, z, pk, us, n, y88, ys, 7, NULL, 0, &ep8, &rq,
                                                     scratch, th, &e), AIT_OK);
                        for (int64_t p = 0; p < np; p++)
                            if (memcmp(got8 + p * ldy, y + p * ldy, sizeof(float) * (size_t)n) ||
                                memcmp(y88 + p * n, y8 + p * n, (size_t)n))
                                fail_msg("int8 winograd case %zu [isa %s] epilogue %d: pixel %lld with the uint8 "
                                         "residual is not the float residual's", ci, kisa_name(kisa_active()), ai,
                                         (long long)p);
                        ep8.res = res; /* both: refused */
                        assert_int_equal(kwg_conv_u8(&g, ni, x, xs, z, pk, us, n, y88, ys, 7, NULL, 0, &ep8, &rq,
                                                     scratch, th, &e), AIT_E_INVALID_ARG);
                    }
                    free(scratch);
                    kisa_force(KISA_N);
                }
        aligned_free(pk);
        free(xf), free(x), free(w), free(bias), free(res), free(u), free(y), free(got), free(y8), free(want8);
        free(r8), free(got8), free(y88), free(port8);
        free(sum), free(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_winograd),
        cmocka_unit_test(test_winograd_error),
        cmocka_unit_test(test_winograd_u8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
