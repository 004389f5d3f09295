/* Bad attributes and inputs of Col2Im, CenterCropPad, AffineGrid,
 * MaxRoiPool, DeformConv and LpNormalization: each fails with its status
 * and a message naming the problem (the executor adds the node), never a
 * crash or a silent answer. And what the spec allows is not refused: a
 * MaxRoiPool ROI outside the image pools nothing (zeros). One-node graphs
 * built in memory; their inputs are constants. Also op_scratch_parts' empty
 * parts (never NULL) and its overflow refusal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/op.h"
#include "test_graph.h"
#include "testutil.h"

static float zeros[4096];
static const int64_t i64_2[2] = {2, 2}, i64_3[3] = {3, 3, 3};

#define F32(r, ...) {.dt = AIT_F32, .rank = r, .dims = {__VA_ARGS__}, .data = zeros}
#define I64(n, d) {.dt = AIT_I64, .rank = 1, .dims = {n}, .data = d}
#define INTS(nm, ...) {.name = nm, .type = ATTR_INTS, .n = sizeof((int64_t[]){__VA_ARGS__}) / 8, \
                       .ints = {__VA_ARGS__}}
#define AINT(nm, v) {.name = nm, .type = ATTR_INT, .i = v}

/* Runs op on ins (all constants) and expects failure code with needle in
 * the message, and the node named in it. */
static void fails_(const char *op, int opset, const tg_in *ins, int n_in, const tg_attr *as,
                   int n_attr, ait_status code, const char *needle)
{
    graph *g = tg_node(op, opset, ins, n_in, as, n_attr);
    exec *x = tg_exec(g);
    ait_error e = {0};
    tensor *y;
    ait_status s = tg_run(x, NULL, &y, &e);
    if (s != code || !strstr(e.msg, needle) || !strstr(e.msg, op))
        fail_msg("%s: got %s '%s', expected %s containing '%s'", op, ait_status_string(s), e.msg,
                 ait_status_string(code), needle);
    exec_free(x);
    graph_free(g);
}
#define FAILS(op, opset, ins, as, code, needle)                                                 \
    fails_(op, opset, ins, (int)(sizeof ins / sizeof ins[0]), as,                                \
           (int)(sizeof as / sizeof as[0]), code, needle)
static const tg_attr none[1] = {{.name = "unused_attribute", .type = ATTR_INT}};

static char scratch_block[4096] __attribute__((aligned(64)));
static void *fake_scratch(op_ctx *c, size_t bytes)
{
    (void)c;
    return bytes <= sizeof scratch_block ? scratch_block : NULL;
}

/* op_scratch_parts: no part is NULL, an empty one included (an op offsets
 * it by 0 for an empty tensor: NULL + 0 is undefined, what fuzz-model found
 * at four call sites), even when every part is empty and no block is
 * taken; a size that overflows is refused, never handed out. */
static void test_scratch_parts(void **state)
{
    (void)state;
    op_host host = {.scratch = fake_scratch};
    ait_error e = {0};
    op_ctx c = {.err = &e, .host = &host};
    void *part[3] = {NULL, NULL, NULL};
    const size_t none[3] = {0, 0, 0}, some[3] = {0, 100, 0}, huge[2] = {SIZE_MAX, 0};
    assert_int_equal(op_scratch_parts(&c, 3, none, part), AIT_OK);
    for (int i = 0; i < 3; i++) assert_non_null(part[i]);
    assert_int_equal(op_scratch_parts(&c, 3, some, part), AIT_OK);
    for (int i = 0; i < 3; i++) assert_non_null(part[i]);
    assert_ptr_equal(part[1], scratch_block);
    assert_int_equal(op_scratch_parts(&c, 2, huge, part), AIT_E_OVERFLOW);
}

static void test_col2im(void **state)
{
    (void)state;
    /* 5 rows are not a multiple of the 2x2 block */
    tg_in a[3] = {F32(3, 1, 5, 4), I64(2, i64_3), I64(2, i64_2)};
    FAILS("Col2Im", 18, a, none, AIT_E_SHAPE, "not a multiple of the block size");
    /* a 3x3 image in 2x2 blocks has 4 of them, not 5 */
    tg_in b[3] = {F32(3, 1, 4, 5), I64(2, i64_3), I64(2, i64_2)};
    FAILS("Col2Im", 18, b, none, AIT_E_SHAPE, "has 5 blocks (dim 2)");
    tg_in c[3] = {F32(3, 1, 4, 4), I64(3, i64_3), I64(2, i64_2)};
    FAILS("Col2Im", 18, c, none, AIT_E_SHAPE, "image_shape has 3 values and block_shape 2");
    static const int64_t big[2] = {4, 4};
    tg_in d[3] = {F32(3, 1, 16, 1), I64(2, i64_2), I64(2, big)};
    FAILS("Col2Im", 18, d, none, AIT_E_SHAPE, "larger than the padded image");
    tg_in ok[3] = {F32(3, 1, 4, 4), I64(2, i64_3), I64(2, i64_2)};
    tg_attr dil[1] = {INTS("dilations", 1)};
    FAILS("Col2Im", 18, ok, dil, AIT_E_INVALID_ARG, "dilations has 1 values, expected 2");
    tg_attr st[1] = {INTS("strides", 1, 0)};
    FAILS("Col2Im", 18, ok, st, AIT_E_INVALID_ARG, "strides[1] = 0 is out of range");
    static const int64_t neg[2] = {3, -3};
    tg_in e[3] = {F32(3, 1, 4, 4), I64(2, neg), I64(2, i64_2)};
    FAILS("Col2Im", 18, e, none, AIT_E_INVALID_ARG, "must be in [1, 2^31)");
}

static void test_center_crop_pad(void **state)
{
    (void)state;
    static const int64_t s2[2] = {2, 2}, s3[3] = {2, 2, 2}, sneg[2] = {2, -1};
    tg_in a[2] = {F32(3, 4, 4, 4), I64(2, s2)};
    tg_attr ax[1] = {INTS("axes", 0, 3)};
    FAILS("CenterCropPad", 18, a, ax, AIT_E_INVALID_ARG, "axis 3 is out of range for rank 3");
    tg_attr axn[1] = {INTS("axes", -4, 0)};
    FAILS("CenterCropPad", 18, a, axn, AIT_E_INVALID_ARG, "axis -4 is out of range");
    tg_attr rep[1] = {INTS("axes", 1, -2)};
    FAILS("CenterCropPad", 18, a, rep, AIT_E_INVALID_ARG, "axis 1 is repeated");
    FAILS("CenterCropPad", 18, a, none, AIT_E_SHAPE, "shape has 2 values for 3 axes");
    tg_in b[2] = {F32(3, 4, 4, 4), I64(3, s3)};
    tg_attr two[1] = {INTS("axes", 0, 1)};
    FAILS("CenterCropPad", 18, b, two, AIT_E_SHAPE, "shape has 3 values for 2 axes");
    tg_in c[2] = {F32(3, 4, 4, 4), I64(2, sneg)};
    FAILS("CenterCropPad", 18, c, two, AIT_E_INVALID_ARG, "shape[1] = -1 is negative");
    tg_in d[2] = {F32(3, 4, 4, 4), F32(1, 2)};
    FAILS("CenterCropPad", 18, d, two, AIT_E_DTYPE, "shape must be int32 or int64");
}

static void test_affine_grid(void **state)
{
    (void)state;
    static const int64_t size4[4] = {2, 1, 3, 3}, size3[3] = {2, 3, 3};
    tg_in a[2] = {F32(3, 3, 2, 3), I64(4, size4)};
    FAILS("AffineGrid", 20, a, none, AIT_E_SHAPE, "theta has 3 matrices but size says N = 2");
    tg_in b[2] = {F32(3, 2, 3, 4), I64(4, size4)};
    FAILS("AffineGrid", 20, b, none, AIT_E_SHAPE, "theta must be (N, 2, 3) for a 2D size");
    tg_in c[2] = {F32(3, 2, 2, 3), I64(3, size3)};
    FAILS("AffineGrid", 20, c, none, AIT_E_SHAPE, "size must hold 4 values");
}

static void test_max_roi_pool(void **state)
{
    (void)state;
    tg_attr ps[1] = {INTS("pooled_shape", 2, 2)};
    tg_in a[2] = {F32(4, 1, 1, 4, 4), F32(2, 1, 4)};
    FAILS("MaxRoiPool", 22, a, ps, AIT_E_SHAPE, "rois must be [num_rois, 5]");
    tg_in b[2] = {F32(4, 1, 1, 4, 4), F32(2, 1, 5)};
    FAILS("MaxRoiPool", 22, b, none, AIT_E_INVALID_ARG, "pooled_shape must be two positive");
    tg_attr ps0[1] = {INTS("pooled_shape", 2, 0)};
    FAILS("MaxRoiPool", 22, b, ps0, AIT_E_INVALID_ARG, "pooled_shape must be two positive");
    float rois[5] = {1, 0, 0, 2, 2}; /* batch 1 of 1 */
    tg_in c[2] = {F32(4, 1, 1, 4, 4), {.dt = AIT_F32, .rank = 2, .dims = {1, 5}, .data = rois}};
    FAILS("MaxRoiPool", 22, c, ps, AIT_E_INVALID_ARG, "batch_id 1 of roi 0 is out of [0, 1)");
    /* a ROI wholly outside the image is fine: empty bins give 0 */
    float x[16], out_roi[5] = {0, 10, 12, 20, 30};
    for (int i = 0; i < 16; i++) x[i] = 1 + (float)i;
    tg_in d[2] = {{.dt = AIT_F32, .rank = 4, .dims = {1, 1, 4, 4}, .data = x},
                  {.dt = AIT_F32, .rank = 2, .dims = {1, 5}, .data = out_roi}};
    graph *g = tg_node("MaxRoiPool", 22, d, 2, ps, 1);
    exec *ex = tg_exec(g);
    ait_error e = {0};
    tensor *y;
    if (tg_run(ex, NULL, &y, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(tensor_numel(y), 4);
    for (int i = 0; i < 4; i++) assert_true(((float *)y->data)[i] == 0);
    exec_free(ex);
    graph_free(g);
}

static void test_deform_conv(void **state)
{
    (void)state;
    /* X [1, 2, 3, 3], W [1, 2, 2, 2]: output [1, 1, 2, 2], offset [1, 8, 2, 2] */
    tg_in a[3] = {F32(4, 1, 2, 3, 3), F32(4, 1, 2, 2, 2), F32(4, 1, 6, 2, 2)};
    FAILS("DeformConv", 22, a, none, AIT_E_SHAPE,
          "offset has shape [1,6,2,2]; expected [1,8,2,2]");
    tg_in b[3] = {F32(4, 1, 2, 3, 3), F32(4, 1, 2, 2, 2), F32(4, 1, 8, 3, 3)};
    FAILS("DeformConv", 22, b, none, AIT_E_SHAPE, "offset has shape [1,8,3,3]; expected");
    tg_attr og[1] = {AINT("offset_group", 2)};
    FAILS("DeformConv", 22, b, og, AIT_E_SHAPE, "expected [1,16,2,2]");
    tg_attr og3[1] = {AINT("offset_group", 3)};
    FAILS("DeformConv", 22, b, og3, AIT_E_INVALID_ARG, "offset_group 3 must be positive and divide");
    tg_in c[5] = {F32(4, 1, 2, 3, 3), F32(4, 1, 2, 2, 2), F32(4, 1, 8, 2, 2), F32(1, 2),
                  F32(4, 1, 4, 2, 2)};
    FAILS("DeformConv", 22, c, none, AIT_E_SHAPE, "B has shape [2]; expected [1]");
    tg_in d[5] = {F32(4, 1, 2, 3, 3), F32(4, 1, 2, 2, 2), F32(4, 1, 8, 2, 2), {.omit = true},
                  F32(4, 1, 8, 2, 2)};
    FAILS("DeformConv", 22, d, none, AIT_E_SHAPE, "mask has shape [1,8,2,2]; expected [1,4,2,2]");
    tg_in e[3] = {F32(4, 1, 3, 3, 3), F32(4, 1, 2, 2, 2), F32(4, 1, 8, 2, 2)};
    FAILS("DeformConv", 22, e, none, AIT_E_SHAPE, "input has 3 channels");
    static double wd[8];
    tg_in f[3] = {F32(4, 1, 2, 3, 3), {.dt = AIT_F64, .rank = 4, .dims = {1, 2, 2, 2}, .data = wd},
                  F32(4, 1, 8, 2, 2)};
    FAILS("DeformConv", 22, f, none, AIT_E_DTYPE, "W is float64 but X is float32");
}

static void test_lp_normalization(void **state)
{
    (void)state;
    tg_in a[1] = {F32(2, 2, 3)};
    tg_attr p3[1] = {AINT("p", 3)};
    FAILS("LpNormalization", 22, a, p3, AIT_E_INVALID_ARG, "p must be 1 or 2, not 3");
    tg_attr ax[1] = {AINT("axis", 2)};
    FAILS("LpNormalization", 1, a, ax, AIT_E_INVALID_ARG, "axis 2 is out of range for rank 2");
    static const int64_t iv[2] = {1, 2};
    tg_in b[1] = {I64(2, iv)};
    FAILS("LpNormalization", 22, b, none, AIT_E_UNSUPPORTED, "int64");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scratch_parts), cmocka_unit_test(test_col2im),       cmocka_unit_test(test_center_crop_pad),
        cmocka_unit_test(test_affine_grid),  cmocka_unit_test(test_max_roi_pool),
        cmocka_unit_test(test_deform_conv),  cmocka_unit_test(test_lp_normalization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
