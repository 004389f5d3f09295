/* Maps through the public API: ait_map_create, a model whose ZipMap makes a
 * sequence of maps and whose DictVectorizer reads a map, reading the maps
 * back, refusals (bad keys, a map where a tensor is declared), the tuner's
 * validation of maps and sequences of maps, free. ASan's
 * leak check covers the ownership. The model (serialised ONNX, made with
 * onnx's helper; ai.onnx.ml 1, opset 17):
 *   x float[2,3]; z = ZipMap(x, classlabels_strings [a, b, c]): seq(map(string, float))
 *   m map(int64, float); y = DictVectorizer(m, int64_vocabulary [5, 3, 9]): float[1,3] */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ait.h"
#include "core/tensor.h"
#include "tune/validate.h"

static const unsigned char map_model[] = {
    0x08, 0x08, 0x3a, 0xd3, 0x01, 0x0a, 0x3d, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x7a, 0x22, 0x06, 0x5a,
    0x69, 0x70, 0x4d, 0x61, 0x70, 0x2a, 0x21, 0x0a, 0x13, 0x63, 0x6c, 0x61, 0x73, 0x73, 0x6c, 0x61,
    0x62, 0x65, 0x6c, 0x73, 0x5f, 0x73, 0x74, 0x72, 0x69, 0x6e, 0x67, 0x73, 0x4a, 0x01, 0x61, 0x4a,
    0x01, 0x62, 0x4a, 0x01, 0x63, 0xa0, 0x01, 0x08, 0x3a, 0x0a, 0x61, 0x69, 0x2e, 0x6f, 0x6e, 0x6e,
    0x78, 0x2e, 0x6d, 0x6c, 0x0a, 0x3f, 0x0a, 0x01, 0x6d, 0x12, 0x01, 0x79, 0x22, 0x0e, 0x44, 0x69,
    0x63, 0x74, 0x56, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x69, 0x7a, 0x65, 0x72, 0x2a, 0x1b, 0x0a, 0x10,
    0x69, 0x6e, 0x74, 0x36, 0x34, 0x5f, 0x76, 0x6f, 0x63, 0x61, 0x62, 0x75, 0x6c, 0x61, 0x72, 0x79,
    0x40, 0x05, 0x40, 0x03, 0x40, 0x09, 0xa0, 0x01, 0x07, 0x3a, 0x0a, 0x61, 0x69, 0x2e, 0x6f, 0x6e,
    0x6e, 0x78, 0x2e, 0x6d, 0x6c, 0x12, 0x01, 0x67, 0x5a, 0x13, 0x0a, 0x01, 0x78, 0x12, 0x0e, 0x0a,
    0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x03, 0x5a, 0x0f, 0x0a,
    0x01, 0x6d, 0x12, 0x0a, 0x2a, 0x08, 0x08, 0x07, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01, 0x62, 0x13,
    0x0a, 0x01, 0x7a, 0x12, 0x0e, 0x22, 0x0c, 0x0a, 0x0a, 0x2a, 0x08, 0x08, 0x08, 0x12, 0x04, 0x0a,
    0x02, 0x08, 0x01, 0x62, 0x13, 0x0a, 0x01, 0x79, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08,
    0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x03, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x11, 0x42, 0x0e,
    0x0a, 0x0a, 0x61, 0x69, 0x2e, 0x6f, 0x6e, 0x6e, 0x78, 0x2e, 0x6d, 0x6c, 0x10, 0x01,
};

static ait_tensor *keys_i64(int n, const int64_t *k)
{
    int64_t d = n;
    ait_tensor *t = ait_tensor_create(AIT_I64, 1, &d);
    memcpy(ait_tensor_data(t), k, sizeof *k * (size_t)n);
    return t;
}

static void test_map_api(void **state)
{
    (void)state;
    const int64_t k[3] = {9, 5, 7};
    const float v[3] = {1.5f, -2.f, 4.f};
    int64_t d3 = 3, d2 = 2;
    ait_tensor *keys = keys_i64(3, k), *vals = ait_tensor_create(AIT_F32, 1, &d3);
    memcpy(ait_tensor_data(vals), v, sizeof v);
    ait_tensor *m = ait_map_create(keys, vals);
    assert_non_null(m);
    assert_true(ait_tensor_is_map(m));
    assert_false(ait_tensor_is_map(keys));
    assert_int_equal(ait_tensor_dtype(m), AIT_F32);
    assert_int_equal(ait_tensor_numel(m), 0);
    assert_null(ait_tensor_data(m));
    const ait_tensor *mk = ait_map_keys(m), *mv = ait_map_values(m);
    assert_ptr_not_equal(mk, keys); /* copies */
    assert_int_equal(((const int64_t *)ait_tensor_data((ait_tensor *)mk))[2], 7);
    assert_true(((const float *)ait_tensor_data((ait_tensor *)mv))[1] == -2.f);
    assert_null(ait_map_keys(keys));

    /* Refused: keys of another length, float keys, a 2-D values tensor. */
    ait_tensor *short_vals = ait_tensor_create(AIT_F32, 1, &d2);
    assert_null(ait_map_create(keys, short_vals));
    assert_null(ait_map_create(vals, vals));
    int64_t d13[2] = {1, 3};
    ait_tensor *v2 = ait_tensor_create(AIT_F32, 2, d13);
    assert_null(ait_map_create(keys, v2));
    assert_null(ait_map_create(NULL, vals));

    /* Sequences hold maps: appended as copies. */
    ait_tensor *seq = ait_sequence_create(AIT_F32);
    assert_int_equal(ait_sequence_append(seq, m), AIT_OK);
    assert_int_equal(ait_sequence_append(seq, m), AIT_OK);
    assert_int_equal(ait_sequence_length(seq), 2);
    assert_true(ait_tensor_is_map(ait_sequence_item(seq, 1)));
    ait_tensor_free(seq);

    /* String keys. */
    int64_t d1 = 1;
    ait_tensor *sk = ait_tensor_create(AIT_STRING, 1, &d1), *sv = ait_tensor_create(AIT_F32, 1, &d1);
    assert_int_equal(ait_tensor_set_string(sk, 0, "key"), AIT_OK);
    ait_tensor *sm = ait_map_create(sk, sv);
    assert_non_null(sm);
    assert_string_equal(ait_tensor_string(ait_map_keys(sm), 0), "key");
    ait_tensor_free(sk);
    ait_tensor_free(sv);
    ait_tensor_free(sm);
    ait_tensor_free(short_vals);
    ait_tensor_free(v2);
    ait_tensor_free(keys);
    ait_tensor_free(vals);
    ait_tensor_free(m);
}

static void test_map_model(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *model = NULL;
    ait_session *s = NULL;
    assert_int_equal(ait_model_load_memory(map_model, sizeof map_model, "maps", &model, &e),
                     AIT_OK);
    assert_int_equal(ait_session_create(model, NULL, &s, &e), AIT_OK);
    int64_t d23[2] = {2, 3}, d2 = 2;
    float xv[6] = {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f};
    ait_tensor *x = ait_tensor_wrap(AIT_F32, 2, d23, xv);
    const int64_t k[2] = {9, 5};
    ait_tensor *keys = keys_i64(2, k), *vals = ait_tensor_create(AIT_F32, 1, &d2);
    ((float *)ait_tensor_data(vals))[0] = 3.f;
    ((float *)ait_tensor_data(vals))[1] = -1.f;
    ait_tensor *m = ait_map_create(keys, vals);
    ait_tensor *in[2] = {x, m}, *out[2] = {0};
    for (int r = 0; r < 2; r++) { /* the session's buffers reused across runs */
        assert_int_equal(ait_session_run(s, in, 2, out, 2), AIT_OK);
        assert_true(ait_tensor_is_sequence(out[0]));
        assert_int_equal(ait_sequence_length(out[0]), 2);
        for (int i = 0; i < 2; i++) {
            const ait_tensor *zm = ait_sequence_item(out[0], i);
            assert_true(ait_tensor_is_map(zm));
            const ait_tensor *zk = ait_map_keys(zm), *zv = ait_map_values(zm);
            assert_int_equal(ait_tensor_numel(zk), 3);
            assert_string_equal(ait_tensor_string(zk, 0), "a");
            assert_string_equal(ait_tensor_string(zk, 2), "c");
            for (int j = 0; j < 3; j++)
                assert_true(((const float *)ait_tensor_data((ait_tensor *)zv))[j] == xv[i * 3 + j]);
        }
        const float *y = ait_tensor_data(out[1]);
        assert_int_equal(ait_tensor_numel(out[1]), 3);
        assert_true(y[0] == -1.f && y[1] == 0.f && y[2] == 3.f);
        for (int j = 0; j < 2; j++) ait_tensor_free(out[j]);
    }
    { /* a map without key 5 after one with it: its slot is 0, not the last run's -1 */
        const int64_t k9 = 9;
        ait_tensor *keys1 = keys_i64(1, &k9), *vals1 = ait_tensor_create(AIT_F32, 1, (int64_t[]){1});
        ((float *)ait_tensor_data(vals1))[0] = 4.f;
        ait_tensor *m1 = ait_map_create(keys1, vals1), *in1[2] = {x, m1};
        assert_int_equal(ait_session_run(s, in1, 2, out, 2), AIT_OK);
        const float *y = ait_tensor_data(out[1]);
        assert_true(y[0] == 0.f && y[1] == 0.f && y[2] == 4.f);
        for (int j = 0; j < 2; j++) ait_tensor_free(out[j]);
        ait_tensor_free(keys1);
        ait_tensor_free(vals1);
        ait_tensor_free(m1);
    }

    /* A tensor where the map is declared, and a map where a tensor is. */
    in[1] = vals;
    assert_int_not_equal(ait_session_run(s, in, 2, out, 2), AIT_OK);
    assert_non_null(strstr(ait_session_error(s), "must be a map, got a tensor"));
    in[0] = m;
    in[1] = m;
    assert_int_not_equal(ait_session_run(s, in, 2, out, 2), AIT_OK);
    assert_non_null(strstr(ait_session_error(s), "must be a tensor, got a map"));
    /* A map of string values where float ones are declared. */
    int64_t d1 = 1;
    ait_tensor *svals = ait_tensor_create(AIT_STRING, 1, &d1), *k1 = keys_i64(1, k);
    ait_tensor *sm = ait_map_create(k1, svals);
    in[0] = x;
    in[1] = sm;
    assert_int_not_equal(ait_session_run(s, in, 2, out, 2), AIT_OK);
    assert_non_null(strstr(ait_session_error(s), "must be a map to float32, got one to string"));
    ait_tensor_free(sm);
    ait_tensor_free(svals);
    ait_tensor_free(k1);
    ait_tensor_free(m);
    ait_tensor_free(keys);
    ait_tensor_free(vals);
    ait_tensor_free(x);
    ait_session_free(s);
    ait_model_free(model);
}

/* Validation: equal maps pass; values within the tolerance pass, beyond it
 * fail; another key puts every entry off; sequences of maps merge items. */
static void test_map_validate(void **state)
{
    (void)state;
    const int64_t k[3] = {1, 2, 3}, k2[3] = {1, 2, 4};
    int64_t d3 = 3;
    ait_tensor *keys = keys_i64(3, k), *keys2 = keys_i64(3, k2);
    ait_tensor *v = ait_tensor_create(AIT_F32, 1, &d3), *w = ait_tensor_create(AIT_F32, 1, &d3);
    float *vf = ait_tensor_data(v), *wf = ait_tensor_data(w);
    for (int i = 0; i < 3; i++) vf[i] = wf[i] = 0.25f * (float)(i + 1);
    wf[1] += 1e-6f;
    ait_tensor *a = ait_map_create(keys, v), *b = ait_map_create(keys, w),
               *c = ait_map_create(keys2, v);
    out_metrics m;
    verdict vd;
    const tensor *ref[1] = {a}, *cand[1] = {b};
    assert_int_equal(validate_outputs(ref, 1, cand, 1, NULL, NULL, &m, &vd, NULL), AIT_OK);
    assert_true(vd.pass);
    wf[1] += 0.1f;
    ait_tensor_free(b);
    b = ait_map_create(keys, w);
    cand[0] = b;
    assert_int_equal(validate_outputs(ref, 1, cand, 1, NULL, NULL, &m, &vd, NULL), AIT_OK);
    assert_false(vd.pass);
    assert_int_equal(m.n_off, 1);
    cand[0] = c;
    assert_int_equal(validate_outputs(ref, 1, cand, 1, NULL, NULL, &m, &vd, NULL), AIT_OK);
    assert_false(vd.pass);
    assert_int_equal(m.n_off, 3);

    ait_tensor *s1 = ait_sequence_create(AIT_F32), *s2 = ait_sequence_create(AIT_F32);
    assert_int_equal(ait_sequence_append(s1, a), AIT_OK);
    assert_int_equal(ait_sequence_append(s1, a), AIT_OK);
    assert_int_equal(ait_sequence_append(s2, a), AIT_OK);
    ref[0] = s1;
    cand[0] = s1;
    assert_int_equal(validate_outputs(ref, 1, cand, 1, NULL, NULL, &m, &vd, NULL), AIT_OK);
    assert_true(vd.pass);
    assert_int_equal(m.numel, 6);
    cand[0] = s2; /* one map short */
    assert_int_equal(validate_outputs(ref, 1, cand, 1, NULL, NULL, &m, &vd, NULL), AIT_OK);
    assert_false(vd.pass);
    assert_int_equal(ait_sequence_append(s2, c), AIT_OK); /* a key differs in the second */
    assert_int_equal(validate_outputs(ref, 1, cand, 1, NULL, NULL, &m, &vd, NULL), AIT_OK);
    assert_false(vd.pass);
    assert_int_equal(m.n_off, 3);
    ait_tensor *all[] = {s1, s2, a, b, c, v, w, keys, keys2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ait_tensor_free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_validate),
        cmocka_unit_test(test_map_api),
        cmocka_unit_test(test_map_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
