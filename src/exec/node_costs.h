/* What each node of a graph costs at the graph's declared input shapes, for
 * choices made from the graph alone (where an unscoped model is cut into
 * segments), which the tuner and the runtime must make alike. */
#ifndef AIT_EXEC_NODE_COSTS_H
#define AIT_EXEC_NODE_COSTS_H
#include "graph/graph.h"

/* cost[i] (n_nodes long, the caller's): node i's FLOPs (graph/cost.h) with
 * every graph input at its declared shape, unknown dims taken as 1; 0 for
 * nodes the schedule folds or finds dead. Fails when shapes cannot be
 * inferred that way (an input of unknown rank, a size that must be > 1). */
ait_status exec_node_costs(const graph *g, double *cost, ait_error *e);

#endif
