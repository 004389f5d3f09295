/* The LSTM cell's element-wise update, one ISA's vector code picked per
 * call (sigmoid and tanh from vec_math.h): the recurrence's step after its
 * GEMM, in one pass over the gates while they are in L1. */
#ifndef AIT_KERNELS_LSTM_H
#define AIT_KERNELS_LSTM_H
#include <stddef.h>

/* g: n pre-activations per gate in ONNX's order i, o, f, c (4n floats);
 * c: the cell state, updated in place to f*c + i*g'; h = o*tanh(c), with
 * the gates' default activations (sigmoid for i, o, f; tanh for c). */
void klstm_cell(const float *g, float *c, float *h, size_t n);

#endif
