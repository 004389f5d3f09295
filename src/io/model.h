/* The loaded model: the public ait_model. */
#ifndef AIT_IO_MODEL_H
#define AIT_IO_MODEL_H
#include "graph/graph.h"

struct ait_model {
    char *path;  /* as given */
    char *dir;   /* real path of the folder holding it (external data root) */
    graph *g;
    int opset;
    int64_t ir_version;
    char *producer;
    int n_external;        /* tensors it read from external data files */
    /* Loaded from a .ait artifact (tune/plan_load.c): */
    struct plan *plan;     /* the tuned plan sessions run, or NULL (untuned) */
    struct artifact *art;  /* the mapping its prepared blobs live in */
    char *note;            /* why the artifact's plan is not used (fallback), or NULL */
};

/* Loads a .ait artifact (ait_artifact_load with default options). */
ait_status artifact_model_load(const char *path, ait_model **out, ait_error *e);

/* Converts a serialised onnx.TensorProto (from a .pb file) into a tensor;
 * `what` names it in messages. External data is refused here. */
ait_status tensor_from_pb(const uint8_t *buf, size_t len, tensor **out, char **name,
                          const char *what, ait_error *e);
/* Reads a whole file into memory (caller frees). Fails past max_bytes. */
ait_status file_read_all(const char *path, size_t max_bytes, uint8_t **buf, size_t *len,
                         ait_error *e);

#endif
