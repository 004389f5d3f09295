/* Writing a plan: from a tune report, into an artifact (see plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "io/artifact.h"
#include "io/file.h"
#include "runtime/model.h"
#include "runtime/plan_exec.h"
#include "runtime/plan.h"
#include "tune/buckets.h"
#include "tune/plan_build.h"
#include "tune/report.h"
#include "tune/result.h"

#define MODEL_MAX_BYTES ((size_t)1 << 31) /* protobuf's own limit */

/* Whether the plan is the whole module alone: the report has whole-module
 * entries and each was taken (the tuner leaves it at every bucket or none). */
static bool whole_plan(const tune_report *r)
{
    int n = 0, taken = 0;
    for (int i = 0; i < r->n; i++)
        if (r->mods[i].whole) n++, taken += r->mods[i].chosen > 0;
    return n && taken == n;
}

static plan_key key_of(const tune_module *tm) { return (plan_key){tm->batch, tm->seq, tm->past}; }

/* The report's entry of module at bucket among those the plan runs. */
static const tune_module *report_find(const tune_report *r, int module, plan_key bucket)
{
    bool whole = whole_plan(r);
    for (int i = 0; i < r->n; i++)
        if (r->mods[i].module == module && !plan_key_cmp(key_of(&r->mods[i]), bucket) &&
            r->mods[i].whole == whole)
            return &r->mods[i];
    return NULL;
}

/* Model input i's port in the whole model's graph spec, or NULL. */
static const port_spec *input_port(const inspection *insp, int i)
{
    const module_stats *root = &insp->st[0];
    for (int k = 0; k < root->n_ports; k++)
        if (!root->ports[k].output && root->ports[k].value == insp->m->g->inputs[i])
            return &root->ports[k];
    return NULL;
}

/* Model inputs with a batch axis, from the whole model's graph spec. */
static ait_status batch_axes_of(const inspection *insp, plan *p, ait_error *e)
{
    int n = insp->m->g->n_inputs;
    p->batch_axes = calloc((size_t)n + 1, sizeof *p->batch_axes);
    if (!p->batch_axes) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const port_spec *ps = input_port(insp, i);
        for (int d = 0; ps && d < ps->axes.rank; d++)
            if (ps->axes.kind[d] == AXIS_BATCH) {
                p->batch_axes[p->n_batch_axes++] = (plan_batch_axis){i, d, ps->axes.mult[d]};
                break;
            }
    }
    return AIT_OK;
}

/* A decoder's sequence and past axes (plan.h), when its buckets have them. */
static ait_status seq_axes_to(const inspection *insp, plan *p, ait_error *e)
{
    seq_axes sa;
    p->seq = (plan_axis){-1, 0};
    if (!p->n_buckets || !p->buckets[0].seq || !seq_axes_of(insp, &sa)) return AIT_OK;
    if (!(p->past = calloc((size_t)sa.n_past, sizeof *p->past)))
        return err_set(e, AIT_E_NOMEM, "out of memory");
    p->seq = sa.seq;
    p->n_past = sa.n_past;
    memcpy(p->past, sa.past, sizeof *p->past * (size_t)sa.n_past);
    return AIT_OK;
}

/* The model's inputs at each bucket, from the whole model's graph spec:
 * batch axes at the bucket (x their multiple), a decoder's sequence and past
 * axes at the bucket's, so that the load primes the largest shape of each
 * bucket; other dynamic axes at the largest size seen. */
static ait_status priming_of(const inspection *insp, plan *p, ait_error *e)
{
    int n = insp->m->g->n_inputs;
    if (!(p->inputs = calloc((size_t)(p->n_buckets * n) + 1, sizeof *p->inputs)))
        return err_set(e, AIT_E_NOMEM, "out of memory");
    p->n_inputs = n;
    for (int i = 0; i < n; i++) {
        const port_spec *ps = input_port(insp, i);
        if (!ps) { /* not observed: no priming */
            p->n_inputs = 0;
            return AIT_OK;
        }
        for (int k = 0; k < p->n_buckets; k++) {
            plan_shape *sh = &p->inputs[k * n + i];
            plan_key b = p->buckets[k];
            sh->dtype = ps->dtype;
            sh->rank = ps->axes.rank;
            for (int d = 0; d < ps->axes.rank; d++)
                sh->dims[d] = ps->axes.kind[d] == AXIS_BATCH ? ps->axes.mult[d] * b.batch
                            : ps->axes.max[d];
            if (p->seq.input == i) sh->dims[p->seq.axis] = b.seq;
            for (int q = 0; q < p->n_past; q++)
                if (p->past[q].input == i) sh->dims[p->past[q].axis] = b.past;
        }
    }
    return AIT_OK;
}

ait_status plan_from_report(const inspection *insp, const tune_report *r, plan **out,
                            ait_error *e)
{
    *out = NULL;
    plan *p = calloc(1, sizeof *p);
    int *mod_ids = calloc((size_t)r->n + 1, sizeof *mod_ids);
    if (p) p->mods = calloc((size_t)r->n + 1, sizeof *p->mods);
    ait_status s = p && p->mods && mod_ids ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    /* Buckets ascending, modules in order of first appearance; the whole
     * module alone, or everything else. */
    bool whole = whole_plan(r);
    for (int i = 0; s == AIT_OK && i < r->n; i++) {
        const tune_module *tm = &r->mods[i];
        if (tm->whole != whole) continue;
        int k = 0;
        plan_key key = key_of(tm);
        while (k < p->n_buckets && plan_key_cmp(p->buckets[k], key) < 0) k++;
        if (k == p->n_buckets || plan_key_cmp(p->buckets[k], key)) {
            if (p->n_buckets == PLAN_MAX_BUCKETS) {
                s = err_set(e, AIT_E_UNSUPPORTED, "more than %d buckets", PLAN_MAX_BUCKETS);
                break;
            }
            memmove(&p->buckets[k + 1], &p->buckets[k],
                    sizeof *p->buckets * (size_t)(p->n_buckets - k));
            p->buckets[k] = key;
            p->n_buckets++;
        }
        bool seen = false;
        for (int j = 0; j < p->n_modules; j++) seen |= mod_ids[j] == tm->module;
        if (seen) continue;
        mod_ids[p->n_modules] = tm->module;
        p->mods[p->n_modules].name = strdup(insp->tree->mods[tm->module].name);
        if (!p->mods[p->n_modules++].name) s = err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (int j = 0; s == AIT_OK && j < p->n_modules; j++) {
        plan_module *pm = &p->mods[j];
        for (int k = 0; s == AIT_OK && k < p->n_buckets; k++) {
            const tune_module *tm = report_find(r, mod_ids[j], p->buckets[k]);
            if (!tm) {
                char kb[64];
                s = err_set(e, AIT_E_INVALID_ARG, "module '%s' was not tuned at %s", pm->name,
                            plan_key_str(p->buckets[k], kb, sizeof kb));
                break;
            }
            const tune_cand *tc = &tm->cands[tm->chosen];
            plan_choice *c = &pm->choices[pm->n_choices++];
            c->bucket = key_of(tm);
            c->cfg = tc->cfg; /* its backend names a registry entry (the tuner's) */
            c->cfg.prep = NULL;
            c->cfg.gemm_seen = NULL; /* cfg.gemm stays: the tuning owns it while it saves */
            snprintf(c->cand, sizeof c->cand, "%s", tc->name);
        }
    }
    if (s == AIT_OK) s = batch_axes_of(insp, p, e);
    if (s == AIT_OK) s = seq_axes_to(insp, p, e);
    if (s == AIT_OK) s = priming_of(insp, p, e);
    free(mod_ids);
    if (s != AIT_OK) {
        plan_free(p);
        return s;
    }
    *out = p;
    return AIT_OK;
}

/* ---- the artifact ----------------------------------------------------------- */

/* A prepared blob as saved: whose it is, the backend's name, the artifact's. */
typedef struct saved_blob {
    int mod, choice;
    const graph *sub; /* the module graph its node index refers to */
    char name[64];
    char blob[ARTIFACT_NAME_MAX];
    const void *data;
    size_t size;
} saved_blob;

typedef struct saved_list {
    int n, cap;
    saved_blob *items;
} saved_list;

static void choice_json(json_w *w, const plan *p, int mi, int k, const tune_module *tm,
                        const saved_list *sl)
{
    const plan_choice *c = &p->mods[mi].choices[k];
    json_obj(w, NULL);
    json_int(w, "bucket", c->bucket.batch);
    if (c->bucket.seq) {
        json_int(w, "seq", c->bucket.seq);
        json_int(w, "past", c->bucket.past);
    }
    json_str(w, "strategy", tm->strategy);
    json_str(w, "chosen", c->cand);
    json_str(w, "backend", c->cfg.backend);
    json_int(w, "threads", c->cfg.threads);
    json_str(w, "variant", c->cfg.variant);
    json_str(w, "why", tm->why);
    const tune_cand *tc = &tm->cands[tm->chosen], *base = &tm->cands[0];
    json_num(w, "median_ms", tc->prof.median * 1e3);
    json_num(w, "baseline_ms", base->valid ? base->prof.median * 1e3 : 0);
    json_num(w, "speedup", tc->speedup);
    json_arr(w, "blobs");
    for (int i = 0; i < sl->n; i++) {
        if (sl->items[i].mod != mi || sl->items[i].choice != k) continue;
        json_obj(w, NULL);
        json_str(w, "name", sl->items[i].name);
        json_str(w, "blob", sl->items[i].blob);
        /* What it was prepared from (plan.h): the load checks each. */
        const graph *sub = sl->items[i].sub;
        const node *n = sub ? plan_blob_node(sub, sl->items[i].name) : NULL;
        json_str(w, "node", n ? n->name : "");
        json_arr(w, "weights");
        int ws[64], nw = n ? plan_blob_weights(sub, n, true, ws, 64) : 0;
        for (int q = 0; q < nw && q < 64; q++) {
            const value *v = &sub->vals[ws[q]];
            char hex[SHA256_HEX];
            plan_weight_digest(v->konst, hex);
            json_obj(w, NULL);
            json_str(w, "name", v->name);
            json_str(w, "sha256", hex);
            json_end(w);
        }
        json_end(w);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

/* The model blob of an artifact being written: the ONNX file, or the lean
 * model (n_left weights left out) in its stead. */
typedef struct model_blob {
    const uint8_t *bytes;
    size_t len;      /* the ONNX file's */
    const char *sha; /* the ONNX file's sha256 hex */
    const uint8_t *lean;
    size_t lean_len;
    int n_left;
} model_blob;

static char *manifest_json(const ait_model *m, const inspection *insp, const tune_report *r,
                           const plan *p, const int *mod_ids, const model_blob *mb,
                           const saved_list *sl, ait_error *e)
{
    json_w w = {.pretty = true};
    char cpu[256], feat[ARTIFACT_CPU_MAX];
    cpu_model(cpu, sizeof cpu);
    cpu_features(feat, sizeof feat);
    const char *base = strrchr(m->path, '/');
    json_obj(&w, NULL);
    json_str(&w, "format", "ait-plan");
    json_int(&w, "version", PLAN_FORMAT_VERSION);
    json_str(&w, "ait_version", AIT_VERSION_STRING);
    json_obj(&w, "model");
    json_str(&w, "name", base ? base + 1 : m->path);
    json_str(&w, "sha256", mb->sha);
    json_str(&w, "blob", mb->n_left ? PLAN_MODEL_LEAN_BLOB : PLAN_MODEL_BLOB);
    json_int(&w, "bytes", (int64_t)mb->len);
    if (mb->n_left) {
        json_int(&w, "left_out", mb->n_left);
        json_int(&w, "lean_bytes", (int64_t)mb->lean_len);
    }
    json_end(&w);
    json_obj(&w, "cpu");
    json_str(&w, "name", cpu);
    json_str(&w, "features", feat);
    json_end(&w);
    json_arr(&w, "batch_axes");
    for (int i = 0; i < p->n_batch_axes; i++) {
        json_obj(&w, NULL);
        json_str(&w, "input", m->g->vals[m->g->inputs[p->batch_axes[i].input]].name);
        json_int(&w, "axis", p->batch_axes[i].axis);
        json_int(&w, "multiple", p->batch_axes[i].multiple);
        json_end(&w);
    }
    json_end(&w);
    if (p->seq.input >= 0) {
        const graph *g = m->g;
        json_obj(&w, "sequence");
        json_str(&w, "input", g->vals[g->inputs[p->seq.input]].name);
        json_int(&w, "axis", p->seq.axis);
        json_arr(&w, "past");
        for (int q = 0; q < p->n_past; q++) {
            json_obj(&w, NULL);
            json_str(&w, "input", g->vals[g->inputs[p->past[q].input]].name);
            json_int(&w, "axis", p->past[q].axis);
            json_end(&w);
        }
        json_end(&w);
        json_end(&w);
    }
    json_arr(&w, "buckets");
    for (int k = 0; k < p->n_buckets; k++) {
        if (!p->buckets[k].seq) {
            json_int(&w, NULL, p->buckets[k].batch);
            continue;
        }
        json_obj(&w, NULL);
        json_int(&w, "batch", p->buckets[k].batch);
        json_int(&w, "seq", p->buckets[k].seq);
        json_int(&w, "past", p->buckets[k].past);
        json_end(&w);
    }
    json_end(&w);
    if (p->n_inputs) {
        json_arr(&w, "priming");
        for (int k = 0; k < p->n_buckets; k++) {
            json_arr(&w, NULL);
            for (int i = 0; i < p->n_inputs; i++) {
                const plan_shape *sh = &p->inputs[k * p->n_inputs + i];
                json_obj(&w, NULL);
                json_int(&w, "dtype", sh->dtype);
                json_arr(&w, "shape");
                for (int d = 0; d < sh->rank; d++) json_int(&w, NULL, sh->dims[d]);
                json_end(&w);
                json_end(&w);
            }
            json_end(&w);
        }
        json_end(&w);
    }
    json_arr(&w, "modules");
    for (int i = 0; i < p->n_modules; i++) {
        json_obj(&w, NULL);
        json_str(&w, "name", p->mods[i].name);
        json_int(&w, "nodes", insp->st[mod_ids[i]].n_nodes);
        json_arr(&w, "plans");
        for (int k = 0; k < p->n_buckets; k++)
            choice_json(&w, p, i, k, report_find(r, mod_ids[i], p->buckets[k]), sl);
        json_end(&w);
        json_end(&w);
    }
    json_end(&w);
    /* Every candidate's measurements, as tune --json gives them, and the
     * tuned modules' graph specs, as inspect --json does. */
    json_key(&w, "tuning");
    tune_report_json(&w, insp, r);
    json_key(&w, "inspection");
    report_json(&w, insp, NULL, mod_ids, p->n_modules);
    json_end(&w);
    return json_finish(&w, e);
}

/* Adds every build's prepared blobs to the artifact, each distinct content
 * of a module once: buckets that prepared the same bytes under the same name
 * share the blob (the load binds each blob to its name: the same bytes under
 * another name, e.g. oneDNN's weights in two formats that happen to agree,
 * get a blob of their own). */
static ait_status add_prepared(artifact_writer *w, const plan *p, plan_exec *px, saved_list *sl,
                               ait_error *e)
{
    for (int i = 0; i < p->n_modules; i++)
        for (int k = 0; k < p->mods[i].n_choices; k++) {
            prepared prep;
            TRY(plan_exec_prepared(px, i, k, &prep, e));
            for (int j = 0; j < prep.n; j++) {
                const prep_blob *pb = &prep.blobs[j];
                if (sl->n == sl->cap) {
                    int cap = sl->cap ? 2 * sl->cap : 16;
                    saved_blob *items = realloc(sl->items, sizeof *items * (size_t)cap);
                    if (!items) return err_set(e, AIT_E_NOMEM, "out of memory");
                    sl->items = items, sl->cap = cap;
                }
                saved_blob *sb = &sl->items[sl->n];
                *sb = (saved_blob){.mod = i, .choice = k, .sub = plan_exec_module_graph(px, i),
                                   .data = pb->data, .size = pb->size};
                snprintf(sb->name, sizeof sb->name, "%s", pb->name);
                const saved_blob *same = NULL;
                for (int q = 0; q < sl->n && !same; q++) /* the load binds name to blob */
                    if (sl->items[q].mod == i && strcmp(sl->items[q].name, pb->name) == 0 &&
                        sl->items[q].size == pb->size &&
                        memcmp(sl->items[q].data, pb->data, pb->size) == 0)
                        same = &sl->items[q];
                if (same) {
                    snprintf(sb->blob, sizeof sb->blob, "%s", same->blob);
                } else {
                    TRY(plan_blob_name(i, p->mods[i].choices[k].bucket, pb->name, sb->blob,
                                       sizeof sb->blob, e));
                    TRY(artifact_writer_blob(w, sb->blob, pb->data, pb->size, e));
                }
                sl->n++;
            }
        }
    return AIT_OK;
}

/* What the plan's chosen backends assume of the CPU (backend.cpu_needs),
 * in canonical order: the artifact's needed features, so that a plan on
 * portable backends loads on any machine. The binary itself is portable. */
static void plan_cpu_needs(const plan *p, char *out, size_t n)
{
    char all[1024] = "", one[256];
    size_t len = 0;
    for (int i = 0; i < p->n_modules; i++)
        for (int k = 0; k < p->mods[i].n_choices; k++) {
            const backend *b = backend_find(p->mods[i].choices[k].cfg.backend);
            if (!b || !b->cpu_needs) continue;
            b->cpu_needs(one, sizeof one);
            if (*one && len + strlen(one) + 2 < sizeof all)
                len += (size_t)snprintf(all + len, sizeof all - len, ",%s", one);
        }
    cpu_features_of(all, out, n);
}


/* Writes the artifact at path: model blob mb, px's prepared blobs, the manifest. */
static ait_status write_artifact(const ait_model *m, const inspection *insp, const tune_report *r,
                                 const plan *p, plan_exec *px, const int *mod_ids,
                                 const model_blob *mb, const char *path, ait_error *e)
{
    char needs[ARTIFACT_CPU_MAX];
    plan_cpu_needs(p, needs, sizeof needs);
    artifact_info info = {.model_hash = mb->sha, .cpu_features = needs};
    artifact_writer *w = NULL;
    char *mf = NULL;
    saved_list saved = {0};
    ait_status s = artifact_writer_begin(path, &info, &w, e);
    if (s == AIT_OK)
        s = mb->n_left ? artifact_writer_blob(w, PLAN_MODEL_LEAN_BLOB, mb->lean, mb->lean_len, e)
                       : artifact_writer_blob(w, PLAN_MODEL_BLOB, mb->bytes, mb->len, e);
    if (s == AIT_OK) s = add_prepared(w, p, px, &saved, e);
    if (s == AIT_OK && !(mf = manifest_json(m, insp, r, p, mod_ids, mb, &saved, e)))
        s = e ? e->code : AIT_E_NOMEM;
    if (s == AIT_OK) s = artifact_writer_manifest(w, mf, strlen(mf), e);
    if (s == AIT_OK) {
        s = artifact_writer_finish(w, e);
        w = NULL;
    }
    artifact_writer_free(w);
    free(saved.items);
    free(mf);
    return s;
}

/* Whether plan p holds a quantised choice (its backend's min_sqnr bound). */
static bool plan_quantised(const plan *p)
{
    for (int i = 0; i < p->n_modules; i++)
        for (int k = 0; k < p->mods[i].n_choices; k++) {
            const candidate_cfg *c = &p->mods[i].choices[k].cfg;
            const backend *b = backend_find(c->backend);
            if (c->variant[0] && b && b->min_sqnr && b->min_sqnr(c->variant) > 0) return true;
        }
    return false;
}

ait_status plan_save(const ait_model *m, const inspection *insp, const tune_report *r,
                     const char *path, ait_error *e)
{
    uint8_t *bytes = NULL, digest[SHA256_BYTES];
    size_t len = 0;
    char sha[SHA256_HEX];
    /* The artifact embeds the ONNX file alone, which loads from memory only
     * without external data. */
    if (m->n_external)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: cannot embed the model in the artifact: %d of "
                       "its tensors are in external data files", m->path, m->n_external);
    TRY(file_read_all(m->path, MODEL_MAX_BYTES, &bytes, &len, e));
    sha256(bytes, len, digest);
    sha256_hex(digest, sha);
    ait_status s;
    plan *p = NULL;
    plan_exec *px = NULL;
    int *mod_ids = calloc((size_t)r->n + 1, sizeof *mod_ids);
    s = mod_ids ? plan_from_report(insp, r, &p, e) : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; s == AIT_OK && i < p->n_modules; i++)
        mod_ids[i] = module_find(insp->tree, p->mods[i].name);
    /* The plan as a session will run it: every candidate built and primed,
     * which also proves that the tuned model runs as one. */
    if (s == AIT_OK) s = plan_exec_create(m->g, p, 1, NULL, &px, e);
    model_blob mb = {.bytes = bytes, .len = len, .sha = sha};
    if (s == AIT_OK) s = write_artifact(m, insp, r, p, px, mod_ids, &mb, path, e);
    /* A quantised plan: written once more with the lean model when its
     * prepared blobs replace weights (plan_lean_model reads them back as a
     * session would). A float32 plan keeps the ONNX file, for the fallback. */
    uint8_t *lean = NULL;
    if (s == AIT_OK && plan_quantised(p))
        s = plan_lean_model(m, path, bytes, len, &lean, &mb.lean_len, &mb.n_left, e);
    mb.lean = lean;
    if (s == AIT_OK && mb.n_left) s = write_artifact(m, insp, r, p, px, mod_ids, &mb, path, e);
    free(lean);
    plan_exec_free(px);
    free(mod_ids);
    plan_free(p);
    free(bytes);
    return s;
}
