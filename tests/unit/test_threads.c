/* One session run from several threads at once gives, bit for bit, what
 * the same session gives run from one thread: an untuned model (a small
 * MLP, tests/unit/make_thread_model.py, on the executor), an artifact
 * whose plan mixes openblas, onednn and the reference ops, and a JIT
 * session whose first runs arrive together (one tunes, the others wait,
 * then every run is on the tuned plan); and
 * two sessions with different thread counts (artifacts at 1 and 2 threads)
 * run side by side, each right.
 *
 * Every run's input differs from its neighbours' (one of N_INPUTS inputs,
 * in an order that differs per thread), so a run that reads or writes
 * another run's buffers shows as a mismatch. AIT_THREADS_RUNS sets the
 * runs per thread (default 200). */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "api/inspection.h"
#include "runtime/model.h"
#include "tune/plan_build.h"
#include "tune/tuner.h"

#define N_THREADS 4
#define N_INPUTS 12
#define N_FEAT 256 /* the model's input: [1, 256] float32 */

static char model_path[4096], dir[64];
static char cache[128]; /* the JIT session's results cache, under dir */
static int runs_per_thread = 200;
static pthread_barrier_t start; /* the workers begin together, to overlap the most */

static ait_tensor *make_input(int k)
{
    int64_t dims[2] = {1, N_FEAT};
    ait_tensor *t = ait_tensor_create(AIT_F32, 2, dims);
    assert_non_null(t);
    float *p = ait_tensor_data(t);
    for (int i = 0; i < N_FEAT; i++) p[i] = (float)sin(0.37 * (k + 1) * (i + 1)) * (1 + k % 3);
    return t;
}

/* What a session gives for each input, run from this thread alone. */
typedef struct expected {
    ait_tensor *in[N_INPUTS];
    ait_tensor *out[N_INPUTS];
} expected;

static void expect(ait_session *s, expected *x)
{
    for (int k = 0; k < N_INPUTS; k++) {
        x->in[k] = make_input(k);
        if (ait_session_run(s, &x->in[k], 1, &x->out[k], 1) != AIT_OK)
            fail_msg("%s", ait_session_error(s));
    }
    /* The runs differ: a mix-up between them would show. */
    assert_int_not_equal(memcmp(ait_tensor_data(x->out[0]), ait_tensor_data(x->out[1]),
                                ait_tensor_nbytes(x->out[0])), 0);
}

static void expected_free(expected *x)
{
    for (int k = 0; k < N_INPUTS; k++) {
        ait_tensor_free(x->in[k]);
        ait_tensor_free(x->out[k]);
    }
}

/* One thread's work: runs of session s, each checked bitwise. cmocka is
 * not thread-safe: threads only count, the main thread asserts. */
typedef struct worker {
    pthread_t th;
    ait_session *s;
    const expected *x;
    int id, runs;
    ait_tensor **keep; /* non-NULL: keep each run's output here instead of checking it */
    int failed, wrong;
    char first_error[256];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(&start);
    for (int r = 0; r < w->runs; r++) {
        int k = (r * (w->id + 1) + w->id * 5) % N_INPUTS;
        ait_tensor *out = NULL;
        if (ait_session_run(w->s, &w->x->in[k], 1, &out, 1) != AIT_OK) {
            if (!w->failed++)
                snprintf(w->first_error, sizeof w->first_error, "%s", ait_session_error(w->s));
            continue;
        }
        if (w->keep) {
            w->keep[r] = out;
            continue;
        }
        ait_tensor *want = w->x->out[k];
        if (ait_tensor_nbytes(out) != ait_tensor_nbytes(want) ||
            memcmp(ait_tensor_data(out), ait_tensor_data(want), ait_tensor_nbytes(want)) != 0)
            w->wrong++;
        ait_tensor_free(out);
    }
    return NULL;
}

/* Runs n workers (sessions s[i], expectations x[i]) at once and checks that
 * every run succeeded and matched. */
static void run_workers(int n, ait_session **s, expected **x, const char *what)
{
    worker w[N_THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, (unsigned)n), 0);
    for (int i = 0; i < n; i++) {
        w[i] = (worker){.s = s[i], .x = x[i], .id = i, .runs = runs_per_thread};
        assert_int_equal(pthread_create(&w[i].th, NULL, work, &w[i]), 0);
    }
    int failed = 0, wrong = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(w[i].th, NULL);
        if (w[i].failed) print_message("%s: thread %d: %d runs failed: %s\n", what, i,
                                       w[i].failed, w[i].first_error);
        failed += w[i].failed;
        wrong += w[i].wrong;
    }
    pthread_barrier_destroy(&start);
    if (failed || wrong)
        fail_msg("%s: %d of %d runs failed, %d gave other outputs than one thread does", what,
                 failed, n * runs_per_thread, wrong);
}

/* Four threads on one session of model m (options o). */
static void hammer(const ait_model *m, const ait_session_options *o, const char *what)
{
    ait_session *s;
    ait_error e = {0};
    if (ait_session_create(m, o, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    expected x;
    expect(s, &x);
    ait_session *ss[N_THREADS];
    expected *xs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) ss[i] = s, xs[i] = &x;
    run_workers(N_THREADS, ss, xs, what);
    assert_string_equal(ait_session_error(s), ""); /* this thread's last run succeeded */
    expected_free(&x);
    ait_session_free(s);
}

static void test_untuned(void **state)
{
    (void)state;
    ait_model *m;
    ait_error e = {0};
    if (ait_model_load(model_path, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    hammer(m, NULL, "untuned");
    ait_model_free(m);
}

/* A candidate at `threads` threads of backend, chosen by hand. */
static void set_choice(tune_module *tm, const char *backend, int threads)
{
    tm->n_cands = 2;
    tm->cands[0].cfg.backend = "reference";
    tm->cands[0].cfg.threads = 1;
    snprintf(tm->cands[0].name, sizeof tm->cands[0].name, "reference/t1");
    tm->cands[1].cfg.backend = backend;
    tm->cands[1].cfg.threads = threads;
    snprintf(tm->cands[1].name, sizeof tm->cands[1].name, "%s/t%d", backend, threads);
    for (int c = 0; c < 2; c++) {
        tm->cands[c].valid = true;
        tm->cands[c].prof.median = (2 - c) * 1e-3;
        tm->cands[c].speedup = 2.0 / (2 - c);
    }
    tm->chosen = 1;
    snprintf(tm->strategy, sizeof tm->strategy, "max-throughput");
    snprintf(tm->why, sizeof tm->why, "fixed by the test");
}

/* The model saved as an artifact with fc1 on openblas and fc2 on onednn at
 * `threads` threads (fc3 stays on the reference), fixed by hand so that
 * the test does not depend on timings; loaded into *t. */
static void make_artifact(const ait_model *m, int threads, const char *name, ait_model **t)
{
    const int batches[] = {1};
    ait_inspect_options o = {.size = sizeof o, .n_batch_sizes = 1, .batch_sizes = batches, .runs = 1};
    ait_inspection *h;
    ait_error e = {0};
    if (ait_inspect(m, &o, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    tune_report rep = {0};
    tune_module mods[2] = {0};
    const char *paths[] = {"fc1", "fc2"}, *backends[] = {"openblas", "onednn"};
    for (int k = 0; k < 2; k++) {
        mods[k].module = module_find(h->r->tree, paths[k]);
        assert_true(mods[k].module > 0);
        mods[k].batch = 1;
        set_choice(&mods[k], backends[k], threads);
    }
    rep.mods = mods;
    rep.n = 2;
    char art[256];
    snprintf(art, sizeof art, "%s/%s", dir, name);
    if (plan_save(m, h->r, &rep, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_inspection_free(h);
    if (ait_artifact_load(art, NULL, t, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_true(ait_model_is_tuned(*t));
}

static void test_artifact(void **state)
{
    (void)state;
    ait_model *m, *t;
    ait_error e = {0};
    if (ait_model_load(model_path, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    make_artifact(m, 1, "mlp_t1.ait", &t);
    hammer(t, NULL, "artifact");
    ait_model_free(t);
    ait_model_free(m);
}

/* Two sessions, one running its modules at 1 thread and one at 2, each
 * run from two threads at once: each gives what it gives alone. */
static void test_two_thread_counts(void **state)
{
    (void)state;
    ait_model *m, *t[2];
    ait_error e = {0};
    if (ait_model_load(model_path, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    make_artifact(m, 1, "mlp_a.ait", &t[0]);
    make_artifact(m, 2, "mlp_b.ait", &t[1]);
    ait_session *s[2], *ss[4];
    expected x[2], *xs[4];
    for (int i = 0; i < 2; i++) {
        ait_session_options o = {.size = sizeof o, .threads = i + 1};
        if (ait_session_create(t[i], &o, &s[i], &e) != AIT_OK) fail_msg("%s", e.msg);
        expect(s[i], &x[i]);
    }
    for (int i = 0; i < 4; i++) ss[i] = s[i % 2], xs[i] = &x[i % 2];
    run_workers(4, ss, xs, "two thread counts");
    for (int i = 0; i < 2; i++) {
        expected_free(&x[i]);
        ait_session_free(s[i]);
        ait_model_free(t[i]);
    }
    ait_model_free(m);
}

/* A JIT session's first runs come from four threads at once: one tunes,
 * the others wait for it; every run's output is then what the tuned
 * session gives from one thread. */
static void test_jit(void **state)
{
    (void)state;
    ait_model *m;
    ait_error e = {0};
    if (ait_model_load(model_path, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_session *s;
    ait_session_options o = {.size = sizeof o, .threads = 1, .jit = 1, .cache_dir = cache};
    if (ait_session_create(m, &o, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    expected x;
    for (int k = 0; k < N_INPUTS; k++) x.in[k] = make_input(k);
    int runs = 25;
    worker w[N_THREADS];
    ait_tensor *kept[N_THREADS][25];
    assert_int_equal(pthread_barrier_init(&start, NULL, N_THREADS), 0);
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker){.s = s, .x = &x, .id = i, .runs = runs, .keep = kept[i]};
        assert_int_equal(pthread_create(&w[i].th, NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) pthread_join(w[i].th, NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < N_THREADS; i++)
        if (w[i].failed) fail_msg("JIT: thread %d: %s", i, w[i].first_error);
    assert_non_null(strstr(ait_session_note(s), "JIT: tuned"));
    for (int k = 0; k < N_INPUTS; k++)
        if (ait_session_run(s, &x.in[k], 1, &x.out[k], 1) != AIT_OK)
            fail_msg("%s", ait_session_error(s));
    int wrong = 0;
    for (int i = 0; i < N_THREADS; i++)
        for (int r = 0; r < runs; r++) {
            int k = (r * (i + 1) + i * 5) % N_INPUTS;
            wrong += memcmp(ait_tensor_data(kept[i][r]), ait_tensor_data(x.out[k]),
                            ait_tensor_nbytes(x.out[k])) != 0;
            ait_tensor_free(kept[i][r]);
        }
    if (wrong) fail_msg("JIT: %d of %d runs gave other outputs than the tuned session alone", wrong,
                        N_THREADS * runs);
    expected_free(&x);
    ait_session_free(s);
    ait_model_free(m);
}

int main(void)
{
    snprintf(model_path, sizeof model_path, "%s", test_data("threads/mlp_small.onnx"));
    const char *r = getenv("AIT_THREADS_RUNS");
    if (r && atoi(r) > 0) runs_per_thread = atoi(r);
    snprintf(dir, sizeof dir, "/tmp/ait-threads-test-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(cache, sizeof cache, "%s/cache", dir); /* JIT caches; never in ~/.cache */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untuned),
        cmocka_unit_test(test_artifact),
        cmocka_unit_test(test_two_thread_counts),
        cmocka_unit_test(test_jit),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
