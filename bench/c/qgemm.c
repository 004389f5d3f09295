/* Quantised GEMM against ait's float32 GEMM: C[M,N] = A[M,K] * B with B a
 * prepacked constant (as the native backend runs MatMul/Gemm weights), for
 * f32 (gemm_f32), bf16, int8dq, int8wo, int4wo and fp16 (kernels/qgemm.h), timed
 * in interleaved rounds on the same A and B, one thread (-t: more). Prints per engine
 * and shape the median ms, GFLOP/s, GB/s of weight bytes streamed, the
 * SQNR of C against the f32 result and the fastest run's ms (on a loaded
 * machine the wall clock's minimum is the nearest to an idle run).
 * usage: bench-qgemm [-c] [-t N] [-w] [-g G] [-e | -R] [-i ISA] [-s SCHEME,...] [-u | -y | -r | -ry] ROUNDS M:N:K...
 *   -g   int4wo's group of rows: 32 (the default), 64 or 128 (int4wo-64, int4wo-128)
 *   -i   cap qgemm's kernels at ISA (avx512, avx2, portable: kisa_force; f32 keeps its own)
 *   -e   every GEMM with a column bias and GELU epilogue (bert's FFN)
 *   -R   every GEMM with a column bias and relu epilogue (a Conv's)
 *   -s   only these qgemm schemes (f32, the reference, always runs)
 *   -c   time the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: on a
 *        loaded machine, preemption left out) rather than the wall clock;
 *        with -t past 1 the process's (every thread's CPU time summed:
 *        the work, not the wait)
 *   -t   threads for f32 and qgemm (default 1)
 *   -w   workspaces kept across calls, as the native backend keeps them
 *        (qgemm_ws in qgemm_scratch's bytes, gemm_args.ws): no allocation,
 *        page faults and zeroing per call
 *   -u   int8dq's kernels alone: A quantised once before the rounds (qgemm_u8)
 *   -y   the same with C requantised to uint8 in the kernel (qgemm_u8_q8: a
 *        static int8 Conv's 1x1)
 *   -r   the same on an implicit 3x3 GEMM (qgemm_u8_rows: K = 9 x C, C a
 *        multiple of 4, A's rows the pixels of a padded image 8 wide, read in
 *        place, 3 runs a row), uint8 C: a static int8 3x3 Conv's; -ry: the
 *        same with float C
 *   with -u, -y or -r every row of A takes row 0's scale and zero point (a
 *   static int8 model's) and -r's image holds only the centre tap's bytes:
 *   the int8dq row's SQNR says nothing then (the tests check the kernels) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"
#include "kernels/qgemm.h"
#include "timer.h"

enum { E_F32, E_Q0 }; /* then the qgemm schemes */
#define NE (1 + QG_N)

static bool cpu_clock;
static int threads = 1;
static bool keep_ws;
static int group = 32; /* int4wo's (-g); the other schemes take none */

static double clock_s(void)
{
    struct timespec ts;
    if (!cpu_clock) return now_s();
    clock_gettime(threads > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* int8dq's A quantised once, for its kernels alone (-u, -y, -r, -ry). */
typedef struct kin {
    void *ws;
    uint8_t *q, *img, *y8;
    float *sa;
    int32_t *za;
    const uint8_t **rp;
    int64_t off;
} kin;

static bool kin_make(kin *u, int kmode, const qg_packed *b, const float *a, long long M,
                     long long K)
{
    u->ws = aligned_zalloc(qgemm_scratch(QG_INT8DQ, 0, K, M));
    qg_quant_rows_u8(a, K, M, K, NULL, NULL, u->ws, &u->q, &u->sa, &u->za);
    u->y8 = malloc((size_t)(M * b->n));
    for (long long i = 1; i < M; i++) u->sa[i] = u->sa[0], u->za[i] = u->za[0]; /* one scale */
    if (kmode < 3) return true;
    if (K % 36) {
        fprintf(stderr, "bench-qgemm: -r needs K = 9 x C, C a multiple of 4\n");
        return false;
    }
    /* a padded image 8 pixels wide, (M + 7) / 8 rows, C channels, the rows' bytes from q */
    const long long C = K / 9, W = 8, H = (M + W - 1) / W;
    u->off = (W + 2) * C;
    u->img = aligned_zalloc((size_t)((H + 2) * u->off));
    u->rp = malloc(sizeof(*u->rp) * (size_t)M);
    for (long long i = 0; i < M; i++) {
        long long y = i / W, x = i % W;
        u->rp[i] = u->img + y * u->off + x * C;
        for (long long c = 0; c < C; c++) /* the centre tap's channels */
            u->img[(y + 1) * u->off + (x + 1) * C + c] = u->q[i * b->kp + 4 * C + c];
    }
    return true;
}

static void kin_run(const kin *u, int kmode, const qg_packed *b, long long M, long long N,
                    float *c, const gemm_epi *ep)
{
    if (kmode == 1) {
        qgemm_u8(b, u->q, u->sa, u->za, M, c, N, ep, 1);
    } else if (kmode == 2) {
        qgemm_u8_q8(b, u->q, u->sa, u->za, M, u->y8, N, 0.05f, 128, ep, 1);
    } else {
        qg_rows r = {.rp = u->rp, .runs = 3, .off = u->off};
        bool y = kmode == 3;
        qgemm_u8_rows(b, &r, u->sa, u->za, M, c, N, y ? u->y8 : NULL, N, 0.05f, 128, ep, 1);
    }
}

/* uint8 C (-y, -r) as floats, for the SQNR, after the timed calls */
static void kin_c(const kin *u, int kmode, long long M, long long N, float *c)
{
    for (long long i = 0; (kmode == 2 || kmode == 3) && i < M * N; i++)
        c[i] = ((float)u->y8[i] - 128) * 0.05f;
}

static void kin_free(kin *u)
{
    aligned_free(u->ws);
    aligned_free(u->img);
    free(u->y8);
    free(u->rp);
}

int main(int argc, char **argv)
{
    bool epi = false, relu = false, on[NE];
    int kmode = 0; /* 0: qgemm; 1: -u; 2: -y; 3: -r (uint8 C); 4: -ry */
    for (int x = 0; x < NE; x++) on[x] = true;
    int arg = 1;
    for (; arg < argc && argv[arg][0] == '-'; arg++) {
        if (strcmp(argv[arg], "-c") == 0) {
            cpu_clock = true;
        } else if (strcmp(argv[arg], "-w") == 0) {
            keep_ws = true;
        } else if (strcmp(argv[arg], "-g") == 0 && arg + 1 < argc) {
            group = atoi(argv[++arg]);
            if (group != 32 && group != 64 && group != 128) {
                fprintf(stderr, "bench-qgemm: -g takes 32, 64 or 128\n");
                return 2;
            }
        } else if (strcmp(argv[arg], "-t") == 0 && arg + 1 < argc) {
            threads = atoi(argv[++arg]);
            threads = threads > 1 ? threads : 1;
        } else if (strcmp(argv[arg], "-u") == 0) {
            kmode = 1;
        } else if (strcmp(argv[arg], "-y") == 0) {
            kmode = 2;
        } else if (strcmp(argv[arg], "-r") == 0) {
            kmode = 3;
        } else if (strcmp(argv[arg], "-ry") == 0) {
            kmode = 4;
        } else if (strcmp(argv[arg], "-R") == 0) {
            relu = true;
        } else if (strcmp(argv[arg], "-e") == 0) {
            epi = true;
        } else if (strcmp(argv[arg], "-i") == 0 && arg + 1 < argc) {
            const char *want = argv[++arg];
            int k = 0;
            while (k < KISA_N && strcmp(kisa_name((kisa)k), want)) k++;
            if (k == KISA_N || !kisa_force((kisa)k)) {
                fprintf(stderr, "bench-qgemm: no ISA '%s' on this CPU\n", want);
                return 2;
            }
        } else if (strcmp(argv[arg], "-s") == 0 && arg + 1 < argc) {
            char *list = argv[++arg];
            for (int q = 0; q < QG_N; q++) {
                const char *nm = qg_scheme_name(q), *at = strstr(list, nm);
                size_t l = strlen(nm);
                on[1 + q] = at && (at == list || at[-1] == ',') && (at[l] == ',' || !at[l]);
            }
        } else {
            break;
        }
    }
    if (argc - arg < 2) {
        fprintf(stderr, "usage: bench-qgemm [-c] [-t N] [-w] [-g G] [-e | -R] [-i ISA] [-s SCHEME,...] [-u | -y | -r | -ry] "
                        "ROUNDS M:N:K...\n");
        return 2;
    }
    int rounds = atoi(argv[arg]);
    for (int s = arg + 1; s < argc; s++) {
        long long M, N, K;
        if (sscanf(argv[s], "%lld:%lld:%lld", &M, &N, &K) != 3) return 2;
        float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
        float *c[NE];
        for (int i = 0; i < M * K; i++) a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        float *bias = malloc(sizeof(float) * (size_t)N);
        for (long long j = 0; j < N; j++) bias[j] = (float)rand() / (float)RAND_MAX - 0.5f;
        gemm_epi ep = {0};
        if (epi || relu)
            ep = (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias,
                            .act = relu ? GEMM_ACT_RELU : GEMM_ACT_GELU};
        for (long long i = 0; i < K * N; i++) b[i] = ((float)rand() / (float)RAND_MAX - 0.5f) * 0.1f;
        const gemm_kernel *kr = gemm_kernel_best();
        void *pf = aligned_zalloc(gemm_pack_b_size(kr, K, N));
        gemm_pack_b(kr, b, N, 1, K, N, pf);
        gemm_packed pv;
        ait_error e = {0};
        gemm_packed_view(pf, gemm_pack_b_size(kr, K, N), &pv, &e);
        qg_packed qv[QG_N];
        void *qb[QG_N];
        double wbytes[NE] = {(double)K * N * 4};
        for (int q = 0; q < QG_N; q++) {
            size_t sz = qg_pack_size(q, group, K, N);
            qb[q] = aligned_zalloc(sz);
            qg_pack(q, group, b, N, 1, K, N, qb[q]);
            qg_view(qb[q], sz, &qv[q], &e);
            wbytes[1 + q] = (double)sz;
        }
        for (int x = 0; x < NE; x++) c[x] = aligned_zalloc(sizeof(float) * (size_t)(M * N));
        kin u8 = {0};
        gemm_ws gws = {0};
        void *qws[QG_N] = {0};
        for (int q = 0; q < QG_N && keep_ws; q++) {
            size_t bytes = qgemm_scratch(q, group, K, M);
            qws[q] = bytes ? aligned_zalloc(bytes) : NULL;
        }
        if (kmode && !kin_make(&u8, kmode, &qv[QG_INT8DQ], a, M, K)) return 2;
        double *t[NE];
        int reps = M * N * K > (1LL << 31) ? 1 : 5;
        for (int x = 0; x < NE; x++) t[x] = calloc((size_t)rounds * reps, sizeof(double));
        for (int r = 0; r < rounds; r++)
            for (int x = 0; x < NE; x++)
                for (int k = 0; k < reps && on[x]; k++) {
                    double t0 = clock_s();
                    if (x == E_F32) {
                        gemm_args g = {.m = M, .n = N, .k = K, .a = a, .rsa = K, .csa = 1,
                                       .pb = &pv, .c = c[0], .ldc = N, .threads = threads,
                                       .epi = ep, .ws = keep_ws ? &gws : NULL};
                        gemm_f32(&g, &e);
                    } else if (kmode && x - 1 == QG_INT8DQ) {
                        kin_run(&u8, kmode, &qv[x - 1], M, N, c[x], &ep);
                    } else {
                        qgemm_ws(&qv[x - 1], a, K, M, c[x], N, &ep, threads, qws[x - 1], &e);
                    }
                    t[x][r * reps + k] = clock_s() - t0;
                }
        if (kmode) kin_c(&u8, kmode, M, N, c[1 + QG_INT8DQ]);
        for (int x = 0; x < NE; x++) {
            if (!on[x]) continue;
            qsort(t[x], (size_t)rounds * reps, sizeof(double), cmpd);
            double med = t[x][rounds * reps / 2], sig = 0, noise = 0;
            for (long long i = 0; i < M * N; i++) {
                sig += (double)c[0][i] * c[0][i];
                noise += ((double)c[x][i] - c[0][i]) * ((double)c[x][i] - c[0][i]);
            }
            printf("M=%-4lld N=%lld K=%lld %-7s %-12s %9.3f ms %8.1f GFLOP/s %7.1f GB/s  SQNR %s%.1f dB  x%.2f  min %.3f ms\n",
                   M, N, K, x - 1 == QG_INT4WO && group != 32 ? (group == 64 ? "int4wo-64" : "int4wo-128")
                                    : x ? qg_scheme_name(x - 1) : "f32",
                   x ? qg_kernel_name(x - 1) : gemm_kernel_name(kr), med * 1e3,
                   2.0 * M * N * K / med * 1e-9, wbytes[x] / med * 1e-9, x ? "" : ">",
                   x ? 10 * log10(sig / noise) : 99.0, t[0][rounds * reps / 2] / med, t[x][0] * 1e3);
        }
        fflush(stdout);
        kin_free(&u8);
        gemm_ws_free(&gws);
        for (int q = 0; q < QG_N; q++) aligned_free(qws[q]);
    }
    return 0;
}
