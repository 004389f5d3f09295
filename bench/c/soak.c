/* Soak test (issue 18; not in ctest: minutes): one session served from two
 * threads for RUNS runs in all (default 100,000) of a small model or
 * artifact. Every 1,000th run of each thread its outputs are compared bit for
 * bit with the first run's; resident memory (VmRSS) is read after a warm-up
 * of WARMUP runs per thread and at the end. Fails (exit 1) on a failed run,
 * an output that differs, or RSS growth of 1% or more after the warm-up.
 *
 * usage: bench-soak MODEL [RUNS [WARMUP]]
 *   Inputs: float32 in [-1, 1), other dtypes zero; -1 dims are 1. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ait.h"

#define MAX_IO 64

typedef struct soak {
    ait_session *s;
    ait_tensor *in[MAX_IO];
    ait_tensor *want[MAX_IO]; /* the first run's outputs */
    int nin, nout;
    long runs, warmup;
    pthread_barrier_t warm;    /* both threads warm before RSS is read */
    long rss_warm;
} soak;

typedef struct job {
    soak *k;
    long failed, differ;
    pthread_t th;
} job;

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

static bool same(ait_tensor *a, ait_tensor *b)
{
    return ait_tensor_nbytes(a) == ait_tensor_nbytes(b) &&
           memcmp(ait_tensor_data(a), ait_tensor_data(b), ait_tensor_nbytes(a)) == 0;
}

static void *work(void *arg)
{
    job *j = arg;
    soak *k = j->k;
    ait_tensor *out[MAX_IO];
    for (long r = 0; r < k->runs / 2; r++) {
        if (r == k->warmup && pthread_barrier_wait(&k->warm) == PTHREAD_BARRIER_SERIAL_THREAD)
            k->rss_warm = rss_kb();
        if (r == k->warmup) pthread_barrier_wait(&k->warm); /* nobody runs while RSS is read */
        if (ait_session_run(k->s, k->in, k->nin, out, k->nout) != AIT_OK) {
            j->failed++;
            continue;
        }
        for (int o = 0; o < k->nout; o++) {
            if (r % 1000 == 0 && !same(out[o], k->want[o])) j->differ++;
            ait_tensor_free(out[o]);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench-soak MODEL [RUNS [WARMUP]]\n");
        return 2;
    }
    soak k = {.runs = argc > 2 ? atol(argv[2]) : 100000, .warmup = argc > 3 ? atol(argv[3]) : 2000};
    if (k.warmup >= k.runs / 2) k.warmup = k.runs / 4;
    ait_model *m;
    ait_error e = {0};
    if (ait_model_load(argv[1], &m, &e) != AIT_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], e.msg);
        return 1;
    }
    k.nin = ait_model_input_count(m), k.nout = ait_model_output_count(m);
    if (k.nin > MAX_IO || k.nout > MAX_IO) return 1;
    for (int i = 0; i < k.nin; i++) {
        ait_value_info vi;
        ait_model_input(m, i, &vi);
        int64_t dims[AIT_MAX_RANK];
        for (int d = 0; d < vi.rank; d++) dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
        if (!(k.in[i] = ait_tensor_create(vi.dtype, vi.rank, dims))) return 1;
        if (vi.dtype == AIT_F32) {
            float *p = ait_tensor_data(k.in[i]);
            for (int64_t q = 0; q < ait_tensor_numel(k.in[i]); q++)
                p[q] = (float)((q * 7919) % 2000) / 1000.0f - 1.0f;
        }
    }
    ait_session_options o = {.size = sizeof o, .threads = 1, .contexts = 2};
    if (ait_session_create(m, &o, &k.s, &e) != AIT_OK ||
        ait_session_run(k.s, k.in, k.nin, k.want, k.nout) != AIT_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], e.msg[0] ? e.msg : ait_session_error(k.s));
        return 1;
    }
    pthread_barrier_init(&k.warm, NULL, 2);
    job j[2] = {{.k = &k}, {.k = &k}};
    for (int t = 0; t < 2; t++) pthread_create(&j[t].th, NULL, work, &j[t]);
    for (int t = 0; t < 2; t++) pthread_join(j[t].th, NULL);
    long end = rss_kb(), failed = j[0].failed + j[1].failed, differ = j[0].differ + j[1].differ;
    double growth = k.rss_warm > 0 ? (double)(end - k.rss_warm) / (double)k.rss_warm : 1;
    printf("soak %s: %ld runs from 2 threads, %ld failed, %ld checks differ; RSS after warm-up "
           "%ld kB, at the end %ld kB (%+.2f%%)\n", argv[1], k.runs / 2 * 2, failed, differ,
           k.rss_warm, end, 100 * growth);
    bool ok = !failed && !differ && growth < 0.01;
    puts(ok ? "soak: ok" : "soak: FAILED");
    for (int i = 0; i < k.nin; i++) ait_tensor_free(k.in[i]);
    for (int i = 0; i < k.nout; i++) ait_tensor_free(k.want[i]);
    ait_session_free(k.s);
    ait_model_free(m);
    return ok ? 0 : 1;
}
