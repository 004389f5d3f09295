/* What a node costs: floating-point work and the parameters it reads. */
#ifndef AIT_GRAPH_COST_H
#define AIT_GRAPH_COST_H
#include "graph/graph.h"

typedef struct node_cost {
    double flops;        /* a multiply-add counts 2 */
    int64_t params;      /* elements of constant inputs (weights, biases) */
    int64_t param_bytes;
} node_cost;

/* Cost of node n of g for the input and output tensors of one run (shapes
 * only are read; in/out as the node's inputs and outputs, NULL where
 * omitted). Known formulas for MatMul, Gemm, Conv, ConvTranspose, Einsum
 * (two operands), LSTM, GRU, RNN, pooling and normalisations; other ops
 * count one flop per output element. */
/* The constant value v if it counts as a parameter (weights, biases; not
 * int64 shapes and axes), else NULL. */
const tensor *cost_param(const graph *g, int v);

void node_cost_of(const graph *g, int n, const tensor *const *in, const tensor *const *out,
                  node_cost *c);

#endif
