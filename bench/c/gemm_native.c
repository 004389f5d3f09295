/* Native GEMM against OpenBLAS and oneDNN, one thread, on a shared machine:
 * every engine is timed in interleaved rounds with this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) as well as the wall clock, so time the thread
 * spends descheduled by other work does not count; an FMA loop on registers
 * (the CPU's peak for each ISA) is timed the same way in every round, so
 * each figure is a share of the peak measured beside it.
 *
 * Engines per shape: native with B packed once (as the native backend packs
 * weights at build; its default kernel, or the table's kernels named by
 * --kernels, "all" for every one), OpenBLAS cblas_sgemm and oneDNN dnnl_sgemm on the same A and
 * B (both pack B inside every call, as they do in their backends). Every
 * output is checked against OpenBLAS's first (max |diff| / max |ref|).
 *
 * usage: bench-gemm-native [--kernels all|K1,K2..] [--epi] [--huge-a] [--kc N] [--mc N] [--nc N] [--order 0|1|2] [--pack-a 0|1|2] [--skinny-nv N] [--vs SPEC].. ROUNDS LAYOUT:M:N:K...
 *   LAYOUT kn: B is K x N (MatMul); nk: B is N x K (nn.Linear's Gemm transB)
 *   --kc, --mc, --nc, --order  native's blocking and loop order (gemm_config)
 *   --pack-a  0 the default, 1 A always packed, 2 A read in place (gemm_config)
 *   --skinny-nv  the skinny path's vectors per call (gemm_config's skinny_nv)
 *   --epi  also the default kernel with bias + relu fused ("+epi"), to
 *          show what the epilogue costs
 *   --huge-a  A in the library's aligned_malloc (2 MiB pages past its
 *          threshold, madvise(MADV_HUGEPAGE)), as the native backend's
 *          activations are, not in malloc's 4 KiB pages
 *   --vs SPEC  also the default kernel (with --kernels: each kernel listed) with
 *          another gemm_config, in the same
 *          interleaved rounds (repeatable, up to 4): SPEC is KEY=N[,KEY=N..]
 *          with KEY kc, mc, nc, order, pa (pack_a), sv (skinny_nv), e.g.
 *          --vs pa=1,kc=384 (named "native:pa=1,kc=384")
 * Prints one line per shape and engine: median GFLOP/s on CPU time, % of
 * the peak for the median and the best round,
 * the best ISA's peak, GB/s of B on CPU time and % of the read bandwidth
 * (a vector sum over 256 MiB, timed the same way), and wall-clock GFLOP/s. */
#include <cblas.h>
#include <dnnl.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tensor.h"
#include "kernels/gemm.h"

static double clk(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak: 12 independent FMA chains per ISA, registers only. */
static volatile float sink;
__attribute__((target("avx512f"))) static void peak512(long n)
{
    __m512 a[12], m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
    for (long p = 0; p < n; p++)
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], m, c);
    for (int i = 1; i < 12; i++) a[0] = _mm512_add_ps(a[0], a[i]);
    sink = _mm512_reduce_add_ps(a[0]);
}
__attribute__((target("avx2,fma"))) static void peak256(long n)
{
    __m256 a[12], m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps((float)i);
    for (long p = 0; p < n; p++)
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], m, c);
    for (int i = 1; i < 12; i++) a[0] = _mm256_add_ps(a[0], a[i]);
    float t[8];
    _mm256_storeu_ps(t, a[0]);
    sink = t[0];
}

/* Read bandwidth: a vector sum over a buffer far larger than the caches. */
__attribute__((target("avx512f"))) static void read512(const float *p, size_t n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(p + i));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(p + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(p + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(p + i + 48));
    }
    sink = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

#define MAXR 64
#define MAXE 16
typedef struct eng {
    char name[32];
    const gemm_kernel *kr; /* native: the kernel; NULL for the libraries */
    int lib;               /* 1 OpenBLAS, 2 oneDNN */
    bool epi;              /* native with bias + relu fused */
    const gemm_config *cfg; /* native: its config (the options', or a --vs one) */
    void *packed;
    gemm_packed pb;
    double cpu[MAXR], wall[MAXR];
    double err;
} eng;

static int cmpd(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct shp { char layout[3]; long m, n, k; } shp;

static gemm_config cfg; /* --kc, --mc, --nc for native */

/* A --vs SPEC into c (every field 0 but those named); false when malformed. */
static bool parse_vs(const char *spec, gemm_config *c)
{
    *c = (gemm_config){0};
    for (const char *p = spec; *p;) {
        char key[8];
        int val, used;
        if (sscanf(p, "%7[a-z]=%d%n", key, &val, &used) != 2) return false;
        int *f = !strcmp(key, "kc")      ? &c->kc
                 : !strcmp(key, "mc")    ? &c->mc
                 : !strcmp(key, "nc")    ? &c->nc
                 : !strcmp(key, "order") ? &c->order
                 : !strcmp(key, "pa")    ? &c->pack_a
                 : !strcmp(key, "sv")    ? &c->skinny_nv
                                         : NULL;
        if (!f) return false;
        *f = val;
        p += used;
        if (*p == ',') p++;
        else if (*p) return false;
    }
    return true;
}

static void run(eng *e, const shp *s, const float *a, const float *b, const float *bias, float *c,
                bool epi)
{
    int nk = !strcmp(s->layout, "nk");
    if (e->lib == 1)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, nk ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n,
                    (int)s->k, 1.0f, a, (int)s->k, b, nk ? (int)s->k : (int)s->n, 0.0f, c, (int)s->n);
    else if (e->lib == 2)
        dnnl_sgemm('N', nk ? 'T' : 'N', s->m, s->n, s->k, 1.0f, a, s->k, b, nk ? s->k : s->n, 0.0f, c,
                   s->n);
    else {
        gemm_args g = {.m = s->m, .n = s->n, .k = s->k, .a = a, .rsa = s->k, .csa = 1, .pb = &e->pb,
                       .c = c, .ldc = s->n, .threads = 1, .cfg = e->cfg};
        if (epi) g.epi = (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_RELU};
        ait_error er = {0};
        if (gemm_f32(&g, &er) != AIT_OK) {
            fprintf(stderr, "bench-gemm-native: %s\n", er.msg);
            exit(1);
        }
    }
}

/* Whether kernel `name` is in the comma-separated list ("all": every one;
 * NULL: the default kernel only). */
static bool listed(const char *list, const char *name)
{
    if (!list) return !strcmp(name, gemm_kernel_name(gemm_kernel_best()));
    if (!strcmp(list, "all")) return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

int main(int argc, char **argv)
{
    int ai = 1;
    const char *kernels = NULL; /* NULL: the default kernel only */
    bool epi = false, huge_a = false;
    gemm_config vs[4];
    const char *vs_name[4];
    int nvs = 0;
    for (; ai < argc && argv[ai][0] == '-'; ai++) {
        if (!strcmp(argv[ai], "--kernels") && ai + 1 < argc) kernels = argv[++ai];
        else if (!strcmp(argv[ai], "--epi")) epi = true;
        else if (!strcmp(argv[ai], "--huge-a")) huge_a = true;
        else if (!strcmp(argv[ai], "--kc") && ai + 1 < argc) cfg.kc = atoi(argv[++ai]);
        else if (!strcmp(argv[ai], "--mc") && ai + 1 < argc) cfg.mc = atoi(argv[++ai]);
        else if (!strcmp(argv[ai], "--nc") && ai + 1 < argc) cfg.nc = atoi(argv[++ai]);
        else if (!strcmp(argv[ai], "--order") && ai + 1 < argc) cfg.order = atoi(argv[++ai]);
        else if (!strcmp(argv[ai], "--pack-a") && ai + 1 < argc) cfg.pack_a = atoi(argv[++ai]);
        else if (!strcmp(argv[ai], "--skinny-nv") && ai + 1 < argc) cfg.skinny_nv = atoi(argv[++ai]);
        else if (!strcmp(argv[ai], "--vs") && ai + 1 < argc && nvs < 4) {
            vs_name[nvs] = argv[++ai];
            if (!parse_vs(vs_name[nvs], &vs[nvs])) {
                fprintf(stderr, "bench-gemm-native: bad --vs '%s' (want KEY=N[,KEY=N..], KEY kc mc nc order pa sv)\n",
                        vs_name[nvs]);
                return 2;
            }
            nvs++;
        } else {
            fprintf(stderr, "bench-gemm-native: unknown option %s\n", argv[ai]);
            return 2;
        }
    }
    if (argc - ai < 2) {
        fprintf(stderr, "usage: bench-gemm-native [--kernels all|K1,K2..] [--epi] [--huge-a] [--kc N] [--mc N] [--nc N] [--order 0|1|2] [--pack-a 0|1|2] [--skinny-nv N] [--vs SPEC].. ROUNDS LAYOUT:M:N:K...\n");
        return 2;
    }
    int rounds = atoi(argv[ai++]);
    if (rounds < 1 || rounds > MAXR) {
        fprintf(stderr, "bench-gemm-native: ROUNDS must be 1 to %d\n", MAXR);
        return 2;
    }
    openblas_set_num_threads(1);
    omp_set_num_threads(1); /* oneDNN's sgemm runs on OpenMP: CPU time of this thread only */
    bool has512 = __builtin_cpu_supports("avx512f");
    for (; ai < argc; ai++) {
        shp s = {0};
        if (sscanf(argv[ai], "%2[a-z]:%ld:%ld:%ld", s.layout, &s.m, &s.n, &s.k) != 4 || s.m < 1 ||
            s.n < 1 || s.k < 1 || (strcmp(s.layout, "kn") && strcmp(s.layout, "nk"))) {
            fprintf(stderr, "bench-gemm-native: bad shape '%s' (want kn|nk:M:N:K)\n", argv[ai]);
            return 2;
        }
        int nk = !strcmp(s.layout, "nk");
        float *a = huge_a ? aligned_malloc(sizeof(float) * (size_t)(s.m * s.k)) : malloc(sizeof(float) * (size_t)(s.m * s.k)),
              *b = malloc(sizeof(float) * (size_t)(s.n * s.k)), *bias = malloc(sizeof(float) * (size_t)s.n),
              *ref = malloc(sizeof(float) * (size_t)(s.m * s.n)),
              *c = malloc(sizeof(float) * (size_t)(s.m * s.n));
        srand(7);
        for (long i = 0; i < s.m * s.k; i++) a[i] = (float)rand() / (float)RAND_MAX * 2 - 1;
        for (long i = 0; i < s.n * s.k; i++) b[i] = (float)rand() / (float)RAND_MAX * 2 - 1;
        for (long i = 0; i < s.n; i++) bias[i] = (float)rand() / (float)RAND_MAX * 2 - 1;
        eng es[MAXE];
        int ne = 0;
        es[ne++] = (eng){.name = "openblas", .lib = 1};
        es[ne++] = (eng){.name = "onednn", .lib = 2};
        for (int i = 0; i < gemm_kernel_count(); i++) {
            const gemm_kernel *kr = gemm_kernel_at(i);
            if (!gemm_kernel_available(kr) || !listed(kernels, gemm_kernel_name(kr))) continue;
            eng *e = &es[ne++];
            *e = (eng){.kr = kr, .cfg = &cfg};
            snprintf(e->name, sizeof e->name, "native:%s", gemm_kernel_name(kr));
            size_t bytes = gemm_pack_b_size(kr, s.k, s.n);
            e->packed = aligned_zalloc(bytes);
            gemm_pack_b(kr, b, nk ? 1 : s.n, nk ? s.k : 1, s.k, s.n, e->packed);
            gemm_packed_view(e->packed, bytes, &e->pb, NULL);
            /* the --vs configs: on the default kernel, or on each one --kernels names */
            for (int v = 0; v < nvs && (kernels || kr == gemm_kernel_best()) && ne + 2 < MAXE; v++) {
                es[ne] = *e;
                es[ne].packed = NULL; /* shares e's */
                es[ne].cfg = &vs[v];
                if (kernels) snprintf(es[ne].name, sizeof es[ne].name, "%s:%s", gemm_kernel_name(kr), vs_name[v]);
                else snprintf(es[ne].name, sizeof es[ne].name, "native:%s", vs_name[v]);
                ne++;
            }
            if (epi && kr == gemm_kernel_best()) { /* the same with the epilogue */
                es[ne] = *e;
                es[ne].packed = NULL; /* shares e's */
                es[ne].epi = true;
                snprintf(es[ne].name, sizeof es[ne].name, "native:%s+epi", gemm_kernel_name(kr));
                ne++;
            }
        }
        run(&es[0], &s, a, b, bias, ref, false);
        for (int i = 1; i < ne; i++) { /* warm-up and check */
            run(&es[i], &s, a, b, bias, c, es[i].epi);
            double d = 0, mx = 0;
            for (long j = 0; j < s.m * s.n; j++) {
                float want = ref[j] + bias[j % s.n];
                want = es[i].epi ? (want > 0 ? want : 0) : ref[j];
                double x = fabs((double)c[j] - want);
                d = x > d || isnan(x) ? x : d;
                mx = fabs(ref[j]) > mx ? fabs(ref[j]) : mx;
            }
            es[i].err = d / (mx > 0 ? mx : 1);
        }
        double flops = 2.0 * s.m * s.n * s.k;
        /* reps per timing: about 20 ms of work at 100 GFLOP/s */
        int reps = (int)fmax(1, 2e9 / flops);
        double pk512[MAXR], pk256[MAXR], bw[MAXR];
        const size_t bwn = (size_t)64 << 20; /* 256 MiB */
        float *big = aligned_zalloc(bwn * sizeof(float));
        for (size_t i = 0; i < bwn; i += 1024) big[i] = 1.0f;
        const long piters = 2000000;
        for (int r = 0; r < rounds; r++) {
            double t0 = clk(CLOCK_THREAD_CPUTIME_ID);
            if (has512) peak512(piters);
            double t1 = clk(CLOCK_THREAD_CPUTIME_ID);
            peak256(piters);
            double t2 = clk(CLOCK_THREAD_CPUTIME_ID);
            pk512[r] = has512 ? piters * 12.0 * 32 / (t1 - t0) / 1e9 : 0;
            pk256[r] = piters * 12.0 * 16 / (t2 - t1) / 1e9;
            double t3 = clk(CLOCK_THREAD_CPUTIME_ID);
            if (has512) read512(big, bwn);
            bw[r] = has512 ? (double)bwn * 4 / (clk(CLOCK_THREAD_CPUTIME_ID) - t3) / 1e9 : 0;
            for (int i = 0; i < ne; i++) {
                double w0 = clk(CLOCK_MONOTONIC), c0 = clk(CLOCK_THREAD_CPUTIME_ID);
                for (int q = 0; q < reps; q++) run(&es[i], &s, a, b, bias, c, es[i].epi);
                es[i].cpu[r] = (clk(CLOCK_THREAD_CPUTIME_ID) - c0) / reps;
                es[i].wall[r] = (clk(CLOCK_MONOTONIC) - w0) / reps;
            }
        }
        aligned_free(big);
        double p512 = median(pk512, rounds), p256 = median(pk256, rounds), pbw = median(bw, rounds);
        printf("%s:%ld:%ld:%ld peak (CPU time) avx512 %.1f avx2 %.1f GFLOP/s, read %.1f GB/s; %d rounds x "
               "%d reps%s\n",
               s.layout, s.m, s.n, s.k, p512, p256, pbw, rounds, reps, "");
        for (int i = 0; i < ne; i++) {
            double tc = median(es[i].cpu, rounds), tw = median(es[i].wall, rounds);
            double g = flops / tc / 1e9, best = flops / es[i].cpu[0] / 1e9; /* sorted by median() */
            double gbs = (double)s.n * s.k * 4 / tc / 1e9;
            double pk = has512 ? p512 : p256;
            printf("  %-18s %7.1f GFLOP/s %5.1f%% of peak (best %5.1f%%)  %6.1f GB/s of B %5.1f%% of "
                   "read  wall %7.1f GFLOP/s  err %.1e\n",
                   es[i].name, g, 100 * g / pk, 100 * best / pk, gbs, pbw > 0 ? 100 * gbs / pbw : 0,
                   flops / tw / 1e9, es[i].err);
            aligned_free(es[i].packed);
        }
        fflush(stdout);
        if (huge_a) aligned_free(a);
        else free(a);
        free(b), free(bias), free(ref), free(c);
    }
    return 0;
}
