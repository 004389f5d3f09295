/* The executor: runs a graph's nodes in order on the reference ops (or ops
 * a backend puts in their place), with buffers that persist across runs. */
#ifndef AIT_EXEC_EXEC_H
#define AIT_EXEC_EXEC_H
#include "graph/graph.h"
#include "ops/op.h"

typedef struct exec exec;

/* An executor for g (which must outlive it). `outer` is the executor of the
 * enclosing graph for subgraphs, else NULL. */
ait_status exec_create(const graph *g, exec *outer, int threads, exec **out, ait_error *e);
/* The same with node i running ops[i] instead of its own op (a backend's
 * replacement: same ONNX semantics, other kernels), in scheduling (shape
 * inference, constant folding) and in runs. ops may be NULL, and ops[i]
 * NULL keeps node i's own op; the array is copied, the op_defs must
 * outlive the executor. Subgraphs keep their own ops. */
ait_status exec_create_ops(const graph *g, exec *outer, int threads, const op_def *const *ops,
                           exec **out, ait_error *e);
void exec_free(exec *x);
/* Runs g with inputs[i] bound to g->inputs[i] (borrowed). On success,
 * outputs[j] points to the tensor of g->outputs[j], owned by the executor
 * and valid until the next run. */
ait_status exec_run(exec *x, tensor *const *inputs, tensor **outputs, ait_error *e);
/* The same, with graph output j written into the caller's tensor bound[j]
 * (bound may be NULL, bound[j] NULL for an output left to the executor):
 * the node computing it writes into bound[j]'s memory (its capacity: the
 * owned storage, or the room of a wrapped tensor), or, where no node of
 * this graph writes it (an input or constant passed through, an output
 * listed twice), it is copied there. Refused, naming the output, when the
 * dtype differs or the shape does not fit (before any byte is written).
 * bound[j] then has the output's shape, and outputs[j] == bound[j]. The
 * caller ensures bound memory overlaps no input and no other bound output. */
ait_status exec_run_bound(exec *x, tensor *const *inputs, tensor *const *bound, tensor **outputs,
                          ait_error *e);

/* Computes every value that depends on constants only (no graph input),
 * as a schedule would; folded[v] receives each such value's new tensor (the
 * caller owns it) or NULL. For the load-time folding pass. */
ait_status exec_fold_constants(exec *x, tensor **folded, ait_error *e);

/* Per-node timing of runs (for inspection): while set, each run adds each
 * node's wall time and one call to these arrays (n_nodes long, caller-owned).
 * Nodes folded or removed by the schedule get nothing. NULL turns it off. */
typedef struct exec_profile {
    double *node_sec;
    int64_t *node_calls;
} exec_profile;
void exec_set_profile(exec *x, exec_profile *p);
/* A pointer of the executor's owner for ops of its own to find their state
 * through op_ctx.x: the plan runner's module op finds its built modules
 * through it. NULL until set. */
void exec_set_user(exec *x, void *user);
/* Memory: each schedule places the intermediates computed at run time in
 * one arena by liveness (reused across runs, grown when a schedule needs
 * more); outputs are not zeroed unless the op asks (OP_ZERO_OUTPUTS).
 * exec_keep_values gives every value storage of its own instead, for
 * callers that read intermediates after a run (exec_value). */
void exec_keep_values(exec *x);
/* Bytes of the arena (with the subgraphs' executors'): the peak of the
 * intermediates of the largest schedule run so far. */
size_t exec_arena_bytes(const exec *x);
void *exec_user(const exec *x);
/* Whether value v is a graph output the current run writes into caller
 * memory (exec_run_bound): its node's output tensor points there, and no
 * other value of the run shares those bytes. */
bool exec_output_bound(const exec *x, int v);
/* Value v as of the last run (its shape and data), or NULL if it was not
 * computed (dead, or the run failed before it). Only with exec_keep_values:
 * otherwise intermediates share the arena and a later one may have taken
 * an earlier one's bytes (the graph's outputs stay until the next run). */
const tensor *exec_value(const exec *x, int v);

/* For backends that run a graph's nodes themselves (onednn). exec_schedule
 * schedules x for the shapes of inputs[] as a run would (shape inference,
 * constant folding, dead nodes) without running any node that is not
 * folded; the inputs' data is not read and may be NULL (only dtype, rank and
 * dims). A later exec_run with other shapes schedules again. Then:
 * exec_scheduled(x, v) is value v's tensor as scheduled: its dtype and shape
 * (AIT_UNDEFINED dtype when not known before running), with data only for
 * constants (given or folded; owned by the graph or x, valid until the next
 * schedule); exec_node_runs(x, i) is false for nodes the schedule folded or found
 * dead; exec_run_node runs node i alone on its op (or the op that replaces
 * it): in[k] for its inputs (NULL where omitted), out[k] the caller's
 * tensors for its outputs (NULL to drop), each set to the inferred shape
 * and allocated (tensor_alloc, so a big-enough buffer is kept); zeroed only
 * for ops flagged OP_ZERO_OUTPUTS (op.h). */
ait_status exec_schedule(exec *x, tensor *const *inputs, ait_error *e);
/* Schedules are counted (exec_schedule_gen: the current one's number);
 * exec_changed_since(x, v, gen) is false when value v's shape, and its data
 * if the schedule folded it, are as they were at schedule gen: a schedule
 * at new input dims (a decoder's next past length) changes only the values
 * that follow those dims; a full one changes every value. */
unsigned exec_schedule_gen(const exec *x);
/* Schedules made, for tests that check a decoder's step at a new past
 * length keeps its schedule (docs/runtime.md, "A new past length"): an
 * executor counts its full schedules (every node inferred) and its
 * reschedules (only the nodes that follow changed dims) with the nodes
 * those inferred again and the nodes they could have; a backend counts its
 * built modules scheduled from scratch and kept at new dims
 * (backend.sched_stats). Each *_stats function adds to *acc. */
typedef struct sched_stats {
    unsigned long full, partial;       /* executors' schedules */
    unsigned long nodes, nodes_of;     /* nodes reschedules inferred again, of how many */
    unsigned long built_full, built_kept; /* backends' modules */
} sched_stats;
void exec_sched_stats(const exec *x, sched_stats *acc);
bool exec_changed_since(const exec *x, int v, unsigned gen);
const tensor *exec_scheduled(const exec *x, int v);
bool exec_node_runs(const exec *x, int i);
ait_status exec_run_node(exec *x, int i, tensor *const *in, tensor *const *out, ait_error *e);

#endif
