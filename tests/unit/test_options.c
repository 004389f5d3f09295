/* The option structs and what the library says: sizes (0 and too large
 * refused, an older shorter struct taken with defaults), the environment
 * helper, the log callback's messages and levels, and that the library
 * prints nothing when no callback is set. Model: $AIT_TEST_DATA/threads/mlp_small.onnx (fc1 to
 * fc3, 0.5 M parameters: nothing here needs models/mlp.onnx's 25 M, which cost the test 15 s of
 * CPU in Release and about a minute under ASan; now under 1.5 s in both). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "ait.h"

static char model_path[4096];

static ait_model *load_mlp(void) { return test_load(model_path); }

/* Expects AIT_E_INVALID_ARG with `name` in the message. */
static void refused(ait_status s, const ait_error *e, const char *name)
{
    assert_int_equal(s, AIT_E_INVALID_ARG);
    if (!strstr(e->msg, name)) fail_msg("expected '%s' in: %s", name, e->msg);
}

/* ---- sizes ---- */

static void test_size_refused(void **state)
{
    (void)state;
    ait_model *m = load_mlp();
    ait_error e = {0};
    ait_session *s = (ait_session *)1;
    ait_session_options so = {.threads = 1}; /* size forgotten: 0 */
    refused(ait_session_create(m, &so, &s, &e), &e, "ait_session_options.size is 0");
    assert_null(s);
    ait_inspection *h = (ait_inspection *)1;
    ait_inspect_options io = {.runs = 1};
    refused(ait_inspect(m, &io, &h, &e), &e, "ait_inspect_options.size is 0");
    assert_null(h);
    ait_model *t = (ait_model *)1;
    ait_artifact_options ao = {.fallback_untuned = 1};
    refused(ait_artifact_load("none.ait", &ao, &t, &e), &e, "ait_artifact_options.size is 0");
    ait_tune_options to = {0};
    refused(ait_options_from_env(NULL, &to, &e), &e, "ait_tune_options.size is 0");

    /* A struct from a newer header than the library knows. */
    struct {
        ait_session_options o;
        char newer[16];
    } big = {.o = {.size = sizeof big}};
    refused(ait_session_create(m, &big.o, &s, &e), &e, "ait_session_options.size is");
    assert_non_null(strstr(e.msg, "newer ait.h"));

    /* A negative count of execution contexts. */
    so = (ait_session_options){.size = sizeof so, .contexts = -1};
    refused(ait_session_create(m, &so, &s, &e), &e, "ait_session_create: contexts -1 is negative");
    assert_null(s);

    /* ait_tune checks its options before anything else. */
    io = (ait_inspect_options){.size = sizeof io, .runs = 1};
    assert_int_equal(ait_inspect(m, &io, &h, &e), AIT_OK);
    ait_tuning *tu = (ait_tuning *)1;
    refused(ait_tune(h, &to, &tu, &e), &e, "ait_tune_options.size is 0");
    assert_null(tu);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* An older program's struct ends earlier: the fields past its size are
 * not read (here they hold garbage that would crash if they were). */
static void test_older_struct(void **state)
{
    (void)state;
    ait_model *m = load_mlp();
    ait_error e = {0};
    ait_inspect_options io;
    memset(&io, 0xA5, sizeof io);
    io.size = offsetof(ait_inspect_options, log); /* before log and log_user existed */
    io.data_path = NULL;
    io.n_dims = 0;
    io.n_batch_sizes = 0;
    io.runs = 1;
    io.warmup = 0;
    io.threads = 1;
    ait_inspection *h = NULL;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);

    ait_tune_options to;
    memset(&to, 0xA5, sizeof to);
    to.size = offsetof(ait_tune_options, cv); /* max_threads .. window only */
    to.max_threads = 1;
    to.timeout = 30;
    to.warmup = 1;
    to.window = 2;
    assert_int_equal(ait_select_path(h, "fc1", NULL), AIT_OK);
    ait_tuning *tu = NULL;
    if (ait_tune(h, &to, &tu, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_tuning_count(tu), 1);
    ait_tuning_free(tu);
    ait_inspection_free(h);

    ait_session_options so;
    memset(&so, 0xA5, sizeof so);
    so.size = offsetof(ait_session_options, cache_dir);
    so.threads = 1;
    so.jit = 0;
    ait_session *s = NULL;
    if (ait_session_create(m, &so, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_session_free(s);

    ait_artifact_options ao = {.size = sizeof(size_t)}; /* nothing but the size */
    ait_model *t = NULL;
    assert_int_not_equal(ait_artifact_load(model_path, &ao, &t, &e), AIT_OK); /* not a .ait */
    assert_null(strstr(e.msg, "size"));
    ait_model_free(m);
}

/* ---- the environment helper ---- */

static void test_from_env(void **state)
{
    (void)state;
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    ait_session_options so = {.size = sizeof so};
    ait_tune_options to = {.size = sizeof to};
    setenv("AIT_CACHE_DIR", "/x/y", 1);
    setenv("AIT_JIT", "1", 1);
    assert_int_equal(ait_options_from_env(&so, &to, NULL), AIT_OK);
    assert_int_equal(so.jit, 1);
    assert_string_equal(so.cache_dir, "/x/y");
    assert_string_equal(to.cache_dir, "/x/y");
    /* Without AIT_CACHE_DIR: HOME's (the first call that needs it). */
    unsetenv("AIT_CACHE_DIR");
    setenv("AIT_JIT", "0", 1);
    setenv("HOME", "/home/u", 1);
    so = (ait_session_options){.size = sizeof so};
    assert_int_equal(ait_options_from_env(&so, NULL, NULL), AIT_OK);
    assert_int_equal(so.jit, 0);
    assert_string_equal(so.cache_dir, "/home/u/.cache/ait");
    /* An older struct without cache_dir: only jit is written. */
    setenv("AIT_JIT", "1", 1);
    struct {
        ait_session_options o;
    } old;
    memset(&old, 0, sizeof old);
    old.o.size = offsetof(ait_session_options, cache_dir);
    old.o.cache_dir = "untouched";
    assert_int_equal(ait_options_from_env(&old.o, NULL, NULL), AIT_OK);
    assert_int_equal(old.o.jit, 1);
    assert_string_equal(old.o.cache_dir, "untouched");
    unsetenv("AIT_JIT");
    if (home) setenv("HOME", home, 1);
    else unsetenv("HOME");
    free(home);
}

/* ---- the log callback ---- */

typedef struct seen {
    int n[AIT_LOG_PROGRESS + 1];
    int empty_progress;
    int inspect, generated, candidate, bar, eta, check, cache_warn;
    int bad; /* a message with a newline, or at a level it should not have */
} seen;

/* A message of a kind (`match`) counts in *count at level `want`, and as
 * bad at any other. */
static void kind(seen *s, bool match, ait_log_level level, ait_log_level want, int *count)
{
    if (!match) return;
    if (level == want) (*count)++;
    else s->bad++;
}

static void collect(void *user, ait_log_level level, const char *msg)
{
    seen *s = user;
    if ((unsigned)level > AIT_LOG_PROGRESS || strchr(msg, '\n')) {
        s->bad++;
        return;
    }
    s->n[level]++;
    if (level == AIT_LOG_PROGRESS && !*msg) s->empty_progress++;
    kind(s, !strncmp(msg, "inspect: ", 9), level, AIT_LOG_INFO, &s->inspect);
    kind(s, strstr(msg, "generated: ") != NULL, level, AIT_LOG_INFO, &s->generated);
    kind(s, !strncmp(msg, "tune: module ", 13), level, AIT_LOG_DEBUG, &s->candidate);
    kind(s, !strncmp(msg, "tune [", 6), level, AIT_LOG_PROGRESS, &s->bar);
    if (!strncmp(msg, "tune [", 6) && strstr(msg, "s left")) s->eta++; /* elapsed, then what is left */
    kind(s, !strncmp(msg, "cache: ", 7), level, AIT_LOG_WARN, &s->cache_warn);
    /* Its outcome is INFO; the status line while it runs is PROGRESS. */
    if (!strncmp(msg, "tune: whole-plan check", 22) && level == AIT_LOG_INFO) s->check++;
}

static void test_log_levels(void **state)
{
    (void)state;
    ait_model *m = load_mlp();
    ait_error e = {0};
    seen s = {0};
    ait_inspect_options io = {.size = sizeof io, .runs = 1, .log = collect, .log_user = &s};
    ait_inspection *h = NULL;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(s.inspect, 1);
    assert_int_equal(s.generated, 1);
    assert_int_equal(ait_select_path(h, "fc1", NULL), AIT_OK);
    /* A cache folder that cannot be made: a warning, and the tune goes on. */
    ait_tune_options to = {.size = sizeof to, .max_threads = 1, .warmup = 1, .window = 2,
                           .cap = 3, .cv = 0.5, .cache_dir = "/proc/ait-no-cache",
                           .log = collect, .log_user = &s};
    ait_tuning *tu = NULL;
    if (ait_tune(h, &to, &tu, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.cache_warn, 1);
    assert_true(s.candidate >= 2);     /* the baseline and at least one backend */
    assert_int_equal(s.bar, s.candidate); /* one status line before each */
    assert_true(s.eta >= 1 && s.eta < s.bar); /* an estimate once something is done */
    assert_int_equal(s.n[AIT_LOG_DEBUG], s.candidate);
    assert_true(s.empty_progress >= 1); /* the status line is done */
    assert_int_equal(s.n[AIT_LOG_ERROR], 0);
    /* The whole-plan check ran (or said why not) at INFO. */
    assert_int_equal(s.check, 1);
    ait_tuning_free(tu);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* A JIT session reports its tuning through the session's callback. */
static void test_log_jit(void **state)
{
    (void)state;
    ait_model *m = load_mlp();
    ait_error e = {0};
    seen s = {0};
    ait_session_options so = {.size = sizeof so, .threads = 1, .jit = 1, .log = collect,
                              .log_user = &s};
    ait_session *ss = NULL;
    if (ait_session_create(m, &so, &ss, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_value_info vi;
    assert_int_equal(ait_model_input(m, 0, &vi), AIT_OK);
    int64_t dims[AIT_MAX_RANK];
    for (int d = 0; d < vi.rank; d++) dims[d] = vi.dims[d] > 0 ? vi.dims[d] : 1;
    ait_tensor *in = ait_tensor_create(vi.dtype, vi.rank, dims), *out[4] = {0};
    int n_out = ait_model_output_count(m);
    if (ait_session_run(ss, &in, 1, out, n_out) != AIT_OK) fail_msg("%s", ait_session_error(ss));
    assert_non_null(strstr(ait_session_note(ss), "JIT: tuned"));
    assert_int_equal(s.bad, 0);
    assert_true(s.candidate >= 3); /* every top-level module's baseline at least */
    assert_true(s.inspect >= 1);
    for (int j = 0; j < n_out; j++) ait_tensor_free(out[j]);
    ait_tensor_free(in);
    ait_session_free(ss);
    ait_model_free(m);
}

/* ---- silence ---- */

/* Without a callback nothing reaches stdout or stderr: an inspection with
 * generated samples, and a tune with an unusable cache folder (a warning),
 * its children and its whole-plan check. */
static void test_silent(void **state)
{
    (void)state;
    test_capture cap;
    test_capture_start(&cap);
    ait_model *m = load_mlp();
    ait_error e = {0};
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *h = NULL;
    ait_status s = ait_inspect(m, &io, &h, &e);
    if (s == AIT_OK) s = ait_select_path(h, "fc1", NULL);
    ait_tune_options to = {.size = sizeof to, .max_threads = 1, .warmup = 1, .window = 2,
                           .cap = 3, .cv = 0.5, .cache_dir = "/proc/ait-no-cache"};
    ait_tuning *tu = NULL;
    if (s == AIT_OK) s = ait_tune(h, &to, &tu, &e);
    char said[512];
    long n = test_capture_stop(&cap, said, sizeof said);
    if (s != AIT_OK) fail_msg("%s", e.msg);
    if (n != 0) fail_msg("the library wrote %ld bytes: %s", n, said);
    ait_tuning_free(tu);
    ait_inspection_free(h);
    ait_model_free(m);
}

int main(void)
{
    snprintf(model_path, sizeof model_path, "%s", test_data("threads/mlp_small.onnx"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_refused),
        cmocka_unit_test(test_older_struct),
        cmocka_unit_test(test_from_env),
        cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_log_jit),
        cmocka_unit_test(test_silent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
