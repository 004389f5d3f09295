/* The native GEMM (src/kernels/gemm.h) against a double-precision loop, on
 * every kernel this CPU runs (the portable one always): odd and prime sizes,
 * transposes, every epilogue, prepacked A and B, skinny M, 1 and 2 threads,
 * a tolerance scaled by K. Correctness only; speed is bench/'s. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/tensor.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"

static unsigned rng = 12345;
static float rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static double act_ref(const gemm_epi *e, double v)
{
    switch (e->act) {
    case GEMM_ACT_RELU: return v > 0 ? v : 0;
    case GEMM_ACT_CLIP: return v < e->lo ? e->lo : v > e->hi ? e->hi : v;
    case GEMM_ACT_SIGMOID: return 1 / (1 + exp(-v));
    case GEMM_ACT_TANH: return tanh(v);
    case GEMM_ACT_GELU: return 0.5 * v * (1 + erf(v / sqrt(2)));
    case GEMM_ACT_GELU_TANH: return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case GEMM_ACT_SILU: return v / (1 + exp(-v));
    case GEMM_ACT_HARDSWISH: return v * fmax(0, fmin(1, v / 6 + 0.5));
    case GEMM_ACT_HARDSIGMOID: return fmax(0, fmin(1, e->lo * v + e->hi));
    case GEMM_ACT_LEAKY: return v < 0 ? e->lo * v : v;
    default: return v;
    }
}

typedef struct gcase {
    int64_t m, n, k;
    bool ta, tb, pack_a, pack_b;
    int threads;
    gemm_epi epi;
    const gemm_config *cfg;
    int64_t csa; /* A's columns this far apart (rows k * csa), 0: as ta says */
    gemm_ws *ws; /* packing buffers shared by the cases that set it (reused dirty, grown) */
    const kaffine *pro; /* a prologue on A (its factors and shifts K long) */
} gcase;

/* A[i][p] as the GEMM reads it: through the prologue when there is one. */
static double a_ref(const kaffine *f, float a, int64_t p)
{
    if (!f) return a;
    double v = (double)a * f->s[p] + (f->t ? f->t[p] : 0.0);
    return v < f->lo ? f->lo : v > f->hi ? f->hi : v;
}

/* Runs one case on kernel kr and checks it element by element. */
static void run_case(const gemm_kernel *kr, const gcase *t)
{
    const int64_t m = t->m, n = t->n, k = t->k;
    size_t na = (size_t)(m * k * (t->csa ? t->csa : 1)) + 1, nb = (size_t)(k * n) + 1, nc = (size_t)(m * n) + 1;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4), *res = malloc(nc * 4);
    float *bias = malloc((size_t)(m > n ? m : n) * 4 + 4);
    assert_true(a && b && c && res && bias);
    for (size_t i = 0; i < na; i++) a[i] = rnd();
    for (size_t i = 0; i < nb; i++) b[i] = rnd();
    for (size_t i = 0; i < nc; i++) res[i] = rnd(), c[i] = NAN; /* every element must be written */
    for (int64_t i = 0; i < (m > n ? m : n); i++) bias[i] = rnd();
    gemm_args g = {.m = m, .n = n, .k = k, .a = a, .b = b, .c = c, .ldc = n, .threads = t->threads,
                   .kern = kr, .epi = t->epi, .cfg = t->cfg, .ws = t->ws, .pro = t->pro};
    /* A stored [m][k], or [k][m] when transposed; likewise B. */
    g.rsa = t->ta ? 1 : k;
    g.csa = t->ta ? m : 1;
    if (t->csa) g.rsa = k * t->csa, g.csa = t->csa;
    g.rsb = t->tb ? 1 : n;
    g.csb = t->tb ? k : 1;
    if (g.epi.bias_mode != GEMM_BIAS_NONE) g.epi.bias = bias;
    if (g.epi.res) {
        g.epi.res = res;
        g.epi.ldr = n;
    }
    void *pa = NULL, *pb = NULL;
    gemm_packed va, vb;
    if (t->pack_a) {
        size_t s = gemm_pack_a_size(kr, m, k);
        pa = aligned_zalloc(s);
        gemm_pack_a(kr, a, g.rsa, g.csa, m, k, pa);
        assert_int_equal(gemm_packed_view(pa, s, &va, NULL), AIT_OK);
        assert_int_equal(gemm_packed_view(pa, s - 4, &va, NULL), AIT_E_PARSE); /* wrong size */
        assert_int_equal(gemm_packed_view(pa, s, &va, NULL), AIT_OK);
        g.pa = &va;
        g.a = NULL;
    }
    if (t->pack_b) {
        size_t s = gemm_pack_b_size(kr, k, n);
        pb = aligned_zalloc(s);
        gemm_pack_b(kr, b, g.rsb, g.csb, k, n, pb);
        assert_int_equal(gemm_packed_view(pb, s, &vb, NULL), AIT_OK);
        g.pb = &vb;
        g.b = NULL;
    }
    float *a0 = t->pro ? malloc(na * 4) : NULL; /* a prologue never writes A */
    if (a0) memcpy(a0, a, na * 4);
    ait_error e = {0};
    if (gemm_f32(&g, &e) != AIT_OK) fail_msg("gemm_f32: %s", e.msg);
    if (a0 && memcmp(a0, a, na * 4)) fail_msg("the prologue wrote A");
    free(a0);
    const gemm_epi *ep = &t->epi;
    double rs = ep->res_scale != 0 ? ep->res_scale : 1;
    /* A (through the prologue) and B's columns as rows of doubles, read in
     * order and summed in four running sums (in double, the order changes
     * nothing at float's tolerance): reading B with a stride of N and one
     * chain of adds per element was most of this test's time, under ASan
     * above all. */
    double *ad = malloc(sizeof(double) * (size_t)(m * k) + 8), *bt = malloc(sizeof(double) * (size_t)(n * k) + 8);
    assert_true(ad && bt);
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) ad[i * k + p] = a_ref(t->pro, a[i * g.rsa + p * g.csa], p);
    for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < n; j++) bt[j * k + p] = b[p * g.rsb + j * g.csb];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s4[4] = {0};
            const double *ai = ad + i * k, *bj = bt + j * k;
            int64_t p = 0;
            for (; p + 4 <= k; p += 4)
                for (int u = 0; u < 4; u++) s4[u] += ai[p + u] * bj[p + u];
            for (; p < k; p++) s4[0] += ai[p] * bj[p];
            double s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
            if (ep->scaled) s *= ep->scale;
            if (ep->bias_mode == GEMM_BIAS_ROW) s += bias[i];
            if (ep->bias_mode == GEMM_BIAS_COL) s += bias[j];
            if (ep->res && !ep->res_after) s += rs * res[i * n + j];
            s = act_ref(ep, s);
            if (ep->res && ep->res_after) s += rs * res[i * n + j];
            double got = c[i * n + j], tol = 1e-5 * (double)(k + 4) * (1 + fabs(s));
            if (!(fabs(got - s) <= tol))
                fail_msg("kernel %s, %lldx%lldx%lld ta %d tb %d pa %d pb %d t %d act %d bias %d "
                         "res %d pro %d: C[%lld][%lld] = %.7g, want %.7g",
                         kr ? gemm_kernel_name(kr) : "(config)", (long long)m, (long long)n, (long long)k, t->ta,
                         t->tb, t->pack_a, t->pack_b, t->threads, ep->act, ep->bias_mode,
                         ep->res != NULL, t->pro != NULL, (long long)i, (long long)j, got, s);
        }
    free(ad);
    free(bt);
    aligned_free(pa);
    aligned_free(pb);
    free(a);
    free(b);
    free(c);
    free(res);
    free(bias);
}

static const int64_t sizes[] = {1, 2, 3, 15, 16, 17, 31, 63, 64, 65, 97, 128, 257, 300};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

/* Sizes: every M with a spread of N and K, plain and transposed, packed or not. */
static void test_sizes(void **state)
{
    (void)state;
    int kernels = 0;
    gemm_ws ws = {0};
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) {
            printf("# kernel %s: not on this CPU (needs %s)\n", gemm_kernel_name(kr),
                   gemm_kernel_needs(kr));
            continue;
        }
        kernels++;
        int cases = 0;
        for (int x = 0; x < NS; x++)
            for (int y = 0; y < NS; y += 3)
                for (int z = (x + y) % 4; z < NS; z += 4) {
                    gcase t = {.m = sizes[x], .n = sizes[(y + x) % NS], .k = sizes[z]};
                    int v = x + y + z;
                    t.ta = v & 1;
                    t.tb = (v >> 1) & 1;
                    t.pack_a = (v % 3) == 1;
                    t.pack_b = (v % 3) == 2 || t.m <= 16;
                    t.threads = 1 + (v % 2);
                    t.ws = v & 4 ? &ws : NULL;
                    run_case(kr, &t);
                    cases++;
                }
        printf("# kernel %s: %d cases\n", gemm_kernel_name(kr), cases);
    }
    assert_true(ws.buf != NULL && ws.size > 0); /* the cases that gave it used it */
    gemm_ws_free(&ws);
    assert_true(kernels >= 1);
}

/* Every epilogue, on an edge-heavy shape and a skinny one, packed and not,
 * with every kernel and the epilogue's every ISA (kisa_force caps the
 * epilogue's vector width: AVX-512, AVX2 and portable where the CPU has
 * them); N = 45 leaves a tail after 16- and 8-wide vectors. */
static void test_epilogues(void **state)
{
    (void)state;
    int isas = 0;
    for (int isa = KISA_N - 1; isa >= 0; isa--) {
        if (!kisa_force((kisa)isa)) continue;
        isas++;
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            for (int act = 0; act < GEMM_ACT_COUNT; act++)
                for (int var = 0; var < 6; var++) {
                    gcase t = {.m = var & 1 ? 3 : 37, .n = 45, .k = 29, .threads = 1 + (var & 1)};
                    t.pack_b = var >= 2;
                    t.pack_a = var == 5;
                    t.tb = var == 3;
                    t.epi.act = (gemm_act)act;
                    t.epi.lo = act == GEMM_ACT_CLIP ? -0.5f : 0.2f;
                    t.epi.hi = act == GEMM_ACT_CLIP ? 0.7f : 0.5f;
                    t.epi.bias_mode = var % 3;
                    t.epi.scaled = var & 2;
                    t.epi.scale = 0.75f;
                    t.epi.res = var >= 1 ? (const float *)&t : NULL; /* any non-NULL: run_case sets it */
                    t.epi.res_after = var >= 4;
                    t.epi.res_scale = var == 2 ? 0.5f : 0.0f;
                    run_case(kr, &t);
                }
            /* A column bias alone before the activation (a 1x1 Conv's; the
             * kernels' stores specialise it with None, Relu and Clip,
             * gemm_fuse_form): the skinny path's rows outer (K 29) and
             * columns outer (K 70), one vector of columns (N 13, AVX-512's
             * pair kernel), M <= 16, and the packed path's full tiles. */
            for (int act = 0; act < GEMM_ACT_COUNT; act++)
                for (int var = 0; var < 5; var++) {
                    gcase t = {.m = var == 3 ? 11 : 37, .n = var == 2 ? 13 : 45, .k = var == 1 ? 70 : 29,
                               .threads = 1 + (var & 1), .pack_b = true, .pack_a = var == 4};
                    t.epi.act = (gemm_act)act;
                    t.epi.lo = act == GEMM_ACT_CLIP ? -0.5f : 0.2f;
                    t.epi.hi = act == GEMM_ACT_CLIP ? 0.7f : 0.5f;
                    t.epi.bias_mode = GEMM_BIAS_COL;
                    run_case(kr, &t);
                }
        }
        printf("# epilogue at ISA %s\n", kisa_name((kisa)isa));
    }
    kisa_force(KISA_N);
    assert_true(isas >= 1);
}

/* The default kernel is one this CPU runs, the table's first runnable row
 * except zmm rows, which a CPU that splits 512-bit FMAs skips. */
static void test_best(void **state)
{
    (void)state;
    const gemm_kernel *best = gemm_kernel_best();
    assert_non_null(best);
    assert_true(gemm_kernel_available(best));
    int at = -1;
    for (int i = 0; i < gemm_kernel_count(); i++)
        if (gemm_kernel_at(i) == best) at = i;
    assert_true(at >= 0);
    for (int i = 0; i < at; i++)
        assert_true(!gemm_kernel_available(gemm_kernel_at(i)) || gemm_kernel_zmm(gemm_kernel_at(i)));
    printf("# best kernel here: %s\n", gemm_kernel_name(best));
}

/* K = 0 gives the epilogue of zeros; a packed operand of other sizes or of
 * another kernel is refused. */
static void test_edges(void **state)
{
    (void)state;
    const gemm_kernel *kr = gemm_kernel_best();
    gcase t = {.m = 5, .n = 7, .k = 0, .threads = 1};
    t.epi.bias_mode = GEMM_BIAS_COL;
    run_case(kr, &t);
    float b[12] = {0}, a[12] = {0}, c[16];
    size_t s = gemm_pack_b_size(kr, 3, 4);
    void *pb = aligned_zalloc(s);
    gemm_pack_b(kr, b, 4, 1, 3, 4, pb);
    gemm_packed v;
    assert_int_equal(gemm_packed_view(pb, s, &v, NULL), AIT_OK);
    gemm_args g = {.m = 4, .n = 4, .k = 4, .a = a, .rsa = 4, .csa = 1, .pb = &v, .c = c, .ldc = 4};
    ait_error e = {0};
    assert_int_equal(gemm_f32(&g, &e), AIT_E_SHAPE);
    printf("# refused: %s\n", e.msg);
    memset(pb, 0, 8); /* no magic */
    assert_int_equal(gemm_packed_view(pb, s, &v, &e), AIT_E_PARSE);
    aligned_free(pb);
    char why[200];
    assert_null(gemm_kernel_find("nonesuch", why, sizeof why));
    printf("# %s\n", why);
    assert_non_null(gemm_kernel_find("c", why, sizeof why));
}

/* Every kind of gemm_config (blocking, pack A on and off, loop order,
 * split-K, threads, another kernel, the skinny path's width) on odd sizes, with an epilogue, plain
 * and with B prepacked: the same answer as the double loop. */
static void test_configs(void **state)
{
    (void)state;
    const gemm_kernel *c = gemm_kernel_find("c", NULL, 0);
    const gemm_config cfgs[] = {
        {.kc = 24, .mc = 13, .nc = 40},
        {.pack_a = GEMM_PACKA_ON},
        {.pack_a = GEMM_PACKA_OFF},
        {.order = 1, .kc = 64},
        {.splitk = 2},
        {.splitk = 3, .kc = 16, .order = 1},
        {.threads = 2},
        {.kern = c, .splitk = 2},
        {.skinny_nv = 1},
        {.skinny_nv = 2, .pack_a = GEMM_PACKA_OFF},
        {.skinny_nv = 3},
        {.kern = c, .skinny_nv = 1, .pack_a = GEMM_PACKA_OFF},
        {.order = 2, .pack_a = GEMM_PACKA_OFF},
    };
    static const int64_t odd[][3] = {{1, 17, 33}, {7, 31, 65}, {17, 97, 300}, {65, 33, 129}, {3, 5, 9},
                                     {40, 130, 21}};
    int cases = 0;
    gemm_ws ws = {0};
    for (size_t ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++)
        for (size_t si = 0; si < sizeof odd / sizeof odd[0]; si++)
            for (int v = 0; v < 2; v++) {
                gcase t = {.m = odd[si][0], .n = odd[si][1], .k = odd[si][2], .threads = 1,
                           .cfg = &cfgs[ci], .pack_b = v == 1, .ta = si & 1,
                           .ws = si & 1 ? NULL : &ws};
                t.epi.bias_mode = GEMM_BIAS_COL;
                t.epi.act = GEMM_ACT_RELU;
                t.epi.res = (const float *)1; /* run_case points it at its residual */
                const gemm_kernel *kr = cfgs[ci].kern && !t.pack_b ? NULL : gemm_kernel_best();
                run_case(kr, &t);
                cases++;
                char id[96];
                gemm_config_id(&cfgs[ci], gemm_kernel_best(), id, sizeof id);
                if (si == 0 && v == 0) printf("# config %s\n", id);
            }
    gemm_ws_free(&ws);
    printf("# %d config cases\n", cases);
}

/* The default's choice of the skinny path (A read in place) past M = 16,
 * at its boundaries: M 16 and 17, A just under and at GEMM_SKINNY_A_BYTES,
 * a transposed A, B's panel past half of L2, fewer panels than threads; and
 * the answer on both sides of the A bound (M 1023 and 1024 at K 1024) and
 * over K past 14x32's kc (1300: two kc blocks), on the best kernel and the
 * portable one. */
static void test_skinny_rule(void **state)
{
    (void)state;
    const gemm_kernel *kb = gemm_kernel_best(), *kc = gemm_kernel_find("c", NULL, 0);
    const gemm_kernel *ks[] = {kb, kc};
    for (int i = 0; i < 2; i++) {
        const gemm_kernel *kr = ks[i];
        int nr = gemm_kernel_nr(kr);
        int64_t amax = GEMM_SKINNY_A_BYTES / 4; /* floats */
        assert_true(gemm_skinny_default(kr, 16, 1, 1 << 20, 1, 8)); /* M <= 16: always */
        assert_true(gemm_skinny_default(kr, 17, 64, 1024, 1, 1));
        assert_true(gemm_skinny_default(kr, 1023, 64, 1024, 1, 2));
        /* A at the bound: packed, but for a zmm kernel, whose skinny path blocks A's rows in L2 */
        assert_int_equal(gemm_skinny_default(kr, amax / 1024, 64, 1024, 1, 1), gemm_kernel_zmm(kr));
        assert_false(gemm_skinny_default(kr, 17, 64, 1024, 17, 1));         /* A transposed */
        int64_t kbig = 1 << 20; /* B's panel of 1 << 20 x NR floats: past half of any L2 */
        assert_false(gemm_skinny_default(kr, 17, 64, kbig, 1, 1));
        assert_false(gemm_skinny_default(kr, 17, nr, 1024, 1, 2)); /* one panel, two threads */
        assert_true(gemm_skinny_default(kr, 17, nr + 1, 1024, 1, 2));
        assert_false(gemm_skinny_default(kr, INT64_MAX / 2, 64, 1024, 1, 1)); /* M x K overflows */
        /* B's panel past half of L2: in place up to all of L2 at M <= GEMM_SKINNY_PANEL_M,
         * packed past it. kl2: the largest K whose panel fits L2 (M 17's bound, found here) */
        int64_t lo = 8, hi = 1 << 22;
        while (lo < hi) {
            int64_t mid = (lo + hi + 1) / 2;
            if (gemm_skinny_default(kr, 17, 64, mid, 1, 1)) lo = mid;
            else hi = mid - 1;
        }
        const int64_t kl2 = lo, rm = GEMM_SKINNY_PANEL_M;
#define IN_PLACE_A(m, k) (gemm_kernel_zmm(kr) || (m) * (k) < GEMM_SKINNY_A_BYTES / 4)
        assert_true(kl2 >= 1024 && kl2 < (1 << 22));
        assert_int_equal(gemm_skinny_default(kr, rm, 64, kl2, 1, 1), IN_PLACE_A(rm, kl2));
        assert_false(gemm_skinny_default(kr, rm, 64, kl2 + 1, 1, 1));
        assert_false(gemm_skinny_default(kr, rm + 1, 64, kl2, 1, 1));
        assert_int_equal(gemm_skinny_default(kr, rm + 1, 64, kl2 / 2, 1, 1), IN_PLACE_A(rm + 1, kl2 / 2));
        assert_false(gemm_skinny_default(kr, rm + 1, 64, kl2 / 2 + 1, 1, 1));
#undef IN_PLACE_A
        /* ... and its answer there: three quarters of L2's K, N as two panels and a masked
         * tail, bias + Relu in the registers or GELU after the store, one and two threads */
        for (int v = 0; v < 3; v++) {
            gcase t = {.m = v == 2 ? rm : 50, .n = 2 * nr + 5, .k = kl2 / 4 * 3 + 1, .pack_b = true,
                       .threads = 1 + (v == 1)};
            t.epi.bias_mode = GEMM_BIAS_COL;
            t.epi.act = v == 2 ? GEMM_ACT_GELU : GEMM_ACT_RELU;
            run_case(kr, &t);
        }
        for (int v = 0; v < 4; v++) {
            gcase t = {.m = v & 1 ? 1024 : 1023, .n = 2 * nr + 1, .k = 1024, .pack_b = true,
                       .threads = 1 + (v >> 1)};
            t.epi.bias_mode = GEMM_BIAS_COL;
            t.epi.act = GEMM_ACT_RELU;
            run_case(kr, &t);
        }
        /* rows outer past K 32 (gemm_skinny_rows_default): from M 128 at N >= 4 K with B in L2;
         * the answer there at odd sizes (ViT-tiny's fc1, a masked tail), 1 and 2 threads */
        assert_false(gemm_skinny_rows_default(16, 64, 16));
        assert_true(gemm_skinny_rows_default(17, 4096, 32));
        assert_false(gemm_skinny_rows_default(17, 768, 33));
        assert_true(gemm_skinny_rows_default(GEMM_SKINNY_ROWS_M, 768, 192));
        assert_false(gemm_skinny_rows_default(GEMM_SKINNY_ROWS_M - 1, 768, 192));
        assert_false(gemm_skinny_rows_default(197, 767, 192)); /* N under 4 K */
        assert_false(gemm_skinny_rows_default(197, 192, 768));
        assert_false(gemm_skinny_rows_default(197, 1 << 20, 1024)); /* B past any L2 */
        assert_false(gemm_skinny_rows_default(197, INT64_MAX / 4, INT64_MAX / 64)); /* K x N overflows */
        for (int v = 0; v < 2; v++) {
            gcase r = {.m = 197, .n = v ? 777 : 768, .k = 192, .pack_b = true, .threads = 1 + v};
            r.epi.bias_mode = GEMM_BIAS_COL;
            r.epi.act = v ? GEMM_ACT_RELU : GEMM_ACT_GELU;
            r.epi.res = v ? (const float *)1 : NULL;
            run_case(kr, &r);
        }
        /* rows outer in one call (gemm_skinny_rows1_default): past M = 16 at any K where B
         * (K x N floats) fits in a quarter of L2, M under GEMM_SKINNY_ROWS_M too; the answer
         * there in the default order at odd sizes (a masked tail, rows past the last group), a
         * column bias with Clip or a residual, 1 and 2 threads */
        const int64_t nlo = kl2 * nr / 256, nhi = (kl2 + 1) * nr / 256 + 2; /* 64 x N under, over L2 / 4 bytes */
        assert_false(gemm_skinny_rows1_default(GEMM_SKINNY_M, 64, 64));
        assert_true(gemm_skinny_rows1_default(GEMM_SKINNY_M + 1, 64, 16));
        assert_true(gemm_skinny_rows1_default(28, 576, 96));
        assert_true(gemm_skinny_rows1_default(GEMM_SKINNY_ROWS_M - 1, nlo, 64));
        assert_false(gemm_skinny_rows1_default(GEMM_SKINNY_ROWS_M - 1, nhi, 64));
        assert_false(gemm_skinny_rows1_default(70, INT64_MAX / 4, INT64_MAX / 64)); /* K x N overflows */
        for (int v = 0; v < 3; v++) {
            gcase r = {.m = v == 2 ? 127 : 29, .n = v ? 113 : 576, .k = v ? 193 : 96, .pack_b = true,
                       .threads = 1 + (v == 1)};
            r.epi.bias_mode = GEMM_BIAS_COL;
            r.epi.act = v == 1 ? GEMM_ACT_NONE : GEMM_ACT_CLIP;
            r.epi.lo = -0.3f, r.epi.hi = 0.4f;
            r.epi.res = v == 1 ? (const float *)1 : NULL;
            run_case(kr, &r);
        }
        gcase t = {.m = 41, .n = 37, .k = 1300, .pack_b = true, .threads = 1};
        run_case(kr, &t);
        t.pack_a = true;
        t.epi.res = (const float *)1;
        run_case(kr, &t);
        printf("# skinny rule on %s\n", gemm_kernel_name(kr));
    }
}

/* The skinny path past M = 16 (B prepacked, A read in place) at narrow and
 * odd N on every kernel: up to four vectors of columns per call, across two
 * of a 32-wide kernel's panels, the last under a mask (N 1 to 130 around 16,
 * 32, 48 and 64), rows per call past each kernel's (M 17 to 300), short and
 * odd K, 1 and 2 threads, with and without an epilogue, in the default
 * order (rows outer at K <= GEMM_SKINNY_ROWS_K), in order 1 (rows outer) and 2 (columns outer); and A in several row blocks (M 700 at K 1300 is past half of any L2 of 1.25 MiB or less);
 * the tile's width at K 3000 on each side of GEMM_SKINNY_WIDE_M;
 * M 128 at K 768, the next width's B prefetched over the calls; and rows outer over a C larger
 * than L2 (C's prefetch ahead of the calls). */
static void test_narrow(void **state)
{
    (void)state;
    static const int64_t ns[] = {1, 7, 15, 16, 17, 24, 31, 33, 48, 63, 64, 65, 80, 97, 130};
    static const int64_t ms[] = {17, 45, 300}, ks[] = {1, 27, 64};
    static const gemm_config rows_outer = {.order = 1}; /* each call's rows through every column */
    static const gemm_config cols_outer = {.order = 2}; /* each width over a block of rows */
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        int cases = 0;
        for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++)
            for (size_t y = 0; y < sizeof ms / sizeof ms[0]; y++) {
                gcase t = {.m = ms[y], .n = ns[x], .k = ks[(x + y) % 3], .pack_b = true,
                           .threads = 1 + (int)((x + y) % 2)};
                if ((x + y) % 3 == 1) {
                    t.epi.bias_mode = GEMM_BIAS_COL;
                    t.epi.act = GEMM_ACT_RELU;
                }
                if ((x + y) % 3 == 2) t.epi.act = GEMM_ACT_GELU; /* after the store */
                assert_true(gemm_skinny_default(kr, t.m, t.n, t.k, 1, t.threads) ||
                            (t.threads == 2 && t.n <= gemm_kernel_nr(kr)));
                run_case(kr, &t);
                t.cfg = &rows_outer;
                run_case(kr, &t);
                t.cfg = &cols_outer;
                run_case(kr, &t);
                cases += 3;
            }
        for (int64_t n = 47; n <= 49; n++) {
            gcase t = {.m = 700, .n = n, .k = 1300, .pack_b = true, .threads = 1};
            t.epi.res = (const float *)1;
            run_case(kr, &t);
            cases++;
        }
        /* K 3000: half of a 1.25 MiB L2 holds B's columns for a 32-wide tile, three quarters
         * for a 64-wide one, which M >= GEMM_SKINNY_WIDE_M takes (M 47 the narrower): N 130 as
         * two widths and a masked tail, columns outer, one and two threads */
        for (int x = 0; x < 3; x++) {
            gcase t = {.m = x == 0 ? GEMM_SKINNY_WIDE_M - 1 : x == 1 ? GEMM_SKINNY_WIDE_M : 60,
                       .n = 130, .k = 3000, .pack_b = true, .threads = 1 + (x == 2)};
            t.epi.bias_mode = GEMM_BIAS_COL;
            t.epi.act = x == 1 ? GEMM_ACT_GELU : GEMM_ACT_RELU;
            run_case(kr, &t);
            cases++;
        }
        /* M 128, K 768 (a decoder's prefill), columns outer: each width's calls of more than 2
         * rows prefetch the next width's B into L2 (21 calls of 6, the last of 2 without): N 200
         * as three widths and a tail of 8, bias + Relu in the registers, SiLU after the store */
        for (int x = 0; x < 2; x++) {
            gcase t = {.m = 128, .n = 200, .k = 768, .pack_b = true, .threads = 1 + x};
            t.epi.bias_mode = GEMM_BIAS_COL;
            t.epi.act = x ? GEMM_ACT_SILU : GEMM_ACT_RELU;
            run_case(kr, &t);
            cases++;
        }
        /* rows outer with a C past L2 (over 2 MiB per thread) and more than one call a row: the
         * calls prefetch C two calls ahead, across the end of a row to the next rows */
        for (int x = 0; x < 2; x++) {
            gcase t = {.m = 4099, .n = x ? 290 : 130, .k = x ? 19 : 27, .pack_b = true, .threads = 1 + x};
            t.epi.bias_mode = x ? GEMM_BIAS_NONE : GEMM_BIAS_COL;
            t.epi.act = x ? GEMM_ACT_GELU : GEMM_ACT_RELU;
            run_case(kr, &t);
            cases++;
        }
        printf("# narrow N on %s: %d cases\n", gemm_kernel_name(kr), cases);
    }
}

/* The skinny path at M <= 16 at every width: the default (whole panels
 * until rows x vectors reach 8 accumulators: 64 columns at M 1 to 3 on
 * 14x32) and each skinny_nv 1 to 4, on every kernel, M 1 to 6 and 16, N
 * from 1 to past two of the widest calls (masked tails), K odd, below the
 * parts M 1 and 2 cut K into (1, 3), and a multiple of them (64), with and
 * without a fused epilogue, 1 and 2 threads. */
static void test_skinny_small(void **state)
{
    (void)state;
    static const int64_t ms[] = {1, 2, 3, 4, 5, 6, 16}, ns[] = {1, 17, 45, 64, 70, 131}, ks[] = {3, 37, 1, 64};
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        int cases = 0;
        for (int sv = 0; sv <= 4; sv++) {
            gemm_config cf = {.skinny_nv = sv};
            for (size_t x = 0; x < sizeof ms / sizeof ms[0]; x++)
                for (size_t y = 0; y < sizeof ns / sizeof ns[0]; y++) {
                    gcase t = {.m = ms[x], .n = ns[y], .k = ks[(x + y + (size_t)sv) % 4], .pack_b = true,
                               .threads = 1 + (int)((x + y + (size_t)sv) % 2), .cfg = &cf};
                    if ((x + y) % 3 == 1) {
                        t.epi.bias_mode = GEMM_BIAS_COL;
                        t.epi.act = GEMM_ACT_RELU;
                        t.epi.res = (const float *)1;
                    }
                    run_case(kr, &t);
                    cases++;
                }
        }
        printf("# skinny M <= 16 widths on %s: %d cases\n", gemm_kernel_name(kr), cases);
    }
}

/* The skinny path's epilogue, in the kernels' registers before the store
 * for every activation but the transcendental ones (after it for those):
 * every activation with a residual before or after it, a row or column
 * bias and a scale, on every kernel, at N = 16 (one vector of columns, the
 * conv shapes with 16 output channels), a masked N = 45 and N = 1, M from 5
 * (the M <= 16 panel loop) to 300 (the calls past M = 16), odd and even K
 * (AVX-512 takes K in pairs at N <= 16). */
static void test_skinny_epilogues(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{5, 16, 27}, {300, 16, 36}, {37, 45, 29}, {23, 1, 9}, {40, 9, 2},
                                        {130, 531, 33}}; /* rows outer past K 32 (N >= 4 K) */
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        int cases = 0;
        for (int act = 0; act < GEMM_ACT_COUNT; act++)
            for (int var = 0; var < 3; var++)
                for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++) {
                    gcase t = {.m = shapes[x][0], .n = shapes[x][1], .k = shapes[x][2],
                               .pack_b = true, .threads = 1 + (int)(x % 2)};
                    t.epi.act = (gemm_act)act;
                    t.epi.lo = act == GEMM_ACT_CLIP ? -0.3f : 0.3f;
                    t.epi.hi = act == GEMM_ACT_CLIP ? 0.4f : 0.6f;
                    t.epi.bias_mode = (var + (int)x) % 3;
                    t.epi.scaled = var == 1;
                    t.epi.scale = 1.25f;
                    t.epi.res = var ? (const float *)1 : NULL; /* run_case points it at its residual */
                    t.epi.res_after = var == 2;
                    t.epi.res_scale = x == 1 ? -0.5f : 0.0f;
                    run_case(kr, &t);
                    cases++;
                }
        printf("# skinny epilogues on %s: %d cases\n", gemm_kernel_name(kr), cases);
    }
}

/* Case (act, var) of a sweep over shapes[nsh] at config cfg: the shape
 * (act * 4 + var) % nsh, activation act, and by var (0 to 3) a plain
 * epilogue, a scale with a residual before the activation, a residual
 * after it, or the prologue pro; a row, column or no bias; 1 or 2 threads. */
static gcase mixed_case(const int64_t shapes[][3], int nsh, int act, int var, const gemm_config *cfg,
                        const kaffine *pro)
{
    int x = (act * 4 + var) % nsh;
    gcase t = {.m = shapes[x][0], .n = shapes[x][1], .k = shapes[x][2], .pack_b = true,
               .threads = 1 + (act + var) % 2, .cfg = cfg};
    t.epi.act = (gemm_act)act;
    t.epi.lo = act == GEMM_ACT_CLIP ? -0.3f : 0.3f;
    t.epi.hi = act == GEMM_ACT_CLIP ? 0.4f : 0.6f;
    t.epi.bias_mode = (var + x) % 3;
    t.epi.scaled = var == 1;
    t.epi.scale = 1.25f;
    t.epi.res = var == 1 || var == 2 ? (const float *)1 : NULL; /* run_case sets it */
    t.epi.res_after = var == 2;
    t.pro = var == 3 ? pro : NULL;
    return t;
}

/* Every ISA this CPU has and every kernel over shapes[nsh] at config
 * cfg: each shape bare first when bare, then the mixed_case sweep of
 * every activation and epilogue form (a prologue's scales drawn once).
 * Returns the cases run. */
static int sweep_mixed(const int64_t shapes[][3], int nsh, const gemm_config *cfg, bool bare)
{
    float s[32], sh[32];
    for (int p = 0; p < 32; p++) s[p] = 0.5f + rnd(), sh[p] = 0.5f * rnd();
    const kaffine pro = {s, sh, -0.3f, 0.4f};
    int cases = 0;
    for (int isa = KISA_N - 1; isa >= 0; isa--) {
        if (!kisa_force((kisa)isa)) continue;
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            for (int x = 0; bare && x < nsh; x++)
                run_case(kr, &(gcase){.m = shapes[x][0], .n = shapes[x][1], .k = shapes[x][2], .pack_b = true,
                                      .threads = 1, .cfg = cfg});
            if (bare) cases += nsh;
            for (int act = 0; act < GEMM_ACT_COUNT; act++)
                for (int var = 0; var < 4; var++) {
                    gcase t = mixed_case(shapes, nsh, act, var, cfg, &pro);
                    run_case(kr, &t);
                    cases++;
                }
        }
    }
    kisa_force(KISA_N);
    return cases;
}

/* The skinny path's order 3 (rows outer, each call's tile stored into a
 * buffer, its epilogue there, then to C by non-temporal stores:
 * gemm_stream.h) at every ISA this CPU has (kisa_force: the streaming
 * copy's and the epilogue's) on every kernel: odd M, N (masked tails,
 * one and several widths per row, rows of C not on a vector boundary) and
 * K up to 32, every activation with a residual before or after it, a row
 * or column bias and a scale, a prologue, 1 and 2 threads. */
static void test_stream(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{17, 16, 16}, {300, 96, 16}, {133, 45, 27}, {40, 130, 32},
                                        {250, 144, 24}, {64, 9, 2}, {19, 200, 7}};
    const gemm_config st = {.order = 3};
    int cases = sweep_mixed(shapes, (int)(sizeof shapes / sizeof shapes[0]), &st, false);
    printf("# streamed C (order 3): %d cases\n", cases);
}

/* The skinny path's order 4 (rows outer, a row's whole N per call where
 * it is 5 to 12 vectors: AVX-512's 14x32, skinny_wide; order 1 on the
 * other kernels) at every ISA this CPU has (the epilogue after the store
 * is kisa's) on every kernel: N 65 to 192 at every vector count (masked
 * last vectors), 200 (past 12 vectors: the calls of 4), M not a multiple
 * of the rows per call, K 2 to 32, every activation with a residual
 * before or after it, a row or column bias and a scale, a prologue, 1 and
 * 2 threads (columns split: each thread's share its own whole row). */
static void test_wide(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{17, 65, 16}, {300, 96, 16}, {133, 144, 27}, {40, 192, 32},
                                        {250, 130, 24}, {19, 200, 7},  {64, 113, 2},  {101, 80, 29},
                                        {23, 176, 31},  {45, 160, 5},  {37, 127, 9},  {29, 190, 20}};
    const gemm_config wide = {.order = 4};
    int cases = sweep_mixed(shapes, (int)(sizeof shapes / sizeof shapes[0]), &wide, true);
    printf("# whole rows (order 4): %d cases\n", cases);
}

/* The skinny path's order 5 (rows outer in one call of the kernel's rows:
 * AVX-512's 14x32, gemm_rows_avx512.c, AVX2's 6x16, gemm_rows_avx2.c, and
 * the portable 4x16, gemm_rows_c.c; order 1 where a kernel has none, A
 * is not row-major or the epilogue is not fused) at every ISA this CPU
 * has on every kernel: N 1 to 200 at every chunking (1 to 4 vectors per
 * chunk, a shorter last chunk, masked last vectors), M not a multiple of
 * the rows per group (the rest in skinny calls) and M below one group, K 1
 * to 64, every activation with a residual before or after it, a row or
 * column bias and a scale, a prologue, 1 and 2 threads. */
static void test_rows1(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{17, 16, 16}, {300, 96, 16}, {133, 144, 27}, {40, 192, 32},
                                        {250, 130, 24}, {19, 200, 7},  {64, 113, 2},  {101, 80, 29},
                                        {23, 24, 31},   {45, 32, 5},   {37, 7, 9},    {29, 48, 20},
                                        {5, 40, 3},     {203, 65, 64}, {98, 176, 1},  {71, 33, 19}};
    const gemm_config r1 = {.order = 5};
    int cases = sweep_mixed(shapes, (int)(sizeof shapes / sizeof shapes[0]), &r1, true);
    /* one thread over several chunks (the sweep's two threads split N into one chunk each):
     * each form of the stores (a column bias alone, with Relu, with Clip; the general code with a
     * row bias, a scale or a residual), in the default order too (rows in one call where
     * gemm_skinny_rows1_default says) */
    static const int64_t many[][3] = {{101, 144, 24}, {67, 200, 9}, {45, 130, 32}, {300, 96, 16}};
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        for (size_t x = 0; x < sizeof many / sizeof many[0]; x++)
            for (int var = 0; var < 6; var++) {
                gcase t = {.m = many[x][0], .n = many[x][1], .k = many[x][2], .pack_b = true, .threads = 1,
                           .cfg = x % 2 ? &r1 : NULL};
                t.epi.bias_mode = var == 3 ? GEMM_BIAS_ROW : GEMM_BIAS_COL;
                t.epi.act = var == 1 ? GEMM_ACT_RELU : var == 2 || var == 4 ? GEMM_ACT_CLIP : GEMM_ACT_NONE;
                t.epi.lo = -0.3f, t.epi.hi = 0.4f;
                t.epi.scaled = var == 4, t.epi.scale = 1.25f;
                t.epi.res = var == 5 ? (const float *)1 : NULL;
                run_case(kr, &t);
                t.cfg = &r1;
                run_case(kr, &t);
                cases += 2;
            }
    }
    printf("# rows outer in one call (order 5): %d cases\n", cases);
}

/* The skinny path past M = 16 with K in shares (a config's kc: each
 * share's calls over every row before the next share, C added back as a
 * residual): shares of 8, 64 and 256 (one share: K 100 at 256), K not a
 * multiple of the share, every activation with no epilogue, a scale, a
 * column bias and a residual before the activation, a row bias and a
 * residual after it (K in one pass then), a prologue; on every kernel. */
static void test_skinny_kshares(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{17, 45, 100}, {128, 64, 300}, {40, 131, 769}, {300, 16, 65}};
    static const int kcs[] = {8, 64, 256};
    enum { KMAX = 769 };
    float sc[KMAX], sh[KMAX];
    for (int p = 0; p < KMAX; p++) sc[p] = 0.5f + 0.001f * (float)p, sh[p] = 0.01f * (float)(p % 7) - 0.03f;
    const kaffine pro = {sc, sh, -0.8f, 0.9f};
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        int cases = 0;
        for (size_t c = 0; c < sizeof kcs / sizeof kcs[0]; c++) {
            gemm_config cf = {.kc = kcs[c], .pack_a = GEMM_PACKA_OFF};
            for (int act = 0; act < GEMM_ACT_COUNT; act++)
                for (int var = 0; var < 4; var++) {
                    size_t x = ((size_t)act + (size_t)var + c) % 4;
                    gcase t = {.m = shapes[x][0], .n = shapes[x][1], .k = shapes[x][2], .pack_b = var != 3,
                               .threads = 1 + var % 2, .cfg = &cf, .pro = var == 3 ? &pro : NULL};
                    t.epi.act = (gemm_act)act;
                    t.epi.lo = act == GEMM_ACT_CLIP ? -0.3f : 0.3f;
                    t.epi.hi = act == GEMM_ACT_CLIP ? 0.4f : 0.6f;
                    t.epi.bias_mode = var == 1 || var == 3 ? GEMM_BIAS_COL : var == 2 ? GEMM_BIAS_ROW : GEMM_BIAS_NONE;
                    t.epi.scaled = var == 1;
                    t.epi.scale = 1.25f;
                    t.epi.res = var == 1 || var == 2 ? (const float *)1 : NULL; /* run_case points it at its residual */
                    t.epi.res_after = var == 2;
                    t.epi.res_scale = var == 1 ? 0.5f : 0.0f;
                    run_case(kr, &t);
                    cases++;
                }
        }
        printf("# skinny K shares on %s: %d cases\n", gemm_kernel_name(kr), cases);
    }
}

/* The skinny path's rows in calls of sizes that differ by one at most
 * (gemm.c's skinny_cut: 128 rows as 18 x 6 + 4 x 5, not 21 x 6 + 2), on
 * every kernel, each shape under every activation and epilogue form (a
 * plain one, a scale with a residual before the activation, a residual
 * after it, a prologue), 1 and 2 threads: columns outer at M 128, 512
 * (86 calls of 5 and 6) and 263 (blocks of 256 and 7 rows at K 768), M 14
 * and 20 (one block, a few calls); rows outer past K 32 at M 128 (N >= 4
 * K), at K <= 32 with a row's whole N (134 rows in calls of 4 and 3) and
 * with C past L2 (1300 x 300: its tiles prefetched two calls ahead, and
 * the prologue's blocks of rows). Each shape takes one epilogue form of
 * the sweep (mixed_case) and runs bare. C starts as NaN: a row no call covers
 * fails, as does one covered twice by a wrong A row. */
static void test_skinny_calls(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{128, 64, 40}, {512, 64, 40},   {263, 16, 768}, {14, 45, 9},
                                        {20, 64, 33},  {128, 200, 40}, {134, 70, 16},  {1300, 300, 8}};
    enum { NSH = sizeof shapes / sizeof shapes[0], KMAX = 768 };
    float sc[KMAX], sh[KMAX];
    for (int p = 0; p < KMAX; p++) sc[p] = 0.5f + rnd(), sh[p] = 0.5f * rnd();
    const kaffine pro = {sc, sh, -0.3f, 0.4f};
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        int cases = 0;
        for (int act = 0; act < GEMM_ACT_COUNT; act++)
            for (int var = 0; var < 4; var++) {
                gcase t = mixed_case(shapes, NSH, act, var, NULL, &pro);
                run_case(kr, &t);
                cases++;
            }
        for (int x = 0; x < NSH; x++) /* each shape bare on one thread (C past L2 at 1300 x 300) */
            run_case(kr, &(gcase){.m = shapes[x][0], .n = shapes[x][1], .k = shapes[x][2], .pack_b = true,
                                  .threads = 1});
        printf("# skinny calls of equal rows on %s: %d cases\n", gemm_kernel_name(kr), cases + NSH);
    }
}

/* The skinny path at M = 1 (kernels' gemv: the panels in runs walked side
 * by side): 1 to 19 panels and 41 (runs of one panel, of several, and the
 * panels left over, fewer than the runs), N a whole number of panels and
 * not, K 1, odd and long, every epilogue (in registers, and after the
 * store for the transcendental activations), a prologue, A's values apart
 * (csa 3), B prepacked and packed by the call, 1 and 2 threads (each
 * thread's columns a GEMV of their own), on every kernel at every ISA. */
static void test_gemv(void **state)
{
    (void)state;
    static const int64_t ks[] = {1, 37, 300};
    enum { KMAX = 300 };
    float s[KMAX], sh[KMAX];
    for (int p = 0; p < KMAX; p++) s[p] = 0.5f + rnd(), sh[p] = 0.5f * rnd();
    const kaffine pro = {s, sh, -0.3f, 0.4f};
    const gemm_config off = {.pack_a = GEMM_PACKA_OFF};
    int cases = 0;
    for (int isa = KISA_N - 1; isa >= 0; isa--) {
        if (!kisa_force((kisa)isa)) continue;
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            const int64_t nr = gemm_kernel_nr(kr);
            for (int64_t np = 1; np <= 20; np++)
                for (int var = 0; var < 4; var++) {
                    int64_t panels = np == 20 ? 41 : np;
                    gcase t = {.m = 1, .n = panels * nr - (var % 2 ? nr / 2 + 3 : 0),
                               .k = ks[(np + var) % 3], .pack_b = var != 3, .cfg = var == 3 ? &off : NULL,
                               .threads = 1 + (int)(np + var) % 2};
                    if (t.n < 1) t.n = 1;
                    int act = (int)(np * 3 + var) % GEMM_ACT_COUNT;
                    t.epi.act = (gemm_act)act;
                    t.epi.lo = act == GEMM_ACT_CLIP ? -0.5f : 0.2f;
                    t.epi.hi = act == GEMM_ACT_CLIP ? 0.7f : 0.5f;
                    t.epi.bias_mode = var == 2 ? GEMM_BIAS_NONE : GEMM_BIAS_COL;
                    t.epi.res = var >= 1 ? (const float *)1 : NULL; /* run_case sets it */
                    t.epi.res_after = var == 2;
                    t.pro = np % 5 == 2 ? &pro : NULL;
                    t.csa = np % 4 == 1 ? 3 : 0;
                    run_case(kr, &t);
                    cases++;
                }
        }
    }
    kisa_force(KISA_N);
    printf("# gemv (M = 1): %d cases\n", cases);
}

/* Packing a row-major A into MR-row panels (transposed 16 or 8 rows at a
 * time in registers on AVX-512 and AVX2) at every ISA this CPU has, for
 * every kernel's MR (6 to 28): each panel element checked against A, zeros
 * past M, at K around the 8- and 16-wide blocks; then the GEMM with A packed
 * through the driver at each ISA. */
static void test_pack_a(void **state)
{
    (void)state;
    static const int64_t ms[] = {1, 5, 13, 14, 15, 29, 45}, ks[] = {1, 7, 8, 15, 16, 17, 33, 100};
    int isas = 0;
    for (int isa = KISA_N - 1; isa >= 0; isa--) {
        if (!kisa_force((kisa)isa)) continue;
        isas++;
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            int w = gemm_kernel_mr(kr);
            for (size_t x = 0; x < sizeof ms / sizeof ms[0]; x++)
                for (size_t y = 0; y < sizeof ks / sizeof ks[0]; y++) {
                    int64_t m = ms[x], k = ks[y];
                    float *a = malloc(sizeof(float) * (size_t)(m * k));
                    for (int64_t i = 0; i < m * k; i++) a[i] = rnd();
                    size_t sz = gemm_pack_a_size(kr, m, k);
                    void *buf = aligned_zalloc(sz);
                    memset(buf, 0xff, sz); /* NaN: every element must be written */
                    gemm_pack_a(kr, a, k, 1, m, k, buf);
                    gemm_packed v;
                    assert_int_equal(gemm_packed_view(buf, sz, &v, NULL), AIT_OK);
                    for (int64_t i = 0; i < (m + w - 1) / w * w; i++)
                        for (int64_t p = 0; p < k; p++) {
                            float got = v.data[(i / w) * k * w + p * w + i % w];
                            float want = i < m ? a[i * k + p] : 0.0f;
                            if (memcmp(&got, &want, sizeof got) != 0)
                                fail_msg("ISA %s, kernel %s, A %lldx%lld: panel element (%lld, %lld) = %g, "
                                         "want %g", kisa_name((kisa)isa), gemm_kernel_name(kr),
                                         (long long)m, (long long)k, (long long)i, (long long)p, got, want);
                        }
                    aligned_free(buf);
                    free(a);
                }
            gcase t = {.m = 45, .n = 33, .k = 100, .pack_a = true, .threads = 1};
            run_case(kr, &t);
            gemm_config on = {.pack_a = GEMM_PACKA_ON};
            t = (gcase){.m = 61, .n = 20, .k = 37, .pack_b = true, .threads = 2, .cfg = &on};
            run_case(kr, &t);
        }
        printf("# pack A at ISA %s\n", kisa_name((kisa)isa));
    }
    kisa_force(KISA_N);
    assert_true(isas >= 1);
}

/* The prologue (gemm_args.pro) on A's columns, against the double loop
 * mapping A first: factors alone (squeeze-excitation), with shifts
 * (BatchNormalization), then Relu, then a clamp; on every path that reads
 * A (packed in blocks, plain or against a prepacked B; split-K; the skinny
 * path, A row-major or strided, B prepacked or packed first; 1 and 2
 * threads) at every ISA this CPU has (kisa_force: the prologue's and the
 * packing's vectors) with every kernel, over odd M, N, K, every epilogue
 * in turn; A itself unchanged. Then kaffine_rows on its own: a tail past
 * the vectors, and a NaN kept as the clamp's comparisons leave it. */
static void test_prologue(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{1, 17, 5}, {3, 45, 29}, {13, 33, 37}, {37, 45, 29},
                                        {61, 20, 37}, {300, 16, 36}, {23, 1, 9}, {40, 9, 2}};
    enum { KMAX = 64 };
    float s[KMAX], sh[KMAX];
    for (int p = 0; p < KMAX; p++) s[p] = 0.5f + rnd(), sh[p] = 0.5f * rnd();
    const kaffine modes[] = {{s, NULL, -INFINITY, INFINITY},
                             {s, sh, -INFINITY, INFINITY},
                             {s, sh, 0, INFINITY},
                             {s, sh, -0.3f, 0.4f}};
    const gemm_config on = {.pack_a = GEMM_PACKA_ON}, off = {.pack_a = GEMM_PACKA_OFF},
                      sk = {.splitk = 2}, ro = {.order = 1};
    int isas = 0, cases = 0;
    gemm_ws ws = {0};
    for (int isa = KISA_N - 1; isa >= 0; isa--) {
        if (!kisa_force((kisa)isa)) continue;
        isas++;
        for (int ki = 0; ki < gemm_kernel_count(); ki++) {
            const gemm_kernel *kr = gemm_kernel_at(ki);
            if (!gemm_kernel_available(kr)) continue;
            for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++)
                for (int md = 0; md < 4; md++)
                    for (int var = 0; var < 7; var++) {
                        gcase t = {.m = shapes[x][0], .n = shapes[x][1], .k = shapes[x][2],
                                   .threads = 1 + (var + md) % 2, .pro = &modes[md]};
                        t.pack_b = var == 1 || var == 2 || var == 5 || var == 6;
                        t.cfg = var == 2 ? &on : var == 3 ? &off : var == 4 ? &sk : var == 6 ? &ro : NULL;
                        t.ta = var == 5;
                        t.ws = var & 1 ? &ws : NULL;
                        int act = (int)(x + (size_t)md * 3 + (size_t)var) % GEMM_ACT_COUNT;
                        t.epi.act = (gemm_act)act;
                        t.epi.lo = act == GEMM_ACT_CLIP ? -0.5f : 0.2f;
                        t.epi.hi = act == GEMM_ACT_CLIP ? 0.7f : 0.5f;
                        t.epi.bias_mode = (var + md) % 3;
                        t.epi.res = (var + (int)x) % 2 ? (const float *)1 : NULL; /* run_case sets it */
                        t.epi.res_after = md >= 2;
                        run_case(kr, &t);
                        cases++;
                    }
            for (int act = 0; act < GEMM_ACT_COUNT; act++) /* every epilogue, packed and skinny */
                for (int var = 0; var < 2; var++) {
                    gcase t = {.m = 29, .n = 35, .k = 19, .threads = 1, .pro = &modes[2], .pack_b = var};
                    t.epi.act = (gemm_act)act;
                    t.epi.lo = act == GEMM_ACT_CLIP ? -0.5f : 0.2f;
                    t.epi.hi = act == GEMM_ACT_CLIP ? 0.7f : 0.5f;
                    t.epi.bias_mode = GEMM_BIAS_COL;
                    t.epi.res = (const float *)1;
                    run_case(kr, &t);
                    cases++;
                }
        }
        /* kaffine_rows alone: 37 channels (a tail at 16 and 8), a NaN kept */
        float x[2 * 40], y[2 * 37];
        for (int i = 0; i < 80; i++) x[i] = 2 * rnd();
        x[3] = NAN;
        for (int md = 0; md < 4; md++) {
            kaffine_rows(&modes[md], 0, 37, x, 40, 1, 2, y, 37);
            for (int r = 0; r < 2; r++)
                for (int p = 0; p < 37; p++) {
                    double want = a_ref(&modes[md], x[r * 40 + p], p);
                    float got = y[r * 37 + p];
                    if (r == 0 && p == 3) {
                        if (!isnan(got)) fail_msg("ISA %s mode %d: NaN mapped to %g", kisa_name((kisa)isa), md, got);
                    } else if (!(fabs(got - want) <= 1e-6 * (1 + fabs(want)))) {
                        fail_msg("ISA %s mode %d: row %d channel %d = %g, want %g", kisa_name((kisa)isa), md, r,
                                 p, got, want);
                    }
                }
        }
        printf("# prologue at ISA %s\n", kisa_name((kisa)isa));
    }
    kisa_force(KISA_N);
    gemm_ws_free(&ws);
    printf("# prologue: %d cases\n", cases);
    assert_true(isas >= 1);
    /* refused with a prepacked A */
    const gemm_kernel *kr = gemm_kernel_best();
    float a[16] = {0}, c[16];
    size_t sz = gemm_pack_a_size(kr, 4, 4);
    void *pa = aligned_zalloc(sz);
    gemm_pack_a(kr, a, 4, 1, 4, 4, pa);
    gemm_packed v;
    assert_int_equal(gemm_packed_view(pa, sz, &v, NULL), AIT_OK);
    gemm_args g = {.m = 4, .n = 4, .k = 4, .pa = &v, .b = a, .rsb = 4, .csb = 1, .c = c, .ldc = 4,
                   .pro = &modes[0]};
    ait_error e = {0};
    assert_int_equal(gemm_f32(&g, &e), AIT_E_INVALID_ARG);
    aligned_free(pa);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_epilogues),
        cmocka_unit_test(test_best),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_configs),
        cmocka_unit_test(test_skinny_rule),
        cmocka_unit_test(test_narrow),
        cmocka_unit_test(test_skinny_small),
        cmocka_unit_test(test_skinny_epilogues),
        cmocka_unit_test(test_skinny_kshares),
        cmocka_unit_test(test_skinny_calls),
        cmocka_unit_test(test_gemv),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_wide),
        cmocka_unit_test(test_rows1),
        cmocka_unit_test(test_pack_a),
        cmocka_unit_test(test_prologue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
