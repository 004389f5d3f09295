/* Opsets and op versions: the version table covers every registered op,
 * nodes resolve to the right version, models stamped with recent opsets (27,
 * 28) run with numpy's outputs, and versions, opsets and ops ait lacks are
 * refused with messages naming them. Models and expected outputs come from
 * tests/unit/make_opset_models.py (numpy, never ait), in $AIT_TEST_DATA/opsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "ait.h"
#include "io/file.h"
#include "io/npy.h"
#include "io/onnx.h"
#include "ops/bind.h"
#include "ops/op.h"

/* ---- the table ---- */

static void check_row(const op_def *d, void *arg)
{
    int *rows = arg;
    const op_versions *v = op_versions_find(d->domain, d->name);
    if (!v) fail_msg("op '%s' has no row in src/ops/versions.c", d->name);
    int n = 0;
    while (n < OP_MAX_VERSIONS && v->since[n]) n++;
    if (n == 0) fail_msg("op '%s' lists no since_version", d->name);
    for (int i = 1; i < n; i++)
        if (v->since[i] <= v->since[i - 1]) fail_msg("op '%s': since_versions not ascending", d->name);
    int upto = op_version_upto(v);
    bool listed = false;
    for (int i = 0; i < n; i++) listed |= v->since[i] == upto;
    if (!listed) fail_msg("op '%s': implements up to %d, not one of its versions", d->name, upto);
    if (v->since[n - 1] > OPSET_MAX) fail_msg("op '%s': version above OPSET_MAX", d->name);
    (*rows)++;
}

static void test_table(void **state)
{
    (void)state;
    int rows = 0;
    op_foreach(check_row, &rows);
    assert_true(rows > 150);
}

static const op_versions *row(const char *op)
{
    const op_versions *v = op_versions_find("", op);
    if (!v) fail_msg("no row for %s", op);
    return v;
}

static void test_resolve(void **state)
{
    (void)state;
    assert_int_equal(op_version_resolve(row("Conv"), 21), 11);
    assert_int_equal(op_version_resolve(row("Conv"), 22), 22);
    assert_int_equal(op_version_resolve(row("Conv"), 28), 22);
    assert_int_equal(op_version_resolve(row("Reshape"), 24), 24);
    assert_int_equal(op_version_resolve(row("Celu"), 27), 12);
    assert_int_equal(op_version_resolve(row("Celu"), 28), 28);
    assert_int_equal(op_version_resolve(row("Gelu"), 19), 0); /* added in 20 */
    assert_int_equal(op_version_resolve(op_versions_find("ai.onnx", "Relu"), 27), 14);
    assert_int_equal(op_version_upto(row("Relu")), 14);          /* default: newest <= 21 */
    assert_int_equal(op_version_upto(row("DequantizeLinear")), 25); /* marked: every version */
    const op_versions newer = {.name = "X", .since = {10, 23}};   /* an unmarked change after 21 */
    assert_int_equal(op_version_upto(&newer), 10);
    assert_int_equal(op_version_upto(row("Conv")), 22);          /* marked: types only */
    assert_int_equal(op_version_upto(row("Range")), 27);
    assert_non_null(op_versions_find("ai.onnx.preview.training", "Adam"));
    assert_null(op_versions_find("", "Adam"));
    assert_null(op_versions_find("", "FooBar"));
}

/* ---- node versions ---- */

typedef struct want {
    const char *node;
    int version;
} want;

/* Reads and binds model `rel` and checks each listed node's version. */
static void check_versions(const char *rel, const want *w, int n)
{
    const char *path = test_data(rel);
    ait_error e = {0};
    uint8_t *buf = NULL;
    size_t len = 0;
    onnx_model om;
    if (file_read_all(path, ONNX_MAX_MODEL_BYTES, &buf, &len, &e) != AIT_OK ||
        onnx_read(buf, len, path, NULL, false, false, &om, &e) != AIT_OK)
        fail_msg("%s", e.msg);
    free(buf);
    if (ops_bind(om.g, om.ml_opset, &e) != AIT_OK) fail_msg("%s", e.msg);
    for (int k = 0; k < n; k++) {
        int found = -1;
        for (int i = 0; i < om.g->n_nodes; i++)
            if (strcmp(om.g->nodes[i].name, w[k].node) == 0) found = om.g->nodes[i].version;
        if (found != w[k].version)
            fail_msg("%s: node '%s' resolved to version %d, expected %d", rel, w[k].node, found,
                     w[k].version);
    }
    onnx_model_clear(&om);
}

static void test_node_versions(void **state)
{
    (void)state;
    const want w27[] = {{"conv", 22}, {"act", 14},   {"reshape", 25}, {"matmul", 13},
                        {"add", 14},  {"range", 27}, {"add_range", 14}};
    check_versions("opsets/opset27.onnx", w27, 7);
    const want w28[] = {{"conv", 22}, {"act", 28}, {"reshape", 25}, {"range", 27}};
    check_versions("opsets/opset28.onnx", w28, 4);
    const want w21[] = {{"dq", 21}}, w23[] = {{"dq", 23}};
    check_versions("opsets/dequantize21.onnx", w21, 1);
    /* ai.onnx.ml nodes resolve against the model's ml opset. */
    const int le[4] = {1, 2, 2, 4};
    for (int v = 1; v <= 4; v++) {
        char rel[64];
        snprintf(rel, sizeof rel, "opsets/ml_label_encoder%d.onnx", v);
        const want w[] = {{"le", le[v - 1]}};
        check_versions(rel, w, 1);
    }
    check_versions("opsets/dequantize23.onnx", w23, 1);
}

/* ---- running recent opsets ---- */

static tensor *load_npy(const char *rel)
{
    ait_error e = {0};
    uint8_t *buf = NULL;
    size_t len = 0;
    tensor *t = NULL;
    if (file_read_all(test_data(rel), (size_t)1 << 30, &buf, &len, &e) != AIT_OK ||
        npy_parse(buf, len, &t, rel, &e) != AIT_OK)
        fail_msg("%s", e.msg);
    free(buf);
    return t;
}

/* Runs opsetN.onnx on opsetN_x.npy through the public API and compares with
 * numpy's opsetN_y.npy. */
static void run_against_numpy(int opset)
{
    char rel[64];
    snprintf(rel, sizeof rel, "opsets/opset%d.onnx", opset);
    ait_model *m = test_load(test_data(rel));
    snprintf(rel, sizeof rel, "opsets/opset%d_x.npy", opset);
    tensor *x = load_npy(rel);
    snprintf(rel, sizeof rel, "opsets/opset%d_y.npy", opset);
    tensor *want = load_npy(rel);
    ait_error e = {0};
    ait_session_options so = {.size = sizeof so, .threads = 1};
    ait_session *s = NULL;
    if (ait_session_create(m, &so, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_tensor *got = NULL;
    if (ait_session_run(s, &x, 1, &got, 1) != AIT_OK) fail_msg("%s", ait_session_error(s));
    assert_int_equal(ait_tensor_dtype(got), AIT_F32);
    double err = test_max_err(&got, &want, 1);
    if (!(err < 1e-5)) fail_msg("opset %d: outputs differ from numpy's by %g", opset, err);
    ait_tensor_free(got);
    ait_session_free(s);
    ait_model_free(m);
    test_tensor_free(x);
    test_tensor_free(want);
}

static void test_run_opset27(void **state)
{
    (void)state;
    run_against_numpy(27);
}

static void test_run_opset28(void **state)
{
    (void)state;
    run_against_numpy(28);
}

/* ---- refusals ---- */

static void load_fails(const char *rel, ait_status code, const char *needle)
{
    const char *path = test_data(rel);
    ait_error e = {0};
    ait_model *m = (ait_model *)1;
    ait_status s = ait_model_load(path, &m, &e);
    if (s != code || !strstr(e.msg, needle))
        fail_msg("%s: got %s '%s', expected %s containing '%s'", rel, ait_status_string(s), e.msg,
                 ait_status_string(code), needle);
    assert_null(m);
    assert_non_null(strstr(e.msg, path)); /* names the file */
}

static void loads(const char *rel)
{
    ait_model_free(test_load(test_data(rel)));
}

static void test_refused(void **state)
{
    (void)state;
    /* Every registered op implements all its versions today, so no model can
     * show the refusal of an unimplemented one (bind.c's bind_version). */
    loads("opsets/dequantize23.onnx");
    loads("opsets/dequantize21.onnx");
    load_fails("opsets/gelu19.onnx", AIT_E_UNSUPPORTED,
               "node 'gelu': op 'Gelu' does not exist in opset 19 (it was added in opset 20)");
    load_fails("opsets/relu29.onnx", AIT_E_UNSUPPORTED, "default-domain opset 29 is not supported");
    loads("opsets/relu28.onnx");
    load_fails("opsets/ml6.onnx", AIT_E_UNSUPPORTED, "ai.onnx.ml opset 6 is not supported (1 to 5)");
}

/* An ai.onnx.ml import with only default-domain nodes loads and runs, and
 * so does an ml node (Binarizer, threshold 0.5). */
static void run_ml(const char *rel, const float *want)
{
    ait_model *m = test_load(test_data(rel));
    ait_error e = {0};
    ait_session *s = NULL;
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    const float xs[3] = {-1.5f, 0.0f, 2.5f};
    int64_t dims[1] = {3};
    ait_tensor *x = ait_tensor_create(AIT_F32, 1, dims), *y = NULL;
    memcpy(ait_tensor_data(x), xs, sizeof xs);
    if (ait_session_run(s, &x, 1, &y, 1) != AIT_OK) fail_msg("%s", ait_session_error(s));
    const float *yd = ait_tensor_data(y);
    assert_true(yd[0] == want[0] && yd[1] == want[1] && yd[2] == want[2]);
    ait_tensor_free(x);
    ait_tensor_free(y);
    ait_session_free(s);
    ait_model_free(m);
}

static void test_ml_import(void **state)
{
    (void)state;
    run_ml("opsets/ml_import.onnx", (const float[3]){0.0f, 0.0f, 2.5f});
    run_ml("opsets/ml_node.onnx", (const float[3]){0.0f, 0.0f, 1.0f});
}

/* Cast-25 to float8e4m3fn: 0.5 is exact, 1000 saturates to 448 (0x7e). */
static void test_float8_cast(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("opsets/cast_float8.onnx"));
    ait_error e = {0};
    ait_session *s = NULL;
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    int64_t dims[1] = {2};
    ait_tensor *x = ait_tensor_create(AIT_F32, 1, dims), *y = NULL;
    float *xd = ait_tensor_data(x);
    xd[0] = 0.5f;
    xd[1] = 1000.0f;
    if (ait_session_run(s, &x, 1, &y, 1) != AIT_OK) fail_msg("%s", ait_session_error(s));
    assert_int_equal(ait_tensor_dtype(y), AIT_F8E4M3FN);
    const uint8_t *yd = ait_tensor_data(y);
    assert_int_equal(yd[0], 0x30);
    assert_int_equal(yd[1], 0x7e);
    ait_tensor_free(x);
    ait_tensor_free(y);
    ait_session_free(s);
    ait_model_free(m);
}

/* Range 27 with stash_type 10 rounds each step to float16, stash_type 1
 * once from float32: bit-exact checks (one-ulp float16 differences are
 * under the node-test runner's tolerance). The models come from
 * tests/spec/cases_range.py: 100 + i * 3.3 for 60 values. */
static void range_bits(const char *test, bool own)
{
    char rel[128];
    snprintf(rel, sizeof rel, "spec/%s/model.onnx", test);
    ait_model *m = test_load(test_data(rel));
    ait_session *s = NULL;
    ait_error e = {0};
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    float vals[3] = {100.0f, 298.0f, 3.3f};
    ait_tensor *in[3], *y = NULL;
    for (int k = 0; k < 3; k++) {
        in[k] = ait_tensor_create(AIT_F16, 0, NULL);
        *(uint16_t *)ait_tensor_data(in[k]) = f32_to_f16(vals[k]);
    }
    if (ait_session_run(s, in, 3, &y, 1) != AIT_OK) fail_msg("%s", ait_session_error(s));
    assert_int_equal(ait_tensor_numel(y), 60);
    const uint16_t *yd = ait_tensor_data(y);
    float d = f16_to_f32(f32_to_f16(3.3f));
    int differ = 0;
    for (int i = 0; i < 60; i++) {
        uint16_t once = f32_to_f16(100.0f + (float)i * d);
        uint16_t each = f32_to_f16(100.0f + f16_to_f32(f32_to_f16((float)i * d)));
        differ += once != each;
        assert_int_equal(yd[i], own ? each : once);
    }
    assert_true(differ >= 10); /* the two modes are told apart */
    for (int k = 0; k < 3; k++) ait_tensor_free(in[k]);
    ait_tensor_free(y);
    ait_session_free(s);
    ait_model_free(m);
}

static void test_range_stash(void **state)
{
    (void)state;
    range_bits("test_range_float16_stash_float", false);
    range_bits("test_range_float16_stash_own", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_node_versions), cmocka_unit_test(test_run_opset27),
        cmocka_unit_test(test_run_opset28),   cmocka_unit_test(test_refused),
        cmocka_unit_test(test_ml_import),     cmocka_unit_test(test_float8_cast),
        cmocka_unit_test(test_range_stash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
