/* The weights of a serialised ONNX model used in place (private to src/io):
 * protobuf-c's unpack copies every bytes field, so the reader unpacks the
 * model with its initializers' raw_data cut out and points each tensor at
 * its bytes in the caller's buffer instead (onnx_read's borrow). */
#ifndef AIT_IO_ONNX_STRIP_H
#define AIT_IO_ONNX_STRIP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct onnx_span {
    const uint8_t *p; /* into the caller's buffer */
    size_t len;
    bool set;         /* the initializer has raw_data */
} onnx_span;

/* For the ModelProto in buf[len] with one graph (field 7) whose initializers
 * (GraphProto field 5) each hold raw_data (TensorProto field 9,
 * length-delimited) at most once: *out (malloc'd, *out_len bytes) is buf
 * without those raw_data fields, and (*spans)[i] (malloc'd, *n of them) is
 * initializer i's raw_data in buf. Any other layout, or wire data that does
 * not parse: *out NULL, and the caller unpacks buf as it is (whose own
 * checks then speak). Fails only for memory. */
ait_status onnx_strip_raw(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len,
                          onnx_span **spans, size_t *n, ait_error *e);
#endif
