/* The plan (see plan.h): reading it from a manifest, and choosing a bucket. */
#include "runtime/plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/artifact.h"

void plan_free(plan *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_modules; i++) {
        free(p->mods[i].name);
        for (int c = 0; c < p->mods[i].n_choices; c++) free(p->mods[i].choices[c].prep_store);
    }
    free(p->mods);
    free(p->batch_axes);
    free(p->inputs);
    free(p);
}

int plan_bucket_index(const plan *p, tensor *const *inputs, int n_inputs)
{
    int64_t batch = 1;
    for (int i = 0; i < p->n_batch_axes; i++) {
        const plan_batch_axis *a = &p->batch_axes[i];
        const tensor *t = a->input < n_inputs ? inputs[a->input] : NULL;
        if (!t || t->kind != VAL_TENSOR || a->axis >= t->rank || a->multiple < 1) continue;
        batch = t->dims[a->axis] / a->multiple;
        break;
    }
    for (int k = 0; k < p->n_buckets; k++)
        if (p->buckets[k] >= batch) return k;
    return p->n_buckets - 1;
}

ait_status plan_blob_name(int mi, int bucket, const char *name, char *out, size_t n,
                          ait_error *e)
{
    int len = snprintf(out, n, "p/%d/b%d/%s", mi, bucket, name);
    if (len < 0 || (size_t)len >= n)
        return err_set(e, AIT_E_UNSUPPORTED, "prepared blob name '%s' is too long", name);
    return AIT_OK;
}

/* ---- reading ------------------------------------------------------------ */

static ait_status bad_field(ait_error *e, const char *what, const char *field)
{
    return err_set(e, AIT_E_PARSE, "%s: the manifest's %s is missing or invalid", what, field);
}

/* The choice's prepared blobs: {"name": the backend's, "blob": the artifact's}; big
 * ones are made resident (artifact_blob_resident). */
static ait_status find_blobs(const json_val *jl, artifact *a, const char *what,
                             const char *mod, plan_choice *c, ait_error *e)
{
    int n = json_len(jl);
    if (!n) return AIT_OK;
    if (!(c->prep_store = calloc((size_t)n, sizeof *c->prep_store)))
        return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const char *name = json_str_of(json_get(json_at(jl, i), "name"));
        const char *blob = json_str_of(json_get(json_at(jl, i), "blob"));
        const artifact_blob *b = blob && a ? artifact_blob_find(a, blob) : NULL;
        if (!b || !name || !*name || strlen(name) >= sizeof c->prep_store[i].name)
            return err_set(e, AIT_E_PARSE, "%s: module '%s', candidate %s: prepared blob '%s' is "
                           "missing or misnamed", what, mod, c->cand, blob ? blob : "?");
        TRY(artifact_blob_resident(a, b, e));
        prep_blob *pb = &c->prep_store[c->prep.n++];
        snprintf(pb->name, sizeof pb->name, "%s", name);
        pb->data = b->data;
        pb->size = (size_t)b->size;
    }
    c->prep.blobs = c->prep_store;
    c->cfg.prep = &c->prep;
    return AIT_OK;
}

/* The priming shapes: per bucket, one {dtype, shape} per model input. */
static ait_status parse_priming(const json_val *jp, const graph *g, const char *what, plan *p,
                                ait_error *e)
{
    if (!jp) return AIT_OK; /* optional: without it, load does not prime */
    int n = g->n_inputs;
    if (json_len(jp) != p->n_buckets) return bad_field(e, what, "priming");
    if (!(p->inputs = calloc((size_t)(p->n_buckets * n) + 1, sizeof *p->inputs)))
        return err_set(e, AIT_E_NOMEM, "out of memory");
    p->n_inputs = n;
    for (int k = 0; k < p->n_buckets; k++) {
        const json_val *jb = json_at(jp, k);
        if (json_len(jb) != n) return bad_field(e, what, "priming");
        for (int i = 0; i < n; i++) {
            plan_shape *ps = &p->inputs[k * n + i];
            const json_val *js = json_get(json_at(jb, i), "shape");
            long long dt, d, numel = 1;
            if (!json_int_of(json_get(json_at(jb, i), "dtype"), 1, 64, &dt) ||
                !ait_dtype_size((ait_dtype)dt) || !js || js->kind != JSON_ARR ||
                js->n > AIT_MAX_RANK)
                return bad_field(e, what, "priming");
            ps->dtype = (ait_dtype)dt;
            ps->rank = js->n;
            for (int r = 0; r < js->n; r++) {
                /* At most 2^32 elements: a priming input is a real input's size. */
                if (!json_int_of(json_at(js, r), 0, 1LL << 32, &d) ||
                    (d && numel > (1LL << 32) / d))
                    return bad_field(e, what, "priming");
                numel *= d;
                ps->dims[r] = d;
            }
        }
    }
    return AIT_OK;
}

static ait_status parse_choice(const json_val *j, artifact *a, const char *what,
                               const char *mod, plan_choice *c, ait_error *e)
{
    long long bucket, threads;
    const char *bk = json_str_of(json_get(j, "backend"));
    const char *var = json_str_of(json_get(j, "variant"));
    const char *cand = json_str_of(json_get(j, "chosen"));
    char field[320];
    snprintf(field, sizeof field, "plan of module '%s'", mod);
    if (!json_int_of(json_get(j, "bucket"), 1, 1 << 29, &bucket) || (bucket & (bucket - 1)) ||
        !json_int_of(json_get(j, "threads"), 1, 1024, &threads) || !bk || !cand ||
        (var && strlen(var) >= sizeof c->cfg.variant) || strlen(cand) >= sizeof c->cand)
        return bad_field(e, what, field);
    const backend *b = backend_find(bk);
    if (!b)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s' runs on backend '%s', which this "
                       "build of ait does not have", what, mod, bk);
    char why[256] = "";
    if (b->available && !b->available(why, sizeof why))
        return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s' runs on backend '%s', which "
                       "cannot run here: %s", what, mod, bk, why);
    c->bucket = (int)bucket;
    c->cfg.backend = b->name;
    c->cfg.threads = (int)threads;
    snprintf(c->cfg.variant, sizeof c->cfg.variant, "%s", var ? var : "");
    snprintf(c->cand, sizeof c->cand, "%s", cand);
    return find_blobs(json_get(j, "blobs"), a, what, mod, c, e);
}

static ait_status parse_axes(const json_val *ja, const graph *g, const char *what, plan *p,
                             ait_error *e)
{
    int n = json_len(ja);
    p->batch_axes = calloc((size_t)n + 1, sizeof *p->batch_axes);
    if (!p->batch_axes) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const json_val *a = json_at(ja, i);
        const char *in = json_str_of(json_get(a, "input"));
        long long axis, mult;
        int idx = -1;
        for (int k = 0; in && k < g->n_inputs; k++)
            if (strcmp(g->vals[g->inputs[k]].name, in) == 0) idx = k;
        if (idx < 0 || !json_int_of(json_get(a, "axis"), 0, AIT_MAX_RANK - 1, &axis) ||
            !json_int_of(json_get(a, "multiple"), 1, 1 << 20, &mult))
            return bad_field(e, what, "batch_axes");
        p->batch_axes[p->n_batch_axes++] = (plan_batch_axis){idx, (int)axis, mult};
    }
    return AIT_OK;
}

ait_status plan_parse(const json_val *mf, const graph *g, artifact *a, const char *what,
                      plan **out, ait_error *e)
{
    *out = NULL;
    long long ver;
    const char *format = json_str_of(json_get(mf, "format"));
    if (!json_int_of(json_get(mf, "version"), 0, 1 << 20, &ver) || !format ||
        strcmp(format, "ait-plan") != 0)
        return err_set(e, AIT_E_PARSE, "%s: the manifest is not an ait plan", what);
    if (ver != PLAN_FORMAT_VERSION)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: plan format version %lld; this ait reads "
                       "version %d (tune the model again, or run it untuned with "
                       "--fallback-untuned)", what, ver, PLAN_FORMAT_VERSION);
    plan *p = calloc(1, sizeof *p);
    if (!p) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = AIT_OK;
    const json_val *jb = json_get(mf, "buckets"), *jm = json_get(mf, "modules");
    if (json_len(jb) < 1 || json_len(jb) > PLAN_MAX_BUCKETS || !jm || jm->kind != JSON_ARR)
        s = bad_field(e, what, "buckets or modules");
    for (int k = 0; s == AIT_OK && k < json_len(jb); k++) {
        long long b;
        if (!json_int_of(json_at(jb, k), 1, 1 << 29, &b) || (k && b <= p->buckets[k - 1]))
            s = bad_field(e, what, "buckets");
        else p->buckets[p->n_buckets++] = (int)b;
    }
    if (s == AIT_OK) s = parse_axes(json_get(mf, "batch_axes"), g, what, p, e);
    if (s == AIT_OK) s = parse_priming(json_get(mf, "priming"), g, what, p, e);
    if (s == AIT_OK && !(p->mods = calloc((size_t)json_len(jm) + 1, sizeof *p->mods)))
        s = err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; s == AIT_OK && i < json_len(jm); i++) {
        const json_val *m = json_at(jm, i), *jp = json_get(m, "plans");
        const char *name = json_str_of(json_get(m, "name"));
        plan_module *pm = &p->mods[p->n_modules];
        if (!name || json_len(jp) != p->n_buckets) {
            s = bad_field(e, what, "modules");
            break;
        }
        if (!(pm->name = strdup(name))) s = err_set(e, AIT_E_NOMEM, "out of memory");
        p->n_modules++;
        for (int k = 0; s == AIT_OK && k < p->n_buckets; k++) {
            s = parse_choice(json_at(jp, k), a, what, name, &pm->choices[k], e);
            pm->n_choices++; /* so that plan_free frees what it holds */
            if (s == AIT_OK && pm->choices[k].bucket != p->buckets[k])
                s = bad_field(e, what, "bucket order of a module's plans");
        }
    }
    if (s != AIT_OK) {
        plan_free(p);
        return s;
    }
    *out = p;
    return AIT_OK;
}
