/* The ONNX reader: a serialised ModelProto into the graph IR. It knows the
 * format only: which op each node runs, and whether the model's opset is one
 * ait implements, is for ops_bind (ops/bind.h) to decide. */
#ifndef AIT_IO_ONNX_H
#define AIT_IO_ONNX_H
#include "graph/graph.h"

#define ONNX_MAX_MODEL_BYTES ((size_t)2 << 30) /* protobuf's own limit */

typedef struct onnx_model {
    graph *g;
    int opset;            /* the default-domain opset imported; 0 when only other domains */
    int ml_opset;         /* the ai.onnx.ml opset imported; 0 when not imported */
    int64_t ir_version;
    char *producer;
    int n_external;       /* tensors read from external data files */
    int n_absent;         /* initializers without their data (ONNX_ABSENT_LOCATION) */
} onnx_model;

/* An initializer an artifact saved without its data, because its prepared
 * blobs replace it for every reader: ONNX external data whose "location" is
 * this and whose "sha256" is the hex digest of the bytes left out. Read (only
 * when the caller allows it) as a constant with its shape and no data, the
 * digest in value.absent. */
#define ONNX_ABSENT_LOCATION "ait:absent"

/* Reads the model in buf. `name` names it in messages and must outlive the
 * graph (graph.path points to it); `dir` is the real folder for external
 * data (NULL refuses external data); absent_ok accepts initializers left out
 * (ONNX_ABSENT_LOCATION), else they are refused. With borrow, the top
 * graph's initializers of ONNX_BORROW_MIN bytes or more kept as raw_data
 * (not strings, not 4- or 2-bit types, not external) are not copied: their
 * tensors' data points at their bytes in buf, at whatever alignment the file
 * gives them, not owned (owned false, cap 0), so buf must outlive them and
 * the caller copies what it keeps unaligned (tensor_own). On failure *out is
 * cleared. */
#define ONNX_BORROW_MIN ((size_t)64 << 10)
ait_status onnx_read(const uint8_t *buf, size_t len, const char *name, const char *dir,
                     bool absent_ok, bool borrow, onnx_model *out, ait_error *e);

/* The lean model: the ModelProto in buf with the data of the top-level
 * initializers named names[i] (i < n) left out (ONNX_ABSENT_LOCATION, with
 * sha[i], their bytes' sha256 hex); a name that is no initializer (a folded
 * constant) is skipped. Into *out (malloc'd, *out_len bytes); *n_left: how
 * many were left out. */
ait_status onnx_leave_out(const uint8_t *buf, size_t len, const char *name,
                          const char *const *names, const char *const *sha, int n,
                          uint8_t **out, size_t *out_len, int *n_left, ait_error *e);
/* Frees what om holds (its graph too) and zeroes it. */
void onnx_model_clear(onnx_model *om);

/* Converts a serialised onnx.TensorProto (from a .pb file) into a tensor;
 * `what` names it in messages. External data is refused here. */
ait_status tensor_from_pb(const uint8_t *buf, size_t len, tensor **out, char **name,
                          const char *what, ait_error *e);
#endif
