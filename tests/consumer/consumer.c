/* A program that uses ait as an installed library: only <ait.h>, linked with
 * what pkg-config or find_package(ait) says. It runs a model, tunes it through
 * the public API, saves the artifact, loads it and runs it again, and checks
 * the tuned outputs against the untuned ones.
 * usage: consumer MODEL.onnx WORKDIR   (WORKDIR receives model.ait)
 * Prints "ok: ..." or "FAILED: ..." per check and exits 1 if any failed. */
#include <ait.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names that ait uses inside the library. A program may define its own:
 * libait.so must not call these instead of its own (they are hidden, so
 * nothing interposes them), and a static link must not see two of each. */
void *json_parse(void);
void *graph_new(void);
void sha256(void);
void *json_parse(void) { fputs("FAILED: ait called the program's json_parse\n", stderr); abort(); }
void *graph_new(void) { fputs("FAILED: ait called the program's graph_new\n", stderr); abort(); }
void sha256(void) { fputs("FAILED: ait called the program's sha256\n", stderr); abort(); }

static int failed;
static void check(int cond, const char *what, const char *why)
{
    if (cond) {
        printf("ok: %s\n", what);
    } else {
        printf("FAILED: %s%s%s\n", what, why && *why ? ": " : "", why ? why : "");
        failed++;
    }
}

#define MAX_IO 16

/* One input per declared model input: symbolic dims set to 1, deterministic
 * values (small integers, so token ids stay in range). */
static int make_inputs(const ait_model *m, ait_tensor **in, int *n)
{
    *n = ait_model_input_count(m);
    if (*n > MAX_IO) return 0;
    for (int i = 0; i < *n; i++) {
        ait_value_info vi;
        if (ait_model_input(m, i, &vi) != AIT_OK) return 0;
        int64_t dims[AIT_MAX_RANK];
        for (int d = 0; d < vi.rank; d++) dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
        in[i] = ait_tensor_create(vi.dtype, vi.rank, dims);
        if (!in[i]) return 0;
        int64_t count = ait_tensor_numel(in[i]);
        void *p = ait_tensor_data(in[i]);
        for (int64_t k = 0; k < count; k++) {
            switch (vi.dtype) {
            case AIT_F32: ((float *)p)[k] = (float)((k * 37) % 101) / 101.0f - 0.5f; break;
            case AIT_I64: ((int64_t *)p)[k] = k % 7; break;
            case AIT_I32: ((int32_t *)p)[k] = (int32_t)(k % 7); break;
            default: break; /* zeroed */
            }
        }
    }
    return 1;
}

/* Runs m once on `in`; outputs into out. 0 on failure, with the message in why. */
static int run(const ait_model *m, ait_tensor **in, int n_in, ait_tensor **out, int *n_out,
               char *why, size_t why_len)
{
    ait_session *s;
    ait_error err = {0};
    *n_out = ait_model_output_count(m);
    if (*n_out > MAX_IO) {
        snprintf(why, why_len, "%d outputs", *n_out);
        return 0;
    }
    ait_session_options so = {.size = sizeof so, .threads = 1};
    if (ait_session_create(m, &so, &s, &err) != AIT_OK) {
        snprintf(why, why_len, "%s", err.msg);
        return 0;
    }
    int ok = ait_session_run(s, in, n_in, out, *n_out) == AIT_OK;
    if (!ok) snprintf(why, why_len, "%s", ait_session_error(s));
    ait_session_free(s);
    return ok;
}

/* The largest difference between a and b relative to the largest |a| (at least 1). */
static double rel_diff(ait_tensor *a, ait_tensor *b)
{
    if (ait_tensor_dtype(a) != AIT_F32 || ait_tensor_dtype(b) != AIT_F32)
        return ait_tensor_nbytes(a) == ait_tensor_nbytes(b) &&
               !memcmp(ait_tensor_data(a), ait_tensor_data(b), ait_tensor_nbytes(a)) ? 0 : INFINITY;
    if (ait_tensor_numel(a) != ait_tensor_numel(b)) return INFINITY;
    const float *x = ait_tensor_data(a), *y = ait_tensor_data(b);
    double diff = 0, scale = 1;
    for (int64_t k = 0; k < ait_tensor_numel(a); k++) {
        diff = fmax(diff, fabs((double)x[k] - y[k]));
        scale = fmax(scale, fabs((double)x[k]));
    }
    return diff / scale;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: consumer MODEL.onnx WORKDIR\n");
        return 2;
    }
    char why[1200] = "", path[4096];
    ait_error err = {0};
    check(strcmp(ait_version(), AIT_VERSION_STRING) == 0, "the library's version is the header's",
          ait_version());

    ait_model *m = NULL, *tm = NULL;
    ait_tensor *in[MAX_IO] = {0}, *out[MAX_IO] = {0}, *tout[MAX_IO] = {0};
    int n_in = 0, n_out = 0, n_tout = 0;
    ait_inspection *insp = NULL;
    ait_tuning *tuning = NULL;

    check(ait_model_load(argv[1], &m, &err) == AIT_OK, "ait_model_load", err.msg);
    if (!m) goto done;
    check(make_inputs(m, in, &n_in), "inputs from the declared dims", NULL);
    check(run(m, in, n_in, out, &n_out, why, sizeof why), "the model runs", why);

    /* Tune: one thread, short profiles (the consumer checks the API, not speed). */
    ait_inspect_options io = {.size = sizeof io, .runs = 1, .warmup = 1, .threads = 1};
    check(ait_inspect(m, &io, &insp, &err) == AIT_OK, "ait_inspect", err.msg);
    if (!insp) goto done;
    ait_tune_options to = {.size = sizeof to, .max_threads = 1, .timeout = 60, .warmup = 1,
                           .window = 3, .cap = 5};
    check(ait_tune(insp, &to, &tuning, &err) == AIT_OK, "ait_tune", err.msg);
    if (!tuning) goto done;
    check(ait_tuning_count(tuning) > 0, "the tuning has rows", NULL);
    snprintf(path, sizeof path, "%s/model.ait", argv[2]);
    check(ait_tuning_save(tuning, path, &err) == AIT_OK, "ait_tuning_save", err.msg);

    check(ait_artifact_load(path, NULL, &tm, &err) == AIT_OK, "ait_artifact_load", err.msg);
    if (!tm) goto done;
    check(ait_model_is_tuned(tm), "the artifact's model is tuned", ait_model_note(tm));
    check(run(tm, in, n_in, tout, &n_tout, why, sizeof why), "the artifact runs", why);
    check(n_tout == n_out, "the artifact has the model's outputs", NULL);
    for (int j = 0; j < n_out && j < n_tout; j++) {
        double d = out[j] && tout[j] ? rel_diff(out[j], tout[j]) : INFINITY;
        snprintf(why, sizeof why, "output %d: relative difference %g", j, d);
        check(d <= 1e-3, "the artifact's output matches the untuned model's", why);
    }

done:
    for (int j = 0; j < MAX_IO; j++) {
        ait_tensor_free(in[j]);
        ait_tensor_free(out[j]);
        ait_tensor_free(tout[j]);
    }
    ait_tuning_free(tuning);
    ait_inspection_free(insp);
    ait_model_free(tm);
    ait_model_free(m);
    printf("consumer: %d failed\n", failed);
    return failed ? 1 : 0;
}
