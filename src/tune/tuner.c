/* The tuner (see tuner.h). */
#include "tune/tuner.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "core/timer.h"
#include "graph/extract.h"
#include "kernels/gemm_tuned.h"
#include "exec/exec.h"
#include "kernels/qgemm.h"
#include "tune/accuracy.h"
#include "tune/buckets.h"
#include "tune/cache.h"
#include "tune/choice.h"
#include "tune/isolate.h"
#include "tune/plan_check.h"
#include "tune/strategy.h"
#include "tune/validate.h"

#define MAX_PORTS 64

bool tune_cold(int cold, const inspection *insp)
{
    return cold > 0 || (cold == 0 && insp->st[0].param_bytes > TUNE_COLD_BYTES);
}

int tune_bucket(int b)
{
    int p = 1;
    while (p < b && p < (1 << 29)) p <<= 1;
    return p;
}

/* ---- sample batches ---- */

/* One batch of model inputs at a bucket. */
typedef struct tbatch {
    tensor **inputs;    /* model inputs, owned */
    int group;          /* the shape group of its samples */
    bool first;         /* the group's first batch */
    bool in_cap;        /* among the first max_batches batches */
    const char *source; /* its first sample's file */
} tbatch;

/* Rows a sample gives a batch: its size along the first batch axis. */
static int64_t sample_rows(const ait_model *m, const sample *x)
{
    for (int i = 0; i < m->g->n_inputs; i++) {
        int ax = samples_batch_axis(m, i);
        const tensor *t = x->values[i];
        if (ax >= 0 && ax < t->rank) return t->dims[ax] > 0 ? t->dims[ax] : 1;
    }
    return 1;
}

static void batches_free(const ait_model *m, tbatch *bs, int n)
{
    for (int k = 0; bs && k < n; k++) {
        for (int i = 0; bs[k].inputs && i < m->g->n_inputs; i++) ait_tensor_free(bs[k].inputs[i]);
        free(bs[k].inputs);
    }
    free(bs);
}

/* The distinct batches at bucket b: per shape group (in the order of its
 * first sample), consecutive samples until b rows are taken, the last
 * batch cycling to the group's start when it runs short. Batches past the
 * first `cap` (<= 0: no cap) are made only when they are a group's first
 * (the min/max shape checks may need them). */
static ait_status make_batches(const ait_model *m, const sample_set *set, int b, int cap,
                               tbatch **out, int *n_out, int *n_groups, ait_error *e)
{
    int ns = set->n, ng = 0, n = 0, seen = 0;
    int *group = calloc((size_t)ns + 1, sizeof *group), *idx = calloc((size_t)ns + 1, sizeof *idx);
    sample *view = calloc((size_t)ns + 1, sizeof *view);
    tbatch *bs = calloc((size_t)ns + 1, sizeof *bs); /* at most one batch per sample */
    ait_status s = group && idx && view && bs ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; s == AIT_OK && i < ns; i++) {
        group[i] = -1;
        for (int j = 0; j < i && group[i] < 0; j++)
            if (samples_same_shapes(m, &set->s[i], &set->s[j])) group[i] = group[j];
        if (group[i] < 0) group[i] = ng++;
    }
    for (int g = 0; s == AIT_OK && g < ng; g++) {
        int gn = 0;
        for (int i = 0; i < ns; i++)
            if (group[i] == g) idx[gn++] = i;
        for (int j = 0; s == AIT_OK && j < gn; seen++) {
            int k = j;
            for (int64_t need = b; need > 0 && k < gn; k++) need -= sample_rows(m, &set->s[idx[k]]);
            bool first = j == 0, in_cap = cap <= 0 || seen < cap;
            if (first || in_cap) {
                sample_set v = {.n_inputs = set->n_inputs, .n = gn, .s = view};
                for (int t = 0; t < gn; t++) view[t] = set->s[idx[(j + t) % gn]];
                tbatch *x = &bs[n];
                *x = (tbatch){.group = g, .first = first, .in_cap = in_cap,
                              .source = set->s[idx[j]].source};
                x->inputs = calloc((size_t)m->g->n_inputs + 1, sizeof *x->inputs);
                if (!x->inputs) s = err_set(e, AIT_E_NOMEM, "out of memory");
                else n++;
                if (s == AIT_OK) s = samples_batch(m, &v, b, x->inputs, e);
            }
            j = k;
        }
    }
    free(group);
    free(idx);
    free(view);
    if (s != AIT_OK) {
        batches_free(m, bs, n);
        return s;
    }
    *out = bs;
    *n_out = n;
    *n_groups = ng;
    return AIT_OK;
}

/* ---- validation sets ---- */

/* One set of module inputs a candidate is validated on, with the
 * reference's outputs (made only when a candidate has to run). */
typedef struct vset {
    tensor *feed[MAX_PORTS], *ref[MAX_PORTS];
    char label[320]; /* "" when it is the only set; else prefixes a failure */
    int64_t numel;   /* elements of all its inputs: smallest and largest shapes */
    int batch;       /* index of its batch */
} vset;

static void vsets_free(vset *vs, int n)
{
    for (int k = 0; vs && k < n; k++)
        for (int j = 0; j < MAX_PORTS; j++) {
            ait_tensor_free(vs[k].feed[j]);
            ait_tensor_free(vs[k].ref[j]);
        }
    free(vs);
}

/* Whether the inspection saw a dynamic (non-batch) axis on a port of m;
 * dyn_in[k] tells which of the module's inputs (sub's order) have one. */
static bool module_dynamic(const inspection *insp, int mi, const graph *g, const graph *sub,
                           bool *dyn_in)
{
    bool any = false;
    const module_stats *st = &insp->st[mi];
    for (int k = 0; k < sub->n_inputs; k++) dyn_in[k] = false;
    for (int p = 0; p < st->n_ports; p++) {
        const port_spec *ps = &st->ports[p];
        bool dyn = false;
        for (int d = 0; d < ps->axes.rank; d++) dyn |= ps->axes.kind[d] == AXIS_DYNAMIC;
        any |= dyn;
        for (int k = 0; dyn && !ps->output && k < sub->n_inputs; k++)
            if (!strcmp(sub->vals[sub->inputs[k]].name, g->vals[ps->value].name)) dyn_in[k] = true;
    }
    return any;
}

/* "ids [1,7], attention_mask [1,7]": the inputs with dynamic axes (all of
 * them when none is marked). */
static void shapes_str(const graph *sub, const vset *v, const bool *dyn_in, char *buf, size_t n)
{
    bool any = false;
    for (int k = 0; k < sub->n_inputs; k++) any |= dyn_in[k];
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < sub->n_inputs && at + 1 < n; k++) {
        if (any && !dyn_in[k]) continue;
        char sh[128];
        const tensor *t = v->feed[k];
        int w = snprintf(buf + at, n - at, "%s%s %s", at ? ", " : "", sub->vals[sub->inputs[k]].name,
                         shape_str(t->dims, t->rank, sh, sizeof sh));
        at = w < 0 || (size_t)w >= n - at ? n - 1 : at + (size_t)w;
    }
}

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "?";
}

/* ---- one candidate's trial, in the child ---- */

typedef struct trial {
    const backend *b;
    const graph *sub;
    const candidate_cfg *cfg;
    const logger *log; /* what the build says (cfg's is not kept: plans copy cfg) */
    const vset *sets;
    int n_sets;
    const char *const *names;
    profile_opts prof;
    built *bm;
    tensor *outs[MAX_PORTS];
    tune_cand res; /* what the child sends back */
} trial;

static ait_status trial_run_once(void *ctx, ait_error *e)
{
    trial *t = ctx;
    return t->b->run(t->bm, (tensor *const *)t->sets[0].feed, t->outs, e);
}

/* In the child: build, run and validate on every set (stopping at the
 * first failure, whose reason names the set), profile on the first; the
 * bytes sent back are the filled tune_cand. Validation failures are
 * results, not errors. */
static ait_status trial_fn(void *ctx, const void **out, size_t *len, ait_error *e)
{
    trial *t = ctx;
    tune_cand *r = &t->res;
    int no = t->sub->n_outputs;
    candidate_cfg cfg = *t->cfg;
    cfg.log = t->log;
    TRY(t->b->build(t->b, t->sub, &cfg, &t->bm, e));
    r->valid = true;
    r->reason[0] = 0;
    r->max_rel = 0;
    r->sqnr_db = INFINITY;
    for (int k = 0; k < t->n_sets && r->valid; k++) {
        const vset *v = &t->sets[k];
        ait_status s = t->b->run(t->bm, (tensor *const *)v->feed, t->outs, e);
        if (s != AIT_OK) return v->label[0] ? err_prefix(e, "%s: ", v->label) : s;
        out_metrics m[MAX_PORTS];
        verdict vd;
        tolerance qt = tolerance_quantised();
        qt.min_sqnr_db = r->min_sqnr;
        TRY(validate_outputs((const tensor *const *)v->ref, no, (const tensor *const *)t->outs, no,
                             t->names, r->min_sqnr > 0 ? &qt : NULL, m, &vd, e));
        for (int j = 0; j < no; j++) {
            r->max_rel = fmax(r->max_rel, m[j].max_rel);
            r->sqnr_db = fmin(r->sqnr_db, m[j].sqnr_db);
        }
        if (!vd.pass) {
            r->valid = false;
            snprintf(r->reason, sizeof r->reason, "%s%s%s", v->label, v->label[0] ? ": " : "",
                     vd.reason);
        }
    }
    if (r->valid) TRY(profile_run(&t->prof, trial_run_once, t, &r->prof, e));
    t->b->free(t->bm);
    *out = r;
    *len = sizeof *r;
    return AIT_OK;
}

/* ---- progress ---- */

typedef struct progress {
    const tune_opts *o;
    int step, n_steps; /* module x bucket */
    double t0;
} progress;

static const char *mod_name(const inspection *insp, int mi)
{
    return mi == 0 || !insp->tree->mods[mi].name[0] ? "(model)" : insp->tree->mods[mi].name;
}

/* Before candidate c of n: what runs now, with a bar of the whole tune. */
static void progress_start(const progress *p, const char *mod, int batch, const tune_cand *tc,
                           int c, int n)
{
    if (!log_on(&p->o->log)) return;
    char bar[21], left[40] = "";
    double done = p->n_steps ? ((p->step - 1) + (double)c / n) / p->n_steps : 0,
           el = now_sec() - p->t0;
    int fill = (int)(20 * done);
    for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '.';
    bar[20] = 0;
    /* What is left, at the pace so far: rough (modules differ), so only once
     * a little is done, and with a "~". */
    if (done > 0.02 && done < 1) snprintf(left, sizeof left, ", ~%.0fs left", el * (1 - done) / done);
    log_msg(&p->o->log, AIT_LOG_PROGRESS,
            "tune [%s] module %d/%d %.32s @ batch %d: %s (%d/%d) %.0fs%s", bar, p->step,
            p->n_steps, mod, batch, tc->name, c + 1, n, el, left);
}

/* After a candidate: its line of the log. */
static void progress_done(const progress *p, const char *mod, int batch, const tune_cand *tc)
{
    if (!log_on(&p->o->log)) return;
    char res[600], took[32] = " (cached)";
    if (tc->valid)
        snprintf(res, sizeof res, ", %.3f ms%s", tc->prof.median * 1e3,
                 tc->prof.stopped ? " (stopped early: a clear loser)" : "");
    else snprintf(res, sizeof res, ": %s", tc->reason);
    if (!tc->cached) snprintf(took, sizeof took, " (%.1f s)", tc->secs);
    log_msg(&p->o->log, AIT_LOG_DEBUG, "tune: module %d/%d %s @ batch %d: %s: %s%s%s", p->step,
            p->n_steps, mod, batch, tc->name, tune_cand_status(tc), res, took);
}

/* ---- candidates ---- */

/* The candidates for one module: the baseline first, then every available
 * backend that runs some of the module's nodes itself, in each of its
 * variants for the module (the default first), at each thread count:
 * "onednn/t2", "onednn:blocked/t1". */
static void add_quant(const graph *sub, const tune_opts *o, const act_ranges *ranges,
                      const backend *b, int threads, tune_module *tm, const backend **cb);

/* Whether module g quantises values it computes (DynamicQuantizeLinear, or
 * QuantizeLinear of a non-constant): a rounding step there turns a float32
 * difference upstream into one quantum, so its candidates are judged by
 * SQNR (TOL_PREQUANT_SQNR_DB) rather than element by element. */
static bool quantises_activations(const graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if ((n->domain && n->domain[0]) || n->n_in < 1 || n->in[0] < 0) continue;
        if (!strcmp(n->op, "DynamicQuantizeLinear") ||
            (!strcmp(n->op, "QuantizeLinear") && !g->vals[n->in[0]].konst))
            return true;
    }
    return false;
}

static void list_candidates(const graph *sub, const tune_opts *o, const act_ranges *ranges,
                            tune_module *tm, const backend **cb)
{
    int threads = o->max_threads > 0 ? o->max_threads : 1;
    bool flips = quantises_activations(sub);
    int nb = o->backends ? o->n_backends : backend_count();
    tm->n_cands = 0;
    for (int i = 0; i < nb && tm->n_cands < TUNE_MAX_CANDS; i++) {
        const backend *b = o->backends ? o->backends[i] : backend_at(i);
        char why[256];
        bool is_ref = strcmp(b->name, "reference") == 0;
        if (b->available && !b->available(why, sizeof why)) continue;
        if (!is_ref && backend_coverage(b, sub) == 0) continue;
        const char *vars[8];
        int nv = backend_variants(b, sub, vars, 8);
        for (int v = 0; v < nv; v++)
            for (int t = 1; t <= threads && tm->n_cands < TUNE_MAX_CANDS; t++) {
                if (is_ref && t > 1) break; /* the reference ops use one thread */
                cb[tm->n_cands] = b;
                tune_cand *c = &tm->cands[tm->n_cands++];
                memset(c, 0, sizeof *c);
                c->cfg.backend = b->name;
                c->cfg.threads = t;
                snprintf(c->cfg.variant, sizeof c->cfg.variant, "%s", vars[v]);
                if (!strcmp(b->name, "native")) c->cfg.gemm = o->gemm;
                snprintf(c->name, sizeof c->name, "%s%s%s/t%d", b->name, *vars[v] ? ":" : "",
                         vars[v], t);
                if (flips && !is_ref) c->min_sqnr = TOL_PREQUANT_SQNR_DB;
            }
        add_quant(sub, o, ranges, b, threads, tm, cb);
    }
}

/* Whether quantised variant `name` was asked for in `list` (tune_opts.quant). */
static bool quant_wanted(const char *list, const char *name)
{
    if (!list || !*list) return false;
    if (strcmp(list, "auto") == 0) return !strchr(name, '-');
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return true;
        p += len + (end != NULL);
    }
    return false;
}

/* The quantised candidates of backend b on module sub that the user asked
 * for, each with its own SQNR bound; static int8 with the calibrated ranges. */
static void add_quant(const graph *sub, const tune_opts *o, const act_ranges *ranges,
                      const backend *b, int threads, tune_module *tm, const backend **cb)
{
    const char *qv[16];
    int nq = b->quant_variants && o->quant ? b->quant_variants(sub, qv, 16) : 0;
    for (int v = 0; v < nq; v++) {
        if (!quant_wanted(o->quant, qv[v])) continue;
        for (int t = 1; t <= threads && tm->n_cands < TUNE_MAX_CANDS; t++) {
            cb[tm->n_cands] = b;
            tune_cand *c = &tm->cands[tm->n_cands++];
            memset(c, 0, sizeof *c);
            c->cfg.backend = b->name;
            c->cfg.threads = t;
            snprintf(c->cfg.variant, sizeof c->cfg.variant, "%s", qv[v]);
            if (!strcmp(qv[v], "int8")) c->cfg.ranges = ranges;
            snprintf(c->name, sizeof c->name, "%s:%s/t%d", b->name, qv[v], t);
            c->min_sqnr = o->min_sqnr > 0 ? o->min_sqnr : b->min_sqnr ? b->min_sqnr(qv[v]) : 0;
            if (c->min_sqnr <= 0) c->min_sqnr = TOL_QUANT_SQNR_DB;
        }
    }
}

/* What the whole run shares. */
typedef struct tune_ctx {
    const ait_model *m;
    const inspection *insp;
    const tune_opts *o;
    exec *whole;
    int whole_ran;          /* the batch whose run `whole` holds the values of, or -1 */
    tbatch *batches;
    int n_batches, n_groups;
    tune_cache cache;
    char cpu[512];          /* model and features */
    progress prog;
    tune_report *rep;
} tune_ctx;

/* A module input the whole model's run did not compute: every node that
 * reads it was folded from its shape alone (a Shape node: the exported
 * LSTM's `Shape(Transpose(x))`), so the whole model never needs its data.
 * The module gets a zero tensor of its scheduled dtype and shape, which its
 * nodes read the shape of only, as in the whole model. */
static ait_status dead_input(const exec *whole, int v, const char *name, tensor **out, ait_error *e)
{
    const tensor *m = exec_scheduled(whole, v);
    if (!m || m->dtype == AIT_UNDEFINED || m->kind != VAL_TENSOR)
        return err_set(e, AIT_E_INTERNAL, "module input '%s' was not computed", name);
    tensor *t = calloc(1, sizeof *t);
    if (!t) return err_set(e, AIT_E_NOMEM, "out of memory");
    tensor_set_shape(t, m->dtype, m->rank, m->dims);
    ait_status s = tensor_alloc(t, e);
    if (s != AIT_OK) {
        free(t);
        return s;
    }
    *out = t;
    return AIT_OK;
}

/* The sets module sub is validated on at this bucket: its inputs from
 * whole-model runs of the batches (see tuner.h for which). */
static ait_status make_sets(tune_ctx *x, int mi, const graph *sub, tune_module *tm, vset **out,
                            int *n_out, ait_error *e)
{
    const graph *g = x->m->g;
    bool dyn_in[MAX_PORTS];
    bool dyn = module_dynamic(x->insp, mi, g, sub, dyn_in) && x->n_groups > 1;
    vset *vs = calloc((size_t)x->n_batches + 1, sizeof *vs);
    tensor **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    int n = 0;
    ait_status s = vs && outs ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int bi = 0; s == AIT_OK && bi < x->n_batches; bi++) {
        const tbatch *b = &x->batches[bi];
        if (!b->in_cap && !(dyn && b->first)) continue;
        vset *v = &vs[n++];
        v->batch = bi;
        if (x->whole_ran != bi) s = exec_run(x->whole, b->inputs, outs, e); /* else still there */
        x->whole_ran = s == AIT_OK ? bi : -1;
        for (int k = 0; s == AIT_OK && k < sub->n_inputs; k++) {
            const char *name = sub->vals[sub->inputs[k]].name;
            const tensor *t = exec_value(x->whole, graph_find_value(g, name));
            if (!t) s = dead_input(x->whole, graph_find_value(g, name), name, &v->feed[k], e);
            else s = tensor_clone(t, &v->feed[k], e);
            if (s == AIT_OK) v->numel += tensor_numel(v->feed[k]);
        }
        /* The module's outputs of the same run are the reference's: kept,
         * so the module need not run on the reference again (make_refs). */
        for (int j = 0; s == AIT_OK && j < sub->n_outputs && j < MAX_PORTS; j++) {
            const tensor *t = exec_value(x->whole, graph_find_value(g, sub->vals[sub->outputs[j]].name));
            if (t) s = tensor_clone(t, &v->ref[j], e);
        }
    }
    free(outs);
    int lo = -1, hi = -1; /* the sets of the smallest and the largest inputs */
    for (int k = 0; s == AIT_OK && dyn && k < n; k++) {
        if (!x->batches[vs[k].batch].first) continue;
        if (lo < 0 || vs[k].numel < vs[lo].numel) lo = k;
        if (hi < 0 || vs[k].numel > vs[hi].numel) hi = k;
    }
    if (s == AIT_OK && lo >= 0 && vs[lo].numel == vs[hi].numel) lo = hi = -1; /* one shape */
    /* Drop the groups' first batches beyond the cap that are neither. */
    int kept = 0;
    for (int k = 0; s == AIT_OK && k < n; k++) {
        if (!x->batches[vs[k].batch].in_cap && k != lo && k != hi) {
            for (int j = 0; j < MAX_PORTS; j++) {
                ait_tensor_free(vs[k].feed[j]);
                ait_tensor_free(vs[k].ref[j]);
            }
            continue;
        }
        if (k == lo) lo = kept;
        if (k == hi) hi = kept;
        if (kept != k) vs[kept] = vs[k];
        kept++;
    }
    if (s == AIT_OK) n = kept;
    tm->min_shape[0] = tm->max_shape[0] = 0;
    for (int k = 0; s == AIT_OK && k < n; k++) {
        vset *v = &vs[k];
        const tbatch *b = &x->batches[v->batch];
        if (k == lo || k == hi) {
            char *sh = k == hi ? tm->max_shape : tm->min_shape;
            shapes_str(sub, v, dyn_in, sh, sizeof tm->max_shape);
            snprintf(v->label, sizeof v->label, "at %s shape (%s)", k == hi ? "max" : "min", sh);
        } else if (n > 1) {
            snprintf(v->label, sizeof v->label, "on batch %d of %d (from %s)", k + 1, n,
                     base_name(b->source));
        }
    }
    if (s != AIT_OK) {
        vsets_free(vs, n);
        return s;
    }
    *out = vs;
    *n_out = n;
    return AIT_OK;
}

/* Whether every set has the reference's outputs (make_sets took them from
 * the whole model's run). */
static bool have_refs(const graph *sub, const vset *vs, int n)
{
    for (int k = 0; k < n; k++)
        for (int j = 0; j < sub->n_outputs; j++)
            if (!vs[k].ref[j]) return false;
    return true;
}

/* The reference's outputs on every set, once a candidate has to run (when
 * make_sets could not take them all from the whole model's run). */
static ait_status make_refs(const graph *sub, vset *vs, int n, ait_error *e)
{
    exec *rx = NULL;
    tensor *outs[MAX_PORTS];
    if (have_refs(sub, vs, n)) return AIT_OK;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < MAX_PORTS; j++) {
            ait_tensor_free(vs[k].ref[j]);
            vs[k].ref[j] = NULL;
        }
    TRY(exec_create(sub, NULL, 1, &rx, e));
    ait_status s = AIT_OK;
    for (int k = 0; s == AIT_OK && k < n; k++) {
        s = exec_run(rx, vs[k].feed, outs, e);
        for (int j = 0; s == AIT_OK && j < sub->n_outputs; j++) s = tensor_clone(outs[j], &vs[k].ref[j], e);
    }
    exec_free(rx);
    return s;
}

/* The digest of what every candidate's result at this bucket depends on
 * besides its configuration: the module (graph and weights, mdig), the
 * inputs' shapes and bytes, the profiling options, ait and the CPU. */
static void sets_digest(const tune_ctx *x, const uint8_t mdig[SHA256_BYTES], int bucket,
                        const vset *vs, int n, int n_in, const profile_opts *p,
                        uint8_t out[SHA256_BYTES])
{
    sha256_ctx h;
    sha256_init(&h);
    cache_hash_str(&h, "ait tune trial");
    cache_hash_i64(&h, CACHE_FORMAT);
    cache_hash_str(&h, AIT_VERSION_STRING);
    cache_hash_i64(&h, VALIDATE_RULES);
    cache_hash_str(&h, x->cpu);
    sha256_update(&h, mdig, SHA256_BYTES);
    cache_hash_i64(&h, bucket);
    cache_hash_i64(&h, n);
    for (int k = 0; k < n; k++) {
        cache_hash_str(&h, vs[k].label);
        for (int j = 0; j < n_in; j++) cache_hash_tensor(&h, vs[k].feed[j]);
    }
    cache_hash_i64(&h, p->warmup);
    cache_hash_i64(&h, p->window);
    cache_hash_f64(&h, p->cv);
    cache_hash_i64(&h, p->cap);
    cache_hash_i64(&h, p->batch);
    cache_hash_i64(&h, (int64_t)p->flush_bytes);
    cache_hash_i64(&h, x->o->cpu_clock); /* another clock, other figures */
    sha256_final(&h, out);
}

static void cand_key(const uint8_t sdig[SHA256_BYTES], const tune_cand *c, char hex[SHA256_HEX])
{
    sha256_ctx h;
    uint8_t d[SHA256_BYTES];
    sha256_init(&h);
    sha256_update(&h, sdig, SHA256_BYTES);
    cache_hash_str(&h, c->cfg.backend);
    cache_hash_i64(&h, c->cfg.threads);
    cache_hash_str(&h, c->cfg.variant);
    if (c->cfg.gemm) cache_hash_i64(&h, (int64_t)c->cfg.gemm->hash); /* the GEMM table it ran with */
    if (c->cfg.ranges) cache_hash_i64(&h, (int64_t)c->cfg.ranges->hash); /* its calibration */
    cache_hash_str(&h, c->name);
    if (c->min_sqnr > 0) cache_hash_i64(&h, (int64_t)llround(c->min_sqnr * 1000));
    sha256_final(&h, d);
    sha256_hex(d, hex);
}

double tune_stop_above(const tune_module *tm, int c, double margin)
{
    double best = 0;
    for (int k = 0; k < tm->n_cands; k++) {
        const tune_cand *tc = &tm->cands[k];
        bool tried = tc->valid && tc->prof.median > 0 && !tc->prof.stopped && k != c;
        if (tried && (best == 0 || tc->prof.median < best)) best = tc->prof.median;
    }
    return best * TUNE_STOP_FACTOR * (1 + tune_margin(margin));
}

/* Takes a result's measurements (not its name or configuration). */
static void take_result(tune_cand *dst, const tune_cand *src)
{
    dst->valid = src->valid;
    memcpy(dst->reason, src->reason, sizeof dst->reason);
    dst->reason[sizeof dst->reason - 1] = 0;
    dst->max_rel = src->max_rel;
    dst->sqnr_db = src->sqnr_db;
    dst->prof = src->prof;
}

/* Tunes module tm->module at bucket tm->batch. mdig: the module's graph and
 * weights digest, computed when *have_mdig is false. */
/* One module at one bucket, while its candidates are tried: the module cut
 * out, the sample sets it is validated on and their reference outputs (made
 * when the first candidate runs: none when every candidate is cached). */
typedef struct module_trial {
    graph *sub;
    vset *vs;
    int n_sets;
    const char *names[MAX_PORTS]; /* the module's output names */
    profile_opts prof;
    uint8_t sdig[SHA256_BYTES];   /* the cache key's part common to its candidates */
    const backend *cb[TUNE_MAX_CANDS];
    bool have_refs;
} module_trial;

/* Candidate c of tm: from the cache, else run in a child process with the
 * time limit (a crash, timeout or failure there is the candidate's verdict,
 * not an error). */
static ait_status try_candidate(tune_ctx *x, module_trial *mt, tune_module *tm, int c,
                                ait_error *e)
{
    const char *mname = mod_name(x->insp, tm->module);
    tune_cand *tc = &tm->cands[c];
    char key[SHA256_HEX];
    cand_key(mt->sdig, tc, key);
    progress_start(&x->prog, mname, tm->batch, tc, c, tm->n_cands);
    double limit = x->o->timeout > 0 ? x->o->timeout : 60;
    if (cache_get(&x->cache, key, tc->name, tc) && !(tc->timed_out > 0 && tc->timed_out < limit)) {
        tc->cached = true;
        tc->errored = tc->timed_out > 0; /* it would time out again: not retried */
        x->rep->cached++;
        progress_done(&x->prog, mname, tm->batch, tc);
        return AIT_OK;
    }
    if (!mt->have_refs) TRY(make_refs(mt->sub, mt->vs, mt->n_sets, e));
    mt->have_refs = true;
    trial t = {.b = mt->cb[c], .sub = mt->sub, .cfg = &tc->cfg, .log = &x->o->log, .sets = mt->vs,
               .n_sets = mt->n_sets, .names = mt->names, .prof = mt->prof, .res = *tc};
    if (x->o->cpu_clock && tc->cfg.threads <= 1) t.prof.clock = profile_thread_cpu_ns;
    tc->timed_out = 0; /* a cached timeout under a shorter limit is tried again */
    isolate_opts io = {.timeout = limit, .cpu_time = t.prof.clock == profile_thread_cpu_ns};
    isolate_result ir = {0};
    ait_error ce = {0};
    double t0 = now_sec();
    if (isolate_run(&io, trial_fn, &t, &ir, &ce) == AIT_OK && ir.len == sizeof *tc) {
        take_result(tc, ir.data);
        /* A stopped result depends on the candidates timed before it: not cached. */
        if (!tc->prof.stopped) cache_put(&x->cache, key, tc);
    } else {
        tc->valid = false;
        tc->errored = true;
        snprintf(tc->reason, sizeof tc->reason, "%s", ce.msg[0] ? ce.msg : "no result");
        if (ir.fate == ISO_TIMEOUT) { /* remembered: with these options it would time out again */
            tc->timed_out = limit;
            cache_put(&x->cache, key, tc);
        }
    }
    tc->secs = now_sec() - t0;
    x->rep->trials++;
    free(ir.data);
    progress_done(&x->prog, mname, tm->batch, tc);
    return AIT_OK;
}

/* The first node of g whose outputs differ on every run (a random op
 * without a seed), or -1. */
static int random_node(const graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (n->def && (n->def->flags & OP_NONDETERMINISTIC) && !node_attr(n, "seed")) return i;
    }
    return -1;
}

/* A module no backend can take on its own, or whose candidates cannot be
 * checked (more ports than a trial passes, unseeded random values), keeps
 * its baseline, which runs inline in the model, and
 * tm->untuned says why. The tune goes on with the others. */
static void keep_baseline(tune_ctx *x, tune_module *tm, const char *why)
{
    snprintf(tm->untuned, sizeof tm->untuned, "%s", why);
    tune_cand *c = &tm->cands[0];
    memset(c, 0, sizeof *c);
    tm->n_cands = 1;
    c->cfg.backend = "reference";
    c->cfg.threads = 1;
    snprintf(c->name, sizeof c->name, "reference/t1");
    snprintf(c->reason, sizeof c->reason, "not run: %s", tm->untuned);
    progress_start(&x->prog, mod_name(x->insp, tm->module), tm->batch, c, 0, 1);
    progress_done(&x->prog, mod_name(x->insp, tm->module), tm->batch, c);
}

static ait_status tune_one(tune_ctx *x, tune_module *tm, uint8_t mdig[SHA256_BYTES],
                           bool *have_mdig, ait_error *e)
{
    const tune_opts *o = x->o;
    int mi = tm->module;
    module_trial mt = {0};
    TRY(graph_extract(x->m->g, x->insp->tree, mi, &mt.sub, e));
    graph *sub = mt.sub;
    ait_status s = AIT_OK;
    char why[200];
    int rnd = random_node(sub);
    if (sub->n_inputs > MAX_PORTS || sub->n_outputs > MAX_PORTS || rnd >= 0) {
        if (rnd >= 0)
            snprintf(why, sizeof why, "node '%s' (%s) draws new random values on every run (it "
                     "has no seed), so no candidate can be checked against the reference",
                     sub->nodes[rnd].name, sub->nodes[rnd].op);
        else
            snprintf(why, sizeof why, "it has %d inputs and %d outputs; a trial passes at most %d",
                     sub->n_inputs, sub->n_outputs, MAX_PORTS);
        keep_baseline(x, tm, why);
        graph_free(sub);
        return AIT_OK;
    }
    if (s == AIT_OK && !*have_mdig) {
        sha256_ctx h;
        sha256_init(&h);
        cache_hash_graph(&h, sub);
        cache_hash_weights(&h, sub);
        sha256_final(&h, mdig);
        *have_mdig = true;
    }
    if (s == AIT_OK) s = make_sets(x, mi, sub, tm, &mt.vs, &mt.n_sets, e);
    tm->n_sets = mt.n_sets;
    for (int j = 0; s == AIT_OK && j < sub->n_outputs; j++)
        mt.names[j] = sub->vals[sub->outputs[j]].name;
    mt.prof = o->prof;
    mt.prof.batch = tm->batch; /* throughput in items per second */
    if (tune_cold(o->cold, x->insp)) mt.prof.flush_bytes = PROFILE_FLUSH_BYTES;
    if (s == AIT_OK)
        sets_digest(x, mdig, tm->batch, mt.vs, mt.n_sets, sub->n_inputs, &mt.prof, mt.sdig);
    if (s == AIT_OK) list_candidates(sub, o, &x->rep->calib.out, tm, mt.cb);
    bool stop = strategy_speed(tm->strategy);
    /* The baseline last: when a candidate already beats it clearly, its
     * slow runs (the reference ops: a second or more for a big module) stop
     * early. */
    for (int k = 1; s == AIT_OK && k <= tm->n_cands; k++) {
        int c = k % tm->n_cands;
        mt.prof.stop_above = stop ? tune_stop_above(tm, c, o->margin) : 0;
        s = try_candidate(x, &mt, tm, c, e);
    }
    if (s == AIT_OK && tm->n_cands && tm->cands[0].timed_out > 0 && !tm->untuned[0]) {
        /* Nothing to compare with: say so, and keep the baseline knowingly. */
        snprintf(tm->untuned, sizeof tm->untuned, "its baseline (%s) timed out after %g s; raise "
                 "--timeout to tune it", tm->cands[0].name, tm->cands[0].timed_out);
        log_msg(&o->log, AIT_LOG_WARN, "module '%s' at batch %d: %s", mod_name(x->insp, tm->module),
                tm->batch, tm->untuned);
    }
    double base = tm->n_cands && tm->cands[0].valid ? tm->cands[0].prof.median : 0;
    for (int c = 0; s == AIT_OK && c < tm->n_cands; c++) {
        tune_cand *tc = &tm->cands[c];
        tc->speedup = tc->valid && tc->prof.median > 0 ? base / tc->prof.median : 0;
    }
    vsets_free(mt.vs, mt.n_sets);
    graph_free(sub);
    return s;
}

/* Whether the whole candidate is tried: asked for, with something to
 * decide it (forcing, or the check, which runs only where every module's
 * strategy is about speed), and no selected module that holds every node
 * already (the root, or a model's only segment). */
static bool whole_wanted(const tune_opts *o, const ait_model *m, const inspection *insp)
{
    bool force = o->whole == WHOLE_FORCE;
    if (o->whole == WHOLE_OFF || (!o->plan_check && !force)) return false;
    if (!o->sel || !o->sel->n) return false;
    for (int k = 0; k < o->sel->n; k++) {
        int mi = o->sel->items[k].module;
        bool speed = strategy_speed(o->sel->items[k].strategy);
        if (mi == 0 || insp->st[mi].n_nodes >= m->g->n_nodes || (!speed && !force)) return false;
    }
    return true;
}

/* The whole module's fastest valid candidate of backend b (strategy_names;
 * NULL: of any backend but the reference), or 0. */
int tune_whole_best(const tune_module *wm, const char *b)
{
    int best = 0;
    for (int c = 1; c < wm->n_cands; c++) {
        const tune_cand *tc = &wm->cands[c];
        if (!tc->valid || (b ? !strategy_names(b, tc->cfg.backend, tc->cfg.variant)
                             : !strcmp(tc->cfg.backend, "reference")))
            continue;
        if (!best || tc->prof.median < wm->cands[best].prof.median) best = c;
    }
    return best;
}

/* The backend every selected module's strategy is only:NAME of, into b
 * (size n): a forced whole module keeps to it too; false when they differ. */
static bool whole_only(const tune_opts *o, char *b, size_t n)
{
    b[0] = 0;
    for (int k = 0; o->sel && k < o->sel->n; k++) {
        strategy st;
        ait_error e;
        if (strategy_parse(o->sel->items[k].strategy, &st, &e) != AIT_OK || st.kind != STRAT_ONLY ||
            (b[0] && strcmp(b, st.backend) != 0))
            return false;
        snprintf(b, n, "%s", st.backend);
    }
    return b[0] != 0;
}

/* The whole module after its trials: out of the plan until the check takes
 * it, or (force) on its fastest valid candidate (of backend `only` when
 * not NULL: the modules' only:NAME). */
static void whole_choose(tune_module *wm, bool force, const char *only)
{
    bool any = false;
    for (int c = 1; c < wm->n_cands; c++) any |= wm->cands[c].valid;
    wm->all_failed = wm->n_cands > 1 && !any;
    wm->chosen = 0;
    int best = tune_whole_best(wm, only);
    if (force && best) {
        wm->chosen = best;
        snprintf(wm->why, sizeof wm->why, "the whole model as one module, forced (--force-whole): "
                 "its fastest valid candidate%s%s", only ? " of " : "", only ? only : "");
    } else if (force) {
        snprintf(wm->why, sizeof wm->why, "the whole model as one module: no candidate but the "
                 "reference passed, so the plan stays per module");
    } else {
        snprintf(wm->why, sizeof wm->why, "the whole model as one module, tried beside the "
                 "per-module plan in the whole-plan check");
    }
}

/* A plan runs the whole module at every bucket or at none: where the check
 * took it at some buckets only, it is left out and says so; where it took
 * it at every one, the other modules say that they are not in the plan. */
static void whole_settle(tune_report *r)
{
    int n = 0, taken = 0;
    for (int i = 0; i < r->n; i++)
        if (r->mods[i].whole) n++, taken += r->mods[i].chosen > 0;
    if (!taken) return;
    if (taken == n) {
        for (int i = 0; i < r->n; i++) {
            tune_module *tm = &r->mods[i];
            if (tm->whole) continue;
            char own[sizeof tm->why];
            memcpy(own, tm->why, sizeof own);
            snprintf(tm->why, sizeof tm->why, "not in the plan, which is the whole model as one "
                     "module (whole-plan check). Alone: %s", own);
        }
        return;
    }
    for (int i = 0; i < r->n; i++) {
        tune_module *wm = &r->mods[i];
        if (!wm->whole || !wm->chosen) continue;
        wm->chosen = 0;
        size_t at = strlen(wm->why);
        snprintf(wm->why + at, sizeof wm->why - at, "; taken at %d of %d buckets only, and a "
                 "plan runs it at every bucket or at none: the plan stays per module", taken, n);
    }
}

/* Every name of tune_opts.quant is a quantisation scheme (kernels/qgemm.h). */
static ait_status quant_check(const char *list, ait_error *e)
{
    if (!list || !*list || strcmp(list, "auto") == 0) return AIT_OK;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[32];
        int g;
        snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), p);
        if (len >= 31 || qg_scheme_find(name, &g) < 0)
            return err_set(e, AIT_E_INVALID_ARG,
                           "tune: --quant: unknown scheme '%.*s' (bf16, int8dq, int8, int8wo, int4wo, "
                           "int4wo-64, int4wo-128, fp16, auto or none)", (int)len, p);
        p += len + (end != NULL);
    }
    return AIT_OK;
}

/* The accuracy guard at every bucket (tune/accuracy.h), on the plan as
 * the modules' choices, the check and whole_settle left it: every sample
 * batch at the bucket (the validation cap does not apply). */
/* The samples of sequence/past bucket pi (of[i]: sample i's), viewed in
 * view (room for every sample): a decoder's bucket is tuned on its own
 * samples only; other models have one such bucket. */
static sample_set bucket_samples(const sample_set *all, const int *of, int pi, sample *view)
{
    sample_set sub = {.n_inputs = all->n_inputs, .s = view};
    for (int i = 0; i < all->n; i++)
        if (of[i] == pi) view[sub.n++] = all->s[i];
    return sub;
}

/* Static int8's calibration (calib.h): the whole model on every sample
 * at bucket b (each sequence/past phase's), its Convs' inputs observed. */
static ait_status calibrate(tune_ctx *x, int b, int nph, const int *of, sample *view, ait_error *e)
{
    const tune_opts *o = x->o;
    calib *c = &x->rep->calib;
    TRY(calib_init(c, x->m->g, o->calib_pct, e));
    tensor **outs = calloc((size_t)x->m->g->n_outputs + 1, sizeof *outs);
    ait_status s = outs ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int q = 0; s == AIT_OK && q < nph; q++) {
        sample_set sub = bucket_samples(o->samples, of, q, view);
        s = make_batches(x->m, &sub, b, 0, &x->batches, &x->n_batches, &x->n_groups, e);
        for (int k = 0; s == AIT_OK && k < x->n_batches; k++) {
            s = exec_run(x->whole, x->batches[k].inputs, outs, e);
            if (s == AIT_OK) s = calib_observe(c, x->whole, x->m->g, e);
        }
        batches_free(x->m, x->batches, x->n_batches);
        x->batches = NULL;
        x->n_batches = 0;
    }
    free(outs);
    calib_finish(c);
    log_msg(&o->log, AIT_LOG_DEBUG, "tune: int8 calibration: %d activation%s over %d run%s (%s)",
            c->out.n, c->out.n == 1 ? "" : "s", c->runs, c->runs == 1 ? "" : "s",
            o->calib_pct ? "percentile" : "min/max");
    return s;
}

static ait_status accuracy_pass(tune_ctx *x, const int *buckets, int nb, int nph, const int *of,
                               sample *view, int n_tm, ait_error *e)
{
    tune_report *r = x->rep;
    ait_status s = AIT_OK;
    for (int q = 0; s == AIT_OK && q < nb * nph && r->n_acc < 16; q++) {
        int bi = q / nph;
        sample_set sub = bucket_samples(x->o->samples, of, q % nph, view);
        s = make_batches(x->m, &sub, buckets[bi], 0, &x->batches, &x->n_batches, &x->n_groups, e);
        tensor ***in = s == AIT_OK ? calloc((size_t)x->n_batches + 1, sizeof *in) : NULL;
        if (s == AIT_OK && !in) s = err_set(e, AIT_E_NOMEM, "out of memory");
        for (int k = 0; s == AIT_OK && k < x->n_batches; k++) in[k] = x->batches[k].inputs;
        log_msg(&x->o->log, AIT_LOG_PROGRESS, "tune: end-to-end accuracy @ batch %d: %d sample "
                "batch%s against the reference", buckets[bi], x->n_batches,
                x->n_batches == 1 ? "" : "es");
        if (s == AIT_OK)
            s = acc_guard_bucket(x->m, x->insp, x->o, &r->budget, &r->mods[q * n_tm], n_tm,
                                 x->whole, (tensor *const *const *)in, x->n_batches,
                                 &r->acc[r->n_acc++], e);
        free(in);
        batches_free(x->m, x->batches, x->n_batches);
        x->batches = NULL;
        x->n_batches = 0;
    }
    return s;
}

/* Sample rows in all (a sample's size along its first batch axis). */
static int64_t sample_rows_all(const ait_model *m, const sample_set *set)
{
    int64_t n = 0;
    for (int i = 0; i < set->n; i++) n += sample_rows(m, &set->s[i]);
    return n;
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
    if (!o->samples || o->samples->n < 1)
        return err_set(e, AIT_E_INVALID_ARG, "%s: tuning needs at least one sample", m->path);
    if (o->backends && (o->n_backends < 1 || strcmp(o->backends[0]->name, "reference")))
        return err_set(e, AIT_E_INVALID_ARG, "tune: the first backend must be the reference");
    TRY(quant_check(o->quant, e));
    acc_budget budget;
    if (acc_budget_parse(o->accuracy_budget, &budget, e) != AIT_OK)
        return err_prefix(e, "tune: accuracy budget '%s': ", o->accuracy_budget);
    bool guard = (o->quant && *o->quant && strcmp(o->quant, "none")) || budget.has_sqnr ||
                 budget.has_top1 || budget.has_abs;
    int64_t rows = sample_rows_all(m, o->samples);
    if (guard && rows < ACC_MIN_ROWS)
        log_msg(&o->log, AIT_LOG_WARN, "tune: %lld tuning sample row%s: the end-to-end accuracy "
                "figures (and any calibration) rest on %s alone; give at least %d (--data) for "
                "them to mean much", (long long)rows, rows == 1 ? "" : "s",
                rows == 1 ? "it" : "them", ACC_MIN_ROWS);
    int n_mod = o->sel && o->sel->n ? o->sel->n : 1;
    bool whole = whole_wanted(o, m, insp);
    int n_tm = n_mod + whole; /* the whole module last at each bucket */
    int ph_seq[PLAN_MAX_BUCKETS], ph_past[PLAN_MAX_BUCKETS], nph = 1;
    int *of = calloc((size_t)o->samples->n, sizeof *of);
    sample *view = calloc((size_t)o->samples->n, sizeof *view);
    if (!of || !view) {
        free(of);
        free(view);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    ait_status s = seq_buckets_find(insp, o->samples, o->seq_buckets, o->n_seq, o->past_buckets,
                                    o->n_past, ph_seq, ph_past, &nph, of, e);
    if (s == AIT_OK && nb * nph > PLAN_MAX_BUCKETS)
        s = err_set(e, AIT_E_UNSUPPORTED, "%s: %d batch buckets x %d sequence and past buckets "
                    "make more than %d buckets", m->path, nb, nph, PLAN_MAX_BUCKETS);
    if (s != AIT_OK) {
        free(of);
        free(view);
        return s;
    }
    tune_report *r = calloc(1, sizeof *r);
    tune_ctx *x = calloc(1, sizeof *x);
    uint8_t(*mdig)[SHA256_BYTES] = calloc((size_t)n_tm, sizeof *mdig);
    bool *have = calloc((size_t)n_tm, sizeof *have);
    if (r) r->mods = calloc((size_t)(n_tm * nb * nph), sizeof *r->mods);
    if (!r || !r->mods || !x || !mdig || !have) {
        tune_report_free(r);
        free(x);
        free(mdig);
        free(have);
        free(of);
        free(view);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    r->budget = budget;
    *x = (tune_ctx){.m = m, .insp = insp, .o = o, .rep = r,
                    .prog = {.o = o, .n_steps = n_tm * nb * nph, .t0 = now_sec()}};
    cpu_model(x->cpu, sizeof x->cpu);
    size_t len = strlen(x->cpu);
    if (len + 2 < sizeof x->cpu) {
        x->cpu[len++] = ';';
        cpu_features(x->cpu + len, sizeof x->cpu - len);
    }
    cache_open(&x->cache, o->cache_dir, &o->log);
    s = exec_create(m->g, NULL, 1, &x->whole, e);
    if (s == AIT_OK) exec_keep_values(x->whole); /* module inputs are read after runs */
    if (s == AIT_OK && quant_wanted(o->quant, "int8"))
        s = calibrate(x, buckets[0], nph, of, view, e);
    for (int q = 0; s == AIT_OK && q < nb * nph; q++) {
        int bi = q / nph, pi = q % nph;
        sample_set sub = bucket_samples(o->samples, of, pi, view);
        s = make_batches(m, &sub, buckets[bi], o->max_batches, &x->batches, &x->n_batches,
                         &x->n_groups, e);
        x->whole_ran = -1;
        for (int k = 0; s == AIT_OK && k < n_mod; k++) {
            tune_module *tm = &r->mods[r->n++];
            tm->module = o->sel && o->sel->n ? o->sel->items[k].module : 0;
            tm->batch = buckets[bi];
            tm->seq = ph_seq[pi];
            tm->past = ph_past[pi];
            snprintf(tm->strategy, sizeof tm->strategy, "%s",
                     o->sel && o->sel->n ? o->sel->items[k].strategy : SELECT_DEFAULT_STRATEGY);
            x->prog.step = r->n;
            s = tune_one(x, tm, mdig[k], &have[k], e);
            if (s == AIT_OK) s = tune_choose(tm, o->margin, e);
        }
        tune_module *wm = NULL;
        if (s == AIT_OK && whole) {
            wm = &r->mods[r->n++];
            *wm = (tune_module){.module = 0, .batch = buckets[bi], .seq = ph_seq[pi],
                                .past = ph_past[pi], .whole = true};
            snprintf(wm->strategy, sizeof wm->strategy, "%s", SELECT_DEFAULT_STRATEGY);
            x->prog.step = r->n;
            s = tune_one(x, wm, mdig[n_mod], &have[n_mod], e);
            char only[64];
            if (s == AIT_OK)
                whole_choose(wm, o->whole == WHOLE_FORCE, whole_only(o, only, sizeof only) ? only : NULL);
        }
        /* A forced whole module makes the plan: nothing to check. */
        if (s == AIT_OK && o->plan_check && x->n_batches > 0 && !(wm && wm->chosen))
            s = plan_check_bucket(m, insp, o, &r->mods[r->n - n_tm], n_mod,
                                  o->whole == WHOLE_FORCE ? NULL : wm, x->batches[0].inputs,
                                  &r->checks[r->n_checks++], e);
        batches_free(m, x->batches, x->n_batches);
        x->batches = NULL;
        x->n_batches = 0;
    }
    if (s == AIT_OK) whole_settle(r);
    if (s == AIT_OK && guard) s = accuracy_pass(x, buckets, nb, nph, of, view, n_tm, e);
    free(of);
    free(view);
    log_msg(&o->log, AIT_LOG_PROGRESS, "%s", ""); /* the status line is done */
    r->cache_on = x->cache.on;
    if (x->cache.on) snprintf(r->cache_dir, sizeof r->cache_dir, "%s", x->cache.dir);
    r->cache_warnings = x->cache.warnings;
    exec_free(x->whole);
    free(x);
    free(mdig);
    free(have);
    if (s != AIT_OK) {
        tune_report_free(r);
        return s;
    }
    *out = r;
    return AIT_OK;
}
