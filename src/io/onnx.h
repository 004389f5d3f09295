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
} onnx_model;

/* Reads the model in buf. `name` names it in messages and must outlive the
 * graph (graph.path points to it); `dir` is the real folder for external
 * data (NULL refuses external data). On failure *out is cleared. */
ait_status onnx_read(const uint8_t *buf, size_t len, const char *name, const char *dir,
                     onnx_model *out, ait_error *e);
/* Frees what om holds (its graph too) and zeroes it. */
void onnx_model_clear(onnx_model *om);

/* Converts a serialised onnx.TensorProto (from a .pb file) into a tensor;
 * `what` names it in messages. External data is refused here. */
ait_status tensor_from_pb(const uint8_t *buf, size_t len, tensor **out, char **name,
                          const char *what, ait_error *e);
#endif
