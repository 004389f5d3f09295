/* Binding a graph the ONNX reader made to the ops that run it. */
#ifndef AIT_OPS_BIND_H
#define AIT_OPS_BIND_H
#include "graph/graph.h"

#define OPSET_MIN 1
#define OPSET_MAX 21

/* Checks g's default-domain opset (0, for a model that imports only other
 * domains, becomes OPSET_MAX) and sets each node's op (node.def), in g and in
 * every subgraph: refuses, naming the model file and the node, an op ait
 * lacks, a node with more or fewer inputs or outputs than its op takes, and
 * an omitted input the op requires. */
ait_status ops_bind(graph *g, ait_error *e);
#endif
