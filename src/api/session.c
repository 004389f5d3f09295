/* The public session API.
 *
 * Threads: what a run changes (the executor's per-value buffers and plans,
 * per-node scratch, a plan runner's built modules and their primitives)
 * lives in an execution context: an executor for an untuned model, a plan
 * runner for a tuned one. A session owns a pool of them; each run takes
 * an idle one (or makes one, built and primed as at create, when all are
 * in use), runs on it alone and gives it back, so runs from several
 * threads never share mutable state. The mutex guards only the pool, the
 * session's last error, the JIT state and the note: runs hold it for a few
 * pointer moves, never while computing. A JIT session's first run tunes
 * with the lock released; runs arriving meanwhile wait for it (they would
 * otherwise disturb its timings and run untuned contexts that are then
 * thrown away), then run on the tuned plan. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/block_pool.h"
#include "core/options.h"
#include "api/binding.h"
#include "runtime/model.h"
#include "exec/exec.h"
#include "runtime/plan_exec.h"
#include "tune/jit.h"
#include "runtime/plan.h"
#include "tune/plan_build.h"

/* One execution context: what one run at a time may change. */
typedef struct ctx {
    const plan *p;   /* the plan it runs (NULL: untuned), to drop stale ones */
    exec *x;         /* an untuned model's executor, or */
    plan_exec *px;   /* a tuned model's plan runner */
    struct ctx *next;
} ctx;

enum { JIT_OFF, JIT_PENDING, JIT_TUNING };

struct ait_session {
    const ait_model *m;
    int threads;
    uint64_t id;           /* unique in the process: keys the threads' error copies */
    pthread_mutex_t lock;  /* guards every field below */
    pthread_cond_t tuned;  /* JIT: the first run's tuning is over */
    const plan *p;         /* what new contexts run: the model's plan, the JIT's, or NULL */
    ctx *idle;             /* contexts no run holds */
    int jit;               /* JIT_* */
    char *cache_dir;       /* JIT tuning's cache (a copy), or NULL; set at create */
    logger log;            /* JIT tuning's messages; set at create */
    gemm_report *rep;      /* each GEMM shape native runs, said once on log (DEBUG), or NULL */
    jit_state *js;         /* what JIT tuning chose, once done (then never changed) */
    const char *note;      /* "" or note_buf, written before it is published */
    char note_buf[1024];
    ait_error err;         /* the last failure of a run, from any thread */
    size_t *out_room;      /* per output: its most bytes over the plan's buckets'
                              priming runs (0: unknown), then per bucket k
                              the n_out bytes of its own at (k + 1) * n_out;
                              set at create */
    const plan *room_plan; /* the plan whose buckets out_room lists (NULL: none) */
    block_pool *outs;      /* ait_session_run's output copies' blocks, or NULL; set at
                              create (out_room_set) */
};

/* The calling thread's copy of the message of its last run, keyed by the
 * session's id (addresses are reused after a free), and of the session's
 * last error when it has not run that session: a string no other thread
 * writes, so it cannot tear. Per thread, not shared: not global state. */
static _Thread_local struct {
    uint64_t id;
    char msg[1024];
} tl_run;
static _Thread_local char tl_copy[1024];

static uint64_t next_session_id(void)
{
    static uint64_t last; /* only ever incremented atomically */
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

static void ctx_free(ctx *c)
{
    if (!c) return;
    exec_free(c->x);
    plan_exec_free(c->px);
    free(c);
}

/* A new context for plan p (NULL: untuned): built (and, for a plan,
 * primed) now, so its first run pays nothing more than later ones. */
static ait_status ctx_make(const ait_session *s, const plan *p, ctx **out, ait_error *e)
{
    *out = NULL;
    ctx *c = calloc(1, sizeof *c);
    if (!c) return err_set(e, AIT_E_NOMEM, "out of memory");
    c->p = p;
    /* An artifact's plan: as each module is built from its blobs, the
     * model's copies of the weights they replace are freed (once per model:
     * the first runner; later runners read none of them: backend.releases). */
    ait_model *m = (ait_model *)s->m;
    bool release = p && p == m->plan && !__atomic_exchange_n(&m->released, 1, __ATOMIC_ACQ_REL);
    size_t freed = 0;
    ait_status st = !p ? exec_create(s->m->g, NULL, s->threads, &c->x, e)
                  : release ? plan_exec_create_releasing(m->g, p, s->threads, s->rep, &freed,
                                                         &c->px, e)
                  : plan_exec_create(s->m->g, p, s->threads, s->rep, &c->px, e);
    if (st != AIT_OK) {
        /* nothing freed: the next runner may release (and the model still inspects) */
        if (release && !freed) __atomic_store_n(&m->released, 0, __ATOMIC_RELEASE);
        free(c);
        return st;
    }
    *out = c;
    return AIT_OK;
}

/* ait_session_run's outputs are copied out of the context into new
 * tensors. Their data comes from s->outs, blocks made and touched here for
 * every bucket's outputs (once per context of create), lent to the
 * tensors and given back when the caller frees them, so that no run
 * (the first after loading included) faults in the pages of its copies:
 * on gpt2_small's decode bucket at batch 4, 9289 minor faults (36 MiB) in
 * the first run, which the allocator's own reuse of freed blocks did not
 * avoid (its mmap threshold maps a block of 1.5 MiB on its own, given
 * back to the system when freed: bench/RESULTS.md). A run finding no idle
 * block that fits (outputs still held, a shape larger than its bucket's,
 * more runs at once than contexts) allocates as before. At most
 * OUT_POOL_MAX bytes, blocks of at most OUT_BLOCK_MAX (a larger output is
 * allocated and faults in on every run alike). The block bound holds a
 * batch-4 prefill's logits (gpt2_small's 103 MB, 50257 x 512 floats): with
 * 32 MiB, their first run took 1.35-1.41x the later ones on the idle host
 * (bench/RESULTS.md), the first fresh mapping of that size paying for its
 * pages. */
enum { OUT_BLOCK_MAX = 128 << 20, OUT_POOL_MAX = 256 << 20 };

/* s->out_room from an idle context's priming runs (an artifact's plan):
 * the most over the buckets, then each bucket's; left NULL (every output
 * 0) for an untuned model or on no memory; and s->outs from them, for
 * `contexts` runs at once (0: none, ait_session_options.no_output_blocks). */
static void out_room_set(ait_session *s, int contexts)
{
    const ctx *c = s->idle;
    size_t n_out = (size_t)s->m->g->n_outputs;
    if (!c || !c->px || !c->p ||
        !(s->out_room = calloc(((size_t)c->p->n_buckets + 1) * n_out + 1, sizeof *s->out_room)))
        return;
    s->room_plan = c->p;
    for (int k = 0; k < c->p->n_buckets; k++)
        for (size_t j = 0; j < n_out; j++) {
            size_t b = plan_exec_output_bytes(c->px, k, (int)j);
            s->out_room[((size_t)k + 1) * n_out + j] = b;
            if (b > s->out_room[j]) s->out_room[j] = b;
        }
    /* per context (each may run at once), every bucket's outputs */
    size_t per = (size_t)c->p->n_buckets * n_out, n = per * (size_t)contexts;
    size_t *bytes = n ? malloc(n * sizeof *bytes) : NULL;
    for (size_t i = 0; bytes && i < n; i++) bytes[i] = s->out_room[n_out + i % per];
    if (bytes && n) s->outs = block_pool_new(bytes, n, OUT_BLOCK_MAX, OUT_POOL_MAX);
    free(bytes);
}

size_t session_output_room(const ait_session *s, int k, int j)
{
    int n_out = s->m->g->n_outputs;
    if (!s->out_room || j < 0 || j >= n_out || k < -1 || k >= s->room_plan->n_buckets) return 0;
    return s->out_room[(size_t)(k + 1) * (size_t)n_out + (size_t)j];
}

int session_bucket(const ait_session *s, tensor *const *inputs)
{
    return s->out_room ? plan_bucket_index(s->room_plan, inputs, s->m->g->n_inputs) : -1;
}

ait_status ait_session_create(const ait_model *m, const ait_session_options *opts,
                              ait_session **out, ait_error *err)
{
    if (out) *out = NULL;
    if (!m || !out) return err_set(err, AIT_E_INVALID_ARG, "ait_session_create: NULL argument");
    ait_session_options o;
    TRY(OPTS_TAKE(o, opts, err));
    if (o.contexts < 0)
        return err_set(err, AIT_E_INVALID_ARG, "ait_session_create: contexts %d is negative",
                       o.contexts);
    ait_session *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, AIT_E_NOMEM, "out of memory");
    s->m = m;
    s->threads = o.threads > 0 ? o.threads : 1;
    s->id = next_session_id();
    s->p = m->plan;
    s->note = "";
    s->jit = !m->plan && o.jit ? JIT_PENDING : JIT_OFF;
    s->log = (logger){o.log, o.log_user};
    s->rep = gemm_report_new(&s->log, AIT_LOG_DEBUG);
    if (s->jit && o.cache_dir && !(s->cache_dir = strdup(o.cache_dir))) {
        gemm_report_free(s->rep);
        free(s);
        return err_set(err, AIT_E_NOMEM, "out of memory");
    }
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        gemm_report_free(s->rep);
        free(s->cache_dir);
        free(s);
        return err_set(err, AIT_E_INTERNAL, "ait_session_create: no mutex");
    }
    if (pthread_cond_init(&s->tuned, NULL) != 0) {
        pthread_mutex_destroy(&s->lock);
        gemm_report_free(s->rep);
        free(s->cache_dir);
        free(s);
        return err_set(err, AIT_E_INTERNAL, "ait_session_create: no condition variable");
    }
    int n = o.contexts > 0 ? o.contexts : 1;
    for (int i = 0; i < n; i++) {
        ctx *c;
        ait_status st = ctx_make(s, s->p, &c, err);
        if (st != AIT_OK) {
            ait_session_free(s);
            return st;
        }
        c->next = s->idle;
        s->idle = c;
    }
    out_room_set(s, o.no_output_blocks ? 0 : n);
    *out = s;
    return AIT_OK;
}

void ait_session_free(ait_session *s)
{
    if (!s) return;
    while (s->idle) {
        ctx *c = s->idle;
        s->idle = c->next;
        ctx_free(c);
    }
    jit_free(s->js);
    gemm_report_free(s->rep);
    block_pool_close(s->outs); /* blocks still lent are freed when given back */
    free(s->out_room);
    free(s->cache_dir);
    pthread_cond_destroy(&s->tuned);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

const char *ait_session_error(const ait_session *s)
{
    if (!s) return "";
    if (tl_run.id == s->id) return tl_run.msg;
    ait_session *w = (ait_session *)s; /* the lock only: the session is not changed */
    pthread_mutex_lock(&w->lock);
    snprintf(tl_copy, sizeof tl_copy, "%s", s->err.msg);
    pthread_mutex_unlock(&w->lock);
    return tl_copy;
}

const char *ait_session_note(const ait_session *s)
{
    if (!s) return "";
    ait_session *w = (ait_session *)s;
    pthread_mutex_lock(&w->lock);
    const char *n = s->note; /* its bytes never change once published */
    pthread_mutex_unlock(&w->lock);
    return n;
}

ait_status ait_session_save(ait_session *s, const char *path, ait_error *err)
{
    if (!s || !path) return err_set(err, AIT_E_INVALID_ARG, "ait_session_save: NULL argument");
    pthread_mutex_lock(&s->lock);
    const jit_state *js = s->js; /* never changed once set */
    pthread_mutex_unlock(&s->lock);
    if (!js)
        return err_set(err, AIT_E_INVALID_ARG, "%s: the session has not been JIT-tuned (turn on "
                       "ait_session_options.jit and run it once)", s->m->path);
    return plan_save(s->m, js->insp, js->rep, path, err);
}

/* The first run of a JIT session, with the lock released and every other
 * run waiting (so no context is in use): tune, build one context on the
 * plan, then publish both; a failure leaves the session untuned, said in
 * the note. */
static void jit_first_run(ait_session *s, tensor *const *inputs)
{
    ait_error e = {0};
    jit_state *js = NULL;
    ctx *c = NULL;
    jit_opts jo = {.threads = s->threads, .cache_dir = s->cache_dir, .log = s->log};
    bool ok = jit_tune(s->m, inputs, &jo, &js, &e) == AIT_OK && ctx_make(s, js->p, &c, &e) == AIT_OK;
    if (ok) {
        snprintf(s->note_buf, sizeof s->note_buf, "JIT: tuned %d module%s on the first run",
                 js->p->n_modules, js->p->n_modules == 1 ? "" : "s");
    } else {
        snprintf(s->note_buf, sizeof s->note_buf, "JIT tuning failed, running untuned: %s",
                 e.msg);
        log_msg(&s->log, AIT_LOG_WARN, "%s", s->note_buf);
    }
    ctx *stale = NULL;
    pthread_mutex_lock(&s->lock);
    if (ok) {
        stale = s->idle; /* the untuned executors: every one is idle */
        s->idle = c;
        s->p = js->p;
        s->js = js;
        js = NULL;
    }
    s->note = s->note_buf;
    s->jit = JIT_OFF;
    pthread_cond_broadcast(&s->tuned);
    pthread_mutex_unlock(&s->lock);
    while (stale) {
        ctx *n = stale->next;
        ctx_free(stale);
        stale = n;
    }
    jit_free(js);
}

/* An idle context of the session's current plan, or a new one; a JIT
 * session's first run tunes first, and runs arriving meanwhile wait. */
static ait_status ctx_take(ait_session *s, tensor *const *inputs, ctx **out, ait_error *e)
{
    pthread_mutex_lock(&s->lock);
    if (s->jit == JIT_PENDING) {
        s->jit = JIT_TUNING;
        pthread_mutex_unlock(&s->lock);
        jit_first_run(s, inputs);
        pthread_mutex_lock(&s->lock);
    }
    while (s->jit == JIT_TUNING) pthread_cond_wait(&s->tuned, &s->lock);
    ctx *c = s->idle;
    if (c) s->idle = c->next;
    const plan *p = s->p;
    pthread_mutex_unlock(&s->lock);
    if (c) {
        *out = c;
        return AIT_OK;
    }
    return ctx_make(s, p, out, e); /* all in use: one more, made without the lock */
}

/* Gives c back (NULL: none was taken) and records the run's outcome: the
 * calling thread's copy, and the session's last error on a failure. */
static ait_status run_end(ait_session *s, ctx *c, ait_status st, const ait_error *e)
{
    tl_run.id = s->id;
    snprintf(tl_run.msg, sizeof tl_run.msg, "%s", st != AIT_OK ? e->msg : "");
    bool stale = false;
    pthread_mutex_lock(&s->lock);
    if (st != AIT_OK) s->err = *e;
    if (c) {
        stale = c->p != s->p;
        if (!stale) {
            c->next = s->idle;
            s->idle = c;
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (stale) ctx_free(c);
    return st;
}

void ait_session_memory(ait_session *s, size_t *arena, size_t *weights)
{
    size_t a = 0, w = 0;
    if (s) {
        pthread_mutex_lock(&s->lock);
        for (const ctx *c = s->idle; c; c = c->next) {
            size_t b = c->px ? plan_exec_arena_bytes(c->px) : c->x ? exec_arena_bytes(c->x) : 0;
            if (b > a) a = b;
        }
        pthread_mutex_unlock(&s->lock);
        const graph *g = s->m->g;
        for (int v = 0; v < g->n_vals; v++) {
            const tensor *k = g->vals[v].konst;
            if (k && k->kind == VAL_TENSOR && k->data) w += tensor_nbytes(k); /* not released */
        }
    }
    if (arena) *arena = a;
    if (weights) *weights = w;
}

const ait_model *session_model(const ait_session *s) { return s->m; }

void session_sched_stats(ait_session *s, sched_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->lock);
    for (const ctx *c = s->idle; c; c = c->next) {
        if (c->px) plan_exec_sched_stats(c->px, out);
        else if (c->x) exec_sched_stats(c->x, out);
    }
    pthread_mutex_unlock(&s->lock);
}

/* One run on a context of s: bound[j] (may be NULL) the caller's tensor
 * for output j, res[j] each output's tensor after it (the context's for
 * an unbound one); keep (may be NULL) copies those out before the context
 * is given back. */
static ait_status session_exec(ait_session *s, tensor *const *inputs, tensor *const *bound,
                               tensor **res, ait_status (*keep)(void *, ait_error *),
                               void *user, ait_binding *kv, ait_error *e)
{
    ctx *c = NULL;
    ait_status st = ctx_take(s, inputs, &c, e);
    /* kv (a binding with cache pairs, else NULL): appended in place where
     * the plan runner can, else copied (binding_kv_prepare) */
    if (st == AIT_OK && kv)
        st = binding_kv_prepare(kv, c->px && plan_exec_kv_set(c->px, kv->views, kv->n_kv), e);
    if (st == AIT_OK)
        st = c->px ? plan_exec_run_bound(c->px, inputs, bound, res, e)
                   : exec_run_bound(c->x, inputs, bound, res, e);
    if (c && c->px && kv) plan_exec_kv_set(c->px, NULL, 0);
    if (st == AIT_OK && kv) st = binding_kv_finish(kv, e);
    if (st == AIT_OK && keep) st = keep(user, e);
    return run_end(s, c, st, e);
}

static ait_status bound_keep(void *b, ait_error *e) { return binding_keep(b, e); }

ait_status ait_session_run_bound(ait_session *s, ait_binding *b)
{
    if (!s) return AIT_E_INVALID_ARG;
    ait_error e = {0};
    if (!b || b->s != s)
        return run_end(s, NULL, err_set(&e, AIT_E_INVALID_ARG, "%s: %s", s->m->path, !b
                                        ? "ait_session_run_bound: NULL binding"
                                        : "the binding was made for another session"), &e);
    if (binding_check(b, &e) != AIT_OK) return run_end(s, NULL, e.code, &e);
    return session_exec(s, b->run_in, b->run_out, b->res, bound_keep, b, b->n_kv ? b : NULL, &e);
}

/* ait_session_run's outputs: new tensors, copied from the context's. */
typedef struct clone_out {
    tensor **res;
    ait_tensor **outputs;
    int n;
    block_pool *pool; /* the session's outs */
} clone_out;

static ait_status clone_keep(void *user, ait_error *e)
{
    clone_out *o = user;
    for (int j = 0; j < o->n; j++) {
        ait_status st = tensor_clone_pooled(o->res[j], o->pool, &o->outputs[j], e);
        if (st != AIT_OK) {
            for (int k = 0; k < j; k++) {
                ait_tensor_free(o->outputs[k]);
                o->outputs[k] = NULL;
            }
            return st;
        }
    }
    return AIT_OK;
}

ait_status ait_session_run(ait_session *s, ait_tensor *const *inputs, int n_inputs,
                           ait_tensor **outputs, int n_outputs)
{
    if (!s) return AIT_E_INVALID_ARG;
    ait_error e = {0};
    const graph *g = s->m->g;
    if (n_inputs != g->n_inputs || (n_inputs && !inputs))
        return run_end(s, NULL, err_set(&e, AIT_E_INVALID_ARG, "%s: the model takes %d inputs, "
                                        "%d given", s->m->path, g->n_inputs, n_inputs), &e);
    if (n_outputs != g->n_outputs || !outputs)
        return run_end(s, NULL, err_set(&e, AIT_E_INVALID_ARG, "%s: the model has %d outputs, "
                                        "room for %d given", s->m->path, g->n_outputs, n_outputs),
                       &e);
    for (int j = 0; j < n_outputs; j++) outputs[j] = NULL;
    tensor *res[512];
    if (n_outputs > 512)
        return run_end(s, NULL, err_set(&e, AIT_E_UNSUPPORTED, "more than 512 outputs"), &e);
    /* The results belong to the context: copied out before it is given back. */
    clone_out o = {res, outputs, n_outputs, s->outs};
    return session_exec(s, inputs, NULL, res, clone_keep, &o, NULL, &e);
}
