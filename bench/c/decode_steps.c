/* Per-step decode time with a key/value cache appended in place: steps that
 * grow the past by one position each (every step a new input shape) against
 * steps that rerun one past length (the same shape each time), interleaved
 * round by round in one process. Their ratio is what a new past length costs
 * beyond the step's own work (scheduling again), up to the attention's few
 * more positions. Timed by the wall clock and by the thread's CPU time (a
 * shared machine's preemptions are not in the latter; the session runs on
 * the calling thread at its default of one thread).
 *
 *   bench-decode-steps MODEL.onnx|NAME.ait PAST STEPS ROUNDS [BATCH]
 *
 * The model is a decoder exported as GPT-2's with past key/values: token
 * ids input 0, logits output 0, and each input i >= 1 a past whose present
 * is output i (the bundled gpt2 and llama, gpt2_small, llama_small). Prints the
 * median ms per step of each mode and their ratio, wall and CPU, and the
 * first step after the session's creation (the first run after loading, at
 * past PAST: a decode loop's, its cache bound) over the same-length median.
 * BATCH (default 1) rows each decode the same token. Each step's wall
 * time is also split by the thread's schedstat (/proc/thread-self/schedstat:
 * time on a CPU, time runnable but waiting for one): what is left, wall
 * minus both, is time the thread was blocked (I/O, a lock, a major fault),
 * which a busy machine does not explain; "wall - wait" is the step as an
 * idle machine would see it (but for caches another process emptied). */
#include <ait.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "timer.h"

#define MAX_IO 64

typedef struct cache {
    int in, out, axis;
    ait_tensor *buf;
} cache;

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "bench-decode-steps: %s: %s\n", what, msg);
    return 1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Minor page faults of the process so far. */
static long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: bench-decode-steps MODEL.onnx|NAME.ait PAST STEPS ROUNDS [BATCH]\n");
        return 2;
    }
    int past = atoi(argv[2]), steps = atoi(argv[3]), rounds = atoi(argv[4]);
    int batch = argc == 6 ? atoi(argv[5]) : 1;
    if (past < 1 || steps < 1 || rounds < 1 || batch < 1 || batch > 64)
        return fail(argv[1], "bad arguments");
    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    ait_binding *b = NULL;
    if (ait_model_load(argv[1], &m, &err) != AIT_OK) return fail(argv[1], err.msg);
    if (ait_session_create(m, NULL, &s, &err) != AIT_OK || ait_binding_create(s, &b, &err) != AIT_OK)
        return fail(argv[1], err.msg);
    int n_in = ait_model_input_count(m), n_cache = 0;
    if (n_in > MAX_IO) return fail(argv[1], "too many inputs");
    cache c[MAX_IO];
    ait_value_info vi;
    int64_t total = past + steps;
    for (int i = 1; i < n_in; i++) {
        ait_model_input(m, i, &vi);
        cache *k = &c[n_cache++];
        k->in = i;
        k->out = i < ait_model_output_count(m) ? i : -1;
        k->axis = -1;
        for (int d = 1; d < vi.rank && k->axis < 0; d++)
            if (vi.dims[d] < 0) k->axis = d;
        if (k->out < 0 || k->axis < 0) return fail(vi.name, "not a past input with output i its present");
        int64_t dims[AIT_MAX_RANK];
        for (int d = 0; d < vi.rank; d++) dims[d] = d == 0 ? batch : d == k->axis ? total : vi.dims[d];
        k->buf = ait_tensor_create(vi.dtype, vi.rank, dims);
        if (!k->buf) return fail(vi.name, "out of memory");
        memset(ait_tensor_data(k->buf), 0, (size_t)ait_tensor_numel(k->buf) * ait_dtype_size(vi.dtype));
    }
    ait_model_output(m, 0, &vi);
    int64_t one[2] = {batch, 1}, vocab = vi.dims[vi.rank - 1], ldims[3] = {batch, 1, vocab};
    int64_t ids[64];
    for (int r = 0; r < batch; r++) ids[r] = 7;
    ait_tensor *tok = ait_tensor_wrap(AIT_I64, 2, one, ids);
    ait_tensor *logits = vocab > 0 ? ait_tensor_create(AIT_F32, 3, ldims) : NULL;
    if (!tok || !logits) return fail(argv[1], "no logits [batch, seq, vocab] output");
    if (ait_binding_set_output(b, 0, logits, &err) != AIT_OK) return fail(argv[1], err.msg);
    /* per mode (growing, same length) and clock (wall, CPU): each step's seconds */
    size_t n = (size_t)rounds * (size_t)steps;
    double *t[2][2], first[2] = {0, 0}; /* the first step, wall and CPU */
    double *wq = malloc(sizeof(double) * n), *blk = malloc(sizeof(double) * n); /* same length: */
    double first_wq = 0, first_blk = 0; /* run-queue wait and blocked time; the first step's */
    long flt[2] = {0, 0};                /* page faults: the first step, the last */
    for (int k = 0; k < 4; k++)
        if (!(t[k / 2][k % 2] = malloc(sizeof(double) * n))) return fail(argv[1], "out of memory");
    if (!wq || !blk) return fail(argv[1], "out of memory");
    /* mode 0 warms up (every length once, as a generation meets them);
     * then same length and growing alternate */
    for (int mode = 0; mode < 2 * rounds + 1; mode++) {
        bool grow = mode % 2 == 0;
        int r = (mode - 1) / 2;
        for (int st = 0; st < steps; st++) {
            int64_t len = grow ? past + st : past;
            if (ait_binding_set_input(b, 0, tok, &err) != AIT_OK) return fail(argv[1], err.msg);
            for (int k = 0; k < n_cache; k++)
                if (ait_binding_set_cache(b, c[k].in, c[k].out, c[k].buf, c[k].axis, len, &err) != AIT_OK)
                    return fail(argv[1], err.msg);
            long f0 = faults();
            double r0, q0, r1, q1;
            thread_sched_s(&r0, &q0);
            double w0 = now_s(), c0 = thread_cpu_s();
            if (ait_session_run_bound(s, b) != AIT_OK) return fail(argv[1], ait_session_error(s));
            double c1 = thread_cpu_s(), w1 = now_s();
            thread_sched_s(&r1, &q1);
            flt[mode != 0 || st != 0] = faults() - f0;
            double wait = q1 - q0, blocked = (w1 - w0) - (r1 - r0) - wait;
            if (mode == 0 && st == 0) first[0] = w1 - w0, first[1] = c1 - c0, first_wq = wait, first_blk = blocked;
            if (mode == 0) continue;
            t[!grow][0][r * steps + st] = w1 - w0;
            t[!grow][1][r * steps + st] = c1 - c0;
            if (!grow) wq[r * steps + st] = w1 - w0 - wait, blk[r * steps + st] = blocked;
        }
    }
    printf("%s batch %d, past %d, %d steps x %d rounds:", argv[1], batch, past, steps, rounds);
    for (int clock = 0; clock < 2; clock++) {
        double g = median(t[0][clock], (int)n) * 1e3, sm = median(t[1][clock], (int)n) * 1e3;
        printf(" %s: growing %.4f ms/step, same length %.4f, growing/same %.3f, first step %.4f "
               "(first/same %.3f);", clock ? "cpu" : "wall", g, sm, g / sm, first[clock] * 1e3,
               first[clock] * 1e3 / sm);
    }
    double sw = median(wq, (int)n) * 1e3;
    printf(" wall - wait: same length %.4f ms/step, first step %.4f (first/same %.3f), first step's "
           "run-queue wait %.4f ms and blocked %.4f ms (same length, median: blocked %.4f);",
           sw, (first[0] - first_wq) * 1e3, (first[0] - first_wq) * 1e3 / sw, first_wq * 1e3,
           first_blk * 1e3, median(blk, (int)n) * 1e3);
    printf(" page faults: first step %ld, last %ld; caches in place %d of %d\n", flt[0], flt[1],
           ait_binding_caches_in_place(b), n_cache);
    for (int k = 0; k < n_cache; k++) ait_tensor_free(c[k].buf);
    ait_tensor_free(tok);
    ait_tensor_free(logits);
    for (int k = 0; k < 4; k++) free(t[k / 2][k % 2]);
    free(wq);
    free(blk);
    ait_binding_free(b);
    ait_session_free(s);
    ait_model_free(m);
    return 0;
}
