/* Memory bandwidth, STREAM-like: copy (c = a) and triad (a = b + s*c) over
 * arrays far larger than the last-level cache, on one thread and on all
 * cores; best of REPS. Bytes counted as STREAM does (copy 2, triad 3 words
 * per element; write-allocate traffic not counted).
 * Prints one JSON object per line:
 *   {"kernel":"copy","threads":1,"gbs":...,"mib_per_array":...}
 * usage: bench-stream [MIB_PER_ARRAY [REPS]] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "timer.h"

static void run(float *a, float *b, float *c, long n, int threads, int reps, double mib)
{
    double best_copy = 1e30, best_triad = 1e30;
    const float s = 3.0f;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < n; i++) c[i] = a[i];
        double t1 = now_s();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        double t2 = now_s();
        best_copy = t1 - t0 < best_copy ? t1 - t0 : best_copy;
        best_triad = t2 - t1 < best_triad ? t2 - t1 : best_triad;
    }
    printf("{\"kernel\":\"copy\",\"threads\":%d,\"gbs\":%.2f,\"mib_per_array\":%.0f}\n", threads,
           2.0 * 4 * (double)n / best_copy / 1e9, mib);
    printf("{\"kernel\":\"triad\",\"threads\":%d,\"gbs\":%.2f,\"mib_per_array\":%.0f}\n", threads,
           3.0 * 4 * (double)n / best_triad / 1e9, mib);
}

int main(int argc, char **argv)
{
    double mib = argc > 1 ? atof(argv[1]) : 256;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (!(mib >= 1) || reps < 1) {
        fprintf(stderr, "bench-stream: usage: bench-stream [MIB_PER_ARRAY>=1 [REPS>=1]]\n");
        return 2;
    }
    long n = (long)(mib * 1024 * 1024 / 4);
    float *a = aligned_alloc(64, (size_t)n * 4), *b = aligned_alloc(64, (size_t)n * 4),
          *c = aligned_alloc(64, (size_t)n * 4);
    if (!a || !b || !c) {
        fprintf(stderr, "bench-stream: cannot allocate 3 arrays of %.0f MiB\n", mib);
        return 1;
    }
    int cores = omp_get_num_procs();
#pragma omp parallel for num_threads(cores) schedule(static)
    for (long i = 0; i < n; i++) a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.0f;
    run(a, b, c, n, 1, reps, mib);
    if (cores > 1) run(a, b, c, n, cores, reps, mib);
    free(a), free(b), free(c);
    return 0;
}
