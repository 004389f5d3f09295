/* Pre-quantised MatMuls on the native backend's int8 kernels
 * (src/backends/native/qlinear.c) against the reference backend: the
 * dynamic chain DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (as
 * onnxruntime's quantize_dynamic writes it, then a bias Add and Relu) and
 * QLinearMatMul, and DynamicQuantizeLinear alone (NaN, infinities, zeros),
 * with odd sizes, uint8 and int8 operands, per tensor and
 * per column, zero points non-zero. Both must equal the reference exactly
 * (integer sums, the same float32 steps) and be taken by the int8 step;
 * with B computed at run time, or weights whose b - zb leaves int8, the
 * nodes stay on the reference ops and the answer is the same. Every ISA of
 * this CPU and the portable kernels. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/native/native.h"
#include "kernels/isa.h"
#include "testutil.h"

/* ---- graphs built in memory ------------------------------------------------------ */

static graph *g_new(int opset)
{
    graph *g = graph_new(NULL, opset, "qlinear");
    assert_non_null(g);
    g->nodes = calloc(16, sizeof *g->nodes);
    g->inputs = calloc(8, sizeof *g->inputs);
    g->outputs = calloc(4, sizeof *g->outputs);
    assert_true(g->nodes && g->inputs && g->outputs);
    g->cap_nodes = 16;
    return g;
}

static int g_val(graph *g, const char *name, ait_dtype dt, int rank, const int64_t *dims)
{
    int v = graph_add_value(g, name);
    assert_true(v >= 0);
    g->vals[v].dtype = dt;
    g->vals[v].rank = rank;
    if (rank > 0) memcpy(g->vals[v].dims, dims, sizeof(int64_t) * (size_t)rank);
    return v;
}

static int g_const(graph *g, const char *name, ait_dtype dt, int rank, const int64_t *dims,
                   const void *data)
{
    int v = g_val(g, name, dt, rank, dims);
    tensor *t = test_tensor(dt, rank, dims);
    memcpy(t->data, data, tensor_nbytes(t));
    g->vals[v].konst = t;
    return v;
}

static int g_input(graph *g, const char *name, ait_dtype dt, int rank, const int64_t *dims)
{
    int v = g_val(g, name, dt, rank, dims);
    g->vals[v].is_input = true;
    g->inputs[g->n_inputs++] = v;
    return v;
}

/* A node over ins (-1: omitted) with n_out fresh outputs (unknown shapes:
 * the executor infers them), attribute `to` when to > 0; returns its first. */
static int g_node(graph *g, const char *op, const int *ins, int n_in, int n_out, int64_t to)
{
    int i = g->n_nodes++;
    assert_true(i < g->cap_nodes);
    node *n = &g->nodes[i];
    char name[32];
    snprintf(name, sizeof name, "n%d_%s", i, op);
    n->name = strdup(name);
    n->op = strdup(op);
    n->domain = strdup("");
    test_node_def(n, op, g->opset);
    n->n_in = n_in;
    n->n_out = n_out;
    n->in = calloc((size_t)n_in + 1, sizeof(int));
    n->out = calloc((size_t)n_out + 1, sizeof(int));
    n->attrs = calloc(2, sizeof *n->attrs);
    assert_true(n->in && n->out && n->attrs);
    memcpy(n->in, ins, sizeof(int) * (size_t)n_in);
    for (int k = 0; k < n_out; k++) {
        snprintf(name, sizeof name, "v%d_%d", i, k);
        n->out[k] = graph_add_value(g, name);
        assert_true(n->out[k] >= 0);
        g->vals[n->out[k]].producer = i;
        g->vals[n->out[k]].rank = -1;
    }
    if (to > 0) {
        n->attrs[0] = (attr){.name = strdup("to"), .type = ATTR_INT, .i = to};
        n->n_attr = 1;
    }
    return n->out[0];
}

static void g_output(graph *g, int v)
{
    g->vals[v].is_output = true;
    g->outputs[g->n_outputs++] = v;
}

/* ---- data ---------------------------------------------------------------------- */

static uint32_t seed = 12345;
static uint32_t rnd(void) { return seed = seed * 1664525u + 1013904223u; }
static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() >> 8) / 16777216.0f; }

/* n values of a uint8 (or int8) tensor in [lo, hi]. */
static void fill_q(void *d, bool is_u8, int64_t n, int lo, int hi)
{
    for (int64_t i = 0; i < n; i++) {
        int v = lo + (int)(rnd() % (uint32_t)(hi - lo + 1));
        if (is_u8) ((uint8_t *)d)[i] = (uint8_t)v;
        else ((int8_t *)d)[i] = (int8_t)v;
    }
}

/* ---- running ----------------------------------------------------------------- */

/* How many of native's steps run op `op` on a native kernel. */
static int steps_on(const built *bm, const char *op)
{
    int c = 0;
    for (int k = 0; k < bm->n_steps; k++)
        c += bm->steps[k].op && !strcmp(bm->steps[k].op->name, op);
    return c;
}

/* Runs g on native (threads 1 and 2) and the reference; every output equal
 * bit for bit; native ran `op` on its kernel `taken` times. */
static void check(graph *g, tensor *const *feed, const char *op, int taken, const char *what)
{
    const backend *nat = backend_find("native"), *ref = backend_find("reference");
    for (int threads = 1; threads <= 2; threads++) {
        candidate_cfg cn = {.backend = "native", .threads = threads},
                      cr = {.backend = "reference", .threads = 1};
        built *bn = NULL, *br = NULL;
        ait_error e = {0};
        if (nat->build(nat, g, &cn, &bn, &e) != AIT_OK) fail_msg("%s: build: %s", what, e.msg);
        assert_int_equal(ref->build(ref, g, &cr, &br, &e), AIT_OK);
        tensor *got[4], *want[4];
        if (nat->run(bn, feed, got, &e) != AIT_OK) fail_msg("%s: run: %s", what, e.msg);
        if (ref->run(br, feed, want, &e) != AIT_OK) fail_msg("%s: reference: %s", what, e.msg);
        if (steps_on(bn, op) != taken)
            fail_msg("%s: %d %s steps on the int8 kernel, expected %d", what, steps_on(bn, op), op,
                     taken);
        for (int j = 0; j < g->n_outputs; j++) {
            assert_int_equal(got[j]->dtype, want[j]->dtype);
            assert_int_equal(tensor_numel(got[j]), tensor_numel(want[j]));
            size_t nb = tensor_nbytes(want[j]);
            if (memcmp(got[j]->data, want[j]->data, nb)) {
                int64_t n = tensor_numel(want[j]), bad = 0;
                size_t es = nb / (size_t)n;
                for (int64_t i = 0; i < n; i++) {
                    const char *p = (const char *)got[j]->data + (size_t)i * es,
                               *q = (const char *)want[j]->data + (size_t)i * es;
                    if (!memcmp(p, q, es)) continue;
                    if (!bad++)
                        print_message("# %s: element %lld: %.9g, reference %.9g\n", what,
                                      (long long)i, elem_get_f64(p, want[j]->dtype, 0),
                                      elem_get_f64(q, want[j]->dtype, 0));
                }
                fail_msg("%s (threads %d): output %d differs from the reference (%lld elements)",
                         what, threads, j, (long long)bad);
            }
        }
        nat->free(bn);
        ref->free(br);
    }
}

/* Runs g on native and the reference: every float32 output within
 * float32 rounding of the reference (the sums run in another order);
 * native packed the DequantizeLinear's weights `taken` times, for qgemm
 * (q) or the float32 GEMM. */
static void check_close(graph *g, tensor *const *feed, int taken, bool q, const char *what)
{
    const backend *nat = backend_find("native"), *ref = backend_find("reference");
    candidate_cfg cn = {.backend = "native", .threads = 1}, cr = {.backend = "reference", .threads = 1};
    built *bn = NULL, *br = NULL;
    ait_error e = {0};
    if (nat->build(nat, g, &cn, &bn, &e) != AIT_OK) fail_msg("%s: build: %s", what, e.msg);
    assert_int_equal(ref->build(ref, g, &cr, &br, &e), AIT_OK);
    tensor *got[4], *want[4];
    if (nat->run(bn, feed, got, &e) != AIT_OK) fail_msg("%s: run: %s", what, e.msg);
    if (ref->run(br, feed, want, &e) != AIT_OK) fail_msg("%s: reference: %s", what, e.msg);
    if (steps_on(bn, "DequantizeLinear") != taken)
        fail_msg("%s: %d DequantizeLinear steps packed, expected %d", what,
                 steps_on(bn, "DequantizeLinear"), taken);
    int qs = 0;
    for (int k = 0; k < bn->n_steps; k++) {
        const nat_pack *p = &bn->packs[bn->steps[k].node];
        qs += bn->steps[k].op && !strcmp(bn->steps[k].op->name, "MatMul") && p->data &&
              p->qv.w != NULL;
    }
    if (taken && qs != (q ? 1 : 0)) fail_msg("%s: %d MatMuls on qgemm, expected %d", what, qs, q);
    const float *a = got[0]->data, *b = want[0]->data;
    int64_t n = tensor_numel(want[0]);
    double mx = 0, err = 0;
    for (int64_t i = 0; i < n; i++) {
        mx = fmax(mx, fabs(b[i]));
        err = fmax(err, fabs((double)a[i] - b[i]));
    }
    if (!(err <= 1e-5 * (1 + mx))) fail_msg("%s: max error %g (largest %g)", what, err, mx);
    nat->free(bn);
    ref->free(br);
}

/* Every ISA this CPU has (the best, AVX2), then portable. */
static void each_isa(void (*fn)(const char *isa))
{
    static const kisa caps[] = {KISA_N, KISA_AVX2, KISA_PORTABLE};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        if (!kisa_force(caps[c])) continue;
        fn(kisa_name(kisa_active()));
    }
    kisa_force(KISA_N);
}

/* ---- DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> Add -> Relu --------- */

typedef struct dyn_case {
    int64_t m, k, n;
    bool b_u8, per_col, b_konst;
    int zb;        /* B's zero point (all columns; per column: zb + j % 3) */
    int lo, hi;    /* B's range */
    int taken;
} dyn_case;

static void dyn_run(const dyn_case *c, const char *isa)
{
    graph *g = g_new(13);
    int64_t ad[3] = {2, c->m, c->k}, bd[2] = {c->k, c->n}, nd[1] = {c->n};
    int x = g_input(g, "x", AIT_F32, 3, ad);
    size_t kn = (size_t)(c->k * c->n);
    void *b = malloc(kn);
    int8_t zb8[64];
    float ws[64], bias[64];
    assert_true(b && c->n <= 64);
    fill_q(b, c->b_u8, (int64_t)kn, c->lo, c->hi);
    for (int64_t j = 0; j < c->n; j++) {
        int z = c->zb + (c->per_col ? (int)(j % 3) : 0);
        zb8[j] = (int8_t)(c->b_u8 ? (uint8_t)z : z);
        ws[j] = frand(0.001f, 0.02f);
        bias[j] = frand(-1, 1);
    }
    ait_dtype bt = c->b_u8 ? AIT_U8 : AIT_I8;
    int bv = c->b_konst ? g_const(g, "B", bt, 2, bd, b) : g_input(g, "B", bt, 2, bd);
    int zbv = g_const(g, "B_zp", bt, c->per_col ? 1 : 0, nd, zb8);
    int wsv = g_const(g, "W_scale", AIT_F32, c->per_col ? 1 : 0, nd, ws);
    int biasv = g_const(g, "bias", AIT_F32, 1, nd, bias);
    int q = g_node(g, "DynamicQuantizeLinear", &x, 1, 3, 0);
    int mmi = g_node(g, "MatMulInteger", (int[]){q, bv, q + 2, zbv}, 4, 1, 0);
    int cast = g_node(g, "Cast", &mmi, 1, 1, AIT_F32);
    int s = g_node(g, "Mul", (int[]){q + 1, wsv}, 2, 1, 0);
    int y = g_node(g, "Mul", (int[]){cast, s}, 2, 1, 0);
    int z = g_node(g, "Add", (int[]){y, biasv}, 2, 1, 0);
    g_output(g, g_node(g, "Relu", &z, 1, 1, 0));
    tensor *feed[2] = {test_rand_tensor(3, ad), NULL};
    if (!c->b_konst) {
        feed[1] = test_tensor(bt, 2, bd);
        memcpy(feed[1]->data, b, kn);
    }
    char what[160];
    snprintf(what, sizeof what, "dynamic %lldx%lldx%lld %s%s zb %d%s, %s", (long long)c->m,
             (long long)c->k, (long long)c->n, c->b_u8 ? "uint8" : "int8",
             c->per_col ? " per column" : "", c->zb, c->b_konst ? "" : ", B an input", isa);
    check(g, feed, "MatMulInteger", c->taken, what);
    for (int k = 0; k < 2; k++)
        if (feed[k]) test_tensor_free(feed[k]);
    free(b);
    graph_free(g);
}

static const dyn_case *dyn_now;
static void dyn_isa(const char *isa) { dyn_run(dyn_now, isa); }

static void test_dynamic(void **state)
{
    (void)state;
    static const dyn_case cases[] = {
        {1, 8, 16, false, false, true, 0, -127, 127, 1},   /* ORT's symmetric int8 */
        {5, 37, 29, false, true, true, 3, -120, 120, 1},   /* odd K: padded rows */
        {3, 64, 33, true, false, true, 128, 0, 255, 1},    /* uint8 around 128 */
        {7, 23, 17, true, true, true, 100, 0, 220, 1},     /* uint8, per column zero points */
        {4, 19, 21, true, false, true, 10, 0, 255, 0},     /* b - zb leaves int8: reference */
        {3, 16, 20, false, false, false, 2, -100, 100, 0}, /* B an input: reference */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dyn_now = &cases[i];
        each_isa(dyn_isa);
    }
}

/* ---- QLinearMatMul ----------------------------------------------------------- */

typedef struct qlmm_case {
    int64_t m, k, n;
    bool a_u8, b_u8, y_u8, per_col;
    int za, zb, zy;
    int taken;
} qlmm_case;

static void qlmm_run(const qlmm_case *c, const char *isa)
{
    graph *g = g_new(13);
    int64_t ad[2] = {c->m, c->k}, bd[2] = {c->k, c->n}, nd[1] = {c->n};
    ait_dtype at = c->a_u8 ? AIT_U8 : AIT_I8, bt = c->b_u8 ? AIT_U8 : AIT_I8,
              yt = c->y_u8 ? AIT_U8 : AIT_I8;
    size_t kn = (size_t)(c->k * c->n);
    void *b = malloc(kn);
    int8_t zb8[64], za8 = (int8_t)c->za, zy8 = (int8_t)c->zy;
    float sb[64], sa = 0.02f, sy = 0.7f;
    assert_true(b && c->n <= 64);
    /* b - zb within int8 (zero points near 128 for uint8, small for int8) */
    int lo = c->zb - 125 < 0 ? 0 : c->zb - 125, hi = c->zb + 124 > 255 ? 255 : c->zb + 124;
    fill_q(b, c->b_u8, (int64_t)kn, c->b_u8 ? lo : -120, c->b_u8 ? hi : 120);
    for (int64_t j = 0; j < c->n; j++) {
        int z = c->zb + (c->per_col ? (int)(j % 3) - 1 : 0);
        zb8[j] = (int8_t)(c->b_u8 ? (uint8_t)z : z);
        sb[j] = frand(0.005f, 0.03f);
    }
    int a = g_input(g, "a", at, 2, ad);
    int ins[8] = {a,
                  g_const(g, "a_scale", AIT_F32, 0, NULL, &sa),
                  g_const(g, "a_zp", at, 0, NULL, &za8),
                  g_const(g, "b", bt, 2, bd, b),
                  g_const(g, "b_scale", AIT_F32, c->per_col, nd, sb),
                  g_const(g, "b_zp", bt, c->per_col, nd, zb8),
                  g_const(g, "y_scale", AIT_F32, 0, NULL, &sy),
                  g_const(g, "y_zp", yt, 0, NULL, &zy8)};
    g_output(g, g_node(g, "QLinearMatMul", ins, 8, 1, 0));
    tensor *feed = test_tensor(at, 2, ad);
    fill_q(feed->data, c->a_u8, c->m * c->k, c->a_u8 ? 0 : -128, c->a_u8 ? 255 : 127);
    char what[160];
    snprintf(what, sizeof what, "QLinearMatMul %lldx%lldx%lld a %s b %s y %s%s, %s",
             (long long)c->m, (long long)c->k, (long long)c->n, ait_dtype_name(at),
             ait_dtype_name(bt), ait_dtype_name(yt), c->per_col ? " per column" : "", isa);
    check(g, &feed, "QLinearMatMul", c->taken, what);
    test_tensor_free(feed);
    free(b);
    graph_free(g);
}

static const qlmm_case *qlmm_now;
static void qlmm_isa(const char *isa) { qlmm_run(qlmm_now, isa); }

static void test_qlinear_matmul(void **state)
{
    (void)state;
    static const qlmm_case cases[] = {
        {1, 16, 16, true, false, true, false, 128, 0, 128, 1},
        {5, 31, 23, true, true, true, true, 117, 130, 100, 1},
        {6, 45, 19, false, false, false, true, -3, 2, -5, 1},
        {2, 13, 35, false, true, false, false, 7, 120, 3, 1},
        /* 255 * sum |b - zb| past 2^24: float32 would round the sums: reference */
        {2, 1500, 16, true, false, true, false, 128, 0, 128, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qlmm_now = &cases[i];
        each_isa(qlmm_isa);
    }
}

/* ---- DynamicQuantizeLinear alone ----------------------------------------------- */

typedef struct dq_case {
    int64_t n;
    int kind; /* 0 random, 1 zeros, 2 positive only, 3 with NaN and infinities, 4 huge */
} dq_case;

static void dq_run(const dq_case *c, const char *isa)
{
    graph *g = g_new(13);
    int64_t d[1] = {c->n};
    int x = g_input(g, "x", AIT_F32, 1, d);
    int y = g_node(g, "DynamicQuantizeLinear", &x, 1, 3, 0);
    for (int k = 0; k < 3; k++) g_output(g, y + k);
    tensor *feed = test_rand_tensor(1, d);
    float *v = feed->data;
    for (int64_t i = 0; i < c->n; i++) {
        if (c->kind == 1) v[i] = 0;
        if (c->kind == 2) v[i] = fabsf(v[i]) + 0.5f;
        if (c->kind == 3 && i % 7 == 3) v[i] = i % 2 ? NAN : (i % 3 ? INFINITY : -INFINITY);
        if (c->kind == 4) v[i] *= 3e38f;
    }
    char what[96];
    snprintf(what, sizeof what, "DynamicQuantizeLinear n %lld kind %d, %s", (long long)c->n, c->kind,
             isa);
    check(g, &feed, "DynamicQuantizeLinear", 1, what);
    test_tensor_free(feed);
    graph_free(g);
}

static const dq_case *dq_now;
static void dq_isa(const char *isa) { dq_run(dq_now, isa); }

static void test_dynamic_quantize(void **state)
{
    (void)state;
    static const dq_case cases[] = {{1, 0}, {15, 0}, {16, 0}, {17, 0}, {1000, 0}, {33, 1},
                                    {31, 2}, {40, 3}, {29, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dq_now = &cases[i];
        each_isa(dq_isa);
    }
}

/* ---- DequantizeLinear(constant weights) -> MatMul -> Add ------------------------ */

typedef struct qdq_case {
    int64_t m, k, n;
    ait_dtype wt;   /* int8, uint8, int4, uint4 */
    bool per_col;   /* int8: per column scales (int4: always blocks) */
    int64_t block;  /* int4: 32, 64, 128 */
    int zp;         /* zero point base (per column: + j % 3) */
    bool w_konst;   /* false: the weights are an input (exec folds nothing, native packs nothing) */
    bool q_kernel;  /* the MatMul has <= 16 rows: the weight-only kernels */
} qdq_case;

static void qdq_run(const qdq_case *c, const char *isa)
{
    graph *g = g_new(21);
    int64_t ad[2] = {c->m, c->k}, wd[2] = {c->k, c->n}, nd[1] = {c->n};
    bool i4 = c->wt == AIT_I4 || c->wt == AIT_U4, sgn = c->wt == AIT_I8 || c->wt == AIT_I4;
    int64_t nb = i4 ? (c->k + c->block - 1) / c->block : 1, sd[2] = {nb, c->n};
    size_t kn = (size_t)(c->k * c->n), ns = (size_t)(i4 ? nb * c->n : c->per_col ? c->n : 1);
    int8_t *w = malloc(kn), *z = malloc(ns);
    float *sc = malloc(sizeof(float) * ns), bias[64];
    assert_true(w && z && sc && c->n <= 64);
    int lo = i4 ? (sgn ? -8 : 0) : (sgn ? -120 : c->zp - 120), hi = i4 ? (sgn ? 7 : 15) : (sgn ? 120 : c->zp + 120);
    fill_q(w, !sgn, (int64_t)kn, lo, hi);
    for (size_t i = 0; i < ns; i++) {
        int v = c->zp + (int)(i % 3);
        z[i] = (int8_t)(sgn ? v : (int)(uint8_t)v);
        sc[i] = frand(0.002f, 0.03f);
    }
    for (int64_t j = 0; j < c->n; j++) bias[j] = frand(-1, 1);
    int x = g_input(g, "x", AIT_F32, 2, ad);
    int wv = c->w_konst ? g_const(g, "W", c->wt, 2, wd, w) : g_input(g, "W", c->wt, 2, wd);
    int sv = i4 ? g_const(g, "W_scale", AIT_F32, 2, sd, sc)
                : g_const(g, "W_scale", AIT_F32, c->per_col ? 1 : 0, nd, sc);
    int zv = i4 ? g_const(g, "W_zp", c->wt, 2, sd, z) : g_const(g, "W_zp", c->wt, c->per_col ? 1 : 0, nd, z);
    int dq = g_node(g, "DequantizeLinear", (int[]){wv, sv, zv}, 3, 1, 0);
    node *dn = &g->nodes[g->n_nodes - 1];
    dn->attrs[0] = (attr){.name = strdup("axis"), .type = ATTR_INT, .i = i4 ? 0 : 1};
    dn->attrs[1] = (attr){.name = strdup("block_size"), .type = ATTR_INT, .i = i4 ? c->block : 0};
    dn->n_attr = 2;
    int y = g_node(g, "MatMul", (int[]){x, dq}, 2, 1, 0);
    g_output(g, g_node(g, "Add", (int[]){y, g_const(g, "bias", AIT_F32, 1, nd, bias)}, 2, 1, 0));
    tensor *feed[2] = {test_rand_tensor(2, ad), NULL};
    if (!c->w_konst) {
        feed[1] = test_tensor(c->wt, 2, wd);
        memcpy(feed[1]->data, w, kn);
    }
    char what[160];
    snprintf(what, sizeof what, "QDQ weights %lldx%lldx%lld %s%s block %lld zp %d%s, %s",
             (long long)c->m, (long long)c->k, (long long)c->n, ait_dtype_name(c->wt),
             c->per_col ? " per column" : "", (long long)c->block, c->zp,
             c->w_konst ? "" : ", W an input", isa);
    check_close(g, feed, c->w_konst ? 1 : 0, c->q_kernel, what);
    for (int k = 0; k < 2; k++)
        if (feed[k]) test_tensor_free(feed[k]);
    free(w);
    free(z);
    free(sc);
    graph_free(g);
}

static const qdq_case *qdq_now;
static void qdq_isa(const char *isa) { qdq_run(qdq_now, isa); }

static void test_qdq_weights(void **state)
{
    (void)state;
    static const qdq_case cases[] = {
        {1, 37, 21, AIT_I8, false, 0, 0, true, true},
        {5, 64, 33, AIT_I8, true, 0, 3, true, true},
        {3, 45, 17, AIT_U8, true, 0, 128, true, true},
        {40, 29, 19, AIT_U8, false, 0, 120, true, false}, /* 40 rows: dequantised, float GEMM */
        {2, 70, 18, AIT_U4, false, 32, 8, true, true},    /* short last block */
        {4, 128, 35, AIT_I4, false, 64, -1, true, true},
        {3, 130, 16, AIT_U4, false, 128, 5, true, true},
        {33, 96, 20, AIT_I4, false, 32, 1, true, false},
        {3, 20, 16, AIT_I8, true, 0, 2, false, false},   /* weights an input: reference */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qdq_now = &cases[i];
        each_isa(qdq_isa);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic),
        cmocka_unit_test(test_qlinear_matmul),
        cmocka_unit_test(test_dynamic_quantize),
        cmocka_unit_test(test_qdq_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
