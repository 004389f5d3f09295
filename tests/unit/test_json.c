/* The JSON reader: what the writer writes reads back the same; escapes,
 * numbers and nesting by the RFC; every malformed document refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/json.h"
#include "io/json_read.h"

static void test_round_trip(void **state)
{
    (void)state;
    json_w w = {.pretty = true};
    json_obj(&w, NULL);
    json_str(&w, "name", "layer1.0 \"quoted\" \\ tab\t nl\n \x01 caf\xc3\xa9");
    json_int(&w, "big", 9007199254740991LL);
    json_num(&w, "x", -1.25e-7);
    json_num(&w, "nan", NAN);
    json_bool(&w, "yes", true);
    json_arr(&w, "list");
    for (int i = 0; i < 5; i++) json_int(&w, NULL, i * 10);
    json_obj(&w, NULL);
    json_end(&w);
    json_end(&w);
    json_end(&w);
    ait_error e = {0};
    char *text = json_finish(&w, &e);
    assert_non_null(text);
    json_val *v;
    assert_int_equal(json_parse(text, strlen(text), "doc", &v, &e), AIT_OK);
    assert_string_equal(json_str_of(json_get(v, "name")),
                        "layer1.0 \"quoted\" \\ tab\t nl\n \x01 caf\xc3\xa9");
    long long big;
    assert_true(json_int_of(json_get(v, "big"), 0, INT64_MAX, &big));
    assert_true(big == 9007199254740991LL);
    double x;
    assert_true(json_num_of(json_get(v, "x"), &x));
    assert_true(x == -1.25e-7);
    assert_int_equal(json_get(v, "nan")->kind, JSON_NULL);
    assert_true(json_get(v, "yes")->b);
    assert_int_equal(json_len(json_get(v, "list")), 6);
    long long k;
    assert_true(json_int_of(json_at(json_get(v, "list"), 3), 0, 100, &k));
    assert_int_equal(k, 30);
    assert_false(json_int_of(json_at(json_get(v, "list"), 3), 0, 10, &k)); /* out of range */
    assert_int_equal(json_at(json_get(v, "list"), 5)->kind, JSON_OBJ);
    assert_null(json_at(json_get(v, "list"), 6));
    assert_null(json_get(v, "missing"));
    assert_null(json_str_of(json_get(json_get(v, "missing"), "deeper")));
    json_free(v);
    free(text);
}

static void test_escapes(void **state)
{
    (void)state;
    const char *doc = "[\"\\u00e9\\u20ac\\ud83d\\ude00\\/\\b\\f\\r\"]";
    json_val *v;
    ait_error e = {0};
    assert_int_equal(json_parse(doc, strlen(doc), "doc", &v, &e), AIT_OK);
    assert_string_equal(json_str_of(json_at(v, 0)), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/\b\f\r");
    json_free(v);
}

static void test_refused(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "[1 2]", "01", "1.", ".5",
        "1e", "-", "+1", "tru", "nul", "\"abc", "\"a\\x\"", "\"\\u12\"", "\"\\ud800\"",
        "\"\\udc00\"", "\"\\u0000\"", "\"a\nb\"", "[1] x", "{\"a\":}", "\"\\", "/* c */ 1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_val *v = NULL;
        ait_error e = {0};
        if (json_parse(bad[i], strlen(bad[i]), "doc", &v, &e) != AIT_E_PARSE)
            fail_msg("accepted: '%s'", bad[i]);
        assert_null(v);
        assert_non_null(strstr(e.msg, "doc: invalid JSON at byte"));
    }
    /* Nesting: JSON_READ_MAX_DEPTH levels read, one more refused. */
    char deep[2 * (JSON_READ_MAX_DEPTH + 2) + 1];
    for (int extra = 0; extra <= 1; extra++) {
        int n = JSON_READ_MAX_DEPTH + 1 + extra, len = 0;
        for (int i = 0; i < n; i++) deep[len++] = '[';
        for (int i = 0; i < n; i++) deep[len++] = ']';
        json_val *v = NULL;
        ait_error e = {0};
        assert_int_equal(json_parse(deep, (size_t)len, "deep", &v, &e), extra ? AIT_E_PARSE : AIT_OK);
        json_free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
