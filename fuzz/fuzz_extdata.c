/* libFuzzer target: an ONNX model with external data. The input is a model
 * and one data file: two bytes (little-endian) giving the model's length, the
 * model, then the file's bytes. Both are written, as model.onnx and data.bin,
 * into a folder this process makes once, and the model is loaded from that
 * path, so its tensors' locations, offsets and lengths meet a real file (and
 * the folder's bounds). A model that loads is run once (run_model.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ait.h"
#include "run_model.h"

static char dir[64], model[96], file[96];

/* The folder and its two files go when the process ends. */
static void cleanup(void)
{
    remove(model);
    remove(file);
    remove(dir);
}

static int put(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, size, f);
    return fclose(f) == 0 && w == size ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/ait-fuzz-extdata-XXXXXX");
        if (!mkdtemp(dir)) abort(); /* the harness's own failure, not ait's */
        snprintf(model, sizeof model, "%s/model.onnx", dir);
        snprintf(file, sizeof file, "%s/data.bin", dir);
        atexit(cleanup);
    }
    if (size < 2) return 0;
    size_t n = (size_t)data[0] | (size_t)data[1] << 8;
    if (n > size - 2) n = size - 2;
    if (put(model, data + 2, n) || put(file, data + 2 + n, size - 2 - n)) abort();
    ait_model *m = NULL;
    if (ait_model_load(model, &m, NULL) != AIT_OK) return 0;
    fuzz_run_model(m);
    return 0;
}
