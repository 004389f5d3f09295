/* The public ait_binding handle (api/binding.c), run by ait_session_run_bound
 * (api/session.c). */
#ifndef AIT_API_BINDING_H
#define AIT_API_BINDING_H
#include "core/kv.h"
#include "core/tensor.h"
#include "exec/exec.h"

/* A key/value cache pair (ait_binding_set_cache): one caller buffer read as
 * input v.in's past and written as output v.out's present. */
typedef struct bind_cache {
    tensor *cache;          /* the caller's buffer */
    kv_view v;              /* model ports; v.cap: cache->dims[v.axis] */
    int64_t len;            /* past positions */
    tensor past, pres;      /* views on cache (headers, data borrowed) */
    tensor tmp_in;          /* the copy path's dense past (owned, made once at
                               the cache's size); its present is the run's */
} bind_cache;

struct ait_binding {
    const ait_session *s;
    const struct ait_model *m;
    int n_in, n_out;
    tensor **in;    /* per model input: the caller's tensor, or NULL (unbound) */
    tensor **out;   /* per model output: the caller's tensor, or NULL: */
    tensor *own;    /* per model output: where an unbound one is copied (reused) */
    tensor **res;   /* per model output: a run's results, scratch */
    bind_cache *kv;    /* the cache pairs, n_kv of them (room for n_in) */
    int n_kv;
    kv_view *views; /* per pair, its kv_view (what plan_exec_kv_set takes) */
    bool kv_copy;   /* this run copies the caches (binding_kv_prepare) */
    int kv_in_place; /* caches the last run appended in place */
    tensor **run_in, **run_out; /* what a run reads and writes: in, out and
                                   the pairs' views or copies */
};

/* The model session s runs (api/session.c). */
const struct ait_model *session_model(const ait_session *s);
/* The bytes output j of s takes in bucket k of its plan (k -1: the most in
 * any bucket), from the priming runs at create, or 0: an untuned model, no
 * such bucket, or not known. */
size_t session_output_room(const ait_session *s, int k, int j);
/* The bucket of s's plan that a run on inputs (every model input, in
 * declared order) falls in, or -1: an untuned model (no buckets). */
int session_bucket(const ait_session *s, tensor *const *inputs);
/* The schedules s's idle execution contexts made (exec/exec.h's
 * sched_stats, summed), for tests: whether a decoder's step at a new past
 * length kept its schedule. */
void session_sched_stats(ait_session *s, sched_stats *out);

/* Makes run_in and run_out for a run (the pairs' views), then checks that
 * every input is bound and that no bound output's memory overlaps an
 * input's or another bound output's (a pair's own past and present aside). */
ait_status binding_check(ait_binding *b, ait_error *e);
/* After a successful run whose results are in b->res: the unbound outputs
 * copied into the binding's own tensors (their storage reused). */
ait_status binding_keep(ait_binding *b, ait_error *e);
/* Before a run with cache pairs: in place (the pairs' views, checked by
 * the plan runner), or else by copies: each past gathered into a dense
 * tensor and each present left to the run (b->res). */
ait_status binding_kv_prepare(ait_binding *b, bool in_place, ait_error *e);
/* After a successful run: the presents checked against their caches and,
 * when copied, scattered into them. */
ait_status binding_kv_finish(ait_binding *b, ait_error *e);

#endif
