/* A module as a graph of its own, for backends to build and run. */
#ifndef AIT_GRAPH_EXTRACT_H
#define AIT_GRAPH_EXTRACT_H
#include "graph/modules.h"

/* A view of module m of g: its nodes (in g's order), its input ports as
 * graph inputs and its output ports as graph outputs (as module_ports gives
 * them), and the constants it reads. The view borrows names, constants and
 * attributes from g, which must outlive it; graph_free frees only the view.
 * A node with subgraphs (If, Loop, Scan) gets views of them that read the
 * view's values; the values they read from g are ports or constants of the
 * module like any other node's inputs. */
ait_status graph_extract(const graph *g, const module_tree *t, int m, graph **out, ait_error *e);

#endif
