/* The tuner (see tuner.h). */
#include "tune/tuner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/extract.h"
#include "runtime/exec.h"
#include "tune/isolate.h"
#include "tune/strategy.h"
#include "tune/validate.h"

int tune_bucket(int b)
{
    int p = 1;
    while (p < b && p < (1 << 29)) p <<= 1;
    return p;
}

void tune_report_free(tune_report *r)
{
    if (!r) return;
    free(r->mods);
    free(r);
}

/* What one candidate's trial needs; the child process sees a copy. */
typedef struct trial {
    const backend *b;
    const graph *sub;
    const candidate_cfg *cfg;
    tensor *const *feed;
    const tensor *const *ref;
    const char *const *names;
    const profile_opts *prof;
    built *bm;
    tensor *outs[64];
    tune_cand res; /* what the child sends back */
} trial;

static ait_status trial_run_once(void *ctx, ait_error *e)
{
    trial *t = ctx;
    return t->b->run(t->bm, t->feed, t->outs, e);
}

/* In the child: build, run, validate, profile; the bytes sent back are the
 * filled tune_cand. Validation failures are results, not errors. */
static ait_status trial_fn(void *ctx, const void **out, size_t *len, ait_error *e)
{
    trial *t = ctx;
    tune_cand *r = &t->res;
    TRY(t->b->build(t->b, t->sub, t->cfg, &t->bm, e));
    TRY(t->b->run(t->bm, t->feed, t->outs, e));
    out_metrics m[64];
    verdict v;
    TRY(validate_outputs(t->ref, t->sub->n_outputs, (const tensor *const *)t->outs,
                         t->sub->n_outputs, t->names, NULL, m, &v, e));
    r->valid = v.pass;
    snprintf(r->reason, sizeof r->reason, "%s", v.pass ? "" : v.reason);
    r->max_rel = 0;
    r->sqnr_db = INFINITY;
    for (int j = 0; j < t->sub->n_outputs; j++) {
        r->max_rel = fmax(r->max_rel, m[j].max_rel);
        r->sqnr_db = fmin(r->sqnr_db, m[j].sqnr_db);
    }
    if (r->valid) TRY(profile_run(t->prof, trial_run_once, t, &r->prof, e));
    t->b->free(t->bm);
    *out = r;
    *len = sizeof *r;
    return AIT_OK;
}

/* The candidates for one module: the baseline first, then every available
 * backend that runs some of the module's nodes itself, at each thread count. */
static void list_candidates(const graph *sub, const tune_opts *o, tune_module *tm)
{
    int threads = o->max_threads > 0 ? o->max_threads : 1;
    tm->n_cands = 0;
    for (int i = 0; i < backend_count() && tm->n_cands < TUNE_MAX_CANDS; i++) {
        const backend *b = backend_at(i);
        char why[256];
        bool is_ref = strcmp(b->name, "reference") == 0;
        if (b->available && !b->available(why, sizeof why)) continue;
        if (!is_ref && backend_coverage(b, sub) == 0) continue;
        for (int t = 1; t <= threads && tm->n_cands < TUNE_MAX_CANDS; t++) {
            if (is_ref && t > 1) break; /* the reference ops use one thread */
            tune_cand *c = &tm->cands[tm->n_cands++];
            memset(c, 0, sizeof *c);
            c->cfg.backend = b->name;
            c->cfg.threads = t;
            snprintf(c->name, sizeof c->name, "%s/t%d", b->name, t);
        }
    }
}

/* Tunes module `mi` at bucket b: feed its ports from a whole-model run. */
static ait_status tune_one(const ait_model *m, const inspection *insp, const tune_opts *o,
                           exec *whole, tensor **inputs, tune_module *tm, ait_error *e)
{
    const graph *g = m->g;
    graph *sub = NULL;
    int mi = tm->module;
    TRY(graph_extract(g, insp->tree, mi, &sub, e));
    ait_status s = AIT_OK;
    tensor *feed[64] = {0}, *ref[64] = {0}, *outs[64];
    const char *names[64];
    exec *rx = NULL;
    if (sub->n_inputs > 64 || sub->n_outputs > 64)
        s = err_set(e, AIT_E_UNSUPPORTED, "module '%s' has more than 64 inputs or outputs",
                    insp->tree->mods[mi].name);
    if (s == AIT_OK) s = exec_run(whole, inputs, outs, e);
    for (int k = 0; s == AIT_OK && k < sub->n_inputs; k++) {
        const tensor *v = exec_value(whole, graph_find_value(g, sub->vals[sub->inputs[k]].name));
        if (!v) s = err_set(e, AIT_E_INTERNAL, "module input '%s' was not computed",
                            sub->vals[sub->inputs[k]].name);
        else s = tensor_clone(v, &feed[k], e);
    }
    /* The reference outputs every candidate is judged against. */
    if (s == AIT_OK) s = exec_create(sub, NULL, 1, &rx, e);
    if (s == AIT_OK) s = exec_run(rx, feed, outs, e);
    for (int j = 0; s == AIT_OK && j < sub->n_outputs; j++) {
        s = tensor_clone(outs[j], &ref[j], e);
        names[j] = sub->vals[sub->outputs[j]].name;
    }
    if (s == AIT_OK) list_candidates(sub, o, tm);
    for (int c = 0; s == AIT_OK && c < tm->n_cands; c++) {
        tune_cand *tc = &tm->cands[c];
        trial t = {.b = backend_find(tc->cfg.backend), .sub = sub, .cfg = &tc->cfg, .feed = feed,
                   .ref = (const tensor *const *)ref, .names = names, .prof = &o->prof};
        t.res = *tc;
        if (!o->quiet)
            fprintf(stderr, "tune: %s @ batch %d: %s ...\n", insp->tree->mods[mi].name[0]
                    ? insp->tree->mods[mi].name : "(model)", tm->batch, tc->name);
        isolate_opts io = {.timeout = o->timeout > 0 ? o->timeout : 60};
        isolate_result ir = {0};
        ait_error ce = {0};
        if (isolate_run(&io, trial_fn, &t, &ir, &ce) == AIT_OK && ir.len == sizeof *tc) {
            memcpy(tc, ir.data, sizeof *tc);
            tc->cfg.backend = t.b->name; /* the child's pointer is ours too, but say it */
        } else {
            tc->valid = false;
            snprintf(tc->reason, sizeof tc->reason, "%s", ce.msg[0] ? ce.msg : "no result");
        }
        free(ir.data);
    }
    double base = tm->n_cands && tm->cands[0].valid ? tm->cands[0].prof.median : 0;
    for (int c = 0; s == AIT_OK && c < tm->n_cands; c++) {
        tune_cand *tc = &tm->cands[c];
        tc->speedup = tc->valid && tc->prof.median > 0 ? base / tc->prof.median : 0;
    }
    exec_free(rx);
    for (int k = 0; k < 64; k++) {
        ait_tensor_free(feed[k]);
        ait_tensor_free(ref[k]);
    }
    graph_free(sub);
    return s;
}

static ait_status choose(tune_module *tm, ait_error *e)
{
    strategy st;
    TRY(strategy_parse(tm->strategy, &st, e));
    cand_result cr[TUNE_MAX_CANDS];
    for (int c = 0; c < tm->n_cands; c++) {
        const tune_cand *tc = &tm->cands[c];
        cr[c] = (cand_result){.name = tc->name, .backend = tc->cfg.backend, .valid = tc->valid,
                              .reason = tc->reason, .latency = tc->prof.median,
                              .throughput = tc->prof.throughput, .batch = tm->batch};
    }
    tm->chosen = 0;
    if (!tm->cands[0].valid) {
        snprintf(tm->why, sizeof tm->why, "the baseline failed (%s); the module keeps it",
                 tm->cands[0].reason);
        return AIT_OK;
    }
    choice ch;
    TRY(strategy_choose(&st, &cr[0], cr + 1, tm->n_cands - 1, &ch, e));
    tm->chosen = ch.index + 1;
    snprintf(tm->why, sizeof tm->why, "%s", ch.why);
    return AIT_OK;
}

ait_status tune_run(const ait_model *m, const inspection *insp, const tune_opts *o,
                    tune_report **out, ait_error *e)
{
    *out = NULL;
    int buckets[16], nb = 0;
    for (int i = 0; i < (o->n_batch ? o->n_batch : 1); i++) {
        int b = tune_bucket(o->n_batch ? o->batch[i] : 1);
        bool seen = false;
        for (int k = 0; k < nb; k++) seen |= buckets[k] == b;
        if (!seen && nb < 16) buckets[nb++] = b;
    }
    int n_mod = o->sel && o->sel->n ? o->sel->n : 1;
    tune_report *r = calloc(1, sizeof *r);
    if (r) r->mods = calloc((size_t)(n_mod * nb), sizeof *r->mods);
    if (!r || !r->mods) {
        tune_report_free(r);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    int n_in = m->g->n_inputs;
    tensor **inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    exec *whole = NULL;
    ait_status s = inputs ? exec_create(m->g, NULL, 1, &whole, e) : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int bi = 0; s == AIT_OK && bi < nb; bi++) {
        s = samples_batch(m, o->samples, buckets[bi], inputs, e);
        for (int k = 0; s == AIT_OK && k < n_mod; k++) {
            tune_module *tm = &r->mods[r->n++];
            tm->module = o->sel && o->sel->n ? o->sel->items[k].module : 0;
            tm->batch = buckets[bi];
            snprintf(tm->strategy, sizeof tm->strategy, "%s",
                     o->sel && o->sel->n ? o->sel->items[k].strategy : SELECT_DEFAULT_STRATEGY);
            s = tune_one(m, insp, o, whole, inputs, tm, e);
            if (s == AIT_OK) s = choose(tm, e);
        }
        for (int i = 0; i < n_in; i++) {
            ait_tensor_free(inputs[i]);
            inputs[i] = NULL;
        }
    }
    exec_free(whole);
    free(inputs);
    if (s != AIT_OK) {
        tune_report_free(r);
        return s;
    }
    *out = r;
    return AIT_OK;
}
