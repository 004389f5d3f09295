/* The tuner's results cache (see cache.h): keys, entry files, clearing. */
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

#include "io/model.h"
#include "io/npy.h"

/* ---- warnings ---- */

static void warn(tune_cache *c, const char *fmt, ...) AIT_PRINTF(2, 3);
static void warn(tune_cache *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->clear_line) fputs("\r\033[K", stderr);
    fputs("ait: warning: cache: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    c->warnings++;
}

/* ---- the folder ---- */

const char *cache_default_dir(char *buf, size_t n)
{
    const char *d = getenv("AIT_CACHE_DIR");
    int k;
    if (d && *d) k = snprintf(buf, n, "%s", d);
    else if ((d = getenv("HOME")) && *d) k = snprintf(buf, n, "%s/.cache/ait", d);
    else return NULL;
    return k < 0 || (size_t)k >= n ? NULL : buf;
}

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

void cache_open(tune_cache *c, const char *dir, bool clear_line)
{
    *c = (tune_cache){.clear_line = clear_line};
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
    if (t->kind == VAL_SEQUENCE) {
        cache_hash_i64(h, t->n_items);
        for (int i = 0; i < t->n_items; i++) cache_hash_tensor(h, &t->items[i]);
        return;
    }
    size_t n = t->kind == VAL_TENSOR && t->data ? tensor_nbytes(t) : 0;
    cache_hash_i64(h, (int64_t)n);
    if (n) sha256_update(h, t->data, n);
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
    /* Modules with subgraphs are refused by graph_extract; mark one anyway. */
    cache_hash_i64(h, a->g != NULL);
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
    for (int v = 0; v < g->n_vals; v++)
        if (g->vals[v].konst) {
            cache_hash_i64(h, v);
            hash_value_type(h, &g->vals[v]);
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
}

/* ---- entries ---- */

static bool entry_path(const tune_cache *c, const char *key, char *p, size_t n)
{
    return snprintf(p, n, "%s/" CACHE_PREFIX "%s" CACHE_SUFFIX, c->dir, key) < (int)n;
}

/* The fields of an entry, in the order they are written. */
enum { F_FORMAT, F_KEY, F_NAME, F_VALID, F_REASON, F_MAX_REL, F_SQNR, F_MEDIAN, F_MIN, F_MAX,
       F_P10, F_P90, F_CV, F_RUNS, F_CONVERGED, F_THROUGHPUT, F_COUNT };
static const char *const field_names[F_COUNT] = {
    "ait-tune-cache", "key", "candidate", "valid", "reason", "max_rel", "sqnr_db", "median",
    "min", "max", "p10", "p90", "cv", "runs", "converged", "throughput",
};

static bool parse_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !*end && (errno == 0 || errno == ERANGE);
}

/* Parses the entry text (NUL-terminated, lines "name value") into *r;
 * NULL when it is good, else why not. */
static const char *parse_entry(char *text, const char *key, const char *name, tune_cand *r)
{
    const char *val[F_COUNT] = {0};
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (!sp) return "a line without a value";
        *sp = 0;
        for (int f = 0; f < F_COUNT; f++)
            if (!strcmp(line, field_names[f])) {
                if (val[f]) return "a field given twice";
                val[f] = sp + 1;
            }
    }
    for (int f = 0; f < F_COUNT; f++)
        if (!val[f]) return "a field is missing";
    double num[F_COUNT] = {0};
    for (int f = F_MAX_REL; f < F_COUNT; f++)
        if (!parse_num(val[f], &num[f])) return "a number does not parse";
    double fmt;
    if (!parse_num(val[F_FORMAT], &fmt) || fmt != CACHE_FORMAT) return "another format version";
    if (strcmp(val[F_KEY], key)) return "it holds another key";
    if (strcmp(val[F_NAME], name)) return "it holds another candidate";
    if (strcmp(val[F_VALID], "0") && strcmp(val[F_VALID], "1")) return "bad 'valid'";
    if (strcmp(val[F_CONVERGED], "0") && strcmp(val[F_CONVERGED], "1")) return "bad 'converged'";
    if (!(num[F_RUNS] >= 0 && num[F_RUNS] <= 1e9 && num[F_RUNS] == floor(num[F_RUNS])))
        return "bad 'runs'";
    bool valid = val[F_VALID][0] == '1';
    if (valid && !(num[F_MEDIAN] >= 0 && isfinite(num[F_MEDIAN]))) return "bad 'median'";
    r->valid = valid;
    snprintf(r->reason, sizeof r->reason, "%s", strcmp(val[F_REASON], "-") ? val[F_REASON] : "");
    r->max_rel = num[F_MAX_REL];
    r->sqnr_db = num[F_SQNR];
    r->prof = (profile_result){.median = num[F_MEDIAN], .min = num[F_MIN], .max = num[F_MAX],
                               .p10 = num[F_P10], .p90 = num[F_P90], .cv = num[F_CV],
                               .runs = (int)num[F_RUNS], .converged = val[F_CONVERGED][0] == '1',
                               .throughput = num[F_THROUGHPUT]};
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
    buf[len] = 0; /* file_read_all leaves room for it */
    tune_cand r = *out;
    const char *why = memchr(buf, 0, len) ? "it holds a NUL byte"
                                          : parse_entry((char *)buf, key, name, &r);
    free(buf);
    if (why) {
        c->ignored++;
        warn(c, "%s: corrupt entry (%s); ignored, tuning it anew", p, why);
        return false;
    }
    *out = r;
    c->hits++;
    return true;
}

/* One line of text: newlines would end the field early. */
static void one_line(const char *s, char *out, size_t n)
{
    snprintf(out, n, "%s", s && *s ? s : "-");
    for (char *q = out; *q; q++)
        if (*q == '\n' || *q == '\r') *q = ' ';
}

void cache_put(tune_cache *c, const char key[SHA256_HEX], const tune_cand *r)
{
    char p[4400], reason[sizeof r->reason], name[sizeof r->name];
    if (!c->on || c->read_only || !entry_path(c, key, p, sizeof p)) return;
    one_line(r->reason, reason, sizeof reason);
    one_line(r->name, name, sizeof name);
    const profile_result *q = &r->prof;
    char text[2048];
    int n = snprintf(text, sizeof text,
                     "%s %d\n%s %s\n%s %s\n%s %d\n%s %s\n%s %.17g\n%s %.17g\n%s %.17g\n"
                     "%s %.17g\n%s %.17g\n%s %.17g\n%s %.17g\n%s %.17g\n%s %d\n%s %d\n%s %.17g\n",
                     field_names[F_FORMAT], CACHE_FORMAT, field_names[F_KEY], key,
                     field_names[F_NAME], name, field_names[F_VALID], r->valid ? 1 : 0,
                     field_names[F_REASON], reason, field_names[F_MAX_REL], r->max_rel,
                     field_names[F_SQNR], r->sqnr_db, field_names[F_MEDIAN], q->median,
                     field_names[F_MIN], q->min, field_names[F_MAX], q->max, field_names[F_P10],
                     q->p10, field_names[F_P90], q->p90, field_names[F_CV], q->cv,
                     field_names[F_RUNS], q->runs, field_names[F_CONVERGED], q->converged ? 1 : 0,
                     field_names[F_THROUGHPUT], q->throughput);
    if (n < 0 || (size_t)n >= sizeof text) return;
    ait_error e = {0};
    if (file_write_atomic(p, text, (size_t)n, &e) != AIT_OK) {
        c->read_only = true;
        warn(c, "%s; results are not saved in %s", e.msg, c->dir);
        return;
    }
    c->stores++;
}
