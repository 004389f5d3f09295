/* One-node graphs built in memory for op tests (no model file): inputs
 * that are constants or graph inputs, attributes, one output; run on the
 * executor. Functions that fail call cmocka's fail_msg. */
#ifndef AIT_TEST_GRAPH_H
#define AIT_TEST_GRAPH_H
#include "exec/exec.h"
#include "graph/graph.h"

typedef struct tg_in {
    ait_dtype dt;
    int rank;
    int64_t dims[AIT_MAX_RANK];
    const void *data; /* a constant copied from data; NULL: a graph input fed at run */
    bool omit;        /* an omitted optional input */
} tg_in;

typedef struct tg_attr {
    const char *name;
    attr_type type; /* ATTR_INT, ATTR_FLOAT, ATTR_INTS or ATTR_STRING */
    int64_t i;
    float f;
    int n;
    int64_t ints[8];
    const char *s;
} tg_attr;

/* A graph of one node `op` (default domain, the model's opset `opset`)
 * over ins[0..n_in) with attributes as[0..n_attr) and one output. */
graph *tg_node(const char *op, int opset, const tg_in *ins, int n_in, const tg_attr *as,
               int n_attr);
/* Runs x on feed (the graph inputs in order); *out: its output (owned by x). */
ait_status tg_run(exec *x, tensor *const *feed, tensor **out, ait_error *e);
/* A fresh executor for g, or the test fails. */
exec *tg_exec(const graph *g);

#endif
