/* The native backend's kernels (src/kernels/), part 1: the ISA table, the
 * element-wise programs, LayerNorm/RMSNorm/Softmax, the rotary embedding and attention, at every
 * ISA this CPU has and on the portable path, with 1 and 2 threads, against
 * loops in double written here. (Convolution-like kernels:
 * test_kernels_conv.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/attn.h"
#include "kernels/eltwise.h"
#include "kernels/gemm.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "attn_check.h"
#include "kernels_check.h"

static void test_isa(void **state)
{
    (void)state;
    kisa c = kisa_cpu();
    assert_int_equal(kisa_active(), c);
    assert_true(kisa_force(KISA_PORTABLE));
    assert_int_equal(kisa_active(), KISA_PORTABLE);
    assert_true(kisa_force(KISA_N));
    assert_int_equal(kisa_active(), c);
    if (c < KISA_AVX512) assert_false(kisa_force(KISA_AVX512));
    assert_string_equal(kisa_name(KISA_AVX2), "avx2");
}

/* Runs prog on n elements of x and checks it against want, in place too. */
static void ew_check(const char *what, const kew_prog *p, const float *x, const double *want,
                     size_t n, double tol)
{
    float *y = malloc(n * sizeof *y + 1);
    KC_EACH_ISA({
        memset(y, 0xff, n * sizeof *y);
        kew_run(p, x, y, n, kc_threads);
        assert_true(kc_close(what, y, want, n, tol, tol));
        memcpy(y, x, n * sizeof *y);
        kew_run(p, y, y, n, kc_threads);
        assert_true(kc_close(what, y, want, n, tol, tol));
    });
    free(y);
}

static void test_eltwise_functions(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 7, 13, 32, 1000, 2053};
    struct {
        kfun f;
        float a, b;
    } fs[] = {{KF_NONE, 0, 0},        {KF_RELU, 0, 0},        {KF_CLIP, 0, 6},
              {KF_CLIP, -1, 0.5f},    {KF_SIGMOID, 0, 0},     {KF_TANH, 0, 0},
              {KF_EXP, 0, 0},         {KF_HARDSIGMOID, 0.2f, 0.5f}, {KF_HARDSWISH, 0, 0},
              {KF_SILU, 0, 0},        {KF_GELU_ERF, 0, 0},    {KF_GELU_TANH, 0, 0},
              {KF_LEAKY_RELU, 0.1f, 0}};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        float *x = kc_rand(n, (unsigned)n, -12, 12);
        double *want = malloc(n * sizeof *want);
        for (size_t k = 0; k < sizeof fs / sizeof *fs; k++) {
            kew_prog p = {.n = 1, .s = {{.op = KEW_FUN, .f = fs[k].f, .a = fs[k].a, .b = fs[k].b}}};
            for (size_t i = 0; i < n; i++) want[i] = kc_fun(fs[k].f, x[i], fs[k].a, fs[k].b);
            char what[64];
            snprintf(what, sizeof what, "function %d, n %zu", (int)fs[k].f, n);
            ew_check(what, &p, x, want, n, 2e-6);
        }
        free(x);
        free(want);
    }
}

/* The sigmoid and SiLU (vexpn1's degree-5 exp, one ln2 where the FMA is
 * fused) against double: within 1e-6 relative (plus 1e-35: the values
 * past float's normals) over [-87, 87] in steps that
 * cross every power of two (the exponent's n), and at the ends: tiny,
 * past the normals, huge, the infinities; SiLU carries a NaN. Not held:
 * SiLU at -inf (NaN in double, as x * sigmoid(x); -inf or NaN here) and
 * the sigmoid of a NaN (a number, as before). The GEMM epilogue's SiLU too. */
static void test_sigmoid_silu_range(void **state)
{
    (void)state;
    static const float ends[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -3e-5f, 86.9f, -86.9f,
                                 87.3f, -87.3f, 87.4f, -87.4f, 88.0f, -88.0f, 88.8f, -88.8f,
                                 89.5f, -89.5f, 103.0f, -103.0f, 200.0f, -200.0f, 1e30f, -1e30f,
                                 3.3e38f, -3.3e38f, INFINITY, -INFINITY, NAN};
    const size_t ne = sizeof ends / sizeof *ends, nr = 17401, n = nr + ne;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < nr; i++) x[i] = -87.0f + 174.0f * (float)i / (float)(nr - 1);
    memcpy(x + nr, ends, sizeof ends);
    for (int silu = 0; silu < 2; silu++) {
        const kfun f = silu ? KF_SILU : KF_SIGMOID;
        kew_prog p = {.n = 1, .s = {{.op = KEW_FUN, .f = f}}};
        float *zero = calloc(n, sizeof *zero);
        gemm_epi e = {.bias_mode = GEMM_BIAS_COL, .bias = zero, .act = GEMM_ACT_SILU};
        for (int epi = 0; epi < 1 + silu; epi++)
            KC_EACH_ISA({
                memset(y, 0xff, n * sizeof *y);
                if (epi) { /* bias + SiLU after a GEMM (epi_tile's one pass), one row of C */
                    memcpy(y, x, n * sizeof *y);
                    for (size_t j0 = 0; j0 < n; j0 += 64)
                        gemm_epi_tile(&e, y + j0, (int64_t)n, 0, (int64_t)j0, 1,
                                      (int)(n - j0 < 64 ? n - j0 : 64));
                } else
                    kew_run(&p, x, y, n, kc_threads);
                for (size_t i = 0; i < n; i++) {
                    want[i] = kc_fun(f, x[i], 0, 0);
                    if (isnan(x[i]) && silu && !isnan(y[i]))
                        fail_msg("SiLU [isa %s]: NaN gives %g", kisa_name(kisa_active()), (double)y[i]);
                    if (isnan(want[i])) { /* NaN, SiLU at -inf */
                        y[i] = 0.0f;
                        want[i] = 0.0;
                    }
                }
                assert_true(kc_close(epi ? "SiLU epilogue" : silu ? "SiLU range" : "sigmoid range", y,
                                     want, n, 1e-35, 1e-6));
            });
        free(zero);
    }
    free(x);
    free(y);
    free(want);
}

/* The GEMM epilogue's bias + GELU (erf form: a MatMul's, bert's written-out
 * GELU fused into it) against libm's erf in double, over [-40, 40] (both
 * tails, where erf is +-1 in float32, and the steep middle densely) and
 * tiny values, in 7 x 13 tiles of a 7 x 1000 C (odd tails): within 1e-6
 * absolute plus 1e-6 relative at every ISA and the portable path. */
static void test_epilogue_gelu_range(void **state)
{
    (void)state;
    const int64_t M = 7, N = 1000;
    float *x = malloc(sizeof(float) * (size_t)(M * N)), *c = malloc(sizeof(float) * (size_t)(M * N));
    float *bias = kc_rand((size_t)N, 5, -0.5f, 0.5f);
    double *want = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t k = 0; k < M * N; k++) {
        double t = (double)k / (double)(M * N - 1); /* cubic: denser near 0 */
        x[k] = (float)(40 * (2 * t - 1) * (2 * t - 1) * (2 * t - 1));
    }
    x[0] = 1e-30f, x[1] = -1e-30f, x[2] = 0.0f, x[3] = -0.0f, x[4] = 1e-8f, x[5] = -3e-5f;
    for (int64_t k = 0; k < M * N; k++) {
        double v = (double)(x[k] + bias[k % N]);
        want[k] = v / 2 * (1 + erf(v / sqrt(2)));
    }
    gemm_epi e = {.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_GELU};
    KC_EACH_ISA({
        memcpy(c, x, sizeof(float) * (size_t)(M * N));
        for (int64_t j0 = 0; j0 < N; j0 += 13)
            gemm_epi_tile(&e, c + j0, N, 0, j0, (int)M, (int)(N - j0 < 13 ? N - j0 : 13));
        assert_true(kc_close("bias + GELU epilogue", c, want, (size_t)(M * N), 1e-6, 1e-6));
    });
    free(x), free(c), free(bias), free(want);
}

/* HardSwish as exported: x * clip(x + 3, 0, 6) / 6, one program */
static void test_eltwise_hardswish_chain(void **state)
{
    (void)state;
    size_t n = 4099;
    float *x = kc_rand(n, 3, -8, 8);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) want[i] = x[i] * fmin(fmax(x[i] + 3.0, 0), 6) / 6;
    kew_prog p = {.n = 4,
                  .s = {{.op = KEW_ADD, .src = KEW_SCALAR, .a = 3},
                        {.op = KEW_FUN, .f = KF_CLIP, .a = 0, .b = 6},
                        {.op = KEW_DIV, .src = KEW_SCALAR, .a = 6},
                        {.op = KEW_MUL, .src = KEW_INPUT}}};
    ew_check("hardswish chain", &p, x, want, n, 1e-6);
    free(x);
    free(want);
}

/* Every binary op and operand source: per-channel (squeeze-excitation's
 * scale), a same-shape tensor, scalars on either side. */
static void test_eltwise_operands(void **state)
{
    (void)state;
    static const size_t chans[] = {1, 3, 17, 64}, inners[] = {1, 7, 13, 32, 1500};
    for (size_t ci = 0; ci < 4; ci++)
        for (size_t ii = 0; ii < 5; ii++) {
            size_t c = chans[ci], in = inners[ii], n = 2 * c * in;
            float *x = kc_rand(n, (unsigned)(c + in), -3, 3), *t = kc_rand(n, 7, -2, 2);
            float *s = kc_rand(c, 9, 0.1f, 1.0f);
            double *want = malloc(n * sizeof *want);
            for (size_t i = 0; i < n; i++) {
                double sc = s[(i / in) % c];
                double v = 0.5 - (x[i] * sc + t[i]) - x[i];
                v = fmin(fmax(v / sc, -2.0), 4.0) + 2.5;
                want[i] = kc_fun(KF_SIGMOID, 3.0 / v, 0, 0);
            }
            kew_prog p = {.n = 10, .channels = c, .inner = in,
                          .s = {{.op = KEW_MUL, .src = KEW_CHANNEL, .p = s},
                                {.op = KEW_ADD, .src = KEW_TENSOR, .p = t},
                                {.op = KEW_RSUB, .src = KEW_SCALAR, .a = 0.5f},
                                {.op = KEW_SUB, .src = KEW_INPUT},
                                {.op = KEW_DIV, .src = KEW_CHANNEL, .p = s},
                                {.op = KEW_MAX, .src = KEW_SCALAR, .a = -2},
                                {.op = KEW_MIN, .src = KEW_SCALAR, .a = 4},
                                {.op = KEW_ADD, .src = KEW_SCALAR, .a = 2.5f},
                                {.op = KEW_RDIV, .src = KEW_SCALAR, .a = 3},
                                {.op = KEW_FUN, .f = KF_SIGMOID}}};
            ew_check("operands", &p, x, want, n, 1e-5);
            free(x), free(t), free(s), free(want);
        }
}

static void test_eltwise_empty_program(void **state)
{
    (void)state;
    float x[5] = {1, 2, 3, 4, 5};
    double want[5] = {1, 2, 3, 4, 5};
    kew_prog p = {0};
    ew_check("copy", &p, x, want, 5, 0);
}

static void norm_want(const float *x, const float *sc, const float *bi, double *want, size_t rows,
                      size_t d, double eps, int rms)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        double m = 0, v = 0;
        if (!rms) {
            for (size_t i = 0; i < d; i++) m += xr[i];
            m /= (double)d;
        }
        for (size_t i = 0; i < d; i++) v += (xr[i] - m) * (xr[i] - m);
        v /= (double)d;
        for (size_t i = 0; i < d; i++)
            want[r * d + i] = (xr[i] - m) / sqrt(v + eps) * (sc ? sc[i] : 1) + (bi ? bi[i] : 0);
    }
}

static void test_norms(void **state)
{
    (void)state;
    static const size_t ds[] = {1, 7, 13, 32, 64, 100, 769};
    for (size_t di = 0; di < sizeof ds / sizeof *ds; di++)
        for (int rms = 0; rms < 2; rms++)
            for (int aff = 0; aff < 2; aff++) {
                size_t d = ds[di], rows = 5, n = rows * d;
                float *x = kc_rand(n, (unsigned)d, -4, 6), *y = malloc(n * sizeof *y);
                float *sc = aff ? kc_rand(d, 2, 0.5f, 2) : NULL, *bi = aff ? kc_rand(d, 4, -1, 1) : NULL;
                double *want = malloc(n * sizeof *want);
                norm_want(x, sc, bi, want, rows, d, 1e-5, rms);
                KC_EACH_ISA({
                    (rms ? krmsnorm : klayernorm)(x, sc, bi, y, rows, d, 1e-5f, kc_threads);
                    assert_true(kc_close(rms ? "rmsnorm" : "layernorm", y, want, n,
                                         1e-5 * (1 + d / 64.0), 1e-5));
                });
                free(x), free(y), free(sc), free(bi), free(want);
            }
}

static void test_softmax(void **state)
{
    (void)state;
    static const size_t ds[] = {1, 7, 13, 32, 64, 100, 1001};
    for (size_t di = 0; di < sizeof ds / sizeof *ds; di++)
        for (int lg = 0; lg < 2; lg++) {
            size_t d = ds[di], rows = 4, n = rows * d;
            float *x = kc_rand(n, (unsigned)d + 1, -50, 120), *y = malloc(n * sizeof *y);
            if (d > 1) x[1] = -INFINITY; /* a masked entry */
            double *want = malloc(n * sizeof *want);
            for (size_t r = 0; r < rows; r++) {
                double m = -INFINITY, s = 0;
                for (size_t i = 0; i < d; i++) m = fmax(m, x[r * d + i]);
                for (size_t i = 0; i < d; i++) s += exp(x[r * d + i] - m);
                for (size_t i = 0; i < d; i++)
                    want[r * d + i] = lg ? x[r * d + i] - m - log(s) : exp(x[r * d + i] - m) / s;
            }
            KC_EACH_ISA({
                ksoftmax(x, y, rows, d, lg, kc_threads);
                assert_true(kc_close(lg ? "logsoftmax" : "softmax", y, want, n, 1e-6 * (1 + d / 64.0), 1e-5));
            });
            free(x), free(y), free(want);
        }
}

/* An attention test's random q, k, v (new) and past k, v for geometry g
 * (seeds from seed on), freed by att_data_free. */
typedef struct att_data {
    float *q, *kc, *vc, *kp, *vp;
} att_data;
static att_data att_data_make(const katt_geom *g, unsigned seed)
{
    size_t nq = (size_t)g->b * g->hq * g->sq, nkv = (size_t)g->b * g->hkv;
    att_data a = {kc_rand(nq * g->d, seed, -1, 1), kc_rand(nkv * g->sc * g->d, seed + 1, -1, 1),
                  kc_rand(nkv * g->sc * g->dv, seed + 2, -1, 1),
                  g->sp ? kc_rand(nkv * g->sp * g->d, seed + 3, -1, 1) : NULL,
                  g->sp ? kc_rand(nkv * g->sp * g->dv, seed + 4, -1, 1) : NULL};
    return a;
}
static void att_data_free(att_data *a) { free(a->q), free(a->kc), free(a->vc), free(a->kp), free(a->vp); }

static void test_attention(void **state)
{
    (void)state;
    static const struct {
        int b, hq, hkv, sq, sp, sc, d, dv, causal, mask;
        float scale;
    } cs[] = {
        {1, 1, 1, 1, 0, 1, 8, 8, 0, 0, 0},       {2, 4, 2, 7, 0, 7, 17, 13, 1, 0, 0},
        {1, 4, 1, 13, 5, 13, 64, 64, 1, 1, 0},   {2, 3, 3, 7, 70, 7, 32, 17, 0, 1, 0.3f},
        {1, 2, 2, 1, 130, 1, 64, 64, 1, 0, 0},   {1, 6, 2, 65, 0, 65, 16, 16, 1, 1, 0},
        {1, 2, 1, 3, 0, 200, 7, 9, 0, 1, 0},     {2, 4, 2, 20, 9, 20, 19, 11, 1, 1, 0},
        {3, 2, 2, 70, 0, 70, 33, 33, 0, 1, 0.2f},
        /* 16 queries and more take the GEMM path, whose rows without a -inf are
         * scaled, masked and summed in vectors: causal, a finite mask (2), none */
        {1, 2, 2, 37, 0, 37, 16, 16, 1, 0, 0},   {2, 2, 1, 19, 4, 19, 24, 8, 0, 2, 0},
        {1, 3, 3, 40, 3, 40, 8, 8, 1, 2, 0.5f},  {1, 1, 1, 17, 0, 53, 5, 3, 0, 0, 0},
        {1, 1, 1, 70, 460, 70, 8, 8, 1, 2, 0}, /* past 512 keys: blocks of 64 queries */
        /* a mask of one row per batch for every head and query (3: bert's
         * padding mask [b][1][1][T], mi 0), added in QK^T's epilogue on the
         * GEMM path: with a past, causal, bert's shape */
        {2, 2, 2, 40, 5, 40, 16, 16, 0, 3, 0},  {1, 2, 1, 20, 0, 20, 8, 8, 1, 3, 0.5f},
        {2, 4, 4, 128, 0, 128, 64, 64, 0, 3, 0}, {2, 1, 1, 5, 3, 5, 8, 8, 0, 3, 0},
        /* up to 256 queries and keys, a head's queries in one block (ViT-tiny's
         * 197 tokens, odd sizes, masks; 2 threads: one block per head with 4
         * heads, blocks of 128 with 3); past 256 keys, blocks of 128 again */
        {1, 3, 3, 197, 0, 197, 64, 64, 0, 0, 0}, {1, 2, 2, 131, 9, 131, 19, 11, 0, 2, 0.4f},
        {2, 2, 1, 250, 6, 250, 8, 13, 0, 3, 0},  {1, 1, 1, 200, 57, 200, 16, 16, 0, 1, 0},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        katt_geom g = {.b = cs[k].b, .hq = cs[k].hq, .hkv = cs[k].hkv, .sq = cs[k].sq,
                       .sp = cs[k].sp, .sc = cs[k].sc, .d = cs[k].d, .dv = cs[k].dv,
                       .scale = cs[k].scale, .causal = cs[k].causal};
        int T = g.sp + g.sc;
        size_t nq = (size_t)g.b * g.hq * g.sq;
        att_data ad = att_data_make(&g, 1);
        float *q = ad.q, *kc = ad.kc, *vc = ad.vc, *kp = ad.kp, *vp = ad.vp;
        /* a [sq][T] mask broadcast over batch and heads, with some -inf (mask
         * 1); mask 3 [b][T], broadcast over heads and queries, some -inf */
        const size_t mn = (size_t)(cs[k].mask == 3 ? g.b : g.sq) * T;
        float *mask = cs[k].mask ? kc_rand(mn, 6, -2, 1) : NULL;
        if (mask && cs[k].mask == 3) g.mask = mask, g.mb = (size_t)T;
        else if (mask) g.mask = mask, g.mi = (size_t)T;
        for (size_t j = 3; cs[k].mask == 3 && j < mn; j += 7) mask[j] = -INFINITY;
        if (cs[k].mask == 1) {
            for (int i = 0; i < g.sq * T; i += 5) mask[i] = -INFINITY;
            for (int j = 0; j < T; j++) mask[j] = -INFINITY; /* query 0 sees nothing: zeros */
        }
        float *y = malloc(nq * g.dv * sizeof *y);
        double *want = malloc(nq * g.dv * sizeof *want);
        att_want(&g, q, kp, vp, kc, vc, want);
        KC_EACH_ISA({
            assert_int_equal(kattention(&g, q, kp, vp, kc, vc, y, kc_threads), 0);
            assert_true(kc_close("attention", y, want, nq * g.dv, 2e-6 * (1 + g.d / 8.0), 1e-5));
            /* on the caller's scratch, left dirty: the same answer */
            katt_geom gw = g;
            gw.ws_bytes = kattention_scratch(&g, kc_threads);
            gw.ws = malloc(gw.ws_bytes);
            memset(gw.ws, 0x7f, gw.ws_bytes);
            memset(y, 0, nq * g.dv * sizeof *y);
            assert_int_equal(kattention(&gw, q, kp, vp, kc, vc, y, kc_threads), 0);
            assert_true(kc_close("attention (scratch given)", y, want, nq * g.dv,
                                 2e-6 * (1 + g.d / 8.0), 1e-5));
            free(gw.ws);
        });
        att_data_free(&ad), free(mask), free(y), free(want);
    }
}

/* A decoder's prefill on the GEMM path, whose blocks of queries skip the
 * keys no query of theirs sees (kernels/attn.c, att_skip): the causal flag;
 * float masks that are 0 up to each query's position and -10000 (GPT-2's
 * export) or -1e9 (the Llama-style one) after it, broadcast over batch and
 * heads, with and without a past; and an adversarial one, where the scores
 * past the diagonal (masked by -1024, below ATT_FAR) outweigh the mask: key
 * j's score is 1024 j exactly, so every row attends to the last keys, not
 * to the ones it sees, and skipping them would give other rows (the
 * per-row check must send those blocks back to every key). */
static void test_attention_causal_skip(void **state)
{
    (void)state;
    static const struct {
        int b, hq, hkv, sq, sp, d, causal;
        float far; /* the mask past the diagonal, 0: none */
        int exact;  /* the adversarial scores */
    } cs[] = {
        {1, 2, 1, 300, 0, 16, 1, 0, 0},       {1, 3, 3, 257, 0, 16, 0, -10000.0f, 0},
        {2, 4, 2, 200, 40, 24, 0, -1e9f, 0},  {1, 2, 2, 150, 0, 16, 1, -10000.0f, 0},
        {1, 2, 1, 300, 0, 16, 0, -1024.0f, 1},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        katt_geom g = {.b = cs[k].b, .hq = cs[k].hq, .hkv = cs[k].hkv, .sq = cs[k].sq, .sp = cs[k].sp,
                       .sc = cs[k].sq, .d = cs[k].d, .dv = cs[k].d, .causal = cs[k].causal,
                       .scale = cs[k].exact ? 1.0f : 0.0f};
        int T = g.sp + g.sc;
        size_t nq = (size_t)g.b * g.hq * g.sq, nkv = (size_t)g.b * g.hkv;
        att_data ad = att_data_make(&g, 11);
        float *q = ad.q, *kc = ad.kc, *vc = ad.vc, *kp = ad.kp, *vp = ad.vp;
        if (cs[k].exact) { /* q = 32 e0, key j = 32 j e0: q.k = 1024 j, exact in float */
            memset(q, 0, nq * g.d * sizeof *q);
            memset(kc, 0, nkv * g.sc * g.d * sizeof *kc);
            for (size_t r = 0; r < nq; r++) q[r * g.d] = 32;
            for (size_t r = 0; r < nkv * g.sc; r++) kc[r * g.d] = 32.0f * (float)(r % g.sc);
        }
        float *mask = cs[k].far != 0 ? malloc((size_t)g.sq * T * sizeof *mask) : NULL;
        for (int i = 0; mask && i < g.sq; i++)
            for (int j = 0; j < T; j++) mask[(size_t)i * T + j] = j > i + g.sp ? cs[k].far : 0.0f;
        if (mask) g.mask = mask, g.mi = (size_t)T;
        float *y = malloc(nq * g.dv * sizeof *y);
        double *want = malloc(nq * g.dv * sizeof *want);
        att_want(&g, q, kp, vp, kc, vc, want);
        KC_EACH_ISA({
            katt_geom gw = g;
            gw.ws_bytes = kattention_scratch(&g, kc_threads);
            gw.ws = malloc(gw.ws_bytes);
            memset(gw.ws, 0x7f, gw.ws_bytes);
            for (int given = 0; given < 2; given++) {
                memset(y, 0, nq * g.dv * sizeof *y);
                assert_int_equal(kattention(given ? &gw : &g, q, kp, vp, kc, vc, y, kc_threads), 0);
                assert_true(kc_close("attention (causal skip)", y, want, nq * g.dv, 2e-6 * (1 + g.d / 8.0), 1e-5));
            }
            free(gw.ws);
        });
        att_data_free(&ad), free(mask), free(y), free(want);
    }
}

/* x [b][h][rows][cols] copied to [b][rows][h][cols] (heads packed in a row,
 * as a [b, s, h * d] projection holds them); its strides in s. */
static float *to_packed(const float *x, int b, int h, int rows, int cols, size_t s[3])
{
    float *o = malloc(((size_t)b * h * rows * cols + 1) * sizeof *o);
    for (int bi = 0; bi < b; bi++)
        for (int hi = 0; hi < h; hi++)
            for (int r = 0; r < rows; r++)
                memcpy(o + (((size_t)bi * rows + r) * h + hi) * cols,
                       x + (((size_t)bi * h + hi) * rows + r) * cols, (size_t)cols * sizeof *o);
    s[0] = (size_t)rows * h * cols, s[1] = (size_t)cols, s[2] = (size_t)h * cols;
    return o;
}

/* Strided operands (q, the current keys and values and y with heads packed
 * in rows, as the exports hold them before their Transposes) and a boolean
 * mask (Where's fill, -inf or finite) give the dense answer. */
static void test_attention_strided(void **state)
{
    (void)state;
    static const struct {
        int b, hq, hkv, sq, sp, sc, d, dv, causal, keep;
        float fill;
    } cs[] = {
        {3, 4, 2, 5, 3, 5, 19, 11, 1, 1, -INFINITY}, {1, 2, 1, 1, 40, 1, 64, 64, 0, 0, -3.4e38f},
        {2, 3, 3, 9, 0, 9, 8, 24, 0, 1, -1e4f},      {3, 4, 4, 17, 0, 17, 33, 33, 1, 0, -INFINITY},
        {3, 4, 2, 18, 6, 18, 19, 11, 1, 1, -INFINITY}, {1, 2, 1, 67, 5, 67, 16, 24, 0, 0, -3.4e38f},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        katt_geom g = {.b = cs[k].b, .hq = cs[k].hq, .hkv = cs[k].hkv, .sq = cs[k].sq,
                       .sp = cs[k].sp, .sc = cs[k].sc, .d = cs[k].d, .dv = cs[k].dv,
                       .causal = cs[k].causal, .bkeep = cs[k].keep, .fill = cs[k].fill};
        int T = g.sp + g.sc;
        size_t nq = (size_t)g.b * g.hq * g.sq;
        att_data ad = att_data_make(&g, 11);
        float *q = ad.q, *kc = ad.kc, *vc = ad.vc, *kp = ad.kp, *vp = ad.vp;
        /* a [b][1][sq][T] boolean mask, broadcast over heads */
        unsigned char *bm = malloc((size_t)g.b * g.sq * T);
        for (size_t i = 0; i < (size_t)g.b * g.sq * T; i++) bm[i] = (i * 7 % 5 < 3) == (g.bkeep != 0);
        g.bmask = bm, g.bb = (size_t)g.sq * T, g.bi = (size_t)T;
        double *want = malloc(nq * g.dv * sizeof *want);
        att_want(&g, q, kp, vp, kc, vc, want);
        katt_geom s = g;
        s.strided = 1;
        float *qs = to_packed(q, g.b, g.hq, g.sq, g.d, s.qs);
        float *kcs = to_packed(kc, g.b, g.hkv, g.sc, g.d, s.kcs);
        float *vcs = to_packed(vc, g.b, g.hkv, g.sc, g.dv, s.vcs);
        s.kps[0] = (size_t)g.hkv * g.sp * g.d, s.kps[1] = (size_t)g.sp * g.d, s.kps[2] = (size_t)g.d;
        s.vps[0] = (size_t)g.hkv * g.sp * g.dv, s.vps[1] = (size_t)g.sp * g.dv, s.vps[2] = (size_t)g.dv;
        s.ys[0] = (size_t)g.sq * g.hq * g.dv, s.ys[1] = (size_t)g.dv, s.ys[2] = (size_t)g.hq * g.dv;
        float *y = malloc(nq * g.dv * sizeof *y), *yd = malloc(nq * g.dv * sizeof *yd);
        KC_EACH_ISA({
            assert_int_equal(kattention(&s, qs, kp, vp, kcs, vcs, y, kc_threads), 0);
            for (int bi = 0; bi < g.b; bi++) /* back to [b][h][sq][dv] */
                for (int h = 0; h < g.hq; h++)
                    for (int i = 0; i < g.sq; i++)
                        memcpy(yd + (((size_t)bi * g.hq + h) * g.sq + i) * g.dv,
                               y + bi * s.ys[0] + h * s.ys[1] + i * s.ys[2], (size_t)g.dv * sizeof *y);
            assert_true(kc_close("attention strided", yd, want, nq * g.dv, 2e-6 * (1 + g.d / 8.0), 1e-5));
        });
        att_data_free(&ad), free(bm), free(want);
        free(qs), free(kcs), free(vcs), free(y), free(yd);
    }
}

/* krope: y = x cos + concat(-x[h:], x[:h]) sin per row, row r's angles row r % period;
 * d from 2 to past two vectors, odd halves (masked tails), period 1 to rows. */
static void test_rope(void **state)
{
    (void)state;
    static const int64_t ds[] = {2, 6, 18, 32, 64, 70, 128};
    static const int64_t periods[] = {1, 3, 12};
    for (size_t di = 0; di < sizeof ds / sizeof *ds; di++)
        for (size_t pi = 0; pi < sizeof periods / sizeof *periods; pi++) {
            int64_t d = ds[di], per = periods[pi], rows = 12, n = rows * d, h = d / 2;
            float *x = kc_rand((size_t)n, (unsigned)d, -3, 3), *y = malloc((size_t)n * sizeof *y);
            float *c = kc_rand((size_t)(per * d), 5, -1, 1), *sn = kc_rand((size_t)(per * d), 6, -1, 1);
            double *want = malloc((size_t)n * sizeof *want);
            for (int64_t r = 0; r < rows; r++) {
                const float *xr = x + r * d, *cr = c + (r % per) * d, *sr = sn + (r % per) * d;
                for (int64_t i = 0; i < d; i++)
                    want[r * d + i] = (double)xr[i] * cr[i] + (i < h ? -(double)xr[i + h] : (double)xr[i - h]) * sr[i];
            }
            KC_EACH_ISA({
                memset(y, 0xff, (size_t)n * sizeof *y);
                krope(x, c, sn, y, rows, per, d, kc_threads);
                assert_true(kc_close("rope", y, want, (size_t)n, 1e-6, 1e-6));
            });
            free(x), free(y), free(c), free(sn), free(want);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa),
        cmocka_unit_test(test_eltwise_functions),
        cmocka_unit_test(test_sigmoid_silu_range),
        cmocka_unit_test(test_epilogue_gelu_range),
        cmocka_unit_test(test_eltwise_hardswish_chain),
        cmocka_unit_test(test_eltwise_operands),
        cmocka_unit_test(test_eltwise_empty_program),
        cmocka_unit_test(test_norms),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_rope),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_attention_causal_skip),
        cmocka_unit_test(test_attention_strided),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
