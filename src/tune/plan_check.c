/* The whole-plan check (see plan_check.h). */
#include "tune/choice.h"
#include "tune/plan_build.h"
#include "tune/plan_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "runtime/plan_exec.h"
#include "tune/isolate.h"
#include "runtime/plan.h"
#include "tune/profile.h"

/* The decision with, in each plan's sorted ratios, the lowest (drop < 0),
 * the highest (drop > 0) or none (0) left out; fill: store the ratios,
 * spreads and needs. A plan is taken when its ratio beats the tuned plan's
 * (and that of any taken before) by its need: the margin, CHECK_MIN_MARGIN
 * or its spread over the processes, whichever is largest. As for a module's
 * candidates (docs/tuning.md), the baseline is kept unless the plan chosen
 * beats it by the margin: the baseline plan, if listed, is taken when the
 * plan so chosen does not beat it. */
static int decide(tune_check *c, double margin, int drop, bool fill)
{
    int best = 0, base = 0;
    double best_ratio = 1, base_ratio = 0;
    for (int p = 0; p < c->n_plans; p++) {
        double r[CHECK_MAX_PROCS];
        int n = 0;
        for (int k = 0; k < c->n_procs && k < CHECK_MAX_PROCS; k++)
            if (c->plans[p].median[k] > 0 && c->plans[0].median[k] > 0)
                r[n++] = c->plans[0].median[k] / c->plans[p].median[k];
        profile_median(r, n); /* sorts */
        int lo = drop < 0 && n > 1, hi = n - (drop > 0 && n > 1);
        double ratio = hi > lo ? profile_median(r + lo, hi - lo) : 0;
        double spread = ratio > 0 ? (profile_pct(r + lo, hi - lo, 0.75) -
                                     profile_pct(r + lo, hi - lo, 0.25)) / 2 / ratio : 0;
        double need = c->plans[p].baseline ? margin /* what the tuned plan must beat it by */
                                           : fmax(fmax(margin, CHECK_MIN_MARGIN), spread);
        if (fill) {
            c->plans[p].ratio = ratio;
            c->plans[p].spread = spread;
            c->plans[p].need = need;
        }
        if (p > 0 && c->plans[p].baseline) base = p, base_ratio = ratio;
        else if (p > 0 && ratio > (1 + need) * best_ratio) best = p, best_ratio = ratio;
    }
    return base && base_ratio * (1 + margin) >= best_ratio ? base : best;
}

int plan_check_decide(tune_check *c, double margin) { return decide(c, margin, 0, true); }

bool plan_check_settled(tune_check *c, double margin)
{
    if (c->n_procs < CHECK_MIN_PROCS) return false;
    int d = decide(c, margin, 0, false);
    return decide(c, margin, -1, false) == d && decide(c, margin, 1, false) == d;
}

/* ---- one process's measurement ---- */

typedef struct check_run {
    const ait_model *m;
    plan *const *plans;
    int n;
    tensor *const *inputs;
    int rotate;                    /* the first round's first plan */
    profile_clock_fn clock;        /* what times a plan's run (profile_clock) */
    double med[CHECK_MAX_PLANS];   /* what the child sends back */
} check_run;

/* In the child: every plan built and primed, warmed up, then timed in
 * rounds; sends each plan's median. */
static ait_status check_fn(void *ctx, const void **out, size_t *len, ait_error *e)
{
    check_run *c = ctx;
    plan_exec *px[CHECK_MAX_PLANS] = {0};
    tensor **outs = calloc((size_t)c->m->g->n_outputs + 1, sizeof *outs);
    double *t = malloc(sizeof *t * CHECK_MAX_ROUNDS * (size_t)c->n);
    if (!outs || !t) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int p = 0; p < c->n; p++)
        TRY(plan_exec_create(c->m->g, c->plans[p], 1, NULL, &px[p], e));
    for (int w = 0; w < CHECK_WARMUP; w++)
        for (int p = 0; p < c->n; p++) TRY(plan_exec_run(px[p], c->inputs, outs, e));
    int rounds = 0;
    double start = now_sec();
    while (rounds < CHECK_MAX_ROUNDS &&
           (rounds < CHECK_MIN_ROUNDS || now_sec() - start < CHECK_SECS * c->n)) {
        for (int k = 0; k < c->n; k++) {
            int p = (k + rounds + c->rotate) % c->n;
            int64_t t0 = c->clock(NULL);
            TRY(plan_exec_run(px[p], c->inputs, outs, e));
            t[p * CHECK_MAX_ROUNDS + rounds] = (double)(c->clock(NULL) - t0) * 1e-9;
        }
        rounds++;
    }
    for (int p = 0; p < c->n; p++) c->med[p] = profile_median(t + p * CHECK_MAX_ROUNDS, rounds);
    /* the child exits next: nothing needs freeing */
    *out = c->med;
    *len = sizeof c->med[0] * (size_t)c->n;
    return AIT_OK;
}

/* ---- the plans ---- */

/* Sum of the profiled medians of choices ch over the modules. */
static double predicted(const tune_module *mods, int n, const int *ch)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += mods[k].cands[ch[k]].prof.median;
    return s;
}

/* Adds "NAME alone" for every backend among the candidates, in their order,
 * where it differs from a plan already listed and its modules' times add up
 * to within CHECK_WITHIN of the tuned plan's; ch[p * n + k] is plan p's
 * choice for module k. The ones left out are named in same[] (the tuned
 * plan or one listed) and far[] (too slow by the module times). */
static ait_status add_alternatives(tune_check *c, const tune_module *mods, int n, int *ch,
                                   char *same, char *far, size_t len, ait_error *e)
{
    int n_tried = 0;
    const char *tried[TUNE_MAX_CANDS];
    for (int k = 0; k < n; k++)
        for (int ci = 0; ci < mods[k].n_cands; ci++) {
            const char *b = mods[k].cands[ci].cfg.backend;
            bool seen = false;
            for (int i = 0; i < n_tried; i++) seen |= !strcmp(tried[i], b);
            if (seen || c->n_plans == CHECK_MAX_PLANS || n_tried == TUNE_MAX_CANDS) continue;
            tried[n_tried++] = b;
            strategy only = {.kind = STRAT_ONLY};
            snprintf(only.backend, sizeof only.backend, "%s", b);
            int *mine = ch + c->n_plans * n;
            for (int j = 0; j < n; j++) {
                choice pick;
                TRY(tune_pick(&mods[j], &only, &pick, e));
                mine[j] = pick.index;
            }
            bool dup = false;
            for (int p = 0; p < c->n_plans && !dup; p++)
                dup = !memcmp(mine, ch + p * n, sizeof *mine * (size_t)n);
            double t = predicted(mods, n, mine);
            char *list = dup ? same : t > CHECK_WITHIN * c->plans[0].predicted ? far : NULL;
            if (list) {
                size_t at = strlen(list);
                snprintf(list + at, len - at, "%s%s alone", at ? ", " : "", b);
                continue;
            }
            check_plan *cp = &c->plans[c->n_plans++];
            snprintf(cp->name, sizeof cp->name, "%s alone", b);
            cp->predicted = t;
            cp->baseline = true;
            for (int j = 0; j < n; j++) cp->baseline &= mine[j] == 0;
        }
    return AIT_OK;
}

/* Adds "NAME whole" for each backend but the reference among the whole
 * module's valid candidates, on its fastest one, where its time is within
 * CHECK_WITHIN of the tuned plan's module times (far[] names the others). */
static void add_whole(tune_check *c, const tune_module *wm, char *far, size_t len)
{
    for (int ci = 1; wm && ci < wm->n_cands; ci++) {
        const char *b = wm->cands[ci].cfg.backend;
        int best = tune_whole_best(wm, b);
        if (best != ci || !strcmp(b, "reference")) continue; /* one plan per backend */
        double t = wm->cands[best].prof.median;
        if (t > CHECK_WITHIN * c->plans[0].predicted || c->n_plans == CHECK_MAX_PLANS) {
            size_t at = strlen(far);
            snprintf(far + at, len - at, "%s%s whole", at ? ", " : "", b);
            continue;
        }
        check_plan *cp = &c->plans[c->n_plans++];
        snprintf(cp->name, sizeof cp->name, "%s whole", b);
        cp->predicted = t;
        cp->whole = best;
    }
}

/* The plan of modules mods[0..n) with choices ch (a report of their own). */
static ait_status plan_of(const inspection *insp, tune_module *tmp, const tune_module *mods,
                          int n, const int *ch, plan **out, ait_error *e)
{
    for (int k = 0; k < n; k++) {
        tmp[k] = mods[k];
        tmp[k].chosen = ch[k];
    }
    tune_report view = {.n = n, .mods = tmp};
    return plan_from_report(insp, &view, out, e);
}

static void log_check(const tune_opts *o, const tune_check *c)
{
    if (!log_on(&o->log)) return;
    char plans[CHECK_MAX_PLANS * 100] = "";
    size_t at = 0;
    for (int p = 0; c->n_procs && p < c->n_plans && at < sizeof plans; p++) {
        char ratio[32] = "";
        if (p)
            snprintf(ratio, sizeof ratio, " (%.3fx, spread %.1f%%)", c->plans[p].ratio,
                     100 * c->plans[p].spread);
        int w = snprintf(plans + at, sizeof plans - at, "%s %.3f ms%s, ", c->plans[p].name,
                         check_plan_median(c, p) * 1e3, ratio);
        at = w < 0 ? sizeof plans : at + (size_t)w;
    }
    log_msg(&o->log, AIT_LOG_INFO, "tune: whole-plan check @ batch %d: %s%s: %s (%d processes, "
            "%.1f s)", c->batch, plans, check_outcome_name(c->outcome), c->note, c->n_procs,
            c->secs);
}

/* Module k takes plan t's choice; its why says so and keeps the module's own. */
static void apply(tune_check *c, tune_module *mods, int n, const int *ch, double margin)
{
    const check_plan *cp = &c->plans[c->taken];
    for (int k = 0; k < n; k++) {
        tune_module *tm = &mods[k];
        if (tm->chosen == ch[k]) continue;
        char own[sizeof tm->why];
        memcpy(own, tm->why, sizeof own);
        tm->chosen = ch[k];
        snprintf(tm->why, sizeof tm->why,
                 "whole-plan check: the model ran %.3fx as fast with %s (median of %d "
                 "processes, spread %.1f%%; needed %.1f%%, margin %.3g)%s, so the module runs "
                 "%s. Alone: %s",
                 cp->ratio, cp->name, c->n_procs, 100 * cp->spread, 100 * cp->need, margin,
                 cp->baseline ? ", the baseline, which the tuned plan must beat by the margin" : "",
                 tm->cands[ch[k]].name, own);
    }
}

/* Why the bucket cannot be checked (a module whose strategy is not about
 * speed, or whose baseline failed), written to c->note; false when it can. */
static bool check_skip(const inspection *insp, const tune_module *mods, int n, tune_check *c)
{
    for (int k = 0; k < n; k++) {
        /* A module not tuned at all (its baseline kept) stays on its baseline in
         * every plan: the others can still be checked around it. */
        const char *why = !strategy_speed(mods[k].strategy) ? "its strategy is not about speed"
                        : !mods[k].cands[0].valid && !mods[k].untuned[0] ? "its baseline failed"
                        : NULL;
        if (why) {
            snprintf(c->note, sizeof c->note, "module '%s' has strategy %s: %s",
                     insp->tree->mods[mods[k].module].name, mods[k].strategy, why);
            return true;
        }
    }
    return false;
}

/* The plans to run: the plan as tuned (plans[0], its choices ch[0..n)),
 * the single-backend plans within reach (ch + p * n) and the whole
 * module's; with none, c->note says why. */
static ait_status check_list(tune_check *c, const tune_module *mods, int n,
                             const tune_module *wm, int *ch, ait_error *e)
{
    for (int k = 0; k < n; k++) ch[k] = mods[k].chosen;
    c->n_plans = 1;
    snprintf(c->plans[0].name, sizeof c->plans[0].name, "as tuned");
    c->plans[0].predicted = predicted(mods, n, ch);
    char same[256] = "", far[256] = "";
    TRY(add_alternatives(c, mods, n, ch, same, far, 160, e));
    add_whole(c, wm, far, 200);
    if (c->n_plans == 1) {
        char sep[8] = "";
        if (*same) strcat(same, " is the plan as tuned");
        if (*same && *far) strcpy(sep, "; ");
        if (*far)
            snprintf(far + strlen(far), sizeof far - strlen(far),
                     ": module times over %.2fx the tuned plan's", CHECK_WITHIN);
        snprintf(c->note, sizeof c->note, "nothing to compare with: %s%s%s", same, sep,
                 *same || *far ? far : "one backend only");
    }
    return AIT_OK;
}

/* Runs the plans in child processes until the decision is settled (or a
 * process fails: CHECK_FAILED, said in c->note), each process's medians into
 * c->plans[p].median[k]. */
static void check_measure(const ait_model *m, const tune_opts *o, plan **plans,
                          tensor *const *inputs, double margin, tune_check *c)
{
    log_msg(&o->log, AIT_LOG_PROGRESS, "tune: whole-plan check @ batch %d: %d plans, %d to %d "
            "processes", c->batch, c->n_plans, CHECK_MIN_PROCS, CHECK_MAX_PROCS);
    isolate_opts io = {.timeout = (o->timeout > 0 ? o->timeout : 60) * c->n_plans};
    c->outcome = CHECK_KEPT;
    for (int k = 0; k < CHECK_MAX_PROCS && !plan_check_settled(c, margin); k++) {
        /* --cpu-clock: the check too, where every candidate runs on one thread */
        check_run run = {.m = m, .plans = plans, .n = c->n_plans, .inputs = inputs, .rotate = k,
                         .clock = profile_clock(o->cpu_clock && o->max_threads <= 1)};
        isolate_result ir = {0};
        ait_error ce = {0};
        if (isolate_run(&io, check_fn, &run, &ir, &ce) != AIT_OK ||
            ir.len != sizeof(double) * (size_t)c->n_plans) {
            c->outcome = CHECK_FAILED;
            snprintf(c->note, sizeof c->note, "process %d: %s; the plan stays as tuned", k + 1,
                     ce.msg[0] ? ce.msg : "no result");
            free(ir.data);
            return;
        }
        for (int p = 0; p < c->n_plans; p++) c->plans[p].median[k] = ((double *)ir.data)[p];
        c->n_procs++;
        free(ir.data);
    }
}

/* The whole module takes plan t's candidate. */
static void apply_whole(tune_check *c, tune_module *wm, double margin)
{
    const check_plan *cp = &c->plans[c->taken];
    wm->chosen = cp->whole;
    snprintf(wm->why, sizeof wm->why,
             "whole-plan check: the model ran %.3fx as fast as one module on %s (median of %d "
             "processes, spread %.1f%%; needed %.1f%%, margin %.3g), so the plan is the whole "
             "model as one module",
             cp->ratio, wm->cands[cp->whole].name, c->n_procs, 100 * cp->spread,
             100 * cp->need, margin);
}

/* The decision on measured plans: the plan taken (its choices applied to
 * mods, or the whole module's to wm) and why, in c->note. */
static void check_conclude(tune_check *c, tune_module *mods, int n, tune_module *wm,
                           const int *ch, double margin)
{
    c->taken = plan_check_decide(c, margin);
    if (!c->taken) {
        int base = 0, fast = 0; /* the baseline plan, the fastest other one */
        for (int p = 1; p < c->n_plans; p++)
            if (c->plans[p].baseline) base = p;
            else if (!fast || c->plans[p].ratio > c->plans[fast].ratio) fast = p;
        char best[160] = "";
        if (fast)
            snprintf(best, sizeof best, " (the fastest, %s: %.3fx, spread %.1f%%, needed %.1f%%)",
                     c->plans[fast].name, c->plans[fast].ratio, 100 * c->plans[fast].spread,
                     100 * c->plans[fast].need);
        snprintf(c->note, sizeof c->note, "no single-backend or whole plan is faster than the "
                 "plan as tuned by more than its need: the margin (%.3g), %.3g or the spread of "
                 "its ratios over the processes, whichever is largest%s%s", margin,
                 CHECK_MIN_MARGIN, best,
                 base ? "; and the plan as tuned beats the baseline by the margin" : "");
        return;
    }
    c->outcome = CHECK_SWITCHED;
    if (c->plans[c->taken].whole) apply_whole(c, wm, margin);
    else apply(c, mods, n, ch + c->taken * n, margin);
    const check_plan *t = &c->plans[c->taken];
    if (t->baseline)
        snprintf(c->note, sizeof c->note, "takes %s, the baseline: %.3fx as fast as the plan as "
                 "tuned, which does not beat it by the margin (%.3g)", t->name, t->ratio, margin);
    else
        snprintf(c->note, sizeof c->note, "takes %s: %.3fx as fast as the plan as tuned, "
                 "more than its need (%.1f%%: the margin %.3g, %.3g or the spread over the "
                 "processes, %.1f%%, whichever is largest)", t->name, t->ratio, 100 * t->need,
                 margin, CHECK_MIN_MARGIN, 100 * t->spread);
}

ait_status plan_check_bucket(const ait_model *m, const inspection *insp, const tune_opts *o,
                             tune_module *mods, int n, tune_module *wm, tensor *const *inputs,
                             tune_check *out, ait_error *e)
{
    tune_check *c = out;
    memset(c, 0, sizeof *c);
    if (n < 1) return err_set(e, AIT_E_INVALID_ARG, "whole-plan check: no modules");
    c->batch = mods[0].batch;
    c->seq = mods[0].seq;
    c->past = mods[0].past;
    c->outcome = CHECK_SKIPPED;
    double t0 = now_sec();
    if (check_skip(insp, mods, n, c)) return AIT_OK;
    double margin = tune_margin(o->margin);
    int *ch = calloc((size_t)(CHECK_MAX_PLANS * n), sizeof *ch);
    tune_module *tmp = malloc(sizeof *tmp * (size_t)n);
    plan *plans[CHECK_MAX_PLANS] = {0};
    ait_status s = ch && tmp ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK) s = check_list(c, mods, n, wm, ch, e);
    for (int p = 0; s == AIT_OK && c->n_plans > 1 && p < c->n_plans; p++) {
        if (c->plans[p].whole) { /* the whole module alone, on that candidate */
            tune_module one = *wm;
            one.chosen = c->plans[p].whole;
            tune_report view = {.n = 1, .mods = &one};
            s = plan_from_report(insp, &view, &plans[p], e);
        } else {
            s = plan_of(insp, tmp, mods, n, ch + p * n, &plans[p], e);
        }
    }
    if (s == AIT_OK && c->n_plans > 1) check_measure(m, o, plans, inputs, margin, c);
    if (s == AIT_OK && c->outcome == CHECK_KEPT) check_conclude(c, mods, n, wm, ch, margin);
    c->secs = now_sec() - t0;
    if (s == AIT_OK) log_check(o, c);
    for (int p = 0; p < CHECK_MAX_PLANS; p++) plan_free(plans[p]);
    free(tmp);
    free(ch);
    return s;
}
