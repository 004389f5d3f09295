/* ait as a bench peer: loads a model and its inputs once, then answers
 * commands on stdin, one per line, so that bench/models.py can interleave
 * its runs with ONNX Runtime's and PyTorch's (bench/ort_runner.js and
 * bench/torch_runner.py speak the same protocol):
 *   out DIR   run once, write each output as DIR/NAME.npy    -> "ok"
 *   time N    run N times                                    -> "t MS MS ..."
 * Startup prints "ready"; any failure prints "error MESSAGE" and exits 1.
 * usage: bench-ait-runner MODEL.onnx INPUT_DIR THREADS
 *   INPUT_DIR holds NAME.npy for every model input NAME */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ait.h"
#include "timer.h"

#define MAX_IO 64

static int fail(const char *what, const char *msg)
{
    printf("error %s: %s\n", what, msg);
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) return fail("usage", "bench-ait-runner MODEL.onnx INPUT_DIR THREADS");
    ait_error e = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    if (ait_model_load(argv[1], &m, &e) != AIT_OK ||
        ait_session_create(m, &(ait_session_options){.threads = atoi(argv[3])}, &s, &e) != AIT_OK)
        return fail(argv[1], e.msg);
    int nin = ait_model_input_count(m), nout = ait_model_output_count(m);
    if (nin > MAX_IO || nout > MAX_IO) return fail(argv[1], "too many inputs or outputs");
    ait_tensor *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
    ait_value_info vi;
    char path[4096];
    for (int i = 0; i < nin; i++) {
        ait_model_input(m, i, &vi);
        snprintf(path, sizeof path, "%s/%s.npy", argv[2], vi.name);
        if (ait_tensor_load_npy(path, &in[i], &e) != AIT_OK) return fail(path, e.msg);
    }
    printf("ready\n");
    fflush(stdout);
    char line[4096], arg[2048];
    while (fgets(line, sizeof line, stdin)) {
        long n = 0;
        if (sscanf(line, "out %2047s", arg) == 1) {
            if (ait_session_run(s, in, nin, out, nout) != AIT_OK) return fail("run", ait_session_error(s));
            for (int j = 0; j < nout; j++) {
                ait_model_output(m, j, &vi);
                if (strchr(vi.name, '/')) return fail(vi.name, "output name is not a file name");
                snprintf(path, sizeof path, "%s/%s.npy", arg, vi.name);
                if (ait_tensor_save_npy(path, out[j], &e) != AIT_OK) return fail(path, e.msg);
                ait_tensor_free(out[j]);
            }
            printf("ok\n");
        } else if (sscanf(line, "time %ld", &n) == 1 && n > 0) {
            printf("t");
            for (long r = 0; r < n; r++) {
                double t0 = now_s();
                if (ait_session_run(s, in, nin, out, nout) != AIT_OK) return fail("run", ait_session_error(s));
                double ms = (now_s() - t0) * 1e3;
                for (int j = 0; j < nout; j++) ait_tensor_free(out[j]);
                printf(" %.4f", ms);
            }
            printf("\n");
        } else {
            return fail("command", line);
        }
        fflush(stdout);
    }
    for (int i = 0; i < nin; i++) ait_tensor_free(in[i]);
    ait_session_free(s);
    ait_model_free(m);
    return 0;
}
