/* The tuner's results cache (see cache.h): keys, entry files, clearing. */
#include "io/file.h"
#include "io/publish.h"
#include "tune/cache.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/json.h"
#include "io/json_read.h"
#include "runtime/model.h"
#include "io/npy.h"

/* ---- warnings ---- */

static void warn(tune_cache *c, const char *fmt, ...) AIT_PRINTF(2, 3);
static void warn(tune_cache *c, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_msg(c->log, AIT_LOG_WARN, "cache: %s", msg);
    c->warnings++;
}

/* ---- the folder ---- */

/* mkdir -p; returns 0 or -1 with errno. */
static int make_dirs(const char *path)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) && errno != EEXIST) return -1;
        *s = '/';
    }
    if (mkdir(p, 0755) && errno != EEXIST) return -1;
    struct stat st;
    if (stat(p, &st)) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

void cache_open(tune_cache *c, const char *dir, const logger *log)
{
    *c = (tune_cache){.log = log};
    if (!dir) return;
    if (snprintf(c->dir, sizeof c->dir, "%s", dir) >= (int)sizeof c->dir) {
        warn(c, "the folder name is too long: tuning without a cache");
        return;
    }
    if (make_dirs(dir)) {
        warn(c, "%s: cannot use the folder (%s): tuning without a cache", dir, strerror(errno));
        return;
    }
    c->on = true;
}

/* Whether name is an entry's (or an entry's temp file's). */
static bool entry_name(const char *name)
{
    size_t np = strlen(CACHE_PREFIX), ns = strlen(CACHE_SUFFIX);
    if (strncmp(name, CACHE_PREFIX, np)) return false;
    const char *h = name + np;
    for (int i = 0; i < 64; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'))) return false;
    const char *rest = h + 64;
    if (strncmp(rest, CACHE_SUFFIX, ns)) return false;
    rest += ns;
    if (!*rest) return true;
    if (strncmp(rest, ".tmp.", 5) || !rest[5]) return false; /* file_write_atomic's temp */
    for (rest += 5; *rest; rest++)
        if (*rest < '0' || *rest > '9') return false;
    return true;
}

ait_status cache_clear(const char *dir, int *removed, ait_error *e)
{
    if (removed) *removed = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return AIT_OK;
        return err_set(e, AIT_E_IO, "%s: cannot read the cache folder: %s", dir, strerror(errno));
    }
    ait_status s = AIT_OK;
    for (struct dirent *de; s == AIT_OK && (de = readdir(d));) {
        if (!entry_name(de->d_name)) continue;
        char p[4400];
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p) continue;
        if (lstat(p, &st) || !S_ISREG(st.st_mode)) continue; /* only files ait wrote */
        if (unlink(p)) s = err_set(e, AIT_E_IO, "%s: cannot remove: %s", p, strerror(errno));
        else if (removed) (*removed)++;
    }
    closedir(d);
    return s;
}

/* ---- keys ---- */

void cache_hash_i64(sha256_ctx *h, int64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)v >> (8 * i));
    sha256_update(h, b, sizeof b);
}

void cache_hash_f64(sha256_ctx *h, double v)
{
    int64_t bits;
    memcpy(&bits, &v, sizeof bits);
    cache_hash_i64(h, bits);
}

void cache_hash_str(sha256_ctx *h, const char *s)
{
    if (!s) return cache_hash_i64(h, -1);
    size_t n = strlen(s);
    cache_hash_i64(h, (int64_t)n);
    sha256_update(h, s, n);
}

void cache_hash_tensor(sha256_ctx *h, const tensor *t)
{
    if (!t) return cache_hash_i64(h, -1);
    cache_hash_i64(h, t->kind);
    cache_hash_i64(h, t->dtype);
    cache_hash_i64(h, t->rank);
    for (int d = 0; d < t->rank; d++) cache_hash_i64(h, t->dims[d]);
    if (t->kind == VAL_SEQUENCE || t->kind == VAL_MAP) { /* a map: keys, values */
        cache_hash_i64(h, t->n_items);
        for (int i = 0; i < t->n_items; i++) cache_hash_tensor(h, &t->items[i]);
        return;
    }
    size_t n = t->kind == VAL_TENSOR && t->data ? tensor_nbytes(t) : 0;
    cache_hash_i64(h, (int64_t)n);
    if (n && t->dtype == AIT_STRING) { /* the strings, not their addresses */
        for (int64_t i = 0, k = tensor_numel(t); i < k; i++) {
            const char *s = tensor_str(t, i);
            cache_hash_i64(h, (int64_t)strlen(s));
            sha256_update(h, s, strlen(s));
        }
    } else if (n) {
        sha256_update(h, t->data, n);
    }
}

static void hash_value_type(sha256_ctx *h, const value *v)
{
    cache_hash_i64(h, v->dtype);
    cache_hash_i64(h, v->kind);
    cache_hash_i64(h, v->rank);
    for (int d = 0; d < v->rank; d++) cache_hash_i64(h, v->dims[d]);
}

static void hash_attr(sha256_ctx *h, const attr *a)
{
    cache_hash_str(h, a->name);
    cache_hash_i64(h, a->type);
    cache_hash_f64(h, a->f);
    cache_hash_i64(h, a->i);
    cache_hash_str(h, a->s);
    cache_hash_i64(h, a->n);
    for (int k = 0; a->floats && k < a->n; k++) cache_hash_f64(h, a->floats[k]);
    for (int k = 0; a->ints && k < a->n; k++) cache_hash_i64(h, a->ints[k]);
    for (int k = 0; a->strings && k < a->n; k++) cache_hash_str(h, a->strings[k]);
    cache_hash_tensor(h, a->t);
    cache_hash_i64(h, a->g != NULL);
    if (a->g) cache_hash_graph(h, a->g);
}

void cache_hash_graph(sha256_ctx *h, const graph *g)
{
    cache_hash_str(h, "graph");
    cache_hash_i64(h, g->opset);
    cache_hash_i64(h, g->n_inputs);
    for (int k = 0; k < g->n_inputs; k++) {
        cache_hash_i64(h, g->inputs[k]);
        hash_value_type(h, &g->vals[g->inputs[k]]);
    }
    cache_hash_i64(h, g->n_outputs);
    for (int k = 0; k < g->n_outputs; k++) {
        cache_hash_i64(h, g->outputs[k]);
        hash_value_type(h, &g->vals[g->outputs[k]]);
    }
    cache_hash_i64(h, g->n_vals);
    for (int v = 0; v < g->n_vals; v++) {
        if (g->vals[v].konst) {
            cache_hash_i64(h, v);
            hash_value_type(h, &g->vals[v]);
        }
        if (g->vals[v].outer >= 0) { /* a subgraph's read of its parent */
            cache_hash_i64(h, v);
            cache_hash_i64(h, g->vals[v].outer);
        }
    }
    cache_hash_i64(h, g->n_nodes);
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        cache_hash_str(h, n->op);
        cache_hash_str(h, n->domain);
        cache_hash_i64(h, n->dead);
        cache_hash_i64(h, n->n_in);
        for (int k = 0; k < n->n_in; k++) cache_hash_i64(h, n->in[k]);
        cache_hash_i64(h, n->n_out);
        for (int k = 0; k < n->n_out; k++) cache_hash_i64(h, n->out[k]);
        cache_hash_i64(h, n->n_attr);
        for (int k = 0; k < n->n_attr; k++) hash_attr(h, &n->attrs[k]);
    }
}

void cache_hash_weights(sha256_ctx *h, const graph *g)
{
    cache_hash_str(h, "weights");
    for (int v = 0; v < g->n_vals; v++)
        if (g->vals[v].konst) {
            cache_hash_i64(h, v);
            cache_hash_tensor(h, g->vals[v].konst);
        }
    for (int i = 0; i < g->n_nodes; i++) /* the constants of If, Loop and Scan bodies */
        for (int a = 0; a < g->nodes[i].n_attr; a++)
            if (g->nodes[i].attrs[a].g) cache_hash_weights(h, g->nodes[i].attrs[a].g);
}

/* ---- entries ---- */

static bool entry_path(const tune_cache *c, const char *key, char *p, size_t n)
{
    return snprintf(p, n, "%s/" CACHE_PREFIX "%s" CACHE_SUFFIX, c->dir, key) < (int)n;
}

/* Numbers JSON cannot hold (SQNR of identical outputs is +inf) are
 * written as the strings "inf", "-inf" and "nan". */
static void put_num(json_w *w, const char *key, double v)
{
    if (isfinite(v)) json_num(w, key, v);
    else json_str(w, key, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static bool get_num(const json_val *o, const char *key, double *v)
{
    const json_val *x = json_get(o, key);
    const char *s = json_str_of(x);
    if (!s) return json_num_of(x, v);
    if (!strcmp(s, "inf")) *v = INFINITY;
    else if (!strcmp(s, "-inf")) *v = -INFINITY;
    else if (!strcmp(s, "nan")) *v = NAN;
    else return false;
    return true;
}

static bool get_bool(const json_val *o, const char *key, bool *v)
{
    const json_val *x = json_get(o, key);
    if (!x || x->kind != JSON_BOOL) return false;
    *v = x->b;
    return true;
}

/* The entry document into *r; NULL when it is good, else why not. */
static const char *parse_entry(const json_val *d, const char *key, const char *name, tune_cand *r)
{
    long long fmt, runs;
    const char *reason = json_str_of(json_get(d, "reason"));
    const json_val *p = json_get(d, "profile");
    profile_result q = {0};
    bool valid, conv;
    double max_rel, sqnr;
    if (!d || d->kind != JSON_OBJ) return "not a JSON object";
    if (!json_int_of(json_get(d, "format"), 0, 1 << 30, &fmt) ||
        strcmp(json_str_of(json_get(d, "kind")) ? json_str_of(json_get(d, "kind")) : "",
               "ait tune trial"))
        return "not an ait tune cache entry";
    if (fmt != CACHE_FORMAT) return "another format version";
    if (!json_str_of(json_get(d, "key")) || strcmp(json_str_of(json_get(d, "key")), key))
        return "its key is missing or another";
    if (!json_str_of(json_get(d, "candidate")) || strcmp(json_str_of(json_get(d, "candidate")), name))
        return "its candidate is missing or another";
    if (!get_bool(d, "valid", &valid) || !reason || !get_num(d, "max_rel", &max_rel) ||
        !get_num(d, "sqnr_db", &sqnr))
        return "a field is missing or of the wrong type";
    if (!p || !get_num(p, "median", &q.median) || !get_num(p, "min", &q.min) ||
        !get_num(p, "max", &q.max) || !get_num(p, "p10", &q.p10) || !get_num(p, "p90", &q.p90) ||
        !get_num(p, "cv", &q.cv) || !get_num(p, "throughput", &q.throughput) ||
        !json_int_of(json_get(p, "runs"), 0, 1000000000, &runs) || !get_bool(p, "converged", &conv))
        return "a profile field is missing or of the wrong type";
    if (valid && !(q.median >= 0 && isfinite(q.median))) return "bad median";
    q.runs = (int)runs;
    q.converged = conv;
    r->valid = valid;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
    r->max_rel = max_rel;
    r->sqnr_db = sqnr;
    r->prof = q;
    double limit = 0; /* optional: the time limit a trial ran past */
    if (json_get(d, "timed_out") && (!get_num(d, "timed_out", &limit) || !(limit > 0)))
        return "bad timed_out";
    r->timed_out = limit;
    return NULL;
}

bool cache_get(tune_cache *c, const char key[SHA256_HEX], const char *name, tune_cand *out)
{
    char p[4400];
    if (!c->on || !entry_path(c, key, p, sizeof p)) return false;
    uint8_t *buf;
    size_t len;
    ait_error e = {0};
    struct stat st;
    if (stat(p, &st) && errno == ENOENT) return false; /* a plain miss */
    if (file_read_all(p, 65536, &buf, &len, &e) != AIT_OK) {
        c->ignored++;
        warn(c, "%s; ignored, tuning it anew", e.msg);
        return false;
    }
    tune_cand r = *out;
    json_val *doc = NULL;
    const char *why = NULL;
    if (json_parse((const char *)buf, len, "the entry", &doc, &e) != AIT_OK) why = e.msg;
    else why = parse_entry(doc, key, name, &r);
    free(buf);
    char msg[sizeof e.msg];
    snprintf(msg, sizeof msg, "%s", why ? why : "");
    json_free(doc);
    if (why) {
        c->ignored++;
        warn(c, "%s: corrupt entry (%s); ignored, tuning it anew", p, msg);
        return false;
    }
    *out = r;
    c->hits++;
    return true;
}

void cache_put(tune_cache *c, const char key[SHA256_HEX], const tune_cand *r)
{
    char p[4400];
    if (!c->on || c->read_only || !entry_path(c, key, p, sizeof p)) return;
    const profile_result *q = &r->prof;
    json_w w = {.pretty = true};
    json_obj(&w, NULL);
    json_str(&w, "kind", "ait tune trial");
    json_int(&w, "format", CACHE_FORMAT);
    json_str(&w, "key", key);
    json_str(&w, "candidate", r->name);
    json_str(&w, "ait_version", AIT_VERSION_STRING);
    json_bool(&w, "valid", r->valid);
    json_str(&w, "reason", r->reason);
    if (r->timed_out > 0) json_num(&w, "timed_out", r->timed_out); /* the limit it ran past */
    put_num(&w, "max_rel", r->max_rel);
    put_num(&w, "sqnr_db", r->sqnr_db);
    json_obj(&w, "profile");
    put_num(&w, "median", q->median);
    put_num(&w, "min", q->min);
    put_num(&w, "max", q->max);
    put_num(&w, "p10", q->p10);
    put_num(&w, "p90", q->p90);
    put_num(&w, "cv", q->cv);
    put_num(&w, "throughput", q->throughput);
    json_int(&w, "runs", q->runs);
    json_bool(&w, "converged", q->converged);
    json_end(&w);
    json_end(&w);
    ait_error e = {0};
    char *text = json_finish(&w, &e);
    if (!text) {
        warn(c, "%s", e.msg);
        return;
    }
    size_t n = strlen(text);
    ait_status st = file_write_atomic(p, text, n, &e);
    free(text);
    if (st != AIT_OK) {
        c->read_only = true;
        warn(c, "%s; results are not saved in %s", e.msg, c->dir);
        return;
    }
    c->stores++;
}
