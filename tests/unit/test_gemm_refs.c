/* The GEMM tuner's reference libraries (src/gemmtune/ref.c): OpenBLAS's,
 * oneDNN's and BLIS's sgemm in every layout against float64 on odd sizes;
 * and BLIS, which exports the same BLAS and CBLAS names as OpenBLAS, opened
 * so that it takes none of OpenBLAS's calls: after it is loaded,
 * cblas_sgemm and sgemm_ (as libait's calls and this program's resolve
 * them) are still OpenBLAS's, and BLIS's own names are not in the global
 * scope. Without libblis the BLIS part is skipped (the tuner then simply
 * does not offer it). */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemmtune/tune.h"

/* Not called: their addresses are what this program's calls bind to. */
extern void cblas_sgemm(void);
extern void sgemm_(void);

static float rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* lib's C = A*B in layout against float64, within float32's bound for a
 * K-term sum (the tuner's own, tune.c). */
static void check(const char *lib, const char *layout, int64_t m, int64_t n, int64_t k)
{
    bool ta = layout[0] == 't', tb = layout[1] == 't';
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n));
    assert_non_null(a), assert_non_null(b), assert_non_null(c);
    unsigned seed = (unsigned)(m * 131 + n * 7 + k);
    for (int64_t i = 0; i < m * k; i++) a[i] = rnd(&seed);
    for (int64_t i = 0; i < k * n; i++) b[i] = rnd(&seed);
    for (int64_t i = 0; i < m * n; i++) c[i] = NAN; /* beta 0: every element written */
    ait_error e = {0};
    if (gt_ref_sgemm(lib, layout, m, n, k, a, b, c, &e) != AIT_OK) fail_msg("%s: %s", lib, e.msg);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double v = (double)a[ta ? p * m + i : i * k + p] * b[tb ? j * k + p : p * n + j];
                sum += v, mag += fabs(v);
            }
            double bound = 4.0 * FLT_EPSILON * sqrt((double)k + 1) * mag + 1e-30;
            if (!(fabs(c[i * n + j] - sum) <= bound))
                fail_msg("%s %s %lldx%lldx%lld: C[%lld][%lld] = %g, float64 %g", lib, layout,
                         (long long)m, (long long)n, (long long)k, (long long)i, (long long)j,
                         c[i * n + j], sum);
        }
    free(a), free(b), free(c);
}

static void every_layout(const char *lib)
{
    static const char *const layouts[] = {"nn", "nt", "tn", "tt", "np"};
    static const int64_t shapes[][3] = {{1, 1, 1}, {1, 37, 19}, {7, 13, 5}, {33, 17, 65}, {64, 100, 300}};
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            check(lib, layouts[l], shapes[s][0], shapes[s][1], shapes[s][2]);
}

static void openblas_onednn(void **state)
{
    (void)state;
    assert_true(gt_ref_available("openblas"));
    assert_true(gt_ref_available("onednn"));
    assert_false(gt_ref_available("mkl"));
    every_layout("openblas");
    every_layout("onednn");
    ait_error e = {0};
    float x = 0;
    assert_int_equal(gt_ref_sgemm("mkl", "nn", 1, 1, 1, &x, &x, &x, &e), AIT_E_INVALID_ARG);
}

/* Which library the symbol at addr is in. */
static const char *lib_of(void *addr)
{
    Dl_info di;
    return addr && dladdr(addr, &di) && di.dli_fname ? di.dli_fname : "(none)";
}

static void blis_local(void **state)
{
    (void)state;
    if (!gt_ref_available("blis")) {
        printf("libblis.so.4 not installed: BLIS is not offered, its checks skipped\n");
        skip();
    }
    void *h = dlopen("libblis.so.4", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h); /* loaded by gt_ref_available */
    dlclose(h);
    every_layout("blis");
    /* BLIS's names stay inside it; the BLAS names resolve to OpenBLAS as before */
    assert_null(dlsym(RTLD_DEFAULT, "bli_sgemm"));
    const char *names[] = {"cblas_sgemm", "sgemm_"};
    void *mine[] = {(void *)cblas_sgemm, (void *)sgemm_};
    for (int i = 0; i < 2; i++) {
        const char *at = lib_of(dlsym(RTLD_DEFAULT, names[i]));
        if (!strstr(at, "openblas")) fail_msg("%s resolves to %s, not OpenBLAS", names[i], at);
        at = lib_of(mine[i]);
        if (!strstr(at, "openblas")) fail_msg("this program's %s is %s, not OpenBLAS's", names[i], at);
    }
    /* and OpenBLAS still computes after BLIS ran */
    check("openblas", "nt", 33, 17, 65);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openblas_onednn),
        cmocka_unit_test(blis_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
