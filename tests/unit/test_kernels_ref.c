/* The native backend's kernels (src/kernels/) against ait's reference ops
 * (the oracle) on the same data, where an ONNX op exists: ONNX's corner
 * semantics (Resize's coordinate and nearest modes, AveragePool's divisor
 * with ceil_mode, ConvTranspose's output_padding, grouped Conv) checked on
 * one-node graphs, at every ISA this CPU has, 1 and 2 threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "backends/backend.h"
#include "graph/graph.h"
#include "ops/op.h"
#include "kernels/convt.h"
#include "kernels/dwconv.h"
#include "kernels/norm.h"
#include "kernels/pool.h"
#include "kernels/resize.h"
#include "kernels_check.h"

/* ---- one node on the reference backend ---------------------------------- */

typedef struct one {
    graph *g;
    node *n;
    tensor *x; /* the graph input (float32) */
} one;

static one one_new(const char *op, int rank, const int64_t *dims)
{
    one o = {graph_new(NULL, 17, "kernels-ref"), NULL, NULL};
    graph *g = o.g;
    assert_non_null(g);
    g->nodes = calloc(1, sizeof *g->nodes);
    g->inputs = calloc(4, sizeof *g->inputs);
    g->outputs = calloc(1, sizeof *g->outputs);
    node *n = o.n = &g->nodes[0];
    g->n_nodes = g->cap_nodes = 1;
    n->name = strdup("n0"), n->op = strdup(op), n->domain = strdup("");
    test_node_def(n, op, o.g->opset);
    n->in = calloc(4, sizeof(int));
    n->out = calloc(1, sizeof(int));
    n->attrs = calloc(12, sizeof *n->attrs);
    int v = graph_add_value(g, "x");
    value *d = &g->vals[v];
    d->dtype = AIT_F32, d->rank = rank, d->is_input = true;
    memcpy(d->dims, dims, sizeof(int64_t) * (size_t)rank);
    g->inputs[g->n_inputs++] = v;
    n->in[n->n_in++] = v;
    o.x = test_rand_tensor(rank, dims);
    int y = graph_add_value(g, "y");
    g->vals[y].producer = 0, g->vals[y].is_output = true;
    g->outputs[g->n_outputs++] = y;
    n->out[0] = y, n->n_out = 1;
    return o;
}

/* A constant input (data copied; NULL data: the input left out). */
static void one_const(one *o, ait_dtype dt, int rank, const int64_t *dims, const void *data)
{
    node *n = o->n;
    if (!data) {
        n->in[n->n_in++] = -1;
        return;
    }
    char name[8];
    snprintf(name, sizeof name, "c%d", n->n_in);
    int v = graph_add_value(o->g, name);
    value *d = &o->g->vals[v];
    d->dtype = dt, d->rank = rank;
    memcpy(d->dims, dims, sizeof(int64_t) * (size_t)rank);
    d->konst = test_tensor(dt, rank, dims);
    memcpy(d->konst->data, data, tensor_nbytes(d->konst));
    n->in[n->n_in++] = v;
}

static attr *one_attr(one *o, const char *name, attr_type t)
{
    attr *a = &o->n->attrs[o->n->n_attr++];
    a->name = strdup(name), a->type = t;
    return a;
}
static void attr_i(one *o, const char *name, int64_t v) { one_attr(o, name, ATTR_INT)->i = v; }
static void attr_f(one *o, const char *name, float v) { one_attr(o, name, ATTR_FLOAT)->f = v; }
static void attr_s(one *o, const char *name, const char *v) { one_attr(o, name, ATTR_STRING)->s = strdup(v); }
static void attr_is(one *o, const char *name, int k, const int64_t *v)
{
    attr *a = one_attr(o, name, ATTR_INTS);
    a->n = k, a->ints = malloc(sizeof(int64_t) * (size_t)k + 1);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)k);
}

/* Runs the node on the reference; the output in double (caller frees);
 * its element count in *n. */
static double *one_run(one *o, size_t *n)
{
    const backend *ref = backend_find("reference");
    candidate_cfg cr = {.backend = "reference", .threads = 1};
    built *br = NULL;
    ait_error e = {0};
    if (ref->build(ref, o->g, &cr, &br, &e) != AIT_OK) fail_msg("reference build: %s", e.msg);
    tensor *out[1];
    if (ref->run(br, &o->x, out, &e) != AIT_OK) fail_msg("reference run: %s", e.msg);
    *n = (size_t)tensor_numel(out[0]);
    double *w = malloc(*n * sizeof *w + 1);
    for (size_t i = 0; i < *n; i++) w[i] = ((const float *)out[0]->data)[i];
    ref->free(br);
    return w;
}

static void one_free(one *o)
{
    graph_free(o->g);
    test_tensor_free(o->x);
}

/* ---- cases ------------------------------------------------------------------ */

static void test_resize_vs_reference(void **state)
{
    (void)state;
    static const char *coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
    static const char *nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const int64_t shapes[][4] = {{7, 13, 14, 26}, {13, 7, 5, 3}, {3, 3, 13, 1}, {8, 8, 16, 16}};
    for (int si = 0; si < 4; si++)
        for (int lin = 0; lin < 2; lin++)
            for (int c = 0; c < 4; c++)
                for (int nm = 0; nm < (lin ? 1 : 4); nm++) {
                    int64_t dims[4] = {1, 3, shapes[si][0], shapes[si][1]};
                    int64_t sizes[4] = {1, 3, shapes[si][2], shapes[si][3]}, four = 4;
                    one o = one_new("Resize", 4, dims);
                    one_const(&o, AIT_F32, 1, &four, NULL);
                    one_const(&o, AIT_F32, 1, &four, NULL);
                    one_const(&o, AIT_I64, 1, &four, sizes);
                    attr_s(&o, "mode", lin ? "linear" : "nearest");
                    attr_s(&o, "coordinate_transformation_mode", coords[c]);
                    attr_s(&o, "nearest_mode", nearests[nm]);
                    size_t n;
                    double *want = one_run(&o, &n);
                    krz_geom g = {.planes = 3, .h = (int)dims[2], .w = (int)dims[3],
                                  .oh = (int)sizes[2], .ow = (int)sizes[3], .linear = lin,
                                  .coord = (krz_coord)c, .nearest = (krz_nearest)nm};
                    float *y = malloc(n * sizeof *y);
                    KC_EACH_ISA({
                        assert_int_equal(kresize(&g, o.x->data, y, kc_threads), 0);
                        assert_true(kc_close("resize vs reference", y, want, n, 1e-6, 1e-5));
                    });
                    free(y), free(want);
                    one_free(&o);
                }
}

static void test_pool_vs_reference(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int k, s, d, p0, p1, ceil_mode, inc;
    } cs[] = {
        {"AveragePool", 3, 2, 1, 1, 1, 1, 1}, {"AveragePool", 3, 2, 1, 1, 1, 1, 0},
        {"AveragePool", 2, 2, 1, 0, 0, 1, 1}, {"AveragePool", 3, 1, 1, 1, 0, 0, 1},
        {"MaxPool", 3, 2, 1, 1, 1, 1, 0},     {"MaxPool", 3, 2, 2, 2, 1, 0, 0},
        {"MaxPool", 2, 2, 1, 0, 0, 1, 0},
    };
    static const int sizes[] = {1, 7, 13, 32};
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++)
        for (int si = 0; si < 4; si++) {
            int hw = sizes[si];
            if (hw + cs[k].p0 + cs[k].p1 < cs[k].d * (cs[k].k - 1) + 1) continue;
            int64_t dims[4] = {1, 3, hw, hw + 2};
            one o = one_new(cs[k].op, 4, dims);
            int64_t ks[2] = {cs[k].k, cs[k].k}, st[2] = {cs[k].s, cs[k].s};
            int64_t pads[4] = {cs[k].p0, cs[k].p0, cs[k].p1, cs[k].p1}, dl[2] = {cs[k].d, cs[k].d};
            attr_is(&o, "kernel_shape", 2, ks);
            attr_is(&o, "strides", 2, st);
            attr_is(&o, "pads", 4, pads);
            if (cs[k].d > 1) attr_is(&o, "dilations", 2, dl);
            attr_i(&o, "ceil_mode", cs[k].ceil_mode);
            if (cs[k].op[0] == 'A') attr_i(&o, "count_include_pad", cs[k].inc);
            size_t n;
            double *want = one_run(&o, &n);
            kpool_geom g = {.n = 1, .c = 3, .h = hw, .w = hw + 2, .kh = cs[k].k, .kw = cs[k].k,
                            .sh = cs[k].s, .sw = cs[k].s, .dh = cs[k].d, .dw = cs[k].d,
                            .pt = cs[k].p0, .pl = cs[k].p0, .pb = cs[k].p1, .pr = cs[k].p1,
                            .include_pad = cs[k].inc};
            g.oh = kwin_out(g.h, g.kh, g.sh, g.dh, g.pt, g.pb, cs[k].ceil_mode);
            g.ow = kwin_out(g.w, g.kw, g.sw, g.dw, g.pl, g.pr, cs[k].ceil_mode);
            float *y = malloc(n * sizeof *y);
            assert_int_equal(n, (size_t)3 * g.oh * g.ow);
            KC_EACH_ISA({
                kpool_run(cs[k].op[0] == 'A' ? KPOOL_AVG : KPOOL_MAX, &g, o.x->data, y, kc_threads);
                assert_true(kc_close(cs[k].op, y, want, n, 1e-6, 1e-5));
            });
            free(y), free(want);
            one_free(&o);
        }
}

static void test_convtranspose_vs_reference(void **state)
{
    (void)state;
    static const struct {
        int cin, cout, group, k, s, d, p0, p1, opad;
    } cs[] = {{4, 6, 2, 4, 2, 1, 1, 1, 0}, {17, 5, 1, 3, 2, 1, 1, 1, 1}, {6, 9, 3, 3, 3, 2, 0, 2, 2},
              {3, 3, 3, 2, 2, 1, 0, 0, 0}};
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        int64_t dims[4] = {1, cs[k].cin, 7, 13};
        int64_t wd[4] = {cs[k].cin, cs[k].cout / cs[k].group, cs[k].k, cs[k].k}, bd = cs[k].cout;
        size_t nw = (size_t)(wd[0] * wd[1] * wd[2] * wd[3]);
        float *w = kc_rand(nw, (unsigned)k, -1, 1), *b = kc_rand((size_t)bd, 3, -1, 1);
        one o = one_new("ConvTranspose", 4, dims);
        one_const(&o, AIT_F32, 4, wd, w);
        one_const(&o, AIT_F32, 1, &bd, b);
        int64_t st[2] = {cs[k].s, cs[k].s}, dl[2] = {cs[k].d, cs[k].d}, op[2] = {cs[k].opad, cs[k].opad};
        int64_t pads[4] = {cs[k].p0, cs[k].p0, cs[k].p1, cs[k].p1};
        attr_is(&o, "strides", 2, st);
        attr_is(&o, "dilations", 2, dl);
        attr_is(&o, "pads", 4, pads);
        attr_is(&o, "output_padding", 2, op);
        attr_i(&o, "group", cs[k].group);
        size_t n;
        double *want = one_run(&o, &n);
        kct_geom g = {.n = 1, .cin = cs[k].cin, .h = 7, .w = 13, .cout = cs[k].cout,
                      .group = cs[k].group, .kh = cs[k].k, .kw = cs[k].k, .sh = cs[k].s,
                      .sw = cs[k].s, .dh = cs[k].d, .dw = cs[k].d, .pt = cs[k].p0, .pl = cs[k].p0};
        g.oh = (g.h - 1) * g.sh - cs[k].p0 - cs[k].p1 + g.dh * (g.kh - 1) + cs[k].opad + 1;
        g.ow = (g.w - 1) * g.sw - cs[k].p0 - cs[k].p1 + g.dw * (g.kw - 1) + cs[k].opad + 1;
        assert_int_equal(n, (size_t)g.cout * g.oh * g.ow);
        float *y = malloc(n * sizeof *y);
        KC_EACH_ISA({
            assert_int_equal(kconvt_run(&g, o.x->data, w, b, (kact){KF_NONE, 0, 0}, y, kc_threads), 0);
            assert_true(kc_close("ConvTranspose", y, want, n, 1e-5, 1e-5));
        });
        free(y), free(want), free(w), free(b);
        one_free(&o);
    }
}

static void test_depthwise_vs_reference(void **state)
{
    (void)state;
    static const struct {
        int c, mult, k, s, d, p0, p1;
    } cs[] = {{17, 1, 3, 1, 1, 1, 1}, {17, 1, 3, 2, 1, 1, 1}, {8, 1, 5, 2, 1, 2, 1},
              {3, 2, 3, 1, 2, 2, 2}, {64, 1, 5, 1, 1, 2, 2}};
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        int oc = cs[k].c * cs[k].mult;
        int64_t dims[4] = {1, cs[k].c, 13, 32}, wd[4] = {oc, 1, cs[k].k, cs[k].k}, bd = oc;
        float *w = kc_rand((size_t)oc * cs[k].k * cs[k].k, (unsigned)k, -1, 1);
        float *b = kc_rand((size_t)oc, 5, -1, 1);
        one o = one_new("Conv", 4, dims);
        one_const(&o, AIT_F32, 4, wd, w);
        one_const(&o, AIT_F32, 1, &bd, b);
        int64_t st[2] = {cs[k].s, cs[k].s}, dl[2] = {cs[k].d, cs[k].d};
        int64_t pads[4] = {cs[k].p0, cs[k].p0, cs[k].p1, cs[k].p1};
        attr_is(&o, "strides", 2, st);
        attr_is(&o, "dilations", 2, dl);
        attr_is(&o, "pads", 4, pads);
        attr_i(&o, "group", cs[k].c);
        size_t n;
        double *want = one_run(&o, &n);
        kdw_geom g = {.n = 1, .c = cs[k].c, .h = 13, .w = 32, .mult = cs[k].mult, .kh = cs[k].k,
                      .kw = cs[k].k, .sh = cs[k].s, .sw = cs[k].s, .dh = cs[k].d, .dw = cs[k].d,
                      .pt = cs[k].p0, .pl = cs[k].p0};
        g.oh = kwin_out(13, g.kh, g.sh, g.dh, cs[k].p0, cs[k].p1, 0);
        g.ow = kwin_out(32, g.kw, g.sw, g.dw, cs[k].p0, cs[k].p1, 0);
        assert_int_equal(n, (size_t)oc * g.oh * g.ow);
        float *y = malloc(n * sizeof *y);
        KC_EACH_ISA({
            kdw_run(&g, o.x->data, w, b, (kact){KF_NONE, 0, 0}, y, kc_threads);
            assert_true(kc_close("depthwise Conv", y, want, n, 1e-5, 1e-5));
        });
        free(y), free(want), free(w), free(b);
        one_free(&o);
    }
}

static void test_rows_vs_reference(void **state)
{
    (void)state;
    static const int64_t ds[] = {1, 7, 13, 64, 100};
    for (int di = 0; di < 5; di++)
        for (int op = 0; op < 3; op++) {
            int64_t d = ds[di], dims[2] = {5, d};
            float *sc = kc_rand((size_t)d, 1, 0.5f, 2), *bi = kc_rand((size_t)d, 2, -1, 1);
            one o = one_new(op == 0 ? "LayerNormalization" : op == 1 ? "Softmax" : "LogSoftmax", 2, dims);
            if (op == 0) {
                one_const(&o, AIT_F32, 1, &d, sc);
                one_const(&o, AIT_F32, 1, &d, bi);
                attr_f(&o, "epsilon", 1e-5f);
            }
            attr_i(&o, "axis", -1);
            size_t n;
            double *want = one_run(&o, &n);
            float *y = malloc(n * sizeof *y);
            KC_EACH_ISA({
                if (op == 0) klayernorm(o.x->data, sc, bi, y, 5, (size_t)d, 1e-5f, kc_threads);
                else ksoftmax(o.x->data, y, 5, (size_t)d, op == 2, kc_threads);
                assert_true(kc_close(o.n->op, y, want, n, 1e-5, 1e-5));
            });
            free(y), free(want), free(sc), free(bi);
            one_free(&o);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_vs_reference),
        cmocka_unit_test(test_pool_vs_reference),
        cmocka_unit_test(test_convtranspose_vs_reference),
        cmocka_unit_test(test_depthwise_vs_reference),
        cmocka_unit_test(test_rows_vs_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
