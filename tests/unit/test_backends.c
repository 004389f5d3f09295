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

#include "backends/backend.h"
#include "graph/extract.h"
#include "graph/modules.h"
#include "io/model.h"
#include "runtime/exec.h"
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

typedef struct attr_spec {
    const char *name;
    attr_type type;
    int64_t i;
    float f;
    int n;
    int64_t ints[8];
    const char *s;
} attr_spec;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static tensor *rand_tensor(int rank, const int64_t *dims)
{
    tensor *t = calloc(1, sizeof *t);
    ait_error e = {0};
    assert_non_null(t);
    tensor_set_shape(t, AIT_F32, rank, dims);
    assert_int_equal(tensor_alloc(t, &e), AIT_OK);
    float *p = t->data;
    for (int64_t i = 0; i < tensor_numel(t); i++) p[i] = frand();
    return t;
}

static void free_tensor(tensor *t)
{
    if (!t) return;
    tensor_release(t);
    free(t);
}

/* A graph of one node `op` over inputs ins[0..n_in) (constants filled with
 * random data); *feed receives random tensors for its graph inputs. */
static graph *one_node(const char *op, const in_spec *ins, int n_in, const attr_spec *as, int n_attr,
                       tensor **feed, int *n_feed)
{
    graph *g = graph_new(NULL, 17, "one-node");
    assert_non_null(g);
    g->nodes = calloc(1, sizeof *g->nodes);
    g->inputs = calloc((size_t)n_in, sizeof *g->inputs);
    g->outputs = calloc(1, sizeof *g->outputs);
    assert_true(g->nodes && g->inputs && g->outputs);
    node *n = &g->nodes[0];
    g->n_nodes = g->cap_nodes = 1;
    n->name = strdup("n0");
    n->op = strdup(op);
    n->domain = strdup("");
    n->def = op_find("", op);
    assert_non_null(n->def);
    n->n_in = n_in;
    n->n_out = 1;
    n->in = calloc((size_t)n_in, sizeof(int));
    n->out = calloc(1, sizeof(int));
    n->attrs = calloc((size_t)n_attr + 1, sizeof *n->attrs);
    assert_true(n->in && n->out && n->attrs);
    *n_feed = 0;
    for (int k = 0; k < n_in; k++) {
        if (ins[k].rank < 0) {
            n->in[k] = -1;
            continue;
        }
        char name[16];
        snprintf(name, sizeof name, "x%d", k);
        int v = graph_add_value(g, name);
        assert_true(v >= 0);
        value *d = &g->vals[v];
        d->dtype = AIT_F32;
        d->rank = ins[k].rank;
        memcpy(d->dims, ins[k].dims, sizeof(int64_t) * (size_t)ins[k].rank);
        tensor *t = rand_tensor(ins[k].rank, ins[k].dims);
        if (ins[k].konst) {
            d->konst = t;
        } else {
            d->is_input = true;
            g->inputs[g->n_inputs++] = v;
            feed[(*n_feed)++] = t;
        }
        n->in[k] = v;
    }
    int y = graph_add_value(g, "y");
    assert_true(y >= 0);
    g->vals[y].producer = 0;
    g->vals[y].is_output = true;
    g->outputs[g->n_outputs++] = y;
    n->out[0] = y;
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

/* Builds g on backend b and on the reference, runs both on feed, compares
 * every output. */
static void compare(const backend *b, const graph *g, tensor *const *feed, int threads,
                    const char *what)
{
    const backend *ref = backend_find("reference");
    candidate_cfg cb = {.backend = b->name, .threads = threads}, cr = {.backend = "reference",
                                                                      .threads = 1};
    built *bb = NULL, *br = NULL;
    ait_error e = {0};
    if (b->build(b, g, &cb, &bb, &e) != AIT_OK) fail_msg("%s: build: %s", what, e.msg);
    assert_int_equal(ref->build(ref, g, &cr, &br, &e), AIT_OK);
    tensor *got[16], *want[16];
    assert_true(g->n_outputs <= 16);
    if (b->run(bb, feed, got, &e) != AIT_OK) fail_msg("%s: run: %s", what, e.msg);
    if (ref->run(br, feed, want, &e) != AIT_OK) fail_msg("%s: reference run: %s", what, e.msg);
    for (int j = 0; j < g->n_outputs; j++) {
        char w[160];
        snprintf(w, sizeof w, "%s output %d (%s)", what, j, g->vals[g->outputs[j]].name);
        expect_close(got[j], want[j], w);
    }
    b->free(bb);
    ref->free(br);
}

/* taken: the backend must take the node (else it may leave it to the
 * reference ops, and the answer must still be the same). */
static void run_case_as(const backend *b, const char *op, const in_spec *ins, int n_in,
                        const attr_spec *as, int n_attr, const char *what, bool taken)
{
    tensor *feed[4] = {0};
    int n_feed;
    graph *g = one_node(op, ins, n_in, as, n_attr, feed, &n_feed);
    char w[200];
    snprintf(w, sizeof w, "%s: %s %s", b->name, op, what);
    if (taken && !b->op_for(g, &g->nodes[0])) fail_msg("%s: not taken by the backend", w);
    compare(b, g, feed, 1, w);
    compare(b, g, feed, 2, w);
    for (int i = 0; i < n_feed; i++) free_tensor(feed[i]);
    graph_free(g);
}

static void run_case(const backend *b, const char *op, const in_spec *ins, int n_in,
                     const attr_spec *as, int n_attr, const char *what)
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
                        attr_spec as[] = {{"transA", ATTR_INT, .i = ta}, {"transB", ATTR_INT, .i = tb},
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
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        in_spec ins[3] = {c[i].x, c[i].w, {.rank = 1, .dims = {c[i].w.dims[0]}, .konst = true}};
        attr_spec as[5] = {{"group", ATTR_INT, .i = c[i].group},
                           {"strides", ATTR_INTS, .n = 2, .ints = {c[i].strides[0], c[i].strides[1]}},
                           {"dilations", ATTR_INTS, .n = 2, .ints = {c[i].dil[0], c[i].dil[1]}}};
        int na = 3;
        if (c[i].auto_pad) as[na++] = (attr_spec){"auto_pad", ATTR_STRING, .s = c[i].auto_pad};
        else as[na++] = (attr_spec){"pads", ATTR_INTS, .n = 4,
                                    .ints = {c[i].pads[0], c[i].pads[1], c[i].pads[2], c[i].pads[3]}};
        run_case(b, "Conv", ins, c[i].bias ? 3 : 2, as, na, c[i].what);
    }
    /* A 1-D Conv: cblas path or not, the answer must be the same. */
    in_spec ins1[2] = {SH(1, 3, 10), SHK(2, 3, 3)};
    run_case_as(b, "Conv", ins1, 2, NULL, 0, "1-D", false);
}

typedef struct op_cases {
    const char *op;
    void (*run)(const backend *b);
} op_cases;

static const op_cases cases[] = {
    {"MatMul", cases_matmul},
    {"Gemm", cases_gemm},
    {"Conv", cases_conv},
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

static void module_case(const char *model, const char *mod, int min_cover)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/models/%s.onnx", data, model);
    ait_model *m = NULL;
    ait_error e = {0};
    if (ait_model_load(p, &m, &e) != AIT_OK) fail_msg("%s: %s", p, e.msg);
    module_tree *t = NULL;
    assert_int_equal(modules_build(m->g, &t, &e), AIT_OK);
    int l = module_find(t, mod);
    assert_true(l >= 0);
    graph *sub = NULL;
    if (graph_extract(m->g, t, l, &sub, &e) != AIT_OK) fail_msg("%s: %s", mod, e.msg);
    sample_set *ss = NULL;
    sample_opts so = {.batch = 2, .count = 1, .seed = 5, .quiet = true};
    if (samples_generate(m, &so, &ss, &e) != AIT_OK) fail_msg("%s: %s", model, e.msg);
    exec *whole = NULL;
    tensor *outs[16];
    assert_int_equal(exec_create(m->g, NULL, 1, &whole, &e), AIT_OK);
    if (exec_run(whole, ss->s[0].values, outs, &e) != AIT_OK) fail_msg("%s: %s", model, e.msg);
    tensor *feed[64];
    assert_true(sub->n_inputs <= 64);
    for (int i = 0; i < sub->n_inputs; i++) {
        feed[i] = (tensor *)exec_value(whole, graph_find_value(m->g, sub->vals[sub->inputs[i]].name));
        assert_non_null(feed[i]);
    }
    assert_int_equal(backend_coverage(backend_find("reference"), sub), sub->n_nodes);
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
        compare(b, sub, feed, 1, w);
        compare(b, sub, feed, 2, w);
    }
    exec_free(whole);
    sample_set_free(ss);
    graph_free(sub);
    modules_free(t);
    ait_model_free(m);
}

static void test_modules(void **state)
{
    (void)state;
    module_case("resnet18", "layer1.0", 2);  /* two 3x3 Convs */
    module_case("bert", "layer.0", 6);       /* Q, K, V, output and two FFN MatMuls at least */
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
    for (int i = 0; i < nf; i++) free_tensor(feed[i]);
    graph_free(g);
    g = one_node("Relu", relu, 1, NULL, 0, feed, &nf);
    assert_int_equal(backend_coverage(backend_find("openblas"), g), 0);
    for (int i = 0; i < nf; i++) free_tensor(feed[i]);
    graph_free(g);
    backend_exec_free(NULL);
}

int main(void)
{
    data = getenv("AIT_TEST_DATA");
    if (!data) {
        fprintf(stderr, "set AIT_TEST_DATA to the folder tools/test fills (models/)\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_modules),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    printf("# worst NMSE %.3g (%s)\n", worst, worst_what);
    return r;
}
