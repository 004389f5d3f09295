/* Samples and axes: loading the three layouts, every bad sample, batches by
 * repeating and slicing, generation, and axis detection. Models come from
 * tests/unit/make_bad_models.py ($AIT_BAD_DIR); sample files are written
 * here into a temporary folder. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "io/npy.h"
#include "tune/axes.h"
#include "tune/samples.h"

static const char *dir;
static char tmp[256];

/* A path under the temporary folder (one of a few rotating buffers, so two
 * may be used in one call). */
static const char *at(const char *fmt, ...)
{
    static char bufs[4][4096];
    static int k;
    char *b = bufs[k++ % 4];
    int n = snprintf(b, sizeof bufs[0], "%s/", tmp);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, sizeof bufs[0] - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

/* A tensor whose elements are base, base+1, ... */
static tensor *seq_tensor(ait_dtype t, int rank, const int64_t *dims, double base)
{
    tensor *x = ait_tensor_create(t, rank, dims);
    assert_non_null(x);
    for (int64_t i = 0; i < tensor_numel(x); i++) elem_set_f64(x->data, t, i, base + (double)i);
    return x;
}
#define T(type, base, ...)                                                                  \
    seq_tensor(type, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),            \
               (int64_t[]){__VA_ARGS__}, base)

/* Writes an .npz of n (name, tensor) pairs and frees the tensors. */
static void write_npz(const char *path, int n, ...)
{
    const char *names[8];
    const tensor *arrays[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        names[i] = va_arg(ap, const char *);
        arrays[i] = va_arg(ap, tensor *);
    }
    va_end(ap);
    ait_error e = {0};
    if (npz_save(path, n, names, arrays, &e) != AIT_OK) fail_msg("%s", e.msg);
    for (int i = 0; i < n; i++) ait_tensor_free((tensor *)arrays[i]);
}

static void write_npy(const char *path, tensor *t)
{
    ait_error e = {0};
    if (ait_tensor_save_npy(path, t, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_tensor_free(t);
}

static void mkdir_p(const char *path) { assert_true(mkdir(path, 0755) == 0); }

/* Loads samples expecting `code` with every needle in the message. */
static void load_fails(const ait_model *m, const char *path, ait_status code, const char *n1,
                       const char *n2)
{
    ait_error e = {0};
    sample_set *s = (sample_set *)1;
    ait_status st = samples_load(m, path, 0, &s, &e);
    if (st != code || !strstr(e.msg, n1) || (n2 && !strstr(e.msg, n2)))
        fail_msg("%s: got %s '%s', expected %s containing '%s' and '%s'", path,
                 ait_status_string(st), e.msg, ait_status_string(code), n1, n2 ? n2 : "");
    assert_null(s);
}

static sample_set *load_ok(const ait_model *m, const char *path, int n)
{
    ait_error e = {0};
    sample_set *s;
    if (samples_load(m, path, 0, &s, &e) != AIT_OK) fail_msg("%s: %s", path, e.msg);
    assert_int_equal(s->n, n);
    assert_int_equal(s->n_inputs, m->g->n_inputs);
    return s;
}

/* ---- axes ---- */

static void observe(axis_obs *o, int64_t batch, int rank, const int64_t *dims)
{
    ait_error e = {0};
    if (axes_observe(o, batch, rank, dims, &e) != AIT_OK) fail_msg("%s", e.msg);
}
#define OBS(o, b, ...)                                                                      \
    observe(o, b, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),               \
            (int64_t[]){__VA_ARGS__})

static void shapes_are(const axis_info *a, const char *named, const char *min, const char *max)
{
    char buf[128];
    assert_string_equal(axes_shape_str(a, 0, buf, sizeof buf), named);
    assert_string_equal(axes_shape_str(a, 1, buf, sizeof buf), min);
    assert_string_equal(axes_shape_str(a, 2, buf, sizeof buf), max);
}

static void test_axes(void **state)
{
    (void)state;
    axis_obs o = {0};
    axis_info a;
    /* Static: the same shape at batch 1 and 2. */
    OBS(&o, 1, 3, 5);
    OBS(&o, 2, 3, 5);
    axes_classify(&o, &a);
    assert_int_equal(a.rank, 2);
    assert_int_equal(a.kind[0], AXIS_STATIC);
    assert_int_equal(a.kind[1], AXIS_STATIC);
    assert_string_equal(a.name[0], "");
    shapes_are(&a, "[3,5]", "[3,5]", "[3,5]");

    /* Batch with multiplier 1, at three batch sizes. */
    o = (axis_obs){0};
    OBS(&o, 1, 1, 5);
    OBS(&o, 2, 2, 5);
    OBS(&o, 4, 4, 5);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_BATCH);
    assert_int_equal(a.mult[0], 1);
    assert_string_equal(a.name[0], "batch0");
    assert_int_equal(a.kind[1], AXIS_STATIC);
    shapes_are(&a, "[batch0,5]", "[1,5]", "[4,5]");

    /* Batch with multiplier 3: a [3*batch, 5] value; the batch axis at 1. */
    o = (axis_obs){0};
    OBS(&o, 1, 3, 5);
    OBS(&o, 2, 6, 5);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_BATCH);
    assert_int_equal(a.mult[0], 3);
    shapes_are(&a, "[3*batch0,5]", "[3,5]", "[6,5]");
    o = (axis_obs){0};
    OBS(&o, 2, 7, 2, 4);
    OBS(&o, 8, 7, 8, 4);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[1], AXIS_BATCH);
    shapes_are(&a, "[7,batch1,4]", "[7,2,4]", "[7,8,4]");

    /* A dynamic seq beside the batch: min and max kept. */
    o = (axis_obs){0};
    OBS(&o, 1, 1, 16, 4);
    OBS(&o, 2, 2, 16, 4);
    OBS(&o, 1, 1, 32, 4);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_BATCH);
    assert_int_equal(a.kind[1], AXIS_DYNAMIC);
    assert_string_equal(a.name[1], "dim1");
    assert_int_equal(a.min[1], 16);
    assert_int_equal(a.max[1], 32);
    shapes_are(&a, "[batch0,dim1,4]", "[1,16,4]", "[2,32,4]");

    /* Not an integer multiple (3 at batch 2, 6 at batch 4 is 1.5x): dynamic. */
    o = (axis_obs){0};
    OBS(&o, 2, 3);
    OBS(&o, 4, 6);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_DYNAMIC);
    /* A multiple that changes (2x, then 3x): dynamic. */
    o = (axis_obs){0};
    OBS(&o, 1, 2);
    OBS(&o, 2, 6);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_DYNAMIC);

    /* One batch size: no batch axis, even where the size is the batch. */
    o = (axis_obs){0};
    OBS(&o, 2, 2, 16);
    OBS(&o, 2, 2, 16);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_STATIC);
    assert_int_equal(a.kind[1], AXIS_STATIC);
    o = (axis_obs){0};
    OBS(&o, 2, 2, 16);
    OBS(&o, 2, 2, 32);
    axes_classify(&o, &a);
    assert_int_equal(a.kind[0], AXIS_STATIC);
    assert_int_equal(a.kind[1], AXIS_DYNAMIC);

    /* Scalars and no observations. */
    o = (axis_obs){0};
    axes_classify(&o, &a);
    assert_int_equal(a.rank, 0);
    observe(&o, 1, 0, NULL);
    observe(&o, 2, 0, NULL);
    axes_classify(&o, &a);
    shapes_are(&a, "[]", "[]", "[]");

    /* Errors: rank changes, a batch below 1, too many observations. */
    ait_error e = {0};
    o = (axis_obs){0};
    OBS(&o, 1, 1, 5);
    assert_int_equal(axes_observe(&o, 2, 1, (int64_t[]){2}, &e), AIT_E_SHAPE);
    assert_non_null(strstr(e.msg, "rank 1"));
    assert_int_equal(axes_observe(&o, 0, 2, (int64_t[]){2, 5}, &e), AIT_E_INVALID_ARG);
    assert_int_equal(axes_observe(&o, 1, AIT_MAX_RANK + 1, (int64_t[AIT_MAX_RANK + 1]){0}, &e),
                     AIT_E_INVALID_ARG);
    while (o.n < AXES_MAX_OBS) OBS(&o, 1, 1, 5);
    assert_int_equal(axes_observe(&o, 1, 2, (int64_t[]){1, 5}, &e), AIT_E_INVALID_ARG);
    assert_int_equal(o.n, AXES_MAX_OBS);

    /* A short buffer truncates, never overruns. */
    o = (axis_obs){0};
    OBS(&o, 1, 1, 224, 224);
    OBS(&o, 2, 2, 224, 224);
    axes_classify(&o, &a);
    char small[8];
    assert_string_equal(axes_shape_str(&a, 0, small, sizeof small), "[batch0");
}

/* ---- loading ---- */

static float f32_at(const tensor *t, int64_t i) { return ((const float *)t->data)[i]; }

static void test_load_layouts(void **state)
{
    (void)state;
    ait_model *m = test_load(test_bad("two_inputs.onnx"));
    /* One .npz: one sample. */
    write_npz(at("one.npz"), 2, "b", T(AIT_F32, 100, 2, 3), "a", T(AIT_F32, 0, 2, 3));
    sample_set *s = load_ok(m, at("one.npz"), 1);
    assert_string_equal(s->s[0].source, at("one.npz"));
    assert_int_equal(s->s[0].values[0]->dims[0], 2);
    assert_float_equal(f32_at(s->s[0].values[0], 5), 5, 0); /* a, in input order */
    assert_float_equal(f32_at(s->s[0].values[1], 0), 100, 0);
    sample_set_free(s);

    /* A folder of .npz files, in name order; other files are skipped. */
    mkdir_p(at("npzs"));
    write_npz(at("npzs/s1.npz"), 2, "a", T(AIT_F32, 10, 1, 3), "b", T(AIT_F32, 0, 1, 3));
    write_npz(at("npzs/s0.npz"), 2, "a", T(AIT_F32, 20, 3, 3), "b", T(AIT_F32, 0, 3, 3));
    FILE *f = fopen(at("npzs/README"), "w");
    assert_non_null(f);
    fclose(f);
    s = load_ok(m, at("npzs"), 2);
    assert_string_equal(s->s[0].source, at("npzs/s0.npz"));
    assert_int_equal(s->s[0].values[0]->dims[0], 3);
    assert_int_equal(s->s[1].values[0]->dims[0], 1);
    assert_float_equal(f32_at(s->s[1].values[0], 0), 10, 0);
    sample_set_free(s);

    /* A folder of sample folders, one .npy per input. */
    mkdir_p(at("dirs"));
    mkdir_p(at("dirs/x0"));
    mkdir_p(at("dirs/x1"));
    write_npy(at("dirs/x0/a.npy"), T(AIT_F32, 1, 2, 3));
    write_npy(at("dirs/x0/b.npy"), T(AIT_F32, 2, 2, 3));
    write_npy(at("dirs/x1/a.npy"), T(AIT_F32, 3, 4, 3));
    write_npy(at("dirs/x1/b.npy"), T(AIT_F32, 4, 4, 3));
    s = load_ok(m, at("dirs"), 2);
    assert_string_equal(s->s[1].source, at("dirs/x1"));
    assert_int_equal(s->s[1].values[1]->dims[0], 4);
    assert_float_equal(f32_at(s->s[1].values[1], 0), 4, 0);
    sample_set_free(s);

    /* One sample folder given directly. */
    s = load_ok(m, at("dirs/x0"), 1);
    assert_float_equal(f32_at(s->s[0].values[0], 0), 1, 0);
    sample_set_free(s);
    ait_model_free(m);
}

static void test_bad_samples(void **state)
{
    (void)state;
    ait_model *m = test_load(test_bad("two_inputs.onnx"));
    write_npz(at("missing.npz"), 1, "a", T(AIT_F32, 0, 2, 3));
    load_fails(m, at("missing.npz"), AIT_E_NOT_FOUND, "missing.npz", "input 'b'");
    write_npz(at("extra.npz"), 3, "a", T(AIT_F32, 0, 2, 3), "b", T(AIT_F32, 0, 2, 3), "c",
              T(AIT_F32, 0, 2, 3));
    load_fails(m, at("extra.npz"), AIT_E_NOT_FOUND, "extra.npz", "array 'c' is not an input");
    write_npz(at("dtype.npz"), 2, "a", T(AIT_F32, 0, 2, 3), "b", T(AIT_F64, 0, 2, 3));
    load_fails(m, at("dtype.npz"), AIT_E_DTYPE, "dtype.npz", "input 'b' is float64");
    write_npz(at("rank.npz"), 2, "a", T(AIT_F32, 0, 6), "b", T(AIT_F32, 0, 2, 3));
    load_fails(m, at("rank.npz"), AIT_E_SHAPE, "rank.npz", "input 'a' has rank 1");
    write_npz(at("static.npz"), 2, "a", T(AIT_F32, 0, 2, 3), "b", T(AIT_F32, 0, 2, 4));
    load_fails(m, at("static.npz"), AIT_E_SHAPE, "static.npz", "dim 1 must be 3");
    write_npz(at("symbol.npz"), 2, "a", T(AIT_F32, 0, 2, 3), "b", T(AIT_F32, 0, 3, 3));
    load_fails(m, at("symbol.npz"), AIT_E_SHAPE, "symbol.npz", "('N') is 3");
    load_fails(m, at("no-such.npz"), AIT_E_IO, "no-such.npz", NULL);
    load_fails(m, test_bad("good.npy"), AIT_E_PARSE, "good.npy", NULL);

    /* In a folder: the message names the sample's file. */
    mkdir_p(at("bad"));
    mkdir_p(at("bad/s0"));
    write_npy(at("bad/s0/a.npy"), T(AIT_F32, 0, 2, 3));
    write_npy(at("bad/s0/b.npy"), T(AIT_I64, 0, 2, 3));
    load_fails(m, at("bad"), AIT_E_DTYPE, at("bad/s0/b.npy"), "is int64");
    write_npy(at("bad/s0/b.npy"), T(AIT_F32, 0, 2, 3));
    mkdir_p(at("bad/s1"));
    write_npy(at("bad/s1/a.npy"), T(AIT_F32, 0, 2, 3));
    load_fails(m, at("bad"), AIT_E_NOT_FOUND, at("bad/s1/b.npy"), "input 'b'");
    write_npy(at("bad/s1/b.npy"), T(AIT_F32, 0, 2, 3));
    write_npy(at("bad/s1/z.npy"), T(AIT_F32, 0, 2, 3));
    load_fails(m, at("bad"), AIT_E_NOT_FOUND, at("bad/s1/z.npy"), "'z' is not an input");
    assert_int_equal(unlink(at("bad/s1/z.npy")), 0);
    sample_set_free(load_ok(m, at("bad"), 2));

    /* Empty folders, and layouts mixed in one folder. */
    mkdir_p(at("empty"));
    load_fails(m, at("empty"), AIT_E_NOT_FOUND, "no samples", at("empty"));
    mkdir_p(at("bad/s2"));
    load_fails(m, at("bad"), AIT_E_NOT_FOUND, "no .npy files", at("bad/s2"));
    write_npz(at("bad/s3.npz"), 2, "a", T(AIT_F32, 0, 2, 3), "b", T(AIT_F32, 0, 2, 3));
    load_fails(m, at("bad"), AIT_E_INVALID_ARG, "mixes", at("bad"));
    ait_model_free(m);
}

/* ---- batches ---- */

static void batch_ok(const ait_model *m, const sample_set *s, int b, tensor **in)
{
    ait_error e = {0};
    if (samples_batch(m, s, b, in, &e) != AIT_OK) fail_msg("batch %d: %s", b, e.msg);
}

static void free_inputs(tensor **in, int n)
{
    for (int i = 0; i < n; i++) ait_tensor_free(in[i]);
}

/* Row r of a [rows, 3] tensor starts with this value. */
static float row0(const tensor *t, int r) { return f32_at(t, 3 * r); }

static void test_batch(void **state)
{
    (void)state;
    ait_model *m = test_load(test_bad("two_inputs.onnx"));
    assert_int_equal(samples_batch_axis(m, 0), 0);
    assert_int_equal(samples_batch_axis(m, 1), 0);
    assert_int_equal(samples_batch_axis(m, 2), -1);
    /* One sample of batch 2 (rows start 0 and 3): repeated to 5, sliced to 1. */
    write_npz(at("b2.npz"), 2, "a", T(AIT_F32, 0, 2, 3), "b", T(AIT_F32, 100, 2, 3));
    sample_set *s = load_ok(m, at("b2.npz"), 1);
    tensor *in[2];
    batch_ok(m, s, 5, in);
    assert_int_equal(in[0]->dims[0], 5);
    assert_int_equal(in[0]->dims[1], 3);
    float want[5] = {0, 3, 0, 3, 0};
    for (int r = 0; r < 5; r++) {
        assert_float_equal(row0(in[0], r), want[r], 0);
        assert_float_equal(row0(in[1], r), 100 + want[r], 0);
        assert_float_equal(f32_at(in[0], 3 * r + 2), want[r] + 2, 0);
    }
    free_inputs(in, 2);
    batch_ok(m, s, 1, in);
    assert_int_equal(in[0]->dims[0], 1);
    assert_float_equal(row0(in[0], 0), 0, 0);
    free_inputs(in, 2);
    ait_error e = {0};
    in[0] = in[1] = (tensor *)1;
    assert_int_equal(samples_batch(m, s, 0, in, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "batch size 0"));
    assert_null(in[0]);
    sample_set_free(s);

    /* Samples in order: s0 has 3 rows (20, 23, 26), s1 one row (10). */
    mkdir_p(at("order"));
    write_npz(at("order/s1.npz"), 2, "a", T(AIT_F32, 10, 1, 3), "b", T(AIT_F32, 0, 1, 3));
    write_npz(at("order/s0.npz"), 2, "a", T(AIT_F32, 20, 3, 3), "b", T(AIT_F32, 0, 3, 3));
    s = load_ok(m, at("order"), 2);
    batch_ok(m, s, 6, in);
    float order[6] = {20, 23, 26, 10, 20, 23};
    for (int r = 0; r < 6; r++) assert_float_equal(row0(in[0], r), order[r], 0);
    free_inputs(in, 2);
    batch_ok(m, s, 2, in);
    assert_float_equal(row0(in[0], 1), 23, 0);
    free_inputs(in, 2);
    sample_set_free(s);
    ait_model_free(m);

    /* An encoded image (a 1-D uint8 stream of symbolic length) is one item:
     * no batch axis, so batches never slice or repeat its bytes. */
    m = test_load(test_bad("image_decoder.onnx"));
    assert_int_equal(samples_batch_axis(m, 0), -1);
    ait_model_free(m);

    /* A static input is sample 0's whatever the batch. */
    m = test_load(test_bad("good.onnx"));
    assert_int_equal(samples_batch_axis(m, 0), -1);
    write_npz(at("good.npz"), 1, "x", T(AIT_F32, 7, 2, 3));
    s = load_ok(m, at("good.npz"), 1);
    batch_ok(m, s, 4, in);
    assert_int_equal(in[0]->dims[0], 2);
    assert_float_equal(f32_at(in[0], 0), 7, 0);
    free_inputs(in, 1);
    sample_set_free(s);
    ait_model_free(m);
}

static void test_batch_mismatch(void **state)
{
    (void)state;
    ait_model *m = test_load(test_bad("tokens.onnx"));
    mkdir_p(at("seq"));
    write_npz(at("seq/a.npz"), 3, "ids", T(AIT_I64, 0, 1, 4), "attention_mask",
              T(AIT_I64, 1, 1, 4), "h", T(AIT_F32, 0, 2, 1, 4));
    write_npz(at("seq/b.npz"), 3, "ids", T(AIT_I64, 0, 1, 6), "attention_mask",
              T(AIT_I64, 1, 1, 6), "h", T(AIT_F32, 0, 2, 1, 4));
    sample_set *s = load_ok(m, at("seq"), 2);
    tensor *in[3];
    batch_ok(m, s, 1, in); /* only sample a is used */
    assert_int_equal(in[0]->dims[1], 4);
    free_inputs(in, 3);
    ait_error e = {0};
    assert_int_equal(samples_batch(m, s, 2, in, &e), AIT_E_SHAPE);
    if (!strstr(e.msg, at("seq/b.npz")) || !strstr(e.msg, "input 'ids'") ||
        !strstr(e.msg, "[1,6]"))
        fail_msg("unexpected message: %s", e.msg);
    for (int i = 0; i < 3; i++) assert_null(in[i]);
    sample_set_free(s);
    ait_model_free(m);
}

static void test_batch_middle_axis(void **state)
{
    (void)state;
    ait_model *m = test_load(test_bad("tokens.onnx"));
    assert_int_equal(samples_batch_axis(m, 0), 0);
    assert_int_equal(samples_batch_axis(m, 1), 0);
    assert_int_equal(samples_batch_axis(m, 2), 1);
    /* h rows: h[o, r, :] starts at 4 * (o * rows + r) + base. */
    write_npz(at("mid.npz"), 3, "ids", T(AIT_I64, 0, 2, 3), "attention_mask",
              T(AIT_I64, 1, 2, 3), "h", T(AIT_F32, 0, 2, 2, 4));
    sample_set *s = load_ok(m, at("mid.npz"), 1);
    tensor *in[3];
    batch_ok(m, s, 3, in);
    const tensor *h = in[2];
    assert_int_equal(h->rank, 3);
    assert_int_equal(h->dims[0], 2);
    assert_int_equal(h->dims[1], 3);
    assert_int_equal(h->dims[2], 4);
    /* out[o][r] = in[o][r % 2] */
    for (int o = 0; o < 2; o++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++)
                assert_float_equal(f32_at(h, (o * 3 + r) * 4 + c), (o * 2 + r % 2) * 4 + c, 0);
    assert_int_equal(in[0]->dims[0], 3);
    assert_int_equal(elem_get_i64(in[0]->data, AIT_I64, 6), 0); /* row 2 = row 0 */
    free_inputs(in, 3);
    sample_set_free(s);
    ait_model_free(m);
}

/* ---- generation ---- */

static void test_generate(void **state)
{
    (void)state;
    ait_model *m = test_load(test_bad("tokens.onnx"));
    sample_opts o = {.batch = 2, .n_dims = 1, .dim_names = {"seq"}, .dim_vals = {5}, .count = 2,
                     .seed = 7};
    ait_error e = {0};
    sample_set *s;
    if (samples_generate(m, &o, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(s->n, 2);
    assert_string_equal(s->s[1].source, "generated");
    const tensor *ids = s->s[0].values[0], *mask = s->s[0].values[1], *h = s->s[0].values[2];
    assert_int_equal(ids->dtype, AIT_I64);
    assert_int_equal(ids->dims[0], 2);
    assert_int_equal(ids->dims[1], 5);
    assert_int_equal(h->dims[1], 2);
    bool differ = false;
    for (int i = 0; i < 10; i++) {
        int64_t v = elem_get_i64(ids->data, AIT_I64, i);
        assert_true(v >= 0 && v < 50); /* below the table's 50 rows */
        assert_int_equal(elem_get_i64(mask->data, AIT_I64, i), 1);
        differ |= v != elem_get_i64(s->s[1].values[0]->data, AIT_I64, i);
    }
    assert_true(differ); /* each sample draws its own values */
    for (int i = 0; i < 16; i++) assert_true(f32_at(h, i) >= -1 && f32_at(h, i) < 1);

    /* One input at a time (ait run) draws what sample 0 has. */
    uint64_t rng = o.seed;
    tensor *one;
    for (int i = 0; i < 3; i++) {
        if (samples_generate_input(m, i, &o, &rng, &one, &e) != AIT_OK) fail_msg("%s", e.msg);
        assert_memory_equal(one->data, s->s[0].values[i]->data, tensor_nbytes(one));
        ait_tensor_free(one);
    }
    /* Batches of generated samples take their rows in turn: both rows of
     * sample 0, then the first of sample 1. */
    tensor *in[3];
    batch_ok(m, s, 3, in);
    assert_int_equal(in[0]->dims[0], 3);
    assert_memory_equal(in[0]->data, ids->data, 10 * sizeof(int64_t));
    assert_memory_equal((int64_t *)in[0]->data + 10, s->s[1].values[0]->data,
                        5 * sizeof(int64_t));
    free_inputs(in, 3);
    sample_set_free(s);
    assert_int_equal(samples_generate_input(m, 3, &o, &rng, &one, &e), AIT_E_INVALID_ARG);
    ait_model_free(m);

    /* Unnamed dims: N at axis 0 without --dim is 1 (with a note). */
    m = test_load(test_bad("two_inputs.onnx"));
    o = (sample_opts){.batch = 4};
    if (samples_generate(m, &o, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(s->n, 1);
    assert_int_equal(s->s[0].values[0]->dims[0], 1);
    sample_set_free(s);
    o = (sample_opts){.n_dims = 1, .dim_names = {"N"}, .dim_vals = {5}};
    if (samples_generate(m, &o, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(s->s[0].values[1]->dims[0], 5);
    sample_set_free(s);
    ait_model_free(m);
}

/* Which dims generating left at 1 (said after a failure), and --dim names
 * the model lacks. */
static void test_defaulted_dims(void **st)
{
    (void)st;
    ait_error e = {0};
    ait_model *m = test_load(test_bad("tokens.onnx")); /* ids, attention_mask [batch,seq]; h [2,batch,4] */
    sample_opts o = {.batch = 2};
    snprintf(e.msg, sizeof e.msg, "it failed");
    samples_explain_defaults(m, &o, NULL, &e);
    assert_string_equal(e.msg, "it failed (the inputs were generated, and dims nobody set were 1: "
                               "input 'ids' dim 1 ('seq'); input 'attention_mask' dim 1 ('seq'); "
                               "set them with --dim seq=V)");
    bool gen[3] = {false, true, true}; /* ids from a file: only the mask's seq is named */
    snprintf(e.msg, sizeof e.msg, "it failed");
    samples_explain_defaults(m, &o, gen, &e);
    assert_string_equal(e.msg, "it failed (the inputs were generated, and dims nobody set were 1: "
                               "input 'attention_mask' dim 1 ('seq'); set them with --dim seq=V)");
    o = (sample_opts){.n_dims = 1, .dim_names = {"seq"}, .dim_vals = {7}}; /* set: no advice */
    snprintf(e.msg, sizeof e.msg, "it failed");
    samples_explain_defaults(m, &o, NULL, &e);
    assert_string_equal(e.msg, "it failed");
    assert_int_equal(samples_check_dims(m, &o, &e), AIT_OK);
    o = (sample_opts){.n_dims = 2, .dim_names = {"seq", "sequence"}, .dim_vals = {7, 8}};
    assert_int_equal(samples_check_dims(m, &o, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "--dim sequence=8: "));
    assert_non_null(strstr(e.msg, "has no dim called 'sequence'; its inputs' dims are named: batch, seq"));
    ait_model_free(m);

    m = test_load(test_bad("two_inputs.onnx")); /* N: both inputs' first dim */
    o = (sample_opts){.n_dims = 1, .dim_names = {"N"}, .dim_vals = {5}};
    assert_int_equal(samples_check_dims(m, &o, &e), AIT_OK);
    ait_model_free(m);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

int main(void)
{
    dir = getenv("AIT_BAD_DIR");
    if (!dir) {
        fprintf(stderr, "set AIT_BAD_DIR to the folder tests/unit/make_bad_models.py wrote\n");
        return 1;
    }
    const char *t = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/ait-samples-XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axes),          cmocka_unit_test(test_load_layouts),
        cmocka_unit_test(test_bad_samples),   cmocka_unit_test(test_batch),
        cmocka_unit_test(test_batch_mismatch), cmocka_unit_test(test_batch_middle_axis),
        cmocka_unit_test(test_generate),      cmocka_unit_test(test_defaulted_dims),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return r;
}
