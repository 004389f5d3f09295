/* For fuzz targets that load a model: runs a loaded model once on zero
 * inputs of its declared dims (unknown dims 1) when those are small, then
 * frees it. */
#ifndef AIT_FUZZ_RUN_MODEL_H
#define AIT_FUZZ_RUN_MODEL_H
#include "ait.h"

static inline void fuzz_run_model(ait_model *m)
{
    ait_session *s = NULL;
    int n_in = ait_model_input_count(m), n_out = ait_model_output_count(m);
    ait_tensor *in[16] = {0}, *out[64] = {0};
    int ok = n_in <= 16 && n_out <= 64 && ait_session_create(m, NULL, &s, NULL) == AIT_OK;
    for (int i = 0; ok && i < n_in; i++) {
        ait_value_info vi;
        ait_model_input(m, i, &vi);
        int64_t dims[AIT_MAX_RANK], numel = 1;
        for (int d = 0; d < vi.rank; d++) {
            dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
            numel *= dims[d] < 4096 ? dims[d] : 4096;
        }
        ok = vi.rank >= 0 && numel <= 4096 && (in[i] = ait_tensor_create(vi.dtype, vi.rank, dims));
    }
    if (ok && ait_session_run(s, in, n_in, out, n_out) == AIT_OK)
        for (int j = 0; j < n_out; j++) ait_tensor_free(out[j]);
    for (int i = 0; i < n_in && i < 16; i++) ait_tensor_free(in[i]); /* more: none made */
    ait_session_free(s);
    ait_model_free(m);
}
#endif
