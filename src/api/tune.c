/* The public tuning API (include/ait.h) over tune_run and plan_save. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "gemmtune/db.h"
#include "runtime/model.h"
#include "api/inspection.h"
#include "runtime/plan.h"
#include "tune/plan_build.h"
#include "tune/report.h"
#include "tune/tuner.h"

struct ait_tuning {
    ait_inspection *h;
    tune_report *rep;
    gemm_tuned gemm; /* from opts.gemm_db; the plan points at it until saved */
};

/* A bucket list of the options: at most 16, ascending, each lo..PLAN_BUCKET_MAX. */
static ait_status take_buckets(const int *list, int n, int lo, const char *what, int *out,
                               int *n_out, ait_error *err)
{
    *n_out = 0;
    if (!list || n <= 0) return AIT_OK;
    if (n > 16)
        return err_set(err, AIT_E_INVALID_ARG, "ait_tune: %d %s buckets (at most 16)", n, what);
    for (int i = 0; i < n; i++) {
        if (list[i] < lo || list[i] > PLAN_BUCKET_MAX || (i && list[i] <= list[i - 1]))
            return err_set(err, AIT_E_INVALID_ARG, "ait_tune: %s bucket %d (%d) is not above "
                           "the one before and within %d..%d", what, i, list[i],
                           i ? list[i - 1] + 1 : lo, PLAN_BUCKET_MAX);
        out[(*n_out)++] = list[i];
    }
    return AIT_OK;
}

ait_status ait_tune(ait_inspection *h, const ait_tune_options *opts, ait_tuning **out,
                    ait_error *err)
{
    if (!out) return err_set(err, AIT_E_INVALID_ARG, "ait_tune: out is NULL");
    *out = NULL;
    if (!h) return err_set(err, AIT_E_INVALID_ARG, "ait_tune: inspection is NULL");
    ait_tune_options all;
    TRY(OPTS_TAKE(all, opts, err));
    const ait_tune_options *o = &all;
    if (o->margin >= 1 || isnan(o->margin))
        return err_set(err, AIT_E_INVALID_ARG, "ait_tune: margin %g is not below 1", o->margin);
    /* Without a selection, the top-level modules (as `ait tune` does). */
    if (!h->sel.n) TRY(select_by_share(&h->sel, h->r, 1, 0, 0, NULL, err));
    tune_opts to = {.samples = h->samples, .n_batch = h->r->n_batch, .sel = &h->sel,
                    .max_threads = o->max_threads > 0 ? o->max_threads : 1,
                    .timeout = o->timeout > 0 ? o->timeout : 60, .cache_dir = o->cache_dir,
                    .log = {o->log, o->log_user},
                    .prof = profile_defaults()}; /* then what the caller set */
    if (o->warmup > 0) to.prof.warmup = o->warmup;
    if (o->window > 0) to.prof.window = o->window;
    if (o->cv > 0) to.prof.cv = o->cv;
    if (o->cap > 0) to.prof.cap = o->cap;
    to.margin = o->margin;
    to.cpu_clock = o->cpu_clock != 0;
    to.plan_check = !o->skip_plan_check;
    to.whole = o->skip_whole ? WHOLE_OFF : WHOLE_CHECK;
    to.quant = o->quant && strcmp(o->quant, "none") != 0 ? o->quant : NULL;
    to.min_sqnr = o->min_sqnr;
    to.calib_pct = o->calib_percentile;
    to.accuracy_budget = o->accuracy_budget;
    memcpy(to.batch, h->r->batch, sizeof to.batch);
    TRY(take_buckets(o->seq_buckets, o->n_seq_buckets, 1, "seq", to.seq_buckets, &to.n_seq, err));
    TRY(take_buckets(o->past_buckets, o->n_past_buckets, 0, "past", to.past_buckets, &to.n_past,
                     err));
    ait_tuning *t = calloc(1, sizeof *t);
    if (!t) return err_set(err, AIT_E_NOMEM, "out of memory");
    t->h = h;
    ait_status s = o->gemm_db ? gt_db_take(o->gemm_db, &to.log, &t->gemm, err) : AIT_OK;
    to.gemm = t->gemm.n ? &t->gemm : NULL;
    if (s == AIT_OK) s = tune_run(h->m, h->r, &to, &t->rep, err);
    if (s != AIT_OK) {
        gemm_tuned_free(&t->gemm);
        free(t);
        return s;
    }
    *out = t;
    return AIT_OK;
}

void ait_tuning_free(ait_tuning *t)
{
    if (!t) return;
    tune_report_free(t->rep);
    gemm_tuned_free(&t->gemm);
    free(t);
}

/* The rows: every tuned module and bucket, and the whole module's where
 * the plan took it (docs/tuning.md, the `whole` candidate). */
static bool is_row(const tune_module *tm) { return !tm->whole || tm->chosen > 0; }

int ait_tuning_count(const ait_tuning *t)
{
    int n = 0;
    for (int i = 0; t && i < t->rep->n; i++) n += is_row(&t->rep->mods[i]);
    return n;
}

ait_status ait_tuning_row_at(const ait_tuning *t, int i, ait_tuning_row *out)
{
    if (!t || !out || i < 0) return AIT_E_INVALID_ARG;
    int k = 0;
    while (k < t->rep->n && (!is_row(&t->rep->mods[k]) || i-- > 0)) k++;
    if (k == t->rep->n) return AIT_E_INVALID_ARG;
    const tune_module *tm = &t->rep->mods[k];
    const tune_cand *c = &tm->cands[tm->chosen];
    *out = (ait_tuning_row){.module = t->h->r->tree->mods[tm->module].name, .bucket = tm->batch,
                            .chosen = c->name, .median_sec = c->prof.median,
                            .speedup = c->speedup, .why = tm->why, .seq = tm->seq,
                            .past = tm->past};
    return AIT_OK;
}

ait_status ait_tuning_save(const ait_tuning *t, const char *path, ait_error *err)
{
    if (!t || !path) return err_set(err, AIT_E_INVALID_ARG, "ait_tuning_save: NULL argument");
    return plan_save(t->h->m, t->h->r, t->rep, path, err);
}
