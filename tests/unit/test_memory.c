/* The executor's memory plan (exec.h): intermediates share one arena by
 * liveness and outputs are not zeroed, so every run must still give what a
 * fresh session gives, bit for bit, whatever the runs before it left in the
 * arena: the same inputs again after others, an output written first and
 * kept past every intermediate, an op that needs its output zeroed
 * (CenterCropPad's padding) after big values died, and input shapes that
 * change between runs (a new plan). Outputs handed out by a run stay as
 * they were after later runs (ait.h: they are the caller's). Models from
 * make_memory_models.py and the bundled mobilenetv2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "backends/backend.h"
#include "exec/exec.h"
#include "runtime/model.h"

#define MAX_OUT 4

/* A float32 input of this shape filled from a seed (inputs of different
 * seeds differ everywhere). */
static ait_tensor *input(int rank, const int64_t *dims, unsigned seed)
{
    ait_tensor *t = ait_tensor_create(AIT_F32, rank, dims);
    assert_non_null(t);
    float *p = ait_tensor_data(t);
    uint32_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < ait_tensor_numel(t); i++) {
        s ^= s << 13, s ^= s >> 17, s ^= s << 5;
        p[i] = (float)(s % 2001) / 1000.0f - 1.0f;
    }
    return t;
}

static void run(ait_session *s, ait_tensor *in, ait_tensor **out, int n_out)
{
    if (ait_session_run(s, &in, 1, out, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
}

static ait_session *session(const ait_model *m)
{
    ait_session *s = NULL;
    ait_error e = {0};
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    return s;
}

static void same(ait_tensor *a, ait_tensor *b)
{
    assert_int_equal(ait_tensor_rank(a), ait_tensor_rank(b));
    assert_memory_equal(ait_tensor_dims(a), ait_tensor_dims(b),
                        sizeof(int64_t) * (size_t)ait_tensor_rank(a));
    assert_int_equal(ait_tensor_nbytes(a), ait_tensor_nbytes(b));
    assert_memory_equal(ait_tensor_data(a), ait_tensor_data(b), ait_tensor_nbytes(a));
}

static void free_outs(ait_tensor **o, int n)
{
    for (int j = 0; j < n; j++) ait_tensor_free(o[j]);
}

/* Inputs A and B through one session as A, B, A, A: each A run equals the
 * first bit for bit and a fresh session's, B a fresh session's; the first
 * run's outputs are unchanged by the runs after it. */
static void check_repeats(const char *rel, int rank, const int64_t *dims)
{
    ait_model *m = test_load(test_data(rel));
    int n = ait_model_output_count(m);
    assert_true(n <= MAX_OUT);
    ait_tensor *a = input(rank, dims, 1), *b = input(rank, dims, 2);
    ait_tensor *a1[MAX_OUT], *b1[MAX_OUT], *a2[MAX_OUT], *a3[MAX_OUT], *fa[MAX_OUT], *fb[MAX_OUT];
    ait_session *s = session(m);
    run(s, a, a1, n);
    void *snap[MAX_OUT];
    for (int j = 0; j < n; j++) {
        snap[j] = malloc(ait_tensor_nbytes(a1[j]) + 1);
        assert_non_null(snap[j]);
        memcpy(snap[j], ait_tensor_data(a1[j]), ait_tensor_nbytes(a1[j]));
    }
    run(s, b, b1, n);
    run(s, a, a2, n);
    run(s, a, a3, n);
    ait_session *f = session(m);
    run(f, a, fa, n);
    ait_session_free(f);
    f = session(m);
    run(f, b, fb, n);
    ait_session_free(f);
    for (int j = 0; j < n; j++) {
        assert_memory_equal(ait_tensor_data(a1[j]), snap[j], ait_tensor_nbytes(a1[j]));
        same(a2[j], a1[j]);
        same(a3[j], a1[j]);
        same(fa[j], a1[j]);
        same(fb[j], b1[j]);
        free(snap[j]);
    }
    free_outs(a1, n), free_outs(b1, n), free_outs(a2, n), free_outs(a3, n);
    free_outs(fa, n), free_outs(fb, n);
    ait_session_free(s);
    ait_tensor_free(a);
    ait_tensor_free(b);
    ait_model_free(m);
}

/* An element-wise chain: later values take earlier ones' bytes; 'early',
 * an output written first, survives them. */
static void test_chain(void **st)
{
    (void)st;
    int64_t d[2] = {2, 64};
    check_repeats("memory/chain.onnx", 2, d);
}

/* A real model: every conv, pool and residual join on reused bytes. */
static void test_mobilenetv2(void **st)
{
    (void)st;
    int64_t d[4] = {1, 3, 224, 224};
    check_repeats("models/mobilenetv2.onnx", 4, d);
}

/* CenterCropPad leaves its padding as the zeros it asks for
 * (OP_ZERO_OUTPUTS): after big intermediates of 1000s died where its output
 * goes, the padding is still exactly zero on every run. */
static void test_zeroed_padding(void **st)
{
    (void)st;
    int64_t d[2] = {4, 4};
    check_repeats("memory/pad.onnx", 2, d);
    ait_model *m = test_load(test_data("memory/pad.onnx"));
    ait_session *s = session(m);
    for (unsigned seed = 1; seed <= 3; seed++) {
        ait_tensor *x = input(2, d, seed), *y;
        run(s, x, &y, 1);
        const float *p = ait_tensor_data(y);
        for (int r = 0; r < 8; r++)
            for (int c = 0; c < 8; c++) {
                bool pad = r < 2 || r >= 6 || c < 2 || c >= 6;
                if (pad && p[r * 8 + c] != 0.0f)
                    fail_msg("run %u: padding at [%d,%d] is %g", seed, r, c, p[r * 8 + c]);
                if (!pad && p[r * 8 + c] == 0.0f) fail_msg("run %u: [%d,%d] is 0", seed, r, c);
            }
        ait_tensor_free(y);
        ait_tensor_free(x);
    }
    ait_session_free(s);
    ait_model_free(m);
}

/* x[n,16] at n = 2, 5, 2, 7, 1 through one session (each new n plans
 * again, and back to 2 plans for 2 again) equals a fresh session's at each. */
static void test_dynamic_shapes(void **st)
{
    (void)st;
    ait_model *m = test_load(test_data("memory/dynamic.onnx"));
    ait_session *s = session(m);
    const int64_t ns[] = {2, 5, 2, 7, 1};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int64_t d[2] = {ns[i], 16};
        ait_tensor *x = input(2, d, (unsigned)i + 1), *got[2], *want[2];
        run(s, x, got, 2);
        ait_session *f = session(m);
        run(f, x, want, 2);
        ait_session_free(f);
        assert_int_equal(ait_tensor_numel(got[0]), ns[i] * 32);
        same(got[0], want[0]);
        same(got[1], want[1]);
        free_outs(got, 2), free_outs(want, 2);
        ait_tensor_free(x);
    }
    ait_session_free(s);
    ait_model_free(m);
}

/* The plan itself on the chain: the arena is smaller than the
 * intermediates laid end to end (values share bytes), stays the same size
 * run to run, and exec_keep_values (no arena) gives the same outputs. */
static void test_arena(void **st)
{
    (void)st;
    ait_model *m = test_load(test_data("memory/chain.onnx"));
    ait_error e = {0};
    exec *x = NULL, *k = NULL;
    assert_int_equal(exec_create(m->g, NULL, 1, &x, &e), AIT_OK);
    assert_int_equal(exec_create(m->g, NULL, 1, &k, &e), AIT_OK);
    exec_keep_values(k);
    int64_t d[2] = {2, 64};
    tensor *in = test_rand_tensor(2, d), *o1[2], *o2[2];
    assert_int_equal(exec_run(x, &in, o1, &e), AIT_OK);
    size_t bytes = exec_arena_bytes(x);
    /* 10 values of 512 bytes each: t1..t8 die as the chain goes */
    assert_true(bytes > 0);
    assert_true(bytes < 10 * 512);
    assert_int_equal(exec_run(k, &in, o2, &e), AIT_OK);
    assert_int_equal(exec_arena_bytes(k), 0);
    for (int j = 0; j < 2; j++)
        assert_memory_equal(o1[j]->data, o2[j]->data, tensor_nbytes(o2[j]));
    assert_int_equal(exec_run(x, &in, o1, &e), AIT_OK);
    assert_int_equal(exec_arena_bytes(x), bytes);
    for (int j = 0; j < 2; j++)
        assert_memory_equal(o1[j]->data, o2[j]->data, tensor_nbytes(o2[j]));
    exec_free(x);
    exec_free(k);
    test_tensor_free(in);
    ait_model_free(m);
}

/* A native module's values share one arena by liveness too (native.c,
 * place_values): on mobilenetv2 built whole on native, what it holds for
 * its values is at most what the executor's arena holds for the same model
 * (native fuses the activations away: fewer values; 6.0 MB against the
 * executor's 9.6; with storage of its own per value, as before, 26.7 MB),
 * and runs on other inputs in between leave the outputs of an input bit
 * for bit as they were. */
static void test_native_values(void **st)
{
    (void)st;
    ait_model *m = test_load(test_data("models/mobilenetv2.onnx"));
    const backend *b = backend_find("native");
    assert_non_null(b);
    assert_non_null(b->value_bytes);
    ait_error e = {0};
    exec *x = NULL;
    assert_int_equal(exec_create(m->g, NULL, 1, &x, &e), AIT_OK);
    int64_t d[4] = {1, 3, 224, 224};
    tensor *a = test_rand_tensor(4, d), *c = test_rand_tensor(4, d), *o[MAX_OUT];
    for (int64_t i = 0; i < tensor_numel(c); i++) ((float *)c->data)[i] *= -3.0f;
    assert_int_equal(exec_run(x, &a, o, &e), AIT_OK);
    size_t ref_arena = exec_arena_bytes(x);
    candidate_cfg cfg = {.backend = "native", .threads = 1};
    built *bm = NULL;
    assert_int_equal(b->build(b, m->g, &cfg, &bm, &e), AIT_OK);
    int n = m->g->n_outputs;
    assert_true(n <= MAX_OUT);
    assert_int_equal(b->run(bm, &a, o, &e), AIT_OK);
    void *first[MAX_OUT];
    for (int j = 0; j < n; j++) {
        first[j] = malloc(tensor_nbytes(o[j]) + 1);
        assert_non_null(first[j]);
        memcpy(first[j], o[j]->data, tensor_nbytes(o[j]));
    }
    size_t held = b->value_bytes(bm);
    print_message("native values %zu bytes, the executor's arena %zu\n", held, ref_arena);
    assert_true(held > 0);
    assert_true(held <= ref_arena);
    assert_int_equal(b->run(bm, &c, o, &e), AIT_OK);
    assert_int_equal(b->run(bm, &a, o, &e), AIT_OK);
    assert_int_equal(b->value_bytes(bm), held); /* the same schedule: nothing grew */
    for (int j = 0; j < n; j++) {
        assert_memory_equal(o[j]->data, first[j], tensor_nbytes(o[j]));
        free(first[j]);
    }
    b->free(bm);
    exec_free(x);
    test_tensor_free(a);
    test_tensor_free(c);
    ait_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),          cmocka_unit_test(test_zeroed_padding),
        cmocka_unit_test(test_dynamic_shapes), cmocka_unit_test(test_arena),
        cmocka_unit_test(test_mobilenetv2),    cmocka_unit_test(test_native_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
