/* String tensors through the public API: create, set, run a model with a
 * string input and string outputs (StringConcat with a string initializer,
 * Identity, Transpose, RegexFullMatch), free; wrapped tensors stay the
 * caller's; refusals: an invalid RE2 pattern, invalid UTF-8 where a regex
 * reads it, and an arithmetic op given strings. ASan's leak check covers the
 * ownership. The models below are serialised ONNX, made with onnx's helper:
 *   str_model: x string[2,2]; c = StringConcat(x, suf = ["_x", "_é"]);
 *              y = Identity(c); m = RegexFullMatch(c, pattern "\w+_é");
 *              t = Transpose(c); opset 20
 *   bad_regex_model: m = RegexFullMatch(x string[1], pattern "(a")
 *   add_model: y = Add(x, x), x string[1]
 *   cast_model: y = Cast(x string[1], to float); norm_model: y =
 *              StringNormalizer(x, case_change_action "TITLE")
 *   nul_model, raw_model: y = Identity(k), k a string initializer whose
 *              string_data holds "a\0b" / whose raw_data holds 8 bytes
 * Also: .npy unicode arrays both ways, and an artifact of str_model (tuned,
 * saved, loaded: the string initializer comes back with the model). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ait.h"
#include "io/npy.h"
#include "testutil.h"

static const unsigned char str_model[] = {
    0x08, 0x09, 0x3a, 0xd9, 0x01, 0x0a, 0x19, 0x0a, 0x01, 0x78, 0x0a, 0x03, 0x73, 0x75, 0x66, 0x12,
    0x01, 0x63, 0x22, 0x0c, 0x53, 0x74, 0x72, 0x69, 0x6e, 0x67, 0x43, 0x6f, 0x6e, 0x63, 0x61, 0x74,
    0x0a, 0x10, 0x0a, 0x01, 0x63, 0x12, 0x01, 0x79, 0x22, 0x08, 0x49, 0x64, 0x65, 0x6e, 0x74, 0x69,
    0x74, 0x79, 0x0a, 0x2c, 0x0a, 0x01, 0x63, 0x12, 0x01, 0x6d, 0x22, 0x0e, 0x52, 0x65, 0x67, 0x65,
    0x78, 0x46, 0x75, 0x6c, 0x6c, 0x4d, 0x61, 0x74, 0x63, 0x68, 0x2a, 0x14, 0x0a, 0x07, 0x70, 0x61,
    0x74, 0x74, 0x65, 0x72, 0x6e, 0x22, 0x06, 0x5c, 0x77, 0x2b, 0x5f, 0xc3, 0xa9, 0xa0, 0x01, 0x03,
    0x0a, 0x11, 0x0a, 0x01, 0x63, 0x12, 0x01, 0x74, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70,
    0x6f, 0x73, 0x65, 0x12, 0x01, 0x67, 0x2a, 0x12, 0x08, 0x02, 0x10, 0x08, 0x32, 0x02, 0x5f, 0x78,
    0x32, 0x03, 0x5f, 0xc3, 0xa9, 0x42, 0x03, 0x73, 0x75, 0x66, 0x5a, 0x13, 0x0a, 0x01, 0x78, 0x12,
    0x0e, 0x0a, 0x0c, 0x08, 0x08, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x02, 0x62,
    0x13, 0x0a, 0x01, 0x79, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x08, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x02,
    0x0a, 0x02, 0x08, 0x02, 0x62, 0x13, 0x0a, 0x01, 0x6d, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x09, 0x12,
    0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x02, 0x62, 0x13, 0x0a, 0x01, 0x74, 0x12, 0x0e,
    0x0a, 0x0c, 0x08, 0x08, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x02, 0x42, 0x04,
    0x0a, 0x00, 0x10, 0x14,
};
static const unsigned char bad_regex_model[] = {
    0x08, 0x09, 0x3a, 0x4f, 0x0a, 0x28, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x6d, 0x22, 0x0e, 0x52, 0x65,
    0x67, 0x65, 0x78, 0x46, 0x75, 0x6c, 0x6c, 0x4d, 0x61, 0x74, 0x63, 0x68, 0x2a, 0x10, 0x0a, 0x07,
    0x70, 0x61, 0x74, 0x74, 0x65, 0x72, 0x6e, 0x22, 0x02, 0x28, 0x61, 0xa0, 0x01, 0x03, 0x12, 0x01,
    0x67, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x08, 0x12, 0x04, 0x0a, 0x02,
    0x08, 0x01, 0x62, 0x0f, 0x0a, 0x01, 0x6d, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x09, 0x12, 0x04, 0x0a,
    0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x14,
};
static const unsigned char add_model[] = {
    0x08, 0x09, 0x3a, 0x35, 0x0a, 0x0e, 0x0a, 0x01, 0x78, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x22,
    0x03, 0x41, 0x64, 0x64, 0x12, 0x01, 0x67, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08,
    0x08, 0x08, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a, 0x0a,
    0x08, 0x08, 0x08, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x14,
};
static const unsigned char nul_model[] = {
    0x08, 0x09, 0x3a, 0x34, 0x0a, 0x10, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x79, 0x22, 0x08, 0x49, 0x64,
    0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, 0x12, 0x01, 0x67, 0x2a, 0x0c, 0x08, 0x01, 0x10, 0x08, 0x32,
    0x03, 0x61, 0x00, 0x62, 0x42, 0x01, 0x6b, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a, 0x0a, 0x08,
    0x08, 0x08, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x14,
};
static const unsigned char raw_model[] = {
    0x08, 0x09, 0x3a, 0x39, 0x0a, 0x10, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x79, 0x22, 0x08, 0x49, 0x64,
    0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, 0x12, 0x01, 0x67, 0x2a, 0x11, 0x08, 0x01, 0x10, 0x08, 0x42,
    0x01, 0x6b, 0x4a, 0x08, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x62, 0x0f, 0x0a, 0x01,
    0x79, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x08, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x42, 0x04, 0x0a,
    0x00, 0x10, 0x14,
};
static const unsigned char cast_model[] = {
    0x08, 0x09, 0x3a, 0x3e, 0x0a, 0x17, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x22, 0x04, 0x43, 0x61,
    0x73, 0x74, 0x2a, 0x09, 0x0a, 0x02, 0x74, 0x6f, 0x18, 0x01, 0xa0, 0x01, 0x02, 0x12, 0x01, 0x67,
    0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x08, 0x12, 0x04, 0x0a, 0x02, 0x08,
    0x01, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02,
    0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x14,
};
static const unsigned char norm_model[] = {
    0x08, 0x09, 0x3a, 0x5f, 0x0a, 0x38, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x22, 0x10, 0x53, 0x74,
    0x72, 0x69, 0x6e, 0x67, 0x4e, 0x6f, 0x72, 0x6d, 0x61, 0x6c, 0x69, 0x7a, 0x65, 0x72, 0x2a, 0x1e,
    0x0a, 0x12, 0x63, 0x61, 0x73, 0x65, 0x5f, 0x63, 0x68, 0x61, 0x6e, 0x67, 0x65, 0x5f, 0x61, 0x63,
    0x74, 0x69, 0x6f, 0x6e, 0x22, 0x05, 0x54, 0x49, 0x54, 0x4c, 0x45, 0xa0, 0x01, 0x03, 0x12, 0x01,
    0x67, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x08, 0x12, 0x04, 0x0a, 0x02,
    0x08, 0x01, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x08, 0x12, 0x04, 0x0a,
    0x02, 0x08, 0x01, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x14,
};

static ait_session *session_of(const unsigned char *bytes, size_t len, ait_model **m)
{
    ait_error e = {0};
    assert_int_equal(ait_model_load_memory(bytes, len, "strings", m, &e), AIT_OK);
    ait_session *s = NULL;
    assert_int_equal(ait_session_create(*m, NULL, &s, &e), AIT_OK);
    return s;
}

static void test_run_strings(void **state)
{
    (void)state;
    ait_model *m;
    ait_session *s = session_of(str_model, sizeof str_model, &m);
    const int64_t dims[2] = {2, 2};
    ait_tensor *x = ait_tensor_create(AIT_STRING, 2, dims);
    assert_non_null(x);
    assert_int_equal(ait_tensor_nbytes(x), 4 * sizeof(char *));
    assert_string_equal(ait_tensor_string(x, 2), ""); /* created empty */
    const char *in[4] = {"ab", "日本", "", "c_d"};
    for (int i = 0; i < 4; i++) assert_int_equal(ait_tensor_set_string(x, i, in[i]), AIT_OK);
    assert_int_equal(ait_tensor_set_string(x, 0, "ab"), AIT_OK); /* replaces, frees the old */
    assert_int_not_equal(ait_tensor_set_string(x, 4, "out"), AIT_OK);
    ait_tensor *out[3] = {0};
    for (int r = 0; r < 3; r++) { /* buffers reused across runs */
        assert_int_equal(ait_session_run(s, &x, 1, out, 3), AIT_OK);
        const char *y[4] = {"ab_x", "日本_é", "_x", "c_d_é"};
        const char *t[4] = {"ab_x", "_x", "日本_é", "c_d_é"};
        const uint8_t mt[4] = {0, 0, 0, 1}; /* RE2's \w is ASCII */
        assert_int_equal(ait_tensor_dtype(out[0]), AIT_STRING);
        for (int i = 0; i < 4; i++) {
            assert_string_equal(ait_tensor_string(out[0], i), y[i]);
            assert_string_equal(ait_tensor_string(out[2], i), t[i]);
            assert_int_equal(((uint8_t *)ait_tensor_data(out[1]))[i], mt[i]);
        }
        char **raw = ait_tensor_data(out[0]);
        assert_string_equal(raw[1], "日本_é");
        for (int j = 0; j < 3; j++) ait_tensor_free(out[j]);
    }
    ait_tensor_free(x);

    /* A wrapped array: the caller's strings, never freed by ait. */
    char a0[] = "p", a1[] = "q";
    char *arr[4] = {a0, NULL, a1, a0};
    ait_tensor *w = ait_tensor_wrap(AIT_STRING, 2, dims, arr);
    assert_non_null(w);
    assert_int_not_equal(ait_tensor_set_string(w, 0, "no"), AIT_OK);
    assert_int_equal(ait_session_run(s, &w, 1, out, 3), AIT_OK);
    assert_string_equal(ait_tensor_string(out[0], 1), "_é");
    assert_string_equal(ait_tensor_string(out[0], 3), "p_é");
    for (int j = 0; j < 3; j++) ait_tensor_free(out[j]);
    ait_tensor_free(w);
    assert_string_equal(a0, "p");

    /* Invalid UTF-8 reaching RegexFullMatch is refused. */
    char bad[] = "\xff\xfe";
    char *barr[4] = {bad, NULL, NULL, NULL};
    w = ait_tensor_wrap(AIT_STRING, 2, dims, barr);
    assert_int_not_equal(ait_session_run(s, &w, 1, out, 3), AIT_OK);
    assert_non_null(strstr(ait_session_error(s), "not valid UTF-8"));
    ait_tensor_free(w);
    ait_session_free(s);
    ait_model_free(m);
}

static void run_fails(const unsigned char *bytes, size_t len, const char *want)
{
    ait_model *m;
    ait_session *s = session_of(bytes, len, &m);
    const int64_t d = 1;
    ait_tensor *x = ait_tensor_create(AIT_STRING, 1, &d), *out = NULL;
    assert_int_equal(ait_tensor_set_string(x, 0, "aaa"), AIT_OK);
    assert_int_not_equal(ait_session_run(s, &x, 1, &out, 1), AIT_OK);
    assert_null(out);
    if (!strstr(ait_session_error(s), want))
        fail_msg("error '%s' lacks '%s'", ait_session_error(s), want);
    ait_tensor_free(x);
    ait_session_free(s);
    ait_model_free(m);
}

static void test_bad_regex(void **state)
{
    (void)state;
    run_fails(bad_regex_model, sizeof bad_regex_model, "pattern '(a' is not a valid RE2");
}

static void test_arithmetic_refused(void **state)
{
    (void)state;
    run_fails(add_model, sizeof add_model, "string tensor; the op does not take strings");
}

static void test_bad_text_and_attrs(void **state)
{
    (void)state;
    run_fails(cast_model, sizeof cast_model, "element 0 ('aaa') is not a number");
    run_fails(norm_model, sizeof norm_model,
              "case_change_action 'TITLE' is not LOWER, UPPER or NONE");
}

static void test_reader_refusals(void **state)
{
    (void)state;
    ait_model *m = NULL;
    ait_error e = {0};
    assert_int_not_equal(ait_model_load_memory(nul_model, sizeof nul_model, "nul", &m, &e), AIT_OK);
    if (!strstr(e.msg, "string 0 contains a NUL byte")) fail_msg("%s", e.msg);
    assert_int_not_equal(ait_model_load_memory(raw_model, sizeof raw_model, "raw", &m, &e), AIT_OK);
    if (!strstr(e.msg, "must keep its strings in string_data")) fail_msg("%s", e.msg);
    assert_null(m);
}

static void test_npy_unicode(void **state)
{
    (void)state;
    const int64_t d[2] = {1, 3};
    ait_tensor *t = ait_tensor_create(AIT_STRING, 2, d);
    assert_int_equal(ait_tensor_set_string(t, 0, "日本語"), AIT_OK);
    assert_int_equal(ait_tensor_set_string(t, 2, "x"), AIT_OK);
    uint8_t *buf;
    size_t len;
    ait_error e = {0};
    assert_int_equal(npy_serialise(t, &buf, &len, &e), AIT_OK);
    assert_non_null(memmem(buf, len, "'<U3'", 5)); /* the widest element: 3 code points */
    tensor *back = NULL;
    assert_int_equal(npy_parse(buf, len, &back, "npy", &e), AIT_OK);
    assert_int_equal(back->dtype, AIT_STRING);
    assert_int_equal(back->rank, 2);
    assert_string_equal(ait_tensor_string(back, 0), "日本語");
    assert_string_equal(ait_tensor_string(back, 1), "");
    assert_string_equal(ait_tensor_string(back, 2), "x");
    ait_tensor_free(back);
    /* A code point above U+10FFFF is refused. */
    size_t at = len - 3 * 3 * 4;
    buf[at + 3] = 0x7f;
    assert_int_not_equal(npy_parse(buf, len, &back, "npy", &e), AIT_OK);
    if (!strstr(e.msg, "not Unicode")) fail_msg("%s", e.msg);
    free(buf);
    ait_tensor_free(t);
}

static void test_artifact_round_trip(void **state)
{
    (void)state;
    ait_model *m, *t;
    ait_error e = {0};
    char *dir = test_tmp_dir("strings"), art[512], onnx[512];
    snprintf(onnx, sizeof onnx, "%s/str.onnx", dir); /* the artifact embeds the model's file */
    FILE *f = fopen(onnx, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(str_model, 1, sizeof str_model, f), sizeof str_model);
    fclose(f);
    if (ait_model_load(onnx, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *h;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_tune_options to = {.size = sizeof to, .warmup = 1, .window = 2, .cap = 3, .cv = 0.5};
    ait_tuning *tu;
    if (ait_tune(h, &to, &tu, &e) != AIT_OK) fail_msg("%s", e.msg);
    snprintf(art, sizeof art, "%s/str.ait", dir);
    if (ait_tuning_save(tu, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    if (ait_artifact_load(art, NULL, &t, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_session *s;
    assert_int_equal(ait_session_create(t, NULL, &s, &e), AIT_OK);
    const int64_t dims[2] = {2, 2};
    ait_tensor *x = ait_tensor_create(AIT_STRING, 2, dims), *out[3];
    assert_int_equal(ait_tensor_set_string(x, 3, "q"), AIT_OK);
    assert_int_equal(ait_session_run(s, &x, 1, out, 3), AIT_OK);
    assert_string_equal(ait_tensor_string(out[0], 0), "_x");
    assert_string_equal(ait_tensor_string(out[0], 3), "q_é");
    for (int j = 0; j < 3; j++) ait_tensor_free(out[j]);
    ait_tensor_free(x);
    ait_session_free(s);
    ait_model_free(t);
    ait_tuning_free(tu);
    ait_inspection_free(h);
    ait_model_free(m);
    remove(art);
    remove(onnx);
    remove(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_strings),
        cmocka_unit_test(test_bad_regex),
        cmocka_unit_test(test_arithmetic_refused),
        cmocka_unit_test(test_bad_text_and_attrs),
        cmocka_unit_test(test_reader_refusals),
        cmocka_unit_test(test_npy_unicode),
        cmocka_unit_test(test_artifact_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
