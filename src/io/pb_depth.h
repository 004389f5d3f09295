/* Checks an ONNX model file's protobuf wire data before unpacking it. */
#ifndef AIT_IO_PB_DEPTH_H
#define AIT_IO_PB_DEPTH_H
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* AIT_OK when buf is well-formed wire data whose ONNX messages nest within
 * the limit; else a message naming `path`. */
ait_status pb_check_model(const uint8_t *buf, size_t len, const char *path, ait_error *e);
#endif
