/* Micro-benchmark of src/kernels/ (not in the test suite): each kernel's
 * GFLOP/s or GB/s at the CPU's best ISA (or the one named by --isa), 1 thread
 * by default, against ait's reference op on the same data (one-node graph on
 * the reference backend), one run of best-of-N timings.
 * usage: bench-kernels [--isa portable|avx2|avx512] [--threads N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"
#include "backends/backend.h"
#include "core/tensor.h"
#include "graph/graph.h"
#include "kernels/attn.h"
#include "kernels/convt.h"
#include "kernels/dwconv.h"
#include "kernels/eltwise.h"
#include "kernels/isa.h"
#include "kernels/norm.h"
#include "kernels/pool.h"
#include "kernels/resize.h"
#include "ops/op.h"

static int threads = 1;

static float *frand(size_t n)
{
    float *p = malloc(n * sizeof *p + 1);
    unsigned s = 12345;
    for (size_t i = 0; i < n; i++) s = s * 1664525u + 1013904223u, p[i] = (float)((s >> 9) & 0xffff) / 32768.0f - 1;
    return p;
}

static tensor *tnew(ait_dtype dt, int rank, const int64_t *dims, const void *data)
{
    tensor *t = calloc(1, sizeof *t);
    ait_error e = {0};
    tensor_set_shape(t, dt, rank, dims);
    if (tensor_alloc(t, &e) != AIT_OK) abort();
    memcpy(t->data, data, tensor_nbytes(t));
    return t;
}

/* ---- the reference op: one node, input x, constants, attributes ---------- */
typedef struct one {
    graph *g;
    node *n;
    tensor *x;
} one;

static one one_new(const char *op, int rank, const int64_t *dims, const float *data)
{
    one o = {graph_new(NULL, 17, "bench"), NULL, NULL};
    graph *g = o.g;
    g->nodes = calloc(1, sizeof *g->nodes), g->inputs = calloc(1, sizeof(int));
    g->outputs = calloc(1, sizeof(int));
    node *n = o.n = &g->nodes[0];
    g->n_nodes = g->cap_nodes = 1;
    n->name = strdup("n0"), n->op = strdup(op), n->domain = strdup("");
    n->def = op_find("", op);
    n->in = calloc(4, sizeof(int)), n->out = calloc(1, sizeof(int));
    n->attrs = calloc(12, sizeof *n->attrs);
    int v = graph_add_value(g, "x");
    g->vals[v].dtype = AIT_F32, g->vals[v].rank = rank, g->vals[v].is_input = true;
    memcpy(g->vals[v].dims, dims, sizeof(int64_t) * (size_t)rank);
    g->inputs[g->n_inputs++] = v;
    n->in[n->n_in++] = v;
    o.x = tnew(AIT_F32, rank, dims, data);
    int y = graph_add_value(g, "y");
    g->vals[y].producer = 0, g->vals[y].is_output = true;
    g->outputs[g->n_outputs++] = y;
    n->out[0] = y, n->n_out = 1;
    return o;
}

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
    d->konst = tnew(dt, rank, dims, data);
    n->in[n->n_in++] = v;
}

static attr *one_attr(one *o, const char *name, attr_type t)
{
    attr *a = &o->n->attrs[o->n->n_attr++];
    a->name = strdup(name), a->type = t;
    return a;
}
static void attr_i(one *o, const char *name, int64_t v) { one_attr(o, name, ATTR_INT)->i = v; }
static void attr_s(one *o, const char *name, const char *v) { one_attr(o, name, ATTR_STRING)->s = strdup(v); }
static void attr_is(one *o, const char *name, int k, const int64_t *v)
{
    attr *a = one_attr(o, name, ATTR_INTS);
    a->n = k, a->ints = malloc(sizeof(int64_t) * (size_t)k);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)k);
}

/* Best of `reps` reference runs in seconds (build excluded); -1 on error. */
static double one_time(one *o, int reps)
{
    const backend *ref = backend_find("reference");
    candidate_cfg cr = {.backend = "reference", .threads = threads};
    built *br = NULL;
    ait_error e = {0};
    if (ref->build(ref, o->g, &cr, &br, &e) != AIT_OK) {
        fprintf(stderr, "%s: %s\n", o->n->op, e.msg);
        return -1;
    }
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        tensor *out[1];
        double t0 = now_s();
        if (ref->run(br, &o->x, out, &e) != AIT_OK) return -1;
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    ref->free(br);
    graph_free(o->g);
    tensor_release(o->x);
    free(o->x);
    return best;
}

#define BEST(reps, CALL)                                                                   \
    ({                                                                                     \
        double best_ = INFINITY;                                                           \
        for (int r_ = 0; r_ < (reps); r_++) {                                              \
            double t0_ = now_s();                                                          \
            CALL;                                                                          \
            double t_ = now_s() - t0_;                                                     \
            best_ = t_ < best_ ? t_ : best_;                                               \
        }                                                                                  \
        best_;                                                                             \
    })

/* units: work per run (flops or bytes) and its name */
static void row(const char *what, double work, const char *unit, double tk, double tr)
{
    printf("%-44s %9.2f %-7s %9.3f ms   ref %9.3f ms   x%6.1f\n", what, work / tk * 1e-9, unit,
           tk * 1e3, tr * 1e3, tr > 0 ? tr / tk : NAN);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc) {
            const char *s = argv[++i];
            kisa k = !strcmp(s, "portable") ? KISA_PORTABLE : !strcmp(s, "avx2") ? KISA_AVX2 : KISA_AVX512;
            if (!kisa_force(k)) return fprintf(stderr, "this CPU lacks %s\n", s), 1;
        }
    }
    printf("isa %s, %d thread(s); kernel rate, kernel and reference time (best of runs), speed-up\n",
           kisa_name(kisa_active()), threads);
    { /* depthwise 3x3 s1 + hardswish, and 5x5 s2 */
        int c = 96, h = 56;
        int64_t dims[4] = {1, c, h, h}, wd[4] = {c, 1, 3, 3}, bd = c;
        float *x = frand((size_t)c * h * h), *w = frand((size_t)c * 25), *b = frand(c);
        float *y = malloc((size_t)c * h * h * sizeof *y);
        kdw_geom g = {1, c, h, h, 1, 3, 3, 1, 1, 1, 1, 1, 1, h, h};
        double tk = BEST(20, kdw_run(&g, x, w, b, (kact){KF_HARDSWISH, 0, 0}, y, threads));
        one o = one_new("Conv", 4, dims, x);
        one_const(&o, AIT_F32, 4, wd, w), one_const(&o, AIT_F32, 1, &bd, b);
        int64_t p[4] = {1, 1, 1, 1};
        attr_is(&o, "pads", 4, p), attr_i(&o, "group", c);
        row("depthwise 3x3 s1 96x56x56 (+hardswish)", 2.0 * 9 * c * h * h, "GFLOP/s", tk, one_time(&o, 5));
        kdw_geom g5 = {1, c, h, h, 1, 5, 5, 2, 2, 1, 1, 2, 2, h / 2, h / 2};
        tk = BEST(20, kdw_run(&g5, x, w, b, (kact){KF_NONE, 0, 0}, y, threads));
        int64_t wd5[4] = {c, 1, 5, 5}, p5[4] = {2, 2, 1, 1}, s2[2] = {2, 2};
        o = one_new("Conv", 4, dims, x);
        one_const(&o, AIT_F32, 4, wd5, w), one_const(&o, AIT_F32, 1, &bd, b);
        attr_is(&o, "pads", 4, p5), attr_is(&o, "strides", 2, s2), attr_i(&o, "group", c);
        row("depthwise 5x5 s2 96x56x56", 2.0 * 25 * c * (h / 2) * (h / 2), "GFLOP/s", tk, one_time(&o, 5));
        free(x), free(w), free(b), free(y);
    }
    { /* ConvTranspose 2x2 s2 (a detector's upsampling head), 4x4 s2 p1 */
        int ci = 64, co = 64, h = 80;
        int64_t dims[4] = {1, ci, h, h}, bd = co;
        float *x = frand((size_t)ci * h * h), *w = frand((size_t)ci * co * 16), *b = frand(co);
        float *y = malloc((size_t)co * 4 * h * h * sizeof *y);
        for (int k = 2; k <= 4; k += 2) {
            int pad = k == 4 ? 1 : 0;
            kct_geom g = {1, ci, h, h, co, 1, k, k, 2, 2, 1, 1, pad, pad, 2 * h, 2 * h};
            double tk = BEST(5, kconvt_run(&g, x, w, b, (kact){KF_NONE, 0, 0}, y, threads));
            int64_t wd[4] = {ci, co, k, k}, s2[2] = {2, 2}, p[4] = {pad, pad, pad, pad};
            one o = one_new("ConvTranspose", 4, dims, x);
            one_const(&o, AIT_F32, 4, wd, w), one_const(&o, AIT_F32, 1, &bd, b);
            attr_is(&o, "strides", 2, s2), attr_is(&o, "pads", 4, p);
            char what[64];
            snprintf(what, sizeof what, "convtranspose %dx%d s2 64->64 80x80", k, k);
            row(what, 2.0 * ci * co * k * k * h * h, "GFLOP/s", tk, one_time(&o, 3));
        }
        free(x), free(w), free(b), free(y);
    }
    { /* HardSwish as x * clip(x + 3, 0, 6) / 6, one program; the reference's HardSwish op */
        size_t n = (size_t)96 * 56 * 56;
        int64_t dims[4] = {1, 96, 56, 56};
        float *x = frand(n), *y = malloc(n * sizeof *y);
        kew_prog p = {.n = 4, .s = {{.op = KEW_ADD, .a = 3}, {.op = KEW_FUN, .f = KF_CLIP, .a = 0, .b = 6},
                                    {.op = KEW_DIV, .a = 6}, {.op = KEW_MUL, .src = KEW_INPUT}}};
        double tk = BEST(20, kew_run(&p, x, y, n, threads));
        one o = one_new("HardSwish", 4, dims, x);
        row("eltwise hardswish chain 96x56x56", 8.0 * n, "GB/s", tk, one_time(&o, 5));
        kew_prog se = {.n = 1, .channels = 96, .inner = 56 * 56, .s = {{.op = KEW_MUL, .src = KEW_CHANNEL, .p = x}}};
        tk = BEST(20, kew_run(&se, x, y, n, threads));
        row("eltwise per-channel scale (SE) 96x56x56", 8.0 * n, "GB/s", tk, NAN);
        free(x), free(y);
    }
    { /* pooling */
        int c = 64, h = 112, oh = 56;
        int64_t dims[4] = {1, c, h, h};
        float *x = frand((size_t)c * h * h), *y = malloc((size_t)c * h * h * sizeof *y);
        for (int k = 0; k < 2; k++) {
            kpool_geom g = {1, c, h, h, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, oh, oh, 0};
            double tk = BEST(20, kpool_run((kpool_kind)k, &g, x, y, threads));
            one o = one_new(k ? "AveragePool" : "MaxPool", 4, dims, x);
            int64_t ks[2] = {3, 3}, s2[2] = {2, 2}, p[4] = {1, 1, 1, 1};
            attr_is(&o, "kernel_shape", 2, ks), attr_is(&o, "strides", 2, s2), attr_is(&o, "pads", 4, p);
            row(k ? "avgpool 3x3 s2 64x112x112" : "maxpool 3x3 s2 64x112x112",
                4.0 * c * (h * h + oh * oh), "GB/s", tk, one_time(&o, 5));
        }
        double tk = BEST(20, kpool_global(KPOOL_AVG, (size_t)c, (size_t)h * h, x, y, threads));
        one o = one_new("GlobalAveragePool", 4, dims, x);
        row("global average pool 64x112x112", 4.0 * c * h * h, "GB/s", tk, one_time(&o, 5));
        free(x), free(y);
    }
    { /* Resize 2x: bilinear half_pixel, nearest asymmetric */
        int c = 64, h = 80;
        int64_t dims[4] = {1, c, h, h}, sizes[4] = {1, c, 2 * h, 2 * h}, four = 4;
        float *x = frand((size_t)c * h * h), *y = malloc((size_t)c * 4 * h * h * sizeof *y);
        for (int lin = 1; lin >= 0; lin--) {
            krz_geom g = {c, h, h, 2 * h, 2 * h, 0, 0, lin, lin ? KRZ_HALF_PIXEL : KRZ_ASYMMETRIC, KRZ_FLOOR};
            double tk = BEST(10, kresize(&g, x, y, threads));
            one o = one_new("Resize", 4, dims, x);
            one_const(&o, AIT_F32, 1, &four, NULL), one_const(&o, AIT_F32, 1, &four, NULL);
            one_const(&o, AIT_I64, 1, &four, sizes);
            attr_s(&o, "mode", lin ? "linear" : "nearest");
            attr_s(&o, "coordinate_transformation_mode", lin ? "half_pixel" : "asymmetric");
            attr_s(&o, "nearest_mode", "floor");
            row(lin ? "resize bilinear 2x 64x80x80" : "resize nearest 2x 64x80x80",
                4.0 * c * 5 * h * h, "GB/s", tk, one_time(&o, 5));
        }
        free(x), free(y);
    }
    { /* LayerNorm (ViT rows), Softmax (attention rows) */
        size_t rows = 197, d = 768;
        int64_t dims[2] = {(int64_t)rows, (int64_t)d}, dd = (int64_t)d;
        float *x = frand(rows * d), *s = frand(d), *b = frand(d), *y = malloc(rows * d * sizeof *y);
        double tk = BEST(20, klayernorm(x, s, b, y, rows, d, 1e-5f, threads));
        one o = one_new("LayerNormalization", 2, dims, x);
        one_const(&o, AIT_F32, 1, &dd, s), one_const(&o, AIT_F32, 1, &dd, b);
        attr_i(&o, "axis", -1);
        row("layernorm 197x768", 8.0 * rows * d, "GB/s", tk, one_time(&o, 10));
        size_t sr = 3 * 197, sd = 197;
        int64_t sdims[2] = {(int64_t)sr, (int64_t)sd};
        tk = BEST(20, ksoftmax(x, y, sr, sd, 0, threads));
        o = one_new("Softmax", 2, sdims, x);
        attr_i(&o, "axis", -1);
        row("softmax 591x197", 8.0 * sr * sd, "GB/s", tk, one_time(&o, 10));
        free(x), free(s), free(b), free(y);
    }
    { /* attention: ViT-tiny (3 heads, 197 tokens, d 64); decode with a 512-long past */
        katt_geom g = {.b = 1, .hq = 3, .hkv = 3, .sq = 197, .sc = 197, .d = 64, .dv = 64};
        size_t n = (size_t)3 * 197 * 64;
        float *q = frand(n), *k = frand(n), *v = frand(n), *y = malloc(n * sizeof *y);
        double tk = BEST(10, kattention(&g, q, NULL, NULL, k, v, y, threads));
        row("attention 3 heads 197x197 d64", 4.0 * 3 * 197 * 197 * 64, "GFLOP/s", tk, NAN);
        katt_geom dg = {.b = 1, .hq = 8, .hkv = 2, .sq = 1, .sp = 512, .sc = 1, .d = 64, .dv = 64,
                        .causal = 1};
        float *kp = frand((size_t)2 * 512 * 64), *vp = frand((size_t)2 * 512 * 64);
        tk = BEST(50, kattention(&dg, q, kp, vp, k, v, y, threads));
        row("attention decode GQA 8/2 heads past 512", 4.0 * 2 * 513 * 64 * 4, "GB/s", tk, NAN);
        free(q), free(k), free(v), free(y), free(kp), free(vp);
    }
    return 0;
}
