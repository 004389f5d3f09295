/* Peak float32 FMA throughput of this CPU: a loop of independent FMAs on
 * registers only (no memory traffic), per ISA the CPU has (AVX-512, AVX2,
 * and a portable multiply-add fallback), on one core and on all cores; and
 * with AVX512-BF16, vdpbf16ps's (two bf16 products into each float lane:
 * 64 flops an instruction, qgemm's bf16 kernel). Prints one JSON object
 * per line:
 *   {"isa":"avx512","threads":1,"gflops":...}
 * usage: bench-peak [-c] [SECONDS_PER_MEASUREMENT]
 *   -c   the process's CPU time over the threads (CLOCK_PROCESS_CPUTIME_ID:
 *        on a loaded machine, preemption left out), not the wall clock */
#include <immintrin.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timer.h"

/* 12 independent chains hide the FMA latency (4-5 cycles) on 2 pipes. */
#define CHAINS 12
#define FMA12(f) f(0) f(1) f(2) f(3) f(4) f(5) f(6) f(7) f(8) f(9) f(10) f(11)

__attribute__((target("avx512f"))) static float loop_avx512(long iters)
{
    const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
#define DECL(k) __m512 a##k = _mm512_set1_ps(1.0f + (float)(k));
#define STEP(k) a##k = _mm512_fmadd_ps(a##k, m, c);
#define SUM(k) s = _mm512_add_ps(s, a##k);
    FMA12(DECL)
    for (long i = 0; i < iters; i++) {
        FMA12(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    FMA12(SUM)
    return _mm512_reduce_add_ps(s);
#undef DECL
#undef STEP
#undef SUM
}

__attribute__((target("avx2,fma"))) static float loop_avx2(long iters)
{
    const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
#define DECL(k) __m256 a##k = _mm256_set1_ps(1.0f + (float)(k));
#define STEP(k) a##k = _mm256_fmadd_ps(a##k, m, c);
#define SUM(k) s = _mm256_add_ps(s, a##k);
    FMA12(DECL)
    for (long i = 0; i < iters; i++) {
        FMA12(STEP)
    }
    __m256 s = _mm256_setzero_ps();
    FMA12(SUM)
    float v[8];
    _mm256_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
#undef DECL
#undef STEP
#undef SUM
}

/* vdpbf16ps: per float lane, two bf16 products added (4 flops). Its
 * latency is about 6 cycles at 2 a cycle (this Zen 5): 12 chains reach
 * 0.9 of its rate, so 24 (two steps of FMA12 a loop; counted as 64
 * lanes). */
__attribute__((target("avx512f,avx512bf16"))) static float loop_bf16(long iters)
{
    const __m512bh m = (__m512bh)_mm512_set1_epi32(0x3f7f3f7f), c = (__m512bh)_mm512_set1_epi32(0x33d633d6);
#define DECL(k) __m512 a##k = _mm512_set1_ps(1.0f + (float)(k)), b##k = _mm512_set1_ps(0.5f - (float)(k));
#define STEP(k) a##k = _mm512_dpbf16_ps(a##k, m, c); b##k = _mm512_dpbf16_ps(b##k, m, c);
#define SUM(k) s = _mm512_add_ps(s, _mm512_add_ps(a##k, b##k));
    FMA12(DECL)
    for (long i = 0; i < iters; i++) {
        FMA12(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    FMA12(SUM)
    return _mm512_reduce_add_ps(s);
#undef DECL
#undef STEP
#undef SUM
}

/* Portable: whatever the compiler makes of a multiply-add (counted as 2). */
static float loop_plain(long iters)
{
    volatile float vm = 0.9999999f, vc = 1e-7f;
    const float m = vm, c = vc;
#define DECL(k) float a##k = 1.0f + (float)(k);
#define STEP(k) a##k = a##k * m + c;
#define SUM(k) s += a##k;
    FMA12(DECL)
    for (long i = 0; i < iters; i++) {
        FMA12(STEP)
    }
    float s = 0;
    FMA12(SUM)
    return s;
#undef DECL
#undef STEP
#undef SUM
}

typedef float (*loop_fn)(long);
static volatile float sink;
static bool cpu_clock;

static double clock_s(void)
{
    struct timespec ts;
    if (!cpu_clock) return now_s();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* GFLOP/s of fn on `threads` threads (flops per lane per step: `lanes`
 * counts them), best of 5 runs of about `secs`. */
static double measure(loop_fn fn, int lanes, int threads, double secs)
{
    long iters = 1 << 16;
    for (;;) { /* calibrate on one thread */
        double t0 = now_s();
        sink = fn(iters);
        if (now_s() - t0 > secs / 4 || iters > (1L << 40)) break;
        iters *= 2;
    }
    double t0 = now_s();
    sink = fn(iters);
    double one = now_s() - t0;
    iters = (long)((double)iters * secs / (one > 1e-9 ? one : 1e-9));
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double start = clock_s();
#pragma omp parallel num_threads(threads)
        {
            float v = fn(iters);
#pragma omp atomic
            sink += v;
        }
        /* CPU time: the threads' sum, so per thread as the wall clock's */
        double el = (clock_s() - start) / (cpu_clock ? threads : 1);
        double gf = (double)iters * CHAINS * lanes * 2.0 * threads / el / 1e9;
        best = gf > best ? gf : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int arg = 1;
    if (arg < argc && strcmp(argv[arg], "-c") == 0) cpu_clock = true, arg++;
    double secs = arg < argc ? atof(argv[arg]) : 0.3;
    if (!(secs > 0)) {
        fprintf(stderr, "bench-peak: SECONDS must be a positive number, got '%s'\n", argv[arg]);
        return 2;
    }
    int cores = omp_get_num_procs();
    struct { const char *isa; loop_fn fn; int lanes; int ok; } isas[] = {
        {"avx512", loop_avx512, 16, __builtin_cpu_supports("avx512f")},
        /* 16 lanes of 2 products: 32 multiply-adds an instruction, 2 a chain a step */
        {"avx512-bf16", loop_bf16, 64, __builtin_cpu_supports("avx512bf16")},
        {"avx2", loop_avx2, 8, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
        {"plain", loop_plain, 1, 1},
    };
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (!isas[i].ok) continue;
        int tlist[2] = {1, cores};
        for (int j = 0; j < (cores > 1 ? 2 : 1); j++)
            printf("{\"isa\":\"%s\",\"threads\":%d,\"gflops\":%.2f}\n", isas[i].isa, tlist[j],
                   measure(isas[i].fn, isas[i].lanes, tlist[j], secs));
    }
    return 0;
}
