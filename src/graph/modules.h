/* The module tree: named subgraphs of a model, like nn.Modules.
 *
 * PyTorch's exporter names nodes by scope: "/layer1/layer1.0/conv1/Conv" is
 * node "Conv" in module "layer1.0.conv1", inside "layer1.0", inside
 * "layer1". A scope segment that extends the previous segment with a dot
 * names a child by index ("layer1.0" after "layer1" gives "layer1" + ".0";
 * "conv.0" after "conv" in "/features/features.3/conv/conv.0/" gives
 * "features.3.conv.0"); another segment ("conv1") is appended to the name so
 * far ("layer1.0" + "." + "conv1"), as nn.Module.named_modules() spells it.
 *
 * Fallback, for models whose node names carry no scopes (names not starting
 * with '/', or all at the root): the nodes in topological order are cut
 * wherever exactly one computed value is live across the cut (a single
 * tensor flows from everything before to everything after, as between the
 * residual blocks of a ResNet); each run between cuts becomes module
 * "seg.K" (K from 0); a cut is made only after a run of at least 2 nodes.
 *
 * Every node belongs to exactly one module, its deepest (module_of_node).
 * The root module (index 0, name "") holds nodes with no scope. */
#ifndef AIT_GRAPH_MODULES_H
#define AIT_GRAPH_MODULES_H
#include "graph/graph.h"

typedef struct module {
    char *name;    /* dotted path; "" for the root */
    int parent;    /* -1 for the root */
    int depth;     /* root 0, "layer1" 1, "layer1.0" 2 ... */
    int n_children;
    int *children; /* in order of first appearance */
    int n_nodes;   /* nodes directly in this module */
    int *nodes;
} module;

typedef struct module_tree {
    int n;
    module *mods;        /* mods[0] is the root */
    int *node_module;    /* per node of the graph: its module */
    bool from_scopes;    /* false: built by the fallback rule */
} module_tree;

ait_status modules_build(const graph *g, module_tree **out, ait_error *e);
void modules_free(module_tree *t);
/* True when node `n` is in module m or in one of its descendants. */
bool module_contains(const module_tree *t, int m, int n);
/* Index of the module called `name`, or -1. */
int module_find(const module_tree *t, const char *name);
/* The module's boundary: values its nodes (and their subgraphs) read that
 * are computed outside it (graph inputs included, constants excluded), and
 * values computed inside that are read outside it or are graph outputs.
 * Arrays are malloc'ed (caller frees), in graph value order. */
ait_status module_ports(const graph *g, const module_tree *t, int m, int **ins, int *n_in,
                        int **outs, int *n_out, ait_error *e);

#endif
