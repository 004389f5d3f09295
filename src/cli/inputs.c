/* Inputs for `ait run`: loaded from .npy/.npz, or generated from the
 * model's declared dims with values that make sense for the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "core/half.h"
#include "io/npy.h"

double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static bool looks_like_mask(const char *name)
{
    return strcasestr(name, "mask") != NULL;
}

static ait_status generate(const ait_model *m, int idx, const input_opts *o, uint64_t *rng,
                           ait_tensor **out, ait_error *e)
{
    const graph *g = m->g;
    const value *v = &g->vals[g->inputs[idx]];
    if (v->rank < 0 || v->dtype == AIT_UNDEFINED)
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' has no declared type or shape; pass "
                       "it with --input %s=FILE.npy", m->path, v->name, v->name);
    int64_t dims[AIT_MAX_RANK];
    for (int d = 0; d < v->rank; d++) {
        dims[d] = v->dims[d];
        if (dims[d] >= 0) continue;
        const char *sym = v->sym[d];
        bool found = false;
        for (int k = 0; sym && k < o->n_dims; k++)
            if (!strcmp(sym, o->dim_names[k])) dims[d] = o->dim_vals[k], found = true;
        if (found) continue;
        if ((sym && strcasestr(sym, "batch")) || (!sym && d == 0)) {
            dims[d] = o->batch;
            continue;
        }
        dims[d] = 1;
        fprintf(stderr, "note: input '%s' dim %d ('%s') not given: using 1 (set --dim %s=N)\n",
                v->name, d, sym ? sym : "?", sym ? sym : "NAME");
    }
    ait_tensor *t = ait_tensor_create(v->dtype, v->rank, dims);
    if (!t)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: cannot make input '%s' of type %s", m->path,
                       v->name, ait_dtype_name(v->dtype));
    int64_t n = ait_tensor_numel(t), bound = index_bound(g, g->inputs[idx]);
    void *p = ait_tensor_data(t);
    const char *how;
    if (v->dtype == AIT_BOOL || looks_like_mask(v->name)) {
        for (int64_t i = 0; i < n; i++) elem_set_f64(p, v->dtype, i, 1);
        how = "ones";
    } else if (dtype_is_float(v->dtype)) {
        for (int64_t i = 0; i < n; i++) /* uniform in [-1, 1) */
            elem_set_f64(p, v->dtype, i, (double)(rng_next(rng) >> 11) * 0x1p-52 - 1.0);
        how = "uniform [-1, 1)";
    } else {
        int64_t hi = bound ? bound : 100;
        for (int64_t i = 0; i < n; i++) elem_set_f64(p, v->dtype, i, (double)(rng_next(rng) % (uint64_t)hi));
        how = bound ? "indices below the table size" : "integers in [0, 100)";
    }
    char s[128];
    fprintf(stderr, "input  %-24s %-8s %-20s generated: %s", v->name, ait_dtype_name(v->dtype),
            shape_str(dims, v->rank, s, sizeof s), how);
    if (bound) fprintf(stderr, " (%lld)", (long long)bound);
    fputc('\n', stderr);
    *out = t;
    return AIT_OK;
}

static int input_index(const ait_model *m, const char *name)
{
    for (int i = 0; i < m->g->n_inputs; i++)
        if (!strcmp(m->g->vals[m->g->inputs[i]].name, name)) return i;
    return -1;
}

static ait_status from_files(const ait_model *m, const input_opts *o, ait_tensor **tensors,
                             ait_error *e)
{
    for (int f = 0; f < o->n_files; f++) {
        const char *spec = o->file_specs[f], *eq = strchr(spec, '=');
        size_t len = strlen(spec);
        if (!eq && len > 4 && !strcmp(spec + len - 4, ".npz")) {
            npz *z;
            TRY(npz_load(spec, &z, e));
            for (int k = 0; k < z->n; k++) {
                int i = input_index(m, z->names[k]);
                if (i < 0) {
                    err_set(e, AIT_E_NOT_FOUND, "%s: array '%s' is not an input of %s", spec,
                            z->names[k], m->path);
                    npz_free(z);
                    return e->code;
                }
                ait_tensor_free(tensors[i]);
                tensors[i] = z->arrays[k];
                z->arrays[k] = NULL;
            }
            npz_free(z);
            continue;
        }
        if (!eq)
            return err_set(e, AIT_E_INVALID_ARG, "--input '%s': expected NAME=FILE.npy or FILE.npz",
                           spec);
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
        int i = input_index(m, name);
        if (i < 0)
            return err_set(e, AIT_E_NOT_FOUND, "--input: '%s' is not an input of %s", name, m->path);
        ait_tensor_free(tensors[i]);
        tensors[i] = NULL;
        TRY(ait_tensor_load_npy(eq + 1, &tensors[i], e));
    }
    return AIT_OK;
}

ait_status inputs_make(const ait_model *m, const input_opts *o, ait_tensor **tensors, ait_error *e)
{
    int n = m->g->n_inputs;
    for (int i = 0; i < n; i++) tensors[i] = NULL;
    ait_status s = from_files(m, o, tensors, e);
    uint64_t rng = o->seed;
    for (int i = 0; s == AIT_OK && i < n; i++)
        if (!tensors[i]) s = generate(m, i, o, &rng, &tensors[i], e);
    if (s != AIT_OK)
        for (int i = 0; i < n; i++) {
            ait_tensor_free(tensors[i]);
            tensors[i] = NULL;
        }
    return s;
}
