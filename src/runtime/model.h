/* The loaded model: the public ait_model. The ONNX reader (io/onnx.h) gives
 * its graph; api/ loads it (and an artifact's plan) and frees it. */
#ifndef AIT_RUNTIME_MODEL_H
#define AIT_RUNTIME_MODEL_H
#include "graph/graph.h"

struct ait_model {
    char *path;  /* as given */
    char *dir;   /* real path of the folder holding it (external data root) */
    graph *g;
    int opset;
    int64_t ir_version;
    char *producer;
    int n_external;        /* tensors it read from external data files */
    int n_absent;          /* weights an artifact saved without their data (value.absent):
                              only its plan runs the model, as once `released` */
    /* Loaded from a .ait artifact (api/artifact.c): */
    struct plan *plan;     /* the tuned plan sessions run, or NULL (untuned) */
    struct artifact *art;  /* the mapping its prepared blobs live in */
    char *note;            /* why the artifact's plan is not used (fallback), or NULL */
    /* The first session's runner frees the weights the plan's prepared
     * blobs replace (plan_exec_create_releasing): set atomically before it
     * starts (cleared if it failed having freed nothing); the model then
     * runs only on its plan. */
    int released;
    /* Bytes of those the load freed already (ait_artifact_load without
     * keep_weights, plan_release_replaced): the model runs only on its plan. */
    size_t freed_at_load;
};

#endif
