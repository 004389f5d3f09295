/* Inspection pieces: node costs on tiny graphs built here (formulas worked
 * out by hand), selection on a hand-built tree, the JSON writer's escaping,
 * and the public API on test models from $AIT_TEST_DATA (skipped without). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "graph/cost.h"
#include "io/json.h"
#include "tune/phases.h"
#include "tune/select.h"

/* ---- a one-node graph ---------------------------------------------------- */
typedef struct tiny {
    graph g;
    value v[8];
    node n;
    attr a[4];
    int in[6], out[2];
} tiny;

static void tiny_init(tiny *t, const char *op)
{
    memset(t, 0, sizeof *t);
    t->g.vals = t->v;
    t->g.nodes = &t->n;
    t->g.n_nodes = 1;
    t->n.name = (char *)"n";
    t->n.op = (char *)op;
    t->n.domain = (char *)"";
    t->n.in = t->in;
    t->n.out = t->out;
    t->n.attrs = t->a;
}

/* Adds a value of the given shape as the next input (or output); a constant
 * gets zeroed data of dtype dt. */
static void tiny_val(tiny *t, bool output, bool konst, ait_dtype dt, int rank, const int64_t *dims)
{
    int id = t->g.n_vals++;
    value *v = &t->v[id];
    v->name = (char *)"v";
    v->dtype = dt;
    v->rank = rank;
    memcpy(v->dims, dims, sizeof *dims * (size_t)rank);
    v->producer = -1;
    if (konst) assert_non_null(v->konst = ait_tensor_create(dt, rank, dims));
    if (output) t->out[t->n.n_out++] = id;
    else t->in[t->n.n_in++] = id;
}
#define IN(t, k, dt, ...) tiny_val(t, false, k, dt, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})
#define OUT(t, ...) tiny_val(t, true, false, AIT_F32, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})

static void tiny_int(tiny *t, const char *name, int64_t i)
{
    t->a[t->n.n_attr++] = (attr){.name = (char *)name, .type = ATTR_INT, .i = i};
}

static void tiny_ints(tiny *t, const char *name, int n, int64_t *ints)
{
    t->a[t->n.n_attr++] = (attr){.name = (char *)name, .type = ATTR_INTS, .n = n, .ints = ints};
}

static node_cost tiny_cost(tiny *t)
{
    node_cost c;
    node_cost_of(&t->g, 0, NULL, NULL, &c); /* shapes from the declared dims */
    for (int i = 0; i < t->g.n_vals; i++) ait_tensor_free(t->v[i].konst);
    return c;
}

static void test_cost_matmul_gemm(void **state)
{
    (void)state;
    tiny t;
    tiny_init(&t, "MatMul"); /* batched: [2,3,4,5] x [5,6] */
    IN(&t, false, AIT_F32, 2, 3, 4, 5);
    IN(&t, true, AIT_F32, 5, 6);
    OUT(&t, 2, 3, 4, 6);
    node_cost c = tiny_cost(&t);
    assert_true(c.flops == 2.0 * (2 * 3 * 4 * 6) * 5);
    assert_int_equal(c.params, 30);
    assert_int_equal(c.param_bytes, 120);

    tiny_init(&t, "Gemm"); /* A^T [8,4] x B [8,16] + C [16] */
    IN(&t, false, AIT_F32, 8, 4);
    IN(&t, true, AIT_F32, 8, 16);
    IN(&t, true, AIT_F32, 16);
    OUT(&t, 4, 16);
    tiny_int(&t, "transA", 1);
    c = tiny_cost(&t);
    assert_true(c.flops == 2.0 * 64 * 8 + 2.0 * 64);
    assert_int_equal(c.params, 128 + 16);
}

static void test_cost_conv(void **state)
{
    (void)state;
    tiny t;
    tiny_init(&t, "Conv"); /* groups 2: W [6, 4/2, 3, 3], bias [6] */
    IN(&t, false, AIT_F32, 1, 4, 8, 8);
    IN(&t, true, AIT_F32, 6, 2, 3, 3);
    IN(&t, true, AIT_F32, 6);
    OUT(&t, 1, 6, 6, 6);
    tiny_int(&t, "group", 2);
    node_cost c = tiny_cost(&t);
    assert_true(c.flops == 2.0 * 216 * (2 * 9) + 216);
    assert_int_equal(c.params, 108 + 6);

    tiny_init(&t, "ConvTranspose"); /* each of 100 inputs x 3 outputs x 3x3 */
    IN(&t, false, AIT_F32, 1, 4, 5, 5);
    IN(&t, true, AIT_F32, 4, 3, 3, 3);
    OUT(&t, 1, 3, 7, 7);
    c = tiny_cost(&t);
    assert_true(c.flops == 2.0 * 100 * 27);
}

static void test_cost_others(void **state)
{
    (void)state;
    tiny t;
    tiny_init(&t, "Einsum");
    IN(&t, false, AIT_F32, 2, 3, 4);
    IN(&t, false, AIT_F32, 2, 4, 5);
    OUT(&t, 2, 3, 5);
    t.a[t.n.n_attr++] = (attr){.name = (char *)"equation", .type = ATTR_STRING, .s = (char *)"bij,bjk->bik"};
    assert_true(tiny_cost(&t).flops == 2.0 * 2 * 3 * 4 * 5);

    tiny_init(&t, "Einsum"); /* ellipsis: the leading axes count too */
    IN(&t, false, AIT_F32, 2, 3, 4);
    IN(&t, false, AIT_F32, 2, 4, 5);
    OUT(&t, 2, 3, 5);
    t.a[t.n.n_attr++] = (attr){.name = (char *)"equation", .type = ATTR_STRING, .s = (char *)"...ij,...jk"};
    assert_true(tiny_cost(&t).flops == 2.0 * 2 * 3 * 4 * 5);

    int64_t k[2] = {2, 2};
    tiny_init(&t, "MaxPool");
    IN(&t, false, AIT_F32, 1, 4, 8, 8);
    OUT(&t, 1, 4, 4, 4);
    tiny_ints(&t, "kernel_shape", 2, k);
    assert_true(tiny_cost(&t).flops == 64.0 * 4);

    tiny_init(&t, "LSTM"); /* seq 5, batch 2, input 3, hidden 4 */
    IN(&t, false, AIT_F32, 5, 2, 3);
    IN(&t, true, AIT_F32, 1, 16, 3);
    IN(&t, true, AIT_F32, 1, 16, 4);
    OUT(&t, 5, 1, 2, 4);
    tiny_int(&t, "hidden_size", 4);
    node_cost c = tiny_cost(&t);
    assert_true(c.flops == 5.0 * 2 * (2 * 16 * (3 + 4) + 12 * 4));
    assert_int_equal(c.params, 48 + 64);

    tiny_init(&t, "Softmax");
    IN(&t, false, AIT_F32, 10);
    OUT(&t, 10);
    assert_true(tiny_cost(&t).flops == 50);

    tiny_init(&t, "Reshape"); /* the int64 shape is not a parameter */
    IN(&t, true, AIT_F32, 6);
    IN(&t, true, AIT_I64, 2);
    OUT(&t, 2, 3);
    c = tiny_cost(&t);
    assert_true(c.flops == 6);
    assert_int_equal(c.params, 6);
    assert_int_equal(c.param_bytes, 24);
}

/* ---- selection on a tree: root { a { a.0, a.1 }, b } ---------------------- */
static module mods[5];
static module_stats stats[5];
static module_tree tree = {.n = 5, .mods = mods, .from_scopes = true};
static inspection insp = {.tree = &tree, .st = stats};

static void make_tree(void)
{
    static int root_c[] = {1, 4}, a_c[] = {2, 3};
    mods[0] = (module){.name = (char *)"", .parent = -1, .depth = 0, .n_children = 2, .children = root_c};
    mods[1] = (module){.name = (char *)"a", .parent = 0, .depth = 1, .n_children = 2, .children = a_c};
    mods[2] = (module){.name = (char *)"a.0", .parent = 1, .depth = 2};
    mods[3] = (module){.name = (char *)"a.1", .parent = 1, .depth = 2};
    mods[4] = (module){.name = (char *)"b", .parent = 0, .depth = 1};
    double share[5] = {1, 0.7, 0.4, 0.3, 0.3};
    for (int i = 0; i < 5; i++) stats[i] = (module_stats){.share = share[i]};
}

static void test_strategies(void **state)
{
    (void)state;
    ait_error e;
    const char *good[] = {"first-wins", "max-throughput", "min-latency", "one-backend:native",
                          "latency-budget:2.5", "only:onednn", "only:native:int8wo",
                          "one-backend:native:wino"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(strategy_check(good[i], &e), AIT_OK);
    const char *bad[] = {"", "fast", "one-backend:", "one-backend:tpu", "latency-budget:0", "only:tpu",
                         "latency-budget:x", "latency-budget:", "only:native:", "only:tpu:int8",
                         "only::int8"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(strategy_check(bad[i], &e), AIT_E_INVALID_ARG);
        assert_non_null(strstr(e.msg, "strategy"));
    }
}

static void test_select(void **state)
{
    (void)state;
    make_tree();
    selection s = {0};
    ait_error e;
    assert_int_equal(select_path(&s, &tree, "a.0", NULL, &e), AIT_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.items[0].strategy, "max-throughput");
    /* "a" holds a.0: overlap is refused, naming both */
    assert_int_equal(select_path(&s, &tree, "a", NULL, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "'a.0'"));
    /* selecting again replaces the strategy */
    assert_int_equal(select_path(&s, &tree, "a.0", "min-latency", &e), AIT_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.items[0].strategy, "min-latency");
    assert_int_equal(select_path(&s, &tree, "nope", NULL, &e), AIT_E_NOT_FOUND);
    assert_non_null(strstr(e.msg, "'nope'"));
    assert_int_equal(select_path(&s, &tree, "b", "bogus", &e), AIT_E_INVALID_ARG);
    selection_clear(&s);

    /* prefix: outermost matches only ("a*" is a, not also a.0 and a.1) */
    assert_int_equal(select_path(&s, &tree, "a*", NULL, &e), AIT_OK);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.items[0].module, 1);
    selection_clear(&s);
    assert_int_equal(select_path(&s, &tree, "a.*", "first-wins", &e), AIT_OK);
    assert_int_equal(s.n, 2);
    assert_int_equal(select_find(&s, 2), 0);
    assert_int_equal(select_find(&s, 3), 1);
    assert_int_equal(select_find(&s, 4), -1);
    assert_int_equal(select_path(&s, &tree, "a*b", NULL, &e), AIT_E_INVALID_ARG);
    selection_clear(&s);

    /* top N at depth 1: a (0.7) then b (0.3) */
    assert_int_equal(select_by_share(&s, &insp, 1, 0, 1, NULL, &e), AIT_OK);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.items[0].module, 1);
    selection_clear(&s);
    /* depth 2: a.0, a.1 and the leaf b; ties keep tree order */
    assert_int_equal(select_by_share(&s, &insp, 2, 0, 2, NULL, &e), AIT_OK);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.items[0].module, 2);
    assert_int_equal(s.items[1].module, 3);
    selection_clear(&s);
    assert_int_equal(select_by_share(&s, &insp, 2, 0.35, 0, NULL, &e), AIT_OK);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.items[0].module, 2);
    /* around a selection: a is passed over, b taken */
    assert_int_equal(select_by_share(&s, &insp, 1, 0, 0, NULL, &e), AIT_OK);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.items[1].module, 4);
    selection_clear(&s);
}

/* ---- JSON ---------------------------------------------------------------- */
static void test_json(void **state)
{
    (void)state;
    json_w w = {0};
    ait_error e;
    json_obj(&w, NULL);
    json_str(&w, "s", "a\"b\\\n\x01\xc3\xa9\xff/");
    json_arr(&w, "a");
    json_int(&w, NULL, -3);
    json_num(&w, NULL, 0.5);
    json_num(&w, NULL, 1.0 / 0.0);
    json_bool(&w, NULL, true);
    json_null(&w, NULL);
    json_end(&w);
    json_obj(&w, "o");
    json_end(&w);
    json_end(&w);
    char *doc = json_finish(&w, &e);
    assert_non_null(doc);
    assert_string_equal(doc, "{\"s\":\"a\\\"b\\\\\\n\\u0001\xc3\xa9\\ufffd/\",\"a\":[-3,0.5,null,true,null],\"o\":{}}");
    free(doc);

    json_w bad = {0}; /* misuse is reported, not crashed on */
    json_arr(&bad, NULL);
    json_int(&bad, "key", 1);
    assert_null(json_finish(&bad, &e));
    assert_non_null(strstr(e.msg, "key inside an array"));
    json_w open = {0};
    json_obj(&open, NULL);
    assert_null(json_finish(&open, &e));
}

/* ---- the public API ------------------------------------------------------ */
static void test_api(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("models/resnet18.onnx"));
    ait_error e = {0};
    ait_inspection *r;
    int bs[2] = {1, 2};
    ait_inspect_options o = {.size = sizeof o, .n_batch_sizes = 2, .batch_sizes = bs, .runs = 1};
    assert_int_equal(ait_inspect(m, &o, &r, &e), AIT_OK);
    assert_false(ait_inspection_static_shapes(r));
    ait_module_info mi;
    assert_int_equal(ait_inspection_module(r, 0, &mi), AIT_OK);
    /* ResNet-18: 11.7M parameters, 1.82 GMACs at 224x224 */
    assert_true(mi.params > 11600000 && mi.params < 11800000);
    assert_true(mi.flops > 3.5e9 && mi.flops < 3.8e9);
    int l1 = ait_inspection_find(r, "layer1.0");
    assert_true(l1 > 0);
    assert_int_equal(ait_inspection_module(r, l1, &mi), AIT_OK);
    assert_string_equal(mi.path, "layer1.0");
    assert_int_equal(mi.n_inputs, 1);
    ait_port_info pi;
    assert_int_equal(ait_inspection_port(r, l1, 0, &pi), AIT_OK);
    assert_int_equal(pi.rank, 4);
    assert_int_equal(pi.kind[0], AIT_AXIS_BATCH);
    assert_string_equal(pi.axis_name[0], "batch0");
    assert_int_equal(pi.kind[1], AIT_AXIS_STATIC);
    assert_int_equal(ait_inspection_port(r, l1, 99, &pi), AIT_E_INVALID_ARG);

    assert_int_equal(ait_select_path(r, "layer1.*", "min-latency"), AIT_OK);
    assert_int_equal(ait_selection_count(r), 2);
    assert_int_equal(ait_select_path(r, "layer1", NULL), AIT_E_INVALID_ARG);
    assert_non_null(strstr(ait_inspection_error(r), "overlaps"));
    assert_int_equal(ait_select_by_share(r, 1, 0, 2, NULL), AIT_OK);
    assert_int_equal(ait_selection_count(r), 4);
    const char *strat;
    int mod;
    assert_int_equal(ait_selection_item(r, 0, &mod, &strat), AIT_OK);
    assert_int_equal(mod, l1);
    assert_string_equal(strat, "min-latency");
    char *doc = ait_inspection_json(r);
    assert_non_null(doc);
    assert_non_null(strstr(doc, "\"path\": \"layer1.0\""));
    assert_non_null(strstr(doc, "\"strategy\": \"min-latency\""));
    free(doc);
    ait_inspection_free(r);
    ait_inspection_free(NULL);
    ait_model_free(m);
}

/* What ait_inspect says about generated samples: a dim name no input has,
 * dims nobody set that break the model (with the smallest size that works),
 * and a scalar the model branches on. */
static void test_api_generated(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_inspection *r = NULL;
    ait_model *conv = test_load(test_data("bad/conv_symbolic.onnx"));
    const char *names[] = {"hieght"};
    const int64_t vals[] = {5};
    ait_inspect_options o = {.size = sizeof o, .n_dims = 1, .dim_names = names, .dim_values = vals,
                             .runs = 1};
    assert_int_equal(ait_inspect(conv, &o, &r, &e), AIT_E_INVALID_ARG);
    assert_null(r);
    assert_non_null(strstr(e.msg, "has no dim called 'hieght'; its inputs' dims are named: batch, "
                                  "height, width"));
    names[0] = "height";
    assert_int_not_equal(ait_inspect(conv, &o, &r, &e), AIT_OK);
    assert_null(r);
    assert_non_null(strstr(e.msg, "input 'x' dim 3 ('width'); set them with --dim width=V; the "
                                  "smallest size for it that passes shape inference is 3"));
    ait_model_free(conv);
    ait_model *vad = test_load(test_data("models/vad.onnx"));
    ait_inspect_options none = {.size = sizeof none, .runs = 1};
    assert_int_equal(ait_inspect(vad, &none, &r, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "input 'sr' is a single value that decides If '/frontend/If'"));
    ait_model_free(vad);
}

/* ---- decoder phases on hand-made observations ----------------------------- */
typedef struct ph_case {
    int n;
    axis_obs obs[6];
    axis_info ax[6];
    phase_port p[6];
} ph_case;

/* Port i: output or input, float or index, its shape in each run (rank r,
 * runs at batches b[]). */
static void ph_port(ph_case *c, bool output, bool is_float, int rank, int runs, const int64_t *b,
                    const int64_t *dims)
{
    int i = c->n++;
    ait_error e = {0};
    for (int k = 0; k < runs; k++)
        assert_int_equal(axes_observe(&c->obs[i], b[k], rank, dims + k * rank, &e), AIT_OK);
    axes_classify(&c->obs[i], &c->ax[i]);
    c->p[i] = (phase_port){.output = output, .is_float = is_float, .is_index = !is_float,
                           .obs = &c->obs[i], .axes = &c->ax[i]};
}

static void test_phases(void **state)
{
    (void)state;
    static const int64_t b2[] = {1, 2}, b1[] = {1};
    phases ph;
    { /* GPT-2 style: ids [b, seq], past [b, h, past, d] -> present [b, h, past+seq, d] */
        ph_case c = {0};
        ph_port(&c, false, false, 2, 2, b2, (const int64_t[]){1, 1, 2, 8});
        ph_port(&c, false, true, 4, 2, b2, (const int64_t[]){1, 4, 7, 32, 2, 4, 0, 32});
        ph_port(&c, false, true, 4, 2, b2, (const int64_t[]){1, 4, 7, 32, 2, 4, 0, 32});
        ph_port(&c, true, true, 3, 2, b2, (const int64_t[]){1, 1, 50, 2, 8, 50}); /* logits */
        ph_port(&c, true, true, 4, 2, b2, (const int64_t[]){1, 4, 8, 32, 2, 4, 8, 32});
        ph_port(&c, true, true, 4, 2, b2, (const int64_t[]){1, 4, 8, 32, 2, 4, 8, 32});
        phases_find(c.p, c.n, &ph);
        assert_int_equal(ph.n_kv, 2);
        assert_int_equal(ph.seq_port, 0);
        assert_int_equal(ph.seq_axis, 1);
        assert_int_equal(ph.kv[0].past, 1);
        assert_int_equal(ph.kv[0].present, 4);
        assert_int_equal(ph.kv[0].axis, 2);
        assert_int_equal(ph.kv[1].past, 2);
        assert_int_equal(ph.kv[1].present, 5);
    }
    { /* one run at batch 1 and sequence 1: axis 1 of the ids, not the batch axis 0 */
        ph_case c = {0};
        ph_port(&c, false, false, 2, 1, b1, (const int64_t[]){1, 1});
        ph_port(&c, false, true, 4, 1, b1, (const int64_t[]){1, 4, 3, 32});
        ph_port(&c, true, true, 4, 1, b1, (const int64_t[]){1, 4, 4, 32});
        phases_find(c.p, c.n, &ph);
        assert_int_equal(ph.n_kv, 1);
        assert_int_equal(ph.seq_axis, 1);
    }
    { /* a recurrent state of one shape in and out: no decoder */
        ph_case c = {0};
        ph_port(&c, false, true, 3, 2, b2, (const int64_t[]){1, 16, 64, 2, 16, 64});
        ph_port(&c, false, true, 3, 2, b2, (const int64_t[]){2, 1, 128, 2, 2, 128});
        ph_port(&c, true, true, 3, 2, b2, (const int64_t[]){2, 1, 128, 2, 2, 128});
        phases_find(c.p, c.n, &ph);
        assert_int_equal(ph.n_kv, 0);
        assert_int_equal(ph.seq_port, -1);
    }
    { /* an output longer by an amount no input axis has: no sequence, so no pair */
        ph_case c = {0};
        ph_port(&c, false, false, 2, 2, b2, (const int64_t[]){1, 5, 2, 6});
        ph_port(&c, false, true, 3, 2, b2, (const int64_t[]){1, 10, 8, 2, 10, 8});
        ph_port(&c, true, true, 3, 2, b2, (const int64_t[]){1, 13, 8, 2, 17, 8});
        phases_find(c.p, c.n, &ph);
        assert_int_equal(ph.n_kv, 0);
    }
    { /* longer on two axes, or shorter: not a cache */
        ph_case c = {0};
        ph_port(&c, false, false, 2, 1, b1, (const int64_t[]){1, 1});
        ph_port(&c, false, true, 3, 1, b1, (const int64_t[]){1, 3, 8});
        ph_port(&c, true, true, 3, 1, b1, (const int64_t[]){1, 4, 9});
        ph_port(&c, true, true, 3, 1, b1, (const int64_t[]){1, 2, 8});
        phases_find(c.p, c.n, &ph);
        assert_int_equal(ph.n_kv, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_matmul_gemm), cmocka_unit_test(test_cost_conv),
        cmocka_unit_test(test_cost_others),      cmocka_unit_test(test_strategies),
        cmocka_unit_test(test_select),           cmocka_unit_test(test_json),
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_api_generated),
        cmocka_unit_test(test_phases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
