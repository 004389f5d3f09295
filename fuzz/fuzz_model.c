/* libFuzzer target: an arbitrary byte string as an ONNX model. Loading must
 * fail cleanly or succeed; a model that loads is run once (run_model.h). */
#include <stdint.h>
#include <stdlib.h>

#include "ait.h"
#include "run_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ait_model *m = NULL;
    if (ait_model_load_memory(data, size, "fuzz.onnx", &m, NULL) != AIT_OK) return 0;
    fuzz_run_model(m);
    return 0;
}
