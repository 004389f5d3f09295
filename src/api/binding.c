/* Bound buffers: which tensors a run reads and where it writes its outputs
 * (include/ait.h, "bound buffers"). Binding records pointers only: setting
 * and running allocate nothing once the unbound outputs' copies have grown
 * to their size. */
#include <stdint.h>
#include <stdlib.h>

#include "api/binding.h"
#include "runtime/model.h"

ait_status ait_binding_create(ait_session *s, ait_binding **out, ait_error *err)
{
    if (out) *out = NULL;
    if (!s || !out) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_create: NULL argument");
    const ait_model *m = session_model(s);
    ait_binding *b = calloc(1, sizeof *b);
    if (b) {
        b->s = s;
        b->m = m;
        b->n_in = m->g->n_inputs;
        b->n_out = m->g->n_outputs;
        b->in = calloc((size_t)b->n_in + 1, sizeof *b->in);
        b->out = calloc((size_t)b->n_out + 1, sizeof *b->out);
        b->own = calloc((size_t)b->n_out + 1, sizeof *b->own);
        b->res = calloc((size_t)b->n_out + 1, sizeof *b->res);
    }
    if (!b || !b->in || !b->out || !b->own || !b->res) {
        ait_binding_free(b);
        return err_set(err, AIT_E_NOMEM, "out of memory");
    }
    *out = b;
    return AIT_OK;
}

void ait_binding_free(ait_binding *b)
{
    if (!b) return;
    for (int j = 0; b->own && j < b->n_out; j++) tensor_release(&b->own[j]);
    free(b->in);
    free(b->out);
    free(b->own);
    free(b->res);
    free(b);
}

/* What a value of the model is declared to be, for the messages. */
static const value *port(const ait_binding *b, bool output, int i)
{
    const graph *g = b->m->g;
    return &g->vals[output ? g->outputs[i] : g->inputs[i]];
}

/* t may be bound where the model declares port i: a tensor (not a sequence
 * or map) of the declared dtype, with data. */
static ait_status bind_ok(const ait_binding *b, bool output, int i, const tensor *t,
                          ait_error *err)
{
    const char *what = output ? "output" : "input";
    int n = output ? b->n_out : b->n_in;
    if (i < 0 || i >= n)
        return err_set(err, AIT_E_INVALID_ARG, "%s: the model has %d %ss; there is no %s %d",
                       b->m->path, n, what, what, i);
    const value *d = port(b, output, i);
    if (!t) return AIT_OK;
    if (t->kind != VAL_TENSOR)
        return err_set(err, AIT_E_UNSUPPORTED, "%s: %s '%s': a %s cannot be bound (only "
                       "tensors)", b->m->path, what, d->name, val_kind_name(t->kind));
    if (output && t->dtype == AIT_STRING)
        return err_set(err, AIT_E_UNSUPPORTED, "%s: output '%s': a string tensor cannot be bound "
                       "as an output (leave it unbound)", b->m->path, d->name);
    if (d->dtype != AIT_UNDEFINED && t->dtype != d->dtype)
        return err_set(err, AIT_E_DTYPE, "%s: %s '%s' is %s; the tensor given is %s", b->m->path,
                       what, d->name, ait_dtype_name(d->dtype), ait_dtype_name(t->dtype));
    if (!t->data)
        return err_set(err, AIT_E_INVALID_ARG, "%s: %s '%s': the tensor given has no data",
                       b->m->path, what, d->name);
    return AIT_OK;
}

ait_status ait_binding_set_input(ait_binding *b, int i, const ait_tensor *t, ait_error *err)
{
    if (!b) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_set_input: NULL binding");
    TRY(bind_ok(b, false, i, t, err));
    b->in[i] = (tensor *)t; /* only read */
    return AIT_OK;
}

ait_status ait_binding_set_output(ait_binding *b, int j, ait_tensor *t, ait_error *err)
{
    if (!b) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_set_output: NULL binding");
    TRY(bind_ok(b, true, j, t, err));
    b->out[j] = t;
    return AIT_OK;
}

ait_tensor *ait_binding_output(ait_binding *b, int j)
{
    if (!b || j < 0 || j >= b->n_out) return NULL;
    return b->out[j] ? b->out[j] : &b->own[j];
}

/* The bytes a bound output may write: its whole capacity. */
static size_t room_of(const tensor *t) { return t->owned ? t->cap : t->room; }

static bool overlap(const tensor *a, size_t na, const tensor *b, size_t nb)
{
    uintptr_t p = (uintptr_t)a->data, q = (uintptr_t)b->data;
    return na && nb && p < q + nb && q < p + na;
}

ait_status binding_check(const ait_binding *b, ait_error *e)
{
    for (int i = 0; i < b->n_in; i++)
        if (!b->in[i])
            return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is not bound", b->m->path,
                           port(b, false, i)->name);
    for (int j = 0; j < b->n_out; j++) {
        const tensor *o = b->out[j];
        if (!o) continue;
        size_t n = room_of(o);
        for (int i = 0; i < b->n_in; i++)
            if (b->in[i]->kind == VAL_TENSOR && overlap(o, n, b->in[i], tensor_nbytes(b->in[i])))
                return err_set(e, AIT_E_INVALID_ARG, "%s: output '%s' is bound to memory that "
                               "input '%s' reads: a run cannot read and write one buffer (bind "
                               "the output to a second buffer, and swap the two between runs)",
                               b->m->path, port(b, true, j)->name, port(b, false, i)->name);
        for (int k = 0; k < j; k++)
            if (b->out[k] && overlap(o, n, b->out[k], room_of(b->out[k])))
                return err_set(e, AIT_E_INVALID_ARG, "%s: outputs '%s' and '%s' are bound to "
                               "overlapping memory", b->m->path, port(b, true, k)->name,
                               port(b, true, j)->name);
    }
    return AIT_OK;
}

ait_status binding_keep(ait_binding *b, ait_error *e)
{
    for (int j = 0; j < b->n_out; j++)
        if (!b->out[j]) TRY(tensor_copy_into(&b->own[j], b->res[j], e));
    return AIT_OK;
}
