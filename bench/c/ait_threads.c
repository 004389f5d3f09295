/* Throughput of one session run from two threads at one intra-op thread
 * ("2x1") against one thread at two intra-op threads ("1x2"), side by side
 * in one process: rounds alternate the two configurations (which one goes
 * first alternates too), so that the machine's drift falls on both alike.
 * Each configuration has its own session, made before any round; every
 * round runs RUNS model runs in total (2x1: RUNS/2 per thread).
 *
 * usage: bench-ait-threads MODEL_2x1 MODEL_1x2 [BATCH [ROUNDS [RUNS]]]
 *   MODEL_2x1 runs with session threads 1, MODEL_1x2 with threads 2: give
 *   the same .onnx twice for an untuned model, or two .ait tuned at 1 and
 *   at 2 threads (a .ait's modules run at the counts they were tuned at).
 *   Inputs: float32 in [-1, 1), int64 0; -1 dims take BATCH (default 1).
 * Prints each round's throughput (runs/s) and the medians and their ratio. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ait.h"
#include "timer.h"

#define MAX_IO 64

typedef struct cfg {
    const char *name;
    ait_model *m;
    ait_session *s;
    ait_tensor *in[MAX_IO];
    int nin, nout, callers;
    double tput[256];
} cfg;

typedef struct job {
    cfg *c;
    int runs, failed;
    pthread_t th;
} job;

static void *work(void *arg)
{
    job *j = arg;
    ait_tensor *out[MAX_IO];
    for (int r = 0; r < j->runs; r++) {
        if (ait_session_run(j->c->s, j->c->in, j->c->nin, out, j->c->nout) != AIT_OK) {
            j->failed++;
            continue;
        }
        for (int k = 0; k < j->c->nout; k++) ait_tensor_free(out[k]);
    }
    return NULL;
}

/* One round of c: runs model runs split over c->callers threads; runs/s. */
static double round_of(cfg *c, int runs)
{
    job j[2];
    double t0 = now_s();
    for (int i = 0; i < c->callers; i++) {
        j[i] = (job){.c = c, .runs = runs / c->callers};
        if (pthread_create(&j[i].th, NULL, work, &j[i]) != 0) return -1;
    }
    int failed = 0;
    for (int i = 0; i < c->callers; i++) {
        pthread_join(j[i].th, NULL);
        failed += j[i].failed;
    }
    double dt = now_s() - t0;
    if (failed) {
        fprintf(stderr, "%s: %d runs failed: %s\n", c->name, failed, ait_session_error(c->s));
        return -1;
    }
    return (runs / c->callers) * c->callers / dt;
}

static int setup(cfg *c, const char *path, int threads, int batch)
{
    ait_error e = {0};
    if (ait_model_load(path, &c->m, &e) != AIT_OK) {
        fprintf(stderr, "%s: %s\n", path, e.msg);
        return 1;
    }
    c->nin = ait_model_input_count(c->m);
    c->nout = ait_model_output_count(c->m);
    if (c->nin > MAX_IO || c->nout > MAX_IO) return 1;
    for (int i = 0; i < c->nin; i++) {
        ait_value_info vi;
        ait_model_input(c->m, i, &vi);
        int64_t dims[AIT_MAX_RANK];
        for (int d = 0; d < vi.rank; d++) dims[d] = vi.dims[d] < 0 ? batch : vi.dims[d];
        c->in[i] = ait_tensor_create(vi.dtype, vi.rank, dims);
        if (!c->in[i]) return 1;
        if (vi.dtype == AIT_F32) {
            float *p = ait_tensor_data(c->in[i]);
            for (int64_t k = 0; k < ait_tensor_numel(c->in[i]); k++)
                p[k] = (float)((k * 7919) % 2000) / 1000.0f - 1.0f;
        }
    }
    /* Two contexts up front: the 2x1 rounds make none while timed. */
    ait_session_options o = {.size = sizeof o, .threads = threads, .contexts = 2};
    if (ait_session_create(c->m, &o, &c->s, &e) != AIT_OK) {
        fprintf(stderr, "%s: %s\n", path, e.msg);
        return 1;
    }
    c->callers = threads == 1 ? 2 : 1;
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-ait-threads MODEL_2x1 MODEL_1x2 [BATCH [ROUNDS [RUNS]]]\n");
        return 2;
    }
    int batch = argc > 3 ? atoi(argv[3]) : 1, rounds = argc > 4 ? atoi(argv[4]) : 7;
    int runs = argc > 5 ? atoi(argv[5]) : 40;
    if (batch < 1 || rounds < 1 || rounds > 256 || runs < 2) return 2;
    cfg c[2] = {{.name = "2x1"}, {.name = "1x2"}};
    if (setup(&c[0], argv[1], 1, batch) || setup(&c[1], argv[2], 2, batch)) return 1;
    for (int k = 0; k < 2; k++) /* warm-up: plans, buffers, every context */
        if (round_of(&c[k], 4) < 0) return 1;
    printf("round  2x1 runs/s  1x2 runs/s\n");
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 2; i++) {
            cfg *x = &c[(r + i) % 2];
            x->tput[r] = round_of(x, runs);
            if (x->tput[r] < 0) return 1;
        }
        printf("%5d  %10.2f  %10.2f\n", r, c[0].tput[r], c[1].tput[r]);
    }
    double med[2];
    for (int k = 0; k < 2; k++) {
        qsort(c[k].tput, (size_t)rounds, sizeof(double), cmp);
        med[k] = c[k].tput[rounds / 2];
    }
    printf("median 2x1 (2 callers, 1 thread each) %.2f runs/s, 1x2 (1 caller, 2 threads) %.2f "
           "runs/s, ratio 2x1/1x2 %.3f\n", med[0], med[1], med[0] / med[1]);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < c[k].nin; i++) ait_tensor_free(c[k].in[i]);
        ait_session_free(c[k].s);
        ait_model_free(c[k].m);
    }
    return 0;
}
