/* ait as a bench peer: loads a model and its inputs once, then answers
 * commands on stdin, one per line, so that bench/models.py can interleave
 * its runs with ONNX Runtime's and PyTorch's (bench/ort_runner.js and
 * bench/torch_runner.py speak the same protocol):
 *   out DIR   run once, write each output as DIR/NAME.npy    -> "ok"
 *   time N    run N times                                    -> "t MS MS ..."
 *   cpu N     run N times, each run's process CPU time (user + system, every
 *             thread: a shared machine's preemptions are not in it) -> "t MS MS ..."
 * With more models (same inputs), one process compares them run by run
 * (bench/tuned.py: two artifacts side by side, so that the time-varying
 * part of this machine's noise falls on both alike):
 *   alt N     N rounds, each running every model once, the order rotating
 *             from round to round -> "t MS MS ..." (N x models: round by
 *             round, each round's times in the order the models were given)
 * "out" and "time" use the first model. Startup prints "ready"; any failure
 * prints "error MESSAGE" and exits 1.
 * usage: bench-ait-runner MODEL INPUT_DIR THREADS [MODEL ...] [--bind | --cache]
 *   MODEL is a .onnx or .ait; INPUT_DIR holds NAME.npy for every model input NAME.
 *   --bind: every run goes through an ait_binding of its session made once, inputs
 *   bound and outputs bound to buffers made after a first run (of its output shapes),
 *   as ort_runner.js --bind binds ONNX Runtime's outputs to preallocated buffers: no
 *   output allocated per run, and outputs written in place where ait can.
 *   --cache: --bind, and each past input past_X with its present output present_X
 *   bound as one key/value cache (ait_binding_set_cache, axis 2) whose buffer is the
 *   present's (its first positions the past, copied in once): every run appends the
 *   new positions in place after the same past, as a decode loop does
 *   (examples/generate.c), and the buffer reads as the dense present. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ait.h"
#include "timer.h"

#define MAX_IO 64
#define MAX_MODELS 8

static int fail(const char *what, const char *msg)
{
    printf("error %s: %s\n", what, msg);
    fflush(stdout);
    return 1;
}

typedef struct peer {
    ait_model *m;
    ait_session *s;
    ait_binding *b; /* --bind: inputs bound, outputs bound to bufs */
    ait_tensor *bufs[MAX_IO];
} peer;

/* One run of p: into out[] (the caller frees them), or with --bind into
 * the binding's outputs (out[] then points at them: not to be freed). */
static ait_status run(const peer *p, ait_tensor *const *in, int nin, ait_tensor **out, int nout)
{
    if (!p->b) return ait_session_run(p->s, in, nin, out, nout);
    ait_status s = ait_session_run_bound(p->s, p->b);
    for (int j = 0; s == AIT_OK && j < nout; j++) out[j] = ait_binding_output(p->b, j);
    return s;
}

/* One timed run of p (outputs freed); the time in ms (wall clock, or the
 * process's CPU time when cpu), or < 0 on failure. */
static double timed_run(const peer *p, ait_tensor *const *in, int nin, int nout, bool cpu)
{
    ait_tensor *out[MAX_IO] = {0};
    double t0 = cpu ? process_cpu_s() : now_s();
    if (run(p, in, nin, out, nout) != AIT_OK) return -1;
    double ms = ((cpu ? process_cpu_s() : now_s()) - t0) * 1e3;
    if (!p->b)
        for (int j = 0; j < nout; j++) ait_tensor_free(out[j]);
    return ms;
}

/* --cache: past_X (input i) and present_X (output j) bound as one cache,
 * the buffer p->bufs[j] (made at the present's shape) holding the past in
 * its first positions along axis 2. */
static ait_status cache_pairs(peer *p, const ait_model *m, ait_tensor *const *in, int nin, int nout)
{
    ait_value_info vi, vo;
    ait_error e = {0};
    for (int i = 0; i < nin; i++) {
        ait_model_input(m, i, &vi);
        if (strncmp(vi.name, "past_", 5)) continue;
        for (int j = 0; j < nout; j++) {
            ait_model_output(m, j, &vo);
            if (strncmp(vo.name, "present_", 8) || strcmp(vo.name + 8, vi.name + 5) ||
                !p->bufs[j] || ait_tensor_rank(in[i]) != 4 || ait_tensor_rank(p->bufs[j]) != 4)
                continue;
            const int64_t *pd = ait_tensor_dims(in[i]), *cd = ait_tensor_dims(p->bufs[j]);
            const int64_t slabs = pd[0] * pd[1], P = pd[2], C = cd[2], D = pd[3];
            size_t esz = ait_dtype_size(ait_tensor_dtype(in[i]));
            for (int64_t s = 0; s < slabs; s++)
                memcpy((char *)ait_tensor_data(p->bufs[j]) + (size_t)(s * C * D) * esz,
                       (const char *)ait_tensor_data(in[i]) + (size_t)(s * P * D) * esz,
                       (size_t)(P * D) * esz);
            ait_status st = ait_binding_set_cache(p->b, i, j, p->bufs[j], 2, P, &e);
            if (st != AIT_OK) {
                fprintf(stderr, "bench-ait-runner: %s: %s\n", vi.name, e.msg);
                return st;
            }
        }
    }
    return AIT_OK;
}

int main(int argc, char **argv)
{
    bool cache = argc > 4 && strcmp(argv[argc - 1], "--cache") == 0;
    bool bind = cache || (argc > 4 && strcmp(argv[argc - 1], "--bind") == 0);
    if (bind) argc--;
    if (argc < 4 || argc - 3 > MAX_MODELS)
        return fail("usage", "bench-ait-runner MODEL INPUT_DIR THREADS [MODEL ...] [--bind | --cache] (at most 8 models)");
    const char *indir = argv[2];
    int threads = atoi(argv[3]), np = argc - 3;
    const char *paths[MAX_MODELS] = {argv[1]};
    for (int k = 1; k < np; k++) paths[k] = argv[3 + k];
    ait_error e = {0};
    peer p[MAX_MODELS] = {0};
    ait_session_options so = {.size = sizeof so, .threads = threads};
    for (int k = 0; k < np; k++)
        if (ait_model_load(paths[k], &p[k].m, &e) != AIT_OK ||
            ait_session_create(p[k].m, &so, &p[k].s, &e) != AIT_OK)
            return fail(paths[k], e.msg);
    ait_model *m = p[0].m;
    int nin = ait_model_input_count(m), nout = ait_model_output_count(m);
    if (nin > MAX_IO || nout > MAX_IO) return fail(argv[1], "too many inputs or outputs");
    for (int k = 1; k < np; k++)
        if (ait_model_input_count(p[k].m) != nin || ait_model_output_count(p[k].m) != nout)
            return fail(paths[k], "not the inputs and outputs of the first model");
    ait_tensor *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
    ait_value_info vi;
    char path[4096];
    for (int i = 0; i < nin; i++) {
        ait_model_input(m, i, &vi);
        snprintf(path, sizeof path, "%s/%s.npy", indir, vi.name);
        if (ait_tensor_load_npy(path, &in[i], &e) != AIT_OK) return fail(path, e.msg);
    }
    for (int k = 0; bind && k < np; k++) {
        if (ait_binding_create(p[k].s, &p[k].b, &e) != AIT_OK) return fail(paths[k], e.msg);
        for (int i = 0; i < nin; i++)
            if (ait_binding_set_input(p[k].b, i, in[i], &e) != AIT_OK) return fail(paths[k], e.msg);
        if (run(&p[k], in, nin, out, nout) != AIT_OK) return fail("run", ait_session_error(p[k].s));
        for (int j = 0; j < nout; j++) {
            ait_tensor *o = out[j];
            if (ait_tensor_dtype(o) == AIT_STRING) continue; /* left to the binding */
            p[k].bufs[j] = ait_tensor_create(ait_tensor_dtype(o), ait_tensor_rank(o), ait_tensor_dims(o));
            if (!p[k].bufs[j] || ait_binding_set_output(p[k].b, j, p[k].bufs[j], &e) != AIT_OK)
                return fail(paths[k], p[k].bufs[j] ? e.msg : "out of memory");
        }
        if (cache && cache_pairs(&p[k], m, in, nin, nout) != AIT_OK)
            return fail(paths[k], "binding the key/value caches failed");
        if (cache && run(&p[k], in, nin, out, nout) != AIT_OK)
            return fail("run", ait_session_error(p[k].s));
        if (cache) /* (stderr: the bench reads stdout) */
            fprintf(stderr, "bench-ait-runner: %s: %d key/value caches appended in place\n",
                    paths[k], ait_binding_caches_in_place(p[k].b));
    }
    printf("ready\n");
    fflush(stdout);
    char line[4096], arg[2048];
    double *ms = NULL;
    while (fgets(line, sizeof line, stdin)) {
        long n = 0;
        if (sscanf(line, "out %2047s", arg) == 1) {
            if (run(&p[0], in, nin, out, nout) != AIT_OK)
                return fail("run", ait_session_error(p[0].s));
            for (int j = 0; j < nout; j++) {
                ait_model_output(m, j, &vi);
                if (strchr(vi.name, '/')) return fail(vi.name, "output name is not a file name");
                snprintf(path, sizeof path, "%s/%s.npy", arg, vi.name);
                if (ait_tensor_save_npy(path, out[j], &e) != AIT_OK) return fail(path, e.msg);
                if (!p[0].b) ait_tensor_free(out[j]);
            }
            printf("ok\n");
        } else if ((sscanf(line, "time %ld", &n) == 1 || sscanf(line, "cpu %ld", &n) == 1) && n > 0) {
            printf("t");
            for (long r = 0; r < n; r++) {
                double t = timed_run(&p[0], in, nin, nout, line[0] == 'c');
                if (t < 0) return fail("run", ait_session_error(p[0].s));
                printf(" %.4f", t);
            }
            printf("\n");
        } else if (sscanf(line, "alt %ld", &n) == 1 && n > 0 && n <= 1000000) {
            free(ms);
            ms = malloc((size_t)n * (size_t)np * sizeof *ms);
            if (!ms) return fail("alt", "out of memory");
            for (long r = 0; r < n; r++)
                for (int j = 0; j < np; j++) {
                    int k = (int)((r + j) % np); /* round r starts with model r mod np */
                    double t = timed_run(&p[k], in, nin, nout, false);
                    if (t < 0) return fail("run", ait_session_error(p[k].s));
                    ms[r * np + k] = t;
                }
            printf("t");
            for (long i = 0; i < n * np; i++) printf(" %.4f", ms[i]);
            printf("\n");
        } else {
            return fail("command", line);
        }
        fflush(stdout);
    }
    free(ms);
    for (int i = 0; i < nin; i++) ait_tensor_free(in[i]);
    for (int k = 0; k < np; k++) {
        ait_binding_free(p[k].b);
        for (int j = 0; j < nout; j++) ait_tensor_free(p[k].bufs[j]);
        ait_session_free(p[k].s);
        ait_model_free(p[k].m);
    }
    return 0;
}
