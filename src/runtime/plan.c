/* The plan (see plan.h): reading it from a manifest, and choosing a bucket. */
#include "runtime/plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/artifact.h"
#include "io/sha256.h"

void plan_free(plan *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_modules; i++) {
        free(p->mods[i].name);
        for (int c = 0; c < p->mods[i].n_choices; c++) {
            plan_choice *pc = &p->mods[i].choices[c];
            for (int j = 0; pc->prep_node && pc->prep_node[j]; j++) free(pc->prep_node[j]);
            free(pc->prep_node);
            free(pc->prep_bn);
            free(pc->prep_store);
            free(pc->prep_src);
        }
    }
    free(p->mods);
    free(p->batch_axes);
    free(p->past);
    free(p->inputs);
    free(p);
}

int plan_pick(const int *list, int n, int64_t v)
{
    for (int k = 0; k < n; k++)
        if (list[k] >= v) return k;
    return n - 1;
}

/* Axis a of model input a.input in a run, or -1 when the run lacks it. */
static int64_t run_dim(plan_axis a, tensor *const *inputs, int n_inputs)
{
    const tensor *t = a.input >= 0 && a.input < n_inputs ? inputs[a.input] : NULL;
    return t && t->kind == VAL_TENSOR && a.axis < t->rank ? t->dims[a.axis] : -1;
}

static int key_part(const plan_key *b, int part)
{
    return part == 0 ? b->batch : part == 1 ? b->seq : b->past;
}

int plan_bucket_index(const plan *p, tensor *const *inputs, int n_inputs)
{
    int64_t want[3] = {1, 0, 0};
    for (int i = 0; i < p->n_batch_axes; i++) {
        const plan_batch_axis *a = &p->batch_axes[i];
        int64_t d = run_dim((plan_axis){a->input, a->axis}, inputs, n_inputs);
        if (d < 0 || a->multiple < 1) continue;
        want[0] = d / a->multiple;
        break;
    }
    if (p->seq.input >= 0) want[1] = run_dim(p->seq, inputs, n_inputs);
    if (p->n_past > 0) want[2] = run_dim(p->past[0], inputs, n_inputs);
    /* Narrowed one part at a time: the buckets agreeing with those picked so
     * far are a run of the sorted list. */
    int lo = 0, hi = p->n_buckets;
    for (int part = 0; part < 3; part++) {
        int vals[PLAN_MAX_BUCKETS], n = 0;
        for (int k = lo; k < hi; k++) {
            int v = key_part(&p->buckets[k], part);
            if (!n || vals[n - 1] != v) vals[n++] = v;
        }
        int v = vals[plan_pick(vals, n, want[part])], k = lo;
        while (k < hi && key_part(&p->buckets[k], part) != v) k++;
        lo = k;
        while (k < hi && key_part(&p->buckets[k], part) == v) k++;
        hi = k;
    }
    return lo;
}

ait_status plan_blob_name(int mi, plan_key bucket, const char *name, char *out, size_t n,
                          ait_error *e)
{
    int len = bucket.seq ? snprintf(out, n, "p/%d/b%d.s%d.p%d/%s", mi, bucket.batch, bucket.seq,
                                    bucket.past, name)
                         : snprintf(out, n, "p/%d/b%d/%s", mi, bucket.batch, name);
    if (len < 0 || (size_t)len >= n)
        return err_set(e, AIT_E_UNSUPPORTED, "prepared blob name '%s' is too long", name);
    return AIT_OK;
}

int plan_key_cmp(plan_key a, plan_key b)
{
    return a.batch != b.batch ? (a.batch < b.batch ? -1 : 1)
         : a.seq != b.seq     ? (a.seq < b.seq ? -1 : 1)
         : a.past != b.past   ? (a.past < b.past ? -1 : 1) : 0;
}

const char *plan_key_str(plan_key k, char *buf, size_t n)
{
    if (k.seq) snprintf(buf, n, "batch %d, seq %d, past %d", k.batch, k.seq, k.past);
    else snprintf(buf, n, "batch %d", k.batch);
    return buf;
}

const node *plan_blob_node(const graph *sub, const char *name)
{
    char *end;
    if (name[0] != 'w' || name[1] < '0' || name[1] > '9') return NULL;
    long i = strtol(name + 1, &end, 10);
    if (*end != '.' || i < 0 || i >= sub->n_nodes) return NULL;
    return &sub->nodes[i];
}

static int konst_inputs(const graph *g, const node *n, int *vals, int max, int k)
{
    for (int q = 0; q < n->n_in; q++)
        if (n->in[q] >= 0 && g->vals[n->in[q]].konst && k++ < max) vals[k - 1] = n->in[q];
    return k;
}

int plan_blob_weights(const graph *g, const node *n, bool with_bn, int *vals, int max)
{
    int k = konst_inputs(g, n, vals, max, 0);
    for (int i = 0; with_bn && n->n_out > 0 && n->out[0] >= 0 && i < g->n_nodes; i++) {
        const node *b = &g->nodes[i];
        if (b->n_in > 0 && b->in[0] == n->out[0] && !strcmp(b->op, "BatchNormalization") &&
            !(b->domain && b->domain[0]))
            k = konst_inputs(g, b, vals, max, k);
    }
    return k;
}

void plan_weight_digest(const tensor *t, char *hex)
{
    uint8_t d[SHA256_BYTES];
    sha256(t->data, t->data ? tensor_nbytes(t) : 0, d);
    sha256_hex(d, hex);
}

/* ---- reading ------------------------------------------------------------ */

static ait_status bad_field(ait_error *e, const char *what, const char *field)
{
    return err_set(e, AIT_E_PARSE, "%s: the manifest's %s is missing or invalid", what, field);
}

/* The model's node named name, or NULL. */
static const node *node_named(const graph *g, const char *name)
{
    for (int i = 0; name && i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) return &g->nodes[i];
    return NULL;
}

/* Whether blob name is "p/MI/bB/NAME" for module mi, a bucket B of the plan
 * and the entry's own NAME (plan_blob_name's form). */
static bool blob_name_ok(const plan *p, int mi, const char *blob, const char *name)
{
    char want[ARTIFACT_NAME_MAX];
    for (int k = 0; k < p->n_buckets; k++)
        if (plan_blob_name(mi, p->buckets[k], name, want, sizeof want, NULL) == AIT_OK &&
            strcmp(want, blob) == 0)
            return true;
    return false;
}

/* What blob entry jb was prepared from: "node", a node of the model, and
 * "weights", each of that node's constant inputs by name with the sha256 of
 * its bytes here; every constant input must be listed. */
static ait_status check_source(const json_val *jb, const graph *g, char (*dig)[SHA256_HEX],
                               const char *what, const char *mod, const char *blob,
                               const node **src, bool *bn, ait_error *e)
{
    const char *nn = json_str_of(json_get(jb, "node"));
    const json_val *jw = json_get(jb, "weights");
    const node *n = *src = node_named(g, nn);
    if (nn && !nn[0] && jw && jw->kind == JSON_ARR && json_len(jw) == 0)
        return AIT_OK; /* the module's own, from no weight: *src NULL */
    if (!n || !jw || jw->kind != JSON_ARR)
        return err_set(e, AIT_E_PARSE, "%s: module '%s': prepared blob '%s' does not name a node "
                       "of the model it was prepared from ('%s')", what, mod, blob, nn ? nn : "?");
    /* its own weights, or those and its BatchNormalization's */
    int ws[64], konst = plan_blob_weights(g, n, true, ws, 64);
    *bn = json_len(jw) == konst && konst > plan_blob_weights(g, n, false, ws, 64);
    if (!*bn) konst = plan_blob_weights(g, n, false, ws, 64);
    else plan_blob_weights(g, n, true, ws, 64);
    if (konst > 64)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s': prepared blob '%s': node '%s' has "
                       "more than 64 weights", what, mod, blob, n->name);
    for (int k = 0; k < konst; k++) {
        const value *v = &g->vals[ws[k]];
        const json_val *w = NULL;
        for (int q = 0; q < json_len(jw) && !w; q++)
            if (json_str_of(json_get(json_at(jw, q), "name")) &&
                strcmp(json_str_of(json_get(json_at(jw, q), "name")), v->name) == 0)
                w = json_at(jw, q);
        const char *sha = json_str_of(json_get(w, "sha256"));
        char *hex = dig[ws[k]]; /* once per weight: buckets and blobs share them */
        if (!hex[0] && v->absent) snprintf(hex, SHA256_HEX, "%s", v->absent); /* left out */
        else if (!hex[0]) plan_weight_digest(v->konst, hex);
        if (!sha || strcmp(sha, hex) != 0)
            return err_set(e, AIT_E_SECURITY, "%s: module '%s': prepared blob '%s' was not "
                           "prepared from weight '%s' of node '%s' (%s)", what, mod, blob,
                           v->name, n->name, sha ? "its sha256 differs" : "not listed");
    }
    if (json_len(jw) != konst)
        return err_set(e, AIT_E_SECURITY, "%s: module '%s': prepared blob '%s' lists %d weights; "
                       "node '%s' has %d (its BatchNormalization's included)", what, mod, blob,
                       json_len(jw), n->name, konst);
    return AIT_OK;
}

/* Prepared blob i of choice c: its data, the artifact's checked bytes, used
 * in place (the copy of the file is in huge pages where the system allows:
 * map_file, io/artifact_read.c). */
static ait_status bind_blob(plan_choice *c, int i, ait_error *e)
{
    const artifact_blob *b = c->prep_src[i];
    if (!b->data)
        return err_set(e, AIT_E_INTERNAL, "prepared blob '%s' was not read", b->name);
    c->prep_store[i].data = b->data;
    return AIT_OK;
}

ait_status plan_bind_blobs(plan *p, ait_error *e)
{
    for (int m = 0; m < p->n_modules; m++)
        for (int k = 0; k < p->mods[m].n_choices; k++) {
            plan_choice *c = &p->mods[m].choices[k];
            for (int i = 0; i < c->prep.n; i++)
                if (!c->prep_store[i].data) TRY(bind_blob(c, i, e));
        }
    return AIT_OK;
}

/* The choice's prepared blobs: {"name": the backend's, "blob": the artifact's,
 * "node", "weights"}, each bound to module mi and its source (plan.h). */
static ait_status find_blobs(const json_val *jl, const plan *p, int mi, const graph *g,
                             char (*dig)[SHA256_HEX], artifact *a, const char *what,
                             const char *mod, plan_choice *c, ait_error *e)
{
    int n = json_len(jl);
    if (!n) return AIT_OK;
    if (!(c->prep_store = calloc((size_t)n, sizeof *c->prep_store)) ||
        !(c->prep_node = calloc((size_t)n + 1, sizeof *c->prep_node)) || /* NULL-ended */
        !(c->prep_bn = calloc((size_t)n, sizeof *c->prep_bn)) ||
        !(c->prep_src = calloc((size_t)n, sizeof *c->prep_src)))
        return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const json_val *jb = json_at(jl, i);
        const char *name = json_str_of(json_get(jb, "name"));
        const char *blob = json_str_of(json_get(jb, "blob"));
        const artifact_blob *b = blob && a ? artifact_blob_find(a, blob) : NULL;
        if (!b || !name || !*name || strlen(name) >= sizeof c->prep_store[i].name)
            return err_set(e, AIT_E_PARSE, "%s: module '%s', candidate %s: prepared blob '%s' is "
                           "missing or misnamed", what, mod, c->cand, blob ? blob : "?");
        if (!blob_name_ok(p, mi, blob, name))
            return err_set(e, AIT_E_SECURITY, "%s: module '%s' (index %d), candidate %s: prepared "
                           "blob '%s' belongs to another module, bucket or name ('%s')", what,
                           mod, mi, c->cand, blob, name);
        const node *src;
        TRY(check_source(jb, g, dig, what, mod, blob, &src, &c->prep_bn[i], e));
        if (!(c->prep_node[i] = strdup(src ? src->name : "")))
            return err_set(e, AIT_E_NOMEM, "out of memory");
        prep_blob *pb = &c->prep_store[c->prep.n++];
        snprintf(pb->name, sizeof pb->name, "%s", name);
        pb->size = (size_t)b->size;
        c->prep_src[i] = b;
        if (b->data) TRY(bind_blob(c, i, e)); /* else once read: plan_bind_blobs */
    }
    c->prep.blobs = c->prep_store;
    c->cfg.prep = &c->prep;
    return AIT_OK;
}

/* What input i's priming shape must have at bucket b: -1, or the size of
 * each axis the plan reads a bucket from (the batch axis: b.batch x its
 * multiple; the sequence axis: b.seq; a past axis: b.past). */
static void bucket_dims(const plan *p, int i, plan_key b, int64_t want[AIT_MAX_RANK])
{
    for (int r = 0; r < AIT_MAX_RANK; r++) want[r] = -1;
    for (int k = 0; k < p->n_batch_axes; k++)
        if (p->batch_axes[k].input == i) {
            want[p->batch_axes[k].axis] = p->batch_axes[k].multiple * b.batch;
            break;
        }
    if (p->seq.input == i) want[p->seq.axis] = b.seq;
    for (int k = 0; k < p->n_past; k++)
        if (p->past[k].input == i) want[p->past[k].axis] = b.past;
}

/* Priming shape ps of model input v: the model's dtype and rank, its static
 * dims, the bucket's sizes (want, bucket_dims), and at most PLAN_PRIME_MAX
 * bytes (an input the load allocates and runs). */
static bool prime_ok(const plan_shape *ps, const value *v, const int64_t *want)
{
    if ((v->dtype != AIT_UNDEFINED && ps->dtype != v->dtype) || (v->rank >= 0 && ps->rank != v->rank))
        return false;
    int64_t bytes = (int64_t)ait_dtype_size(ps->dtype);
    for (int r = 0; r < ps->rank; r++) {
        int64_t d = ps->dims[r];
        if (v->rank >= 0 && v->dims[r] != DIM_UNKNOWN && d != v->dims[r]) return false;
        if (want[r] >= 0 && d != want[r]) return false;
        if (d && bytes > PLAN_PRIME_MAX / d) return false;
        bytes *= d;
    }
    return true;
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
            long long dt, d;
            if (!json_int_of(json_get(json_at(jb, i), "dtype"), 1, 64, &dt) ||
                !ait_dtype_size((ait_dtype)dt) || !js || js->kind != JSON_ARR ||
                js->n > AIT_MAX_RANK)
                return bad_field(e, what, "priming");
            ps->dtype = (ait_dtype)dt;
            ps->rank = js->n;
            for (int r = 0; r < js->n; r++) {
                if (!json_int_of(json_at(js, r), 0, 1LL << 40, &d)) /* prime_ok bounds it */
                    return bad_field(e, what, "priming");
                ps->dims[r] = d;
            }
            int64_t want[AIT_MAX_RANK];
            bucket_dims(p, i, p->buckets[k], want);
            const value *v = &g->vals[g->inputs[i]];
            char kb[64]; /* "1", or a decoder's "batch 1, seq 1, past 128" */
            if (p->buckets[k].seq) plan_key_str(p->buckets[k], kb, sizeof kb);
            else snprintf(kb, sizeof kb, "%d", p->buckets[k].batch);
            if (!prime_ok(ps, v, want))
                return err_set(e, AIT_E_PARSE, "%s: the manifest's priming shape of input '%s' at "
                               "bucket %s disagrees with the model (dtype, rank, static dims) or "
                               "the bucket (batch, sequence or past axis) or exceeds %lld bytes",
                               what, v->name, kb, (long long)PLAN_PRIME_MAX);
        }
    }
    return AIT_OK;
}

/* A bucket from j: the integer j (batch alone, seq false) or j's batch field
 * `bf` with "seq" and "past" (seq true: a decoder's); the batch a power of
 * two, each at most PLAN_BUCKET_MAX, seq at least 1. */
static bool key_of(const json_val *j, const char *bf, bool seq, plan_key *out)
{
    long long b, sq = 0, pa = 0;
    const json_val *jb = bf ? json_get(j, bf) : j;
    if (!json_int_of(jb, 1, PLAN_BUCKET_MAX, &b) || (b & (b - 1))) return false;
    if (seq && (!json_int_of(json_get(j, "seq"), 1, PLAN_BUCKET_MAX, &sq) ||
                !json_int_of(json_get(j, "past"), 0, PLAN_BUCKET_MAX, &pa)))
        return false;
    *out = (plan_key){(int)b, (int)sq, (int)pa};
    return true;
}

/* The model input named by j's "input" with j's "axis", an axis the model
 * does not fix (a static dim is no bucket), into *out. */
static bool axis_of(const json_val *j, const graph *g, plan_axis *out)
{
    const char *in = json_str_of(json_get(j, "input"));
    long long axis;
    for (int k = 0; in && k < g->n_inputs; k++) {
        const value *v = &g->vals[g->inputs[k]];
        if (strcmp(v->name, in) != 0) continue;
        if (!json_int_of(json_get(j, "axis"), 0, AIT_MAX_RANK - 1, &axis) ||
            (v->rank >= 0 && (axis >= v->rank || v->dims[axis] != DIM_UNKNOWN)))
            return false;
        *out = (plan_axis){k, (int)axis};
        return true;
    }
    return false;
}

/* A decoder's "sequence": its input and axis, and the cache inputs' past
 * axes (distinct inputs, none the sequence's). */
static ait_status parse_sequence(const json_val *js, const graph *g, const char *what, plan *p,
                                 ait_error *e)
{
    p->seq = (plan_axis){-1, 0};
    if (!js || js->kind == JSON_NULL) return AIT_OK;
    const json_val *jp = json_get(js, "past");
    int n = json_len(jp);
    if (!axis_of(js, g, &p->seq) || n < 1 || n > g->n_inputs ||
        !(p->past = calloc((size_t)n, sizeof *p->past)))
        return bad_field(e, what, "sequence");
    for (int k = 0; k < n; k++) {
        if (!axis_of(json_at(jp, k), g, &p->past[k])) return bad_field(e, what, "sequence");
        bool dup = p->past[k].input == p->seq.input;
        for (int q = 0; q < k; q++) dup |= p->past[q].input == p->past[k].input;
        if (dup) return bad_field(e, what, "sequence");
        p->n_past++;
    }
    return AIT_OK;
}

static ait_status parse_choice(const json_val *j, const plan *p, int mi, const graph *g,
                               char (*dig)[SHA256_HEX], artifact *a, const char *what,
                               const char *mod, plan_choice *c, ait_error *e)
{
    long long threads;
    const char *bk = json_str_of(json_get(j, "backend"));
    const char *var = json_str_of(json_get(j, "variant"));
    const char *cand = json_str_of(json_get(j, "chosen"));
    char field[320];
    snprintf(field, sizeof field, "plan of module '%s'", mod);
    plan_key key;
    if (!key_of(j, "bucket", p->seq.input >= 0, &key) ||
        !json_int_of(json_get(j, "threads"), 1, 1LL << 40, &threads) || !bk || !cand ||
        (var && strlen(var) >= sizeof c->cfg.variant) || strlen(cand) >= sizeof c->cand)
        return bad_field(e, what, field);
    if (threads > PLAN_THREADS_MAX)
        return err_set(e, AIT_E_PARSE, "%s: module '%s' asks for %lld threads (at most %d)", what,
                       mod, threads, PLAN_THREADS_MAX);
    const backend *b = backend_find(bk);
    if (!b)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s' runs on backend '%s', which this "
                       "build of ait does not have", what, mod, bk);
    char why[256] = "";
    if (b->available && !b->available(why, sizeof why))
        return err_set(e, AIT_E_UNSUPPORTED, "%s: module '%s' runs on backend '%s', which "
                       "cannot run here: %s", what, mod, bk, why);
    c->bucket = key;
    c->cfg.backend = b->name;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN); /* tuned elsewhere: no more than this machine has */
    c->cfg.threads = cpus > 0 && threads > cpus ? (int)cpus : (int)threads;
    snprintf(c->cfg.variant, sizeof c->cfg.variant, "%s", var ? var : "");
    snprintf(c->cand, sizeof c->cand, "%s", cand);
    return find_blobs(json_get(j, "blobs"), p, mi, g, dig, a, what, mod, c, e);
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
    if (s == AIT_OK) s = parse_sequence(json_get(mf, "sequence"), g, what, p, e);
    bool seq = p->seq.input >= 0;
    for (int k = 0; s == AIT_OK && k < json_len(jb); k++) {
        long long b;
        plan_key key;
        const json_val *j = json_at(jb, k);
        if (!seq && json_int_of(j, 1, 1LL << 40, &b) && b > PLAN_BUCKET_MAX)
            s = err_set(e, AIT_E_PARSE, "%s: the manifest's bucket %lld exceeds %d", what, b,
                        PLAN_BUCKET_MAX);
        else if (!key_of(j, seq ? "batch" : NULL, seq, &key) ||
                 (k && plan_key_cmp(key, p->buckets[k - 1]) <= 0))
            s = bad_field(e, what, seq ? "buckets (a decoder's: {batch, seq, past}, ascending)"
                                       : "buckets");
        else p->buckets[p->n_buckets++] = key;
    }
    if (s == AIT_OK) s = parse_axes(json_get(mf, "batch_axes"), g, what, p, e);
    if (s == AIT_OK) s = parse_priming(json_get(mf, "priming"), g, what, p, e);
    char (*dig)[SHA256_HEX] = calloc((size_t)g->n_vals + 1, sizeof *dig); /* weights' digests */
    if (s == AIT_OK && (!dig || !(p->mods = calloc((size_t)json_len(jm) + 1, sizeof *p->mods))))
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
            s = parse_choice(json_at(jp, k), p, i, g, dig, a, what, name, &pm->choices[k], e);
            pm->n_choices++; /* so that plan_free frees what it holds */
            if (s == AIT_OK && plan_key_cmp(pm->choices[k].bucket, p->buckets[k]) != 0)
                s = bad_field(e, what, "bucket order of a module's plans");
        }
    }
    free(dig);
    if (s != AIT_OK) {
        plan_free(p);
        return s;
    }
    *out = p;
    return AIT_OK;
}
