/* Bound buffers: which tensors a run reads and where it writes its outputs
 * (include/ait.h, "bound buffers"). Binding records pointers only: setting
 * and running allocate nothing once the unbound outputs' copies have grown
 * to their size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
        b->kv = calloc((size_t)b->n_in + 1, sizeof *b->kv);
        b->views = calloc((size_t)b->n_in + 1, sizeof *b->views);
        b->run_in = calloc((size_t)b->n_in + 1, sizeof *b->run_in);
        b->run_out = calloc((size_t)b->n_out + 1, sizeof *b->run_out);
    }
    if (!b || !b->in || !b->out || !b->own || !b->res || !b->kv || !b->views || !b->run_in ||
        !b->run_out) {
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
    for (int k = 0; b->kv && k < b->n_in; k++) tensor_release(&b->kv[k].tmp_in);
    free(b->kv);
    free(b->views);
    free(b->run_in);
    free(b->run_out);
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

/* The cache pair on input i (output j when i < 0), or NULL. */
static bind_cache *pair_of(ait_binding *b, int i, int j)
{
    for (int k = 0; k < b->n_kv; k++)
        if (i >= 0 ? b->kv[k].v.in == i : b->kv[k].v.out == j) return &b->kv[k];
    return NULL;
}

/* Removes pair p (its copy buffer moves to the end, kept for reuse). */
static void pair_drop(ait_binding *b, bind_cache *p)
{
    if (!p) return;
    bind_cache t = *p, *last = &b->kv[--b->n_kv];
    *p = *last;
    *last = t;
    last->cache = NULL;
}

ait_status ait_binding_set_input(ait_binding *b, int i, const ait_tensor *t, ait_error *err)
{
    if (!b) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_set_input: NULL binding");
    TRY(bind_ok(b, false, i, t, err));
    pair_drop(b, pair_of(b, i, -1));
    b->in[i] = (tensor *)t; /* only read */
    return AIT_OK;
}

ait_status ait_binding_set_output(ait_binding *b, int j, ait_tensor *t, ait_error *err)
{
    if (!b) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_set_output: NULL binding");
    TRY(bind_ok(b, true, j, t, err));
    pair_drop(b, pair_of(b, -1, j));
    b->out[j] = t;
    return AIT_OK;
}

ait_status ait_binding_set_cache(ait_binding *b, int i, int j, ait_tensor *cache, int axis,
                                 int64_t len, ait_error *err)
{
    if (!b) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_set_cache: NULL binding");
    TRY(bind_ok(b, false, i, cache, err));
    TRY(bind_ok(b, true, j, cache, err));
    pair_drop(b, pair_of(b, i, -1));
    pair_drop(b, pair_of(b, -1, j));
    b->in[i] = NULL;
    b->out[j] = NULL;
    if (!cache) return AIT_OK;
    const value *d = port(b, false, i);
    if (axis < 0 || axis >= cache->rank || (d->rank >= 0 && d->rank != cache->rank))
        return err_set(err, AIT_E_INVALID_ARG, "%s: input '%s': the cache given is of rank %d; "
                       "axis %d is not a past-length axis of it", b->m->path, d->name, cache->rank,
                       axis);
    if (len < 0 || len > cache->dims[axis])
        return err_set(err, AIT_E_SHAPE, "%s: input '%s': a past of %lld positions does not fit "
                       "the cache bound to it (%lld positions along axis %d)", b->m->path,
                       d->name, (long long)len, (long long)cache->dims[axis], axis);
    bind_cache *p = &b->kv[b->n_kv++];
    p->cache = cache;
    p->v = (kv_view){.in = i, .out = j, .axis = axis, .cap = cache->dims[axis]};
    p->len = len;
    return AIT_OK;
}

int ait_binding_caches_in_place(const ait_binding *b)
{
    return b ? b->kv_in_place : 0;
}

ait_tensor *ait_binding_output(ait_binding *b, int j)
{
    if (!b || j < 0 || j >= b->n_out) return NULL;
    bind_cache *p = pair_of(b, -1, j);
    if (p) return p->cache;
    return b->out[j] ? b->out[j] : &b->own[j];
}

static void pair_views(bind_cache *p);

/* The bucket of b's session that a run on b's inputs as bound now falls in
 * (a cache pair's input is its past of len positions), or -1 when an
 * input is unbound or the model is untuned. b->run_in is the scratch. */
static int bound_bucket(ait_binding *b)
{
    for (int i = 0; i < b->n_in; i++) {
        bind_cache *p = pair_of(b, i, -1);
        if (p) pair_views(p);
        if (!(b->run_in[i] = p ? &p->past : b->in[i])) return -1;
    }
    return session_bucket(b->s, b->run_in);
}

ait_status ait_binding_reserve(ait_binding *b, size_t *bytes, ait_error *err)
{
    if (bytes) *bytes = 0;
    if (!b) return err_set(err, AIT_E_INVALID_ARG, "ait_binding_reserve: NULL binding");
    int k = bound_bucket(b); /* -1: every bucket's, the most of each output */
    size_t held = 0;
    for (int j = 0; j < b->n_out; j++) {
        tensor *t = &b->own[j];
        size_t need = session_output_room(b->s, k, j);
        if (need && !b->out[j] && !pair_of(b, -1, j) && !(t->owned && t->data && t->cap >= need)) {
            int64_t n = (int64_t)need, none = 0;
            tensor_set_shape(t, AIT_U8, 1, &n);
            ait_status st = tensor_alloc(t, err); /* zeroed: every page mapped now */
            if (st != AIT_OK) {
                err_prefix(err, "%s: output '%s': ", b->m->path, port(b, true, j)->name);
                return st;
            }
            tensor_set_shape(t, port(b, true, j)->dtype, 1, &none); /* empty until a run */
        }
        if (t->kind == VAL_TENSOR && t->owned && t->data) held += t->cap;
    }
    if (bytes) *bytes = held;
    return AIT_OK;
}

/* The bytes a bound output may write: its whole capacity. */
static size_t room_of(const tensor *t) { return t->owned ? t->cap : t->room; }

static bool overlap(const tensor *a, size_t na, const tensor *b, size_t nb)
{
    uintptr_t p = (uintptr_t)a->data, q = (uintptr_t)b->data;
    return na && nb && p < q + nb && q < p + na;
}

/* The views of pair p on its cache: the past its first len positions,
 * the present all of it (the run gives its shape). */
static void pair_views(bind_cache *p)
{
    const tensor *c = p->cache;
    p->past = (tensor){.dtype = c->dtype, .rank = c->rank, .data = c->data, .kind = VAL_TENSOR};
    memcpy(p->past.dims, c->dims, sizeof c->dims);
    p->past.dims[p->v.axis] = p->len;
    p->pres = p->past;
    p->pres.dims[p->v.axis] = p->v.cap;
    p->pres.room = room_of(c);
}

ait_status binding_check(ait_binding *b, ait_error *e)
{
    memcpy(b->run_in, b->in, sizeof *b->in * (size_t)b->n_in);
    memcpy(b->run_out, b->out, sizeof *b->out * (size_t)b->n_out);
    for (int k = 0; k < b->n_kv; k++) {
        bind_cache *p = &b->kv[k];
        pair_views(p);
        b->run_in[p->v.in] = &p->past;
        b->run_out[p->v.out] = &p->pres;
        b->views[k] = p->v;
    }
    b->kv_copy = false;
    b->kv_in_place = 0;
    for (int i = 0; i < b->n_in; i++)
        if (!b->run_in[i])
            return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is not bound", b->m->path,
                           port(b, false, i)->name);
    for (int j = 0; j < b->n_out; j++) {
        const tensor *o = b->run_out[j];
        if (!o) continue;
        size_t n = room_of(o);
        const bind_cache *p = pair_of(b, -1, j);
        for (int i = 0; i < b->n_in; i++)
            if (!(p && p->v.in == i) && b->run_in[i]->kind == VAL_TENSOR &&
                overlap(o, n, b->run_in[i], tensor_nbytes(b->run_in[i])))
                return err_set(e, AIT_E_INVALID_ARG, "%s: output '%s' is bound to memory that "
                               "input '%s' reads: a run cannot read and write one buffer (bind "
                               "the output to a second buffer, and swap the two between runs)",
                               b->m->path, port(b, true, j)->name, port(b, false, i)->name);
        for (int k = 0; k < j; k++)
            if (b->run_out[k] && overlap(o, n, b->run_out[k], room_of(b->run_out[k])))
                return err_set(e, AIT_E_INVALID_ARG, "%s: outputs '%s' and '%s' are bound to "
                               "overlapping memory", b->m->path, port(b, true, k)->name,
                               port(b, true, j)->name);
    }
    return AIT_OK;
}

ait_status binding_keep(ait_binding *b, ait_error *e)
{
    for (int j = 0; j < b->n_out; j++)
        if (!b->run_out[j] && !pair_of(b, -1, j)) TRY(tensor_copy_into(&b->own[j], b->res[j], e));
    return AIT_OK;
}

/* t made a dense tensor of the cache's dims (allocated once, at the
 * cache's size), then given dims[axis] = n. */
static ait_status tmp_shape(tensor *t, const bind_cache *p, int64_t n, ait_error *e)
{
    tensor_set_shape(t, p->cache->dtype, p->cache->rank, p->cache->dims);
    TRY(tensor_alloc(t, e));
    t->dims[p->v.axis] = n;
    return AIT_OK;
}

ait_status binding_kv_prepare(ait_binding *b, bool in_place, ait_error *e)
{
    b->kv_copy = b->n_kv && !in_place;
    for (int k = 0; b->kv_copy && k < b->n_kv; k++) {
        bind_cache *p = &b->kv[k];
        int64_t outer, inner;
        TRY(tmp_shape(&p->tmp_in, p, p->len, e));
        kv_split(p->cache->dims, p->cache->rank, p->v.axis, &outer, &inner);
        kv_rows_copy(p->tmp_in.data, p->len, 0, p->cache->data, p->v.cap, 0, p->len, outer, inner,
                     ait_dtype_size(p->cache->dtype));
        b->run_in[p->v.in] = &p->tmp_in;
        b->run_out[p->v.out] = NULL; /* the run's own: b->res */
    }
    return AIT_OK;
}

ait_status binding_kv_finish(ait_binding *b, ait_error *e)
{
    for (int k = 0; k < b->n_kv; k++) {
        bind_cache *p = &b->kv[k];
        const tensor *t = b->kv_copy ? b->res[p->v.out] : &p->pres, *c = p->cache;
        ait_status s = kv_fits(t, c->dims, c->rank, p->v.axis, port(b, true, p->v.out)->name, e);
        if (s != AIT_OK) {
            err_prefix(e, "%s: ", b->m->path);
            return s;
        }
        if (!b->kv_copy && !b->views[k].copied) b->kv_in_place++;
        if (!b->kv_copy) continue;
        int64_t outer, inner, n = t->dims[p->v.axis];
        kv_split(c->dims, c->rank, p->v.axis, &outer, &inner);
        kv_rows_copy(c->data, p->v.cap, 0, t->data, n, 0, n, outer, inner, ait_dtype_size(c->dtype));
    }
    return AIT_OK;
}
