/* The op registry: one line per op family. */
#include <string.h>

#include "ops/op.h"

extern const op_table ops_unary, ops_binary, ops_reduce, ops_norm, ops_matmul, ops_quant,
    ops_conv, ops_pool, ops_layout, ops_index, ops_resize, ops_rnn, ops_control, ops_loss,
    ops_signal, ops_vision, ops_training, ops_text, ops_sequence;
extern const op_table ops_random, ops_spatial, ops_strings, ops_image;
extern const op_table ops_attention, ops_decoder, ops_recurrent;
extern const op_table ops_ml_tree, ops_ml_linear, ops_ml_svm, ops_ml_transform, ops_ml_encode,
    ops_ml_maps;

static const op_table *const families[] = {
    &ops_unary, &ops_binary, &ops_reduce, &ops_norm,  &ops_matmul, &ops_quant,   &ops_conv,
    &ops_pool,  &ops_layout, &ops_index,  &ops_resize, &ops_rnn,   &ops_control,
    &ops_loss,  &ops_signal, &ops_vision, &ops_training, &ops_text, &ops_sequence,
    &ops_random, &ops_spatial, &ops_strings, &ops_image,
    &ops_attention, &ops_decoder, &ops_recurrent,
    &ops_ml_tree, &ops_ml_linear, &ops_ml_svm, &ops_ml_transform, &ops_ml_encode, &ops_ml_maps,
};

const op_def *op_find(const char *domain, const char *name)
{
    if (onnx_domain_default(domain)) domain = "";
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        const op_table *t = families[f];
        for (int i = 0; i < t->count; i++)
            if (strcmp(t->ops[i].name, name) == 0 &&
                strcmp(t->ops[i].domain ? t->ops[i].domain : "", domain) == 0)
                return &t->ops[i];
    }
    return NULL;
}

void op_foreach(void (*fn)(const op_def *d, void *arg), void *arg)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        const op_table *t = families[f];
        for (int i = 0; i < t->count; i++) fn(&t->ops[i], arg);
    }
}
