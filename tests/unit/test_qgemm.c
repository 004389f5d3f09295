/* The quantised GEMMs (src/kernels/qgemm.h) against references of the same
 * quantisation, on the best kernels this CPU runs and on the portable ones:
 * int8dq exactly (an integer reference), bf16 within float rounding of
 * bf16 products, the weight-only ones within float rounding of the
 * dequantised weights; odd sizes, M 1..13 and larger, 1 and 2 threads, the
 * epilogue (every kind on int8dq, whose kernels apply part of it in
 * registers), int8dq's uint8 output (qgemm_u8_q8) byte for byte against
 * the float output requantised, a packed buffer's checks; int8dq at AVX-512
 * (VNNI), AVX2 (int16 products) and portable; fp16 weight-only within float
 * rounding of the test's own half weights, every epilogue, at the three;
 * bf16 with every epilogue, and past 2 rows (its K-blocked tiles) at sizes
 * off every step of its blocking, its raw sums those of one row at a time
 * bit for bit; int4wo packed by qg_pack (A in int8 per group: the test's
 * own quantisation of A and integer sums, every ISA's C the portable one's
 * bit for bit, NaN for a row holding a NaN or an infinity) and by
 * qg_pack_q4 (float A, within float rounding), each group size. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/half.h"
#include "core/tensor.h"
#include "kernels/isa.h"
#include "kernels/qgemm.h"

static unsigned rng = 777;
static float rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The test's own weight quantisers (as qgemm.h states them). */
static float q8(const float *b, int64_t k, int64_t n, int64_t j, int8_t *q)
{
    float mx = 0;
    for (int64_t p = 0; p < k; p++) mx = fmaxf(mx, fabsf(b[p * n + j]));
    float s = mx > 0 ? mx / 127.0f : 1.0f;
    for (int64_t p = 0; p < k; p++) {
        float v = nearbyintf(b[p * n + j] / s);
        q[p] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    return s;
}

/* IEEE half of x as QG_FP16WO stores it, in double (the test's own: 11
 * significant bits, nearest even; subnormal steps of 2^-24 below 2^-14;
 * finite values beyond 65504 clamped to it; inf and NaN kept). */
static double h16(double x)
{
    if (!isfinite(x)) return x;
    if (fabs(x) > 65504) return x > 0 ? 65504 : -65504;
    if (fabs(x) < ldexp(1, -14)) return ldexp(nearbyint(ldexp(x, 24)), -24);
    int e = ilogb(x);
    return ldexp(nearbyint(ldexp(x, 10 - e)), e - 10);
}

/* Dequantised int4 weights of column j, groups of G. */
static void dq4(const float *b, int64_t k, int64_t n, int64_t j, int G, double *w, double *mag)
{
    for (int64_t g0 = 0; g0 < k; g0 += G) {
        int64_t g1 = g0 + G < k ? g0 + G : k;
        float lo = 0, hi = 0;
        for (int64_t p = g0; p < g1; p++) lo = fminf(lo, b[p * n + j]), hi = fmaxf(hi, b[p * n + j]);
        float s = hi > lo ? (hi - lo) / 15.0f : 1.0f;
        float z = nearbyintf(-lo / s);
        z = z < 0 ? 0 : z > 15 ? 15 : z;
        for (int64_t p = g0; p < g1; p++) {
            float q = nearbyintf(b[p * n + j] / s) + z;
            q = q < 0 ? 0 : q > 15 ? 15 : q;
            w[p] = (double)s * (q - z);
            mag[p] = (double)s * (q + z);
        }
    }
}

/* int4wo's A (qgemm.h, a8), the test's own: row a[k] in groups of G to
 * int8 q (rint(a * 127 / max|a|)), group g's scale s[g] = max|a| / 127. */
static void q8g(const float *a, int64_t k, int G, int8_t *q, float *s)
{
    for (int64_t g0 = 0; g0 < k; g0 += G) {
        int64_t g1 = g0 + G < k ? g0 + G : k;
        float mx = 0;
        for (int64_t p = g0; p < g1; p++) mx = fmaxf(mx, fabsf(a[p]));
        for (int64_t p = g0; p < g1; p++) q[p] = (int8_t)nearbyintf(a[p] * (mx > 0 ? 127.0f / mx : 0));
        s[g0 / G] = mx / 127.0f;
    }
}

/* int4 weights as pack_int4 makes them, column j of b (k x n), groups of G:
 * q[p] in 0..15, group g's scale s[g] and zero point z[g]; a8 (qg_pack's
 * int4wo): the scale the least bfloat16 at or above range / 15. */
static void q4(const float *b, int64_t k, int64_t n, int64_t j, int G, bool a8, uint8_t *q,
               float *s, float *z)
{
    for (int64_t g0 = 0; g0 < k; g0 += G) {
        int64_t g1 = g0 + G < k ? g0 + G : k;
        float lo = 0, hi = 0;
        for (int64_t p = g0; p < g1; p++) lo = fminf(lo, b[p * n + j]), hi = fmaxf(hi, b[p * n + j]);
        float sc = hi > lo ? (hi - lo) / 15.0f : 1.0f;
        if (a8) {
            float t = bf16_to_f32(f32_to_bf16(sc)); /* nearest, then up a step when below */
            if (t < sc) {
                uint32_t u;
                memcpy(&u, &t, 4);
                u += 0x10000;
                memcpy(&t, &u, 4);
            }
            sc = t;
        }
        float zp = nearbyintf(-lo / sc);
        zp = zp < 0 ? 0 : zp > 15 ? 15 : zp;
        for (int64_t p = g0; p < g1; p++) {
            float v = nearbyintf(b[p * n + j] / sc) + zp;
            q[p] = (uint8_t)(v < 0 ? 0 : v > 15 ? 15 : v);
        }
        s[g0 / G] = sc, z[g0 / G] = zp;
    }
}

/* The epilogues a check runs (EPI_N kinds; 0 none, 1 bias + relu; 6 bert's: a column bias
 * and a residual in the tile, GELU after it), and each one's value in double from the sum x
 * at row i, column j. */
enum { EPI_N = 7 };
static gemm_epi epi_kind(int kind, const float *bias, const float *res, int64_t ldr)
{
    switch (kind) {
    case 1: return (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_RELU};
    case 2:
        return (gemm_epi){.scaled = true, .scale = 0.5f, .bias_mode = GEMM_BIAS_ROW, .bias = bias,
                          .act = GEMM_ACT_CLIP, .lo = -0.3f, .hi = 0.4f};
    case 3: return (gemm_epi){.res = res, .ldr = ldr, .res_scale = 0.7f, .act = GEMM_ACT_GELU};
    case 4:
        return (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_LEAKY,
                          .lo = 0.1f, .res = res, .ldr = ldr, .res_after = true};
    case 5:
        return (gemm_epi){.res = res, .ldr = ldr, .res_scale = 0.25f, .res_after = true,
                          .act = GEMM_ACT_SIGMOID};
    case 6:
        return (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias, .res = res, .ldr = ldr,
                          .act = GEMM_ACT_GELU};
    default: return (gemm_epi){0};
    }
}
static double epi_ref(int kind, double x, int64_t i, int64_t j, const float *bias, const float *res,
                      int64_t ldr)
{
    switch (kind) {
    case 1: x += bias[j]; return x > 0 ? x : 0;
    case 2: x = x * 0.5 + bias[i]; return fmin(fmax(x, -0.3f), 0.4f);
    case 3: x += 0.7 * res[i * ldr + j]; return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case 4: x += bias[j]; return (x < 0 ? 0.1 * x : x) + res[i * ldr + j];
    case 5: return 1 / (1 + exp(-x)) + 0.25 * res[i * ldr + j];
    case 6: x += bias[j] + res[i * ldr + j]; return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    default: return x;
    }
}

/* qgemm_u8_q8 on A's quantised rows qa (k apart): C's bytes those
 * qg_requant_u8 makes of qgemm_u8's C (the same as qgemm's, c, unless c is
 * NULL), the bytes between C's rows (ldy past n) left alone. When every
 * row has row 0's scale and zero point, qgemm_u8_uni given those two alone:
 * qgemm_u8's floats and qgemm_u8_q8's bytes, bit for bit. */
static void u8_out_check(const qg_packed *v, const uint8_t *qa, const float *sa, const int32_t *za,
                         int64_t m, const float *c, const gemm_epi *ep, int threads)
{
    const int64_t n = v->n, k = v->k, kp = v->kp, ldy = n + 3;
    const float ys = 0.0123f;
    const int32_t yz = 77;
    uint8_t *q = calloc((size_t)(m * kp), 1), *want = malloc((size_t)(m * n));
    uint8_t *got = malloc((size_t)(m * ldy));
    float *c2 = malloc(sizeof(float) * (size_t)(m * n));
    for (int64_t i = 0; i < m; i++) memcpy(q + i * kp, qa + i * k, (size_t)k);
    qgemm_u8(v, q, sa, za, m, c2, n, ep, threads);
    if (c) assert_memory_equal(c2, c, sizeof(float) * (size_t)(m * n));
    qg_requant_u8(c2, m * n, ys, yz, want);
    memset(got, 0xa5, (size_t)(m * ldy));
    qgemm_u8_q8(v, q, sa, za, m, got, ldy, ys, yz, ep, threads);
    for (int64_t i = 0; i < m; i++) {
        if (memcmp(got + i * ldy, want + i * n, (size_t)n) != 0)
            fail_msg("qgemm_u8_q8 m%lld n%lld k%lld (%s): row %lld differs from qg_requant_u8's",
                     (long long)m, (long long)n, (long long)k, qg_kernel_name(QG_INT8DQ),
                     (long long)i);
        for (int64_t j = n; j < ldy; j++) assert_int_equal(got[i * ldy + j], 0xa5);
    }
    bool uni = true;
    for (int64_t i = 1; i < m; i++) uni = uni && sa[i] == sa[0] && za[i] == za[0];
    if (uni) {
        float *c3 = malloc(sizeof(float) * (size_t)(m * n));
        assert_true(qgemm_u8_uni(v, q, NULL, sa[0], za[0], m, c3, n, NULL, 0, 0, 0, ep, threads));
        if (memcmp(c3, c2, sizeof(float) * (size_t)(m * n)) != 0)
            fail_msg("qgemm_u8_uni m%lld n%lld k%lld (%s): floats differ from qgemm_u8's",
                     (long long)m, (long long)n, (long long)k, qg_kernel_name(QG_INT8DQ));
        memset(got, 0xa5, (size_t)(m * ldy));
        assert_true(qgemm_u8_uni(v, q, NULL, sa[0], za[0], m, NULL, 0, got, ldy, ys, yz, ep,
                                 threads));
        for (int64_t i = 0; i < m; i++) {
            if (memcmp(got + i * ldy, want + i * n, (size_t)n) != 0)
                fail_msg("qgemm_u8_uni m%lld n%lld k%lld (%s): row %lld differs from "
                         "qg_requant_u8's", (long long)m, (long long)n, (long long)k,
                         qg_kernel_name(QG_INT8DQ), (long long)i);
            for (int64_t j = n; j < ldy; j++) assert_int_equal(got[i * ldy + j], 0xa5);
        }
        free(c3);
    }
    free(q), free(want), free(got), free(c2);
}

static void check(int scheme, int group, int64_t m, int64_t n, int64_t k, int threads, int epi)
{
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n)), *res = malloc(sizeof(float) * (size_t)(m * n));
    float *bias = malloc(sizeof(float) * (size_t)(m + n));
    for (int64_t i = 0; i < m * k; i++) a[i] = rnd() * 2;
    for (int64_t i = 0; i < k * n; i++) b[i] = rnd();
    for (int64_t j = 0; j < m + n; j++) bias[j] = rnd();
    for (int64_t j = 0; j < m * n; j++) res[j] = rnd();
    size_t sz = qg_pack_size(scheme, group, k, n);
    assert_true(sz > 0);
    void *buf = aligned_zalloc(sz);
    qg_pack(scheme, group, b, n, 1, k, n, buf);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    gemm_epi ep = epi_kind(epi, bias, res, n);
    assert_int_equal(qgemm(&v, a, k, m, c, n, &ep, threads, &e), AIT_OK);
    int8_t *qc = malloc((size_t)k + 1);
    double *w = malloc(sizeof(double) * (size_t)k), *mag = malloc(sizeof(double) * (size_t)k);
    uint8_t *qa = malloc((size_t)(m * k));
    float *sa = malloc(sizeof(float) * (size_t)m);
    int32_t *za = malloc(sizeof(int32_t) * (size_t)m);
    for (int64_t i = 0; i < m; i++) qg_quant_row_u8(a + i * k, k, qa + i * k, &sa[i], &za[i]);
    /* int8dq with every row at row 0's scale and zero point (static int8's A: the kernels
     * dequantise once per tile), no epilogue: cu, checked exactly below */
    float *cu = malloc(sizeof(float) * (size_t)(m * n)), *su = malloc(sizeof(float) * (size_t)m);
    int32_t *zu = malloc(sizeof(int32_t) * (size_t)m);
    if (scheme == QG_INT8DQ) {
        uint8_t *q = calloc((size_t)(m * v.kp), 1);
        for (int64_t i = 0; i < m; i++) {
            memcpy(q + i * v.kp, qa + i * k, (size_t)k);
            su[i] = sa[0], zu[i] = za[0];
        }
        qgemm_u8(&v, q, su, zu, m, cu, n, NULL, threads);
        free(q);
    }
    for (int64_t j = 0; j < n; j++) {
        float sb = 1;
        if (scheme == QG_INT8DQ || scheme == QG_INT8WO) sb = q8(b, k, n, j, qc);
        if (scheme == QG_INT4WO) break; /* checked below */
        for (int64_t i = 0; i < m; i++) {
            double ref = 0, tol = 0;
            float exact = 0;
            if (scheme == QG_INT8DQ) {
                int64_t acc = 0, cs = 0;
                for (int64_t p = 0; p < k; p++) acc += (int64_t)qa[i * k + p] * qc[p], cs += qc[p];
                float uni = (float)(int32_t)(acc - (int64_t)zu[i] * cs) * (su[i] * sb);
                if (cu[i * n + j] != uni)
                    fail_msg("int8dq m%lld n%lld k%lld, rows at one scale, at [%lld][%lld]: %.9g, "
                             "integer reference %.9g", (long long)m, (long long)n, (long long)k,
                             (long long)i, (long long)j, cu[i * n + j], uni);
                acc -= (int64_t)za[i] * cs;
                exact = (float)(int32_t)acc * (sa[i] * sb);
            }
            for (int64_t p = 0; p < k; p++) {
                double x = a[i * k + p], t;
                if (scheme == QG_BF16) {
                    t = (double)bf16_to_f32(f32_to_bf16(a[i * k + p])) *
                        bf16_to_f32(f32_to_bf16(b[p * n + j]));
                    tol += fabs(t);
                } else if (scheme == QG_INT8WO) {
                    t = x * qc[p] * sb;
                    tol += fabs(t);
                } else if (scheme == QG_FP16WO) {
                    t = x * h16(b[p * n + j]);
                    tol += fabs(t);
                } else {
                    t = x * w[p];
                    tol += fabs(x) * mag[p];
                }
                ref += t;
            }
            float got = c[i * n + j];
            if (scheme == QG_INT8DQ && epi > 1) { /* float rounding of the epilogue */
                double want = epi_ref(epi, exact, i, j, bias, res, n);
                if (fabs(got - want) > 1e-5 * (1 + fabs(want)))
                    fail_msg("int8dq m%lld n%lld k%lld epilogue %d at [%lld][%lld]: %.9g, "
                             "integer reference %.9g",
                             (long long)m, (long long)n, (long long)k, epi, (long long)i,
                             (long long)j, got, want);
                continue;
            }
            if (scheme == QG_INT8DQ) { /* exactly */
                float want = exact;
                if (epi) want = fmaxf(want + bias[j], 0);
                if (got != want)
                    fail_msg("int8dq m%lld n%lld k%lld at [%lld][%lld]: %.9g, integer reference %.9g",
                             (long long)m, (long long)n, (long long)k, (long long)i, (long long)j,
                             got, want);
                continue;
            }
            if (scheme == QG_FP16WO || scheme == QG_BF16) { /* every epilogue: slope <= 1.2 */
                tol = tol * 4e-7 * (double)(k + 2) * 1.2 + 1e-6 * (1 + fabs(ref) + fabs(bias[j]));
                ref = epi_ref(epi, ref, i, j, bias, res, n);
                tol += 1e-6 * fabs(ref);
                if (fabs(got - ref) > tol)
                    fail_msg("%s m%lld n%lld k%lld epilogue %d at [%lld][%lld] (%s): %.9g, "
                             "reference %.9g (tol %g)", qg_scheme_name(scheme), (long long)m,
                             (long long)n, (long long)k, epi, (long long)i, (long long)j,
                             qg_kernel_name(scheme), got, ref, tol);
                continue;
            }
            if (epi) ref = fmax(ref + bias[j], 0), tol += fabs(bias[j]);
            tol = tol * 4e-7 * (double)(k + 2) + 1e-30;
            if (fabs(got - ref) > tol)
                fail_msg("%s m%lld n%lld k%lld at [%lld][%lld]: %.9g, reference %.9g (tol %g)",
                         qg_scheme_name(scheme), (long long)m, (long long)n, (long long)k,
                         (long long)i, (long long)j, got, ref, tol);
        }
    }
    if (scheme == QG_INT8DQ) {
        u8_out_check(&v, qa, sa, za, m, c, &ep, threads);
        /* every row at one scale and zero point (static int8): the kernels' uint8 rows of
         * whole tiles, with a column bias and a clip folded into the clamp too, and a
         * residual before a relu (a Conv + Add + Relu) */
        gemm_epi clip = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_CLIP,
                         .lo = -0.3f, .hi = 0.4f},
                 resid = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .res = res, .ldr = n,
                          .res_scale = 0.7f, .act = GEMM_ACT_RELU};
        u8_out_check(&v, qa, su, zu, m, NULL, &ep, threads);
        u8_out_check(&v, qa, su, zu, m, NULL, &clip, threads);
        u8_out_check(&v, qa, su, zu, m, NULL, &resid, threads);
    }
    if (scheme == QG_INT4WO) { /* A in int8 per group (a8): the integer sums' reference */
        assert_true(v.a8);
        int64_t ng = (k + group - 1) / group;
        int8_t *q8a = malloc((size_t)k);
        uint8_t *qw = malloc((size_t)k);
        float *s8 = malloc(sizeof(float) * (size_t)ng), *sw = malloc(sizeof(float) * (size_t)ng),
              *zw = malloc(sizeof(float) * (size_t)ng);
        for (int64_t i = 0; i < m; i++) {
            q8g(a + i * k, k, group, q8a, s8);
            for (int64_t j = 0; j < n; j++) {
                q4(b, k, n, j, group, true, qw, sw, zw);
                double ref = 0, tol = 0;
                for (int64_t g = 0; g < ng; g++) {
                    int64_t acc = 0, na = 0, mg = 0;
                    for (int64_t p = g * group; p < k && p < (g + 1) * group; p++) {
                        acc += (int64_t)q8a[p] * qw[p];
                        na += q8a[p];
                        mg += llabs(q8a[p]) * (qw[p] + (int64_t)zw[g]);
                    }
                    double f = (double)sw[g] * s8[g];
                    ref += f * ((double)acc - zw[g] * (double)na);
                    tol += f * (double)mg;
                }
                if (epi) ref = fmax(ref + bias[j], 0), tol += fabs(bias[j]);
                tol = tol * 4e-7 * (double)(ng + 2) + 1e-30;
                float got = c[i * n + j];
                if (fabs(got - ref) > tol)
                    fail_msg("int4wo-%d (a8) m%lld n%lld k%lld at [%lld][%lld] (%s): %.9g, "
                             "reference %.9g (tol %g)", group, (long long)m, (long long)n,
                             (long long)k, (long long)i, (long long)j, qg_kernel_name(scheme),
                             got, ref, tol);
            }
        }
        free(q8a), free(qw), free(s8), free(sw), free(zw);
    }
    free(qa), free(sa), free(za), free(qc), free(w), free(mag), free(cu), free(su), free(zu);
    aligned_free(buf);
    free(a), free(b), free(c), free(bias), free(res);
}

static const int64_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 37};
static const int64_t Ns[] = {1, 16, 17, 45, 64, 100};
static const int64_t Ks[] = {1, 2, 3, 5, 31, 64, 67, 130};

static void sweep(int scheme, int group)
{
    kisa isas[] = {KISA_N, KISA_AVX2, KISA_PORTABLE};
    for (size_t s = 0; s < 3; s++) {
        if (!kisa_force(isas[s])) continue;
        for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
            for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
                for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
                    int kinds = scheme == QG_INT8DQ || scheme == QG_FP16WO || scheme == QG_BF16
                                    ? EPI_N
                                    : 2;
                    check(scheme, group, Ms[mi], Ns[ni], Ks[ki], 1, (int)((mi + ni + ki) % kinds));
                }
        check(scheme, group, 100, 70, 300, 2, 1); /* large-ish, two threads */
        check(scheme, group, 40, 50, 99, 2, 1);   /* one column group: rows over the threads */
        check(scheme, group, 29, 33, 2500, 1, 1); /* k past 32 KiB of rows: blocks of rows */
        if (scheme == QG_INT8DQ) /* rows past a third of L2: two passes over the groups */
            check(scheme, group, 103, 130, 4100, 1, 1);
    }
    kisa_force(KISA_N);
}

/* bf16 past 2 rows (its compute-bound tiles: 12 rows by 32
 * columns, K in blocks of at most 512, rows in blocks of at most 1024,
 * columns in blocks of at most 8192, from the cache sizes) at sizes that
 * end every loop off its step: M not a multiple of 12 and past one block
 * of rows, N of 16 to 8200 (one panel, a tile and a half, past a block of
 * columns), K past a block and not a multiple of one, every epilogue, one
 * and two threads (tiles of columns apart, and rows apart at one tile);
 * against the reference, and the raw sums bit for bit those of one row at
 * a time (the streaming path's one pass over K: K's blocks start from the
 * partial sums, not from 0; the single row, on the panels' path, is
 * the streaming one). */
static void bf16_blocked(int64_t m, int64_t n, int64_t k, int threads, int epi)
{
    check(QG_BF16, 0, m, n, k, threads, epi);
    float *a = malloc(sizeof(float) * (size_t)(m * k));
    float *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n)), *r = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < m * k; i++) a[i] = rnd() * 2;
    for (int64_t i = 0; i < k * n; i++) b[i] = rnd();
    size_t sz = qg_pack_size(QG_BF16, 0, k, n);
    void *buf = aligned_zalloc(sz);
    qg_pack(QG_BF16, 0, b, n, 1, k, n, buf);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_int_equal(qgemm(&v, a, k, m, c, n, NULL, threads, &e), AIT_OK);
    for (int64_t i = 0; i < m; i++) {
        assert_int_equal(qgemm(&v, a + i * k, k, 1, r, n, NULL, 1, &e), AIT_OK);
        if (memcmp(r, c + i * n, sizeof(float) * (size_t)n) != 0)
            fail_msg("bf16 m%lld n%lld k%lld (%s, %d threads): row %lld differs from the same "
                     "row alone", (long long)m, (long long)n, (long long)k,
                     qg_kernel_name(QG_BF16), threads, (long long)i);
    }
    aligned_free(buf);
    free(a), free(b), free(c), free(r);
}

static void test_bf16(void **st)
{
    (void)st;
    sweep(QG_BF16, 0);
    kisa isas[] = {KISA_N, KISA_AVX2, KISA_PORTABLE};
    for (size_t s = 0; s < 3; s++) {
        if (!kisa_force(isas[s])) continue;
        static const int64_t bm[] = {3, 17, 25, 100}, bn[] = {16, 33, 45, 64, 100},
                             bk[] = {1, 3, 1100};
        int kind = 0;
        for (size_t mi = 0; mi < 4; mi++)
            for (size_t ni = 0; ni < 5; ni++)
                for (size_t ki = 0; ki < 3; ki++)
                    bf16_blocked(bm[mi], bn[ni], bk[ki], 1, kind++ % EPI_N);
        bf16_blocked(1100, 40, 1030, 1, 3); /* past a block of rows and of K */
        bf16_blocked(20, 8200, 5, 1, 2);    /* past a block of columns */
        bf16_blocked(40, 100, 800, 2, 4);   /* two threads: tiles apart */
        bf16_blocked(100, 20, 500, 2, 1);   /* two threads, one tile: rows apart (A whole first) */
        bf16_blocked(300, 20, 1100, 2, 0);  /* the same, A a block at a time, past K's block */
        bf16_blocked(2, 20, 700, 2, 5);     /* at most 2 rows: the panels */
    }
    kisa_force(KISA_N);
}
static void test_int8dq(void **st)
{
    (void)st;
    sweep(QG_INT8DQ, 0);
    /* the sweep's AVX2 pass ran the AVX2 kernel (int16 products), not the portable one */
    if (kisa_force(KISA_AVX2)) assert_string_equal(qg_kernel_name(QG_INT8DQ), "avx2");
    kisa_force(KISA_N);
}
static void test_int8wo(void **st) { (void)st; sweep(QG_INT8WO, 0); }

/* fp16 weight-only: the sweep at every ISA (AVX-512, AVX2's F16C kernel,
 * portable); the packed bytes the same at every ISA and each the test's own
 * half of the value, values past half's range clamped to +-65504 (inf and
 * NaN kept), values below its normal range as its subnormals (0 under
 * 2^-25); a GEMM on subnormal weights exact at every ISA. */
static void test_fp16(void **st)
{
    (void)st;
    sweep(QG_FP16WO, 0);
    if (kisa_force(KISA_AVX2)) assert_string_equal(qg_kernel_name(QG_FP16WO), "avx2-f16c");
    if (kisa_force(KISA_PORTABLE)) assert_string_equal(qg_kernel_name(QG_FP16WO), "portable");
    kisa_force(KISA_N);
    enum { K = 37, N = 21 };
    static const float special[] = {70000.0f, -1e6f, 65519.0f, 65504.0f, 3e-6f, -5.96e-8f,
                                    2.9e-8f, 1e-8f, 6.1e-5f, 1.0f / 3, -0.0f, 1e-30f};
    float b[K * N];
    for (int i = 0; i < K * N; i++) b[i] = rnd();
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) b[i * 7] = special[i];
    b[K * N - 1] = INFINITY;
    b[K * N - 2] = NAN;
    size_t sz = qg_pack_size(QG_FP16WO, 0, K, N);
    assert_true(sz > 0);
    uint8_t *want = aligned_zalloc(sz), *got = aligned_zalloc(sz);
    assert_true(kisa_force(KISA_PORTABLE));
    qg_pack(QG_FP16WO, 0, b, N, 1, K, N, want);
    for (int k = KISA_PORTABLE + 1; k <= (int)kisa_cpu(); k++) {
        assert_true(kisa_force((kisa)k));
        memset(got, 0, sz);
        qg_pack(QG_FP16WO, 0, b, N, 1, K, N, got);
        if (memcmp(got, want, sz)) fail_msg("fp16 pack at %s: bytes differ", kisa_name((kisa)k));
    }
    kisa_force(KISA_N);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(want, sz, &v, &e), AIT_OK);
    assert_null(v.scale);
    const uint16_t *w = v.w;
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) {
            float x = b[p * N + j], h = f16_to_f32(w[(j / QG_NR) * v.kp * QG_NR + p * QG_NR + j % QG_NR]);
            double r = h16(x);
            if (isnan(x) ? !isnan(h) : (h != r || !signbit(h) != !signbit(r)))
                fail_msg("fp16 pack of %.9g: %.9g, not %.9g", x, h, r);
        }
    assert_true(h16(70000) == 65504 && h16(3e-6) != 0 && h16(1e-8) == 0);
    aligned_free(want);
    aligned_free(got);
    /* subnormal halves through each kernel's conversion: exact sums of small integers
     * times 2^-24 */
    float bs[K * N], a[3 * K], c[3 * N];
    for (int i = 0; i < K * N; i++) bs[i] = ldexpf((float)(i % 1000 + 1), -24);
    for (int i = 0; i < 3 * K; i++) a[i] = (float)(i % 5);
    sz = qg_pack_size(QG_FP16WO, 0, K, N);
    uint8_t *buf = aligned_zalloc(sz);
    qg_pack(QG_FP16WO, 0, bs, N, 1, K, N, buf);
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    kisa isas[] = {KISA_N, KISA_AVX2, KISA_PORTABLE};
    for (size_t s = 0; s < 3; s++) {
        if (!kisa_force(isas[s])) continue;
        assert_int_equal(qgemm(&v, a, K, 3, c, N, NULL, 1, &e), AIT_OK);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < N; j++) {
                double r = 0;
                for (int p = 0; p < K; p++) r += (double)a[i * K + p] * bs[p * N + j];
                if (c[i * N + j] != (float)r)
                    fail_msg("fp16 subnormal weights (%s) at [%d][%d]: %.9g, not %.9g",
                             qg_kernel_name(QG_FP16WO), i, j, c[i * N + j], r);
            }
    }
    kisa_force(KISA_N);
    aligned_free(buf);
    int g;
    assert_int_equal(qg_scheme_find("fp16", &g), QG_FP16WO);
}
/* int4wo of weights quantised already (qg_pack_q4: float A, not a8), at
 * every ISA, within float rounding of the dequantised weights. */
static void int4_float_a(int G, int64_t m, int64_t n, int64_t k)
{
    int64_t ng = (k + G - 1) / G;
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n)), *sc = malloc(sizeof(float) * (size_t)(ng * n));
    float *zp = malloc(sizeof(float) * (size_t)(ng * n)), *s1 = malloc(sizeof(float) * (size_t)ng);
    float *z1 = malloc(sizeof(float) * (size_t)ng);
    uint8_t *q = malloc((size_t)(k * n)), *qj = malloc((size_t)k);
    double *w = malloc(sizeof(double) * (size_t)k), *mag = malloc(sizeof(double) * (size_t)k);
    for (int64_t i = 0; i < m * k; i++) a[i] = rnd() * 2;
    for (int64_t i = 0; i < k * n; i++) b[i] = rnd();
    for (int64_t j = 0; j < n; j++) {
        q4(b, k, n, j, G, false, qj, s1, z1);
        for (int64_t p = 0; p < k; p++) q[p * n + j] = qj[p];
        for (int64_t g = 0; g < ng; g++) sc[g * n + j] = s1[g], zp[g * n + j] = z1[g];
    }
    size_t sz = qg_pack_q4_size(G, k, n);
    assert_true(sz >= qg_pack_size(QG_INT4WO, G, k, n)); /* float scales, not bfloat16 */
    void *buf = aligned_zalloc(sz);
    qg_pack_q4(q, false, n, 1, k, n, G, sc, zp, buf);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_false(v.a8);
    kisa isas[] = {KISA_N, KISA_AVX2, KISA_PORTABLE};
    for (size_t s = 0; s < 3; s++) {
        if (!kisa_force(isas[s])) continue;
        assert_int_equal(qgemm(&v, a, k, m, c, n, NULL, 1, &e), AIT_OK);
        for (int64_t j = 0; j < n; j++) {
            dq4(b, k, n, j, G, w, mag);
            for (int64_t i = 0; i < m; i++) {
                double ref = 0, tol = 0;
                for (int64_t p = 0; p < k; p++)
                    ref += a[i * k + p] * w[p], tol += fabs(a[i * k + p]) * mag[p];
                tol = tol * 4e-7 * (double)(k + 2) + 1e-30;
                if (fabs(c[i * n + j] - ref) > tol)
                    fail_msg("int4wo-%d float A m%lld n%lld k%lld at [%lld][%lld] (%s): %.9g, "
                             "reference %.9g (tol %g)", G, (long long)m, (long long)n,
                             (long long)k, (long long)i, (long long)j, qg_kernel_name(QG_INT4WO),
                             c[i * n + j], ref, tol);
            }
        }
    }
    kisa_force(KISA_N);
    aligned_free(buf);
    free(a), free(b), free(c), free(sc), free(zp), free(s1), free(z1), free(q), free(qj), free(w),
        free(mag);
}

/* int4wo a8 (qg_pack's): every ISA's C the portable one's bit for bit (A's
 * int8 bytes, scales and sums, then the same float steps), a row holding a
 * NaN, another an infinity, each NaN throughout. */
static void int4_same(int G, int64_t m, int64_t n, int64_t k, int threads)
{
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n)), *want = malloc(sizeof(float) * (size_t)(m * n));
    for (int64_t i = 0; i < m * k; i++) a[i] = rnd() * 3;
    for (int64_t i = 0; i < k * n; i++) b[i] = rnd();
    if (m > 2) a[k + k / 2] = NAN, a[2 * k + k - 1] = -INFINITY;
    size_t sz = qg_pack_size(QG_INT4WO, G, k, n);
    void *buf = aligned_zalloc(sz);
    qg_pack(QG_INT4WO, G, b, n, 1, k, n, buf);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_true(kisa_force(KISA_PORTABLE));
    assert_int_equal(qgemm(&v, a, k, m, want, n, NULL, threads, &e), AIT_OK);
    for (int k2 = KISA_PORTABLE + 1; k2 <= (int)kisa_cpu(); k2++) {
        assert_true(kisa_force((kisa)k2));
        assert_int_equal(qgemm(&v, a, k, m, c, n, NULL, threads, &e), AIT_OK);
        for (int64_t i = 0; i < m * n; i++)
            if (!(c[i] == want[i] || (isnan(c[i]) && isnan(want[i]))))
                fail_msg("int4wo-%d m%lld n%lld k%lld at %s (%s): [%lld] %.9g, portable %.9g", G,
                         (long long)m, (long long)n, (long long)k, kisa_name((kisa)k2),
                         qg_kernel_name(QG_INT4WO), (long long)i, c[i], want[i]);
    }
    for (int64_t i = 1; i < 3 && m > 2; i++) /* the rows given a NaN and an infinity */
        for (int64_t j = 0; j < n; j++)
            if (!isnan(want[i * n + j])) fail_msg("int4wo row %lld with a NaN or inf: %g", (long long)i, want[i * n + j]);
    kisa_force(KISA_N);
    aligned_free(buf);
    free(a), free(b), free(c), free(want);
}

static void test_int4wo(void **st)
{
    (void)st;
    sweep(QG_INT4WO, 32);
    sweep(QG_INT4WO, 64);
    sweep(QG_INT4WO, 128);
    static const int gs[] = {32, 64, 128};
    for (int gi = 0; gi < 3; gi++) {
        int4_float_a(gs[gi], 3, 37, 301);
        int4_float_a(gs[gi], 1, 16, 5);
        int4_float_a(gs[gi], 4, 100, 128);
        int4_same(gs[gi], 5, 45, 301, 1);
        int4_same(gs[gi], 1, 33, 67, 1);
        int4_same(gs[gi], 4, 200, 1030, 2);
        /* each row count of the AVX-512 kernel's panels-into-C path (qg_kern.fnc), odd n and
         * k, a last panel narrower than 16, the panels split over two threads */
        int4_same(gs[gi], 2, 17, 97, 1);
        int4_same(gs[gi], 3, 31, 33, 2);
        int4_same(gs[gi], 1, 50, 300, 2);
        int4_same(gs[gi], 2, 3, 1, 1);
    }
    if (kisa_cpu() >= KISA_AVX512 && kisa_force(KISA_N))
        printf("# int4wo kernel: %s\n", qg_kernel_name(QG_INT4WO));
}

/* The activation quantisers: every value within half a step of its code;
 * every ISA's bytes the portable one's; the fixed-scale one QuantizeLinear's. */
static void test_quant_row(void **st)
{
    (void)st;
    float a[257];
    uint8_t q[257];
    for (int i = 0; i < 257; i++) a[i] = rnd() * 3 + 0.5f;
    float s;
    int32_t z;
    qg_quant_row_u8(a, 257, q, &s, &z);
    assert_true(z >= 0 && z <= 255 && s > 0);
    for (int i = 0; i < 257; i++) assert_true(fabsf((q[i] - z) * s - a[i]) <= s * 0.5001f);
    float zero[3] = {0, 0, 0};
    qg_quant_row_u8(zero, 3, q, &s, &z);
    assert_true(s == 1 && z == 0 && q[0] == 0);
    /* every ISA's quantiser makes the portable one's bytes, scale and zero point: odd
     * lengths, all positive, all negative, mixed, a NaN and an infinity among them, values
     * past int32 once scaled and -inf */
    static const int lens[] = {1, 5, 16, 17, 31, 64, 150, 257};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int kind = 0; kind < 6; kind++) {
            int n = lens[li];
            for (int i = 0; i < n; i++) {
                float r = rnd() * 3;
                a[i] = kind == 0 ? fabsf(r) : kind == 1 ? -fabsf(r) : r;
            }
            if (kind == 3) a[n / 2] = NAN;
            if (kind == 4) a[n - 1] = INFINITY;
            if (kind == 5) a[0] = 3e9f, a[n / 2] = -3e9f, a[n - 1] = -INFINITY;
            uint8_t want[257];
            float ws;
            int32_t wz;
            assert_true(kisa_force(KISA_PORTABLE));
            qg_quant_row_u8(a, n, want, &ws, &wz);
            for (int k = KISA_PORTABLE + 1; k <= (int)kisa_cpu(); k++) {
                assert_true(kisa_force((kisa)k));
                qg_quant_row_u8(a, n, q, &s, &z);
                if (s != ws || z != wz || memcmp(q, want, (size_t)n) != 0)
                    fail_msg("quantiser at %s, n %d, kind %d: scale %g zp %d, portable %g %d", kisa_name((kisa)k),
                             n, kind, s, z, ws, wz);
            }
            /* static int8's fixed scale (a range narrower than the data, so
             * some saturate): QuantizeLinear's uint8, by hand, at every ISA */
            for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
                assert_true(kisa_force((kisa)k));
                qg_quant_u8(a, n, 0.0173f, 97, q);
                for (int i = 0; i < n; i++) {
                    float r = rintf(a[i] / 0.0173f) + 97;
                    uint8_t w = isnan(r) ? 0 : r >= 255 ? 255 : r <= 0 ? 0 : (uint8_t)r;
                    if (q[i] != w)
                        fail_msg("fixed quantiser at %s, n %d, kind %d, [%d] %g: %d, not %d",
                                 kisa_name((kisa)k), n, kind, i, a[i], q[i], w);
                }
                /* and back (a uint8 residual): (q - z) * s, the float of the
                 * formula by hand, at every ISA, nothing written past n */
                float d[258];
                d[n] = 12345.0f;
                qg_dequant_u8(q, n, 0.0173f, 97 + kind, d);
                for (int i = 0; i < n; i++)
                    if (memcmp(&d[i], &(float){(float)((int32_t)q[i] - (97 + kind)) * 0.0173f}, sizeof(float)))
                        fail_msg("dequantiser at %s, n %d, [%d] %d: %g", kisa_name((kisa)k), n, i, q[i], d[i]);
                if (d[n] != 12345.0f) fail_msg("dequantiser at %s, n %d: wrote past n", kisa_name((kisa)k), n);
            }
            kisa_force(KISA_N);
        }
}

/* A packed buffer is checked: its size, magic and header. */
static void test_view(void **st)
{
    (void)st;
    float b[6 * 5];
    for (int i = 0; i < 30; i++) b[i] = rnd();
    assert_int_equal(qg_pack_size(QG_INT4WO, 48, 6, 5), 0);
    size_t sz = qg_pack_size(QG_INT4WO, 64, 6, 5);
    uint8_t *buf = aligned_zalloc(sz);
    qg_pack(QG_INT4WO, 64, b, 5, 1, 6, 5, buf);
    qg_packed v;
    ait_error e = {0};
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_int_equal(v.group, 64);
    assert_int_not_equal(qg_view(buf, sz - 64, &v, &e), AIT_OK);
    buf[0] ^= 1;
    assert_int_not_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_true(v.a8); /* ait's own int4: A to int8 too */
    /* blobs of the older layouts (magic aitqgem1, aitqgem2): int4wo's (pairs of k then) are
     * refused with a message to re-tune, as int8dq's of aitqgem1 (one panel at a time) */
    memcpy(buf, "aitqgem2", 8);
    assert_int_not_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_non_null(strstr(e.msg, "re-tune"));
    memcpy(buf, "aitqgem1", 8);
    assert_int_not_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_non_null(strstr(e.msg, "re-tune"));
    aligned_free(buf);
    sz = qg_pack_size(QG_INT8WO, 0, 6, 5); /* int8wo's layout unchanged since aitqgem1 */
    buf = aligned_zalloc(sz);
    qg_pack(QG_INT8WO, 0, b, 5, 1, 6, 5, buf);
    memcpy(buf, "aitqgem2", 8);
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    memcpy(buf, "aitqgem1", 8);
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_false(v.a8);
    aligned_free(buf);
    sz = qg_pack_size(QG_INT8DQ, 0, 6, 5);
    buf = aligned_zalloc(sz);
    qg_pack(QG_INT8DQ, 0, b, 5, 1, 6, 5, buf);
    assert_int_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    memcpy(buf, "aitqgem1", 8);
    assert_int_not_equal(qg_view(buf, sz, &v, &e), AIT_OK);
    assert_non_null(strstr(e.msg, "re-tune"));
    aligned_free(buf);
    int g;
    assert_int_equal(qg_scheme_find("int4wo-128", &g), QG_INT4WO);
    assert_int_equal(g, 128);
    assert_int_equal(qg_scheme_find("int3", &g), -1);
}

int main(void)
{
    for (int s = 0; s < QG_N; s++) printf("# %s: %s\n", qg_scheme_name(s), qg_kernel_name(s));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quant_row), cmocka_unit_test(test_view),
        cmocka_unit_test(test_bf16),      cmocka_unit_test(test_int8dq),
        cmocka_unit_test(test_int8wo),    cmocka_unit_test(test_int4wo),
        cmocka_unit_test(test_fp16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
