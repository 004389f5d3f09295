/* The fusion passes (graph/fuse.h): what each finds in the small models of
 * tests/unit/make_fusion_models.py ($AIT_TEST_DATA/fusion) and in the
 * exported models, that a fused descriptor computed by fuse_eval gives the
 * unfused graph's value, and that intermediates read twice, graph outputs
 * in the middle and constants that are not per-channel stop a fusion. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#include "testutil.h"
#include "exec/exec.h"
#include "graph/fuse.h"
#include "io/npy.h"
#include "kernels/eltwise.h"
#include "runtime/model.h"

static const tensor *shape_of(void *ctx, int v)
{
    return exec_value(ctx, v);
}

/* One line per fusion: kind, then its steps or parts. */
static void signature(const graph *g, const fusion_set *s, char *buf, size_t n)
{
    static const char *const ops[] = {"add", "sub", "rsub", "mul", "div", "rdiv", "max", "min"};
    static const char srcs[] = "sctx";
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n; i++) {
        const fusion *f = &s->f[i];
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? " | " : "",
                               f->kind == FK_LAYERNORM && f->rms ? "rmsnorm" : fuse_kind_name(f->kind));
        if (f->kind == FK_EPILOGUE)
            at += (size_t)snprintf(buf + at, n - at, "(%s)", g->nodes[f->node].op);
        at += (size_t)snprintf(buf + at, n - at, ":");
        for (int k = 0; k < f->n_steps; k++) {
            const fuse_step *st = &f->steps[k];
            if (st->op == FO_FUN)
                at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? "," : "", fuse_fn_name(st->f));
            else
                at += (size_t)snprintf(buf + at, n - at, "%s%s.%c", k ? "," : "", ops[st->op],
                                       srcs[st->src]);
        }
        if (f->kind == FK_LAYERNORM)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", f->ln_scale >= 0 ? "scale" : "",
                                   f->ln_bias >= 0 ? ",bias" : "");
        if (f->kind == FK_ATTENTION)
            at += (size_t)snprintf(buf + at, n - at, "%s%s%s%s%s%s",
                                   f->att.mask >= 0 ? "mask" : "",
                                   f->att.bmask >= 0 ? ",where" : "",
                                   f->att.kp.v >= 0 ? ",past" : "",
                                   f->att.kv_rep > 1 ? ",gqa" : "",
                                   f->att.q.v != f->att.q.lay ? ",qsplit" : "",
                                   f->att.y.v != f->att.y.lay ? ",ymerge" : "");
        if (at >= n) at = n - 1;
    }
}

/* Runs m on inputs, finds the fusions with the run's shapes and checks each
 * one's fuse_eval (and fixed form, and kernel program) against the value the
 * unfused graph computed. */
/* How far y is from want (largest |a - b| / (1 + |b|)). */
static double off(const tensor *y, const tensor *want)
{
    assert_int_equal(tensor_numel(y), tensor_numel(want));
    double worst = 0;
    for (int64_t k = 0; k < tensor_numel(want); k++) {
        double a = ((const float *)y->data)[k], b = ((const float *)want->data)[k];
        double d = fabs(a - b) / (1 + fabs(b));
        if (!(d <= worst)) worst = d;
    }
    return worst;
}

/* The step layout is the element-wise kernel's: the enums line up. */
_Static_assert((int)FO_FUN == (int)KEW_FUN && (int)FO_RDIV == (int)KEW_RDIV, "fuse_op");
_Static_assert((int)FS_INPUT == (int)KEW_INPUT && (int)FS_CHANNEL == (int)KEW_CHANNEL, "fuse_src");
_Static_assert((int)FF_LEAKY_RELU == (int)KF_LEAKY_RELU && (int)FF_SILU == (int)KF_SILU &&
                   (int)FF_GELU_TANH == (int)KF_GELU_TANH,
               "fuse_fn");

/* Steps f as the kernel's program over x (false when a function has no
 * kernel yet): copied field by field, as a backend would. */
static bool as_kew(const fusion *f, const tensor *x, const tensor *const *vals, kew_prog *p)
{
    memset(p, 0, sizeof *p);
    p->n = f->n_steps;
    p->channels = p->inner = 1;
    for (int k = 0; k < f->n_steps; k++) {
        const fuse_step *st = &f->steps[k];
        if (st->op == FO_FUN && st->f > FF_LEAKY_RELU) return false;
        p->s[k] = (kew_step){.op = (kew_op)st->op, .src = (kew_src)st->src, .f = (kfun)st->f,
                             .a = st->a, .b = st->b, .p = st->p};
        if (st->src == FS_TENSOR) p->s[k].p = vals[st->v]->data;
        if (st->src == FS_CHANNEL) {
            int a = f->axis < 0 ? x->rank - 1 : f->axis;
            p->channels = (size_t)x->dims[a];
            p->inner = 1;
            for (int d = a + 1; d < x->rank; d++) p->inner *= (size_t)x->dims[d];
        }
    }
    return true;
}

static fusion_set *check_fusions(const ait_model *m, tensor *const *in, exec **xo)
{
    const graph *g = m->g;
    ait_error e = {0};
    exec *x = NULL;
    assert_int_equal(exec_create(g, NULL, 1, &x, &e), AIT_OK);
    exec_keep_values(x); /* every value is read after the run */
    tensor **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (exec_run(x, in, outs, &e) != AIT_OK) fail_msg("run: %s", e.msg);
    free(outs);
    fusion_set *s = NULL;
    if (fuse_find(g, shape_of, x, &s, &e) != AIT_OK) fail_msg("fuse_find: %s", e.msg);
    const tensor **vals = calloc((size_t)g->n_vals + 1, sizeof *vals);
    for (int v = 0; v < g->n_vals; v++)
        vals[v] = g->vals[v].konst ? g->vals[v].konst : exec_value(x, v);
    int fixed = 0, epis = fuse_count(s, FK_EPILOGUE);
    for (int i = 0; i < s->n; i++) {
        const fusion *f = &s->f[i];
        tensor y = {0};
        if (fuse_eval(f, g, vals, &y, &e) != AIT_OK) fail_msg("fusion %d: %s", i, e.msg);
        const tensor *want = vals[f->out];
        assert_non_null(want);
        double worst = off(&y, want);
        if (f->fixed.ok) { /* the fixed form computes the same */
            if (fuse_eval_fixed(f, vals, &y, &e) != AIT_OK) fail_msg("fusion %d: %s", i, e.msg);
            double w2 = off(&y, want);
            if (!(w2 <= worst)) worst = w2;
            fixed++;
        }
        kew_prog kp;
        if ((f->kind == FK_EPILOGUE || f->kind == FK_CHAIN) && as_kew(f, vals[f->in], vals, &kp)) {
            kew_run(&kp, vals[f->in]->data, y.data, (size_t)tensor_numel(want), 1);
            double w3 = off(&y, want);
            if (!(w3 <= worst)) worst = w3;
        }
        if (!(worst < 1e-4))
            fail_msg("fusion %d (%s at node %s): off by %g", i, fuse_kind_name(f->kind),
                     g->nodes[f->node].name, worst);
        /* Its nodes are all marked, its output is the last node's. */
        for (int k = 0; k < f->n_nodes; k++) assert_int_equal(s->of_node[f->nodes[k]], i);
        assert_int_equal(g->vals[f->out].producer, f->last);
        tensor_release(&y);
    }
    free(vals);
    /* Every epilogue the passes find in these models fits the fixed form. */
    assert_int_equal(fixed, epis);
    if (xo) *xo = x;
    else exec_free(x);
    return s;
}

static void small(const char *name, const char *want)
{
    char path[256];
    snprintf(path, sizeof path, "fusion/%s.onnx", name);
    ait_model *m = test_load(test_data(path));
    const graph *g = m->g;
    tensor *in[8] = {0};
    for (int i = 0; i < g->n_inputs; i++) {
        const value *v = &g->vals[g->inputs[i]];
        in[i] = test_rand_tensor(v->rank, v->dims);
    }
    fusion_set *s = check_fusions(m, in, NULL);
    char got[2048];
    signature(g, s, got, sizeof got);
    if (strcmp(got, want)) fail_msg("%s:\n got  %s\n want %s", name, got, want);
    fusion_set_free(s);
    for (int i = 0; i < g->n_inputs; i++) test_tensor_free(in[i]);
    ait_model_free(m);
}

static void test_conv_bn(void **state)
{
    (void)state;
    small("conv_bn_relu_add", "epilogue(Conv):mul.c,add.c,relu,add.t,relu");
}

static void test_matmul(void **state)
{
    (void)state;
    small("matmul_bias_act", "epilogue(MatMul):add.c,gelu_erf | epilogue(Gemm):relu"
                             " | epilogue(MatMul):add.c,gelu_tanh");
}

static void test_conv_acts(void **state)
{
    (void)state;
    small("conv_acts", "epilogue(Conv):silu | epilogue(Conv):hardswish"
                       " | epilogue(Conv):mul.c,add.c,clip,mul.s"
                       " | epilogue(ConvTranspose):leaky_relu");
}

static void test_act_forms(void **state)
{
    (void)state;
    small("act_forms", "chain:silu | chain:hardswish | chain:hardswish | chain:hardswish"
                       " | chain:hardsigmoid | chain:mish | chain:gelu_erf | chain:gelu_erf"
                       " | chain:gelu_erf | chain:gelu_tanh");
}

static void test_chain(void **state)
{
    (void)state;
    small("chain", "chain:mul.c,add.s,relu,mul.t,rsub.s");
}

static void test_layernorm(void **state)
{
    (void)state;
    small("layernorm", "layernorm:scale,bias");
    small("layernorm_mul", "layernorm:scale");
    small("rmsnorm", "rmsnorm:scale");
    small("rmsnorm_recip", "rmsnorm:scale,bias");
    small("rmsnorm_div", "rmsnorm:");
}

static void test_attention(void **state)
{
    (void)state;
    small("attention", "attention:mask");
    small("attention_mul", "attention:");
}

static void test_negative(void **state)
{
    (void)state;
    small("neg_output", "");
    small("neg_two_readers", "");
    small("neg_not_channel", "");
    small("neg_middle_output", "epilogue(Conv):relu");
    small("neg_silu", "");
    small("neg_grow", "");
}

/* The exported models with their first sample: counts per kind. */
static void real(const char *name, const int *want, const char *must)
{
    char path[256];
    snprintf(path, sizeof path, "models/%s.onnx", name);
    ait_model *m = test_load(test_data(path));
    snprintf(path, sizeof path, "models/%s.in.0.npz", name);
    npz *z = NULL;
    ait_error e = {0};
    if (npz_load(test_data(path), &z, &e) != AIT_OK) fail_msg("%s", e.msg);
    tensor *in[16] = {0};
    for (int i = 0; i < m->g->n_inputs; i++)
        for (int k = 0; k < z->n; k++)
            if (!strcmp(z->names[k], m->g->vals[m->g->inputs[i]].name)) in[i] = z->arrays[k];
    fusion_set *s = check_fusions(m, in, NULL);
    char got[16384];
    signature(m->g, s, got, sizeof got);
    for (int k = 0; k < FK_N; k++)
        if (fuse_count(s, k) != want[k])
            fail_msg("%s: %d %s fusions, want %d\n%s", name, fuse_count(s, k),
                     fuse_kind_name(k), want[k], got);
    if (must && !strstr(got, must)) fail_msg("%s lacks '%s':\n%s", name, must, got);
    fusion_set_free(s);
    npz_free(z);
    ait_model_free(m);
}

static void test_resnet18(void **state)
{
    (void)state;
    /* BatchNorm is folded by the exporter: 20 Convs, 17 ReLUs, 8 residual
     * Adds; every Conv but the 3 downsample ones (whose Add the block's
     * second Conv, earlier in order, took) has one. */
    static const int want[FK_N] = {17, 0, 0, 0};
    real("resnet18", want, "epilogue(Conv):add.t,relu");
}

static void test_mobilenetv2(void **state)
{
    (void)state;
    /* 52 Convs: 35 with relu6 (Clip), 10 projections absorbing the residual
     * Add; the classifier Gemm has nothing after it. */
    static const int want[FK_N] = {45, 0, 0, 0};
    real("mobilenetv2", want, "epilogue(Conv):clip");
}

static void test_bert(void **state)
{
    (void)state;
    /* 4 layers: attention; the FFN's MatMul + bias + GELU; the other
     * MatMuls + bias (Q, K, V, output dense, FFN out; the residual Add
     * follows the bias Add); the mask's (1 - mask) * -10000 is a chain. */
    static const int want[FK_N] = {24, 1, 0, 4};
    real("bert", want, "epilogue(MatMul):add.c,gelu_erf");
    real("bert", want, "attention:mask,qsplit,ymerge");
}

static void test_gpt2(void **state)
{
    (void)state;
    static const int want[FK_N] = {12, 0, 0, 2};
    real("gpt2", want, "attention:mask,past,qsplit,ymerge");
}

static void test_llama(void **state)
{
    (void)state;
    /* 2 layers: attention with past keys and values and grouped kv heads;
     * per layer the residual Adds after o_proj and down_proj, gate_proj + SiLU
     * (Q comes from the rotary embedding, whole); RMSNorm written out; the
     * rotary embedding of Q and of K in each layer */
    static const int want[FK_N] = {6, 0, 5, 2, 4};
    real("llama", want, "attention:mask,past,gqa,ymerge");
    real("llama", want, "rotary:");
    real("llama", want, "rmsnorm:scale"); /* 2 per layer and the final norm */
}

/* Every ONNX node-test model that loads: the passes run without shapes and
 * with the declared ones, and whatever they find is well formed. */
static void test_node_models(void **state)
{
    (void)state;
    const char *dir = test_data("node");
    DIR *d = opendir(dir);
    if (!d) skip();
    int seen = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, de->d_name);
        ait_model *m = NULL;
        ait_error e = {0};
        if (ait_model_load(path, &m, &e) != AIT_OK) continue;
        fusion_set *s = NULL;
        if (fuse_find(m->g, NULL, NULL, &s, &e) != AIT_OK) fail_msg("%s: %s", path, e.msg);
        for (int i = 0; i < s->n; i++) {
            const fusion *f = &s->f[i];
            assert_true(f->out >= 0 && f->out < m->g->n_vals);
            assert_true(f->n_steps <= FUSE_MAX_STEPS);
            for (int k = 0; k < f->n_nodes; k++) assert_int_equal(s->of_node[f->nodes[k]], i);
        }
        fusion_set_free(s);
        ait_model_free(m);
        seen++;
    }
    closedir(d);
    assert_true(seen > 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_bn),     cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_conv_acts),   cmocka_unit_test(test_act_forms),
        cmocka_unit_test(test_chain),       cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_attention),   cmocka_unit_test(test_negative),
        cmocka_unit_test(test_resnet18),    cmocka_unit_test(test_mobilenetv2),
        cmocka_unit_test(test_bert),        cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_llama),
        cmocka_unit_test(test_node_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
