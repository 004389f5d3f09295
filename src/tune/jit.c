/* JIT tuning (see jit.h). */
#include "tune/jit.h"

#include <stdlib.h>
#include <string.h>

#include "tune/plan_build.h"

void jit_free(jit_state *j)
{
    if (!j) return;
    plan_free(j->p);
    tune_report_free(j->rep);
    selection_clear(&j->sel);
    inspection_free(j->insp);
    sample_set_free(j->samples);
    free(j);
}

/* The call's inputs as the one sample. */
static ait_status one_sample(const ait_model *m, tensor *const *inputs, sample_set **out,
                             ait_error *e)
{
    int n = m->g->n_inputs;
    sample_set *ss = calloc(1, sizeof *ss);
    if (ss) ss->s = calloc(1, sizeof *ss->s);
    if (ss && ss->s) ss->s[0].values = calloc((size_t)n + 1, sizeof(tensor *));
    if (ss && ss->s && ss->s[0].values) ss->s[0].source = strdup("the first run's inputs");
    if (!ss || !ss->s || !ss->s[0].values || !ss->s[0].source) {
        if (ss && ss->s) free(ss->s[0].values);
        if (ss) free(ss->s);
        free(ss);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    ss->n = 1;
    ss->n_inputs = n;
    *out = ss;
    for (int i = 0; i < n; i++) {
        if (!inputs[i] || inputs[i]->kind != VAL_TENSOR)
            return err_set(e, AIT_E_UNSUPPORTED, "JIT tuning takes tensor inputs only");
        TRY(tensor_clone(inputs[i], &ss->s[0].values[i], e));
    }
    return AIT_OK;
}

ait_status jit_tune(const ait_model *m, tensor *const *inputs, const jit_opts *o,
                    jit_state **out, ait_error *e)
{
    *out = NULL;
    jit_state *j = calloc(1, sizeof *j);
    if (!j) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = one_sample(m, inputs, &j->samples, e);
    /* The batch of this call, from the first input with a batch axis. */
    int batch = 1;
    for (int i = 0; s == AIT_OK && i < m->g->n_inputs; i++) {
        int ax = samples_batch_axis(m, i);
        if (ax >= 0 && ax < inputs[i]->rank) {
            batch = inputs[i]->dims[ax] > 0 && inputs[i]->dims[ax] < (1 << 20)
                  ? (int)inputs[i]->dims[ax] : 1;
            break;
        }
    }
    inspect_opts io = {.samples = j->samples, .n_batch = 1, .batch = {batch}, .warmup = 0,
                       .runs = 1, .threads = 1, .log = o->log};
    if (s == AIT_OK) s = inspect_run(m, &io, &j->insp, e);
    if (s == AIT_OK) s = select_by_share(&j->sel, j->insp, 1, 0, 0, "min-latency", e);
    tune_opts to = {.samples = j->samples, .n_batch = 1, .batch = {batch}, .sel = &j->sel,
                    .max_threads = o->threads > 0 ? o->threads : 1, .timeout = 60,
                    .log = o->log, .cache_dir = o->cache_dir, .prof = profile_defaults()};
    to.prof.warmup = 2;
    to.prof.window = 5;
    to.prof.cap = 15;
    if (s == AIT_OK) s = tune_run(m, j->insp, &to, &j->rep, e);
    if (s == AIT_OK) s = plan_from_report(j->insp, j->rep, &j->p, e);
    if (s != AIT_OK) {
        err_prefix(e, "JIT tuning: ");
        jit_free(j);
        return s;
    }
    *out = j;
    return AIT_OK;
}
