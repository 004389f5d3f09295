/* libFuzzer target: an arbitrary byte string as an ONNX model. Loading must
 * fail cleanly or succeed; a model that loads is run once on zero inputs of
 * its declared dims (unknown dims 1) when those are small. */
#include <stdint.h>
#include <stdlib.h>

#include "ait.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ait_model *m = NULL;
    ait_session *s = NULL;
    if (ait_model_load_memory(data, size, "fuzz.onnx", &m, NULL) != AIT_OK) return 0;
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
    return 0;
}
