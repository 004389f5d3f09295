/* Loading the model an artifact embeds (private to src/api). */
#ifndef AIT_API_MODEL_LOAD_H
#define AIT_API_MODEL_LOAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ait.h"

/* The embedded ONNX model in data[len], named name in messages; lean: the
 * artifact's lean model, whose weights left out (io/onnx.h,
 * ONNX_ABSENT_LOCATION) are accepted: the model then has n_absent > 0 and is
 * `released` (only the artifact's plan runs it). Its big weights are not
 * copied but point into data (onnx_read's borrow), at the file's alignment:
 * data must outlive the model, and the caller settles them (api/artifact.c:
 * those kept unaligned copied) before any session reads them; the fold's
 * were copied already. */
ait_status model_load_embedded(const uint8_t *data, size_t len, const char *name, bool lean,
                               ait_model **out, ait_error *e);
#endif
