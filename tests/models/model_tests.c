/* Model tests: runs the exported models (tools/export_models.py) through ait
 * on PyTorch's inputs and compares with PyTorch's outputs:
 * max |ait - torch| / max |torch| <= 1e-4 per output. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/tensor.h"
#include "io/npy.h"

#define TOL 1e-4

static const tensor *find(const npz *z, const char *name)
{
    for (int i = 0; i < z->n; i++)
        if (!strcmp(z->names[i], name)) return z->arrays[i];
    return NULL;
}

/* Returns the scaled error, or INFINITY on a shape or dtype mismatch. */
static double scaled_err(const tensor *got, const tensor *want)
{
    if (got->dtype != want->dtype || got->rank != want->rank) return INFINITY;
    for (int i = 0; i < got->rank; i++)
        if (got->dims[i] != want->dims[i]) return INFINITY;
    double err = 0, scale = 0;
    for (int64_t i = 0, n = tensor_numel(want); i < n; i++) {
        double a = elem_get_f64(got->data, got->dtype, i), b = elem_get_f64(want->data, want->dtype, i);
        if (isnan(a) != isnan(b)) return INFINITY;
        err = fmax(err, fabs(a - b));
        scale = fmax(scale, fabs(b));
    }
    return scale > 0 ? err / scale : err;
}

static int run_case(ait_model *m, ait_session *s, const char *dir, const char *name, int k)
{
    char in_path[4096], out_path[4096];
    snprintf(in_path, sizeof in_path, "%s/%s.in.%d.npz", dir, name, k);
    snprintf(out_path, sizeof out_path, "%s/%s.out.%d.npz", dir, name, k);
    ait_error e = {0};
    npz *in = NULL, *want = NULL;
    ait_tensor *ins[64] = {0}, *outs[64] = {0};
    int n_in = ait_model_input_count(m), n_out = ait_model_output_count(m), ok = 0;
    if (npz_load(in_path, &in, &e) != AIT_OK || npz_load(out_path, &want, &e) != AIT_OK) {
        printf("FAIL %s case %d: %s\n", name, k, e.msg);
        goto done;
    }
    for (int i = 0; i < n_in; i++) {
        ait_value_info vi;
        ait_model_input(m, i, &vi);
        ins[i] = (tensor *)find(in, vi.name);
        if (!ins[i]) {
            printf("FAIL %s case %d: %s has no input '%s'\n", name, k, in_path, vi.name);
            goto done;
        }
    }
    if (ait_session_run(s, ins, n_in, outs, n_out) != AIT_OK) {
        printf("FAIL %s case %d: %s\n", name, k, ait_session_error(s));
        goto done;
    }
    double worst = 0;
    const char *worst_name = "";
    for (int j = 0; j < n_out; j++) {
        ait_value_info vi;
        ait_model_output(m, j, &vi);
        const tensor *w = find(want, vi.name);
        double err = w ? scaled_err(outs[j], w) : INFINITY;
        if (err > worst || j == 0) worst = err, worst_name = vi.name;
    }
    char shape[128];
    ok = worst <= TOL;
    printf("%s %s case %d (input 0 %s): max scaled error %.3g (output '%s', bound %g)\n",
           ok ? "PASS" : "FAIL", name, k, shape_str(ins[0]->dims, ins[0]->rank, shape, sizeof shape),
           worst, worst_name, TOL);
done:
    for (int j = 0; j < n_out; j++) ait_tensor_free(outs[j]);
    npz_free(in);
    npz_free(want);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ait-model-tests MODEL_DIR NAME...\n"
                        "  runs MODEL_DIR/NAME.onnx on NAME.in.K.npz, compares with NAME.out.K.npz\n");
        return 2;
    }
    int pass = 0, fail = 0;
    for (int a = 2; a < argc; a++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.onnx", argv[1], argv[a]);
        ait_error e = {0};
        ait_model *m = NULL;
        ait_session *s = NULL;
        if (ait_model_load(path, &m, &e) != AIT_OK || ait_session_create(m, NULL, &s, &e) != AIT_OK) {
            printf("FAIL %s: %s\n", argv[a], e.msg);
            fail++;
            ait_model_free(m);
            continue;
        }
        for (int k = 0;; k++) {
            struct stat st;
            char in_path[4096];
            snprintf(in_path, sizeof in_path, "%s/%s.in.%d.npz", argv[1], argv[a], k);
            if (stat(in_path, &st) != 0) {
                if (k == 0) printf("FAIL %s: no cases (%s missing)\n", argv[a], in_path), fail++;
                break;
            }
            if (run_case(m, s, argv[1], argv[a], k)) pass++;
            else fail++;
        }
        ait_session_free(s);
        ait_model_free(m);
    }
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
