/* The op registry: one line per op family. */
#include <string.h>

#include "ops/op.h"

extern const op_table ops_unary, ops_binary, ops_reduce, ops_norm, ops_matmul, ops_quant,
    ops_conv, ops_pool, ops_layout, ops_index, ops_resize, ops_rnn, ops_control, ops_loss,
    ops_signal, ops_vision, ops_training, ops_text,
    ops_sequence;

/* Weak while families are being filled in; a missing family simply has no ops. */
#pragma weak ops_unary
#pragma weak ops_binary
#pragma weak ops_reduce
#pragma weak ops_norm
#pragma weak ops_matmul
#pragma weak ops_quant
#pragma weak ops_conv
#pragma weak ops_pool
#pragma weak ops_layout
#pragma weak ops_index
#pragma weak ops_resize
#pragma weak ops_rnn
#pragma weak ops_control
#pragma weak ops_loss
#pragma weak ops_signal
#pragma weak ops_vision
#pragma weak ops_training
#pragma weak ops_text
#pragma weak ops_sequence

static const op_table *const families[] = {
    &ops_unary, &ops_binary, &ops_reduce, &ops_norm,  &ops_matmul, &ops_quant,   &ops_conv,
    &ops_pool,  &ops_layout, &ops_index,  &ops_resize, &ops_rnn,   &ops_control,
    &ops_loss,  &ops_signal, &ops_vision, &ops_training, &ops_text, &ops_sequence,
};

const op_def *op_find(const char *domain, const char *name)
{
    if (domain && strcmp(domain, "ai.onnx") == 0) domain = "";
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        const op_table *t = families[f];
        if (!t) continue;
        for (int i = 0; i < t->count; i++)
            if (strcmp(t->ops[i].name, name) == 0 &&
                strcmp(t->ops[i].domain ? t->ops[i].domain : "", domain ? domain : "") == 0)
                return &t->ops[i];
    }
    return NULL;
}

void op_foreach(void (*fn)(const op_def *d, void *arg), void *arg)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        const op_table *t = families[f];
        if (!t) continue;
        for (int i = 0; i < t->count; i++) fn(&t->ops[i], arg);
    }
}
