/* onednn's bookkeeping, which the builders (ops.c, fuse.c) and the backend
 * (onednn.c) share: errors naming the node, what a built module owns
 * (buffers, memories, steps), values in their native and plain layouts, and
 * prepared weights (reordered once, saved and loaded as blobs). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl_debug.h>

#include "backends/onednn/onednn.h"

/* ---- errors --------------------------------------------------------------------- */

static const char *node_name(const built *bm, int i)
{
    return i >= 0 && i < bm->g->n_nodes ? bm->g->nodes[i].name : "(reorder)";
}

ait_status dn_fail(built *bm, int i, ait_status code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(bm->err, code, "onednn: node '%s' (%s): %s", node_name(bm, i),
                   i >= 0 && i < bm->g->n_nodes ? bm->g->nodes[i].op : "reorder", msg);
}

ait_status dn_check(built *bm, int i, dnnl_status_t s, const char *what)
{
    if (s == dnnl_success) return AIT_OK;
    return dn_fail(bm, i, s == dnnl_out_of_memory ? AIT_E_NOMEM : AIT_E_INTERNAL, "%s: %s", what,
                   dnnl_status2str(s));
}

/* ---- lists owned by bm ----------------------------------------------------------- */

/* Grows *arr (of *cap elements of size sz) to hold n + 1. */
static bool grow(void **arr, int *cap, int n, size_t sz)
{
    if (n < *cap) return true;
    int nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) return false;
    *arr = p;
    *cap = nc;
    return true;
}

/* A buffer owned by bm, zeroed now or (fresh) by dn_zero_fresh. */
static void *buf_new(built *bm, size_t bytes, bool fresh)
{
    dn_sched *p = bm->p;
    if (!grow((void **)&p->bufs, &p->cap_bufs, p->n_bufs, sizeof *p->bufs)) return NULL;
    if (fresh) {
        int cap = p->cap_fresh; /* the two arrays grow together */
        if (!grow((void **)&p->fresh_bytes, &cap, p->n_fresh, sizeof *p->fresh_bytes) ||
            !grow((void **)&p->fresh, &p->cap_fresh, p->n_fresh, sizeof *p->fresh))
            return NULL;
    }
    void *b = fresh ? aligned_malloc(bytes ? bytes : 1) : aligned_zalloc(bytes ? bytes : 1);
    if (!b) return NULL;
    if (fresh) {
        p->fresh[p->n_fresh] = p->n_bufs;
        p->fresh_bytes[p->n_fresh++] = bytes ? bytes : 1;
    }
    p->bufs[p->n_bufs++] = b;
    return b;
}

void *dn_alloc(built *bm, size_t bytes) { return buf_new(bm, bytes, false); }

void dn_zero_fresh(built *bm)
{
    dn_sched *p = bm->p;
    for (int j = 0; j < p->n_fresh; j++)
        if (p->bufs[p->fresh[j]]) memset(p->bufs[p->fresh[j]], 0, p->fresh_bytes[j]);
    p->n_fresh = 0;
}

static dnnl_memory_t mem_new(built *bm, const dnnl_memory_desc_t *md, void *data, bool fresh)
{
    dnnl_memory_t m = NULL;
    if (!grow((void **)&bm->p->mems, &bm->p->cap_mems, bm->p->n_mems, sizeof *bm->p->mems)) {
        err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
        return NULL;
    }
    if (!data) {
        data = buf_new(bm, dnnl_memory_desc_get_size(md), fresh);
        if (!data) {
            err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
            return NULL;
        }
    }
    if (dn_check(bm, -1, dnnl_memory_create(&m, md, bm->eng, data), "memory") != AIT_OK)
        return NULL;
    bm->p->mems[bm->p->n_mems++] = m;
    return m;
}

dnnl_memory_t dn_mem_new(built *bm, const dnnl_memory_desc_t *md, void *data)
{
    return mem_new(bm, md, data, false);
}

dnnl_memory_t dn_mem_out(built *bm, const dnnl_memory_desc_t *md)
{
    return mem_new(bm, md, NULL, true);
}

ait_status dn_step_add(built *bm, int node, dnnl_primitive_t prim, const dnnl_exec_arg_t *args,
                       int n_args)
{
    if (!grow((void **)&bm->p->steps, &bm->p->cap_steps, bm->p->n_steps, sizeof *bm->p->steps)) {
        if (prim) dnnl_primitive_destroy(prim);
        return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
    }
    dn_step *s = &bm->p->steps[bm->p->n_steps];
    memset(s, 0, sizeof *s);
    s->node = node;
    s->prim = prim;
    if (n_args) {
        s->args = malloc(sizeof *args * (size_t)n_args);
        if (!s->args) {
            if (prim) dnnl_primitive_destroy(prim);
            return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
        }
        memcpy(s->args, args, sizeof *args * (size_t)n_args);
        s->n_args = n_args;
    }
    bm->p->n_steps++;
    return AIT_OK;
}

/* Records what oneDNN chose for the step just added (dn_impls, and the
 * schedule's DEBUG line). */
static void impl_note(built *bm, const_dnnl_primitive_desc_t pd)
{
    dn_step *s = &bm->p->steps[bm->p->n_steps - 1];
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
    snprintf(s->impl, sizeof s->impl, "%s:%s", dnnl_prim_kind2str(kind), dn_impl(pd));
}

void dn_refused(built *bm) { bm->p->n_refused++; }

ait_status dn_prim(built *bm, int i, dnnl_primitive_desc_t pd, const dnnl_exec_arg_t *args,
                   int n_args)
{
    dnnl_primitive_t p = NULL;
    TRY(dn_check(bm, i, dnnl_primitive_create(&p, pd), "primitive"));
    TRY(dn_step_add(bm, i, p, args, n_args));
    impl_note(bm, pd);
    return AIT_OK;
}

static ait_status reorder_pd(built *bm, int node, dnnl_memory_t from, dnnl_memory_t to,
                             dnnl_primitive_t *p, char *impl, size_t n)
{
    const dnnl_memory_desc_t *fmd, *tmd;
    dnnl_primitive_desc_t pd = NULL;
    TRY(dn_check(bm, node, dnnl_memory_get_memory_desc(from, &fmd), "memory desc"));
    TRY(dn_check(bm, node, dnnl_memory_get_memory_desc(to, &tmd), "memory desc"));
    TRY(dn_check(bm, node, dnnl_reorder_primitive_desc_create(&pd, fmd, bm->eng, tmd, bm->eng, NULL),
                 "reorder"));
    dnnl_status_t s = dnnl_primitive_create(p, pd);
    snprintf(impl, n, "reorder:%s", dn_impl(pd));
    dnnl_primitive_desc_destroy(pd);
    return dn_check(bm, node, s, "reorder");
}

ait_status dn_reorder(built *bm, int node, dnnl_memory_t from, dnnl_memory_t to)
{
    dnnl_primitive_t p = NULL;
    char impl[64];
    TRY(reorder_pd(bm, node, from, to, &p, impl, sizeof impl));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    TRY(dn_step_add(bm, node, p, args, 2));
    snprintf(bm->p->steps[bm->p->n_steps - 1].impl, sizeof bm->p->steps[0].impl, "%s", impl);
    return AIT_OK;
}

/* ---- values ---------------------------------------------------------------------- */

const tensor *dn_shape(const built *bm, int v)
{
    const tensor *t = v >= 0 ? bm->p->vals[v].spec : NULL;
    return t && t->dtype != AIT_UNDEFINED && t->kind == VAL_TENSOR ? t : NULL;
}

bool dn_is_const(const built *bm, int v)
{
    const tensor *t = dn_shape(bm, v);
    return t && (t->data || bm->g->vals[v].konst);
}

bool dn_is_freed(const built *bm, int v)
{
    const tensor *t = dn_shape(bm, v);
    return t && !t->data && bm->g->vals[v].konst;
}

void dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims)
{
    dnnl_dims_t d, s;
    int r = rank > 0 ? rank : 1;
    for (int i = 0; i < r; i++) d[i] = rank > 0 ? dims[i] : 1;
    s[r - 1] = 1;
    for (int i = r - 2; i >= 0; i--) s[i] = s[i + 1] * (d[i + 1] > 0 ? d[i + 1] : 1);
    dnnl_memory_desc_init_by_strides(md, r, d, dnnl_f32, s);
}

static int input_index(const built *bm, int v)
{
    for (int k = 0; k < bm->g->n_inputs; k++)
        if (bm->g->inputs[k] == v) return k;
    return -1;
}

/* Makes v's plain tensor exist: a reorder step from its native memory. */
ait_status dn_ensure_plain(built *bm, int v)
{
    dn_val *d = &bm->p->vals[v];
    if (d->plain || input_index(bm, v) >= 0) return AIT_OK;
    const tensor *sh = dn_shape(bm, v);
    if (!d->mem || !sh)
        return err_set(bm->err, AIT_E_INTERNAL, "onednn: value '%s' has no data to read",
                       bm->g->vals[v].name);
    dnnl_memory_desc_t md;
    const dnnl_memory_desc_t *nmd;
    dn_md_plain(&md, sh->rank, sh->dims);
    TRY(dn_check(bm, -1, dnnl_memory_get_memory_desc(d->mem, &nmd), "memory desc"));
    if (dnnl_memory_desc_equal(nmd, &md)) { /* already plain: the tensor is a view of it */
        void *h = NULL;
        TRY(dn_check(bm, -1, dnnl_memory_get_data_handle(d->mem, &h), "memory"));
        tensor_set_shape(&d->t, AIT_F32, sh->rank, sh->dims);
        d->t.data = h;
        d->plain = &d->t;
        d->pmem = d->mem;
        return AIT_OK;
    }
    tensor_set_shape(&d->t, AIT_F32, sh->rank, sh->dims);
    TRY(tensor_alloc(&d->t, bm->err));
    d->plain = &d->t;
    d->pmem = dn_mem_new(bm, &md, d->t.data);
    if (!d->pmem) return bm->err->code;
    return dn_reorder(bm, bm->g->vals[v].producer, d->mem, d->pmem);
}

dnnl_memory_t dn_view(built *bm, int v, const dnnl_memory_desc_t *md)
{
    if (dn_ensure_plain(bm, v) != AIT_OK) return NULL;
    int k = input_index(bm, v);
    if (k < 0) return dn_mem_new(bm, md, bm->p->vals[v].plain->data);
    dnnl_memory_t m = NULL;
    if (!grow((void **)&bm->p->binds, &bm->p->cap_binds, bm->p->n_binds, sizeof *bm->p->binds) ||
        !grow((void **)&bm->p->mems, &bm->p->cap_mems, bm->p->n_mems, sizeof *bm->p->mems)) {
        err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
        return NULL;
    }
    if (dn_check(bm, -1, dnnl_memory_create(&m, md, bm->eng, DNNL_MEMORY_NONE), "memory") != AIT_OK)
        return NULL;
    bm->p->mems[bm->p->n_mems++] = m;
    bm->p->binds[bm->p->n_binds++] = (dn_bind){m, k, 0};
    return m;
}

dnnl_memory_t dn_plain(built *bm, int v)
{
    dn_val *d = &bm->p->vals[v];
    if (d->pmem) return d->pmem;
    const tensor *sh = dn_shape(bm, v);
    if (!sh) {
        err_set(bm->err, AIT_E_INTERNAL, "onednn: value '%s' has no known shape",
                bm->g->vals[v].name);
        return NULL;
    }
    dnnl_memory_desc_t md;
    dn_md_plain(&md, sh->rank, sh->dims);
    d->pmem = dn_view(bm, v, &md);
    if (d->pmem && !d->mem) d->mem = d->pmem;
    return d->pmem;
}

dnnl_memory_t dn_as(built *bm, int v, const dnnl_memory_desc_t *md)
{
    dnnl_memory_t nat = bm->p->vals[v].mem ? bm->p->vals[v].mem : dn_plain(bm, v);
    if (!nat || !md) return nat;
    const dnnl_memory_desc_t *nmd;
    if (dn_check(bm, -1, dnnl_memory_get_memory_desc(nat, &nmd), "memory desc") != AIT_OK)
        return NULL;
    if (dnnl_memory_desc_equal(nmd, md)) return nat;
    dnnl_memory_t have[2] = {bm->p->vals[v].pmem, bm->p->vals[v].alt};
    for (int k = 0; k < 2; k++) /* a copy in that layout made for an earlier reader */
        if (have[k] && dnnl_memory_get_memory_desc(have[k], &nmd) == dnnl_success &&
            dnnl_memory_desc_equal(nmd, md))
            return have[k];
    dnnl_memory_t m = dn_mem_out(bm, md);
    if (!m || dn_reorder(bm, bm->g->vals[v].producer, nat, m) != AIT_OK) return NULL;
    bm->p->vals[v].alt = m;
    return m;
}

/* ---- prepared weights ------------------------------------------------------------ */

static uint32_t md_hash(const dnnl_memory_desc_t *md)
{
    uint32_t h = 2166136261u;
#define MIX(x)                                     \
    do {                                           \
        uint64_t v_ = (uint64_t)(x);               \
        for (int b_ = 0; b_ < 8; b_++) {           \
            h ^= (uint32_t)(v_ >> (8 * b_)) & 255; \
            h *= 16777619u;                        \
        }                                          \
    } while (0)
    MIX(md->ndims);
    MIX(md->data_type);
    MIX(md->format_kind);
    for (int i = 0; i < md->ndims; i++) {
        MIX(md->dims[i]);
        MIX(md->padded_dims[i]);
    }
    if (md->format_kind == dnnl_blocked) {
        const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
        for (int i = 0; i < md->ndims; i++) MIX(b->strides[i]);
        MIX(b->inner_nblks);
        for (int i = 0; i < b->inner_nblks; i++) {
            MIX(b->inner_blks[i]);
            MIX(b->inner_idxs[i]);
        }
    }
    MIX(md->extra.flags);
#undef MIX
    return h;
}

static ait_status blob_add(built *bm, const char *name, const void *data, size_t size)
{
    if (!grow((void **)&bm->p->blobs, &bm->p->cap_blobs, bm->p->n_blobs, sizeof *bm->p->blobs))
        return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
    prep_blob *b = &bm->p->blobs[bm->p->n_blobs++];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->data = data;
    b->size = size;
    return AIT_OK;
}

dnnl_memory_t dn_weights(built *bm, int i, const dnnl_memory_desc_t *want, dnnl_memory_t src)
{
    char name[64], prefix[16];
    size_t size = dnnl_memory_desc_get_size(want);
    snprintf(prefix, sizeof prefix, "w%d.", i);
    snprintf(name, sizeof name, "%s%08x.%s", prefix, (unsigned)md_hash(want), node_name(bm, i));
    if (bm->prep) {
        const prep_blob *b = NULL;
        for (int k = 0; k < bm->prep->n; k++) { /* this layout's, else another's to name */
            const prep_blob *c = &bm->prep->blobs[k];
            if (strncmp(c->name, name, sizeof c->name - 1) == 0) b = c;
            else if (!b && strncmp(c->name, prefix, strlen(prefix)) == 0) b = c;
        }
        if (!b) {
            dn_fail(bm, i, AIT_E_NOT_FOUND, "prepared weights '%s' are missing", name);
            return NULL;
        }
        if (strncmp(b->name, name, sizeof b->name - 1) != 0) {
            dn_fail(bm, i, AIT_E_INVALID_ARG, "prepared weights '%s' have another layout than "
                    "this machine's primitive wants ('%s')", b->name, name);
            return NULL;
        }
        if (b->size != size || !b->data) {
            dn_fail(bm, i, AIT_E_INVALID_ARG, "prepared weights '%s' are %zu bytes, the primitive "
                    "wants %zu", b->name, b->size, size);
            return NULL;
        }
        dnnl_memory_t m = dn_mem_new(bm, want, (void *)b->data); /* read only: weights */
        if (m && blob_add(bm, b->name, b->data, b->size) != AIT_OK) return NULL;
        return m;
    }
    dnnl_memory_t m = dn_mem_new(bm, want, NULL);
    dnnl_primitive_t p = NULL;
    void *data = NULL;
    if (!m || reorder_pd(bm, i, src, m, &p, (char[64]){0}, 64) != AIT_OK) return NULL;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, m}};
    dnnl_status_t s = dnnl_primitive_execute(p, bm->st, 2, args);
    if (s == dnnl_success) s = dnnl_stream_wait(bm->st);
    dnnl_primitive_destroy(p);
    if (dn_check(bm, i, s, "weights reorder") != AIT_OK) return NULL;
    if (dn_check(bm, i, dnnl_memory_get_data_handle(m, &data), "memory") != AIT_OK) return NULL;
    if (blob_add(bm, name, data, size) != AIT_OK) return NULL;
    return m;
}
