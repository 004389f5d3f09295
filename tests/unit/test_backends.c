/* Every backend against the reference, the way ggml's test-backend-ops
 * does it: for each available backend, each op it implements (found by
 * asking op_for about every op in the op table) runs on one-node graphs of
 * many shapes and attributes, and whole modules (a ResNet block, a BERT
 * layer) run as the backend builds them; outputs must match the reference
 * backend by normalised mean squared error. Models come from
 * $AIT_TEST_DATA/models (tools/export_models.py). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "test_graph.h"
#include "backends/backend.h"
#include "backends/native/native.h"
#include "backends/onednn/impls.h"
#include "graph/extract.h"
#include "kernels/gemm.h"
#include "kernels/gemm_tuned.h"
#include "graph/modules.h"
#include "runtime/model.h"
#include "ops/matmul_ref.h"
#include "exec/exec.h"
#include "exec/node_costs.h"
#include "kernels/isa.h"
#include "tune/calib.h"
#include "tune/samples.h"

#define NMSE_F32 1e-10 /* float32: sums in another order, nothing worse */

static const char *data;
static double worst; /* the largest NMSE seen, printed at the end */
static const char *worst_what = "";
static char worst_buf[160];

/* ---- one-node graphs ---------------------------------------------------- */

typedef struct in_spec {
    int rank; /* -1: input omitted */
    int64_t dims[AIT_MAX_RANK];
    bool konst; /* a constant (weights) rather than a graph input */
} in_spec;

/* A graph of one node `op` over inputs ins[0..n_in) (constants filled with
 * random data); *feed receives random tensors for its graph inputs. */
static graph *one_node(const char *op, const in_spec *ins, int n_in, const tg_attr *as, int n_attr,
                       tensor **feed, int *n_feed)
{
    tg_in in[16] = {{0}};
    tensor *konst[16] = {0};
    assert_true(n_in <= 16);
    *n_feed = 0;
    for (int k = 0; k < n_in; k++) {
        in[k] = (tg_in){.dt = AIT_F32, .rank = ins[k].rank, .omit = ins[k].rank < 0};
        if (in[k].omit) continue;
        memcpy(in[k].dims, ins[k].dims, sizeof(int64_t) * (size_t)ins[k].rank);
        tensor *t = test_rand_tensor(ins[k].rank, ins[k].dims);
        if (ins[k].konst) in[k].data = (konst[k] = t)->data;
        else feed[(*n_feed)++] = t;
    }
    graph *g = tg_node(op, 17, in, n_in, as, n_attr);
    for (int k = 0; k < n_in; k++) test_tensor_free(konst[k]);
    return g;
}

/* ---- comparison ----------------------------------------------------------- */

static double nmse(const tensor *got, const tensor *want)
{
    double num = 0, den = 0;
    const float *a = got->data, *b = want->data;
    for (int64_t i = 0; i < tensor_numel(want); i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? num / den : num;
}

static void expect_close(const tensor *got, const tensor *want, const char *what)
{
    char sg[96], sw[96];
    if (got->rank != want->rank || memcmp(got->dims, want->dims, sizeof(int64_t) * (size_t)got->rank))
        fail_msg("%s: shape %s, reference %s", what, shape_str(got->dims, got->rank, sg, sizeof sg),
                 shape_str(want->dims, want->rank, sw, sizeof sw));
    assert_int_equal(got->dtype, want->dtype);
    if (want->dtype != AIT_F32) { /* the backends here change float32 arithmetic only */
        assert_memory_equal(got->data, want->data, tensor_nbytes(want));
        return;
    }
    double err = nmse(got, want);
    if (!(err <= NMSE_F32)) fail_msg("%s: NMSE %.3g over the bound %.0e", what, err, NMSE_F32);
    if (err > worst) {
        worst = err;
        snprintf(worst_buf, sizeof worst_buf, "%s", what);
        worst_what = worst_buf;
    }
}

/* Set to print the implementations oneDNN chose for each build, and what
 * the backend logs while building (the forms it refused). */
static bool show_impls;
static int n_logged;

static void log_print(void *user, ait_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    n_logged++;
    print_message("#   %s\n", msg);
}

static const logger show_log = {.fn = log_print};

/* No primitive of an onednn build runs on one of oneDNN's reference
 * implementations ("kind:ref:...", or "convolution:gemm:ref"); reorders may.
 * Returns how many primitives are not reorders. */
static int expect_no_ref(const built *bm, const char *what)
{
    const char *im[256];
    int n = dn_impls(bm, im, 256), ops = 0;
    if (n > 256) n = 256;
    for (int k = 0; k < n; k++) {
        if (show_impls) print_message("# %s: %s\n", what, im[k]);
        if (!strncmp(im[k], "reorder:", 8)) continue;
        ops++;
        if (strstr(im[k], ":ref")) fail_msg("%s: built on a reference implementation: %s", what, im[k]);
    }
    return ops;
}

/* The reference backend's outputs for g on feed, made once and compared with
 * every backend, variant and thread count that runs g: rebuilt and rerun for
 * each, the reference was most of unit_backends' time (its Convs most of
 * test_modules'), under ASan above all. */
typedef struct ref_out {
    built *br;
    tensor *want[16];
} ref_out;

static void ref_run(const graph *g, tensor *const *feed, ref_out *r)
{
    const backend *ref = backend_find("reference");
    candidate_cfg cr = {.backend = "reference", .threads = 1};
    ait_error e = {0};
    assert_true(g->n_outputs <= 16);
    r->br = NULL;
    assert_int_equal(ref->build(ref, g, &cr, &r->br, &e), AIT_OK);
    if (ref->run(r->br, feed, r->want, &e) != AIT_OK) fail_msg("reference run: %s", e.msg);
}

static void ref_done(ref_out *r)
{
    backend_find("reference")->free(r->br);
    r->br = NULL;
}

/* Builds g on backend b, runs it on feed, compares every output with r's. */
static void compare_to(const backend *b, const graph *g, tensor *const *feed, int threads,
                       const char *variant, const ref_out *r, const char *what)
{
    candidate_cfg cb = {.backend = b->name, .threads = threads, .log = show_impls ? &show_log : NULL};
    snprintf(cb.variant, sizeof cb.variant, "%s", variant);
    built *bb = NULL;
    ait_error e = {0};
    if (b->build(b, g, &cb, &bb, &e) != AIT_OK) fail_msg("%s: build: %s", what, e.msg);
    tensor *got[16];
    if (b->run(bb, feed, got, &e) != AIT_OK) fail_msg("%s: run: %s", what, e.msg);
    if (!strcmp(b->name, "onednn")) expect_no_ref(bb, what);
    for (int j = 0; j < g->n_outputs; j++) {
        char w[160];
        snprintf(w, sizeof w, "%s output %d (%s)", what, j, g->vals[g->outputs[j]].name);
        expect_close(got[j], r->want[j], w);
    }
    b->free(bb);
}

/* Builds g on backend b and on the reference, runs both on feed, compares
 * every output. */
static void compare_as(const backend *b, const graph *g, tensor *const *feed, int threads,
                       const char *variant, const char *what)
{
    ref_out r;
    ref_run(g, feed, &r);
    compare_to(b, g, feed, threads, variant, &r, what);
    ref_done(&r);
}

/* At 1 and 2 threads, in the default and every variant b offers for g,
 * against r. */
static void compare_variants(const backend *b, const graph *g, tensor *const *feed, const ref_out *r,
                             const char *what)
{
    const char *vars[8];
    int nv = backend_variants(b, g, vars, 8);
    for (int v = 0; v < nv; v++) {
        char w[240];
        snprintf(w, sizeof w, "%s%s%s", what, *vars[v] ? ", variant " : "", vars[v]);
        compare_to(b, g, feed, 1, vars[v], r, w);
        compare_to(b, g, feed, 2, vars[v], r, w);
    }
}

/* At 1 and 2 threads, in the default and every variant b offers for g. */
static void compare_all(const backend *b, const graph *g, tensor *const *feed, const char *what)
{
    ref_out r;
    ref_run(g, feed, &r);
    compare_variants(b, g, feed, &r, what);
    ref_done(&r);
}

/* taken: the backend must take the node (else it may leave it to the
 * reference ops, and the answer must still be the same). */
/* Set by a case whose random constants need adjusting (a positive
 * variance, ordered Clip bounds), called on the graph before it runs. */
static void (*fixup)(graph *g);

static void run_case_as(const backend *b, const char *op, const in_spec *ins, int n_in,
                        const tg_attr *as, int n_attr, const char *what, bool taken)
{
    tensor *feed[4] = {0};
    int n_feed;
    graph *g = one_node(op, ins, n_in, as, n_attr, feed, &n_feed);
    if (fixup) fixup(g);
    char w[200];
    snprintf(w, sizeof w, "%s: %s %s", b->name, op, what);
    if (taken && !b->op_for(g, &g->nodes[0])) fail_msg("%s: not taken by the backend", w);
    compare_all(b, g, feed, w);
    for (int i = 0; i < n_feed; i++) test_tensor_free(feed[i]);
    graph_free(g);
}

static void run_case(const backend *b, const char *op, const in_spec *ins, int n_in,
                     const tg_attr *as, int n_attr, const char *what)
{
    run_case_as(b, op, ins, n_in, as, n_attr, what, true);
}

/* ---- op cases ------------------------------------------------------------- */

#define SH(...) {.rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), .dims = {__VA_ARGS__}}
#define SHK(...) {.rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), .dims = {__VA_ARGS__}, .konst = true}

static void cases_matmul(const backend *b)
{
    static const in_spec c[][2] = {
        {SH(1, 64), SH(64, 32)},           /* M = 1 */
        {SH(7, 13), SH(13, 5)},
        {SH(2, 3, 8, 16), SH(16, 4)},      /* batched A, one B */
        {SH(3, 8, 16), SH(3, 16, 4)},      /* batched both */
        {SH(2, 1, 5, 6), SH(3, 6, 7)},     /* batch dims broadcast */
        {SH(1, 1, 1, 9), SH(4, 9, 3)},     /* M = 1, B batched */
        {SH(16), SH(16, 8)},               /* 1-D A */
        {SH(4, 16), SH(16)},               /* 1-D B */
        {SH(5, 33), SHK(33, 17)},          /* B a 2-D constant */
        {SH(1, 3, 64), SHK(64, 96)},       /* M = 1 rows of a batch, constant B */
        {SH(2, 70, 130), SHK(130, 50)},    /* above OpenBLAS's small-matrix paths */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char w[64];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, "MatMul", c[i], 2, NULL, 0, w);
    }
}

static void cases_gemm(const backend *b)
{
    const int64_t M = 5, N = 7, K = 9;
    static const in_spec cs[] = {{.rank = -1}, {.rank = 0}, SH(7), SH(1), SH(5, 1), SH(5, 7), SH(1, 7)};
    static const float alphas[] = {1.0f, 0.5f}, betas[] = {1.0f, 0.0f, -2.0f};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int ai = 0; ai < 2; ai++)
                for (int bi = 0; bi < 3; bi++)
                    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
                        in_spec ins[3] = {{.rank = 2, .dims = {ta ? K : M, ta ? M : K}},
                                          {.rank = 2, .dims = {tb ? N : K, tb ? K : N},
                                           .konst = ci % 2 == 1},
                                          cs[ci]};
                        tg_attr as[] = {{"transA", ATTR_INT, .i = ta}, {"transB", ATTR_INT, .i = tb},
                                          {"alpha", ATTR_FLOAT, .f = alphas[ai]},
                                          {"beta", ATTR_FLOAT, .f = betas[bi]}};
                        char w[96];
                        snprintf(w, sizeof w, "transA %d transB %d alpha %g beta %g C rank %d", ta,
                                 tb, alphas[ai], betas[bi], cs[ci].rank);
                        run_case(b, "Gemm", ins, cs[ci].rank < 0 ? 2 : 3, as, 4, w);
                    }
}

typedef struct conv_case {
    in_spec x, w;
    bool bias;
    int64_t group, pads[4], strides[2], dil[2];
    const char *auto_pad;
    const char *what;
} conv_case;

static void cases_conv(const backend *b)
{
    static const conv_case c[] = {
        {SH(2, 8, 5, 6), SHK(4, 8, 1, 1), true, 1, {0}, {1, 1}, {1, 1}, NULL, "1x1"},
        {SH(1, 4, 8, 8), SHK(5, 4, 1, 1), false, 1, {0}, {2, 2}, {1, 1}, NULL, "1x1 stride 2"},
        {SH(1, 3, 9, 9), SHK(6, 3, 3, 3), true, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}, NULL, "3x3 pad 1"},
        {SH(2, 4, 10, 11), SHK(8, 4, 3, 3), true, 1, {1, 1, 1, 1}, {2, 2}, {1, 1}, NULL, "stride 2"},
        {SH(1, 4, 7, 7), SHK(6, 2, 3, 3), true, 2, {0}, {1, 1}, {1, 1}, NULL, "group 2"},
        {SH(1, 6, 8, 8), SHK(6, 1, 3, 3), true, 6, {1, 1, 1, 1}, {1, 1}, {1, 1}, NULL, "depthwise"},
        {SH(1, 3, 12, 12), SHK(4, 3, 3, 3), false, 1, {0, 1, 2, 1}, {1, 1}, {2, 2}, NULL,
         "dilation 2, uneven pads"},
        {SH(1, 3, 7, 7), SHK(2, 3, 4, 4), true, 1, {0}, {2, 2}, {1, 1}, "SAME_UPPER", "SAME_UPPER"},
        {SH(1, 3, 7, 9), SH(4, 3, 1, 3), true, 1, {0, 1, 0, 1}, {1, 2}, {1, 1}, NULL,
         "1x3, weights an input"},
        {SH(1, 64, 14, 14), SHK(64, 64, 3, 3), true, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}, NULL,
         "ResNet-sized 3x3"},
        {SH(2, 64, 37, 41), SHK(16, 64, 3, 3), true, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}, NULL,
         "DBNet head-like 3x3: im2col in blocks of pixels that split output rows"},
        {SH(1, 64, 29, 33), SHK(12, 32, 3, 3), false, 2, {1, 0, 2, 1}, {2, 1}, {1, 1}, NULL,
         "im2col blocks, group 2, stride 2x1, uneven pads"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        in_spec ins[3] = {c[i].x, c[i].w, {.rank = 1, .dims = {c[i].w.dims[0]}, .konst = true}};
        tg_attr as[5] = {{"group", ATTR_INT, .i = c[i].group},
                           {"strides", ATTR_INTS, .n = 2, .ints = {c[i].strides[0], c[i].strides[1]}},
                           {"dilations", ATTR_INTS, .n = 2, .ints = {c[i].dil[0], c[i].dil[1]}}};
        int na = 3;
        if (c[i].auto_pad) as[na++] = (tg_attr){"auto_pad", ATTR_STRING, .s = c[i].auto_pad};
        else as[na++] = (tg_attr){"pads", ATTR_INTS, .n = 4,
                                    .ints = {c[i].pads[0], c[i].pads[1], c[i].pads[2], c[i].pads[3]}};
        run_case(b, "Conv", ins, c[i].bias ? 3 : 2, as, na, c[i].what);
    }
    /* A 1-D Conv: cblas path or not, the answer must be the same. */
    in_spec ins1[2] = {SH(1, 3, 10), SHK(2, 3, 3)};
    run_case_as(b, "Conv", ins1, 2, NULL, 0, "1-D", false);
}

static void cases_convt(const backend *b)
{
    static const struct {
        in_spec x, w;
        bool bias;
        int64_t group, s[2], pads[4], d[2], opad[2];
        const char *what;
    } c[] = {
        {SH(1, 4, 5, 5), SHK(4, 3, 3, 3), true, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1},
         "3x3 stride 2, output_padding 1"},
        {SH(2, 6, 4, 7), SHK(6, 2, 4, 4), true, 3, {2, 1}, {1, 0, 2, 1}, {1, 1}, {0, 0},
         "group 3, stride 2x1, uneven pads"},
        {SH(1, 3, 6, 5), SHK(3, 5, 2, 3), false, 1, {1, 1}, {0}, {2, 2}, {0, 0}, "dilation 2"},
        {SH(1, 16, 9, 9), SHK(16, 8, 2, 2), true, 1, {2, 2}, {0}, {1, 1}, {0, 0}, "2x2 stride 2"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        in_spec ins[3] = {c[i].x, c[i].w,
                          {.rank = 1, .dims = {c[i].w.dims[1] * c[i].group}, .konst = true}};
        tg_attr as[5] = {{"group", ATTR_INT, .i = c[i].group},
                           {"strides", ATTR_INTS, .n = 2, .ints = {c[i].s[0], c[i].s[1]}},
                           {"dilations", ATTR_INTS, .n = 2, .ints = {c[i].d[0], c[i].d[1]}},
                           {"pads", ATTR_INTS, .n = 4,
                            .ints = {c[i].pads[0], c[i].pads[1], c[i].pads[2], c[i].pads[3]}},
                           {"output_padding", ATTR_INTS, .n = 2, .ints = {c[i].opad[0], c[i].opad[1]}}};
        run_case(b, "ConvTranspose", ins, c[i].bias ? 3 : 2, as, 5, c[i].what);
    }
    /* auto_pad: left to the reference op by native; the answer the same. */
    in_spec ins[2] = {SH(1, 3, 5, 6), SHK(3, 2, 3, 3)};
    tg_attr as[2] = {{"auto_pad", ATTR_STRING, .s = "SAME_UPPER"},
                       {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
    run_case(b, "ConvTranspose", ins, 2, as, 2, "SAME_UPPER");
}

/* Resize's scales (input 2) or, when rz_sizes, its sizes (input 3, int64). */
static float rz_sc[4];
static bool rz_sizes;
static void rz_fix(graph *g)
{
    const node *n = &g->nodes[0];
    if (!rz_sizes) {
        memcpy(g->vals[n->in[2]].konst->data, rz_sc, sizeof rz_sc);
        return;
    }
    value *v = &g->vals[n->in[3]];
    test_tensor_free(v->konst);
    int64_t four = 4;
    v->konst = test_tensor(AIT_I64, 1, &four);
    v->dtype = AIT_I64;
    for (int k = 0; k < 4; k++) ((int64_t *)v->konst->data)[k] = (int64_t)rz_sc[k];
}

static void cases_resize(const backend *b)
{
    static const struct {
        in_spec x;
        const char *mode, *coord, *nearest;
        bool sizes;
        float sc[4]; /* scales, or the sizes */
        bool taken;
    } c[] = {
        {SH(1, 3, 7, 9), "nearest", "asymmetric", "floor", false, {1, 1, 2, 2}, true},
        {SH(2, 4, 5, 6), "nearest", "half_pixel", "round_prefer_floor", false, {1, 1, 2, 3}, true},
        {SH(1, 3, 11, 13), "nearest", "half_pixel", "round_prefer_ceil", false, {1, 1, 0.5f, 0.6f}, true},
        {SH(1, 2, 7, 9), "nearest", "align_corners", "ceil", true, {1, 2, 11, 5}, true},
        {SH(1, 3, 7, 9), "linear", "half_pixel", "round_prefer_floor", false, {1, 1, 2, 2}, true},
        {SH(2, 2, 9, 8), "linear", "pytorch_half_pixel", "floor", true, {2, 2, 13, 4}, true},
        {SH(1, 5, 6, 7), "linear", "align_corners", "floor", false, {1, 1, 1.5f, 3}, true},
        {SH(1, 5, 6, 7), "linear", "align_corners", "floor", false, {1, 1, 1.5f, 2.5f}, false},
        {SH(1, 3, 8, 8), "linear", "asymmetric", "floor", false, {1, 1, 3, 0.5f}, true},
        {SH(1, 2, 6, 6), "cubic", "half_pixel", "floor", false, {1, 1, 2, 2}, false},
        {SH(1, 2, 6, 6), "nearest", "tf_half_pixel_for_nn", "floor", false, {1, 1, 2, 2}, false},
    };
    fixup = rz_fix;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        memcpy(rz_sc, c[i].sc, sizeof rz_sc);
        rz_sizes = c[i].sizes;
        in_spec ins[4] = {c[i].x, SHK(0), c[i].sizes ? (in_spec)SHK(0) : (in_spec)SHK(4), SHK(4)};
        tg_attr as[3] = {{"mode", ATTR_STRING, .s = c[i].mode},
                           {"coordinate_transformation_mode", ATTR_STRING, .s = c[i].coord},
                           {"nearest_mode", ATTR_STRING, .s = c[i].nearest}};
        char w[120];
        snprintf(w, sizeof w, "%s %s %s case %zu", c[i].mode, c[i].coord, c[i].nearest, i);
        /* oneDNN takes float32 inputs only: Resize with int64 sizes stays on the reference op */
        bool taken = c[i].taken && !(c[i].sizes && !strcmp(b->name, "onednn"));
        run_case_as(b, "Resize", ins, c[i].sizes ? 4 : 3, as, 3, w, taken);
    }
    fixup = NULL;
}

typedef struct pool_case {
    in_spec x;
    int64_t k[2], s[2], pads[4];
    int64_t ceil, incl;
    const char *what;
} pool_case;

static void pool_cases(const backend *b, const char *op)
{
    static const pool_case c[] = {
        {SH(2, 3, 8, 8), {2, 2}, {2, 2}, {0}, 0, 0, "2x2 stride 2"},
        {SH(1, 4, 9, 9), {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0, "3x3 stride 2 pad 1"},
        {SH(1, 4, 9, 9), {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 1, "3x3 pad 1, pads counted"},
        {SH(1, 2, 10, 7), {3, 2}, {2, 2}, {0}, 1, 0, "ceil_mode"},
        {SH(1, 2, 10, 7), {3, 2}, {2, 2}, {0}, 1, 1, "ceil_mode, pads counted"},
        {SH(1, 16, 14, 14), {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 0, "16 channels"},
        {SH(3, 5, 13, 11), {3, 4}, {1, 3}, {0, 2, 1, 0}, 0, 1, "uneven pads, pads counted"},
        {SH(2, 3, 17, 19), {5, 3}, {3, 2}, {2, 1, 2, 1}, 1, 0, "5x3 stride 3x2, ceil_mode"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tg_attr as[5] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {c[i].k[0], c[i].k[1]}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {c[i].s[0], c[i].s[1]}},
                           {"pads", ATTR_INTS, .n = 4,
                            .ints = {c[i].pads[0], c[i].pads[1], c[i].pads[2], c[i].pads[3]}},
                           {"ceil_mode", ATTR_INT, .i = c[i].ceil},
                           {"count_include_pad", ATTR_INT, .i = c[i].incl}};
        run_case(b, op, &c[i].x, 1, as, strcmp(op, "MaxPool") == 0 ? 4 : 5, c[i].what);
    }
}

static void cases_maxpool(const backend *b) { pool_cases(b, "MaxPool"); }
static void cases_avgpool(const backend *b) { pool_cases(b, "AveragePool"); }

static void global_cases(const backend *b, const char *op)
{
    static const in_spec c[] = {SH(2, 8, 7, 7), SH(1, 64, 4, 4), SH(3, 5, 1, 9), SH(1, 3, 33, 17)};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char w[32];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, op, &c[i], 1, NULL, 0, w);
    }
}

static void cases_gap(const backend *b) { global_cases(b, "GlobalAveragePool"); }
static void cases_gmp(const backend *b) { global_cases(b, "GlobalMaxPool"); }

/* Variances (input 4) made positive. */
static void bn_fix(graph *g)
{
    tensor *v = g->vals[g->nodes[0].in[4]].konst;
    for (int64_t i = 0; i < tensor_numel(v); i++) ((float *)v->data)[i] = fabsf(((float *)v->data)[i]) + 0.5f;
}

static void cases_bnorm(const backend *b)
{
    static const in_spec x[] = {SH(2, 8, 5, 5), SH(1, 16, 3, 7), SH(4, 6)};
    fixup = bn_fix;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        int64_t C = x[i].dims[1];
        in_spec ins[5] = {x[i], SHK(C), SHK(C), SHK(C), SHK(C)};
        tg_attr as[1] = {{"epsilon", ATTR_FLOAT, .f = 1e-3f}};
        char w[32];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, "BatchNormalization", ins, 5, as, 1, w);
    }
    fixup = NULL;
}

static void cases_lnorm(const backend *b)
{
    static const in_spec x[] = {SH(2, 16, 64), SH(3, 10), SH(1, 128, 256), SH(2, 3, 37)};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        int64_t C = x[i].dims[x[i].rank - 1];
        in_spec ins[3] = {x[i], SHK(C), SHK(C)};
        tg_attr as[1] = {{"epsilon", ATTR_FLOAT, .f = 1e-5f}};
        char w[48];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, "LayerNormalization", ins, 3, as, 1, w);
        snprintf(w, sizeof w, "case %zu without bias", i);
        run_case(b, "LayerNormalization", ins, 2, as, 1, w);
    }
    /* Over two axes: oneDNN normalises the last only, so the reference op runs. */
    in_spec ins[3] = {SH(2, 4, 8), SHK(4, 8), SHK(4, 8)};
    tg_attr as[1] = {{"axis", ATTR_INT, .i = -2}};
    run_case(b, "LayerNormalization", ins, 3, as, 1, "axis -2");
}

static void cases_rmsnorm(const backend *b)
{
    static const in_spec x[] = {SH(2, 16, 64), SH(3, 13), SH(1, 7, 257)};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        in_spec ins[2] = {x[i], SHK(x[i].dims[x[i].rank - 1])};
        tg_attr as[1] = {{"epsilon", ATTR_FLOAT, .f = 1e-5f}};
        char w[48];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, "RMSNormalization", ins, 2, as, 1, w);
    }
    in_spec ins[2] = {SH(2, 4, 8), SHK(4, 8)};
    tg_attr as[1] = {{"axis", ATTR_INT, .i = -2}};
    run_case(b, "RMSNormalization", ins, 2, as, 1, "axis -2");
}

static void softmax_cases(const backend *b, const char *op)
{
    static const struct {
        in_spec x;
        int64_t axis;
    } c[] = {{SH(2, 4, 16, 16), -1}, {SH(3, 10), 1}, {SH(2, 5, 7), 1}, {SH(2, 3, 4), 0},
             {SH(5, 33), -1}, {SH(1, 2, 1001), 2}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tg_attr as[1] = {{"axis", ATTR_INT, .i = c[i].axis}};
        char w[48];
        snprintf(w, sizeof w, "axis %lld case %zu", (long long)c[i].axis, i);
        run_case(b, op, &c[i].x, 1, as, 1, w);
    }
}

static void cases_softmax(const backend *b) { softmax_cases(b, "Softmax"); }
static void cases_logsoftmax(const backend *b) { softmax_cases(b, "LogSoftmax"); }

static void binary_cases(const backend *b, const char *op)
{
    static const in_spec c[][2] = {
        {SH(2, 3, 4, 5), SH(2, 3, 4, 5)}, {SH(2, 8, 4, 4), SHK(8, 1, 1)}, {SH(4, 16), SHK(16)},
        {SH(16), SH(4, 16)},              /* broadcast first operand */
        {SH(2, 3, 5), SHK(1)},            {SH(2, 1, 5), SH(1, 4, 5)}, /* both broadcast */
        {SH(2, 4, 8, 8), SH(2, 1, 1, 8)},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char w[32];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, op, c[i], 2, NULL, 0, w);
    }
}

static void cases_add(const backend *b) { binary_cases(b, "Add"); }
static void cases_sub(const backend *b) { binary_cases(b, "Sub"); }
static void cases_mul(const backend *b) { binary_cases(b, "Mul"); }

/* Divisors kept away from 0. */
static void div_fix(graph *g)
{
    int v = g->nodes[0].in[1];
    tensor *t = g->vals[v].konst;
    if (!t) return;
    for (int64_t i = 0; i < tensor_numel(t); i++) ((float *)t->data)[i] += 2.0f;
}

static void cases_div(const backend *b)
{
    static const in_spec c[][2] = {{SH(2, 3, 4, 5), SHK(2, 3, 4, 5)}, {SH(2, 8, 4, 4), SHK(8, 1, 1)},
                                   {SH(4, 16), SHK(1)}};
    fixup = div_fix;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char w[32];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, "Div", c[i], 2, NULL, 0, w);
    }
    fixup = NULL;
}

static void unary_cases(const backend *b, const char *op, const tg_attr *as, int n_attr)
{
    static const in_spec c[] = {SH(2, 8, 5, 5), SH(3, 17), SH(1000)};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char w[32];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, op, &c[i], 1, as, n_attr, w);
    }
}

static void cases_relu(const backend *b) { unary_cases(b, "Relu", NULL, 0); }
static void cases_sigmoid(const backend *b) { unary_cases(b, "Sigmoid", NULL, 0); }
static void cases_tanh(const backend *b) { unary_cases(b, "Tanh", NULL, 0); }
static void cases_exp(const backend *b) { unary_cases(b, "Exp", NULL, 0); }
static void cases_abs(const backend *b) { unary_cases(b, "Abs", NULL, 0); }
static void cases_neg(const backend *b) { unary_cases(b, "Neg", NULL, 0); }
static void cases_hardswish(const backend *b) { unary_cases(b, "HardSwish", NULL, 0); }
static void cases_leaky(const backend *b)
{
    tg_attr as[1] = {{"alpha", ATTR_FLOAT, .f = 0.2f}};
    unary_cases(b, "LeakyRelu", as, 1);
}
static void cases_elu(const backend *b)
{
    tg_attr as[1] = {{"alpha", ATTR_FLOAT, .f = 0.7f}};
    unary_cases(b, "Elu", as, 1);
}

/* Clip's bounds: -0.5 and 0.25 (inputs 1 and 2). */
static void clip_fix(graph *g)
{
    static const float bound[2] = {-0.5f, 0.25f};
    for (int k = 1; k < g->nodes[0].n_in; k++) {
        if (g->nodes[0].in[k] < 0) continue;
        tensor *t = g->vals[g->nodes[0].in[k]].konst;
        if (t) *(float *)t->data = bound[k - 1];
    }
}

static void cases_clip(const backend *b)
{
    in_spec ins[3] = {SH(2, 8, 5, 5), {.rank = 0, .konst = true}, {.rank = 0, .konst = true}};
    fixup = clip_fix;
    run_case(b, "Clip", ins, 3, NULL, 0, "min and max");
    run_case(b, "Clip", ins, 2, NULL, 0, "min only");
    in_spec no_min[3] = {SH(3, 17), {.rank = -1}, {.rank = 0, .konst = true}};
    run_case(b, "Clip", no_min, 3, NULL, 0, "max only");
    run_case(b, "Clip", ins, 1, NULL, 0, "no bounds");
    fixup = NULL;
}

static void cases_lstm(const backend *b);
static void cases_attention(const backend *b);

typedef struct op_cases {
    const char *op;
    void (*run)(const backend *b);
} op_cases;

/* MatMulInteger, QLinearMatMul and DequantizeLinear take integer operands
 * and native runs them in patterns (the dynamic chain after MatMulInteger,
 * quantised weights into a MatMul), and DynamicQuantizeLinear has three
 * outputs of three types: unit_qlinear (test_qlinear.c) checks them
 * against the reference. */
static void cases_in_qlinear(const backend *b) { (void)b; }

/* Native takes a Reshape only as the first node of a channel shuffle and a
 * Slice only over the channels of a 4-D value with constant bounds (their
 * int64 inputs): test_native_shuffle checks both, taken and left. */
static void cases_in_shuffle(const backend *b) { (void)b; }

/* A lone Concat: native takes only those whose inputs its convs write in
 * place (test_native_concat); these stay on the reference op, unchanged. */
static void cases_concat(const backend *b)
{
    static const in_spec c[][2] = {{SH(2, 3, 5, 4), SH(2, 6, 5, 4)}, {SH(3, 5), SHK(3, 2)}};
    static const tg_attr ax[] = {{"axis", ATTR_INT, .i = 1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char w[32];
        snprintf(w, sizeof w, "case %zu", i);
        run_case(b, "Concat", c[i], 2, ax, 1, w);
    }
}

static const op_cases cases[] = {
    {"MatMul", cases_matmul},
    {"Gemm", cases_gemm},
    {"Conv", cases_conv},
    {"ConvTranspose", cases_convt},
    {"Resize", cases_resize},
    {"MaxPool", cases_maxpool},
    {"AveragePool", cases_avgpool},
    {"GlobalAveragePool", cases_gap},
    {"GlobalMaxPool", cases_gmp},
    {"BatchNormalization", cases_bnorm},
    {"LayerNormalization", cases_lnorm},
    {"RMSNormalization", cases_rmsnorm},
    {"Softmax", cases_softmax},
    {"LogSoftmax", cases_logsoftmax},
    {"Add", cases_add},
    {"Sub", cases_sub},
    {"Mul", cases_mul},
    {"Div", cases_div},
    {"Relu", cases_relu},
    {"LeakyRelu", cases_leaky},
    {"Sigmoid", cases_sigmoid},
    {"Tanh", cases_tanh},
    {"Elu", cases_elu},
    {"Exp", cases_exp},
    {"Abs", cases_abs},
    {"Neg", cases_neg},
    {"Clip", cases_clip},
    {"HardSwish", cases_hardswish},
    {"LSTM", cases_lstm},
    {"Attention", cases_attention},
    {"Concat", cases_concat},
    {"Reshape", cases_in_shuffle},
    {"Slice", cases_in_shuffle},
    {"MatMulInteger", cases_in_qlinear},
    {"QLinearMatMul", cases_in_qlinear},
    {"DynamicQuantizeLinear", cases_in_qlinear},
    {"DequantizeLinear", cases_in_qlinear},
};

typedef struct walk {
    const backend *b;
    int tested;
} walk;

/* Asks the backend about op d on a stub node of unknown types; an op it
 * takes must have cases here. */
static void walk_op(const op_def *d, void *arg)
{
    walk *w = arg;
    graph g = {0};
    node n = {.name = "probe", .op = (char *)d->name, .domain = (char *)(d->domain ? d->domain : ""),
              .def = d};
    if (!w->b->op_for || !w->b->op_for(&g, &n)) return;
    const char *only = getenv("AIT_TEST_OP"); /* one op's cases, e.g. under a sanitizer */
    if (only && strcmp(only, d->name) != 0) return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].op, d->name) == 0 && !(d->domain && d->domain[0])) {
            cases[i].run(w->b);
            w->tested++;
            return;
        }
    fail_msg("backend '%s' implements %s but this test has no cases for it", w->b->name, d->name);
}

static void test_ops(void **state)
{
    (void)state;
    for (int i = 0; i < backend_count(); i++) {
        const backend *b = backend_at(i);
        char why[256] = "", desc[256] = "";
        if (strcmp(b->name, "reference") == 0) continue; /* the oracle itself */
        if (b->available && !b->available(why, sizeof why)) {
            printf("# %s: not available: %s\n", b->name, why);
            continue;
        }
        if (b->describe) b->describe(desc, sizeof desc);
        walk w = {b, 0};
        op_foreach(walk_op, &w);
        printf("# %s (%s): %d ops checked\n", b->name, desc, w.tested);
    }
}

/* ---- whole modules ---------------------------------------------------------- */

/* g built on native and run once on feed (a module of dynamic shapes
 * schedules at its first run), for its steps; free with the backend's free. */
static built *native_ran_as(const graph *g, tensor *const *feed, const char *variant)
{
    const backend *b = backend_find("native");
    candidate_cfg c = {.backend = "native", .threads = 1};
    snprintf(c.variant, sizeof c.variant, "%s", variant);
    built *bm = NULL;
    ait_error e = {0};
    tensor *outs[16];
    if (b->build(b, g, &c, &bm, &e) != AIT_OK) fail_msg("native%s%s build: %s", *variant ? ":" : "", variant, e.msg);
    if (b->run(bm, feed, outs, &e) != AIT_OK) fail_msg("native%s%s run: %s", *variant ? ":" : "", variant, e.msg);
    return bm;
}

/* native_ran_as in the default variant. */
static built *native_ran(const graph *g, tensor *const *feed) { return native_ran_as(g, feed, ""); }

/* How many attention steps (fused, or the Attention op) native runs for g,
 * or (attn_only false) how many steps, -1 when a node is left to its reference op. */
static int native_steps(const graph *g, tensor *const *feed, bool attn_only)
{
    built *bm = native_ran(g, feed);
    int n = 0;
    for (int k = 0; k < bm->n_steps; k++)
        n += attn_only ? bm->steps[k].op == &nat_attn_fused || bm->steps[k].op == &nat_attention
                       : bm->steps[k].op != NULL;
    if (!attn_only && n < bm->n_steps) n = -1; /* a node left to its reference op */
    backend_find("native")->free(bm);
    return n;
}

/* How many steps native folds into a later Conv's prologue (nat_step.folded). */
static int native_folded(const graph *g, tensor *const *feed)
{
    built *bm = native_ran(g, feed);
    int n = 0;
    for (int k = 0; k < bm->n_steps; k++) n += bm->steps[k].folded;
    backend_find("native")->free(bm);
    return n;
}

static int native_attn_steps(const graph *g, tensor *const *feed)
{
    return native_steps(g, feed, true);
}

/* native's run_into: every output written into dest equals run's bit for
 * bit; a module's present key/values (made by Concat, a generic step) are
 * written in place, not copied after; a run without dest after it leaves
 * the caller's memory alone. */
static void native_into_check(const graph *g, tensor *const *feed, const char *what)
{
    const backend *b = backend_find("native");
    candidate_cfg c = {.backend = "native", .threads = 1};
    built *bm = NULL;
    ait_error e = {0};
    tensor *outs[16], *got[16], *want[16], *dest[16];
    void *mem[16];
    assert_true(g->n_outputs <= 16);
    if (b->build(b, g, &c, &bm, &e) != AIT_OK) fail_msg("%s: native build: %s", what, e.msg);
    if (b->run(bm, feed, outs, &e) != AIT_OK) fail_msg("%s: native run: %s", what, e.msg);
    for (int j = 0; j < g->n_outputs; j++) {
        if (tensor_clone(outs[j], &want[j], &e) != AIT_OK) fail_msg("%s", e.msg);
        int64_t n = tensor_numel(want[j]) + 5; /* more room than the shape needs */
        mem[j] = malloc((size_t)n * ait_dtype_size(want[j]->dtype));
        dest[j] = ait_tensor_wrap(want[j]->dtype, 1, &n, mem[j]);
        assert_non_null(dest[j]);
    }
    int presents = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (b->run_into(bm, feed, pass ? NULL : dest, got, &e) != AIT_OK)
            fail_msg("%s: native run_into: %s", what, e.msg);
        for (int j = 0; j < g->n_outputs; j++) {
            assert_int_equal(got[j]->rank, want[j]->rank);
            assert_memory_equal(got[j]->dims, want[j]->dims, sizeof(int64_t) * (size_t)got[j]->rank);
            assert_memory_equal(got[j]->data, want[j]->data, tensor_nbytes(want[j]));
            bool present = !strncmp(g->vals[g->outputs[j]].name, "present", 7);
            if (pass) assert_ptr_not_equal(got[j]->data, mem[j]);
            else if (present) assert_ptr_equal(got[j]->data, mem[j]), presents++;
        }
    }
    int want_presents = 0;
    for (int j = 0; j < g->n_outputs; j++)
        want_presents += !strncmp(g->vals[g->outputs[j]].name, "present", 7);
    assert_int_equal(presents, want_presents);
    printf("# native run_into: %s: %d present outputs written in place\n", what, presents);
    for (int j = 0; j < g->n_outputs; j++) {
        tensor_release(want[j]);
        free(want[j]);
        ait_tensor_free(dest[j]);
        free(mem[j]);
    }
    b->free(bm);
}

/* attn >= 0: native must run that many attention steps. */
static void module_check(const char *model, const char *mod, int min_cover, int attn);

static void module_case(const char *model, const char *mod, int min_cover)
{
    module_check(model, mod, min_cover, -1);
}

/* The last model's whole run at batch 2 on the reference executor, whose
 * values feed its modules: kept for the next case of the same model (one
 * run per model, not per case: under ASan these runs were most of the test). */
static struct {
    char model[32];
    ait_model *m;
    sample_set *ss;
    exec *whole;
} last_run;

static void last_run_free(void)
{
    exec_free(last_run.whole);
    sample_set_free(last_run.ss);
    ait_model_free(last_run.m);
    memset(&last_run, 0, sizeof last_run);
}

static void module_check(const char *model, const char *mod, int min_cover, int attn)
{
    ait_error e = {0};
    if (strcmp(last_run.model, model) != 0) {
        last_run_free();
        char p[4096];
        snprintf(p, sizeof p, "models/%s.onnx", model);
        last_run.m = test_load(test_data(p));
        sample_opts so = {.batch = 2, .count = 1, .seed = 5};
        if (samples_generate(last_run.m, &so, &last_run.ss, &e) != AIT_OK)
            fail_msg("%s: %s", model, e.msg);
        tensor *outs[16];
        assert_int_equal(exec_create(last_run.m->g, NULL, 1, &last_run.whole, &e), AIT_OK);
        exec_keep_values(last_run.whole); /* module inputs are read after the run */
        if (exec_run(last_run.whole, last_run.ss->s[0].values, outs, &e) != AIT_OK)
            fail_msg("%s: %s", model, e.msg);
        snprintf(last_run.model, sizeof last_run.model, "%s", model);
    }
    ait_model *m = last_run.m;
    exec *whole = last_run.whole;
    module_tree *t = NULL;
    assert_int_equal(modules_build(m->g, exec_node_costs, &t, &e), AIT_OK);
    int l = module_find(t, mod);
    assert_true(l >= 0);
    graph *sub = NULL;
    if (graph_extract(m->g, t, l, &sub, &e) != AIT_OK) fail_msg("%s: %s", mod, e.msg);
    tensor *feed[64];
    assert_true(sub->n_inputs <= 64);
    for (int i = 0; i < sub->n_inputs; i++) {
        feed[i] = (tensor *)exec_value(whole, graph_find_value(m->g, sub->vals[sub->inputs[i]].name));
        assert_non_null(feed[i]);
    }
    assert_int_equal(backend_coverage(backend_find("reference"), sub), sub->n_nodes);
    if (attn >= 0 && native_attn_steps(sub, feed) != attn)
        fail_msg("native runs %d attention steps in %s %s, want %d", native_attn_steps(sub, feed),
                 model, mod, attn);
    if (attn >= 0) native_into_check(sub, feed, model);
    ref_out r;
    ref_run(sub, feed, &r);
    for (int i = 0; i < backend_count(); i++) {
        const backend *b = backend_at(i);
        char why[256], w[160];
        if (strcmp(b->name, "reference") == 0 || (b->available && !b->available(why, sizeof why)))
            continue;
        int cover = backend_coverage(b, sub);
        if (strcmp(b->name, "openblas") == 0 && cover < min_cover)
            fail_msg("openblas covers %d of %s's %d nodes, expected %d", cover, mod, sub->n_nodes,
                     min_cover);
        snprintf(w, sizeof w, "%s: %s %s (%d of %d nodes)", b->name, model, mod, cover, sub->n_nodes);
        compare_variants(b, sub, feed, &r, w);
    }
    ref_done(&r);
    graph_free(sub);
    modules_free(t);
}

static void test_modules(void **state)
{
    (void)state;
    /* Grouped by model: each model's whole run is made once (last_run). */
    module_case("resnet18", "layer1.0", 2);  /* two 3x3 Convs */
    module_case("resnet18", "layer2.0", 3);  /* stride 2, a 1x1 downsample Conv, residual Add */
    module_case("resnet18", "layer3", 3);    /* a whole run native keeps channels-last */
    module_case("mobilenetv2", "features.2", 0); /* depthwise Convs, Clip (relu6) */
    module_case("mobilenetv2", "features.1", 0); /* depthwise 3x3 + relu6, then a 1x1 Conv */
    module_case("mobilenetv2", "features.3", 0); /* an inverted residual: depthwise, Add */
    module_case("mobilenetv2", "features.14", 0); /* stride 2 depthwise at 14x14 */
    module_case("mobilenetv2", "features", 0);    /* channels-last from conv to conv */
    module_case("mlp", "fc2", 1);            /* one big Gemm or MatMul */
    module_case("bert", "layer.0", 6);       /* Q, K, V, output and two FFN MatMuls at least */
    module_case("bert", "emb_ln", 0);            /* LayerNormalization */
    module_case("bert", "layer.0.attention", 0); /* Softmax over the scores */
    /* attention on native's kernel: past keys and values read in place
     * (the present Concat still runs: it is the model's output), grouped kv
     * heads, heads split and merged by Transposes read through; whole
     * models too (batch 2) */
    module_check("bert", "layer.0.attention", 0, 1);
    module_check("bert", "", 0, 4);
    module_case("gpt2", "h.0", 0);           /* attention with past key/values, MLP */
    module_check("gpt2", "h.1.attention", 0, 1);
    module_check("gpt2", "", 0, 2);
    module_check("llama", "layer.0.self_attn", 0, 1);
    module_check("llama", "", 0, 2);
    last_run_free();
}

/* ---- onednn: fusion patterns and prepared weights ------------------------------ */

/* A small graph built by name: inputs, constants (random), nodes, outputs. */
typedef struct gb {
    graph *g;
    tensor *feed[8];
    int n_feed;
} gb;

static int gb_val(gb *b, const char *name)
{
    int v = graph_find_value(b->g, name);
    if (v < 0) {
        v = graph_add_value(b->g, name);
        assert_true(v >= 0);
        b->g->vals[v].dtype = AIT_F32;
    }
    return v;
}

static void gb_decl(gb *b, int v, int rank, const int64_t *dims)
{
    b->g->vals[v].rank = rank;
    memcpy(b->g->vals[v].dims, dims, sizeof(int64_t) * (size_t)rank);
}

static void gb_input(gb *b, const char *name, in_spec sh)
{
    int v = gb_val(b, name);
    gb_decl(b, v, sh.rank, sh.dims);
    b->g->vals[v].is_input = true;
    int *in = realloc(b->g->inputs, sizeof(int) * (size_t)(b->g->n_inputs + 1));
    assert_non_null(in);
    b->g->inputs = in;
    b->g->inputs[b->g->n_inputs++] = v;
    b->feed[b->n_feed++] = test_rand_tensor(sh.rank, sh.dims);
}

static tensor *gb_const(gb *b, const char *name, in_spec sh)
{
    int v = gb_val(b, name);
    gb_decl(b, v, sh.rank, sh.dims);
    b->g->vals[v].konst = test_rand_tensor(sh.rank, sh.dims);
    return b->g->vals[v].konst;
}

/* Node op reading the comma-separated inputs, writing out. */
static void gb_node(gb *b, const char *op, const char *ins, const char *out, const tg_attr *as,
                    int n_attr)
{
    graph *g = b->g;
    char nm[32];
    snprintf(nm, sizeof nm, "%s_%d", op, g->n_nodes);
    int max_in = 8; /* room for inputs some cases add after */
    for (const char *c = ins; *c; c++) max_in += *c == ',';
    node *n = test_node_append(g, nm, op, max_in);
    test_node_def(n, op, g->opset);
    n->attrs = calloc((size_t)n_attr + 1, sizeof *n->attrs);
    char *buf = strdup(ins);
    assert_true(n->attrs && buf);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) n->in[n->n_in++] = gb_val(b, t);
    free(buf);
    n->n_out = 1;
    n->out[0] = gb_val(b, out);
    g->vals[n->out[0]].producer = g->n_nodes;
    for (int a = 0; a < n_attr; a++) {
        attr *t = &n->attrs[n->n_attr++];
        t->name = strdup(as[a].name);
        t->type = as[a].type;
        t->i = as[a].i;
        t->f = as[a].f;
        if (as[a].type == ATTR_STRING) t->s = strdup(as[a].s);
        if (as[a].type == ATTR_INTS) {
            t->n = as[a].n;
            t->ints = malloc(sizeof(int64_t) * (size_t)(as[a].n + 1));
            memcpy(t->ints, as[a].ints, sizeof(int64_t) * (size_t)as[a].n);
        }
    }
    g->n_nodes++;
}

static void gb_output(gb *b, const char *name)
{
    int v = gb_val(b, name);
    b->g->vals[v].is_output = true;
    int *o = realloc(b->g->outputs, sizeof(int) * (size_t)(b->g->n_outputs + 1));
    assert_non_null(o);
    b->g->outputs = o;
    b->g->outputs[b->g->n_outputs++] = v;
}

static void gb_free(gb *b)
{
    for (int i = 0; i < b->n_feed; i++) test_tensor_free(b->feed[i]);
    graph_free(b->g);
}

static const tg_attr pad1[] = {{"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}}};

/* ---- LSTM -------------------------------------------------------------------- */

typedef struct lstm_spec {
    int64_t t, b, i, h;
    const char *dir;
    bool bias, h0, c0, yh, yc;
    bool clip; /* an attribute native leaves to the reference op */
} lstm_spec;

/* One LSTM node over X, W, R [, B, -, initial_h, initial_c] (initial
 * states as graph inputs, so they change per run), Y [, Y_h, Y_c] out. */
static void lstm_graph(gb *g, const lstm_spec *c)
{
    int64_t nd = strcmp(c->dir, "bidirectional") == 0 ? 2 : 1, H = c->h;
    gb_input(g, "x", (in_spec)SH(c->t, c->b, c->i));
    gb_const(g, "w", (in_spec)SH(nd, 4 * H, c->i));
    gb_const(g, "r", (in_spec)SH(nd, 4 * H, H));
    if (c->bias) gb_const(g, "bias", (in_spec)SH(nd, 8 * H));
    if (c->h0) gb_input(g, "h0", (in_spec)SH(nd, c->b, H));
    if (c->c0) gb_input(g, "c0", (in_spec)SH(nd, c->b, H));
    tg_attr as[3] = {{"direction", ATTR_STRING, .s = c->dir}, {"hidden_size", ATTR_INT, .i = H},
                       {"clip", ATTR_FLOAT, .f = 0.5f}};
    gb_node(g, "LSTM", "x,w,r", "y", as, c->clip ? 3 : 2);
    node *n = &g->g->nodes[g->g->n_nodes - 1];
    const char *opt[4] = {c->bias ? "bias" : NULL, NULL, c->h0 ? "h0" : NULL, c->c0 ? "c0" : NULL};
    for (int k = 0; k < 4; k++) n->in[n->n_in++] = opt[k] ? gb_val(g, opt[k]) : -1;
    int *o = realloc(n->out, 3 * sizeof(int));
    assert_non_null(o);
    n->out = o;
    n->n_out = 3;
    n->out[1] = c->yh ? gb_val(g, "yh") : -1;
    n->out[2] = c->yc ? gb_val(g, "yc") : -1;
    gb_output(g, "y");
    for (int k = 1; k < 3; k++)
        if (n->out[k] >= 0) {
            g->g->vals[n->out[k]].producer = g->g->n_nodes - 1;
            gb_output(g, k == 1 ? "yh" : "yc");
        }
}

/* Odd sizes, each direction, with and without biases, initial states and
 * Y_h / Y_c, batch 1, 2 and 3, at every ISA this CPU has and the portable
 * path, at 1 and 2 threads (compare_all). */
static void cases_lstm(const backend *b)
{
    static const lstm_spec cs[] = {
        {5, 1, 7, 3, "forward", true, false, false, true, true, false},
        {4, 3, 5, 9, "reverse", true, true, true, true, true, false},
        {6, 3, 11, 17, "bidirectional", true, true, true, true, true, false},
        {3, 1, 128, 64, "bidirectional", true, false, false, false, false, false},
        {7, 3, 2, 33, "bidirectional", false, true, false, false, true, false},
        {2, 1, 13, 5, "forward", false, false, true, true, false, false},
        {1, 3, 4, 6, "reverse", false, false, false, true, true, false},
        {4, 3, 5, 9, "bidirectional", true, true, true, true, true, true}, /* clip: reference */
        /* batch 2, hidden sizes across the recurrence's panels of 16 units (one, a pair,
         * a pair and one more, each with a tail) */
        {5, 2, 9, 16, "forward", true, true, true, true, true, false},
        {4, 2, 6, 31, "reverse", true, false, true, true, true, false},
        {6, 2, 13, 47, "bidirectional", true, true, false, true, true, false},
        {3, 2, 128, 64, "bidirectional", true, false, false, true, true, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "lstm")};
        assert_non_null(g.g);
        lstm_graph(&g, &cs[i]);
        bool native = !strcmp(b->name, "native");
        ref_out r;
        ref_run(g.g, g.feed, &r);
        for (int k = native ? KISA_PORTABLE : (int)kisa_cpu(); k <= (int)kisa_cpu(); k++) {
            if (native) assert_true(kisa_force((kisa)k));
            char w[160];
            snprintf(w, sizeof w, "%s: LSTM case %zu (%s)", b->name, i, kisa_name((kisa)k));
            if (!cs[i].clip && native && !b->op_for(g.g, &g.g->nodes[0]))
                fail_msg("%s: not taken by the backend", w);
            compare_variants(b, g.g, g.feed, &r, w);
            if (native) kisa_force(KISA_N);
        }
        ref_done(&r);
        gb_free(&g);
    }
}

/* ---- attention ---------------------------------------------------------------- */

static tensor *gb_typed(gb *b, const char *name, ait_dtype t, int rank, const int64_t *dims,
                        bool konst)
{
    int v = gb_val(b, name);
    gb_decl(b, v, rank, dims);
    b->g->vals[v].dtype = t;
    tensor *x = test_tensor(t, rank, dims);
    if (konst) {
        b->g->vals[v].konst = x;
    } else {
        b->g->vals[v].is_input = true;
        int *in = realloc(b->g->inputs, sizeof(int) * (size_t)(b->g->n_inputs + 1));
        assert_non_null(in);
        b->g->inputs = in;
        b->g->inputs[b->g->n_inputs++] = v;
        b->feed[b->n_feed++] = x;
    }
    return x;
}

/* An int64 constant [n] (shapes, axes). */
static void gb_i64(gb *b, const char *name, int n, const int64_t *vals)
{
    int64_t d[1] = {n};
    memcpy(gb_typed(b, name, AIT_I64, 1, d, true)->data, vals, sizeof(int64_t) * (size_t)n);
}

/* A bool mask [b, 1, sq, t], true about 70% of the time, key 0 always. */
static void gb_bool_mask(gb *b, const char *name, int64_t bs, int64_t sq, int64_t t, bool konst)
{
    int64_t d[4] = {bs, 1, sq, t};
    tensor *m = gb_typed(b, name, AIT_BOOL, 4, d, konst);
    uint8_t *p = m->data;
    for (int64_t i = 0; i < tensor_numel(m); i++) p[i] = i % t == 0 || (i * 7919) % 10 < 7;
}

/* Outputs out[1..n) of the last node, as graph outputs. */
static void gb_more_outputs(gb *b, const char *const *names, int n)
{
    node *nd = &b->g->nodes[b->g->n_nodes - 1];
    int *o = realloc(nd->out, sizeof(int) * (size_t)n);
    assert_non_null(o);
    nd->out = o;
    for (int k = 1; k < n; k++) {
        nd->out[k] = names[k] ? gb_val(b, names[k]) : -1;
        if (nd->out[k] < 0) continue;
        b->g->vals[nd->out[k]].producer = b->g->n_nodes - 1;
        gb_output(b, names[k]);
    }
    nd->n_out = n;
}

/* Runs g on native at every ISA this CPU has and the portable path against
 * the reference; native must run `attn` attention steps. */
static void attn_compare(const backend *b, gb *g, int attn, const char *what)
{
    bool native = !strcmp(b->name, "native");
    if (native && native_attn_steps(g->g, g->feed) != attn)
        fail_msg("%s: native runs %d attention steps, want %d", what,
                 native_attn_steps(g->g, g->feed), attn);
    ref_out r;
    ref_run(g->g, g->feed, &r);
    for (int k = native ? KISA_PORTABLE : (int)kisa_cpu(); k <= (int)kisa_cpu(); k++) {
        if (native) assert_true(kisa_force((kisa)k));
        char w[200];
        snprintf(w, sizeof w, "%s (%s)", what, kisa_name((kisa)k));
        compare_variants(b, g->g, g->feed, &r, w);
        if (native) kisa_force(KISA_N);
    }
    ref_done(&r);
}

/* An Attention op case: batch, query and kv heads, query, past and
 * current lengths, head sizes of keys and values, 3-D (packed) or 4-D,
 * causal, mask (1 float [sq, T], 2 bool [b, 1, sq, T]), present outputs,
 * soft cap. */
typedef struct attn_op_case {
    int b, hq, hkv, sq, sp, sc, d, dv, packed, causal, mask, present, softcap;
} attn_op_case;

static const attn_op_case attn_op_cases[] = {
    {1, 2, 2, 1, 0, 1, 8, 8, 0, 0, 0, 0, 0},     {3, 4, 2, 5, 7, 5, 19, 11, 0, 1, 1, 1, 0},
    {1, 4, 1, 1, 33, 1, 64, 64, 1, 0, 2, 1, 0},  {3, 3, 3, 7, 0, 7, 17, 17, 1, 1, 0, 0, 0},
    {1, 6, 2, 13, 4, 13, 24, 40, 0, 0, 2, 1, 0}, {3, 2, 1, 1, 9, 1, 5, 7, 0, 1, 1, 1, 0},
    {1, 2, 2, 3, 2, 3, 8, 8, 0, 1, 0, 1, 1},
};

/* The graph of one Attention node for case c: inputs q, k, v, [mask],
 * [pk, pv]; outputs y, [present_k, present_v]. */
static void attn_op_graph(gb *g, const attn_op_case *c)
{
    int64_t B = c->b, T = c->sp + c->sc;
    if (c->packed) {
        gb_input(g, "q", (in_spec)SH(B, c->sq, c->hq * c->d));
        gb_input(g, "k", (in_spec)SH(B, c->sc, c->hkv * c->d));
        gb_input(g, "v", (in_spec)SH(B, c->sc, c->hkv * c->dv));
    } else {
        gb_input(g, "q", (in_spec)SH(B, c->hq, c->sq, c->d));
        gb_input(g, "k", (in_spec)SH(B, c->hkv, c->sc, c->d));
        gb_input(g, "v", (in_spec)SH(B, c->hkv, c->sc, c->dv));
    }
    if (c->mask == 1) gb_input(g, "mask", (in_spec)SH(c->sq, T));
    if (c->mask == 2) gb_bool_mask(g, "mask", B, c->sq, T, false);
    if (c->sp || c->present) {
        gb_input(g, "pk", (in_spec)SH(B, c->hkv, c->sp, c->d));
        gb_input(g, "pv", (in_spec)SH(B, c->hkv, c->sp, c->dv));
    }
    tg_attr as[4] = {{"is_causal", ATTR_INT, .i = c->causal},
                       {"softcap", ATTR_FLOAT, .f = 2.0f},
                       {"q_num_heads", ATTR_INT, .i = c->hq},
                       {"kv_num_heads", ATTR_INT, .i = c->hkv}};
    if (c->softcap) {
        gb_node(g, "Attention", "q,k,v", "y", as, c->packed ? 4 : 2);
    } else {
        tg_attr a2[3] = {as[0], as[2], as[3]};
        gb_node(g, "Attention", "q,k,v", "y", a2, c->packed ? 3 : 1);
    }
    node *n = &g->g->nodes[0];
    n->in[n->n_in++] = c->mask ? gb_val(g, "mask") : -1;
    if (c->sp || c->present) {
        n->in[n->n_in++] = gb_val(g, "pk");
        n->in[n->n_in++] = gb_val(g, "pv");
    }
    gb_output(g, "y");
    static const char *const outs[] = {"y", "present_k", "present_v"};
    if (c->present) gb_more_outputs(g, outs, 3);
}

/* The Attention op (opset 23): 3-D (heads packed, q_num_heads and
 * kv_num_heads) and 4-D, grouped kv heads, past keys and values with the
 * present ones out, causal, float and bool masks, odd head sizes, batch 1
 * and 3, one query (decode) and several; a soft cap stays on the reference. */
static void cases_attention(const backend *b)
{
    for (size_t i = 0; i < sizeof attn_op_cases / sizeof attn_op_cases[0]; i++) {
        gb g = {.g = graph_new(NULL, 23, "attention")};
        assert_non_null(g.g);
        attn_op_graph(&g, &attn_op_cases[i]);
        char w[160];
        snprintf(w, sizeof w, "%s: Attention case %zu", b->name, i);
        attn_compare(b, &g, attn_op_cases[i].softcap ? 0 : 1, w);
        gb_free(&g);
    }
}

/* Input `name`'s index among g's inputs. */
static int input_index(const graph *g, const char *name)
{
    for (int k = 0; k < g->n_inputs; k++)
        if (!strcmp(g->vals[g->inputs[k]].name, name)) return k;
    fail_msg("no input '%s'", name);
    return -1;
}

/* Case c's Attention op with its past and present key and value appended
 * in place (backend.run_kv), at the CPU's ISA and the portable path: one
 * buffer per pair of room for cap positions is both the past (its first P
 * of each [b, h] slab) and the present; over steps at past P, P + sc,
 * P + 2 sc (the past the last step's present, new q, k, v and mask each
 * step) native appends the new positions only (kv_view.copied false), y
 * equals the reference's on dense copies, the buffer holds the reference's
 * present, and a step at a new past length keeps native's schedule. First,
 * with the presents bound to caller memory of their own (run_into), the op
 * writes them there (native_into_check). */
static void attn_op_kv_check(const attn_op_case *c, const char *what)
{
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    gb g = {.g = graph_new(NULL, 23, "attention")};
    assert_non_null(g.g);
    attn_op_graph(&g, c);
    graph *G = g.g;
    native_into_check(G, g.feed, what); /* presents bound apart: written there, not copied */
    const int ipk = input_index(G, "pk"), ipv = input_index(G, "pv");
    const int im = c->mask ? input_index(G, "mask") : -1;
    G->vals[G->inputs[ipk]].dims[2] = G->vals[G->inputs[ipv]].dims[2] = DIM_UNKNOWN;
    if (im >= 0) G->vals[G->inputs[im]].dims[G->vals[G->inputs[im]].rank - 1] = DIM_UNKNOWN;
    const int64_t B = c->b, H = c->hkv, cap = c->sp + 3 * c->sc + 2, D[2] = {c->d, c->dv};
    for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
        assert_true(kisa_force((kisa)k));
        candidate_cfg cn = {.backend = "native", .threads = 1}, cr = {.backend = "reference", .threads = 1};
        built *bn = NULL, *br = NULL;
        ait_error e = {0};
        if (b->build(b, G, &cn, &bn, &e) != AIT_OK) fail_msg("%s: build: %s", what, e.msg);
        assert_int_equal(ref->build(ref, G, &cr, &br, &e), AIT_OK);
        tensor *cache[2];
        for (int p = 0; p < 2; p++) {
            int64_t cd[4] = {B, H, cap, D[p]};
            cache[p] = test_rand_tensor(4, cd); /* its first sp positions: the first past */
        }
        sched_stats was = {0}, now = {0};
        int64_t P = c->sp;
        for (int step = 0; step < 3; step++, P += c->sc) {
            const int64_t T = P + c->sc;
            tensor *feed[8], *dense[2], view[2], pres[2], *dest[3] = {NULL, &pres[0], &pres[1]};
            tensor *got[3], *want[3], *mask = NULL;
            memcpy(feed, g.feed, sizeof(tensor *) * (size_t)g.n_feed);
            for (int i = 0; i < 3; i++) /* new q, k, v */
                feed[i] = test_rand_tensor(g.feed[i]->rank, g.feed[i]->dims);
            if (im >= 0) {
                int64_t md[4];
                memcpy(md, g.feed[im]->dims, sizeof md);
                md[g.feed[im]->rank - 1] = T;
                mask = feed[im] = test_tensor(g.feed[im]->dtype, g.feed[im]->rank, md);
                for (int64_t i = 0; i < tensor_numel(mask); i++) {
                    bool keep = i % T == 0 || (i * 7919) % 10 < 7;
                    if (mask->dtype == AIT_BOOL) ((uint8_t *)mask->data)[i] = keep;
                    else ((float *)mask->data)[i] = keep ? (float)(i % 3) * 0.25f : -1e4f;
                }
            }
            for (int p = 0; p < 2; p++) { /* the past: dense for the reference, a view for native */
                int64_t pd[4] = {B, H, P, D[p]}, rows = B * H;
                dense[p] = test_rand_tensor(4, pd);
                for (int64_t r = 0; r < rows; r++)
                    memcpy((float *)dense[p]->data + r * P * D[p],
                           (float *)cache[p]->data + r * cap * D[p], sizeof(float) * (size_t)(P * D[p]));
                view[p] = (tensor){.dtype = AIT_F32, .rank = 4, .data = cache[p]->data, .kind = VAL_TENSOR};
                memcpy(view[p].dims, pd, sizeof pd);
                pres[p] = view[p];
                pres[p].dims[2] = cap;
                pres[p].room = tensor_nbytes(cache[p]);
            }
            feed[ipk] = dense[0], feed[ipv] = dense[1];
            if (ref->run(br, feed, want, &e) != AIT_OK) fail_msg("%s: reference: %s", what, e.msg);
            feed[ipk] = &view[0], feed[ipv] = &view[1];
            kv_view kv[2] = {{.in = ipk, .out = 1, .axis = 2, .cap = cap},
                             {.in = ipv, .out = 2, .axis = 2, .cap = cap}};
            if (b->run_kv(bn, feed, dest, kv, 2, got, &e) != AIT_OK)
                fail_msg("%s: step %d: run_kv: %s", what, step, e.msg);
            char w[200];
            snprintf(w, sizeof w, "%s (%s), past %lld: y", what, kisa_name((kisa)k), (long long)P);
            expect_close(got[0], want[0], w);
            for (int p = 0; p < 2; p++) {
                if (kv[p].copied) fail_msg("%s: step %d: cache %d copied, not appended in place", what, step, p);
                assert_ptr_equal(got[1 + p], &pres[p]);
                assert_int_equal(pres[p].dims[2], T);
                for (int64_t r = 0; r < B * H; r++)
                    for (int64_t i = 0; i < T * D[p]; i++) {
                        float x = ((float *)cache[p]->data)[r * cap * D[p] + i];
                        float y = ((float *)want[1 + p]->data)[r * T * D[p] + i];
                        if (x != y) fail_msg("%s: present %d row %lld element %lld: %g, want %g",
                                             w, p, (long long)r, (long long)i, x, y);
                    }
            }
            b->sched_stats(bn, &now);
            if (step > 0 && now.built_full != was.built_full)
                fail_msg("%s: past %lld: native scheduled from scratch at a new past length", w,
                         (long long)P);
            was = now, memset(&now, 0, sizeof now);
            for (int i = 0; i < 3; i++) test_tensor_free(feed[i]);
            test_tensor_free(dense[0]), test_tensor_free(dense[1]);
            if (mask) test_tensor_free(mask);
        }
        assert_int_equal(was.built_kept, 2);
        test_tensor_free(cache[0]), test_tensor_free(cache[1]);
        b->free(bn);
        ref->free(br);
        kisa_force(KISA_N);
    }
    gb_free(&g);
}

/* Attention written out as the exports write it: heads split by Reshape
 * and Transpose from [b, s, h * d] projections, past keys and values
 * concatenated (the present ones graph outputs), kv heads repeated
 * (Unsqueeze, Expand, Reshape), K^T by a Transpose, a Div (or a Mul on Q and
 * K^T each), an optional Where of a boolean mask, an Add of a float mask,
 * Softmax, MatMul, the heads merged by Transpose and Reshape. */
typedef struct attn_pat {
    int b, hq, hkv, s, sp, d, dv;
    bool past, where, split_scale, bert_kt, mask;
} attn_pat;

static void attn_pattern(gb *g, const attn_pat *c)
{
    int64_t B = c->b, S = c->s, T = c->sp + c->s, rep = c->hq / c->hkv;
    const int64_t p0213[4] = {0, 2, 1, 3}, p0132[4] = {0, 1, 3, 2}, p0231[4] = {0, 2, 3, 1};
    tg_attr t0213[1] = {{"perm", ATTR_INTS, .n = 4, .ints = {0, 2, 1, 3}}};
    tg_attr t0132[1] = {{"perm", ATTR_INTS, .n = 4, .ints = {0, 1, 3, 2}}};
    tg_attr t0231[1] = {{"perm", ATTR_INTS, .n = 4, .ints = {0, 2, 3, 1}}};
    tg_attr ax2[1] = {{"axis", ATTR_INT, .i = 2}};
    tg_attr sm[1] = {{"axis", ATTR_INT, .i = -1}};
    (void)p0213, (void)p0132, (void)p0231;
    gb_input(g, "xq", (in_spec)SH(B, S, c->hq * c->d));
    gb_input(g, "xk", (in_spec)SH(B, S, c->hkv * c->d));
    gb_input(g, "xv", (in_spec)SH(B, S, c->hkv * c->dv));
    gb_i64(g, "shq", 4, (int64_t[]){B, S, c->hq, c->d});
    gb_i64(g, "shk", 4, (int64_t[]){B, S, c->hkv, c->d});
    gb_i64(g, "shv", 4, (int64_t[]){B, S, c->hkv, c->dv});
    gb_node(g, "Reshape", "xq,shq", "rq", NULL, 0);
    gb_node(g, "Transpose", "rq", "q", t0213, 1);
    gb_node(g, "Reshape", "xk,shk", "rk", NULL, 0);
    gb_node(g, "Reshape", "xv,shv", "rv", NULL, 0);
    gb_node(g, "Transpose", "rv", "vc", t0213, 1);
    const char *kk = "kc", *vv = "vc";
    if (c->bert_kt) {
        gb_node(g, "Transpose", "rk", "kt", t0231, 1);
    } else {
        gb_node(g, "Transpose", "rk", "kc", t0213, 1);
        if (c->past) {
            gb_input(g, "past_k", (in_spec)SH(B, c->hkv, c->sp, c->d));
            gb_input(g, "past_v", (in_spec)SH(B, c->hkv, c->sp, c->dv));
            gb_node(g, "Concat", "past_k,kc", "present_k", ax2, 1);
            gb_node(g, "Concat", "past_v,vc", "present_v", ax2, 1);
            kk = "present_k", vv = "present_v";
        }
        if (rep > 1) {
            gb_i64(g, "ax", 1, (int64_t[]){2});
            gb_i64(g, "exk", 5, (int64_t[]){B, c->hkv, rep, T, c->d});
            gb_i64(g, "exv", 5, (int64_t[]){B, c->hkv, rep, T, c->dv});
            gb_i64(g, "rsk", 4, (int64_t[]){B, c->hq, T, c->d});
            gb_i64(g, "rsv", 4, (int64_t[]){B, c->hq, T, c->dv});
            char in[64];
            snprintf(in, sizeof in, "%s,ax", kk);
            gb_node(g, "Unsqueeze", in, "uk", NULL, 0);
            gb_node(g, "Expand", "uk,exk", "ek", NULL, 0);
            gb_node(g, "Reshape", "ek,rsk", "kr", NULL, 0);
            snprintf(in, sizeof in, "%s,ax", vv);
            gb_node(g, "Unsqueeze", in, "uv", NULL, 0);
            gb_node(g, "Expand", "uv,exv", "ev", NULL, 0);
            gb_node(g, "Reshape", "ev,rsv", "vr", NULL, 0);
            kk = "kr", vv = "vr";
        }
        gb_node(g, "Transpose", kk, "kt", t0132, 1);
    }
    float sc = 1.0f / sqrtf((float)c->d);
    if (c->split_scale) {
        *(float *)gb_const(g, "c1", (in_spec){.rank = 0})->data = sqrtf(sc);
        gb_node(g, "Mul", "q,c1", "qs", NULL, 0);
        gb_node(g, "Mul", "kt,c1", "kts", NULL, 0);
        gb_node(g, "MatMul", "qs,kts", "sd", NULL, 0);
    } else {
        *(float *)gb_const(g, "c1", (in_spec){.rank = 0})->data = 1 / sc;
        gb_node(g, "MatMul", "q,kt", "s", NULL, 0);
        gb_node(g, "Div", "s,c1", "sd", NULL, 0);
    }
    const char *cur = "sd";
    if (c->where) {
        gb_bool_mask(g, "bm", 1, S, T, false);
        *(float *)gb_const(g, "fill", (in_spec){.rank = 0})->data = -3.4028e38f;
        gb_node(g, "Where", "bm,sd,fill", "sw", NULL, 0);
        cur = "sw";
    }
    if (c->mask) {
        gb_input(g, "mask", (in_spec)SH(B, 1, 1, T));
        char in[64];
        snprintf(in, sizeof in, "%s,mask", cur);
        gb_node(g, "Add", in, "sm", NULL, 0);
        cur = "sm";
    }
    gb_node(g, "Softmax", cur, "p", sm, 1);
    char in[64];
    snprintf(in, sizeof in, "p,%s", c->bert_kt ? "vc" : vv);
    gb_node(g, "MatMul", in, "o", NULL, 0);
    gb_node(g, "Transpose", "o", "ot", t0213, 1);
    gb_i64(g, "shy", 3, (int64_t[]){B, S, c->hq * c->dv});
    gb_node(g, "Reshape", "ot,shy", "y", NULL, 0);
    gb_output(g, "y");
    if (c->past && !c->bert_kt) {
        gb_output(g, "present_k");
        gb_output(g, "present_v");
    }
}

/* The Attention op appending its past and present in place (attn_op_kv_check)
 * in every case with presents and no soft cap. */
static void test_native_attention_kv(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof attn_op_cases / sizeof attn_op_cases[0]; i++) {
        if (!attn_op_cases[i].present || attn_op_cases[i].softcap) continue;
        char w[80];
        snprintf(w, sizeof w, "native: Attention case %zu in place", i);
        attn_op_kv_check(&attn_op_cases[i], w);
    }
}

static void test_native_attention(void **state)
{
    (void)state;
    static const attn_pat cs[] = {
        /* b, hq, hkv, s, sp, d, dv, past, where, split_scale, bert_kt, mask */
        {1, 4, 4, 1, 9, 32, 32, true, false, false, false, true},   /* gpt2 decode */
        {3, 4, 4, 5, 0, 19, 19, true, false, false, false, true},   /* empty past */
        {1, 4, 2, 1, 17, 16, 16, true, false, false, false, true},  /* llama decode, GQA */
        {3, 6, 2, 7, 5, 24, 13, true, true, false, false, true},    /* GQA, Where */
        {3, 2, 2, 9, 0, 17, 17, false, false, true, true, true},    /* bert, scale on Q and K */
        {1, 3, 3, 13, 0, 8, 8, false, true, false, true, false},    /* Where only */
        {1, 2, 1, 3, 4, 33, 40, true, false, true, false, false},   /* no mask, split scale */
    };
    const backend *b = backend_find("native");
    /* an ONNX file with the opset-23 Attention op (past and present, causal,
     * grouped kv heads: tests/unit/make_fusion_models.py) */
    ait_model *m = test_load(test_data("fusion/attention_op23.onnx"));
    gb f = {.g = m->g};
    for (int k = 0; k < m->g->n_inputs; k++) {
        const value *d = &m->g->vals[m->g->inputs[k]];
        f.feed[f.n_feed++] = test_rand_tensor(d->rank, d->dims);
    }
    attn_compare(b, &f, 1, "native: attention_op23.onnx");
    for (int k = 0; k < f.n_feed; k++) test_tensor_free(f.feed[k]);
    ait_model_free(m);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "attn")};
        assert_non_null(g.g);
        attn_pattern(&g, &cs[i]);
        char w[160];
        snprintf(w, sizeof w, "native: attention pattern %zu", i);
        attn_compare(b, &g, 1, w);
        gb_free(&g);
    }
}

/* GELU of value x into y as PyTorch exports it: x * (erf(x / sqrt 2) + 1) *
 * 0.5 (Div, Erf, Add, Mul, Mul; constants sqrt2, one, half). */
static void gb_gelu_erf(gb *b, const char *x, const char *y)
{
    char in[64];
    *(float *)gb_const(b, "sqrt2", (in_spec){.rank = 0})->data = 1.4142135f;
    *(float *)gb_const(b, "one", (in_spec){.rank = 0})->data = 1.0f;
    *(float *)gb_const(b, "half", (in_spec){.rank = 0})->data = 0.5f;
    snprintf(in, sizeof in, "%s,sqrt2", x);
    gb_node(b, "Div", in, "gelu_d", NULL, 0);
    gb_node(b, "Erf", "gelu_d", "gelu_e", NULL, 0);
    gb_node(b, "Add", "gelu_e,one", "gelu_a", NULL, 0);
    snprintf(in, sizeof in, "%s,gelu_a", x);
    gb_node(b, "Mul", in, "gelu_m", NULL, 0);
    gb_node(b, "Mul", "gelu_m,half", y, NULL, 0);
}

/* The fusion patterns, each built as a graph and compared with the reference;
 * names says which nodes the backend must have swallowed into post-ops. */
static gb pattern(int which, const char **what)
{
    gb b = {.g = graph_new(NULL, 17, "pattern")};
    assert_non_null(b.g);
    switch (which) {
    case 0:
        *what = "Conv + bias Add + Relu";
        gb_input(&b, "x", (in_spec)SH(2, 8, 9, 9));
        gb_const(&b, "w", (in_spec)SH(16, 8, 3, 3));
        gb_const(&b, "bias", (in_spec)SH(16, 1, 1));
        gb_node(&b, "Conv", "x,w", "c", pad1, 1);
        gb_node(&b, "Add", "c,bias", "a", NULL, 0);
        gb_node(&b, "Relu", "a", "y", NULL, 0);
        break;
    case 1: {
        *what = "Conv + BatchNormalization + Relu";
        gb_input(&b, "x", (in_spec)SH(1, 8, 10, 10));
        gb_const(&b, "w", (in_spec)SH(8, 8, 3, 3));
        gb_const(&b, "cb", (in_spec)SH(8));
        gb_const(&b, "g", (in_spec)SH(8));
        gb_const(&b, "be", (in_spec)SH(8));
        gb_const(&b, "m", (in_spec)SH(8));
        tensor *v = gb_const(&b, "v", (in_spec)SH(8));
        for (int i = 0; i < 8; i++) ((float *)v->data)[i] = fabsf(((float *)v->data)[i]) + 0.5f;
        gb_node(&b, "Conv", "x,w,cb", "c", pad1, 1);
        gb_node(&b, "BatchNormalization", "c,g,be,m,v", "n", NULL, 0);
        gb_node(&b, "Relu", "n", "y", NULL, 0);
        break;
    }
    case 2:
        *what = "Conv + residual Add (sum) + Relu";
        gb_input(&b, "x", (in_spec)SH(2, 16, 8, 8));
        gb_const(&b, "w", (in_spec)SH(16, 16, 3, 3));
        gb_node(&b, "Conv", "x,w", "c", pad1, 1);
        gb_node(&b, "Add", "c,x", "a", NULL, 0);
        gb_node(&b, "Relu", "a", "y", NULL, 0);
        break;
    case 3: {
        *what = "depthwise Conv + Clip (relu6)";
        gb_input(&b, "x", (in_spec)SH(1, 32, 12, 12));
        gb_const(&b, "w", (in_spec)SH(32, 1, 3, 3));
        tensor *lo = gb_const(&b, "lo", (in_spec){.rank = 0});
        tensor *hi = gb_const(&b, "hi", (in_spec){.rank = 0});
        *(float *)lo->data = 0;
        *(float *)hi->data = 0.5f;
        tg_attr as[2] = {pad1[0], {"group", ATTR_INT, .i = 32}};
        gb_node(&b, "Conv", "x,w", "c", as, 2);
        gb_node(&b, "Clip", "c,lo,hi", "y", NULL, 0);
        break;
    }
    case 4:
        *what = "MatMul + bias Add + Relu, and a residual Add";
        gb_input(&b, "x", (in_spec)SH(2, 16, 32));
        gb_const(&b, "w", (in_spec)SH(32, 32));
        gb_const(&b, "bias", (in_spec)SH(32));
        gb_node(&b, "MatMul", "x,w", "m", NULL, 0);
        gb_node(&b, "Add", "m,bias", "a", NULL, 0);
        gb_node(&b, "Relu", "a", "r", NULL, 0);
        gb_node(&b, "MatMul", "r,w", "m2", NULL, 0);
        gb_node(&b, "Add", "x,m2", "y", NULL, 0);
        break;
    case 5: {
        *what = "Gemm + Relu";
        gb_input(&b, "x", (in_spec)SH(4, 24));
        gb_const(&b, "w", (in_spec)SH(16, 24));
        gb_const(&b, "c", (in_spec)SH(16));
        tg_attr as[1] = {{"transB", ATTR_INT, .i = 1}};
        gb_node(&b, "Gemm", "x,w,c", "g", as, 1);
        gb_node(&b, "Relu", "g", "y", NULL, 0);
        break;
    }
    case 6:
        *what = "attention: batched MatMul, scale, mask, Softmax, MatMul";
        gb_input(&b, "q", (in_spec)SH(2, 4, 8, 16));
        gb_input(&b, "k", (in_spec)SH(2, 4, 16, 8));
        gb_input(&b, "v", (in_spec)SH(2, 4, 8, 16));
        gb_input(&b, "mask", (in_spec)SH(2, 1, 1, 8));
        *(float *)gb_const(&b, "scale", (in_spec){.rank = 0})->data = 4.0f;
        gb_node(&b, "MatMul", "q,k", "s", NULL, 0);
        gb_node(&b, "Div", "s,scale", "sd", NULL, 0);
        gb_node(&b, "Add", "sd,mask", "sm", NULL, 0);
        gb_node(&b, "Softmax", "sm", "p", NULL, 0);
        gb_node(&b, "MatMul", "p,v", "y", NULL, 0);
        break;
    case 7:
        *what = "Conv whose output has two consumers, MaxPool, a reference op between";
        gb_input(&b, "x", (in_spec)SH(1, 8, 8, 8));
        gb_const(&b, "w", (in_spec)SH(8, 8, 3, 3));
        gb_node(&b, "Conv", "x,w", "c", pad1, 1);
        gb_node(&b, "Relu", "c", "r", NULL, 0);
        gb_node(&b, "Floor", "c", "f", NULL, 0); /* no oneDNN op: the reference runs it */
        gb_node(&b, "Add", "r,f", "a", NULL, 0);
        {
            tg_attr as[2] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {2, 2}},
                               {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
            gb_node(&b, "MaxPool", "a", "y", as, 2);
        }
        gb_output(&b, "c");
        break;
    case 8:
        *what = "MatMul + bias Add + GELU (Div, Erf, Add, Mul, Mul as PyTorch exports it)";
        gb_input(&b, "x", (in_spec)SH(1, 12, 32));
        gb_const(&b, "w", (in_spec)SH(32, 64));
        gb_const(&b, "bias", (in_spec)SH(64));
        gb_node(&b, "MatMul", "x,w", "m", NULL, 0);
        gb_node(&b, "Add", "bias,m", "h", NULL, 0);
        gb_gelu_erf(&b, "h", "y");
        break;
    case 9: {
        *what = "depthwise Conv 5x5 stride 2 + bias Add + HardSwish + residual Add";
        gb_input(&b, "x", (in_spec)SH(2, 12, 11, 13));
        gb_input(&b, "r", (in_spec)SH(2, 12, 6, 7));
        gb_const(&b, "w", (in_spec)SH(12, 1, 5, 5));
        gb_const(&b, "bias", (in_spec)SH(1, 12, 1, 1));
        tg_attr as[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {2, 2, 2, 2}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}},
                           {"group", ATTR_INT, .i = 12}};
        gb_node(&b, "Conv", "x,w", "c", as, 3);
        gb_node(&b, "Add", "c,bias", "a", NULL, 0);
        gb_node(&b, "HardSwish", "a", "h", NULL, 0);
        gb_node(&b, "Add", "h,r", "y", NULL, 0);
        break;
    }
    case 10: {
        *what = "depthwise Conv, channel multiplier 2, its bias, dilation 2, uneven pads + Relu";
        gb_input(&b, "x", (in_spec)SH(1, 6, 9, 10));
        gb_const(&b, "w", (in_spec)SH(12, 1, 3, 3));
        gb_const(&b, "cb", (in_spec)SH(12));
        tg_attr as[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {2, 1, 0, 2}},
                           {"dilations", ATTR_INTS, .n = 2, .ints = {2, 2}},
                           {"group", ATTR_INT, .i = 6}};
        gb_node(&b, "Conv", "x,w,cb", "c", as, 3);
        gb_node(&b, "Relu", "c", "y", NULL, 0);
        break;
    }
    case 11: {
        *what = "element-wise chain: HardSwish as Add 3, Clip 0 6, Mul x, Div 6; Mul per channel; "
                "Add of a tensor";
        gb_input(&b, "x", (in_spec)SH(2, 6, 5, 7));
        gb_input(&b, "r", (in_spec)SH(2, 6, 5, 7));
        gb_const(&b, "s", (in_spec)SH(6, 1, 1));
        *(float *)gb_const(&b, "three", (in_spec){.rank = 0})->data = 3.0f;
        *(float *)gb_const(&b, "zero", (in_spec){.rank = 0})->data = 0.0f;
        *(float *)gb_const(&b, "six", (in_spec){.rank = 0})->data = 6.0f;
        gb_node(&b, "Add", "x,three", "a", NULL, 0);
        gb_node(&b, "Clip", "a,zero,six", "c", NULL, 0);
        gb_node(&b, "Mul", "x,c", "m", NULL, 0);
        gb_node(&b, "Div", "m,six", "h", NULL, 0);
        gb_node(&b, "Mul", "h,s", "hs", NULL, 0);
        gb_node(&b, "Add", "hs,r", "y", NULL, 0);
        break;
    }
    case 12:
        *what = "element-wise chain: x * sigmoid(x), Sub, Relu, Exp over a [3,37] tensor";
        gb_input(&b, "x", (in_spec)SH(3, 37));
        *(float *)gb_const(&b, "half", (in_spec){.rank = 0})->data = 0.5f;
        gb_node(&b, "Sigmoid", "x", "s", NULL, 0);
        gb_node(&b, "Mul", "x,s", "m", NULL, 0);
        gb_node(&b, "Sub", "half,m", "d", NULL, 0);
        gb_node(&b, "Relu", "d", "r", NULL, 0);
        gb_node(&b, "Exp", "r", "y", NULL, 0);
        break;
    case 13: {
        /* narrower than conv.c's DW_NCHW_OW: channels-last, its NCHW input and
         * output changed in the scratch */
        *what = "depthwise Conv 3x3 + bias + SiLU (Sigmoid, Mul) on 20 channels at 9x10, batch 2";
        gb_input(&b, "x", (in_spec)SH(2, 20, 9, 10));
        gb_const(&b, "w", (in_spec)SH(20, 1, 3, 3));
        gb_const(&b, "cb", (in_spec)SH(20));
        tg_attr as[2] = {pad1[0], {"group", ATTR_INT, .i = 20}};
        gb_node(&b, "Conv", "x,w,cb", "c", as, 2);
        gb_node(&b, "Sigmoid", "c", "s", NULL, 0);
        gb_node(&b, "Mul", "c,s", "y", NULL, 0);
        break;
    }
    case 14: {
        /* as wide as conv.c's DW_NCHW_OW and more, with DW_NHWC_C channels and more (a
         * vector and a tail): channels-last too, its NCHW input and output changed in the
         * scratch */
        *what = "depthwise Conv 5x5 stride 1 + bias + HardSwish on 19 channels at 7x37, batch 2";
        gb_input(&b, "x", (in_spec)SH(2, 19, 7, 37));
        gb_const(&b, "w", (in_spec)SH(19, 1, 5, 5));
        gb_const(&b, "cb", (in_spec)SH(19));
        tg_attr as[2] = {{"pads", ATTR_INTS, .n = 4, .ints = {2, 2, 2, 2}}, {"group", ATTR_INT, .i = 19}};
        gb_node(&b, "Conv", "x,w,cb", "c", as, 2);
        gb_node(&b, "HardSwish", "c", "y", NULL, 0);
        break;
    }
    default:
        gb_free(&b);
        return (gb){0};
    }
    gb_output(&b, "y");
    return b;
}

/* The fusion patterns on every backend that fuses (onednn, native). */
/* g on native against the reference at every ISA this CPU has and the
 * portable path (kisa_force), what naming the case. */
static void native_each_isa(const gb *g, const char *what, size_t i)
{
    const backend *b = backend_find("native");
    ref_out r;
    ref_run(g->g, g->feed, &r);
    for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
        assert_true(kisa_force((kisa)k));
        char w[160];
        snprintf(w, sizeof w, "native %s %zu (%s)", what, i, kisa_name((kisa)k));
        compare_variants(b, g->g, g->feed, &r, w);
        kisa_force(KISA_N);
    }
    ref_done(&r);
}

static void test_fusion(void **state)
{
    (void)state;
    for (int bi = 0; bi < 2; bi++) {
    const backend *b = backend_find(bi ? "native" : "onednn");
    assert_non_null(b);
    for (int i = 0;; i++) {
        const char *what = NULL;
        gb p = pattern(i, &what);
        if (!p.g) break;
        char w[160];
        snprintf(w, sizeof w, "%s: %s", b->name, what);
        compare_all(b, p.g, p.feed, w);
        if (bi && i == 8) { /* the GELU written out runs in the MatMul's epilogue: one step */
            if (native_steps(p.g, p.feed, false) != 1)
                fail_msg("native runs %s in %d steps (-1: some on the reference), want 1", what,
                         native_steps(p.g, p.feed, false));
            native_each_isa(&p, what, (size_t)i);
        }
        if (bi && (i == 3 || i == 9 || i == 13 || i == 14)) { /* depthwise: one native step at every ISA */
            if (native_steps(p.g, p.feed, false) != 1)
                fail_msg("native runs %s in %d steps (-1: some on the reference), want 1", what,
                         native_steps(p.g, p.feed, false));
            native_each_isa(&p, what, (size_t)i);
        }
        gb_free(&p);
    }
    }
}

/* A depthwise Conv between NCHW values whose image is 2 MiB or more runs
 * by bands of output rows (conv.c's dw_bands, knhwc_dw_nchw): one native
 * step at every ISA against the reference; 72 and 88 channels (vectors of
 * 16 and 8 in the transposes), odd planes, 3x3 at stride 2 with uneven
 * pads, 5x5 at stride 1, batch 2 and 1. (Its own test, last: the inputs
 * of the tests before it stay the random draws they were.) */
static void test_native_dw_bands(void **state)
{
    (void)state;
    static const struct {
        int64_t n, c, h, w, k, s, pads[4];
        const char *act;
    } cs[] = {{2, 72, 95, 79, 3, 2, {0, 1, 1, 0}, "Relu"}, {1, 88, 81, 77, 5, 1, {2, 2, 2, 2}, "HardSwish"}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb b = {.g = graph_new(NULL, 17, "dwbands")};
        assert_non_null(b.g);
        gb_input(&b, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&b, "w", (in_spec)SH(cs[i].c, 1, cs[i].k, cs[i].k));
        gb_const(&b, "cb", (in_spec)SH(cs[i].c));
        tg_attr as[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {cs[i].pads[0], cs[i].pads[1], cs[i].pads[2], cs[i].pads[3]}},
                         {"group", ATTR_INT, .i = cs[i].c},
                         {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}}};
        gb_node(&b, "Conv", "x,w,cb", "c", as, 3);
        gb_node(&b, cs[i].act, "c", "y", NULL, 0);
        gb_output(&b, "y");
        if (native_steps(b.g, b.feed, false) != 1)
            fail_msg("native runs depthwise case %zu in %d steps, want 1", i, native_steps(b.g, b.feed, false));
        native_each_isa(&b, "depthwise by bands", i);
        gb_free(&b);
    }
}

/* Native's channels-last runs (backends/native/layout.c): chains of
 * convolutions that keep NHWC between steps, against the reference, at
 * every ISA this CPU has and the portable path (kisa_force), odd channel
 * counts, batch 1 and 3: a k x k Conv (stride, dilation, pads, groups) +
 * Clip (im2col + GEMM, or an implicit GEMM past 32 rows of weights per
 * kernel row and 24 output columns, 14 at up to 32 channels, or the direct
 * grouped kernel for groups of at most 16 channels), a depthwise Conv + Relu, a 1x1 Conv + residual Add of the first
 * conv's output, a last 3x3 stride 2 Conv with a bias Add whose output
 * leaves the module (the layout changes back), beside a GlobalAveragePool
 * reading an NHWC-capable value (which keeps it NCHW). */
static void test_native_nhwc(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, m, k, s, d, grp, dws;
    } cs[] = {
        {1, 3, 9, 11, 17, 3, 1, 1, 1, 1}, {3, 6, 8, 7, 10, 5, 1, 1, 2, 1},
        {1, 16, 12, 12, 33, 1, 1, 1, 1, 1}, {1, 5, 10, 10, 19, 3, 2, 1, 1, 1},
        {3, 4, 13, 9, 8, 3, 1, 2, 4, 1}, {1, 40, 7, 7, 48, 1, 1, 1, 1, 1},
        {1, 8, 15, 15, 24, 3, 1, 1, 1, 2}, {1, 3, 17, 17, 36, 5, 2, 1, 1, 1},
        /* implicit GEMM (kernels/conv_ig.h) on the first Conv, its NCHW input read as it
         * is padded: groups and dilation (a run per tap), batch 3; stride 2; a row of 15
         * (at most 32 output channels: from 14 pixels, conv.c's conv_ig), batch 2 */
        {3, 64, 5, 26, 20, 3, 1, 2, 2, 1}, {1, 33, 9, 50, 21, 3, 2, 1, 1, 1},
        {2, 40, 6, 15, 29, 3, 1, 1, 1, 1},
        /* the direct grouped kernel (kernels/grpconv.h) on the first Conv: RegNet's
         * groups of 8 at stride 2, rows of more than a tile; groups of 8 in and 5 out */
        {1, 48, 14, 30, 48, 3, 2, 1, 6, 1}, {3, 16, 9, 21, 10, 3, 1, 1, 2, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "nhwc")};
        assert_non_null(g.g);
        int64_t M = cs[i].m, pad = cs[i].d * (cs[i].k / 2);
        *(float *)gb_const(&g, "zero", (in_spec){.rank = 0})->data = 0.0f;
        *(float *)gb_const(&g, "six", (in_spec){.rank = 0})->data = 6.0f;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "w1", (in_spec)SH(M, cs[i].c / cs[i].grp, cs[i].k, cs[i].k));
        gb_const(&g, "b1", (in_spec)SH(M));
        gb_const(&g, "wd", (in_spec)SH(M, 1, 3, 3));
        gb_const(&g, "bd", (in_spec)SH(M));
        gb_const(&g, "w3", (in_spec)SH(M, M, 1, 1));
        gb_const(&g, "w4", (in_spec)SH(7, M, 3, 3));
        gb_const(&g, "b4", (in_spec)SH(1, 7, 1, 1));
        tg_attr a1[4] = {{"pads", ATTR_INTS, .n = 4, .ints = {pad, pad, pad, pad}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}},
                           {"dilations", ATTR_INTS, .n = 2, .ints = {cs[i].d, cs[i].d}},
                           {"group", ATTR_INT, .i = cs[i].grp}};
        tg_attr ad[3] = {pad1[0], {"group", ATTR_INT, .i = M},
                           {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].dws, cs[i].dws}}};
        tg_attr a4[2] = {pad1[0], {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        gb_node(&g, "Conv", "x,w1,b1", "c1", a1, 4);
        gb_node(&g, "Clip", "c1,zero,six", "r1", NULL, 0);
        gb_node(&g, "Conv", "r1,wd,bd", "c2", ad, 3);
        gb_node(&g, "Relu", "c2", "r2", NULL, 0);
        gb_node(&g, "Conv", "r2,w3", "c3", NULL, 0);
        if (cs[i].dws == 1) {
            gb_node(&g, "Add", "c3,r1", "a3", NULL, 0);
        } else {
            gb_node(&g, "Relu", "c3", "a3", NULL, 0);
        }
        gb_node(&g, "Conv", "a3,w4", "c4", a4, 2);
        gb_node(&g, "Add", "c4,b4", "y", NULL, 0);
        gb_node(&g, "GlobalAveragePool", "r2", "p", NULL, 0);
        gb_output(&g, "y");
        gb_output(&g, "p");
        native_each_isa(&g, "NHWC chain", i);
        gb_free(&g);
    }
}

/* The packed groups of the weights of g's first Conv on native: a run of
 * taps each (kig_runs: a kernel row) when it runs as an implicit GEMM, 1
 * for im2col's B. */
static int first_conv_packs(const gb *g)
{
    built *bm = native_ran(g->g, g->feed);
    int n = -1;
    for (int k = 0; k < bm->n_steps && n < 0; k++)
        if (bm->steps[k].op && !strcmp(bm->steps[k].op->name, "Conv")) n = bm->packs[bm->steps[k].node].groups;
    backend_find("native")->free(bm);
    return n;
}

/* A network's stem on native: a 3x3 stride-2 Conv (+ bias, Relu) on a
 * 3-channel NCHW image, unpadded (squeezenet1_1's) and padded (the
 * mobilenets'), batch 1 and 2, odd output channels: with rows of 24
 * outputs or more and over KSTEM_WIDE (64) output channels an implicit GEMM
 * reading the planes (conv.c's conv_ig: its weights in 3 packs, a kernel row
 * each), at most 64 the direct kernel (kstem_conv, on im2col's packed B: one pack),
 * else im2col from the planes (one pack); against the reference at every
 * ISA and the portable path.
 * Registered last: its random draws leave the other tests' data as it was. */
static void test_native_stem(void **state)
{
    (void)state;
    static const struct {
        int n, h, w, m, pad, packs;
    } cs[] = {{1, 9, 51, 64, 0, 1}, {2, 7, 53, 37, 1, 1}, {1, 11, 47, 16, 1, 1}, {1, 9, 45, 33, 0, 1},
              {1, 9, 51, 72, 0, 3}, {2, 7, 53, 65, 1, 3}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "stem")};
        assert_non_null(g.g);
        const int64_t p = cs[i].pad;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, 3, cs[i].h, cs[i].w));
        gb_const(&g, "w", (in_spec)SH(cs[i].m, 3, 3, 3));
        gb_const(&g, "b", (in_spec)SH(cs[i].m));
        tg_attr a[2] = {{"pads", ATTR_INTS, .n = 4, .ints = {p, p, p, p}},
                          {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        gb_node(&g, "Conv", "x,w,b", "c", a, 2);
        gb_node(&g, "Relu", "c", "y", NULL, 0);
        gb_output(&g, "y");
        native_each_isa(&g, "stem", i);
        int packs = first_conv_packs(&g);
        if (packs != cs[i].packs)
            fail_msg("stem %zu: the Conv's weights in %d packs, want %d (3: an implicit GEMM, 1: kstem_conv or im2col)", i, packs,
                     cs[i].packs);
        gb_free(&g);
    }
}

/* A stem, its pool and a 1x1 Conv by bands of rows (backends/native/irb.c's
 * stem_block): a 3x3 stride-2 Conv (+ bias, Relu) on a 3-channel NCHW image
 * (the direct kernel), a 3x3 stride-2 MaxPool in ceil mode (squeezenet1_1's)
 * or a padded AveragePool counting its padding, then a 1x1 Conv (+ Relu,
 * the block's third step) or a 3x3 Conv (then no block); odd sizes and
 * channel counts, batch 1 and 2. The block formed or not, bands of fewer
 * rows than the pool's output where its rows are wide, the outputs against
 * the reference at every ISA and the portable path.
 * Registered last: its random draws leave the other tests' data as it was. */
static void test_native_stem_pool(void **state)
{
    (void)state;
    static const struct {
        int n, h, w, m, pad, avg, sq, several;
    } cs[] = {{1, 70, 200, 64, 0, 0, 16, 1}, {2, 37, 53, 37, 1, 1, 0, 0}, {1, 60, 261, 48, 1, 0, 9, 1},
              {2, 61, 150, 64, 0, 1, 16, 1}, {1, 24, 31, 20, 0, 0, 0, 0}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "stem-pool")};
        assert_non_null(g.g);
        const int64_t p = cs[i].pad, sq = cs[i].sq ? cs[i].sq : 7;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, 3, cs[i].h, cs[i].w));
        gb_const(&g, "w", (in_spec)SH(cs[i].m, 3, 3, 3));
        gb_const(&g, "b", (in_spec)SH(cs[i].m));
        gb_const(&g, "ws", (in_spec)SH(sq, cs[i].m, cs[i].sq ? 1 : 3, cs[i].sq ? 1 : 3));
        gb_const(&g, "bs", (in_spec)SH(sq));
        gb_const(&g, "wz", (in_spec)SH(5, sq, 1, 1));
        tg_attr a[2] = {{"pads", ATTR_INTS, .n = 4, .ints = {p, p, p, p}},
                          {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        tg_attr mp[3] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {3, 3}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}},
                           {"ceil_mode", ATTR_INT, .i = 1}};
        tg_attr ap[4] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {3, 3}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}},
                           {"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}},
                           {"count_include_pad", ATTR_INT, .i = 1}};
        gb_node(&g, "Conv", "x,w,b", "c", a, 2);
        gb_node(&g, "Relu", "c", "r", NULL, 0);
        if (cs[i].avg)
            gb_node(&g, "AveragePool", "r", "pl", ap, 4);
        else
            gb_node(&g, "MaxPool", "r", "pl", mp, 3);
        gb_node(&g, "Conv", "pl,ws,bs", "s", cs[i].sq ? NULL : pad1, cs[i].sq ? 0 : 1);
        gb_node(&g, "Relu", "s", "sr", NULL, 0);
        gb_node(&g, "Conv", "sr,wz", "z", NULL, 0);
        gb_output(&g, "z");
        built *bm = native_ran(g.g, g.feed);
        int blocks = 0, len = 0;
        int64_t rows = 0;
        for (int k = 0; k < bm->n_steps; k++)
            if (bm->steps[k].band) {
                blocks++;
                len = bm->steps[k].band;
                rows = nat_band_rows(bm, k);
            }
        const int64_t soh = (cs[i].h + 2 * p - 3) / 2 + 1;
        const int64_t poh = cs[i].avg ? (soh + 2 - 3) / 2 + 1 : (soh - 3 + 1) / 2 + 1;
        const int want = cs[i].sq ? 3 : 0;
        if (blocks != (want > 0) || len != want)
            fail_msg("stem-pool case %zu: %d blocks of %d steps, want %d of %d", i, blocks, len, want > 0, want);
        if (want && (cs[i].several ? rows >= poh : rows < poh))
            fail_msg("stem-pool case %zu: bands of %lld rows of %lld", i, (long long)rows, (long long)poh);
        backend_find("native")->free(bm);
        native_each_isa(&g, "stem and pool", i);
        gb_free(&g);
    }
}

/* How many of bm's Conv steps hold Winograd's `packs` packed transforms
 * (36: F(4x4, 3x3), 16: F(2x2, 3x3)). */
static int wino_convs(const built *bm, int packs)
{
    int n = 0;
    for (int k = 0; k < bm->n_steps; k++)
        n += bm->steps[k].op && !strcmp(bm->steps[k].op->name, "Conv") &&
             bm->packs[bm->steps[k].node].groups == packs;
    return n;
}

/* Native's "wino" variant (3x3 stride-1 Convs as Winograd F(4x4, 3x3),
 * kernels/winograd.h): offered where a module has such a Conv and not
 * otherwise; in it, each such Conv's weights are 36 packed transforms (and
 * none in the default build), and the chain (a ResNet block: Conv + bias +
 * Relu, Conv + residual Add + Relu, an unpadded Conv leaving the module
 * NCHW, beside a stride-2 Conv that stays an implicit GEMM or im2col)
 * matches the reference at every ISA and the portable path, 1 and 2
 * threads, batch 1 and 2, planes not multiples of the tile and channels
 * not multiples of 16. */
static void test_native_wino(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, m;
    } cs[] = {{1, 5, 9, 11, 19}, {2, 24, 14, 13, 33}, {1, 64, 7, 7, 40}};
    const backend *b = backend_find("native");
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "wino")};
        assert_non_null(g.g);
        const int64_t M = cs[i].m;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "w1", (in_spec)SH(M, cs[i].c, 3, 3));
        gb_const(&g, "b1", (in_spec)SH(M));
        gb_const(&g, "w2", (in_spec)SH(M, M, 3, 3));
        gb_const(&g, "w3", (in_spec)SH(7, M, 3, 3));
        gb_const(&g, "b3", (in_spec)SH(7));
        gb_const(&g, "w4", (in_spec)SH(9, M, 3, 3));
        tg_attr s2[2] = {pad1[0], {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        gb_node(&g, "Conv", "x,w1,b1", "c1", pad1, 1);
        gb_node(&g, "Relu", "c1", "r1", NULL, 0);
        gb_node(&g, "Conv", "r1,w2", "c2", pad1, 1);
        gb_node(&g, "Add", "c2,r1", "a2", NULL, 0);
        gb_node(&g, "Relu", "a2", "r2", NULL, 0);
        gb_node(&g, "Conv", "r2,w3,b3", "y", NULL, 0);
        gb_node(&g, "Conv", "r2,w4", "z", s2, 2);
        gb_output(&g, "y");
        gb_output(&g, "z");
        const char *vars[8];
        int nv = backend_variants(b, g.g, vars, 8), has = 0;
        for (int v = 0; v < nv; v++) has += !strcmp(vars[v], "wino");
        if (has != 1) fail_msg("wino %zu: the variant offered %d times, want once", i, has);
        for (int wino = 0; wino < 2; wino++) { /* 36 packs per 3x3 stride-1 Conv, in wino only */
            built *bm = native_ran_as(g.g, g.feed, wino ? "wino" : "");
            int n36 = wino_convs(bm, 36);
            if (n36 != (wino ? 3 : 0))
                fail_msg("wino %zu: %d Convs with 36 packed transforms in %s, want %d", i, n36,
                         wino ? "wino" : "the default", wino ? 3 : 0);
            b->free(bm);
        }
        /* every plane here is small (under 36 tiles): "wino-large" offered, its three
         * 3x3 stride-1 Convs on F(2x2, 3x3), 16 packed transforms each */
        has = 0;
        for (int v = 0; v < nv; v++) has += !strcmp(vars[v], "wino-large");
        if (has != 1) fail_msg("wino %zu: wino-large offered %d times, want once", i, has);
        built *bm = native_ran_as(g.g, g.feed, "wino-large");
        if (wino_convs(bm, 16) != 3 || wino_convs(bm, 36) != 0)
            fail_msg("wino %zu: wino-large has %d Convs on F(2x2) and %d on F(4x4), want 3 and 0", i,
                     wino_convs(bm, 16), wino_convs(bm, 36));
        b->free(bm);
        native_each_isa(&g, "wino chain", i);
        gb_free(&g);
    }
    /* a module whose only 3x3 Conv has stride 2: no variant */
    gb g = {.g = graph_new(NULL, 17, "nowino")};
    gb_input(&g, "x", (in_spec)SH(1, 4, 9, 9));
    gb_const(&g, "w", (in_spec)SH(8, 4, 3, 3));
    tg_attr s2[2] = {pad1[0], {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
    gb_node(&g, "Conv", "x,w", "y", s2, 2);
    gb_output(&g, "y");
    const char *vars[8];
    int nv = backend_variants(b, g.g, vars, 8);
    for (int v = 0; v < nv; v++)
        if (!strcmp(vars[v], "wino")) fail_msg("wino offered on a stride-2 Conv");
    gb_free(&g);
}

/* Native's "wino-large" variant: Winograd F(4x4, 3x3) on planes of 36
 * tiles or more (conv.c's WINO_LARGE_TILES), F(2x2, 3x3) below. Offered on
 * a module with 3x3 stride-1 Convs on a large plane (26x27: 49 tiles) and a
 * small one (13x14, after a stride-2 Conv: 16 tiles), and on one with small
 * planes only (test_native_wino's); in it the large plane's Conv carries 36
 * packs and the small one's 16 (in "wino" both 36), and the module matches
 * the reference in every variant at every ISA, 1 and 2 threads
 * (native_each_isa), batch 1 and 2. */
static void test_native_wino_large(void **state)
{
    (void)state;
    const backend *b = backend_find("native");
    for (int nb = 1; nb <= 2; nb++) {
        gb g = {.g = graph_new(NULL, 17, "winol")};
        assert_non_null(g.g);
        gb_input(&g, "x", (in_spec)SH(nb, 5, 26, 27));
        gb_const(&g, "w1", (in_spec)SH(12, 5, 3, 3));
        gb_const(&g, "b1", (in_spec)SH(12));
        gb_const(&g, "w2", (in_spec)SH(17, 12, 3, 3));
        gb_const(&g, "w3", (in_spec)SH(17, 17, 3, 3));
        gb_const(&g, "b3", (in_spec)SH(17));
        tg_attr s2[2] = {pad1[0], {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        gb_node(&g, "Conv", "x,w1,b1", "c1", pad1, 1);
        gb_node(&g, "Relu", "c1", "r1", NULL, 0);
        gb_node(&g, "Conv", "r1,w2", "c2", s2, 2);
        gb_node(&g, "Relu", "c2", "r2", NULL, 0);
        gb_node(&g, "Conv", "r2,w3,b3", "c3", pad1, 1);
        gb_node(&g, "Add", "c3,r2", "a3", NULL, 0);
        gb_node(&g, "Relu", "a3", "y", NULL, 0);
        gb_output(&g, "y");
        /* the planes as the loader's shape inference gives them (the variant reads them) */
        gb_decl(&g, gb_val(&g, "c1"), 4, (int64_t[]){nb, 12, 26, 27});
        gb_decl(&g, gb_val(&g, "c3"), 4, (int64_t[]){nb, 17, 13, 14});
        const char *vars[8];
        int nv = backend_variants(b, g.g, vars, 8), has = 0;
        for (int v = 0; v < nv; v++) has += !strcmp(vars[v], "wino-large");
        if (has != 1) fail_msg("wino-large: the variant offered %d times, want once", has);
        static const char *const vs[] = {"wino", "wino-large"};
        for (int k = 0; k < 2; k++) {
            built *bm = native_ran_as(g.g, g.feed, vs[k]);
            int n36 = wino_convs(bm, 36), n16 = wino_convs(bm, 16);
            if (n36 != 2 - k) fail_msg("%s: %d Convs with 36 packed transforms, want %d", vs[k], n36, 2 - k);
            if (n16 != k) fail_msg("%s: %d Convs with 16 packed transforms, want %d", vs[k], n16, k);
            if (bm->packs[0].groups != 36) fail_msg("%s: the 26x27 plane's Conv not on Winograd", vs[k]);
            b->free(bm);
        }
        native_each_isa(&g, "wino-large chain", (size_t)nb);
        gb_free(&g);
    }
}

/* A 1x1 Conv whose residual is read last there writes its output over the
 * residual's bytes (native.c's place_values, conv.c's nat_conv_res_in_place):
 * a chain of bottleneck-like blocks, r2 = Relu(Conv1x1(r1) + r1) (the
 * residual is also the Conv's input: not in place, a tile's store would
 * overwrite rows of A other tiles still read), r4 = Relu(Conv1x1(r3) + r2)
 * over r2, r6 = Relu(Conv1x1(r5) + r4) over r4 (so over r2 too), then a
 * Conv + bias Add whose output leaves the module; odd channel counts, batch
 * 1 and 2, against the reference at every ISA and portable (native_each_isa). */
static void test_native_res_in_place(void **state)
{
    (void)state;
    for (int nb = 1; nb <= 2; nb++) {
        gb g = {.g = graph_new(NULL, 17, "resinplace")};
        assert_non_null(g.g);
        const int64_t C = 21, M = 37;
        gb_input(&g, "x", (in_spec)SH(nb, 13, 9, 11));
        gb_const(&g, "w0", (in_spec)SH(M, 13, 1, 1));
        gb_const(&g, "b0", (in_spec)SH(M));
        gb_const(&g, "w1", (in_spec)SH(M, M, 1, 1));
        gb_const(&g, "w2", (in_spec)SH(C, M, 3, 3));
        gb_const(&g, "w3", (in_spec)SH(M, C, 1, 1));
        gb_const(&g, "b3", (in_spec)SH(M));
        gb_const(&g, "w4", (in_spec)SH(C, M, 1, 1));
        gb_const(&g, "w5", (in_spec)SH(M, C, 1, 1));
        gb_const(&g, "b5", (in_spec)SH(M));
        gb_const(&g, "w6", (in_spec)SH(7, M, 1, 1));
        gb_const(&g, "b6", (in_spec)SH(7));
        gb_node(&g, "Conv", "x,w0,b0", "c0", NULL, 0);
        gb_node(&g, "Relu", "c0", "r1", NULL, 0);
        gb_node(&g, "Conv", "r1,w1", "c1", NULL, 0);
        gb_node(&g, "Add", "c1,r1", "a1", NULL, 0);
        gb_node(&g, "Relu", "a1", "r2", NULL, 0);
        gb_node(&g, "Conv", "r2,w2", "c2", pad1, 1);
        gb_node(&g, "Relu", "c2", "r3", NULL, 0);
        gb_node(&g, "Conv", "r3,w3,b3", "c3", NULL, 0);
        gb_node(&g, "Add", "c3,r2", "a3", NULL, 0);
        gb_node(&g, "Relu", "a3", "r4", NULL, 0);
        gb_node(&g, "Conv", "r4,w4", "c4", NULL, 0);
        gb_node(&g, "Relu", "c4", "r5", NULL, 0);
        gb_node(&g, "Conv", "r5,w5,b5", "c5", NULL, 0);
        gb_node(&g, "Add", "c5,r4", "a5", NULL, 0);
        gb_node(&g, "Relu", "a5", "r6", NULL, 0);
        gb_node(&g, "Conv", "r6,w6,b6", "y", NULL, 0);
        gb_output(&g, "y");
        built *bm = native_ran(g.g, g.feed);
        const void *d1 = bm->vals[gb_val(&g, "r1")].t.data, *d2 = bm->vals[gb_val(&g, "r2")].t.data,
                   *d4 = bm->vals[gb_val(&g, "r4")].t.data, *d6 = bm->vals[gb_val(&g, "r6")].t.data;
        if (d2 == d1) fail_msg("batch %d: r2 over r1, which its Conv reads as A", nb);
        if (d4 != d2 || d6 != d2) fail_msg("batch %d: r4 and r6 not over r2 (in place: %d, %d)", nb, d4 == d2, d6 == d2);
        backend_find("native")->free(bm);
        native_each_isa(&g, "residual in place", (size_t)nb);
        gb_free(&g);
    }
}

/* A bottleneck's last 1x1 Conv and its downsample added (backends/native/conv.c:
 * pre_take): the 1x1 Conv whose output only the Add reads, with its bias
 * only, runs inside the other Conv's step per block of rows, its output
 * never stored. conv3 first (torch's order: the downsample's step carries
 * the Add; a strided one on im2col) or the downsample first (stride 1), the
 * Add then nothing, Relu or LeakyRelu, odd channels, 250 output channels
 * (blocks of 522 rows: three at 23x25 and batch 2), batch 1 and 2, the
 * block's output the module's or read by a 1x1 Conv; not
 * taken where conv3 has a Relu before the Add or its output is also the
 * module's. Against the reference at every ISA and portable, 1 and 2
 * threads, every variant. */
static void test_native_pre(void **state)
{
    (void)state;
    static const struct {
        int stride, ds_first, act, other, taken; /* act: 0 none, 1 Relu, 2 LeakyRelu; other: 1 conv3's
                                                  * Relu, 2 conv3's output a module output */
    } cs[] = {{1, 0, 1, 0, 1}, {2, 0, 1, 0, 1}, {1, 1, 1, 0, 1}, {1, 0, 0, 0, 1}, {2, 0, 2, 0, 1},
              {1, 1, 2, 0, 1}, {2, 1, 1, 0, 0}, {1, 0, 1, 1, 0}, {1, 0, 1, 2, 0}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int nb = 1; nb <= 2; nb++) {
            gb g = {.g = graph_new(NULL, 17, "pre")};
            assert_non_null(g.g);
            const int64_t C = 13, K = 11, M = 250;
            gb_input(&g, "x0", (in_spec)SH(nb, 5, 23, 25));
            gb_const(&g, "w0", (in_spec)SH(C, 5, 1, 1));
            gb_const(&g, "w1", (in_spec)SH(K, C, 1, 1));
            gb_const(&g, "b1", (in_spec)SH(K));
            gb_const(&g, "w2", (in_spec)SH(K, K, 3, 3));
            gb_const(&g, "w3", (in_spec)SH(M, K, 1, 1));
            gb_const(&g, "b3", (in_spec)SH(M));
            gb_const(&g, "wd", (in_spec)SH(M, C, 1, 1));
            gb_const(&g, "bd", (in_spec)SH(M));
            tg_attr s2[2] = {pad1[0], {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
            tg_attr d2[1] = {{"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
            tg_attr lk[1] = {{"alpha", ATTR_FLOAT, .f = 0.1f}};
            gb_const(&g, "w9", (in_spec)SH(7, M, 1, 1));
            gb_node(&g, "Conv", "x0,w0", "c0", NULL, 0);
            gb_node(&g, "Relu", "c0", "x", NULL, 0);
            gb_node(&g, "Conv", "x,w1,b1", "c1", NULL, 0);
            gb_node(&g, "Relu", "c1", "r1", NULL, 0);
            gb_node(&g, "Conv", "r1,w2", "c2", cs[i].stride == 2 ? s2 : pad1, cs[i].stride == 2 ? 2 : 1);
            gb_node(&g, "Relu", "c2", "r2", NULL, 0);
            if (cs[i].ds_first) gb_node(&g, "Conv", "x,wd,bd", "d", cs[i].stride == 2 ? d2 : NULL, cs[i].stride == 2);
            gb_node(&g, "Conv", "r2,w3,b3", "c3", NULL, 0);
            if (cs[i].other == 1) gb_node(&g, "Relu", "c3", "e3", NULL, 0);
            if (!cs[i].ds_first) gb_node(&g, "Conv", "x,wd,bd", "d", cs[i].stride == 2 ? d2 : NULL, cs[i].stride == 2);
            gb_node(&g, "Add", cs[i].other == 1 ? "e3,d" : "c3,d", cs[i].act ? "a" : "o", NULL, 0);
            if (cs[i].act == 1) gb_node(&g, "Relu", "a", "o", NULL, 0);
            if (cs[i].act == 2) gb_node(&g, "LeakyRelu", "a", "o", lk, 1);
            if (i % 2) gb_node(&g, "Conv", "o,w9", "y", NULL, 0); /* the block's output read on */
            gb_output(&g, i % 2 ? "y" : "o");
            if (cs[i].other == 2) gb_output(&g, "c3");
            built *bm = native_ran(g.g, g.feed);
            int pre = 0, folded = 0;
            for (int k = 0; k < bm->n_steps; k++) {
                pre += bm->steps[k].pre != 0;
                folded += bm->steps[k].folded;
            }
            backend_find("native")->free(bm);
            if (pre != cs[i].taken || folded != cs[i].taken)
                fail_msg("case %zu batch %d: %d steps run a folded Conv, %d folded, want %d", i, nb, pre,
                         folded, cs[i].taken);
            native_each_isa(&g, "1x1 pair", i * 2 + (size_t)nb);
            gb_free(&g);
        }
}

/* How many of native's conv steps for g write into a Concat's channels
 * (backends/native/concat.c), after one run on feed; *pools: how many
 * pool steps run channels-last. */
static int native_cat_writers(const graph *g, tensor *const *feed, int *pools)
{
    built *bm = native_ran(g, feed);
    int n = 0;
    *pools = 0;
    for (int k = 0; k < bm->n_steps; k++) {
        n += bm->steps[k].cat >= 0;
        *pools += bm->steps[k].op && bm->steps[k].nhwc && strstr(bm->steps[k].op->name, "Pool");
    }
    backend_find("native")->free(bm);
    return n;
}

/* A SqueezeNet Fire module at odd sizes: a 1x1 squeeze Conv + Relu, then
 * 1x1 and 3x3 expand Convs + Relu into one Concat, which native's expand
 * convs write in place (concat.c). The Concat read by a 1x1 Conv (all
 * channels-last), as the module's output (NCHW), with the module's input
 * as a middle input that is copied (axis -3) before a MaxPool (the Concat
 * and the MaxPool then channels-last too), the
 * first expand's output also read elsewhere (copied, and channels-last for the global
 * pool reading it too), and a MaxPool (3x3,
 * stride 2, ceil_mode) or a padded AveragePool (padding counted in the
 * divisor or not) between the Concat and the
 * next Conv (both channels-last: native/pool.c); against the reference at
 * batch 1 and 2, every ISA and the portable path. */
static void test_native_concat(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, sq, e1, e3, tail, writers;
    } cs[] = {
        {2, 5, 7, 9, 3, 7, 9, 0, 2}, {1, 13, 6, 5, 5, 17, 11, 0, 2}, {2, 5, 7, 9, 3, 7, 9, 1, 2},
        {2, 6, 8, 7, 4, 5, 3, 2, 2}, {1, 3, 5, 5, 6, 16, 16, 3, 1}, {2, 5, 8, 9, 3, 7, 19, 4, 2},
        {1, 7, 6, 7, 5, 9, 8, 5, 2}, {2, 4, 5, 6, 3, 11, 6, 5, 2},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "concat")};
        assert_non_null(g.g);
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "ws", (in_spec)SH(cs[i].sq, cs[i].c, 1, 1));
        gb_const(&g, "bs", (in_spec)SH(cs[i].sq));
        gb_const(&g, "we1", (in_spec)SH(cs[i].e1, cs[i].sq, 1, 1));
        gb_const(&g, "be1", (in_spec)SH(cs[i].e1));
        gb_const(&g, "we3", (in_spec)SH(cs[i].e3, cs[i].sq, 3, 3));
        gb_const(&g, "be3", (in_spec)SH(cs[i].e3));
        gb_const(&g, "wn", (in_spec)SH(11, cs[i].e1 + cs[i].e3, 1, 1));
        gb_node(&g, "Conv", "x,ws,bs", "s", NULL, 0);
        gb_node(&g, "Relu", "s", "r", NULL, 0);
        gb_node(&g, "Conv", "r,we1,be1", "e1", NULL, 0);
        gb_node(&g, "Relu", "e1", "f1", NULL, 0);
        gb_node(&g, "Conv", "r,we3,be3", "e3", pad1, 1);
        gb_node(&g, "Relu", "e3", "f3", NULL, 0);
        tg_attr ax[1] = {{"axis", ATTR_INT, .i = cs[i].tail == 2 ? -3 : 1}};
        tg_attr mp[2] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {2, 2}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        if (cs[i].tail == 2) {
            gb_node(&g, "Concat", "f1,x,f3", "cat", ax, 1);
            gb_node(&g, "MaxPool", "cat", "y", mp, 2);
        } else {
            gb_node(&g, "Concat", "f1,f3", "cat", ax, 1);
        }
        tg_attr p3[3] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {3, 3}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}, {"ceil_mode", ATTR_INT, .i = 1}};
        tg_attr ap[3] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {3, 3}}, pad1[0],
                           {"count_include_pad", ATTR_INT, .i = (int64_t)(i % 2)}};
        if (cs[i].tail == 4) gb_node(&g, "MaxPool", "cat", "pool", p3, 3);
        if (cs[i].tail == 5) gb_node(&g, "AveragePool", "cat", "pool", ap, 3);
        if (cs[i].tail == 0) gb_node(&g, "Conv", "cat,wn", "y", NULL, 0);
        if (cs[i].tail >= 4) gb_node(&g, "Conv", "pool,wn", "y", NULL, 0);
        if (cs[i].tail == 3) gb_node(&g, "GlobalAveragePool", "f1", "p", NULL, 0);
        gb_output(&g, cs[i].tail == 1 || cs[i].tail == 3 ? "cat" : "y");
        if (cs[i].tail == 3) gb_output(&g, "p");
        int pools, got = native_cat_writers(g.g, g.feed, &pools);
        if (got != cs[i].writers)
            fail_msg("concat case %zu: %d convs write into the Concat, want %d", i, got, cs[i].writers);
        /* a Concat with a copied input is channels-last too (concat.c), so its MaxPool, and
         * the global pool reading the copied input */
        int want_pools = cs[i].tail >= 2;
        if (pools != want_pools)
            fail_msg("concat case %zu: %d pools run channels-last, want %d", i, pools, want_pools);
        native_each_isa(&g, "in-place Concat", i);
        gb_free(&g);
    }
}

/* Native's steps for g after one run on feed: the channel shuffles
 * (backends/native/shuffle.c, standalone or at a Concat), the Slices
 * (slice.c), and how many of those write channels-last. */
static void native_glue_steps(const graph *g, tensor *const *feed, int *shuf, int *slices, int *nhwc)
{
    built *bm = native_ran(g, feed);
    *shuf = *slices = *nhwc = 0;
    for (int k = 0; k < bm->n_steps; k++) {
        const nat_step *st = &bm->steps[k];
        if (!st->op) continue;
        bool sh = !strcmp(st->op->name, "Reshape") ||
                  (!strcmp(st->op->name, "Concat") && st->geo[15] < 0),
             sl = !strcmp(st->op->name, "Slice");
        *shuf += sh;
        *slices += sl;
        *nhwc += (sh || sl) && bm->vals[st->epi.out].nhwc;
    }
    backend_find("native")->free(bm);
}

/* A ShuffleNet v2 unit on u [n][2 * c2][h][w] (names prefixed p): its two
 * halves by Slice (the second from start -c2 to the largest end when
 * neg), the second through 1x1 Conv + Relu, depthwise 3x3, 1x1 Conv +
 * Relu, then Concat with the first and the channel shuffle of 2 groups
 * (Reshape, Transpose with perm, Reshape) into y. */
static void gb_shuffle_unit(gb *g, const char *p, const char *u, const char *y, int64_t n,
                            int64_t c2, int64_t h, int64_t w, bool neg, const int64_t *perm)
{
    char nm[16][24], ins[96];
    static const char *const sfx[] = {"s0", "e0", "ax", "s1", "e1", "w1", "b1", "w2", "w3",
                                      "a", "b", "c1", "r1", "c2", "c3", "bb"};
    for (int k = 0; k < 16; k++) snprintf(nm[k], sizeof nm[k], "%s%s", p, sfx[k]);
    const int64_t s0 = 0, e0 = c2, ax = 1, s1 = neg ? -c2 : c2, e1 = neg ? INT64_MAX : 2 * c2;
    gb_i64(g, nm[0], 1, &s0);
    gb_i64(g, nm[1], 1, &e0);
    gb_i64(g, nm[2], 1, &ax);
    gb_i64(g, nm[3], 1, &s1);
    gb_i64(g, nm[4], 1, &e1);
    gb_const(g, nm[5], (in_spec)SH(c2, c2, 1, 1));
    gb_const(g, nm[6], (in_spec)SH(c2));
    gb_const(g, nm[7], (in_spec)SH(c2, 1, 3, 3));
    gb_const(g, nm[8], (in_spec)SH(c2, c2, 1, 1));
    snprintf(ins, sizeof ins, "%s,%s,%s,%s", u, nm[0], nm[1], nm[2]);
    gb_node(g, "Slice", ins, nm[9], NULL, 0);
    snprintf(ins, sizeof ins, "%s,%s,%s,%s", u, nm[3], nm[4], nm[2]);
    gb_node(g, "Slice", ins, nm[10], NULL, 0);
    snprintf(ins, sizeof ins, "%s,%s,%s", nm[10], nm[5], nm[6]);
    gb_node(g, "Conv", ins, nm[11], NULL, 0);
    gb_node(g, "Relu", nm[11], nm[12], NULL, 0);
    tg_attr dw[2] = {pad1[0], {"group", ATTR_INT, .i = c2}};
    snprintf(ins, sizeof ins, "%s,%s", nm[12], nm[7]);
    gb_node(g, "Conv", ins, nm[13], dw, 2);
    snprintf(ins, sizeof ins, "%s,%s", nm[13], nm[8]);
    gb_node(g, "Conv", ins, nm[14], NULL, 0);
    gb_node(g, "Relu", nm[14], nm[15], NULL, 0);
    char cat[24], r5[24], t5[24], sh5[24], sh4[24];
    snprintf(cat, sizeof cat, "%scat", p);
    snprintf(r5, sizeof r5, "%sr5", p);
    snprintf(t5, sizeof t5, "%st5", p);
    snprintf(sh5, sizeof sh5, "%ssh5", p);
    snprintf(sh4, sizeof sh4, "%ssh4", p);
    tg_attr ax1[1] = {{"axis", ATTR_INT, .i = 1}};
    snprintf(ins, sizeof ins, "%s,%s", nm[9], nm[15]);
    gb_node(g, "Concat", ins, cat, ax1, 1);
    const int64_t d5[5] = {n, 2, c2, h, w}, d4[4] = {n, 2 * c2, h, w};
    gb_i64(g, sh5, 5, d5);
    gb_i64(g, sh4, 4, d4);
    tg_attr pa[1] = {{"perm", ATTR_INTS, .n = 5, .ints = {perm[0], perm[1], perm[2], perm[3], perm[4]}}};
    snprintf(ins, sizeof ins, "%s,%s", cat, sh5);
    gb_node(g, "Reshape", ins, r5, NULL, 0);
    gb_node(g, "Transpose", r5, t5, pa, 1);
    snprintf(ins, sizeof ins, "%s,%s", t5, sh4);
    gb_node(g, "Reshape", ins, y, NULL, 0);
}

/* ShuffleNet's glue on native (shuffle.c, slice.c, concat.c, kernels/
 * chan_copy.h), end to end against the reference at every ISA and the
 * portable path, odd channel counts and sizes, batch 1 and 2: two units
 * in a row (their Slices, Concat and shuffle channels-last between the
 * convs, the last shuffle a module output in NCHW), a unit whose shuffle
 * a 1x1 Conv reads (NHWC), a standalone shuffle of g groups between two
 * Convs (its Reshape -> Transpose -> Reshape one step, NHWC in and out),
 * and what native leaves
 * to the reference: a Transpose of another perm (its Concat then native's,
 * a copy), a Slice of step 2. */
static void test_native_shuffle(void **state)
{
    (void)state;
    static const struct {
        int n, c2, h, w, g, kind, shuf, slices, nhwc;
    } cs[] = {
        {1, 5, 7, 9, 3, 0, 2, 4, 5},  {2, 3, 6, 5, 3, 0, 2, 4, 5}, {1, 7, 5, 6, 7, 1, 2, 2, 4},
        {2, 4, 4, 3, 2, 1, 2, 2, 4},  {1, 6, 5, 5, 4, 1, 2, 2, 4}, {1, 5, 6, 7, 2, 2, 0, 2, 2},
        {2, 3, 5, 4, 2, 3, 2, 4, 4},
    };
    static const int64_t shuffle[5] = {0, 2, 1, 3, 4}, other[5] = {0, 1, 2, 4, 3};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "shuffle")};
        assert_non_null(g.g);
        const int64_t n = cs[i].n, c2 = cs[i].c2, h = cs[i].h, w = cs[i].w, G = cs[i].g;
        gb_input(&g, "x", (in_spec)SH(n, 2 * c2, h, w));
        gb_shuffle_unit(&g, "u0", "x", "y0", n, c2, h, w, i % 2, cs[i].kind == 2 ? other : shuffle);
        if (cs[i].kind == 0) {
            gb_shuffle_unit(&g, "u1", "y0", "y", n, c2, h, w, i % 2 == 0, shuffle);
            gb_output(&g, "y");
        } else if (cs[i].kind == 1) { /* a 1x1 Conv reads the shuffle; a standalone one */
            gb_const(&g, "wn", (in_spec)SH(2 * G, 2 * c2, 1, 1));
            gb_node(&g, "Conv", "y0,wn", "cn", NULL, 0);
            const int64_t d5[5] = {n, G, 2, h, w}, d4[4] = {n, 2 * G, h, w};
            gb_i64(&g, "g5", 5, d5);
            gb_i64(&g, "g4", 4, d4);
            tg_attr pa[1] = {{"perm", ATTR_INTS, .n = 5, .ints = {0, 2, 1, 3, 4}}};
            gb_node(&g, "Reshape", "cn,g5", "gr", NULL, 0);
            gb_node(&g, "Transpose", "gr", "gt", pa, 1);
            gb_node(&g, "Reshape", "gt,g4", "gy", NULL, 0);
            gb_const(&g, "wy", (in_spec)SH(3, 2 * G, 1, 1));
            gb_node(&g, "Conv", "gy,wy", "y", NULL, 0);
            gb_output(&g, "y");
        } else if (cs[i].kind == 2) { /* another perm: the reference's */
            gb_output(&g, "y0");
        } else { /* a Slice of step 2 before the unit: the reference's */
            const int64_t s = 0, e = 4 * c2, a = 1, st2 = 2;
            gb_i64(&g, "ss", 1, &s);
            gb_i64(&g, "se", 1, &e);
            gb_i64(&g, "sa", 1, &a);
            gb_i64(&g, "sp", 1, &st2);
            gb_input(&g, "xx", (in_spec)SH(n, 4 * c2, h, w));
            gb_node(&g, "Slice", "xx,ss,se,sa,sp", "x2", NULL, 0);
            gb_node(&g, "Add", "x,x2", "x3", NULL, 0);
            gb_shuffle_unit(&g, "u1", "x3", "y", n, c2, h, w, false, shuffle);
            gb_output(&g, "y0");
            gb_output(&g, "y");
        }
        int shuf, slices, nhwc;
        native_glue_steps(g.g, g.feed, &shuf, &slices, &nhwc);
        if (shuf != cs[i].shuf || slices != cs[i].slices || nhwc != cs[i].nhwc)
            fail_msg("shuffle case %zu: %d shuffles, %d slices, %d channels-last, want %d, %d, %d",
                     i, shuf, slices, nhwc, cs[i].shuf, cs[i].slices, cs[i].nhwc);
        native_each_isa(&g, "channel shuffle", i);
        gb_free(&g);
    }
}

/* BatchNormalization's four parameters pre.{s,b,m,v} of c channels, the
 * variance positive. */
static void gb_bn_params(gb *g, const char *pre, int64_t c)
{
    static const char *const suf[] = {"s", "b", "m", "v"};
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s%s", pre, suf[k]);
        tensor *t = gb_const(g, name, (in_spec)SH(c));
        float *d = t->data;
        for (int64_t j = 0; k == 3 && j < c; j++) d[j] = fabsf(d[j]) + 0.25f;
    }
}

/* Native folds a BatchNormalization after a Conv into its packed weights
 * and bias (backends/native/conv.c), the Relu after it still the epilogue:
 * a Conv (bias or none) + BN + Relu whose output another Conv + BN reads
 * (kept NHWC between them), its output leaving the module (NCHW), and a
 * standalone BN + Relu after a Concat (an element-wise chain), against the
 * reference at every ISA and the portable path, odd channel counts. */
static void test_native_bn(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, m, k, grp, bias;
    } cs[] = {
        {1, 3, 9, 11, 17, 3, 1, 1}, {2, 6, 8, 7, 10, 1, 2, 0}, {1, 5, 10, 10, 19, 3, 1, 0},
        {1, 16, 7, 7, 33, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 15, "bn")};
        assert_non_null(g.g);
        int64_t M = cs[i].m, pad = cs[i].k / 2;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "w1", (in_spec)SH(M, cs[i].c / cs[i].grp, cs[i].k, cs[i].k));
        gb_const(&g, "b1", (in_spec)SH(M));
        gb_const(&g, "w2", (in_spec)SH(7, M, 3, 3));
        gb_bn_params(&g, "n1", M);
        gb_bn_params(&g, "n2", 7);
        gb_bn_params(&g, "n3", 2 * (int64_t)cs[i].c);
        tg_attr a1[2] = {{"pads", ATTR_INTS, .n = 4, .ints = {pad, pad, pad, pad}},
                           {"group", ATTR_INT, .i = cs[i].grp}};
        tg_attr eps = {"epsilon", ATTR_FLOAT, .f = 1e-3f}, ax = {"axis", ATTR_INT, .i = 1};
        gb_node(&g, "Conv", cs[i].bias ? "x,w1,b1" : "x,w1", "c1", a1, 2);
        gb_node(&g, "BatchNormalization", "c1,n1s,n1b,n1m,n1v", "bn1", &eps, 1);
        gb_node(&g, "Relu", "bn1", "r1", NULL, 0);
        gb_node(&g, "Conv", "r1,w2", "c2", pad1, 1);
        gb_node(&g, "BatchNormalization", "c2,n2s,n2b,n2m,n2v", "y", NULL, 0);
        gb_node(&g, "Concat", "x,x", "cc", &ax, 1);
        gb_node(&g, "BatchNormalization", "cc,n3s,n3b,n3m,n3v", "bn3", NULL, 0);
        gb_node(&g, "Relu", "bn3", "z", NULL, 0);
        gb_output(&g, "y");
        gb_output(&g, "z");
        native_each_isa(&g, "Conv+BN", i);
        gb_free(&g);
    }
}

/* A DenseNet dense block on native (concat.c, norm.c's BatchNormalization):
 * layer l reads the Concat of every earlier layer's output (the block's
 * input first; layer 1's Concat of one input), then BN + Relu, a 1x1 Conv +
 * BN (folded) + Relu, a 3x3 Conv; the block's Concat then BN + Clip, a 1x1
 * Conv and a 2x2 AveragePool (the transition). Every node on native's
 * steps, the block's values channels-last, the layers' Concats views of the
 * block's (nat_cat_views: every conv writes its channels there once, none
 * copied; a block input from a MaxPool, 3x3 stride 2 ceil_mode as
 * DenseNet's stem, is copied there by layer 1's Concat), against the
 * reference at every ISA and the portable path, odd channel counts and
 * sizes, batch 1 and 2; one block of 17 layers (a Concat of more than 15
 * inputs). */
static void test_native_dense(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, grow, layers, pool;
    } cs[] = {{1, 5, 7, 9, 3, 3, 0}, {2, 8, 6, 5, 4, 2, 0}, {1, 3, 5, 6, 2, 17, 0},
              {2, 5, 9, 8, 3, 4, 1}, {1, 17, 11, 7, 5, 1, 1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "dense")};
        assert_non_null(g.g);
        const int64_t c = cs[i].c, gr = cs[i].grow;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, c, cs[i].h, cs[i].w));
        gb_const(&g, "w0", (in_spec)SH(c, c, 1, 1));
        tg_attr mp[3] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {3, 3}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}, {"ceil_mode", ATTR_INT, .i = 1}};
        gb_node(&g, "Conv", "x,w0", cs[i].pool ? "c0" : "f0", NULL, 0);
        if (cs[i].pool) gb_node(&g, "MaxPool", "c0", "f0", mp, 3);
        tg_attr ax = {"axis", ATTR_INT, .i = 1};
        char cat[512] = "f0", name[8][32], ins[600];
        int64_t C = c;
        for (int l = 1; l <= cs[i].layers; l++, C += gr) {
            static const char *const sfx[] = {"cat", "bn", "r", "wa", "ca", "bb", "wb", "n"};
            for (int k = 0; k < 8; k++) snprintf(name[k], sizeof name[k], "%s%d", sfx[k], l);
            gb_node(&g, "Concat", cat, name[0], &ax, 1);
            gb_bn_params(&g, name[7], C);
            snprintf(ins, sizeof ins, "%s,%ss,%sb,%sm,%sv", name[0], name[7], name[7], name[7], name[7]);
            gb_node(&g, "BatchNormalization", ins, name[1], NULL, 0);
            gb_node(&g, "Relu", name[1], name[2], NULL, 0);
            gb_const(&g, name[3], (in_spec)SH(4 * gr, C, 1, 1));
            snprintf(ins, sizeof ins, "%s,%s", name[2], name[3]);
            gb_node(&g, "Conv", ins, name[4], NULL, 0);
            char pre[16], bo[16], ro[16], fo[16];
            snprintf(pre, sizeof pre, "m%d", l);
            snprintf(bo, sizeof bo, "mb%d", l);
            snprintf(ro, sizeof ro, "mr%d", l);
            snprintf(fo, sizeof fo, "f%d", l);
            gb_bn_params(&g, pre, 4 * gr);
            snprintf(ins, sizeof ins, "%s,%ss,%sb,%sm,%sv", name[4], pre, pre, pre, pre);
            gb_node(&g, "BatchNormalization", ins, bo, NULL, 0);
            gb_node(&g, "Relu", bo, ro, NULL, 0);
            gb_const(&g, name[6], (in_spec)SH(gr, 4 * gr, 3, 3));
            snprintf(ins, sizeof ins, "%s,%s", ro, name[6]);
            gb_node(&g, "Conv", ins, fo, pad1, 1);
            size_t at = strlen(cat);
            snprintf(cat + at, sizeof cat - at, ",%s", fo);
        }
        gb_node(&g, "Concat", cat, "blk", &ax, 1);
        gb_bn_params(&g, "t", C);
        gb_node(&g, "BatchNormalization", "blk,ts,tb,tm,tv", "tbn", NULL, 0);
        tensor *lo = gb_const(&g, "lo", (in_spec){.rank = 0}), *hi = gb_const(&g, "hi", (in_spec){.rank = 0});
        ((float *)lo->data)[0] = 0.0f;
        ((float *)hi->data)[0] = 0.5f;
        gb_node(&g, "Clip", "tbn,lo,hi", "tr", NULL, 0);
        gb_const(&g, "wt", (in_spec)SH(5, C, 1, 1));
        gb_node(&g, "Conv", "tr,wt", "tc", NULL, 0);
        tg_attr ap[2] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {2, 2}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}}};
        gb_node(&g, "AveragePool", "tc", "y", ap, 2);
        gb_output(&g, "y");
        built *bm = native_ran(g.g, g.feed);
        int ref = 0, nhwc = 0, views = 0, writers = 0;
        for (int k = 0; k < bm->n_steps; k++) {
            ref += bm->steps[k].op == NULL;
            nhwc += bm->steps[k].op && bm->steps[k].nhwc;
            views += bm->steps[k].view != 0;
            writers += bm->steps[k].cat >= 0;
        }
        /* conv0, per layer BN, 1x1, 3x3, then Concat, BN, Conv + pool (conv.c's avg_first) */
        int want = 1 + 3 * cs[i].layers + 3;
        want += cs[i].layers + cs[i].pool; /* the layers' Concats, the MaxPool */
        if (ref || bm->n_steps != want || nhwc != want) /* conv0 and the pool at the module's edges too */
            fail_msg("dense case %zu: %d steps on the reference, %d channels-last of %d, want %d", i,
                     ref, nhwc, bm->n_steps, want);
        /* every Concat in the group; every 3x3 conv (and conv0 unless pooled) writes into it */
        if (views != cs[i].layers + 1 || writers != cs[i].layers + !cs[i].pool)
            fail_msg("dense case %zu: %d Concats as views, %d convs writing into the block, want %d, %d",
                     i, views, writers, cs[i].layers + 1, cs[i].layers + !cs[i].pool);
        backend_find("native")->free(bm);
        /* each layer's BN + Relu is its 1x1 Conv's prologue; not the transition's (pooled first) */
        int folded = native_folded(g.g, g.feed);
        if (folded != cs[i].layers)
            fail_msg("dense case %zu: %d BatchNormalizations folded into a Conv, want %d", i, folded,
                     cs[i].layers);
        native_each_isa(&g, "dense block", i);
        gb_free(&g);
    }
}

/* An AveragePool after a 1x1 Conv runs first, on the Conv's input, in the
 * Conv's step (backends/native/conv.c, avg_first): a Conv with a bias or a
 * folded BatchNormalization then a pool of 2x2 stride 2 or 3x3 stride 2 at
 * odd sizes (the last rows and columns dropped), grouped, NCHW at the
 * module's edges or channels-last between 3x3 Convs, batch 1 and 2; not
 * when a Relu comes between, nor a padded pool (count_include_pad) nor
 * ceil_mode's partial windows; through a Pad of zeros (torch's export of
 * AvgPool2d, DenseNet's transitions: after a BatchNormalization + Relu,
 * channels-last), not a Pad of ones: against the reference at every ISA
 * and the portable path, and how many steps pool first. */
static void test_native_avg_first(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, m, grp, k, s, form, fused;
    } cs[] = {
        {1, 6, 8, 10, 5, 1, 2, 2, 0, 1}, {2, 17, 9, 7, 11, 1, 3, 2, 1, 1}, {1, 8, 7, 9, 6, 2, 2, 2, 2, 1},
        {2, 5, 11, 6, 19, 1, 2, 2, 3, 0}, {1, 7, 9, 9, 9, 1, 3, 2, 4, 0}, {1, 9, 8, 8, 13, 1, 3, 2, 5, 0},
        {2, 33, 6, 5, 17, 1, 2, 1, 2, 1},
        /* a Pad of zeros before the pool (torch's AvgPool2d export): swallowed; DenseNet's
         * transition channels-last (BN + Relu, the 1x1, the Pad, the pool, a 3x3); a Pad
         * of ones: left to the reference */
        {1, 6, 8, 10, 5, 1, 2, 2, 6, 1}, {2, 9, 8, 6, 7, 1, 2, 2, 7, 1}, {1, 6, 8, 10, 5, 1, 2, 2, 8, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "avgfirst")};
        assert_non_null(g.g);
        const int64_t C = cs[i].c, M = cs[i].m;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, C, cs[i].h, cs[i].w));
        gb_const(&g, "wa", (in_spec)SH(C, C, 3, 3));
        gb_const(&g, "w", (in_spec)SH(M, C / cs[i].grp, 1, 1));
        gb_const(&g, "b", (in_spec)SH(M));
        gb_const(&g, "wz", (in_spec)SH(4, M, 3, 3));
        gb_bn_params(&g, "n", M);
        tg_attr grp = {"group", ATTR_INT, .i = cs[i].grp};
        tg_attr ap[4] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {cs[i].k, cs[i].k}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}},
                           {"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}},
                           {"count_include_pad", ATTR_INT, .i = 1}};
        tg_attr ceil[3] = {ap[0], ap[1], {"ceil_mode", ATTR_INT, .i = 1}};
        const int form = cs[i].form;
        const bool pad = form >= 6, chl = form == 2 || form == 3 || form == 7;
        /* form 2, 3 and 7: channels-last between two 3x3 Convs */
        if (chl) gb_node(&g, "Conv", "x,wa", "a", pad1, 1);
        if (form == 7) {
            gb_bn_params(&g, "m", C);
            gb_node(&g, "BatchNormalization", "a,ms,mb,mm,mv", "an", NULL, 0);
            gb_node(&g, "Relu", "an", "ar", NULL, 0);
        }
        const char *in = form == 7 ? "ar" : chl ? "a" : "x";
        char ins[32];
        snprintf(ins, sizeof ins, form == 1 ? "%s,w" : "%s,w,b", in);
        gb_node(&g, "Conv", ins, "c", &grp, 1);
        const char *pin = "c";
        if (form == 1) {
            gb_node(&g, "BatchNormalization", "c,ns,nb,nm,nv", "bn", NULL, 0);
            pin = "bn";
        } else if (form == 3) {
            gb_node(&g, "Relu", "c", "r", NULL, 0);
            pin = "r";
        }
        if (pad) {
            const int64_t o = form == 8, pz[8] = {0, 0, o, o, 0, 0, o, o};
            gb_i64(&g, "pz", 8, pz);
            gb_node(&g, "Pad", "c,pz", "cp", NULL, 0);
            pin = "cp";
        }
        snprintf(ins, sizeof ins, "%s", pin);
        gb_node(&g, "AveragePool", ins, "p", form == 4 ? ap : form == 5 ? ceil : ap, form == 4 ? 4 : form == 5 ? 3 : 2);
        if (chl) gb_node(&g, "Conv", "p,wz", "y", pad1, 1);
        gb_output(&g, chl ? "y" : "p");
        built *bm = native_ran(g.g, g.feed);
        int fused = 0, ref = 0;
        for (int k = 0; k < bm->n_steps; k++) {
            fused += bm->steps[k].avg[0] != 0;
            ref += bm->steps[k].op == NULL;
        }
        backend_find("native")->free(bm);
        if (fused != cs[i].fused || ref != (form == 8))
            fail_msg("avg-first case %zu: %d steps pool first (want %d), %d on the reference", i, fused,
                     cs[i].fused, ref);
        native_each_isa(&g, "AveragePool first", i);
        gb_free(&g);
    }
}

/* SiLU as torch exports it (x * sigmoid(x): a Sigmoid and a Mul both reading
 * the Conv's output) is the activation of native's Conv epilogue
 * (backends/native/fuse.c): EfficientNet's Conv + BN + SiLU, depthwise Conv +
 * SiLU (exported with the BN folded), a Mul with its operands swapped; one
 * native step per graph,
 * none on the reference ops, then against the reference at every ISA and the
 * portable path, odd channel counts and sizes, batch 1 and 2. A Conv output
 * that also leaves the module keeps its Sigmoid and Mul, a second native
 * step (the element-wise chain). */
static void test_native_silu(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, m, k, s, grp, bn, swap, out;
    } cs[] = {
        {1, 3, 9, 11, 17, 3, 2, 1, 1, 0, 0}, {2, 7, 8, 7, 7, 3, 1, 7, 0, 1, 0},
        {1, 16, 13, 13, 33, 1, 1, 1, 0, 0, 0}, {2, 24, 7, 9, 24, 5, 2, 24, 0, 1, 0},
        {1, 5, 6, 5, 9, 1, 1, 1, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "silu")};
        assert_non_null(g.g);
        int64_t M = cs[i].m, pad = cs[i].k / 2;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "w", (in_spec)SH(M, cs[i].c / cs[i].grp, cs[i].k, cs[i].k));
        gb_const(&g, "b", (in_spec)SH(M));
        gb_bn_params(&g, "n", M);
        tg_attr a[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {pad, pad, pad, pad}},
                          {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}},
                          {"group", ATTR_INT, .i = cs[i].grp}};
        gb_node(&g, "Conv", "x,w,b", "c", a, 3);
        const char *v = "c";
        if (cs[i].bn) {
            gb_node(&g, "BatchNormalization", "c,ns,nb,nm,nv", "bn", NULL, 0);
            v = "bn";
        }
        char mul_in[16];
        snprintf(mul_in, sizeof mul_in, cs[i].swap ? "sg,%s" : "%s,sg", v);
        gb_node(&g, "Sigmoid", v, "sg", NULL, 0);
        gb_node(&g, "Mul", mul_in, "y", NULL, 0);
        gb_output(&g, "y");
        if (cs[i].out) gb_output(&g, v);
        int steps = native_steps(g.g, g.feed, false), want = cs[i].out ? 2 : 1;
        if (steps != want) fail_msg("native Conv+SiLU case %zu: %d steps, want %d", i, steps, want);
        native_each_isa(&g, "Conv+SiLU", i);
        gb_free(&g);
    }
}

/* LayerNorm and RMSNorm written out (graph/fuse.h's FK_LAYERNORM; the
 * models of tests/unit/make_fusion_models.py) run as one native step each
 * on the row kernels (norm.c's nat_ln_fused), none of their nodes on the
 * reference ops, and give the reference's answer at every ISA and the
 * portable path; 2 / sqrt (no RMSNorm) stays on the reference ops. */
static void test_native_norm_fused(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int fused; /* nat_ln_fused steps; -1: and nodes left to the reference ops */
    } cs[] = {{"layernorm", 1}, {"layernorm_mul", 1}, {"rmsnorm", 1}, {"rmsnorm_recip", 1},
              {"rmsnorm_div", -1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "fusion/%s.onnx", cs[i].name);
        ait_model *m = test_load(test_data(path));
        gb f = {.g = m->g};
        for (int k = 0; k < m->g->n_inputs; k++) {
            const value *d = &m->g->vals[m->g->inputs[k]];
            f.feed[f.n_feed++] = test_rand_tensor(d->rank, d->dims);
        }
        built *bm = native_ran(m->g, f.feed);
        int fused = 0;
        for (int k = 0; k < bm->n_steps; k++) fused += bm->steps[k].op == &nat_ln_fused;
        backend_find("native")->free(bm);
        int all = native_steps(m->g, f.feed, false);
        if (fused != (cs[i].fused < 0 ? 1 : cs[i].fused) || (all < 0) != (cs[i].fused < 0))
            fail_msg("native %s: %d fused norm steps, %d steps in all", cs[i].name, fused, all);
        native_each_isa(&f, cs[i].name, i);
        for (int k = 0; k < f.n_feed; k++) test_tensor_free(f.feed[k]);
        ait_model_free(m);
    }
}

/* Squeeze-excitation as EfficientNet exports it: depthwise Conv + SiLU,
 * GlobalAveragePool, 1x1 Conv + SiLU, 1x1 Conv + Sigmoid, the Mul of the
 * block's value by those per-channel factors (backends/native/chanmul.c,
 * either operand order), a 1x1 projection; and a Mul by constant factors
 * [1][C][1][1] over a batch, of the module's (NCHW) input too. No node on
 * the reference ops; against the reference at every ISA and the portable
 * path, odd channel counts, batch 1 and 2, the Mul's input and output each
 * NHWC or NCHW (its output also a module output in the last case). */
static void test_native_se(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, sq, swap, konst, k5; /* k5: the depthwise 5x5 stride 2 */
    } cs[] = {
        {1, 7, 9, 11, 3, 0, 0, 0}, {2, 16, 8, 7, 4, 1, 0, 0}, {2, 33, 5, 6, 8, 0, 0, 0},
        {2, 5, 7, 7, 0, 1, 1, 0},  {2, 9, 6, 5, 0, 0, 2, 0},  {1, 17, 5, 7, 3, 1, 3, 0},
        {2, 20, 9, 37, 4, 0, 0, 1}, {1, 24, 40, 34, 6, 1, 0, 0}, /* rows of 8 and 4 outputs */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "se")};
        assert_non_null(g.g);
        int64_t C = cs[i].c;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, C, cs[i].h, cs[i].w));
        const int64_t kd = cs[i].k5 ? 5 : 3;
        gb_const(&g, "wd", (in_spec)SH(C, 1, kd, kd));
        gb_const(&g, "w1", (in_spec)SH(cs[i].sq ? cs[i].sq : 1, C, 1, 1));
        gb_const(&g, "w2", (in_spec)SH(C, cs[i].sq ? cs[i].sq : 1, 1, 1));
        gb_const(&g, "b2", (in_spec)SH(C));
        gb_const(&g, "wp", (in_spec)SH(9, C, 1, 1));
        gb_const(&g, "k", (in_spec)SH(1, C, 1, 1));
        tg_attr dw[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {kd / 2, kd / 2, kd / 2, kd / 2}},
                           {"group", ATTR_INT, .i = C},
                           {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].k5 ? 2 : 1, cs[i].k5 ? 2 : 1}}};
        gb_node(&g, "Conv", "x,wd", "d", dw, 3);
        gb_node(&g, "Sigmoid", "d", "ds", NULL, 0);
        gb_node(&g, "Mul", "d,ds", "a", NULL, 0);
        if (cs[i].konst == 1) {
            gb_node(&g, "Mul", cs[i].swap ? "k,a" : "a,k", "m", NULL, 0);
        } else if (cs[i].konst == 2) { /* NCHW in (the module input), NHWC out */
            gb_node(&g, "Mul", "x,k", "m", NULL, 0);
        } else {
            gb_node(&g, "GlobalAveragePool", "a", "p", NULL, 0);
            gb_node(&g, "Conv", "p,w1", "f1", NULL, 0);
            gb_node(&g, "Sigmoid", "f1", "f1s", NULL, 0);
            gb_node(&g, "Mul", "f1,f1s", "f1a", NULL, 0);
            gb_node(&g, "Conv", "f1a,w2,b2", "f2", NULL, 0);
            gb_node(&g, "Sigmoid", "f2", "sc", NULL, 0);
            gb_node(&g, "Mul", cs[i].swap ? "a,sc" : "sc,a", "m", NULL, 0);
        }
        gb_node(&g, "Conv", "m,wp", "y", NULL, 0);
        gb_output(&g, "y");
        if (cs[i].konst == 3) gb_output(&g, "m"); /* NHWC in, NCHW out (a module output) */
        if (native_steps(g.g, g.feed, false) < 0) fail_msg("native SE case %zu: a node on the reference ops", i);
        /* the Mul is the projection's prologue, but where its output is also a module output */
        if (native_folded(g.g, g.feed) != (cs[i].konst != 3))
            fail_msg("native SE case %zu: the Mul %s folded into the projection", i,
                     cs[i].konst == 3 ? "was" : "was not");
        native_each_isa(&g, "squeeze-excitation", i);
        gb_free(&g);
    }
}

/* MobileNet-style inverted residual blocks (backends/native/irb.c): an
 * expanding 1x1 Conv + activation, a depthwise 3x3 or 5x5 Conv (stride 1
 * or 2) + activation, [squeeze-excitation,] a projecting 1x1 Conv [+ the
 * block's input], run as one block by bands of output rows; without the
 * expansion (the first block's depthwise, then the projection); Relu6 as
 * Clip, HardSwish, SiLU written out; odd sizes, batch 1 and 2; between a
 * 3x3 Conv and a 1x1 Conv (channels-last values on both sides). The
 * blocks formed and bands of fewer rows than the output's (several bands,
 * a band of one row) and the projection written over its residual
 * checked, the outputs against the reference (the
 * unfused graph, node by node) at every ISA and the portable path. */
static void test_native_irb(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, e, k, s, m, act, se, rows; /* e: expanded channels (0: no expansion);
                                                      act 0 Clip, 1 HardSwish, 2 SiLU; rows:
                                                      bands of fewer rows (1: of one row) */
    } cs[] = {
        {1, 16, 17, 41, 200, 3, 1, 16, 0, 0, 2}, /* residual, several bands */
        {2, 7, 13, 23, 37, 3, 1, 7, 1, 0, 0},    /* one band, batch 2, residual */
        {1, 24, 21, 35, 150, 5, 2, 40, 2, 0, 2}, /* 5x5 stride 2 */
        {2, 300, 15, 33, 0, 3, 1, 17, 0, 0, 2},  /* no expansion: depthwise, projection */
        {1, 19, 6, 70, 520, 3, 2, 9, 1, 0, 1},   /* bands of one row, stride 2 */
        {2, 24, 19, 37, 120, 5, 1, 24, 1, 1, 2}, /* SE: the expansion and the depthwise only */
        {1, 11, 9, 10, 66, 3, 2, 13, 2, 1, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "irb")};
        assert_non_null(g.g);
        const int64_t C = cs[i].c, E = cs[i].e ? cs[i].e : C, kd = cs[i].k;
        const bool res = cs[i].s == 1 && cs[i].m == C && cs[i].e;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, 5, cs[i].h, cs[i].w));
        gb_const(&g, "w0", (in_spec)SH(C, 5, 3, 3));
        gb_const(&g, "wz", (in_spec)SH(3, cs[i].m, 1, 1));
        gb_const(&g, "we", (in_spec)SH(E, C, 1, 1));
        gb_const(&g, "be", (in_spec)SH(E));
        gb_const(&g, "wd", (in_spec)SH(E, 1, kd, kd));
        gb_const(&g, "bd", (in_spec)SH(E));
        gb_const(&g, "wp", (in_spec)SH(cs[i].m, E, 1, 1));
        gb_const(&g, "bp", (in_spec)SH(cs[i].m));
        gb_const(&g, "w1", (in_spec)SH(5, E, 1, 1));
        gb_const(&g, "w2", (in_spec)SH(E, 5, 1, 1));
        tensor *lo = gb_const(&g, "lo", (in_spec){.rank = 0});
        tensor *hi = gb_const(&g, "hi", (in_spec){.rank = 0});
        *(float *)lo->data = 0;
        *(float *)hi->data = 0.75f;
        /* the activation of c into out */
        const char *acts[] = {"Clip", "HardSwish", "Sigmoid"};
        char in[64], out[64];
        const char *stage[2][2] = {{"ce", "e"}, {"cd", "d"}};
        /* the block reads a Conv's output and its output a Conv reads (channels-last values;
         * that Conv's K small: its Winograd variant's error well within the bound) */
        gb_node(&g, "Conv", "x,w0", "c0", pad1, 1);
        gb_node(&g, "Relu", "c0", "x0", NULL, 0);
        for (int k = 0; k < 2; k++) {
            snprintf(in, sizeof in, cs[i].act == 0 ? "%s,lo,hi" : "%s", stage[k][0]);
            snprintf(out, sizeof out, cs[i].act == 2 ? "%s_s" : "%s", stage[k][1]);
            if (k == 0 && !cs[i].e) continue;
            if (k == 0) gb_node(&g, "Conv", "x0,we,be", "ce", NULL, 0);
            else {
                tg_attr dw[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {kd / 2, kd / 2, kd / 2, kd / 2}},
                                   {"group", ATTR_INT, .i = E},
                                   {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}}};
                gb_node(&g, "Conv", cs[i].e ? "e,wd,bd" : "x0,wd,bd", "cd", dw, 3);
            }
            gb_node(&g, acts[cs[i].act], in, out, NULL, 0);
            if (cs[i].act == 2) { /* SiLU: x * sigmoid(x) */
                snprintf(in, sizeof in, "%s,%s_s", stage[k][0], stage[k][1]);
                gb_node(&g, "Mul", in, stage[k][1], NULL, 0);
            }
        }
        const char *pin = "d";
        if (cs[i].se) {
            gb_node(&g, "GlobalAveragePool", "d", "p", NULL, 0);
            gb_node(&g, "Conv", "p,w1", "f1", NULL, 0);
            gb_node(&g, "Relu", "f1", "f1a", NULL, 0);
            gb_node(&g, "Conv", "f1a,w2", "f2", NULL, 0);
            gb_node(&g, "Sigmoid", "f2", "sc", NULL, 0);
            gb_node(&g, "Mul", "d,sc", "m", NULL, 0);
            pin = "m";
        }
        snprintf(in, sizeof in, "%s,wp,bp", pin);
        gb_node(&g, "Conv", in, res ? "cp" : "y", NULL, 0);
        if (res) gb_node(&g, "Add", "cp,x0", "y", NULL, 0);
        gb_node(&g, "Conv", "y,wz", "z", NULL, 0);
        gb_output(&g, "z");
        built *bm = native_ran(g.g, g.feed);
        int blocks = 0, len = 0;
        int64_t rows = 0, oh = (cs[i].h + 2 * (kd / 2) - kd) / cs[i].s + 1;
        for (int k = 0; k < bm->n_steps; k++)
            if (bm->steps[k].band) {
                blocks++;
                len = bm->steps[k].band;
                rows = nat_band_rows(bm, k);
            }
        const int want_len = cs[i].se ? 2 : cs[i].e ? 3 : 2;
        if (blocks != 1 || len != want_len)
            fail_msg("irb case %zu: %d blocks of %d steps, want 1 of %d", i, blocks, len, want_len);
        if (cs[i].rows == 1 ? rows != 1 : cs[i].rows ? rows >= oh : rows < oh)
            fail_msg("irb case %zu: bands of %lld rows of %lld", i, (long long)rows, (long long)oh);
        /* the projection over its residual, the block's input, as step by step (nat_band_out_late;
         * not after squeeze-excitation, whose Mul the projection reads as its prologue) */
        if (res && !cs[i].se && bm->vals[gb_val(&g, "y")].t.data != bm->vals[gb_val(&g, "x0")].t.data)
            fail_msg("irb case %zu: the projection's output not over its residual", i);
        backend_find("native")->free(bm);
        native_each_isa(&g, "inverted residual", i);
        gb_free(&g);
    }
}

/* A direct 1x1 Conv's prologue (backends/native/conv.c, pro_take): a
 * BatchNormalization + Relu or + Clip of a module input (NCHW) read only by
 * a 1x1 Conv folds into it; read by two 1x1 Convs it does not, and runs on
 * its own; a
 * Mul by factors per image, a module input [n][c][1][1], folds into the
 * 1x1 Conv after it (one GEMM per image). Odd channel counts, batch 1 and
 * 2; the folded count checked, the outputs against the reference (nothing
 * folded) at every ISA and the portable path. */
static void test_native_prologue(void **state)
{
    (void)state;
    static const struct {
        int n, c, h, w, m, two, clip, nchw;
    } cs[] = {{1, 7, 5, 9, 11, 0, 0, 0}, {2, 19, 6, 5, 17, 0, 1, 0}, {2, 5, 7, 7, 3, 1, 0, 0},
              {1, 33, 4, 9, 20, 1, 1, 0}, {2, 13, 5, 5, 9, 0, 0, 1}, {1, 40, 3, 3, 16, 0, 1, 1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "prologue")};
        assert_non_null(g.g);
        const int64_t N = cs[i].n, C = cs[i].c, M = cs[i].m;
        gb_input(&g, "x", (in_spec)SH(N, C, cs[i].h, cs[i].w));
        gb_input(&g, "s", (in_spec)SH(N, C, 1, 1));
        gb_bn_params(&g, "n", C);
        gb_const(&g, "w1", (in_spec)SH(M, C, 1, 1));
        gb_const(&g, "w2", (in_spec)SH(5, C, 1, 1));
        gb_const(&g, "w3", (in_spec)SH(M, C, 1, 1));
        gb_const(&g, "b3", (in_spec)SH(M));
        gb_node(&g, "BatchNormalization", "x,ns,nb,nm,nv", "bn", NULL, 0);
        if (cs[i].clip) {
            tensor *lo = gb_const(&g, "lo", (in_spec){.rank = 0}), *hi = gb_const(&g, "hi", (in_spec){.rank = 0});
            ((float *)lo->data)[0] = -0.25f;
            ((float *)hi->data)[0] = 0.5f;
            gb_node(&g, "Clip", "bn,lo,hi", "r", NULL, 0);
        } else {
            gb_node(&g, "Relu", "bn", "r", NULL, 0);
        }
        gb_node(&g, "Conv", "r,w1", "y1", NULL, 0);
        if (cs[i].two) gb_node(&g, "Conv", "r,w2", "y2", NULL, 0); /* a second reader: no fold */
        /* a Mul by factors per image, then a 1x1 Conv with a bias, its output a module
         * output (NCHW) or read by a 3x3 Conv after a Relu (channels-last) */
        gb_node(&g, "Mul", "x,s", "xs", NULL, 0);
        gb_node(&g, "Conv", "xs,w3,b3", cs[i].nchw ? "y3" : "c3", NULL, 0);
        if (!cs[i].nchw) {
            gb_const(&g, "w4", (in_spec)SH(6, M, 3, 3));
            gb_node(&g, "Relu", "c3", "r3", NULL, 0);
            gb_node(&g, "Conv", "r3,w4", "y3", pad1, 1); /* keeps the 1x1 Conv channels-last */
            gb_node(&g, "Conv", "y1,w4", "y4", pad1, 1);
            gb_output(&g, "y4");
        } else {
            gb_output(&g, "y1");
        }
        gb_output(&g, "y3");
        if (cs[i].two) gb_output(&g, "y2");
        if (native_steps(g.g, g.feed, false) < 0) fail_msg("prologue case %zu: a node on the reference ops", i);
        int folded = native_folded(g.g, g.feed), want = 1 + !cs[i].two;
        if (folded != want) fail_msg("prologue case %zu: %d steps folded, want %d", i, folded, want);
        native_each_isa(&g, "prologue", i);
        gb_free(&g);
    }
}

/* Native folds a BatchNormalization after a ConvTranspose into its weights
 * ([C_in][C_out / group][kh][kw], scaled per output channel) and bias, the
 * activation after it the kernel's epilogue (DBNet's head: ConvTranspose,
 * BN, Relu, then ConvTranspose, Sigmoid): each graph must run as one native
 * step, against the reference at every ISA and the portable path, odd
 * channel counts, stride 2, pads, output_padding, groups, batch 2; the
 * stride-equals-kernel ones (2x2 stride 2, 1x1) on the direct kernel, rows
 * not a multiple of the vector. oneDNN runs the same on ait's kernel
 * (onednn/kern.c): no node on the reference ops, the same answers. */
static void test_native_convt_bn(void **state)
{
    (void)state;
    static const struct {
        int n, c, m, grp, h, w, k, s, pad, opad, bias, bn;
        const char *act;
    } cs[] = {
        {2, 5, 7, 1, 9, 11, 3, 2, 1, 1, 1, 1, "Relu"}, {2, 6, 9, 3, 7, 6, 4, 2, 1, 0, 0, 1, "Relu"},
        {1, 16, 16, 1, 13, 13, 2, 2, 0, 0, 1, 1, "Relu"}, {2, 3, 5, 1, 5, 8, 3, 2, 2, 1, 0, 1, NULL},
        {2, 16, 1, 1, 8, 9, 2, 2, 0, 0, 1, 0, "Sigmoid"},  {1, 6, 4, 2, 5, 17, 2, 2, 0, 0, 1, 1, "Relu"},
        {1, 5, 3, 1, 4, 19, 1, 1, 0, 0, 0, 1, NULL},       {2, 3, 2, 1, 3, 33, 2, 2, 0, 0, 1, 0, "Sigmoid"},
        {1, 4, 3, 1, 3, 70, 2, 2, 0, 0, 1, 1, "Relu"},     {1, 4, 2, 2, 2, 67, 1, 1, 0, 0, 0, 1, NULL},
    };
    const backend *dn = backend_find("onednn");
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "convt_bn")};
        assert_non_null(g.g);
        int64_t p = cs[i].pad, o = cs[i].opad;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "w", (in_spec)SH(cs[i].c, cs[i].m / cs[i].grp, cs[i].k, cs[i].k));
        gb_const(&g, "b", (in_spec)SH(cs[i].m));
        gb_bn_params(&g, "n", cs[i].m);
        tg_attr a[4] = {{"pads", ATTR_INTS, .n = 4, .ints = {p, p, p, p}},
                          {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}},
                          {"output_padding", ATTR_INTS, .n = 2, .ints = {o, o}},
                          {"group", ATTR_INT, .i = cs[i].grp}};
        gb_node(&g, "ConvTranspose", cs[i].bias ? "x,w,b" : "x,w", "c", a, 4);
        const char *last = "c";
        if (cs[i].bn) {
            gb_node(&g, "BatchNormalization", "c,ns,nb,nm,nv", cs[i].act ? "bn" : "y", NULL, 0);
            last = "bn";
        }
        if (cs[i].act) gb_node(&g, cs[i].act, last, "y", NULL, 0);
        gb_output(&g, "y");
        int steps = native_steps(g.g, g.feed, false);
        if (steps != 1) fail_msg("native ConvTranspose case %zu: %d steps, want 1", i, steps);
        native_each_isa(&g, "ConvTranspose+BN", i);
        if (dn) {
            char w[96];
            snprintf(w, sizeof w, "onednn ConvTranspose+BN %zu", i);
            compare_all(dn, g.g, g.feed, w);
            candidate_cfg cfg = {.backend = "onednn", .threads = 1};
            built *bm = NULL;
            ait_error e = {0};
            if (dn->build(dn, g.g, &cfg, &bm, &e) != AIT_OK) fail_msg("%s: %s", w, e.msg);
            const char *im[8];
            int n = dn_impls(bm, im, 8);
            if (dn_ref_nodes(bm) || n != 1 || strcmp(im[0], "convtranspose:ait"))
                fail_msg("%s: %d node(s) on the reference ops, %d step(s) (%s)", w, dn_ref_nodes(bm), n,
                         n ? im[0] : "none");
            dn->free(bm);
        }
        gb_free(&g);
    }
}

/* An FPN's top-down join on native (resize.c): a nearest Resize of one 1x1
 * Conv's output, added to another's and read by a 3x3 Conv: the Add runs
 * in the Resize's pass (no Add step, nothing on the reference ops) and the
 * Resize runs channels-last, so that no value between the Convs changes
 * layout. Also: the join a module output too (the channels-last pass then
 * writes NCHW), the Resize reading a module input (NCHW) with a residual
 * from a Conv, a Resize without an Add before a Concat (written into the
 * Concat's channels: channels-last, or NCHW when the Concat is a module
 * output), and a linear Resize (NCHW, its Add still in its pass). Odd
 * channel counts and sizes, scales 2 and 3, batch 2, against the reference
 * at every ISA and portable. */
static void test_native_fpn(void **state)
{
    (void)state;
    static const struct {
        int n, c, l, h, w, f, kind;
        bool linear;
    } cs[] = {
        {2, 3, 17, 3, 5, 2, 0, false}, {1, 5, 16, 4, 4, 3, 0, false}, {1, 4, 9, 5, 7, 2, 1, false},
        {2, 3, 17, 3, 5, 2, 2, false}, {1, 4, 9, 5, 7, 2, 3, false},  {2, 3, 17, 3, 5, 2, 0, true},
        {2, 5, 9, 4, 3, 2, 4, false},  {2, 3, 17, 3, 5, 3, 3, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "fpn")};
        assert_non_null(g.g);
        const int64_t n = cs[i].n, c = cs[i].c, l = cs[i].l, h = cs[i].h, w = cs[i].w, f = cs[i].f;
        const int kind = cs[i].kind;
        gb_input(&g, "a", (in_spec)SH(n, c, h, w));
        gb_input(&g, "b", (in_spec)SH(n, c, f * h, f * w));
        if (kind == 2) gb_input(&g, "l1", (in_spec)SH(n, l, h, w));
        gb_const(&g, "w1", (in_spec)SH(l, c, 1, 1));
        gb_const(&g, "b1", (in_spec)SH(l));
        gb_const(&g, "w0", (in_spec)SH(l, c, 1, 1));
        gb_const(&g, "b0", (in_spec)SH(l));
        gb_const(&g, "w2", (in_spec)SH(5, kind >= 3 ? 2 * l : l, 3, 3));
        float *sc = gb_const(&g, "sc", (in_spec)SH(4))->data;
        sc[0] = sc[1] = 1, sc[2] = sc[3] = (float)f;
        if (kind != 2) gb_node(&g, "Conv", "a,w1,b1", "l1", NULL, 0);
        gb_node(&g, "Conv", "b,w0,b0", "l0", NULL, 0);
        tg_attr ra[3] = {{"mode", ATTR_STRING, .s = cs[i].linear ? "linear" : "nearest"},
                           {"coordinate_transformation_mode", ATTR_STRING, .s = "asymmetric"},
                           {"nearest_mode", ATTR_STRING, .s = "floor"}};
        gb_node(&g, "Resize", "l1,sc", "r", ra, 3);
        node *rz = &g.g->nodes[g.g->n_nodes - 1];
        rz->in[2] = rz->in[1], rz->in[1] = -1, rz->n_in = 3; /* no roi */
        tg_attr ax = {"axis", ATTR_INT, .i = 1}, pad1 = {"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}};
        if (kind >= 3) gb_node(&g, "Concat", "l0,r", "s", &ax, 1);
        else gb_node(&g, "Add", "l0,r", "s", NULL, 0);
        gb_node(&g, "Conv", "s,w2", "y", &pad1, 1);
        gb_output(&g, "y");
        if (kind == 1 || kind == 4) gb_output(&g, "s");
        built *bm = native_ran(g.g, g.feed);
        int ref = 0, adds = 0, rz_nhwc = -1, rz_cat = -1;
        for (int k = 0; k < bm->n_steps; k++) {
            const nat_step *st = &bm->steps[k];
            ref += st->op == NULL;
            adds += !strcmp(g.g->nodes[st->node].op, "Add");
            if (st->op && !strcmp(g.g->nodes[st->node].op, "Resize"))
                rz_nhwc = st->nhwc, rz_cat = st->cat >= 0;
        }
        if (ref || adds || rz_nhwc != !cs[i].linear || rz_cat != (kind >= 3))
            fail_msg("fpn case %zu: %d steps on the reference, %d Add steps, Resize channels-last %d, "
                     "into the Concat %d; want 0, 0, %d, %d", i, ref, adds, rz_nhwc, rz_cat,
                     !cs[i].linear, kind >= 3);
        backend_find("native")->free(bm);
        native_each_isa(&g, "fpn", i);
        gb_free(&g);
    }
}

/* MobileNetV3's glue, which oneDNN ran on binary,ref:any when the backend
 * fused HardSwish into one binary primitive with a plain-layout operand
 * beside a channels-last source: built with the default and the blocked
 * variant (compare_all checks that no primitive runs on a reference
 * implementation and that the outputs match the reference backend). */
static gb mnv3_block(int which, const char **what)
{
    gb b = {.g = graph_new(NULL, 17, "mnv3")};
    assert_non_null(b.g);
    *(float *)gb_const(&b, "zero", (in_spec){.rank = 0})->data = 0.0f;
    *(float *)gb_const(&b, "three", (in_spec){.rank = 0})->data = 3.0f;
    *(float *)gb_const(&b, "six", (in_spec){.rank = 0})->data = 6.0f;
    switch (which) {
    case 0:
        *what = "Conv 1x1 + HardSwish as Add 3, Clip 0 6, Mul x, Div 6";
        gb_input(&b, "x", (in_spec)SH(1, 16, 28, 28));
        gb_const(&b, "w", (in_spec)SH(48, 16, 1, 1));
        gb_const(&b, "cb", (in_spec)SH(48));
        gb_node(&b, "Conv", "x,w,cb", "c", NULL, 0);
        gb_node(&b, "Add", "c,three", "a", NULL, 0);
        gb_node(&b, "Clip", "a,zero,six", "cl", NULL, 0);
        gb_node(&b, "Mul", "c,cl", "m", NULL, 0);
        gb_node(&b, "Div", "m,six", "y", NULL, 0);
        break;
    case 1: {
        *what = "depthwise Conv + HardSwish, then squeeze-excitation (GlobalAveragePool, 1x1 "
                "Conv, Relu, 1x1 Conv, HardSigmoid, Mul)";
        gb_input(&b, "x", (in_spec)SH(1, 24, 14, 14));
        gb_const(&b, "wd", (in_spec)SH(24, 1, 3, 3));
        gb_const(&b, "w1", (in_spec)SH(8, 24, 1, 1));
        gb_const(&b, "b1", (in_spec)SH(8));
        gb_const(&b, "w2", (in_spec)SH(24, 8, 1, 1));
        gb_const(&b, "b2", (in_spec)SH(24));
        tg_attr dw[2] = {pad1[0], {"group", ATTR_INT, .i = 24}};
        tg_attr hs[2] = {{"alpha", ATTR_FLOAT, .f = 1.0f / 6}, {"beta", ATTR_FLOAT, .f = 0.5f}};
        gb_node(&b, "Conv", "x,wd", "c", dw, 2);
        gb_node(&b, "Add", "c,three", "a", NULL, 0);
        gb_node(&b, "Clip", "a,zero,six", "cl", NULL, 0);
        gb_node(&b, "Mul", "c,cl", "m", NULL, 0);
        gb_node(&b, "Div", "m,six", "h", NULL, 0);
        gb_node(&b, "GlobalAveragePool", "h", "p", NULL, 0);
        gb_node(&b, "Conv", "p,w1,b1", "s1", NULL, 0);
        gb_node(&b, "Relu", "s1", "r", NULL, 0);
        gb_node(&b, "Conv", "r,w2,b2", "s2", NULL, 0);
        gb_node(&b, "HardSigmoid", "s2", "g", hs, 2);
        gb_node(&b, "Mul", "h,g", "y", NULL, 0);
        break;
    }
    case 2: {
        *what = "grouped Conv (4 groups) + Relu";
        gb_input(&b, "x", (in_spec)SH(1, 32, 14, 14));
        gb_const(&b, "w", (in_spec)SH(64, 8, 3, 3));
        tg_attr gr[2] = {pad1[0], {"group", ATTR_INT, .i = 4}};
        gb_node(&b, "Conv", "x,w", "c", gr, 2);
        gb_node(&b, "Relu", "c", "y", NULL, 0);
        break;
    }
    case 3: {
        *what = "depthwise Conv + the HardSwish op (as torchvision exports it), 1x1 Conv";
        gb_input(&b, "x", (in_spec)SH(1, 16, 28, 28));
        gb_const(&b, "wd", (in_spec)SH(16, 1, 3, 3));
        gb_const(&b, "w", (in_spec)SH(24, 16, 1, 1));
        tg_attr dw[2] = {pad1[0], {"group", ATTR_INT, .i = 16}};
        gb_node(&b, "Conv", "x,wd", "c", dw, 2);
        gb_node(&b, "HardSwish", "c", "h", NULL, 0);
        gb_node(&b, "Conv", "h,w", "y", NULL, 0);
        break;
    }
    case 4:
        *what = "squeeze-excitation with HardSigmoid as Add 3, Clip 0 6, Div 6";
        gb_input(&b, "x", (in_spec)SH(1, 96, 7, 7));
        gb_const(&b, "w1", (in_spec)SH(24, 96, 1, 1));
        gb_const(&b, "b1", (in_spec)SH(24));
        gb_const(&b, "w2", (in_spec)SH(96, 24, 1, 1));
        gb_const(&b, "b2", (in_spec)SH(96));
        gb_node(&b, "GlobalAveragePool", "x", "p", NULL, 0);
        gb_node(&b, "Conv", "p,w1,b1", "s1", NULL, 0);
        gb_node(&b, "Relu", "s1", "r", NULL, 0);
        gb_node(&b, "Conv", "r,w2,b2", "s2", NULL, 0);
        gb_node(&b, "Add", "s2,three", "a", NULL, 0);
        gb_node(&b, "Clip", "a,zero,six", "cl", NULL, 0);
        gb_node(&b, "Div", "cl,six", "g", NULL, 0);
        gb_node(&b, "Mul", "g,x", "y", NULL, 0);
        break;
    case 5:
        *what = "a scalar on either side: Sub(3, x), Mul(6, x), Div(x, 6), Add(3, x), Relu";
        gb_input(&b, "x", (in_spec)SH(2, 16, 9, 9));
        gb_const(&b, "w", (in_spec)SH(16, 16, 3, 3));
        gb_node(&b, "Conv", "x,w", "c", pad1, 1);
        gb_node(&b, "Sub", "three,c", "s", NULL, 0);
        gb_node(&b, "Mul", "six,s", "m", NULL, 0);
        gb_node(&b, "Div", "m,six", "d", NULL, 0);
        gb_node(&b, "Add", "three,d", "a", NULL, 0);
        gb_node(&b, "Relu", "a", "y", NULL, 0);
        break;
    default:
        gb_free(&b);
        return (gb){0};
    }
    gb_output(&b, "y");
    return b;
}

static void test_onednn_no_ref(void **state)
{
    (void)state;
    const backend *b = backend_find("onednn");
    assert_non_null(b);
    show_impls = true;
    for (int i = 0;; i++) {
        const char *what = NULL;
        gb p = mnv3_block(i, &what);
        if (!p.g) break;
        char w[240];
        snprintf(w, sizeof w, "onednn: %s", what);
        compare_all(b, p.g, p.feed, w);
        if (i == 0) { /* and oneDNN took the chain, not the reference ops */
            candidate_cfg cfg = {.backend = "onednn", .threads = 1};
            built *bm = NULL;
            ait_error e = {0};
            assert_int_equal(b->build(b, p.g, &cfg, &bm, &e), AIT_OK);
            assert_true(expect_no_ref(bm, w) >= 2); /* the Conv and the HardSwish */
            b->free(bm);
        }
        gb_free(&p);
    }
    show_impls = false;
}

/* DenseNet's dense layer on oneDNN's blocked variant: the Concat runs on
 * the reference op (a plain output), the BatchNormalization + Relu after it
 * on oneDNN, which ran ncsp_bnorm on the plain input (densenet121's largest
 * cost) and now reorders it to nChw16c first: odd channel counts, batch 1
 * and 2, the blocked and the plain variant (with a reference op reading the
 * Relu's output), against the reference, no ncsp_bnorm among the primitives. */
static void test_onednn_dense_bn(void **state)
{
    (void)state;
    const backend *b = backend_find("onednn");
    static const struct {
        int n, c1, c2, h, w;
    } cs[] = {{1, 16, 16, 9, 7}, {2, 24, 9, 6, 5}, {1, 64, 32, 8, 8}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "dense")};
        assert_non_null(g.g);
        int64_t C = cs[i].c1 + cs[i].c2;
        gb_input(&g, "a", (in_spec)SH(cs[i].n, cs[i].c1, cs[i].h, cs[i].w));
        gb_input(&g, "b", (in_spec)SH(cs[i].n, cs[i].c2, cs[i].h, cs[i].w));
        gb_const(&g, "w", (in_spec)SH(13, C, 1, 1));
        gb_bn_params(&g, "n", C);
        tg_attr ax = {"axis", ATTR_INT, .i = 1};
        gb_node(&g, "Concat", "a,b", "cc", &ax, 1);
        gb_node(&g, "BatchNormalization", "cc,ns,nb,nm,nv", "bn", NULL, 0);
        gb_node(&g, "Relu", "bn", "r", NULL, 0);
        gb_node(&g, "Conv", "r,w", "y", NULL, 0);
        gb_output(&g, "y");
        char w[96];
        snprintf(w, sizeof w, "onednn dense layer %zu", i);
        for (int v = 0; v < 2; v++) { /* blocked, then plain: a reference op after the BN */
            if (v) gb_node(&g, "Concat", "r,a", "z", &ax, 1);
            if (v) gb_output(&g, "z");
            compare_as(b, g.g, g.feed, 1, v ? "" : "blocked", w);
            candidate_cfg cfg = {.backend = "onednn", .threads = 1};
            snprintf(cfg.variant, sizeof cfg.variant, "%s", v ? "" : "blocked");
            built *bm = NULL;
            ait_error e = {0};
            assert_int_equal(b->build(b, g.g, &cfg, &bm, &e), AIT_OK);
            const char *im[64];
            int n = dn_impls(bm, im, 64);
            for (int k = 0; k < n && k < 64; k++)
                if (strstr(im[k], "ncsp_bnorm")) fail_msg("%s (%s): %s", w, cfg.variant, im[k]);
            b->free(bm);
        }
        gb_free(&g);
    }
}

/* Variants: "blocked" is offered for a module with a 2-D Conv of 16 or more
 * input channels (depthwise too), not otherwise; an unknown one is refused.
 * (compare_all runs every offered variant against the reference.) */
static void test_onednn_variants(void **state)
{
    (void)state;
    const backend *b = backend_find("onednn");
    assert_non_null(b->variants);
    const char *v[8];
    tensor *feed[4];
    int nf;
    const tg_attr dw[] = {{"group", ATTR_INT, .i = 32}};
    struct {
        const char *op;
        in_spec in[2];
        const tg_attr *as;
        int n_attr, want;
    } c[] = {
        {"Conv", {SH(1, 16, 5, 5), SHK(8, 16, 1, 1)}, NULL, 0, 1},
        {"Conv", {SH(1, 32, 5, 5), SHK(32, 1, 3, 3)}, dw, 1, 1}, /* depthwise */
        {"Conv", {SH(1, 3, 5, 5), SHK(8, 3, 3, 3)}, NULL, 0, 0},   /* 3 channels: nothing to block */
        {"Conv", {SH(1, 16, 5), SHK(8, 16, 3)}, NULL, 0, 0},      /* 1-D */
        {"MatMul", {SH(2, 16), SH(16, 4)}, NULL, 0, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        graph *g = one_node(c[i].op, c[i].in, 2, c[i].as, c[i].n_attr, feed, &nf);
        int n = b->variants(g, v, 8);
        if (n != c[i].want) fail_msg("case %zu (%s): %d variants, want %d", i, c[i].op, n, c[i].want);
        if (n) assert_string_equal(v[0], "blocked");
        if (i == 0) {
            candidate_cfg cfg = {.backend = "onednn", .threads = 1, .variant = "wide"};
            built *bm = NULL;
            ait_error e = {0};
            assert_int_equal(b->build(b, g, &cfg, &bm, &e), AIT_E_INVALID_ARG);
            assert_null(bm);
            assert_non_null(strstr(e.msg, "unknown variant 'wide'"));
        }
        for (int k = 0; k < nf; k++) test_tensor_free(feed[k]);
        graph_free(g);
    }
}

/* copies[] (room for 8) holds owned, 64-byte-aligned copies of pr's blobs,
 * as an artifact's loader hands them over; blobs_free frees them. */
static void blobs_copy(const prepared *pr, prep_blob *copies)
{
    assert_true(pr->n >= 1 && pr->n <= 8);
    for (int k = 0; k < pr->n; k++) {
        copies[k] = pr->blobs[k];
        void *d = aligned_zalloc(pr->blobs[k].size);
        assert_non_null(d);
        memcpy(d, pr->blobs[k].data, pr->blobs[k].size);
        copies[k].data = d;
    }
}

static void blobs_free(prep_blob *copies, int n)
{
    for (int k = 0; k < n; k++) aligned_free((void *)copies[k].data);
}

/* An artifact saved where another GEMM kernel was the best: native built
 * without a variant takes blobs packed for any other kernel this CPU runs,
 * with that kernel (the same outputs, bit for bit). */
static void test_prepared_other_kernel(void **state)
{
    (void)state;
    const backend *b = backend_find("native");
    int tried = 0;
    for (int i = 0; i < gemm_kernel_count(); i++) {
        const gemm_kernel *k = gemm_kernel_at(i);
        if (!gemm_kernel_available(k) || k == gemm_kernel_best()) continue;
        const char *what;
        gb p = pattern(0, &what);
        candidate_cfg cfg = {.backend = "native", .threads = 1};
        snprintf(cfg.variant, sizeof cfg.variant, "%s", gemm_kernel_name(k));
        built *b1 = NULL, *b2 = NULL;
        ait_error e = {0};
        if (b->build(b, p.g, &cfg, &b1, &e) != AIT_OK) fail_msg("%s: %s", cfg.variant, e.msg);
        prepared pr = {0};
        assert_int_equal(b->save(b1, &pr, &e), AIT_OK);
        prep_blob copies[8];
        blobs_copy(&pr, copies);
        prepared cp = {pr.n, copies};
        candidate_cfg c2 = {.backend = "native", .threads = 1, .prep = &cp};
        if (b->build(b, p.g, &c2, &b2, &e) != AIT_OK)
            fail_msg("%s: blobs packed for %s: %s", what, cfg.variant, e.msg);
        tensor *o1[4], *o2[4];
        assert_int_equal(b->run(b1, p.feed, o1, &e), AIT_OK);
        assert_int_equal(b->run(b2, p.feed, o2, &e), AIT_OK);
        for (int j = 0; j < p.g->n_outputs; j++)
            assert_memory_equal(o1[j]->data, o2[j]->data, tensor_nbytes(o1[j]));
        b->free(b2);
        b->free(b1);
        blobs_free(copies, pr.n);
        gb_free(&p);
        tried++;
    }
    printf("# blobs of %d other kernel%s taken by the default build\n", tried, tried == 1 ? "" : "s");
}

/* Build g on b, save, build again from copies of the blobs: the same
 * outputs; a blob of the wrong size, or missing, is refused with a message
 * (native's says to re-tune: its blobs change with its kernels and fusions). */
static void check_prepared(const backend *b, graph *g, tensor **feed, const char *what)
{
    bool native = !strcmp(b->name, "native");
    candidate_cfg cfg = {.backend = b->name, .threads = 1};
    built *b1 = NULL, *b2 = NULL;
    ait_error e = {0};
    if (b->build(b, g, &cfg, &b1, &e) != AIT_OK) fail_msg("%s: %s", what, e.msg);
    prepared pr = {0};
    assert_int_equal(b->save(b1, &pr, &e), AIT_OK);
    if (pr.n < 1) fail_msg("%s: no prepared weights", what);
    prep_blob copies[8];
    blobs_copy(&pr, copies);
    for (int k = 0; k < pr.n; k++)
        for (int j = 0; j < k; j++) assert_string_not_equal(copies[j].name, copies[k].name);
    prepared cp = {pr.n, copies};
    candidate_cfg cfg2 = {.backend = b->name, .threads = 1, .prep = &cp};
    if (b->build(b, g, &cfg2, &b2, &e) != AIT_OK) fail_msg("%s: from blobs: %s", what, e.msg);
    tensor *o1[4], *o2[4];
    assert_int_equal(b->run(b1, feed, o1, &e), AIT_OK);
    assert_int_equal(b->run(b2, feed, o2, &e), AIT_OK);
    for (int j = 0; j < g->n_outputs; j++)
        assert_memory_equal(o1[j]->data, o2[j]->data, tensor_nbytes(o1[j]));
    b->free(b2);
    /* A blob one float short, then none at all. */
    copies[0].size -= sizeof(float);
    b2 = (built *)&cp; /* must be reset to NULL on failure */
    assert_int_not_equal(b->build(b, g, &cfg2, &b2, &e), AIT_OK);
    assert_null(b2);
    if (!strstr(e.msg, "bytes")) fail_msg("%s: wrong-size blob: '%s'", what, e.msg);
    if (native && !strstr(e.msg, "re-tune")) fail_msg("%s: wrong-size blob: '%s'", what, e.msg);
    printf("# refused: %s\n", e.msg);
    copies[0].size += sizeof(float);
    char keep = copies[0].name[1];
    copies[0].name[1] = 'x'; /* no longer this node's */
    assert_int_not_equal(b->build(b, g, &cfg2, &b2, &e), AIT_OK);
    if (!strstr(e.msg, "missing") || (native && !strstr(e.msg, "re-tune")))
        fail_msg("%s: missing blob: '%s'", what, e.msg);
    copies[0].name[1] = keep;
    blobs_free(copies, pr.n);
    b->free(b1);
}

/* The patterns on oneDNN and native, and native's LSTM (its blob holds the
 * gates' weights in the recurrence kernel's layout). */
static void test_prepared(void **state)
{
    (void)state;
    for (int bi = 0; bi < 2; bi++) {
        const backend *b = backend_find(bi ? "native" : "onednn");
        for (int which = 0; which < 6; which++) {
            const char *what;
            if (bi && which == 3) continue; /* depthwise: native reads its weights as they are (no blob) */
            gb p = pattern(which, &what);
            check_prepared(b, p.g, p.feed, what);
            gb_free(&p);
        }
    }
    static const lstm_spec cs[] = {
        {4, 3, 5, 9, "bidirectional", true, true, true, true, true, false},
        {3, 2, 13, 47, "forward", false, false, true, true, false, false},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "lstm")};
        assert_non_null(g.g);
        lstm_graph(&g, &cs[i]);
        char w[64];
        snprintf(w, sizeof w, "native: LSTM case %zu", i);
        check_prepared(backend_find("native"), g.g, g.feed, w);
        gb_free(&g);
    }
}

/* Per-shape GEMM configs in native (`ait gemm`): a MatMul of M 5 takes the
 * row of M 8 (nearest M, same N, K, layout), gives the same answer, and the
 * table is saved as a blob that a build from the blobs alone uses. */
static char seen_id[96];
static int seen_calls;
static char seen_dtype[16];
static void seen(void *user, const struct gemm_args *g, const char *layout, const char *dtype,
                 const char *cfg)
{
    (void)user;
    (void)g;
    assert_string_equal(layout, "np");
    snprintf(seen_dtype, sizeof seen_dtype, "%s", dtype);
    snprintf(seen_id, sizeof seen_id, "%s", cfg);
    seen_calls++;
}

static void test_native_gemm_db(void **state)
{
    (void)state;
    const backend *b = backend_find("native");
    static const in_spec ins[2] = {SH(5, 33), SHK(33, 17)};
    tensor *feed[2] = {0};
    int n_feed;
    graph *g = one_node("MatMul", ins, 2, NULL, 0, feed, &n_feed);
    gemm_tuned t = {0};
    gemm_tuned_row r = {.m = 8, .n = 17, .k = 33, .layout = "np",
                        .cfg = {.pack_a = GEMM_PACKA_ON, .kc = 16, .order = 1}};
    gemm_config_id(&r.cfg, NULL, r.id, sizeof r.id);
    ait_error e = {0};
    assert_int_equal(gemm_tuned_add(&t, &r, &e), AIT_OK);
    gemm_tuned_row other = {.m = 5, .n = 18, .k = 33, .layout = "np"};
    assert_int_equal(gemm_tuned_add(&t, &other, &e), AIT_OK);
    candidate_cfg c0 = {.backend = "native", .threads = 1, .gemm_seen = seen};
    candidate_cfg c1 = c0;
    c1.gemm = &t;
    built *b0, *b1, *b2;
    assert_int_equal(b->build(b, g, &c0, &b0, &e), AIT_OK);
    assert_int_equal(b->build(b, g, &c1, &b1, &e), AIT_OK);
    tensor *o0[1], *o1[1], *o2[1];
    assert_int_equal(b->run(b0, feed, o0, &e), AIT_OK);
    assert_string_equal(seen_id, ""); /* the default */
    assert_string_equal(seen_dtype, "f32");
    assert_int_equal(b->run(b1, feed, o1, &e), AIT_OK);
    assert_string_equal(seen_id, r.id);
    expect_close(o1[0], o0[0], "native: tuned config against default");
    prepared pr = {0};
    assert_int_equal(b->save(b1, &pr, &e), AIT_OK);
    bool has = false;
    for (int k = 0; k < pr.n; k++) has |= !strcmp(pr.blobs[k].name, "gemm.cfg");
    assert_true(has);
    candidate_cfg c2 = c0; /* no table: only the blobs */
    c2.prep = &pr;
    assert_int_equal(b->build(b, g, &c2, &b2, &e), AIT_OK);
    seen_id[0] = '\0';
    assert_int_equal(b->run(b2, feed, o2, &e), AIT_OK);
    assert_string_equal(seen_id, r.id);
    assert_memory_equal(o1[0]->data, o2[0]->data, tensor_nbytes(o1[0]));
    printf("# native took %s for M 5 (%d GEMM calls seen)\n", seen_id, seen_calls);
    /* a quantised variant's GEMM is said with its dtype (`ait gemm capture`'s rows) */
    static const char *const vs[] = {"int8dq", "int4wo-64", "bf16"};
    for (int v = 0; v < 3; v++) {
        candidate_cfg cq = c0;
        snprintf(cq.variant, sizeof cq.variant, "%s", vs[v]);
        built *bq;
        tensor *oq[1];
        assert_int_equal(b->build(b, g, &cq, &bq, &e), AIT_OK);
        seen_dtype[0] = '\0';
        assert_int_equal(b->run(bq, feed, oq, &e), AIT_OK);
        assert_string_equal(seen_dtype, vs[v]);
        b->free(bq);
    }
    b->free(b2);
    b->free(b1);
    b->free(b0);
    gemm_tuned_free(&t);
    for (int i = 0; i < n_feed; i++) test_tensor_free(feed[i]);
    graph_free(g);
}

/* SQNR in dB of got against want (float32). */
static double sqnr(const tensor *want, const tensor *got)
{
    double sig = 0, noise = 0;
    const float *w = want->data, *g = got->data;
    for (int64_t i = 0; i < tensor_numel(want); i++) {
        sig += (double)w[i] * w[i];
        noise += ((double)w[i] - g[i]) * ((double)w[i] - g[i]);
    }
    return noise == 0 ? INFINITY : 10 * log10(sig / noise);
}

/* native's quantised variants on MatMul + bias + Relu and on Gemm (transB,
 * alpha): offered by quant_variants, never by variants; each builds, runs
 * within its own SQNR bound of the reference at 1 and 2 threads, saves its
 * quantised weights and gives the same outputs when built from copies of
 * them; a float32 blob is refused by a quantised build and the other way
 * round. */
static void test_native_quant(void **state)
{
    (void)state;
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    for (int which = 0; which < 2; which++) {
        gb p = {.g = graph_new(NULL, 17, "quant")};
        gb_input(&p, "x", (in_spec)SH(5, 70));
        if (which == 0) {
            gb_const(&p, "w", (in_spec)SH(70, 37));
            gb_const(&p, "bias", (in_spec)SH(37));
            gb_node(&p, "MatMul", "x,w", "m", NULL, 0);
            gb_node(&p, "Add", "m,bias", "a", NULL, 0);
            gb_node(&p, "Relu", "a", "y", NULL, 0);
        } else {
            tg_attr at[2] = {{.name = "transB", .type = ATTR_INT, .i = 1},
                               {.name = "alpha", .type = ATTR_FLOAT, .f = 0.5f}};
            gb_const(&p, "w", (in_spec)SH(37, 70));
            gb_const(&p, "bias", (in_spec)SH(37));
            gb_node(&p, "Gemm", "x,w,bias", "y", at, 2);
        }
        gb_output(&p, "y");
        const char *qv[16], *fv[16];
        int nq = b->quant_variants(p.g, qv, 16), nf = backend_variants(b, p.g, fv, 16);
        assert_true(nq >= 4);
        for (int k = 0; k < nf; k++)
            for (int j = 0; j < nq; j++) assert_string_not_equal(fv[k], qv[j]);
        candidate_cfg cr = {.backend = "reference", .threads = 1};
        built *br = NULL;
        ait_error e = {0};
        tensor *want[1];
        assert_int_equal(ref->build(ref, p.g, &cr, &br, &e), AIT_OK);
        assert_int_equal(ref->run(br, p.feed, want, &e), AIT_OK);
        for (int v = 0; v < nq; v++) {
            double bound = b->min_sqnr(qv[v]);
            assert_true(bound == (!strcmp(qv[v], "bf16")   ? 35.0
                                  : !strcmp(qv[v], "fp16") ? 45.0
                                                           : 25.0));
            candidate_cfg cfg = {.backend = "native", .threads = 1};
            snprintf(cfg.variant, sizeof cfg.variant, "%s", qv[v]);
            built *b1 = NULL, *b2 = NULL, *bt = NULL;
            if (b->build(b, p.g, &cfg, &b1, &e) != AIT_OK) fail_msg("%s: %s", qv[v], e.msg);
            tensor *o1[1], *o2[1], *ot[1];
            assert_int_equal(b->run(b1, p.feed, o1, &e), AIT_OK);
            double q = sqnr(want[0], o1[0]);
            printf("# %s %s: SQNR %.1f dB (bound %g)\n", which ? "Gemm" : "MatMul", qv[v], q, bound);
            /* int4 on uniform random weights is near its 25 dB bound: a looser check */
            if (q < (strncmp(qv[v], "int4", 4) ? bound : 18))
                fail_msg("%s: SQNR %.1f dB", qv[v], q);
            candidate_cfg c2t = cfg;
            c2t.threads = 2;
            assert_int_equal(b->build(b, p.g, &c2t, &bt, &e), AIT_OK);
            assert_int_equal(b->run(bt, p.feed, ot, &e), AIT_OK);
            assert_memory_equal(o1[0]->data, ot[0]->data, tensor_nbytes(o1[0]));
            b->free(bt);
            prepared pr = {0};
            assert_int_equal(b->save(b1, &pr, &e), AIT_OK);
            assert_int_equal(pr.n, 1);
            prep_blob copy = pr.blobs[0];
            void *d = aligned_zalloc(copy.size);
            memcpy(d, copy.data, copy.size);
            copy.data = d;
            prepared cp = {1, &copy};
            cfg.prep = &cp;
            if (b->build(b, p.g, &cfg, &b2, &e) != AIT_OK) fail_msg("%s: from blob: %s", qv[v], e.msg);
            assert_int_equal(b->run(b2, p.feed, o2, &e), AIT_OK);
            assert_memory_equal(o1[0]->data, o2[0]->data, tensor_nbytes(o1[0]));
            b->free(b2);
            /* the float build refuses this blob */
            candidate_cfg cf = {.backend = "native", .threads = 1, .prep = &cp};
            assert_int_not_equal(b->build(b, p.g, &cf, &b2, &e), AIT_OK);
            assert_null(b2);
            b->free(b1);
            aligned_free(d);
        }
        ref->free(br);
        gb_free(&p);
    }
}

/* A quantised build b1 of g (cfg) that gave o1: a build at 2 threads gives
 * the same bytes, and so does one from a copy of b1's n saved blobs
 * without the calibrated ranges (static int8's scales come back with the
 * weights, each pack's the same). */
static void same_again(gb *g, const candidate_cfg *cfg, built *b1, const tensor *o1, int n)
{
    const backend *b = backend_find("native");
    candidate_cfg c2 = *cfg, cp = *cfg;
    built *b2 = NULL, *bp = NULL;
    tensor *o2[1], *op[1];
    ait_error e = {0};
    c2.threads = 2;
    assert_int_equal(b->build(b, g->g, &c2, &b2, &e), AIT_OK);
    assert_int_equal(b->run(b2, g->feed, o2, &e), AIT_OK);
    assert_memory_equal(o1->data, o2[0]->data, tensor_nbytes(o1));
    b->free(b2);
    prepared pr = {0};
    assert_int_equal(b->save(b1, &pr, &e), AIT_OK);
    assert_int_equal(pr.n, n);
    prep_blob copy[8];
    prepared cps = {n, copy};
    blobs_copy(&pr, copy);
    cp.prep = &cps;
    cp.ranges = NULL;
    if (b->build(b, g->g, &cp, &bp, &e) != AIT_OK) fail_msg("from blobs: %s", e.msg);
    assert_int_equal(b->run(bp, g->feed, op, &e), AIT_OK);
    assert_memory_equal(o1->data, op[0]->data, tensor_nbytes(o1));
    for (int k = 0; k < g->g->n_nodes; k++)
        assert_true(bp->packs[k].qs == b1->packs[k].qs && bp->packs[k].qz == b1->packs[k].qz);
    b->free(bp);
    blobs_free(copy, n);
}

/* The reference's outputs of graph g on its feed (*br keeps them), and
 * the activation ranges calibrated on that feed (*x the executor that ran
 * it): what a static int8 build takes. */
static void ref_calib(gb *g, built **br, tensor **want, exec **x, calib *cal)
{
    const backend *ref = backend_find("reference");
    candidate_cfg cr = {.backend = "reference", .threads = 1};
    ait_error e = {0};
    tensor *xo[4];
    assert_int_equal(g->g->n_outputs <= 4, true);
    assert_int_equal(ref->build(ref, g->g, &cr, br, &e), AIT_OK);
    assert_int_equal(ref->run(*br, g->feed, want, &e), AIT_OK);
    assert_int_equal(exec_create(g->g, NULL, 1, x, &e), AIT_OK);
    exec_keep_values(*x);
    assert_int_equal(exec_run(*x, g->feed, xo, &e), AIT_OK);
    assert_int_equal(calib_init(cal, g->g, 0, &e), AIT_OK);
    assert_int_equal(calib_observe(cal, *x, g->g, &e), AIT_OK);
    calib_finish(cal);
}

/* A bert-like FFN on native's int8dq: MatMul + bias + GELU written out as
 * PyTorch exports it (Div, Erf, Add, Mul, Mul), MatMul + bias + the
 * residual Add of the input. The GELU runs in the first int8dq GEMM's
 * epilogue (two steps, no node on its reference op), within int8's SQNR of
 * the reference at every ISA this CPU has (the VNNI kernel, the AVX2 one)
 * and the portable path, rows of odd count. */
static void test_native_int8dq_gelu(void **state)
{
    (void)state;
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    gb p = {.g = graph_new(NULL, 17, "ffn")};
    gb_input(&p, "x", (in_spec)SH(1, 29, 72));
    gb_const(&p, "w1", (in_spec)SH(72, 136));
    gb_const(&p, "b1", (in_spec)SH(136));
    gb_const(&p, "w2", (in_spec)SH(136, 72));
    gb_const(&p, "b2", (in_spec)SH(72));
    gb_node(&p, "MatMul", "x,w1", "m", NULL, 0);
    gb_node(&p, "Add", "b1,m", "h", NULL, 0);
    gb_gelu_erf(&p, "h", "g");
    gb_node(&p, "MatMul", "g,w2", "m2", NULL, 0);
    gb_node(&p, "Add", "m2,b2", "o", NULL, 0);
    gb_node(&p, "Add", "o,x", "y", NULL, 0);
    gb_output(&p, "y");
    candidate_cfg cr = {.backend = "reference", .threads = 1};
    built *br = NULL;
    ait_error e = {0};
    tensor *want[1];
    assert_int_equal(ref->build(ref, p.g, &cr, &br, &e), AIT_OK);
    assert_int_equal(ref->run(br, p.feed, want, &e), AIT_OK);
    for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
        assert_true(kisa_force((kisa)k));
        candidate_cfg cfg = {.backend = "native", .threads = 1, .variant = "int8dq"};
        built *bm = NULL;
        tensor *got[1];
        if (b->build(b, p.g, &cfg, &bm, &e) != AIT_OK) fail_msg("int8dq build: %s", e.msg);
        assert_int_equal(b->run(bm, p.feed, got, &e), AIT_OK);
        int n = 0;
        for (int s = 0; s < bm->n_steps; s++) n += bm->steps[s].op != NULL;
        if (n != 2 || bm->n_steps != 2)
            fail_msg("int8dq FFN at %s: %d steps, %d on native's ops, want 2 and 2",
                     kisa_name((kisa)k), bm->n_steps, n);
        double q = sqnr(want[0], got[0]);
        printf("# int8dq FFN with GELU at %s (%s): SQNR %.1f dB\n", kisa_name((kisa)k),
               qg_kernel_name(QG_INT8DQ), q);
        if (q < b->min_sqnr("int8dq")) fail_msg("int8dq FFN at %s: SQNR %.1f dB", kisa_name((kisa)k), q);
        b->free(bm);
        kisa_force(KISA_N);
    }
    ref->free(br);
    gb_free(&p);
}

/* The attention in native's int8dq (kernels/attn_q8.h): bert's pattern
 * (K^T made whole, padding mask) and a decoder's (past, grouped kv heads,
 * causal mask) at 16 queries and more, at every ISA: the fused step's
 * geometry says int8, the outputs differ from the float attention's (the
 * pattern has no other quantised node) and stay within the variant's SQNR
 * bound of the reference (30 dB asked here). */
static void test_native_int8dq_attention(void **state)
{
    (void)state;
    static const attn_pat cs[] = {
        /* b, hq, hkv, s, sp, d, dv, past, where, split_scale, bert_kt, mask */
        {2, 4, 4, 40, 0, 24, 24, false, false, false, true, true}, /* bert */
        {1, 4, 2, 33, 5, 16, 13, true, false, false, false, true}, /* past, GQA */
    };
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "attn")};
        attn_pattern(&g, &cs[i]);
        candidate_cfg cr = {.backend = "reference", .threads = 1};
        built *br = NULL;
        ait_error e = {0};
        tensor *want[4], *f32[4];
        assert_true(g.g->n_outputs <= 4);
        assert_int_equal(ref->build(ref, g.g, &cr, &br, &e), AIT_OK);
        assert_int_equal(ref->run(br, g.feed, want, &e), AIT_OK);
        for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
            assert_true(kisa_force((kisa)k));
            candidate_cfg cf = {.backend = "native", .threads = 1};
            candidate_cfg cq = {.backend = "native", .threads = 1, .variant = "int8dq"};
            built *bf = NULL, *bq = NULL;
            tensor *got[4];
            assert_int_equal(b->build(b, g.g, &cf, &bf, &e), AIT_OK);
            assert_int_equal(b->run(bf, g.feed, f32, &e), AIT_OK);
            if (b->build(b, g.g, &cq, &bq, &e) != AIT_OK) fail_msg("int8dq build: %s", e.msg);
            assert_int_equal(b->run(bq, g.feed, got, &e), AIT_OK);
            int n = 0;
            for (int s = 0; s < bq->n_steps; s++)
                n += bq->steps[s].op == &nat_attn_fused && bq->att[bq->steps[s].node].q8;
            if (n != 1) fail_msg("int8dq attention %zu at %s: %d int8 attention steps, want 1", i,
                                 kisa_name((kisa)k), n);
            double q = sqnr(want[0], got[0]), qf = sqnr(want[0], f32[0]);
            printf("# int8dq attention %zu at %s: SQNR %.1f dB (float attention %.1f)\n", i,
                   kisa_name((kisa)k), q, qf);
            if (!memcmp(got[0]->data, f32[0]->data, tensor_nbytes(f32[0])))
                fail_msg("int8dq attention %zu at %s: the float attention's outputs", i, kisa_name((kisa)k));
            if (!(q >= 30 && q >= b->min_sqnr("int8dq")))
                fail_msg("int8dq attention %zu at %s: SQNR %.1f dB", i, kisa_name((kisa)k), q);
            b->free(bq);
            b->free(bf);
            kisa_force(KISA_N);
        }
        ref->free(br);
        gb_free(&g);
    }
}

/* C = A * B on qgemm alone (int8dq, B [K][N] packed here), A m rows of K, epi its epilogue (NULL: none). */
static void qgemm_alone(const tensor *w, const float *a, int64_t m, float *c, const gemm_epi *epi)
{
    const int64_t K = w->dims[0], N = w->dims[1];
    size_t bytes = qg_pack_size(QG_INT8DQ, 0, K, N);
    void *buf = aligned_zalloc(bytes);
    qg_packed v;
    ait_error e = {0};
    assert_non_null(buf);
    qg_pack(QG_INT8DQ, 0, w->data, N, 1, K, N, buf);
    assert_int_equal(qg_view(buf, bytes, &v, &e), AIT_OK);
    assert_int_equal(qgemm(&v, a, K, m, c, N, epi, 1, &e), AIT_OK);
    aligned_free(buf);
}

/* Four int8dq MatMuls, three on x (as a layer's query, key and value
 * projections share their input) and one on y = x * s between them: x's
 * rows are quantised once a run and kept for its other readers (bm->qa),
 * and every output is bit for bit what qgemm gives on its own, at every
 * ISA, on two runs with other values in the same input buffer (a run
 * never reads the rows an earlier one kept). Then run_into: every output written
 * straight into a destination with room (the plan runner then copies
 * nothing at the module's edge), none into one too small. */
static void test_native_int8dq_shared_rows(void **state)
{
    (void)state;
    const backend *b = backend_find("native");
    const int64_t M = 23, K = 40;
    gb p = {.g = graph_new(NULL, 17, "qkv")};
    gb_input(&p, "x", (in_spec)SH(1, M, K));
    const tensor *sc = gb_const(&p, "s", (in_spec)SH(K));
    const tensor *w[4] = {gb_const(&p, "w0", (in_spec)SH(K, 24)), gb_const(&p, "w1", (in_spec)SH(K, 24)),
                          gb_const(&p, "w2", (in_spec)SH(K, 16)), gb_const(&p, "w3", (in_spec)SH(K, 8))};
    gb_node(&p, "Mul", "x,s", "y", NULL, 0);
    gb_node(&p, "MatMul", "x,w0", "o0", NULL, 0);
    gb_node(&p, "MatMul", "y,w1", "o1", NULL, 0);
    gb_node(&p, "MatMul", "x,w2", "o2", NULL, 0);
    gb_node(&p, "MatMul", "x,w3", "o3", NULL, 0);
    for (int j = 0; j < 4; j++) {
        char nm[8];
        snprintf(nm, sizeof nm, "o%d", j);
        gb_output(&p, nm);
    }
    float *x = p.feed[0]->data, *y = malloc(sizeof(float) * (size_t)(M * K)),
          *want = malloc(sizeof(float) * (size_t)(M * 24));
    assert_non_null(y), assert_non_null(want);
    for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
        assert_true(kisa_force((kisa)k));
        candidate_cfg cfg = {.backend = "native", .threads = 1, .variant = "int8dq"};
        built *bm = NULL;
        tensor *got[4];
        ait_error e = {0};
        if (b->build(b, p.g, &cfg, &bm, &e) != AIT_OK) fail_msg("int8dq build: %s", e.msg);
        for (int run = 0; run < 2; run++) {
            for (int64_t i = 0; i < M * K; i++) /* new values in the same buffer */
                x[i] = (float)sin((double)(i * (run + 3) + k)) * (float)(run + 1);
            assert_int_equal(b->run(bm, p.feed, got, &e), AIT_OK);
            assert_true(bm->qa_cap > 0); /* the shared rows were kept */
            for (int64_t i = 0; i < M * K; i++) y[i] = x[i] * ((const float *)sc->data)[i % K];
            for (int j = 0; j < 4; j++) {
                qgemm_alone(w[j], j == 1 ? y : x, M, want, NULL);
                if (memcmp(want, got[j]->data, sizeof(float) * (size_t)(M * w[j]->dims[1])) != 0)
                    fail_msg("int8dq shared rows at %s, run %d: output %d differs from qgemm's",
                             kisa_name((kisa)k), run, j);
            }
        }
        tensor *dest[4], *into[4], *keep[4]; /* the last run's outputs, copied */
        for (int j = 0; j < 4; j++) {
            assert_int_equal(tensor_clone(got[j], &keep[j], &e), AIT_OK);
            got[j] = keep[j];
            dest[j] = test_rand_tensor(2, (int64_t[]){M, w[j]->dims[1]});
        }
        assert_int_equal(b->run_into(bm, p.feed, dest, into, &e), AIT_OK);
        for (int j = 0; j < 4; j++) {
            assert_ptr_equal(into[j], dest[j]);
            assert_int_equal(into[j]->rank, 3);
            assert_memory_equal(into[j]->data, got[j]->data, tensor_nbytes(got[j]));
            test_tensor_free(dest[j]);
            dest[j] = test_rand_tensor(1, (int64_t[]){M});
        }
        assert_int_equal(b->run_into(bm, p.feed, dest, into, &e), AIT_OK);
        for (int j = 0; j < 4; j++) {
            assert_true(into[j] != dest[j] && into[j]->rank == 3);
            assert_memory_equal(into[j]->data, got[j]->data, tensor_nbytes(got[j]));
            test_tensor_free(dest[j]);
            test_tensor_free(keep[j]);
        }
        b->free(bm);
        kisa_force(KISA_N);
    }
    free(y), free(want);
    gb_free(&p);
}

/* bert's FFN on int8dq: MatMul + bias + GELU (written out), then a MatMul
 * reading the GELU's output alone: the first GEMM's epilogue finds each
 * output row's range (bm->qr) and the second quantises its rows at them
 * without a pass of its own; its output bit for bit qgemm's two calls
 * (bias + GELU, then plain) at every ISA, on two runs with other values. */
static void test_native_int8dq_row_ranges(void **state)
{
    (void)state;
    const backend *b = backend_find("native");
    const int64_t M = 19, K = 48, H = 136, N = 40;
    gb p = {.g = graph_new(NULL, 17, "ffn")};
    gb_input(&p, "x", (in_spec)SH(1, M, K));
    const tensor *w1 = gb_const(&p, "w1", (in_spec)SH(K, H)), *b1 = gb_const(&p, "b1", (in_spec)SH(H)),
                 *w2 = gb_const(&p, "w2", (in_spec)SH(H, N));
    gb_node(&p, "MatMul", "x,w1", "m", NULL, 0);
    gb_node(&p, "Add", "b1,m", "h", NULL, 0);
    gb_gelu_erf(&p, "h", "g");
    gb_node(&p, "MatMul", "g,w2", "y", NULL, 0);
    gb_output(&p, "y");
    float *x = p.feed[0]->data, *h = malloc(sizeof(float) * (size_t)(M * H)),
          *want = malloc(sizeof(float) * (size_t)(M * N));
    assert_non_null(h), assert_non_null(want);
    gemm_epi e1 = {.bias_mode = GEMM_BIAS_COL, .bias = b1->data, .act = GEMM_ACT_GELU};
    for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
        assert_true(kisa_force((kisa)k));
        candidate_cfg cfg = {.backend = "native", .threads = 1, .variant = "int8dq"};
        built *bm = NULL;
        tensor *got[1];
        ait_error e = {0};
        if (b->build(b, p.g, &cfg, &bm, &e) != AIT_OK) fail_msg("int8dq build: %s", e.msg);
        for (int run = 0; run < 2; run++) {
            for (int64_t i = 0; i < M * K; i++)
                x[i] = (float)sin((double)(i * (run + 5) + k)) * (float)(2 * run + 1);
            x[3] = run ? NAN : x[3]; /* a NaN row: skipped by the range, as the pass skips it */
            assert_int_equal(b->run(bm, p.feed, got, &e), AIT_OK);
            assert_true(bm->qr_cap >= (size_t)(2 * M * GEMM_RANGE_LANES)); /* the ranges were found */
            qgemm_alone(w1, x, M, h, &e1);
            qgemm_alone(w2, h, M, want, NULL);
            if (memcmp(want, got[0]->data, sizeof(float) * (size_t)(M * N)) != 0)
                fail_msg("int8dq FFN with row ranges at %s, run %d: differs from qgemm's",
                         kisa_name((kisa)k), run);
        }
        b->free(bm);
        kisa_force(KISA_N);
    }
    free(h), free(want);
    gb_free(&p);
}

/* native's int8dq and int8 (static) Convs (backends/native/qconv.c) on
 * odd shapes: a k x k Conv (stride, pads, bias, channels not a multiple of
 * 16) + Relu, then a 1x1 Conv + residual Add + Relu, then a 1x1 stride 2
 * Conv (im2col) + BN; at every ISA this CPU has and the portable path:
 * each Conv's weights are quantised (its pack is qgemm's), the outputs
 * within the int8 SQNR bound of the reference, the same at 2 threads and
 * when built from a copy of the saved blobs. int8 takes its input scales
 * from ranges calibrated on the input (tune/calib.h): refused without
 * them, each Conv's scale and zero point QuantizeLinear's of its input's
 * range, r1 and r2 kept uint8 between the Convs (the chain within the
 * bound), and reloaded from the blobs bit for bit without the ranges. The
 * variants are offered for a module of Convs, not for one of depthwise
 * Convs (which stay float32). */
static void test_native_qconv(void **state)
{
    (void)state;
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    static const struct {
        int n, c, h, w, m, k, s;
    } cs[] = {
        {1, 3, 9, 11, 17, 3, 1}, {3, 5, 10, 10, 19, 3, 2}, {1, 20, 7, 7, 33, 1, 1},
        {2, 16, 8, 9, 24, 5, 1}, {1, 40, 6, 6, 48, 1, 2},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "qconv")};
        assert_non_null(g.g);
        int64_t M = cs[i].m, pad = cs[i].k / 2;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, cs[i].c, cs[i].h, cs[i].w));
        gb_const(&g, "w1", (in_spec)SH(M, cs[i].c, cs[i].k, cs[i].k));
        gb_const(&g, "b1", (in_spec)SH(M));
        gb_const(&g, "w2", (in_spec)SH(M, M, 1, 1));
        gb_const(&g, "w3", (in_spec)SH(13, M, 1, 1));
        gb_bn_params(&g, "n3", 13);
        tg_attr a1[2] = {{"pads", ATTR_INTS, .n = 4, .ints = {pad, pad, pad, pad}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}}};
        tg_attr a3 = {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}};
        gb_node(&g, "Conv", "x,w1,b1", "c1", a1, 2);
        gb_node(&g, "Relu", "c1", "r1", NULL, 0);
        gb_node(&g, "Conv", "r1,w2", "c2", NULL, 0);
        gb_node(&g, "Add", "c2,r1", "a2", NULL, 0);
        gb_node(&g, "Relu", "a2", "r2", NULL, 0);
        gb_node(&g, "Conv", "r2,w3", "c3", &a3, 1);
        gb_node(&g, "BatchNormalization", "c3,n3s,n3b,n3m,n3v", "y", NULL, 0);
        gb_output(&g, "y");
        const char *qv[16];
        assert_int_equal(b->quant_variants(g.g, qv, 16), 2);
        assert_string_equal(qv[0], "int8dq");
        assert_string_equal(qv[1], "int8");
        built *br = NULL;
        ait_error e = {0};
        tensor *want[1];
        exec *x = NULL;
        calib cal; /* int8's: the Convs' inputs x, r1, r2 over this input */
        ref_calib(&g, &br, want, &x, &cal);
        assert_int_equal(cal.out.n, 3);
        for (int k = KISA_PORTABLE; k <= (int)kisa_cpu() * 2 + 1; k++) {
            bool st = k % 2; /* int8dq, then int8, at each ISA */
            assert_true(kisa_force((kisa)(k / 2)));
            candidate_cfg cfg = {.backend = "native", .threads = 1, .variant = "int8dq"};
            if (st) {
                snprintf(cfg.variant, sizeof cfg.variant, "int8");
                built *none = NULL;
                assert_int_equal(b->build(b, g.g, &cfg, &none, &e), AIT_E_INVALID_ARG);
                assert_non_null(strstr(e.msg, "no calibrated range for input 'x'"));
                cfg.ranges = &cal.out;
            }
            built *b1 = NULL;
            tensor *o1[1];
            if (b->build(b, g.g, &cfg, &b1, &e) != AIT_OK) fail_msg("case %zu: %s", i, e.msg);
            assert_int_equal(b->run(b1, g.feed, o1, &e), AIT_OK);
            int convs = 0;
            for (int n = 0; n < g.g->n_nodes; n++)
                if (!strcmp(g.g->nodes[n].op, "Conv")) {
                    convs++;
                    if (!b1->packs[n].qv.w) fail_msg("case %zu: Conv %d not quantised", i, n);
                    const act_range *r = act_range_find(&cal.out, g.g->vals[g.g->nodes[n].in[0]].name);
                    float s = 0;
                    int32_t z = 0;
                    if (st) qg_u8_range(fminf(r->lo, 0), fmaxf(r->hi, 0), &s, &z);
                    assert_true(b1->packs[n].qs == s && b1->packs[n].qz == z);
                }
            assert_int_equal(convs, 3);
            /* int8 keeps r1 (c2's input and residual) and r2 (c3's input) uint8 */
            int q8 = 0;
            for (int v = 0; v < g.g->n_vals; v++)
                if (b1->vals[v].q8) {
                    q8++;
                    assert_true(!strcmp(g.g->vals[v].name, "r1") || !strcmp(g.g->vals[v].name, "r2"));
                }
            assert_int_equal(q8, st ? 2 : 0);
            double q = sqnr(want[0], o1[0]);
            printf("# qconv %zu (%s, %s, %s): SQNR %.1f dB\n", i, cfg.variant,
                   kisa_name((kisa)(k / 2)), qg_kernel_name(QG_INT8DQ), q);
            if (!(q >= b->min_sqnr(cfg.variant)) || q == INFINITY)
                fail_msg("case %zu (%s, %s): SQNR %.1f dB", i, cfg.variant, kisa_name((kisa)(k / 2)), q);
            same_again(&g, &cfg, b1, o1[0], 3);
            b->free(b1);
            kisa_force(KISA_N);
        }
        calib_free(&cal);
        exec_free(x);
        ref->free(br);
        gb_free(&g);
    }
    /* depthwise only: nothing to quantise */
    gb d = {.g = graph_new(NULL, 17, "dw")};
    tg_attr dw = {"group", ATTR_INT, .i = 8};
    gb_input(&d, "x", (in_spec)SH(1, 8, 5, 5));
    gb_const(&d, "w", (in_spec)SH(8, 1, 3, 3));
    gb_node(&d, "Conv", "x,w", "y", &dw, 1);
    gb_output(&d, "y");
    const char *qv[16];
    assert_int_equal(b->quant_variants(d.g, qv, 16), 0);
    gb_free(&d);
}

/* Static int8 through a depthwise Conv, mobilenetv2's inverted residual
 * on odd sizes: x -> 1x1 Conv + Relu (e) -> 3x3 depthwise Conv (stride,
 * pads, bias) + Relu (d) -> 1x1 Conv (+ x when stride 1) -> y, at every
 * ISA and the portable path: e and d kept uint8, the depthwise Conv on
 * int8 weights (its pack with its calibrated input scale), y within the
 * int8 SQNR bound of the reference, the same at 2 threads and from a
 * copy of the saved blobs without the ranges. */
static void test_native_qdw(void **state)
{
    (void)state;
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    static const struct {
        int n, c, h, w, e, s;
    } cs[] = {{1, 5, 9, 11, 35, 1}, {2, 16, 8, 7, 48, 2}, {1, 24, 6, 6, 144, 1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = {.g = graph_new(NULL, 17, "qdw")};
        assert_non_null(g.g);
        int64_t E = cs[i].e, C = cs[i].c;
        gb_input(&g, "x", (in_spec)SH(cs[i].n, C, cs[i].h, cs[i].w));
        gb_const(&g, "w1", (in_spec)SH(E, C, 1, 1));
        gb_const(&g, "wd", (in_spec)SH(E, 1, 3, 3));
        gb_const(&g, "bd", (in_spec)SH(E));
        gb_const(&g, "w2", (in_spec)SH(C, E, 1, 1));
        tg_attr ad[3] = {{"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}},
                           {"strides", ATTR_INTS, .n = 2, .ints = {cs[i].s, cs[i].s}},
                           {"group", ATTR_INT, .i = E}};
        gb_node(&g, "Conv", "x,w1", "c1", NULL, 0);
        gb_node(&g, "Relu", "c1", "e", NULL, 0);
        gb_node(&g, "Conv", "e,wd,bd", "cd", ad, 3);
        gb_node(&g, "Relu", "cd", "d", NULL, 0);
        if (cs[i].s == 1) {
            gb_node(&g, "Conv", "d,w2", "c2", NULL, 0);
            gb_node(&g, "Add", "c2,x", "y", NULL, 0);
        } else {
            gb_node(&g, "Conv", "d,w2", "y", NULL, 0);
        }
        gb_output(&g, "y");
        built *br = NULL;
        ait_error e = {0};
        tensor *want[1];
        exec *x = NULL;
        calib cal;
        ref_calib(&g, &br, want, &x, &cal);
        for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
            assert_true(kisa_force((kisa)k));
            candidate_cfg cfg = {.backend = "native", .threads = 1, .variant = "int8", .ranges = &cal.out};
            built *b1 = NULL;
            tensor *o1[1];
            if (b->build(b, g.g, &cfg, &b1, &e) != AIT_OK) fail_msg("case %zu: %s", i, e.msg);
            assert_int_equal(b->run(b1, g.feed, o1, &e), AIT_OK);
            int dwn = 2, q8 = 0;
            assert_string_equal(g.g->nodes[dwn].op, "Conv");
            assert_non_null(b1->packs[dwn].data);
            const act_range *r = act_range_find(&cal.out, "e");
            float s = 0;
            int32_t z = 0;
            qg_u8_range(fminf(r->lo, 0), fmaxf(r->hi, 0), &s, &z);
            assert_true(b1->packs[dwn].qs == s && b1->packs[dwn].qz == z);
            for (int v = 0; v < g.g->n_vals; v++)
                if (b1->vals[v].q8) {
                    q8++;
                    assert_true(!strcmp(g.g->vals[v].name, "e") || !strcmp(g.g->vals[v].name, "d"));
                }
            assert_int_equal(q8, 2);
            double q = sqnr(want[0], o1[0]);
            printf("# qdw %zu (%s): SQNR %.1f dB\n", i, kisa_name((kisa)k), q);
            if (!(q >= b->min_sqnr("int8")) || q == INFINITY)
                fail_msg("case %zu (%s): SQNR %.1f dB", i, kisa_name((kisa)k), q);
            same_again(&g, &cfg, b1, o1[0], 3);
            b->free(b1);
            kisa_force(KISA_N);
        }
        calib_free(&cal);
        exec_free(x);
        ref->free(br);
        gb_free(&g);
    }
}

/* ResNet's stem on odd sizes: x -> 3x3 Conv + Relu (r) -> MaxPool 3x3
 * stride 2 pad 1 (p) -> 3x3 Conv (pads 1) + p + Relu -> y; with prev, p an
 * output too (so kept float: static int8's path before the uint8 MaxPool),
 * its weights copied from `from` when given, and its input: image `img` of
 * from's. */
static gb qpool_graph(int n, int c, int h, int w, int64_t M, bool prev, const gb *from, int img)
{
    gb g = {.g = graph_new(NULL, 17, "qpool")};
    assert_non_null(g.g);
    gb_input(&g, "x", (in_spec)SH(n, c, h, w));
    gb_const(&g, "w1", (in_spec)SH(M, c, 3, 3));
    gb_const(&g, "b1", (in_spec)SH(M));
    gb_const(&g, "w2", (in_spec)SH(M, M, 3, 3));
    tg_attr a1 = {"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}};
    tg_attr ap[3] = {{"kernel_shape", ATTR_INTS, .n = 2, .ints = {3, 3}},
                       {"strides", ATTR_INTS, .n = 2, .ints = {2, 2}},
                       {"pads", ATTR_INTS, .n = 4, .ints = {1, 1, 1, 1}}};
    gb_node(&g, "Conv", "x,w1,b1", "c1", &a1, 1);
    gb_node(&g, "Relu", "c1", "r", NULL, 0);
    gb_node(&g, "MaxPool", "r", "p", ap, 3);
    gb_node(&g, "Conv", "p,w2", "c2", &a1, 1);
    gb_node(&g, "Add", "c2,p", "a2", NULL, 0);
    gb_node(&g, "Relu", "a2", "y", NULL, 0);
    gb_output(&g, "y");
    if (prev) gb_output(&g, "p");
    for (int v = 0; from && v < g.g->n_vals; v++) {
        const tensor *t = g.g->vals[v].konst, *f = from->g->vals[v].konst;
        if (t) memcpy(t->data, f->data, (size_t)tensor_numel(t) * sizeof(float));
    }
    if (from)
        memcpy(g.feed[0]->data, (const float *)from->feed[0]->data + img * tensor_numel(g.feed[0]),
               (size_t)tensor_numel(g.feed[0]) * sizeof(float));
    return g;
}

/* Static int8 through ResNet's stem (qpool_graph), at every ISA and the
 * portable path: r and p kept uint8 (the MaxPool on the bytes, at the
 * scale of the Conv after it), each stored at 1 byte per element in the
 * arena; y within the int8 SQNR bound of the reference and of the
 * previous path's (p a module output: r and p float), the same at 2
 * threads and from a copy of the saved blobs; at batch 2, each image's
 * bytes those of a batch of that image alone at the same scales (no row
 * of a static int8 run may depend on another image's: blocks of rows, the
 * padded images, the uint8 residual). */
static void test_native_qpool(void **state)
{
    (void)state;
    const backend *b = backend_find("native"), *ref = backend_find("reference");
    static const struct {
        int n, c, h, w, m;
    } cs[] = {{1, 3, 13, 11, 17}, {2, 5, 9, 10, 19}, {2, 3, 24, 22, 300}}; /* the last: */
    /* 300 channels, so each Conv's uint8 output and residual go in blocks of rows (conv.c) */
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gb g = qpool_graph(cs[i].n, cs[i].c, cs[i].h, cs[i].w, cs[i].m, false, NULL, 0);
        gb g0 = qpool_graph(cs[i].n, cs[i].c, cs[i].h, cs[i].w, cs[i].m, true, &g, 0);
        built *br = NULL, *br0 = NULL;
        ait_error e = {0};
        tensor *want[1], *want0[2];
        exec *x = NULL, *x0 = NULL;
        calib cal, cal0;
        ref_calib(&g, &br, want, &x, &cal);
        ref_calib(&g0, &br0, want0, &x0, &cal0);
        for (int k = KISA_PORTABLE; k <= (int)kisa_cpu(); k++) {
            assert_true(kisa_force((kisa)k));
            candidate_cfg cfg = {.backend = "native", .threads = 1, .variant = "int8", .ranges = &cal.out};
            candidate_cfg cfg0 = cfg;
            cfg0.ranges = &cal0.out;
            built *b1 = NULL, *b0 = NULL;
            tensor *o1[1], *o0[2];
            if (b->build(b, g.g, &cfg, &b1, &e) != AIT_OK) fail_msg("case %zu: %s", i, e.msg);
            if (b->build(b, g0.g, &cfg0, &b0, &e) != AIT_OK) fail_msg("case %zu: %s", i, e.msg);
            assert_int_equal(b->run(b1, g.feed, o1, &e), AIT_OK);
            assert_int_equal(b->run(b0, g0.feed, o0, &e), AIT_OK);
            int q8 = 0;
            for (int v = 0; v < g.g->n_vals; v++) {
                assert_false(b0->vals[v].q8); /* p an output: r read by a float pool */
                if (!b1->vals[v].q8) continue;
                q8++;
                const char *nm = g.g->vals[v].name;
                assert_true(!strcmp(nm, "r") || !strcmp(nm, "p"));
                assert_true(b1->vals[v].placed);
                size_t ne = (size_t)tensor_numel(&b1->vals[v].t);
                assert_int_equal(b1->vals[v].t.room, (ne + 63) & ~(size_t)63); /* a byte each */
            }
            assert_int_equal(q8, 2);
            double q = sqnr(want[0], o1[0]), q0 = sqnr(o0[0], o1[0]);
            printf("# qpool %zu (%s): SQNR %.1f dB, against the float pool's %.1f dB\n", i,
                   kisa_name((kisa)k), q, q0);
            if (!(q >= b->min_sqnr("int8")) || q == INFINITY || !(q0 >= b->min_sqnr("int8")))
                fail_msg("case %zu (%s): SQNR %.1f dB, %.1f against the float pool's", i,
                         kisa_name((kisa)k), q, q0);
            same_again(&g, &cfg, b1, o1[0], 2);
            for (int im = 0; cs[i].n > 1 && im < cs[i].n; im++) { /* each image alone */
                gb g1 = qpool_graph(1, cs[i].c, cs[i].h, cs[i].w, cs[i].m, false, &g, im);
                built *bi = NULL;
                tensor *oi[1];
                if (b->build(b, g1.g, &cfg, &bi, &e) != AIT_OK) fail_msg("case %zu: %s", i, e.msg);
                assert_int_equal(b->run(bi, g1.feed, oi, &e), AIT_OK);
                const size_t bytes = tensor_nbytes(oi[0]);
                if (memcmp((const char *)o1[0]->data + im * bytes, oi[0]->data, bytes))
                    fail_msg("case %zu (%s): image %d of the batch differs from its run alone", i,
                             kisa_name((kisa)k), im);
                b->free(bi);
                gb_free(&g1);
            }
            b->free(b1);
            b->free(b0);
            kisa_force(KISA_N);
        }
        calib_free(&cal);
        calib_free(&cal0);
        exec_free(x);
        exec_free(x0);
        ref->free(br);
        ref->free(br0);
        gb_free(&g);
        gb_free(&g0);
    }
}

/* Two builds with different thread counts, run one after the other and
 * interleaved, give the reference's answer each time. */
static void test_onednn_threads(void **state)
{
    (void)state;
    for (int bi = 0; bi < 2; bi++) {
    const backend *b = backend_find(bi ? "native" : "onednn");
    const char *what;
    gb p = pattern(2, &what);
    candidate_cfg c1 = {.backend = b->name, .threads = 1}, c2 = {.backend = b->name, .threads = 2};
    built *b1 = NULL, *b2 = NULL;
    ait_error e = {0};
    assert_int_equal(b->build(b, p.g, &c1, &b1, &e), AIT_OK);
    assert_int_equal(b->build(b, p.g, &c2, &b2, &e), AIT_OK);
    tensor *o1[2], *o2[2];
    for (int r = 0; r < 3; r++) {
        assert_int_equal(b->run(b1, p.feed, o1, &e), AIT_OK);
        assert_int_equal(b->run(b2, p.feed, o2, &e), AIT_OK);
        expect_close(o1[0], o2[0], bi ? "native threads 1 vs 2" : "onednn threads 1 vs 2");
    }
    b->free(b1);
    b->free(b2);
    b->free(NULL);
    gb_free(&p);
    }
}

/* A dynamic batch: scheduled at the first run, a schedule per shape kept, runs
 * alternating between shapes match the reference; what save() gives covers
 * both shapes, and a build from it runs both. */
static void test_onednn_shapes(void **state)
{
    (void)state;
    const backend *ref = backend_find("reference");
    for (int bi = 0; bi < 2; bi++) {
    const backend *b = backend_find(bi ? "native" : "onednn");
    for (int which = 0; which < 9; which += 4) { /* a Conv and a MatMul pattern */
        const char *what;
        gb p = pattern(which, &what);
        int x = p.g->inputs[0];
        p.g->vals[x].dims[0] = DIM_UNKNOWN;
        tensor *feeds[2][8];
        for (int k = 0; k < 2; k++) {
            int64_t d[AIT_MAX_RANK];
            memcpy(d, p.g->vals[x].dims, sizeof d);
            d[0] = k ? 4 : 1;
            feeds[k][0] = test_rand_tensor(p.g->vals[x].rank, d);
            for (int i = 1; i < p.n_feed; i++) feeds[k][i] = p.feed[i];
        }
        candidate_cfg cfg = {.backend = b->name, .threads = 1}, cr = {.backend = "reference"};
        built *bb = NULL, *br = NULL, *b2 = NULL;
        ait_error e = {0};
        assert_int_equal(b->build(b, p.g, &cfg, &bb, &e), AIT_OK);
        assert_int_equal(ref->build(ref, p.g, &cr, &br, &e), AIT_OK);
        prepared pr = {0};
        assert_int_equal(b->save(bb, &pr, &e), AIT_OK);
        assert_int_equal(pr.n, 0); /* nothing scheduled yet */
        for (int r = 0; r < 5; r++) {
            tensor *got[4], *want[4];
            if (b->run(bb, feeds[r % 2], got, &e) != AIT_OK) fail_msg("%s: %s", what, e.msg);
            assert_int_equal(ref->run(br, feeds[r % 2], want, &e), AIT_OK);
            char w[160];
            snprintf(w, sizeof w, "%s: %s, batch %lld, run %d", b->name, what,
                     (long long)feeds[r % 2][0]->dims[0], r);
            expect_close(got[0], want[0], w);
        }
        assert_int_equal(b->save(bb, &pr, &e), AIT_OK);
        assert_true(pr.n >= 1);
        prepared cp = pr; /* used in place: bb outlives b2 */
        candidate_cfg c2 = {.backend = b->name, .threads = 1, .prep = &cp};
        assert_int_equal(b->build(b, p.g, &c2, &b2, &e), AIT_OK);
        for (int k = 0; k < 2; k++) {
            tensor *o1[4], *o2[4];
            assert_int_equal(b->run(bb, feeds[k], o1, &e), AIT_OK);
            if (b->run(b2, feeds[k], o2, &e) != AIT_OK) fail_msg("%s: from blobs: %s", what, e.msg);
            assert_memory_equal(o1[0]->data, o2[0]->data, tensor_nbytes(o1[0]));
        }
        b->free(b2);
        /* More shapes than schedules kept: the oldest go, answers stay right, and
         * what save() gives is still readable. */
        for (int n = 1; n <= 11; n++) {
            int64_t d[AIT_MAX_RANK];
            memcpy(d, p.g->vals[x].dims, sizeof d);
            d[0] = n;
            tensor *f[8], *got[4], *want[4];
            f[0] = test_rand_tensor(p.g->vals[x].rank, d);
            for (int i = 1; i < p.n_feed; i++) f[i] = p.feed[i];
            assert_int_equal(b->run(bb, f, got, &e), AIT_OK);
            assert_int_equal(ref->run(br, f, want, &e), AIT_OK);
            expect_close(got[0], want[0], bi ? "native: many shapes" : "onednn: many shapes");
            test_tensor_free(f[0]);
        }
        assert_int_equal(b->save(bb, &pr, &e), AIT_OK);
        double sum = 0; /* (native's blobs start with a header, then floats) */
        for (int k = 0; k < pr.n; k++)
            for (size_t j = bi ? 16 : 0; j < pr.blobs[k].size / sizeof(float); j++)
                sum += ((const float *)pr.blobs[k].data)[j];
        assert_true(isfinite(sum));
        b->free(bb);
        ref->free(br);
        for (int k = 0; k < 2; k++) test_tensor_free(feeds[k][0]);
        gb_free(&p);
    }
    }
}

static void test_registry(void **state)
{
    (void)state;
    assert_null(backend_find("no-such-backend"));
    assert_null(backend_find(NULL));
    assert_null(backend_at(-1));
    assert_null(backend_at(backend_count()));
    assert_non_null(backend_find("reference"));
    assert_non_null(backend_find("openblas"));
    for (int i = 0; i < backend_count(); i++) {
        const backend *b = backend_at(i);
        assert_ptr_equal(backend_find(b->name), b);
        assert_true(b->build && b->run && b->free && b->summary);
    }
    /* Coverage on one-node graphs: openblas takes float32 MatMul, not Relu. */
    in_spec mm[2] = {SH(2, 3), SH(3, 4)}, relu[1] = {SH(2, 3)};
    tensor *feed[4];
    int nf;
    graph *g = one_node("MatMul", mm, 2, NULL, 0, feed, &nf);
    assert_int_equal(backend_coverage(backend_find("openblas"), g), 1);
    assert_int_equal(backend_coverage(backend_find("reference"), g), 1);
    g->vals[g->nodes[0].in[0]].dtype = AIT_F64; /* declared float64: left to the reference */
    assert_int_equal(backend_coverage(backend_find("openblas"), g), 0);
    for (int i = 0; i < nf; i++) test_tensor_free(feed[i]);
    graph_free(g);
    g = one_node("Relu", relu, 1, NULL, 0, feed, &nf);
    assert_int_equal(backend_coverage(backend_find("openblas"), g), 0);
    for (int i = 0; i < nf; i++) test_tensor_free(feed[i]);
    graph_free(g);
    backend_exec_free(NULL);
}

/* The reference's A * B^T kernel (Gemm transB at small M) sums each element
 * exactly as its single dot product does, whatever N and K leave over after
 * its blocks of four rows and eight columns. */
static void test_reference_nt_kernel(void **state)
{
    (void)state;
    enum { M = 3, N = 11, K = 29 };
    float a[M * K], b[N * K], c[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 37) % 17) / 7.0f - 1.1f;
    for (int i = 0; i < N * K; i++) b[i] = (float)((i * 53) % 23) / 9.0f - 1.3f;
    for (int n = 1; n <= N; n += 3)
        for (int k = 1; k <= K; k += 7) {
            memset(c, 0, sizeof c);
            mm_kernel_f32_nt(M, n, k, a, K, b, K, c, n);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < n; j++) {
                    float want = mm_kernel_f32_dot(k, a + i * K, 1, b + j * K, 1);
                    assert_memory_equal(&c[i * n + j], &want, sizeof want);
                }
        }
}

int main(void)
{
    data = getenv("AIT_TEST_DATA");
    if (!data) {
        fprintf(stderr, "set AIT_TEST_DATA to the folder tools/test fills (models/)\n");
        return 2;
    }
    /* AIT_TEST_FILTER=test_native_* runs only the tests it matches (the whole
     * file takes long under a sanitizer) */
    if (getenv("AIT_TEST_FILTER")) cmocka_set_test_filter(getenv("AIT_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_reference_nt_kernel),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_modules),
        cmocka_unit_test(test_fusion),
        cmocka_unit_test(test_native_nhwc),
        cmocka_unit_test(test_native_wino),
        cmocka_unit_test(test_native_wino_large),
        cmocka_unit_test(test_native_res_in_place),
        cmocka_unit_test(test_native_irb),
        cmocka_unit_test(test_native_pre),
        cmocka_unit_test(test_native_concat),
        cmocka_unit_test(test_native_shuffle),
        cmocka_unit_test(test_native_attention),
        cmocka_unit_test(test_native_int8dq_attention),
        cmocka_unit_test(test_native_attention_kv),
        cmocka_unit_test(test_native_bn),
        cmocka_unit_test(test_native_dense),
        cmocka_unit_test(test_native_avg_first),
        cmocka_unit_test(test_native_convt_bn),
        cmocka_unit_test(test_native_fpn),
        cmocka_unit_test(test_native_silu),
        cmocka_unit_test(test_native_norm_fused),
        cmocka_unit_test(test_native_se),
        cmocka_unit_test(test_native_prologue),
        cmocka_unit_test(test_onednn_dense_bn),
        cmocka_unit_test(test_onednn_no_ref),
        cmocka_unit_test(test_onednn_variants),
        cmocka_unit_test(test_prepared),
        cmocka_unit_test(test_prepared_other_kernel),
        cmocka_unit_test(test_native_gemm_db),
        cmocka_unit_test(test_native_quant),
        cmocka_unit_test(test_native_int8dq_gelu),
        cmocka_unit_test(test_native_int8dq_shared_rows),
        cmocka_unit_test(test_native_int8dq_row_ranges),
        cmocka_unit_test(test_native_qconv),
        cmocka_unit_test(test_native_qdw),
        cmocka_unit_test(test_native_qpool),
        cmocka_unit_test(test_onednn_threads),
        cmocka_unit_test(test_onednn_shapes),
        cmocka_unit_test(test_native_stem),
        cmocka_unit_test(test_native_stem_pool),
        cmocka_unit_test(test_native_dw_bands),
    };
    if (getenv("AIT_TEST_ONLY")) /* one test (a pattern), e.g. under a sanitizer */
        cmocka_set_test_filter(getenv("AIT_TEST_ONLY"));
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    printf("# worst NMSE %.3g (%s)\n", worst, worst_what);
    return r;
}
