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
 * into segments "seg.K" (K from 0) of comparable cost. A cut may fall only
 * where exactly one computed value is live across it (a single tensor flows
 * from everything before to everything after, as between the residual
 * blocks of a ResNet) and not before an op a backend fuses into its
 * producer (an activation, BatchNormalization: kept with the Conv). Among
 * those, the cuts chosen minimise the summed squared distance of each
 * segment's cost to a target, total / N with N = sqrt(nodes) (at most 32),
 * fewer for a small model (a segment under 20 MFLOPs, or 8 nodes when costs
 * are unknown, is not worth its own module; a tiny model is one segment); a
 * segment under a quarter of the target pays extra, so element-wise glue
 * joins a neighbour and a long backbone is split wherever it can be. A
 * node's cost is its FLOPs at the graph's declared input shapes (the
 * modules_cost_fn; exec_node_costs) plus a fixed 10 kFLOPs, or 1 per node
 * when the costs cannot be had. The cut depends on the graph alone, so the
 * tuner and the runtime (which finds a plan's modules by name) agree.
 *
 * In a scoped model, nodes with no scope that do real work (a tied LM head
 * written in the top module's forward) form modules of their own,
 * "unscoped.K" (K from 0), children of the root: each a run of such nodes
 * consecutive in the topological order (so it can be cut out) of at least
 * 100 kFLOPs and 1% of the model's FLOPs; the tuner reaches them like any
 * other module. Cheap glue left at the root (a Transpose, ReduceMean,
 * Softmax or element-wise op between two modules or after the last; a
 * table in modules.c) joins a neighbour: the module that alone reads all
 * its outputs when it stands right before one of its nodes, else the
 * module that alone computes all its inputs when it stands right after
 * one, else the module computing an input only it reads when that module
 * still collapses at its last node with the glue in (an FPN's top-down Add
 * joins the lateral Conv's module). So it runs on that module's tuned
 * backend, and a Transpose read
 * only by a Shape inside the module is folded away there, instead of
 * running on the reference ops between modules on every run.
 *
 * Every node belongs to exactly one module, its deepest (module_of_node).
 * The root module (index 0, name "") holds nodes with no scope, but for
 * those. */
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

/* Fills cost[i] (n_nodes long) with node i's cost for the fallback's cut. */
typedef ait_status (*modules_cost_fn)(const graph *g, double *cost, ait_error *e);

/* cost: called only for the fallback; NULL counts nodes. */
ait_status modules_build(const graph *g, modules_cost_fn cost, module_tree **out, ait_error *e);
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
