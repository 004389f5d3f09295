/* Bound buffers (ait.h, ait_binding): every refusal with its message, and
 * outputs written into caller memory equal, bit for bit, what
 * ait_session_run allocates, on bert, gpt2 and llama (PyTorch's sample
 * inputs), with some outputs bound and others left to the binding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "io/npy.h"

#define MAX_IO 16

static ait_session *session(const ait_model *m)
{
    ait_session *s = NULL;
    ait_error e = {0};
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    return s;
}

static ait_binding *binding(ait_session *s)
{
    ait_binding *b = NULL;
    ait_error e = {0};
    if (ait_binding_create(s, &b, &e) != AIT_OK) fail_msg("%s", e.msg);
    return b;
}

/* The model's sample k inputs, in declared order (the npz's tensors). */
static npz *inputs(const ait_model *m, const char *name, int k, ait_tensor **in)
{
    char path[64];
    snprintf(path, sizeof path, "models/%s.in.%d.npz", name, k);
    npz *z = NULL;
    ait_error e = {0};
    if (npz_load(test_data(path), &z, &e) != AIT_OK) fail_msg("%s", e.msg);
    for (int i = 0; i < ait_model_input_count(m); i++) {
        ait_value_info vi;
        assert_int_equal(ait_model_input(m, i, &vi), AIT_OK);
        in[i] = NULL;
        for (int a = 0; a < z->n; a++)
            if (!strcmp(z->names[a], vi.name)) in[i] = z->arrays[a];
        if (!in[i]) fail_msg("%s: no input '%s'", path, vi.name);
    }
    return z;
}

/* Outputs bound (every one, or every other one) equal the allocated ones
 * bit for bit, written in place, and again on a second run. */
static void check_model(const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "models/%s.onnx", name);
    ait_model *m = test_load(test_data(path));
    ait_session *s = session(m);
    int n_in = ait_model_input_count(m), n_out = ait_model_output_count(m);
    assert_true(n_in <= MAX_IO && n_out <= MAX_IO);
    for (int k = 0; k < 2; k++) {
        ait_tensor *in[MAX_IO], *want[MAX_IO];
        npz *z = inputs(m, name, k, in);
        if (ait_session_run(s, in, n_in, want, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
        for (int every = 1; every <= 2; every++) {
            ait_binding *b = binding(s);
            ait_error e = {0};
            ait_tensor *out[MAX_IO] = {0};
            void *mem[MAX_IO] = {0};
            for (int i = 0; i < n_in; i++) assert_int_equal(ait_binding_set_input(b, i, in[i], &e), AIT_OK);
            for (int j = 0; j < n_out; j += every) {
                /* A buffer bigger than needed, wrapped flat: the run gives the shape. */
                int64_t n = ait_tensor_numel(want[j]) + 7;
                mem[j] = malloc((size_t)n * ait_dtype_size(ait_tensor_dtype(want[j])));
                out[j] = ait_tensor_wrap(ait_tensor_dtype(want[j]), 1, &n, mem[j]);
                assert_non_null(out[j]);
                assert_int_equal(ait_binding_set_output(b, j, out[j], &e), AIT_OK);
            }
            for (int run = 0; run < 2; run++) {
                if (ait_session_run_bound(s, b) != AIT_OK) fail_msg("%s", ait_session_error(s));
                for (int j = 0; j < n_out; j++) {
                    ait_tensor *got = ait_binding_output(b, j);
                    assert_ptr_equal(got, out[j] ? out[j] : got);
                    if (out[j]) assert_ptr_equal(ait_tensor_data(got), mem[j]);
                    assert_int_equal(ait_tensor_rank(got), ait_tensor_rank(want[j]));
                    assert_memory_equal(ait_tensor_dims(got), ait_tensor_dims(want[j]),
                                        sizeof(int64_t) * (size_t)ait_tensor_rank(got));
                    assert_int_equal(ait_tensor_nbytes(got), ait_tensor_nbytes(want[j]));
                    assert_memory_equal(ait_tensor_data(got), ait_tensor_data(want[j]),
                                        ait_tensor_nbytes(got));
                }
            }
            ait_binding_free(b);
            for (int j = 0; j < n_out; j++) ait_tensor_free(out[j]), free(mem[j]);
        }
        for (int j = 0; j < n_out; j++) ait_tensor_free(want[j]);
        npz_free(z);
    }
    ait_session_free(s);
    ait_model_free(m);
}

static void test_bert(void **st) { (void)st; check_model("bert"); }
static void test_gpt2(void **st) { (void)st; check_model("gpt2"); }
static void test_llama(void **st) { (void)st; check_model("llama"); }

static void has(const char *msg, const char *part)
{
    if (!strstr(msg, part)) fail_msg("'%s' not in: %s", part, msg);
}

/* gpt2 with its sample inputs bound, the logits too. */
typedef struct fix {
    ait_model *m;
    ait_session *s;
    ait_binding *b;
    npz *z;
    ait_tensor *in[MAX_IO];
} fix;

static void fix_make(fix *f)
{
    f->m = test_load(test_data("models/gpt2.onnx"));
    f->s = session(f->m);
    f->b = binding(f->s);
    f->z = inputs(f->m, "gpt2", 0, f->in);
    ait_error e = {0};
    for (int i = 0; i < ait_model_input_count(f->m); i++)
        assert_int_equal(ait_binding_set_input(f->b, i, f->in[i], &e), AIT_OK);
}

static void fix_free(fix *f)
{
    ait_binding_free(f->b);
    ait_session_free(f->s);
    npz_free(f->z);
    ait_model_free(f->m);
}

static void test_null_and_index(void **st)
{
    (void)st;
    fix f;
    fix_make(&f);
    ait_error e = {0};
    ait_binding *b = NULL;
    assert_int_equal(ait_binding_create(NULL, &b, &e), AIT_E_INVALID_ARG);
    assert_null(b);
    assert_int_equal(ait_binding_create(f.s, NULL, &e), AIT_E_INVALID_ARG);
    has(e.msg, "NULL argument");
    assert_int_equal(ait_binding_set_input(NULL, 0, f.in[0], &e), AIT_E_INVALID_ARG);
    assert_int_equal(ait_binding_set_output(NULL, 0, NULL, &e), AIT_E_INVALID_ARG);
    assert_int_equal(ait_session_run_bound(NULL, f.b), AIT_E_INVALID_ARG);
    assert_int_equal(ait_session_run_bound(f.s, NULL), AIT_E_INVALID_ARG);
    has(ait_session_error(f.s), "NULL binding");
    /* wrong count: an index the model does not have */
    assert_int_equal(ait_binding_set_input(f.b, 5, f.in[0], &e), AIT_E_INVALID_ARG);
    has(e.msg, "the model has 5 inputs; there is no input 5");
    assert_int_equal(ait_binding_set_output(f.b, -1, NULL, &e), AIT_E_INVALID_ARG);
    has(e.msg, "the model has 5 outputs; there is no output -1");
    assert_null(ait_binding_output(f.b, 5));
    assert_null(ait_binding_output(NULL, 0));
    /* a binding of another session */
    ait_session *s2 = session(f.m);
    assert_int_equal(ait_session_run_bound(s2, f.b), AIT_E_INVALID_ARG);
    has(ait_session_error(s2), "the binding was made for another session");
    ait_session_free(s2);
    /* an input left unbound */
    assert_int_equal(ait_binding_set_input(f.b, 3, NULL, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_E_INVALID_ARG);
    has(ait_session_error(f.s), "input 'past_key_1' is not bound");
    assert_int_equal(ait_binding_set_input(f.b, 3, f.in[3], &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_OK);
    assert_string_equal(ait_session_error(f.s), "");
    fix_free(&f);
}

static void test_dtype(void **st)
{
    (void)st;
    fix f;
    fix_make(&f);
    ait_error e = {0};
    int64_t dims[3] = {1, 8, 1000};
    ait_tensor *i32 = ait_tensor_create(AIT_I32, 2, dims), *l64 = ait_tensor_create(AIT_I64, 3, dims);
    assert_int_equal(ait_binding_set_input(f.b, 0, i32, &e), AIT_E_DTYPE);
    has(e.msg, "input 'input_ids' is int64; the tensor given is int32");
    assert_int_equal(ait_binding_set_output(f.b, 0, l64, &e), AIT_E_DTYPE);
    has(e.msg, "output 'logits' is float32; the tensor given is int64");
    ait_tensor *seq = ait_sequence_create(AIT_F32), *str = ait_tensor_create(AIT_STRING, 1, dims);
    assert_int_equal(ait_binding_set_output(f.b, 0, seq, &e), AIT_E_UNSUPPORTED);
    has(e.msg, "a sequence cannot be bound");
    assert_int_equal(ait_binding_set_output(f.b, 0, str, &e), AIT_E_UNSUPPORTED);
    has(e.msg, "a string tensor cannot be bound as an output");
    /* refused bindings left the binding as it was: the run works */
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_OK);
    ait_tensor_free(i32), ait_tensor_free(l64), ait_tensor_free(seq), ait_tensor_free(str);
    fix_free(&f);
}

static void test_too_small(void **st)
{
    (void)st;
    fix f;
    fix_make(&f);
    ait_error e = {0};
    /* logits are [1, seq, 1000]: room for one row less than the sample's */
    int64_t seq = ait_tensor_dims(f.in[0])[1], n = (seq - 1) * 1000, need[3] = {1, seq, 1000};
    float *mem = malloc(sizeof(float) * (size_t)n);
    ait_tensor *t = ait_tensor_wrap(AIT_F32, 1, &n, mem);
    assert_int_equal(ait_tensor_capacity(t), sizeof(float) * (size_t)n);
    assert_int_equal(ait_binding_set_output(f.b, 0, t, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_E_SHAPE);
    char want[256], sh[64];
    snprintf(sh, sizeof sh, "[1,%lld,1000]", (long long)seq);
    snprintf(want, sizeof want, "output 'logits' needs shape %s (%zu bytes); the tensor bound to "
             "it holds %zu bytes", sh, sizeof(float) * (size_t)seq * 1000, sizeof(float) * (size_t)n);
    has(ait_session_error(f.s), want);
    /* reshape beyond the capacity is refused too; within it, allowed */
    assert_int_equal(ait_tensor_reshape(t, 3, need), AIT_E_SHAPE);
    need[1] = seq - 1;
    assert_int_equal(ait_tensor_reshape(t, 3, need), AIT_OK);
    assert_int_equal(ait_tensor_reshape(t, -1, need), AIT_E_INVALID_ARG);
    assert_int_equal(ait_tensor_reshape(NULL, 1, need), AIT_E_INVALID_ARG);
    /* unbound again: the binding's own tensor */
    assert_int_equal(ait_binding_set_output(f.b, 0, NULL, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_OK);
    assert_int_equal(ait_tensor_dims(ait_binding_output(f.b, 0))[1], seq);
    ait_tensor_free(t);
    free(mem);
    fix_free(&f);
}

/* present written where past lives is refused; so are two outputs sharing memory. */
static void test_alias(void **st)
{
    (void)st;
    fix f;
    fix_make(&f);
    ait_error e = {0};
    const int64_t *pd = ait_tensor_dims(f.in[1]);
    int64_t big[4] = {pd[0], pd[1], pd[2] + 64, pd[3]};
    float *mem = calloc((size_t)(big[0] * big[1] * big[2] * big[3]) * 2, sizeof(float));
    ait_tensor *past = ait_tensor_wrap(AIT_F32, 4, pd, mem);
    ait_tensor *present = ait_tensor_wrap(AIT_F32, 4, big, mem); /* the same bytes */
    memcpy(mem, ait_tensor_data(f.in[1]), ait_tensor_nbytes(f.in[1]));
    assert_int_equal(ait_binding_set_input(f.b, 1, past, &e), AIT_OK);
    assert_int_equal(ait_binding_set_output(f.b, 1, present, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_E_INVALID_ARG);
    has(ait_session_error(f.s), "output 'present_key_0' is bound to memory that input "
        "'past_key_0' reads: a run cannot read and write one buffer");
    /* two outputs in one buffer */
    int64_t n = big[0] * big[1] * big[2] * big[3];
    ait_tensor *o1 = ait_tensor_wrap(AIT_F32, 1, &n, mem + n), *o2 = ait_tensor_wrap(AIT_F32, 1, &n, mem + n);
    assert_int_equal(ait_binding_set_input(f.b, 1, f.in[1], &e), AIT_OK);
    assert_int_equal(ait_binding_set_output(f.b, 1, o1, &e), AIT_OK);
    assert_int_equal(ait_binding_set_output(f.b, 2, o2, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_E_INVALID_ARG);
    has(ait_session_error(f.s), "outputs 'present_key_0' and 'present_value_0' are bound to "
        "overlapping memory");
    /* apart, they run */
    assert_int_equal(ait_binding_set_output(f.b, 1, present, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_OK);
    ait_tensor_free(past), ait_tensor_free(present), ait_tensor_free(o1), ait_tensor_free(o2);
    free(mem);
    fix_free(&f);
}

/* Key/value caches appended to one buffer per pair (ait_binding_set_cache;
 * gpt2 untuned: the copy path): the presents, read out of the caches with
 * their capacity as stride, and the logits equal what ait_session_run
 * allocates bit for bit; a past longer than its cache, and a present that
 * outgrows it, are refused with a message. */
static void test_cache(void **st)
{
    (void)st;
    fix f;
    fix_make(&f);
    ait_error e = {0};
    int n_in = ait_model_input_count(f.m), n_out = ait_model_output_count(f.m);
    ait_tensor *want[MAX_IO] = {0}, *cache[MAX_IO] = {0};
    assert_int_equal(ait_session_run(f.s, f.in, n_in, want, n_out), AIT_OK);
    const int64_t *pd = ait_tensor_dims(f.in[1]);
    const int64_t P = pd[2], S = ait_tensor_dims(f.in[0])[1], cap = P + S + 3;
    const int64_t slabs = pd[0] * pd[1], D = pd[3];
    for (int i = 1; i < n_in; i++) { /* past_X is input i, present_X output i */
        int64_t dims[4] = {pd[0], pd[1], cap, D};
        cache[i] = ait_tensor_create(AIT_F32, 4, dims);
        float *c = ait_tensor_data(cache[i]);
        const float *p = ait_tensor_data(f.in[i]);
        for (int64_t k = 0; k < slabs; k++)
            memcpy(c + k * cap * D, p + k * P * D, sizeof(float) * (size_t)(P * D));
        assert_int_equal(ait_binding_set_cache(f.b, i, i, cache[i], 2, P, &e), AIT_OK);
    }
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_OK);
    assert_int_equal(ait_binding_caches_in_place(f.b), 0); /* untuned: copied */
    const ait_tensor *lg = ait_binding_output(f.b, 0);
    assert_int_equal(ait_tensor_nbytes(lg), ait_tensor_nbytes(want[0]));
    assert_memory_equal(ait_tensor_data((ait_tensor *)lg), ait_tensor_data(want[0]),
                        ait_tensor_nbytes(want[0]));
    for (int j = 1; j < n_out; j++) {
        assert_ptr_equal(ait_binding_output(f.b, j), cache[j]);
        assert_int_equal(ait_tensor_dims(cache[j])[2], cap); /* its dims unchanged */
        assert_int_equal(ait_tensor_dims(want[j])[2], P + S);
        const float *c = ait_tensor_data(cache[j]), *w = ait_tensor_data(want[j]);
        for (int64_t k = 0; k < slabs; k++)
            assert_memory_equal(c + k * cap * D, w + k * (P + S) * D,
                                sizeof(float) * (size_t)((P + S) * D));
    }
    /* a past longer than the cache */
    assert_int_equal(ait_binding_set_cache(f.b, 1, 1, cache[1], 2, cap + 1, &e), AIT_E_SHAPE);
    has(e.msg, "input 'past_key_0': a past of");
    has(e.msg, "does not fit the cache bound to it");
    /* a present that outgrows it: the past fills it */
    for (int i = 1; i < n_in; i++)
        assert_int_equal(ait_binding_set_cache(f.b, i, i, cache[i], 2, cap, &e), AIT_OK);
    assert_int_equal(ait_session_run_bound(f.s, f.b), AIT_E_SHAPE);
    has(ait_session_error(f.s), "output 'present_");
    has(ait_session_error(f.s), "needs shape");
    has(ait_session_error(f.s), "the cache bound to it is");
    /* a bad axis; and set_output on the pair's output removes the pair */
    assert_int_equal(ait_binding_set_cache(f.b, 1, 1, cache[1], 4, 0, &e), AIT_E_INVALID_ARG);
    has(e.msg, "axis 4 is not a past-length axis");
    assert_int_equal(ait_binding_set_input(f.b, 1, f.in[1], &e), AIT_OK);
    assert_int_equal(ait_binding_set_output(f.b, 1, NULL, &e), AIT_OK);
    assert_ptr_not_equal(ait_binding_output(f.b, 1), cache[1]);
    for (int j = 0; j < n_out; j++) ait_tensor_free(want[j]);
    for (int i = 0; i < n_in; i++) ait_tensor_free(cache[i]);
    fix_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_and_index), cmocka_unit_test(test_dtype),
        cmocka_unit_test(test_too_small),      cmocka_unit_test(test_alias),
        cmocka_unit_test(test_bert),           cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_llama),          cmocka_unit_test(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
