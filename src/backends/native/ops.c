/* The ops the native backend takes: one row per op, its family's file
 * defines it (gemm_ops.c, conv.c). Other kernels plug in here. */
#include <string.h>

#include "backends/native/native.h"

extern const nat_op nat_matmul, nat_gemm, nat_conv;

static const nat_op *const ops[] = {&nat_matmul, &nat_gemm, &nat_conv};

const nat_op *nat_op_find(const node *n)
{
    if (n->domain && n->domain[0]) return NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(n->op, ops[i]->name) == 0) return ops[i];
    return NULL;
}
