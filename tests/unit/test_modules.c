/* The module tree: names follow PyTorch's module names, every node belongs
 * to exactly one module, ports are the module's boundary, and the fallback
 * cuts unscoped models into segments of comparable cost. Models come from
 * $AIT_TEST_DATA (models/ from tools/export_models.py, bad/ from
 * tests/unit/make_bad_models.py, unscoped/ from make_unscoped_models.py). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "graph/modules.h"
#include "runtime/model.h"
#include "graph/extract.h"
#include "exec/exec.h"
#include "exec/node_costs.h"
#include "tune/inspect.h"

static const char *data;

/* Loads, builds the tree, checks the invariants every tree must keep. */
static module_tree *tree_of(const ait_model *m)
{
    module_tree *t = NULL;
    ait_error e = {0};
    assert_int_equal(modules_build(m->g, exec_node_costs, &t, &e), AIT_OK);
    int counted = 0;
    for (int i = 0; i < t->n; i++) {
        counted += t->mods[i].n_nodes;
        for (int k = 0; k < t->mods[i].n_nodes; k++)
            assert_int_equal(t->node_module[t->mods[i].nodes[k]], i);
        if (i) assert_true(t->mods[i].depth == t->mods[t->mods[i].parent].depth + 1);
    }
    assert_int_equal(counted, m->g->n_nodes); /* each node in exactly one module */
    for (int n = 0; n < m->g->n_nodes; n++) assert_true(module_contains(t, 0, n));
    return t;
}

static void expect_modules(const module_tree *t, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (module_find(t, names[i]) < 0) fail_msg("module '%s' is missing", names[i]);
}

static void test_resnet(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("models/resnet18.onnx"));
    module_tree *t = tree_of(m);
    assert_true(t->from_scopes);
    static const char *const names[] = {"conv1", "layer1", "layer1.0", "layer1.0.conv1",
                                        "layer2.0.downsample", "layer2.0.downsample.0", "fc", NULL};
    expect_modules(t, names);
    int l10 = module_find(t, "layer1.0");
    assert_int_equal(t->mods[l10].parent, module_find(t, "layer1"));
    assert_int_equal(t->mods[module_find(t, "layer1.0.conv1")].parent, l10);
    /* A residual block reads one tensor and gives one. */
    int *ins, *outs, n_in, n_out;
    ait_error e = {0};
    assert_int_equal(module_ports(m->g, t, l10, &ins, &n_in, &outs, &n_out, &e), AIT_OK);
    assert_int_equal(n_in, 1);
    assert_int_equal(n_out, 1);
    free(ins);
    free(outs);
    modules_free(t);
    ait_model_free(m);
}

static void test_transformers(void **state)
{
    (void)state;
    static const char *const bert[] = {"word_embeddings", "emb_ln", "layer.0", "layer.0.attention",
                                       "layer.0.attention.query", "layer.3.ffn_out", NULL};
    static const char *const gpt2[] = {"wte", "h.1.attention.value", "h.1.ln2", "ln_f", "lm_head",
                                       NULL};
    static const char *const mobilenet[] = {"features.0.0", "features.3.conv.0", "features.3.conv.0.0",
                                            "features.3.conv.1", "classifier.1", NULL};
    const char *files[3] = {"models/bert.onnx", "models/gpt2.onnx", "models/mobilenetv2.onnx"};
    const char *const *lists[3] = {bert, gpt2, mobilenet};
    for (int i = 0; i < 3; i++) {
        ait_model *m = test_load(test_data(files[i]));
        module_tree *t = tree_of(m);
        expect_modules(t, lists[i]);
        modules_free(t);
        ait_model_free(m);
    }
}

/* The Llama-style decoder's LM head is a parameter of the top module used
 * in its forward: its MatMul has no scope, and becomes module unscoped.0
 * (a child of the root, cut out like any module: one input, one output);
 * the rest of the root's nodes (the mask and rotary glue) stay there. */
static void test_unscoped_work(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("models/llama.onnx"));
    module_tree *t = tree_of(m);
    int u = module_find(t, "unscoped.0");
    assert_true(u > 0);
    assert_int_equal(t->mods[u].parent, 0);
    assert_int_equal(t->mods[u].n_nodes, 1);
    assert_string_equal(m->g->nodes[t->mods[u].nodes[0]].op, "MatMul");
    assert_int_equal(module_find(t, "unscoped.1"), -1);
    assert_true(t->mods[0].n_nodes > 0);
    for (int k = 0; k < t->mods[0].n_nodes; k++)
        assert_string_not_equal(m->g->nodes[t->mods[0].nodes[k]].op, "MatMul");
    int *ins, *outs, n_in, n_out;
    ait_error e = {0};
    assert_int_equal(module_ports(m->g, t, u, &ins, &n_in, &outs, &n_out, &e), AIT_OK);
    assert_int_equal(n_in, 1);
    assert_int_equal(n_out, 1);
    free(ins);
    free(outs);
    modules_free(t);
    ait_model_free(m);
    /* Models whose unscoped nodes do no real work keep them at the root. */
    const char *files[2] = {"models/resnet18.onnx", "models/gpt2.onnx"};
    for (int i = 0; i < 2; i++) {
        m = test_load(test_data(files[i]));
        t = tree_of(m);
        assert_int_equal(module_find(t, "unscoped.0"), -1);
        modules_free(t);
        ait_model_free(m);
    }
}

/* Glue with no scope between two modules joins its neighbour (modules.h):
 * in the keyword spotter, the input Transpose joins the Conv after it, a
 * Relu the module that reads it, the ReduceMean before the head and the
 * Softmax after it the head; no node with work is left at the root. */
static void test_glue(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("models/kws.onnx"));
    module_tree *t = tree_of(m);
    const char *const want[][2] = {{"/Transpose", "conv"}, {"/Relu", "dw"},
                                   {"/Relu_1", "lstm"},    {"/ReduceMean", "head"},
                                   {"/Softmax", "head"}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int i = 0;
        while (i < m->g->n_nodes && strcmp(m->g->nodes[i].name, want[k][0]) != 0) i++;
        assert_true(i < m->g->n_nodes);
        if (strcmp(t->mods[t->node_module[i]].name, want[k][1]) != 0)
            fail_msg("%s is in '%s', want '%s'", want[k][0], t->mods[t->node_module[i]].name,
                     want[k][1]);
    }
    for (int k = 0; k < t->mods[0].n_nodes; k++)
        assert_string_equal(m->g->nodes[t->mods[0].nodes[k]].op, "Constant");
    for (int k = 1; k < t->n; k++) /* still in node order, so still cut out as one piece */
        for (int j = 1; j < t->mods[k].n_nodes; j++)
            assert_true(t->mods[k].nodes[j - 1] < t->mods[k].nodes[j]);
    modules_free(t);
    ait_model_free(m);
}

/* Node `name` (op) of g reading ins (value names, "" for none), writing out. */
static void add_node_named(graph *g, const char *name, const char *op, const char *const *ins,
                           int n_in, const char *out)
{
    node *n = test_node_append(g, name, op, n_in);
    for (int k = 0; k < n_in; k++) {
        int v = !ins[k][0] ? -1 : graph_find_value(g, ins[k]);
        n->in[n->n_in++] = ins[k][0] && v < 0 ? graph_add_value(g, ins[k]) : v;
    }
    int v = graph_find_value(g, out);
    n->out[0] = v >= 0 ? v : graph_add_value(g, out);
    n->n_out = 1;
    g->vals[n->out[0]].producer = g->n_nodes++;
}

/* An empty graph "fpn" with one input, x. */
static graph *fpn_graph(void)
{
    graph *g = graph_new(NULL, 17, "fpn");
    assert_non_null(g);
    int x = graph_add_value(g, "x");
    g->vals[x].is_input = true;
    g->inputs = malloc(sizeof(int));
    assert_non_null(g->inputs);
    g->inputs[g->n_inputs++] = x;
    return g;
}

/* An FPN's unscoped upsampling (DBNet's in bench's suite): a Resize whose
 * only reader is the next module's Conv joins that module, one that a
 * module alone feeds and that stands right after it (read by two) joins
 * it; one that stands after another module than its feeder's joins its
 * feeder too, as nothing in between reads what the feeder computes. */
static void test_glue_resize(void **state)
{
    (void)state;
    graph *g = fpn_graph();
    const char *conv_a[] = {"x"}, *rz_a[] = {"a", "", "s"}, *conv_b[] = {"ra"},
               *rz_b[] = {"b", "", "s"}, *conv_c[] = {"rb"}, *conv_d[] = {"rb"}, *rz_c[] = {"c", "", "s"};
    add_node_named(g, "/lat/Conv", "Conv", conv_a, 1, "a");
    add_node_named(g, "/Resize", "Resize", rz_a, 3, "ra");          /* before smooth: joins it */
    add_node_named(g, "/smooth/Conv", "Conv", conv_b, 1, "b");
    add_node_named(g, "/Resize_1", "Resize", rz_b, 3, "rb");        /* read by two, after smooth */
    add_node_named(g, "/out/Conv", "Conv", conv_c, 1, "c");
    add_node_named(g, "/side/Conv", "Conv", conv_d, 1, "d");
    add_node_named(g, "/Resize_2", "Resize", rz_c, 3, "y");         /* after side, fed by out: joins out */
    int64_t one = 4;
    g->vals[graph_find_value(g, "s")].konst = test_rand_tensor(1, &one);
    int y = graph_find_value(g, "y"), d = graph_find_value(g, "d");
    g->outputs = malloc(2 * sizeof(int));
    assert_non_null(g->outputs);
    g->outputs[g->n_outputs++] = y;
    g->outputs[g->n_outputs++] = d;
    module_tree *t = NULL;
    ait_error e = {0};
    assert_int_equal(modules_build(g, NULL, &t, &e), AIT_OK);
    assert_string_equal(t->mods[t->node_module[1]].name, "smooth");
    assert_string_equal(t->mods[t->node_module[3]].name, "smooth");
    assert_string_equal(t->mods[t->node_module[6]].name, "out");
    modules_free(t);
    graph_free(g);
}

/* The FPN's top-down Adds (DBNet's in bench's suite), each reading two
 * modules: an Add joins the module whose Conv output only it reads (so a
 * backend runs it as that Conv's residual), the Resize after it follows;
 * where that module would no longer collapse at the Add's place (a node
 * between reads one of its values) the Add joins its other feeder. */
static void test_glue_fpn_add(void **state)
{
    (void)state;
    graph *g = fpn_graph();
    const char *cx[] = {"x"}, *rz[] = {"b", "", "s"}, *add[] = {"a", "rb"}, *rz1[] = {"s2", "", "s"},
               *sm[] = {"s2"}, *add1[] = {"c", "r1"}, *d0[] = {"d0"}, *add2[] = {"d", "e"};
    add_node_named(g, "/lat1/Conv", "Conv", cx, 1, "c");    /* 0 */
    add_node_named(g, "/lat2/Conv", "Conv", cx, 1, "a");    /* 1 */
    add_node_named(g, "/lat3/Conv", "Conv", cx, 1, "b");    /* 2 */
    add_node_named(g, "/Resize", "Resize", rz, 3, "rb");    /* 3: after lat3, fed by it alone */
    add_node_named(g, "/Add", "Add", add, 2, "s2");         /* 4: lat2's Conv's only reader */
    add_node_named(g, "/Resize_1", "Resize", rz1, 3, "r1"); /* 5: after the Add, fed by it */
    add_node_named(g, "/sm/Conv", "Conv", sm, 1, "y1");     /* 6 */
    add_node_named(g, "/Add_1", "Add", add1, 2, "y2");      /* 7: lat1's, over the nodes between */
    add_node_named(g, "/lat0/Conv", "Conv", cx, 1, "d0");   /* 8 */
    add_node_named(g, "/lat0/Relu", "Relu", d0, 1, "d");    /* 9 */
    add_node_named(g, "/side/Conv", "Conv", d0, 1, "e");    /* 10: reads lat0's d0 */
    add_node_named(g, "/Add_2", "Add", add2, 2, "y3");      /* 11: lat0 would not collapse: side */
    int64_t one = 4;
    g->vals[graph_find_value(g, "s")].konst = test_rand_tensor(1, &one);
    const char *outs[] = {"y1", "y2", "y3"};
    g->outputs = malloc(3 * sizeof(int));
    assert_non_null(g->outputs);
    for (int k = 0; k < 3; k++) g->outputs[g->n_outputs++] = graph_find_value(g, outs[k]);
    module_tree *t = NULL;
    ait_error e = {0};
    assert_int_equal(modules_build(g, NULL, &t, &e), AIT_OK);
    const char *const want[][2] = {{"/Resize", "lat3"}, {"/Add", "lat2"}, {"/Resize_1", "lat2"},
                                   {"/Add_1", "lat1"},  {"/Add_2", "side"}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int i = 0;
        while (i < g->n_nodes && strcmp(g->nodes[i].name, want[k][0]) != 0) i++;
        assert_true(i < g->n_nodes);
        if (strcmp(t->mods[t->node_module[i]].name, want[k][1]) != 0)
            fail_msg("%s is in '%s', want '%s'", want[k][0], t->mods[t->node_module[i]].name,
                     want[k][1]);
    }
    assert_int_equal(t->mods[0].n_nodes, 0);
    modules_free(t);
    graph_free(g);
}

/* A tiny model (six element-wise nodes) is one segment: glue is not worth
 * a module of its own. */
static void test_fallback(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("bad/residual_unscoped.onnx"));
    module_tree *t = tree_of(m);
    assert_false(t->from_scopes);
    assert_int_equal(t->mods[0].n_children, 1);
    int s0 = module_find(t, "seg.0");
    assert_true(s0 > 0);
    assert_int_equal(t->mods[s0].n_nodes, 6);
    modules_free(t);
    ait_model_free(m);
}

/* Unscoped models (tests/unit/make_unscoped_models.py) are cut into
 * segments of comparable cost: a count in range (resnet18 was 11 segments
 * before, mobilenet_v3_small 25 of mostly 2 nodes, shufflenet 35), every
 * segment between 0.4 and 2.5 times the mean cost, each reading one tensor
 * and starting with no op that fuses into the node before it. */
static void segment_case(const char *model, int lo, int hi)
{
    char p[256];
    snprintf(p, sizeof p, "unscoped/%s.onnx", model);
    ait_model *m = test_load(test_data(p));
    module_tree *t = tree_of(m);
    assert_false(t->from_scopes);
    int n = t->mods[0].n_children, nn = m->g->n_nodes;
    if (n < lo || n > hi) fail_msg("%s: %d segments, want %d to %d", model, n, lo, hi);
    double *cost = calloc((size_t)nn, sizeof *cost), total = 0;
    ait_error e = {0};
    assert_non_null(cost);
    assert_int_equal(exec_node_costs(m->g, cost, &e), AIT_OK);
    for (int i = 0; i < nn; i++) total += cost[i] + 1e4;
    for (int k = 0; k < n; k++) {
        const module *s = &t->mods[t->mods[0].children[k]];
        double c = 0;
        for (int j = 0; j < s->n_nodes; j++) c += cost[s->nodes[j]] + 1e4;
        double r = c / (total / n);
        if (r < 0.4 || r > 2.5)
            fail_msg("%s: %s has %.2f times the mean cost (%d nodes)", model, s->name, r, s->n_nodes);
        const char *op = m->g->nodes[s->nodes[0]].op;
        if (!strcmp(op, "Relu") || !strcmp(op, "HardSigmoid") || !strcmp(op, "BatchNormalization"))
            fail_msg("%s: %s starts with %s", model, s->name, op);
        int *ins, *outs, n_in, n_out;
        assert_int_equal(module_ports(m->g, t, t->mods[0].children[k], &ins, &n_in, &outs, &n_out, &e),
                         AIT_OK);
        if (n_in != 1) fail_msg("%s: %s reads %d tensors", model, s->name, n_in);
        free(ins);
        free(outs);
    }
    free(cost);
    modules_free(t);
    ait_model_free(m);
}

static void test_segments(void **state)
{
    (void)state;
    segment_case("resnet18", 6, 10);
    segment_case("mobilenetv2", 8, 14);
    segment_case("mobilenet_v3_small", 4, 12);
    segment_case("shufflenet_v2_x1_0", 8, 20);
}

/* Time shares: the top-level modules and the model's own nodes make up the
 * whole, and the node times cover the model's wall time (the executor's own
 * work between nodes is under 5%). */
static void test_shares(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("models/resnet18.onnx"));
    sample_set *ss = NULL;
    ait_error e = {0};
    sample_opts so = {.batch = 1, .count = 1, .seed = 1};
    assert_int_equal(samples_generate(m, &so, &ss, &e), AIT_OK);
    inspect_opts io = {.samples = ss, .n_batch = 2, .batch = {1, 2}, .runs = 2};
    inspection *r = NULL;
    if (inspect_run(m, &io, &r, &e) != AIT_OK) fail_msg("%s", e.msg);
    double sum = 0, root_nodes = r->st[0].total_sec; /* root's own nodes: the rest */
    for (int i = 0; i < r->tree->n; i++)
        if (r->tree->mods[i].depth == 1) {
            sum += r->st[i].share;
            root_nodes -= r->st[i].total_sec;
        }
    double own = root_nodes / r->nodes_sec;
    assert_true(own >= -1e-12);
    assert_true(fabs(sum + own - 1.0) < 1e-9);
    assert_true(fabs(r->st[0].share - 1.0) < 1e-9);
    if (!(r->nodes_sec >= 0.95 * r->model_sec && r->nodes_sec <= r->model_sec))
        fail_msg("node times %.3f ms cover %.1f%% of the model's %.3f ms", r->nodes_sec * 1e3,
                 100 * r->nodes_sec / r->model_sec, r->model_sec * 1e3);
    assert_int_equal(r->runs, 4);
    inspection_free(r);
    sample_set_free(ss);
    ait_model_free(m);
}

/* A module cut out as a graph of its own computes what it computes inside
 * the model: run the model, feed the module's input port to the extracted
 * module, compare its output port bit for bit. */
static void test_extract(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("models/resnet18.onnx"));
    module_tree *t = tree_of(m);
    sample_set *ss = NULL;
    ait_error e = {0};
    sample_opts so = {.batch = 1, .count = 1, .seed = 3};
    assert_int_equal(samples_generate(m, &so, &ss, &e), AIT_OK);
    exec *whole = NULL, *part = NULL;
    tensor *outs[8];
    assert_int_equal(exec_create(m->g, NULL, 1, &whole, &e), AIT_OK);
    exec_keep_values(whole); /* intermediates are read after the run */
    assert_int_equal(exec_run(whole, ss->s[0].values, outs, &e), AIT_OK);
    graph *sub = NULL;
    int l = module_find(t, "layer2.0");
    assert_int_equal(graph_extract(m->g, t, l, &sub, &e), AIT_OK);
    assert_int_equal(sub->n_inputs, 1);
    assert_int_equal(sub->n_outputs, 1);
    const tensor *in = exec_value(whole, graph_find_value(m->g, sub->vals[sub->inputs[0]].name));
    const tensor *want = exec_value(whole, graph_find_value(m->g, sub->vals[sub->outputs[0]].name));
    assert_non_null(in);
    assert_non_null(want);
    tensor *got[1];
    tensor *feed[1] = {(tensor *)in};
    assert_int_equal(exec_create(sub, NULL, 1, &part, &e), AIT_OK);
    if (exec_run(part, feed, got, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(tensor_nbytes(got[0]), tensor_nbytes(want));
    assert_memory_equal(got[0]->data, want->data, tensor_nbytes(want));
    exec_free(part);
    graph_free(sub);
    exec_free(whole);
    sample_set_free(ss);
    modules_free(t);
    ait_model_free(m);
}

/* A module holding an If cut out (bad/if_captures.onnx, made by
 * make_bad_models.py): its branches, one nested, read a value made inside
 * the module (q), one made by another module (p), the If's condition and a
 * constant of the main graph. The view takes p and c as inputs, and gives
 * what the whole model computes on both branches. */
static void test_extract_if(void **state)
{
    (void)state;
    ait_model *m = test_load(test_data("bad/if_captures.onnx"));
    module_tree *t = tree_of(m);
    ait_error e = {0};
    int l = module_find(t, "blk");
    assert_true(l >= 0);
    graph *sub = NULL;
    if (graph_extract(m->g, t, l, &sub, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(sub->n_inputs, 2);
    assert_int_equal(sub->n_outputs, 1);
    const char *in0 = sub->vals[sub->inputs[0]].name, *in1 = sub->vals[sub->inputs[1]].name;
    assert_true((!strcmp(in0, "c") && !strcmp(in1, "p")) || (!strcmp(in0, "p") && !strcmp(in1, "c")));
    assert_string_equal(sub->vals[sub->outputs[0]].name, "y");
    int64_t dims[2] = {2, 3};
    tensor *x = test_rand_tensor(2, dims), *c = test_tensor(AIT_BOOL, 0, NULL);
    for (int branch = 0; branch < 2; branch++) {
        *(uint8_t *)c->data = (uint8_t)branch;
        exec *whole = NULL, *part = NULL;
        tensor *outs[1], *got[1], *feed[2];
        assert_int_equal(exec_create(m->g, NULL, 1, &whole, &e), AIT_OK);
        exec_keep_values(whole); /* intermediates are read after the run */
        tensor *ins[2] = {x, c};
        if (exec_run(whole, ins, outs, &e) != AIT_OK) fail_msg("%s", e.msg);
        for (int k = 0; k < 2; k++)
            feed[k] = (tensor *)exec_value(whole, graph_find_value(m->g, sub->vals[sub->inputs[k]].name));
        const tensor *want = exec_value(whole, graph_find_value(m->g, "y"));
        assert_non_null(feed[0]);
        assert_non_null(feed[1]);
        assert_non_null(want);
        assert_int_equal(exec_create(sub, NULL, 1, &part, &e), AIT_OK);
        if (exec_run(part, feed, got, &e) != AIT_OK) fail_msg("branch %d: %s", branch, e.msg);
        assert_int_equal(tensor_nbytes(got[0]), tensor_nbytes(want));
        assert_memory_equal(got[0]->data, want->data, tensor_nbytes(want));
        exec_free(part);
        exec_free(whole);
    }
    test_tensor_free(x);
    test_tensor_free(c);
    graph_free(sub);
    modules_free(t);
    ait_model_free(m);
}

int main(void)
{
    data = getenv("AIT_TEST_DATA");
    if (!data) {
        fprintf(stderr, "set AIT_TEST_DATA to the folder tools/test fills (models/, bad/)\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet),
        cmocka_unit_test(test_transformers),
        cmocka_unit_test(test_fallback), cmocka_unit_test(test_unscoped_work),
        cmocka_unit_test(test_glue),
        cmocka_unit_test(test_glue_resize),
        cmocka_unit_test(test_glue_fpn_add),
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_extract),
        cmocka_unit_test(test_extract_if),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
