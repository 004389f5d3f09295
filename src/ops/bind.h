/* Binding a graph the ONNX reader made to the ops that run it. */
#ifndef AIT_OPS_BIND_H
#define AIT_OPS_BIND_H
#include "graph/graph.h"

/* The released ai.onnx opsets (ONNX 1.0 to 1.22 and the spec after it); the
 * version table (versions.c) says which op versions among them ait runs. */
#define OPSET_MIN 1
#define OPSET_MAX 28
/* The released ai.onnx.ml opsets; its nodes resolve their versions against
 * the model's ml import. */
#define ML_OPSET_MIN 1
#define ML_OPSET_MAX 5

/* Checks g's default-domain opset (0, for a model that imports only other
 * domains, becomes OPSET_MAX) and sets each node's op (node.def) and op
 * version (node.version), in g and in every subgraph: refuses, naming the
 * model file and the node, an op ait lacks, an op version it does not
 * implement (naming both versions), a node with more or fewer inputs or
 * outputs than its op takes, and an omitted input the op requires.
 * ml_opset: the ai.onnx.ml opset the model imports (0: none), refused
 * outside ML_OPSET_MIN..ML_OPSET_MAX. */
ait_status ops_bind(graph *g, int ml_opset, ait_error *e);
#endif
