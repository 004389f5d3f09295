/* Bad input: every malformed model, file or run gives its status and a
 * message naming the problem, never a crash. Files come from
 * tests/unit/make_bad_models.py, in $AIT_BAD_DIR. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "ait.h"
#include "core/half.h"
#include "core/tensor.h"
#include "io/npy.h"

static const char *dir;

/* Loads a model expecting failure `code` with `needle` in the message. */
static void load_fails(const char *file, ait_status code, const char *needle)
{
    ait_error e = {0};
    ait_model *m = (ait_model *)1;
    ait_status s = ait_model_load(test_bad(file), &m, &e);
    if (s != code || !strstr(e.msg, needle))
        fail_msg("%s: got %s '%s', expected %s containing '%s'", file, ait_status_string(s), e.msg,
                 ait_status_string(code), needle);
    assert_null(m);
    assert_non_null(strstr(e.msg, file)); /* the message names the file */
}

static void test_corrupt_models(void **state)
{
    (void)state;
    load_fails("truncated.onnx", AIT_E_PARSE, "truncated or corrupt");
    load_fails("garbage.onnx", AIT_E_PARSE, "truncated or corrupt");
    load_fails("empty.onnx", AIT_E_PARSE, "no graph");
    load_fails("short_raw.onnx", AIT_E_PARSE, "raw data has 8 bytes");
    load_fails("dangling_input.onnx", AIT_E_PARSE, "input 'nowhere' is not produced");
    load_fails("dangling_output.onnx", AIT_E_PARSE, "graph output 'z'");
    load_fails("wrong_arity.onnx", AIT_E_PARSE, "has 2 inputs");
    ait_error e = {0};
    ait_model *m;
    assert_int_equal(ait_model_load(test_bad("no-such-file.onnx"), &m, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, "no-such-file.onnx"));
}

static void test_unsupported(void **state)
{
    (void)state;
    load_fails("unknown_op.onnx", AIT_E_UNSUPPORTED, "op 'FooBar' is not supported");
    load_fails("unknown_domain.onnx", AIT_E_UNSUPPORTED, "domain 'com.example'");
    load_fails("bad_dtype.onnx", AIT_E_UNSUPPORTED, "complex64");
    load_fails("opset_too_new.onnx", AIT_E_UNSUPPORTED, "opset 99");
    load_fails("overflow.onnx", AIT_E_OVERFLOW, "overflows");
    load_fails("deep_nesting.onnx", AIT_E_UNSUPPORTED, "nest deeper than");
}

static void test_external_data(void **state)
{
    (void)state;
    load_fails("ext_escape.onnx", AIT_E_SECURITY, "leaves the model's folder");
    load_fails("ext_escape_missing.onnx", AIT_E_SECURITY, "leaves the model's folder");
    load_fails("ext_absolute.onnx", AIT_E_SECURITY, "absolute");
    load_fails("ext_missing.onnx", AIT_E_IO, "nope.bin");
    load_fails("ext_short.onnx", AIT_E_PARSE, "length 400");
    ait_error e = {0};
    ait_model *m;
    ait_session *s;
    assert_int_equal(ait_model_load(test_bad("ext_ok.onnx"), &m, &e), AIT_OK);
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    float x[6] = {1, 1, 1, 1, 1, 1};
    int64_t dims[2] = {2, 3};
    ait_tensor *in = ait_tensor_wrap(AIT_F32, 2, dims, x), *out = NULL;
    assert_int_equal(ait_session_run(s, &in, 1, &out, 1), AIT_OK);
    const float *y = ait_tensor_data(out);
    for (int i = 0; i < 6; i++) assert_float_equal(y[i], 1.0f + (float)i, 0);
    ait_tensor_free(out);
    ait_tensor_free(in);
    ait_session_free(s);
    ait_model_free(m);
}

/* An initializer declaring 2^31 floats with no data (82 bytes, found by
 * fuzz-model): refused for its missing data before anything is allocated
 * (it used to allocate 8 GiB first, then fail on the count). */
static void test_declared_not_stored(void **state)
{
    (void)state;
    static const char hex[] =
        "080812096169742d74657374733a3d0a160a036269671201791a02696422084964656e746974791201672a15"
        "08808080800880802080808080201001420362696762090a017912040a02080142040a001011";
    unsigned char buf[sizeof hex / 2];
    for (size_t i = 0; i < sizeof buf; i++) sscanf(hex + 2 * i, "%2hhx", &buf[i]);
    ait_error e = {0};
    ait_model *m = NULL;
    assert_int_equal(ait_model_load_memory(buf, sizeof buf, "big.onnx", &m, &e), AIT_E_PARSE);
    if (!strstr(e.msg, "initializer 'big': holds 0 stored values or bytes, its shape (2147483648 "
                       "elements) needs 2147483648"))
        fail_msg("%s", e.msg);
    assert_null(m);
}

static void test_tolerated(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m;
    assert_int_equal(ait_model_load(test_bad("unused_domain.onnx"), &m, &e), AIT_OK);
    ait_model_free(m);
    /* A graph input that is also an initializer is a constant, not an input. */
    assert_int_equal(ait_model_load(test_bad("input_is_initializer.onnx"), &m, &e), AIT_OK);
    assert_int_equal(ait_model_input_count(m), 1);
    ait_model_free(m);
    ait_model_free(NULL);
    ait_session_free(NULL);
    ait_tensor_free(NULL);
}

/* Runs two_inputs.onnx (a[N,3] + b[N,3]) with the given tensors. */
static ait_status run_two(ait_tensor *a, ait_tensor *b, char *msg, size_t n)
{
    ait_error e = {0};
    ait_model *m;
    ait_session *s;
    assert_int_equal(ait_model_load(test_bad("two_inputs.onnx"), &m, &e), AIT_OK);
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    ait_tensor *in[2] = {a, b}, *out = NULL;
    ait_status st = ait_session_run(s, in, 2, &out, 1);
    snprintf(msg, n, "%s", ait_session_error(s));
    ait_tensor_free(out);
    ait_session_free(s);
    ait_model_free(m);
    return st;
}

static void test_bad_run_inputs(void **state)
{
    (void)state;
    char msg[1024];
    int64_t d23[2] = {2, 3}, d33[2] = {3, 3}, d32[2] = {3, 2};
    ait_tensor *a = ait_tensor_create(AIT_F32, 2, d23), *b = ait_tensor_create(AIT_F32, 2, d23);
    ait_tensor *b_n3 = ait_tensor_create(AIT_F32, 2, d33), *b_32 = ait_tensor_create(AIT_F32, 2, d32);
    ait_tensor *b_int = ait_tensor_create(AIT_I32, 2, d23);
    assert_int_equal(run_two(a, b, msg, sizeof msg), AIT_OK);
    assert_int_equal(run_two(a, NULL, msg, sizeof msg), AIT_E_INVALID_ARG);
    assert_non_null(strstr(msg, "input 'b' is missing"));
    assert_int_equal(run_two(a, b_int, msg, sizeof msg), AIT_E_DTYPE);
    assert_non_null(strstr(msg, "'b' must be float32, got int32"));
    assert_int_equal(run_two(a, b_32, msg, sizeof msg), AIT_E_SHAPE);
    assert_non_null(strstr(msg, "must have shape [N,3], got [3,2]"));
    assert_int_equal(run_two(a, b_n3, msg, sizeof msg), AIT_E_SHAPE);
    assert_non_null(strstr(msg, "dimension 'N' is 3 in input 'b' but 2"));
    ait_tensor_free(a);
    ait_tensor_free(b);
    ait_tensor_free(b_n3);
    ait_tensor_free(b_32);
    ait_tensor_free(b_int);
}

static void test_runtime_errors(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m;
    ait_session *s;
    assert_int_equal(ait_model_load(test_bad("gather_oob.onnx"), &m, &e), AIT_OK);
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    int64_t one = 1, idx = 7;
    ait_tensor *in = ait_tensor_wrap(AIT_I64, 1, &one, &idx), *out = NULL;
    assert_int_not_equal(ait_session_run(s, &in, 1, &out, 1), AIT_OK);
    assert_null(out);
    assert_non_null(strstr(ait_session_error(s), "node 'gather' (Gather)"));
    idx = 3; /* the session recovers after a failed run */
    assert_int_equal(ait_session_run(s, &in, 1, &out, 1), AIT_OK);
    ait_tensor_free(out);
    ait_tensor_free(in);
    ait_session_free(s);
    ait_model_free(m);

    assert_int_equal(ait_model_load(test_bad("bad_reshape.onnx"), &m, &e), AIT_OK);
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    int64_t d23[2] = {2, 3};
    in = ait_tensor_create(AIT_F32, 2, d23);
    assert_int_not_equal(ait_session_run(s, &in, 1, &out, 1), AIT_OK);
    assert_non_null(strstr(ait_session_error(s), "node 'reshape' (Reshape)"));
    ait_tensor_free(in);
    ait_session_free(s);
    ait_model_free(m);
}

/* ai.onnx.ml nodes with bad attributes: refused at load (at_load) or at the
 * first run of x [2,3], with the message; a cycle in a tree never hangs. */
static void test_ml_errors(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        bool at_load;
        const char *needle;
    } cases[] = {
        {"ml_tree_child_oob.onnx", 0, "true branch goes to node id 5, which tree 0 does not have"},
        {"ml_tree_cycle.onnx", 0, "the trees have a cycle through node 1"},
        {"ml_tree_cycle_all.onnx", 0, "every node is some node's child"},
        {"ml_tree_dup_node.onnx", 0, "node id 1 appears twice in tree 0"},
        {"ml_tree_weight_not_leaf.onnx", 0, "which is not a leaf"},
        {"ml_tree_target_oob.onnx", 0, "target weight 0 is for target 3; there are 1"},
        {"ml_tree_feature_oob.onnx", 0, "a node reads feature 9 but X has 3 features"},
        {"ml_tree_bad_mode.onnx", 0, "node 0 has mode 'BRANCH_SOMETIMES'"},
        {"ml_tree_removed.onnx", 1, "was deprecated (removed) in ai.onnx.ml opset 5"},
        {"ml_tree_labels_both.onnx", 0, "attributes 'classlabels_strings' and "
                                        "'classlabels_int64s' are both given; one at most"},
        {"ml_tree_string_labels_one.onnx", 0, "classlabels_strings must list 2 classes or more, "
                                              "not 1"},
        {"ml_te5_cycle.onnx", 0, "the trees have a cycle through node 0"},
        {"ml_te5_leaf_oob.onnx", 0, "its false branch goes to leaf 7; there are 2"},
        {"ml_te5_root_oob.onnx", 0, "tree_roots[0] is -1"},
        {"ml_te5_member_missing.onnx", 0, "membership_values has no set left for it"},
        {"ml_te5_bad_mode.onnx", 0, "node 1 has mode 9"},
        {"ml_te5_lengths.onnx", 0, "attribute 'nodes_trueleafs' has 1 values; 2 expected"},
        {"ml_te5_aggregate.onnx", 0, "aggregate_function 7 is not one of"},
        {"ml_linear_coef_count.onnx", 0, "coefficients has 4 values; 1 targets x 3 features"},
        {"ml_linear_post.onnx", 0, "post_transform 'SQUASH' is not one of NONE, SOFTMAX"},
        {"ml_linear_labels.onnx", 0, "classlabels_ints has 3 labels for 2 classes"},
        {"ml_svm_vectors.onnx", 0, "support_vectors has 5 values; 2 vectors x 3 features"},
        {"ml_svm_kernel.onnx", 0, "kernel_type 'CUBIC' is not one of LINEAR, POLY, RBF, SIGMOID"},
        {"ml_no_import_binarizer.onnx", 1, "of domain 'ai.onnx.ml', which the model does not "
                                           "import"},
        {"ml_label_encoder_dtype.onnx", 0, "X is float32 but the keys are int64"},
        {"ml_label_encoder_strings_count.onnx", 0, "2 keys but 1 values"},
        {"ml_label_encoder_keys_both.onnx", 0, "exactly one of keys_floats, keys_int64s, "
                                               "keys_strings must be given"},
        {"ml_label_encoder_string_keys_float_x.onnx", 0, "X is float32 but the keys are string"},
        {"ml_label_encoder_default_tensor.onnx", 0, "default_tensor must hold one string"},
        {"ml_label_encoder_v1_float_x.onnx", 0, "X has unsupported dtype float32"},
        {"ml_array_feature_oob.onnx", 0, "index 5 is out of range for the last axis of X (3)"},
        {"ml_category_mapper_count.onnx", 0, "attribute 'cats_int64s' has 1 values; 2 expected"},
        {"ml_category_mapper_float_x.onnx", 0, "X has unsupported dtype float32"},
        {"ml_one_hot_cats_both.onnx", 0, "exactly one of cats_int64s and cats_strings"},
        {"ml_one_hot_strings_float_x.onnx", 0, "X is float32; cats_strings needs strings"},
        {"ml_one_hot_not_category.onnx", 0, "'pink' is not a category and zeros is 0"},
        {"ml_zipmap_labels_both.onnx", 0, "attributes 'classlabels_strings' and "
                                          "'classlabels_int64s' are both given"},
        {"ml_zipmap_label_count.onnx", 0, "X has 3 columns but classlabels_int64s lists 2 labels"},
        {"ml_dictvectorizer_vocab_both.onnx", 0, "exactly one of string_vocabulary and "
                                                 "int64_vocabulary must be given"},
        {"ml_castmap_string_keys.onnx", 0, "the map's keys must be int64, not string"},
        {"ml_scaler_count.onnx", 0, "offset (2 values) and scale (1) must each have 1 value"},
    };
    int64_t d23[2] = {2, 3};
    float x[6] = {0, 1, 2, 3, 4, 5};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ait_error e = {0};
        ait_model *m = NULL;
        ait_session *s = NULL;
        ait_status st = ait_model_load(test_bad(cases[i].file), &m, &e);
        const char *msg = e.msg;
        if (st == AIT_OK) st = ait_session_create(m, NULL, &s, &e);
        if (st == AIT_OK) {
            ait_tensor *in = ait_tensor_wrap(AIT_F32, 2, d23, x), *out[2] = {NULL, NULL};
            st = ait_session_run(s, &in, 1, out, ait_model_output_count(m));
            msg = ait_session_error(s);
            ait_tensor_free(in);
            ait_tensor_free(out[0]);
            ait_tensor_free(out[1]);
        }
        if (st == AIT_OK || !strstr(msg, cases[i].needle) || (cases[i].at_load && m))
            fail_msg("%s: got %s '%s', expected a failure%s containing '%s'", cases[i].file,
                     ait_status_string(st), msg, cases[i].at_load ? " at load" : "",
                     cases[i].needle);
        ait_session_free(s);
        ait_model_free(m);
    }
    /* The good TreeEnsemble the bad ones are made from runs. */
    ait_error e = {0};
    ait_model *m;
    ait_session *s;
    assert_int_equal(ait_model_load(test_bad("ml_te5_ok.onnx"), &m, &e), AIT_OK);
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    ait_tensor *in = ait_tensor_wrap(AIT_F32, 2, d23, x), *out = NULL;
    assert_int_equal(ait_session_run(s, &in, 1, &out, 1), AIT_OK);
    /* x0 <= 0.5 goes on to x1 <= 0.5 (false: leaf 1, 2), else leaf 0 (1) */
    const float *y = out->data;
    assert_float_equal(y[0], 2.0f, 0);
    assert_float_equal(y[1], 1.0f, 0);
    ait_tensor_free(out);
    ait_tensor_free(in);
    ait_session_free(s);
    ait_model_free(m);
}

static void test_sequences(void **state)
{
    (void)state;
    int64_t d2[1] = {2};
    float v[2] = {1, 2};
    ait_tensor *item = ait_tensor_wrap(AIT_F32, 1, d2, v), *seq = ait_sequence_create(AIT_F32);
    ait_tensor *wrong = ait_tensor_create(AIT_I64, 1, d2), *none = ait_tensor_none();
    assert_int_equal(ait_sequence_append(seq, item), AIT_OK);
    assert_int_equal(ait_sequence_append(seq, item), AIT_OK);
    assert_int_equal(ait_sequence_append(seq, wrong), AIT_E_INVALID_ARG);
    assert_true(ait_tensor_is_sequence(seq));
    assert_int_equal(ait_sequence_length(seq), 2);
    v[0] = 7; /* items are copies */
    assert_float_equal(((const float *)ait_sequence_item(seq, 1)->data)[0], 1.0f, 0);
    assert_null(ait_sequence_item(seq, 2));
    assert_true(ait_tensor_is_none(none));
    assert_int_equal(ait_tensor_numel(seq), 0);
    /* A sequence or a none where the model wants a tensor is refused. */
    char msg[1024];
    int64_t d23[2] = {2, 3};
    ait_tensor *a = ait_tensor_create(AIT_F32, 2, d23);
    assert_int_equal(run_two(a, seq, msg, sizeof msg), AIT_E_INVALID_ARG);
    assert_non_null(strstr(msg, "'b' must be a tensor, got a sequence"));
    assert_int_equal(run_two(a, none, msg, sizeof msg), AIT_E_INVALID_ARG);
    assert_non_null(strstr(msg, "'b' is none but not optional"));
    ait_tensor_free(a);
    ait_tensor_free(item);
    ait_tensor_free(seq);
    ait_tensor_free(wrong);
    ait_tensor_free(none);
}

static void test_npy(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_tensor *t = NULL;
    assert_int_equal(ait_tensor_load_npy(test_bad("good.npy"), &t, &e), AIT_OK);
    assert_int_equal(ait_tensor_rank(t), 2);
    assert_int_equal(ait_tensor_dims(t)[1], 3);
    assert_float_equal(((float *)ait_tensor_data(t))[5], 5.0f, 0);
    char out[4096];
    snprintf(out, sizeof out, "%s/roundtrip.npy", dir);
    assert_int_equal(ait_tensor_save_npy(out, t, &e), AIT_OK);
    ait_tensor *u = NULL;
    assert_int_equal(ait_tensor_load_npy(out, &u, &e), AIT_OK);
    assert_memory_equal(ait_tensor_data(t), ait_tensor_data(u), 24);
    ait_tensor_free(t);
    ait_tensor_free(u);
    assert_int_equal(ait_tensor_load_npy(test_bad("truncated.npy"), &t, &e), AIT_E_PARSE);
    assert_non_null(strstr(e.msg, "truncated"));
    assert_int_equal(ait_tensor_load_npy(test_bad("badmagic.npy"), &t, &e), AIT_E_PARSE);
    assert_int_equal(ait_tensor_load_npy(test_bad("bigendian.npy"), &t, &e), AIT_E_UNSUPPORTED);
    assert_int_equal(ait_tensor_load_npy(test_bad("fortran.npy"), &t, &e), AIT_E_UNSUPPORTED);
    assert_null(t);
    /* A memory limit: good.npy's 2x3 float32 declare 24 bytes. */
    assert_int_equal(ait_tensor_load_npy_max(test_bad("good.npy"), 23, &t, &e), AIT_E_OVERFLOW);
    assert_null(t);
    assert_non_null(strstr(e.msg, "good.npy: the array declares 24 bytes (float32, 6 elements), "
                                  "more than the limit of 23 bytes"));
    assert_int_equal(ait_tensor_load_npy_max(test_bad("good.npy"), 24, &t, &e), AIT_OK);
    assert_float_equal(((float *)ait_tensor_data(t))[5], 5.0f, 0);
    ait_tensor_free(t);
    /* The limit is checked on the header before the data: a truncated file
     * over the limit says so, not that it is truncated. */
    assert_int_equal(ait_tensor_load_npy_max(test_bad("truncated.npy"), 1, &t, &e), AIT_E_OVERFLOW);
    assert_non_null(strstr(e.msg, "more than the limit of 1 bytes"));
}

static void test_npz(void **state)
{
    (void)state;
    ait_error e = {0};
    npz *z;
    assert_int_equal(npz_load(test_bad("good.npz"), &z, &e), AIT_OK);
    assert_int_equal(z->n, 1);
    assert_string_equal(z->names[0], "x");
    npz_free(z);
    assert_int_equal(npz_load(test_bad("compressed.npz"), &z, &e), AIT_OK);
    assert_float_equal(((float *)z->arrays[0]->data)[5], 2.0f, 0);
    char out[4096];
    snprintf(out, sizeof out, "%s/roundtrip.npz", dir);
    const char *names[1] = {"y"};
    assert_int_equal(npz_save(out, 1, names, (const tensor *const *)z->arrays, &e), AIT_OK);
    npz_free(z);
    assert_int_equal(npz_load(out, &z, &e), AIT_OK);
    assert_string_equal(z->names[0], "y");
    assert_float_equal(((float *)z->arrays[0]->data)[0], 2.0f, 0);
    npz_free(z);
    /* A memory limit, on a stored and on a deflated entry (before inflating it). */
    assert_int_equal(npz_load_max(test_bad("good.npz"), 23, &z, &e), AIT_E_OVERFLOW);
    assert_null(z);
    assert_non_null(strstr(e.msg, "good.npz: array 'x': the array declares 24 bytes"));
    assert_int_equal(npz_load_max(test_bad("compressed.npz"), 23, &z, &e), AIT_E_OVERFLOW);
    assert_non_null(strstr(e.msg, "compressed.npz: array 'x': the array declares 24 bytes"));
    assert_non_null(strstr(e.msg, "limit of 23 bytes"));
    assert_int_equal(npz_load_max(test_bad("compressed.npz"), 24, &z, &e), AIT_OK);
    npz_free(z);
    assert_int_not_equal(npz_load(test_bad("truncated.npz"), &z, &e), AIT_OK);
    assert_int_not_equal(npz_load(test_bad("good.npy"), &z, &e), AIT_OK);
}

/* ait_inspect_options.max_input_bytes bounds each sample array it reads. */
static void test_inspect_max_input(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m = NULL;
    assert_int_equal(ait_model_load(test_bad("good.onnx"), &m, &e), AIT_OK);
    ait_inspect_options io = {.size = sizeof io, .data_path = test_bad("good.npz"), .runs = 1,
                              .max_input_bytes = 23};
    ait_inspection *h = (ait_inspection *)1;
    assert_int_equal(ait_inspect(m, &io, &h, &e), AIT_E_OVERFLOW);
    assert_null(h);
    assert_non_null(strstr(e.msg, "good.npz: array 'x': the array declares 24 bytes"));
    assert_non_null(strstr(e.msg, "limit of 23 bytes"));
    io.max_input_bytes = 24;
    assert_int_equal(ait_inspect(m, &io, &h, &e), AIT_OK);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* A one-node model on initializers whose op refuses its input: at load
 * (constant folding) or at the first run, with the reason in the message. */
static void op_fails(const char *file, const char *needle)
{
    ait_error e = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    const char *msg = e.msg;
    if (ait_model_load(test_bad(file), &m, &e) == AIT_OK) {
        assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
        ait_tensor *out[2] = {NULL, NULL};
        assert_int_not_equal(ait_session_run(s, NULL, 0, out, 1), AIT_OK);
        msg = ait_session_error(s);
    }
    if (!strstr(msg, needle)) fail_msg("%s: got '%s', expected '%s'", file, msg, needle);
    ait_session_free(s);
    ait_model_free(m);
}

/* The ops of opsets 23 to 28: heads that do not divide, caches that do not
 * fit, widths that differ, indices out of range. */
static void test_newer_ops(void **state)
{
    (void)state;
    op_fails("bad_attn_heads.onnx", "3 query heads are not a multiple of 2 KV heads");
    op_fails("bad_attn_no_heads.onnx", "3-D inputs need attribute q_num_heads");
    op_fails("bad_attn_cache.onnx", "past_value has shape [1,2,6,4]");
    op_fails("bad_attn_nonpad_23.onnx", "nonpad_kv_seqlen needs Attention version 24");
    op_fails("bad_attn_mask.onnx", "attn_mask has shape [2,5]");
    op_fails("bad_rotary_odd.onnx", "rotary_embedding_dim 3 must be even");
    op_fails("bad_rotary_pos.onnx", "position_ids[0][1] = 9 is outside");
    op_fails("bad_bitcast_width.onnx", "the widths must be equal");
    op_fails("bad_tscat_axis0.onnx", "axis cannot be 0");
    op_fails("bad_tscat_index.onnx", "write_indices[1] = 3: linear mode");
    op_fails("bad_linattn_heads.onnx", "q_num_heads 3 is not a multiple of kv_num_heads 2");
    op_fails("bad_linattn_decay.onnx", "update_rule 'gated' needs input decay");
    op_fails("bad_causalconv_weight.onnx", "weight has shape [2,2,3]");
    op_fails("bad_swiglu_shape.onnx", "must have the same shape");
    op_fails("bad_rms_scale.onnx", "does not broadcast");
    op_fails("bad_flex_mod.onnx", "score_mod gave a float32 tensor of shape [1,1,2,6]");
}

static void test_shape_overflow(void **state)
{
    (void)state;
    int64_t n, big[3] = {1 << 30, 1 << 30, 1 << 30}, neg[2] = {2, -1};
    assert_int_equal(shape_numel(big, 3, AIT_F32, &n, "t", NULL), AIT_E_OVERFLOW);
    assert_int_equal(shape_numel(neg, 2, AIT_F32, &n, "t", NULL), AIT_E_SHAPE);
    assert_null(ait_tensor_create(AIT_F32, 3, big));
    assert_null(ait_tensor_create(AIT_UNDEFINED, 0, NULL));
    assert_null(ait_tensor_create(AIT_STRING, 3, big)); /* 8-byte pointers overflow too */
}

static void test_half(void **state)
{
    (void)state;
    /* Every float16 survives a round trip through float32 (NaNs stay NaN). */
    for (uint32_t h = 0; h < 65536; h++) {
        float f = f16_to_f32((uint16_t)h);
        if (isnan(f)) assert_true(isnan(f16_to_f32(f32_to_f16(f))));
        else assert_int_equal(f32_to_f16(f), h);
    }
    assert_int_equal(f32_to_f16(65520.0f), 0x7c00); /* rounds to inf */
    assert_int_equal(f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* tie to even */
    assert_int_equal(f32_to_bf16(1.0f), 0x3f80);
    assert_float_equal(bf16_to_f32(0x4049), 3.140625f, 0);
}

int main(void)
{
    dir = getenv("AIT_BAD_DIR");
    if (!dir) {
        fprintf(stderr, "set AIT_BAD_DIR to the output of tests/unit/make_bad_models.py\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corrupt_models), cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_external_data),  cmocka_unit_test(test_tolerated),
        cmocka_unit_test(test_declared_not_stored),
        cmocka_unit_test(test_bad_run_inputs), cmocka_unit_test(test_runtime_errors),
        cmocka_unit_test(test_ml_errors),
        cmocka_unit_test(test_sequences),      cmocka_unit_test(test_npy),
        cmocka_unit_test(test_npz),
        cmocka_unit_test(test_inspect_max_input),
        cmocka_unit_test(test_shape_overflow), cmocka_unit_test(test_half),
        cmocka_unit_test(test_newer_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
