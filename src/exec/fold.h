/* Load-time constant folding of a graph. */
#ifndef AIT_EXEC_FOLD_H
#define AIT_EXEC_FOLD_H
#include "graph/graph.h"

/* Replaces every top-level node whose outputs depend on constants only
 * (initializers, Constant nodes, Identity of weights, shape arithmetic on
 * constants) by constant values, and removes those nodes from g. Outputs
 * larger than the executor's folding limit stay computed at run time. */
ait_status graph_fold_constants(graph *g, ait_error *e);
#endif
