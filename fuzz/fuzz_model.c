/* libFuzzer target: an arbitrary byte string as an ONNX model. Loading must
 * fail cleanly or succeed; a model that loads is run once (run_model.h).
 * The same bytes parsed as an artifact's embedded model (its weights
 * borrowed from the bytes: onnx_read's borrow, io/onnx_strip.c) must load
 * exactly when the copying parse does, with the same status. */
#include <stdint.h>
#include <stdlib.h>

#include "ait.h"
#include "api/model_load.h"
#include "run_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ait_model *m = NULL, *b = NULL;
    ait_status s = ait_model_load_memory(data, size, "fuzz.onnx", &m, NULL);
    ait_status sb = model_load_embedded(data, size, "fuzz.onnx", false, &b, NULL);
    if ((s == AIT_OK) != (sb == AIT_OK)) __builtin_trap();
    ait_model_free(b);
    if (s != AIT_OK) return 0;
    fuzz_run_model(m);
    return 0;
}
