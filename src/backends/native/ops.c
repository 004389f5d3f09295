/* The ops the native backend takes: one row per op, its family's file
 * defines it (gemm_ops.c, qlinear.c, conv.c, convt.c, pool.c, norm.c, resize.c, rnn.c, attn.c,
 * concat.c, shuffle.c, slice.c, chanmul.c). Other kernels
 * plug in here. */
#include <string.h>

#include "backends/native/native.h"

extern const nat_op nat_matmul, nat_gemm, nat_conv, nat_maxpool, nat_avgpool, nat_gmaxpool,
    nat_gavgpool, nat_layernorm, nat_rmsnorm, nat_softmax, nat_logsoftmax, nat_convt, nat_resize,
    nat_lstm, nat_matmul_integer, nat_qlinear_matmul, nat_dynamic_quantize, nat_dq_weights,
    nat_concat, nat_shuffle, nat_slice, nat_chan_mul;

static const nat_op *const ops[] = {&nat_matmul,  &nat_gemm,     &nat_conv,    &nat_maxpool,
                                    &nat_avgpool, &nat_gmaxpool, &nat_gavgpool,
                                    &nat_layernorm, &nat_rmsnorm, &nat_softmax, &nat_logsoftmax,
                                    &nat_convt, &nat_resize, &nat_batchnorm, &nat_lstm,
                                    &nat_attention, &nat_matmul_integer, &nat_qlinear_matmul,
                                    &nat_dynamic_quantize, &nat_dq_weights, &nat_concat,
                                    &nat_shuffle, &nat_slice, &nat_chan_mul};

const nat_op *nat_op_find(const node *n)
{
    if (n->domain && n->domain[0]) return NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(n->op, ops[i]->name) == 0) return ops[i];
    return NULL;
}
