/* `reference`: every node on its own (reference) op, on the executor. The
 * oracle: every other backend is validated against what this one computes. */
#include "backends/backend.h"

/* The node's own op: the executor would use it anyway, but answering it
 * makes coverage say that this backend runs every node itself. */
static const op_def *ref_op_for(const graph *g, const node *n) { return n->def; }

const backend backend_reference = {
    .name = "reference",
    .summary = "the reference ops: plain C, one function per op, the oracle",
    .op_for = ref_op_for,
    .build = backend_exec_build,
    .run = backend_exec_run,
    .free = backend_exec_free,
};
