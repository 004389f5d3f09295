/* GEMM sweep: C[M,N] = A[M,K] * B for ait, OpenBLAS (cblas_sgemm) and
 * oneDNN (dnnl_sgemm), timed in interleaved rounds on the same A and B.
 *
 * ait runs through its public API on a one-node model that bench/gemm_models.py
 * wrote: layout "kn" is MatMul with B[K,N] as an initializer, layout "nk" is
 * Gemm transB=1 with B[N,K] (as nn.Linear exports); DIR/LAYOUT_N_K.onnx, with
 * the same B beside it as DIR/LAYOUT_N_K.B.npy for the other two engines.
 *
 * native is ait's own GEMM (src/kernels/gemm.h) called directly, with B packed
 * once per model (as the native backend packs weights at build), so it shows
 * the kernel without the runtime's per-run overheads.
 *
 * Each engine's output is checked against OpenBLAS's (max |diff| / max |ref|
 * <= 1e-4) before its times count. Prints one JSON object per engine and shape.
 *
 * usage: bench-gemm DIR THREADS BUDGET_S CAP_S LAYOUT:M:N:K...
 *   BUDGET_S  time to spend timing one engine on one shape (at least 1 run)
 *   CAP_S     skip an engine at a shape when one run is predicted longer */
#include <cblas.h>
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ait.h"
#include "core/tensor.h"
#include "kernels/gemm.h"
#include "timer.h"

enum { OPENBLAS, ONEDNN, AIT, NATIVE, ENGINES };
static const char *const engine_name[ENGINES] = {"openblas", "onednn", "ait", "native"};

typedef struct shape { char layout[3]; long m, n, k; } shape;

typedef struct ctx {
    const char *dir;
    int threads;
    char model_key[64]; /* the ait model loaded now: LAYOUT_N_K */
    ait_model *model;
    ait_session *sess;
    ait_tensor *b; /* B as stored beside the model */
    void *packed;  /* B packed for the native GEMM */
    gemm_packed pb;
} ctx;

static int load_model(ctx *c, const shape *s)
{
    char key[64], path[4096];
    snprintf(key, sizeof key, "%s_%ld_%ld", s->layout, s->n, s->k);
    if (c->model && !strcmp(key, c->model_key)) return 0;
    ait_session_free(c->sess), ait_model_free(c->model), ait_tensor_free(c->b);
    c->sess = NULL, c->model = NULL, c->b = NULL;
    ait_error e = {0};
    ait_session_options so = {.size = sizeof so, .threads = c->threads};
    snprintf(path, sizeof path, "%s/%s.onnx", c->dir, key);
    if (ait_model_load(path, &c->model, &e) != AIT_OK ||
        ait_session_create(c->model, &so, &c->sess, &e) != AIT_OK) {
        fprintf(stderr, "bench-gemm: %s\n", e.msg);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s.B.npy", c->dir, key);
    if (ait_tensor_load_npy(path, &c->b, &e) != AIT_OK) {
        fprintf(stderr, "bench-gemm: %s\n", e.msg);
        return -1;
    }
    if (ait_tensor_numel(c->b) != s->n * s->k) {
        fprintf(stderr, "bench-gemm: %s holds %lld values, want N*K = %ld\n", path,
                (long long)ait_tensor_numel(c->b), s->n * s->k);
        return -1;
    }
    aligned_free(c->packed);
    const gemm_kernel *kr = gemm_kernel_best();
    size_t bytes = gemm_pack_b_size(kr, s->k, s->n);
    int nk = !strcmp(s->layout, "nk");
    c->packed = aligned_zalloc(bytes);
    if (!c->packed) return -1;
    gemm_pack_b(kr, ait_tensor_data(c->b), nk ? 1 : s->n, nk ? s->k : 1, s->k, s->n, c->packed);
    if (gemm_packed_view(c->packed, bytes, &c->pb, NULL) != AIT_OK) return -1;
    snprintf(c->model_key, sizeof c->model_key, "%s", key);
    return 0;
}

/* One run of engine e; the product lands in out. Returns seconds, < 0 on error. */
static double run_once(ctx *c, int e, const shape *s, float *a, float *out)
{
    const float *b = ait_tensor_data(c->b);
    int nk = !strcmp(s->layout, "nk");
    double t0 = now_s();
    if (e == OPENBLAS) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, nk ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n,
                    (int)s->k, 1.0f, a, (int)s->k, b, nk ? (int)s->k : (int)s->n, 0.0f, out, (int)s->n);
    } else if (e == ONEDNN) {
        if (dnnl_sgemm('N', nk ? 'T' : 'N', s->m, s->n, s->k, 1.0f, a, s->k, b, nk ? s->k : s->n, 0.0f,
                       out, s->n) != dnnl_success) {
            fprintf(stderr, "bench-gemm: dnnl_sgemm failed at %s M=%ld\n", s->layout, s->m);
            return -1;
        }
    } else if (e == NATIVE) {
        gemm_args g = {.m = s->m, .n = s->n, .k = s->k, .a = a, .rsa = s->k, .csa = 1, .pb = &c->pb,
                       .c = out, .ldc = s->n, .threads = c->threads};
        ait_error err = {0};
        if (gemm_f32(&g, &err) != AIT_OK) {
            fprintf(stderr, "bench-gemm: native at %s M=%ld: %s\n", s->layout, s->m, err.msg);
            return -1;
        }
    } else {
        ait_tensor *in = ait_tensor_wrap(AIT_F32, 2, (int64_t[]){s->m, s->k}, a), *o = NULL;
        if (!in || ait_session_run(c->sess, &in, 1, &o, 1) != AIT_OK) {
            fprintf(stderr, "bench-gemm: ait at %s M=%ld: %s\n", s->layout, s->m,
                    in ? ait_session_error(c->sess) : "cannot wrap A");
            ait_tensor_free(in);
            return -1;
        }
        double t = now_s() - t0;
        memcpy(out, ait_tensor_data(o), (size_t)(s->m * s->n) * sizeof(float));
        ait_tensor_free(o), ait_tensor_free(in);
        return t;
    }
    return now_s() - t0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double rel_err(const float *got, const float *want, long n)
{
    double d = 0, mx = 0;
    for (long i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        d = e > d || isnan(e) ? e : d;
        mx = fabs(want[i]) > mx ? fabs(want[i]) : mx;
    }
    return mx > 0 ? d / mx : d;
}

#define MAX_RUNS 50

static int sweep_shape(ctx *c, const shape *s, double budget, double cap, double *predicted)
{
    if (load_model(c, s)) return -1;
    size_t mn = (size_t)(s->m * s->n);
    float *a = malloc((size_t)(s->m * s->k) * sizeof(float));
    float *out[ENGINES];
    for (int e = 0; e < ENGINES; e++) out[e] = malloc(mn * sizeof(float));
    if (!a || !out[0] || !out[1] || !out[2] || !out[3]) {
        fprintf(stderr, "bench-gemm: out of memory at %s M=%ld\n", s->layout, s->m);
        return -1;
    }
    srand(7);
    for (long i = 0; i < s->m * s->k; i++) a[i] = (float)rand() / (float)RAND_MAX * 2 - 1;

    double times[ENGINES][MAX_RUNS], err[ENGINES] = {0};
    int want[ENGINES], have[ENGINES] = {0}, skip[ENGINES] = {0};
    for (int e = 0; e < ENGINES; e++) { /* warm-up run, also the output check */
        if (predicted[e] > cap) {
            skip[e] = 1;
            continue;
        }
        double t = run_once(c, e, s, a, out[e]);
        if (t < 0) return -1;
        err[e] = e == OPENBLAS ? 0 : rel_err(out[e], out[OPENBLAS], (long)mn);
        want[e] = (int)fmin(MAX_RUNS, fmax(1, budget / t));
        if (t > budget) { /* one long run: its warm-up run already planned the shape */
            want[e] = 1;
        }
        predicted[e] = t;
    }
    for (int round = 0;; round++) { /* interleaved rounds */
        int any = 0;
        for (int e = 0; e < ENGINES; e++) {
            if (skip[e] || have[e] >= want[e]) continue;
            double t = run_once(c, e, s, a, out[e]);
            if (t < 0) return -1;
            times[e][have[e]++] = t;
            any = 1;
        }
        if (!any) break;
    }
    double flops = 2.0 * s->m * s->n * s->k;
    for (int e = 0; e < ENGINES; e++) {
        printf("{\"layout\":\"%s\",\"m\":%ld,\"n\":%ld,\"k\":%ld,\"threads\":%d,\"engine\":\"%s\",", s->layout,
               s->m, s->n, s->k, c->threads, engine_name[e]);
        if (skip[e]) {
            printf("\"skipped\":\"one run predicted over %.0f s\"}\n", cap);
            continue;
        }
        qsort(times[e], (size_t)have[e], sizeof(double), cmp_double);
        double med = have[e] % 2 ? times[e][have[e] / 2] : (times[e][have[e] / 2 - 1] + times[e][have[e] / 2]) / 2;
        printf("\"runs\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,\"gflops\":%.3f,"
               "\"weight_gbs\":%.3f,\"rel_err\":%.3g}\n",
               have[e], med * 1e3, times[e][0] * 1e3, times[e][have[e] - 1] * 1e3, flops / med / 1e9,
               (double)s->n * s->k * 4 / med / 1e9, err[e]);
        /* the next (larger) M of this layout takes about twice as long */
        predicted[e] = med * 2;
    }
    fflush(stdout);
    free(a);
    for (int e = 0; e < ENGINES; e++) free(out[e]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bench-gemm DIR THREADS BUDGET_S CAP_S LAYOUT:M:N:K...\n");
        return 2;
    }
    ctx c = {.dir = argv[1], .threads = atoi(argv[2])};
    double budget = atof(argv[3]), cap = atof(argv[4]);
    if (c.threads < 1 || !(budget > 0) || !(cap > 0)) {
        fprintf(stderr, "bench-gemm: THREADS, BUDGET_S and CAP_S must be positive\n");
        return 2;
    }
    openblas_set_num_threads(c.threads);
    omp_set_num_threads(c.threads);
    double predicted[ENGINES] = {0};
    char last_layout[3] = "";
    long last_nk = -1;
    for (int i = 5; i < argc; i++) {
        shape s = {0};
        if (sscanf(argv[i], "%2[a-z]:%ld:%ld:%ld", s.layout, &s.m, &s.n, &s.k) != 4 || s.m < 1 || s.n < 1 ||
            s.k < 1 || (strcmp(s.layout, "kn") && strcmp(s.layout, "nk"))) {
            fprintf(stderr, "bench-gemm: bad shape '%s' (want kn|nk:M:N:K)\n", argv[i]);
            return 2;
        }
        if (strcmp(s.layout, last_layout) || s.n * s.k != last_nk) /* a new series: no prediction */
            memset(predicted, 0, sizeof predicted);
        snprintf(last_layout, sizeof last_layout, "%s", s.layout);
        last_nk = s.n * s.k;
        if (sweep_shape(&c, &s, budget, cap, predicted)) return 1;
    }
    ait_session_free(c.sess), ait_model_free(c.model), ait_tensor_free(c.b);
    aligned_free(c.packed);
    return 0;
}
