/* The tuner's building blocks: validation verdicts and metrics, profiling
 * on a fake clock (no real work is timed), each strategy's choice on fixed
 * timings, isolation of crashing, hanging, failing and good children, and
 * the end-to-end accuracy guard's budget, figures and verdicts. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "tune/accuracy.h"
#include "tune/choice.h"
#include "tune/isolate.h"
#include "tune/plan_check.h"
#include "tune/profile.h"
#include "tune/strategy.h"
#include "tune/tuner.h"
#include "tune/validate.h"

/* ---- validation --------------------------------------------------------- */

/* A float32 [2,50] tensor with values around 1 of both signs. */
static tensor *ramp(void)
{
    const int64_t dims[] = {2, 50};
    tensor *t = test_tensor(AIT_F32, 2, dims);
    float *p = t->data;
    for (int i = 0; i < 100; i++) p[i] = (float)((i % 2 ? -1 : 1) * (0.5 + i * 0.01));
    return t;
}

static verdict check(const tensor *r, const tensor *c, const tolerance *tol, out_metrics *m)
{
    const tensor *rl[] = {r}, *cl[] = {c};
    const char *names[] = {"logits"};
    verdict v;
    ait_error e = {0};
    assert_int_equal(validate_outputs(rl, 1, cl, 1, names, tol, m, &v, &e), AIT_OK);
    return v;
}

static void test_identical(void **st)
{
    tensor *r = ramp(), *c = ramp();
    out_metrics m;
    verdict v = check(r, c, NULL, &m);
    assert_true(v.pass);
    assert_string_equal(v.reason, "");
    assert_true(m.max_abs == 0 && m.max_rel == 0 && m.n_off == 0);
    assert_true(isinf(m.sqnr_db) && m.sqnr_db > 0);
    test_tensor_free(r), test_tensor_free(c);
}

static void test_tiny_error_passes(void **st)
{
    tensor *r = ramp(), *c = ramp();
    float *p = c->data;
    for (int i = 0; i < 100; i++) p[i] *= 1 + 1e-6f;
    out_metrics m;
    assert_true(check(r, c, NULL, &m).pass);
    assert_true(m.max_abs > 0 && m.max_abs < 1e-5);
    assert_true(m.max_rel < 2e-6);
    assert_true(m.sqnr_db > 100); /* about 120 dB for a 1e-6 relative error */
    test_tensor_free(r), test_tensor_free(c);
}

/* An element that cancels to near zero among large ones (a deep layer's
 * ReLU output) may carry its neighbours' rounding error: atol scales with
 * the largest magnitude; the same error in a small-valued output fails. */
static void test_atol_scales_with_magnitude(void **st)
{
    tensor *r = ramp(), *c = ramp();
    float *pr = r->data, *pc = c->data;
    pr[0] = 8, pc[0] = 8;   /* the output's scale: 8 */
    pr[1] = 0, pc[1] = 3e-5f; /* off by 3e-5 at zero: within 1e-5 x 8 */
    out_metrics m;
    assert_true(check(r, c, NULL, &m).pass);
    assert_true(m.atol_scale == 8);
    pr[0] = pc[0] = 1;      /* scale 1.49 (the ramp's largest): 3e-5 is off */
    verdict v = check(r, c, NULL, &m);
    assert_false(v.pass);
    assert_true(m.n_off == 1);
    test_tensor_free(r), test_tensor_free(c);
}

static void test_sign_flip_fails(void **st)
{
    tensor *r = ramp(), *c = ramp();
    float *p = c->data;
    for (int i = 0; i < 100; i++) p[i] = -p[i];
    out_metrics m;
    verdict v = check(r, c, NULL, &m);
    assert_false(v.pass);
    assert_non_null(strstr(v.reason, "'logits'"));
    assert_non_null(strstr(v.reason, "share of elements outside rtol"));
    assert_non_null(strstr(v.reason, "bound 0"));
    assert_true(m.share_off == 1.0 && m.n_off == 100);
    assert_true(fabs(m.max_rel - 2.0) < 1e-6);
    /* noise = (2r)^2 = 4 signal: 10 log10(1/4) */
    assert_true(fabs(m.sqnr_db - 10 * log10(0.25)) < 1e-9);
    test_tensor_free(r), test_tensor_free(c);
}

static void test_nan_fails(void **st)
{
    tensor *r = ramp(), *c = ramp();
    ((float *)c->data)[7] = NAN;
    out_metrics m;
    verdict v = check(r, c, NULL, &m);
    assert_false(v.pass);
    assert_non_null(strstr(v.reason, "'logits'"));
    assert_non_null(strstr(v.reason, "NaN/Inf"));
    assert_int_equal(m.n_nonfinite, 1);
    /* The same NaN in the reference is a match, not a failure. */
    ((float *)r->data)[7] = NAN;
    assert_true(check(r, c, NULL, &m).pass);
    ((float *)c->data)[7] = INFINITY;
    assert_false(check(r, c, NULL, &m).pass); /* Inf where the reference has NaN: off */
    test_tensor_free(r), test_tensor_free(c);
}

static void test_structure_mismatch(void **st)
{
    const int64_t d1[] = {2, 50}, d2[] = {100};
    tensor *r = ramp(), *c = test_tensor(AIT_F32, 1, d2), *h = test_tensor(AIT_F16, 2, d1);
    const tensor *rl[] = {r, r}, *cl[] = {c};
    verdict v;
    ait_error e = {0};
    assert_int_equal(validate_outputs(rl, 2, (const tensor *const[]){r}, 1, NULL, NULL, NULL, &v, &e),
                     AIT_OK);
    assert_false(v.pass);
    assert_string_equal(v.reason, "1 outputs, the reference has 2");
    assert_int_equal(validate_outputs(rl, 1, cl, 1, NULL, NULL, NULL, &v, &e), AIT_OK);
    assert_false(v.pass);
    assert_string_equal(v.reason, "output '#0': shape [100], the reference's is [2,50]");
    v = check(r, h, NULL, NULL);
    assert_false(v.pass);
    assert_string_equal(v.reason, "output 'logits': dtype float16, the reference's is float32");
    test_tensor_free(r), test_tensor_free(c), test_tensor_free(h);
}

static void test_sqnr_and_quantised(void **st)
{
    const int64_t d[] = {4};
    tensor *r = test_tensor(AIT_F32, 1, d), *c = test_tensor(AIT_F32, 1, d);
    float rv[] = {1, 2, 3, 4}, cv[] = {1.1f, 2, 3, 4};
    memcpy(r->data, rv, sizeof rv);
    memcpy(c->data, cv, sizeof cv);
    out_metrics m;
    tolerance q = tolerance_quantised();
    verdict v = check(r, c, &q, &m);
    double want = 10 * log10(30.0 / ((double)1.1f - 1) / ((double)1.1f - 1));
    assert_true(fabs(m.sqnr_db - want) < 1e-9); /* about 34.8 dB */
    assert_true(v.pass);                         /* above the 25 dB bound */
    assert_int_equal(m.n_off, 1);                /* would fail float32's share 0 */
    assert_false(check(r, c, NULL, NULL).pass);
    q.min_sqnr_db = 40;
    v = check(r, c, &q, NULL);
    assert_false(v.pass);
    assert_non_null(strstr(v.reason, "SQNR"));
    assert_non_null(strstr(v.reason, "bound 40 dB"));
    test_tensor_free(r), test_tensor_free(c);
}

static void test_int_and_half(void **st)
{
    const int64_t d[] = {3};
    tensor *r = test_tensor(AIT_I8, 1, d), *c = test_tensor(AIT_I8, 1, d);
    int8_t rv[] = {-3, 0, 5}, cv[] = {-3, 0, 6};
    memcpy(r->data, rv, 3);
    memcpy(c->data, cv, 3);
    out_metrics m;
    verdict v = check(r, c, NULL, &m);
    assert_false(v.pass); /* integers are exact */
    assert_true(m.max_abs == 1 && m.n_off == 1);
    test_tensor_free(r), test_tensor_free(c);
    r = test_tensor(AIT_F16, 1, d), c = test_tensor(AIT_F16, 1, d);
    uint16_t *hr = r->data, *hc = c->data;
    for (int i = 0; i < 3; i++) hr[i] = f32_to_f16(1.0f + i), hc[i] = f32_to_f16((1.0f + i) * 1.001f);
    assert_true(check(r, c, NULL, NULL).pass); /* within float16's rtol 1e-2 */
    test_tensor_free(r), test_tensor_free(c);
}

/* ---- the end-to-end accuracy guard --------------------------------------- */

static void test_budget_parse(void **st)
{
    acc_budget b;
    ait_error e = {0};
    char text[160];
    assert_int_equal(acc_budget_parse("sqnr=30,top1=1%,abs=0.5", &b, &e), AIT_OK);
    assert_true(b.has_sqnr && b.has_top1 && b.has_abs);
    assert_true(b.min_sqnr_db == 30 && fabs(b.max_top1 - 0.01) < 1e-15 && b.max_abs == 0.5);
    acc_budget_str(&b, text, sizeof text);
    assert_string_equal(text, "SQNR >= 30 dB, top-1 disagreement <= 1%, max abs error <= 0.5");
    assert_int_equal(acc_budget_parse("top1=0.02,sqnr=25.5dB", &b, &e), AIT_OK);
    assert_true(b.has_sqnr && b.min_sqnr_db == 25.5 && b.max_top1 == 0.02 && !b.has_abs);
    for (int k = 0; k < 3; k++) { /* no bound at all */
        const char *none[] = {NULL, "", "none"};
        assert_int_equal(acc_budget_parse(none[k], &b, &e), AIT_OK);
        assert_false(b.has_sqnr || b.has_top1 || b.has_abs);
    }
    acc_budget_str(&b, text, sizeof text);
    assert_string_equal(text, "none");
    const char *bad[] = {"junk", "sqnr", "sqnr=", "sqnr=x", "sqnr=-3", "sqnr=0", "top1=1.5",
                         "top1=200%", "abs=0", "sqnr=30,sqnr=31", "sqnr=30,", ",", "SQNR=30",
                         "sqnr=30dBm", "abs=inf", "none,sqnr=30"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        e.msg[0] = 0;
        assert_int_equal(acc_budget_parse(bad[k], &b, &e), AIT_E_INVALID_ARG);
        assert_non_null(strstr(e.msg, "sqnr=DB"));
    }
    assert_int_equal(acc_budget_parse("sqnr=30,sqnr=31", &b, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "repeated 'sqnr=31'"));
}

/* Rows of [3, 4] logits: the reference's top-1 at column r % 4. */
static tensor *logits(float bump_row1_col3)
{
    const int64_t d[] = {3, 4};
    tensor *t = test_tensor(AIT_F32, 2, d);
    float *p = t->data;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) p[r * 4 + c] = c == r % 4 ? 2.0f : 0.5f * (float)c - 1.0f;
    p[1 * 4 + 3] += bump_row1_col3;
    return t;
}

static void test_acc_figures(void **st)
{
    tensor *r = logits(0), *c = logits(1.5f); /* row 1: 0.5 + 1.5 = 2.0 ties, first wins: same */
    ait_error e = {0};
    port_spec batch_port = {.output = true, .axes = {.rank = 2, .kind = {AXIS_BATCH, AXIS_STATIC}}};
    port_spec static_port = {.output = true, .axes = {.rank = 2}};
    assert_true(acc_classifier(r, &batch_port, false));
    assert_true(acc_classifier(r, &static_port, true)); /* one batch size: cannot tell */
    assert_false(acc_classifier(r, &static_port, false)); /* axis 0 known not to be the batch */
    acc_out o = {.classifier = true};
    snprintf(o.name, sizeof o.name, "logits");
    assert_int_equal(acc_add(r, c, &o, &e), AIT_OK);
    assert_true(o.rows == 3 && o.top1_same == 3);
    assert_true(fabs(o.max_abs - 1.5) < 1e-12 && o.noise == 1.5 * 1.5);
    test_tensor_free(c);
    c = logits(2.0f); /* row 1 now picks column 3 */
    assert_int_equal(acc_add(r, c, &o, &e), AIT_OK);
    assert_true(o.rows == 6 && o.top1_same == 5 && o.max_abs == 2.0);
    double sig = 0;
    for (int i = 0; i < 12; i++) sig += (double)((float *)r->data)[i] * ((float *)r->data)[i];
    assert_true(fabs(o.sig - 2 * sig) < 1e-9);
    assert_true(fabs(acc_sqnr(&o) - 10 * log10(2 * sig / (2.25 + 4))) < 1e-9);
    assert_true(fabs(acc_top1_off(&o) - 1.0 / 6) < 1e-12);

    acc_figures f = {.ran = true, .n_outs = 1, .outs = {o}};
    acc_budget b = {0};
    char why[320];
    assert_true(acc_fits(&b, &f, why, sizeof why)); /* no budget */
    acc_budget_parse("top1=20%", &b, &e);
    assert_true(acc_fits(&b, &f, why, sizeof why)); /* 16.7% off */
    acc_budget_parse("top1=10%", &b, &e);
    assert_false(acc_fits(&b, &f, why, sizeof why));
    assert_non_null(strstr(why, "top-1 disagreement 16.67% (1 of 6 rows) > budget 10% on output 'logits'"));
    acc_budget_parse("sqnr=40", &b, &e);
    assert_false(acc_fits(&b, &f, why, sizeof why));
    assert_non_null(strstr(why, "dB < budget 40 dB on output 'logits'"));
    acc_budget_parse("abs=1", &b, &e);
    assert_false(acc_fits(&b, &f, why, sizeof why));
    assert_non_null(strstr(why, "max abs error 2 > budget 1"));
    f.outs[0].n_nonfinite = 1;
    acc_budget_parse("abs=10", &b, &e);
    assert_false(acc_fits(&b, &f, why, sizeof why));
    assert_non_null(strstr(why, "NaN/Inf"));

    /* a shape that differs is an error naming the output */
    const int64_t d[] = {4, 3};
    tensor *w = test_tensor(AIT_F32, 2, d);
    assert_int_equal(acc_add(r, w, &o, &e), AIT_E_SHAPE);
    assert_non_null(strstr(e.msg, "output 'logits'"));
    acc_out same = {0};
    assert_int_equal(acc_add(r, r, &same, &e), AIT_OK);
    assert_true(isinf(acc_sqnr(&same)) && acc_sqnr(&same) > 0 && same.rows == 0);
    test_tensor_free(w), test_tensor_free(r), test_tensor_free(c);
}

/* ---- profiling ---------------------------------------------------------- */

/* A fake clock: each run advances it by the next of a list of latencies. */
typedef struct fake {
    int64_t now;
    const int64_t *lat;
    int n_lat, calls, fail_at;
} fake;

static int64_t fake_clock(void *ctx) { return ((fake *)ctx)->now; }

static ait_status fake_run(void *ctx, ait_error *e)
{
    fake *f = ctx;
    int i = f->calls++;
    if (f->fail_at && f->calls == f->fail_at) return err_set(e, AIT_E_INTERNAL, "boom");
    f->now += f->lat[i % f->n_lat];
    return AIT_OK;
}

static profile_opts fake_opts(fake *f)
{
    profile_opts o = profile_defaults();
    o.clock = fake_clock;
    o.clock_ctx = f;
    return o;
}

static void test_profile_converges(void **st)
{
    /* Warm-up runs 10 ms each (never timed), then a steady 1 ms. */
    int64_t lat[40];
    for (int i = 0; i < 40; i++) lat[i] = i < 10 ? 10000000 : 1000000;
    fake f = {.lat = lat, .n_lat = 40};
    profile_opts o = fake_opts(&f);
    o.batch = 8;
    profile_result r;
    ait_error e = {0};
    assert_int_equal(profile_run(&o, fake_run, &f, &r, &e), AIT_OK);
    assert_true(r.converged);
    assert_int_equal(r.runs, 20);      /* the first full window is stable */
    assert_int_equal(f.calls, 10 + 20); /* warm-up plus timed */
    assert_true(fabs(r.median - 1e-3) < 1e-12 && r.cv < 1e-9);
    assert_true(fabs(r.throughput - 8000) < 1e-6);
}

static void test_profile_cap_and_spread(void **st)
{
    /* Alternating 1 ms / 3 ms: CV about 0.51, never under 0.10. */
    const int64_t lat[] = {1000000, 3000000};
    fake f = {.lat = lat, .n_lat = 2};
    profile_opts o = fake_opts(&f);
    o.warmup = 0;
    profile_result r;
    assert_int_equal(profile_run(&o, fake_run, &f, &r, NULL), AIT_OK);
    assert_false(r.converged);
    assert_int_equal(r.runs, 100);
    assert_true(fabs(r.min - 1e-3) < 1e-12 && fabs(r.max - 3e-3) < 1e-12);
    assert_true(fabs(r.median - 2e-3) < 1e-12); /* between the two halves */
    assert_true(fabs(r.p10 - 1e-3) < 1e-12 && fabs(r.p90 - 3e-3) < 1e-12);
    assert_true(r.cv > 0.5 && r.cv < 0.52);
    /* A looser bound converges on the first window. */
    f = (fake){.lat = lat, .n_lat = 2};
    o.cv = 0.6;
    o.window = 4;
    o.cap = 10;
    assert_int_equal(profile_run(&o, fake_run, &f, &r, NULL), AIT_OK);
    assert_true(r.converged);
    assert_int_equal(r.runs, 4);
}

static void test_profile_failure_and_opts(void **st)
{
    const int64_t lat[] = {1000};
    fake f = {.lat = lat, .n_lat = 1, .fail_at = 13};
    profile_opts o = fake_opts(&f);
    profile_result r = {.runs = -7};
    ait_error e = {0};
    assert_int_equal(profile_run(&o, fake_run, &f, &r, &e), AIT_E_INTERNAL);
    assert_string_equal(e.msg, "profiling: timed run 3: boom");
    assert_int_equal(r.runs, -7); /* untouched on failure */
    f = (fake){.lat = lat, .n_lat = 1, .fail_at = 2};
    assert_int_equal(profile_run(&o, fake_run, &f, &r, &e), AIT_E_INTERNAL);
    assert_string_equal(e.msg, "profiling: warm-up run 2: boom");
    o.cap = 5; /* below the window */
    assert_int_equal(profile_run(&o, fake_run, &f, &r, &e), AIT_E_INVALID_ARG);
}

/* The real clock, on a run that does nothing: only checks it is wired up. */
static ait_status noop_run(void *ctx, ait_error *e) { return AIT_OK; }

static void test_profile_real_clock(void **st)
{
    profile_opts o = profile_defaults();
    o.cap = 20;
    profile_result r;
    assert_int_equal(profile_run(&o, noop_run, NULL, &r, NULL), AIT_OK);
    assert_true(r.runs >= 1 && r.runs <= 20 && r.min >= 0 && r.median < 0.1);
    o.flush_bytes = 1 << 20; /* cold runs: the flush happens outside the timed part */
    assert_int_equal(profile_run(&o, noop_run, NULL, &r, NULL), AIT_OK);
    assert_true(r.runs >= 1 && r.median < 1e-3);
}

/* The thread's CPU clock (tune_opts.cpu_clock) leaves out the time a run
 * does not hold the core: a run that sleeps 20 ms takes at least that on
 * the wall clock and almost nothing on the CPU clock. */
static ait_status sleep_run(void *ctx, ait_error *e)
{
    (void)ctx, (void)e;
    struct timespec ts = {0, 20 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    return AIT_OK;
}

static void test_profile_cpu_clock(void **st)
{
    profile_opts o = profile_defaults();
    o.warmup = 1, o.window = 2, o.cap = 3;
    profile_result r;
    assert_int_equal(profile_run(&o, sleep_run, NULL, &r, NULL), AIT_OK);
    assert_true(r.min >= 0.0195);
    o.clock = profile_thread_cpu_ns;
    assert_int_equal(profile_run(&o, sleep_run, NULL, &r, NULL), AIT_OK);
    assert_true(r.max >= 0 && r.max < 0.005);
}

/* The early stop (profile_opts.stop_above): a candidate slower than the
 * bound on PROFILE_STOP_RUNS runs after the first warm-up one stops; one run
 * at or under it turns the stop off. */
static void test_profile_stop(void **st)
{
    const int64_t ms = 1000000;
    /* First warm-up run 50 ms (not judged), then 9 ms every run: bound 6 ms. */
    const int64_t slow[] = {50 * ms, 9 * ms};
    int64_t lat[40];
    for (int i = 0; i < 40; i++) lat[i] = i ? slow[1] : slow[0];
    fake f = {.lat = lat, .n_lat = 40};
    profile_opts o = fake_opts(&f);
    o.stop_above = 6e-3;
    profile_result r;
    assert_int_equal(profile_run(&o, fake_run, &f, &r, NULL), AIT_OK);
    assert_true(r.stopped && !r.converged);
    assert_int_equal(f.calls, 1 + PROFILE_STOP_RUNS); /* stopped inside the warm-up */
    assert_int_equal(r.runs, PROFILE_STOP_RUNS);
    assert_true(fabs(r.median - 9e-3) < 1e-12 && fabs(r.min - 9e-3) < 1e-12);
    /* Without warm-up, the timed runs are judged. */
    f = (fake){.lat = lat, .n_lat = 40};
    o.warmup = 0;
    assert_int_equal(profile_run(&o, fake_run, &f, &r, NULL), AIT_OK);
    assert_true(r.stopped);
    assert_int_equal(f.calls, PROFILE_STOP_RUNS);
    /* One run at the bound (a noisy start that ends fast): never stopped. */
    const int64_t mixed[] = {50 * ms, 9 * ms, 9 * ms, 6 * ms, 2 * ms, 9 * ms, 9 * ms, 9 * ms, 2 * ms};
    f = (fake){.lat = mixed, .n_lat = 9};
    o.warmup = 3;
    o.window = 4;
    o.cap = 12;
    assert_int_equal(profile_run(&o, fake_run, &f, &r, NULL), AIT_OK);
    assert_false(r.stopped);
    assert_int_equal(r.runs, 12);
    /* Off (0): the same slow runs are timed in full. */
    f = (fake){.lat = lat, .n_lat = 40};
    o.stop_above = 0;
    assert_int_equal(profile_run(&o, fake_run, &f, &r, NULL), AIT_OK);
    assert_true(!r.stopped && r.converged && r.runs == 4);
    assert_false(profile_stop(&o, 5, 1.0));
    o.stop_above = 0.5;
    assert_false(profile_stop(&o, PROFILE_STOP_RUNS - 1, 1.0));
    assert_false(profile_stop(&o, PROFILE_STOP_RUNS, 0.5));
    assert_true(profile_stop(&o, PROFILE_STOP_RUNS, 0.51));
    (void)st;
}

/* The tuner's loop on fake timings: every candidate in turn, the baseline
 * (0) last, each stopped above tune_stop_above as tune_one does; returns
 * the choice of max-throughput and how many were stopped. */
static int stop_tune(tune_module *tm, const int64_t *const *lat, const int *n_lat, bool stop,
                     int *n_stopped)
{
    *n_stopped = 0;
    for (int k = 1; k <= tm->n_cands; k++) {
        int c = k % tm->n_cands;
        fake f = {.lat = lat[c], .n_lat = n_lat[c]};
        profile_opts o = fake_opts(&f);
        o.stop_above = stop ? tune_stop_above(tm, c, 0) : 0;
        assert_int_equal(profile_run(&o, fake_run, &f, &tm->cands[c].prof, NULL), AIT_OK);
        tm->cands[c].valid = true;
        *n_stopped += tm->cands[c].prof.stopped;
    }
    ait_error e = {0};
    assert_int_equal(tune_choose(tm, 0, &e), AIT_OK);
    return tm->chosen;
}

/* Crafted sequences where the early stop could go wrong: the winner last,
 * after a mediocre candidate set the bound; the winner with a slow first
 * run and two slow spikes before it settles; a near-tie (within the
 * factor) that must be timed in full. The early stop never changes the
 * choice, and it stops the clear losers (the slow baseline included). */
static void test_stop_keeps_winner(void **st)
{
    const int64_t ms = 1000000;
    int64_t base[4] = {400 * ms, 380 * ms, 420 * ms, 400 * ms};  /* the reference */
    int64_t mid[3] = {30 * ms, 20 * ms, 21 * ms};                /* first timed in full */
    int64_t spiky[12] = {90 * ms, 40 * ms, 35 * ms, 8 * ms, 9 * ms, 8 * ms,
                         8 * ms, 9 * ms, 8 * ms, 8 * ms, 9 * ms, 8 * ms}; /* the winner */
    int64_t near[2] = {25 * ms, 24 * ms};                         /* within 1.5x of mid */
    int64_t slow[2] = {100 * ms, 95 * ms};                        /* a clear loser */
    const int64_t *lat[] = {base, mid, near, slow, spiky};
    const int n_lat[] = {4, 3, 2, 2, 12};
    tune_module full = {.batch = 1, .n_cands = 5}, early;
    snprintf(full.strategy, sizeof full.strategy, "max-throughput");
    for (int c = 0; c < 5; c++) snprintf(full.cands[c].name, sizeof full.cands[c].name, "c%d", c);
    early = full;
    int n_full, n_early;
    int want = stop_tune(&full, lat, n_lat, false, &n_full);
    int got = stop_tune(&early, lat, n_lat, true, &n_early);
    assert_int_equal(want, 4);
    assert_int_equal(got, want);
    assert_int_equal(n_full, 0);
    assert_true(early.cands[0].prof.stopped && early.cands[3].prof.stopped); /* base, slow */
    assert_false(early.cands[2].prof.stopped || early.cands[4].prof.stopped); /* near, winner */
    assert_int_equal(n_early, 2);
    /* The stopped ones still rank behind the winner, by a median of their slow runs. */
    assert_true(early.cands[0].prof.median > early.cands[4].prof.median * 1.5);
    /* With no other candidate timed yet there is no bound: the first is never stopped. */
    assert_true(tune_stop_above(&(tune_module){.n_cands = 2}, 1, 0) == 0);
    (void)st;
}

/* ---- strategies --------------------------------------------------------- */

static const cand_result base = {"reference", "reference", true, NULL, 10e-3, 100, 1};
/* In order: invalid but fastest, a slow one, a small win, two onednn configs. */
static const cand_result cands[] = {
    {"broken", "broken", false, "output 'y': NaN", 1e-3, 1000, 1},
    {"openblas/t1", "openblas", true, NULL, 12e-3, 83.3, 1},
    {"openblas/t2", "openblas", true, NULL, 9.5e-3, 105.3, 1},
    {"onednn/t1", "onednn", true, NULL, 7e-3, 142.9, 1},
    {"onednn/t2", "onednn", true, NULL, 5e-3, 150, 1}, /* lowest latency, not top throughput */
};
#define NC ((int)(sizeof cands / sizeof cands[0]))

static choice pick(const char *str, const cand_result *c, int n, ait_status want)
{
    strategy s;
    ait_error e = {0};
    choice ch = {.index = -99};
    assert_int_equal(strategy_parse(str, &s, &e), AIT_OK);
    assert_int_equal(strategy_choose(&s, &base, c, n, &ch, &e), want);
    if (want != AIT_OK) snprintf(ch.why, sizeof ch.why, "%s", e.msg);
    return ch;
}

static void test_strategy_choices(void **st)
{
    choice c = pick("first-wins", cands, NC, AIT_OK);
    assert_int_equal(c.index, 2); /* 9.5 ms beats 10 ms by 5% */
    assert_non_null(strstr(c.why, "openblas/t2 chosen"));
    assert_int_equal(pick("min-latency", cands, NC, AIT_OK).index, 4);
    assert_int_equal(pick("max-throughput", cands, NC, AIT_OK).index, 4);
    assert_int_equal(pick("one-backend:openblas", cands, NC, AIT_OK).index, 2);
    assert_int_equal(pick("one-backend:onednn", cands, NC, AIT_OK).index, 4);
    /* only:NAME takes the backend's fastest even when the baseline is faster
     * (openblas/t1's 12 ms against 10 ms), where one-backend keeps the baseline. */
    const cand_result slow[] = {cands[1]};
    assert_int_equal(pick("one-backend:openblas", slow, 1, AIT_OK).index, -1);
    c = pick("only:openblas", slow, 1, AIT_OK);
    assert_int_equal(c.index, 0);
    assert_non_null(strstr(c.why, "only:openblas"));
    assert_int_equal(pick("only:onednn", cands, NC, AIT_OK).index, 4);
    assert_int_equal(pick("only:broken", cands, NC, AIT_OK).index, -1); /* never an invalid one */
    c = pick("only:tvm", cands, NC, AIT_OK);
    assert_int_equal(c.index, -1);
    assert_non_null(strstr(c.why, "'tvm' has no candidate"));
    /* BACKEND:VARIANT names one variant of a backend; the backend alone names them all. */
    const cand_result vars[] = {
        {"native/t1", "native", true, NULL, 6e-3, 166.7, 1, ""},
        {"native:int8wo/t1", "native", true, NULL, 9e-3, 111.1, 1, "int8wo"},
        {"native:wino/t1", "native", true, NULL, 4e-3, 250, 1, "wino"},
    };
    assert_int_equal(pick("only:native", vars, 3, AIT_OK).index, 2);
    c = pick("only:native:int8wo", vars, 3, AIT_OK);
    assert_int_equal(c.index, 1);
    assert_non_null(strstr(c.why, "only:native:int8wo"));
    assert_int_equal(pick("one-backend:native:int8wo", vars, 3, AIT_OK).index, 1);
    assert_int_equal(pick("only:native:int8dq", vars, 3, AIT_OK).index, -1);
    assert_int_equal(pick("only:nat:wino", vars, 3, AIT_OK).index, -1);
    assert_true(strategy_names("native:wino", "native", "wino"));
    assert_false(strategy_names("native:wino", "native", NULL));
    assert_false(strategy_names("native:wino", "native", "winograd"));
    assert_false(strategy_names("native:", "native", ""));
    assert_true(strategy_names("native:default", "native", NULL));
    assert_true(strategy_names("native:default", "native", ""));
    assert_false(strategy_names("native:default", "native", "wino"));
    assert_false(strategy_names("native:default", "onednn", NULL));
    assert_int_equal(pick("only:native:default", vars, 3, AIT_OK).index, 0);
    assert_true(strategy_names("native", "native", "int8wo"));
    c = pick("latency-budget:12", cands, NC, AIT_OK);
    assert_int_equal(c.index, 4);
    assert_non_null(strstr(c.why, "highest throughput within the budget"));
    c = pick("latency-budget:6", cands, NC, AIT_OK);
    assert_int_equal(c.index, 4);
    assert_non_null(strstr(c.why, "does not fit")); /* the baseline's 10 ms */
}

static void test_strategy_throughput_vs_latency(void **st)
{
    /* Batching: higher throughput at a higher latency. */
    const cand_result c2[] = {
        {"fast", NULL, true, NULL, 2e-3, 500, 1},
        {"wide", NULL, true, NULL, 8e-3, 1000, 8},
    };
    assert_int_equal(pick("min-latency", c2, 2, AIT_OK).index, 0);
    assert_int_equal(pick("max-throughput", c2, 2, AIT_OK).index, 1);
    assert_int_equal(pick("latency-budget:5", c2, 2, AIT_OK).index, 0);
    assert_int_equal(pick("latency-budget:9", c2, 2, AIT_OK).index, 1);
    assert_int_equal(pick("one-backend:wide", c2, 2, AIT_OK).index, 1); /* name when no backend */
}

static void test_strategy_margin_and_invalid(void **st)
{
    /* 0.5% faster: inside the 1% margin, the baseline stays. */
    const cand_result close[] = {{"close", NULL, true, NULL, 9.95e-3, 100.5, 1}};
    choice c = pick("min-latency", close, 1, AIT_OK);
    assert_int_equal(c.index, -1);
    assert_non_null(strstr(c.why, "kept the baseline"));
    assert_non_null(strstr(c.why, "not 1% faster"));
    assert_int_equal(pick("first-wins", close, 1, AIT_OK).index, -1);
    assert_int_equal(pick("max-throughput", close, 1, AIT_OK).index, -1);
    /* With no margin it wins. */
    strategy s;
    choice ch;
    assert_int_equal(strategy_parse("min-latency", &s, NULL), AIT_OK);
    s.margin = 0;
    assert_int_equal(strategy_choose(&s, &base, close, 1, &ch, NULL), AIT_OK);
    assert_int_equal(ch.index, 0);
    /* Invalid candidates are never chosen, however fast. */
    const char *all[] = {"first-wins", "min-latency", "max-throughput", "one-backend:broken",
                         "latency-budget:20"};
    for (int i = 0; i < 5; i++) {
        c = pick(all[i], cands, 1, AIT_OK);
        assert_int_equal(c.index, -1);
    }
    assert_non_null(strstr(pick("min-latency", cands, 1, AIT_OK).why, "no candidate is valid"));
}

/* The whole-plan check's decision: the median over processes of the tuned
 * plan's time over each other plan's, and a switch only past the margin;
 * the baseline plan kept unless beaten by the margin. */
static void test_plan_check_decide(void **st)
{
    (void)st;
    tune_check c = {.n_plans = 3, .n_procs = 5};
    c.plans[0].median[5] = 99; /* past n_procs: not counted */
    const double tuned[] = {6.0, 6.0, 9.0, 6.0, 6.0}, one[] = {5.0, 5.0, 5.0, 7.0, 5.0},
                 two[] = {5.9, 5.9, 5.9, 5.9, 5.9};
    for (int k = 0; k < 5; k++) {
        c.plans[0].median[k] = tuned[k];
        c.plans[1].median[k] = one[k];
        c.plans[2].median[k] = two[k];
    }
    /* plan 1: ratios 1.2, 1.2, 1.8, 0.857, 1.2 -> median 1.2; plan 2: median 1.017 */
    assert_int_equal(plan_check_decide(&c, 0.01), 1);
    assert_true(fabs(c.plans[0].ratio - 1) < 1e-12);
    assert_true(fabs(c.plans[1].ratio - 1.2) < 1e-9);
    assert_true(fabs(c.plans[2].ratio - 6.0 / 5.9) < 1e-9);
    /* A margin above both keeps the tuned plan; one between them takes plan 1. */
    assert_int_equal(plan_check_decide(&c, 0.25), 0);
    assert_int_equal(plan_check_decide(&c, 0.1), 1);
    /* Only plan 2 left: 1.7% faster is under CHECK_MIN_MARGIN (3%): kept
     * whatever the margin. 5% faster in every process passes a 1% margin, not
     * a 6% one. */
    c.n_plans = 2;
    c.plans[1] = c.plans[2];
    assert_int_equal(plan_check_decide(&c, 0.01), 0);
    assert_int_equal(plan_check_decide(&c, 0), 0);
    assert_true(fabs(c.plans[1].need - CHECK_MIN_MARGIN) < 1e-12);
    for (int k = 0; k < 5; k++) c.plans[1].median[k] = c.plans[0].median[k] / 1.05;
    assert_int_equal(plan_check_decide(&c, 0.01), 1);
    assert_int_equal(plan_check_decide(&c, 0.06), 0);
    for (int k = 0; k < 5; k++) c.plans[1].median[k] = 5.9;
    /* One fast process among slow ones does not carry it. */
    const double lucky[] = {3.0, 7.0, 7.0, 7.0, 7.0};
    for (int k = 0; k < 5; k++) c.plans[1].median[k] = lucky[k];
    assert_int_equal(plan_check_decide(&c, 0.01), 0);
    assert_string_equal(check_outcome_name(CHECK_SWITCHED), "switched");
    /* The baseline plan (the untuned model) is kept unless the plan chosen
     * beats it by the margin: tuned 1.5% faster than it keeps tuned at a 1%
     * margin, not at 2%. */
    tune_check b = {.n_plans = 3, .n_procs = 5};
    b.plans[1].baseline = true;
    for (int k = 0; k < 5; k++) {
        b.plans[0].median[k] = 1.0;
        b.plans[1].median[k] = 1.015;
        b.plans[2].median[k] = 2.0;
    }
    assert_int_equal(plan_check_decide(&b, 0.01), 0);
    assert_int_equal(plan_check_decide(&b, 0.02), 1);
    assert_true(fabs(b.plans[1].need - 0.02) < 1e-12); /* the baseline's: the margin alone */
    /* Baseline 1% and plan 2 3% faster than tuned: plan 2 at a 1% margin (it
     * beats the baseline by 2%), the baseline at 2.5% (plan 2 beats it by less). */
    for (int k = 0; k < 5; k++) {
        b.plans[1].median[k] = 0.99;
        b.plans[2].median[k] = 0.97;
    }
    assert_int_equal(plan_check_decide(&b, 0.01), 2);
    assert_int_equal(plan_check_decide(&b, 0.025), 1);
    assert_true(fabs(check_plan_median(&c, 1) - 7.0) < 1e-12);
}

/* A win inside the processes' spread is noise: the plan must beat the tuned
 * one by more than half the interquartile range of its ratios (and the
 * margin, and CHECK_MIN_MARGIN). */
static void test_plan_check_spread(void **st)
{
    (void)st;
    tune_check c = {.n_plans = 2, .n_procs = 5};
    /* ratios over the processes (the tuned plan takes 1 s in each) */
    const double noisy2[] = {0.92, 0.97, 1.02, 1.07, 1.12},   /* 2% win, 10% IQR */
                 noisy4[] = {1.14, 0.94, 1.09, 0.99, 1.04},   /* 4% win, 10% IQR */
                 steady4[] = {1.03, 1.035, 1.04, 1.045, 1.05}, /* 4% win, 1% IQR */
                 noisy20[] = {1.10, 1.30, 1.15, 1.25, 1.20};  /* 20% win, 10% IQR */
    const double *sets[] = {noisy2, noisy4, steady4, noisy20};
    const int want[] = {0, 0, 1, 1};
    const double spread[] = {0.05 / 1.02, 0.05 / 1.04, 0.005 / 1.04, 0.05 / 1.2};
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 5; k++) {
            c.plans[0].median[k] = 1.0;
            c.plans[1].median[k] = 1.0 / sets[i][k];
        }
        c.n_procs = 5;
        assert_int_equal(plan_check_decide(&c, 0.01), want[i]);
        assert_true(fabs(c.plans[1].spread - spread[i]) < 1e-9);
        assert_true(fabs(c.plans[1].need - fmax(spread[i], CHECK_MIN_MARGIN)) < 1e-9);
        assert_true(plan_check_settled(&c, 0.01) || i < 2); /* a clear win settles at once */
    }
    /* A margin above the spread rules: the 20% win is kept at a 25% margin. */
    assert_int_equal(plan_check_decide(&c, 0.25), 0);
    assert_true(fabs(c.plans[1].need - 0.25) < 1e-12);
}

/* More processes until no single one can change the decision. */
static void test_plan_check_settled(void **st)
{
    (void)st;
    tune_check c = {.n_plans = 2, .n_procs = 4};
    for (int k = 0; k < 6; k++) {
        c.plans[0].median[k] = 6.0;
        c.plans[1].median[k] = 5.0; /* 1.2x faster in every process */
    }
    assert_false(plan_check_settled(&c, 0.01)); /* fewer than CHECK_MIN_PROCS */
    c.n_procs = CHECK_MIN_PROCS;
    assert_true(plan_check_settled(&c, 0.01));
    /* Ratios 1.2, 1.2, 1.0, 1.0, 1.0: the median (1.0) keeps the tuned plan, and
     * without the lowest ratio it would switch: not settled. */
    c.plans[1].median[2] = c.plans[1].median[3] = c.plans[1].median[4] = 6.0;
    assert_int_equal(plan_check_decide(&c, 0.01), 0);
    assert_false(plan_check_settled(&c, 0.01));
    /* One more process at 1.0 settles it. */
    c.plans[1].median[5] = 6.0;
    c.n_procs = 6;
    assert_true(plan_check_settled(&c, 0.01));
    assert_int_equal(plan_check_decide(&c, 0.01), 0);
}

/* A module at one bucket: a baseline at 10 ms and a candidate at 8 ms. */
static tune_module two_cands(const char *strategy)
{
    tune_module tm = {.batch = 1, .n_cands = 2};
    snprintf(tm.strategy, sizeof tm.strategy, "%s", strategy);
    const char *names[] = {"reference/t1", "onednn/t1"};
    for (int c = 0; c < 2; c++) {
        tune_cand *tc = &tm.cands[c];
        snprintf(tc->name, sizeof tc->name, "%s", names[c]);
        tc->cfg.backend = c ? "onednn" : "reference";
        tc->cfg.threads = 1;
        tc->valid = true;
        tc->prof.median = c ? 8e-3 : 10e-3;
        tc->prof.throughput = 1 / tc->prof.median;
    }
    return tm;
}

/* What no candidate fits (an unmet latency budget) keeps the module's
 * baseline, and its why says so: it does not end the tune. */
static void test_choose_unmet_budget(void **st)
{
    ait_error e = {0};
    tune_module tm = two_cands("latency-budget:0.5");
    tm.chosen = -1;
    assert_int_equal(tune_choose(&tm, 0, &e), AIT_OK);
    assert_int_equal(tm.chosen, 0);
    assert_non_null(strstr(tm.why, "kept the baseline: latency-budget:0.5: nothing fits"));
    assert_non_null(strstr(tm.why, "8.000 ms (onednn/t1)"));
    tm = two_cands("latency-budget:9"); /* one that fits is chosen */
    assert_int_equal(tune_choose(&tm, 0, &e), AIT_OK);
    assert_int_equal(tm.chosen, 1);
    /* A module the tuner could not try (more ports than a trial passes)
     * keeps its baseline whatever its candidates say. */
    tm = two_cands("max-throughput");
    snprintf(tm.untuned, sizeof tm.untuned, "it has 70 inputs and 1 outputs");
    assert_int_equal(tune_choose(&tm, 0, &e), AIT_OK);
    assert_int_equal(tm.chosen, 0);
    assert_string_equal(tm.why, "kept the baseline: it has 70 inputs and 1 outputs");
    (void)st;
}

static void test_strategy_errors(void **st)
{
    choice c = pick("latency-budget:0.5", cands, NC, AIT_E_NOT_FOUND);
    assert_non_null(strstr(c.why, "0.5 ms"));
    assert_non_null(strstr(c.why, "best latency is 5.000 ms (onednn/t2)"));
    c = pick("one-backend:tvm", cands, NC, AIT_OK); /* none of it: the baseline stays */
    assert_int_equal(c.index, -1);
    assert_non_null(strstr(c.why, "'tvm' has no candidate"));
    const char *bad[] = {"fastest", "latency-budget", "latency-budget:", "latency-budget:-3",
                         "latency-budget:5ms", "one-backend:", "one-backend", "min-latency:3",
                         "only", "only:", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strategy s;
        ait_error e = {0};
        assert_int_equal(strategy_parse(bad[i], &s, &e), AIT_E_INVALID_ARG);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        if (!strstr(e.msg, quoted)) fail_msg("'%s': message does not name it: %s", bad[i], e.msg);
    }
    strategy s;
    char buf[64];
    assert_int_equal(strategy_parse("latency-budget:2.5", &s, NULL), AIT_OK);
    assert_string_equal(strategy_str(&s, buf, sizeof buf), "latency-budget:2.5");
    assert_true(s.margin == STRAT_DEFAULT_MARGIN);
    assert_int_equal(strategy_parse("only:onednn", &s, NULL), AIT_OK);
    assert_string_equal(strategy_str(&s, buf, sizeof buf), "only:onednn");
}

/* ---- isolation ---------------------------------------------------------- */

static ait_status iso_crash(void *ctx, const void **out, size_t *len, ait_error *e)
{
    /* The default action, as for a real crash: a sanitizer's handler would
     * otherwise turn the signal into a report and an exit status. */
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(99); /* not reached */
}

static ait_status iso_hang(void *ctx, const void **out, size_t *len, ait_error *e)
{
    sleep(30);
    return AIT_OK;
}

static ait_status iso_exit3(void *ctx, const void **out, size_t *len, ait_error *e) { _exit(3); }

/* Writes to stderr, then more to stdout than a pipe holds, then exits. */
static ait_status iso_chatty(void *ctx, const void **out, size_t *len, ait_error *e)
{
    fputs("oops from the child\nsecond line\n", stderr);
    fflush(stderr);
    for (int i = 0; i < 4000; i++) printf("chatter %d of what a backend might print\n", i);
    fflush(stdout);
    _exit(3);
}

static ait_status iso_fail(void *ctx, const void **out, size_t *len, ait_error *e)
{
    return err_set(e, AIT_E_SHAPE, "node 'mm': shapes do not fit");
}

static ait_status iso_good(void *ctx, const void **out, size_t *len, ait_error *e)
{
    static char big[200000]; /* more than a pipe holds at once */
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7);
    memcpy(big, ctx, strlen(ctx));
    *out = big;
    *len = sizeof big;
    return AIT_OK;
}

static ait_status iso_hog(void *ctx, const void **out, size_t *len, ait_error *e)
{
    size_t n = (size_t)1 << 30;
    char *p = malloc(n);
    if (!p) return err_set(e, AIT_E_NOMEM, "no memory for 1 GiB");
    memset(p, 1, n);
    *out = p;
    *len = 1;
    return AIT_OK;
}

/* No child is left to reap: every one was waited for. */
static void assert_no_zombies(void)
{
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

static void iso_expect(isolate_fn fn, double timeout, isolate_fate fate, ait_status want,
                       const char *msg)
{
    isolate_opts o = {.timeout = timeout};
    isolate_result r;
    ait_error e = {0};
    assert_int_equal(isolate_run(&o, fn, NULL, &r, &e), want);
    assert_int_equal(r.fate, fate);
    assert_null(r.data);
    if (!strstr(e.msg, msg)) fail_msg("expected '%s' in: %s", msg, e.msg);
    assert_no_zombies();
}

static void test_isolate_crash(void **st)
{
    iso_expect(iso_crash, 5, ISO_SIGNAL, AIT_E_INTERNAL, "killed by signal 11 (SIGSEGV)");
}

static void test_isolate_hang(void **st)
{
    iso_expect(iso_hang, 1, ISO_TIMEOUT, AIT_E_INTERNAL, "timed out after 1 s");
}

static ait_status iso_spin(void *ctx, const void **out, size_t *len, ait_error *e)
{
    for (volatile unsigned long i = 0;; i++) {}
    return AIT_OK;
}

static ait_status iso_nap(void *ctx, const void **out, size_t *len, ait_error *e)
{
    struct timespec t = {0, 600000000};
    nanosleep(&t, NULL);
    static const char done[] = "rested";
    *out = done;
    *len = sizeof done;
    return AIT_OK;
}

/* With cpu_time the limit counts the child's CPU time: a child that spins
 * is killed at it, one that sleeps past it (using no CPU) is not, and one
 * that never ends is killed after ISOLATE_WALL_FACTOR times it of wall
 * clock, each saying which limit it met. */
static void test_isolate_cpu_time(void **st)
{
    isolate_result r;
    ait_error e = {0};
    isolate_opts o = {.timeout = 0.2, .cpu_time = true};
    assert_int_equal(isolate_run(&o, iso_spin, NULL, &r, &e), AIT_E_INTERNAL);
    assert_int_equal(r.fate, ISO_TIMEOUT);
    if (!strstr(e.msg, "timed out after 0.2 s of CPU time")) fail_msg("got: %s", e.msg);
    o.timeout = 0.3; /* sleeps 0.6 s: twice the limit, on the wall clock only */
    assert_int_equal(isolate_run(&o, iso_nap, NULL, &r, &e), AIT_OK);
    assert_int_equal(r.fate, ISO_OK);
    assert_string_equal((const char *)r.data, "rested");
    free(r.data);
    o.timeout = 0.1;
    assert_int_equal(isolate_run(&o, iso_hang, NULL, &r, &e), AIT_E_INTERNAL);
    assert_int_equal(r.fate, ISO_TIMEOUT);
    if (!strstr(e.msg, "timed out after 1 s of wall-clock time")) fail_msg("got: %s", e.msg);
    assert_no_zombies();
}

static void test_isolate_exit(void **st)
{
    iso_expect(iso_exit3, 5, ISO_EXITED, AIT_E_INTERNAL, "exited with status 3");
    iso_expect(iso_fail, 5, ISO_FAILED, AIT_E_SHAPE, "in the child: node 'mm': shapes do not fit");
}

/* What the child writes reaches neither the parent's stdout nor its
 * stderr: the start of it ends the failure's message. */
static void test_isolate_output(void **st)
{
    test_capture cap;
    test_capture_start(&cap);
    isolate_opts o = {.timeout = 5};
    isolate_result r;
    ait_error e = {0};
    ait_status s = isolate_run(&o, iso_chatty, NULL, &r, &e);
    long size = test_capture_stop(&cap, NULL, 0);
    assert_int_equal(s, AIT_E_INTERNAL);
    assert_int_equal(r.fate, ISO_EXITED);
    assert_int_equal(size, 0);
    if (!strstr(e.msg, "exited with status 3 without sending its result; it wrote: oops from "
                       "the child second line chatter 0"))
        fail_msg("got: %s", e.msg);
    assert_null(strchr(e.msg, '\n'));
    assert_no_zombies();
}

static void test_isolate_success(void **st)
{
    isolate_opts o = {.timeout = 5};
    isolate_result r;
    ait_error e = {0};
    char tag[] = "hello from the child";
    assert_int_equal(isolate_run(&o, iso_good, tag, &r, &e), AIT_OK);
    assert_int_equal(r.fate, ISO_OK);
    assert_int_equal(r.len, 200000);
    assert_memory_equal(r.data, tag, strlen(tag));
    assert_int_equal(((char *)r.data)[199999], (char)(199999 * 7));
    free(r.data);
    assert_no_zombies();
    o.timeout = 0;
    assert_int_equal(isolate_run(&o, iso_good, tag, &r, &e), AIT_E_INVALID_ARG);
}

static void test_isolate_memory(void **st)
{
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* ASan reserves terabytes of address space: RLIMIT_AS cannot apply */
#endif
    isolate_opts o = {.timeout = 5, .mem_limit = (uint64_t)256 << 20};
    isolate_result r;
    ait_error e = {0};
    ait_status s = isolate_run(&o, iso_hog, NULL, &r, &e);
    assert_int_not_equal(s, AIT_OK);
    assert_true(r.fate == ISO_FAILED || r.fate == ISO_SIGNAL);
    if (r.fate == ISO_FAILED) assert_int_equal(s, AIT_E_NOMEM);
    assert_no_zombies();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical),
        cmocka_unit_test(test_tiny_error_passes),
        cmocka_unit_test(test_atol_scales_with_magnitude),
        cmocka_unit_test(test_sign_flip_fails),
        cmocka_unit_test(test_nan_fails),
        cmocka_unit_test(test_structure_mismatch),
        cmocka_unit_test(test_sqnr_and_quantised),
        cmocka_unit_test(test_int_and_half),
        cmocka_unit_test(test_budget_parse),
        cmocka_unit_test(test_acc_figures),
        cmocka_unit_test(test_profile_converges),
        cmocka_unit_test(test_profile_cap_and_spread),
        cmocka_unit_test(test_profile_failure_and_opts),
        cmocka_unit_test(test_profile_real_clock),
        cmocka_unit_test(test_profile_cpu_clock),
        cmocka_unit_test(test_profile_stop),
        cmocka_unit_test(test_stop_keeps_winner),
        cmocka_unit_test(test_strategy_choices),
        cmocka_unit_test(test_strategy_throughput_vs_latency),
        cmocka_unit_test(test_strategy_margin_and_invalid),
        cmocka_unit_test(test_strategy_errors),
        cmocka_unit_test(test_choose_unmet_budget),
        cmocka_unit_test(test_plan_check_decide),
        cmocka_unit_test(test_plan_check_spread),
        cmocka_unit_test(test_plan_check_settled),
        cmocka_unit_test(test_isolate_crash),
        cmocka_unit_test(test_isolate_hang),
        cmocka_unit_test(test_isolate_cpu_time),
        cmocka_unit_test(test_isolate_exit),
        cmocka_unit_test(test_isolate_output),
        cmocka_unit_test(test_isolate_success),
        cmocka_unit_test(test_isolate_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
