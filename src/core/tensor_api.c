/* The public tensor API over the internal tensor. */
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"

static tensor *tensor_make(ait_dtype t, int rank, const int64_t *dims)
{
    int64_t numel;
    if (!ait_dtype_size(t) || (rank > 0 && !dims)) return NULL;
    if (shape_numel(dims, rank, t, &numel, "tensor", NULL) != AIT_OK) return NULL;
    tensor *x = calloc(1, sizeof *x);
    if (x) tensor_set_shape(x, t, rank, dims);
    return x;
}

ait_tensor *ait_tensor_create(ait_dtype t, int rank, const int64_t *dims)
{
    tensor *x = tensor_make(t, rank, dims);
    if (x && tensor_alloc(x, NULL) != AIT_OK) {
        free(x);
        return NULL;
    }
    return x;
}

ait_tensor *ait_tensor_wrap(ait_dtype t, int rank, const int64_t *dims, void *data)
{
    if (!data) return NULL;
    tensor *x = tensor_make(t, rank, dims);
    if (x) x->data = data, x->room = tensor_nbytes(x);
    return x;
}

size_t ait_tensor_capacity(const ait_tensor *t)
{
    if (!t || t->kind != VAL_TENSOR || t->dtype == AIT_STRING || !t->data) return 0;
    return t->owned ? t->cap : t->room;
}

ait_status ait_tensor_reshape(ait_tensor *t, int rank, const int64_t *dims)
{
    int64_t numel;
    if (!t || rank < 0 || rank > AIT_MAX_RANK || (rank > 0 && !dims) || t->kind != VAL_TENSOR ||
        t->dtype == AIT_STRING)
        return AIT_E_INVALID_ARG;
    if (shape_numel(dims, rank, t->dtype, &numel, "tensor", NULL) != AIT_OK) return AIT_E_SHAPE;
    if ((size_t)numel * ait_dtype_size(t->dtype) > ait_tensor_capacity(t)) return AIT_E_SHAPE;
    tensor_set_shape(t, t->dtype, rank, dims);
    return AIT_OK;
}

void ait_tensor_free(ait_tensor *t)
{
    if (!t) return;
    tensor_release(t);
    free(t);
}

ait_dtype ait_tensor_dtype(const ait_tensor *t) { return t ? t->dtype : AIT_UNDEFINED; }
int ait_tensor_rank(const ait_tensor *t) { return t ? t->rank : 0; }
const int64_t *ait_tensor_dims(const ait_tensor *t) { return t ? t->dims : NULL; }
int64_t ait_tensor_numel(const ait_tensor *t)
{
    return t && t->kind == VAL_TENSOR ? tensor_numel(t) : 0;
}
size_t ait_tensor_nbytes(const ait_tensor *t)
{
    return t && t->kind == VAL_TENSOR ? tensor_nbytes(t) : 0;
}

ait_tensor *ait_sequence_create(ait_dtype elem)
{
    tensor *t = calloc(1, sizeof *t);
    if (t) tensor_make_sequence(t, elem);
    return t;
}

ait_status ait_sequence_append(ait_tensor *seq, const ait_tensor *item)
{
    if (!seq || !item || seq->kind != VAL_SEQUENCE ||
        (item->kind != VAL_TENSOR && item->kind != VAL_MAP) ||
        (seq->dtype != AIT_UNDEFINED && item->dtype != seq->dtype))
        return AIT_E_INVALID_ARG;
    return seq_insert(seq, seq->n_items, item, NULL);
}

int ait_tensor_is_sequence(const ait_tensor *t) { return t && t->kind == VAL_SEQUENCE; }
int ait_sequence_length(const ait_tensor *t) { return t && t->kind == VAL_SEQUENCE ? t->n_items : 0; }
const ait_tensor *ait_sequence_item(const ait_tensor *t, int i)
{
    return t && t->kind == VAL_SEQUENCE && i >= 0 && i < t->n_items ? &t->items[i] : NULL;
}

ait_tensor *ait_map_create(const ait_tensor *keys, const ait_tensor *values)
{
    if (!keys || !values) return NULL;
    tensor *t = calloc(1, sizeof *t);
    if (t && tensor_make_map(t, keys, values, NULL) != AIT_OK) {
        tensor_release(t);
        free(t);
        t = NULL;
    }
    return t;
}
int ait_tensor_is_map(const ait_tensor *t) { return t && t->kind == VAL_MAP; }
const ait_tensor *ait_map_keys(const ait_tensor *t)
{
    return t && t->kind == VAL_MAP ? map_keys(t) : NULL;
}
const ait_tensor *ait_map_values(const ait_tensor *t)
{
    return t && t->kind == VAL_MAP ? map_vals(t) : NULL;
}

ait_tensor *ait_tensor_none(void)
{
    tensor *t = calloc(1, sizeof *t);
    if (t) tensor_make_none(t);
    return t;
}
int ait_tensor_is_none(const ait_tensor *t) { return t && t->kind == VAL_NONE; }
void *ait_tensor_data(ait_tensor *t) { return t ? t->data : NULL; }

ait_status ait_tensor_set_string(ait_tensor *t, int64_t i, const char *s)
{
    if (!t || t->kind != VAL_TENSOR || t->dtype != AIT_STRING || !t->owned || !t->data || i < 0 ||
        i >= tensor_numel(t))
        return AIT_E_INVALID_ARG;
    return tensor_set_str(t, i, s, s ? strlen(s) : 0, NULL);
}

const char *ait_tensor_string(const ait_tensor *t, int64_t i)
{
    if (!t || t->kind != VAL_TENSOR || t->dtype != AIT_STRING || !t->data || i < 0 ||
        i >= tensor_numel(t))
        return NULL;
    return tensor_str(t, i);
}
