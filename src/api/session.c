/* The public model and session API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "runtime/model.h"
#include "exec/exec.h"
#include "runtime/plan_exec.h"
#include "tune/jit.h"
#include "runtime/plan.h"
#include "tune/plan_build.h"

struct ait_session {
    const ait_model *m;
    exec *x;         /* an untuned model's executor, or */
    plan_exec *px;   /* a tuned model's plan runner */
    bool jit;        /* tune on the first run */
    char *cache_dir; /* JIT tuning's cache (a copy), or NULL */
    logger log;      /* JIT tuning's messages */
    jit_state *js;   /* what JIT tuning chose, once done */
    char note[1024];
    int threads;
    ait_error err;
};

ait_status ait_session_create(const ait_model *m, const ait_session_options *opts,
                              ait_session **out, ait_error *err)
{
    if (out) *out = NULL;
    if (!m || !out) return err_set(err, AIT_E_INVALID_ARG, "ait_session_create: NULL argument");
    ait_session_options o;
    TRY(OPTS_TAKE(o, opts, err));
    ait_session *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, AIT_E_NOMEM, "out of memory");
    s->m = m;
    s->threads = o.threads > 0 ? o.threads : 1;
    s->jit = !m->plan && o.jit;
    s->log = (logger){o.log, o.log_user};
    ait_status st = AIT_OK;
    if (s->jit && o.cache_dir && !(s->cache_dir = strdup(o.cache_dir)))
        st = err_set(err, AIT_E_NOMEM, "out of memory");
    if (st == AIT_OK)
        st = m->plan ? plan_exec_create(m->g, m->plan, s->threads, &s->px, err)
                     : exec_create(m->g, NULL, s->threads, &s->x, err);
    if (st != AIT_OK) {
        free(s->cache_dir);
        free(s);
        return st;
    }
    *out = s;
    return AIT_OK;
}

void ait_session_free(ait_session *s)
{
    if (!s) return;
    exec_free(s->x);
    plan_exec_free(s->px);
    jit_free(s->js);
    free(s->cache_dir);
    free(s);
}

const char *ait_session_error(const ait_session *s) { return s ? s->err.msg : ""; }

const char *ait_session_note(const ait_session *s) { return s ? s->note : ""; }

ait_status ait_session_save(ait_session *s, const char *path, ait_error *err)
{
    if (!s || !path) return err_set(err, AIT_E_INVALID_ARG, "ait_session_save: NULL argument");
    if (!s->js)
        return err_set(err, AIT_E_INVALID_ARG, "%s: the session has not been JIT-tuned (turn on "
                       "ait_session_options.jit and run it once)", s->m->path);
    return plan_save(s->m, s->js->insp, s->js->rep, path, err);
}

/* The first run of a JIT session: tune, then run on the plan; a failure
 * leaves the session untuned, said in the note. */
static void jit_first_run(ait_session *s, tensor *const *inputs)
{
    ait_error e = {0};
    s->jit = false;
    jit_opts jo = {.threads = s->threads, .cache_dir = s->cache_dir, .log = s->log};
    if (jit_tune(s->m, inputs, &jo, &s->js, &e) == AIT_OK &&
        plan_exec_create(s->m->g, s->js->p, s->threads, &s->px, &e) == AIT_OK) {
        snprintf(s->note, sizeof s->note, "JIT: tuned %d module%s on the first run",
                 s->js->p->n_modules, s->js->p->n_modules == 1 ? "" : "s");
        return;
    }
    jit_free(s->js);
    s->js = NULL;
    snprintf(s->note, sizeof s->note, "JIT tuning failed, running untuned: %s", e.msg);
    log_msg(&s->log, AIT_LOG_WARN, "%s", s->note);
}

ait_status ait_session_run(ait_session *s, ait_tensor *const *inputs, int n_inputs,
                           ait_tensor **outputs, int n_outputs)
{
    if (!s) return AIT_E_INVALID_ARG;
    s->err.code = AIT_OK;
    s->err.msg[0] = 0;
    const graph *g = s->m->g;
    if (n_inputs != g->n_inputs || (n_inputs && !inputs))
        return err_set(&s->err, AIT_E_INVALID_ARG, "%s: the model takes %d inputs, %d given",
                       s->m->path, g->n_inputs, n_inputs);
    if (n_outputs != g->n_outputs || !outputs)
        return err_set(&s->err, AIT_E_INVALID_ARG, "%s: the model has %d outputs, room for %d given",
                       s->m->path, g->n_outputs, n_outputs);
    for (int j = 0; j < n_outputs; j++) outputs[j] = NULL;
    tensor *res[512];
    if (n_outputs > 512) return err_set(&s->err, AIT_E_UNSUPPORTED, "more than 512 outputs");
    if (s->jit) jit_first_run(s, inputs);
    TRY(s->px ? plan_exec_run(s->px, inputs, res, &s->err) : exec_run(s->x, inputs, res, &s->err));
    for (int j = 0; j < n_outputs; j++) {
        if (tensor_clone(res[j], &outputs[j], &s->err) != AIT_OK) {
            for (int k = 0; k < j; k++) {
                ait_tensor_free(outputs[k]);
                outputs[k] = NULL;
            }
            return s->err.code;
        }
    }
    return AIT_OK;
}
