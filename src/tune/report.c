/* Inspection reports: the rows a view shows and the JSON document. */
#include <math.h>
#include <stdlib.h>

#include "tune/plan_check.h"
#include "tune/report.h"
#include "tune/tuner.h"

const char *report_name(const inspection *r, int m)
{
    return m == 0 ? "(model)" : r->tree->mods[m].name;
}

static bool shown(const inspection *r, const report_filter *f, int m)
{
    if (f->module >= 0) return m == f->module;
    int d = r->tree->mods[m].depth;
    return d >= f->min_depth && (f->max_depth < 0 || d <= f->max_depth) &&
           r->st[m].share >= f->min_share;
}

int report_rows(const inspection *r, const report_filter *f, int *rows, int *cut)
{
    const module_tree *t = r->tree;
    int n = 0, over = 0, sp = 0;
    /* depth-first with an explicit stack (a tree from a file may be deep) */
    int *stack = malloc(sizeof *stack * (size_t)(t->n + 1));
    if (!stack) { /* fall back to index order rather than fail a report */
        for (int m = 0; m < t->n; m++)
            if (shown(r, f, m)) {
                if (f->limit <= 0 || n < f->limit) rows[n++] = m;
                else over++;
            }
    } else {
        stack[sp++] = 0;
        while (sp) {
            int m = stack[--sp];
            if (shown(r, f, m)) {
                if (f->limit <= 0 || n < f->limit) rows[n++] = m;
                else over++;
            }
            for (int c = t->mods[m].n_children - 1; c >= 0; c--) stack[sp++] = t->mods[m].children[c];
        }
        free(stack);
    }
    if (cut) *cut = over;
    return n;
}

static void port_json(json_w *w, const inspection *r, const port_spec *p)
{
    char buf[256];
    json_obj(w, NULL);
    json_str(w, "locator", p->locator);
    json_str(w, "name", r->m->g->vals[p->value].name);
    json_str(w, "shape", axes_shape_str(&p->axes, 0, buf, sizeof buf));
    json_str(w, "min_shape", axes_shape_str(&p->axes, 1, buf, sizeof buf));
    json_str(w, "max_shape", axes_shape_str(&p->axes, 2, buf, sizeof buf));
    json_str(w, "dtype", ait_dtype_name(p->dtype));
    json_arr(w, "axes");
    static const char *kinds[] = {"static", "batch", "dynamic"};
    for (int d = 0; d < p->axes.rank; d++) {
        json_obj(w, NULL);
        axis_kind k = p->axes.kind[d];
        json_str(w, "kind", k <= AXIS_DYNAMIC ? kinds[k] : "?");
        if (p->axes.name[d][0]) json_str(w, "name", p->axes.name[d]);
        if (k == AXIS_BATCH) json_int(w, "multiple", p->axes.mult[d]);
        json_int(w, "min", p->axes.min[d]);
        json_int(w, "max", p->axes.max[d]);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

static void module_json(json_w *w, const inspection *r, const selection *sel, int m)
{
    const module *md = &r->tree->mods[m];
    const module_stats *s = &r->st[m];
    json_obj(w, NULL);
    json_str(w, "path", md->name);
    json_int(w, "depth", md->depth);
    if (md->parent >= 0) json_str(w, "parent", r->tree->mods[md->parent].name);
    else json_null(w, "parent");
    json_int(w, "nodes", s->n_nodes);
    json_int(w, "params", s->params);
    json_int(w, "param_bytes", s->param_bytes);
    json_num(w, "flops_per_sample", s->flops);
    json_str(w, "precisions", s->precisions);
    json_int(w, "calls", s->calls);
    json_num(w, "total_ms", s->total_sec * 1e3);
    json_num(w, "mean_ms", s->mean_sec * 1e3);
    json_num(w, "share", s->share);
    int at = sel ? select_find(sel, m) : -1;
    json_bool(w, "selected", at >= 0);
    if (at >= 0) json_str(w, "strategy", sel->items[at].strategy);
    for (int out = 0; out < 2; out++) {
        json_arr(w, out ? "outputs" : "inputs");
        for (int k = 0; k < s->n_ports; k++)
            if (s->ports[k].output == (out == 1)) port_json(w, r, &s->ports[k]);
        json_end(w);
    }
    json_end(w);
}

void report_json(json_w *w, const inspection *r, const selection *sel, const int *rows, int n)
{
    json_obj(w, NULL);
    json_str(w, "model", r->m->path);
    json_bool(w, "from_scopes", r->tree->from_scopes);
    json_arr(w, "batch_sizes");
    for (int i = 0; i < r->n_batch; i++) json_int(w, NULL, r->batch[i]);
    json_end(w);
    json_bool(w, "static_shapes", r->static_shapes);
    json_int(w, "runs", r->runs);
    json_num(w, "model_ms", r->model_sec * 1e3);
    json_num(w, "nodes_ms", r->nodes_sec * 1e3);
    json_num(w, "coverage", r->model_sec > 0 ? r->nodes_sec / r->model_sec : 0);
    json_arr(w, "modules");
    for (int i = 0; i < n; i++) module_json(w, r, sel, rows[i]);
    json_end(w);
    if (sel) {
        json_arr(w, "selection");
        for (int i = 0; i < sel->n; i++) {
            json_obj(w, NULL);
            json_str(w, "path", r->tree->mods[sel->items[i].module].name);
            json_str(w, "strategy", sel->items[i].strategy);
            json_end(w);
        }
        json_end(w);
    }
    json_end(w);
}

/* ---- the tuner's report ---- */

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
        json_num(w, "throughput", c->prof.throughput);
        json_num(w, "speedup", c->speedup);
    } else {
        static const char *const none[] = {"median_ms", "p10_ms", "p90_ms", "spread_ms", "cv",
                                           "runs", "converged", "throughput", "speedup"};
        for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) json_null(w, none[i]);
    }
    /* Errors of a candidate that crashed or never ran are unknown, not 0. */
    if (c->errored) {
        json_null(w, "max_rel_err");
        json_null(w, "sqnr_db");
    } else {
        json_num(w, "max_rel_err", c->max_rel);
        if (isinf(c->sqnr_db) && c->sqnr_db > 0) json_str(w, "sqnr_db", "inf"); /* identical */
        else json_num(w, "sqnr_db", c->sqnr_db);
    }
    json_num(w, "trial_s", c->secs);
    json_end(w);
}

static void check_json(json_w *w, const tune_check *c)
{
    json_obj(w, NULL);
    json_int(w, "batch", c->batch);
    json_str(w, "outcome", plan_check_outcome(c->outcome));
    json_str(w, "note", c->note);
    json_int(w, "processes", c->n_procs);
    json_num(w, "check_s", c->secs);
    json_arr(w, "plans");
    for (int p = 0; c->n_procs && p < c->n_plans; p++) { /* none when nothing ran */
        const check_plan *cp = &c->plans[p];
        json_obj(w, NULL);
        json_str(w, "name", cp->name);
        json_bool(w, "taken", p == c->taken);
        json_num(w, "modules_ms", cp->predicted * 1e3);
        json_arr(w, "median_ms");
        for (int k = 0; k < c->n_procs; k++) json_num(w, NULL, cp->median[k] * 1e3);
        json_end(w);
        json_num(w, "model_ms", plan_check_median(c, p) * 1e3);
        json_num(w, "tuned_over_this", cp->ratio);
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
        json_int(w, "batch", tm->batch);
        json_str(w, "strategy", tm->strategy);
        json_int(w, "validation_sets", tm->n_sets);
        if (tm->min_shape[0]) json_str(w, "min_shape", tm->min_shape);
        else json_null(w, "min_shape");
        if (tm->max_shape[0]) json_str(w, "max_shape", tm->max_shape);
        else json_null(w, "max_shape");
        json_arr(w, "candidates");
        for (int c = 0; c < tm->n_cands; c++) cand_json(w, &tm->cands[c], c == tm->chosen);
        json_end(w);
        json_str(w, "chosen", tm->n_cands ? tm->cands[tm->chosen].name : NULL);
        json_bool(w, "kept_baseline", tm->chosen == 0);
        json_bool(w, "all_failed", tm->all_failed);
        json_str(w, "why", tm->why);
        json_end(w);
    }
    json_end(w);
    json_arr(w, "plan_checks");
    for (int i = 0; i < r->n_checks; i++) check_json(w, &r->checks[i]);
    json_end(w);
    json_end(w);
}
