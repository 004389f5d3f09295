/* The random ops (RandomNormal, RandomUniform and their Like forms,
 * Bernoulli, Multinomial). Their values cannot match numpy's generator (the
 * onnx node tests stay expected failures), so this checks what the spec
 * promises: shapes and dtypes, the same values on every run with a seed, new
 * values on every run without one, and the distributions' statistics over
 * many samples; also that they run from several threads at once, each on
 * its own executor, and refuse bad attributes and inputs. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_graph.h"
#include "testutil.h"

/* The node's output after one run on a fresh executor (a copy), or NULL
 * with the error in *e. */
static tensor *run_once(const graph *g, tensor *const *feed, ait_error *e)
{
    exec *x = tg_exec(g);
    tensor *y, *copy = NULL;
    if (tg_run(x, feed, &y, e) == AIT_OK && tensor_clone(y, &copy, e) != AIT_OK) copy = NULL;
    exec_free(x);
    return copy;
}

static tensor *must_run(const graph *g, tensor *const *feed)
{
    ait_error e = {0};
    tensor *t = run_once(g, feed, &e);
    if (!t) fail_msg("run failed: %s", e.msg);
    return t;
}

static void expect_shape(const tensor *t, ait_dtype dt, int rank, const int64_t *dims)
{
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

static bool same(const tensor *a, const tensor *b)
{
    return tensor_nbytes(a) == tensor_nbytes(b) && !memcmp(a->data, b->data, tensor_nbytes(a));
}

#define SHAPE(...) {.name = "shape", .type = ATTR_INTS, .n = sizeof((int64_t[]){__VA_ARGS__}) / 8, \
                    .ints = {__VA_ARGS__}}
#define AINT(nm, v) {.name = nm, .type = ATTR_INT, .i = v}
#define AFLT(nm, v) {.name = nm, .type = ATTR_FLOAT, .f = v}

static void mean_var(const tensor *t, double *mean, double *var)
{
    int64_t n = tensor_numel(t);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) s += elem_get_f64(t->data, t->dtype, i);
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = elem_get_f64(t->data, t->dtype, i) - *mean;
        s2 += d * d;
    }
    *var = s2 / (double)n;
}

/* ---- shapes and dtypes ---------------------------------------------------- */

static void test_shapes_dtypes(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int dtype; /* 0: the default */
        ait_dtype want;
    } cases[] = {{"RandomNormal", 0, AIT_F32},  {"RandomNormal", AIT_F64, AIT_F64},
                 {"RandomUniform", AIT_F16, AIT_F16}, {"RandomUniform", AIT_BF16, AIT_BF16}};
    int64_t dims[3] = {2, 3, 4};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tg_attr as[2] = {SHAPE(2, 3, 4), AINT("dtype", cases[k].dtype)};
        graph *g = tg_node(cases[k].op, 22, NULL, 0, as, cases[k].dtype ? 2 : 1);
        tensor *y = must_run(g, NULL);
        expect_shape(y, cases[k].want, 3, dims);
        test_tensor_free(y);
        graph_free(g);
    }
    /* the Like forms take the input's shape, and its dtype unless told */
    tensor *x = test_tensor(AIT_F64, 3, dims);
    for (int like = 0; like < 2; like++) {
        const char *op = like ? "RandomUniformLike" : "RandomNormalLike";
        tg_in in = {.dt = AIT_F64, .rank = 3, .dims = {2, 3, 4}};
        graph *g = tg_node(op, 22, &in, 1, NULL, 0);
        tensor *y = must_run(g, &x);
        expect_shape(y, AIT_F64, 3, dims);
        test_tensor_free(y);
        graph_free(g);
        tg_attr dt = AINT("dtype", AIT_F32);
        g = tg_node(op, 1, &in, 1, &dt, 1);
        y = must_run(g, &x);
        expect_shape(y, AIT_F32, 3, dims);
        test_tensor_free(y);
        graph_free(g);
    }
    /* Bernoulli: the input's dtype, or the dtype attribute (bool, int32) */
    tg_in in = {.dt = AIT_F64, .rank = 3, .dims = {2, 3, 4}};
    ait_dtype bdt[] = {AIT_UNDEFINED, AIT_BOOL, AIT_I32};
    for (int k = 0; k < 3; k++) {
        tg_attr dt = AINT("dtype", bdt[k]);
        graph *g = tg_node("Bernoulli", 15, &in, 1, &dt, bdt[k] ? 1 : 0);
        tensor *y = must_run(g, &x);
        expect_shape(y, bdt[k] ? bdt[k] : AIT_F64, 3, dims);
        test_tensor_free(y);
        graph_free(g);
    }
    test_tensor_free(x);
    /* Multinomial: [batch, sample_size] of int32, or int64 when told */
    float logits[6] = {0, 0, 0, 1, 2, 3};
    tg_in ml = {.dt = AIT_F32, .rank = 2, .dims = {2, 3}, .data = logits};
    for (int k = 0; k < 2; k++) {
        tg_attr as[2] = {AINT("sample_size", 5), AINT("dtype", AIT_I64)};
        graph *g = tg_node("Multinomial", 7, &ml, 1, as, 1 + k);
        tensor *y = must_run(g, NULL);
        int64_t want[2] = {2, 5};
        expect_shape(y, k ? AIT_I64 : AIT_I32, 2, want);
        for (int64_t i = 0; i < 10; i++) {
            int64_t v = elem_get_i64(y->data, y->dtype, i);
            assert_true(v >= 0 && v < 3);
        }
        test_tensor_free(y);
        graph_free(g);
    }
}

/* ---- seeds ---------------------------------------------------------------- */

/* With a seed: the same values on every run and executor; another seed
 * gives others. Without: every run and every executor differs. */
static void test_seeds(void **state)
{
    (void)state;
    static const char *const ops[] = {"RandomNormal", "RandomUniform"};
    for (int k = 0; k < 2; k++) {
        tg_attr as[2] = {SHAPE(64, 16), AFLT("seed", 5.0f)};
        graph *g = tg_node(ops[k], 22, NULL, 0, as, 2);
        tensor *a = must_run(g, NULL), *b = must_run(g, NULL), *r1, *r2;
        assert_true(same(a, b));
        exec *x = tg_exec(g); /* two runs on one executor */
        ait_error e = {0};
        assert_int_equal(tg_run(x, NULL, &r1, &e), AIT_OK);
        assert_true(same(a, r1));
        assert_int_equal(tg_run(x, NULL, &r2, &e), AIT_OK);
        assert_true(same(a, r2));
        exec_free(x);
        graph_free(g);
        as[1].f = 6.0f;
        g = tg_node(ops[k], 22, NULL, 0, as, 2);
        tensor *c = must_run(g, NULL);
        assert_false(same(a, c));
        graph_free(g);

        /* no seed */
        g = tg_node(ops[k], 22, NULL, 0, as, 1);
        x = tg_exec(g);
        tensor *u1, *u2, *run;
        assert_int_equal(tg_run(x, NULL, &run, &e), AIT_OK);
        assert_int_equal(tensor_clone(run, &u1, &e), AIT_OK);
        assert_int_equal(tg_run(x, NULL, &run, &e), AIT_OK);
        assert_false(same(u1, run)); /* the next run on the same executor */
        u2 = must_run(g, NULL);      /* another executor */
        assert_false(same(u1, u2));
        assert_false(same(u1, a));
        exec_free(x);
        graph_free(g);
        test_tensor_free(a);
        test_tensor_free(b);
        test_tensor_free(c);
        test_tensor_free(u1);
        test_tensor_free(u2);
    }
    /* Bernoulli and Multinomial take the seed too */
    static double p[256];
    for (int i = 0; i < 256; i++) p[i] = 0.5;
    tg_in bin = {.dt = AIT_F64, .rank = 1, .dims = {256}, .data = p};
    tg_attr seed = AFLT("seed", 1.5f);
    graph *g = tg_node("Bernoulli", 22, &bin, 1, &seed, 1);
    tensor *a = must_run(g, NULL), *b = must_run(g, NULL);
    assert_true(same(a, b));
    graph_free(g);
    g = tg_node("Bernoulli", 22, &bin, 1, NULL, 0);
    tensor *c = must_run(g, NULL), *d = must_run(g, NULL);
    assert_false(same(c, d));
    graph_free(g);
    test_tensor_free(a), test_tensor_free(b), test_tensor_free(c), test_tensor_free(d);
    float logits[4] = {0, 0, 0, 0};
    tg_in ml = {.dt = AIT_F32, .rank = 2, .dims = {1, 4}, .data = logits};
    tg_attr ms[2] = {AINT("sample_size", 256), AFLT("seed", 3.0f)};
    g = tg_node("Multinomial", 22, &ml, 1, ms, 2);
    a = must_run(g, NULL), b = must_run(g, NULL);
    assert_true(same(a, b));
    graph_free(g);
    g = tg_node("Multinomial", 22, &ml, 1, ms, 1);
    c = must_run(g, NULL), d = must_run(g, NULL);
    assert_false(same(c, d));
    graph_free(g);
    test_tensor_free(a), test_tensor_free(b), test_tensor_free(c), test_tensor_free(d);
}

/* Never folded: the load-time pass leaves a RandomNormal of no inputs (and
 * a Bernoulli of a constant) to run. */
static void test_not_folded(void **state)
{
    (void)state;
    tg_attr as[1] = {SHAPE(4)};
    float p[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    tg_in in = {.dt = AIT_F32, .rank = 1, .dims = {4}, .data = p};
    graph *gs[2] = {tg_node("RandomNormal", 22, NULL, 0, as, 1), tg_node("Bernoulli", 22, &in, 1,
                                                                         NULL, 0)};
    for (int k = 0; k < 2; k++) {
        exec *x = tg_exec(gs[k]);
        tensor *folded[8] = {0};
        ait_error e = {0};
        assert_true(gs[k]->n_vals <= 8);
        if (exec_fold_constants(x, folded, &e) != AIT_OK) fail_msg("%s", e.msg);
        for (int v = 0; v < gs[k]->n_vals; v++) assert_null(folded[v]);
        exec_free(x);
        graph_free(gs[k]);
    }
}

/* ---- statistics ----------------------------------------------------------- */

#define NS 200000

static void test_normal_uniform_stats(void **state)
{
    (void)state;
    double m, v;
    /* normal(2, 3): the mean's standard error is 3 / sqrt(NS) = 0.0067 */
    tg_attr an[4] = {SHAPE(NS), AFLT("mean", 2.0f), AFLT("scale", 3.0f), AINT("dtype", AIT_F64)};
    graph *g = tg_node("RandomNormal", 22, NULL, 0, an, 4);
    tensor *y = must_run(g, NULL);
    mean_var(y, &m, &v);
    if (fabs(m - 2) > 0.04 || fabs(v - 9) > 0.2) fail_msg("normal(2, 3): mean %g, var %g", m, v);
    int64_t within1 = 0; /* 68.27% within one standard deviation */
    for (int64_t i = 0; i < NS; i++) within1 += fabs(((double *)y->data)[i] - 2) < 3;
    assert_true(fabs((double)within1 / NS - 0.6827) < 0.005);
    test_tensor_free(y);
    graph_free(g);
    /* uniform(-2, 5) in float32: mean 1.5, variance 49 / 12, inside the range */
    tg_attr au[3] = {SHAPE(NS), AFLT("low", -2.0f), AFLT("high", 5.0f)};
    g = tg_node("RandomUniform", 22, NULL, 0, au, 3);
    y = must_run(g, NULL);
    mean_var(y, &m, &v);
    if (fabs(m - 1.5) > 0.03 || fabs(v - 49.0 / 12) > 0.05)
        fail_msg("uniform(-2, 5): mean %g, var %g", m, v);
    int64_t hist[7] = {0};
    for (int64_t i = 0; i < NS; i++) {
        float f = ((float *)y->data)[i];
        assert_true(f >= -2 && f <= 5);
        hist[f >= 5 ? 6 : (int)floorf(f + 2)]++;
    }
    for (int b = 0; b < 7; b++) assert_true(fabs((double)hist[b] / NS - 1.0 / 7) < 0.005);
    test_tensor_free(y);
    graph_free(g);
}

static void test_bernoulli_stats(void **state)
{
    (void)state;
    static float p[NS];
    for (int i = 0; i < NS; i++) p[i] = i % 4 == 0 ? 0.0f : i % 4 == 1 ? 1.0f : 0.3f;
    tg_in in = {.dt = AIT_F32, .rank = 1, .dims = {NS}, .data = p};
    tg_attr dt = AINT("dtype", AIT_BOOL);
    graph *g = tg_node("Bernoulli", 22, &in, 1, &dt, 1);
    tensor *y = must_run(g, NULL);
    const uint8_t *b = y->data;
    int64_t ones = 0;
    for (int i = 0; i < NS; i++) {
        if (i % 4 == 0) assert_int_equal(b[i], 0); /* p = 0 never */
        else if (i % 4 == 1) assert_int_equal(b[i], 1); /* p = 1 always */
        else ones += b[i];
    }
    double f = (double)ones / (NS / 2);
    if (fabs(f - 0.3) > 0.006) fail_msg("Bernoulli(0.3): frequency %g", f);
    test_tensor_free(y);
    graph_free(g);
}

static void test_multinomial_stats(void **state)
{
    (void)state;
    /* row 0: probabilities 0.1, 0.2, 0.7, 0 (log -inf); row 1: uniform
     * over 4 (equal logits, large ones: the max is taken out) */
    double lg[8] = {log(0.1), log(0.2), log(0.7), -INFINITY, 500, 500, 500, 500};
    tg_in in = {.dt = AIT_F64, .rank = 2, .dims = {2, 4}, .data = lg};
    tg_attr as[2] = {AINT("sample_size", NS), AINT("dtype", AIT_I64)};
    graph *g = tg_node("Multinomial", 22, &in, 1, as, 2);
    tensor *y = must_run(g, NULL);
    const int64_t *s = y->data;
    int64_t cnt[2][4] = {{0}};
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < NS; i++) {
            assert_true(s[r * NS + i] >= 0 && s[r * NS + i] < 4);
            cnt[r][s[r * NS + i]]++;
        }
    const double want[2][4] = {{0.1, 0.2, 0.7, 0}, {0.25, 0.25, 0.25, 0.25}};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 4; k++) {
            double f = (double)cnt[r][k] / NS;
            if (fabs(f - want[r][k]) > 0.005)
                fail_msg("row %d class %d: frequency %g, expected %g", r, k, f, want[r][k]);
        }
    assert_int_equal(cnt[0][3], 0);
    test_tensor_free(y);
    graph_free(g);
}

/* ---- threads ---------------------------------------------------------------- */

typedef struct job {
    const graph *seeded, *unseeded;
    tensor *a, *b, *u; /* seeded at the first and last run, unseeded at the first */
} job;

static void *worker(void *arg)
{
    job *j = arg;
    exec *x, *u;
    ait_error e = {0};
    tensor *y;
    if (exec_create(j->seeded, NULL, 1, &x, &e) || exec_create(j->unseeded, NULL, 1, &u, &e))
        return NULL;
    for (int r = 0; r < 20; r++) {
        if (exec_run(u, NULL, &y, &e) != AIT_OK) break;
        if (r == 0 && tensor_clone(y, &j->u, &e) != AIT_OK) break;
        if (exec_run(x, NULL, &y, &e) != AIT_OK) break;
        if (r == 0 && tensor_clone(y, &j->a, &e) != AIT_OK) break;
        if (r == 19 && tensor_clone(y, &j->b, &e) != AIT_OK) break;
    }
    exec_free(x);
    exec_free(u);
    return NULL;
}

/* Executors on four threads at once: a seeded node gives the same values in
 * every thread and run, an unseeded one different values in each. */
static void test_threads(void **state)
{
    (void)state;
    tg_attr as[2] = {SHAPE(1000), AFLT("seed", 42.0f)};
    graph *gs = tg_node("RandomNormal", 22, NULL, 0, as, 2),
          *gu = tg_node("RandomNormal", 22, NULL, 0, as, 1);
    job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job){.seeded = gs, .unseeded = gu};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        assert_non_null(jobs[i].a);
        assert_non_null(jobs[i].b);
        assert_true(same(jobs[i].a, jobs[0].a));
        assert_true(same(jobs[i].b, jobs[0].a));
        assert_non_null(jobs[i].u);
        for (int k = 0; k < i; k++) assert_false(same(jobs[i].u, jobs[k].u));
    }
    for (int i = 0; i < 4; i++)
        test_tensor_free(jobs[i].a), test_tensor_free(jobs[i].b), test_tensor_free(jobs[i].u);
    graph_free(gs);
    graph_free(gu);
}

/* ---- bad attributes and inputs ---------------------------------------------- */

static void fails(const graph *g, tensor *const *feed, ait_status code, const char *needle)
{
    ait_error e = {0};
    tensor *y = run_once(g, feed, &e);
    if (y || e.code != code || !strstr(e.msg, needle))
        fail_msg("got %s '%s', expected %s containing '%s'", ait_status_string(e.code), e.msg,
                 ait_status_string(code), needle);
}

static void test_errors(void **state)
{
    (void)state;
    graph *g = tg_node("RandomNormal", 22, NULL, 0, NULL, 0);
    fails(g, NULL, AIT_E_INVALID_ARG, "shape attribute is required");
    graph_free(g);
    tg_attr as[2] = {SHAPE(2, -1), AINT("dtype", AIT_I32)};
    g = tg_node("RandomUniform", 22, NULL, 0, as, 1);
    fails(g, NULL, AIT_E_INVALID_ARG, "shape[1] = -1 is negative");
    graph_free(g);
    as[0].ints[1] = 2;
    g = tg_node("RandomUniform", 22, NULL, 0, as, 2);
    fails(g, NULL, AIT_E_DTYPE, "dtype 6 is not a float type");
    graph_free(g);
    int32_t iv[2] = {1, 2};
    tg_in ii = {.dt = AIT_I32, .rank = 1, .dims = {2}, .data = iv};
    g = tg_node("RandomNormalLike", 22, &ii, 1, NULL, 0);
    fails(g, NULL, AIT_E_DTYPE, "without a dtype attribute");
    graph_free(g);
    float p[3] = {0.5f, 1.5f, 0.1f};
    tg_in pi = {.dt = AIT_F32, .rank = 1, .dims = {3}, .data = p};
    g = tg_node("Bernoulli", 22, &pi, 1, NULL, 0);
    fails(g, NULL, AIT_E_INVALID_ARG, "input[1] = 1.5 is not a probability");
    graph_free(g);
    tg_in mi = {.dt = AIT_F32, .rank = 1, .dims = {3}, .data = p};
    g = tg_node("Multinomial", 22, &mi, 1, NULL, 0);
    fails(g, NULL, AIT_E_SHAPE, "[batch_size, class_size]");
    graph_free(g);
    mi.rank = 2, mi.dims[0] = 1, mi.dims[1] = 3;
    tg_attr bad[2] = {AINT("dtype", AIT_F32), AINT("sample_size", 0)};
    g = tg_node("Multinomial", 22, &mi, 1, bad, 1);
    fails(g, NULL, AIT_E_DTYPE, "not int32 (6) or int64 (7)");
    graph_free(g);
    g = tg_node("Multinomial", 22, &mi, 1, bad + 1, 1);
    fails(g, NULL, AIT_E_INVALID_ARG, "sample_size 0");
    graph_free(g);
    float ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
    mi.data = ninf;
    g = tg_node("Multinomial", 22, &mi, 1, NULL, 0);
    fails(g, NULL, AIT_E_INVALID_ARG, "no finite log-probability");
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_dtypes),        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_not_folded),
        cmocka_unit_test(test_normal_uniform_stats), cmocka_unit_test(test_bernoulli_stats),
        cmocka_unit_test(test_multinomial_stats),    cmocka_unit_test(test_threads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
