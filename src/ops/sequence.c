/* Sequence and optional ops. Their outputs are sequences, nones, or tensors
 * whose shape depends on a sequence, so each sets its outputs in run
 * (OP_ALLOCS_OUTPUTS) and infer only checks what it can without values. */
#include <string.h>

#include "ops/op.h"

#define SEQ_FLAGS (OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES | OP_STR_OWNS)

static ait_status defer(op_ctx *c) { return AIT_DEFER; }

static ait_status need_seq(op_ctx *c, int i)
{
    if (!has_in(c, i) || c->in[i]->kind != VAL_SEQUENCE)
        return err_set(c->err, AIT_E_INVALID_ARG, "input %d must be a sequence", i);
    return AIT_OK;
}

static ait_status need_tensor(op_ctx *c, int i)
{
    if (!has_in(c, i) || c->in[i]->kind != VAL_TENSOR)
        return err_set(c->err, AIT_E_INVALID_ARG, "input %d must be a tensor", i);
    return AIT_OK;
}

/* A position input (scalar int32/int64), wrapped and range-checked against
 * [0, n] (insert) or [0, n) (read). */
static ait_status position(op_ctx *c, int i, int n, bool insert, int *pos)
{
    const tensor *p = c->in[i];
    if (p->kind != VAL_TENSOR || tensor_numel(p) != 1 || (p->dtype != AIT_I32 && p->dtype != AIT_I64))
        return err_set(c->err, AIT_E_INVALID_ARG, "position must be an int32 or int64 scalar");
    int64_t v = elem_get_i64(p->data, p->dtype, 0), w = v < 0 ? v + n : v;
    if (w < 0 || w > n || (!insert && w == n))
        return err_set(c->err, AIT_E_INVALID_ARG, "position %lld is outside a sequence of %d",
                       (long long)v, n);
    *pos = (int)w;
    return AIT_OK;
}

static ait_status seq_empty_run(op_ctx *c)
{
    tensor_make_sequence(c->out[0], (ait_dtype)attr_int(c->n, "dtype", AIT_F32));
    return AIT_OK;
}

static ait_status seq_construct_run(op_ctx *c)
{
    tensor *o = c->out[0];
    for (int i = 0; i < c->n_in; i++) {
        TRY(need_tensor(c, i));
        if (c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "input %d is %s, input 0 %s", i,
                           ait_dtype_name(c->in[i]->dtype), ait_dtype_name(c->in[0]->dtype));
    }
    tensor_make_sequence(o, c->in[0]->dtype);
    for (int i = 0; i < c->n_in; i++) TRY(seq_insert(o, i, c->in[i], c->err));
    return AIT_OK;
}

static ait_status seq_at_run(op_ctx *c)
{
    TRY(need_seq(c, 0));
    int pos;
    TRY(position(c, 1, c->in[0]->n_items, false, &pos));
    return tensor_copy_into(c->out[0], &c->in[0]->items[pos], c->err);
}

static ait_status seq_insert_run(op_ctx *c)
{
    TRY(need_seq(c, 0));
    TRY(need_tensor(c, 1));
    const tensor *s = c->in[0];
    if (s->dtype != AIT_UNDEFINED && c->in[1]->dtype != s->dtype)
        return err_set(c->err, AIT_E_DTYPE, "cannot insert a %s tensor into a sequence of %s",
                       ait_dtype_name(c->in[1]->dtype), ait_dtype_name(s->dtype));
    int pos = s->n_items;
    if (has_in(c, 2)) TRY(position(c, 2, s->n_items, true, &pos));
    TRY(tensor_copy_into(c->out[0], s, c->err));
    return seq_insert(c->out[0], pos, c->in[1], c->err);
}

static ait_status seq_erase_run(op_ctx *c)
{
    TRY(need_seq(c, 0));
    const tensor *s = c->in[0];
    if (!s->n_items) return err_set(c->err, AIT_E_INVALID_ARG, "cannot erase from an empty sequence");
    int pos = s->n_items - 1;
    if (has_in(c, 1)) TRY(position(c, 1, s->n_items, false, &pos));
    tensor *o = c->out[0];
    tensor_make_sequence(o, s->dtype);
    for (int i = 0, k = 0; i < s->n_items; i++)
        if (i != pos) TRY(seq_insert(o, k++, &s->items[i], c->err));
    return AIT_OK;
}

static ait_status seq_length_run(op_ctx *c)
{
    TRY(need_seq(c, 0));
    tensor *o = c->out[0];
    tensor_set_shape(o, AIT_I64, 0, NULL);
    TRY(tensor_alloc(o, c->err));
    *(int64_t *)o->data = c->in[0]->n_items;
    return AIT_OK;
}

/* Copies rows [lo, hi) of axis `axis` of x into a new tensor t. */
static ait_status slice_axis(op_ctx *c, const tensor *x, int axis, int64_t lo, int64_t hi, bool keep,
                             tensor *t)
{
    int64_t dims[AIT_MAX_RANK], outer = 1, inner = 1, es = (int64_t)ait_dtype_size(x->dtype);
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis) outer *= x->dims[d];
        if (d > axis) inner *= x->dims[d];
        if (d != axis) dims[r++] = x->dims[d];
        else if (keep) dims[r++] = hi - lo;
    }
    tensor_set_shape(t, x->dtype, r, dims);
    TRY(tensor_alloc(t, c->err));
    int64_t n = x->dims[axis], run = (hi - lo) * inner;
    for (int64_t o = 0; o < outer; o++)
        TRY(elems_copy((char *)t->data + o * run * es,
                       (const char *)x->data + (o * n + lo) * inner * es, run, x->dtype, c->err));
    return AIT_OK;
}

static ait_status split_to_seq_run(op_ctx *c)
{
    TRY(need_tensor(c, 0));
    const tensor *x = c->in[0];
    int axis;
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), x->rank, &axis));
    if (!ait_dtype_size(x->dtype))
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s tensors", ait_dtype_name(x->dtype));
    int64_t n = x->dims[axis], sizes[4096];
    int count = 0;
    bool keep = true;
    if (!has_in(c, 1)) { /* one slice per element, squeezed unless keepdims */
        keep = attr_int(c->n, "keepdims", 1) != 0;
        if (n > 4096) return err_set(c->err, AIT_E_UNSUPPORTED, "more than 4096 splits");
        for (int64_t i = 0; i < n; i++) sizes[count++] = 1;
    } else if (c->in[1]->rank == 0) { /* chunks of one size; the last may be short */
        int64_t k = elem_get_i64(c->in[1]->data, c->in[1]->dtype, 0);
        if (k <= 0) return err_set(c->err, AIT_E_INVALID_ARG, "split size %lld", (long long)k);
        for (int64_t i = 0; i < n; i += k) {
            if (count == 4096) return err_set(c->err, AIT_E_UNSUPPORTED, "more than 4096 splits");
            sizes[count++] = i + k <= n ? k : n - i;
        }
    } else {
        int64_t total = 0;
        TRY(in_ints(c, 1, sizes, 4096, &count));
        for (int i = 0; i < count; i++) {
            if (sizes[i] < 0) return err_set(c->err, AIT_E_INVALID_ARG, "negative split size");
            total += sizes[i];
        }
        if (total != n)
            return err_set(c->err, AIT_E_SHAPE, "split sizes add up to %lld, the axis is %lld",
                           (long long)total, (long long)n);
    }
    tensor *o = c->out[0];
    tensor_make_sequence(o, x->dtype);
    int64_t lo = 0;
    for (int i = 0; i < count; i++) {
        tensor part = {0};
        ait_status s = slice_axis(c, x, axis, lo, lo + sizes[i], keep, &part);
        if (s == AIT_OK) s = seq_insert(o, i, &part, c->err);
        tensor_release(&part);
        TRY(s);
        lo += sizes[i];
    }
    return AIT_OK;
}

static ait_status concat_from_seq_run(op_ctx *c)
{
    TRY(need_seq(c, 0));
    const tensor *s = c->in[0];
    bool stack = attr_int(c->n, "new_axis", 0) != 0;
    if (!s->n_items) return err_set(c->err, AIT_E_INVALID_ARG, "cannot concatenate an empty sequence");
    const tensor *f = &s->items[0];
    int axis, rank = f->rank + (stack ? 1 : 0);
    if (rank > AIT_MAX_RANK) return err_set(c->err, AIT_E_UNSUPPORTED, "rank too high");
    TRY(norm_axis(c, attr_int(c->n, "axis", 0), rank, &axis));
    if (!stack && f->rank == 0) return err_set(c->err, AIT_E_SHAPE, "cannot concatenate scalars");
    int64_t dims[AIT_MAX_RANK], total = 0;
    for (int i = 0; i < s->n_items; i++) {
        const tensor *t = &s->items[i];
        bool ok = t->rank == f->rank && t->dtype == f->dtype;
        for (int d = 0; ok && d < f->rank; d++) ok = d == axis && !stack ? true : t->dims[d] == f->dims[d];
        if (!ok) return err_set(c->err, AIT_E_SHAPE, "sequence item %d does not fit item 0", i);
        total += stack ? 1 : t->dims[axis];
    }
    for (int d = 0, k = 0; d < rank; d++) {
        if (d != axis) dims[d] = f->dims[k++];
        else {
            dims[d] = total;
            k += !stack; /* concat replaces the item's axis, stack inserts one */
        }
    }
    tensor *o = c->out[0];
    tensor_set_shape(o, f->dtype, rank, dims);
    TRY(tensor_alloc(o, c->err));
    /* Row-major: each item contributes a block of `inner * its axis length`
     * per outer index. */
    int64_t outer = 1, inner = 1, es = (int64_t)ait_dtype_size(f->dtype);
    for (int d = 0; d < axis; d++) outer *= dims[d];
    for (int d = axis + 1; d < rank; d++) inner *= dims[d];
    int64_t off = 0;
    for (int i = 0; i < s->n_items; i++) {
        const tensor *t = &s->items[i];
        int64_t len = stack ? 1 : t->dims[axis], run = len * inner;
        for (int64_t q = 0; q < outer; q++)
            TRY(elems_copy((char *)o->data + (q * total + off) * inner * es,
                           (const char *)t->data + q * run * es, run, f->dtype, c->err));
        off += len;
    }
    return AIT_OK;
}

/* SequenceMap: runs the body once per item; sequence inputs give their
 * item i, tensor inputs are passed whole. */
static ait_status seq_map_run(op_ctx *c)
{
    const attr *b = node_attr(c->n, "body");
    if (!b || !b->g) return err_set(c->err, AIT_E_PARSE, "SequenceMap needs a body graph");
    const graph *body = b->g;
    if (body->n_inputs != c->n_in || body->n_outputs != c->n_out || c->n_in > 64 || c->n_out > 64)
        return err_set(c->err, AIT_E_SHAPE, "SequenceMap body does not match the node");
    TRY(need_seq(c, 0));
    int n = c->in[0]->n_items;
    for (int i = 1; i < c->n_in; i++)
        if (c->in[i]->kind == VAL_SEQUENCE && c->in[i]->n_items != n)
            return err_set(c->err, AIT_E_SHAPE, "input sequences have %d and %d items", n,
                           c->in[i]->n_items);
    for (int j = 0; j < c->n_out; j++)
        tensor_make_sequence(c->out[j], body->vals[body->outputs[j]].dtype);
    tensor res[64] = {0};
    tensor *outs[64], *ins[64];
    for (int j = 0; j < c->n_out; j++) outs[j] = &res[j];
    ait_status s = AIT_OK;
    for (int k = 0; k < n && s == AIT_OK; k++) {
        for (int i = 0; i < c->n_in; i++)
            ins[i] = c->in[i]->kind == VAL_SEQUENCE ? &c->in[i]->items[k] : c->in[i];
        s = op_subgraph(c, body, ins, outs);
        for (int j = 0; j < c->n_out && s == AIT_OK; j++) s = seq_insert(c->out[j], k, &res[j], c->err);
    }
    for (int j = 0; j < c->n_out; j++) tensor_release(&res[j]);
    return s;
}

static ait_status optional_run(op_ctx *c)
{
    if (has_in(c, 0)) return tensor_copy_into(c->out[0], c->in[0], c->err);
    tensor_make_none(c->out[0]);
    return AIT_OK;
}

static ait_status opt_has_run(op_ctx *c)
{
    tensor *o = c->out[0];
    tensor_set_shape(o, AIT_BOOL, 0, NULL);
    TRY(tensor_alloc(o, c->err));
    *(uint8_t *)o->data = has_in(c, 0) && c->in[0]->kind != VAL_NONE;
    return AIT_OK;
}

static ait_status opt_get_run(op_ctx *c)
{
    if (!has_in(c, 0) || c->in[0]->kind == VAL_NONE)
        return err_set(c->err, AIT_E_INVALID_ARG, "the optional input is empty");
    return tensor_copy_into(c->out[0], c->in[0], c->err);
}

OP_TABLE(sequence,
         {"SequenceEmpty", 0, 0, 1, 1, SEQ_FLAGS, defer, seq_empty_run},
         {"SequenceConstruct", 1, 512, 1, 1, SEQ_FLAGS | OP_VARIADIC, defer, seq_construct_run},
         {"SequenceAt", 2, 2, 1, 1, SEQ_FLAGS, defer, seq_at_run},
         {"SequenceInsert", 2, 3, 1, 1, SEQ_FLAGS, defer, seq_insert_run},
         {"SequenceErase", 1, 2, 1, 1, SEQ_FLAGS, defer, seq_erase_run},
         {"SequenceLength", 1, 1, 1, 1, SEQ_FLAGS, defer, seq_length_run},
         {"SplitToSequence", 1, 2, 1, 1, SEQ_FLAGS, defer, split_to_seq_run},
         {"ConcatFromSequence", 1, 1, 1, 1, SEQ_FLAGS, defer, concat_from_seq_run},
         {"SequenceMap", 1, 64, 1, 64, SEQ_FLAGS | OP_VARIADIC, defer, seq_map_run},
         {"Optional", 0, 1, 1, 1, SEQ_FLAGS, defer, optional_run},
         {"OptionalHasElement", 0, 1, 1, 1, SEQ_FLAGS, defer, opt_has_run},
         {"OptionalGetElement", 1, 1, 1, 1, SEQ_FLAGS, defer, opt_get_run});
