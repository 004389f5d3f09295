/* The end-to-end accuracy guard (see accuracy.h). */
#include "tune/accuracy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "runtime/plan_exec.h"
#include "tune/choice.h"
#include "tune/isolate.h"
#include "tune/plan_build.h"
#include "tune/validate.h"

/* ---- the budget ---- */

/* A number with an optional unit suffix ("30dB", "1%"), in (0, hi]. */
static bool parse_bound(const char *s, size_t len, const char *unit, double scale, double hi,
                        double *v)
{
    char buf[64], *end;
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    *v = strtod(buf, &end);
    if (errno || end == buf || !isfinite(*v)) return false;
    if (*end && unit && !strcmp(end, unit)) *v *= scale, end += strlen(unit);
    return !*end && *v >= 0 && *v <= hi;
}

ait_status acc_budget_parse(const char *spec, acc_budget *out, ait_error *e)
{
    *out = (acc_budget){0};
    if (!spec || !*spec || !strcmp(spec, "none")) return AIT_OK;
    if (spec[strlen(spec) - 1] == ',')
        return err_set(e, AIT_E_INVALID_ARG, "a trailing comma (give sqnr=DB, top1=SHARE and/or "
                       "abs=X, comma-separated)");
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t key = eq ? (size_t)(eq - p) : len, vlen = eq ? len - key - 1 : 0;
        bool ok = eq != NULL, *seen = NULL;
        if (ok && key == 4 && !strncmp(p, "sqnr", 4)) {
            seen = &out->has_sqnr;
            ok = parse_bound(eq + 1, vlen, "dB", 1, 1000, &out->min_sqnr_db) && out->min_sqnr_db > 0;
        } else if (ok && key == 4 && !strncmp(p, "top1", 4)) {
            seen = &out->has_top1;
            ok = parse_bound(eq + 1, vlen, "%", 0.01, 1, &out->max_top1);
        } else if (ok && key == 3 && !strncmp(p, "abs", 3)) {
            seen = &out->has_abs;
            ok = parse_bound(eq + 1, vlen, NULL, 1, INFINITY, &out->max_abs) && out->max_abs > 0;
        } else {
            ok = false;
        }
        if (!ok || *seen)
            return err_set(e, AIT_E_INVALID_ARG,
                           "%s '%.*s' (give sqnr=DB, top1=SHARE and/or abs=X, comma-separated, "
                           "e.g. sqnr=30,top1=1%%; or none)",
                           ok ? "repeated" : "bad term", (int)len, p);
        *seen = true;
        p += len + (end != NULL);
    }
    if (!out->has_sqnr && !out->has_top1 && !out->has_abs)
        return err_set(e, AIT_E_INVALID_ARG, "no bound (give sqnr=DB, top1=SHARE and/or abs=X)");
    return AIT_OK;
}

void acc_budget_str(const acc_budget *b, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    if (b->has_sqnr) at += (size_t)snprintf(buf + at, n - at, "SQNR >= %g dB", b->min_sqnr_db);
    if (b->has_top1 && at < n)
        at += (size_t)snprintf(buf + at, n - at, "%stop-1 disagreement <= %g%%", at ? ", " : "",
                               b->max_top1 * 100);
    if (b->has_abs && at < n)
        at += (size_t)snprintf(buf + at, n - at, "%smax abs error <= %g", at ? ", " : "", b->max_abs);
    if (!at) snprintf(buf, n, "none");
}

/* ---- figures ---- */

bool acc_classifier(const tensor *t, const port_spec *port, bool static_shapes)
{
    if (t->kind != VAL_TENSOR || !dtype_is_float(t->dtype) || t->rank != 2 || t->dims[1] < 2 ||
        t->dims[0] < 1)
        return false;
    if (static_shapes || !port || port->axes.rank != 2) return true;
    return port->axes.kind[0] == AXIS_BATCH;
}

/* Row r's first largest element (NaN never wins; a row all NaN: -1). */
static int64_t row_argmax(const tensor *t, int64_t r)
{
    int64_t cols = t->dims[1], best = -1;
    double bv = 0;
    for (int64_t c = 0; c < cols; c++) {
        double v = elem_get_f64(t->data, t->dtype, r * cols + c);
        if (!isnan(v) && (best < 0 || v > bv)) best = c, bv = v;
    }
    return best;
}

ait_status acc_add(const tensor *ref, const tensor *cand, acc_out *o, ait_error *e)
{
    if (cand->kind != ref->kind || cand->dtype != ref->dtype || cand->rank != ref->rank ||
        memcmp(cand->dims, ref->dims, sizeof ref->dims[0] * (size_t)ref->rank)) {
        char a[96], b[96];
        return err_set(e, AIT_E_SHAPE, "output '%s': %s %s, the reference's is %s %s", o->name,
                       ait_dtype_name(cand->dtype), shape_str(cand->dims, cand->rank, a, sizeof a),
                       ait_dtype_name(ref->dtype), shape_str(ref->dims, ref->rank, b, sizeof b));
    }
    out_metrics m;
    TRY(compare_tensors(ref, cand, NULL, &m, e));
    o->max_abs = fmax(o->max_abs, m.max_abs);
    o->max_rel = fmax(o->max_rel, m.max_rel);
    o->sig += m.sig;
    o->noise += m.noise;
    o->n_nonfinite += m.n_nonfinite;
    for (int64_t r = 0; o->classifier && r < ref->dims[0]; r++) {
        int64_t want = row_argmax(ref, r);
        o->rows++;
        o->top1_same += want >= 0 && row_argmax(cand, r) == want;
    }
    return AIT_OK;
}

double acc_sqnr(const acc_out *o)
{
    if (o->noise == 0) return INFINITY;
    if (o->sig == 0) return -INFINITY;
    return 10.0 * log10(o->sig / o->noise);
}

double acc_top1_off(const acc_out *o)
{
    return o->classifier && o->rows ? 1.0 - (double)o->top1_same / (double)o->rows : 0;
}

bool acc_fits(const acc_budget *b, const acc_figures *f, char *why, size_t n)
{
    if (why && n) why[0] = 0;
    if (!b->has_sqnr && !b->has_top1 && !b->has_abs) return true;
    for (int j = 0; j < f->n_outs; j++) {
        const acc_out *o = &f->outs[j];
        double sq = acc_sqnr(o), off = acc_top1_off(o);
        if (o->n_nonfinite)
            snprintf(why, n, "%lld NaN/Inf values where the reference is finite on output '%s'",
                     (long long)o->n_nonfinite, o->name);
        else if (b->has_sqnr && sq < b->min_sqnr_db)
            snprintf(why, n, "end-to-end SQNR %.1f dB < budget %g dB on output '%s'", sq,
                     b->min_sqnr_db, o->name);
        else if (b->has_top1 && o->classifier && off > b->max_top1)
            snprintf(why, n, "top-1 disagreement %.2f%% (%lld of %lld rows) > budget %g%% on "
                     "output '%s'", off * 100, (long long)(o->rows - o->top1_same),
                     (long long)o->rows, b->max_top1 * 100, o->name);
        else if (b->has_abs && o->max_abs > b->max_abs)
            snprintf(why, n, "end-to-end max abs error %.3g > budget %g on output '%s'", o->max_abs,
                     b->max_abs, o->name);
        else
            continue;
        return false;
    }
    return true;
}

/* ---- measuring a plan, in a child ---- */

typedef struct acc_run {
    const ait_model *m;
    const plan *p;
    tensor *const *const *batches;
    int n_batches;
    tensor *const *refs;  /* refs[b * n_outs + k] */
    const int *out_idx;   /* the measured outputs' indices among the model's */
    acc_figures fig;      /* its outs' names and classifier flags set; what the child sends back */
} acc_run;

static ait_status acc_fn(void *ctx, const void **out, size_t *len, ait_error *e)
{
    acc_run *r = ctx;
    plan_exec *px = NULL;
    tensor **outs = calloc((size_t)r->m->g->n_outputs + 1, sizeof *outs);
    if (!outs) return err_set(e, AIT_E_NOMEM, "out of memory");
    TRY(plan_exec_create(r->m->g, r->p, 1, NULL, &px, e));
    int n = r->fig.n_outs;
    for (int b = 0; b < r->n_batches; b++) {
        TRY(plan_exec_run(px, r->batches[b], outs, e));
        for (int k = 0; k < n; k++)
            TRY(acc_add(r->refs[b * n + k], outs[r->out_idx[k]], &r->fig.outs[k], e));
    }
    r->fig.ran = true;
    /* the child exits next: nothing needs freeing */
    *out = &r->fig;
    *len = sizeof r->fig;
    return AIT_OK;
}

/* The whole model on mods' plan into *fig (set up with the outputs); false
 * with why when the process failed. */
static ait_status measure(const inspection *insp, const tune_opts *o, tune_module *mods, int n,
                          acc_run *run, acc_figures *fig, char *why, size_t wn, ait_error *e)
{
    tune_report view = {.n = n, .mods = mods};
    plan *p = NULL;
    TRY(plan_from_report(insp, &view, &p, e));
    acc_run r = *run;
    r.p = p;
    isolate_opts io = {.timeout = (o->timeout > 0 ? o->timeout : 60) * (1 + run->n_batches)};
    isolate_result ir = {0};
    ait_error ce = {0};
    *fig = (acc_figures){0};
    if (isolate_run(&io, acc_fn, &r, &ir, &ce) == AIT_OK && ir.len == sizeof *fig)
        memcpy(fig, ir.data, sizeof *fig);
    else
        snprintf(why, wn, "the run on the plan failed: %s", ce.msg[0] ? ce.msg : "no result");
    free(ir.data);
    plan_free(p);
    return AIT_OK;
}

/* ---- walking back ---- */

static bool quantised(const tune_cand *c) { return c->min_sqnr > 0; }

/* Whether the plan at this bucket is the whole module (its entry chosen). */
static bool whole_taken(const tune_module *mods, int n)
{
    for (int k = 0; k < n; k++)
        if (mods[k].whole && mods[k].chosen > 0) return true;
    return false;
}

/* The module in the plan with a quantised choice and the largest module
 * error (lowest SQNR), or -1. */
static int worst_quantised(const tune_module *mods, int n)
{
    bool whole = whole_taken(mods, n);
    int worst = -1;
    for (int k = 0; k < n; k++) {
        const tune_module *tm = &mods[k];
        if (tm->whole != whole || !quantised(&tm->cands[tm->chosen])) continue;
        if (worst < 0 || tm->cands[tm->chosen].sqnr_db < mods[worst].cands[mods[worst].chosen].sqnr_db)
            worst = k;
    }
    return worst;
}

/* The candidate tm goes back to: what its strategy picks among the float32
 * candidates (with the margin), or for the whole module its fastest valid
 * float32 candidate but the reference (0: none, it cannot go back). */
static ait_status float_choice(const tune_module *tm, double margin, int *out, ait_error *e)
{
    *out = 0;
    if (tm->whole) {
        for (int c = 1; c < tm->n_cands; c++) {
            const tune_cand *tc = &tm->cands[c];
            if (tc->valid && !quantised(tc) && strcmp(tc->cfg.backend, "reference") &&
                (!*out || tc->prof.median < tm->cands[*out].prof.median))
                *out = c;
        }
        return AIT_OK;
    }
    tune_module *f = malloc(sizeof *f);
    if (!f) return err_set(e, AIT_E_NOMEM, "out of memory");
    *f = *tm;
    for (int c = 1; c < f->n_cands; c++) f->cands[c].valid &= !quantised(&f->cands[c]);
    strategy st;
    choice ch;
    ait_status s = strategy_parse(f->strategy, &st, e);
    st.margin = tune_margin(margin);
    if (s == AIT_OK) s = tune_pick(f, &st, &ch, e);
    if (s == AIT_OK) *out = ch.index;
    free(f);
    return s;
}

/* Module tm goes back to candidate c; its why says so, its own reason kept. */
static void walk_back(tune_module *tm, int c, const char *miss)
{
    char own[sizeof tm->why];
    memcpy(own, tm->why, sizeof own);
    const char *from = tm->cands[tm->chosen].name;
    char was[sizeof tm->cands[0].name];
    snprintf(was, sizeof was, "%s", from);
    tm->chosen = c;
    tm->walked_back = true;
    snprintf(tm->why, sizeof tm->why, "walked back to float32 (%s, from %s): %s. Before: %s",
             tm->cands[c].name, was, miss, own);
}

/* ---- the guard ---- */

/* The reference's outputs on every batch, cloned: refs[b * n_outs + k]. */
static ait_status make_refs(const ait_model *m, const inspection *insp, exec *ref,
                            tensor *const *const *batches, int nb, acc_run *run, int *out_idx,
                            tensor **refs, ait_error *e)
{
    const graph *g = m->g;
    tensor **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!outs) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = AIT_OK;
    acc_figures *f = &run->fig;
    for (int b = 0; s == AIT_OK && b < nb; b++) {
        s = exec_run(ref, batches[b], outs, e);
        if (s == AIT_OK && b == 0) /* the outputs measured: float tensors */
            for (int j = 0; j < g->n_outputs && f->n_outs < ACC_MAX_OUTS; j++) {
                const tensor *t = outs[j];
                if (!t || t->kind != VAL_TENSOR || !dtype_is_float(t->dtype)) continue;
                acc_out *o = &f->outs[f->n_outs];
                snprintf(o->name, sizeof o->name, "%s", g->vals[g->outputs[j]].name);
                const port_spec *port = NULL;
                for (int p = 0; p < insp->st[0].n_ports; p++)
                    if (insp->st[0].ports[p].output && insp->st[0].ports[p].value == g->outputs[j])
                        port = &insp->st[0].ports[p];
                o->classifier = acc_classifier(t, port, insp->static_shapes);
                out_idx[f->n_outs++] = j;
            }
        for (int k = 0; s == AIT_OK && k < f->n_outs; k++)
            s = tensor_clone(outs[out_idx[k]], &refs[b * f->n_outs + k], e);
    }
    free(outs);
    return s;
}

ait_status acc_guard_bucket(const ait_model *m, const inspection *insp, const tune_opts *o,
                            const acc_budget *b, tune_module *mods, int n, exec *ref,
                            tensor *const *const *batches, int n_batches, tune_accuracy *out,
                            ait_error *e)
{
    double t0 = now_sec();
    *out = (tune_accuracy){.batch = n ? mods[0].batch : 0, .n_batches = n_batches, .fits = true};
    int out_idx[ACC_MAX_OUTS];
    tensor **refs = calloc((size_t)n_batches * ACC_MAX_OUTS + 1, sizeof *refs);
    if (!refs) return err_set(e, AIT_E_NOMEM, "out of memory");
    acc_run run = {.m = m, .batches = batches, .n_batches = n_batches, .refs = refs,
                   .out_idx = out_idx};
    ait_status s = make_refs(m, insp, ref, batches, n_batches, &run, out_idx, refs, e);
    out->rows = (int64_t)n_batches * out->batch; /* each batch holds a bucket of rows */
    char miss[320] = "", failed[400] = "";
    if (s == AIT_OK) s = measure(insp, o, mods, n, &run, &out->tuned, failed, sizeof failed, e);
    out->final = out->tuned;
    while (s == AIT_OK && !failed[0] && !acc_fits(b, &out->final, miss, sizeof miss)) {
        int k = worst_quantised(mods, n), c = 0;
        if (k >= 0) s = float_choice(&mods[k], o->margin, &c, e);
        if (s != AIT_OK) break;
        if (k < 0 || (mods[k].whole && c == 0)) {
            out->fits = false;
            snprintf(out->note, sizeof out->note, "misses the budget with %s: %s",
                     k < 0 ? "no quantised module left to walk back"
                           : "the whole module on a quantised candidate and no float32 one to "
                             "walk back to", miss);
            log_msg(&o->log, AIT_LOG_WARN, "tune: accuracy @ batch %d: %s", out->batch, out->note);
            break;
        }
        walk_back(&mods[k], c, miss);
        out->n_walked++;
        log_msg(&o->log, AIT_LOG_INFO, "tune: accuracy @ batch %d: %s", out->batch, mods[k].why);
        s = measure(insp, o, mods, n, &run, &out->final, failed, sizeof failed, e);
    }
    if (s == AIT_OK && failed[0]) {
        out->failed = true;
        out->fits = false;
        snprintf(out->note, sizeof out->note, "%s; the plan stays as it is", failed);
        log_msg(&o->log, AIT_LOG_WARN, "tune: accuracy @ batch %d: %s", out->batch, out->note);
    } else if (s == AIT_OK && out->fits) {
        char bs[160];
        acc_budget_str(b, bs, sizeof bs);
        if (out->n_walked)
            snprintf(out->note, sizeof out->note, "walked back %d module%s to float32; the plan "
                     "now meets the budget (%s)", out->n_walked, out->n_walked == 1 ? "" : "s", bs);
        else
            snprintf(out->note, sizeof out->note, "%s", strcmp(bs, "none")
                     ? "the plan as tuned meets the budget" : "no budget: figures only");
    }
    for (int i = 0; i < n_batches * ACC_MAX_OUTS; i++) ait_tensor_free(refs[i]);
    free(refs);
    out->secs = now_sec() - t0;
    return s;
}
