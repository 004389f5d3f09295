/* The small element types of opsets 19 to 25 (core/small_types.c): every
 * finite float8 and float4 code decodes and encodes back to itself, the
 * saturation boundaries and Cast's tables, float8e8m0's rounding modes,
 * int4/int2 wrapping and ONNX's packing; then bad models (from
 * tests/unit/make_type_models.py, in $AIT_TEST_DATA/types) that must fail
 * with a message naming the problem. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "ait.h"
#include "core/small_types.h"
#include "core/tensor.h"

static const ait_dtype floats[] = {AIT_F8E4M3FN, AIT_F8E4M3FNUZ, AIT_F8E5M2, AIT_F8E5M2FNUZ,
                                   AIT_F4E2M1};

static uint8_t enc(ait_dtype t, double v, bool sat) /* Cast 24's defaults, or saturate=0 */
{
    cast_mode m = {.no_saturate = !sat};
    return small_from_f64(t, v, &m);
}

/* Decode then encode gives the code back for every finite value (both with
 * and without saturation: a finite value is never out of range); NaN codes
 * give a NaN code. */
static void test_round_trip(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof floats / sizeof floats[0]; k++) {
        ait_dtype t = floats[k];
        int n = t == AIT_F4E2M1 ? 16 : 256, finite = 0;
        for (int c = 0; c < n; c++) {
            double v = small_to_f64(t, (uint8_t)c);
            if (isnan(v)) {
                if (!isnan(small_to_f64(t, enc(t, v, true))))
                    fail_msg("%s: NaN code 0x%02x encodes to a non-NaN", ait_dtype_name(t), c);
                continue;
            }
            if (isinf(v)) continue;
            finite++;
            for (int sat = 0; sat < 2; sat++)
                if (enc(t, v, sat) != c)
                    fail_msg("%s: code 0x%02x (%g) encodes to 0x%02x (saturate %d)",
                             ait_dtype_name(t), c, v, enc(t, v, sat), sat);
        }
        /* every code but the NaNs (and E5M2's two infinities) is finite */
        int want = t == AIT_F8E4M3FN ? 254 : t == AIT_F8E5M2 ? 248 : t == AIT_F4E2M1 ? 16 : 255;
        assert_int_equal(finite, want);
    }
    for (int c = 0; c < 255; c++) /* e8m0: 2^(c-127) */
        assert_int_equal(enc(AIT_F8E8M0, small_to_f64(AIT_F8E8M0, (uint8_t)c), true), c);
    assert_true(isnan(small_to_f64(AIT_F8E8M0, 0xff)));
}

static void test_float8_values(void **state)
{
    (void)state;
    assert_true(small_to_f64(AIT_F8E4M3FN, 0x7e) == 448);
    assert_true(small_to_f64(AIT_F8E4M3FN, 0x01) == ldexp(1, -9));
    assert_true(small_to_f64(AIT_F8E4M3FNUZ, 0x7f) == 240);
    assert_true(small_to_f64(AIT_F8E4M3FNUZ, 0x01) == ldexp(1, -10));
    assert_true(small_to_f64(AIT_F8E5M2, 0x7b) == 57344);
    assert_true(isinf(small_to_f64(AIT_F8E5M2, 0xfc)) && small_to_f64(AIT_F8E5M2, 0xfc) < 0);
    assert_true(small_to_f64(AIT_F8E5M2FNUZ, 0x01) == ldexp(1, -17));
    assert_true(isnan(small_to_f64(AIT_F8E5M2FNUZ, 0x80)));
    assert_true(small_to_f64(AIT_F4E2M1, 0x0f) == -6 && small_to_f64(AIT_F4E2M1, 0x01) == 0.5);
}

/* Round to nearest even, overflow decided on the rounded value. */
static void test_saturation(void **state)
{
    (void)state;
    /* E4M3FN: 448 = 1.110b x 2^8; 464 is halfway to 480 (which does not
     * exist): a tie to the even 448; above it overflows */
    assert_int_equal(enc(AIT_F8E4M3FN, 464, false), 0x7e);
    assert_int_equal(enc(AIT_F8E4M3FN, 464.5, false), 0x7f);  /* NaN */
    assert_int_equal(enc(AIT_F8E4M3FN, -464.5, false), 0xff); /* -NaN */
    assert_int_equal(enc(AIT_F8E4M3FN, 464.5, true), 0x7e);
    assert_int_equal(enc(AIT_F8E4M3FN, -INFINITY, true), 0xfe);
    assert_int_equal(enc(AIT_F8E4M3FN, INFINITY, false), 0x7f);
    assert_int_equal(enc(AIT_F8E4M3FN, -0.0, true), 0x80);
    assert_int_equal(enc(AIT_F8E4M3FN, 100, true), 0x6c);   /* tie: 96 (even) not 104 */
    assert_int_equal(enc(AIT_F8E4M3FN, ldexp(1, -10), true), 0x00); /* tie with 2^-9: 0 */
    assert_int_equal(enc(AIT_F8E4M3FN, ldexp(3, -10), true), 0x02); /* tie 1 or 2: 2 */
    assert_int_equal(enc(AIT_F8E4M3FN, ldexp(5, -10), true), 0x02); /* tie 2 or 3: 2 */
    /* E5M2: 57344 = 1.11b x 2^15; 61440 is halfway to 65536: odd 57344, so up: inf */
    assert_int_equal(enc(AIT_F8E5M2, 61439, false), 0x7b);
    assert_int_equal(enc(AIT_F8E5M2, 61440, false), 0x7c);
    assert_int_equal(enc(AIT_F8E5M2, -61440, false), 0xfc);
    assert_int_equal(enc(AIT_F8E5M2, 61440, true), 0x7b);
    assert_int_equal(enc(AIT_F8E5M2, -INFINITY, false), 0xfc);
    assert_int_equal(enc(AIT_F8E5M2, -INFINITY, true), 0xfb);
    /* FNUZ: one NaN, no -0; inf saturates from Cast 24, was NaN before */
    assert_int_equal(enc(AIT_F8E4M3FNUZ, 248, true), 0x7f);
    assert_int_equal(enc(AIT_F8E4M3FNUZ, 248, false), 0x80);
    assert_int_equal(enc(AIT_F8E4M3FNUZ, -0.0, true), 0x00);
    assert_int_equal(enc(AIT_F8E5M2FNUZ, -1e-9, true), 0x00);
    assert_int_equal(enc(AIT_F8E5M2FNUZ, -INFINITY, true), 0xff);
    cast_mode old = {.fnuz_inf_nan = true};
    assert_int_equal(small_from_f64(AIT_F8E5M2FNUZ, -INFINITY, &old), 0x80);
    assert_int_equal(small_from_f64(AIT_F8E5M2, -INFINITY, &old), 0xfb); /* FNUZ only */
    assert_int_equal(enc(AIT_F8E4M3FNUZ, NAN, true), 0x80);
    /* float4e2m1 always saturates; NaN gives 6 (onnx's float4 table) */
    assert_int_equal(enc(AIT_F4E2M1, 5, false), 0x06); /* tie 4 or 6: 4 (even) */
    assert_int_equal(enc(AIT_F4E2M1, 100, false), 0x07);
    assert_int_equal(enc(AIT_F4E2M1, -INFINITY, false), 0x0f);
    assert_int_equal(enc(AIT_F4E2M1, NAN, true), 0x07);
    assert_int_equal(enc(AIT_F4E2M1, -0.2, true), 0x08);
    assert_int_equal(enc(AIT_F4E2M1, 0.25, true), 0x00); /* tie 0 or 0.5: 0 */
}

static void test_e8m0(void **state)
{
    (void)state;
    cast_mode up = {0}, down = {.e8m0_round = E8M0_DOWN},
              near = {.e8m0_round = E8M0_NEAREST, .no_saturate = true};
    assert_int_equal(small_from_f64(AIT_F8E8M0, 1.0, &up), 127);
    assert_int_equal(small_from_f64(AIT_F8E8M0, 1.1, &up), 128);
    assert_int_equal(small_from_f64(AIT_F8E8M0, 1.9, &down), 127);
    assert_int_equal(small_from_f64(AIT_F8E8M0, 1.4999, &near), 127);
    assert_int_equal(small_from_f64(AIT_F8E8M0, 1.5, &near), 128); /* ties up */
    assert_int_equal(small_from_f64(AIT_F8E8M0, 0.0, &up), 0);      /* saturates to 2^-127 */
    assert_int_equal(small_from_f64(AIT_F8E8M0, 0.0, &near), 0xff); /* NaN without */
    assert_int_equal(small_from_f64(AIT_F8E8M0, INFINITY, &up), 0xfe);
    assert_int_equal(small_from_f64(AIT_F8E8M0, 3e38, &up), 0xfe);   /* 2^128: saturates */
    assert_int_equal(small_from_f64(AIT_F8E8M0, 3e38, &near), 0xff);
    assert_int_equal(small_from_f64(AIT_F8E8M0, ldexp(1, -130), &up), 0);
    assert_int_equal(small_from_f64(AIT_F8E8M0, NAN, &up), 0xff);
}

/* Integers keep their low bits; floats are truncated toward zero first. */
static void test_ints(void **state)
{
    (void)state;
    assert_int_equal((int8_t)small_wrap(AIT_I4, 8), -8);
    assert_int_equal((int8_t)small_wrap(AIT_I4, -9), 7);
    assert_int_equal(small_wrap(AIT_U4, -1), 15);
    assert_int_equal((int8_t)small_wrap(AIT_I2, 2), -2);
    assert_int_equal(small_wrap(AIT_U2, 5), 1);
    assert_int_equal((int8_t)small_from_f64(AIT_I4, -2.7, NULL), -2);
    assert_int_equal(small_from_f64(AIT_U4, NAN, NULL), 0);
    uint8_t d[2];
    elem_set_sat(d, AIT_I4, 0, 100); /* saturating writes clamp to the range */
    elem_set_sat(d, AIT_U2, 1, -5);
    assert_int_equal((int8_t)d[0], 7);
    assert_int_equal(d[1], 0);
    assert_true(elem_get_f64(d, AIT_I4, 0) == 7);
}

/* ONNX packs the first element in the lowest bits. */
static void test_unpack(void **state)
{
    (void)state;
    uint8_t a[3] = {0x21, 0x03, 0xff};
    small_unpack(AIT_I4, a, 3);
    assert_true(a[0] == 1 && a[1] == 2 && a[2] == 3);
    uint8_t b[2] = {0xf8, 0};
    small_unpack(AIT_I4, b, 2);
    assert_true((int8_t)b[0] == -8 && (int8_t)b[1] == -1);
    uint8_t c[5] = {0xe4, 0x01, 0, 0, 0}; /* 0, 1, 2, 3 | 1 */
    small_unpack(AIT_U2, c, 5);
    assert_true(c[0] == 0 && c[1] == 1 && c[2] == 2 && c[3] == 3 && c[4] == 1);
    uint8_t s[4] = {0xe4, 0, 0, 0};
    small_unpack(AIT_I2, s, 4);
    assert_true(s[0] == 0 && s[1] == 1 && (int8_t)s[2] == -2 && (int8_t)s[3] == -1);
    assert_int_equal(dtype_stored_bytes(AIT_I4, 5), 3);
    assert_int_equal(dtype_stored_bytes(AIT_U2, 5), 2);
    assert_int_equal(dtype_stored_bytes(AIT_F8E5M2, 5), 5);
    assert_int_equal(ait_dtype_size(AIT_I2), 1);
    assert_string_equal(ait_dtype_name(AIT_F8E4M3FNUZ), "float8e4m3fnuz");
    assert_string_equal(ait_dtype_name(AIT_F4E2M1), "float4e2m1");
}

/* convert_elems through a small type and back. */
static void test_convert(void **state)
{
    (void)state;
    const float x[5] = {0.3f, -1000.0f, 1e-9f, 2.0f, -0.0f};
    uint8_t c[5];
    float y[5];
    double z[5];
    assert_int_equal(convert_elems(x, AIT_F32, c, AIT_F8E5M2, 5, NULL), AIT_OK);
    assert_int_equal(convert_elems(c, AIT_F8E5M2, y, AIT_F32, 5, NULL), AIT_OK);
    assert_true(y[0] == 0.3125f && y[1] == -1024.0f && y[2] == 0 && y[3] == 2 && signbit(y[4]));
    assert_int_equal(convert_elems(c, AIT_F8E5M2, z, AIT_F64, 5, NULL), AIT_OK);
    assert_true(z[1] == -1024.0);
    int8_t i4[5];
    assert_int_equal(convert_elems(c, AIT_F8E5M2, i4, AIT_I4, 5, NULL), AIT_OK);
    assert_true(i4[0] == 0 && i4[1] == 0 && i4[3] == 2); /* -1024 keeps its low 4 bits: 0 */
    int64_t w[5];
    assert_int_equal(convert_elems(i4, AIT_I4, w, AIT_I64, 5, NULL), AIT_OK);
    assert_true(w[3] == 2);
}

/* ---- bad models ---- */

static void fails(const char *file, const char *needle)
{
    char rel[128];
    snprintf(rel, sizeof rel, "types/%s.onnx", file);
    const char *path = test_data(rel);
    ait_error e = {0};
    ait_model *m = NULL;
    const char *msg = NULL;
    ait_session *s = NULL;
    ait_tensor *y = NULL;
    if (ait_model_load(path, &m, &e) != AIT_OK) {
        msg = e.msg;
    } else if (ait_session_create(m, NULL, &s, &e) != AIT_OK) {
        msg = e.msg;
    } else if (ait_session_run(s, NULL, 0, &y, 1) != AIT_OK) {
        msg = ait_session_error(s);
    }
    if (!msg) fail_msg("%s: ran, expected an error containing '%s'", file, needle);
    if (!strstr(msg, needle)) fail_msg("%s: error '%s' lacks '%s'", file, msg, needle);
    ait_tensor_free(y);
    ait_session_free(s);
    ait_model_free(m);
}

static void test_bad_models(void **state)
{
    (void)state;
    fails("cast_f4_at_21", "the target type is float4e2m1, which version 21 of the op does not "
                           "take (added in version 23)");
    fails("cast_round_mode", "round_mode 'sideways' is not one of 'up', 'down', 'nearest'");
    fails("cast_saturate_2", "saturate is 2; it must be 0 or 1");
    fails("q_block_scale", "scale [3,3] does not fit blocks of 2 along axis 1 of [3,4]");
    fails("q_block_negative", "block_size -1 is negative");
    fails("dq_zp_shape", "scale [4] and zero point [3] differ in shape");
    fails("dq_scale_axis", "scale [4] fits neither per tensor nor axis 0 of [3,4]");
    fails("q_int4_at_19", "the output is int4, which version 19 of the op does not take (added "
                          "in version 21)");
    fails("q_precision_int8", "precision 3 (int8) is not supported");
    fails("dq_e8m0_no_output_dtype", "x_scale is float8e8m0: output_dtype must say");
    fails("dq_x_e8m0", "x of type float8e8m0 is not supported");
    fails("int4_short_raw", "raw data has 2 bytes, the shape needs 3");
    fails("int4_int32_data", "has 3 int32_data values, 4 packed int4 elements need 2");
    fails("isnan_f8_at_13", "input has unsupported dtype float8e4m3fn");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_float8_values),
        cmocka_unit_test(test_saturation), cmocka_unit_test(test_e8m0),
        cmocka_unit_test(test_ints),       cmocka_unit_test(test_unpack),
        cmocka_unit_test(test_convert),    cmocka_unit_test(test_bad_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
