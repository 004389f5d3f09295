/* Quantised GEMM against ait's float32 GEMM: C[M,N] = A[M,K] * B with B a
 * prepacked constant (as the native backend runs MatMul/Gemm weights), for
 * f32 (gemm_f32), bf16, int8dq, int8wo and int4wo (kernels/qgemm.h), timed
 * in interleaved rounds on the same A and B, one thread. Prints per engine
 * and shape the median ms, GFLOP/s, GB/s of weight bytes streamed and the
 * SQNR of C against the f32 result.
 * usage: bench-qgemm [-c] [-e] [-i ISA] [-s SCHEME,...] ROUNDS M:N:K...
 *   -i   cap qgemm's kernels at ISA (avx512, avx2, portable: kisa_force; f32 keeps its own)
 *   -e   every GEMM with a column bias and GELU epilogue (bert's FFN)
 *   -s   only these qgemm schemes (f32, the reference, always runs)
 *   -c   time the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: on a
 *        loaded machine, preemption left out) rather than the wall clock */
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

static double clock_s(void)
{
    struct timespec ts;
    if (!cpu_clock) return now_s();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    bool epi = false, on[NE];
    for (int x = 0; x < NE; x++) on[x] = true;
    int arg = 1;
    for (; arg < argc && argv[arg][0] == '-'; arg++) {
        if (strcmp(argv[arg], "-c") == 0) {
            cpu_clock = true;
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
        fprintf(stderr, "usage: bench-qgemm [-c] [-e] [-i ISA] [-s SCHEME,...] ROUNDS M:N:K...\n");
        return 2;
    }
    int rounds = atoi(argv[arg]);
    for (int s = arg + 1; s < argc; s++) {
        long long M, N, K;
        if (sscanf(argv[s], "%lld:%lld:%lld", &M, &N, &K) != 3) return 2;
        float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
        float *c[NE];
        for (int i = 0; i < M * K; i++) a[i] = (float)rand() / RAND_MAX - 0.5f;
        float *bias = malloc(sizeof(float) * (size_t)N);
        for (long long j = 0; j < N; j++) bias[j] = (float)rand() / RAND_MAX - 0.5f;
        gemm_epi ep = {0};
        if (epi) ep = (gemm_epi){.bias_mode = GEMM_BIAS_COL, .bias = bias, .act = GEMM_ACT_GELU};
        for (long long i = 0; i < K * N; i++) b[i] = ((float)rand() / RAND_MAX - 0.5f) * 0.1f;
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
            size_t sz = qg_pack_size(q, 32, K, N);
            qb[q] = aligned_zalloc(sz);
            qg_pack(q, 32, b, N, 1, K, N, qb[q]);
            qg_view(qb[q], sz, &qv[q], &e);
            wbytes[1 + q] = (double)sz;
        }
        for (int x = 0; x < NE; x++) c[x] = aligned_zalloc(sizeof(float) * (size_t)(M * N));
        double *t[NE];
        int reps = M * N * K > (1LL << 31) ? 1 : 5;
        for (int x = 0; x < NE; x++) t[x] = calloc((size_t)rounds * reps, sizeof(double));
        for (int r = 0; r < rounds; r++)
            for (int x = 0; x < NE; x++)
                for (int k = 0; k < reps && on[x]; k++) {
                    double t0 = clock_s();
                    if (x == E_F32) {
                        gemm_args g = {.m = M, .n = N, .k = K, .a = a, .rsa = K, .csa = 1,
                                       .pb = &pv, .c = c[0], .ldc = N, .threads = 1, .epi = ep};
                        gemm_f32(&g, &e);
                    } else {
                        qgemm(&qv[x - 1], a, K, M, c[x], N, &ep, 1, &e);
                    }
                    t[x][r * reps + k] = clock_s() - t0;
                }
        for (int x = 0; x < NE; x++) {
            if (!on[x]) continue;
            qsort(t[x], (size_t)rounds * reps, sizeof(double), cmpd);
            double med = t[x][rounds * reps / 2], sig = 0, noise = 0;
            for (long long i = 0; i < M * N; i++) {
                sig += (double)c[0][i] * c[0][i];
                noise += ((double)c[x][i] - c[0][i]) * ((double)c[x][i] - c[0][i]);
            }
            printf("M=%-4lld N=%lld K=%lld %-7s %-12s %9.3f ms %8.1f GFLOP/s %7.1f GB/s  SQNR %s%.1f dB  x%.2f\n",
                   M, N, K, x ? qg_scheme_name(x - 1) : "f32",
                   x ? qg_kernel_name(x - 1) : gemm_kernel_name(kr), med * 1e3,
                   2.0 * M * N * K / med * 1e-9, wbytes[x] / med * 1e-9, x ? "" : ">",
                   x ? 10 * log10(sig / noise) : 99.0, t[0][rounds * reps / 2] / med);
        }
        fflush(stdout);
    }
    return 0;
}
