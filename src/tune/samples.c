/* Samples: loaded from .npz files or folders of .npy files and checked
 * against the model's declared inputs, or generated from the declared dims
 * (also what `ait run` uses for the inputs it is not given). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "exec/exec.h"
#include "io/npy.h"
#include "ops/op.h"
#include "tune/samples.h"

void sample_set_free(sample_set *s)
{
    if (!s) return;
    for (int k = 0; k < s->n; k++) {
        for (int i = 0; s->s[k].values && i < s->n_inputs; i++) ait_tensor_free(s->s[k].values[i]);
        free(s->s[k].values);
        free(s->s[k].source);
    }
    free(s->s);
    free(s);
}

/* Appends an empty sample (values all NULL) named `source`. */
static ait_status set_add(sample_set *set, const char *source, sample **out, ait_error *e)
{
    sample *grown = realloc(set->s, (size_t)(set->n + 1) * sizeof *grown);
    if (!grown) return err_set(e, AIT_E_NOMEM, "out of memory");
    set->s = grown;
    sample *x = &set->s[set->n];
    x->values = calloc((size_t)(set->n_inputs ? set->n_inputs : 1), sizeof *x->values);
    x->source = strdup(source);
    if (!x->values || !x->source) {
        free(x->values);
        free(x->source);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    set->n++;
    *out = x;
    return AIT_OK;
}

static sample_set *set_new(const ait_model *m)
{
    sample_set *set = calloc(1, sizeof *set);
    if (set) set->n_inputs = m->g->n_inputs;
    return set;
}

/* ---- generation ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The smallest table an integer input indexes through Gather, so token ids
 * stay inside the vocabulary; 0 when the input indexes nothing. */
static int64_t index_bound(const graph *g, int v)
{
    int64_t bound = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (strcmp(n->op, "Gather") || n->n_in < 2 || n->in[1] != v) continue;
        const value *data = &g->vals[n->in[0]];
        int axis = (int)attr_int(n, "axis", 0);
        if (data->rank > 0 && axis < 0) axis += data->rank;
        if (data->rank <= 0 || axis < 0 || axis >= data->rank || data->dims[axis] <= 0) continue;
        if (!bound || data->dims[axis] < bound) bound = data->dims[axis];
    }
    return bound;
}

/* Inputs of ops that take a value as a decision or a shape rather than as
 * data: If's condition, Loop's trip count and condition, and the shape,
 * index and count inputs of the ops below (input indexes lo..hi). */
static const struct {
    const char *op;
    int lo, hi;
} param_inputs[] = {
    {"If", 0, 0},      {"Loop", 0, 1},    {"Reshape", 1, 1},   {"Expand", 1, 1},
    {"Tile", 1, 1},    {"ConstantOfShape", 0, 0}, {"Range", 0, 2}, {"Slice", 1, 4},
    {"TopK", 1, 1},    {"OneHot", 1, 1},  {"Resize", 1, 3},    {"Pad", 1, 3},
    {"Split", 1, 1},   {"Squeeze", 1, 1}, {"Unsqueeze", 1, 1}, {"Upsample", 1, 1},
};

static bool param_input(const node *n, int k)
{
    for (size_t i = 0; i < sizeof param_inputs / sizeof param_inputs[0]; i++)
        if (!strcmp(n->op, param_inputs[i].op)) return k >= param_inputs[i].lo && k <= param_inputs[i].hi;
    return false;
}

/* The node whose decision or shape input input v's value reaches (through
 * any nodes but those that read only shapes), when v is a single number: a
 * sample rate an If branches on, a length a Range counts to. Such a value
 * cannot be guessed. -1 when there is none. */
static int param_use(const graph *g, int v)
{
    const value *iv = &g->vals[v];
    if (iv->rank < 0) return -1;
    for (int d = 0; d < iv->rank; d++)
        if (iv->dims[d] != 1) return -1;
    bool *reach = calloc((size_t)g->n_vals + 1, 1);
    if (!reach) return -1;
    reach[v] = true;
    int found = -1;
    for (int i = 0; i < g->n_nodes && found < 0; i++) { /* nodes are in topological order */
        const node *n = &g->nodes[i];
        if (n->def && (n->def->flags & OP_READS_SHAPE)) continue;
        bool hit = false;
        for (int k = 0; k < n->n_in && found < 0; k++) {
            if (n->in[k] < 0 || !reach[n->in[k]]) continue;
            hit = true;
            if (param_input(n, k)) found = i;
        }
        for (int k = 0; hit && k < n->n_out; k++)
            if (n->out[k] >= 0) reach[n->out[k]] = true;
    }
    free(reach);
    return found;
}

static bool looks_like_mask(const char *name)
{
    return strcasestr(name, "mask") != NULL;
}

/* The size generating gives dim d of v: its declared size, else the size o
 * sets for its name, else o's batch for a batch-like dim (named so, or
 * unnamed and first), else 1, with *defaulted set: a dim nobody set. */
static int64_t gen_dim(const value *v, int d, const sample_opts *o, bool *defaulted)
{
    *defaulted = false;
    if (v->dims[d] >= 0) return v->dims[d];
    const char *sym = v->sym[d];
    for (int k = 0; sym && k < o->n_dims; k++)
        if (!strcmp(sym, o->dim_names[k])) return o->dim_vals[k];
    if ((sym && strcasestr(sym, "batch")) || (!sym && d == 0)) return o->batch > 0 ? o->batch : 1;
    *defaulted = true;
    return 1;
}

/* The generator proper; `say` tells o->log the notes and what was made. */
static ait_status gen_input(const ait_model *m, int idx, const sample_opts *o, uint64_t *rng,
                            bool say, tensor **out, ait_error *e)
{
    const graph *g = m->g;
    const value *v = &g->vals[g->inputs[idx]];
    if (v->kind != VAL_TENSOR)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: input '%s' is a %s, which ait cannot generate "
                       "nor read from a file: give it through the API", m->path, v->name,
                       val_kind_name(v->kind));
    if (v->rank < 0 || v->dtype == AIT_UNDEFINED)
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' has no declared type or shape, so "
                       "it cannot be generated; give it in a file (e.g. --input %s=FILE.npy)",
                       m->path, v->name, v->name);
    int use = param_use(g, g->inputs[idx]);
    if (use >= 0)
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is a single value that decides %s "
                       "'%s', not data: ait cannot guess it; give it, e.g. --input %s=VALUE or "
                       "--input %s=FILE.npy", m->path, v->name, g->nodes[use].op,
                       g->nodes[use].name, v->name, v->name);
    int64_t dims[AIT_MAX_RANK];
    for (int d = 0; d < v->rank; d++) {
        bool defaulted;
        dims[d] = gen_dim(v, d, o, &defaulted);
        const char *sym = v->sym[d];
        if (defaulted && say)
            log_msg(&o->log, AIT_LOG_INFO,
                    "note: input '%s' dim %d ('%s') not given: using 1 (set --dim %s=N)", v->name,
                    d, sym ? sym : "?", sym ? sym : "NAME");
    }
    tensor *t = ait_tensor_create(v->dtype, v->rank, dims);
    if (!t)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: cannot make input '%s' of type %s", m->path,
                       v->name, ait_dtype_name(v->dtype));
    int64_t n = ait_tensor_numel(t), bound = index_bound(g, g->inputs[idx]);
    void *p = ait_tensor_data(t);
    const char *how;
    char hb[40];
    if (v->dtype == AIT_BOOL || looks_like_mask(v->name)) {
        for (int64_t i = 0; i < n; i++) elem_set_f64(p, v->dtype, i, 1);
        how = "ones";
    } else if (dtype_is_float(v->dtype) || dtype_is_small_float(v->dtype)) {
        for (int64_t i = 0; i < n; i++) /* uniform in [-1, 1) */
            elem_set_f64(p, v->dtype, i, (double)(rng_next(rng) >> 11) * 0x1p-52 - 1.0);
        how = "uniform [-1, 1)";
    } else if (v->dtype == AIT_STRING) {
        for (int64_t i = 0; i < n; i++) {
            char num[24];
            int k = snprintf(num, sizeof num, "%d", (int)(rng_next(rng) % 100));
            ait_status st = tensor_set_str(t, i, num, (size_t)k, e);
            if (st != AIT_OK) {
                ait_tensor_free(t);
                return st;
            }
        }
        how = "integers in [0, 100) as text";
    } else {
        /* int4/uint4 [0, 8), int2/uint2 [0, 2): in range, signed or not */
        int64_t hi = bound                          ? bound
                     : dtype_is_small_int(v->dtype) ? 1 << (dtype_bits(v->dtype) - 1)
                                                    : 100;
        for (int64_t i = 0; i < n; i++)
            elem_set_f64(p, v->dtype, i, (double)(rng_next(rng) % (uint64_t)hi));
        snprintf(hb, sizeof hb, "integers in [0, %lld)", (long long)hi);
        how = bound ? "indices below the table size" : hb;
    }
    if (say) {
        char s[128], b[32] = "";
        if (bound) snprintf(b, sizeof b, " (%lld)", (long long)bound);
        log_msg(&o->log, AIT_LOG_INFO, "input  %-24s %-8s %-20s generated: %s%s", v->name,
                ait_dtype_name(v->dtype), shape_str(dims, v->rank, s, sizeof s), how, b);
    }
    *out = t;
    return AIT_OK;
}

/* Whether shape inference passes on the model's inputs as generated with o
 * (shapes only: no op runs), -1 when it cannot be tried. */
static int shapes_pass(const ait_model *m, exec *x, const sample_opts *o)
{
    const graph *g = m->g;
    tensor *in[64], t[64];
    if (g->n_inputs > 64) return -1;
    for (int i = 0; i < g->n_inputs; i++) {
        const value *v = &g->vals[g->inputs[i]];
        if (v->rank < 0 || v->dtype == AIT_UNDEFINED) return -1;
        int64_t dims[AIT_MAX_RANK];
        for (int d = 0; d < v->rank; d++) {
            bool defaulted;
            dims[d] = gen_dim(v, d, o, &defaulted);
        }
        memset(&t[i], 0, sizeof t[i]);
        tensor_set_shape(&t[i], v->dtype, v->rank, dims);
        in[i] = &t[i];
    }
    ait_error e = {0};
    return exec_schedule(x, in, &e) == AIT_OK;
}

/* The smallest size that, given to every one of the named dims, lets shape
 * inference through (a kernel or a reshape bounds it), when size 1 does
 * not; 0 when 1 passes or no size up to 4096 does. */
static int64_t smallest_size(const ait_model *m, const sample_opts *o, const char **names,
                             int n_names)
{
    sample_opts t = *o;
    if (t.n_dims + n_names > 32) return 0;
    for (int k = 0; k < n_names; k++) t.dim_names[t.n_dims + k] = names[k];
    t.n_dims += n_names;
    exec *x = NULL;
    ait_error e = {0};
    if (exec_create(m->g, NULL, 1, &x, &e) != AIT_OK) return 0;
    int64_t found = 0;
    for (int64_t v = 1; v <= 4096 && !found; v += v < 64 ? 1 : v) {
        for (int k = 0; k < n_names; k++) t.dim_vals[o->n_dims + k] = v;
        int ok = shapes_pass(m, x, &t);
        if (ok < 0 || (ok && v == 1)) break;
        if (ok) found = v;
    }
    exec_free(x);
    return found;
}

void samples_explain_defaults(const ait_model *m, const sample_opts *o, const bool *generated,
                              ait_error *e)
{
    if (!e) return;
    const graph *g = m->g;
    const char *names[32]; /* the defaulted dims' names, each once, for the --dim advice */
    int n_names = 0, n_unnamed = 0;
    bool any = false;
    for (int i = 0; i < g->n_inputs; i++) {
        const value *v = &g->vals[g->inputs[i]];
        if ((generated && !generated[i]) || v->rank < 0) continue;
        bool first = true;
        for (int d = 0; d < v->rank; d++) {
            bool defaulted;
            gen_dim(v, d, o, &defaulted);
            if (!defaulted) continue;
            if (!any && first) err_append(e, " (the inputs were generated, and dims nobody set "
                                          "were 1:");
            if (first) err_append(e, "%s input '%s'", any ? ";" : "", v->name);
            else err_append(e, ",");
            err_append(e, " dim %d ('%s')", d, v->sym[d] ? v->sym[d] : "unnamed");
            first = false;
            any = true;
            if (!v->sym[d]) {
                n_unnamed++;
                continue;
            }
            bool seen = false;
            for (int k = 0; k < n_names; k++) seen |= !strcmp(names[k], v->sym[d]);
            if (!seen && n_names < 32) names[n_names++] = v->sym[d];
        }
    }
    if (!any) return;
    err_append(e, ";");
    for (int k = 0; k < n_names; k++)
        err_append(e, "%s --dim %s=V", k ? "" : " set them with", names[k]);
    int64_t least = n_names ? smallest_size(m, o, names, n_names) : 0;
    if (least) {
        err_append(e, "; the smallest size for %s that passes shape inference is %lld:",
                   n_names > 1 ? "all of them" : "it", (long long)least);
        for (int k = 0; k < n_names; k++) err_append(e, " --dim %s=%lld", names[k], (long long)least);
    }
    if (n_unnamed)
        err_append(e, "%s give unnamed dims' inputs in files (--input NAME=FILE.npy)",
                   n_names ? "; and" : "");
    err_append(e, ")");
}

ait_status samples_check_dims(const ait_model *m, const sample_opts *o, ait_error *e)
{
    const graph *g = m->g;
    for (int k = 0; k < o->n_dims; k++) {
        bool found = false;
        for (int i = 0; i < g->n_inputs && !found; i++) {
            const value *v = &g->vals[g->inputs[i]];
            for (int d = 0; d < v->rank && !found; d++)
                found = v->sym[d] && !strcmp(v->sym[d], o->dim_names[k]);
        }
        if (found) continue;
        err_set(e, AIT_E_INVALID_ARG, "--dim %s=%lld: %s has no dim called '%s'; its inputs' "
                "dims are named:", o->dim_names[k], (long long)o->dim_vals[k], m->path,
                o->dim_names[k]);
        int listed = 0;
        for (int i = 0; e && i < g->n_inputs; i++) {
            const value *v = &g->vals[g->inputs[i]];
            for (int d = 0; d < v->rank; d++) {
                if (!v->sym[d]) continue;
                bool seen = false; /* listed already, by this input or an earlier one */
                for (int j = 0; j <= i && !seen; j++) {
                    const value *w = &g->vals[g->inputs[j]];
                    for (int c = 0; c < (j == i ? d : w->rank) && !seen; c++)
                        seen = w->sym[c] && !strcmp(w->sym[c], v->sym[d]);
                }
                if (!seen) err_append(e, "%s %s", listed++ ? "," : "", v->sym[d]);
            }
        }
        if (!listed) err_append(e, " none (every dim is a number)");
        return AIT_E_INVALID_ARG;
    }
    return AIT_OK;
}

ait_status samples_generate_input(const ait_model *m, int idx, const sample_opts *o,
                                  uint64_t *rng, tensor **out, ait_error *e)
{
    *out = NULL;
    if (idx < 0 || idx >= m->g->n_inputs)
        return err_set(e, AIT_E_INVALID_ARG, "%s: no input %d", m->path, idx);
    return gen_input(m, idx, o, rng, true, out, e);
}

ait_status samples_generate(const ait_model *m, const sample_opts *o, sample_set **out,
                            ait_error *e)
{
    *out = NULL;
    sample_set *set = set_new(m);
    if (!set) return err_set(e, AIT_E_NOMEM, "out of memory");
    int count = o->count > 0 ? o->count : 1;
    uint64_t rng = o->seed;
    ait_status s = AIT_OK;
    for (int k = 0; s == AIT_OK && k < count; k++) {
        sample *x;
        s = set_add(set, "generated", &x, e);
        /* Every sample has the same shapes: say what they are once. */
        for (int i = 0; s == AIT_OK && i < set->n_inputs; i++)
            s = gen_input(m, i, o, &rng, k == 0, &x->values[i], e);
    }
    if (s == AIT_OK && count > 1)
        log_msg(&o->log, AIT_LOG_INFO, "generated %d samples of these shapes", count);
    if (s != AIT_OK) {
        sample_set_free(set);
        return s;
    }
    *out = set;
    return AIT_OK;
}

/* ---- loading ---- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* The visible entries of a folder, sorted by name (bytewise, so the order
 * does not depend on the locale). */
static ait_status list_dir(const char *dir, char ***out, int *n_out, ait_error *e)
{
    DIR *d = opendir(dir);
    if (!d) return err_set(e, AIT_E_IO, "%s: cannot open the folder", dir);
    char **names = NULL;
    int n = 0, cap = 0;
    ait_status s = AIT_OK;
    for (struct dirent *de; s == AIT_OK && (de = readdir(d));) {
        if (de->d_name[0] == '.') continue; /* ., .., hidden files */
        if (n == cap) {
            int nc = cap ? 2 * cap : 16;
            char **grown = realloc(names, (size_t)nc * sizeof *grown);
            if (!grown) {
                s = err_set(e, AIT_E_NOMEM, "out of memory");
                break;
            }
            names = grown, cap = nc;
        }
        if (!(names[n] = strdup(de->d_name))) s = err_set(e, AIT_E_NOMEM, "out of memory");
        else n++;
    }
    closedir(d);
    if (s != AIT_OK) {
        free_names(names, n);
        return s;
    }
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    *n_out = n;
    return AIT_OK;
}

static char *path_join(const char *dir, const char *name)
{
    char *p;
    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int input_index(const graph *g, const char *name)
{
    for (int i = 0; i < g->n_inputs; i++)
        if (!strcmp(g->vals[g->inputs[i]].name, name)) return i;
    return -1;
}

/* The declared shape with symbols: "[batch,3]", "?" where unnamed. */
static const char *decl_str(const value *v, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int d = 0; d < v->rank && at + 1 < n; d++) {
        int w = v->dims[d] >= 0 ? snprintf(buf + at, n - at, "%s%lld", d ? "," : "[",
                                           (long long)v->dims[d])
                                : snprintf(buf + at, n - at, "%s%s", d ? "," : "[",
                                           v->sym[d] ? v->sym[d] : "?");
        at = w < 0 || (size_t)w >= n - at ? n - 1 : at + (size_t)w;
    }
    if (at + 1 < n) snprintf(buf + at, n - at, v->rank > 0 ? "]" : "[]");
    return buf;
}

/* Checks array t, given for input i, against the input's declaration.
 * `where` names the file. */
static ait_status check_input(const ait_model *m, int i, const tensor *t, const char *where,
                              ait_error *e)
{
    const value *v = &m->g->vals[m->g->inputs[i]];
    char a[128], b[128];
    if (v->kind == VAL_SEQUENCE || v->kind == VAL_MAP)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: input '%s' of %s is a %s, which samples "
                       "cannot hold", where, v->name, m->path, val_kind_name(v->kind));
    if (v->dtype != AIT_UNDEFINED && t->dtype != v->dtype)
        return err_set(e, AIT_E_DTYPE, "%s: input '%s' is %s, but %s declares it %s", where,
                       v->name, ait_dtype_name(t->dtype), m->path, ait_dtype_name(v->dtype));
    if (v->rank < 0) return AIT_OK;
    if (t->rank != v->rank)
        return err_set(e, AIT_E_SHAPE, "%s: input '%s' has rank %d (shape %s), but %s declares "
                       "rank %d", where, v->name, t->rank, shape_str(t->dims, t->rank, a, sizeof a),
                       m->path, v->rank);
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d] >= 0 && t->dims[d] != v->dims[d])
            return err_set(e, AIT_E_SHAPE, "%s: input '%s' has shape %s, but %s declares %s "
                           "(dim %d must be %lld)", where, v->name,
                           shape_str(t->dims, t->rank, a, sizeof a), m->path,
                           decl_str(v, b, sizeof b), d, (long long)v->dims[d]);
    return AIT_OK;
}

/* Symbolic dims with one name must agree across a sample's inputs (as a
 * run would demand); saying so here names the file. */
static ait_status check_symbols(const ait_model *m, const sample *x, ait_error *e)
{
    const graph *g = m->g;
    for (int i = 0; i < g->n_inputs; i++) {
        const value *v = &g->vals[g->inputs[i]];
        for (int d = 0; v->rank > 0 && d < v->rank; d++) {
            if (!v->sym[d]) continue;
            for (int j = 0; j <= i; j++) {
                const value *w = &g->vals[g->inputs[j]];
                for (int c = 0; w->rank > 0 && c < (j == i ? d : w->rank); c++)
                    if (w->sym[c] && !strcmp(w->sym[c], v->sym[d]) &&
                        x->values[i]->dims[d] != x->values[j]->dims[c])
                        return err_set(e, AIT_E_SHAPE, "%s: input '%s' dim %d ('%s') is %lld, "
                                       "but input '%s' dim %d ('%s') is %lld", x->source,
                                       v->name, d, v->sym[d], (long long)x->values[i]->dims[d],
                                       w->name, c, w->sym[c], (long long)x->values[j]->dims[c]);
            }
        }
    }
    return AIT_OK;
}

/* Fills sample x from named arrays (taking those it uses). `file` gives
 * the file an array came from, for messages. */
static ait_status sample_fill(const ait_model *m, sample *x, int n, char **names, tensor **arrays,
                              char *(*file)(const sample *, const char *), ait_error *e)
{
    const graph *g = m->g;
    for (int k = 0; k < n; k++) {
        int i = input_index(g, names[k]);
        char *where = file(x, names[k]);
        ait_status s;
        if (!where) return err_set(e, AIT_E_NOMEM, "out of memory");
        char known[512];
        if (i < 0)
            s = err_set(e, AIT_E_NOT_FOUND, "%s: array '%s' is not an input of %s (%s)", where,
                        names[k], m->path, graph_input_names(g, known, sizeof known));
        else if (x->values[i])
            s = err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is given twice", where, names[k]);
        else
            s = check_input(m, i, arrays[k], where, e);
        free(where);
        if (s != AIT_OK) return s;
        x->values[i] = arrays[k];
        arrays[k] = NULL;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (!x->values[i]) {
            const char *name = g->vals[g->inputs[i]].name;
            char *where = file(x, name);
            ait_status s = err_set(e, AIT_E_NOT_FOUND, "%s: no array for input '%s' of %s",
                                   where ? where : x->source, name, m->path);
            free(where);
            return s;
        }
    return check_symbols(m, x, e);
}

static char *npz_file(const sample *x, const char *name)
{
    (void)name;
    return strdup(x->source);
}

static char *npy_file(const sample *x, const char *name)
{
    char *p;
    return asprintf(&p, "%s/%s.npy", x->source, name) < 0 ? NULL : p;
}

static ait_status load_npz(const ait_model *m, sample_set *set, const char *path, size_t max,
                           ait_error *e)
{
    npz *z;
    TRY(npz_load_max(path, max, &z, e));
    sample *x;
    ait_status s = set_add(set, path, &x, e);
    if (s == AIT_OK) s = sample_fill(m, x, z->n, z->names, z->arrays, npz_file, e);
    npz_free(z);
    return s;
}

/* A sample folder: one NAME.npy per input. Other files are not samples'
 * business (a README, say) and are skipped. */
static ait_status load_npy_dir(const ait_model *m, sample_set *set, const char *dir, size_t max,
                               ait_error *e)
{
    char **names;
    int n;
    TRY(list_dir(dir, &names, &n, e));
    npz *z = calloc(1, sizeof *z);
    ait_status s = AIT_OK;
    if (!z || !(z->names = calloc((size_t)n + 1, sizeof *z->names)) ||
        !(z->arrays = calloc((size_t)n + 1, sizeof *z->arrays)))
        s = err_set(e, AIT_E_NOMEM, "out of memory");
    for (int k = 0; s == AIT_OK && k < n; k++) {
        if (!ends_with(names[k], ".npy")) continue;
        char *p = path_join(dir, names[k]);
        if (!p) {
            s = err_set(e, AIT_E_NOMEM, "out of memory");
            break;
        }
        s = ait_tensor_load_npy_max(p, max, &z->arrays[z->n], e);
        free(p);
        if (s != AIT_OK) break;
        z->names[z->n] = names[k];
        names[k][strlen(names[k]) - 4] = '\0'; /* drop ".npy" */
        names[k] = NULL;
        z->n++;
    }
    free_names(names, n);
    sample *x;
    if (s == AIT_OK && z->n == 0)
        s = err_set(e, AIT_E_NOT_FOUND, "%s: no .npy files in this sample folder", dir);
    if (s == AIT_OK) s = set_add(set, dir, &x, e);
    if (s == AIT_OK) s = sample_fill(m, x, z->n, z->names, z->arrays, npy_file, e);
    npz_free(z);
    return s;
}

/* A folder: of .npz files, of sample folders, or itself one sample folder
 * of .npy files. Mixing these is refused rather than guessed at. */
static ait_status load_dir(const ait_model *m, sample_set *set, const char *dir, size_t max,
                           ait_error *e)
{
    char **names;
    int n, n_npz = 0, n_npy = 0, n_dir = 0;
    TRY(list_dir(dir, &names, &n, e));
    ait_status s = AIT_OK;
    char **paths = calloc((size_t)n + 1, sizeof *paths);
    bool *sub = calloc((size_t)n + 1, sizeof *sub);
    if (!paths || !sub) s = err_set(e, AIT_E_NOMEM, "out of memory");
    for (int k = 0; s == AIT_OK && k < n; k++) {
        if (!(paths[k] = path_join(dir, names[k]))) {
            s = err_set(e, AIT_E_NOMEM, "out of memory");
            break;
        }
        sub[k] = is_dir(paths[k]);
        n_dir += sub[k];
        n_npz += !sub[k] && ends_with(names[k], ".npz");
        n_npy += !sub[k] && ends_with(names[k], ".npy");
    }
    if (s == AIT_OK && !n_npz && !n_npy && !n_dir)
        s = err_set(e, AIT_E_NOT_FOUND, "%s: no samples in this folder (expected .npz files, "
                    "sample folders of .npy files, or .npy files named after the inputs)", dir);
    else if (s == AIT_OK && (!!n_npz + !!n_npy + !!n_dir) > 1)
        s = err_set(e, AIT_E_INVALID_ARG, "%s: mixes %d .npz files, %d .npy files and %d "
                    "folders; use one layout (see ait inspect --help)", dir, n_npz, n_npy, n_dir);
    else if (s == AIT_OK && n_npy)
        s = load_npy_dir(m, set, dir, max, e);
    for (int k = 0; s == AIT_OK && !n_npy && k < n; k++) {
        if (sub[k]) s = load_npy_dir(m, set, paths[k], max, e);
        else if (ends_with(names[k], ".npz")) s = load_npz(m, set, paths[k], max, e);
    }
    for (int k = 0; paths && k < n; k++) free(paths[k]);
    free(paths);
    free(sub);
    free_names(names, n);
    return s;
}

ait_status samples_load(const ait_model *m, const char *path, size_t max_bytes, sample_set **out,
                        ait_error *e)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return err_set(e, AIT_E_IO, "%s: cannot open the samples (%s)", path, strerror(errno));
    sample_set *set = set_new(m);
    if (!set) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = S_ISDIR(st.st_mode) ? load_dir(m, set, path, max_bytes, e)
                                        : load_npz(m, set, path, max_bytes, e);
    if (s != AIT_OK) {
        sample_set_free(set);
        return s;
    }
    *out = set;
    return AIT_OK;
}

/* ---- batches ---- */

int samples_batch_axis(const ait_model *m, int input)
{
    if (input < 0 || input >= m->g->n_inputs) return -1;
    const value *v = &m->g->vals[m->g->inputs[input]];
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d] < 0 && v->sym[d] && strcasestr(v->sym[d], "batch")) return d;
    /* A 1-D byte stream (an encoded image for ImageDecoder) is one item
     * whatever its length: rows of it are not samples. */
    if (v->rank == 1 && v->dtype == AIT_U8) return -1;
    return v->rank > 0 && v->dims[0] < 0 ? 0 : -1;
}

/* Whether t can give rows to a batch shaped like ref: same dtype, rank and
 * dims other than the batch axis. */
static bool same_but_axis(const tensor *t, const tensor *ref, int ax)
{
    if (t->dtype != ref->dtype || t->rank != ref->rank) return false;
    for (int d = 0; d < t->rank; d++)
        if (d != ax && t->dims[d] != ref->dims[d]) return false;
    return true;
}

/* Input i at batch b: rows of every sample in turn, cycling. */
static ait_status batch_input(const ait_model *m, const sample_set *set, int i, int b,
                              tensor **out, ait_error *e)
{
    const value *v = &m->g->vals[m->g->inputs[i]];
    const tensor *ref = set->s[0].values[i];
    int ax = samples_batch_axis(m, i);
    if (ax < 0 || ax >= ref->rank) return tensor_clone(ref, out, e);
    bool any_rows = false;
    for (int k = 0; k < set->n; k++) {
        const tensor *x = set->s[k].values[i];
        if (x->rank != ref->rank) /* loaded samples are checked; made-up ones may not be */
            return err_set(e, AIT_E_SHAPE, "%s: input '%s' has rank %d, but %s has it rank %d",
                           set->s[k].source, v->name, x->rank, set->s[0].source, ref->rank);
        any_rows |= x->dims[ax] > 0;
    }
    if (!any_rows)
        return err_set(e, AIT_E_SHAPE, "%s: input '%s' has no rows along its batch axis (dim "
                       "%d) in any sample: cannot make batch %d", set->s[0].source, v->name, ax,
                       b);
    int64_t dims[AIT_MAX_RANK], numel;
    memcpy(dims, ref->dims, sizeof dims);
    dims[ax] = b;
    TRY(shape_numel(dims, ref->rank, ref->dtype, &numel, v->name, e));
    /* The output's size fits, so its outer and inner parts do too. */
    int64_t outer = 1, inner = 1, es = (int64_t)ait_dtype_size(ref->dtype);
    for (int d = 0; d < ax; d++) outer *= dims[d];
    for (int d = ax + 1; d < ref->rank; d++) inner *= dims[d];
    tensor *t = ait_tensor_create(ref->dtype, ref->rank, dims);
    if (!t)
        return err_set(e, AIT_E_NOMEM, "out of memory making input '%s' at batch %d", v->name, b);
    uint8_t *dst = t->data;
    int k = 0;
    int64_t j = 0;
    for (int64_t r = 0; r < b; r++, j++) {
        while (j == set->s[k].values[i]->dims[ax]) { /* this sample is used up: next one */
            k = (k + 1) % set->n;
            j = 0;
        }
        const tensor *src = set->s[k].values[i];
        if (!same_but_axis(src, ref, ax)) {
            char a[128], c[128];
            ait_tensor_free(t);
            return err_set(e, AIT_E_SHAPE, "%s: input '%s' is %s %s, but %s has it %s %s: "
                           "samples whose dims other than the batch axis (dim %d) differ cannot "
                           "be batched together (batch %d)", set->s[k].source, v->name,
                           ait_dtype_name(src->dtype), shape_str(src->dims, src->rank, a, sizeof a),
                           set->s[0].source, ait_dtype_name(ref->dtype),
                           shape_str(ref->dims, ref->rank, c, sizeof c), ax, b);
        }
        const uint8_t *from = src->data;
        int64_t rows = src->dims[ax];
        for (int64_t o = 0; o < outer; o++) {
            ait_status s = elems_copy(dst + (size_t)((o * b + r) * inner * es),
                                      from + (size_t)((o * rows + j) * inner * es), inner,
                                      ref->dtype, e);
            if (s != AIT_OK) {
                ait_tensor_free(t);
                return s;
            }
        }
    }
    *out = t;
    return AIT_OK;
}

ait_status samples_batch(const ait_model *m, const sample_set *s, int b, tensor **inputs,
                         ait_error *e)
{
    int n = m->g->n_inputs;
    for (int i = 0; i < n; i++) inputs[i] = NULL;
    if (b < 1) return err_set(e, AIT_E_INVALID_ARG, "batch size %d: must be at least 1", b);
    if (!s || s->n < 1) return err_set(e, AIT_E_INVALID_ARG, "no samples to make a batch from");
    if (s->n_inputs != n)
        return err_set(e, AIT_E_INVALID_ARG, "samples hold %d inputs, but %s has %d", s->n_inputs,
                       m->path, n);
    for (int i = 0; i < n; i++) {
        ait_status st = batch_input(m, s, i, b, &inputs[i], e);
        if (st != AIT_OK) {
            for (int k = 0; k < i; k++) {
                ait_tensor_free(inputs[k]);
                inputs[k] = NULL;
            }
            return st;
        }
    }
    return AIT_OK;
}

bool samples_same_shapes(const ait_model *m, const sample *a, const sample *b)
{
    for (int i = 0; i < m->g->n_inputs; i++) {
        const tensor *x = a->values[i], *y = b->values[i];
        if (x->kind != y->kind || x->rank != y->rank) return false;
        int ax = samples_batch_axis(m, i);
        for (int d = 0; d < x->rank; d++)
            if (d != ax && x->dims[d] != y->dims[d]) return false;
    }
    return true;
}
