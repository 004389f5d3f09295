/* ImageDecoder against hostile images: every truncation and many corrupted
 * bytes of a sample of each format decode or are refused as invalid (the
 * op's empty image), never crash; declared sizes over the limit are refused
 * with a message before anything is allocated for them, and so are JPEGs of
 * over 500 scans; and the op, run in a model, gives the spec's empty image
 * for bad bytes and an error for an image over the limit. Samples are the
 * spec tests' inputs ($AIT_TEST_DATA/spec, tests/spec/cases_image.py); the
 * models come from tests/unit/make_bad_models.py ($AIT_TEST_DATA/bad). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "testutil.h"
#include "ait.h"
#include "io/file.h"
#include "io/onnx.h"
#include "ops/image_decode.h"

static const char *const samples[] = {
    "decode_bmp_rgb", "decode_jpeg2k_rgb", "decode_jpeg_rgb", "decode_png_rgb",
    "decode_pnm_rgb", "decode_tiff_rgb",   "decode_webp_rgb", "jpeg_progressive_rgb",
    "png_16bit_rgb",  "png_palette_rgb",   "bmp_palette_bgr", "pam_rgb_alpha_rgb",
    "webp_lossless_bgr", "ppm_plain_maxval7_rgb", "bmp_rle8_jumps_rgb", "bmp_rle4_bgr",
    "bmp_16bit_565_bgr", "jpeg_cmyk_rgb",
};

/* The encoded bytes of spec case `name` (caller frees). */
static uint8_t *sample(const char *name, size_t *n)
{
    char rel[256];
    snprintf(rel, sizeof rel, "spec/test_image_decoder_%s/test_data_set_0/input_0.pb", name);
    ait_error e = {0};
    uint8_t *buf;
    size_t len;
    if (file_read_all(test_data(rel), 1 << 24, &buf, &len, &e) != AIT_OK)
        fail_msg("%s: %s (run tests/spec/gen.py)", rel, e.msg);
    tensor *t;
    if (tensor_from_pb(buf, len, &t, NULL, rel, &e) != AIT_OK) fail_msg("%s: %s", rel, e.msg);
    free(buf);
    *n = tensor_nbytes(t);
    uint8_t *d = malloc(*n);
    memcpy(d, t->data, *n);
    test_tensor_free(t);
    return d;
}

/* Decodes n bytes: must succeed, or be refused as invalid or too large (a
 * corrupted size), with a message; true on success. */
static bool decodes(const uint8_t *d, size_t n, const char *what, size_t at)
{
    /* An exact-size copy, so ASan sees any read past the end. */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, d, n);
    image im;
    ait_error e = {0};
    ait_status s = image_decode(copy, n, 0, &im, &e);
    free(copy);
    if (s != AIT_OK && s != AIT_E_PARSE && s != AIT_E_OVERFLOW) /* a size byte hit */
        fail_msg("%s (%zu): %s: %s", what, at, ait_status_string(s), e.msg);
    if (s == AIT_OK) {
        assert_true(im.w > 0 && im.h > 0 && (im.ch == 1 || im.ch == 3));
        image_free(&im);
    } else {
        assert_true(e.msg[0] != 0); /* a reason (the op drops it for invalid streams) */
    }
    return s == AIT_OK;
}

static void test_truncated(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        size_t n;
        uint8_t *d = sample(samples[i], &n);
        assert_true(decodes(d, n, samples[i], n));
        int whole = 0;
        for (size_t k = 0; k < n; k++) whole += decodes(d, k, samples[i], k);
        /* The few prefixes that decode lack only trailing chunks (PNG's IEND). */
        assert_true(whole < 64);
        free(d);
    }
}

static void test_corrupt(void **state)
{
    (void)state;
    static const uint8_t vals[] = {0x00, 0xff, 0x7f, 0x80};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        size_t n;
        uint8_t *d = sample(samples[i], &n);
        for (size_t k = 0; k < n; k += k < 600 ? 1 : 13) {
            uint8_t keep = d[k];
            for (size_t v = 0; v < sizeof vals; v++) {
                d[k] = vals[v];
                decodes(d, n, samples[i], k);
            }
            d[k] = keep;
        }
        free(d);
    }
}

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}

/* A PNG of an IHDR declaring w x h and an empty IDAT. */
static size_t png_header(uint8_t *p, uint32_t w, uint32_t h)
{
    memcpy(p, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16);
    put_be32(p + 16, w), put_be32(p + 20, h);
    memcpy(p + 24, "\x08\x02\0\0\0", 5);
    put_be32(p + 29, (uint32_t)crc32(0, p + 12, 17));
    memcpy(p + 33, "\0\0\0\0IDAT", 8); /* an empty IDAT: libpng reads the header up to it */
    put_be32(p + 41, (uint32_t)crc32(0, p + 37, 4));
    return 45;
}

static void expect_too_big(const uint8_t *d, size_t n, const char *what)
{
    image im;
    ait_error e = {0};
    ait_status s = image_decode(d, n, 0, &im, &e);
    if (s != AIT_E_OVERFLOW) fail_msg("%s: %s: %s", what, ait_status_string(s), e.msg);
    assert_non_null(strstr(e.msg, "over the limit"));
}

static void test_huge(void **state)
{
    (void)state;
    const char *pnm = "P6\n100000 100000\n255\n";
    expect_too_big((const uint8_t *)pnm, strlen(pnm), "PPM");
    const char *pam = "P7\nWIDTH 65536\nHEIGHT 65536\nDEPTH 3\nMAXVAL 255\nENDHDR\n";
    expect_too_big((const uint8_t *)pam, strlen(pam), "PAM");
    /* A plain PBM needs no data to be refused: its size is checked first. */
    expect_too_big((const uint8_t *)"P1 20000 20000 0", 16, "PBM");

    uint8_t bmp[54] = "BM";
    bmp[10] = 54, bmp[14] = 40;                           /* pixels at 54, 40-byte header */
    put_le32(bmp + 18, 65536), put_le32(bmp + 22, 65536);
    bmp[26] = 1, bmp[28] = 24;
    expect_too_big(bmp, sizeof bmp, "BMP");

    uint8_t png[64];
    expect_too_big(png, png_header(png, 1u << 20, 1u << 20), "PNG");
    expect_too_big(png, png_header(png, 0x7fffffff, 2), "PNG wide");

    /* SOI, SOF0 of 65000 x 65000 (one component), SOS: all jpeg_read_header needs. */
    static const uint8_t jpeg[] = {0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0xfd, 0xe8, 0xfd, 0xe8, 1,
                                   1, 0x11, 0, 0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0};
    expect_too_big(jpeg, sizeof jpeg, "JPEG");

    /* A little-endian TIFF whose one IFD declares 70000 x 70000 8-bit gray. */
    static const uint8_t tiff[] = {
        'I', 'I', 42, 0, 8, 0, 0, 0, 7, 0,
        0x00, 1, 4, 0, 1, 0, 0, 0, 0x70, 0x11, 1, 0, /* ImageWidth LONG 70000 */
        0x01, 1, 4, 0, 1, 0, 0, 0, 0x70, 0x11, 1, 0, /* ImageLength */
        0x02, 1, 3, 0, 1, 0, 0, 0, 8, 0, 0, 0,       /* BitsPerSample 8 */
        0x06, 1, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0,       /* Photometric: black is zero */
        0x11, 1, 4, 0, 1, 0, 0, 0, 8, 0, 0, 0,       /* StripOffsets */
        0x16, 1, 4, 0, 1, 0, 0, 0, 0x70, 0x11, 1, 0, /* RowsPerStrip */
        0x17, 1, 4, 0, 1, 0, 0, 0, 0, 0, 0, 1,       /* StripByteCounts */
        0, 0, 0, 0};
    expect_too_big(tiff, sizeof tiff, "TIFF");

    image im;
    ait_error e = {0};
    assert_int_equal(image_decode((const uint8_t *)"P5 0 5 255\n", 11, 0, &im, &e), AIT_E_PARSE);
    assert_non_null(strstr(e.msg, "empty"));
}

/* A progressive JPEG whose last scan is repeated 600 times (libjpeg only
 * warns about such a progression): refused past 500 scans. */
static void test_many_scans(void **state)
{
    (void)state;
    size_t n;
    uint8_t *d = sample("jpeg_progressive_rgb", &n);
    size_t last = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (d[i] == 0xff && d[i + 1] == 0xda) last = i;
    assert_true(last > 0 && d[n - 2] == 0xff && d[n - 1] == 0xd9);
    size_t scan = n - 2 - last, m = last + 600 * scan + 2;
    uint8_t *big = malloc(m);
    memcpy(big, d, last);
    for (int k = 0; k < 600; k++) memcpy(big + last + k * scan, d + last, scan);
    memcpy(big + m - 2, "\xff\xd9", 2);
    image im;
    ait_error e = {0};
    assert_int_equal(image_decode(big, m, 0, &im, &e), AIT_E_PARSE);
    assert_non_null(strstr(e.msg, "more than 500 scans"));
    /* 100 repeats stay under the limit and decode (with a bogus-progression warning). */
    memcpy(big + last + 100 * scan, "\xff\xd9", 2);
    assert_int_equal(image_decode(big, last + 100 * scan + 2, 0, &im, &e), AIT_OK);
    image_free(&im);
    free(big);
    free(d);
}

static ait_session *session(const char *file, ait_model **m)
{
    ait_error e = {0};
    ait_session *s;
    char rel[128];
    snprintf(rel, sizeof rel, "bad/%s", file);
    if (ait_model_load(test_data(rel), m, &e) != AIT_OK) fail_msg("%s: %s", rel, e.msg);
    if (ait_session_create(*m, NULL, &s, &e) != AIT_OK) fail_msg("%s: %s", rel, e.msg);
    return s;
}

/* Runs the model on the bytes; the output (caller frees) or NULL on failure. */
static ait_tensor *run(ait_session *s, const void *d, size_t n)
{
    int64_t len = (int64_t)n;
    ait_tensor *in = ait_tensor_create(AIT_U8, 1, &len), *out = NULL;
    memcpy(ait_tensor_data(in), d, n);
    ait_status st = ait_session_run(s, &in, 1, &out, 1);
    ait_tensor_free(in);
    return st == AIT_OK ? out : NULL;
}

static void test_op(void **state)
{
    (void)state;
    ait_model *m;
    ait_session *s = session("image_decoder.onnx", &m);
    const char ppm[] = "P6 2 1 255\n\x01\x02\x03\x04\x05\x06";
    ait_tensor *out = run(s, ppm, sizeof ppm - 1);
    assert_non_null(out);
    assert_int_equal(ait_tensor_rank(out), 3);
    assert_int_equal(ait_tensor_dims(out)[0], 1);
    assert_int_equal(ait_tensor_dims(out)[1], 2);
    assert_int_equal(ait_tensor_dims(out)[2], 3);
    assert_memory_equal(ait_tensor_data(out), "\x01\x02\x03\x04\x05\x06", 6);
    ait_tensor_free(out);
    /* Bytes that are no image, and a truncated one: the empty image. */
    static const char *const bad[] = {"garbage", "P6 2 1 255\n\x01", "\x89PNG\r\n\x1a\n"};
    for (int i = 0; i < 3; i++) {
        out = run(s, bad[i], strlen(bad[i]));
        assert_non_null(out);
        assert_int_equal(ait_tensor_numel(out), 0);
        assert_int_equal(ait_tensor_dims(out)[2], 3);
        ait_tensor_free(out);
    }
    /* Over the limit: an error naming the node and the limit. */
    const char *huge = "P6 100000 100000 255\n";
    assert_null(run(s, huge, strlen(huge)));
    assert_non_null(strstr(ait_session_error(s), "(ImageDecoder)"));
    assert_non_null(strstr(ait_session_error(s), "over the limit"));
    /* The session runs again after the failure. */
    out = run(s, ppm, sizeof ppm - 1);
    assert_non_null(out);
    ait_tensor_free(out);
    ait_session_free(s);
    ait_model_free(m);

    s = session("image_decoder_bad_format.onnx", &m);
    assert_null(run(s, ppm, sizeof ppm - 1));
    assert_non_null(strstr(ait_session_error(s), "pixel_format 'YUV'"));
    ait_session_free(s);
    ait_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_many_scans),
        cmocka_unit_test(test_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
