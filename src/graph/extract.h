/* A module as a graph of its own, for backends to build and run. */
#ifndef AIT_GRAPH_EXTRACT_H
#define AIT_GRAPH_EXTRACT_H
#include "graph/modules.h"

/* A view of module m of g: its nodes (in g's order), its input ports as
 * graph inputs and its output ports as graph outputs (as module_ports gives
 * them), and the constants it reads. The view borrows names, constants and
 * attributes from g, which must outlive it; graph_free frees only the view.
 * Modules holding control flow (nodes with subgraphs) are refused for now. */
ait_status graph_extract(const graph *g, const module_tree *t, int m, graph **out, ait_error *e);
/* The first node of module m that holds control flow (a node with a
 * subgraph: If, Loop, Scan), which graph_extract refuses; -1 when none. */
int graph_control_node(const graph *g, const module_tree *t, int m);

#endif
