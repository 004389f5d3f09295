/* The tuning report: freeing, status words, the check's medians, and the
 * report as JSON (see result.h). */
#include "tune/result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/accuracy.h"
#include "tune/report.h"

void tune_report_free(tune_report *r)
{
    if (!r) return;
    calib_free(&r->calib);
    free(r->mods);
    free(r);
}

const char *tune_cand_status(const tune_cand *c)
{
    return c->valid ? "ok" : c->errored ? "failed" : "rejected";
}

const char *check_outcome_name(check_outcome o)
{
    static const char *const words[] = {"off", "skipped", "kept", "switched", "failed"};
    return o <= CHECK_FAILED ? words[o] : "?";
}

double check_plan_median(const tune_check *c, int p)
{
    double m[CHECK_MAX_PROCS];
    int n = c->n_procs < CHECK_MAX_PROCS ? c->n_procs : CHECK_MAX_PROCS;
    memcpy(m, c->plans[p].median, sizeof m[0] * (size_t)n);
    return profile_median(m, n);
}

/* An SQNR: "inf" for identical outputs (JSON has no infinity), else a number. */
static void sqnr_json(json_w *w, const char *key, double db)
{
    if (isinf(db) && db > 0) json_str(w, key, "inf");
    else json_num(w, key, db);
}

static void cand_json(json_w *w, const tune_cand *c, bool chosen)
{
    json_obj(w, NULL);
    json_str(w, "name", c->name);
    json_str(w, "backend", c->cfg.backend);
    json_int(w, "threads", c->cfg.threads);
    json_str(w, "variant", c->cfg.variant);
    json_str(w, "status", tune_cand_status(c));
    if (c->valid) json_null(w, "reason");
    else json_str(w, "reason", c->reason);
    json_bool(w, "cached", c->cached);
    json_bool(w, "chosen", chosen);
    if (c->valid) {
        json_num(w, "median_ms", c->prof.median * 1e3);
        json_num(w, "p10_ms", c->prof.p10 * 1e3);
        json_num(w, "p90_ms", c->prof.p90 * 1e3);
        json_num(w, "spread_ms", (c->prof.p90 - c->prof.p10) * 1e3);
        json_num(w, "cv", c->prof.cv);
        json_int(w, "runs", c->prof.runs);
        json_bool(w, "converged", c->prof.converged);
        json_bool(w, "stopped", c->prof.stopped);
        json_num(w, "throughput", c->prof.throughput);
        json_num(w, "speedup", c->speedup);
    } else {
        static const char *const none[] = {"median_ms", "p10_ms", "p90_ms", "spread_ms", "cv",
                                           "runs", "converged", "stopped", "throughput", "speedup"};
        for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) json_null(w, none[i]);
    }
    /* Errors of a candidate that crashed or never ran are unknown, not 0. */
    if (c->errored) {
        json_null(w, "max_rel_err");
        json_null(w, "sqnr_db");
    } else {
        json_num(w, "max_rel_err", c->max_rel);
        sqnr_json(w, "sqnr_db", c->sqnr_db);
    }
    if (c->min_sqnr > 0) json_num(w, "min_sqnr_db", c->min_sqnr); /* a quantised variant's bound */
    json_num(w, "trial_s", c->secs);
    json_end(w);
}

static void check_json(json_w *w, const tune_check *c)
{
    json_obj(w, NULL);
    json_int(w, "batch", c->batch);
    if (c->seq) {
        json_int(w, "seq", c->seq);
        json_int(w, "past", c->past);
    }
    json_str(w, "outcome", check_outcome_name(c->outcome));
    json_str(w, "note", c->note);
    json_int(w, "processes", c->n_procs);
    json_num(w, "check_s", c->secs);
    json_arr(w, "plans");
    for (int p = 0; c->n_procs && p < c->n_plans; p++) { /* none when nothing ran */
        const check_plan *cp = &c->plans[p];
        json_obj(w, NULL);
        json_str(w, "name", cp->name);
        json_bool(w, "taken", p == c->taken);
        json_bool(w, "whole", cp->whole > 0);
        json_num(w, "modules_ms", cp->predicted * 1e3);
        json_arr(w, "median_ms");
        for (int k = 0; k < c->n_procs; k++) json_num(w, NULL, cp->median[k] * 1e3);
        json_end(w);
        json_num(w, "model_ms", check_plan_median(c, p) * 1e3);
        json_num(w, "tuned_over_this", cp->ratio);
        json_num(w, "spread", cp->spread);
        json_num(w, "need", cp->need);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

static void figures_json(json_w *w, const char *key, const acc_figures *f)
{
    if (!f->ran) {
        json_null(w, key);
        return;
    }
    json_arr(w, key);
    for (int j = 0; j < f->n_outs; j++) {
        const acc_out *o = &f->outs[j];
        json_obj(w, NULL);
        json_str(w, "output", o->name);
        json_num(w, "max_abs_err", o->max_abs);
        json_num(w, "max_rel_err", o->max_rel);
        sqnr_json(w, "sqnr_db", acc_sqnr(o));
        json_int(w, "nonfinite", o->n_nonfinite);
        json_bool(w, "classifier", o->classifier);
        if (o->classifier) {
            json_int(w, "rows", o->rows);
            json_num(w, "top1_agreement", 1 - acc_top1_off(o));
        } else {
            json_null(w, "rows");
            json_null(w, "top1_agreement");
        }
        json_end(w);
    }
    json_end(w);
}

/* "accuracy": the budget and the guard's figures per bucket, or null when
 * the guard did not run. */
static void accuracy_json(json_w *w, const tune_report *r)
{
    if (!r->n_acc) {
        json_null(w, "accuracy");
        return;
    }
    const acc_budget *b = &r->budget;
    char text[160];
    acc_budget_str(b, text, sizeof text);
    json_obj(w, "accuracy");
    json_obj(w, "budget");
    json_str(w, "text", text);
    if (b->has_sqnr) json_num(w, "min_sqnr_db", b->min_sqnr_db);
    else json_null(w, "min_sqnr_db");
    if (b->has_top1) json_num(w, "max_top1_disagreement", b->max_top1);
    else json_null(w, "max_top1_disagreement");
    if (b->has_abs) json_num(w, "max_abs_err", b->max_abs);
    else json_null(w, "max_abs_err");
    json_end(w);
    json_arr(w, "buckets");
    for (int i = 0; i < r->n_acc; i++) {
        const tune_accuracy *a = &r->acc[i];
        json_obj(w, NULL);
        json_int(w, "batch", a->batch);
        json_int(w, "sample_batches", a->n_batches);
        json_int(w, "rows", a->rows);
        json_bool(w, "fits", a->fits);
        json_bool(w, "failed", a->failed);
        json_int(w, "walked_back", a->n_walked);
        json_str(w, "note", a->note);
        json_num(w, "check_s", a->secs);
        figures_json(w, "as_tuned", &a->tuned);
        figures_json(w, "final", &a->final);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

void tune_report_json(json_w *w, const inspection *insp, const tune_report *r)
{
    json_obj(w, NULL);
    json_str(w, "model", insp->m->path);
    json_str(w, "ait_version", AIT_VERSION_STRING);
    json_obj(w, "cache");
    json_bool(w, "enabled", r->cache_on);
    if (r->cache_on) json_str(w, "dir", r->cache_dir);
    else json_null(w, "dir");
    json_int(w, "cached", r->cached);
    json_int(w, "trials", r->trials);
    json_int(w, "warnings", r->cache_warnings);
    json_end(w);
    json_arr(w, "modules");
    for (int i = 0; i < r->n; i++) {
        const tune_module *tm = &r->mods[i];
        json_obj(w, NULL);
        json_str(w, "path", report_name(insp, tm->module));
        json_bool(w, "whole", tm->whole);
        json_int(w, "batch", tm->batch);
        if (tm->seq) { /* a decoder's bucket (tune/buckets.h) */
            json_int(w, "seq", tm->seq);
            json_int(w, "past", tm->past);
        }
        json_str(w, "strategy", tm->strategy);
        json_int(w, "validation_sets", tm->n_sets);
        if (tm->min_shape[0]) json_str(w, "min_shape", tm->min_shape);
        else json_null(w, "min_shape");
        if (tm->max_shape[0]) json_str(w, "max_shape", tm->max_shape);
        else json_null(w, "max_shape");
        json_arr(w, "candidates");
        bool out = tm->whole && !tm->chosen; /* the whole module, not in the plan */
        for (int c = 0; c < tm->n_cands; c++) cand_json(w, &tm->cands[c], c == tm->chosen && !out);
        json_end(w);
        json_str(w, "chosen", tm->n_cands && !out ? tm->cands[tm->chosen].name : NULL);
        json_bool(w, "kept_baseline", tm->chosen == 0);
        json_bool(w, "all_failed", tm->all_failed);
        if (tm->untuned[0]) json_str(w, "untuned", tm->untuned); /* why it was not tuned */
        else json_null(w, "untuned");
        json_bool(w, "walked_back", tm->walked_back);
        json_str(w, "why", tm->why);
        json_end(w);
    }
    json_end(w);
    json_arr(w, "plan_checks");
    for (int i = 0; i < r->n_checks; i++) check_json(w, &r->checks[i]);
    json_end(w);
    accuracy_json(w, r);
    json_end(w);
}
